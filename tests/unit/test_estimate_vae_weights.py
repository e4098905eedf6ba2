"""The VAE's weights on the device are its parameters in the dtype it runs in: ComfyUI moves the VAE there
(comfy/sd.py VAE.__init__: first_stage_model.to(vae_dtype)), diffusers and Wan's runner load it in the dtype they
decode in. Expected bytes are counted here from the stored layout's shapes (not from the estimate), so keeping the
file's 16-bit bytes under an fp32 decode (the old figure: half) breaks the test."""
import math

from gpu_garden.memory.estimate import families, formula as E, layouts


def _vae(name):
    t = layouts.table(name)
    return t, families.split_components(t, name)


def _w_vae(comps, **pol):
    e = E.estimate(comps, 832, 480, 81, 1, policy={"_no_knobs": True, **pol})
    return e["_ctx"]["w"]["vae"], e["breakdown"]["vae_decode"]["weights"]


def test_vae_weights_follow_the_vae_dtype():
    table, comps = _vae("vae_wan_2.1_vae")
    assert {dt for dt, _ in table.values()} == {"BF16"}  # the stored file is 16-bit
    n = sum(math.prod(s) for _, s in table.values())
    assert n > 100_000_000  # the Wan 2.1 VAE: ~127 M parameters
    assert _w_vae(comps, vae_dtype="bf16") == (2 * n, 2 * n)
    assert _w_vae(comps, vae_dtype="fp32") == (4 * n, 4 * n)  # diffusers' vae=...(dtype=float32), Wan's fp32 VAE


def test_an_fp32_file_run_in_16_bit_is_counted_in_16_bit():
    table, comps = _vae("vae_sd15_vae-ft-mse-840000-ema-pruned")
    n = sum(math.prod(s) for dt, s in table.values() if dt in ("F32", "F16", "BF16"))
    assert _w_vae(comps, vae_dtype="bf16")[0] == 2 * n
    assert _w_vae(comps, vae_dtype="fp32")[0] == 4 * n
