"""Triage speed: adversarial messages (linear-time recognition) and big logs, easy and anchor-dense.

Two tables:

1. A 1 MB adversarial exception message (long whitespace runs between the anchor words "llocation" and
   "emory", repeated partial matches, digit runs ...): `is_oom_error` (what the capture runs on ComfyUI's
   prompt worker for every failed node) must classify each in <= 50 ms; `triage_text` time is shown too.
2. Logs generated here, each --mb big (default 100): the easy mixed log (filler lines with few anchor
   words) and four anchor-dense ones, where nearly every line holds a word the scanner must decode:
   Python tracebacks, vLLM memory-profiling INFO spam, ComfyUI progress bars, a training run's progress
   ("epoch", "train" on every line). Goal <= 3 s per 100 MB on each, with a bounded Python heap. Two more
   are shown without a target: OOM-heavy (an OOM block every ~5 KB) and OOM lines only (every line an
   unfinished PyTorch OOM message, each with its own size: a failure that never closes), per line, and OOM every
   line (a loop that logs each failure whole and retries: every line a failure of its own), per line.

Writes benchmarks/results/bench_triage.json ({"rows": [...], summary keys}); exit 1 if a target is missed.

    python benchmarks/bench_triage.py [--mb 100] [--no-heap] [--before OLD_RESULTS.json]

--before keeps an earlier run's log rows (the same command on an older commit, run with --no-save --dump) beside
this one's, under "before" in the results file.
"""
import argparse
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
import conftest  # noqa: E402,F401  (loads the repo as gpu_garden)
from gpu_garden.memory.triage import engine as triage  # noqa: E402
from results import save  # noqa: E402

TARGET_S_PER_100MB = 3.0
TARGET_PEAK_MB = 64          # Python heap while scanning, whatever the file size
TARGET_CLASSIFY_MS = 50.0    # a 1 MB adversarial message through is_oom_error
MSG = 1_000_000

# --- 1. adversarial messages ------------------------------------------------------------------------------


def adversarial() -> dict:
    """1 MB messages built to make a backtracking pattern quadratic (each was, before the fix, minutes)."""
    ws = " " * MSG
    return {
        "blanks between anchor words": "torch.OutOfMemoryError: Allocation" + ws + "emory",
        "blank lines around anchors": "\n" * (MSG // 2) + "llocation emory" + "\n" * (MSG // 2),
        "colon in a blank run": "OutOfMemoryError" + " " * (MSG // 2) + ":" + " " * (MSG // 2) + "x",
        "tabs and newlines": "\t \n" * (MSG // 3) + "Allocation on device",
        "repeated partial match": "Allocation on device " * (MSG // 21),
        "repeated CUDA prefix": "CUDA out of memory. Tried to allocate " * (MSG // 38),
        "repeated async fields": "Currently allocated     : " * (MSG // 26),
        "digit run": "Tried to allocate " + "9" * MSG + " allowed;",
        "token run before buffer": "x" * MSG + " buffer size = x",
        "real OOM after 1 MB": "x " * (MSG // 2) + "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        # an error phrase among runs of " at " and slashes, no newline: the most costly message review16a found (F12)
        "error words in at-runs and slashes": (("CUDA Error: out of memory " + " at " * 20 + "/" * 280 + " ") * 3000)[:MSG],
    }


def time_call(fn, *args, repeat=3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def bench_messages() -> list:
    rows = []
    for name, msg in adversarial().items():
        found = triage.is_oom_error("RuntimeError", msg)
        dt = time_call(triage.is_oom_error, "RuntimeError", msg)
        dt_full = time_call(triage.triage_text, msg, repeat=1)
        rows.append({"table": "message", "name": name, "size_mb": round(len(msg) / 1e6, 2), "is_oom": found,
                     "classify_ms": round(dt * 1000, 2), "triage_ms": round(dt_full * 1000, 1),
                     "meets": dt * 1000 <= TARGET_CLASSIFY_MS})
    return rows


# --- 2. logs ---------------------------------------------------------------------------------------------

FILLER = [
    "got prompt\n",
    "model weight dtype torch.float16, manual cast: None\n",
    "Requested to load SDXL\n",
    "loaded completely; 9453.13 MB usable, 4897.05 MB loaded, full load: True\n",
    " 45%|████▌     | 9/20 [00:04<00:05,  2.02it/s]\r 50%|█████     | 10/20 [00:04<00:04,  2.03it/s]\n",
    "100%|██████████| 20/20 [00:09<00:00,  2.04it/s]\n",
    "Requested to load AutoencoderKL\n",
    "Prompt executed in 11.42 seconds\n",
    "INFO 06-28 23:40:03 [api_server.py:206] Received request chatcmpl-5e0b: prompt: 'Summarise the following', params: SamplingParams(n=1)\n",
    "INFO:     127.0.0.1:52144 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
    "slot update_slots: id  0 | task 3113 | prompt processing progress, n_past = 2048, n_tokens = 512, progress = 0.75\n",
    "\x1b[32m[INFO]\x1b[0m Model Flux prepared for dynamic VRAM loading. 11350MB Staged. 0 patches attached.\n",
    "2026-11-30 08:12:44,118 - root - INFO - Using pytorch attention in VAE\n",
    "srv  log_server_r: request: POST /completion 127.0.0.1 200\n",
]
OOM = (
    "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)\n"
    "Currently allocated     : 9.43 GiB\nRequested               : 640.00 MiB\nDevice limit            : 11.59 GiB\n"
    "Free (according to CUDA): 7.12 MiB\nPyTorch limit (set by user-supplied memory fraction)\n"
    "                        : 17179869184.00 GiB\n"
    "Traceback (most recent call last):\n  File \"/srv/ComfyUI/nodes.py\", line 296, in decode\n"
    "    images = vae.decode(samples[\"samples\"])\n"
    "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
    "Got an OOM, unloading all loaded models.\n"
)
# A traceback as a training script or a server prints it, again and again: every line but the code lines
# holds an anchor ("Traceback", 'File "', "Exception").
TRACEBACK = (
    "Traceback (most recent call last):\n"
    "  File \"/srv/app/worker.py\", line 88, in run\n    result = self.step(batch)\n"
    "  File \"/srv/app/model.py\", line 211, in step\n    out = self.net(x)\n"
    "  File \"/usr/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1751, in _wrapped_call_impl\n"
    "    return self._call_impl(*args, **kwargs)\n"
    "  File \"/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py\", line 125, in forward\n"
    "    return F.linear(input, self.weight, self.bias)\n"
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (77x768 and 2048x320)\n"
    "During handling of the above exception, another exception occurred:\n"
    "Exception in thread worker-3: batch 1187 failed\n"
)
# vLLM's memory profiling and KV-cache lines (gpu_worker.py, kv_cache_utils.py), printed at every engine
# start, interleaved with its periodic metrics: "memory" is on most lines.
VLLM = (
    "INFO 11-30 08:12:40 [gpu_model_runner.py:1843] Model loading took 14.9927 GiB and 6.125 seconds\n"
    "INFO 11-30 08:12:44 [gpu_worker.py:232] Memory profiling takes 5.12 seconds\n"
    "INFO 11-30 08:12:44 [gpu_worker.py:232] the current vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) = 71.27GiB\n"
    "INFO 11-30 08:12:44 [gpu_worker.py:232] model weights take 14.99GiB; non_torch_memory takes 0.29GiB; PyTorch activation peak memory takes 1.38GiB; the rest of the memory reserved for KV Cache is 54.61GiB.\n"
    "INFO 11-30 08:12:44 [gpu_worker.py:255] Available KV cache memory: 54.61 GiB\n"
    "INFO 11-30 08:12:44 [kv_cache_utils.py:716] GPU KV cache size: 447,344 tokens\n"
    "INFO 11-30 08:12:44 [kv_cache_utils.py:720] Maximum concurrency for 32,768 tokens per request: 13.65x\n"
    "INFO 11-30 08:12:57 [gpu_model_runner.py:2226] Graph capturing finished in 12 secs, took 0.54 GiB\n"
    "INFO 11-30 08:13:01 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 132.1 tokens/s, "
    "Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.1%, Prefix cache hit rate: 0.0%\n"
    "DEBUG 11-30 08:13:01 [core.py:415] EngineCore waiting for work; cpu memory usage 21.4 GiB, gpu memory usage 71.0 GiB\n"
)


# A training run's progress, one line per step (kohya, SimpleTuner, a plain PyTorch loop): "epoch", "train" and
# "loss" on every line, words the scanner reads for the training fact
TRAINING = [f"Epoch 3/40: training step {i}/20000, train_loss=0.{4213 + i * 37 % 500}, lr=1.0e-04, 2.41 it/s\n" for i in range(20)]
# every line a PyTorch OOM message cut after its request (an unfinished message, wrapped-copy candidate), each its own size
OOM_LINE = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}.00 MiB\n"
# a training or serving loop that catches the OOM, logs it whole and retries: every line a complete failure of its own
# (each its own size, so none folds into the one before), what a 100 MB log of repeated failures is made of
OOM_RETRY_LINE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
                  "of which 3.06 MiB is free. Including non-PyTorch memory, this process has 23.63 GiB memory in use. Of the "
                  "allocated memory 22.90 GiB is allocated by PyTorch, and 274.61 MiB is reserved by PyTorch but unallocated.\n")


def _bar(step, steps=20):
    pct = step * 100 // steps
    fill = "█" * (pct // 10)
    return f"{pct:3d}%|{fill:<10}| {step}/{steps} [00:{step // 2:02d}<00:{(steps - step) // 2:02d},  2.02it/s]"


# ComfyUI runs: tqdm redraws with "\r" (one physical line per bar), a node's own inner bar, and the
# ComfyUI lines around them ("Prompt executed" is an anchor the scanner decodes on every run).
COMFY = (
    "got prompt\n"
    "Requested to load SDXL\n"
    "loaded completely; 9453.13 MB usable, 4897.05 MB loaded, full load: True\n"
    + "\r".join(_bar(s) for s in range(21)) + "\n"
    + "\r".join(_bar(s, 8) for s in range(9)) + "\n"
    "Requested to load AutoencoderKL\n"
    "loaded completely; 9320.00 MB usable, 159.56 MB loaded, full load: True\n"
    "Prompt executed in 11.42 seconds\n"
)


def _write(path: Path, mb: float, blocks, ooms: int, long_line: bool = False) -> int:
    target = int(mb * 1e6)
    if blocks is None or isinstance(blocks, str):        # one line, each its own size (None: OOM_LINE)
        with open(path, "w", encoding="utf-8") as f:
            n = i = 0
            while n < target:
                line = (blocks or OOM_LINE).format(20 + i % 9973)
                f.write(line)
                n += len(line)
                i += 1
        return path.stat().st_size
    chunk = "".join(blocks) * 50
    size = len(chunk.encode())
    every = max(1, target // max(1, ooms) // size) if ooms else 0
    n, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        if long_line:
            f.write("x" * 1_000_000 + " CUDA out of memory. Tried to allocate 2.00 GiB\n")
            n += 1_000_050
        while n < target:
            f.write(chunk)
            n += size
            i += 1
            if every and i % every == 0:
                f.write(OOM)
                n += len(OOM)
    return path.stat().st_size


LOGS = [  # name, blocks, OOMs, whether the target applies, size as a share of --mb
    ("easy mixed log", FILLER, 50, True, 1),
    ("Python tracebacks", [TRACEBACK], 50, True, 1),
    ("vLLM memory-profiling INFO", [VLLM], 50, True, 1),
    ("ComfyUI progress bars", [COMFY], 50, True, 1),
    ("training progress", TRAINING, 50, True, 1),
    ("OOM-heavy", FILLER, 5000, False, 1 / 4),
    ("OOM lines only", None, 0, False, 1 / 40),
    ("OOM every line (retry loop)", OOM_RETRY_LINE, 0, False, 1 / 10),
]
KEYS = {"easy mixed log": "easy", "Python tracebacks": "tracebacks", "vLLM memory-profiling INFO": "vllm_info",
        "ComfyUI progress bars": "progress_bars", "training progress": "training", "OOM-heavy": "oom_heavy",
        "OOM lines only": "oom_lines", "OOM every line (retry loop)": "oom_retry"}    # summary keys in the results file


def run(path: Path, heap: bool):
    """Time one pass (no tracing: tracemalloc slows every allocation), then a traced pass for the peak heap."""
    t = time.perf_counter()
    with open(path, "rb") as fh:
        res = triage.triage_stream(fh)
    dt = time.perf_counter() - t
    peak = None
    if heap:
        tracemalloc.start()
        with open(path, "rb") as fh:
            triage.triage_stream(fh)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return res, dt, peak


def bench_logs(mb: float, heap: bool) -> list:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "log.txt"
        for name, blocks, ooms, timed, share in LOGS:
            size = _write(p, mb * share, blocks, ooms, long_line=name == "easy mixed log")
            res, dt, peak = run(p, heap)
            per100 = dt * 100e6 / size
            meets = (per100 <= TARGET_S_PER_100MB or not timed) and (peak is None or peak / 1e6 <= TARGET_PEAK_MB)
            rows.append({"table": "log", "name": name, "size_mb": round(size / 1e6, 1), "lines": res["lines"], "ooms": res["count"],
                         "seconds": round(dt, 2), "mb_per_s": round(size / 1e6 / dt, 1), "s_per_100mb": round(per100, 2),
                         "ms_per_line": round(dt * 1000 / max(1, res["lines"]), 4),
                         "peak_heap_mb": None if peak is None else round(peak / 1e6, 1), "timed": timed, "meets": meets})
            p.unlink()
    return rows


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _table(rows, cols):
    head = [c[0] for c in cols]
    body = [[c[1](r) for c in cols] for r in rows]
    widths = [max(len(x[i]) for x in body + [head]) for i in range(len(head))]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for r in body:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--no-heap", action="store_true", help="skip the traced pass that measures the peak heap")
    ap.add_argument("--no-save", action="store_true", help="print only; leave benchmarks/results/ alone")
    ap.add_argument("--dump", help="also write the log rows to this JSON file (for --before)")
    ap.add_argument("--commit", help="the commit measured, for --dump (default: git rev-parse of this checkout; a git archive has none)")
    ap.add_argument("--before", help="log rows of an earlier run (--dump), kept under \"before\" in the results")
    args = ap.parse_args(argv)
    if args.before and not json.loads(Path(args.before).read_text()).get("commit"):
        ap.error(f"{args.before} names no commit: dump it again with --commit")   # before measuring for minutes

    msgs = bench_messages()
    print(f"1 MB adversarial messages (target: is_oom_error <= {TARGET_CLASSIFY_MS:.0f} ms)")
    _table(msgs, [("message", lambda r: r["name"]), ("size", lambda r: f"{r['size_mb']} MB"),
                  ("is_oom", lambda r: str(r["is_oom"])), ("is_oom_error", lambda r: f"{r['classify_ms']:.1f} ms"),
                  ("triage_text", lambda r: f"{r['triage_ms']:.0f} ms"), ("target", lambda r: "ok" if r["meets"] else "MISSED")])
    print()
    logs = bench_logs(args.mb, not args.no_heap)
    print(f"logs (target: <= {TARGET_S_PER_100MB:.0f} s per 100 MB on each timed log; peak heap <= {TARGET_PEAK_MB} MB)")
    _table(logs, [("log", lambda r: r["name"]), ("size", lambda r: f"{r['size_mb']:.0f} MB"), ("lines", lambda r: f"{r['lines']:,}"),
                  ("OOMs", lambda r: str(r["ooms"])), ("time", lambda r: f"{r['seconds']:.2f} s"),
                  ("rate", lambda r: f"{r['mb_per_s']:.0f} MB/s"), ("per 100 MB", lambda r: f"{r['s_per_100mb']:.2f} s"),
                  ("per line", lambda r: f"{r['ms_per_line'] * 1000:.1f} us"),
                  ("peak heap", lambda r: "-" if r["peak_heap_mb"] is None else f"{r['peak_heap_mb']:.1f} MB"),
                  ("target", lambda r: ("ok" if r["meets"] else "MISSED") if r["timed"] else ("info" if r["meets"] else "MISSED"))])
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max RSS of this process {rss:.0f} MB")

    timed = [r for r in logs if r["timed"]]
    dense = [r for r in timed if r["name"] != "easy mixed log"]
    heaps = [r["peak_heap_mb"] for r in logs if r["peak_heap_mb"] is not None]
    summary = {
        "log_mb": args.mb,
        "target_s_per_100mb": TARGET_S_PER_100MB,
        "target_classify_ms": TARGET_CLASSIFY_MS,
        "adversarial_message_mb": round(MSG / 1e6, 1),
        "adversarial_worst_classify_ms": max(r["classify_ms"] for r in msgs),
        "adversarial_worst_triage_ms": max(r["triage_ms"] for r in msgs),
        "easy_s_per_100mb": next(r["s_per_100mb"] for r in timed if r["name"] == "easy mixed log"),
        "dense_worst_s_per_100mb": max(r["s_per_100mb"] for r in dense),
        "dense_worst_log": max(dense, key=lambda r: r["s_per_100mb"])["name"],
        "dense_slowest_mb_per_s": min(r["mb_per_s"] for r in dense),
        "peak_heap_mb": max(heaps) if heaps else None,
        "all_targets_met": all(r["meets"] for r in msgs + logs),
    }
    for r in logs:
        summary[f"s_per_100mb_{KEYS[r['name']]}"] = r["s_per_100mb"]
    summary["ms_per_line_oom_lines"] = next(r["ms_per_line"] for r in logs if r["name"] == "OOM lines only")
    summary["ms_per_line_oom_retry"] = next(r["ms_per_line"] for r in logs if r["name"] == "OOM every line (retry loop)")
    if args.dump:
        Path(args.dump).write_text(json.dumps({"rows": logs, "commit": args.commit or _commit()}, indent=1) + "\n")
    if args.before:
        old = json.loads(Path(args.before).read_text())
        summary["before"] = {"commit": old.get("commit"), **{f"s_per_100mb_{KEYS[r['name']]}": r["s_per_100mb"]
                                                             for r in old["rows"] if r["name"] in KEYS}}
        summary["before"]["ms_per_line_oom_lines"] = next((r["ms_per_line"] for r in old["rows"] if r["name"] == "OOM lines only"), None)
        summary["before"]["ms_per_line_oom_retry"] = next((r["ms_per_line"] for r in old["rows"] if r["name"] == "OOM every line (retry loop)"), None)
        print("before (" + (old.get("commit") or "?") + "): " + ", ".join(f"{k} {v}" for k, v in summary["before"].items() if k != "commit"))
    if not args.no_save:
        extra = "" if args.mb == 100 else f" --mb {args.mb:g}"
        path = save("bench_triage", f"python benchmarks/bench_triage.py{extra}", {"rows": msgs + logs, **summary})
        print(f"wrote {path.relative_to(REPO)}")
    return 0 if summary["all_targets_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
