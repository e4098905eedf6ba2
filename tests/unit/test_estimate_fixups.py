"""Review fixes after the outcome round (task est-fixups): the outcome weighs host RAM, --frames 1 is a typed
size, the workflow route carries the outcome, one kept-weights rule, NATIVE_SIZE = ComfyUI 0.8.0's node defaults."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.units import GiB
from support.cli_run import estimate, unwrap


@pytest.fixture(scope="module")
def flux(tmp_path_factory):
    """FLUX.1-dev bf16 + T5-XXL fp16 + CLIP-L + ae (bundled layouts, sparse files)."""
    d = tmp_path_factory.mktemp("models")
    return [str(layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-dev.safetensors")),
            str(layouts.write_sparse("te_t5xxl_fp16", d / "text_encoders" / "t5xxl_fp16.safetensors")),
            str(layouts.write_sparse("te_clip_l", d / "text_encoders" / "clip_l.safetensors")),
            str(layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors"))]


def run(capsys, *argv):
    return estimate(capsys, *argv)


def test_offload_that_does_not_fit_host_ram_does_not_fit(flux, capsys):
    """FLUX.1-dev bf16 at 1024² on 12 GiB leaves 11.38 GiB of weights in RAM: with 4 GiB of RAM that is not a run
    (host_ram said so, the outcome said runs with offload, exit 0)."""
    args = (*flux, "--width", "1024", "--height", "1024", "--vram", "12", "--dynamic-vram", "off", "--json")
    rc, out, _ = run(capsys, *args, "--ram", "4")
    j = json.loads(out)
    assert j["verdict"] == "does not fit" and j["host_ram"]["verdict"].startswith("does not fit")
    assert rc == 1 and j["outcome"]["status"] == "does not fit"
    assert "host RAM" in j["outcome"]["reason"] and "4.00 GiB available" in j["outcome"]["reason"]
    assert "11.38 GiB" in j["outcome"]["reason"]  # what ComfyUI would leave in RAM
    # 11.38 offloaded + 9.26 kept for reload = 20.64 GiB: 32 GiB of RAM holds it, so ComfyUI runs it offloaded
    rc, out, _ = run(capsys, *args, "--ram", "32")
    j = json.loads(out)
    assert rc == 0 and j["host_ram"]["verdict"] == "fits" and j["outcome"]["status"] == "runs with offload"
    # the text names the RAM as the reason
    rc, out, _ = run(capsys, *args[:-1], "--ram", "4")
    v = next(x for x in unwrap(out).splitlines() if x.startswith("verdict:"))
    assert rc == 1 and v.startswith("verdict: DOES NOT FIT in 12.00 GiB") and "host RAM is short" in v


@pytest.fixture(scope="module")
def wan(tmp_path_factory):
    d = tmp_path_factory.mktemp("wan")
    return [str(layouts.write_sparse("wan_wan2.1_t2v_1.3B_fp16", d / "diffusion_models" / "wan2.1_t2v_1.3B_fp16.safetensors")),
            str(layouts.write_sparse("te_umt5_xxl_fp16", d / "text_encoders" / "umt5_xxl_fp16.safetensors"))]


def wan_workflow(length=33, batch=2):
    n = [{"id": 1, "type": "UNETLoader", "widgets_values": ["wan2.1_t2v_1.3B_fp16.safetensors", "default"]},
         {"id": 2, "type": "CLIPLoader", "widgets_values": ["umt5_xxl_fp16.safetensors", "wan", "default"]},
         {"id": 3, "type": "EmptyHunyuanLatentVideo", "widgets_values": [832, 480, length, batch]}]
    return {"last_node_id": 3, "nodes": n, "links": [], "extra": {}, "version": 0.4}


def test_a_typed_frames_1_is_a_size_not_the_default(wan, tmp_path, capsys):
    """--frames 1 could not be told from the default: a Wan file with no size ran at 81 frames, and a workflow's
    length (and batch) won over a typed --frames 1 / --batch 1."""
    common = ("--vram", "48", "--ram", "64", "--dynamic-vram", "off", "--json")
    rc, out, _ = run(capsys, *wan, "--frames", "1", *common)
    j = json.loads(out)
    assert rc == 0 and (j["width"], j["height"], j["frames"]) == (832, 480, 1)
    assert j["assumptions"][0].startswith("size not given: 832x480, the native size of Wan 2.1")
    rc, out, _ = run(capsys, *wan, *common)  # not typed: the native length
    assert json.loads(out)["frames"] == 81
    rc, out, _ = run(capsys, *wan, "--width", "640", "--height", "384", *common)
    assert (json.loads(out)["frames"], json.loads(out)["batch"]) == (1, 1)
    p = tmp_path / "wan.json"
    p.write_text(json.dumps(wan_workflow(33, 2)))
    models = str(Path(wan[0]).parents[1])
    rc, out, _ = run(capsys, "--workflow", str(p), "--models-dir", models, *common)
    j = json.loads(out)
    assert rc == 0 and (j["frames"], j["batch"]) == (33, 2)  # the graph's
    rc, out, _ = run(capsys, "--workflow", str(p), "--models-dir", models, "--frames", "1", "--batch", "1", *common)
    j = json.loads(out)
    assert (j["frames"], j["batch"]) == (1, 1)


def test_kept_weights_is_one_rule(monkeypatch):
    """The weights a partially loaded model keeps on the GPU: a tenth, at least 256 MiB, written once
    (verdict.kept_weights) for the outcome's floor and the partial-offload knob."""
    from gpu_garden.memory.estimate import verdict

    MiB = GiB // 1024
    bd = {"weights": 12 * GiB, "activations": 1 * GiB, "allocator_margin": 100 * MiB, "fixed": 450 * MiB}
    assert verdict.kept_weights(bd) == 12 * GiB // 10
    assert verdict.kept_weights(dict(bd, weights=1 * GiB)) == 256 * MiB
    assert verdict.partial_floor(bd) == 1 * GiB + 100 * MiB + 450 * MiB + 12 * GiB // 10
    monkeypatch.setattr(verdict, "kept_weights", lambda bd: 3 * GiB)
    assert verdict.partial_floor(bd) == 1 * GiB + 100 * MiB + 450 * MiB + 3 * GiB


def test_knob_partial_offload_uses_the_kept_weights(flux, capsys, monkeypatch):
    from gpu_garden.memory.estimate import verdict

    # 24 GiB: the sample phase is the peak (on 48 GiB, fix66a, the decode with FLUX.1 still loaded beside it is)
    args = (*flux, "--width", "1024", "--height", "1024", "--vram", "24", "--ram", "64", "--dynamic-vram", "off", "--json")
    monkeypatch.setattr(verdict, "kept_weights", lambda bd: bd["weights"] - GiB)  # all but 1 GiB stays on the GPU
    _, out, _ = run(capsys, *args)
    knob = next(k for k in json.loads(out)["knobs"] if k["id"] == "partial_offload")
    assert knob["note"] == "needs about 1.00 GiB of free host RAM"



def test_the_model_sub_folder_check_is_one_helper(tmp_path, monkeypatch):
    """models_folder (is it the ComfyUI folder?) and estimate_workflow's hint (none of the sub-folders) ask
    workflow.has_model_folders, the one place (estimate_workflow repeated the check)."""
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.estimate import workflow

    wf = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev.safetensors"}}}
    assert not workflow.has_model_folders(tmp_path)
    with pytest.raises(UserError, match=r"\(it has none of checkpoints/.*give your ComfyUI/models folder\): flux1-dev"):
        workflow.estimate_workflow(wf, tmp_path)
    (tmp_path / "models" / "vae").mkdir(parents=True)
    assert workflow.models_folder(tmp_path)[0] == tmp_path / "models"
    monkeypatch.setattr(workflow, "has_model_folders", lambda d: True)
    assert workflow.models_folder(tmp_path) == (tmp_path, None)
    with pytest.raises(UserError) as exc:
        workflow.estimate_workflow(wf, tmp_path)
    assert "none of checkpoints/" not in str(exc.value)


# ComfyUI 0.8.0's own defaults, typed from its sources (comfy_extras/nodes_*.py), where the family has such a node
COMFY_DEFAULTS = {
    "sd1": (512, 512, 1),              # nodes.py EmptyLatentImage
    "sd3": (1024, 1024, 1),            # EmptySD3LatentImage
    "flux2": (1024, 1024, 1),          # EmptyFlux2LatentImage
    "hunyuan-image": (2048, 2048, 1),  # EmptyHunyuanImageLatent
    "wan21": (832, 480, 81),           # WanImageToVideo
    "wan22": (1280, 704, 49),          # Wan22ImageToVideoLatent
    "hunyuan-video": (848, 480, 25),   # EmptyHunyuanLatentVideo
    "ltxv": (768, 512, 97),            # EmptyLTXVLatentVideo
    "mochi": (848, 480, 25),           # EmptyMochiLatentVideo
    "cosmos": (1280, 704, 121),        # EmptyCosmosLatentVideo
}


def test_native_size_is_comfyui_s_default():
    from gpu_garden.memory.estimate import spec

    assert {k: spec.NATIVE_SIZE[k] for k in COMFY_DEFAULTS} == COMFY_DEFAULTS


def test_wan22_without_a_size_takes_wan22_image_to_video_latent_s_default(tmp_path, capsys):
    f = layouts.write_sparse("wan_wan2.2_ti2v_5B_fp16", tmp_path / "wan2.2_ti2v_5B_fp16.safetensors")
    rc, out, _ = run(capsys, str(f), "--vram", "80", "--ram", "64", "--dynamic-vram", "off", "--json")
    j = json.loads(out)
    assert rc == 0 and (j["family"], j["width"], j["height"], j["frames"]) == ("wan22", 1280, 704, 49)
    assert j["assumptions"][0] == ("size not given: 1280x704, 49 frames, the native size of Wan 2.2 "
                                   "(--width/--height/--frames for another)")


@pytest.fixture
def routes(monkeypatch):
    from support.fit_stubs import fresh_node
    return fresh_node(monkeypatch, Path(__file__).parent / "stubs", "estimate_routes")


def test_the_workflow_route_carries_the_outcome(routes, tmp_path, monkeypatch):
    """The route answered `verdict` only: a graph with a file ComfyUI cannot find must say incomplete, and one over
    the budget that ComfyUI offloads must say so (the CLI's and the node's outcome), not only does not fit."""
    from gpu_garden.memory.estimate import layouts, verdict
    from gpu_garden.memory.units import GiB

    files = {"flux1-dev.safetensors": "flux_flux1-dev", "t5xxl_fp16.safetensors": "te_t5xxl_fp16",
             "clip_l.safetensors": "te_clip_l", "ae.safetensors": "vae_flux_ae"}
    paths = {n: str(layouts.write_sparse(lay, tmp_path / n)) for n, lay in files.items()}
    monkeypatch.setattr(routes, "resolve", lambda folders, name: paths.get(name))
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 64 * GiB)
    graph = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev.safetensors", "weight_dtype": "default"}},
             "2": {"class_type": "DualCLIPLoader", "inputs": {"clip_name1": "t5xxl_fp16.safetensors",
                                                              "clip_name2": "clip_l.safetensors", "type": "flux"}},
             "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
             "4": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    monkeypatch.setattr("gpu_garden.nodes.estimate.dynamic_vram_mode", lambda: "off")
    out = routes.estimate_graph({"workflow": graph, "vram_gb": 12})
    assert out["verdict"] == "does not fit" and out["outcome"]["status"] == "runs with offload"
    assert round(out["outcome"]["offloaded"] / GiB, 2) == 11.38
    graph["5"] = {"class_type": "LoraLoaderModelOnly", "inputs": {"lora_name": "my_lora.safetensors", "strength_model": 1.0}}
    out = routes.estimate_graph({"workflow": graph, "vram_gb": 12})
    # cliZ H: a LoRA is never counted, so its absence leaves the outcome as it was (a note says it is missing)
    assert out["missing"] == [] and out["outcome"]["status"] == "runs with offload"
    assert any("my_lora.safetensors (LoraLoaderModelOnly; looked in loras/)" in a for a in out["assumptions"])
    graph["3"]["inputs"]["vae_name"] = "other_ae.safetensors"  # a counted file not found: incomplete
    out = routes.estimate_graph({"workflow": graph, "vram_gb": 12})
    assert out["missing"] == ["other_ae.safetensors"]
    assert out["outcome"] == {"status": "incomplete", "offloaded": 0, "reason": "1 model file not found"}
