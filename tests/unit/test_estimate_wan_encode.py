"""The Wan 2.1 VAE encode (vae.WAN_ENCODE_*) against gpu_garden's tracer on ComfyUI 0.8.0's WanVAE.encode (bf16,
activations at the peak, bytes). FIT: 832x480 at 1, 5 and 81 frames; the rest were traced after the fit, never tuned
on. A per-frame term off by one channel, or the chunk count read as latent frames, breaks it."""
import pytest

from gpu_garden.memory.estimate import vae as V

FIT = {(832, 480, 1): 773_077_248, (832, 480, 5): 2_349_267_456, (832, 480, 81): 2_860_448_256}
CHECK = {(832, 480, 2): 775_473_408, (832, 480, 9): 2_680_736_256, (832, 480, 33): 2_740_640_256,
         (640, 640, 49): 2_851_721_728, (1280, 720, 33): 6_322_180_608, (1280, 720, 81): 6_598_660_608}


@pytest.mark.parametrize("case,traced", list(FIT.items()) + list(CHECK.items()))
def test_wan21_encode_matches_the_trace(case, traced):
    ours = V.vae_encode_bytes("wan21", case, "bf16")
    assert abs(ours - traced) / traced < 0.001


def test_wan21_encode_grows_with_the_input_video_only():
    # past two chunks: 3 input channels + 2 x 16 latent channels / 64 / 4 per frame, in the VAE dtype
    assert V.vae_encode_bytes("wan21", (832, 480, 81), "bf16") - V.vae_encode_bytes("wan21", (832, 480, 33), "bf16") \
        == 48 * 832 * 480 * 2 * (3 + 32 / 64 / 4)
    assert V.vae_encode_bytes("wan21", (832, 480, 81), "fp32") == 2 * V.vae_encode_bytes("wan21", (832, 480, 81), "bf16")
