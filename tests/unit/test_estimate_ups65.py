"""ups65: LTX-2's latent upscale step everywhere the estimate runs (issue 15): the CLI's --upscale FILE|auto without a
workflow, the Footprint Estimate node's latent_upscale / upscale_model inputs, and the upscaler's config read from the
file's safetensors __metadata__ "config" (as ComfyUI 0.8.0's LatentUpscaleModelLoader reads it, nodes_hunyuan.py:205-207)
with the config rebuilt for Lightricks' x2 (ltx64) as the fallback.

Expected figures by hand: per input-latent voxel the step holds 4 x mid x 2 x 2 + in values (ltx64's trace, at mid 1024:
16,512; at mid 512: 8,320); the stage-1 latent of a 640x352x97 LTX-2 run is [1, 128, 13, 11, 20] (2,860 voxels);
Lightricks' x2 is 497,867,929 values (test_estimate_ltx64's hand count); the mid-512 plain upsampler below is counted
by hand in MID512_VALUES."""
import json

import pytest

from gpu_garden.memory.estimate import formula, latent_upscale, layouts, workflow
from support.cli_run import estimate as run_estimate, estimate_workflow

NAME = "upscale_ltx-2-spatial-upscaler-x2-1.0"
FILE = "ltx-2-spatial-upscaler-x2-1.0.safetensors"
VALUES = 497_867_929
VOXELS = 13 * 11 * 20  # the stage-1 latent [1, 128, 13, 11, 20] of 640x352, 97 frames
# a 3-D plain x2 upsampler (no rational resampler) at 128 latent channels, 512 wide, 4 blocks a stage:
# initial conv 512*128*27 + 512, its norm 2*512; 8 ResBlocks of 2*(512*512*27 + 512) + 2*2*512;
# upsampler.0 (Conv2d to 4*512) 2048*512*9 + 2048; final conv 128*512*27 + 128
MID512_VALUES = (1_769_472 + 512) + 1_024 + 8 * (2 * (7_077_888 + 512) + 2_048) + (9_437_184 + 2_048) + (1_769_472 + 128)
assert MID512_VALUES == 126_250_624
LTX64_RULE = 16_512
MID512_RULE = 8_320


def _upsampler_tensors(mid, cin=128, blocks=4, rational=False):
    """{key: (dtype, shape)} of ComfyUI's LatentUpsampler (3-D, spatial x2) at these sizes, as its state_dict names them."""
    t = {"initial_conv.weight": [mid, cin, 3, 3, 3], "initial_conv.bias": [mid], "initial_norm.weight": [mid],
         "initial_norm.bias": [mid]}
    for stage in ("res_blocks", "post_upsample_res_blocks"):
        for b in range(blocks):
            for i in (1, 2):
                t.update({f"{stage}.{b}.conv{i}.weight": [mid, mid, 3, 3, 3], f"{stage}.{b}.conv{i}.bias": [mid],
                          f"{stage}.{b}.norm{i}.weight": [mid], f"{stage}.{b}.norm{i}.bias": [mid]})
    up = "upsampler.conv" if rational else "upsampler.0"
    t.update({f"{up}.weight": [4 * mid, mid, 3, 3], f"{up}.bias": [4 * mid]})
    if rational:
        t["upsampler.blur_down.kernel"] = [1, 1, 5, 5]
    t.update({"final_conv.weight": [cin, mid, 3, 3, 3], "final_conv.bias": [cin]})
    return t


def _write(path, tensors, meta=None):
    lay = {"tensors": {k: {"dtype": "BF16", "shape": s} for k, s in tensors.items()}}
    if meta is not None:
        lay["__metadata__"] = meta
    return layouts.write_sparse(lay, path)


MID512_CONFIG = {"_class_name": "LatentUpsampler", "in_channels": 128, "mid_channels": 512, "num_blocks_per_stage": 4,
                 "dims": 3, "spatial_upsample": True, "temporal_upsample": False}


def _models(tmp_path, upscaler=NAME):
    d = tmp_path / "models"
    layouts.write_sparse("ltx-2_ltx-2-19b_bf16", d / "diffusion_models" / "ltx2.safetensors")
    if upscaler == NAME:
        layouts.write_sparse(NAME, d / "latent_upscale_models" / FILE)
    elif upscaler:
        _write(d / "latent_upscale_models" / FILE, *upscaler)
    return d


def _wf():
    return {"nodes": [{"id": 1, "type": "UNETLoader", "widgets_values": ["ltx2.safetensors", "default"]},
                      {"id": 2, "type": "EmptyLTXVLatentVideo", "widgets_values": [640, 352, 97, 1]},
                      {"id": 3, "type": "LatentUpscaleModelLoader", "widgets_values": [FILE]},
                      {"id": 4, "type": "LTXVLatentUpsampler", "widgets_values": []}], "links": []}


# -- the header's config ------------------------------------------------------------------------------------------------

def test_the_rebuilt_config_is_the_ltx64_rule():
    cfg = latent_upscale.rebuilt_config()
    assert (cfg["in_channels"], cfg["mid_channels"], cfg["num_blocks_per_stage"], cfg["spatial_scale"]) == (128, 1024, 4, 2.0)
    assert latent_upscale.not_modelled(cfg) is None and latent_upscale.per_voxel(cfg) == LTX64_RULE


def test_header_config_fills_from_configs_defaults_and_refuses_junk():
    # LatentUpsampler.from_config's own defaults (comfy/ldm/lightricks/latent_upsampler.py): dims 2, rational False
    cfg = latent_upscale.header_config({"config": json.dumps({"mid_channels": 512, "dims": 3})})
    assert (cfg["in_channels"], cfg["mid_channels"], cfg["dims"], cfg["rational_resampler"]) == (4, 512, 3, False)
    assert latent_upscale.header_config({}) is None
    assert latent_upscale.header_config({"config": "{not json"}) is None
    assert latent_upscale.header_config({"config": "[1, 2]"}) is None


@pytest.mark.parametrize("patch,why", [
    ({"temporal_upsample": True, "spatial_upsample": False}, "it upsamples in time"),
    ({"rational_resampler": True, "spatial_scale": 1.5}, "spatial scale 1.5, not 2"),
    ({"dims": 2}, "2-D, not 3-D"),
])
def test_configs_the_step_was_not_traced_for(patch, why):
    assert latent_upscale.not_modelled(latent_upscale.header_config({"config": json.dumps(dict(MID512_CONFIG, **patch))})) == why


def test_a_files_header_config_sizes_the_step(tmp_path):
    d = _models(tmp_path, (_upsampler_tensors(512), {"config": json.dumps(MID512_CONFIG)}))
    est = formula.judge(workflow.estimate_workflow(_wf(), d), 80 << 30)
    bd = est["breakdown"]["latent_upscale"]
    assert bd["weights"] == 2 * MID512_VALUES
    assert bd["activations"] == VOXELS * MID512_RULE * 2
    assert any("its config (the file's metadata) gives 128 latent channels, 512 wide, 4 ResBlocks a stage" in a
               for a in est["assumptions"])


def test_a_header_without_config_keeps_the_rebuilt_one(tmp_path):
    d = _models(tmp_path, (_upsampler_tensors(512), None))
    est = formula.judge(workflow.estimate_workflow(_wf(), d), 80 << 30)
    bd = est["breakdown"]["latent_upscale"]
    assert (bd["weights"], bd["activations"]) == (2 * MID512_VALUES, VOXELS * LTX64_RULE * 2)
    assert any("its header carries no config metadata" in a and "assumed the config rebuilt" in a for a in est["assumptions"])


def test_a_temporal_config_is_not_modelled_and_the_rebuilt_one_stands_in(tmp_path):
    cfg = dict(MID512_CONFIG, spatial_upsample=False, temporal_upsample=True)
    d = _models(tmp_path, (_upsampler_tensors(512), {"config": json.dumps(cfg)}))
    est = formula.judge(workflow.estimate_workflow(_wf(), d), 80 << 30)
    assert est["breakdown"]["latent_upscale"]["activations"] == VOXELS * LTX64_RULE * 2
    assert any("its config is not modelled (it upsamples in time)" in a for a in est["assumptions"])


def test_the_bundled_layouts_own_header_reads_as_the_rebuilt_config(tmp_path):
    p = layouts.write_sparse(NAME, tmp_path / FILE)
    up = latent_upscale.from_file(p)
    assert up["values"] == VALUES and up["config"] == latent_upscale.rebuilt_config() and up["name"] == FILE
    assert latent_upscale.from_file(layouts.write_sparse("vae_ltx-2_video_vae", tmp_path / "vae.safetensors")) is None


# -- the CLI: --upscale FILE|auto ---------------------------------------------------------------------------------------

def _json(capsys, *argv):
    rc, out, err = run_estimate(capsys, *argv, "--json")
    assert rc in (0, 1), err
    return json.loads(out)


def test_cli_upscale_file_gives_the_workflows_figures(tmp_path, capsys):
    d = _models(tmp_path)
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(_wf()))
    wf = _json(capsys, "--workflow", str(p), "--models-dir", str(d), "--vram", "80", "--ram", "64")
    cli = _json(capsys, str(d / "diffusion_models" / "ltx2.safetensors"), "--width", "640", "--height", "352", "--frames",
                "97", "--upscale", str(d / "latent_upscale_models" / FILE), "--vram", "80", "--ram", "64")
    assert (cli["width"], cli["height"]) == (wf["width"], wf["height"]) == (1280, 704)
    assert cli["latent"]["shape"] == wf["latent"]["shape"] == [1, 128, 13, 22, 40]
    assert cli["phases"] == wf["phases"] and cli["breakdown"] == wf["breakdown"]
    assert cli["breakdown"]["latent_upscale"]["activations"] == VOXELS * LTX64_RULE * 2
    assert cli["breakdown"]["latent_upscale"]["weights"] == 2 * VALUES
    assert any(a.startswith("--upscale: two stages; --width/--height (640x352) is the first's") for a in cli["assumptions"])


def test_cli_upscale_auto_is_the_bundled_upscaler(tmp_path, capsys):
    d = _models(tmp_path, upscaler=None)  # the graph's file not found: the bundled layout stands in there too
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(_wf()))
    wf = _json(capsys, "--workflow", str(p), "--models-dir", str(d), "--vram", "80", "--ram", "64")
    cli = _json(capsys, str(d / "diffusion_models" / "ltx2.safetensors"), "--width", "640", "--height", "352", "--frames",
                "97", "--upscale", "auto", "--vram", "80", "--ram", "64")
    assert cli["phases"] == wf["phases"]
    assert cli["breakdown"]["latent_upscale"]["weights"] == 2 * VALUES
    assert any(a.startswith("--upscale auto: the upscale step counts Lightricks'") for a in cli["assumptions"])
    one = _json(capsys, str(d / "diffusion_models" / "ltx2.safetensors"), "--width", "640", "--height", "352", "--frames",
                "97", "--vram", "80", "--ram", "64")
    assert "latent_upscale" not in one["phases"] and (one["width"], one["height"]) == (640, 352)


def test_cli_upscale_refusals(tmp_path, capsys):
    d = _models(tmp_path)
    dm = str(d / "diffusion_models" / "ltx2.safetensors")
    rc, _, err = run_estimate(capsys, dm, "--upscale", str(tmp_path / "nope.safetensors"))
    assert rc == 2 and "--upscale" in err and "no such file" in err
    rc, _, err = run_estimate(capsys, dm, "--upscale", dm)
    assert rc == 2 and "not LTX-2's latent upscale model" in err
    rc, _, err = estimate_workflow(tmp_path, capsys, _wf(), "--models-dir", str(d), "--upscale", "auto")
    assert rc == 2 and "--upscale is for model files" in err


def test_cli_upscale_on_another_family_says_one_stage(tmp_path, capsys):
    out = _json(capsys, "flux1", "--width", "1024", "--height", "1024", "--upscale", "auto", "--vram", "80", "--ram", "64")
    assert "latent_upscale" not in out["phases"] and (out["width"], out["height"]) == (1024, 1024)
    assert any(a.startswith("--upscale: LTX-2's two-stage upscale step; the diffusion model is flux1") for a in out["assumptions"])


# -- the Footprint Estimate node: latent_upscale / upscale_model --------------------------------------------------------

@pytest.fixture
def node(monkeypatch):
    import importlib
    import sys
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "stubs"))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module("gpu_garden.nodes.estimate")


class _T:
    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, tuple(shape)


def _ltx2_model():
    """A ModelPatcher stand-in holding LTX-2's diffusion model layout as fake bf16 tensors (on the CPU: no GPU budget)."""
    import types

    import torch

    sd = {k: _T("torch.bfloat16", v["shape"]) for k, v in layouts.load("ltx-2_ltx-2-19b_bf16")["tensors"].items()}

    class Base:
        diffusion_model = types.SimpleNamespace(state_dict=lambda: sd)
        model_config = None

        def get_dtype(self):
            return torch.bfloat16

    return types.SimpleNamespace(model=Base(), load_device=torch.device("cpu"))


class _Upsampler:
    """What LatentUpscaleModelLoader returns for a LatentUpsampler file: config() and its state_dict (meta tensors)."""

    def __init__(self, cfg, tensors):
        import torch

        self._cfg = cfg
        self._sd = {k: torch.empty(s, device="meta") for k, s in tensors.items()}

    def config(self):
        return dict(self._cfg)

    def state_dict(self):
        return self._sd


def _run(node, **kw):
    import torch

    out = node.GPUGardenFootprintEstimate.execute(_ltx2_model(), latent={"samples": torch.zeros(1, 128, 13, 11, 20)},
                                                  vram_gb=80.0, **kw)
    ui = out.ui["gpu_garden_estimate"][0] if hasattr(out, "ui") else out.args[-1]
    return ui, out.values[1]


def test_node_off_is_one_stage_as_before(node):
    ui, _ = _run(node)
    assert "latent_upscale" not in ui["phases"] and (ui["width"], ui["height"]) == (640, 352) and ui["stage1"] is None


def test_node_auto_counts_the_two_stages_as_the_cli(node, tmp_path, capsys):
    ui, _ = _run(node, latent_upscale="auto")
    assert (ui["width"], ui["height"], ui["frames"]) == (1280, 704, 97) and ui["stage1"] == {"width": 640, "height": 352}
    assert ui["latent"]["shape"] == [1, 128, 13, 22, 40]
    bd = ui["breakdown"]["latent_upscale"]
    assert (bd["weights"], bd["activations"]) == (2 * VALUES, VOXELS * LTX64_RULE * 2)
    assert any(a.startswith("Footprint Estimate's latent_upscale: two stages; the connected latent (640x352) is the first's")
               for a in ui["assumptions"])
    # the CLI on the same diffusion model at the same stage-1 size: the same stage-2 latent and upscale step
    d = _models(tmp_path, upscaler=None)
    cli = _json(capsys, str(d / "diffusion_models" / "ltx2.safetensors"), "--width", "640", "--height", "352", "--frames",
                "97", "--upscale", "auto", "--vram", "80", "--ram", "64")
    assert cli["latent"]["shape"] == ui["latent"]["shape"]
    for k in ("weights", "activations", "allocator_margin", "comfyui_request"):
        assert cli["breakdown"]["latent_upscale"][k] == bd[k], k


def test_node_uses_the_wired_upscale_model(node):
    cfg = dict(MID512_CONFIG, spatial_scale=2.0, rational_resampler=False)
    ui, report = _run(node, upscale_model=_Upsampler(cfg, _upsampler_tensors(512)))  # wired: two stages, combo off
    bd = ui["breakdown"]["latent_upscale"]
    assert (bd["weights"], bd["activations"]) == (2 * MID512_VALUES, VOXELS * MID512_RULE * 2)
    assert any("latent upscale model the wired upscale_model: its config (as loaded) gives 128 latent channels, "
               "512 wide" in a for a in ui["assumptions"])
    assert "latent upscale" in report


def test_node_a_wired_non_ltx_upscaler_is_one_stage(node):
    import types

    hv = types.SimpleNamespace(model=object())  # HunyuanVideo 1.5's SR model: no LatentUpsampler config
    ui, _ = _run(node, upscale_model=hv, latent_upscale="auto")
    assert "latent_upscale" not in ui["phases"] and (ui["width"], ui["height"]) == (640, 352)
    assert any("not LTX-2's latent upsampler" in a for a in ui["assumptions"])


def test_node_a_chosen_file_is_read_from_latent_upscale_models(node, tmp_path, monkeypatch):
    import sys
    import types

    p = _write(tmp_path / "mine.safetensors", _upsampler_tensors(512), {"config": json.dumps(MID512_CONFIG)})
    fp = types.SimpleNamespace(get_full_path=lambda folder, name: str(p) if (folder, name) == ("latent_upscale_models",
                                                                                              "mine.safetensors") else None,
                               get_filename_list=lambda folder: ["mine.safetensors"])
    monkeypatch.setitem(sys.modules, "folder_paths", fp)
    assert node.upscale_options() == ["off", "auto", "mine.safetensors"]
    ui, _ = _run(node, latent_upscale="mine.safetensors")
    assert ui["breakdown"]["latent_upscale"]["activations"] == VOXELS * MID512_RULE * 2
    ui, _ = _run(node, latent_upscale="gone.safetensors")
    assert ui["breakdown"]["latent_upscale"]["weights"] == 2 * VALUES
    assert any("latent_upscale gone.safetensors: not found in latent_upscale_models" in a for a in ui["assumptions"])


def test_a_file_this_machine_lacks_passes_comfyuis_combo_check(node):
    """rev62 F2: ComfyUI refuses a prompt whose combo value is not in this machine's list before anything runs, unless the
    node's validate_inputs names the input (execution.py 898: its combo check is skipped then). A shared workflow naming
    an upscaler file this machine lacks must reach the node, which says the bundled x2 stands in (above)."""
    import inspect

    cls = node.GPUGardenFootprintEstimate
    assert "latent_upscale" in inspect.getfullargspec(cls.validate_inputs).args
    assert cls.validate_inputs(latent_upscale="someone_elses_upscaler.safetensors") is True
    assert "latent_upscale must be" in cls.validate_inputs(latent_upscale=3)


def test_face_names_the_stage_one_size():
    from support.node_js import call

    est = {"width": 1280, "height": 704, "frames": 97, "size_from": "latent", "stage1": {"width": 640, "height": 352}}
    assert call("lib/estimate_size.js", "sizeText", est) == \
        "two stages: the connected latent 640×352×97f upscaled to 1280×704×97f (latent upscale)"
    assert call("lib/estimate_size.js", "sizeText", dict(est, stage1=None, size_from="widgets")) == "1280×704×97f"


def test_the_new_widget_comes_last(node):
    """A saved workflow's widgets_values are positional: latent_upscale (a widget) after every widget the node had, so
    an older workflow's values keep their places (upscale_model is a socket, no widget value)."""
    names = [i.args[0] for i in node.GPUGardenFootprintEstimate.define_schema().inputs]
    assert names == ["model", "latent", "clip", "vae", "budget", "width", "height", "frames", "batch", "cfg", "weights_dtype",
                     "vae_dtype", "vae_tile", "text_tokens", "vram_gb", "when_it_does_not_fit", "mode", "latent_upscale",
                     "upscale_model"]


def test_a_comfyui_without_the_upscale_model_type_still_gets_the_node(node, monkeypatch):
    """io.LatentUpscaleModel is ComfyUI 0.8.0's; where a ComfyUI lacks it the node is defined without the upscale_model
    socket (latent_upscale auto or a file still counts the step), rather than a schema that raises and loses the node."""
    monkeypatch.setattr(node.io, "LatentUpscaleModel", None, raising=False)
    names = [i.args[0] for i in node.GPUGardenFootprintEstimate.define_schema().inputs]
    assert names[-2:] == ["mode", "latent_upscale"]
