"""The OOM report's latent size from the failing node's LATENT tensor (nodes/oom_report.py)."""
from gpu_garden.nodes import oom_report


def test_pixel_size_from_the_vae_that_made_the_latent():
    """FLUX.2 latents are 128 channels at 16x, LTX-Video's 128 channels at 32x (5-d), HunyuanImage's 64 at 32x:
    reading them at 8x reported a 1024 px FLUX.2 image as 512 px and a 768x512 LTX-Video clip as 192x128."""
    assert oom_report.latent_from_samples([1, 128, 64, 64])["width"] == 1024  # FLUX.2
    lat = oom_report.latent_from_samples([1, 128, 16, 16, 24])  # LTX-Video 768x512
    assert (lat["width"], lat["height"]) == (768, 512)
    assert oom_report.latent_from_samples([1, 64, 64, 64])["width"] == 2048  # HunyuanImage 2.1
    assert oom_report.latent_from_samples([1, 48, 31, 44, 80])["width"] == 1280  # Wan 2.2 TI2V: 16x
    assert oom_report.latent_from_samples([2, 4, 128, 96])["width"] == 768  # SD: 8x
    assert oom_report.latent_from_samples([1, 16, 21, 60, 104])["width"] == 832  # Wan 2.1: 8x
