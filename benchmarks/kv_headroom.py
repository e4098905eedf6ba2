"""kv's headroom on the measured LLM rows whose verdict bench_llm scores (docs/kv-accuracy.md, Round 41): on the rows
where kv says "fits", how much spare memory does kv compute against the runtime's own budget, for the runs that
started and for those the runtime refused (or that ran out, or placed fewer layers)?

Each row is planned and scored by bench_llm itself (`_plan`, `score`: its readings of vram_gib, its verdict per
runtime, its SEEN set). The headroom, from the plan's fields (`headroom`):
  vLLM       the KV pool left after one --max-model-len request, kv_capacity_bytes x (1 - 1 / concurrency), of vLLM's
             share (budget); no figure below a concurrency of 1 (the row is named apart)
  llama.cpp  --vram less the plan's total (the fullest card's, when the cards are judged one by one), of --vram
  Ollama     the free memory (--vram x num_gpus) less placement_need, of that free memory
  SGLang     the KV pool (kv_capacity_bytes: the static share less the weights and what else sits in it), of the
             share (budget)

    .venv/bin/python benchmarks/kv_headroom.py
"""
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_llm as B  # noqa: E402

GiB = B.GiB
NAMES = {"vllm": "vLLM", "llama.cpp": "llama.cpp", "ollama": "Ollama", "sglang": "SGLang"}
THRESHOLDS_GIB = (0.5, 1, 2, 3, 5)


def headroom(res: dict, num_gpus: int = 1):
    """(spare bytes, share of the budget they are a part of) for one plan, or None where the formula gives none (a vLLM
    plan below one request's pool, a runtime without a row here)."""
    rt = res["runtime"]
    if rt == "vllm":
        conc = res.get("concurrency")
        if not conc or conc < 1:
            return None
        spare = res["kv_capacity_bytes"] * (1 - 1 / conc)
        return spare, spare / res["budget"]
    if rt == "llama.cpp":
        cards = [d["total"] for d in res.get("devices") or () if "total" in d]
        spare = res["vram"] - (max(cards) if cards else res["total"])
        return spare, spare / res["vram"]
    if rt == "ollama":
        free = res["vram"] * max(int(num_gpus or 1), 1)
        spare = free - res["placement_need"]
        return spare, spare / free
    if rt == "sglang":
        spare = res["kv_capacity_bytes"]
        return spare, spare / res["budget"]
    return None


def collect(rows):
    """Per row with a verdict: (id, runtime, set, kv's verdict, the runtime's outcome, headroom GiB or None, share)."""
    out = []
    for row in rows:
        s = B.score(row)
        if "fits" not in s:
            continue
        _, res = B._plan(row)
        h = headroom(res, row["input"].get("num_gpus") or 1)
        out.append({"id": row["id"], "runtime": row["runtime"], "set": "regression" if row["id"] in B.SEEN else "first sight",
                    "kv": s["fits"][0], "ran": s["fits"][1], "gib": None if h is None else h[0] / GiB,
                    "share": None if h is None else h[1]})
    return out


def q25(v):
    """The lower quartile as Round 41 took it: the sorted values' element at index n // 4 (no interpolation)."""
    return sorted(v)[len(v) // 4]


def table(found) -> list:
    lines = ["| runtime | set | started: n | headroom GiB, min / q25 / median | share, median | refused: n | "
             "headroom GiB, min / median / max | share, median |", "|---|---|---|---|---|---|---|---|"]
    for rt, name in NAMES.items():
        for part in ("regression", "first sight"):
            mine = [f for f in found if f["runtime"] == rt and f["set"] == part and f["kv"] and f["gib"] is not None]
            if not mine:
                continue
            ok = sorted(f["gib"] for f in mine if f["ran"])
            bad = sorted(f["gib"] for f in mine if not f["ran"])
            med = lambda key, ran: statistics.median(f[key] for f in mine if f["ran"] == ran)  # noqa: E731
            started = (f"{len(ok)} | {ok[0]:.2f} / {q25(ok):.2f} / {statistics.median(ok):.2f} | {med('share', True):.3f}"
                       if ok else "0 | - | -")
            if len(bad) > 1:
                refused = f"{len(bad)} | {bad[0]:.2f} / {statistics.median(bad):.2f} / {bad[-1]:.2f} | {med('share', False):.3f}"
            else:
                refused = f"{len(bad)} | {bad[0]:.2f} | {med('share', False):.3f}" if bad else "0 | - | -"
            lines.append(f"| {name} | {part} | {started} | {refused} |")
    return lines


def thresholds(found) -> list:
    """Regression rows kv says fit: refused / flagged below each threshold, and refused of those left above it."""
    lines = ["| runtime | " + " | ".join(f"< {t} GiB" for t in THRESHOLDS_GIB) + " |",
             "|---|" + "---|" * len(THRESHOLDS_GIB)]
    for rt, name in NAMES.items():
        mine = [f for f in found if f["runtime"] == rt and f["set"] == "regression" and f["kv"] and f["gib"] is not None]
        if not mine:
            continue
        cells = []
        for t in THRESHOLDS_GIB:
            low = [f for f in mine if f["gib"] < t]
            high = [f for f in mine if f["gib"] >= t]
            cells.append(f"{sum(not f['ran'] for f in low)}/{len(low)}; {sum(not f['ran'] for f in high)} of {len(high)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    found = collect(json.loads(B.DATA.read_text())["rows"])
    agree = sum(f["kv"] == f["ran"] for f in found)
    print(f"{len(found)} rows with a verdict: {agree} agree, {sum(f['kv'] and not f['ran'] for f in found)} kv: fits, "
          f"runtime: refused or ran out; {sum(f['ran'] and not f['kv'] for f in found)} the other way")
    print("\n".join(table(found)))
    print("\nregression rows kv says fit, by headroom: refused / flagged below the threshold; refused of those above")
    print("\n".join(thresholds(found)))
    apart = [f["id"] for f in found if f["kv"] and f["gib"] is None]
    if apart:
        print("\nkv says fit, no headroom by the formula (vLLM below one request's pool): " + ", ".join(apart))
    other = sorted((f for f in found if f["ran"] and not f["kv"]), key=lambda f: f["gib"] if f["gib"] is not None else 0)
    print("\nkv: does not fit, the runtime started (headroom GiB):")
    for f in other:
        print(f"  {f['id']} ({'r' if f['set'] == 'regression' else 'f'}) "
              + ("-" if f["gib"] is None else f"{f['gib']:+.2f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
