"""Fit to Card plan (memory/fit/plan.py): hand-computed expectations on round numbers.

Each expected value below is worked out by hand from ComfyUI 0.8.0's load_models_gpu arithmetic
(lowvram_model_memory = max(0, free - max(0.8 GiB + reserve, minimum_memory_required + reserve),
min(free * ratio, free - 0.8 GiB - reserve)), ratio MIN_WEIGHT_MEMORY_RATIO: 0.0 on NVIDIA, 0.4 on other GPUs) and the plan's rules; none is computed by the code under test. Doubling the activations anywhere
in the plan moves the kept weights and the predicted peak by whole GiB and fails these tests."""
from gpu_garden.memory.fit import plan as P
from gpu_garden.memory.units import GiB, MiB

G = GiB


def test_margin_and_cond_batch_wiring(monkeypatch):
    seen = {}

    def fake(family, latent_shape, dtype="bf16", cond_batch=1, arch=None, text_tokens=None):
        seen.update(family=family, shape=list(latent_shape), cond_batch=cond_batch)
        return 1000 * cond_batch

    monkeypatch.setattr(P, "activation_bytes", fake)
    # 2 x 1000 activations + 500 cast copy, +5 % margin = 2625
    assert P.sample_memory_required("sdxl", [1, 4, 128, 128], "fp16", cond_batch=2, cast_bytes=500) == 2625
    assert seen == {"family": "sdxl", "shape": [1, 4, 128, 128], "cond_batch": 2}


def test_planned_cond_batch():
    assert P.planned_cond_batch({"positive": 1, "negative": 1}, cfg=7.0) == 2
    assert P.planned_cond_batch({"positive": 1, "negative": 1}, cfg=1.0) == 1  # cfg1 optimization skips uncond
    assert P.planned_cond_batch({"positive": 1, "negative": 1}, cfg=1.0, disable_cfg1_optimization=True) == 2
    assert P.planned_cond_batch({"positive": 1}, cfg=None) == 1  # BasicGuider (FLUX)
    assert P.planned_cond_batch({"positive": 2, "negative": 1}, cfg=None) == 3  # area conds batch too
    assert P.planned_cond_batch({"positive": 0, "negative": 0}, cfg=5) == 1


def test_twelve_gib_card_encoders_off_weights_partly_offloaded():
    # budget 12, context 0.5, reserve 0.5; model 10, encoders 2, memory_required 3 (GiB)
    # with everything: 0.5 + 2 + 10 + 3 + 0.5 = 16 > 12 -> encoders off
    # free = 11.5; floor (NVIDIA ratio 0) = 0; kept = min(10, max(0, 11.5 - 3 - 0.5, 0)) = 8
    p = P.plan(12 * G, weights={"diffusion_model": 10 * G, "text_encoders": 2 * G, "vae": 0},
               memory_required=3 * G, context=G // 2, reserve=G // 2)
    assert p["text_encoders_off"] is True
    assert p["weights_on_gpu"] == 8 * G
    assert p["weights_offloaded"] == 2 * G
    assert p["peak"]["sample"] == int(11.5 * G)  # 0.5 + 8 + 3
    assert p["fits"] is True
    assert [s["id"] for s in p["steps"]] == ["text_encoders_off", "weights_on_gpu"]
    assert p["steps"][0]["saving"] == 2 * G and p["steps"][1]["saving"] == 2 * G
    assert p["summary"] == ("text encoders off the GPU, kept 8.00 GiB of weights on the GPU, offloaded 2.00 GiB "
                            "(ComfyUI's loader keeps 3.50 GiB free: memory_required + reserve); predicted peak 11.50 GiB of 12.00 GiB")
    assert p["memory_required"] == p["minimum_memory_required"] == 3 * G


def test_stock_figure_too_low_keeps_too_many_weights():
    # ComfyUI's own figure 1 GiB: keeps min(10, 11.5 - 1 - 0.5) = 10 -> peak 0.5 + 10 + 3 = 13.5 > 12 (OOM)
    p = P.plan(12 * G, weights={"diffusion_model": 10 * G, "text_encoders": 0, "vae": 0}, memory_required=3 * G,
               context=G // 2, reserve=G // 2, stock_memory_required=1 * G)
    assert p["stock"] == {"weights_on_gpu": 10 * G, "sample_peak": int(13.5 * G), "fits": False}
    assert p["weights_on_gpu"] == 8 * G and p["fits"] is True


def test_small_batch_keeps_what_comfyui_keeps_not_more():
    # ComfyUI 0.8.0 never keeps less than minimum_inference_memory() = 0.8 GiB + reserve free for activations:
    # budget 12, context 0.5, reserve 0.5, model 20, memory_required 0.2 (GiB). free = 11.5;
    # minimum = max(0.8 + 0.5, 0.2 + 0.5) = 1.3 -> kept = 11.5 - 1.3 = 10.2 (free - 0.2 - 0.5 = 10.8 would overstate it)
    p = P.plan(12 * G, weights={"diffusion_model": 20 * G}, memory_required=G // 5, context=G // 2, reserve=G // 2,
               stock_memory_required=G // 10)
    kept = 12 * G - G // 2 - (G * 8 // 10 + G // 2)
    assert abs(p["weights_on_gpu"] - kept) <= 1 and abs(p["weights_offloaded"] - (20 * G - kept)) <= 1
    assert abs(p["stock"]["weights_on_gpu"] - kept) <= 1  # stock's 0.1 GiB is raised to the same minimum
    assert p["summary"].startswith("kept 10.20 GiB of weights on the GPU, offloaded 9.80 GiB")


def test_encoders_leave_when_comfyui_minimum_would_offload_weights():
    # budget 8, reserve 0.5, model 5, encoders 1, memory_required 0.5: 5 + 1 + 0.5 + 0.5 = 7 <= 8, but ComfyUI keeps
    # 0.8 + 0.5 = 1.3 free: 5 + 1 + 1.3 = 7.3 <= 8 -> encoders stay; with encoders 1.8: 8.1 > 8 -> they leave
    p = P.plan(8 * G, weights={"diffusion_model": 5 * G, "text_encoders": G}, memory_required=G // 2, reserve=G // 2)
    assert p["text_encoders_off"] is False and p["weights_offloaded"] == 0
    p = P.plan(8 * G, weights={"diffusion_model": 5 * G, "text_encoders": int(1.8 * G)}, memory_required=G // 2, reserve=G // 2)
    assert p["text_encoders_off"] is True and p["weights_offloaded"] == 0


def test_everything_fits_nothing_changes():
    p = P.plan(24 * G, weights={"diffusion_model": 5 * G, "text_encoders": 1 * G, "vae": 0}, memory_required=2 * G,
               context=0, reserve=0)
    assert p["steps"] == [] and p["offers"] == []
    assert p["weights_on_gpu"] == 5 * G and p["text_encoders_off"] is False
    assert p["peak"]["sample"] == 8 * G  # 1 + 5 + 2
    assert p["summary"] == "all 5.00 GiB of weights on the GPU; predicted peak 8.00 GiB of 24.00 GiB"


def test_comfyui_floor_keeps_weights_activations_too_big_offers_lower_resolution():
    # a non-NVIDIA GPU (ratio 0.4). budget 8, no context/reserve; model 6, memory_required 6. free 8;
    # floor = min(3.2, 7.2) = 3.2;
    # kept = min(6, max(0, 2, 3.2)) = 3.2 -> peak 9.2 > 8: does not fit.
    # target memory_required = 8 - 0 - 3.2 = 4.8 -> area scale 0.8 -> side 0.894: 1024 -> 896 (x64)
    p = P.plan(8 * G, weights={"diffusion_model": 6 * G, "text_encoders": 0, "vae": 0}, memory_required=6 * G,
               pixels={"width": 1024, "height": 1024, "frames": 1}, blocks={"count": 30, "bytes": 256 * MiB},
               min_weight_ratio=0.4)
    assert p["weights_on_gpu"] == int(3.2 * G)
    assert p["fits"] is False
    offers = {o["id"]: o for o in p["offers"]}
    assert offers["lower_resolution"]["value"] == [896, 896]
    assert offers["block_swap"]["value"] == 12  # ceil(2.8 GiB / 0.25 GiB)
    assert offers["fp8_weights"]["saving"] == 3 * G
    assert all(o["kind"] == "offer" for o in p["offers"])
    assert p["summary"].endswith("predicted peak 9.20 GiB of 8.00 GiB - does NOT fit")


def test_video_offers_fewer_frames():
    # same numbers, 81 frames: scale 0.8 -> (80 * 0.8) // 4 * 4 + 1 = 65
    p = P.plan(8 * G, weights={"diffusion_model": 6 * G}, memory_required=6 * G,
               pixels={"width": 832, "height": 480, "frames": 81}, min_weight_ratio=0.4)
    assert {o["id"]: o for o in p["offers"]}["fewer_frames"]["value"] == 65


def test_host_ram_too_small_for_offloaded_weights():
    p = P.plan(12 * G, weights={"diffusion_model": 10 * G}, memory_required=3 * G, context=G // 2, reserve=G // 2,
               host_ram=1 * G)
    assert p["weights_offloaded"] == 2 * G and p["host_ram_short"] is True and p["fits"] is False
    assert "host RAM too small" in p["summary"]


def test_dynamic_vram_is_reported_not_driven():
    p = P.plan(12 * G, weights={"diffusion_model": 10 * G, "text_encoders": 2 * G}, memory_required=3 * G,
               context=G // 2, reserve=G // 2, dynamic_vram=True)
    assert {s["kind"] for s in p["steps"]} == {"comfyui"}
    assert p["memory_required"] == 3 * G


def test_no_budget_supplies_the_figure_only():
    p = P.plan(None, weights={"diffusion_model": 2 * G}, memory_required=123 * MiB)
    assert p["steps"] == [] and p["fits"] is None and p["memory_required"] == 123 * MiB
    assert "memory_required" in p["summary"]


# -- VAE ----------------------------------------------------------------------------------------------
def test_decode_chunked_by_comfyui_batching(monkeypatch):
    # stub: one sample = 1 GiB; with margin 1.05 GiB. free for decode = 6 - 0.25 (vae) = 5.75 -> int(5.75/1.05) = 5
    monkeypatch.setattr(P, "decode_bytes", lambda kind, shape, dtype="bf16", device="cuda": G)
    p = P.plan(6 * G, weights={"diffusion_model": G, "vae": G // 4}, memory_required=G,
               decode={"kind": "kl", "latent_shape": [8, 4, 128, 128], "dtype": "bf16"})
    d = p["decode"]
    assert d["tiled"] is False and d["batch"] == 5 and d["of"] == 8 and d["per_sample"] == int(1.05 * G)
    assert "decode 5 of 8 at a time" in p["summary"]


def test_decode_tiled_tile_size_from_budget(monkeypatch):
    # stub: bytes = 4096 x latent pixels of the tile (one sample). 1024x1024 image = 128x128 latent = 64 MiB
    # (x1.05 = 67.2 MiB). room 40 MiB -> untiled does not fit. A 512 px tile: decode_tiled_'s passes cover 64x64
    # (64x64, 32x128, 128x32 latent) = 16 MiB x 1.05 = 16.8 MiB. The largest tile that fits 40 MiB:
    # 768 px: 96x96 / 48x192->48x128 / 192x48->128x48: max area 96*96 = 9216 -> 36 MiB x 1.05 = 37.8 MiB fits;
    # 832 px: 104*104 = 10816 -> 42.25 MiB x 1.05 > 40: so 768 px.
    monkeypatch.setattr(P, "decode_bytes", lambda kind, shape, dtype="bf16", device="cuda": 4096 * shape[-1] * shape[-2])
    room = 40 * MiB
    p = P.plan(room, weights={"diffusion_model": 0, "vae": 0}, memory_required=0,
               decode={"kind": "kl", "latent_shape": [1, 4, 128, 128], "dtype": "bf16"})
    d = p["decode"]
    assert d["tiled"] is True and d["tile_px"] == 768
    assert d["args"] == {"tile_x": 96, "tile_y": 96, "overlap": 12}
    assert "decode in 768 px tiles" in p["summary"]


def test_real_kl_decode_figure_comes_from_the_estimate():
    from gpu_garden.memory.estimate import vae as V

    # the plan sizes decodes for the GPU: on CUDA the estimate's figure with its CUDA convolution workspace
    assert P.decode_bytes("kl", [1, 4, 64, 64], "bf16") == V.vae_decode_bytes("kl", [1, 4, 64, 64], "bf16", device="cuda")
    assert P.decode_bytes("kl", [1, 4, 64, 64], "bf16", "mps") == V.vae_decode_bytes("kl", [1, 4, 64, 64], "bf16")


def test_tile_args_video():
    a = P.tile_args("wan21", 256, 16)
    assert a == {"tile_x": 32, "tile_y": 32, "overlap": 4, "tile_t": 4, "overlap_t": 2}


def test_nvidia_has_no_floor_activations_too_big():
    # NVIDIA (ratio 0): budget 8, model 6, memory_required 9 -> kept = max(0, 8 - 9, 0) = 0; peak 9 > 8
    # lower resolution: target 8 -> area 8/9 -> side 0.9428: 1024 -> 965 -> 960
    p = P.plan(8 * G, weights={"diffusion_model": 6 * G}, memory_required=9 * G,
               pixels={"width": 1024, "height": 1024, "frames": 1})
    assert p["weights_on_gpu"] == 0 and p["weights_offloaded"] == 6 * G and p["fits"] is False
    assert {o["id"]: o for o in p["offers"]}["lower_resolution"]["value"] == [960, 960]
