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
sampler's set. side_models.phase_figures counts the sample phase as one sampler's run, the one that holds the most, each
judged at its sampler's own latent (latents(): a hires fix's base pass is smaller than its second pass): its ControlNets'
residuals (rev64 #3) and the diffusion model's activations (act65) at that size; a ControlNet no sampler
reaches (a custom sampler's, a legacy group node's) is put in every set, so a graph with one sampler counts every
ControlNet, as before."""
from . import links, reach, sample_acts, sampler_nodes
from .side_models import CONTROLNETS, MODEL_PATCHES, SIDE, owner_of

# each sampler's conditioning inputs (sampler_nodes.py: SamplerCustomAdvanced's guider holds them)
SAMPLERS = {t: s.conditioning for t, s in sampler_nodes.SAMPLERS.items()}
MODELS = {t: s.model for t, s in sampler_nodes.SAMPLERS.items()}  # and its MODEL input (the guider's model)
# Apply ControlNet nodes: the inputs that carry this sampler's ControlNets
APPLY = {"ControlNetApply": ("conditioning", "control_net"),
         **{t: ("positive", "negative", "control_net") for t in
            ("ControlNetApplyAdvanced", "ControlNetApplySD3", "ControlNetInpaintingAliMamaApply")}}


def _follow(start, kind):
    def follow(n):
        t = kind(n) if isinstance(kind(n), str) else None  # a hand-edited file may have anything
        return SAMPLERS[t] if n is start else () if t in SAMPLERS else APPLY.get(t)
    return follow


# the inputs that carry the MODEL a node passes on (and so its model patches), where not "model" (rev65d #2).
# A merge clones model1 and takes only model2's weights (comfy_extras/nodes_model_merging.py:26-31, 45-50, 64-69,
# 157-158; the model-specific ModelMerge* subclass ModelMergeBlocks): model2's patches (model_options) stay behind
# (comfy/model_patcher.py:296, clone copies its own model_options). A patch node adds its model_patch to the model
# (comfy_extras/nodes_model_patch.py:431-466, 503-541). A UI Reroute passes its one input on.
MODEL_INPUTS = {**{t: ("model1",) for t in ("ModelMergeSimple", "ModelSubtract", "ModelAdd", "ModelMergeBlocks")},
                **{t: ("model", "model_patch") for t in
                   ("QwenImageDiffsynthControlnet", "ZImageFunControlnet", "USOStyleReference")},
                "Reroute": None}
# any other node: every input, as the conditioning walk follows an unknown node (rev65e #1): a node that passes a MODEL on
# may take it under any name (ComfyUI's own Switch: on_true/on_false, comfy_extras/nodes_logic.py:11-39; rgthree's Any
# Switch; Impact's basic pipe), and a patch lost on the way is an undercount; an overcount needs a prompt ComfyUI refuses
# (a MODEL linked into a non-MODEL input: execution.py:822-825), or a node that makes no MODEL on the way (NO_MODEL_OUT:
# an image input's decode of another sampler's run)


def _follow_model(start, kind, subgraphs=()):
    """The walk up a sampler's MODEL (est65): its model input, then the MODEL-carrying inputs of the nodes on the way
    (MODEL_INPUTS: a merge's model1 only, rev65d #2; a patch node's model and model_patch; a set Switch's chosen input,
    rev65f #3), every input of any other node (rev65e #1); another sampler, or a node that makes no MODEL (NO_MODEL_OUT,
    rev65f #2), ends it. A subgraph instance (subgraphs: the definitions' ids) is entered as before (reach.walk_ui
    enters one only when every input is followed), its inner nodes then read by the same table."""
    def follow(n):
        t = kind(n) if isinstance(kind(n), str) else None
        if n is start:
            return MODELS[t]
        if t in SAMPLERS:
            return ()
        if t in subgraphs:
            return None
        if t in NO_MODEL_OUT:
            return ()
        if t == "ComfySwitchNode":
            return _switch_inputs(n)
        if t in MODEL_INPUTS:
            return MODEL_INPUTS[t]
        return ("model1",) if t and t.startswith("ModelMerge") else None
    return follow


# nodes whose output is no MODEL: the walk up a sampler's MODEL stops there (rev65f #2: an IPAdapter's image input, a
# decode of a custom sampler that ran on a patched model, carried that patch to this sampler)
NO_MODEL_OUT = {*links.DECODES, *links.ENCODES, "LoadImage", "EmptyLatentImage", "CLIPTextEncode", "ImageScaleBy",
                "ImageScale", "ImageUpscaleWithModel", "UpscaleModelLoader", "CLIPVisionEncode"}


def _switch_inputs(n):
    """ComfyUI's Switch (comfy_extras/nodes_logic.py:11-39): both inputs are lazy and only the chosen one runs
    (execution.py:486-495), so a literal switch value follows that input alone (rev65f #3); a linked one, both."""
    v = (n.get("inputs") or {}).get("switch") if isinstance(n.get("inputs"), dict) else None
    return ("on_true",) if v is True else ("on_false",) if v is False else None


def _starts(wf: dict):
    """The samplers that run, as (graph id, node) (UI format) or (id as a string, node) (API format): the handles
    links.view's graph takes, in the order feeds() and latents() give them."""
    if isinstance(wf.get("nodes"), list):
        g, runs = reach.Graphs(wf), reach.ui(wf)
        return g, [(gid, n) for gid in g.runs() for n in g.nodes.get(gid, {}).values()
                   if isinstance(n.get("type"), str) and n["type"] in SAMPLERS and n.get("mode") not in (2, 4)
                   and (runs is None or (gid, n["id"]) in runs)]
    ids, runs = reach.api_nodes(wf), reach.api(wf)
    return ids, [(k, n) for k, n in ids.items() if isinstance(n.get("class_type"), str) and n["class_type"] in SAMPLERS
                 and (runs is None or k in runs)]


def feeds(wf: dict):
    """[{key of a ControlNet loader node reached up its conditioning, or of a model patch loader reached up its MODEL}]
    one per sampler that runs, in the graph's keys ((graph id, node id) for the UI format, as workflow.nodes keys them;
    the id as a string for the API format); None when no known sampler runs. A model patch (ModelPatchLoader) is
    loaded only for the samplers whose model carries it (est65): its patch node clones the model and sets the patch
    in the clone's model_options (comfy_extras/nodes_model_patch.py:448-466 set_model_double_block_patch /
    set_model_noise_refiner_patch, l.540-541 set_model_post_input_patch; comfy/model_patcher.py:409-413, 451-458), and
    load_models_gpu loads the patches of the models it is given (comfy/model_management.py:633-636
    model_patches_models, model_patcher.py:529-551): the sampler's own model (comfy/sampler_helpers.py:134-137)."""
    g, starts = _starts(wf)
    if isinstance(wf.get("nodes"), list):
        kind = lambda n: n.get("type")  # noqa: E731
        of = lambda k: g.nodes[k[0]][k[1]].get("type")  # noqa: E731
        out = [(reach.walk_ui(g, [s], _follow(s[1], kind)), reach.walk_ui(g, [s], _follow_model(s[1], kind, g.subs)))
               for s in starts]
    else:
        kind = lambda n: n.get("class_type")  # noqa: E731
        of = lambda k: kind(g[k])  # noqa: E731
        out = [(reach.walk_api(g, [k], _follow(n, kind)), reach.walk_api(g, [k], _follow_model(n, kind)))
               for k, n in starts]
    return [{k for k in cond if of(k) in CONTROLNETS} | {k for k in model if of(k) in MODEL_PATCHES}
            for cond, model in out] or None


def latents(wf: dict, read_image=None, read_upscale=None):
    """[((width, height, batch) or None, label)] one per sampler that runs, in feeds()' order: the size and batch of
    the image the latent it samples decodes to (ComfyUI sizes each sampler's run on its own noise shape, batch
    included: comfy/sampler_helpers.py:121, fix65), followed back as links.latent follows a VAE decode's (a latent node's widgets, the
    image a VAEEncode encodes: a hires fix's second pass through its upscale, ups64); None where not followed (a video
    latent, a custom node, a bypassed sampler on the way). read_image, read_upscale: links.view's readers. None when no
    known sampler runs."""
    v, out = links.view(wf, read_image, read_upscale), []
    for h in _starts(wf)[1]:
        try:
            w, hh, b = links.latent(v, v.link_of(h, sampler_nodes.SAMPLERS[v.kind(h)].latent), 0)
            size = (int(w), int(hh), int(b)) if int(w) > 0 and int(hh) > 0 and int(b) > 0 else None
        except (links.Unread, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError,
                IndexError):  # not followed, or a malformed graph: never a crash (as links.linked)
            size = None
        out.append((size, v.label(h)))
    return out or None


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


def size_note(samplers, sizes, side, size, chosen=None) -> list:
    """One line where several samplers run, one's latent differs from the estimated one (size: (width, height, batch))
    in size or batch, and a sampler has ControlNets or the run counted is not the estimated size's (else the figures
    are the estimated size's): each sampler's size (and batch, where one is not 1) and ControlNets (of those counted:
    side, side_models.read's), and the sampler whose run the sample phase is (chosen: the sample phase breakdown's
    "sampler", phase_peaks: {index, size, batch}; the diffusion model's activations at that size and that sampler's
    ControlNets, side_models.one_sampler). sizes: latents()'; None (a typed size, a video): no line. A sampler not
    followed is counted at the estimated size."""
    if not samplers or not sizes or len(samplers) < 2 or len(sizes) != len(samplers):
        return []
    own = [got if got and (got[0] * got[1] != size[0] * size[1] or got[2] != size[2]) else None for got, _ in sizes]
    if not any(own):
        return []
    found = {m["owner"] for m in side or () if m["loader"] in CONTROLNETS}
    i = (chosen or {}).get("index")
    i = i if isinstance(i, int) and 0 <= i < len(sizes) else None
    reached = found & {o for s in samplers for o in s}
    if not reached and (i is None or not own[i]):
        return []  # no ControlNet and the estimated size's run counted: the figures are the estimated size's
    batches = any(s[2] != 1 for s in own if s) or size[2] != 1
    at = lambda s: f"{s[0]}x{s[1]}" + (f", batch {s[2]}" if batches else "")  # noqa: E731
    runs = [f"{label} at {at(s or size)}" + (f" with {', '.join(sorted(found & set(o)))}" if found & set(o) else "")
            for o, s, (_, label) in zip(samplers, own, sizes)]
    line = (f"{len(samplers)} samplers, run one at a time, each counted at its own latent"
            + (" with its own ControlNets" if reached else "") + " (" + "; ".join(runs) + ")")
    if i is not None:
        mine = sorted(found & set(samplers[i]))
        run = (*chosen["size"], chosen.get("batch") or size[2]) if chosen.get("size") else size
        line += (f": the sample phase is {sizes[i][1]}'s run, the diffusion model's activations at "
                 f"{at(run)}" + (f" and its ControlNets' weights and residuals ({', '.join(mine)})"
                                 if mine else " (no ControlNet)"))
    return [line]


def how_line(est, run, sizes) -> list:
    """The estimate's assumptions, its "sample: ..." line naming the tokens of the run counted where the sample phase
    is a sampler's run other than the estimated size's (run: the sample phase breakdown's "sampler"; sizes:
    latents()'), the estimated size's after them."""
    ctx = est["_ctx"]
    if not run or not ctx["has_dm"] or not 0 <= run["index"] < len(sizes or ()) or (
            list(run["size"]), run["batch"], run.get("cfg1")) == ([ctx["width"], ctx["height"]], ctx["batch"], None):
        return est["assumptions"]
    got = sample_acts.at(ctx, *run["size"], run["batch"], bool(run.get("cfg1")))
    if not got:
        return est["assumptions"]
    old, at = f"sample: {ctx['sample_how']}", "x".join(map(str, run["size"])) + (
        f", batch {run['batch']}" if run["batch"] != 1 or ctx["batch"] != 1 else "")
    at += ", cfg 1: no uncond" if run.get("cfg1") else ""
    return [f"sample: {got['how']} ({sizes[run['index']][1]}'s run at {at}, the one counted; at the estimated size "
            f"{ctx['sample_how'].rsplit(', ', 1)[-1]})" if a == old else a for a in est["assumptions"]]


def note(samplers, side) -> list:
    """One assumption line when samplers run with different ControlNets (of those counted: side, side_models.read's)."""
    found = {m["owner"] for m in side or () if m["loader"] in CONTROLNETS}
    sets = [sorted(found & set(s)) for s in samplers or ()]
    if len(sets) < 2 or len({tuple(s) for s in sets}) < 2:
        return []
    return [f"{len(sets)} samplers, each with its own ControlNets ("
            + "; ".join(", ".join(s) or "none" for s in sets) + "): ComfyUI loads a sampler's own ControlNets for its "
            "run, so the sample phase counts one sampler's run, the one that holds the most, not their sum"]


def patch_note(samplers, side) -> list:
    """A line per model patch (of those counted: side, side_models.read's) that some samplers' models carry and others'
    do not (feeds): ComfyUI loads it for those samplers' runs only, so the sample phase counts it where its run is the
    one counted (side_models.one_sampler)."""
    if not samplers or len(samplers) < 2:
        return []
    out = []
    for o in sorted({m["owner"] for m in side or () if m["loader"] in MODEL_PATCHES}):
        n = sum(o in s for s in samplers)
        whose = "that sampler's run" if n == 1 else "those samplers' runs"
        if 0 < n < len(samplers):
            out.append(f"{o}: on the model of {n} of {len(samplers)} samplers; ComfyUI loads it for {whose} only, so "
                       "it is counted where such a run is the sample phase")
    return out
