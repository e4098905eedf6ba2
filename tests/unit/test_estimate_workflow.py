"""`gpu-garden estimate --workflow WF.json --models-dir DIR`: files found from the loader nodes, sizes and CFG from
the graph, UI and API formats, extra.gpu_garden.memory written with per-tier verdicts."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.estimate import layouts, workflow
from gpu_garden.memory.units import GiB


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-dev.safetensors")
    layouts.write_sparse("te_t5xxl_fp16", d / "text_encoders" / "t5xxl_fp16.safetensors")
    layouts.write_sparse("te_clip_l", d / "clip" / "clip_l.safetensors")
    layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors")
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    return d


def ui_flux(width=1024, height=1024, batch=1, cfg=1.0, tiled=False, weight_dtype="default"):
    n = [{"id": 1, "type": "UNETLoader", "widgets_values": ["flux1-dev.safetensors", weight_dtype]},
         {"id": 2, "type": "DualCLIPLoader", "widgets_values": ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"]},
         {"id": 3, "type": "VAELoader", "widgets_values": ["ae.safetensors"]},
         {"id": 4, "type": "EmptySD3LatentImage", "widgets_values": [width, height, batch]},
         {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 20, cfg, "euler", "simple", 1.0]},
         {"id": 6, "type": "VAEDecodeTiled" if tiled else "VAEDecode", "widgets_values": [256, 64, 64, 8] if tiled else []}]
    return {"last_node_id": 6, "nodes": n, "links": [], "extra": {}, "version": 0.4}


def run(tmp_path, wf, *args, capsys):
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    rc = cli.main(["estimate", "--workflow", str(p), *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_ui_workflow_finds_files_and_sizes(models, tmp_path, capsys):
    rc, out = run(tmp_path, ui_flux(1024, 768, batch=2), "--models-dir", str(models), "--vram", "24", capsys=capsys)
    assert out["family"] == "flux1" and (out["width"], out["height"], out["batch"]) == (1024, 768, 2)
    assert sorted(out["workflow"]["files"]) == ["ae.safetensors", "clip_l.safetensors", "flux1-dev.safetensors", "t5xxl_fp16.safetensors"]
    assert out["cfg"] is False and out["workflow"]["cfg_from_graph"] is False     # cfg 1.0 in the KSampler
    assert {"text_encode", "sample", "vae_decode"} <= set(out["phases"])
    assert [t["gb"] for t in out["tiers"]] == [8, 12, 16, 24, 32, 48, 80]
    v = {t["gb"]: t["verdict"] for t in out["tiers"]}
    assert v[8] == "does not fit" and v[48] == "fits"


def test_graph_settings_change_the_estimate(models, tmp_path, capsys):
    _, base = run(tmp_path, ui_flux(), "--models-dir", str(models), "--vram", "80", capsys=capsys)
    _, cfg = run(tmp_path, ui_flux(cfg=3.5), "--models-dir", str(models), "--vram", "80", capsys=capsys)
    _, fp8 = run(tmp_path, ui_flux(weight_dtype="fp8_e4m3fn"), "--models-dir", str(models), "--vram", "80", capsys=capsys)
    _, tiled = run(tmp_path, ui_flux(tiled=True), "--models-dir", str(models), "--vram", "80", capsys=capsys)
    assert cfg["latent"]["batch_in_model"] == 2 and base["latent"]["batch_in_model"] == 1
    assert cfg["breakdown"]["sample"]["activations"] > 1.8 * base["breakdown"]["sample"]["activations"]
    assert fp8["breakdown"]["sample"]["weights"] == pytest.approx(base["breakdown"]["sample"]["weights"] / 2, rel=0.01)
    assert tiled["vae"]["tiled"] and tiled["phases"]["vae_decode"] < base["phases"]["vae_decode"]


def test_api_format_and_missing_files(models, tmp_path, capsys):
    api = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}},
           "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 768, "batch_size": 4}},
           "6": {"class_type": "VAELoader", "inputs": {"vae_name": "missing_vae.safetensors"}},
           "3": {"class_type": "KSampler", "inputs": {"cfg": 7.0, "model": ["4", 0]}}}
    rc, out = run(tmp_path, api, "--models-dir", str(models), "--vram", "12", capsys=capsys)
    assert out["family"] == "sd1" and (out["width"], out["height"], out["batch"]) == (512, 768, 4) and out["cfg"]
    assert out["workflow"]["missing"] == ["missing_vae.safetensors"]
    assert any("missing_vae.safetensors" in a for a in out["assumptions"])
    p = tmp_path / "api.json"
    p.write_text(json.dumps(api))
    assert cli.main(["estimate", "--workflow", str(p), "--models-dir", str(models), "--write", str(tmp_path / "o.json")]) == 2
    assert "API-format" in capsys.readouterr().err


def test_write_puts_the_requirement_in_the_workflow(models, tmp_path, capsys):
    out_path = tmp_path / "shared.json"
    run(tmp_path, ui_flux(), "--models-dir", str(models), "--vram", "24", "--write", str(out_path), capsys=capsys)
    wf = json.loads(out_path.read_text())
    mem = wf["extra"]["gpu_garden"]["memory"]
    assert mem["family"] == "flux1" and mem["min_vram_gb"] == 24 and mem["peak"] > 22 * GiB
    assert [t["gb"] for t in mem["tiers"]] == [8, 12, 16, 24, 32, 48, 80]
    assert len(wf["nodes"]) == 6                               # the graph itself is untouched


@pytest.mark.parametrize("content", [b"\xff\xfe not json", b"[1, 2]", b'{"foo": 1}'])
def test_bad_workflows_are_one_line_errors(tmp_path, capsys, content):
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    assert cli.main(["estimate", "--workflow", str(p), "--models-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_nothing_found_says_where_it_looked(models, tmp_path, capsys):
    wf = ui_flux()
    wf["nodes"][0]["widgets_values"][0] = "nope.safetensors"
    for n in wf["nodes"][1:3]:
        n["widgets_values"] = ["x.safetensors"]
    rc, _ = 2, None
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    assert cli.main(["estimate", "--workflow", str(p), "--models-dir", str(tmp_path)]) == 2
    assert "nope.safetensors" in capsys.readouterr().err
    assert workflow.read(wf, None)["size"] == (1024, 1024, 1, 1)


def test_names_stay_inside_the_models_folder(models, tmp_path):
    """A shared workflow naming an absolute or ../ path is looked up inside --models-dir, as ComfyUI's
    folder_paths.get_full_path does, never opened where it points."""
    outside = tmp_path / "outside.safetensors"
    layouts.write_sparse("vae_flux_ae", outside)
    for name in (str(outside), f"../../{tmp_path.name}/outside.safetensors", "../vae/ae.safetensors"):
        assert workflow.find_file(models / "clip", ["sub"], name) is None, name
    # a sub-folder inside the models folder is still found, and '..' that stays inside resolves like ComfyUI's
    assert workflow.find_file(models, ["vae"], "x/../ae.safetensors") == models / "vae" / "ae.safetensors"
    assert workflow.find_file(models, ["vae"], "/ae.safetensors") == models / "vae" / "ae.safetensors"


# fixR (ux50 S3 on the --workflow path): FLUX.1's 16-channel latent with SDXL's 4-channel VAE in the VAELoader is the
# run ComfyUI fails at VAE Decode after sampling; `estimate FILE...` refused it, `--workflow` printed a decode figure.
# Breaking it: the families.check_vae_channels call out of workflow.estimate_workflow
def test_a_workflow_whose_vae_cannot_decode_the_latent_is_refused(models, tmp_path, capsys):
    layouts.write_sparse("vae_sdxl_vae", models / "vae" / "sdxl_vae.safetensors")
    wf = ui_flux()
    wf["nodes"][2]["widgets_values"] = ["sdxl_vae.safetensors"]
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    rc = cli.main(["estimate", "--workflow", str(p), "--models-dir", str(models), "--vram", "24"])
    out, err = capsys.readouterr()
    assert rc == 2 and not out
    assert "sdxl_vae.safetensors: a 4-channel VAE cannot decode FLUX.1's 16-channel latent" in err, err
    # the open graph's route (the node's face) goes through the same estimate_workflow: the same words
    with pytest.raises(Exception, match="a 4-channel VAE cannot decode FLUX.1's 16-channel latent"):
        workflow.estimate_workflow(wf, None, resolve=lambda folders, name: str(
            next((models / f / name for f in folders if (models / f / name).exists()), None) or "") or None,
            width=1024, height=1024)
