"""The tuning rounds' counts are generated (benchmarks/triage_rounds.py, review28/review30): the data table
(benchmarks/data/triage_rounds.json) and its results file (benchmarks/results/triage_rounds.json) agree round by round,
and the write-ups of rounds 71 on in docs/triage-accuracy.md type no "from N to M" count outside a <!--fig--> marker."""
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "benchmarks" / "data" / "triage_rounds.json"
RESULTS = REPO / "benchmarks" / "results" / "triage_rounds.json"
DOC = REPO / "docs" / "triage-accuracy.md"
FIRST = 71                                   # rounds up to 70 keep their typed counts (said in the doc)
# a round that never landed is noted, not written up ("**Round 81 (task tune81): not landed.**": its rule and batches are a
# later round's): no write-up of its own, so no row or figures of its own
ROUND = re.compile(r"^\*\*Round (\d+)\b(?! \(task \w+\): not landed\.)", re.MULTILINE)
FIG = re.compile(r"<!--fig (\S+) (\S+) \S+?-->.*?<!--/fig-->", re.DOTALL)
# a typed count: "from 752 to 758", "stayed 1032", and the write-ups' other phrasings (review31: they passed typed):
# "were 1080 before and 1080 after", "1135 cases" ("13 host-ram cases"), "Cases changed: 3", and a count half typed beside a figure ("from
# <!--fig ...-->752<!--/fig--> to 758"). A figure is read as the word FIG, its own digits removed
TYPED = re.compile(r"\bfrom\s+(?:\d[\d,]*|FIG)\s+to\s+\d|\bfrom\s+\d[\d,]*\s+to\s+FIG|\bstayed\s+\d"
                   r"|\b\d[\d,]*\s+before\s+and\s+(?:\d|FIG)|\bFIG\s+before\s+and\s+\d"
                   r"|\b\d+(?:,\d{3})*\s+(?:[\w-]+\s+){0,2}cases\b|\bcases\s+changed:\s*\d", re.IGNORECASE)


def rounds_of(text: str) -> dict:
    """Round number -> its write-up: from its bold "**Round N" opening to the next round or section heading."""
    heads = list(ROUND.finditer(text))
    out = {}
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        section = re.search(r"^## ", text[m.start():end], re.MULTILINE)
        out.setdefault(int(m.group(1)), text[m.start():m.start() + section.start() if section else end])
    return out


def typed_counts(paragraph: str) -> list:
    return TYPED.findall(FIG.sub("FIG", paragraph))


def data():
    return {r["round"]: r for r in json.loads(DATA.read_text())["rounds"]}


def results():
    return json.loads(RESULTS.read_text())["rounds"]


def test_every_round_of_the_table_has_its_results_and_no_other():
    assert sorted(int(k) for k in results()) == sorted(data()), \
        "benchmarks/data/triage_rounds.json and its results differ: run python benchmarks/triage_rounds.py"


def test_each_result_was_scored_at_the_table_s_commits_and_batches():
    res = results()
    for n, r in data().items():
        got = res[str(n)]
        assert (got["before_commit"], got["after_commit"], got["batches"]) == (r["before"], r["after"], r["batches"]), \
            f"round {n} changed in the table since its results: run python benchmarks/triage_rounds.py"


def test_each_result_counts_the_batches_present_now():
    """A batch added under a round's bound after the run (or one taken away) makes its results stale."""
    present = sorted(int(d.name.split("-")[1]) for d in (REPO / "tests/unit/corpus/unseen").glob("batch-*") if d.is_dir())
    for n, r in data().items():
        want = [f"batch-{b:02d}" for b in present if b <= r["batches"]["through"] and b not in r["batches"]["except"]]
        assert results()[str(n)]["batch_names"] == want, f"round {n}: the corpus changed since its results"


def test_counts_and_flips_add_up():
    for n, r in results().items():
        for side in ("before", "after"):
            assert all(0 <= v <= r["cases"] for v in r[side].values()), n
        for field in ("cause", "runtime", "device", "numbers"):
            net = sum(f["after_right"] - f["before_right"] for f in r["flips"] if f["field"] == field)
            assert r["after"][field] - r["before"][field] == net, (n, field)


def test_the_rounds_from_71_are_in_the_table():
    written = {n for n in rounds_of(DOC.read_text(encoding="utf-8")) if n >= FIRST}
    assert written and written <= set(data()), f"rounds {sorted(written - set(data()))} have no row in {DATA.name}"


def test_the_write_ups_from_round_71_type_no_counts():
    text = DOC.read_text(encoding="utf-8")
    typed = {n: typed_counts(p) for n, p in rounds_of(text).items() if n >= FIRST}
    assert typed and not any(typed.values()), f"typed counts outside <!--fig-->: { {n: t for n, t in typed.items() if t} }"


def test_each_write_up_reads_its_own_round():
    """A round's figures come from its own row of the results, not a neighbour's."""
    for n, p in rounds_of(DOC.read_text(encoding="utf-8")).items():
        keys = [k for f, k in FIG.findall(p) if f == "triage_rounds"]
        if n >= FIRST:
            assert keys and all(k.startswith(f"rounds.{n}.") for k in keys), (n, keys)


@pytest.mark.parametrize("text, found", [
    ("Right causes went from 752 to 758, right runtimes from 1003 to 1006.", 2),
    ("right causes went from 746\nto 751", 1),
    ("right runtimes stayed 1032", 1),
    (("went from <!--fig triage_rounds rounds.72.before.cause d-->752<!--/fig--> to "
      "<!--fig triage_rounds rounds.72.after.cause d-->758<!--/fig-->"), 0),
    ("batches 01-171 less 163, 164 and 166; from batch 90 on", 0),
    ("right device kinds were 1080 before and 1080 after. Cases changed: 1.", 2),
    ("Flips over the whole corpus (every batch present, 1116 cases)", 1),
    ("Over batches 01-205,\n  13 host-ram cases are labelled cuda and read cpu", 1),
    ("went from <!--fig triage_rounds rounds.77.before.cause d-->797<!--/fig--> to 799", 1),
    ("went from 797 to <!--fig triage_rounds rounds.77.after.cause d-->799<!--/fig-->", 1),
    (("were <!--fig triage_rounds rounds.76.before.device d-->1080<!--/fig--> before and "
      "<!--fig triage_rounds rounds.76.after.device d-->1080<!--/fig--> after. Cases changed: "
      "<!--fig triage_rounds rounds.76.cases_changed d-->1<!--/fig-->, over "
      "<!--fig triage_rounds rounds.76.cases d-->1116<!--/fig--> cases"), 0),
    ("the three cases that changed; batch 168 after first sight; LMCache 0.2.1 after 400 queries", 0),
])
def test_the_typed_count_pattern(text, found):
    assert len(typed_counts(text)) == found


def test_a_round_that_never_landed_is_no_write_up():
    text = ("**Round 80: batches 218 to 240.** its write-up\n\n**Round 81 (task tune81): not landed.** its note\n\n"
            "**Round 82: batches 247 to 265.** its write-up\n")
    got = rounds_of(text)
    assert sorted(got) == [80, 82] and "not landed" in got[80]


def _rounds_module():
    import sys
    sys.path.insert(0, str(REPO / "benchmarks"))
    import triage_rounds
    return triage_rounds


def _row(case, got, top2, **kw):
    return dict({"batch": "batch-07", "case": case, "got": got, "cause_ok": got == "activations", "got_runtime": "pytorch",
                 "runtime_ok": True, "got_device": "cuda", "device_ok": True, "numbers_bad": [], "top2": top2}, **kw)


def test_top2_moves_lists_a_kept_cause_whose_runner_up_or_confidence_moved():
    """Review D3 (session 39): the cause stays, but the panel's side-by-side pair changes; flipped cases are not repeated."""
    R = _rounds_module()
    before = [_row("a.log", "activations", [["activations", 0.61], ["fragmentation", 0.2]]),
              _row("b.log", "activations", [["activations", 0.75], ["leak", 0.3]]),
              _row("c.log", "activations", [["activations", 0.7], ["leak", 0.1]]),
              _row("d.log", "activations", [["activations", 0.5], ["leak", 0.4]])]
    after = [_row("a.log", "activations", [["activations", 0.61], ["host-ram", 0.2]]),      # runner-up changed
             _row("b.log", "activations", [["activations", 0.68], ["leak", 0.3]]),         # under 0.7: "uncertain"
             _row("c.log", "activations", [["activations", 0.7], ["leak", 0.1]]),          # unchanged
             _row("d.log", "leak", [["leak", 0.6], ["activations", 0.3]])]                 # a flip, listed there
    flipped = {f["case"] for f in R.flips(before, after)}
    assert flipped == {"batch-07/d.log"}
    moved = R.top2_moves(before, after, flipped)
    assert [m["case"] for m in moved] == ["batch-07/a.log", "batch-07/b.log"]
    assert moved[1]["after"] == [["activations", 0.68], ["leak", 0.3]]
    assert R.shown_top2(moved[0]["after"]) == "activations 0.61 / host-ram 0.20"
    assert R.shown_top2([]) == "none"


def test_a_case_not_recognised_on_one_side_moves_its_top2():
    R = _rounds_module()
    before = [_row("a.log", "activations", [["activations", 0.61]])]
    after = [{"batch": "batch-07", "case": "a.log", "got": None}]
    assert R.top2_moves(before, after, set()) == [{"case": "batch-07/a.log", "before": [["activations", 0.61]], "after": []}]


def test_each_result_lists_its_top2_moves_apart_from_its_flips():
    for n, r in results().items():
        flipped = {f["case"] for f in r["flips"]}
        assert isinstance(r["top2_moved"], list), n
        assert not flipped & {m["case"] for m in r["top2_moved"]}, n
        assert all(m["before"] != m["after"] for m in r["top2_moved"]), n


def test_main_stores_and_prints_the_moves_apart_from_the_flips(monkeypatch, capsys):
    """rev3 T2: main itself, on one made-up round: the flip and the top-2 move are stored and printed, each once."""
    R = _rounds_module()
    rows = {"a" * 40: [_row("a.log", "activations", [["activations", 0.75], ["leak", 0.3]]),
                       _row("b.log", "activations", [["activations", 0.5], ["leak", 0.4]])],
            "b" * 40: [_row("a.log", "activations", [["activations", 0.68], ["leak", 0.3]]),
                       _row("b.log", "leak", [["leak", 0.6], ["activations", 0.3]])]}
    saved = {}
    monkeypatch.setattr(R, "load_rounds", lambda: [{"round": 900, "before": "a" * 40, "after": "b" * 40,
                                                   "batches": {"through": 7, "except": []}, "found": "made up"}])
    monkeypatch.setattr(R.L.U, "batches", lambda: {"batch-07": []})
    monkeypatch.setattr(R, "scored", lambda commit, names, use_cache: rows[commit])
    monkeypatch.setattr(R, "save", lambda name, cmd, data: saved.update(data))
    assert R.main([]) == 0
    got = saved["rounds"]["900"]
    assert [f["case"] for f in got["flips"]] == ["batch-07/b.log"]           # its cause flipped: listed there only
    assert got["top2_moved"] == [{"case": "batch-07/a.log", "before": [["activations", 0.75], ["leak", 0.3]],
                                  "after": [["activations", 0.68], ["leak", 0.3]]}]
    out = capsys.readouterr().out
    assert "batch-07/a.log: top-2 activations 0.75 / leak 0.30 -> activations 0.68 / leak 0.30" in out
    assert out.count("batch-07/a.log") == 1
