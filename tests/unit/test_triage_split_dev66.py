"""(task dev66) benchmarks/triage_split.py's "extract" counts on hand-made per-case rows: per commit and half, the cases
whose headline event's device kind, numbers and runtime are right (unseen_corpus.score's device_ok, numbers_bad empty,
runtime_ok), and per pair the cases that went wrong -> right ("gained") and right -> wrong ("lost"). The expected
counts were made by hand from the rows."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import triage_split as S  # noqa: E402


def row(batch, case, device_ok, numbers_bad, runtime_ok):
    return {"batch": batch, "case": case, "expect": "other", "got": "other", "cause_ok": True,
            "device_ok": device_ok, "numbers_bad": numbers_bad, "runtime_ok": runtime_ok}


# (batch, case, before: device, numbers_bad, runtime; after: the same)
CASES = [("batch-02", "a.log", (False, ["free"], True), (True, [], True)),           # even: device and numbers gained
         ("batch-02", "b.log", (True, [], True), (True, ["total"], False)),          # even: numbers and runtime lost
         ("batch-100", "c.log", (True, [], True), (True, [], True)),                 # even: nothing moved
         ("batch-03", "d.log", (False, ["requested"], False), (False, [], True)),    # odd: numbers and runtime gained
         ("batch-101", "e.log", (True, [], True), (False, [], True))]                # odd: device lost


def test_extract_counts_each_half_and_what_each_pair_gained_and_lost():
    runs = {k: [row(b, c, *v[i]) for b, c, *v in CASES] for i, k in enumerate(("before", "after"))}
    got = S.extract_counts(runs, [("before", "after")])
    assert got["score"]["before"]["even"] == {"cases": 3, "device_right": 2, "numbers_exact": 2, "runtime_right": 3}
    assert got["score"]["after"]["even"] == {"cases": 3, "device_right": 3, "numbers_exact": 2, "runtime_right": 2}
    assert got["score"]["before"]["odd"] == {"cases": 2, "device_right": 1, "numbers_exact": 1, "runtime_right": 1}
    assert got["score"]["after"]["odd"] == {"cases": 2, "device_right": 0, "numbers_exact": 2, "runtime_right": 2}
    assert got["score"]["after"]["all"] == {"cases": 5, "device_right": 3, "numbers_exact": 4, "runtime_right": 4}
    even, odd = got["pairs"]["before_after"]["even"], got["pairs"]["before_after"]["odd"]
    assert even == {"device_right": {"gained": 1, "lost": 0}, "numbers_exact": {"gained": 1, "lost": 1},
                    "runtime_right": {"gained": 0, "lost": 1}}
    assert odd == {"device_right": {"gained": 0, "lost": 1}, "numbers_exact": {"gained": 1, "lost": 0},
                   "runtime_right": {"gained": 1, "lost": 0}}


def test_a_study_that_asks_for_the_extract_counts_has_them_in_the_results():
    res = json.loads((ROOT / "benchmarks" / "results" / "triage_split.json").read_text())["studies"]
    for name, st in S.STUDIES.items():
        if st.get("extract") and name in res:
            assert set(res[name]["extract"]["score"]) == set(st["commits"]), f"{name}: rerun the script for its extract counts"
