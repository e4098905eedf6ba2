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
