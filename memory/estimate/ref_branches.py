"""Which reference images one model call carries (rev68g finding 1). ComfyUI 0.8.0 runs the positive and the
negative as separate conditionings, each with its own reference_latents (comfy/samplers.py: each cond's
model_conds; the Qwen edit encoders set them per node, comfy_extras/nodes_qwen.py:49 and 104; ReferenceLatent on the
conditioning it passes on, nodes_edit_model.py), so a call's image tokens hold the references of one conditioning:
those of the nodes up that input (a chain of ReferenceLatent nodes adds up; ConditioningZeroOut keeps its input's).
The references counted are the largest set over each sampler's conditionings, over the samplers that run; the
graph's sum where no known sampler runs."""
from . import control_feeds, reach, ref_latents
from .sampler_nodes import SAMPLERS


def _walk(wf, g, start, names):
    """The node keys reached up the inputs `names` of node `start` (the handle control_feeds._starts gives); another
    sampler ends the walk (its output is a latent)."""
    ui = isinstance(wf.get("nodes"), list)
    kind = (lambda n: n.get("type")) if ui else (lambda n: n.get("class_type"))  # noqa: E731
    node = start[1]

    def follow(n):
        t = kind(n) if isinstance(kind(n), str) else None
        return tuple(names) if n is node else () if t in SAMPLERS else None
    return reach.walk_ui(g, [start], follow) if ui else reach.walk_api(g, [start[0]], follow)


def _branches(wf, g, start):
    """[set of node keys] one per conditioning of the sampler `start`: its own conditioning inputs, or the linked
    inputs (other than model) of the guider a SamplerCustomAdvanced samples with."""
    ui = isinstance(wf.get("nodes"), list)
    t = start[1].get("type") if ui else start[1].get("class_type")
    out = []
    for name in SAMPLERS[t].conditioning:
        if name != "guider":
            out.append(_walk(wf, g, start, (name,)))
            continue
        up = _walk(wf, g, start, (name,))
        node = (lambda k: g.nodes[k[0]][k[1]]) if ui else (lambda k: g[k])  # noqa: E731
        kind = (lambda n: n.get("type")) if ui else (lambda n: n.get("class_type"))  # noqa: E731
        # (rev68h #1) only the guider's own inputs are branches: walking again from every node up the guider's input
        # was quadratic in a long conditioning chain (4000 nodes: 18 s). No node named *Guider: the chain is one branch.
        guiders = [k for k in up if node(k) is not start[1] and str(kind(node(k))).endswith("Guider")]
        if not guiders:
            out.append(up)
            continue
        for k in guiders:
            n = node(k)
            if not isinstance(n.get("inputs"), (dict, list)):
                continue
            ins = n["inputs"]
            names = [i.get("name") for i in ins if isinstance(i, dict)] if isinstance(ins, list) else list(ins)
            for name2 in names:
                if name2 != "model":
                    out.append(_walk(wf, g, (k[0], n) if ui else (k, n), (name2,)))
    return out


def _weight(sizes):
    return len(sizes), sum((w or 0) * (h or 0) for w, h, _ in sizes)


def of_calls(wf: dict, keyed: dict, whole: list) -> list:
    """The reference images [(w, h, how)] of the conditioning that carries the most (see the module's docstring);
    whole: the graph's sum, given back where no known sampler runs or the walk fails."""
    try:
        g, starts = control_feeds._starts(wf)
        if not starts:
            return whole
        best = []
        for s in starts:
            for keys in _branches(wf, g, s):
                got = [r for k in keys if k in keyed for r in keyed[k][1].get(ref_latents.KEY, [])]
                best = max(best, got, key=_weight)
        return best
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return whole
