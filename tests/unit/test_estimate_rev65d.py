"""rev65d, the reviewer's repros of est65 made tests.

#1: a hires fix estimated at its own graph size moved when that same size was typed. test_estimate_ups64._api: a 512
base pass -> VAE decode -> 4x-UltraSharp (x4) -> Upscale Image By 0.5 -> VAE Encode -> KSampler at 1024: the estimate
is at 1024 (the larger image encoded). The upscale step runs on the base pass's 512 decode; typed 1024 made it the typed
1024 (the decode's image was the typed size), and a chain's later step was scaled by typed / base-decode size. ComfyUI's
graph makes every image from the base decode by fixed factors (ImageScaleBy nodes.py:1826, the model's scale
comfy/utils.py:1027-1033), so each one scales as the typed size is to the graph's estimated size, the rule
side_models.sampler_sizes scales each sampler's latent by. Expected figures by hand: the image is w x h x 3 fp32
(12 bytes a pixel) + one 512 x 512 tile (the whole image where smaller) of ESRGAN x4 at 8,204 bytes a pixel
(pixel_upscale_tile.json).

#2: a patched model merged in as ModelMergeSimple's model2 does not carry the patch (ComfyUI 0.8.0
comfy_extras/nodes_model_merging.py:26-31: m = model1.clone(), only model2's weights as key patches; clone copies
model1's model_options, comfy/model_patcher.py:296), yet est65's MODEL walk followed every input and counted it."""
import pytest

from gpu_garden.memory.estimate import control_feeds, workflow
from test_estimate_est65 import PATCH_BYTES, _two_branches, _with_patch
from test_estimate_ups64 import IMAGE, _api, _models


def _x4(side):
    return side * side * IMAGE + 8_204 * min(side, 512) ** 2


def _steps(est):
    return [a for a in est["assumptions"] if a.startswith("pixel upscale (ImageUpscaleWithModel)")]


def _chain():
    """hires fix: 512 base -> decode -> x2 (1024) -> x4 (4096) -> ImageScaleBy 0.25 (1024) -> encode -> KSampler 1024
    -> decode. The x4 step is on the graph's 1024 image (the step counted: x4 on 1024 needs more than x2 on 512)."""
    wf = _api()
    wf["12"] = {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "realesr-x2.pth"}}
    wf["13"] = {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["12", 0], "image": ["4", 0]}}
    wf["6"]["inputs"]["image"] = ["13", 0]
    wf["7"]["inputs"].update(scale_by=0.25)
    return wf


# (typed side or None, the side of the image the x4 step runs on): the base decode is 512 in a 1024 estimate, so it is
# half the typed side; main: typed 1024 -> 1024, typed 2048 -> 2048 (the typed size itself)
@pytest.mark.parametrize("typed, side", [(None, 512), (1024, 512), (2048, 1024), (512, 256)])
def test_plain_hires_the_base_decode_scales_with_typed_over_estimated(tmp_path, typed, side):
    kw = {"width": typed, "height": typed} if typed else {}
    est = workflow.estimate_workflow(_api(), _models(tmp_path), **kw)
    assert (est["width"], est["height"]) == ((typed, typed) if typed else (1024, 1024))
    assert est["breakdown"]["pixel_upscale"]["activations"] == _x4(side)
    assert f"on a {side}x{side} image" in _steps(est)[0] and f"to {4 * side}x{4 * side}" in _steps(est)[0]


def test_typing_the_estimated_size_changes_nothing_plain_hires(tmp_path):
    m = _models(tmp_path)
    free = workflow.estimate_workflow(_api(), m)
    typed = workflow.estimate_workflow(_api(), m, width=1024, height=1024)
    assert free["breakdown"]["pixel_upscale"] == typed["breakdown"]["pixel_upscale"]
    assert _steps(free) == _steps(typed)  # the line too: nothing moved


# the chain's x4 step: the graph's 1024 (512 decode x2) in a 1024 estimate; main: typed 1024 -> 2048 (1024 x 1024 /
# 512, scaled by the base decode), typed 2048 -> 4096
@pytest.mark.parametrize("typed, side", [(None, 1024), (1024, 1024), (2048, 2048), (512, 512)])
def test_chain_a_later_step_scales_with_typed_over_estimated(tmp_path, typed, side):
    kw = {"width": typed, "height": typed} if typed else {}
    est = workflow.estimate_workflow(_chain(), _models(tmp_path), **kw)
    assert est["breakdown"]["pixel_upscale"]["activations"] == _x4(side)
    notes = [a for a in est["assumptions"] if "pixel upscale steps" in a]
    assert notes and f"on a {side}x{side} image, is counted" in notes[0]


def test_typing_the_estimated_size_changes_nothing_chain(tmp_path):
    m = _models(tmp_path)
    free = workflow.estimate_workflow(_chain(), m)
    typed = workflow.estimate_workflow(_chain(), m, width=1024, height=1024)
    assert free["breakdown"]["pixel_upscale"] == typed["breakdown"]["pixel_upscale"]
    assert _steps(free) == _steps(typed)


def test_the_line_says_what_the_image_is_scaled_by(tmp_path):
    est = workflow.estimate_workflow(_chain(), _models(tmp_path), width=2048, height=2048)
    assert "1024x1024 from a 512x512 decode, scaled with the typed size over the graph's estimated 1024x1024" \
        in " ".join(_steps(est))


# -- 2: a merge passes on model1's patches only --------------------------------------------------------------------
# test_estimate_est65._two_branches: KSampler 3 at 512 on the patched model (QwenImageDiffsynthControlnet 21),
# KSampler 4 at 1024 (the run counted) on the plain one; the patch is 19,691,520 bytes.

@pytest.mark.parametrize("merge", ["ModelMergeSimple", "ModelSubtract", "ModelAdd", "ModelMergeBlocks",
                                   "ModelMergeSDXL"])
def test_patch_on_model2_of_a_merge_is_not_carried(tmp_path, merge):
    """main: the patch reached through model2 and added to the 1024 run: (19,691,520, 0)."""
    wf = _two_branches("small")
    wf["30"] = {"class_type": merge, "inputs": {"model1": ["1", 0], "model2": ["21", 0]}}
    wf["4"]["inputs"]["model"] = ["30", 0]  # the 1024 sampler on model1 = plain, merged with the patched one's weights
    added, after = _with_patch(tmp_path, wf)
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (0, 0)


def test_patch_on_model1_of_a_merge_is_carried(tmp_path):
    wf = _two_branches("small")
    wf["30"] = {"class_type": "ModelMergeSimple", "inputs": {"model1": ["21", 0], "model2": ["1", 0], "ratio": 0.5}}
    wf["4"]["inputs"]["model"] = ["30", 0]
    added, after = _with_patch(tmp_path, wf)
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (PATCH_BYTES, 0)


def test_a_patched_model_reached_only_through_a_non_model_input_is_not_carried(tmp_path):
    """A LoRA on the plain model whose clip input is (wrongly, by hand) linked to the patch node: only a node's model
    input carries the sampler's model; main followed every input."""
    wf = _two_branches("small")
    wf["30"] = {"class_type": "LoraLoaderModelOnly", "inputs": {"model": ["1", 0], "clip": ["21", 0],
                                                                "lora_name": "x.safetensors", "strength_model": 1.0}}
    wf["4"]["inputs"]["model"] = ["30", 0]
    added, _ = _with_patch(tmp_path, wf)
    assert added == (0, 0)


def _ui_subgraph_patch():
    """UI format: the sampler's model comes out of a subgraph instance that applies the patch inside (the frontend's
    subgraph: an inner QwenImageDiffsynthControlnet on the instance's model input, its ModelPatchLoader inside too)."""
    sub = {"id": "sub-1", "inputNode": {"id": -10}, "outputNode": {"id": -20}, "inputs": [{"name": "model"}],
           "nodes": [{"id": 10, "type": "ModelPatchLoader", "outputs": [{"links": [12]}]},
                     {"id": 11, "type": "QwenImageDiffsynthControlnet", "outputs": [{"links": [13]}],
                      "inputs": [{"name": "model", "link": 11}, {"name": "model_patch", "link": 12}]}],
           "links": [[11, -10, 0, 11, 0, "MODEL"], [12, 10, 0, 11, 1, "MODEL_PATCH"], [13, 11, 0, -20, 0, "MODEL"]]}
    nodes = [{"id": 1, "type": "UNETLoader", "outputs": [{"links": [1]}]},
             {"id": 2, "type": "sub-1", "inputs": [{"name": "model", "link": 1}], "outputs": [{"links": [2]}]},
             {"id": 3, "type": "KSampler", "inputs": [{"name": "model", "link": 2}], "outputs": [{"links": [3]}]},
             {"id": 4, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 3}], "outputs": [{"links": [4]}]},
             {"id": 5, "type": "SaveImage", "inputs": [{"name": "images", "link": 4}]}]
    links = [[1, 1, 0, 2, 0, "MODEL"], [2, 2, 0, 3, 0, "MODEL"], [3, 3, 0, 4, 0, "LATENT"], [4, 4, 0, 5, 0, "IMAGE"]]
    return {"nodes": nodes, "links": links, "definitions": {"subgraphs": [sub]}}


def test_a_patch_inside_a_subgraph_on_the_samplers_model_is_reached():
    """The MODEL walk enters a subgraph instance as before (reach.walk_ui enters one only when every input is
    followed), and the inner nodes are read by the same table (image_z_image_turbo_fun_union_controlnet's patch node is
    inside a subgraph)."""
    assert control_feeds.feeds(_ui_subgraph_patch()) == [{("sub-1", 10)}]
