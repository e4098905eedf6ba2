"""Accuracy of the footprint estimate, per family x resolution: our figure, ComfyUI's own heuristic
(BaseModel.memory_required with the memory_usage_factor of its supported_models.py), and a reference peak,
with the error of each.

References:
  traced   the exact peak of ComfyUI's real model forward on meta tensors (memory/trace.py), run in a
           subprocess with COMFYUI_PYTHON against COMFYUI_DIR (skipped when either is missing or the tracer
           is not built); compared on activations (weights are exact on both sides)
  published  FLUX.1-dev bf16 transformer 22.64 GB at 1024x1024 (diffusers benchmarks, transformer only);
           Wan2.1-T2V-1.3B 8.19 GB at 480p (Wan README; Wan's own runner: fp32 weights, --offload_model
           True --t5_cpu); HunyuanVideo 60 GB at 1280x720x129 and 45 GB at 960x544x129 (HunyuanVideo
           README; everything resident, embedded guidance); compared on totals under that runner's policy
           ("GB" read as GiB, as torch reports it; read as 10^9 bytes the references are 7 % lower).
  measured   published measured peaks (benchmarks/data/diffusion_measured.json: diffusers benchmarks, the
           diffusers quantization blog), per phase (sample, sample-offload, pipeline, weights); MEASURED_FIT rows
           were tuned on after their first sight (ledger), the rest are HELD-OUT.
  cuda     torch.cuda.max_memory_allocated of the same forward on a GPU (benchmarks/results/gpu_trace_vs_cuda.json,
           written by benchmarks/gpu_trace_vs_cuda.py on a lent GPU): ours on CUDA (decode: with the CUDA convolution
           workspace, estimate/cuda_conv.py) against it; its decode rows are a REGRESSION set (GPU_FIT). Traced rows
           always compare the tracer-equivalent figure (without that workspace).

FIT and HELD_OUT are named before any refit: the coefficients (phases.FLUX_UNITS, CROSS_A/B, vae.KL_DECODE,
KL_ENCODE, WAN_DECODE) are computed from FIT rows only; HELD_OUT rows are reported separately and never tuned
on. tests/host/test_trace_comfy.py pins the traced peaks of FIT rows, so a tracer change that moves them
fails there and forces a recalibration in the same commit.
Writes benchmarks/results/bench_estimate.json.

    COMFYUI_DIR=... COMFYUI_PYTHON=... python benchmarks/bench_estimate.py [--no-trace] [--cache FILE]

Parts: estimate_common.py (shared), estimate_traced.py (traced calibration, CUDA rows), estimate_published.py
(published totals, the Wan 2.2 runner OOM), estimate_measured.py with estimate_synth_layouts.py (the measured
dataset), estimate_ltxv.py (LTX-Video decodes); main() here scores them all. The names below are re-exported for the
tests that import this module.
"""
import argparse
import json
import math  # noqa: F401
import os  # noqa: F401
import statistics
import subprocess  # noqa: F401
import sys
from pathlib import Path  # noqa: F401

from estimate_common import (BOOT, E, GiB, MiB, REPO, V, W, _stats, blob, err, families, layouts, load_pack,  # noqa: F401
                             scored, spec, table, tensor_bytes)
from estimate_traced import (CFG, FIT, GPU_FIT, GPU_RESULTS, HELD_OUT, LAYOUT, TEXT, TRACED, VAE, gpu_rows,  # noqa: F401
                             ours_cuda, ours_traced, run_traces, sample_cached_rows, trace_text_tokens, traced_in_comfy,
                             wan_cached_rows)
from estimate_published import WAN22_OOM_DEMAND, published, wan22_runner_oom  # noqa: F401
from estimate_synth_layouts import (STRUCT, SYNTH, _table_or_synth, hv13b_named_outs, synth,  # noqa: F401
                                    wan14b_blocks, zimage_blocks)
from estimate_measured import (BATCH34_35, BATCH36, LEDGER, MEASURED, MEASURED_FIT, NOT_SCORED, PHASES,  # noqa: F401
                               _measured_components, measured, streamed_offload_bytes, weights_as_held)
from estimate_ltxv import LTXV_BOOT, LTXV_CHECK, LTXV_FIT, ltxv_rows  # noqa: F401
from results import save


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--cache", help="JSON file to keep traced peaks between runs")
    ap.add_argument("--no-save", action="store_true", help="print only; leave benchmarks/results/bench_estimate.json alone")
    args = ap.parse_args()
    traces = {} if args.no_trace else run_traces(TRACED, args.cache)

    print("Activations vs the traced peak of ComfyUI's real forward (MiB; CFG as usual for the family)")
    print(f"{'case':40} {'set':8} {'ours':>8} {'ComfyUI':>8} {'traced':>8} {'err ours':>9} {'err ComfyUI':>12}")
    rows, errs = [], {"fit": ([], []), "held-out": ([], [])}
    for c in TRACED:
        fam, w, h, f, phase, att, b = c[:7]
        which = "fit" if c in FIT else "held-out"
        ours, comfy = ours_traced(*c)
        t = traces.get(c)
        name = f"{fam} {w}x{h}" + (f"x{f}" if f > 1 else "") + f" {phase}" + (" naive-attn" if att == "math" else "") \
            + (f" batch {b}" if b > 1 else "") + (f" {c[7]}" if len(c) > 7 else "")
        if not t or "error" in t:
            why = (t or {}).get("error", "not traced")
            print(f"{name:40} {which:8} {ours / MiB:8.0f} {(comfy or 0) / MiB:8.0f} {'—':>8}   ({why[:60]})")
            continue
        ref = t["activations"]
        eo = err(ours, ref)
        ec = err(comfy, ref) if comfy is not None else None
        errs[which][0].append(abs(eo))
        if ec is not None:
            errs[which][1].append(abs(ec))
        rows.append({"case": name, "set": which, "ours_bytes": int(ours), "comfyui_bytes": None if comfy is None else int(comfy),
                     "traced_bytes": int(ref), "traced_peak_bytes": int(t["peak"]), "err_ours": round(eo, 4),
                     "err_comfyui": None if ec is None else round(ec, 4)})
        cf = f"{comfy / MiB:8.0f}" if comfy is not None else f"{'—':>8}"
        ce = f"{ec:+12.1%}" if ec is not None else f"{'(none)':>12}"
        print(f"{name:40} {which:8} {ours / MiB:8.0f} {cf} {ref / MiB:8.0f} {eo:+9.1%} {ce}")
    data = {"traced_cases": len(rows)}
    if rows:
        for which, (o, c) in errs.items():
            so, sc = _stats(o), _stats(c)
            if so:
                print(f"\n|error| over the {so['n']} {which.upper()} traced cases: ours median {so['median']:.1%}, max {so['max']:.1%};"
                      f" ComfyUI median {sc['median']:.1%}, max {sc['max']:.1%} (over the {sc['n']} it has a heuristic for)", end="")
                key = which.replace("-", "")
                data.update({f"{key}_cases": so["n"], f"{key}_median": so["median"], f"{key}_max": so["max"],
                             f"{key}_comfyui_median": sc["median"], f"{key}_comfyui_max": sc["max"]})
        print()
    else:
        print("\n(no traces: set COMFYUI_DIR and COMFYUI_PYTHON to a ComfyUI checkout and an interpreter with torch)")

    print("\nTotals vs published peaks (GiB), under each runner's own policy (not tuned on)")
    print(f"{'case':50} {'ours':>7} {'ComfyUI':>8} {'ref':>7} {'err ours':>9} {'err ComfyUI':>12}  policy")
    pe, pc, pub = [], [], []
    for label, ours, comfy, ref, note in published():
        pe.append(abs(err(ours, ref)))
        pc.append(abs(err(comfy, ref)))
        pub.append({"case": label, "ours_bytes": int(ours), "comfyui_bytes": int(comfy), "reference_bytes": int(ref),
                    "err_ours": round(err(ours, ref), 4), "err_comfyui": round(err(comfy, ref), 4), "policy": note})
        print(f"{label:50} {ours / GiB:7.2f} {comfy / GiB:8.2f} {ref / GiB:7.2f} {err(ours, ref):+9.1%} {err(comfy, ref):+12.1%}  {note}")
    closer = sum(1 for a, c in zip(pe, pc) if c < a)
    print(f"|error| over {len(pe)} published points: ours median {statistics.median(pe):.1%}, max {max(pe):.1%};"
          f" ComfyUI median {statistics.median(pc):.1%}, max {max(pc):.1%}; ComfyUI's heuristic is closer on {closer} of {len(pe)}")
    data.update({"published_points": len(pe), "published_median": round(statistics.median(pe), 4),
                 "published_max": round(max(pe), 4), "published_comfyui_median": round(statistics.median(pc), 4),
                 "published_comfyui_max": round(max(pc), 4), "published_comfyui_closer": closer,
                 "rows": rows, "published": pub, "fit_set": [list(c) for c in FIT], "heldout_set": [list(c) for c in HELD_OUT]})
    print("\nMeasured peaks (GiB) from benchmarks/data/diffusion_measured.json, per phase (compare: how ours is read)")
    print(f"{'case':56} {'phase':14} {'ours':>7} {'ComfyUI':>8} {'ref':>7} {'err ours':>9} {'err ComfyUI':>12}  compare")
    me, mc, mrows, by_phase, by_batch, by_set = [], [], [], {}, {}, {}
    for r, o, c, ref in measured():
        ph, eo = r.get("phase", "sample"), err(o, ref)
        which = "fit" if r["id"] in MEASURED_FIT else "heldout"
        counted, ok = scored(o, ref, r.get("bound"))
        if r["id"] in NOT_SCORED:  # shown, in no statistic
            mrows.append({"id": r["id"], "phase": ph, "set": "not_scored", "not_scored": NOT_SCORED[r["id"]],
                          "compare": r.get("compare", "torch_allocated"), "batch": r.get("batch_id", 1), "bound": r.get("bound"),
                          "bound_holds": None, "ours_bytes": int(o), "comfyui_bytes": None if c is None else int(c),
                          "reference_bytes": int(ref), "err_ours": round(eo, 4), "err_comfyui": None, "source": r["source"]})
            print(f"{r['id'][:56]:56} {ph + '-':14} {o / GiB:7.2f} {'—':>8} {ref / GiB:7.2f} {eo:+9.1%} {'—':>12}  not scored: "
                  f"{NOT_SCORED[r['id']][:60]}")
            continue
        if ok is not None:
            by_set.setdefault(f"{which}_bounds", []).append(ok)
        if counted is not None:
            me.append(counted)
            by_phase.setdefault(ph, []).append(counted)
            by_batch.setdefault(r.get("batch_id", 1), []).append(counted)
            for key in (which, f"{which}_{ph.replace('-', '_')}", f"batch{r.get('batch_id', 1)}_{which}",
                        f"batch{r.get('batch_id', 1)}_{which}_{ph.replace('-', '_')}"):
                by_set.setdefault(key, []).append(counted)
        if ok is None:  # the point comparisons alone, per phase (a violated bound counts above, not here)
            by_set.setdefault(f"{which}_point_{ph.replace('-', '_')}", []).append(counted)
        if c is not None:
            mc.append(abs(err(c, ref)))
        mrows.append({"id": r["id"], "phase": ph, "set": which, "compare": r.get("compare", "torch_allocated"), "batch": r.get("batch_id", 1),
                      "bound": r.get("bound"), "bound_holds": ok,
                      "ours_bytes": int(o), "comfyui_bytes": None if c is None else int(c), "reference_bytes": int(ref),
                      "err_ours": round(eo, 4), "err_comfyui": None if c is None else round(err(c, ref), 4), "source": r["source"]})
        ce = f"{err(c, ref):+12.1%}" if c is not None else f"{'—':>12}"
        cf = f"{c / GiB:8.2f}" if c is not None else f"{'—':>8}"
        bd = "" if ok is None else f"  ({r['bound']} bound {'holds: not an error' if ok else 'violated'})"
        print(f"{r['id'][:56]:56} {ph if which == 'heldout' else ph + '*':14} {o / GiB:7.2f} {cf} {ref / GiB:7.2f} {eo:+9.1%} {ce}  {r.get('compare', 'torch_allocated')}{bd}")
    bounds = [x["bound_holds"] for x in mrows if x["bound_holds"] is not None]
    print(f"|error| over {len(me)} of the {len(mrows)} measured rows ({len(bounds)} are stated bounds, {sum(bounds)} hold: a bound"
          f" that holds is not an error, and is left out): ours median {statistics.median(me):.1%}, max {max(me):.1%};"
          f" ComfyUI median {statistics.median(mc):.1%}, max {max(mc):.1%} (over the {len(mc)} sample rows)")
    data.update({"measured_all_rows": len(mrows), "measured_bound_rows": len(bounds), "measured_bound_hold": sum(bounds),
                 "measured_not_scored_rows": sum(1 for x in mrows if x["set"] == "not_scored")})
    data.update({"measured_rows": len(me), "measured_median": round(statistics.median(me), 4), "measured_max": round(max(me), 4),
                 "measured_comfyui_median": round(statistics.median(mc), 4), "measured": mrows})
    for ph in PHASES:
        if by_phase.get(ph):
            st = _stats(by_phase[ph])
            print(f"  phase {ph:14} {st['n']:3} rows: median {st['median']:.1%}, max {st['max']:.1%}")
            key = ph.replace("-", "_")
            data.update({f"measured_{key}_rows": st["n"], f"measured_{key}_median": st["median"], f"measured_{key}_max": st["max"]})
    print("  (* a FIT row: tuned on; - not scored: bench_estimate.NOT_SCORED)")
    for key in sorted(k for k in by_set if k.endswith("_bounds")):
        ok = by_set.pop(key)
        print(f"  {key.upper().replace('HELDOUT', 'HELD-OUT'):24} {sum(ok)} of {len(ok)} stated bounds hold")
        data.update({f"measured_{key}_rows": len(ok), f"measured_{key}_hold": sum(ok)})
    for key in sorted(by_set):
        st = _stats(by_set[key])
        print(f"  {key.upper().replace('HELDOUT', 'HELD-OUT'):24} {st['n']:3} rows: median {st['median']:.1%}, max {st['max']:.1%}")
        data.update({f"measured_{key}_rows": st["n"], f"measured_{key}_median": st["median"], f"measured_{key}_max": st["max"]})
    for e in json.loads(LEDGER.read_text())["entries"]:  # the first-sight score of each measured batch, as recorded
        if e["id"].startswith("measured batch") and e.get("first_sight"):
            fs = e["first_sight"]
            bt = e["id"].split()[-1]
            data.update({f"measured_firstsight_batch{bt}_{k.split('_', 1)[1]}": v for k, v in fs.items() if k.startswith("batch")})
            for ph, st in fs.get("per_phase_all_rows", {}).items():  # every measured row as scored at that first sight
                data.update({f"measured_firstsight_{ph}_{k}": v for k, v in st.items() if v is not None})
            print(f"  first sight of measured batch {bt} (ledger): median {fs[f'batch{bt}_median']:.1%}, max {fs[f'batch{bt}_max']:.1%}")
    for bt, xs in sorted(by_batch.items()):
        st = _stats(xs)
        print(f"  batch {bt}: {st['n']} rows, median {st['median']:.1%}, max {st['max']:.1%}")
        data.update({f"measured_batch{bt}_rows": st["n"], f"measured_batch{bt}_median": st["median"], f"measured_batch{bt}_max": st["max"]})
    data.update(wan_cached_rows(traces))
    data.update(sample_cached_rows(traces))
    data.update({} if args.no_trace else ltxv_rows(args.cache))
    data.update(wan22_runner_oom(traces))
    data.update(gpu_rows())
    print(f"\nFIT: {len(FIT)} traced rows the coefficients are computed from; HELD-OUT: {len(HELD_OUT)} rows never tuned on.")
    if rows and not args.no_save:
        save("bench_estimate", "COMFYUI_DIR=... COMFYUI_PYTHON=... python benchmarks/bench_estimate.py", data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
