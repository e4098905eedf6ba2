"""LTX-Video's VAE decode from one-off meta traces of ComfyUI 0.8.0's VideoVAE (vae.LTXV_DECODE*), by hand.

The traced figures below were printed by gpu_garden's tracer (memory.trace.tracer.trace on
VideoVAE.decode, latent [1, 128, T, H/32, W/32] in bf16, the VAE built by comfy.sd.VAE from a layout of
VideoVAE(version, config=None) on the meta device). FIT: 768x512x97 and 768x512x161 of version 0 (the two
coefficients); everything else is a check. A 2x error in either coefficient, or ComfyUI's own heuristic in its
place, breaks these tests."""
from gpu_garden.memory.estimate import vae as V

# (width, height, frames, version): (activations_peak, allocated_peak - weights, reserved_peak - allocated_peak) bytes
TRACED = {
    (768, 512, 97, 0): (3_724_545_024, 4_586_667_520 - 838_388_578, 5_909_774_336 - 4_586_667_520),
    (768, 512, 161, 0): (6_152_588_288, 7_014_443_520 - 838_388_578, 9_139_388_416 - 7_014_443_520),
}
CHECK = {
    (768, 512, 25, 0): 992_996_352, (512, 512, 25, 0): 662_596_608, (1216, 704, 121, 0): 10_077_121_536,
    (1024, 1024, 9, 0): 1_027_353_600, (768, 512, 25, 1): 987_100_162, (768, 512, 161, 1): 6_148_363_266,
    (1216, 704, 121, 2): 10_066_850_818, (768, 512, 97, 2): 3_719_533_570,
}


def _lat(w, h, f):
    return [1, 128, (f - 1) // 8 + 1, h // 32, w // 32]


def test_fit_decodes_within_half_a_percent():
    for (w, h, f, _), (act, _, _) in TRACED.items():
        ours = V.vae_decode_bytes("ltxv", _lat(w, h, f), "bf16")
        assert abs(ours / act - 1) < 0.005, (w, h, f, ours, act)


def test_other_sizes_and_versions_within_one_percent():
    for (w, h, f, ver), act in CHECK.items():
        ours = V.vae_decode_bytes("ltxv", _lat(w, h, f), "bf16")
        assert abs(ours / act - 1) < 0.01, (w, h, f, ver, ours, act)


def test_by_hand_and_per_dtype_byte():
    hw = 768 * 512
    assert V.vae_decode_bytes("ltxv", _lat(768, 512, 161), "bf16") == (386 * 21 - 281) * hw * 2
    assert V.vae_decode_bytes("ltxv", _lat(768, 512, 161), "fp32") == (386 * 21 - 281) * hw * 4
    # ComfyUI's heuristic (what it divides free memory by) is kept for the batch choice, apart
    assert V.comfy_decode_heuristic("ltxv", _lat(768, 512, 161)) == 900 * 21 * 16 * 24 * 512 * 2


def test_cached_slack_from_the_allocator_model():
    for (w, h, f, _), (act, _, slack) in TRACED.items():
        ours = V.cached_slack_bytes("ltxv", _lat(w, h, f), "bf16")
        assert abs((ours + 0.05 * act) / slack - 1) < 0.02, (w, h, f, ours, slack)
    p = V.phase("ltxv", _lat(768, 512, 161), "bf16", None, "untiled")
    assert p["cached_slack"] == 110 * 21 * 768 * 512 * 2 and "caching allocator" in p["how"]
    assert V.phase("ltxv", _lat(768, 512, 161), "bf16", None, "tiled")["cached_slack"] == 0
