"""POST /gpu_garden/estimate/workflow on real templates of comfyui-workflow-templates, read from the package installed
beside the host's ComfyUI (its interpreter, COMFYUI_PYTHON), their model files written as sparse safetensors into the
host's models folders as benchmarks/workflow_templates.py writes them (its layout_for: the same file's bundled layout,
else the family's). Skips, saying why, where the package is not installed there."""
import json

import pytest

from gpu_garden.memory.estimate import layouts
from support.pack import host_json, load_benchmark

LOAD = """
import importlib.util, json, sys
if importlib.util.find_spec("comfyui_workflow_templates") is None:
    print(json.dumps({"absent": "comfyui_workflow_templates is not installed in " + sys.executable}))
else:
    import comfyui_workflow_templates as T
    print(json.dumps({t: json.load(open(T.get_asset_path(t, t + ".json"), encoding="utf-8")) for t in sys.argv[2:]}))
"""
TEMPLATES = ("default", "image_qwen_image_union_control_lora", "flux_depth_lora_example", "image_to_video_wan",
             "image_qwen_image_instantx_controlnet")


@pytest.fixture(scope="module")
def templates(comfy_host):
    got = host_json(LOAD, *TEMPLATES)
    if "absent" in got:
        print(f"skipped: {got['absent']}")
        pytest.skip(got["absent"])
    bench = load_benchmark("workflow_templates")
    from gpu_garden.memory.estimate import model_files, workflow
    for wf in got.values():
        for name, directory, _ in bench.named_files(wf, workflow, model_files):
            lay, _ = bench.layout_for(name, directory, layouts.names(), layouts.FAMILY_FILES)
            p = comfy_host.base / "models" / directory / name
            if lay and not p.exists():
                layouts.write_sparse(lay, p)
            elif directory == "clip_vision" and not p.exists():  # built from the host ComfyUI's own config (wf66)
                built, why = bench.built_clip_vision(name, directory)
                assert built, why
                layouts.write_sparse({"tensors": built}, p)
    return got


def post(comfy_host, wf):
    return comfy_host.post("/gpu_garden/estimate/workflow", {"workflow": json.loads(json.dumps(wf)), "vram_gb": 24})


def test_the_default_template_sd15_at_its_latent_size(comfy_host, templates):
    out = post(comfy_host, templates["default"])
    assert out["family"] == "sd1" and (out["width"], out["height"], out["batch"]) == (512, 512, 1)
    assert out["files"] == ["v1-5-pruned-emaonly-fp16.safetensors"] and out["missing"] == []
    assert out["size_from"] == "graph" and out["verdict"] == "fits"


def test_a_qwen_image_edit_template_at_the_megapixel_its_image_is_scaled_to(comfy_host, templates):
    """LoadImage -> ImageScaleToTotalPixels (1.0 MP) -> VAEEncode: a square of 1024 x 1024 pixels (wf65), not
    Qwen-Image's native 1328 x 1328; its Qwen2.5-VL text encoder has no bundled layout: missing, named."""
    out = post(comfy_host, templates["image_qwen_image_union_control_lora"])
    assert out["family"] == "qwen-image" and (out["width"], out["height"]) == (1024, 1024)
    assert any("VAEEncode takes its latent size from its input image, not a widget: estimated at 1024x1024 (a square "
               "of the 1048576 pixels" in a for a in out["assumptions"])
    assert "qwen_2.5_vl_7b_fp8_scaled.safetensors" in out["missing"] and out["verdict"] == "incomplete"


def test_a_depth_template_with_a_preprocessors_vae_is_estimated(comfy_host, templates):
    """flux_depth_lora_example: the Lotus pipeline's SD VAE beside FLUX.1's ae is left out, named (wf65); before, the
    route answered 400 (a 4-channel VAE cannot decode FLUX.1's latent)."""
    out = post(comfy_host, templates["flux_depth_lora_example"])
    assert out["family"] == "flux1" and "ae.safetensors" in out["files"]
    assert any(a.startswith("vae-ft-mse-840000-ema-pruned.safetensors: a VAE of another latent than the diffusion "
                            "model's") for a in out["assumptions"])


def test_side_models_are_found_through_comfyuis_folders_and_counted(comfy_host, templates):
    """wf66: the route resolves a CLIP vision file in clip_vision/ and a ControlNet in controlnet/ through ComfyUI's
    folder_paths; each is counted (no named line left): image_to_video_wan's clip_vision_h (built from the host's
    comfy/clip_vision_config_h.json) as an encoder, a hand-made ControlNet header for the InstantX template."""
    out = post(comfy_host, templates["image_to_video_wan"])
    assert "clip_vision_h.safetensors" in out["files"]
    assert not any("clip_vision_h.safetensors (CLIPVisionLoader" in a for a in out["assumptions"] if a.startswith("not counted"))
    name = "Qwen-Image-InstantX-ControlNet-Union.safetensors"
    p = comfy_host.base / "models" / "controlnet" / name
    if not p.exists():
        layouts.write_sparse({"tensors": {f"controlnet_blocks.{i}.weight": {"dtype": "BF16", "shape": [3072, 3072]}
                                          for i in range(5)}}, p)
    out = post(comfy_host, templates["image_qwen_image_instantx_controlnet"])
    assert any(a.startswith(f"{name} (ControlNetLoader): loaded with the diffusion model for sampling") and
               "its 5 control residuals (width 15360 a token in all)" in a for a in out["assumptions"])
    assert not any(name in a for a in out["assumptions"] if a.startswith("not counted"))
