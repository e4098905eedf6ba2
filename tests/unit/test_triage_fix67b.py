"""fix67b: audit aud67b's ComfyUI reading findings (issue 14, classes 2, 5, 6, 8). Each test was run on the code before
its fix and failed there unless it says it is a regression check.

The logs under data/fix67b are the auditor's, modelled on public threads (numbers exact, prose and paths rewritten);
data/fix67b/README.md names each one's thread.
"""
from pathlib import Path

from gpu_garden.memory.triage import engine

DATA = Path(__file__).resolve().parent / "data" / "fix67b"


def _answer(name):
    res = engine.triage_text((DATA / name).read_text(encoding="utf-8"))
    ev = res["events"][res["headline"]]
    return res, {c["id"]: c["confidence"] for c in ev["causes"]}


# --- 1. (aud #3) the tiny-card row stands aside in a training step ---------------------------------------------------

def test_tiny_card_training_step_reads_activations():
    """loss.backward() on the stack of a 2 GiB card: the weights were placed and ran forward; the batch is what failed
    (was weights-exceed-vram 63 %, uncertain)."""
    res, conf = _answer("c5_2gib_training_batch.log")
    assert res["cause"] == "activations" and not res.get("uncertain"), (res["cause"], conf)
    assert "weights-exceed-vram" not in conf or conf["weights-exceed-vram"] < 20, conf


def test_tiny_card_training_bogus_free_leads_with_the_impossible_figure():
    """17179869183.96 GiB free on a 2 GiB card in a training step: the impossible figure leads (was weights 43 %)."""
    res, conf = _answer("c5_bogus_free_old_torch.log")
    assert res["cause"] == "other", (res["cause"], conf)
    assert "weights-exceed-vram" not in conf or conf["weights-exceed-vram"] < 20, conf
