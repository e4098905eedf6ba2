"""What an OOM capture costs on ComfyUI's worker thread, for messages of any size and shape.

For each message (a realistic CUDA OOM; 300 KB and 1 MB of whitespace around the anchor words the
recognisers look for, as in the report of a node that stalled ComfyUI's queue): recognition
(oom_build.is_oom on the bounded head+tail), the whole report (the real triage core), bounding and one
store.add (mkstemp + fsync + os.replace under the file lock). Also the unbounded recogniser on the same
text up to 40 KB, for comparison (what ran before the bound). Goal: a failing node with a message of any
size ends as fast as any other failure. Prints a table; writes benchmarks/results/bench_capture.json.
    python benchmarks/bench_capture.py [--repeat 5]
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from support.pack import load_pack  # noqa: E402

load_pack()
from gpu_garden.nodes import oom_build, oom_store  # noqa: E402
from results import save  # noqa: E402

OOM = ("CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 8.00 GiB of which 312.00 MiB "
       "is free. Of the allocated memory 5.80 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but "
       "unallocated.")


def whitespace_heavy(size: int) -> str:
    pad = " \n\t" * (size // 9)
    return "CUDA out of memory." + pad + "Allocation on device" + pad + "emory 1.50 GiB" + pad + "llocation"


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    exc_type = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch"})
    core = oom_build.triage_core()
    prompt = {"10": {"class_type": "VAEDecode", "inputs": {}}}
    ctx = {"dynprompt": types.SimpleNamespace(original_prompt=prompt, get_node=prompt.get), "caches": None,
           "node_id": "10", "extra_data": {}, "prompt_id": "bench"}
    state = oom_build.capture_state("bench")
    rows, out = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        store = oom_store.ReportStore(str(Path(tmp) / "oom_reports.jsonl"))
        for name, text in (("realistic", OOM), ("ws_300kb", whitespace_heavy(300_000)),
                           ("ws_1mb", whitespace_heavy(1_000_000))):
            exc = exc_type(text)
            plain = RuntimeError(text)  # a plain RuntimeError: recognised by its message, not its type
            recog = timed(lambda: oom_build.is_oom(plain), args.repeat)
            report = oom_build.build_report(ctx, exc, state)
            build = timed(lambda: oom_build.build_report(ctx, exc, state), args.repeat)
            stored = timed(lambda: store.add(report), args.repeat)
            size = len(json.dumps(oom_store.bound_report(report), default=str).encode())
            out[name] = {"chars": len(text), "recognise_ms": round(recog * 1000, 2), "report_ms": round(build * 1000, 1),
                         "store_ms": round(stored * 1000, 1), "report_bytes": size}
            rows.append((name, len(text), recog * 1000, build * 1000, stored * 1000, size))
        unbounded = {}
        for size in (10_000, 40_000, 160_000):
            text = whitespace_heavy(size)
            t = timed(lambda: core.is_oom_error("RuntimeError", text), 1) if core else None
            unbounded[str(size)] = None if t is None else round(t * 1000, 1)
    print(f"{'message':<10} {'chars':>9} {'recognise ms':>13} {'report ms':>10} {'store ms':>9} {'report bytes':>13}")
    for name, chars, r, b, s, size in rows:
        print(f"{name:<10} {chars:>9} {r:>13.2f} {b:>10.1f} {s:>9.1f} {size:>13}")
    print("unbounded is_oom_error on whitespace-heavy text (ms): " +
          ", ".join(f"{k} chars: {v}" for k, v in unbounded.items()))
    print(f"limits: recognition reads {oom_build.RECOGNITION_CHARS} chars; report <= {oom_store.MAX_REPORT_BYTES} bytes")
    save("bench_capture", "python benchmarks/bench_capture.py",
         {"messages": out, "unbounded_is_oom_error_ms": unbounded, "recognition_chars": oom_build.RECOGNITION_CHARS,
          "max_report_bytes": oom_store.MAX_REPORT_BYTES})
    return 0


if __name__ == "__main__":
    sys.exit(main())
