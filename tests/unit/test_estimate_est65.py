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


# -- 2: a model patch counted with the samplers whose model carries it -------------------------------------------------
# ComfyUI 0.8.0: the patch node clones the model and sets the patch in the clone's options
# (comfy_extras/nodes_model_patch.py:448-466); load_models_gpu loads the patches of the models it is given
# (comfy/model_management.py:633-636, model_patcher.py:529-551): a sampler on the unpatched model never loads it.
# The patch: Qwen-Image's DiffSynth canny patch as wf66's test (BF16 for most elements): (9,842,688 + 3,072) x 2 bytes.
from test_estimate_wf66 import BF16, F32, _file, _qwen  # noqa: E402

PATCH = {"controlnet_blocks.0.y_rms.weight": (F32, (3072,)), "img_in.weight": (BF16, (3072, 132)),
         "controlnet_blocks.0.proj.weight": (BF16, (3072, 3072))}
PATCH_BYTES = 19_691_520
OWNER = "qwen_canny_patch.safetensors (ModelPatchLoader)"


def _two_branches(patched="small", linked=True):
    """Qwen-Image, two branches to two outputs: KSampler 3 on a 512 x 512 latent and KSampler 4 on a 1024 x 1024
    one; the patch node (QwenImageDiffsynthControlnet 21, ModelPatchLoader 20) on one sampler's model only."""
    def ks(latent, model):
        return {"class_type": "KSampler", "inputs": {"model": model, "positive": ["9", 0], "negative": ["9", 0],
                "latent_image": [latent, 0], "seed": 1, "steps": 20, "cfg": 1.0, "sampler_name": "euler",
                "scheduler": "simple", "denoise": 1.0}}
    patched_model = ["21", 0] if linked else ["1", 0]
    wf = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_dm.safetensors", "weight_dtype": "default"}},
          "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
          "12": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
          "9": {"class_type": "ConditioningZeroOut", "inputs": {}},
          "20": {"class_type": "ModelPatchLoader", "inputs": {"name": "qwen_canny_patch.safetensors"}},
          "21": {"class_type": "QwenImageDiffsynthControlnet", "inputs": {"model": ["1", 0], "model_patch": ["20", 0],
                                                                          "strength": 1.0}},
          "3": ks("2", patched_model if patched == "small" else ["1", 0]),
          "4": ks("12", patched_model if patched == "large" else ["1", 0]),
          "5": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0]}},
          "6": {"class_type": "VAEDecode", "inputs": {"samples": ["4", 0]}},
          "7": {"class_type": "SaveImage", "inputs": {"images": ["5", 0], "filename_prefix": "a"}},
          "8": {"class_type": "SaveImage", "inputs": {"images": ["6", 0], "filename_prefix": "b"}}}
    return wf


def _with_patch(tmp_path, wf):
    d = _qwen(tmp_path / "models")
    before = workflow.estimate_workflow(wf, d)
    _file(d / "model_patches" / "qwen_canny_patch.safetensors", PATCH)
    after = workflow.estimate_workflow(wf, d)
    b, a = before["breakdown"]["sample"], after["breakdown"]["sample"]
    return (a["weights"] - b["weights"], a["activations"] - b["activations"]), after


def test_a_patch_on_the_smaller_branchs_model_is_not_in_the_larger_branchs_run(tmp_path):
    """The 1024 branch's run (its activations) is larger than the 512 branch's with the 19.7 MB patch: the sample phase
    is the 1024 run, which does not load the patch (main: the patch added to it)."""
    added, after = _with_patch(tmp_path, _two_branches("small"))
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (0, 0) and OWNER not in after["breakdown"]["sample"].get("side_models", {})
    assert OWNER in {m["owner"] for m in after["workflow"]["side_models"]}  # loaded by the graph, listed


def test_a_patch_on_the_larger_branchs_model_is_counted(tmp_path):
    added, after = _with_patch(tmp_path, _two_branches("large"))
    assert added == (PATCH_BYTES, 0)
    assert after["breakdown"]["sample"]["side_models"][OWNER] == {"weights": PATCH_BYTES, "activations": 0}


def test_a_patch_no_sampler_reaches_is_in_every_run(tmp_path):
    """The patch node's MODEL output linked to no sampler (its loader still read: the graph names it): counted with
    whichever run is the phase, as a ControlNet no sampler reaches."""
    wf = _two_branches(linked=False)
    wf["22"] = {"class_type": "SaveImage", "inputs": {"images": ["21", 0]}}  # keeps the patch node running
    added, _ = _with_patch(tmp_path, wf)
    assert added == (PATCH_BYTES, 0)


def test_every_model_resident_keeps_the_patch_on_the_device(tmp_path):
    d = _qwen(tmp_path / "models")
    _file(d / "model_patches" / "qwen_canny_patch.safetensors", PATCH)
    est = workflow.estimate_workflow(_two_branches("small"), d, policy={"models": "resident"})
    assert est["breakdown"]["sample"]["side_models"][OWNER] == {"weights": PATCH_BYTES, "activations": 0}


def test_the_line_names_the_patch_on_one_samplers_model(tmp_path):
    _, after = _with_patch(tmp_path, _two_branches("small"))
    assert f"{OWNER}: on the model of 1 of 2 samplers; ComfyUI loads it for that sampler's run only" \
        in " | ".join(after["assumptions"])


def test_sampler_custom_advanced_reaches_the_patch_through_its_guider(tmp_path):
    """The 1024 branch as SamplerCustomAdvanced, its CFGGuider on the patched model: the walk goes up the guider's
    model (sampler_nodes: its MODEL comes through "guider"), the patch is in the counted run."""
    wf = _two_branches("large")
    wf["30"] = {"class_type": "CFGGuider", "inputs": {"model": ["21", 0], "positive": ["9", 0], "negative": ["9", 0],
                                                      "cfg": 1.0}}
    wf["4"] = {"class_type": "SamplerCustomAdvanced", "inputs": {"guider": ["30", 0], "latent_image": ["12", 0]}}
    added, after = _with_patch(tmp_path, wf)
    assert added == (PATCH_BYTES, 0) and after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]


def test_ui_format_through_a_reroute(tmp_path):
    """The same two branches as the frontend saves them, the patched model to the 512 sampler through a Reroute."""
    from test_estimate_fix64 import _i, _ksampler, _o
    from test_estimate_wf64 import _top
    wf = _top({"id": 1, "type": "UNETLoader", "widgets_values": ["qwen_dm.safetensors", "default"], "outputs": [_o("MODEL", 1, 2)]},
              {"id": 2, "type": "EmptySD3LatentImage", "widgets_values": [512, 512, 1], "outputs": [_o("LATENT", 3)]},
              {"id": 12, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1], "outputs": [_o("LATENT", 4)]},
              {"id": 20, "type": "ModelPatchLoader", "widgets_values": ["qwen_canny_patch.safetensors"],
               "outputs": [_o("MODEL_PATCH", 5)]},
              {"id": 21, "type": "QwenImageDiffsynthControlnet", "inputs": [_i("model", 1, "MODEL"),
                                                                             _i("model_patch", 5, "MODEL_PATCH")],
               "outputs": [_o("MODEL", 6)], "widgets_values": [1.0]},
              {"id": 22, "type": "Reroute", "inputs": [_i("", 6, "*")], "outputs": [_o("MODEL", 7)]},
              _ksampler(3, 7, None, None, 3, [8]), _ksampler(4, 2, None, None, 4, [9]),
              {"id": 5, "type": "VAEDecode", "inputs": [_i("samples", 8, "LATENT"), _i("vae", None, "VAE")], "outputs": [_o("IMAGE", 10)]},
              {"id": 6, "type": "VAEDecode", "inputs": [_i("samples", 9, "LATENT"), _i("vae", None, "VAE")], "outputs": [_o("IMAGE", 11)]},
              {"id": 7, "type": "SaveImage", "inputs": [_i("images", 10, "IMAGE")], "outputs": [], "widgets_values": ["a"]},
              {"id": 8, "type": "SaveImage", "inputs": [_i("images", 11, "IMAGE")], "outputs": [], "widgets_values": ["b"]},
              links=[(1, 1, 0, 21, 0, "MODEL"), (2, 1, 0, 4, 0, "MODEL"), (3, 2, 0, 3, 3, "LATENT"),
                     (4, 12, 0, 4, 3, "LATENT"), (5, 20, 0, 21, 1, "MODEL_PATCH"), (6, 21, 0, 22, 0, "MODEL"),
                     (7, 22, 0, 3, 0, "MODEL"), (8, 3, 0, 5, 0, "LATENT"), (9, 4, 0, 6, 0, "LATENT"),
                     (10, 5, 0, 7, 0, "IMAGE"), (11, 6, 0, 8, 0, "IMAGE")])
    added, after = _with_patch(tmp_path, wf)
    assert added == (0, 0) and after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    # the patch moved to the 1024 sampler: counted
    wf["links"] = [x if x[0] not in (2, 7) else [x[0], x[1], x[2], 4 if x[0] == 7 else 3, 0, "MODEL"] for x in wf["links"]]
    for n in wf["nodes"]:
        if n["id"] in (3, 4):
            n["inputs"][0]["link"] = 2 if n["id"] == 3 else 7
    added, _ = _with_patch(tmp_path / "b", wf)
    assert added == (PATCH_BYTES, 0)
