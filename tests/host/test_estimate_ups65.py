"""ups65 on a real --cpu ComfyUI 0.8.0: the Footprint Estimate's latent_upscale / upscale_model inputs (issue 15) and the
upscaler's config read from the file's header.

- the schema: latent_upscale (off by default, auto, the files in latent_upscale_models/) and upscale_model
  (LATENT_UPSCALE_MODEL), both optional;
- a LatentUpscaleModelLoader's output wired into the node on the SD1.5 graph: the run completes, and the node says the
  two-stage step is LTX-2's (one stage estimated for SD1.5);
- the object ComfyUI's loader builds from a file (LatentUpsampler.from_config(json.loads(metadata["config"]))) reads as
  the file's header does (latent_upscale.from_module == from_file), and ComfyUI's class traced on meta at a 3-D plain
  x2 config of 512 wide holds 4 x 512 x 4 + 128 values per input voxel, the rule per_voxel states for a header's config
  (ltx64's trace covers the rational 1024-wide config)."""
import json

import pytest

from gpu_garden.memory.estimate import layouts
from support.comfy_host import host_unavailable_reason, sd15_prompt
from support.pack import host_json

# the third test runs ComfyUI's interpreter itself (no comfy_host fixture to skip it): without a host, all skip with why
pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]

NODE = "GPUGardenFootprintEstimate"
TINY = "tiny_ltx_upscaler.safetensors"
TINY_CONFIG = {"_class_name": "LatentUpsampler", "in_channels": 128, "mid_channels": 32, "num_blocks_per_stage": 1,
               "dims": 3, "spatial_upsample": True, "temporal_upsample": False, "spatial_scale": 2.0,
               "rational_resampler": False}


def _tiny_tensors(mid=32, cin=128):
    t = {"initial_conv.weight": [mid, cin, 3, 3, 3], "initial_conv.bias": [mid], "initial_norm.weight": [mid],
         "initial_norm.bias": [mid]}
    for stage in ("res_blocks", "post_upsample_res_blocks"):
        for i in (1, 2):
            t.update({f"{stage}.0.conv{i}.weight": [mid, mid, 3, 3, 3], f"{stage}.0.conv{i}.bias": [mid],
                      f"{stage}.0.norm{i}.weight": [mid], f"{stage}.0.norm{i}.bias": [mid]})
    t.update({"upsampler.0.weight": [4 * mid, mid, 3, 3], "upsampler.0.bias": [4 * mid],
              "final_conv.weight": [cin, mid, 3, 3, 3], "final_conv.bias": [cin]})
    return {"tensors": {k: {"dtype": "F32", "shape": s} for k, s in t.items()},
            "__metadata__": {"config": json.dumps(TINY_CONFIG)}}


def _tiny_file(comfy_host):
    return layouts.write_sparse(_tiny_tensors(), comfy_host.base / "models" / "latent_upscale_models" / TINY)


def test_schema_has_the_two_stage_inputs(comfy_host):
    _tiny_file(comfy_host)
    info = comfy_host.get(f"/object_info/{NODE}")[NODE]
    opt = info["input"]["optional"]
    assert opt["upscale_model"][0] == "LATENT_UPSCALE_MODEL"
    choices = opt["latent_upscale"][1]["options"] if len(opt["latent_upscale"]) > 1 and "options" in opt["latent_upscale"][1] \
        else opt["latent_upscale"][0]
    assert choices[:2] == ["off", "auto"] and TINY in choices
    assert opt["latent_upscale"][1]["default"] == "off"


def test_a_wired_upscale_model_runs_and_is_named(comfy_host):
    _tiny_file(comfy_host)
    prompt = sd15_prompt("a garden upscaled", width=64, height=64, seed=7)
    prompt["30"] = {"class_type": "LatentUpscaleModelLoader", "inputs": {"model_name": TINY}}
    prompt["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "latent": ["5", 0], "width": 1024, "height": 1024,
                                                   "frames": 1, "batch": 1, "cfg": "auto", "vram_gb": 8.0,
                                                   "when_it_does_not_fit": "warn", "mode": "formula",
                                                   "upscale_model": ["30", 0]}}
    prompt["3"] = dict(prompt["3"], inputs=dict(prompt["3"]["inputs"], latent_image=["20", 0]))
    entry = comfy_host.run(prompt)
    assert entry["status"]["status_str"] == "success", entry["status"]
    est = entry["outputs"]["20"]["gpu_garden_estimate"][0]
    assert (est["width"], est["height"], est["stage1"]) == (64, 64, None) and "latent_upscale" not in est["phases"]
    assert any(a.startswith("Footprint Estimate's latent_upscale: LTX-2's two-stage upscale step; the diffusion model is sd1")
               for a in est["assumptions"]), est["assumptions"]


def test_an_upscaler_file_this_machine_lacks_does_not_block_the_run(comfy_host):
    """rev62 F2: a shared workflow whose latent_upscale names a file that is not in this machine's latent_upscale_models
    runs (ComfyUI's combo check would refuse the whole prompt), and the node says the bundled x2 stands in."""
    prompt = sd15_prompt("a garden shared", width=64, height=64, seed=8)
    prompt["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "latent": ["5", 0], "width": 1024, "height": 1024,
                                                   "frames": 1, "batch": 1, "cfg": "auto", "vram_gb": 8.0,
                                                   "when_it_does_not_fit": "warn", "mode": "formula",
                                                   "latent_upscale": "not_on_this_machine_x2.safetensors"}}
    prompt["3"] = dict(prompt["3"], inputs=dict(prompt["3"]["inputs"], latent_image=["20", 0]))
    entry = comfy_host.run(prompt)
    assert entry["status"]["status_str"] == "success", entry["status"]
    est = entry["outputs"]["20"]["gpu_garden_estimate"][0]
    assert any("latent_upscale not_on_this_machine_x2.safetensors: not found in latent_upscale_models" in a
               for a in est["assumptions"]), est["assumptions"]


def test_comfyuis_loaded_upsampler_reads_as_its_file_and_traces_to_the_rule(tmp_path):
    path = layouts.write_sparse(_tiny_tensors(), tmp_path / TINY)
    code = ("import json, torch\n"
            "from gpu_garden.memory.trace import comfy_checkout as cc, tracer\n"
            "from gpu_garden.memory.estimate import latent_upscale\n"
            "cc.import_comfy(sys.argv[1])\n"
            "import comfy.utils\n"
            "from comfy.ldm.lightricks.latent_upsampler import LatentUpsampler\n"
            "sd, meta = comfy.utils.load_torch_file(sys.argv[2], safe_load=True, return_metadata=True)\n"
            "m = LatentUpsampler.from_config(json.loads(meta['config']))\n"
            "m.load_state_dict(sd)\n"
            "a, b = latent_upscale.from_module(m), latent_upscale.from_file(sys.argv[2])\n"
            "same = [a['values'] == b['values'], a['config'] == b['config']]\n"
            "cfg = dict(latent_upscale.header_config(meta), mid_channels=512, num_blocks_per_stage=2)\n"
            "with torch.device('meta'):\n"
            "    big = LatentUpsampler.from_config(cfg).to(dtype=torch.bfloat16)\n"
            "out = []\n"
            "for shape in ([1, 128, 5, 8, 12], [2, 128, 3, 7, 9]):\n"
            "    x = torch.empty(shape, dtype=torch.bfloat16, device='meta')\n"
            "    r = tracer.trace(big, x)\n"
            "    out.append([r['activations_peak'], latent_upscale.activation_bytes(shape, 2, latent_upscale.per_voxel(cfg)),"
            " r['at']['module']])\n"
            "print(json.dumps({'same': same, 'values': a['values'], 'traced': out}))")
    out = host_json(code, str(path))
    assert out["same"] == [True, True]
    # by hand: initial conv 32*128*27 + 32, its norm 2*32, 2 ResBlocks of 2*(32*32*27 + 32) + 4*32, upsampler.0
    # 128*32*9 + 128, final conv 128*32*27 + 128
    assert out["values"] == (110_592 + 32) + 64 + 2 * (2 * (27_648 + 32) + 128) + (36_864 + 128) + (110_592 + 128) == 369_376
    for traced, ours, at in out["traced"]:
        assert traced == ours and at == "post_upsample_res_blocks.0.activation", (traced, ours, at)
