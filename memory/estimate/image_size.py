"""The size of the image a latent is encoded from (VAEEncode and the conditioning nodes that encode their pixels), where
the graph sets it: an EmptyImage, a resize to a typed size, or a scale to a number of pixels of an image loaded from
disk (links.image). workflow.estimate_workflow uses it where the graph has no latent size of its own, before the
family's native size: the Qwen-Image edit templates of comfyui-workflow-templates 0.7.67 scale the loaded image with
ImageScaleToTotalPixels (1 or 1.5 megapixels) and sample its encoded latent (wf65). An image known only by its area
is estimated as a square of that area (the sampler's cost follows the token count, width x height)."""
from . import links

# the node's image input, ComfyUI 0.8.0: nodes.py:340 VAEEncode, 353 VAEEncodeTiled, 371 VAEEncodeForInpaint,
# 411 InpaintModelConditioning; comfy_extras/nodes_ip2p.py:7 InstructPixToPixConditioning
PIXELS = {"VAEEncode": "pixels", "VAEEncodeTiled": "pixels", "VAEEncodeForInpaint": "pixels",
          "InpaintModelConditioning": "pixels", "InstructPixToPixConditioning": "pixels"}
KEY = "_image"  # where workflow.nodes() leaves the size among the node's widgets (no widget has this name)


# ImageUpscaleWithModel's image (comfy_extras/nodes_upscale_model.py:58): its size where the graph sets it, else "decode"
# when a VAE decode gives it (the estimated latent's), under pixel_upscale.KEY (pixel_upscale.step reads it)
UPSCALE = ("ImageUpscaleWithModel", "image", "_upscale_image")
UPSCALE_MODEL = "_upscale_model"  # the file its UpscaleModelLoader names (links.upscale_model_name), where read
DECODED = "the decode of the graph's latent"  # the how of a decoded image's size
# the (w, h, batch) of the VAE decode whose size the graph's size for that image follows (follows_decode), where it does
FROM_DECODE = "_upscale_from_decode"


def scaled(values, of, to) -> tuple:
    """Each of values (sides, a batch) scaled as `to` is to `of`, at least 1: round(to x value / of). One rule for every
    size the graph sets when the estimate's size moves: each sampler's own latent in a re-estimate
    (side_models.sampler_sizes), an upscale step's image after a decode under a typed size (pixel_upscale.step)."""
    return tuple(max(1, round(t * x / o)) for x, o, t in zip(values, of, to))


def attach(v, h, t, w):
    """Put into w (the node's widgets) the size of the image node h of type t encodes: (width, height, batch, how)."""
    if t == UPSCALE[0]:
        return _upscaled(v, h, w)
    if t not in PIXELS:
        return
    try:
        ref = v.link_of(h, PIXELS[t])
        if ref is None:
            return
        wv, hv, b = links.image(v, ref, 0)
        w[KEY] = (int(wv), int(hv), b if isinstance(b, int) and b > 0 else 1, "the size of the image it encodes")
    except links.AreaOnly as exc:
        if not isinstance(exc.pixels, (int, float)) or not 0 < exc.pixels < float("inf"):
            return  # a negative, NaN or infinite area (ComfyUI refuses it): the native size stands (rev62 F7)
        side = int(round(exc.pixels ** 0.5))
        w[KEY] = (side, side, 1, f"a square of the {int(exc.pixels)} pixels its image is scaled to ({exc}); the "
                                  "loaded image's aspect is not known")
    except links.Unread:
        return
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError):
        return  # a malformed graph: the family's native size stands, as before


def largest(found):
    """The largest of [(node, (w, h, batch, how))], or None."""
    return max(found, key=lambda x: x[1][0] * x[1][1] * x[1][2]) if found else None


def source(v, ref):
    """The node handle making the value on link ref, through Reroutes and subgraph inputs; None if not read."""
    for _ in range(links.MAX_DEPTH):
        got = v.src(ref)
        if got is links.SAVED or got[0] == "value":
            return None
        if got[0] == "ref":
            ref = got[1]
            continue
        if v.kind(got[0]) == "Reroute" and v.first_link:
            ref = v.first_link(got[0])
            continue
        return got[0]
    return None


def _maker(v, ref):
    """The type of the node that makes the image on link ref (source); None if unknown."""
    h = source(v, ref)
    return None if h is None else v.kind(h)


def _upscaled(v, h, w):
    """The image ImageUpscaleWithModel receives: (w, h, batch, how) where the graph sets it; a VAE decode's is said as
    DECODED (the estimate's typed size wins over it: pixel_upscale.step), or "decode" where its latent is not
    followed (links.latent); None for another source not read."""
    try:
        ref = v.link_of(h, UPSCALE[1])
        maker = _maker(v, ref) if ref is not None else None
    except (links.Unread, TypeError, ValueError, AttributeError, KeyError, IndexError):
        return
    try:
        wv, hv, b = links.image(v, ref, 0)
        size = (int(wv), int(hv), b if isinstance(b, int) and b > 0 else 1)
    except (links.Unread, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError):
        size = None  # links.AreaOnly is an Unread: a side not known
    if maker in links.DECODES:
        w[UPSCALE[2]] = size + (DECODED,) if size else "decode"
    else:
        w[UPSCALE[2]] = size + ("the size the graph sets",) if size else None
        root = follows_decode(v, ref, size) if size else None
        if root:
            w[FROM_DECODE] = root
    try:  # which model runs on this image: each step is sized with its own (pixel_upscale.step)
        w[UPSCALE_MODEL] = links.upscale_model_name(v, h)
    except (links.Unread, TypeError, ValueError, AttributeError, KeyError, IndexError):
        pass


def follows_decode(v, ref, size):
    """(w, h, batch) of the nearest VAE decode the image on link ref is made from, where its sides follow that decode's
    (an upscale chain, a scale by a factor: twice the decode, twice the image), else None (an EmptyImage, a loaded
    image, a resize to a typed size). est65: under a typed --width/--height the decode's image is the typed size
    (pixel_upscale._image), and such an image scales with it. Probed by reading the image again with that decode's
    sides doubled (links.image's v.at_decode)."""
    met = []

    def doubled(got):
        met.append(got)
        return 2 * got[0], 2 * got[1], got[2]
    v.at_decode = doubled
    try:
        probe = links.image(v, ref, 0)
    except (links.Unread, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError):
        return None
    finally:
        v.at_decode = None
    if not met or not all(isinstance(x, int) and x > 0 for x in met[0]):
        return None
    return met[0] if all(abs(p - 2 * s) <= 1 for p, s in zip(probe[:2], size[:2])) else None
