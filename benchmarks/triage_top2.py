"""First sight, read wider: for every batch in the unseen corpus's ledger, the rules of the commit its first-sight
score was recorded against (the ledger's rules_commit) are run again on its cases, and three counts are kept:
  top-1    the cause the panel names first (the ledger's first-sight figure, recounted)
  shown    top-1, or the right cause second where the answer is "uncertain" and the panel shows two side by side
  top-2    the right cause among the first two at all
Nothing is tuned here: each batch meets the rules it met at first sight. Writes
benchmarks/results/triage_top2.json.

    python benchmarks/triage_top2.py
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import triage_ledger as L  # noqa: E402  (loads the repo as gpu_garden, and the corpus harness)
from results import save  # noqa: E402


def counts(rows: list) -> dict:
    top2 = lambda r: [c for c, _ in r.get("top2") or []]
    return {"n": len(rows), "top1": sum(r["cause_ok"] for r in rows),
            "shown": sum(r["cause_ok"] or (r.get("uncertain", False) and r["expect"] in top2(r)) for r in rows),
            "top2": sum(r["expect"] in top2(r) for r in rows)}


def main() -> int:
    ledger = L.U.read_ledger()
    per, total = {}, {"n": 0, "top1": 0, "shown": 0, "top2": 0}
    print(f"{'batch':10} {'rules':8} {'n':>4} {'top-1':>6} {'shown':>6} {'top-2':>6}  (ledger top-1)")
    by_commit = {}
    for b in ledger["batches"]:
        by_commit.setdefault(b["rules_commit"], []).append(b["batch"])
    scores = {}
    for commit, names in by_commit.items():  # one archive and one interpreter per commit
        scores.update(L.score_at(commit, names))
    for b in ledger["batches"]:
        c = counts(scores[b["batch"]])
        per[b["batch"]] = dict(c, rules_commit=b["rules_commit"], ledger_top1=b["first_sight_correct"])
        total = {k: total[k] + c[k] for k in total}
        print(f"{b['batch']:10} {b['rules_commit'][:7]:8} {c['n']:4} {c['top1']:6} {c['shown']:6} {c['top2']:6}  ({b['first_sight_correct']})")
    pct = {f"{k}_pct": round(100 * total[k] / total["n"], 1) for k in ("top1", "shown", "top2")}
    print(f"{'all':10} {'':8} {total['n']:4} {total['top1']:6} {total['shown']:6} {total['top2']:6}  "
          f"= {pct['top1_pct']} % / {pct['shown_pct']} % / {pct['top2_pct']} %")
    save("triage_top2", "python benchmarks/triage_top2.py", {"batches": per, "all": dict(total, **pct)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
