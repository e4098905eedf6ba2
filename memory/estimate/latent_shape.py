"""ComfyUI 0.8.0's core latent nodes that pass a latent on in another shape than they took it (issue 15 item 5): one
row per node type, its effect on the shape, read from its source. They sit beside latent_custom.SAME_SIZE (the core
nodes whose latent is their first latent input's shape) and latent_nodes.LATENT_NODES (the nodes that size a latent:
EmptyLTXVLatentVideo and LTXVImgToVideo by their widgets, LatentCrop a resize to its width and height).

effect  batch:  the sides kept, the batch changed (x amount, a slice, a sum of batches)
        concat: two latents joined along the dim its widget names (x: widths added, y: heights added, t: lengths)
        cut:    a slice along the dim its widget names (index, amount, in latent pixels: _px, the latent node's own)
        rotate: H and W swapped at 90 or 270 degrees
        input:  a shape from inputs the walk does not read (a guide image's frames, keyframes): named, never sized

links.latent follows a still-image latent (pixels, batch) through these rows (through(); the same-size
rows pass it on); attach() puts into a sampler's or decode's widgets the size that makes where one of them changes it
(SIZED: workflow.read() adds it to the graph's sizes and says so), or, where the size is not followed (a video latent, a
source not read), the nodes that change it (UNSURE: named among the uncertain sizes, latent_custom.lines).
LTXVConditioning (nodes_lt.py:357) sets the frame rate on the conditioning: no latent, not on the path."""
from typing import NamedTuple

from . import links


class Row(NamedTuple):
    effect: str
    input: str     # the latent input whose shape it changes (the walk goes on through it)
    what: str      # what it does to the shape, for the line that names it
    src: str       # ComfyUI 0.8.0 file:line
    more: tuple = ()  # its other latent inputs, in order


SHAPE = {
    "RepeatLatentBatch": Row("batch", "samples", "repeats the batch `amount` times",
                             "nodes.py:1238-1262 s_in.repeat((amount, 1, ...))"),
    "LatentFromBatch": Row("batch", "samples", "takes `length` latents of the batch from `batch_index`",
                           "nodes.py:1206-1236 s_in[batch_index:batch_index + length], both clamped"),
    "LatentBatch": Row("batch", "samples1", "joins two batches (samples2 resized to samples1's sides)",
                       "comfy_extras/nodes_latent.py:252-278 cat((s1, reshape_latent_to(s1.shape, s2)), dim=0)", ("samples2",)),
    "BatchLatentsNode": Row("batch", "latents.latent0", "joins its latents' batches (each resized to the first's sides)",
                            "comfy_extras/nodes_post_processing.py:541-559 batch_latents (l.486-499)"),
    "LatentConcat": Row("concat", "samples1", "joins two latents along its `dim`",
                        "comfy_extras/nodes_latent.py:132-169 cat((s1, s2) or (s2, s1), dim x -1 / y -2 / t -3)", ("samples2",)),
    "LatentCut": Row("cut", "samples", "cuts `amount` latent pixels (or frames) along its `dim` from `index`",
                     "comfy_extras/nodes_latent.py:171-209 narrow(s1, dim, index, amount), both clamped"),
    "LatentRotate": Row("rotate", "samples", "swaps its height and width (90 or 270 degrees)",
                        "nodes.py:1317-1339 rot90(k, dims=[3, 2])"),
    "LatentCutToBatch": Row("input", "samples", "cuts its latent into slices along `dim`, put in the batch",
                            "comfy_extras/nodes_latent.py:211-250 reshape [-1, slice_size, ...]"),
    "LTXVAddGuide": Row("input", "latent", "adds its guide image's latent frames along t (keyframes)",
                        "comfy_extras/nodes_lt.py:166-316 cat([latent_image, guiding_latent], dim=2)"),
    "LTXVCropGuides": Row("input", "latent", "drops the keyframes its conditioning holds from the end of t",
                          "comfy_extras/nodes_lt.py:319-354 latent_image[:, :, :-num_keyframes]"),
}
# their widgets in UI order (what a UI workflow's widgets_values lists: the inputs' order in the source above)
UI_WIDGETS = {"RepeatLatentBatch": ("amount",), "LatentFromBatch": ("batch_index", "length"), "LatentConcat": ("dim",),
              "LatentCut": ("dim", "index", "amount"), "LatentRotate": ("rotation",),
              "LatentCutToBatch": ("dim", "slice_size"), "LTXVAddGuide": ("frame_idx", "strength")}
SIZED = "_latent_shaped"  # ((width, height, batch), (label, ...)); no widget has this name
UNSURE = "_latent_shape_unsure"  # [(label, type)] of the nodes that change a latent not followed
OWN = "_latent_shape_own"  # (width, height, batch): the latent the node takes is SIZED's, nothing between (rev68c #4a)


def keeps(v, h, t, depth=0) -> bool:
    """The node keeps its input's shape by its widgets alone: RepeatLatentBatch x1, LatentRotate none or 180 degrees."""
    try:
        if t == "RepeatLatentBatch":
            return links.widget(v, h, "amount", depth) == 1
        if t == "LatentRotate":
            r = links.widget(v, h, "rotation", depth)
            return isinstance(r, str) and not r.startswith(("90", "270"))
    except links.Unread:
        pass
    return False


def latent_inputs(v, h, row) -> list:
    """The links on the node's latent inputs: BatchLatentsNode's autogrow latents (latents.latent0, ...) in order."""
    if row.input != "latents.latent0":
        return [r for r in [v.link_of(h, row.input)] + [v.link_of(h, n) for n in row.more] if r is not None]
    ins = h[1].get("inputs")
    names = [i.get("name") for i in ins if isinstance(i, dict)] if isinstance(ins, list) else \
        list(ins) if isinstance(ins, dict) else []
    names = [n for n in names if isinstance(n, str) and n.split(".")[-1].removeprefix("latent").isdigit()]
    return [r for r in (v.link_of(h, n) for n in sorted(names, key=lambda n: int(n.split(".")[-1][6:]))) if r is not None]


def _int(v, h, name, depth):
    return int(links._num(links.widget(v, h, name, depth), f"{v.label(h)}.{name}"))


def _latent(v, ref, depth, memo):
    """links.latent of an input, each input ref once per attach() (memo: v.shape_memo, its Unread kept too): a chain of
    n LatentBatch whose two inputs come from one node walked 2^n times without it (rev68c #1: n=18, 164 s)."""
    key = repr(ref)  # an API prompt's ref is a list
    if key not in memo:
        try:
            memo[key] = links.latent(v, ref, depth)
        except links.Unread as exc:
            memo[key] = exc
    if isinstance(memo[key], links.Unread):
        raise memo[key]
    return memo[key]


def _px(v, ref, depth):
    """Image pixels per latent pixel of the latent on ref (rev68c #3: FLUX.2's 16, HunyuanImage's 32, Chroma Radiance's
    1, not always 8): latent_nodes.pixels_per_latent of the node that made it, followed back the way links.latent goes
    (its first latent input); None where not known (a VAEEncode's: its VAE's)."""
    from . import latent_custom
    from .latent_nodes import LATENT_NODES, pixels_per_latent

    source = getattr(v, "latent_source", None) or links._source
    for _ in range(links.MAX_DEPTH):
        h, t, depth = source(v, ref, depth, "a latent")
        if t in LATENT_NODES and t not in latent_custom.SCALES:  # LatentUpscale: its input's, as links.latent
            return pixels_per_latent(t)
        if t in SHAPE:
            ref = (latent_inputs(v, h, SHAPE[t]) or [None])[0]
            continue
        name = links.SAMPLED.get(t) or links.PASSED.get(t) or latent_custom.SAME_SIZE.get(t) or \
            ("samples" if t in latent_custom.SCALES else None)
        if name is None:
            return None
        ref = v.link_of(h, name)
    return None


def through(v, h, t, depth):
    """(width, height, batch) of the latent SHAPE node h (type t) makes, from links.latent of its inputs (still-image
    latents: pixels of 8-px latents); Unread where it is not followed. A change is put in v.shaped (attach)."""
    row = SHAPE[t]
    memo = v.shape_memo if isinstance(getattr(v, "shape_memo", None), dict) else {}
    got = [_latent(v, r, depth, memo) for r in latent_inputs(v, h, row)]
    if not got:
        raise links.Unread(f"{v.label(h)}: no latent")
    w, hh, b = got[0]
    if row.effect == "batch":
        if t == "RepeatLatentBatch":
            out = w, hh, b * _int(v, h, "amount", depth)
        elif t == "LatentFromBatch":
            i = min(b - 1, _int(v, h, "batch_index", depth))
            out = w, hh, min(b - i, _int(v, h, "length", depth))
        else:
            out = w, hh, sum(x[2] for x in got)
    elif row.effect == "rotate":
        out = (hh, w, b) if not keeps(v, h, t, depth) else (w, hh, b)
    elif row.effect in ("concat", "cut"):
        dim = links.widget(v, h, "dim", depth)
        if not isinstance(dim, str) or "t" in dim:
            raise links.Unread(f"{v.label(h)}: along {dim!r}, a video latent's frames the estimate does not follow")
        x = "x" in dim
        if row.effect == "concat":
            w2, h2 = got[1][:2] if len(got) > 1 else (None, None)
            if w2 is None:
                raise links.Unread(f"{v.label(h)}: samples2 not followed")
            out = (w + w2, hh, b) if x else (w, hh + h2, b)
        else:
            px = _px(v, latent_inputs(v, h, row)[0], depth)
            if px is None:
                raise links.Unread(f"{v.label(h)}: a cut of a latent whose pixels per latent pixel the estimate does not know")
            n, i, k = (w if x else hh) // px, _int(v, h, "index", depth), _int(v, h, "amount", depth)
            if i >= 0:
                i = min(i, n - 1)
                k = min(n - i, k)
            else:
                k = min(-max(i, -n), k)
            out = (k * px, hh, b) if x else (w, k * px, b)
    else:
        raise links.Unread(f"{v.label(h)}: it {row.what}, which the estimate does not follow")
    if out != (w, hh, b) and isinstance(getattr(v, "shaped", None), list):
        from . import latent_custom
        v.shaped.append((latent_custom._label(v, h), out))  # its own output's size (rev68c #4b)
    return out


def attach(v, ref, shapers, w):
    """Put into w (a sampler's or a decode's widgets, whose latent comes by link ref) the size the SHAPE nodes on that
    path make (shapers: [(label, type)] the walk met that may change it, latent_custom.attach), or name them."""
    if not shapers:
        return
    from . import latent_custom

    v.shaped, v.shape_memo = [], {}
    v.latent_source = lambda v_, r, d, _what: latent_custom._source(v_, r, d)  # bypassed nodes, subgraphs (rev68c #2)
    try:
        got = tuple(links.latent(v, ref, 0))
    except (links.Unread, latent_custom._Fork, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError):
        w[UNSURE] = list(shapers)
        return
    finally:
        shaped, v.shaped, v.shape_memo, v.latent_source = v.shaped, None, None, None
    own = shaped[-1][1] if shaped else None  # the nearest shape node's (the outermost through() call's, last)
    if own and int(own[0]) > 0 and int(own[1]) > 0:
        b = own[2] if isinstance(own[2], int) and own[2] > 0 else 1
        w[SIZED] = ((int(own[0]), int(own[1]), b), tuple(dict.fromkeys(label for label, _ in shaped)))
        if got == tuple(own):  # nothing between it and the sampler or decode changes the size
            w[OWN] = w[SIZED][0]


def gather(w, graph, t=None):
    """workflow.read(): the uncertain nodes (latent_custom.KEY, UNSURE) and the sizes made (SIZED) of node widgets w
    (of type t; a sampler's own size where a shape node makes it: OWN, or None)."""
    from . import latent_custom

    if t in links.SAMPLED:
        graph.setdefault("sampled", []).append(w.get(OWN))
    graph["unknown"] = graph.get("unknown", []) + ([w[latent_custom.KEY]] if latent_custom.KEY in w else []) + w.get(UNSURE, [])
    if SIZED in w:
        graph.setdefault("shaped", []).append(w[SIZED])


def sizes(graph, sizes_, notes):
    """Add to the graph's sizes (w, h, length 1, batch) each latent SHAPE nodes make, once, and a note naming them;
    where every sampler takes such a latent as made (OWN), the sizes are theirs alone."""
    for (wv, hv, b), labels in dict.fromkeys(graph.get("shaped", [])):
        sizes_.insert(0, (wv, hv, 1, b))  # first: a tie (a rotated latent) is its size
        notes.append(f"{', '.join(labels)} make{'' if len(labels) > 1 else 's'} the latent {wv}x{hv}, batch {b}")
    own = graph.get("sampled") or [None]
    if all(own):  # every sampler takes the latent a shape node makes: those sizes, not the other latents' (rev68c #4a:
        sizes_[:] = [(wv, hv, 1, b) for wv, hv, b in dict.fromkeys(own)]  # a batch of 4 the sampler takes 1 of)
