"""diffusers' AutoencoderKLHunyuanVideo decode (vae.diffusers_hv_decode): temporal chunks always (use_framewise_decoding),
spatial tiles with enable_tiling. Expected values written out from diffusers' _temporal_tiled_decode / tiled_decode."""
from support.pack import load_pack

load_pack()
from gpu_garden.memory.estimate import vae as V  # noqa: E402

LAT = [1, 16, 31, 64, 96]  # 768x512, 121 frames
HW = 768 * 512


def test_coefficient_and_tile_defaults():
    assert V.DIFFUSERS_HV_DECODE == 449
    assert V.DIFFUSERS_HV_TILE == {"tile": 256, "frames": 16} and V.DIFFUSERS_HV_STRIDE == 0.75


def test_64_frame_chunks_hold_the_chunk_before():
    # latent frames 0:17, 12:29, 24:31 -> 65, 65, 25 frames; the second chunk decodes beside the first one's output
    got, chunks, tiles = V.diffusers_hv_decode(LAT, "bf16", {"frames": 64})
    assert (chunks, tiles) == (3, 1)
    assert got == (449 * 65 + 3 * 65) * HW * 2


def test_16_frame_chunks():
    # i = 0, 3, ..., 30: nine chunks of 5 latent frames (17 frames), then 4 and 1; the ninth holds eight before it
    got, chunks, _ = V.diffusers_hv_decode(LAT, "fp16")
    assert chunks == 11
    assert got == (449 * 17 + 8 * 3 * 17) * HW * 2


def test_spatial_tiles_inside_a_chunk():
    # 384x192, 13 frames (4 latent frames: one chunk): tiles of 32 latent px every 24 -> 256x192 and 192x192;
    # the first tile's decode is the peak
    lat = [1, 16, 4, 24, 48]
    got, chunks, tiles = V.diffusers_hv_decode(lat, "bf16", spatial=True)
    assert (chunks, tiles) == (1, 2)
    assert got == 449 * 256 * 192 * 13 * 2
    assert V.diffusers_hv_decode(lat, "bf16")[0] == 449 * 384 * 192 * 13 * 2  # untiled in space


def test_phase_under_diffusers_and_comfyui():
    diff = V.phase("hunyuan-video", LAT, "bf16", None, "untiled", {"frames": 64}, "diffusers")
    assert diff["bytes"] == (449 * 65 + 3 * 65) * HW * 2 and diff["per_sample"] == diff["bytes"]
    assert "3 chunk(s)" in diff["how"]
    assert diff["tiled_bytes"] == V.diffusers_hv_decode(LAT, "bf16", {"frames": 64}, spatial=True)[0] < diff["bytes"]
    tiled = V.phase("hunyuan-video", LAT, "bf16", None, "tiled", {"tile": 256, "frames": 64}, "diffusers")
    assert tiled["tiled"] and "12 tiles of 256 px" in tiled["how"] and tiled["bytes"] < diff["bytes"] / 4
    comfy = V.phase("hunyuan-video", LAT, "bf16", None, "untiled")
    # ComfyUI: its chunked decoder as traced (vae.HV_DECODE, HV_FRAME: 768x512x121), its own heuristic kept apart
    assert comfy["per_sample"] == int((11234 + 4.46 * 121) * 768 * 512 * 2)
    assert comfy["comfy_per_sample"] == V.comfy_decode_heuristic("hunyuan-video", LAT) > comfy["per_sample"]
