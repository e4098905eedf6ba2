"""benchmarks/triage_calibration: score buckets, wrong-and-confident and the `shown` count, on hand-made rows."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import triage_calibration as C  # noqa: E402


def _r(score, right, second=None, expect="activations", got="weights-exceed-vram"):
    return {"score": score, "right": right, "second": second, "expect": expect, "got": got if not right else expect}


ROWS = [_r(0.95, True), _r(0.92, False), _r(1.0, False), _r(0.72, True), _r(0.55, False, second="activations"),
        _r(0.62, True), _r(0.45, False, second="activations"), _r(0.35, False), _r(0.0, False, got=None)]


def test_buckets_count_cases_and_right_and_skip_the_unrecognised():
    t = C.table(ROWS, 0.5)
    b = {x["bucket"]: (x["cases"], x["right"]) for x in t["buckets"]}
    assert b["0.9-1.0"] == (3, 1) and b["0.7-0.8"] == (1, 1) and b["0.6-0.7"] == (1, 1)
    assert b["0.5-0.6"] == (1, 0) and b["0.4-0.5"] == (1, 0) and b["0.3-0.4"] == (1, 0)
    assert t["not_recognised"] == 1 and t["n"] == 9 and t["right"] == 3


def test_wrong_and_confident_right_but_uncertain_and_shown_follow_the_threshold():
    a = C.at(ROWS, 0.5)
    # confident: 0.95 0.92 1.0 0.72 0.55 0.62; wrong among them: 0.92 1.0 0.55
    assert (a["confident"], a["wrong_and_confident"], a["uncertain"], a["right_but_uncertain"]) == (6, 3, 2, 0)
    assert a["shown"] == 3 + 1                      # 0.45 is uncertain with the right cause second
    a = C.at(ROWS, 0.7)
    assert (a["confident"], a["wrong_and_confident"], a["uncertain"], a["right_but_uncertain"]) == (4, 2, 4, 1)
    assert a["shown"] == 3 + 2                      # 0.55 now uncertain too, its runner-up right


def _p(points, right, expect="activations"):
    """A case as kept at first sight: the points of each cause that fired, best first."""
    return {"score": 1.0, "right": right, "expect": expect, "got": points[0][0],
            "second": points[1][0] if len(points) > 1 else None, "points": points}


PTS = [_p([("other", 1.0)], False),                                  # a generic row alone: 1.0 -> 0.57 at 0.75
       _p([("activations", 1.5)], True),                             # 1.5 alone -> 0.67
       _p([("activations", 4.0)], True),                             # 4.0 alone -> 0.84
       _p([("weights-exceed-vram", 3.0), ("activations", 1.5)], False),   # 3.0 / 5.25 = 0.57, the right cause second
       {"score": 0.0, "right": False, "expect": "activations", "got": None, "second": None, "points": []}]


def test_a_prior_mass_rescores_from_the_points_and_keeps_the_ranking():
    s = C.with_prior(PTS, 0.75)
    assert [r["score"] for r in s] == [0.57, 0.67, 0.84, 0.57, 0.0]
    assert s[3]["second_score"] == 0.29 and [r["got"] for r in s] == [r["got"] for r in PTS]
    assert [r["score"] for r in C.with_prior(PTS, 0.0)][:4] == [1.0, 1.0, 1.0, 0.67]


def test_the_prior_sweep_counts_the_flags_that_are_wrong(monkeypatch):
    monkeypatch.setattr(C, "PRIORS", (0.0, 0.75))
    none, mass = C.prior_sweep("hand rows", PTS, 0.7)
    # without: confident 1.0 1.0 1.0 (one wrong), uncertain 0.67 (wrong, its runner-up right): flag errors 1
    assert (none["wrong_and_confident"], none["right_but_uncertain"], none["flag_errors"], none["shown"]) == (1, 0, 1, 3)
    # at 0.75: only 0.84 confident (right); 0.57 wrong, 0.67 right, 0.57 wrong (runner-up right) uncertain: flag errors 1
    assert (mass["wrong_and_confident"], mass["right_but_uncertain"], mass["flag_errors"], mass["shown"]) == (0, 1, 1, 3)


def test_the_chosen_prior_is_the_sweeps_minimum_not_the_constant():
    # catches: "chosen" read from rank.NOT_DETERMINED instead of the sweep (the 0.70/0.75 tie is kept, both named)
    sweep = [{"prior": 0.0, "flag_errors": 9}, {"prior": 0.7, "flag_errors": 4}, {"prior": 0.75, "flag_errors": 4},
             {"prior": 1.0, "flag_errors": 5}]
    assert C.best_priors(sweep) == [0.7, 0.75]
    assert C.best_priors(sweep[::-1][:2]) == [0.75]


def test_shares_are_recomputed_from_the_points_whatever_score_was_stored():
    # a batch recorded with the prior stored 0.57 for a lone 1.0; an older one stored 1.0: the same row, one scale
    mixed = [dict(PTS[0], score=0.57), dict(PTS[0], score=1.0), dict(PTS[3], score=0.57, second_score=0.29)]
    assert [(r["score"], r["second_score"]) for r in C.shares(mixed)] == [(1.0, 0.0), (1.0, 0.0), (0.67, 0.33)]


def test_the_scorer_keeps_each_causes_points_beside_its_score():
    # SCORE_MANY runs in a subprocess at each rules commit; its wrapper of rank.ranked is exercised here on its own
    src = C.SCORE_MANY
    ns = {}
    exec(src[src.index("def keep("):src.index("try:")], ns)
    ranked = ns["keep"](lambda points, evidence: [{"id": c, "confidence": 0.5} for c in points],
                        lambda points, evidence: points)
    out = ranked({"activations": 1.5, "other": -0.2}, {})
    assert out == [{"id": "activations", "confidence": 0.5, "points": 1.5}, {"id": "other", "confidence": 0.5, "points": 0}]
