"""LatentUpscaleBy (ComfyUI 0.8.0 nodes.py:1298-1314): the latent it makes is its input latent's, scaled by scale_by.
upscale() rounds the LATENT's sides, not the pixels': width = round(samples.shape[-1] * scale_by) (l.1310-1311, Python's
round, half to even), so the image it decodes to is that many latent pixels times the VAE's scale s (8 for the KL VAEs:
a multiple of 8 px). Its length and batch are its input's (common_upscale resizes the last two dims only, l.1312).

workflow.nodes() leaves the input latent's size among the node's widgets under KEY where the graph sets it
(links.latent: a still-image latent node, a VAEEncode's image, through samplers); workflow.read() otherwise scales the
graph's largest latent node's size (aud66a F3: it was estimated at the base size, as if no upscale ran)."""
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


def sized(graph, size) -> list:
    """[(width, height, label)] of each LatentUpscaleBy workflow.read() met (graph["scales"]: (node, scale_by, input
    size or None)): its input latent's size, else the graph's largest latent node's (size), scaled as ComfyUI does
    (scaled(), in the latent's pixels: the VAE scale of the graph's latent family, 8 where none is known). A scale_by
    out of range, or no size to scale: named among the sizes from an input (graph["from_input"]), not sized."""
    from . import spec

    fams = set(graph["families"].values())
    s = spec.family(fams.pop())["s"] if len(fams) == 1 else 8
    out = []
    for t, by, got in graph["scales"]:
        base = got or size
        if by is None or not base:
            bad = " (its scale_by is not a number from 0.01 to 8)" if by is None and base else ""
            graph["from_input"].append((t, "its input latent, times scale_by" + bad))
            continue
        out.append(scaled(base[0], base[1], by, s) + (f"{t} (scale_by {by:g} of {base[0]}x{base[1]})",))
    return out
