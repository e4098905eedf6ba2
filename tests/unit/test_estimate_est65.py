"""est65 (issue 15, left open by session 64): a typed --width/--height moves a later upscale step's image too.

A typed size is the decode's image (pixel_upscale._image: the first step of a chain on a VAE decode takes the typed
size, as before); a later step's image is made from that decode by the graph (an upscale model's x4, a scale by a
factor), so it scales with it: as the typed size is to that decode's graph size (image_size.scaled, the rule
side_models.sampler_sizes scales each sampler's latent by in a re-estimate). Before est65 that later step kept the
graph's number (2048 x 2048 after a 512 decode, whatever size was typed). An image the graph resizes to a size of its
own (ImageScale with both sides typed) does not follow the decode and keeps it. Expected figures by hand: the image is
w x h x 3 fp32 (12 bytes a pixel) + one 512 x 512 tile of ESRGAN x4 at 8,204 bytes a pixel (pixel_upscale_tile.json)."""
import pytest

from gpu_garden.memory.estimate import image_size, side_models, workflow
from test_estimate_ups64 import IMAGE, _api, _models

ESRGAN_X4_TILE = 8_204 * 512 * 512


def _two_x4(between=None):
    """512 decode -> 4x-UltraSharp (x4) -> [between] -> 4x-UltraSharp again: the second step's image is the larger."""
    wf = _api()
    for k in ("7", "8", "9", "10", "11"):
        del wf[k]
    src = ["6", 0]
    if between:
        wf["12"] = {"class_type": between[0], "inputs": dict(between[1], image=["6", 0])}
        src = ["12", 0]
    wf["7"] = {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": src}}
    wf["8"] = {"class_type": "SaveImage", "inputs": {"images": ["7", 0]}}
    return wf


def _second(est):
    return [a for a in est["assumptions"] if "pixel upscale steps" in a][0]


def test_untyped_the_second_step_is_on_the_graphs_2048(tmp_path):
    est = workflow.estimate_workflow(_two_x4(), _models(tmp_path))
    assert est["breakdown"]["pixel_upscale"]["activations"] == 2048 * 2048 * IMAGE + ESRGAN_X4_TILE
    assert "on a 2048x2048 image" in _second(est)


@pytest.mark.parametrize("side", [768, 256])
def test_a_typed_size_scales_the_later_step_with_its_decode(tmp_path, side):
    """Typed 768: the decode is 768, x4 is 3072 (main: 2048, the graph's); typed 256: 1024."""
    est = workflow.estimate_workflow(_two_x4(), _models(tmp_path), width=side, height=side)
    assert est["breakdown"]["pixel_upscale"]["activations"] == (4 * side) ** 2 * IMAGE + ESRGAN_X4_TILE
    assert f"on a {4 * side}x{4 * side} image" in _second(est)
    line = [a for a in est["assumptions"] if a.startswith("pixel upscale") and f"{4 * side}x{4 * side} image" in a][0]
    assert "2048x2048 from a 512x512 decode, scaled with the typed size" in line and f"to {16 * side}x{16 * side}" in line


def test_a_scale_by_a_factor_between_follows_the_decode(tmp_path):
    """x4, then ImageScaleBy 0.5: 1024 in the graph; typed 768: 768 x 4 x 0.5 = 1536."""
    wf = _two_x4(("ImageScaleBy", {"upscale_method": "lanczos", "scale_by": 0.5}))
    est = workflow.estimate_workflow(wf, _models(tmp_path), width=768, height=768)
    assert "on a 1536x1536 image" in _second(est)


def test_a_resize_to_a_typed_size_keeps_its_size(tmp_path):
    """x4, then ImageScale to 2000 x 1500: that size whatever the decode's; the typed 768 moves the first step only."""
    wf = _two_x4(("ImageScale", {"upscale_method": "lanczos", "width": 2000, "height": 1500, "crop": "disabled"}))
    est = workflow.estimate_workflow(wf, _models(tmp_path), width=768, height=768)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 2000 * 1500 * IMAGE + ESRGAN_X4_TILE
    assert "on a 2000x1500 image" in _second(est)


def test_a_typed_batch_is_the_later_steps_batch_too(tmp_path):
    """--batch 2 on the graph's size: the decode is 512 x2 and so the later step's 2048 image (main: batch 1)."""
    est = workflow.estimate_workflow(_two_x4(), _models(tmp_path), batch=2)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 2 * 2048 * 2048 * IMAGE + ESRGAN_X4_TILE


def test_one_rule_scales_a_samplers_latent_and_an_upscale_steps_image():
    assert image_size.scaled((2048, 1024), (512, 512), (768, 384)) == (3072, 768)
    assert image_size.scaled((1,), (1000,), (1,)) == (1,)  # at least 1
    # a re-estimate at half the size: the 512 base pass of a 1024 estimate is 256 (the same rule)
    got = side_models.sampler_sizes({"of": (1024, 1024, 1), "samplers": [(512, 512, 1), None]}, "sdxl", 512, 512, 1, 1,
                                    64 * 64)
    assert got[0][:2] == (256, 256) and got[1] is None
