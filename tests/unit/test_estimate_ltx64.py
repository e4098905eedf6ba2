"""ltx64: LTX-2's latent upscale step between its two sampling stages, as ComfyUI 0.8.0 runs it.

LatentUpscaleModelLoader (comfy_extras/nodes_hunyuan.py:173-214) builds LatentUpsampler.from_config(the file's metadata
"config") for a file with post_upsample_res_blocks.0.conv2.bias; LTXVLatentUpsampler (nodes_lt_upsampler.py) frees
module size + latent numel x 3000, moves the module to the device whole and upscales the latent at once. Expected
figures come from hand arithmetic on the config (Lightricks' ltx-2-spatial-upscaler-x2-1.0: 128 latent channels, 1024
wide, 4 ResBlocks a stage, 3-D convolutions, a rational resampler at 2.0) and from the trace of ComfyUI's class
(tests/host/test_trace_ltx64.py), never from the estimate. Deliberate errors checked to fail: the old code (no layout,
no phase, the graph's latent sampled and decoded at stage 1's size)."""
import pytest

from gpu_garden.memory.estimate import families, formula, latent_upscale, layouts, workflow

# hand count: initial Conv3d 128->1024 (3^3) + GroupNorm; 8 ResBlocks of two Conv3d 1024->1024 and two GroupNorms;
# the resampler's Conv2d 1024->4096 (3^2) and its 5x5 blur kernel; final Conv3d 1024->128
CONV3 = lambda i, o: i * o * 27 + o  # noqa: E731
VALUES = (CONV3(128, 1024) + 2 * 1024 + 8 * (2 * CONV3(1024, 1024) + 2 * 2 * 1024)
          + (1024 * 4096 * 9 + 4096) + 25 + CONV3(1024, 128))
NAME = "upscale_ltx-2-spatial-upscaler-x2-1.0"
FILE = "ltx-2-spatial-upscaler-x2-1.0.safetensors"


def test_the_upscaler_layout_is_comfyuis_class_at_the_published_config():
    lay = layouts.load(NAME)
    t = lay["tensors"]
    assert VALUES == 497_867_929
    assert len(t) == 73 and lay["parameters"] == VALUES and lay["total_bytes"] == 2 * VALUES
    assert sum(layouts.tensor_nbytes(v["dtype"], v["shape"]) for v in t.values()) == 2 * VALUES  # 995,735,858: "996 MB"
    assert t["upsampler.conv.weight"]["shape"] == [4096, 1024, 3, 3]          # the rational resampler's per-frame conv
    assert t["upsampler.blur_down.kernel"]["shape"] == [1, 1, 5, 5]
    assert t["post_upsample_res_blocks.3.conv2.weight"]["shape"] == [1024, 1024, 3, 3, 3]
    assert t["final_conv.weight"]["shape"] == [128, 1024, 3, 3, 3]
    cfg = lay["__metadata__"]["config"]  # where LatentUpscaleModelLoader reads it: json.loads(metadata["config"])
    for k in ('"mid_channels": 1024', '"dims": 3', '"rational_resampler": true', '"spatial_scale": 2.0'):
        assert k in cfg


def test_an_upscaler_file_is_no_diffusion_model():
    comps = families.split_components(layouts.table(NAME), FILE)
    assert [(c["role"], c["kind"], c["bytes"]) for c in comps] == [("other", "ltx-2 latent upscaler", 2 * VALUES)]


@pytest.mark.parametrize("shape,nbytes,traced", [
    ([1, 128, 13, 16, 24], 2, 164_855_808), ([2, 128, 13, 16, 24], 2, 329_711_616), ([1, 128, 1, 16, 24], 2, 12_681_216),
    ([1, 128, 7, 15, 23], 2, 79_752_960), ([3, 128, 5, 9, 11], 4, 98_081_280), ([1, 128, 61, 34, 60], 4, 8_219_013_120)])
def test_upscale_activations_are_the_trace(shape, nbytes, traced):
    # the trace of ComfyUI's LatentUpsampler (tests/host/test_trace_ltx64.py); by hand: four 1024-channel tensors at
    # twice the width and height, and the 128-channel input, per latent voxel
    b, _, f, h, w = shape
    assert traced == b * f * h * w * (4 * 1024 * 4 + 128) * nbytes
    assert latent_upscale.activation_bytes(shape, nbytes) == traced


def test_comfyuis_own_request():
    # nodes_lt_upsampler.py: module_size + prod(latent shape) x 3000
    shape = [1, 128, 13, 16, 24]
    assert latent_upscale.comfy_request(shape, 2 * VALUES) == 2 * VALUES + 638_976 * 3000 == 2_912_663_858


def _models(tmp_path, upscaler=True):
    d = tmp_path / "models"
    layouts.write_sparse("ltx-2_ltx-2-19b_bf16", d / "diffusion_models" / "ltx2.safetensors")
    if upscaler:
        layouts.write_sparse(NAME, d / "latent_upscale_models" / FILE)
    return d


def _wf(*extra):
    nodes = [{"id": 1, "type": "UNETLoader", "widgets_values": ["ltx2.safetensors", "default"]},
             {"id": 2, "type": "EmptyLTXVLatentVideo", "widgets_values": [640, 352, 97, 1]}]
    return {"nodes": nodes + [dict(n, id=10 + i) for i, n in enumerate(extra)], "links": []}


UP = {"type": "LTXVLatentUpsampler", "widgets_values": []}
LOADER = {"type": "LatentUpscaleModelLoader", "widgets_values": [FILE]}


def test_a_two_stage_graph_has_the_upscale_phase_and_samples_stage_two(tmp_path):
    d = _models(tmp_path)
    est = formula.judge(workflow.estimate_workflow(_wf(LOADER, UP), d), 80 << 30)
    one = formula.judge(workflow.estimate_workflow(_wf(LOADER), d), 80 << 30)
    assert "latent_upscale" not in one["phases"] and (one["width"], one["height"]) == (640, 352)
    # stage 2 samples and decodes the upsampled latent: 2 x (640 // 32) x 32 by 2 x (352 // 32) x 32
    assert (est["width"], est["height"], est["frames"]) == (1280, 704, 97)
    assert est["latent"]["shape"] == [1, 128, 13, 22, 40]
    bd = est["breakdown"]["latent_upscale"]
    assert bd["weights"] == 2 * VALUES                     # bf16: the LTX VAE's dtype on a bf16 GPU
    assert bd["activations"] == 13 * 11 * 20 * 16_512 * 2  # the stage-1 latent [1, 128, 13, 11, 20]
    assert bd["comfyui_request"] == 2 * VALUES + 128 * 13 * 11 * 20 * 3000  # module size + numel x 3000
    assert est["phases"]["sample"] > one["phases"]["sample"]
    assert list(est["phases"]).index("latent_upscale") == list(est["phases"]).index("sample_naive_attention") + 1
    assert any("LTXVLatentUpsampler: two stages" in a for a in est["assumptions"])
    assert any("ComfyUI frees" in a and "3000 bytes per latent element" in a for a in est["assumptions"])


def test_without_the_file_the_published_upscaler_stands_in(tmp_path):
    d = _models(tmp_path, upscaler=False)
    est = formula.judge(workflow.estimate_workflow(_wf(LOADER, UP), d), 80 << 30)
    assert est["breakdown"]["latent_upscale"]["weights"] == 2 * VALUES
    # the file named and not found is said so, not "no file given" nor "not counted if found" (rev62 F9: the step is
    # counted, with the bundled x2)
    assert any(a.startswith(f"{FILE} not found (LatentUpscaleModelLoader; looked in latent_upscale_models/): the upscale "
                            "step counts Lightricks' ltx-2-spatial-upscaler-x2-1.0") for a in est["assumptions"]), est["assumptions"]
    assert not any("not counted if found" in a for a in est["assumptions"]), est["assumptions"]


def test_fp32_where_the_gpu_has_no_bf16(tmp_path):
    d = _models(tmp_path)
    est = formula.judge(workflow.estimate_workflow(_wf(LOADER, UP), d, policy={"gpu_halves": ("fp16",)}), 80 << 30)
    bd = est["breakdown"]["latent_upscale"]
    assert (bd["weights"], bd["activations"]) == (4 * VALUES, 13 * 11 * 20 * 16_512 * 4)
