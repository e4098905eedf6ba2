"""LatentUpscaleBy (ComfyUI 0.8.0 nodes.py:1298-1314): the latent it makes is its input latent's, scaled by scale_by.
upscale() rounds the LATENT's sides, not the pixels': width = round(samples.shape[-1] * scale_by) (l.1310-1311, Python's
round, half to even), so the image it decodes to is that many latent pixels times the VAE's scale s (8 for the KL VAEs:
a multiple of 8 px). Its length and batch are its input's (common_upscale resizes the last two dims only, l.1312).

workflow.nodes() leaves the input latent's size among the node's widgets under KEY where the graph sets it
(links.latent: a still-image latent node, a VAEEncode's image, through samplers and other LatentUpscaleBy / LatentUpscale
nodes, resized()); workflow.read() sizes the node at that size and keeps that latent's batch. Where the chain is not
followed (a video latent, a custom node), the node is named as sized from its input, not sized: scaling the graph's
largest latent instead made a second upscale in a chain 1536 px where ComfyUI makes 2304 (rev66d R1), and took another
latent's batch (R1b)."""
from . import links

NODE = "LatentUpscaleBy"
KEY = "_latent_in"  # (width, height, batch) in pixels of the latent on its samples input; no widget has this name
SCALE_MIN, SCALE_MAX = 0.01, 8.0  # its scale_by's range (nodes.py:1303)


def attach(v, h, t, w):
    """Put into w (the node's widgets) the size of the latent LatentUpscaleBy h takes, where links.latent follows it."""
    if t != NODE:
        return
    try:
        ref = v.link_of(h, "samples")
        if ref is None:
            return
        wv, hv, b = links.latent(v, ref, 0)
        if int(wv) > 0 and int(hv) > 0:
            w[KEY] = (int(wv), int(hv), int(b) if isinstance(b, int) and b > 0 else 1)
    except (links.Unread, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError):
        return  # not followed (a video latent, a custom node): the graph's largest latent stands in


def resized(v, h, t, got, depth):
    """(width, height, batch) in pixels of the latent LatentUpscaleBy / LatentUpscale h makes of got, its input's
    (width, height, batch) (links.latent, in 8-px latents: the still-image latents it follows). LatentUpscaleBy:
    scaled(). LatentUpscale (nodes.py:1279-1295): width and height 0 keep the input; one of them 0 takes the input's
    aspect; each at least 64 px, then // 8 latent px. The batch is the input's (common_upscale resizes the last two dims)."""
    w, hh, b = got
    if t == NODE:
        by = scale_by({"scale_by": links.widget(v, h, "scale_by", depth)})
        if by is None:
            raise links.Unread(f"{v.label(h)}: a scale_by that is not a number from {SCALE_MIN:g} to {SCALE_MAX:g}")
        return scaled(w, hh, by) + (b,)
    tw, th = (int(links._num(links.widget(v, h, n, depth), f"{v.label(h)}.{n}")) for n in ("width", "height"))
    if tw == 0 and th == 0:
        return w, hh, b
    lw, lh = w // 8, hh // 8
    if tw == 0:
        th = max(64, th)
        tw = max(64, round(lw * th / lh))
    elif th == 0:
        tw = max(64, tw)
        th = max(64, round(lh * tw / lw))
    return max(64, tw) // 8 * 8, max(64, th) // 8 * 8, b


def scale_by(w) -> float | None:
    """The node's scale_by, or None where it is not a number in ComfyUI's range (which refuses the prompt)."""
    x = w.get("scale_by", 1.5)
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not SCALE_MIN <= x <= SCALE_MAX:
        return None
    return float(x)


def scaled(width: int, height: int, by: float, s: int = 8) -> tuple[int, int]:
    """The pixel size LatentUpscaleBy makes of a width x height latent (s: the VAE's scale): the latent's sides
    (width // s, as the empty-latent nodes make them) rounded after scaling, as nodes.py:1310-1311 does."""
    return max(1, round((width // s) * by)) * s, max(1, round((height // s) * by)) * s


def sized(graph) -> list:
    """[(width, height, (length, batch), label)] of each LatentUpscaleBy workflow.read() met (graph["scales"]: (node,
    scale_by, input (width, height, batch) or None)): its input latent's size scaled as ComfyUI does (scaled(), in the
    latent's pixels: the VAE scale of the graph's latent family, 8 where none is known), that latent's batch and a length
    of 1 (links.latent follows still-image latents only). A scale_by out of range, or an input the estimate does not
    follow: named among the sizes from an input (graph["from_input"]), not sized (rev66d R1: not the graph's largest)."""
    from . import spec

    fams = set(graph["families"].values())
    s = spec.family(fams.pop())["s"] if len(fams) == 1 else 8
    out = []
    for t, by, got in graph["scales"]:
        if by is None or not got:
            why = " (its scale_by is not a number from 0.01 to 8)" if by is None else " (a latent the estimate does not follow)"
            graph["from_input"].append((t, "its input latent, times scale_by" + why))
            continue
        out.append(scaled(got[0], got[1], by, s) + ((1, got[2]), f"{t} (scale_by {by:g} of {got[0]}x{got[1]})"))
    return out
