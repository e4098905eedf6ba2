"""--offload encoders: only the diffusion model and the text encoders take turns on the device, the VAE decodes beside
the diffusion model (vLLM-Omni's --enable-cpu-offload: before the DiT runs its hooks move the encoders off, before an
encoder runs they move the DiT off; the VAE is in neither list). The expected difference against --offload model is
FLUX.1-dev's DiT, 11,901,408,320 bf16 weights, in the decode phase only; adding it to every phase (as a model that
cannot leave the device) or to none breaks the test."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts

FLUX_DIT_BYTES = 11_901_408_320 * 2


def _comps(*names):
    return [c for n in names for c in families.split_components(
        {k: (v["dtype"], tuple(v["shape"])) for k, v in layouts.load(n)["tensors"].items()}, n)]


def _weights(offload):
    e = E.estimate(_comps("flux_flux1-dev", "te_clip_l", "te_t5xxl_fp16", "vae_flux_ae"), 1024, 1024,
                   policy={"_no_knobs": True, "offload": offload, "vae_decode": "untiled"})
    return e, {k: b["weights"] for k, b in e["breakdown"].items()}


def test_vae_decodes_beside_the_diffusion_model():
    e, enc = _weights("encoders")
    _, mod = _weights("model")
    assert enc["vae_decode"] - mod["vae_decode"] == FLUX_DIT_BYTES
    assert enc["vae_decode_tiled"] - mod["vae_decode_tiled"] == FLUX_DIT_BYTES
    assert enc["text_encode"] == mod["text_encode"] and enc["sample"] == mod["sample"]
    assert e["offload"] == "encoders" and any("beside" in a for a in e["assumptions"])


def test_bad_offload_mode():
    with pytest.raises(UserError):
        E.estimate(_comps("flux_flux1-dev"), 1024, 1024, policy={"offload": "encoder"})
