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


def _trace_rows(log: str) -> tuple[dict, dict]:
    rows, failed = {}, {}
    pat = re.compile(r"^([\w-]+) (sample|decode) (\S+) (flash|math)\s+(.+)$")
    for line in (LOGS / log).read_text().splitlines():
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
    return rows, failed


# the default cases' log, then the larger video decodes run the same way in a call of their own (session 34)
TRACE_LOGS = ("trace_vs_cuda.txt", "trace_vs_cuda_large.txt")
# the same script with torch.backends.cudnn.enabled = False: kept apart, never a row of the comparison
NO_CUDNN_LOG = "trace_vs_cuda_no_cudnn.txt"


def trace_vs_cuda() -> dict:
    rows, failed = {}, {}
    for log in TRACE_LOGS:
        if log == TRACE_LOGS[0] or (LOGS / log).is_file():
            r, f = _trace_rows(log)
            rows.update(r)
            failed.update(f)
    _rows_or_exit(rows, "trace_vs_cuda.txt")
    sample = [abs(r["error_pct"]) for k, r in rows.items() if "_sample_" in k]
    decode = [abs(r["error_pct"]) for k, r in rows.items() if "_decode_" in k]
    out = {"rows": rows, "sample_worst_pct": max(sample, default=None), "decode_worst_pct": max(decode, default=None),
           "sample_cases": len(sample), "decode_cases": len(decode)}
    if (LOGS / NO_CUDNN_LOG).is_file():
        out["no_cudnn_rows"] = _trace_rows(NO_CUDNN_LOG)[0]
    return dict(out, failed=failed) if failed else out


def cuda_context() -> dict:
    """cuda_context.txt: device memory in use once CUDA is up, less what torch reserved (the context), and the most it
    reached with cuBLAS/cuDNN handles and an SDPA call; {} when the log is not there (the first GPU run had none)."""
    if not (LOGS / "cuda_context.txt").is_file():
        return {}
    text = (LOGS / "cuda_context.txt").read_text()
    init = re.search(r"context = (\d+) MiB", text)
    handles = [int(v) for v in re.findall(r"context\+handles = (\d+) MiB", text)]
    if not init or not handles:
        sys.exit(f"{LOGS / 'cuda_context.txt'}: no context figure; was the GPU run complete?")
    return {"cuda_context_mib": int(init.group(1)), "cuda_context_with_handles_mib": max(handles)}


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
    save("gpu_probe", f"python benchmarks/bench_probe.py --n 300 ({RUN})", {**where, "device": m, **probe(), **cuda_context()})
    print("wrote gpu_trace_vs_cuda.json, gpu_unload.json, gpu_probe.json")


if __name__ == "__main__":
    main()
