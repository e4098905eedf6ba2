"""VAE decoders whose per-sample decode figure is ComfyUI's own VAE.memory_used_decode formula (spec.VAE "comfy"), not a
trace: Mochi, Cosmos, HunyuanImage 2.1's kl-64ch and the generic "video" kind (fix68g, audit aud68a finding 1).

That formula is what ComfyUI sizes its decode batch with; it is often far from what the decoder allocates (HunyuanVideo's
was about twice its trace, HunyuanVideo 1.5's 80-89 % over: vae.HV_DECODE, HV15_DECODE). So for these VAEs the estimate
says the figure is the formula and does not claim VAE Decode's out-of-memory tiled retry from it alone: the decode is
counted untiled and the retry's figure shown beside it."""
from . import hunyuan3d as H3D, spec

# the kinds vae._decode_acts has a traced figure for (every other kind falls through to ComfyUI's formula there)
TRACED_DECODE = frozenset({"kl", "wan21", "wan22", "ltxv", "hunyuan-video", "hunyuan-video-15", H3D.VAE_KIND})


def formula_only(kind) -> bool:
    """True where the decode's per-sample figure is ComfyUI's memory_used_decode formula, not traced."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    return kind not in TRACED_DECODE


NOTE = ("; the per-sample figure is ComfyUI's own memory_used_decode formula (not traced for this VAE): whether the "
        "decode runs out of memory and ComfyUI retries it in tiles is not known from it")
