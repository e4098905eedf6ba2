"""The tuning rounds' before/after counts, generated: for each round in benchmarks/data/triage_rounds.json (its number,
the commit before its rule changes, the commit after them, and the batches its write-up counted), every case of those
batches is scored with the package as committed at each of the two commits (triage_calibration.score_commit: one `git
archive` per commit, one interpreter, the same cache under $XDG_CACHE_HOME/gpu-garden/triage_calibration), by the
corpus scorer as it is now (tests/support/unseen_corpus.score). Printed: per round, the cases and the right cause /
runtime / device kind / all-numbers counts before and after, then each case that changed (case, field, before ->
after), and the cases whose top two causes or their confidences moved while none of those four did (review rev1 D3 of
session 39: a change that keeps the cause can still move what the panel shows beside it). Writes benchmarks/results/triage_rounds.json, which docs/triage-accuracy.md's round write-ups (71 on) read
their counts from. Nothing is tuned here: the batches are regression sets already.

    python benchmarks/triage_rounds.py [--no-cache]
"""
import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
# L is triage_ledger (with the corpus harness L.U), as triage_calibration imports it
from results import save
from triage_calibration import L, score_commit

DATA = REPO / "benchmarks" / "data" / "triage_rounds.json"
# field -> (the row's key for what was read, the row's key for whether it is right); numbers: the numbers read wrong
FIELDS = {"cause": ("got", "cause_ok"), "runtime": ("got_runtime", "runtime_ok"),
          "device": ("got_device", "device_ok"), "numbers": ("numbers_bad", None)}
CHUNK = 40          # batches per scoring run: a run that fails or times out loses at most this much of the cache


def load_rounds(path: Path = DATA) -> list:
    rounds = json.loads(path.read_text())["rounds"]
    seen = set()
    for r in rounds:
        for k in ("round", "before", "after", "batches", "found"):
            if k not in r:
                raise ValueError(f"{path.name}: round {r.get('round', '?')} has no {k!r}")
        if r["round"] in seen:
            raise ValueError(f"{path.name}: round {r['round']} is listed twice")
        seen.add(r["round"])
        for k in ("before", "after"):
            if len(r[k]) != 40 or any(c not in "0123456789abcdef" for c in r[k]):
                raise ValueError(f"{path.name}: round {r['round']}'s {k} is not a full commit id: {r[k]!r}")
    return rounds


def batch_names(spec: dict, present: list) -> list:
    """The batches a write-up counted: batch-NN with NN <= through, less the listed ones (unseen then)."""
    return [n for n in present if L.U.batch_number(n) <= spec["through"] and L.U.batch_number(n) not in spec["except"]]


def ok(row: dict, field: str) -> bool:
    read, right = FIELDS[field]
    return not row.get(read) if right is None else bool(row.get(right))


def counts(rows: list) -> dict:
    return {f: sum(ok(r, f) for r in rows) for f in FIELDS}


def flips(before: list, after: list) -> list:
    """Every (case, field) whose reading or rightness differs between the two runs."""
    out = []
    for b, a in zip(before, after):
        assert (b["batch"], b["case"]) == (a["batch"], a["case"])
        for f, (read, _) in FIELDS.items():
            if (b.get(read), ok(b, f)) != (a.get(read), ok(a, f)):
                out.append({"case": f"{b['batch']}/{b['case']}", "field": f, "before": b.get(read), "after": a.get(read),
                            "before_right": ok(b, f), "after_right": ok(a, f)})
    return out


def top2_moves(before: list, after: list, flipped: set) -> list:
    """Every case outside `flipped` whose top two causes (ids and confidences, as the panel shows them) differ."""
    out = []
    for b, a in zip(before, after):
        case = f"{b['batch']}/{b['case']}"
        if case not in flipped and (b.get("top2") or []) != (a.get("top2") or []):
            out.append({"case": case, "before": b.get("top2") or [], "after": a.get("top2") or []})
    return out


def shown_top2(top2: list) -> str:
    return " / ".join(f"{c} {s:.2f}" for c, s in top2) or "none"


def scored(commit: str, names: list, use_cache: bool) -> list:
    rows = []
    for i in range(0, len(names), CHUNK):
        for n, res in score_commit(commit, names[i:i + CHUNK], use_cache).items():
            rows += [dict(r, batch=n) for r in res]
    return rows


def shown(value) -> str:
    return "not found" if value is None else ", ".join(value) or "all exact" if isinstance(value, list) else str(value)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-cache", action="store_true")
    a = ap.parse_args(argv)
    present = list(L.U.batches())
    out = {}
    print(f"{'round':>5} {'before':>8} {'after':>8} {'cases':>5}   {'cause':>11} {'runtime':>11} {'device':>11} "
          f"{'numbers':>11} {'flips':>5} {'top-2':>5}")
    for r in load_rounds():
        names = batch_names(r["batches"], present)
        runs = {k: scored(r[k], names, not a.no_cache) for k in ("before", "after")}
        c = {k: counts(v) for k, v in runs.items()}
        fl = flips(runs["before"], runs["after"])
        moved = top2_moves(runs["before"], runs["after"], {f["case"] for f in fl})
        out[str(r["round"])] = {"before_commit": r["before"], "after_commit": r["after"], "batches": r["batches"],
                                "batch_names": names, "cases": len(runs["before"]), "before": c["before"],
                                "after": c["after"], "flips": fl,
                                "cases_changed": len({f["case"] for f in fl}),
                                "right_to_wrong": sum(f["before_right"] and not f["after_right"] for f in fl),
                                "top2_moved": moved}
        print(f"{r['round']:5} {r['before'][:8]} {r['after'][:8]} {len(runs['before']):5}   "
              + " ".join(f"{c['before'][f]:>4} -> {c['after'][f]:<4}" for f in FIELDS) + f" {len(fl):5} {len(moved):5}")
        for f in fl:
            print(f"      {f['case']}: {f['field']} {shown(f['before'])} ({'right' if f['before_right'] else 'wrong'})"
                  f" -> {shown(f['after'])} ({'right' if f['after_right'] else 'wrong'})")
        for m in moved:
            print(f"      {m['case']}: top-2 {shown_top2(m['before'])} -> {shown_top2(m['after'])}")
    save("triage_rounds", "python benchmarks/triage_rounds.py", {"rounds": out})
    return 0


if __name__ == "__main__":
    sys.exit(main())
