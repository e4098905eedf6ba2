"""fix64 (rev63 #12): the graph-capture guide and the private-pools row name the Comfy Compiler's off switch. In 2026
ComfyUI's Comfy Compiler (comfy-aimdo, on with Dynamic VRAM) captures CUDA graphs without any compile node, so
"bypass the compile node" alone left a ComfyUI user nothing to do; the row's fix spoke of vLLM alone. Text only: the
causes and confidences are the same as before (test_the_scores_do_not_move, read on the old rules). On the old
text the guide tests, and the row's ComfyUI and no-runtime cases, fail; its vLLM case and the scores pass (regressions)."""
import re

import pytest

from gpu_garden.memory.triage import guides

from support.triage_event import top
from test_guides_facts import COMFY_NEW_FLAGS, FLAG_RE
from test_triage_tri71 import msg

FLAG = "--disable-comfy-compiler"
COMFY = "got prompt\nRequested to load Flux\n!!! Exception during processing !!! "
VLLM = "INFO 01-02 12:00:00 [gpu_model_runner.py:1] vLLM\nvllm serve x\n"


def test_the_graph_capture_guide_gives_comfyui_the_compilers_off_switch():
    r = guides.render(guides.load_all()["graph-capture"], {})
    assert {"label": "Fix 2 - ComfyUI: turn its CUDA graphs off", "text": f"python main.py {FLAG}"} in r["commands"]
    assert "bypass it and run the workflow once uncompiled" in r["markdown"]  # the compile node's fix stays


def test_every_guide_naming_a_newer_comfyui_flag_says_the_same_version():
    """One fact, one wording: a flag newer than ComfyUI 0.8.0 carries COMFY_NEW_FLAGS' version wherever a guide shows
    it, whatever runtimes the guide is for (test_guides_facts checks the ComfyUI-only guides)."""
    showing = {gid for gid, g in guides.load_all().items() if FLAG in FLAG_RE.findall(g["markdown"])}
    assert {"graph-capture", "comfyui-compiler"} <= showing
    for gid, g in guides.load_all().items():
        for flag in set(FLAG_RE.findall(g["markdown"])) & set(COMFY_NEW_FLAGS):
            assert re.search(COMFY_NEW_FLAGS[flag], g["markdown"]), (gid, flag)


def _pools_evidence(head):
    cause, conf, ev = top(head + msg())
    return conf, next(e for c in ev["causes"] if c["id"] == "graph-capture" for e in c["evidence"] if "private pools" in e)


@pytest.mark.parametrize("head,names,not_names", [
    (COMFY, [FLAG, "bypass the compile node"], ["--enforce-eager", "vLLM"]),
    (VLLM, ["--enforce-eager", "cudagraph capture list"], [FLAG]),
    ("", [FLAG, "--enforce-eager"], []),  # no runtime shown: both, plainly
])
def test_the_private_pools_row_names_the_fix_of_the_runtime_the_log_shows(head, names, not_names):
    _, text = _pools_evidence(head)
    assert all(n in text for n in names), text
    assert not any(n in text for n in not_names), text


@pytest.mark.parametrize("head,cause,conf", [
    (COMFY, "weights-exceed-vram", {"weights-exceed-vram": 0.45, "graph-capture": 0.29, "activations": 0.15}),
    (VLLM, "weights-exceed-vram", {"weights-exceed-vram": 0.32, "graph-capture": 0.32, "activations": 0.24}),
    ("", "graph-capture", {"graph-capture": 0.34, "weights-exceed-vram": 0.27, "activations": 0.26}),
])
def test_the_scores_do_not_move(head, cause, conf):
    """Text only: the answers and confidences read on the rules before fix64 (1e588652) for these three logs."""
    got = top(head + msg())
    assert (got[0], got[1]) == (cause, conf)
