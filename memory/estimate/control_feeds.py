"""Which ControlNets each sampler of a workflow runs with (rev63 #9). ComfyUI 0.8.0 loads a ControlNet for a sampler
only when that sampler's conditioning carries it: the sampler's prepare step (comfy/samplers.py:983-984
CFGGuider.outer_sample -> comfy/sampler_helpers.py:125-138 prepare_sampling) loads the model with
get_additional_models(conds) (l.69-91): the control models of the "control" entries of its own positive and negative
(a chained ControlNet's previous ones too: comfy/controlnet.py:119-123, 287-290), and cleans them up after sampling
(samplers.py:998). An Apply ControlNet node sets that entry on the conditioning it passes on (nodes.py:853-866,
891-913; comfy_extras/nodes_sd3.py:109-157; comfy_extras/nodes_controlnet.py:36-72). So two samplers run one after the
other (a base pass and a hires pass, two branches to two outputs) never hold each other's residuals in one forward.

The walk (reach.walk_ui / walk_api: links, Reroutes, bypass, subgraphs as ComfyUI runs them) starts at each sampler
that runs and goes up its conditioning inputs; at an Apply ControlNet node only its conditioning and control_net
inputs (its image, vae and mask carry no ControlNet of this sampler's: a hires pass's ControlNet image decoded from the
base pass stays out); another sampler ends the walk (its output is a latent). The ControlNet loaders reached are that
sampler's set. side_models.phase_figures counts the sample phase's for one set, the largest; a ControlNet no sampler
reaches (a custom sampler's, a legacy group node's) is put in every set, so a graph with one sampler counts every
ControlNet, as before."""
from . import reach, sampler_nodes
from .side_models import CONTROLNETS, SIDE, owner_of

# each sampler's conditioning inputs (sampler_nodes.py: SamplerCustomAdvanced's guider holds them)
SAMPLERS = {t: s.conditioning for t, s in sampler_nodes.SAMPLERS.items()}
# Apply ControlNet nodes: the inputs that carry this sampler's ControlNets
APPLY = {"ControlNetApply": ("conditioning", "control_net"),
         **{t: ("positive", "negative", "control_net") for t in
            ("ControlNetApplyAdvanced", "ControlNetApplySD3", "ControlNetInpaintingAliMamaApply")}}


def _follow(start, kind):
    def follow(n):
        t = kind(n) if isinstance(kind(n), str) else None  # a hand-edited file may have anything
        return SAMPLERS[t] if n is start else () if t in SAMPLERS else APPLY.get(t)
    return follow


def feeds(wf: dict):
    """[{key of a ControlNet loader node}] one per sampler that runs, in the graph's keys ((graph id, node id) for the
    UI format, as workflow.nodes keys them; the id as a string for the API format); None when no known sampler runs."""
    if isinstance(wf.get("nodes"), list):
        g, runs = reach.Graphs(wf), reach.ui(wf)
        starts = [(gid, n) for gid in g.runs() for n in g.nodes.get(gid, {}).values() if isinstance(n.get("type"), str)
                  and n["type"] in SAMPLERS and n.get("mode") not in (2, 4) and (runs is None or (gid, n["id"]) in runs)]
        kind = lambda n: n.get("type")  # noqa: E731
        out = [reach.walk_ui(g, [s], _follow(s[1], kind)) for s in starts]
        return [{k for k in seen if g.nodes[k[0]][k[1]].get("type") in CONTROLNETS} for seen in out] or None
    ids, runs = reach.api_nodes(wf), reach.api(wf)
    kind = lambda n: n.get("class_type")  # noqa: E731
    starts = [k for k, n in ids.items() if isinstance(kind(n), str) and kind(n) in SAMPLERS and (runs is None or k in runs)]
    out = [reach.walk_api(ids, [k], _follow(ids[k], kind)) for k in starts]
    return [{k for k in seen if kind(ids[k]) in CONTROLNETS} for seen in out] or None


def owner_sets(wf: dict, keyed: dict):
    """[[owner (side_models.owner_of) of each ControlNet a sampler runs with]] one per sampler that runs, read from the
    widgets workflow.nodes gave each node key (keyed: {key: (type, widgets)}); None when no known sampler runs."""
    got = feeds(wf)
    if got is None:
        return None
    out = []
    for keys in got:
        names = [(keyed[k][0], keyed[k][1].get(SIDE[keyed[k][0]][0])) for k in keys if k in keyed]
        out.append(sorted({owner_of(v, t) for t, v in names if isinstance(v, str) and v}))
    return out


def note(samplers, side) -> list:
    """One assumption line when samplers run with different ControlNets (of those counted: side, side_models.read's)."""
    found = {m["owner"] for m in side or () if m["loader"] in CONTROLNETS}
    sets = [sorted(found & set(s)) for s in samplers or ()]
    if len(sets) < 2 or len({tuple(s) for s in sets}) < 2:
        return []
    return [f"{len(sets)} samplers, each with its own ControlNets ("
            + "; ".join(", ".join(s) or "none" for s in sets) + "): ComfyUI loads a sampler's own ControlNets for its "
            "run, so the sample phase counts one sampler's set, the largest, not their sum"]
