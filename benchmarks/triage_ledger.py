"""The unseen triage corpus under the first-sight protocol: records a batch's first-sight score in the
ledger, records regression scores of batches the rules were tuned on, and writes
benchmarks/results/triage_accuracy.json (first-sight and regression accuracy) for the README.

    python benchmarks/triage_ledger.py                       # print every batch's current score, write results
    python benchmarks/triage_ledger.py --record batch-03     # first sight: only for a batch not yet in the ledger
    python benchmarks/triage_ledger.py --record batch-83 --sampled   # ... of a batch collected by the sampled protocol
    python benchmarks/triage_ledger.py --tuned batch-01 batch-02   # mark batches the rules were tuned on
    python benchmarks/triage_ledger.py --regression          # append today's score of each tuned-on batch

--record refuses a batch already in the ledger: a first-sight score is taken once, before tuning.
--sampled marks a batch whose collector walked fixed search results in order and took every thread that showed the
failure and established its cause (docs/triage-accuracy.md#sampled-batches), as opposed to a batch hunted for
classes the corpus lacked; the two first-sight figures are reported apart.
"""
import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
import conftest  # noqa: E402,F401  (loads the repo as gpu_garden)
from support import unseen_corpus as U  # noqa: E402
from results import save  # noqa: E402


def rules_commit() -> str:
    """HEAD: the committed rules a score is taken against (uncommitted edits under memory/ never count)."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()


SCORE_AT = """
import importlib.util, json, sys
root, unseen_py = sys.argv[1:3]
s = importlib.util.spec_from_file_location('gpu_garden', root + '/__init__.py', submodule_search_locations=[root])
m = importlib.util.module_from_spec(s); sys.modules['gpu_garden'] = m; s.loader.exec_module(m)
s = importlib.util.spec_from_file_location('unseen_corpus', unseen_py)
U = importlib.util.module_from_spec(s); s.loader.exec_module(U)
print(json.dumps({batch: U.score_batch(batch) for batch in sys.argv[3:]}))
"""


def score_at(commit: str, batches: list) -> dict:
    """Score the working tree's cases of each of `batches` with the package exactly as committed at `commit`.

    One archive and one interpreter for all of them: scoring is a pure function of the rules and the case, and
    starting an interpreter per batch made --regression take 78 minutes on two cores for 540 batches."""
    with tempfile.TemporaryDirectory() as tmp:
        arch = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
        out = subprocess.run([sys.executable, "-c", SCORE_AT, tmp, str(Path(U.__file__).resolve()), *batches],
                             capture_output=True, text=True, timeout=3600)
        if out.returncode:
            sys.exit(out.stderr)
        return json.loads(out.stdout)


def write(ledger):
    U.LEDGER.write_text(json.dumps(ledger, indent=1) + "\n")
    (U.UNSEEN / "LEDGER.md").write_text(U.render_md(ledger))


# Round 11's split halves of the older sets (a rule change was kept only if it gained on both), and round 12's
# batches 31-33 (docs/triage-accuracy.md)
HALVES = {"a": (1, 15), "b": (16, 30), "c": (31, 34), "d": (35, 36), "e": (37, 40)}


def halves(ledger) -> dict:
    """First-sight and latest regression score of each range in HALVES (a 01-15, b 16-30, c 31-34, d 35-36, e 37-40), from the ledger's records."""
    out = {}
    for h, (lo, hi) in HALVES.items():
        bs = [b for b in ledger["batches"] if lo <= int(b["batch"].split("-")[1]) <= hi]
        reg = [b["regression"][-1]["correct"] for b in bs if b.get("tuned_on") and b.get("regression")]
        out[h] = {"batches": f"{lo:02d}-{hi:02d}", "n": sum(b["n"] for b in bs),
                  "first_sight_correct": sum(b["first_sight_correct"] for b in bs),
                  "regression_correct": sum(reg) if len(reg) == len(bs) else None}
    return out


def totals(ledger, current):
    fs_n = sum(b["n"] for b in ledger["batches"])
    fs_ok = sum(b["first_sight_correct"] for b in ledger["batches"])
    tuned = [b for b in ledger["batches"] if b.get("tuned_on")]
    untuned = [b for b in ledger["batches"] if not b.get("tuned_on")]
    reg_n = sum(b["n"] for b in tuned)
    # the last recorded regression score of each tuned batch (taken against a commit, never the working tree)
    reg_ok = sum(b["regression"][-1]["correct"] for b in tuned if b.get("regression"))
    cur_n = sum(len(v) for v in current.values())
    cur_ok = sum(sum(r["cause_ok"] for r in v) for v in current.values())
    num_n = sum(len(v) for v in current.values())
    num_ok = sum(sum(not r["numbers_bad"] for r in v) for v in current.values())
    sampled = [b for b in ledger["batches"] if b.get("protocol") == "sampled"]
    sa_n, sa_ok = sum(b["n"] for b in sampled), sum(b["first_sight_correct"] for b in sampled)
    later = [b for b in ledger["batches"] if b.get("after_tuning")]
    la_n, la_ok = sum(b["n"] for b in later), sum(b["first_sight_correct"] for b in later)
    by_rt, by_dev = {}, {}
    for name in current:
        for p in U.batches()[name]:
            exp = U.load(p)[1]
            by_rt[exp["runtime"]] = by_rt.get(exp["runtime"], 0) + 1
            by_dev[exp.get("device", "unstated")] = by_dev.get(exp.get("device", "unstated"), 0) + 1
    return {
        "first_sight_after_tuning_cases": la_n, "first_sight_after_tuning_correct": la_ok,
        "first_sight_after_tuning_pct": round(100 * la_ok / la_n, 1) if la_n else None,
        "first_sight_sampled_batches": [b["batch"] for b in sampled],
        "first_sight_sampled_cases": sa_n, "first_sight_sampled_correct": sa_ok,
        "first_sight_sampled_pct": round(100 * sa_ok / sa_n, 1) if sa_n else None,
        "cases_by_runtime": dict(sorted(by_rt.items())), "cases_by_device": dict(sorted(by_dev.items())),
        "batches": {b["batch"]: {"n": b["n"], "first_sight_correct": b["first_sight_correct"],
                                 "regression_correct": (b.get("regression") or [{}])[-1].get("correct"),
                                 "after_tuning": bool(b.get("after_tuning"))} for b in ledger["batches"]},
        "halves": halves(ledger),
        "first_sight_cases": fs_n, "first_sight_correct": fs_ok,
        "first_sight_accuracy_pct": round(100 * fs_ok / fs_n, 1) if fs_n else None,
        "first_sight_batches": len(ledger["batches"]),
        "untuned_batches": len(untuned),
        "regression_cases": reg_n, "regression_correct": reg_ok,
        "regression_accuracy_pct": round(100 * reg_ok / reg_n, 1) if reg_n else None,
        "current_cases": cur_n, "current_correct": cur_ok,
        "current_accuracy_pct": round(100 * cur_ok / cur_n, 1) if cur_n else None,
        "numbers_exact_pct": round(100 * num_ok / num_n, 1) if num_n else None,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", metavar="BATCH")
    ap.add_argument("--sampled", action="store_true", help="with --record: the batch was collected by the sampled protocol")
    ap.add_argument("--tuned", nargs="+", metavar="BATCH")
    ap.add_argument("--regression", action="store_true")
    a = ap.parse_args(argv)
    if a.sampled and not a.record:
        ap.error("--sampled describes the batch being recorded: use it with --record")
    ledger = U.read_ledger()
    names = {b["batch"] for b in ledger["batches"]}
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if a.record:
        if a.record in names:
            sys.exit(f"{a.record} already has a first-sight score; a batch is seen once")
        commit = rules_commit()
        res = score_at(commit, [a.record])[a.record]
        ledger["batches"].append({
            "batch": a.record, "date": today, "rules_commit": commit, "n": len(res),
            "first_sight_correct": sum(r["cause_ok"] for r in res),
            "first_sight_misses": [r["case"] for r in res if not r["cause_ok"]],
            # what the rules named instead: kept so a later round can study first-sight confusions without re-running old commits
            "first_sight_got": {r["case"]: r["got"] for r in res if not r["cause_ok"]},
            "protocol": "sampled" if a.sampled else "targeted",
            "cases": [r["case"] for r in res], "tuned_on": False, "regression": [],
            # recorded after the rules were tuned on earlier batches: this first sight measures generalisation
            "after_tuning": any(b.get("tuned_on") for b in ledger["batches"])})
    for name in a.tuned or ():
        next(b for b in ledger["batches"] if b["batch"] == name)["tuned_on"] = True
    current = {name: U.score_batch(name) for name in U.batches()}
    if a.regression:
        commit = rules_commit()
        tuned = [b for b in ledger["batches"] if b.get("tuned_on")]
        scores = score_at(commit, [b["batch"] for b in tuned])
        for b in tuned:
            b["regression"].append({"date": today, "rules_commit": commit,
                                    "correct": sum(r["cause_ok"] for r in scores[b["batch"]])})
    if a.record or a.tuned or a.regression:
        write(ledger)
    print(f"{'batch':10} {'n':>3} {'first sight':>12} {'now':>6}  tuned  misses now")
    for b in ledger["batches"]:
        cur = current.get(b["batch"], [])
        print(f"{b['batch']:10} {b['n']:>3} {b['first_sight_correct']:>5}/{b['n']:<6} {sum(r['cause_ok'] for r in cur):>3}/{len(cur):<3} "
              f"{'yes' if b.get('tuned_on') else 'no':5}  "
              + ", ".join(f"{r['case']}({r['got']}!={r['expect']})" for r in cur if not r["cause_ok"]))
    t = totals(ledger, current)
    print(json.dumps(t, indent=1))
    save("triage_accuracy", "python benchmarks/triage_ledger.py", t)


if __name__ == "__main__":
    main()
