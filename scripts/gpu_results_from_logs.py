"""Results files from the printed tables of a GPU run (benchmarks/results/gpu_logs/*.txt, as the device returned
them). The GPU scripts print tables; this turns those tables into benchmarks/results/gpu_*.json so the README can
take its GPU figures from files like every other figure.

    python scripts/gpu_results_from_logs.py
"""
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from results import save  # noqa: E402

LOGS = REPO / "benchmarks" / "results" / "gpu_logs"
RUN = "bash benchmarks/gpu_checks.sh run, on the device"
UNIT = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def _rows_or_exit(rows: dict, log: str) -> dict:
    """A log with no row in it (a run cut short, the wrong file) is a clear stop, not a max() of nothing."""
    if not rows:
        sys.exit(f"{LOGS / log}: no result rows; was the GPU run complete?")
    return rows


def size(text: str) -> int:
    value, unit = text.split()
    return round(float(value) * UNIT[unit])


def machine() -> dict:
    lines = (LOGS / "nvidia_smi.txt").read_text().splitlines()
    name, driver, total = [s.strip() for s in lines[1].split(",")]
    return {"gpu": name, "driver": driver, "gpu_total_mib": int(total.split()[0]), "software": lines[2].strip()}


def trace_vs_cuda() -> dict:
    rows, failed = {}, {}
    pat = re.compile(r"^([\w-]+) (sample|decode) (\S+) (flash|math)\s+(.+)$")
    for line in (LOGS / "trace_vs_cuda.txt").read_text().splitlines():
        m = pat.match(line)
        if not m:
            continue
        key = f"{m.group(1)}_{m.group(2)}_{m.group(3)}_{m.group(4)}"
        cells = re.findall(r"[+-]?\d+(?:\.\d+)?%|\d+(?:\.\d+)? (?:B|KiB|MiB|GiB)", m.group(5))
        if m.group(5).startswith("failed:") or len(cells) < 6:  # a case that failed, or a row cut short
            failed[key] = m.group(5).strip()[:200]
            continue
        traced, cuda, err = size(cells[0]), size(cells[1]), float(cells[2].rstrip("%"))
        rows[key] = {
            "traced_peak": traced, "cuda_peak": cuda, "error_pct": err,
            "traced_act": size(cells[3]), "cuda_act": size(cells[4]), "workspace": size(cells[-1])}
    _rows_or_exit(rows, "trace_vs_cuda.txt")
    sample = [abs(r["error_pct"]) for k, r in rows.items() if "_sample_" in k]
    decode = [abs(r["error_pct"]) for k, r in rows.items() if "_decode_" in k]
    out = {"rows": rows, "sample_worst_pct": max(sample, default=None), "decode_worst_pct": max(decode, default=None),
           "sample_cases": len(sample), "decode_cases": len(decode)}
    return dict(out, failed=failed) if failed else out


def unload() -> dict:
    out = {}
    for line in (LOGS / "unload.txt").read_text().splitlines():
        m = re.match(r"^(\w+): encoder (\S+ \w+), peak allocated drop (\S+ \w+) \((\S+) % off\) -> (PASS|FAIL)", line)
        if m:
            out[m.group(1)] = {"encoder": size(m.group(2)), "drop": size(m.group(3)), "off_pct": float(m.group(4)),
                               "verdict": m.group(5)}
    _rows_or_exit(out, "unload.txt")
    return {"families": out, "worst_off_pct": max(r["off_pct"] for r in out.values())}


def probe() -> dict:
    rows = {}
    for line in (LOGS / "probe.txt").read_text().splitlines():
        m = re.match(r"^(.+?)\s{2,}(\d+\.\d+)ms\s+(\d+\.\d+)ms", line)
        if m:
            rows[m.group(1).strip()] = {"median_ms": float(m.group(2)), "p99_ms": float(m.group(3))}
    _rows_or_exit({k: v for k, v in rows.items() if k.startswith("CUDA path")}, "probe.txt")
    cuda = next(v for k, v in rows.items() if k.startswith("CUDA path"))
    return {"rows": rows, "cuda_median_ms": cuda["median_ms"], "cuda_p99_ms": cuda["p99_ms"]}


def main():
    m = machine()
    where = {"machine": f"{m['gpu']} (device run, x86_64 Linux, Python 3.12)"}
    save("gpu_trace_vs_cuda", f"python benchmarks/gpu_trace_vs_cuda.py ({RUN})", {**where, "device": m, **trace_vs_cuda()})
    save("gpu_unload", f"python benchmarks/gpu_unload.py ({RUN})", {**where, "device": m, **unload()})
    save("gpu_probe", f"python benchmarks/bench_probe.py --n 300 ({RUN})", {**where, "device": m, **probe()})
    print("wrote gpu_trace_vs_cuda.json, gpu_unload.json, gpu_probe.json")


if __name__ == "__main__":
    main()
