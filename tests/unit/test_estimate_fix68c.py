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


# item 1: API prompts: an SD1.5 checkpoint (4), EmptyLatentImage 512x768 (5), the nodes `between` ({id: (type,
# inputs)}), a KSampler (3) on `latent`, decoded (8) and saved (9)
KS = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 1.0,
      "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}


def _api(between, latent):
    g = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}},
         "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 768, "batch_size": 1}},
         "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
         "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=latent)},
         "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
         "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}
    g.update({k: {"class_type": t, "inputs": i} for k, (t, i) in between.items()})
    return g


def _est(tmp_path, between, latent=("20", 0)):
    est = workflow.estimate_workflow(_api(between, list(latent)), _models(tmp_path))
    return (est["width"], est["height"], est["batch"]), [u["node"] for u in est["workflow"]["size_uncertain"]], est


def test_core_nodes_that_change_the_batch_size_it(tmp_path):
    """RepeatLatentBatch x4 (nodes.py:1249-1262), LatentBatch (nodes_latent.py:269-278), BatchLatentsNode
    (nodes_post_processing.py:486-499): the sampler runs on 4 / 2 / 3 latents. Old code: batch 1 (the walk passed
    RepeatLatentBatch and LatentBatch as the same size; it stopped at BatchLatentsNode), in silence. x1: batch 1."""
    size, unsure, est = _est(tmp_path, {"20": ("RepeatLatentBatch", {"samples": ["5", 0], "amount": 4})})
    assert size == (512, 768, 4) and unsure == []
    assert any("RepeatLatentBatch (node 20) makes the latent 512x768, batch 4" in a for a in est["assumptions"])
    assert _est(tmp_path, {"20": ("RepeatLatentBatch", {"samples": ["5", 0], "amount": 1})})[:2] == ((512, 768, 1), [])
    assert _est(tmp_path, {"20": ("LatentBatch", {"samples1": ["5", 0], "samples2": ["5", 0]})})[:2] == ((512, 768, 2), [])
    three = {"latents.latent0": ["5", 0], "latents.latent1": ["5", 0], "latents.latent2": ["5", 0]}
    assert _est(tmp_path, {"20": ("BatchLatentsNode", three)})[:2] == ((512, 768, 3), [])


def test_concat_rotate_cut_change_the_sides(tmp_path):
    """LatentConcat along x (nodes_latent.py:149-169: widths added) and y; LatentRotate 90 degrees (nodes.py:1328-1339:
    H and W swapped); LatentCut of 32 latent px along x after a concat (nodes_latent.py:189-209). Old code: 512x768 each
    time (the walk stopped at them, in silence)."""
    cat = {"samples1": ["5", 0], "samples2": ["5", 0]}
    assert _est(tmp_path, {"20": ("LatentConcat", dict(cat, dim="x"))})[:2] == ((1024, 768, 1), [])
    assert _est(tmp_path, {"20": ("LatentConcat", dict(cat, dim="-y"))})[:2] == ((512, 1536, 1), [])
    assert _est(tmp_path, {"20": ("LatentRotate", {"samples": ["5", 0], "rotation": "90 degrees"})})[:2] == ((768, 512, 1), [])
    assert _est(tmp_path, {"20": ("LatentRotate", {"samples": ["5", 0], "rotation": "180 degrees"})})[:2] == ((512, 768, 1), [])
    cut = {"21": ("LatentConcat", dict(cat, dim="x")),
           "20": ("LatentCut", {"samples": ["21", 0], "dim": "x", "index": 16, "amount": 200})}
    size, unsure, est = _est(tmp_path, cut)  # 128 latent px wide, from 16: 112 of them (896 px) sampled
    assert unsure == [] and any("LatentConcat (node 21), LatentCut (node 20) make the latent 896x768, batch 1" in a for a in est["assumptions"])


def test_a_shape_the_walk_cannot_follow_is_named(tmp_path):
    """LatentConcat along t, LatentCutToBatch, LTXVAddGuide (their shape from a video latent's frames or a guide image
    the walk does not read): named as uncertain. Old code: [] (the walk stopped at them, in silence)."""
    cat = {"samples1": ["5", 0], "samples2": ["5", 0]}
    for t, ins in (("LatentConcat", dict(cat, dim="t")), ("LatentCutToBatch", {"samples": ["5", 0], "dim": "x", "slice_size": 8}),
                   ("LTXVAddGuide", {"latent": ["5", 0], "positive": ["6", 0], "negative": ["6", 0], "vae": ["4", 2],
                                     "image": ["30", 0], "frame_idx": 0, "strength": 1.0})):
        size, unsure, est = _est(tmp_path, {"20": (t, ins)})
        assert unsure == [f"{t} (node 20)"], t
        assert any(a.startswith(f"{t} (node 20): it ") and "uncertain" in a for a in est["assumptions"]), t


def test_a_custom_node_behind_a_shape_node_is_named(tmp_path):
    """NNLatentUpscale (a custom node) on samples2 of a LatentConcat, and behind a LatentRotate: named. Old code: []
    (the walk stopped at LatentConcat / LatentRotate)."""
    nn = {"10": ("NNLatentUpscale", {"version": "SD 1.x", "upscale": 2.0, "latent": ["5", 0]})}
    got = _est(tmp_path, dict(nn, **{"20": ("LatentConcat", {"samples1": ["5", 0], "samples2": ["10", 0], "dim": "x"})}))[1]
    assert got == ["NNLatentUpscale (node 10)"]
    got = _est(tmp_path, dict(nn, **{"20": ("LatentRotate", {"samples": ["10", 0], "rotation": "none"})}))[1]
    assert got == ["NNLatentUpscale (node 10)"]


def test_ui_format_widgets_are_read(tmp_path):
    """A UI workflow (widgets_values in the order ComfyUI declares the inputs): RepeatLatentBatch [3] then LatentRotate
    ["90 degrees"] on the 512x512 latent; LatentCut ["y", 0, 32]. Before the rows' widget names: their widgets were
    not read in UI format and the nodes were named as uncertain."""
    rep = {"id": 20, "type": "RepeatLatentBatch", "inputs": [_i("samples", 2, "LATENT")], "outputs": [_o("LATENT", 20)],
           "widgets_values": [3]}
    rot = {"id": 21, "type": "LatentRotate", "inputs": [_i("samples", 20, "LATENT")], "outputs": [_o("LATENT", 21)],
           "widgets_values": ["90 degrees"]}
    wf = _ui([rep, rot], [[2, 2, 0, 20, 0, "LATENT"], [20, 20, 0, 21, 0, "LATENT"], [21, 21, 0, 3, 1, "LATENT"]], 21)
    est = workflow.estimate_workflow(wf, _models(tmp_path))
    assert (est["width"], est["height"], est["batch"], est["workflow"]["size_uncertain"]) == (512, 512, 3, [])
    cut = {"id": 20, "type": "LatentCut", "inputs": [_i("samples", 2, "LATENT")], "outputs": [_o("LATENT", 20)],
           "widgets_values": ["y", 0, 32]}
    est = workflow.estimate_workflow(_ui([cut], [[2, 2, 0, 20, 0, "LATENT"], [20, 20, 0, 3, 1, "LATENT"]], 20), _models(tmp_path))
    assert est["workflow"]["size_uncertain"] == [] and any("makes the latent 512x256, batch 1" in a for a in est["assumptions"])
