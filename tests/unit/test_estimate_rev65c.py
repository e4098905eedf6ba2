"""Review rev65c of task arch65 (issue 15). #1: RGT's bytes per tile pixel grow with the tile's area (traced 16,552 at a 256
tile, 52,410 at 512), and a tile between traced sides took the 512 figure (1.70x the trace at 384, 2.33x at 320); it now
follows the area between them. #2: a hand-edited header with a huge dimension (0 bytes of data, so the header checks pass)
ended in an OverflowError traceback; now the file reads without one (its tile not counted) and the estimate gives a
clear error."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import pixel_upscale, upscale_archs, workflow
from test_estimate_arch65 import _models, omnisr_x4, safmn_x4
from test_estimate_ups63 import _sparse
from test_estimate_ups64 import _api

RGT = {"key": ('RGT', 180, 6, 8, 32, 360, 90, 4)}
# one tile's activation peak traced by the reviewer with the benchmark's tracer (benchmarks/pixel_upscale_tile.py's
# rgt_4x config on spandrel 0.4.2's RGT, fp32, meta tensors) at tiles the benchmark does not trace: /tmp/rev65c/rgt_tile.out
TRACED = {384: 4_557_219_852, 320: 2_299_660_812}


@pytest.mark.parametrize("side", sorted(TRACED))
def test_an_rgt_tile_between_traced_sides_is_near_its_trace(side):
    got = upscale_archs.per_pixel(RGT, side) * side * side
    assert abs(got / TRACED[side] - 1) < 0.05, (side, got, TRACED[side])


@pytest.mark.parametrize("key,side,want", [
    (RGT["key"], 512, 52410), (RGT["key"], 256, 16552), (RGT["key"], 128, 16589), (RGT["key"], 64, 16589),
    (('RealCUGAN', 'UpCunet4x', False, 4), 512, 6338), (('RealCUGAN', 'UpCunet4x', False, 4), 128, 6914),
    (('HAT', 180, 6, 16, 24, 60, 360, 4), 300, 39858),       # one figure at every tile: unchanged
])
def test_traced_tiles_keep_their_own_figures(key, side, want):
    assert upscale_archs.per_pixel({"key": key}, side) == want


HUGE = 10 ** 400


@pytest.mark.parametrize("build,key", [(safmn_x4, "to_img.0.weight"),
                                       (omnisr_x4, "residual_layer.0.residual_layer.0.layer.2.fn.rel_pos_bias.weight")])
def test_a_huge_dimension_reads_without_a_traceback(tmp_path, build, key):
    t = build()
    shape = list(t[key][1])
    shape[0], shape[-1] = HUGE, 0
    t[key] = ("F32", shape)
    m = pixel_upscale.read_file(_sparse(t, tmp_path / "x.safetensors"))
    assert m["arch"] is None or pixel_upscale.per_pixel(m["arch"]) is None      # no traced figure taken


def test_a_workflow_with_a_huge_dimension_gives_a_clear_error(tmp_path):
    d = _models(tmp_path)
    t = safmn_x4()
    t["to_img.0.weight"] = ("F32", [HUGE, 36, 3, 0])
    _sparse(t, d / "upscale_models" / "4x-SAFMN.safetensors")
    with pytest.raises(UserError, match="beyond what ComfyUI's nodes accept"):     # the upscaled size, not a traceback
        workflow.estimate_workflow(_api("4x-SAFMN.safetensors"), d)


# review rev65d #3: a rectangular tile was read at its longer side (a 512x256 tile at 512: 1.88x the trace). The traces:
# the reviewer's run of the benchmark's tracer on spandrel's RGT-S (the same key) at those tiles, /tmp/rev65d/rgt_rect.py
RECT_TRACED = {(512, 256): 27_834, (640, 360): 37_050}      # image (w, h) -> traced bytes per pixel of its largest tile


@pytest.mark.parametrize("image", sorted(RECT_TRACED))
def test_a_rectangular_rgt_tile_is_read_at_its_area(image):
    from test_estimate_arch65 import rgt_x4
    w, h = image
    arch = pixel_upscale.detect(rgt_x4())
    got = pixel_upscale.phase_inputs({"name": "m", "weights": 1, "arch": arch}, (w, h, 1), "typed", [])
    area = min(512, w) * min(512, h)
    assert abs(got["tile"] / (RECT_TRACED[image] * area) - 1) < 0.05, (got["tile"], RECT_TRACED[image] * area)
