"""Cost of one memory snapshot (target: median <= 1 ms on the CPU-only path).

    python benchmarks/bench_probe.py [--n 2000]

Rows: the default path of this process as the CLI sees it (no torch imported), then, where a GPU and
torch are present, the ComfyUI path (torch imported, CUDA initialized, NVML when nvidia-ml-py is installed).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_pack():
    sys.path.insert(0, str(REPO / "tests"))
    from support.pack import load_pack as _load

    _load()
    from gpu_garden.memory.budget import probe
    return probe


def measure(fn, n):
    fn()  # warm: imports, NVML init
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    probe = load_pack()
    rows = []

    snap = probe.snapshot()
    label = "+".join(sorted({d["backend"] for d in snap["devices"]}))
    med, p99 = measure(probe.snapshot, args.n)
    rows.append((f"default, torch not imported ({label})", med, p99, "<= 1 ms" if label == "cpu" else ""))

    cpu_only = [probe.CudaBackend(None, _NoNvml())]
    med, p99 = measure(lambda: probe.snapshot(backends=cpu_only), args.n)
    rows.append(("CPU-only path (no GPU backend answers)", med, p99, "<= 1 ms"))

    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        med, p99 = measure(probe.snapshot, args.n)
        rows.append(("torch imported, CUDA not initialized (ComfyUI --cpu)", med, p99, "<= 1 ms"))
    if torch is not None and torch.cuda.is_available():
        torch.cuda.init()
        x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")  # a context and some reserved memory
        snap = probe.snapshot()
        label = "+".join(sorted({d["backend"] for d in snap["devices"]}))
        nvml = "with NVML" if not any("NVML not available" in n for n in snap["notes"]) else "without NVML"
        med, p99 = measure(probe.snapshot, max(200, args.n // 4))
        rows.append((f"CUDA path, torch initialized, {nvml} ({label}, {len(snap['devices'])} device(s))", med, p99, ""))
        del x
    else:
        rows.append(("CUDA path", None, None, "no CUDA device here"))

    w = max(len(r[0]) for r in rows)
    print(f"{'path'.ljust(w)}  {'median':>9}  {'p99':>9}  target")
    for name, med, p99, note in rows:
        fmt = lambda s: "—".rjust(9) if s is None else f"{s * 1e3:7.3f}ms"
        print(f"{name.ljust(w)}  {fmt(med)}  {fmt(p99)}  {note}")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from results import save

    ms = lambda s: None if s is None else round(s * 1e3, 3)
    keys = ("default", "cpu_only", "torch_imported", "cuda")
    save("bench_probe", "python benchmarks/bench_probe.py",
         {"n": args.n, "rows": {k: {"path": r[0], "median_ms": ms(r[1]), "p99_ms": ms(r[2])} for k, r in zip(keys, rows)}})


class _NoNvml:
    def get(self):
        return None, "NVML not available (benchmark)"


if __name__ == "__main__":
    main()
