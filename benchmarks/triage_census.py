"""The message census: every out-of-memory / allocation-failure message of the runtimes triage serves, taken from their
sources (benchmarks/data/triage_census.json, one entry per format), read by the engine alone and inside a short
realistic preamble of its runtime. Per entry and reading: recognised (y/n; a runtime's own retry must come back
recoverable, a warning the runtime goes on after must not be read as a failure), runtime right, device kind right, numbers exact: the census's score (recognition) counts the rows
right on all four. Cause given (a cause other than "other"; for a failure that is no shortage, "other") is shown
beside it and not scored: a lone message seldom tells the cause, its log does. Writes benchmarks/results/triage_census.json.

    python benchmarks/triage_census.py            # the table and the totals
    python benchmarks/triage_census.py --misses   # only the rows with something wrong
"""
import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
import conftest  # noqa: E402,F401  (loads the repo as gpu_garden)
from results import save  # noqa: E402

DATA = REPO / "benchmarks" / "data" / "triage_census.json"
CHECKS = ("oom", "runtime", "device", "numbers", "cause")
RECOGNITION = CHECKS[:4]        # what the census judges; the cause is shown, not scored (the context decides it)


def load() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def declared_numbers(entry: dict) -> dict:
    """The entry's numbers in bytes (tokens and ratios as they are), by the corpus convention."""
    from gpu_garden.memory.units import parse_size
    out = {}
    for k, v in entry["numbers"].items():
        if k.endswith("_ratio"):
            out[k] = float(v)
        elif k.endswith("_tokens"):
            out[k] = int(v)
        else:
            out[k] = parse_size(v, binary_decimal=True)
    return out


def text_of(entry: dict, contexts: dict, mode: str) -> str:
    if mode == "alone":
        return entry["line"] + "\n"
    ctx = contexts[entry["context"]]
    exc = re.match(r"(\w+(?:\.\w+)*(?:Error|Exception)): (.*)\Z", entry["line"], re.S)
    if exc and "exception" in ctx:
        return ctx["before"] + ctx["exception"].format(type=exc.group(1), msg=exc.group(2))
    head = (entry["raise_as"] + ": ") if entry.get("raise_as") and not re.match(r"\w+(?:\.\w+)*Error: ", entry["line"]) else ""
    return ctx["before"] + ctx.get("prefix", "") + head + entry["line"] + "\n"


def expected_device(entry: dict, contexts: dict, mode: str):
    if mode == "alone":
        return entry["device"]
    return entry.get("context_device") or entry["device"] or contexts[entry["context"]]["device"]


def expected_runtime(entry: dict, mode: str) -> str:
    return entry.get("alone_runtime", entry["runtime"]) if mode == "alone" else entry["runtime"]


def score(entry: dict, contexts: dict, mode: str) -> dict:
    from gpu_garden.memory.triage import engine
    res = engine.triage_text(text_of(entry, contexts, mode))
    row = {"id": entry["id"], "mode": mode}
    if entry.get("failure") is False:         # a warning the runtime goes on after: right when not read as a failure
        ok = not res["found"]
        return dict(row, oom=ok, runtime=ok, device=ok, numbers=ok, cause=ok,
                    got=None if ok else {"runtime": res["events"][-1]["runtime"], "device": None, "cause": res["cause"],
                                         "kind": res["events"][-1]["kind"], "recoverable": True, "numbers_bad": []})
    if not res["found"]:
        return dict(row, oom=False, runtime=False, device=False, numbers=False, cause=False, got=None)
    ev = res["events"][-1]
    recoverable = all(e["recoverable"] for e in res["events"])
    want_dev = expected_device(entry, contexts, mode)
    nums = declared_numbers(entry)
    bad = sorted(k for k, v in nums.items() if ev["numbers"].get(k) != v)
    cause = res["cause"]
    row.update(oom=recoverable == bool(entry["recoverable"]), runtime=ev["runtime"] == expected_runtime(entry, mode),
               device=want_dev is None or ev["device_kind"] == want_dev, numbers=not bad,
               cause=(cause != "other") if entry["shortage"] else cause == "other",
               got={"runtime": ev["runtime"], "device": ev["device_kind"], "cause": cause, "kind": ev["kind"],
                    "recoverable": recoverable, "numbers_bad": bad})
    return row


def run() -> list:
    data = load()
    return [score(e, data["contexts"], mode) for e in data["entries"] for mode in ("alone", "context")]


def totals(rows: list) -> dict:
    out = {}
    for mode in ("alone", "context"):
        rs = [r for r in rows if r["mode"] == mode]
        out[mode] = {"n": len(rs), **{c: sum(r[c] for r in rs) for c in CHECKS},
                     "recognition": sum(all(r[c] for c in RECOGNITION) for r in rs)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", action="store_true", help="print only the rows with something wrong")
    ap.add_argument("--no-save", action="store_true", help="do not write benchmarks/results/triage_census.json")
    args = ap.parse_args(argv)
    rows = run()
    yn = lambda b: "y" if b else "-"
    print(f"{'entry':32} {'mode':7} oom rt dev num cause  got")
    for r in rows:
        if args.misses and all(r[c] for c in RECOGNITION):
            continue
        g = r["got"] or {}
        got = f"{g.get('runtime')}/{g.get('device')}/{g.get('cause')}" + (f" bad={','.join(g['numbers_bad'])}" if g.get("numbers_bad") else "") if g else "not found"
        print(f"{r['id']:32} {r['mode']:7} {yn(r['oom']):3} {yn(r['runtime']):2} {yn(r['device']):3} {yn(r['numbers']):3} {yn(r['cause']):5}  {got}")
    tot = totals(rows)
    for mode, t in tot.items():
        print(f"{mode:8} n={t['n']}  recognised {t['oom']}  runtime {t['runtime']}  device {t['device']}  numbers {t['numbers']}  "
              f"(recognised, runtime, device and numbers all right: {t['recognition']})  cause given {t['cause']}")
    if not args.no_save:
        save("triage_census", "python benchmarks/triage_census.py", {
            "entries": len(load()["entries"]), "totals": tot,
            "misses": [{k: r[k] for k in ("id", "mode", *CHECKS, "got")} for r in rows if not all(r[c] for c in RECOGNITION)],
            "cause_not_given": sorted({r["id"] for r in rows if r["got"] and not r["cause"]})})
    return 0


if __name__ == "__main__":
    sys.exit(main())
