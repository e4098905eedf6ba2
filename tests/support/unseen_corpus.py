"""Loader and scorer for the unseen corpus (tests/unit/corpus/unseen/batch-NN/*.log) and its ledger.

A case is a log modelled on a named public thread. Header lines (`# thread:`, `# note:`, `# expect:`,
`# numbers:`) come first; `expect` holds cause=, runtime= and optionally device= (the device kind the log
shows: cuda, rocm, mps, xpu, directml, cpu). Every number the log shows is declared in `numbers`.

The ledger (corpus/unseen/LEDGER.json, rendered to LEDGER.md) records each batch's FIRST-SIGHT score: the
score of the rules as they were in the commit that added the batch, before any rule was tuned on it. Later
scores of a batch the rules were tuned on are REGRESSION figures and are kept apart."""
import json
import re
from pathlib import Path

UNSEEN = Path(__file__).resolve().parents[1] / "unit" / "corpus" / "unseen"
LEDGER = UNSEEN / "LEDGER.json"
HEADER = re.compile(r"# (thread|note|expect|numbers):")


def batches() -> dict:
    dirs = [d for d in UNSEEN.glob("batch-*") if d.is_dir()]
    return {d.name: sorted(d.glob("*.log")) for d in sorted(dirs, key=batch_number)}


def batch_number(path_or_name):
    """batch-07 -> 7, batch-102 -> 102: batches are ordered by number, never by name ("batch-100" < "batch-41" as text)."""
    return int(str(getattr(path_or_name, "name", path_or_name)).split("-")[1])


def load(path: Path):
    from gpu_garden.memory.units import parse_size
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    meta, i = {}, 0
    while i < len(lines) and HEADER.match(lines[i]):
        key, _, val = lines[i][2:].strip().partition(":")
        meta[key] = val.strip()
        i += 1
    body = "".join(lines[i:])
    if not meta.get("thread", "").startswith("https://"):
        raise ValueError(f"{path.name}: names no public thread")
    expect = dict(kv.split("=", 1) for kv in meta["expect"].split())
    numbers = {}
    for item in filter(None, (x.strip() for x in meta.get("numbers", "").split(";"))):
        k, v = item.split("=", 1)
        v = v.strip()
        numbers[k.strip()] = float(v) if re.fullmatch(r"\d+\.\d+", v) and k.strip().endswith("_ratio") else (
            int(v) if re.fullmatch(r"\d+", v) and k.strip().endswith("_tokens") else parse_size(v, binary_decimal=True))
    return body, expect, numbers, meta["thread"]


def score(path: Path) -> dict:
    """One case against the engine as it is now: cause (top-1), runtime, device kind and numbers apart, all four (and
    top2) read from the headline event, the one triage's "cause" describes (the last that failed, else the last)."""
    from gpu_garden.memory.triage import engine as triage
    body, expect, numbers, _ = load(path)
    res = triage.triage_text(body)
    out = {"case": path.name, "expect": expect["cause"], "found": bool(res["found"])}
    if not res["found"]:
        out.update(got=None, cause_ok=False, runtime_ok=False, device_ok=False, numbers_bad=sorted(numbers))
        return out
    # the event "cause" speaks of (the last that failed), not merely the last; engines before fix34 (b22b476a), which
    # triage_calibration / triage_top2 replay at each round's commit, have no "headline": their cause spoke of the last
    ev = res["events"][res.get("headline", -1)]
    out["got"] = res["cause"]
    out["top2"] = [(c["id"], c["confidence"]) for c in ev["causes"][:2]]
    out["cause_ok"] = res["cause"] == expect["cause"]
    out["uncertain"] = bool(res.get("uncertain"))  # the panel and CLI show the top two side by side
    out["runtime_ok"] = ev["runtime"] == expect.get("runtime", ev["runtime"])
    out["got_runtime"] = ev["runtime"]
    out["device_ok"] = "device" not in expect or ev.get("device_kind") == expect["device"]
    out["got_device"] = ev.get("device_kind")
    out["numbers_bad"] = sorted(k for k, v in numbers.items() if ev["numbers"].get(k) != v)
    return out


def score_batch(name: str) -> list:
    return [score(p) for p in batches()[name]]


def read_ledger() -> dict:
    return json.loads(LEDGER.read_text()) if LEDGER.exists() else {"batches": []}


def render_md(ledger: dict) -> str:
    rows = ["# Unseen triage corpus: ledger", "",
            "Each batch entered the repository in a commit that changed no rule; its first-sight score is the",
            "score of the rules at `rules_commit`, recorded before any rule was tuned on it. A batch the rules",
            "were later tuned on is a regression set: its later scores are listed apart and never called first sight.",
            "Written by `benchmarks/triage_ledger.py`; checked by tests/unit/test_triage_unseen.py.", "",
            "Protocol: `targeted` batches were hunted for failure classes the corpus lacked; `sampled` batches took every",
            "thread, in the order fixed searches returned them, that showed the failure and established its cause.", "",
            "| batch | date | rules commit | protocol | cases | first-sight top-1 | after tuning on earlier batches | first-sight misses | tuned on since | regression score |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for b in ledger["batches"]:
        reg = b.get("regression") or []
        last = f"{reg[-1]['correct']}/{b['n']} at {reg[-1]['rules_commit'][:10]}" if reg else "-"
        rows.append(f"| {b['batch']} | {b['date']} | {b['rules_commit'][:10]} | {b.get('protocol', 'targeted')} | {b['n']} | "
                    f"{b['first_sight_correct']}/{b['n']} | {'yes' if b.get('after_tuning') else 'no'} | "
                    f"{', '.join(b['first_sight_misses']) or 'none'} | "
                    f"{'yes' if b.get('tuned_on') else 'no'} | {last} |")
    return "\n".join(rows) + "\n"
