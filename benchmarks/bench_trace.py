"""Traced footprint speed: an SDXL U-Net forward at 1024x1024 (cond+uncond batched) must trace in <= 10 s on the
2-core CI machine. Also prints the traced peaks of the other families as a reference table.

    COMFYUI_DIR=/path/to/ComfyUI /path/to/ComfyUI/venv/bin/python benchmarks/bench_trace.py [--all] [--json]

"trace s" is the forward on meta tensors; "build s" is building ComfyUI's model class on the meta device;
ComfyUI's own import (once per process) is reported separately.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.pack import load_pack  # noqa: E402

load_pack()

from gpu_garden.memory.trace import comfy_checkout as trace_comfy  # noqa: E402
from gpu_garden.memory.units import fmt_bytes  # noqa: E402
from results import save  # noqa: E402

TARGET_S = 10.0
HEADLINE = [("sdxl", "sample", 1024, 1024, 1, "flash"), ("sdxl", "sample", 1024, 1024, 1, "math")]
MORE = [
    ("sd1", "sample", 512, 512, 1, "flash"),
    ("sd1", "sample", 768, 768, 1, "flash"),
    ("sdxl", "sample", 1536, 1536, 1, "flash"),
    ("sd3", "sample", 1024, 1024, 1, "flash"),
    ("flux1", "sample", 1024, 1024, 1, "flash"),
    ("flux1", "sample", 1920, 1088, 1, "flash"),
    ("wan21", "sample", 832, 480, 33, "flash"),
    ("wan21", "sample", 832, 480, 81, "flash"),
    ("wan22", "sample", 1280, 704, 41, "flash"),
    ("sd1", "decode", 512, 512, 1, "flash"),
    ("sdxl", "decode", 1024, 1024, 1, "flash"),
    ("flux1", "decode", 1024, 1024, 1, "flash"),
    ("wan21", "decode", 832, 480, 33, "flash"),
    ("qwen-image", "sample", 1024, 1024, 1, "flash"),
    ("qwen-image", "sample", 1328, 1328, 1, "flash"),
    ("qwen-image", "decode", 1328, 1328, 1, "flash"),
    ("z-image", "sample", 1024, 1024, 1, "flash"),
    ("z-image", "decode", 1024, 1024, 1, "flash"),
    ("hunyuan-video", "sample", 848, 480, 25, "flash"),
    ("hunyuan-video", "decode", 848, 480, 25, "flash"),
    ("ltxv", "sample", 768, 512, 97, "flash"),
    ("ltxv", "decode", 768, 512, 97, "flash"),
    ("flux2", "sample", 1024, 1024, 1, "flash"),
    ("flux2", "decode", 1024, 1024, 1, "flash"),
]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--comfyui", default=os.environ.get("COMFYUI_DIR"))
    ap.add_argument("--all", action="store_true", help="also trace the other families (slower)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if not a.comfyui:
        print("skipped: set COMFYUI_DIR or pass --comfyui (and run with ComfyUI's Python)")
        return 0
    t = time.perf_counter()
    trace_comfy.import_comfy(a.comfyui)
    import_s = time.perf_counter() - t
    rows = []
    for fam, phase, w, h, frames, attn in HEADLINE + (MORE if a.all else []):
        t = time.perf_counter()
        r = trace_comfy.trace_family(a.comfyui, fam, w, h, frames=frames, attention=attn, phase=phase)
        total = time.perf_counter() - t
        rows.append({"family": fam, "phase": phase, "resolution": f"{w}x{h}" + (f"x{frames}" if frames > 1 else ""),
                     "attention": attn, "peak": r["peak"], "weights": r["weights"],
                     "activations": r["activations_peak"], "reserved": r["allocator"]["reserved_peak"],
                     "trace_s": r["seconds"], "build_s": round(total - r["seconds"], 2), "at": r["at"]["module"]})
    if a.json:
        print(json.dumps({"import_s": round(import_s, 2), "rows": rows}, indent=1))
    else:
        print(f"ComfyUI import {import_s:.1f} s (once per process)")
        print(f"{'family':<7} {'phase':<7} {'resolution':<12} {'attn':<6} {'traced peak':>12} {'weights':>11} "
              f"{'activations':>12} {'reserved~':>11} {'trace s':>8} {'build s':>8}  at")
        for r in rows:
            print(f"{r['family']:<7} {r['phase']:<7} {r['resolution']:<12} {r['attention']:<6} {fmt_bytes(r['peak']):>12} "
                  f"{fmt_bytes(r['weights']):>11} {fmt_bytes(r['activations']):>12} {fmt_bytes(r['reserved']):>11} "
                  f"{r['trace_s']:>8.2f} {r['build_s']:>8.2f}  {r['at']}")
    head = rows[0]
    ok = head["trace_s"] <= TARGET_S
    gib = 2 ** 30
    save("bench_trace", "COMFYUI_DIR=/path/to/ComfyUI /path/to/ComfyUI/venv/bin/python benchmarks/bench_trace.py",
         {"target_s": TARGET_S, "import_s": round(import_s, 2), "rows": rows,
          "sdxl_1024_trace_s": head["trace_s"], "sdxl_1024_build_s": head["build_s"],
          "sdxl_1024_peak_gib": round(head["peak"] / gib, 2), "sdxl_1024_weights_gib": round(head["weights"] / gib, 2),
          "sdxl_1024_math_peak_gib": round(rows[1]["peak"] / gib, 2)})
    print(f"{'PASS' if ok else 'FAIL'}: SDXL U-Net 1024x1024 traced in {head['trace_s']:.2f} s "
          f"(+{head['build_s']:.2f} s to build on meta; target <= {TARGET_S:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
