"""The unseen triage corpus scored by group of batches: the gate a rule change passes before it is kept
(docs/triage-accuracy.md, rounds 17 on: net gain over all batches, and no group loses).

Groups are consecutive batches collected in different sessions, so a change tuned on one group's cases shows
on the others whether it generalises. Scores the working tree (or a scratch copy of the package with --root).

    python benchmarks/triage_groups.py                        # each group's score and the total
    python benchmarks/triage_groups.py --json now.json        # also write every case's result
    python benchmarks/triage_groups.py --base before.json     # cases fixed and broken per group against a dump
    python benchmarks/triage_groups.py --root /tmp/pkg        # score another copy of the package (git archive + edit)
"""
import argparse
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# (group, first batch, last batch); the last group is open-ended: every newer batch belongs to it
GROUPS = (("A", 1, 15), ("B", 16, 30), ("C", 31, 34), ("D", 35, 36), ("E", 37, None))


def group(batch: str) -> str:
    n = int(batch.split("-")[1])
    return next(g for g, lo, hi in GROUPS if n >= lo and (hi is None or n <= hi))


def load(root):
    if root:
        spec = importlib.util.spec_from_file_location("gpu_garden", root + "/__init__.py", submodule_search_locations=[root])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["gpu_garden"] = mod
        spec.loader.exec_module(mod)
    sys.path[:0] = [str(REPO / "tests")]
    if not root:
        import conftest  # noqa: F401  (loads the repo as gpu_garden, as the tests do)
    from support import unseen_corpus
    return unseen_corpus


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root")
    ap.add_argument("--json")
    ap.add_argument("--base")
    a = ap.parse_args(argv)
    U = load(a.root)
    res = {}
    for name, paths in U.batches().items():       # by number (batch-100 after batch-99)
        for p in paths:
            r = U.score(p)
            res[f"{name}/{p.name}"] = {"expect": r["expect"], "got": r.get("got"), "ok": r["cause_ok"]}
    batches = sorted({k.split("/")[0] for k in res}, key=U.batch_number)   # by number: the last group's label
    for g, lo, hi in GROUPS:
        ks = [k for k in res if group(k.split("/")[0]) == g]
        ok = sum(res[k]["ok"] for k in ks)
        last = hi or int(batches[-1].split("-")[1])
        print(f"group {g} ({lo:02d}-{last:02d}): {ok}/{len(ks)} ({100 * ok / max(1, len(ks)):.1f} %)")
    ok = sum(v["ok"] for v in res.values())
    print(f"all: {ok}/{len(res)} ({100 * ok / len(res):.1f} %)")
    if a.base:
        base = json.loads(Path(a.base).read_text())
        for g, *_ in GROUPS:
            ks = [k for k in res if group(k.split("/")[0]) == g and k in base]
            fixed = [k for k in ks if res[k]["ok"] and not base[k]["ok"]]
            broke = [k for k in ks if not res[k]["ok"] and base[k]["ok"]]
            print(f"against the base, group {g}: +{len(fixed)} -{len(broke)} net {len(fixed) - len(broke):+d}")
            for k in fixed:
                print("   fixed", k, res[k]["got"])
            for k in broke:
                print("   BROKE", k, res[k]["got"], "!=", res[k]["expect"])
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=0))


if __name__ == "__main__":
    main()
