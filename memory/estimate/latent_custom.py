"""A node the estimate does not size on the latent path of a sampler or a VAE decode (aud67a F2: a custom
NNLatentUpscale x2 in a hires fix was passed over in silence, estimated at 1024 px where the run decodes at 2048).

attach() walks each sampler's and decode's latent input back (_source: Reroutes, subgraph inputs, a bypassed node's
matching input, a subgraph instance's inside; a subgraph used more than once: each instance's input, _Fork) through the nodes whose
latent is their input's size: the samplers and this pack's Footprint Estimate node (links.SAMPLED, PASSED), ComfyUI
0.8.0's core latent nodes that keep their first latent's shape (SAME_SIZE), and LatentUpscaleBy / LatentUpscale
(sized in latent_scale.py). It stops at a node that sizes a latent (latent_nodes.LATENT_NODES, VAEEncode, a
LatentUpscale with width and height set) or at another core node (CORE); any other node there (a custom node's) is named under KEY in the sampler's or decode's
widgets: workflow.read() gathers them, lines() says them and the estimate's size is marked uncertain
(est["workflow"]["size_uncertain"]). Through the core nodes that change the shape (latent_shape.SHAPE: a batch, a
concat, a cut, a rotation) the walk goes on through each latent input, and latent_shape.attach sizes what they make
or names them (fix68c)."""
from . import latent_shape, links, reach
from .latent_nodes import LATENT_NODES

KEY = "_latent_unknown"  # (label, type) of the node; no widget has this name
# core nodes whose LATENT out has their first latent input's shape (ComfyUI 0.8.0): nodes.py:1341 LatentFlip,
# 1361 LatentComposite (samples_to), 1403 LatentBlend (samples2 resized to samples1), 1477 SetLatentNoiseMask;
# comfy_extras/nodes_latent.py:19-316 LatentAdd / Subtract / Interpolate (reshape_latent_to samples1), LatentMultiply,
# LatentBatchSeedBehavior, LatentApplyOperation; nodes that keep their input's width and height (rev67h F1, F4):
# nodes_rebatch.py:7-60 RebatchLatents, nodes_custom_sampler.py:968 AddNoise, nodes_wan.py:371 TrimVideoLatent and
# nodes_latent.py:434 ReplaceVideoLatentFrames (frames), nodes_kandinsky5.py:69 NormalizeVideoLatentStart;
# comfy_extras/nodes_mask.py:48-71 LatentCompositeMasked (a copy of destination, source pasted in: F7); LTX's
# nodes_lt.py:84-163 LTXVImgToVideoInplace (its image encoded into the latent's first frames, in place), 558-590
# LTXVConcatAVLatent (the video latent's shape, the audio latent beside it: counted from LTXVEmptyLatentAudio) and
# 593-622 LTXVSeparateAVLatent (its video part). The nodes that change the shape (RepeatLatentBatch, LatentFromBatch,
# LatentBatch: the batch; LatentConcat, LatentCut, LatentRotate, ...): latent_shape.SHAPE, beside this table (fix68c)
SAME_SIZE = {"LatentFlip": "samples", "LatentComposite": "samples_to", "LatentBlend": "samples1",
             "SetLatentNoiseMask": "samples", "LatentAdd": "samples1", "LatentSubtract": "samples1",
             "LatentInterpolate": "samples1", "LatentMultiply": "samples", "LatentBatchSeedBehavior": "samples",
             "LatentApplyOperation": "samples", "RebatchLatents": "latents", "AddNoise": "latent_image",
             "TrimVideoLatent": "samples", "ReplaceVideoLatentFrames": "destination",
             "NormalizeVideoLatentStart": "latent", "LatentCompositeMasked": "destination",
             "LTXVImgToVideoInplace": "latent", "LTXVConcatAVLatent": "video_latent", "LTXVSeparateAVLatent": "av_latent"}
# the other ComfyUI 0.8.0 core nodes with a LATENT out that latent_nodes.LATENT_NODES leaves out (its docstring: they
# pass a latent on at about the size it came with; every class in nodes.py and comfy_extras/*.py with a "LATENT" in its
# RETURN_TYPES or an io.Latent.Output, less the samplers, SAME_SIZE and latent_shape.SHAPE): the walk stops there, the
# node named by no line (training datasets' latents)
CORE = frozenset(("LoadTrainingDataset", "MakeTrainingDataset", "ResolutionBucket"))
SCALES = ("LatentUpscaleBy", "LatentUpscale")  # latent_scale.resized: their "samples" input


def _through(v, h, t, depth):
    """The input whose latent's size node h (of type t) keeps, or None. LatentUpscale with width and height both set
    makes that size whatever its input's (nodes.py:1279-1295, rev67h F13): None, the walk stops there."""
    if t == "LatentUpscale":
        try:
            if all(int(links._num(links.widget(v, h, n, depth), n)) != 0 for n in ("width", "height")):
                return None
        except (links.Unread, TypeError, ValueError, OverflowError):
            pass
    return links.SAMPLED.get(t) or links.PASSED.get(t) or SAME_SIZE.get(t) or ("samples" if t in SCALES else None)


def _graphs(v):
    """reach.Graphs of a UI view's workflow (full links: their targets and types), made once per view."""
    if getattr(v, "_reach_graphs", None) is None:
        v._reach_graphs = reach.Graphs(v.wf)
    return v._reach_graphs


def _source(v, ref, depth):
    """links._source for a latent, and on through what ComfyUI runs in their place (UI format): a bypassed node's
    matching input (reach._bypass_input, as the frontend resolves it: rev67h F2), a subgraph instance's output into
    the subgraph's node linked to that output (rev67h F3; its nodes are labelled with the subgraph's name)."""
    while True:
        depth += 1
        if ref is None or depth > links.MAX_DEPTH:
            raise links.Unread("a latent with no source")
        got = v.src(ref)
        if got is links.SAVED and len(_instances(v, ref)) > 1:
            raise _Fork(_instances(v, ref))
        if got is links.SAVED or got[0] == "value":
            raise links.Unread("the subgraph's latent input, not linked")
        if got[0] == "ref":
            ref = got[1]
            continue
        h, slot = got
        t = v.kind(h)
        if getattr(v, "wf", None) is not None and h[1].get("mode") == 4:  # bypassed
            g = _graphs(v)
            i = reach._bypass_input(g, h[0], h[1], slot, (g.links.get(ref[0], {}).get(ref[1]) or (None,) * 5)[4])
            ref = (h[0], i["link"]) if i is not None else None
            continue
        if not v.active(h):
            raise links.Unread(f"{v.label(h)}, muted")
        if t == "Reroute" and v.first_link:
            ref = v.first_link(h)
            continue
        if getattr(v, "subgraphs", None) and links.is_key(t) and t in v.subgraphs:  # an instance: the inner node
            out_id = (v.subgraphs[t].get("outputNode") or {}).get("id", -20)
            ref = next(((t, lid) for lid, (_, _, to, to_slot, _) in _graphs(v).links.get(t, {}).items()
                        if to == out_id and to_slot == slot), None)
            continue
        return h, t, depth


class _Fork(Exception):
    """A subgraph's latent input where the subgraph is used more than once: each instance's input link (rev67k R4:
    links._subgraph_input reads SAVED there, and the walk stopped in silence)."""

    def __init__(self, refs):
        super().__init__("a subgraph used more than once")
        self.refs = refs


def _instances(v, ref) -> list:
    """[(graph, link)] of the inputs feeding subgraph input `ref` comes from, one per instance of the subgraph."""
    gid, link = ref
    sg, (_, glinks) = v.subgraphs.get(gid) or {}, v.graphs.get(gid, ({}, {}))
    ins = sg.get("inputs") if isinstance(sg.get("inputs"), list) else []
    slot = glinks[link][1] if link in glinks else None
    name = ins[slot].get("name") if isinstance(slot, int) and 0 <= slot < len(ins) and isinstance(ins[slot], dict) else None
    return [(pgid, i["link"]) for pgid, node in (v.instances.get(gid) or []) if name is not None
            for i in (node.get("inputs") if isinstance(node.get("inputs"), list) else [])
            if isinstance(i, dict) and i.get("name") == name and i.get("link") is not None]


def _label(v, h):
    """v.label(h), with the subgraph's name for a node inside one."""
    sg = getattr(v, "subgraphs", {}).get(h[0]) if links.is_key(h[0]) else None
    return f"{v.label(h)[:-1]} in subgraph {sg.get('name') or sg['id']})" if sg is not None else v.label(h)


def attach(v, h, t, w):
    """Put into w (sampler or decode h's widgets) the first node on its latent input the estimate does not size."""
    name = links.SAMPLED.get(t) or links.DECODES.get(t)
    if not name:
        return
    try:
        todo, seen, shapers = [(v.link_of(h, name), 0)], set(), []
    except (links.Unread, AttributeError, KeyError, IndexError, TypeError):
        return
    first = todo[0][0]
    while todo and len(seen) < links.MAX_DEPTH:  # one branch per instance of a subgraph used more than once (_Fork)
        ref, depth = todo.pop()
        if repr(ref) in seen:  # an API prompt's ref is a list
            continue
        seen.add(repr(ref))
        try:
            while depth < links.MAX_DEPTH:
                src, st, depth = _source(v, ref, depth)
                through = _through(v, src, st, depth)
                if through:
                    ref = v.link_of(src, through)
                    continue
                if st in latent_shape.SHAPE:  # the walk goes on through each latent input; the shape: latent_shape
                    if not latent_shape.keeps(v, src, st, depth):
                        shapers.append((_label(v, src), st))
                    ref, *more = latent_shape.latent_inputs(v, src, latent_shape.SHAPE[st]) or [None]
                    todo += [(r, depth) for r in more]
                    continue
                if st not in LATENT_NODES and st not in links.ENCODES and st not in CORE and st not in SCALES:
                    w[KEY] = (_label(v, src), st)
                    return
                break
        except _Fork as f:
            todo += [(r, depth) for r in f.refs]
        except (links.Unread, AttributeError, KeyError, IndexError, TypeError):
            continue  # no source, muted, a broken link: other lines say so
    latent_shape.attach(v, first, list(dict.fromkeys(shapers)), w)


def lines(found, w, h, used) -> list[str]:
    """One line per node found (dict.fromkeys of (label, type)): what it is and the size the estimate took."""
    return [f"{label}: it {latent_shape.SHAPE[t].what}, on the latent a sampler or decode takes; the estimate does not "
            f"size what it makes there (a video latent's frames, an input not read): estimated at {w}x{h} ({used}); the "
            "latent it makes may be another size (the estimate's size is uncertain)" if t in latent_shape.SHAPE else
            f"{label}: a node the estimate does not size makes the latent a sampler or decode takes: estimated at "
            f"{w}x{h} ({used}); the latent it makes may be another size (the estimate's size is uncertain)"
            for label, t in found]
