"""benchmarks/triage_split.py's split-half counts on hand-made per-case rows: a case falls in the half of its batch
number's parity, and a move from the first run to the second is counted as fixed (wrong -> right), broken (right ->
wrong), wrong to wrong (another wrong cause) or top-2 only. The expected counts below were made by hand from the rows.
Its results file was written for the studies the script lists."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import triage_split as S  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "triage_split.json"


def row(batch, case, expect, got, top2=None):
    return {"batch": batch, "case": case, "expect": expect, "got": got, "cause_ok": got == expect,
            "top2": top2 or [[got, 0.6]]}


# (batch, case, label, before, after); batch-100 and batch-101 are read by number, not by their last digit as text
CASES = [("batch-02", "a.log", "weights", "activations", "weights"),      # even, fixed
         ("batch-02", "b.log", "activations", "activations", "weights"),  # even, broken
         ("batch-03", "c.log", "leak", "weights", "leak"),                # odd, fixed
         ("batch-03", "d.log", "other", "weights", "activations"),        # odd, wrong to wrong
         ("batch-100", "e.log", "weights", "weights", "weights"),         # even, top-2 only (set below)
         ("batch-101", "f.log", "other", "other", "other"),               # odd, nothing moved
         ("batch-100", "g.log", "kv-cache", "other", "kv-cache")]         # even, fixed


def runs():
    before = [row(b, c, e, x) for b, c, e, x, _ in CASES]
    after = [row(b, c, e, y) for b, c, e, _, y in CASES]
    before[4]["top2"], after[4]["top2"] = [["weights", 0.62], ["activations", 0.38]], [["weights", 0.55], ["activations", 0.45]]
    return {"before": before, "after": after}


def test_cases_fall_in_the_half_of_their_batch_number():
    got = S.half_counts(runs(), [("before", "after")])["score"]
    cases_right = {k: {h: (s["cases"], s["right"]) for h, s in v.items()} for k, v in got.items()}
    assert cases_right == {"before": {"even": (4, 2), "odd": (3, 1), "all": (7, 3)},
                           "after": {"even": (4, 3), "odd": (3, 2), "all": (7, 5)}}


def test_the_confusion_is_counted_each_way_by_label():
    got = S.half_counts(runs(), [("before", "after")], ("weights", "activations"))["score"]
    assert got["before"]["even"]["confused"] == {"weights_as_activations": 1, "activations_as_weights": 0}   # a.log
    assert got["after"]["even"]["confused"] == {"weights_as_activations": 0, "activations_as_weights": 1}    # b.log
    assert got["before"]["odd"]["confused"] == got["after"]["odd"]["confused"] == {"weights_as_activations": 0,
                                                                                    "activations_as_weights": 0}


def test_wrong_answers_of_one_cause_are_counted_by_label():
    # "before": c.log (leak) and d.log (other), both odd, answered weights wrongly (e.log's weights is right); "after":
    # b.log (activations, even) only
    got = S.half_counts(runs(), [("before", "after")], (), "weights")["score"]
    assert got["before"]["all"]["wrong_as"] == {"cases": 2, "labels": {"leak": 1, "other": 1}}
    assert got["before"]["even"]["wrong_as"] == {"cases": 0, "labels": {}}
    assert got["before"]["odd"]["wrong_as"] == {"cases": 2, "labels": {"leak": 1, "other": 1}}
    assert got["after"]["all"]["wrong_as"] == {"cases": 1, "labels": {"activations": 1}}
    assert "wrong_as" not in S.half_counts(runs(), [])["score"]["before"]["all"]


def test_wrong_answers_of_several_causes_are_counted_each_by_label():
    # (tri68) "before": weights named wrongly on c.log (leak) and d.log (other), other on g.log (kv-cache); "after": weights
    # on b.log (activations), activations on d.log (other), other on nothing wrongly (f.log's other is right)
    got = S.half_counts(runs(), [("before", "after")], (), None, ("weights", "other"))["score"]
    assert got["before"]["all"]["wrong_as_each"] == {"weights": {"cases": 2, "labels": {"leak": 1, "other": 1}},
                                                     "other": {"cases": 1, "labels": {"kv-cache": 1}}}
    assert got["before"]["even"]["wrong_as_each"]["other"] == {"cases": 1, "labels": {"kv-cache": 1}}
    assert got["before"]["odd"]["wrong_as_each"]["other"] == {"cases": 0, "labels": {}}
    assert got["after"]["all"]["wrong_as_each"] == {"weights": {"cases": 1, "labels": {"activations": 1}},
                                                    "other": {"cases": 0, "labels": {}}}
    assert "wrong_as_each" not in S.half_counts(runs(), [])["score"]["before"]["all"]


def test_moves_are_counted_in_the_direction_of_the_pair():
    p = S.half_counts(runs(), [("before", "after")])["pairs"]["before_after"]
    counts = {h: {m: p[h][m] for m in (*S.MOVES, "net")} for h in p}
    assert counts == {"even": {"fixed": 2, "broken": 1, "wrong_to_wrong": 0, "top2_only": 1, "net": 1},
                      "odd": {"fixed": 1, "broken": 0, "wrong_to_wrong": 1, "top2_only": 0, "net": 1},
                      "all": {"fixed": 3, "broken": 1, "wrong_to_wrong": 1, "top2_only": 1, "net": 2}}
    assert [c["case"] for c in p["even"]["cases"]["fixed"]] == ["batch-02/a.log", "batch-100/g.log"]
    assert p["odd"]["cases"]["wrong_to_wrong"] == [{"case": "batch-03/d.log", "expect": "other", "before": "weights",
                                                    "after": "activations"}]


def test_runs_out_of_step_are_refused():
    r = runs()
    r["after"] = r["after"][1:] + r["after"][:1]
    with pytest.raises(ValueError):
        S.compare(r["before"], r["after"])


def test_results_were_written_for_the_listed_studies():
    res = json.loads(RESULTS.read_text())["studies"]
    assert sorted(res) == sorted(S.STUDIES), "run python benchmarks/triage_split.py"
    for name, st in S.STUDIES.items():
        assert res[name]["commits"] == st["commits"], f"{name}'s commits changed since its results: rerun the script"
        assert sorted(res[name]["pairs"]) == sorted(f"{x}_{y}" for x, y in st["pairs"])


def test_a_prefix_subset_counts_its_runtime_s_cases_and_misses_by_label_and_answer():
    # (task llc54) hand-made rows: two llama.cpp cases per half and one of another runtime that must be left out
    rows = [row("batch-02", "llamacpp_a.log", "other", "activations"),          # even, wrong
            row("batch-02", "llamacpp_b.log", "kv-cache", "kv-cache"),          # even, right
            row("batch-02", "vllm_c.log", "other", "activations"),              # not llama.cpp
            row("batch-03", "llamacpp_d.log", "other", "activations"),          # odd, wrong
            row("batch-101", "llamacpp_e.log", "activations", None)]            # odd, none found
    got = S.subset_counts({"main": rows}, "llamacpp")["main"]
    assert got["even"] == {"cases": 2, "right": 1, "misses": {"other_as_activations": 1}}
    assert got["odd"] == {"cases": 2, "right": 0, "misses": {"activations_as_none": 1, "other_as_activations": 1}}
    assert got["all"] == {"cases": 4, "right": 1, "misses": {"other_as_activations": 2, "activations_as_none": 1}}


def test_a_label_subset_counts_the_cases_of_one_label_by_answer():
    # (task tri64) hand-made rows: kv-cache cases of any runtime, and cases of other labels that must be left out
    rows = [row("batch-02", "llamacpp_a.log", "kv-cache", "weights-exceed-vram"),   # even, wrong
            row("batch-02", "vllm_b.log", "kv-cache", "kv-cache"),                  # even, right
            row("batch-02", "vllm_c.log", "other", "kv-cache"),                     # not labelled kv-cache
            row("batch-03", "ollama_d.log", "kv-cache", "host-ram"),                # odd, wrong
            row("batch-101", "sglang_e.log", "kv-cache", None)]                     # odd, none found
    got = S.label_counts({"main": rows}, "kv-cache")["main"]
    assert got["even"] == {"cases": 2, "right": 1, "misses": {"kv-cache_as_weights-exceed-vram": 1}}
    assert got["odd"] == {"cases": 2, "right": 0, "misses": {"kv-cache_as_host-ram": 1, "kv-cache_as_none": 1}}
    assert got["all"]["cases"] == 4 and got["all"]["right"] == 1


def test_cases_with_no_answer_are_counted_per_half_and_label():
    # (task tri63) hand-made rows: got None is a log the engine found no failure in
    rows = [row("batch-02", "a.log", "host-ram", None),             # even, no answer
            row("batch-02", "b.log", "host-ram", "activations"),    # even, an answer (wrong)
            row("batch-100", "c.log", "other", None),               # even, no answer
            row("batch-03", "d.log", "host-ram", None),             # odd, no answer
            row("batch-101", "e.log", "kv-cache", "kv-cache")]      # odd, right
    got = S.half_counts({"before": rows, "after": rows}, [])["score"]["before"]
    assert (got["even"]["no_answer"], got["even"]["no_answer_by_label"]) == (2, {"host-ram": 1, "other": 1})
    assert (got["odd"]["no_answer"], got["odd"]["no_answer_by_label"]) == (1, {"host-ram": 1})
    assert (got["all"]["no_answer"], got["all"]["no_answer_by_label"]) == (3, {"host-ram": 2, "other": 1})


def test_only_one_study_replaces_its_own_entry_and_keeps_the_others():
    # (task tri73) --only NAME: the named study's entry is new, every other entry is the file's as it was
    previous = {"tw49": {"batches": 10, "score": {"x": 1}}, "tri72": {"batches": 11, "score": {"x": 2}},
                "tri73": {"batches": 12, "score": {"x": 3}}}
    out = S.merged(previous, {"tri73": {"batches": 13, "score": {"x": 4}}})
    assert out == {"tw49": {"batches": 10, "score": {"x": 1}}, "tri72": {"batches": 11, "score": {"x": 2}},
                   "tri73": {"batches": 13, "score": {"x": 4}}}
    assert S.merged({"tw49": previous["tw49"]}, {"tri73": {"batches": 13}}) == {"tw49": previous["tw49"],
                                                                              "tri73": {"batches": 13}}


def test_only_names_a_listed_study(capsys):
    with pytest.raises(SystemExit):
        S.main(["--only", "no-such-study"])
    assert "invalid choice: 'no-such-study'" in capsys.readouterr().err


def test_extract_counts_runtime_device_and_numbers_per_half():
    # (task rt66) hand-made rows; a case with no failure found (got None) has no runtime or device right, and each number it
    # declares is read wrong (unseen_corpus.score), so only one that declares none counts as numbers exact
    def x(batch, case, runtime_ok, device_ok, bad, got="activations"):
        return dict(row(batch, case, "activations", got), runtime_ok=runtime_ok, device_ok=device_ok, numbers_bad=bad)
    rows = [x("batch-02", "a.log", True, True, []),                                   # even: all three right
            x("batch-02", "b.log", False, True, ["total"]),                           # even: device only
            x("batch-100", "c.log", True, False, []),                                 # even: runtime, numbers
            x("batch-03", "d.log", False, False, ["requested"], got=None),            # odd: none found, numbers declared
            x("batch-101", "e.log", False, False, [], got=None)]                      # odd: none found, no numbers
    got = S.extract_counts({"before": rows}, [])["score"]["before"]
    pick = {h: (s["runtime_right"], s["device_right"], s["numbers_exact"]) for h, s in got.items()}
    assert pick == {"even": (2, 2, 2), "odd": (0, 0, 1), "all": (2, 2, 3)}
    assert got["even"]["cases"] == 3 and got["odd"]["cases"] == 2
