"""diffusers' SDXL pipelines upcast an fp16 VAE to fp32 before decoding (pipeline_stable_diffusion_xl.py: needs_upcasting
= vae.dtype == float16 and vae.config.force_upcast; the SDXL base VAE sets force_upcast), so --runner diffusers figures
an SDXL decode in fp32 unless --vae-dtype says otherwise. Other families and ComfyUI keep the 16-bit decode. The
expected figures are written out: 4 bytes per VAE weight, and the 16-bit decode's activations doubled (the KL decode is
per-pixel bytes x element size); deciding fp32 for every family, or never, breaks a test."""
from gpu_garden.memory.estimate import families, formula as E, layouts


def _comps(*names):
    return [c for n in names for c in families.split_components(layouts.table(n), n)]


def _decode(comps, **pol):
    e = E.estimate(comps, 1024, 1024, policy={"_no_knobs": True, "vae_decode": "untiled", **pol})
    return e, e["breakdown"]["vae_decode"]


def test_sdxl_under_diffusers_decodes_in_fp32():
    comps = _comps("sdxl_sd_xl_base_1.0")
    e, bd = _decode(comps, runner="diffusers")
    _, half = _decode(comps, runner="diffusers", vae_dtype="fp16")
    assert e["vae"]["dtype"] == "fp32"
    assert any("upcast" in a for a in e["assumptions"])
    vae_params = 83_653_863  # the SDXL VAE (AutoencoderKL, 4-channel latent): its tensors' element count
    assert bd["weights"] - half["weights"] == 2 * vae_params  # 4 bytes per weight instead of 2
    # by hand: fp32 975 elements per pixel x 4 bytes (vae.DIFFUSERS_KL_DECODE), fp16 1216 x 2 (DIFFUSERS_KL_DECODE_DTYPE),
    # each + the 3-channel fp32 output
    assert bd["activations"] == (975 * 4 + 3 * 4) * 1024 * 1024
    assert half["activations"] == (1216 * 2 + 3 * 4) * 1024 * 1024


def test_explicit_dtype_and_other_runners_and_families_unchanged():
    sdxl = _comps("sdxl_sd_xl_base_1.0")
    assert _decode(sdxl, runner="diffusers", vae_dtype="bf16")[0]["vae"]["dtype"] == "bf16"
    assert _decode(sdxl, runner="comfyui")[0]["vae"]["dtype"] == "bf16"
    flux = _comps("flux_flux1-dev", "vae_flux_ae")
    assert _decode(flux, runner="diffusers")[0]["vae"]["dtype"] == "bf16"


def test_the_decode_line_says_why_from_the_same_decision():
    """The reason comes from where the dtype is chosen (vae.decode_dtype): a VAE given as loaded (vae_bytes, as the
    node passes it) is neither upcast nor ComfyUI's choice, even for SDXL under diffusers (it said 'diffusers upcasts
    it' beside bf16)."""
    sdxl = _comps("sdxl_sd_xl_base_1.0")

    def line(**pol):
        e, _ = _decode(sdxl, **pol)
        return e["vae"]["dtype"], next(a for a in e["assumptions"] if a.startswith("VAE decode:"))

    dt, text = line(runner="diffusers")
    assert dt == "fp32" and "fp32 (diffusers upcasts it)" in text
    dt, text = line(runner="diffusers", vae_bytes=2)
    assert dt == "bf16" and "bf16 (as loaded)" in text
    assert "fp16 (set)" in line(runner="diffusers", vae_dtype="fp16")[1]
    assert "bf16 (ComfyUI's VAE dtype)" in line(runner="comfyui")[1]


def test_the_decode_line_under_diffusers_leaves_out_comfyuis_batch_and_tile_node():
    sdxl = _comps("sdxl_sd_xl_base_1.0")

    def line(runner):
        return next(a for a in _decode(sdxl, runner=runner)[0]["assumptions"] if a.startswith("VAE decode:"))

    assert "ComfyUI sizes its batch" not in line("diffusers") and "VAE Decode (Tiled) 512 px" not in line("diffusers")
    assert "ComfyUI sizes its batch" in line("comfyui") and line("comfyui").endswith("tiled: VAE Decode (Tiled) 512 px")
