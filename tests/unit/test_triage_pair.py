"""An uncertain answer's top two: a pair that fits about equally, or a likelier first with the second also possible.

rank.PAIR_RATIO (0.5) is the one threshold: the CLI (render.py), the JSON ("pair") and the panel (web/lib/oom_parts.js,
which decides from the two confidences it is sent) use it. 26 of 380 uncertain corpus answers had a second cause at a
third of the first or less and were still labelled "two causes fit about equally" (review14b lopsided_pairs.py)."""
import re
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine, rank, rules as R
from support.cli_run import unwrap
from gpu_garden.memory.triage.rules_runner_up import RUNNER_UP_ROWS

from test_triage_fixups import MPS
from test_triage_mutation import ASYNC_HELD

JS = Path(__file__).resolve().parents[2] / "web" / "lib" / "oom_parts.js"


def alts(a, b):
    return [{"id": "weights-exceed-vram", "confidence": a}, {"id": "activations", "confidence": b}]


@pytest.mark.parametrize("a, b, pair", [
    (0.60, 0.30, True),      # exactly half: a pair
    (0.60, 0.29, False),
    (0.45, 0.29, True),
    (0.64, 0.22, False),
    (0.57, None, False),     # one cause alone is never a pair
])
def test_the_second_at_half_the_first_or_more_is_a_pair(a, b, pair):
    # catches: the ratio at 1/3 or 2/3 instead of 0.5, `>` for `>=`, a lone cause called a pair
    given = alts(a, b) if b is not None else alts(a, 0)[:1]
    assert rank.pair(given) is pair


def test_the_panel_uses_the_same_ratio():
    m = re.search(r"export const PAIR_RATIO = ([\d.]+);", JS.read_text(encoding="utf-8"))
    assert m and float(m.group(1)) == rank.PAIR_RATIO == 0.5


def test_a_lopsided_answer_names_the_likelier_first():
    # MPS: weights 64 %, activations 22 % (a third): uncertain, two alternatives as before, not a pair
    res = engine.triage_text(MPS)
    assert res["uncertain"] is True and [a["id"] for a in res["alternatives"]] == ["weights-exceed-vram", "activations"]
    assert res["pair"] is False and res["events"][-1]["pair"] is False
    text = engine.render_human(res)
    assert text.splitlines()[0].startswith("Cause: uncertain: weights-exceed-vram? (activations also possible)"), text
    assert "the first is only the likelier" in text and "side by side" not in text


def test_an_even_answer_is_still_a_pair():
    # cudaMallocAsync with 8.15 GiB held outside PyTorch at a text encoder: text-encoder 45 %, other-process 29 %
    res = engine.triage_text(ASYNC_HELD, {"node_type": "CLIPTextEncode"})
    assert res["uncertain"] is True and res["pair"] is True
    text = engine.render_human(res)
    assert unwrap(text).startswith("Cause: uncertain - text-encoder (45% confidence) or other-process (29% confidence)"), text
    assert "the two that lead, side by side" in text


def test_a_stated_answer_and_a_lone_weak_one_are_no_pair(monkeypatch):
    res = engine.triage_text("ggml_new_tensor_impl: not enough space in the scratch memory\n")
    assert res["uncertain"] is False and res["pair"] is False
    # (alt1) a lone weak cause with no runner-up of rules_runner_up.py (here: those rows taken out)
    monkeypatch.setattr(R, "RULES", [r for r in R.RULES if r not in RUNNER_UP_ROWS])
    res = engine.triage_text("torch.OutOfMemoryError: Allocation on device \n")
    assert res["uncertain"] is True and len(res["alternatives"]) == 1 and res["pair"] is False
