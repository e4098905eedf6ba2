"""fix67d: audit aud67a's workflow-estimate findings (issue 15), each checked against ComfyUI 0.8.0's source.

F7: a scaled fp8 file's "scaled_fp8" marker tensor (comfy/utils.py:1217-1234: read for its dtype, then dropped) made a
phantom "diffusion model unknown 0.00 GiB" component when its prefix differed from the weights'."""
from gpu_garden.memory.estimate import families, layouts


def _fp8_flux(marker: str) -> dict:
    t = {k: ("F8_E4M3", s) if len(s) == 2 and "blocks" in k else (d, s)
         for k, (d, s) in layouts.table("flux_flux1-dev").items()}
    t[marker] = ("F8_E4M3", (0,))
    return t


def test_scaled_fp8_marker_is_no_component():
    """aud67a mkfp8.py: unprefixed FLUX weights beside a checkpoint-prefixed marker. Old code: two diffusion model
    rows, the second kind None with 0 bytes."""
    for marker in ("model.diffusion_model.scaled_fp8", "scaled_fp8"):
        parts = families.split_components(_fp8_flux(marker), "flux1-dev-fp8-scaled.safetensors")
        assert [(c["role"], c.get("family")) for c in parts] == [("diffusion_model", "flux1")], marker
        assert all(marker not in c["table"] for c in parts)


def test_prefixed_checkpoint_marker_dropped_too():
    """A whole checkpoint (every key model.diffusion_model.*) keeps one diffusion model row without the marker."""
    t = {"model.diffusion_model." + k: v for k, v in _fp8_flux("scaled_fp8").items()}
    parts = families.split_components(t, "ckpt.safetensors")
    dm = [c for c in parts if c["role"] == "diffusion_model"]
    assert len(dm) == 1 and dm[0].get("family") == "flux1" and "scaled_fp8" not in dm[0]["table"]
