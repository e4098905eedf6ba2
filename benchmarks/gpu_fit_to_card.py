"""Fit to Card on a capped GPU: out-of-memory runs with stock ComfyUI vs with the guard (goal: >= 90 % of the
guarded runs complete), outputs compared where only weight placement changed.

    COMFYUI_DIR=/path/to/ComfyUI $COMFYUI_PYTHON benchmarks/gpu_fit_to_card.py [--family sdxl flux1 wan21] [--over 0.08]
    COMFYUI_DIR=... $COMFYUI_PYTHON benchmarks/gpu_fit_to_card.py --dry-run   # the runs and caps it would use, no GPU

Self-contained, one run under 10 minutes on any NVIDIA GPU with room for the largest run (FLUX.1 at 1536 px:
about 30 GB). It writes sparse all-zero checkpoints of the real tensor layouts (memory/estimate/layouts) into
--workdir, imports ComfyUI in-process from COMFYUI_DIR and runs its real model code: conditionings are zero
tensors of the real shapes (no text encoder is loaded). For each run the card is emulated at `cap` bytes:
torch.cuda.set_per_process_memory_fraction caps the allocator, and ComfyUI's get_free_memory is shifted so
ComfyUI sees the same smaller card (both stock and guarded runs see it); with `--emulate ballast` the rest of the
card is held instead through the CUDA driver, outside PyTorch, as another process would hold it, so ComfyUI, cuDNN
and either allocator backend (`--allocator async` is ComfyUI's default, cudaMallocAsync, which main.py sets and this
in-process run otherwise does not) see a card of `cap` bytes. The cap puts each run `--over` above
what it needs in all (weights + our activation estimate + ComfyUI's reserve), so the weights must be partly
offloaded. Stock = ComfyUI's own memory_required; guard = nodes/fit_guard.attach on a clone (the node's path)
and a VAE copy sized from our estimate. An out-of-memory exception in sampling counts as an OOM; the decode
counts one when ComfyUI logs its "Ran out of memory ... retrying with tiled" fallback. A run completes only when
it sampled and decoded with neither (a decode the guard planned in tiles is one; ComfyUI's tiles after an OOM are
not); any other error fails that run alone, and a guard run whose guard fell back to ComfyUI's figure is an
error. Prints a row per run and writes benchmarks/results/gpu_fit_to_card.json after every run ("complete": false
until the last). Each run takes a queued prompt's path: the loaders' calls, then
ComfyUI's own nodes.common_ksampler (KSampler) and VAEDecode.decode, all under torch.inference_mode() as the
executor (execution.py) runs a prompt.

Parts: gpu_fit_plan.py (the families and the planned runs: --dry-run), gpu_fit_card.py (the emulated card, the
ballast, the decode-OOM count), gpu_fit_runs.py (ComfyUI's loaders, one run, how a run is judged), gpu_fit_vae_decode.py
(--decode-peaks, --decode-need); main() here. The names below are re-exported for the tests that load this file.
"""
import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))  # the parts below, when loaded by path
from gpu_fit_card import Ballast, Card, DecodeOOMs, NoCard, peak  # noqa: E402,F401
from gpu_fit_plan import FAMILIES, GiB, SMOKE, latent_shape, load_pack, planned_runs  # noqa: E402,F401
from gpu_fit_runs import (SEED, build, comfy_nodes, completed, conds, decode_cell, guard_applied,  # noqa: E402,F401
                          import_comfy, load_vae, run_one, same)
from gpu_fit_vae_decode import decode_need, decode_peaks, loaded_vaes  # noqa: E402,F401


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", nargs="+", choices=sorted(FAMILIES), default=["sdxl", "flux1", "wan21"])
    ap.add_argument("--over", type=float, default=0.08, help="how far each run is over its cap (fraction of what it needs)")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--workdir", help="where the sparse checkpoints go (default: a temporary folder)")
    ap.add_argument("--dry-run", action="store_true", help="print the runs and caps from the layouts; no GPU, no ComfyUI")
    ap.add_argument("--decode-peaks", action="store_true",
                    help="measure each family's untiled VAE decode peak on the uncapped GPU beside our and ComfyUI's figures")
    ap.add_argument("--decode-need", action="store_true",
                    help="bisect the smallest room in which each untiled VAE decode runs (allocator capped)")
    ap.add_argument("--no-cudnn", action="store_true", help="with --decode-peaks: torch.backends.cudnn.enabled = False "
                    "(tells cuDNN's workspaces from activations)")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds: start no new run after this (the results so "
                    "far are written after every run either way); 0 = none")
    ap.add_argument("--emulate", choices=("fraction", "ballast"), default="fraction",
                    help="how a smaller card is made: cap PyTorch's allocator (set_per_process_memory_fraction, the "
                    "native backend's) and shift ComfyUI's free memory, or hold the rest of the card outside PyTorch "
                    "through the CUDA driver (every reader of free memory and either backend see the smaller card)")
    ap.add_argument("--allocator", choices=("native", "async"), default="native",
                    help="PyTorch's allocator backend: native, or cudaMallocAsync as ComfyUI's main.py sets it by default "
                    "(PYTORCH_CUDA_ALLOC_CONF, set before torch is imported)")
    ap.add_argument("--cpu-smoke", action="store_true",
                    help="run the whole flow on the CPU with SD1.5 at 64 px (checks the script; nothing is capped or saved)")
    args = ap.parse_args(argv)
    if args.cpu_smoke:
        FAMILIES.clear()
        FAMILIES.update(SMOKE)
        args.family = list(SMOKE)

    layouts, units = load_pack()
    reserve = 400 * 1024 ** 2  # ComfyUI's default reserve on Linux (the real run reads extra_reserved_memory())
    if args.dry_run:
        print(f"runs, {args.over * 100:.0f} % over the cap (weights + our memory_required + reserve):")
        for r in planned_runs(layouts, args.family, args.over, reserve):
            print(f"  {r['family']:6} {'x'.join(map(str, r['size'])):14} latent {r['latent']}  cond batch {r['cond_batch']}  "
                  f"weights {units.fmt_bytes(r['weights'])}  memory_required {units.fmt_bytes(r['memory_required'])}  "
                  f"cap {units.fmt_bytes(r['cap'])}")
        return 0
    comfy_dir = os.environ.get("COMFYUI_DIR")
    if not comfy_dir or not (Path(comfy_dir) / "comfy" / "model_management.py").is_file():
        print("skipped: set COMFYUI_DIR to a ComfyUI checkout (and run with its Python)")
        return 0
    if args.allocator == "async":  # as ComfyUI's cuda_malloc.py does before torch is imported
        if "torch" in sys.modules:
            raise SystemExit("--allocator async: torch was imported before the backend could be chosen")
        conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = (conf + "," if conf else "") + "backend:cudaMallocAsync"
    try:
        import torch
    except ImportError:
        print("skipped: torch is not importable from this Python; run with ComfyUI's interpreter")
        return 0
    if not torch.cuda.is_available() and not args.cpu_smoke:
        print("skipped: no CUDA device (this benchmark caps GPU memory; --dry-run shows the runs, --cpu-smoke the flow)")
        return 0
    comfy = import_comfy(comfy_dir, args.cpu_smoke)
    mm = comfy.model_management
    reserve = int(mm.extra_reserved_memory())
    ballast = None
    if args.emulate == "ballast" and not args.cpu_smoke:
        torch.zeros(1, device=mm.get_torch_device())  # the primary context, current on this thread
        ballast = Ballast()
    # results of the default emulation keep their names; any other names its own file
    suffix = "" if (args.emulate, args.allocator) == ("fraction", "native") else f"_{args.emulate}_{args.allocator}"
    backend = torch.cuda.get_allocator_backend() if torch.cuda.is_available() else None
    if args.decode_need:
        with tempfile.TemporaryDirectory(prefix="gg_fit_") as tmp:
            with torch.inference_mode():  # as the executor runs a prompt: the VAE loads and moves as in ComfyUI
                rows = decode_need(comfy, torch, layouts, units, args.family, Path(args.workdir or tmp), ballast=ballast)
        sys.path.insert(0, str(REPO / "benchmarks"))
        from results import save

        print(f"wrote {save('gpu_fit_vae_decode_need' + suffix, 'COMFYUI_DIR=... python benchmarks/gpu_fit_to_card.py ' + ' '.join(argv or sys.argv[1:]), {'device': mm.get_torch_device_name(mm.get_torch_device()), 'emulate': args.emulate, 'allocator': backend, 'runs': rows})}")
        return 0
    if args.decode_peaks:
        if args.no_cudnn:
            torch.backends.cudnn.enabled = False
        with tempfile.TemporaryDirectory(prefix="gg_fit_") as tmp:
            with torch.inference_mode():
                rows = decode_peaks(comfy, torch, layouts, units, args.family, Path(args.workdir or tmp))
        sys.path.insert(0, str(REPO / "benchmarks"))
        from results import save

        name = "gpu_fit_vae_decode" + ("_no_cudnn" if args.no_cudnn else "") + ("_async" if args.allocator == "async" else "")
        print(f"wrote {save(name, 'COMFYUI_DIR=... python benchmarks/gpu_fit_to_card.py ' + ' '.join(argv or sys.argv[1:]), {'device': mm.get_torch_device_name(mm.get_torch_device()), 'cudnn': not args.no_cudnn, 'allocator': backend, 'runs': rows})}")
        return 0
    card = NoCard(comfy, torch) if args.cpu_smoke else Card(comfy, torch, ballast)
    decode_ooms = DecodeOOMs()
    logging.getLogger().addHandler(decode_ooms)
    from gpu_garden.nodes.fit_guard import dynamic_vram

    print(f"device: {mm.get_torch_device_name(card.dev)}; allocator {backend}; card emulated by {'nothing (CPU smoke)' if args.cpu_smoke else args.emulate}; "
          f"{args.steps} steps, euler; each run {args.over * 100:.0f} % over its cap" + ("; Dynamic VRAM is ON: the guard only supplies figures there" if dynamic_vram() else ""))
    header = ("family", "size", "cap", "variant", "memory_required", "sample", "decode", "peak", "decode peak",
              "identical", "images", "s")
    rows, records = [], []
    started = time.monotonic()
    planned = [r for f in args.family for r in planned_runs(layouts, [f], args.over, reserve)]
    command = "COMFYUI_DIR=... python benchmarks/gpu_fit_to_card.py " + " ".join(argv or sys.argv[1:])
    sys.path.insert(0, str(REPO / "benchmarks"))
    from results import save

    def write(complete):
        """The results so far (after every pair of runs): a run cut short by its time limit keeps what it measured."""
        if args.cpu_smoke:
            return None
        return save("gpu_fit_to_card" + suffix, command, {"device": mm.get_torch_device_name(card.dev), "over": args.over,
                                                  "emulate": args.emulate, "allocator": backend,
                                                  "steps": args.steps, "complete": complete,
                                                  "summary": summarize(records, len(planned), started), "runs": records})

    def record(family, run, r, identical, images):
        rows.append((family, "x".join(map(str, run["size"])), units.fmt_bytes(run["cap"]), r["variant"],
                     units.fmt_bytes(r["supplied"]) if r["supplied"] else "ComfyUI's",
                     "OOM" if r["oom"] else "error" if r.get("error", "").startswith("sampling") else "ok",
                     decode_cell(r), units.fmt_bytes(r.get("peak_sample")), units.fmt_bytes(r.get("peak_decode")),
                     "" if identical is None else str(identical), "" if images is None else str(images), f"{r['seconds']:.1f}"))
        print("  ".join(map(str, rows[-1])), flush=True)  # progress: a killed run still shows its rows
        if r.get("error"):
            print(f"    {r['variant']} error: {r['error']}", flush=True)
        if (r.get("start_allocated") or 0) > 64 << 20:
            print(f"    {r['variant']} started with {units.fmt_bytes(r['start_allocated'])} still allocated", flush=True)
        records.append({"family": family, "size": list(run["size"]), "cap": run["cap"], "variant": r["variant"],
                        "memory_required": r["supplied"], "oom": r["oom"], "decode_oom": r["decode_oom"],
                        "decode_tiled": bool(r.get("decode_tiled")), "decoded": bool(r.get("decoded")),
                        "completed": completed(r), "error": r.get("error"), "peak_sample": r.get("peak_sample"),
                        "peak_decode": r.get("peak_decode"), "start_allocated": r.get("start_allocated"), "identical": identical, "identical_images": images,
                        "seconds": round(r["seconds"], 2)})

    nodes = comfy_nodes()
    # the whole loop as ComfyUI's executor runs a prompt (execution.py: `with torch.inference_mode():`): models
    # load, move and unload as inference tensors, never outside that mode
    with tempfile.TemporaryDirectory(prefix="gg_fit_") as tmp, torch.inference_mode():
        workdir = Path(args.workdir or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for family in args.family:
            runs = [r for r in planned if r["family"] == family]
            if args.time_limit and time.monotonic() - started > args.time_limit:
                print(f"time limit ({args.time_limit:.0f} s): {family} not run", flush=True)
                continue
            try:
                model, vae = build(comfy, layouts, family, workdir)
            except Exception as exc:  # one family failing to load must not take the others down
                err = f"load: {type(exc).__name__}: {exc}"[:300]
                for run in runs:
                    for variant in ("stock", "guard"):
                        record(family, run, {"variant": variant, "oom": False, "decode_oom": False, "supplied": None,
                                             "seconds": 0.0, "error": err}, None, None)
                write(False)
                continue
            for run in runs:
                if args.time_limit and time.monotonic() - started > args.time_limit:
                    print(f"time limit ({args.time_limit:.0f} s): {family} {run['size']} not run", flush=True)
                    continue
                stock = run_one(comfy, torch, card, model, vae, run, False, args.steps, decode_ooms, nodes)
                guard = run_one(comfy, torch, card, model, vae, run, True, args.steps, decode_ooms, nodes)
                identical = same(stock["samples"], guard["samples"])
                # images compared only where neither decode was tiled (tiles may differ at the seams)
                untiled = not any(r["decode_oom"] or r.get("decode_tiled") for r in (stock, guard))
                images = same(stock.get("images"), guard.get("images")) if untiled else None
                for r in (stock, guard):
                    record(family, run, r, identical, images)
                del stock, guard
                write(False)
            del model, vae
            card.set(GiB * 1024)
    if not args.cpu_smoke:
        torch.cuda.set_per_process_memory_fraction(1.0, card.dev)
        if ballast is not None:
            ballast.hold(0)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in (header, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    summary = summarize(records, len(planned), started)
    n, s_ok, g_ok = summary["runs"], summary["stock_completed"], summary["guard_completed"]
    print(f"completed without an OOM: stock {s_ok}/{n}, guard {g_ok}/{n} (goal: >= 90 % with the guard); "
          f"outputs identical where both completed: {summary['identical_outputs']}/{summary['compared_outputs']}; "
          f"images identical where neither decode was tiled: {summary['identical_images']}/{summary['compared_images']}"
          + (f"; {summary['runs_planned'] - n} of {summary['runs_planned']} runs not run (time limit)"
             if n < summary["runs_planned"] else "") + (f"; {summary['errors']} run(s) failed with an error" if summary["errors"] else ""))
    if args.cpu_smoke:
        return 0 if n and g_ok == n else 1
    print(f"wrote {write(n == summary['runs_planned'])}")
    return 0 if n and g_ok / n >= 0.9 else 1


def summarize(records: list, planned: int, started: float) -> dict:
    """Counts per variant over the runs done (a run is one stock and one guard record); planned: runs planned."""
    def rate(variant):
        rs = [r for r in records if r["variant"] == variant]
        return sum(1 for r in rs if r["completed"]), len(rs)

    s_ok, n = rate("stock")
    g_ok, _ = rate("guard")
    guards = [r for r in records if r["variant"] == "guard"]
    compared = [r["identical"] for r in guards if r["identical"] is not None]
    images = [r["identical_images"] for r in guards if r.get("identical_images") is not None]
    return {"runs": n, "runs_planned": planned, "stock_completed": s_ok, "guard_completed": g_ok,
            "stock_oom": sum(1 for r in records if r["variant"] == "stock" and (r["oom"] or r["decode_oom"])),
            "guard_oom": sum(1 for r in guards if r["oom"] or r["decode_oom"]),
            "errors": sum(1 for r in records if r.get("error")),
            "guard_decode_planned_tiles": sum(1 for r in guards if r.get("decode_tiled")),
            "guard_completion_rate": round(g_ok / n, 3) if n else None,
            "identical_outputs": sum(compared), "compared_outputs": len(compared),
            "identical_images": sum(images), "compared_images": len(images),
            "seconds": round(time.monotonic() - started, 1)}

if __name__ == "__main__":
    sys.exit(main())
