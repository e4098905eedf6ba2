"""Task mend59 (what ux58 and mend58 left open): each test fails on the code before its fix; each names the deliberate
error that breaks it (checked by reverting)."""
import importlib
import json
import sys
from pathlib import Path

import pytest

from support.cli_run import estimate

from gpu_garden.memory.fit import plan as fit_plan

STUBS = Path(__file__).parent / "stubs"

MiB, GiB = 1 << 20, 1 << 30


@pytest.fixture
def est_node(monkeypatch):  # nodes/estimate.py over the comfy_api stubs (as test_estimate_node_helpers)
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module("gpu_garden.nodes.estimate")


# Two offload figures for one run (ux58: SD1.5 on a 2 GiB budget, the node said "1.66 GiB of weights stay in RAM", Fit to
# Card "offloaded 2.39 GiB"). They answer two questions: the estimate's is the peak over the budget, the least that must
# leave the GPU; Fit to Card's is what ComfyUI 0.8.0's loader leaves off it, since load_models_gpu keeps
# max(minimum_inference_memory() = 0.8 GiB, memory_required) + reserve free. SD1.5 at 512x512 on 2 GiB (CUDA): the U-Net's
# 1,719,041,928 B of F16, activations 136,970,240 + margin 6,848,512, context 450 MiB + reserve 400 MiB:
#   estimate: 1,719,041,928 + 136,970,240 + 6,848,512 + 471,859,200 + 419,430,400 - 2,147,483,648 = 606,666,632 B
#   loader:   kept 2,147,483,648 - 471,859,200 - 419,430,400 - 858,993,459 = 397,200,589 B, offloaded 1,321,841,339 B
# Both figures stand; each text says which it is. Breaks if the estimate's text drops "at least" or its pointer to the
# loader, or Fit to Card's drops what its loader keeps free (the old texts), or either figure moves.
def test_the_two_offload_figures_say_which_they_are(capsys, est_node):
    rc, out, _ = estimate(capsys, "sd15", "--vram", "2", "--ram", "64", "--dynamic-vram", "off", "--json")
    j = json.loads(out)
    o = j["outcome"]
    assert (rc, o["status"], o["offloaded"]) == (0, "runs with offload", 606_666_632)
    assert "at least 578.56 MiB of weights stay in RAM" in o["reason"] and "its loader keeps max(0.8 GiB, memory_required) free" in o["reason"]
    assert "at least 578.56 MiB of weights stay in RAM" in est_node.summary(j)
    bd = j["breakdown"]["sample"]
    assert bd["weights"] == 1_719_041_928
    p = fit_plan.plan(2 * GiB, weights={"diffusion_model": 1_719_041_928}, context=450 * MiB, reserve=400 * MiB,
                      memory_required=bd["activations"] + bd["allocator_margin"])
    assert (p["weights_on_gpu"], p["weights_offloaded"]) == (397_200_589, 1_321_841_339)
    assert p["summary"].startswith("kept 378.80 MiB of weights on the GPU, offloaded 1.23 GiB (ComfyUI's loader keeps "
                                   "1.19 GiB free: its 0.8 GiB minimum + reserve)")


# Block swap (mend58 left it): policy.offload_bytes read 0 while 10 of Wan2.1 1.3B's 30 blocks stay off the device (the
# bytes were only in an assumption line). One block of dim 1536, ffn 8960 in fp16 (test_estimate_block_swap.BLOCK):
# 2 x (2 x (4 x (1536^2 + 1536) + 2 x 1536) + 2 x 1536 + (1536 x 8960 + 8960 + 8960 x 1536 + 1536) + 6 x 1536) = 92,881,408 B,
# ten of them 928,814,080 B. The knobs re-run the estimate with this policy and must size the swap again, not read the
# bytes as offload bytes given beside it ("not both"). Breaks if the JSON keeps 0 (the old code) or a knob's re-run
# raises or counts the swap twice (the sample weights then move).
def test_block_swap_reports_its_offloaded_bytes(capsys):
    rc, out, err = estimate(capsys, "wan21", "--block-swap", "10", "--vram", "4", "--ram", "64", "--json")
    j = json.loads(out)
    assert (j["policy"]["offload_bytes"], j["policy"]["offload_by"], j["policy"]["block_swap"]) == (928_814_080, "block_swap", 10)
    assert j["breakdown"]["sample"]["weights"] == 2 * 1_418_996_800 - 928_814_080
    assert j["knobs"] and "not both" not in err
    rc, out, _ = estimate(capsys, "wan21", "--vram", "4", "--ram", "64", "--json")
    assert json.loads(out)["policy"]["offload_bytes"] == 0


# A dangling symlink in a models folder (ux58): ComfyUI lists it in the loader's dropdown, folder_paths.get_full_path
# skips it (isfile is False), and the open graph's estimate said "none of the workflow's model files was found" (or, with
# other files found, "not found" as if it were absent). Now that one file is named as a broken link, with the target's
# file name only (no folder of the user's), and the other models are still estimated: the open graph's route (over a
# stand-in folder_paths with ComfyUI 0.8.0's get_full_path reading) and `estimate --workflow --models-dir` say it alike.
# Breaks if resolve / find_file answer None for it (the old code), if a broken link stops the whole estimate, or if the
# text carries the models folder's path.
BROKEN = "a broken link (points to vae-ft-mse.safetensors, which does not exist)"


@pytest.fixture
def linked_models(tmp_path):
    import os

    from gpu_garden.memory.estimate import layouts

    d = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    (d / "vae" / "sd").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere" / "vae-ft-mse.safetensors", d / "vae" / "sd" / "gone.safetensors")
    wf = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}},
          "8": {"class_type": "VAELoader", "inputs": {"vae_name": "sd/gone.safetensors"}},
          "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}}}
    return d, wf


def test_a_broken_link_is_named_and_the_rest_estimated_in_the_route(monkeypatch, linked_models, tmp_path):
    from gpu_garden.memory.estimate import model_files
    from support.fit_stubs import graph_route_on

    d, wf = linked_models
    routes = graph_route_on(monkeypatch, STUBS, d)
    assert routes.resolve(["checkpoints"], "sd15.safetensors") == str(d / "checkpoints" / "sd15.safetensors")
    assert routes.resolve(["vae"], "absent.safetensors") is None
    with pytest.raises(model_files.BrokenLink) as ei:
        routes.resolve(["vae"], "sd/gone.safetensors")
    assert str(ei.value) == BROKEN
    out = routes.estimate_graph({"workflow": wf, "vram_gb": 8})
    assert out["files"] == ["sd15.safetensors"] and out["missing"] == ["sd/gone.safetensors"]
    assert out["verdict"] == "incomplete" and out["peak"] > 0
    assert f"sd/gone.safetensors: {BROKEN} (VAELoader.vae_name)" in out["assumptions"]
    # mend61: the route says each file's why, as the CLI's JSON does, for the page to show (web/lib/estimate_graph.js)
    assert out["missing_where"] == [{"name": "sd/gone.safetensors", "loader": "VAELoader.vae_name", "folders": ["vae"],
                                     "why": BROKEN}]
    assert str(tmp_path) not in json.dumps(out)


def test_a_broken_link_is_named_by_the_cli(capsys, linked_models, tmp_path):
    from support.cli_run import unwrap

    d, wf = linked_models
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    rc, out, _ = estimate(capsys, "--workflow", str(p), "--models-dir", str(d), "--vram", "8", "--json")
    j = json.loads(out)
    assert rc == 1 and j["workflow"]["missing"] == ["sd/gone.safetensors"] and j["outcome"]["status"] == "incomplete"
    assert j["workflow"]["missing_where"][0]["why"] == BROKEN and j["workflow"]["files"] == ["sd15.safetensors"]
    rc, out, _ = estimate(capsys, "--workflow", str(p), "--models-dir", str(d), "--vram", "8")
    assert f"  sd/gone.safetensors: {BROKEN}  (VAELoader.vae_name)" in unwrap(out).splitlines()
    (d / "checkpoints" / "sd15.safetensors").unlink()  # nothing found: the one error names the link the same way
    rc, _, err = estimate(capsys, "--workflow", str(p), "--models-dir", str(d), "--vram", "8")
    assert rc == 2 and f"sd/gone.safetensors: {BROKEN}" in err and "looked in vae/" not in err


# The open graph's route named a file it could not read by its full path, the user's folders in the browser (ux58):
# "/home/.../ComfyUI/models/checkpoints/sd/bad.safetensors: truncated safetensors file ...". Now as the loader's dropdown
# shows it, relative to its models folder (an extra_model_paths folder as well). Breaks if the error keeps the path.
def test_a_route_error_names_the_file_as_comfyui_shows_it(monkeypatch, tmp_path):
    import os
    import types

    from gpu_garden.memory.estimate import workflow
    from support.fit_stubs import fresh_node

    routes = fresh_node(monkeypatch, STUBS, "estimate_routes")
    models, extra = tmp_path / "ComfyUI" / "models", tmp_path / "extra" / "ckpts"
    (models / "checkpoints" / "sd").mkdir(parents=True)
    extra.mkdir(parents=True)
    (models / "checkpoints" / "sd" / "bad.safetensors").write_bytes(b"abc")
    (extra / "other.safetensors").write_bytes(b"")
    bases = {"checkpoints": [str(models / "checkpoints"), str(extra)]}
    fp = types.ModuleType("folder_paths")

    def get_full_path(folder, name):
        rel = os.path.relpath(os.path.join("/", name), "/")
        return next((os.path.join(b, rel) for b in bases.get(folder, []) if os.path.isfile(os.path.join(b, rel))), None)

    fp.get_full_path, fp.models_dir = get_full_path, str(models)
    fp.get_folder_paths = lambda folder: bases.get(folder, [str(models / folder)])
    monkeypatch.setitem(sys.modules, "folder_paths", fp)

    def graph(name):
        return {"workflow": {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": name}},
                             "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}}}}

    out, status = routes.answer(graph("sd/bad.safetensors"))
    assert status == 400 and out == {"error": "sd/bad.safetensors: truncated safetensors file (3 bytes, header length needs 8)"}
    out, status = routes.answer(graph("other.safetensors"))
    assert status == 400 and out == {"error": "other.safetensors: empty file (0 bytes)"}

    def denied(*a, **k):  # an error the route did not foresee keeps its type, its path shown the same way
        raise PermissionError(13, "Permission denied", str(models / "checkpoints" / "sd" / "bad.safetensors"))

    monkeypatch.setattr(workflow, "estimate_workflow", denied)
    out, status = routes.answer(graph("sd/bad.safetensors"))
    assert status == 400 and out == {"error": "PermissionError: [Errno 13] Permission denied: 'sd/bad.safetensors'"}


# An unknown architecture read FITS (ux58): `gpu-garden estimate` on a safetensors file no family matches gave a plain
# FITS from its weights and formula.py's generic activations, the [UNKNOWN family] flag on the header only. The verdict
# keeps its values (JSON readers and the exit code unchanged), and says what it rests on: outcome.reason (the CLI's
# verdict line, the node's face and summary, the open graph's page) and a JSON field added beside it, verdict_caveat
# (null for a known family), also in a workflow's extra.gpu_garden.memory. The file: eight 3072 x 3072 fp16 matrices,
# 8 x 3072 x 3072 x 2 = 150,994,944 B = 144.00 MiB. Breaks if the caveat is dropped from any of them or given to a
# known family.
CAVEAT = ("unknown architecture: its weights (144.00 MiB) are read from the file, its activations are generic figures, "
          "not this model's, so the peak may be off either way")


@pytest.fixture
def unknown_file(tmp_path):
    import struct

    t, off = {}, 0
    for i in range(8):
        t[f"zz_blocks.{i}.proj.weight"] = {"dtype": "F16", "shape": [3072, 3072], "data_offsets": [off, off + 18_874_368]}
        off += 18_874_368
    blob = json.dumps(t).encode()
    p = tmp_path / "mystery.safetensors"
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob)
        f.truncate(8 + len(blob) + off)
    return p


def test_an_unknown_architecture_s_verdict_says_what_it_rests_on(capsys, unknown_file, est_node, tmp_path):
    from support.cli_run import flat

    from gpu_garden.memory.estimate import formula, layouts, workflow

    args = (str(unknown_file), "--vram", "8", "--width", "1024", "--height", "1024")
    rc, out, _ = estimate(capsys, *args, "--json")
    j = json.loads(out)
    assert rc == 0 and j["unknown"] is True and j["verdict"] == "fits" and j["outcome"]["status"] == "fits"
    assert j["weights"]["diffusion_model"] == 150_994_944
    assert j["verdict_caveat"] == CAVEAT and j["outcome"]["reason"] == CAVEAT
    rc, out, _ = estimate(capsys, *args)
    assert f"verdict: FITS in 8.00 GiB (--vram), headroom " in flat(out) and f"({CAVEAT})" in flat(out)
    est = formula.judge(formula.estimate(formula.from_files([unknown_file]), 1024, 1024), 8 << 30)
    assert est_node.summary(est).endswith(f" ({CAVEAT})") and est_node.for_ui(est, "", None)["verdict_caveat"] == CAVEAT
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "mystery.safetensors"}},
          "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    west = formula.judge(workflow.estimate_workflow(wf, None, resolve=lambda f, n: str(unknown_file)), 8 << 30)
    assert workflow.metadata(west)["verdict_caveat"] == CAVEAT
    known = tmp_path / "sd15.safetensors"  # a known family: no caveat, the reason as before
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", known)
    rc, out, _ = estimate(capsys, str(known), "--vram", "8", "--json")
    j = json.loads(out)
    assert j["unknown"] is False and j["verdict_caveat"] is None and "unknown architecture" not in j["outcome"]["reason"]
    kest = formula.judge(formula.estimate(formula.from_files([known]), 512, 512), 8 << 30)
    assert "verdict_caveat" not in workflow.metadata(dict(kest, workflow={"files": []}))
