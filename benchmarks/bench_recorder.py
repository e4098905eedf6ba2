"""What the flight recorder costs: <= 1 ms per node and <= 1 % of a run.

Drives the recorder exactly as ComfyUI's progress handler does (nodes/recorder.py: Recorder with the real
Meter - psutil RSS sampler, free memory, the allocator peaks on a GPU - and a loaded-model list), around
a synthetic run of 7 nodes doing real torch work with the durations of an SD1.5 run at 512 px on a fast
GPU (a worst case: the shorter the run, the larger the recorder's share).

- per node: the time spent in node_start + node_finish (median and 99th percentile over 2000 back-to-back
  nodes), and inside the real runs below (the recorder's own clock, run start and end included);
- per run: the recorder's own time (its hooks) as a share of the run, and the wall-time difference of the
  same run with and without recording (median of alternating repeats; includes the sampler thread).

    python benchmarks/bench_recorder.py [--device cpu|cuda] [--repeats 9]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.pack import load_pack  # noqa: E402

load_pack()

from gpu_garden.nodes.recorder import Recorder  # noqa: E402
from gpu_garden.nodes.recorder_meter import Meter  # noqa: E402
from results import save  # noqa: E402

TARGET_NODE_MS = 1.0
TARGET_RUN_PCT = 1.0
# node type -> seconds of work (an SD1.5 512 px run on a fast GPU, rounded; SaveImage and loaders are short)
RUN = (("CheckpointLoaderSimple", 0.30), ("EmptyLatentImage", 0.002), ("CLIPTextEncode", 0.03),
       ("CLIPTextEncode", 0.03), ("KSampler", 1.50), ("VAEDecode", 0.12), ("SaveImage", 0.05))


class FakeLoaded:
    """Stands in for ComfyUI's LoadedModel entries (the recorder diffs them by identity)."""

    def __init__(self, name):
        self.name = name


def work(torch, device, seconds):
    """Real tensor work for about `seconds` (matmuls, so the allocator and the CPU are busy)."""
    a = torch.randn(256, 256, device=device)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        a = torch.tanh(a @ a)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return a


def one_run(torch, device, rec, i):
    models = [FakeLoaded("SD1ClipModel"), FakeLoaded("SD15 (BaseModel)")]
    t = time.perf_counter()
    if rec is not None:
        rec.loaded = lambda: models
        rec.begin_run(f"bench-{i}", {})
    for n, (typ, seconds) in enumerate(RUN):
        if rec is not None:
            rec.node_start(str(n), typ)
        work(torch, device, seconds)
        if typ == "VAEDecode":
            models.append(FakeLoaded("AutoencoderKL"))
        if rec is not None:
            rec.node_finish(str(n))
    run = rec.end_run("success", []) if rec is not None else None
    return time.perf_counter() - t, run


def node_cost(rec, nodes=2000) -> list[float]:
    rec.begin_run("nodes", {})
    out = []
    for n in range(nodes):
        t = time.perf_counter()
        rec.node_start(str(n), "Node")
        rec.node_finish(str(n))
        out.append(time.perf_counter() - t)
    rec.end_run("success", [])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    import torch

    device = torch.device(args.device if args.device == "cpu" else "cuda:0")
    rec = Recorder(Meter(torch, device), model_info=lambda m: {"name": m.name, "dtype": "float16"})
    work(torch, device, 0.2)  # warm up
    costs = node_cost(rec)
    node_ms = statistics.median(costs) * 1000
    node_p99_ms = sorted(costs)[int(len(costs) * 0.99)] * 1000

    on, off, own, per_node = [], [], [], []
    for i in range(args.repeats):
        t_off, _ = one_run(torch, device, None, i)
        t_on, run = one_run(torch, device, rec, i)
        off.append(t_off)
        on.append(t_on)
        own.append(run["recorder_overhead_s"] / t_on)
        per_node.append(run["recorder_overhead_s"] / len(RUN))
    run_ms = statistics.median(off) * 1000
    ab_pct = (statistics.median(on) - statistics.median(off)) / statistics.median(off) * 100
    own_pct = statistics.median(own) * 100
    in_run_ms = statistics.median(per_node) * 1000
    noise_pct = statistics.pstdev(off) / statistics.median(off) * 100

    rows = [("per node, median (ms)", f"{node_ms:.3f}", f"<= {TARGET_NODE_MS}"),
            ("per node, 99th percentile (ms)", f"{node_p99_ms:.3f}", f"<= {TARGET_NODE_MS}"),
            ("per node inside a real run, hooks incl. run start/end (ms)", f"{in_run_ms:.3f}", f"<= {TARGET_NODE_MS}"),
            (f"run of {len(RUN)} nodes, {run_ms:.0f} ms: recorder's own time (%)", f"{own_pct:.3f}", f"<= {TARGET_RUN_PCT}"),
            ("same run, wall time with vs without (%)", f"{ab_pct:+.2f}", f"<= {TARGET_RUN_PCT} (noise ±{noise_pct:.2f})")]
    w = max(len(r[0]) for r in rows)
    print(f"flight recorder cost on {args.device} ({args.repeats} alternating runs)")
    for name, value, target in rows:
        print(f"  {name:<{w}}  {value:>8}  target {target}")
    ok = max(node_ms, node_p99_ms, in_run_ms) <= TARGET_NODE_MS and own_pct <= TARGET_RUN_PCT
    save(f"bench_recorder{'' if args.device == 'cpu' else '_' + args.device}", f"python benchmarks/bench_recorder.py --device {args.device}", {
        "device": args.device, "node_ms": round(node_ms, 4), "node_p99_ms": round(node_p99_ms, 4), "node_in_run_ms": round(in_run_ms, 4),
        "run_nodes": len(RUN), "run_ms": round(run_ms, 1), "run_own_pct": round(own_pct, 4),
        "run_ab_pct": round(ab_pct, 3), "run_noise_pct": round(noise_pct, 3), "repeats": args.repeats,
        "target_node_ms": TARGET_NODE_MS, "target_run_pct": TARGET_RUN_PCT, "within_target": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
