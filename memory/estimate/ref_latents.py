"""Reference latents: the edit models' input images, which ComfyUI 0.8.0 concatenates to the image tokens of every
model call (fix68g, audit aud68a finding 3). FLUX.1 Kontext and FLUX.2 (comfy/ldm/flux/model.py:314-345: each of
ref_latents is patchified and cat onto img) and Qwen-Image-Edit (comfy/ldm/qwen_image/model.py:437-462) read the
conditioning's reference_latents, set by ReferenceLatent (comfy_extras/nodes_edit_model.py: its latent input, a VAEEncode
of an image FluxKontextImageScale or a resize sized) and by TextEncodeQwenImageEdit / TextEncodeQwenImageEditPlus where
a VAE is given (nodes_qwen.py:49 and 104: each image scaled to 1024 x 1024 pixels, the Plus node's sides to multiples
of 8). Each reference adds its latent's tokens (the family's patch grid) to the sequence the sampler's model runs.

attach() leaves each node's reference image sizes in its widgets under KEY during the workflow walk; tokens() turns
the sizes into tokens for a family; the CLI's --ref-images N counts N references at the output size."""
import math

from . import image_size, links, spec

KEY = "_ref_images"  # [(width, height, how)] of the references a node adds (no widget has this name)
QWEN_EDIT = {"TextEncodeQwenImageEdit": ("image",), "TextEncodeQwenImageEditPlus": ("image1", "image2", "image3")}
QWEN_EDIT_PIXELS = 1024 * 1024  # nodes_qwen.py:35 and 93: total = int(1024 * 1024)
_ERRORS = (links.Unread, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError)


_source = image_size.source  # through Reroutes and subgraph inputs (one walk, image_size.py)


def _fed(v, h, name) -> bool:
    """Whether node h's input `name` is fed by a node (through Reroutes and subgraph inputs): ComfyUI passes None for
    an input linked to nothing (a subgraph's unlinked input), nodes_qwen.py:80-81 then skips that image."""
    try:
        ref = v.link_of(h, name)
        src = _source(v, ref) if ref is not None else None
        if src is not None and not v.active(src):  # muted, or bypassed with no image to pass on (a LoadImage): dropped
            return v.link_of(src, "image") is not None  # from the prompt, the input None (the 2509 subgraphed template)
        return src is not None
    except _ERRORS:
        return False


def attach(v, h, t, w):
    """Put into w (the node's widgets) the sizes of the reference images node h of type t adds: a ReferenceLatent's
    latent where a VAEEncode (image_size.PIXELS) makes it from an image whose size the graph sets ("unknown" size
    where it does not); a Qwen edit text encoder's images when its vae input is linked (each 1024 x 1024 pixels)."""
    try:
        if t == "ReferenceLatent":
            ref = v.link_of(h, "latent")
            src = _source(v, ref) if ref is not None else None
            if src is None:
                return
            got = {}
            if v.kind(src) in image_size.PIXELS:
                image_size.attach(v, src, v.kind(src), got)
            size = got.get(image_size.KEY)
            w[KEY] = [(size[0], size[1], size[3]) if size else (None, None, f"the latent of {v.label(src)}")]
        elif t in QWEN_EDIT and v.link_of(h, "vae") is not None:
            n = sum(_fed(v, h, name) for name in QWEN_EDIT[t])  # rev68g #1: an unlinked subgraph input adds none
            side = int(round(math.sqrt(QWEN_EDIT_PIXELS)))
            w[KEY] = [(side, side, f"{t}'s image scaled to {QWEN_EDIT_PIXELS} pixels")] * n
    except _ERRORS:
        return


# the families whose model takes the conditioning's reference_latents as ref_latents (comfy/model_base.py:903-919 Flux,
# FLUX.2 its subclass :922; QwenImage :1532-1548; Omnigen2 :1507, no family here). Chroma subclasses Flux but its model
# reads none (comfy/ldm/chroma/model.py); WAN21 takes only the last one, as a frame (:1240-1242): not counted
TAKES_REFS = frozenset({"flux1", "flux2", "qwen-image"})


def tokens(family, sizes, width, height) -> tuple:
    """(tokens, lines) of the reference images `sizes` [(w, h, how)] for the family's patch grid; a size not known is
    counted at the output size (width x height), and said so. A family whose model takes no reference latents
    (TAKES_REFS) adds none: a line says so (rev68g #3)."""
    if sizes and family not in TAKES_REFS and family != "unknown":  # a model not recognised (Omnigen2): counted
        name = spec.family(family).get("name") or family
        return 0, [f"{len(sizes)} reference image(s) not counted: {name}'s model takes no reference latents in ComfyUI "
                   f"(only FLUX.1, FLUX.2, Qwen-Image and Omnigen2 add them to the image tokens; comfy/model_base.py)"]
    sp = spec.family(family)
    s, p = sp["s"], sp["p"]
    total, unknown = 0, 0
    for rw, rh, _ in sizes:
        if not rw or not rh:
            rw, rh, unknown = width, height, unknown + 1
        total += math.ceil(max(1, int(rh) // s) / p) * math.ceil(max(1, int(rw) // s) / p)
    if not sizes:
        return 0, []
    line = (f"{len(sizes)} reference image(s) added to the image tokens of every model call (ReferenceLatent / the edit "
            f"model's conditioning: ComfyUI concatenates them, comfy/ldm/flux/model.py:314-345, qwen_image/model.py:"
            f"437-462): {total} tokens")
    line += f"; {unknown} of unknown size counted at the output size {width}x{height}" if unknown else ""
    return total, [line]
