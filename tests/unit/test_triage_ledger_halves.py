"""benchmarks/triage_ledger.halves: the split-half figures the README's round-11 table shows, summed from the ledger."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import triage_ledger as T  # noqa: E402


def _b(num, n, fs, reg=None):
    b = {"batch": f"batch-{num:02d}", "n": n, "first_sight_correct": fs}
    if reg is not None:
        b.update(tuned_on="x", regression=[{"correct": reg - 1}, {"correct": reg}])  # the latest record counts
    return b


def test_halves_sum_first_sight_and_latest_regression_per_range():
    ledger = {"batches": [_b(1, 10, 4, 9), _b(15, 5, 2, 5), _b(16, 8, 3, 6), _b(30, 2, 1, 2), _b(31, 7, 6),
                          _b(34, 3, 1, 2), _b(35, 4, 2, 3), _b(36, 6, 1, 5)]}
    h = T.halves(ledger)
    assert h["a"] == {"batches": "01-15", "n": 15, "first_sight_correct": 6, "regression_correct": 14}
    assert h["b"] == {"batches": "16-30", "n": 10, "first_sight_correct": 4, "regression_correct": 8}
    assert h["c"] == {"batches": "31-34", "n": 10, "first_sight_correct": 7, "regression_correct": None}  # 31 untuned
    assert h["d"] == {"batches": "35-36", "n": 10, "first_sight_correct": 3, "regression_correct": 8}


def test_a_half_with_an_untuned_batch_has_no_regression_figure():
    h = T.halves({"batches": [_b(2, 10, 4, 9), _b(3, 4, 1)]})
    assert h["a"]["regression_correct"] is None and h["a"]["n"] == 14


def test_sampled_batches_have_their_own_first_sight_figure():
    ledger = {"batches": [dict(_b(80, 5, 1), protocol="targeted"), dict(_b(83, 8, 6), protocol="sampled"),
                          _b(81, 4, 4), dict(_b(84, 2, 1), protocol="sampled")]}
    t = T.totals(ledger, {})
    assert t["first_sight_sampled_batches"] == ["batch-83", "batch-84"]
    assert (t["first_sight_sampled_cases"], t["first_sight_sampled_correct"], t["first_sight_sampled_pct"]) == (10, 7, 70.0)
    assert (t["first_sight_cases"], t["first_sight_correct"]) == (19, 12)  # the overall figure still counts every batch


def test_no_sampled_batch_gives_no_sampled_percentage():
    t = T.totals({"batches": [_b(80, 5, 1)]}, {})
    assert t["first_sight_sampled_cases"] == 0 and t["first_sight_sampled_pct"] is None


def test_sampled_needs_record():
    import pytest
    with pytest.raises(SystemExit):
        T.main(["--sampled"])
