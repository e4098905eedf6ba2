"""fix67h: review rev67c's findings on the fix67b and tri87 merges (issue 14). Each test was run on the code before its
fix and failed there unless it says it is a regression check. Every test goes through the whole scan (engine.triage_text).

The logs under data/fix67h are the reviewer's, modelled on public threads (numbers exact, prose and paths rewritten);
data/fix67h/README.md names each one's thread.
"""
from pathlib import Path

from gpu_garden.memory.triage import engine

DATA = Path(__file__).resolve().parent / "data" / "fix67h"


def _answer(name):
    res = engine.triage_text((DATA / name).read_text(encoding="utf-8"))
    ev = res["events"][res["headline"]]
    return res, {c["id"]: c["confidence"] for c in ev["causes"]}


# --- F1: the tiny-card weights row stands aside in a training step, not for a training log line alone ----------------

def test_train_script_failing_in_model_to_device_reads_weights():
    """train.py fails in model.to(device) on a 1.96 GiB card: no step ran, the weights did not fit (was uncertain,
    weights-exceed-vram 57 %)."""
    res, conf = _answer("f1_train_to_device_2gib.log")
    assert res["cause"] == "weights-exceed-vram" and not res.get("uncertain"), conf
    assert conf["weights-exceed-vram"] >= 0.75, conf


def test_run_script_control_reads_weights():
    """Regression check: the same log with run.py (no training word) read weights-exceed-vram 80 % before and after."""
    res, conf = _answer("f1_ctrl_run_to_device_2gib.log")
    assert res["cause"] == "weights-exceed-vram" and conf["weights-exceed-vram"] >= 0.75, conf


def test_comfy_trainlora_loading_the_model_reads_weights_firmly():
    """ComfyUI's TrainLoraNode loads the whole model first (comfy_extras/nodes_train.py:991, load_models_gpu) on a
    512 MiB APU: no step ran (was weights-exceed-vram 74 %, now as without the training node)."""
    res, conf = _answer("f1b_comfy_trainlora_load_512m.log")
    assert res["cause"] == "weights-exceed-vram" and conf["weights-exceed-vram"] >= 0.8, conf
