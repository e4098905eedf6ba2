"""The estimate follows what ComfyUI 0.8.0 does: VAE decode batch from free memory, VAE dtype, tiled fallback,
weights as it keeps them, the torch/device/peak figures, and the RAM and Dynamic VRAM verdicts."""
import pytest

from gpu_garden.memory.estimate import families, formula as E, layouts, spec, vae as V
from gpu_garden.memory.units import GiB, MiB


def comps(*names):
    out = []
    for n in names:
        out += families.split_components(layouts.table(n), n)
    return out


SDXL = ("sdxl_sd_xl_base_1.0",)
FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


def test_decode_batch_is_comfyuis_choice():
    """VAE.decode: batch_number = int(free / memory_used_decode(one sample)); ours is that many samples at once."""
    per = V.vae_decode_bytes("kl", [4, 4, 128, 128], "bf16", device="cuda")  # the estimate's device: CUDA
    heur = V.comfy_decode_heuristic("kl", [4, 4, 128, 128], "bf16")
    assert heur == 2178 * 128 * 128 * 64 * 2                      # comfy/sd.py's own formula, bf16
    assert V.decode_batch("kl", [4, 4, 128, 128], "bf16", 2 * heur + 1) == 2
    assert V.decode_batch("kl", [4, 4, 128, 128], "bf16", 100 * heur) == 4   # never more than the batch
    assert V.decode_batch("kl", [4, 4, 128, 128], "bf16", 1) == 1
    e24 = E.judge(E.estimate(comps(*SDXL), 1024, 1024, batch=4), 24 * GiB)
    e12 = E.judge(E.estimate(comps(*SDXL), 1024, 1024, batch=4), 12 * GiB)
    assert e24["vae"]["batch"] == 4 and e24["breakdown"]["vae_decode"]["activations"] == 4 * per
    # fix66a: the U-Net (4.78 GiB) stays loaded beside the VAE (0.16) where the card has room (vae_resident.py): 12 GiB
    # - 450 MiB - 4.94 GiB = ~6.62 GiB free, / 4.254 GiB a sample = 1 (24 GiB: ~18.62 / 4.254 = 4)
    assert e12["vae"]["batch"] == 1 and e12["breakdown"]["vae_decode"]["activations"] == 1 * per
    assert e24["vae"]["per_sample"] == per


def test_vae_dtype_as_comfyui_picks_it():
    assert V.choose_dtype("kl") == "bf16"
    assert V.choose_dtype("kl", gpu_halves=("fp16",)) == "fp32"     # the KL VAE allows only bf16 or fp32
    assert V.choose_dtype("wan21", gpu_halves=("fp16",)) == "fp16"
    assert V.choose_dtype("kl", "fp32") == "fp32"                    # --fp32-vae
    bf = E.estimate(comps(*FLUX), 1024, 1024, cfg=False)
    old_gpu = E.estimate(comps(*FLUX), 1024, 1024, cfg=False, policy={"gpu_halves": ("fp16",)})
    assert old_gpu["vae"]["dtype"] == "fp32"
    # plus the CUDA convolution workspace: in fp32 one copy x 256 channels x 4 bytes per output pixel (cuda_conv.FP32_COPIES)
    assert old_gpu["vae"]["per_sample"] == V.KL_DECODE * 1024 * 1024 * 4 + 3 * 1024 * 1024 * 4 + 1024 * 1024 * 1024
    # not twice the bf16 figure: the fp32 decode holds 1.65 x the bf16 one, as InvokeAI's VAE benchmark measured the FLUX
    # AE at 1024 px (3587.0 / 2178.5 MiB, diffusion_measured.json batches 33 and 18)
    assert abs(old_gpu["vae"]["per_sample"] / bf["vae"]["per_sample"] / (3587.0 / 2178.5) - 1) < 0.02


def test_tiled_figures_follow_resolution_and_the_fallback():
    small = V.tile_latent_shape("kl", [1, 4, 32, 32], fallback=False)
    assert small == [1, 4, 32, 32]                                   # a 256 px image is one tile
    assert V.tile_latent_shape("kl", [1, 4, 256, 256], fallback=False) == [1, 4, 64, 64]
    assert V.tile_latent_shape("kl", [1, 4, 256, 256], fallback=False, tile={"tile": 256}) == [1, 4, 32, 32]
    # video fallback: 256 px // 8 = 32-latent tiles, every latent frame at once
    assert V.tile_latent_shape("wan21", [1, 16, 21, 90, 160], fallback=True) == [1, 16, 21, 32, 32]
    assert V.tile_latent_shape("wan21", [1, 16, 21, 90, 160], fallback=False) == [1, 16, 16, 64, 64]
    p_auto = V.phase("wan21", [1, 16, 21, 90, 160], "bf16", free_bytes=2 * GiB)
    assert p_auto["fallback"] and p_auto["bytes"] == V.vae_decode_bytes("wan21", [1, 16, 21, 32, 32])
    p_room = V.phase("wan21", [1, 16, 21, 90, 160], "bf16", free_bytes=40 * GiB)
    assert not p_room["fallback"] and p_room["bytes"] == p_room["per_sample"]


def test_video_peak_follows_the_budget():
    """On a card where the untiled decode does not fit, ComfyUI retries in tiles: the peak is the tiled one."""
    c = comps("wan_wan2.1_t2v_1.3B_fp16", "vae_wan_2.1_vae")
    big = E.judge(E.estimate(c, 1280, 720, 81), 80 * GiB)
    small = E.judge(E.estimate(c, 1280, 720, 81), 8 * GiB)
    assert not big["vae"]["tiled"] and small["vae"]["fallback"]
    assert small["phases"]["vae_decode"] < big["phases"]["vae_decode"]
    assert small["breakdown"]["vae_decode"]["activations"] == small["vae"]["fallback_bytes"]


def test_peak_torch_and_peak_device():
    e = E.estimate(comps(*FLUX), 1024, 1024, cfg=False)
    bd = e["breakdown"][e["peak_phase"]]
    assert e["peak_torch"] == bd["weights"] + bd["activations"]
    # + the cache the allocator keeps through sampling (sample_cache: reserved, not in the verdict's peak)
    assert bd["cached_slack"] > 0
    assert e["peak_device"] == (bd["weights"] + bd["activations"] + bd["allocator_margin"] + bd["cached_slack"]
                                + e["fixed"]["cuda_context"])
    assert e["peak"] + bd["cached_slack"] == e["peak_device"] + e["fixed"]["comfyui_reserve"]


def test_t5_weights_as_comfyui_keeps_them():
    e = E.estimate(comps("te_t5xxl_fp16"), 1024, 1024)
    t5 = layouts.load("te_t5xxl_fp16")["total_bytes"]
    assert e["components"][0]["bytes"] == t5                        # the file
    assert e["components"][0]["resident"] == t5 - 32128 * 4096 * 2   # less encoder.embed_tokens (= shared.weight)


def test_weights_dtype_and_text_tokens_switches():
    base = E.estimate(comps("flux_flux1-dev"), 1024, 1024, cfg=False)
    fp32 = E.estimate(comps("flux_flux1-dev"), 1024, 1024, cfg=False, policy={"weights_dtype": "fp32"})
    fp8 = E.estimate(comps("flux_flux1-dev"), 1024, 1024, cfg=False, policy={"weights_dtype": "fp8"})
    w = base["breakdown"]["sample"]["weights"]
    assert fp32["breakdown"]["sample"]["weights"] == pytest.approx(2 * w, rel=0.01)
    assert fp8["breakdown"]["sample"]["weights"] == pytest.approx(w / 2, rel=0.01)
    t512 = E.estimate(comps("flux_flux1-dev"), 1024, 1024, cfg=False, policy={"text_tokens": 512})
    assert t512["latent"]["tokens"] == 4096 + 512 and base["latent"]["tokens"] == 4096 + 256  # ComfyUI's T5: 256
    assert t512["breakdown"]["sample"]["activations"] > base["breakdown"]["sample"]["activations"]
    sep = E.estimate(comps("wan_wan2.1_t2v_1.3B_fp16"), 832, 480, 33, cfg=False)
    bat = E.estimate(comps("wan_wan2.1_t2v_1.3B_fp16"), 832, 480, 33, cfg=True)
    assert sep["latent"]["batch_in_model"] == 1 and bat["latent"]["batch_in_model"] == 2


def test_reserve_is_comfyuis():
    assert spec.comfy_reserve("linux") == 400 * MiB
    assert spec.comfy_reserve("windows", 8 * GiB) == 600 * MiB
    assert spec.comfy_reserve("windows", 24 * GiB) == 700 * MiB
    assert spec.comfy_reserve("linux", reserve_vram_gb=1.5) == int(1.5 * GiB)
    e = E.estimate(comps(*SDXL), 1024, 1024, policy={"reserve": 123 * MiB})
    assert e["fixed"]["comfyui_reserve"] == 123 * MiB


def test_host_ram_verdict():
    e = E.estimate(comps(*FLUX), 1024, 1024, cfg=False, policy={"host_ram": 64 * GiB, "budget": 16 * GiB})
    r = e["host_ram"]
    total = sum(c["resident"] for c in e["components"] if c["role"] != "other")
    assert r["offloaded"] > 6 * GiB                                # FLUX's 22 GiB does not fit 16 GiB
    assert r["pinned"] == r["offloaded"]                          # ComfyUI pins what it offloads
    assert r["needed"] == r["kept_for_reload"] + r["offloaded"] and r["kept_for_reload"] <= total
    assert r["verdict"] == "fits"
    tight = E.estimate(comps(*FLUX), 1024, 1024, cfg=False, policy={"host_ram": 8 * GiB, "budget": 16 * GiB})
    assert tight["host_ram"]["verdict"].startswith("does not fit")


def test_dynamic_vram_verdict():
    on = E.estimate(comps("flux_flux1-dev"), 1024, 1024, cfg=False, policy={"dynamic_vram": "on", "budget": 16 * GiB})
    d = on["dynamic_vram"]
    assert d["enabled"] and d["source"] == "--dynamic-vram on"
    assert 6 * GiB < d["streamed_per_step"] < 8 * GiB and d["added_seconds_per_step"] > 0
    assert d["verdict"].startswith("fits, streaming") and "estimate" in d["verdict"]
    assert E.judge(on, 16 * GiB)["verdict"] == "fits with streaming"
    off = E.estimate(comps("flux_flux1-dev"), 1024, 1024, cfg=False, policy={"dynamic_vram": "off", "budget": 16 * GiB})
    assert not off["dynamic_vram"]["enabled"] and off["dynamic_vram"]["verdict"] is None
    assert E.judge(off, 16 * GiB)["verdict"] == "does not fit"


def test_cli_cond_uncond_switch(tmp_path, capsys):
    import json as _json
    from gpu_garden.memory import cli
    f = layouts.write_sparse("wan_wan2.1_t2v_1.3B_fp16", tmp_path / "wan.safetensors")
    base = ["estimate", str(f), "--width", "832", "--height", "480", "--frames", "33", "--vram", "24", "--json"]
    cli.main(base + ["--cond-uncond", "separate"])
    sep = _json.loads(capsys.readouterr().out)
    cli.main(base + ["--cond-uncond", "batched"])
    bat = _json.loads(capsys.readouterr().out)
    assert sep["latent"]["batch_in_model"] == 1 and bat["latent"]["batch_in_model"] == 2
    assert sep["breakdown"]["sample"]["activations"] < bat["breakdown"]["sample"]["activations"]
