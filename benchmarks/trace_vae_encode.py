"""Trace ComfyUI 0.8.0's VAE encode (the project's tracer, gpu_garden.memory.trace.comfy_checkout) and write the exact
activation peaks as JSON (fix68k, rev68d F1): the rows of benchmarks/results/vae_encode_traces.json (its
estimate_first_sight / ratio columns were added from vae._encode_acts before the refit).
Run: `COMFYUI_DIR=... $COMFYUI_PYTHON benchmarks/trace_vae_encode.py [family ...]` (ComfyUI's python and checkout)."""
import json, os, pathlib, sys
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / 'tests'))
from support.pack import load_pack
load_pack()
from gpu_garden.memory.trace import comfy_checkout as tc
ROOT = os.environ.get('COMFYUI_DIR') or sys.exit('set COMFYUI_DIR to a ComfyUI 0.8.0 checkout')
tc.import_comfy(ROOT)
CASES = {"wan22": [(1280, 704, f) for f in (1, 5, 9, 13, 121)] + [(832, 480, 1), (832, 480, 81)],
         "hunyuan-video": [(1280, 720, f) for f in (1, 5, 9, 13, 17, 33)] + [(640, 360, 1), (640, 360, 33)],
         "ltxv": [(768, 512, f) for f in (1, 9, 17, 97)] + [(1216, 704, 1), (1216, 704, 121)],
         "hunyuan-video-15": [(1280, 720, f) for f in (1, 5, 9, 33)],
         "wan21": [(832, 480, f) for f in (1, 5, 81)]}
rows = []
for fam in sys.argv[1:] or CASES:
    for w, h, fr in CASES[fam]:
        r = tc.trace_family(ROOT, fam, w, h, frames=fr, phase='encode')
        rows.append(dict(family=fam, width=w, height=h, frames=fr, dtype="bf16", activations_peak=int(r['activations_peak']),
                         weights=int(r['weights']), at=r['at']['module']))
        print(rows[-1], flush=True)
json.dump(rows, sys.stdout, indent=1)
