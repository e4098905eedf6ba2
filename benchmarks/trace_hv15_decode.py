"""HunyuanVideo 1.5's VAE decode as ComfyUI 0.8.0 runs it, traced on meta tensors (fix68g; audit aud68a finding 1).

ComfyUI's own VAE.memory_used_decode for this VAE (comfy/sd.py:502: 3600 x 4 x latent pixels x 16 x 16 per dtype byte)
ignores the frames and is about twice what the decoder allocates. This traces the decoder with gpu_garden's tracer
(memory/trace/comfy_checkout.trace_family, family hunyuan-video-15, phase decode: the vae_refiner Decoder built from
comfy_recipes' "hunyuan-video-1.5" VAE layout, bf16 = fp16 bytes, meta device) at FIT sizes (the two sizes of the
family's traced sampling rows, and the short decodes) and CHECK sizes (never tuned on), and writes the allocated peak, the activations at the
peak and where it is. No cuDNN workspace (meta).

    COMFYUI_PYTHON benchmarks/trace_hv15_decode.py --comfyui DIR"""
import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from support.pack import load_pack  # noqa: E402

load_pack()
from gpu_garden.memory.trace import comfy_checkout as tc  # noqa: E402
from results import RESULTS, save  # noqa: E402
from gpu_garden.memory.estimate import vae as V  # noqa: E402

# FIT: a line in the frames (the sampling rows' two sizes) and the short decodes under 5 latent frames (1, 5, 9, 13
# frames: no chunk has carries on both sides, as HunyuanVideo's HV_DECODE_SHORT); CHECK: never tuned on
FIT = [(848, 480, 25), (1280, 720, 121), (848, 480, 1), (848, 480, 5), (848, 480, 9), (848, 480, 13)]
CHECK = [(848, 480, 17), (848, 480, 49), (848, 480, 121),
         (1280, 720, 33), (1280, 720, 65), (640, 640, 49), (1920, 1088, 33)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--comfyui", required=True)
    a = ap.parse_args(argv)
    tc.import_comfy(a.comfyui)
    rows = []
    for which, sizes in (("fit", FIT), ("check", CHECK)):
        for w, h, f in sizes:
            r = tc.trace_family(a.comfyui, "hunyuan-video-15", w, h, frames=f, phase="decode")
            row = {"size": f"{w}x{h}x{f}", "set": which, "peak_allocated_bytes": r["peak"], "weights_bytes": r["weights"],
                   "activations_peak_bytes": r["activations_peak"], "peak_at": f"{r['at']['module']} {r['at']['op']}",
                   "activations_per_pixel_byte": round(r["activations_peak"] / (w * h * 2), 2)}
            lat = [1, 32, 1 + (f - 1) // 4, h // 16, w // 16]
            row["ours_bytes"] = V.vae_decode_bytes("hunyuan-video-15", lat, "bf16")  # device None: tracer-equivalent
            row["ours_err"] = round(row["ours_bytes"] / r["activations_peak"] - 1, 4)
            rows.append(row)
            print(f"{which:5} {row['size']:14} activations {r['activations_peak'] / 2**30:6.2f} GiB "
                  f"({row['activations_per_pixel_byte']:8.1f} per pixel, 2 bytes), ours {row['ours_err']:+.1%}"
                  f" at {row['peak_at']}", flush=True)
    # the estimate's figures when these traces were first read (ComfyUI's memory_used_decode): kept on every rerun
    old = RESULTS / "hv15_decode_trace.json"
    first = json.loads(old.read_text()).get("first_sight") if old.exists() else None
    first = first or {"note": "ours = vae_decode_bytes before the traced coefficient (ComfyUI's heuristic)",
                      "err": {row["size"]: row["ours_err"] for row in rows}}
    save("hv15_decode_trace", "COMFYUI_PYTHON benchmarks/trace_hv15_decode.py --comfyui DIR",
         {"family": "hunyuan-video-15", "dtype": "bf16", "comfyui": "0.8.0", "rows": rows, "first_sight": first})
    return 0


if __name__ == "__main__":
    sys.exit(main())
