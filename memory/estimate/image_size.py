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
# when a VAE decode gives it (the estimated latent's), under pixel_upscale.KEY (pixel_upscale.image_of reads it)
UPSCALE = ("ImageUpscaleWithModel", "image", "_upscale_image")
DECODES = ("VAEDecode", "VAEDecodeTiled")


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


def _upscaled(v, h, w):
    try:
        ref = v.link_of(h, UPSCALE[1])
        wv, hv, b = links.image(v, ref, 0)
        w[UPSCALE[2]] = (int(wv), int(hv), b if isinstance(b, int) and b > 0 else 1, "the size the graph sets")
    except (links.Unread, links.AreaOnly):
        try:
            for _ in range(links.MAX_DEPTH):  # through Reroutes to the node that makes the image
                got = v.src(ref)
                if got is links.SAVED or got[0] == "value":
                    return
                if got[0] == "ref":
                    ref = got[1]
                    continue
                if v.kind(got[0]) == "Reroute" and v.first_link:
                    ref = v.first_link(got[0])
                    continue
                w[UPSCALE[2]] = "decode" if v.kind(got[0]) in DECODES else None
                return
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            return
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError):
        return
