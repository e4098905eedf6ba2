"""--offload encoders: only the diffusion model and the text encoders take turns on the device, the VAE stays on it and
decodes beside the diffusion model (vLLM-Omni's --enable-cpu-offload: before the DiT runs its hooks move the encoders off, before an
encoder runs they move the DiT off; the VAE is in neither list). The expected difference against --offload model is
FLUX.1-dev's DiT, 11,901,408,320 bf16 weights, in the decode phase only, and the AE's weights in the text-encode and
sample phases; adding the DiT to every phase (as a model that cannot leave the device) or to none, or the VAE to no
phase but its own, breaks the test."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts

FLUX_DIT_BYTES = 11_901_408_320 * 2
FLUX_AE_BYTES = 83_819_683 * 2  # the FLUX.1 AE's tensors' element count, held in bf16 (its decode dtype)


def _comps(*names):
    return [c for n in names for c in families.split_components(layouts.table(n), n)]


def _weights(offload):
    e = E.estimate(_comps("flux_flux1-dev", "te_clip_l", "te_t5xxl_fp16", "vae_flux_ae"), 1024, 1024,
                   policy={"_no_knobs": True, "offload": offload, "vae_decode": "untiled"})
    return e, {k: b["weights"] for k, b in e["breakdown"].items()}


def test_vae_decodes_beside_the_diffusion_model():
    e, enc = _weights("encoders")
    _, mod = _weights("model")
    assert enc["vae_decode"] - mod["vae_decode"] == FLUX_DIT_BYTES
    assert enc["vae_decode_tiled"] - mod["vae_decode_tiled"] == FLUX_DIT_BYTES
    # the VAE is in neither offload list: it stays on the device under the text encoders and the DiT too
    assert enc["text_encode"] - mod["text_encode"] == FLUX_AE_BYTES and enc["sample"] - mod["sample"] == FLUX_AE_BYTES
    assert enc["vae_decode"] - FLUX_DIT_BYTES == FLUX_AE_BYTES
    assert e["offload"] == "encoders" and any("beside" in a for a in e["assumptions"])


def test_bad_offload_mode():
    with pytest.raises(UserError):
        E.estimate(_comps("flux_flux1-dev"), 1024, 1024, policy={"offload": "encoder"})
