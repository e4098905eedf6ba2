"""fix66c: audit aud66b's guide and command findings (issue 14). These change what a guide and its commands say, never
which cause is named (test_triage_unseen keeps the answers). Each test was run on the code before its fix and failed
there unless it says it is a regression check.

The logs under data/fix66c are the auditor's, modelled on public threads (numbers exact, prose and paths rewritten):
  dml_comfy_rx5500xt.log       Comfy-Org/ComfyUI#3869 (a 58982400-byte tensor under --directml on an RX 5500 XT)
  dml_a1111_amdgpu.log         lshqqytiger/stable-diffusion-webui-amdgpu#592 (4915840 bytes, --use-directml)
  dml_script_lstm.log          microsoft/DirectML#355 (nn-morse's LSTM, 81544192 bytes, Radeon VII)
  report_dualclip_desktop.log  Comfy-Org/ComfyUI#6693 (ComfyUI Desktop 0.3.13, DualCLIPLoader "Allocation on device")
"""
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine

DATA = Path(__file__).resolve().parent / "data" / "fix66c"
PORTABLE = r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"


def _answer(text):
    res = engine.triage_text(text)
    return res["cause"], res["events"][res["headline"]]


def _log(name):
    return (DATA / name).read_text(encoding="utf-8")


# --- 1. (finding 4) DirectML: the launch keeps --directml; no ComfyUI line for a script or the WebUI ---------------------

def test_directml_comfyui_launch_keeps_directml():
    """ComfyUI only uses a DirectML card with --directml (comfy/cli_args.py:88); the old line was the portable build's
    without it, so the printed fix ran ComfyUI on no GPU at all."""
    cause, ev = _answer(_log("dml_comfy_rx5500xt.log"))
    assert ev["guide"]["id"] == "directml"
    cmds = [c["text"] for c in ev["guide"]["commands"]]
    assert cmds and all(c.split()[-3:] == ["--directml", "--lowvram", "--use-split-cross-attention"] for c in cmds), cmds


@pytest.mark.parametrize("name", ["dml_a1111_amdgpu.log", "dml_script_lstm.log"])
def test_directml_outside_comfyui_prints_no_comfyui_launch(name):
    cause, ev = _answer(_log(name))
    g = ev["guide"]
    assert g["id"] == "directml" and ev["runtime"] != "comfyui"
    assert "main.py" not in g["markdown"] and not g["commands"], g["commands"]
    assert "Fix 1 - smaller work per step" in g["markdown"]
