"""How far the first cause's score can be trusted, at first sight: every batch of the unseen corpus is run with
the rules of the commit its first-sight score was recorded against (the ledger's rules_commit, `git archive`d as
triage_ledger.py does), and each case's top cause, its score (confidence) and the runner-up are kept. Printed:
score bucket -> cases, right, share right; the wrong-and-confident count (top score >= the threshold and wrong)
and the right-but-uncertain count (under it and right); then, for candidate thresholds, what the answer would
have been on groups A-C (batches 01-34, where a threshold is chosen) and D-E (35 on, the check). Each case also keeps
the points of every cause that fired, so the prior mass of "not determined" (rank.NOT_DETERMINED) is tried on the
same first-sight runs: a sweep of candidate masses on A-C (chosen by the fewest answers whose "uncertain" flag is
wrong) and D-E (the check), and both groups' tables at rank.UNCERTAIN without and with the chosen mass. The tables of
shares are always recomputed from the points (a batch recorded with the prior holds its scores on another scale); the
run exits 1 when rank.NOT_DETERMINED is not among the sweep's minima.

An answer whose top cause stood alone under rank.UNCERTAIN (one cause fired, weakly: the generic rows) has no second
cause of its own: for those, the true cause's distribution per lone top cause, on A-C (where the runner-up is chosen: the
commonest true cause other than the lone one) and on D-E (the check); rules_runner_up.RUNNER_UP holds the choice and its
A-C counts, and the run exits 1 when they differ from what A-C gives.

`--current` also prints the same table for the engine as it is now on every ledger batch: a REGRESSION view (the
rules were tuned on most batches), printed only; the results file holds first sight alone. Nothing is tuned here. Runs are cached per rules commit
(keyed by the batch's files too) under $XDG_CACHE_HOME/gpu-garden/triage_calibration, so a rerun is cheap.
Writes benchmarks/results/triage_calibration.json.

    python benchmarks/triage_calibration.py [--current] [--no-cache]
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import triage_ledger as L  # noqa: E402  (loads the repo as gpu_garden, and the corpus harness)
from results import save  # noqa: E402
from triage_groups import group  # noqa: E402

BUCKETS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)      # [lo, hi): the last one holds 1.0
THRESHOLDS = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
PRIORS = (0.0, 0.25, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0)   # rank.NOT_DETERMINED candidates
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-garden" / "triage_calibration"

# Each case also keeps the points of every cause of its last event (the fired rows' weights summed per cause): the
# ranking's `ranked` is wrapped where it is (rank.ranked from 1a7ae3b on, engine.Scores.ranked before), so a change of
# how points become a score (a prior mass, rank.NOT_DETERMINED) can be tried on first sight without re-running the rules.
# `runner_up` names the causes whose evidence is all rules_runner_up.SAYS (the rows' likeliest other reading beside a
# lone weak cause, as tests/support/triage_event.fired reads it): none at rules before 5e6b7150, which have no rows.
SCORE_MANY = """
import importlib.util, json, sys
root, unseen_py, *names = sys.argv[1:]
s = importlib.util.spec_from_file_location('gpu_garden', root + '/__init__.py', submodule_search_locations=[root])
m = importlib.util.module_from_spec(s); sys.modules['gpu_garden'] = m; s.loader.exec_module(m)
s = importlib.util.spec_from_file_location('unseen_corpus', unseen_py)
U = importlib.util.module_from_spec(s); s.loader.exec_module(U)
from gpu_garden.memory.triage import engine as E
def keep(orig, get):
    def ranked(*a):
        out = orig(*a)
        pts = get(*a)
        for c in out:
            c['points'] = max(pts[c['id']], 0)
        return out
    return ranked
try:
    from gpu_garden.memory.triage import rank as RK
    RK.ranked = keep(RK.ranked, lambda points, evidence: points)
except ImportError:
    E.Scores.ranked = keep(E.Scores.ranked, lambda self: self.s)
last, run = {}, E.triage_text
def triage_text(*a, **k):
    last['r'] = run(*a, **k)
    return last['r']
E.triage_text = triage_text
try:
    from gpu_garden.memory.triage.rules_runner_up import SAYS
except ImportError:
    SAYS = None
out = {}
for n in names:
    out[n] = []
    for p in U.batches()[n]:
        last.clear()
        r = U.score(p)
        ev = (last.get('r') or {}).get('events') or []
        causes = ev[-1]['causes'] if ev else []
        r['points'] = [[c['id'], c.get('points')] for c in causes]
        r['runner_up'] = [c['id'] for c in causes if SAYS and c.get('evidence') and all(e.startswith(SAYS) for e in c['evidence'])]
        out[n].append(r)
print(json.dumps(out))
"""


def digest(batch: str) -> str:
    """The batch's files and the scorer: a cached run is reused only while both are unchanged."""
    h = hashlib.sha256(Path(L.U.__file__).read_bytes() + SCORE_MANY.encode())
    for p in L.U.batches()[batch]:
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


def score_commit(commit: str, names: list, use_cache: bool) -> dict:
    """Each batch in `names` scored by the package as committed at `commit` (one archive, one interpreter)."""
    path = CACHE / f"{commit}.json"
    cached = json.loads(path.read_text()) if use_cache and path.is_file() else {}
    want = {n: digest(n) for n in names}
    todo = [n for n in names if cached.get(n, {}).get("digest") != want[n]]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            arch = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
            out = subprocess.run([sys.executable, "-c", SCORE_MANY, tmp, str(Path(L.U.__file__).resolve()), *todo],
                                 capture_output=True, text=True, timeout=1200)
        if out.returncode:
            sys.exit(out.stderr)
        for n, rows in json.loads(out.stdout).items():
            cached[n] = {"digest": want[n], "rows": rows}
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(cached))
    return {n: cached[n]["rows"] for n in names}


def own_points(points: list, runner_up=()) -> list:
    """The log's own points: the causes the scorer marked as rules_runner_up's (`runner_up`, SCORE_MANY's: evidence that
    is all rules_runner_up.SAYS) are set aside, so the answer reads as the rules without the rows would have scored it
    (rev20 S2: marked, not told by their weight, so a second cause of the log's own at 0.45 or 0.5 points is kept)."""
    return [c for c in points if c[0] not in runner_up]


def case_row(batch: str, r: dict) -> dict:
    """One case: its top cause and score, the runner-up and its score (None when the log was not recognised), and the
    points of its own rows (own_points: a runner-up of rules_runner_up is set aside here, once, so the score tables,
    the prior sweeps and the lone table all read the log's own points; `second` stays what the answer showed)."""
    top = r.get("top2") or []
    return {"batch": batch, "case": r["case"], "group": group(batch), "expect": r["expect"], "got": r.get("got"),
            "right": bool(r["cause_ok"]), "score": top[0][1] if top else 0.0,
            "second": top[1][0] if len(top) > 1 else None, "second_score": top[1][1] if len(top) > 1 else 0.0,
            "points": own_points(r.get("points") or [], r.get("runner_up") or ())}


def with_prior(rows: list, mass: float) -> list:
    """The rows scored as if "not determined" held `mass` points beside the causes that fired (rank.NOT_DETERMINED):
    top / (all points + mass), rounded as rank.ranked rounds. Top-1 and the runner-up do not move."""
    out = []
    for r in rows:
        pts = r["points"]
        if not pts:
            out.append(r)
            continue
        total = math.fsum(p for _, p in pts) + mass
        out.append(dict(r, score=round(pts[0][1] / total, 2), second_score=round(pts[1][1] / total, 2) if len(pts) > 1 else 0.0))
    return out


def prior_sweep(title: str, rows: list, t: float) -> list:
    """For each candidate prior mass: the answers at threshold `t`, and flag_errors (wrong and confident + right but
    uncertain: the answers whose "uncertain" flag is wrong), the figure a mass is chosen by."""
    out = []
    print(f"\n{title}: prior mass -> wrong-and-confident, right-but-uncertain, flag errors, uncertain, shown (at {t})")
    for m in PRIORS:
        a = at(with_prior(rows, m), t)
        out.append(dict(a, prior=m, flag_errors=a["wrong_and_confident"] + a["right_but_uncertain"]))
        print(f"  {m:.2f}: {a['wrong_and_confident']:4} {a['right_but_uncertain']:4} {out[-1]['flag_errors']:4}"
              f"   {a['uncertain']:4} {a['shown']:4}")
    return out


def best_priors(sweep: list) -> list:
    """The masses of a prior sweep with the fewest flag errors (ties kept, smallest first): the choice the data makes."""
    low = min(s["flag_errors"] for s in sweep)
    return sorted(s["prior"] for s in sweep if s["flag_errors"] == low)


def lone_table(rows: list, t: float, mass: float, weight: float = 0.0) -> dict:
    """Lone top cause -> answers, right, the true causes' counts (commonest first), and the runner-up the data names:
    the commonest true cause other than the lone one (ties: the first in CAUSES order), with its count, and whether it
    was the true cause more often than the lone one (runner_up_more_often: the docs read it as a figure)."""
    from gpu_garden.memory.triage.rule_row import CAUSES
    from gpu_garden.memory.triage import rank, rules_runner_up as RU
    by = {}
    for r in rows:
        c = RU.lone(r["points"], weight, mass, t, rank.PAIR_RATIO)       # the rows' own check (the log's own points)
        if c:
            by.setdefault(c, {}).setdefault(r["expect"], 0)
            by[c][r["expect"]] += 1
    out = {}
    for c, labels in sorted(by.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        order = sorted(labels.items(), key=lambda kv: (-kv[1], CAUSES.index(kv[0]) if kv[0] in CAUSES else len(CAUSES), kv[0]))
        others = [(k, n) for k, n in order if k != c]
        out[c] = {"answers": sum(labels.values()), "right": labels.get(c, 0), "labels": dict(order),
                  "runner_up": others[0][0] if others else None, "runner_up_count": others[0][1] if others else 0}
        out[c]["runner_up_more_often"] = out[c]["runner_up_count"] > out[c]["right"]
    return out


def d_e_agrees(chosen: dict, check: dict) -> bool:
    """Whether the check (D-E's lone table) names, for every lone cause of the rules' table, the same runner-up. Not
    fatal (D-E grows with every batch): the run prints where it does not, and the docs read the flag as a figure."""
    return all(check.get(c, {}).get("runner_up") == v[0] for c, v in chosen.items())


def show_lone(title: str, tab: dict):
    print(f"\n{title}: lone top cause -> answers, right, runner-up (its count), true causes")
    for c, v in tab.items():
        print(f"  {c:20} {v['answers']:4} {v['right']:4}   {str(v['runner_up']):20} {v['runner_up_count']:3}   "
              + ", ".join(f"{k} {n}" for k, n in v["labels"].items()))


def runner_up_check(chosen: dict, table: dict) -> list:
    """Where the rules' runner-up table (lone cause -> (runner-up, count, answers)) is not what the A-C table gives."""
    bad = []
    for c, v in table.items():
        want = (v["runner_up"], v["runner_up_count"], v["answers"])
        if v["runner_up"] and tuple(chosen.get(c, ())) != want:       # (no entry in the rules: () here, reported)
            bad.append(f"{c}: the rules say {tuple(chosen.get(c, ())) or None}, A-C gives {want}")
        elif not v["runner_up"] and c in chosen:                        # every lone answer right: no other reading
            bad.append(f"{c}: the rules say {tuple(chosen[c])}, A-C names no runner-up ({v['answers']} answers, all right)")
    bad += [f"{c}: in the rules, not a lone cause on A-C" for c in chosen if c not in table]
    return bad


def shares(rows: list) -> list:
    """Each case's scores as the shares of its points alone. A batch scored at a rules commit with rank.NOT_DETERMINED
    (batch 49 on) recorded its score with the prior in it, older ones without: from the points, every row is on one scale."""
    return with_prior(rows, 0.0)


def table(rows: list, threshold: float = 0.5) -> dict:
    """Score bucket -> cases, right, share right; wrong-and-confident; right-but-uncertain; what the panel shows."""
    buckets = []
    found = [r for r in rows if r["got"]]
    for lo, hi in zip(BUCKETS, BUCKETS[1:]):
        b = [r for r in found if lo <= r["score"] < hi]
        ok = sum(r["right"] for r in b)
        buckets.append({"bucket": f"{lo:.1f}-{min(hi, 1.0):.1f}", "cases": len(b), "right": ok,
                        "share_right_pct": round(100 * ok / len(b), 1) if b else None})
    return {"n": len(rows), "right": sum(r["right"] for r in rows), "not_recognised": len(rows) - len(found),
            "buckets": buckets, **at(rows, threshold)}


def at(rows: list, t: float) -> dict:
    """The answers under threshold `t`: confident (score >= t) right or wrong, uncertain right, and `shown`
    (triage_top2.py's figure: top-1 right, or the right cause second when the answer is uncertain).
    A log with no failure recognised has no score and counts in neither."""
    conf = [r for r in rows if r["got"] and r["score"] >= t]
    unsure = [r for r in rows if r["got"] and r["score"] < t]
    return {"threshold": t, "confident": len(conf), "confident_right": sum(r["right"] for r in conf),
            "confident_right_pct": round(100 * sum(r["right"] for r in conf) / len(conf), 1) if conf else None,
            "wrong_and_confident": sum(not r["right"] for r in conf),
            "uncertain": len(unsure), "right_but_uncertain": sum(r["right"] for r in unsure),
            "shown": sum(r["right"] or (r["score"] < t and r["expect"] == r["second"]) for r in rows)}


def show(title: str, t: dict):
    print(f"\n{title}: {t['right']}/{t['n']} right at top-1, {t['not_recognised']} not recognised")
    print(f"  {'score':9} {'cases':>5} {'right':>5} {'share':>6}")
    for b in t["buckets"]:
        share = "-" if b["share_right_pct"] is None else f"{b['share_right_pct']:.0f} %"
        print(f"  {b['bucket']:9} {b['cases']:5} {b['right']:5} {share:>6}")
    print(f"  at {t['threshold']}: wrong-and-confident {t['wrong_and_confident']}, right-but-uncertain "
          f"{t['right_but_uncertain']}, uncertain {t['uncertain']}, shown {t['shown']}")


def band(rows: list, lo: float, hi: float) -> dict:
    b = [r for r in rows if r["got"] and lo <= r["score"] < hi]
    return {"band": f"{lo:.2f}-{min(hi, 1.0):.2f}", "cases": len(b), "right": sum(r["right"] for r in b),
            "share_right_pct": round(100 * sum(r["right"] for r in b) / len(b), 1) if b else None}


def sweep(title: str, rows: list) -> list:
    out = [dict(at(rows, t), below=band(rows, 0.5, t) if t > 0.5 else None, above=band(rows, t, 1.01))
           for t in THRESHOLDS]
    print(f"\n{title}: threshold -> confident (right %), wrong-and-confident, uncertain (right), shown")
    for s in out:
        print(f"  {s['threshold']:.2f}: {s['confident']:4} ({s['confident_right_pct']} %) {s['wrong_and_confident']:4}"
              f"   {s['uncertain']:4} ({s['right_but_uncertain']:3})   {s['shown']:4}"
              + (f"   0.50-{s['threshold']:.2f}: {s['below']['right']}/{s['below']['cases']} right" if s["below"] else "")
              + f"   >= {s['threshold']:.2f}: {s['above']['right']}/{s['above']['cases']} right")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--current", action="store_true", help="also the engine as it is now (a regression view)")
    ap.add_argument("--no-cache", action="store_true")
    a = ap.parse_args(argv)
    ledger = L.U.read_ledger()
    by_commit = {}
    for b in ledger["batches"]:
        by_commit.setdefault(b["rules_commit"], []).append(b["batch"])
    rows = []
    for commit, names in by_commit.items():
        for n, res in score_commit(commit, names, not a.no_cache).items():
            rows += [case_row(n, r) for r in res]
    rows.sort(key=lambda r: (r["batch"], r["case"]))
    tune = [r for r in rows if r["group"] in "ABC"]
    check = [r for r in rows if r["group"] in "DE"]
    out = {"first_sight": {"all": table(shares(rows)), "groups_a_c": table(shares(tune)), "groups_d_e": table(shares(check)),
                           "sweep_a_c": sweep("first sight, groups A-C (batches 01-34: choose here)", shares(tune)),
                           "sweep_d_e": sweep("first sight, groups D-E (35 on: the check)", shares(check))},
           "batches": {b["batch"]: b["rules_commit"] for b in ledger["batches"]},
           "cases": [{k: r[k] for k in ("batch", "case", "expect", "got", "right", "score", "second", "second_score", "points")}
                     for r in rows]}
    # a prior mass for "not determined" (rank.NOT_DETERMINED), applied to the points each case's rules gave at first sight
    # (the score of a batch recorded at a rules commit with a prior already held it; the points never do): chosen on A-C
    from gpu_garden.memory.triage import rank
    t, m = rank.UNCERTAIN, rank.NOT_DETERMINED
    sweep_a_c = prior_sweep("first sight, groups A-C: choose the prior mass here", tune, t)
    best = best_priors(sweep_a_c)
    out["first_sight"]["prior_mass"] = {
        "threshold": t, "chosen": best, "in_use": m,
        "sweep_a_c": sweep_a_c,
        "sweep_d_e": prior_sweep("first sight, groups D-E: the check", check, t),
        "groups_a_c_without": table(with_prior(tune, 0.0), t), "groups_a_c": table(with_prior(tune, m), t),
        "groups_d_e_without": table(with_prior(check, 0.0), t), "groups_d_e": table(with_prior(check, m), t)}
    # the runner-up of an answer whose top cause stood alone (rules_runner_up): chosen on A-C, D-E the check
    from gpu_garden.memory.triage import rules_runner_up as RU
    lone_a_c = lone_table(tune, t, m, RU.WEIGHT)
    lone_d_e = lone_table(check, t, m, RU.WEIGHT)
    out["first_sight"]["lone"] = {"threshold": t, "prior": m, "weight": RU.WEIGHT, "groups_a_c": lone_a_c,
                                  "groups_d_e": lone_d_e, "d_e_agrees": d_e_agrees(RU.RUNNER_UP, lone_d_e)}
    show("first sight, all batches", out["first_sight"]["all"])
    show("first sight, groups A-C (01-34)", out["first_sight"]["groups_a_c"])
    show("first sight, groups D-E (35 on)", out["first_sight"]["groups_d_e"])
    pm = out["first_sight"]["prior_mass"]
    show(f"first sight, groups D-E, shares of the points alone, at {t}", pm["groups_d_e_without"])
    show(f"first sight, groups D-E, with the prior mass {m} (rank.NOT_DETERMINED), at {t}", pm["groups_d_e"])
    if a.current:
        seen = {b["batch"] for b in ledger["batches"]}        # a batch not in the ledger yet is not read
        cur = [case_row(n, L.U.score(p)) for n, ps in sorted(L.U.batches().items()) if n in seen for p in ps]
        # printed, never saved: the results file holds first sight only
        show(f"REGRESSION view (tuned on these batches, not first sight): the engine now, rank.UNCERTAIN "
             f"{rank.UNCERTAIN}", table(cur, rank.UNCERTAIN))
        sweep("REGRESSION view: the engine now", cur)
    save("triage_calibration", "python benchmarks/triage_calibration.py", out)
    show_lone(f"first sight, groups A-C, answers whose top cause stood alone under {t} (choose the runner-up here)", lone_a_c)
    show_lone("first sight, groups D-E, the same (the check)", lone_d_e)
    print(f"\nprior mass: fewest flag errors on A-C at {best}; rank.NOT_DETERMINED is {m}")
    if not out["first_sight"]["lone"]["d_e_agrees"]:            # the check: printed, not fatal
        print("D-E disagrees: rules_runner_up.RUNNER_UP " + ", ".join(
            f"{c} -> {v[0]}, D-E names {lone_d_e.get(c, {}).get('runner_up')}" for c, v in RU.RUNNER_UP.items()))
    bad = runner_up_check(RU.RUNNER_UP, lone_a_c)
    for b in bad:
        print(f"DISAGREES: rules_runner_up.RUNNER_UP {b}", file=sys.stderr)
    if m not in best:
        print(f"DISAGREES: rank.NOT_DETERMINED {m} is not a minimum of the A-C sweep {best}", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
