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
