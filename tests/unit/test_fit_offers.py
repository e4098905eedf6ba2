"""Fit to Card's offers (memory/fit/offers.py through plan.plan): the result-changing options carry an id, a
value and where the web extension applies them; nothing is applied by the server. Expected values are worked by
hand from ComfyUI 0.8.0's load_models_gpu arithmetic (see test_fit_plan.py)."""
from gpu_garden.memory.fit import plan as P
from gpu_garden.memory.units import GiB, MiB

G = GiB


def by_id(p):
    return {o["id"]: o for o in p["offers"]}


def test_offers_say_which_widgets_change():
    # non-NVIDIA (ratio 0.4): budget 8, model 6, memory_required 6; free 8, floor 3.2, target 8 - 3.2 = 4.8
    # -> scale 0.8: batch 4 -> 3; side sqrt(0.8): 1024 -> 896; 81 frames -> 65
    p = P.plan(8 * G, weights={"diffusion_model": 6 * G}, memory_required=6 * G, min_weight_ratio=0.4,
               pixels={"width": 1024, "height": 1024, "frames": 81, "batch": 4}, blocks={"count": 30, "bytes": 256 * MiB})
    o = by_id(p)
    assert o["lower_resolution"]["apply"] == {"from": "latent", "through": "same",
                                              "targets": [{"widgets": {"width": 896, "height": 896}}]}
    assert o["fewer_frames"]["value"] == 65 and o["fewer_frames"]["apply"]["targets"] == [{"widgets": {"length": 65}}]
    assert o["smaller_batch"]["value"] == 3 and o["smaller_batch"]["apply"]["targets"] == [{"widgets": {"batch_size": 3}}]
    assert o["fp8_weights"]["apply"]["targets"] == [{"widgets": {"weight_dtype": "fp8_e4m3fn"}}]
    assert o["fp8_weights"]["apply"]["from"] == "model" and o["fp8_weights"]["apply"]["through"] == "same"
    assert o["block_swap"]["value"] == 12 and o["block_swap"]["apply"]["through"] == "any"
    assert o["block_swap"]["apply"]["targets"] == [{"widgets": {"blocks_to_swap": 12}}]
    assert o["gguf_weights"]["apply"] is None and "GGUF loader" in o["gguf_weights"]["label"]
    # predicted savings: our figure scaled by the area / frames / batch it keeps
    assert o["lower_resolution"]["saving"] == 6 * G - int(6 * G * 896 * 896 / (1024 * 1024))
    assert o["smaller_batch"]["saving"] == 6 * G - 6 * G * 3 // 4
    assert o["fewer_frames"]["saving"] == 6 * G - int(6 * G * 64 / 80)
    assert all(x["kind"] == "offer" for x in p["offers"]) and p["steps"][0]["kind"] == "applied"


def test_context_windows_offered_with_the_window_that_fits():
    # same card; windows of 15 / 11 / 7 latent frames need 5.5 / 4.5 / 3 GiB:
    # 5.5: kept max(8 - 5.5, 3.2) = 3.2 -> 8.7 > 8; 4.5: kept max(3.5, 3.2) = 3.5 -> 8.0 <= 8: the 11-frame window
    # = (11 - 1) * 4 + 1 = 41 video frames (WanContextWindowsManual counts video frames, ContextWindowsManual latent)
    windows = {"t": 4, "latent_frames": 21, "options": [{"latent": 15, "memory_required": int(5.5 * G)},
                                                        {"latent": 11, "memory_required": int(4.5 * G)},
                                                        {"latent": 7, "memory_required": 3 * G}]}
    p = P.plan(8 * G, weights={"diffusion_model": 6 * G}, memory_required=6 * G, min_weight_ratio=0.4, windows=windows)
    o = by_id(p)["context_windows"]
    assert o["value"] == 41 and o["saving"] == int(1.5 * G) and o["memory_required"] == int(4.5 * G)
    assert o["apply"]["targets"] == [{"type": "WanContextWindowsManual", "widgets": {"context_length": 41}},
                                     {"type": "ContextWindowsManual", "widgets": {"context_length": 11}}]
    assert "changes the result" in o["label"]
    # when sampling fits, no window is offered
    p = P.plan(16 * G, weights={"diffusion_model": 6 * G}, memory_required=6 * G, min_weight_ratio=0.4, windows=windows)
    assert "context_windows" not in by_id(p)


def test_video_decode_tiles_in_space_first_and_offers_time_chunks(monkeypatch):
    # stub: 4096 bytes per latent voxel of the tile. Wan 2.1 832x480x81: latent 21 x 60 x 104.
    # all 21 frames in a 128 px tile (16 x 16 latent): 21 * 256 * 4096 * 1.05 = 22.05 MiB > room 20 MiB: no
    # space-only tile fits. Time chunks: 64 frames = 16 latent; 16 * (px / 8)^2 * 4096 * 1.05 <= 20 MiB -> px <= 139
    # -> 128 px x 64 frames, 16.8 MiB
    monkeypatch.setattr(P, "decode_bytes", lambda kind, shape, dtype="bf16", device="cuda": 4096 * shape[-1] * shape[-2] * shape[-3])
    monkeypatch.setattr(P, "CAPPED_ROOM", {})  # the tiling alone, at our flat margin (the capped room: test_fit_decode_room)
    dec = {"kind": "wan21", "latent_shape": [1, 16, 21, 60, 104], "dtype": "bf16"}
    p = P.plan(20 * MiB, weights={"diffusion_model": 0, "vae": 0}, memory_required=0, decode=dec)
    assert p["decode"]["tiled"] is True and p["decode"]["tile_px"] is None and p["fits"] is False
    assert "decode_tiled" not in [s["id"] for s in p["steps"]]  # a split in time is never applied
    o = by_id(p)["decode_temporal"]
    assert o["value"] == {"tile_size": 128, "temporal_size": 64}
    assert o["bytes"] == int(16 * 256 * 4096 * 1.05)
    assert o["apply"] == {"from": "vae_out", "through": "any", "targets": [{"type": "VAEDecodeTiled", "widgets": {
        "tile_size": 128, "overlap": 32, "temporal_size": 64, "temporal_overlap": 8}}]}
    # with 24 MiB the space-only tile fits: applied, over all frames (no tile_t: ComfyUI's own fallback shape)
    p = P.plan(24 * MiB, weights={"diffusion_model": 0, "vae": 0}, memory_required=0, decode=dec)
    assert p["decode"]["tile_px"] == 128 and p["decode"]["frames"] is None and "tile_t" not in p["decode"]["args"]
    assert "decode_temporal" not in by_id(p)


def test_block_swap_is_information_where_no_widget_takes_it():
    # the count is shown for wrapper loaders; the web extension adds a button only where a blocks_to_swap widget is
    p = P.plan(8 * G, weights={"diffusion_model": 6 * G}, memory_required=6 * G, min_weight_ratio=0.4,
               blocks={"count": 30, "bytes": 256 * MiB})
    o = by_id(p)["block_swap"]
    assert o["without_widget"] == "info" and "for wrapper loaders that take a block-swap count" in o["label"]
    assert "blocks_to_swap = 12 of 30" in o["label"]
    assert "without_widget" not in by_id(p)["fp8_weights"]  # the others say 'no widget for it' instead


def test_automatic_mode_plan_carries_the_nodes_offers(monkeypatch):
    """Automatic mode has no node: its record (GET /gpu_garden/fit, last_auto) carries the offers the node would
    show. Same card as test_offers_say_which_widgets_change: budget 8, model 6, memory_required 6 (1.5 GiB per
    sample and conditioning; batch 2, cond + uncond), ratio 0.4: scale 0.8 -> batch 2 -> 1, 1024 -> 896 px;
    kept max(8 - 6, 3.2) = 3.2, offloaded 2.8 GiB = 11.2 blocks of 256 MiB -> 12."""
    from gpu_garden.nodes import fit_guard as FG

    monkeypatch.setattr(FG.fit_plan, "sample_memory_required",
                        lambda fam, shape, dtype, n, arch=None, cast_bytes=0: int(1.5 * G) * shape[0] * n)
    monkeypatch.setattr(FG, "min_weight_ratio", lambda: 0.4)
    monkeypatch.setattr(FG, "dynamic_vram", lambda: False)
    monkeypatch.setattr(FG, "_encoders_on_device", lambda model: 0)
    monkeypatch.setitem(FG._state, "last_auto", None)

    class Base:
        def memory_required(self, input_shape, cond_shapes={}):
            return 111

    class Model:
        model, load_device = Base(), "cpu"

    facts = {"family": "sd1", "arch": None, "dtype": "torch.float16", "cast_bytes": 0, "largest": 0, "bytes": 6 * G,
             "blocks": {"count": 30, "bytes": 256 * MiB}}
    ctx = {"origin": "auto", "facts": facts, "budget": 8 * G, "reserve": 0, "context": 0, "cfg": None, "apply": False}
    FG.guarded(ctx, lambda *a, **k: None, Model(), [2, 4, 128, 128], {"positive": [{}], "negative": [{}]})
    rec = FG._state["last_auto"]
    assert rec is not None and rec["origin"] == "auto" and rec["memory_required"] == 6 * G and rec["fits"] is False
    o = by_id(rec)
    assert set(o) == {"block_swap", "fp8_weights", "gguf_weights", "smaller_batch", "lower_resolution"}
    assert o["smaller_batch"]["value"] == 1 and o["lower_resolution"]["value"] == [896, 896]
    assert o["block_swap"]["value"] == 12
    assert FG.status()["last_auto"] is rec


def test_weight_offers_start_from_the_bits_the_model_has():
    """An fp8 checkpoint (8 bits per weight) is not offered fp8, and its GGUF Q4_K saving is from 8 bits, not 16; a
    Q4_K GGUF (4.5 bits) is offered neither. Same card as above: 2.8 GiB of 6 GiB offloaded."""
    kw = dict(weights={"diffusion_model": 6 * G}, memory_required=6 * G, min_weight_ratio=0.4)
    o = by_id(P.plan(8 * G, **kw))  # no bits known: 16-bit weights, as before
    assert o["fp8_weights"]["saving"] == 3 * G and o["gguf_weights"]["saving"] == 6 * G - int(6 * G * 4.5 / 16)
    assert by_id(P.plan(8 * G, **kw, weight_bits=16))["fp8_weights"]["saving"] == 3 * G
    o = by_id(P.plan(8 * G, **kw, weight_bits=8.01))
    assert "fp8_weights" not in o and o["gguf_weights"]["saving"] == 6 * G - int(6 * G * 4.5 / 8.01)
    o = by_id(P.plan(8 * G, **kw, weight_bits=4.5))
    assert "fp8_weights" not in o and "gguf_weights" not in o
