"""fix68c (issue 15 item 5): the latent walk through more of ComfyUI 0.8.0's core latent nodes (latent_shape.py), the
uncertain size written by `estimate --write`, PyYAML as an optional extra."""
import json

from gpu_garden.memory import cli
from gpu_garden.memory.estimate import layouts, workflow, workflow_write


def _o(name, *links):
    return {"name": name, "links": list(links), "type": name}


def _i(name, link, typ=None):
    return {"name": name, "link": link, **({"type": typ} if typ else {})}


KSW = [1, "fixed", 20, 7.0, "euler", "normal", 1.0]


def _ui(between, links, latent_link):
    """SD1.5 checkpoint (1), EmptyLatentImage 512x512 (2), the nodes `between`, a KSampler (3) on link latent_link,
    decoded (4) and saved (5)."""
    return {"last_node_id": 40, "last_link_id": 40,
            "nodes": [{"id": 1, "type": "CheckpointLoaderSimple", "outputs": [_o("MODEL", 1), _o("CLIP"), _o("VAE", 5)],
                       "widgets_values": ["sd15.safetensors"]},
                      {"id": 2, "type": "EmptyLatentImage", "outputs": [_o("LATENT", 2)], "widgets_values": [512, 512, 1]},
                      {"id": 3, "type": "KSampler", "inputs": [_i("model", 1), _i("latent_image", latent_link, "LATENT")],
                       "outputs": [_o("LATENT", 3)], "widgets_values": KSW},
                      {"id": 4, "type": "VAEDecode", "inputs": [_i("samples", 3), _i("vae", 5)], "outputs": [_o("IMAGE", 4)]},
                      {"id": 5, "type": "SaveImage", "inputs": [_i("images", 4)], "outputs": [], "widgets_values": ["x"]},
                      *between],
            "links": [[1, 1, 0, 3, 0, "MODEL"], [3, 3, 0, 4, 0, "LATENT"], [4, 4, 0, 5, 0, "IMAGE"],
                      [5, 1, 2, 4, 1, "VAE"], *links],
            "extra": {"ds": {"scale": 1, "offset": [0, 0]}}, "version": 0.4}


NN = {"id": 40, "type": "NNLatentUpscale", "inputs": [_i("latent", 2, "LATENT")], "outputs": [_o("LATENT", 40)],
      "widgets_values": ["SD 1.x", 2.0]}


def _models(tmp_path):
    d = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    return d


def test_write_carries_the_uncertain_size_and_is_idempotent(tmp_path, capsys):
    """Item 2: a custom NNLatentUpscale on the sampler's latent: the CLI says the size is uncertain; --write put no
    such caveat in extra.gpu_garden.memory (old code: no size_uncertain key). The written file is a workflow again
    (JSON, workflow_write.is_workflow, load; the frontend's zExtra schema is .passthrough(): frontend 1.35.9
    index-azSeANjR.js, unknown extra keys kept), estimates the same, and a second --write of it gives the same bytes."""
    models = _models(tmp_path)
    src, out = tmp_path / "wf.json", tmp_path / "shared.json"
    src.write_text(json.dumps(_ui([NN], [[2, 2, 0, 40, 0, "LATENT"], [40, 40, 0, 3, 1, "LATENT"]], 40)))
    argv = ["--models-dir", str(models), "--vram", "12", "--ram", "32", "--write", str(out)]
    assert cli.main(["estimate", "--workflow", str(src), *argv]) == 0
    assert "uncertain" in capsys.readouterr().out
    first = out.read_bytes()
    mem = json.loads(first)["extra"]["gpu_garden"]["memory"]
    assert mem["size_uncertain"] == [{"node": "NNLatentUpscale (node 40)", "type": "NNLatentUpscale"}]
    wf = workflow.load(out)
    assert workflow_write.is_workflow(wf) and wf["extra"]["ds"] == {"scale": 1, "offset": [0, 0]}
    assert cli.main(["estimate", "--workflow", str(out), *argv]) == 0
    capsys.readouterr()
    assert out.read_bytes() == first


def test_write_has_no_caveat_where_the_size_is_certain(tmp_path, capsys):
    """No node on the latent path the estimate does not size: no size_uncertain key (the file as before)."""
    models = _models(tmp_path)
    src, out = tmp_path / "wf.json", tmp_path / "shared.json"
    src.write_text(json.dumps(_ui([], [[2, 2, 0, 3, 1, "LATENT"]], 2)))
    assert cli.main(["estimate", "--workflow", str(src), "--models-dir", str(models), "--vram", "12", "--ram", "32",
                     "--write", str(out)]) == 0
    capsys.readouterr()
    assert "size_uncertain" not in json.loads(out.read_text())["extra"]["gpu_garden"]["memory"]


def test_pyyaml_is_an_optional_extra_and_the_error_says_how(tmp_path, monkeypatch):
    """Item 3: pyproject.toml declares PyYAML as the optional extra `yaml` (and the tests' extra: the yaml tests read
    one), and reading an extra_model_paths.yaml without it names that pip command. Old code: no such extra; the message
    said `pip install pyyaml` only."""
    import sys
    import tomllib
    from pathlib import Path

    import pytest

    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.estimate import model_paths

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["yaml"] == ["pyyaml"] and "pyyaml" in extras["test"]
    y = tmp_path / "extra_model_paths.yaml"
    y.write_text("a:\n  base_path: .\n  checkpoints: ckpt\n")
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml fails
    with pytest.raises(UserError) as exc:
        model_paths.read_yaml(y)
    assert "pip install pyyaml" in str(exc.value) and "pip install '.[yaml]'" in str(exc.value)
