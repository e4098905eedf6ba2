"""LTX-Video's VAE decode against ComfyUI's VideoVAE traced on meta (ltxv_rows); part of bench_estimate.py."""
import json
import os
from pathlib import Path

from estimate_common import BOOT, MiB, V, _stats, err
from estimate_traced import traced_in_comfy

# LTX-Video's VAE decode (vae.LTXV_DECODE*): the tracer has no LTX family, so these decodes are traced here directly, on
# ComfyUI's own VideoVAE built on the meta device (version 0: LTX-Video 0.9; versions 1 and 2: the 0.9.5+ decoders),
# through memory.trace.tracer.trace on VideoVAE.decode; (width, height, frames, version); FIT: the coefficients' two.
LTXV_FIT = [(768, 512, 97, 0), (768, 512, 161, 0)]
LTXV_CHECK = [(768, 512, 25, 0), (512, 512, 25, 0), (1216, 704, 121, 0), (1024, 1024, 9, 0), (768, 512, 25, 1),
              (768, 512, 161, 1), (768, 512, 97, 2), (1216, 704, 121, 2)]
LTXV_BOOT = """
import json, torch
from gpu_garden.memory.trace import comfy_checkout as CC, tracer as T
CC.import_comfy(sys.argv[2])
import comfy.sd
import comfy.ldm.lightricks.vae.causal_video_autoencoder as C
for w, h, f, ver in json.loads(sys.argv[1]):
    with torch.device('meta'):
        sd = C.VideoVAE(version=ver, config=None).state_dict()
        vae = comfy.sd.VAE(sd=sd)
    vae.first_stage_model.to(torch.bfloat16)
    x = torch.empty((1, 128, (f - 1) // 8 + 1, h // 32, w // 32), dtype=torch.bfloat16, device='meta')
    r = T.trace(vae.first_stage_model, x, call=vae.first_stage_model.decode)
    a = r.get('allocator') or {}
    print('LTXV', json.dumps([[w, h, f, ver], {'activations': r['activations_peak'], 'weights': r['weights'],
                              'allocated_peak': a.get('allocated_peak'), 'reserved_peak': a.get('reserved_peak')}]), flush=True)
"""


def ltxv_rows(cache):
    """Our LTX-Video decode (and its cached slack) against ComfyUI's VideoVAE traced on meta; {} without ComfyUI."""
    done = {}
    if cache and Path(cache).is_file():
        done = {tuple(json.loads(k)[1:]): v for k, v in json.load(open(cache)).items() if k.startswith('["ltxv-vae"')}
    todo = [c for c in LTXV_FIT + LTXV_CHECK if c not in done]
    py, comfy = os.environ.get("COMFYUI_PYTHON"), os.environ.get("COMFYUI_DIR")
    if todo and py and comfy:
        done.update(traced_in_comfy(py, BOOT + LTXV_BOOT, "LTXV", todo, comfy, timeout=1800))
        if cache:
            allc = json.load(open(cache)) if Path(cache).is_file() else {}
            allc.update({json.dumps(["ltxv-vae", *k]): v for k, v in done.items()})
            json.dump(allc, open(cache, "w"))
    if not all(c in done for c in LTXV_FIT + LTXV_CHECK):
        print("\n(LTX-Video decode traces skipped: set COMFYUI_DIR and COMFYUI_PYTHON)")
        return {}
    print("\nLTX-Video VAE decode (bf16, untiled): ours vs ComfyUI's VideoVAE traced on meta (MiB)")
    errs = {"fit": [], "heldout": []}
    for c in LTXV_FIT + LTXV_CHECK:
        w, h, f, ver = c
        lat = [1, 128, (f - 1) // 8 + 1, h // 32, w // 32]
        t, ours = done[c]["activations"], V.vae_decode_bytes("ltxv", lat, "bf16")
        comfy_h = V.comfy_decode_heuristic("ltxv", lat, "bf16")
        which = "fit" if c in LTXV_FIT else "heldout"
        errs[which].append(abs(err(ours, t)))
        print(f"  {w}x{h}x{f} v{ver} {which:8} ours {ours / MiB:8.0f} traced {t / MiB:8.0f} ({err(ours, t):+.1%}); "
              f"ComfyUI's heuristic {comfy_h / MiB:8.0f} ({err(comfy_h, t):+.1%})")
    return {f"ltxv_decode_{k}_{s}": v for k, xs in errs.items() for s, v in (_stats(xs) or {}).items()}
