"""benchmarks/kv_fits_classes.py (docs/kv-accuracy.md Round 106): the edge verdict's scoring and the class letters."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import kv_fits_classes as F  # noqa: E402


def test_edge_verdict_agrees_only_in_the_direction_it_names():
    # kv: fits by 0.5 % of the budget (inside the 1 % band): "at the edge, may not fit"
    assert F.edge_agrees(True, False, 0.005) is True    # the runtime refused: the direction named
    assert F.edge_agrees(True, True, 0.005) is False    # the run started: scored as disagreeing
    # outside the band kv's own verdict is scored as bench_llm scores it
    assert F.edge_agrees(True, True, 0.02) is True
    assert F.edge_agrees(True, False, 0.02) is False
    # below kv's line the verdict stays "does not fit": a started run still disagrees, whatever its distance
    assert F.edge_agrees(False, True, -0.001) is False
    assert F.edge_agrees(False, False, -0.001) is True
    # no headroom figure (a vLLM pool below one request): kv's verdict stands
    assert F.edge_agrees(True, False, None) is False


def test_every_class_is_one_of_the_four():
    assert set(F.CLASSES.values()) <= {"a", "b", "c", "d"}
