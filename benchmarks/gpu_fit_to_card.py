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
"""
import argparse
import gc
import logging
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GiB = 1024 ** 3

# family -> bundled layouts, zero conditioning shapes, sampler cfg, the sizes run (w, h, frames)
FAMILIES = {
    "sdxl": {"checkpoint": "sdxl_sd_xl_base_1.0", "vae": "vae_sdxl_vae", "cfg": 7.0, "context": (77, 2048),
             "pooled": 1280, "sizes": [(1024, 1024, 1), (1536, 1536, 1)]},
    "flux1": {"unet": "flux_flux1-dev", "vae": "vae_flux_ae", "cfg": 1.0, "context": (256, 4096), "pooled": 768,
              "guidance": 3.5, "sizes": [(1024, 1024, 1), (1536, 1536, 1)]},
    "wan21": {"unet": "wan_wan2.1_t2v_1.3B_fp16", "vae": "vae_wan_2.1_vae", "cfg": 5.0, "context": (512, 4096),
              "sizes": [(832, 480, 33), (832, 480, 81)]},
    # not in the default fit runs: --decode-peaks measures its VAE at the model's own 1280x704, 121 frames
    "wan22": {"unet": "wan_wan2.2_ti2v_5B_fp16", "vae": "vae_wan2.2_vae", "cfg": 5.0, "context": (512, 4096),
              "sizes": [(1280, 704, 121)]},
}
# --cpu-smoke only: the same flow on the CPU with SD1.5 (checks the script end to end without a GPU)
SMOKE = {"sd1": {"checkpoint": "sd15_v1-5-pruned-emaonly-fp16", "cfg": 7.0, "context": (77, 768), "sizes": [(64, 64, 1)]}}


def load_pack():
    sys.path.insert(0, str(REPO / "tests"))
    from support.pack import load_pack as _load

    _load()
    from gpu_garden.memory import units
    from gpu_garden.memory.estimate import layouts

    return layouts, units


def latent_shape(family, w, h, frames):
    from gpu_garden.memory.estimate import spec

    sp = spec.family(family)
    return ([1, sp["ch"], (frames - 1) // sp["t"] + 1, h // sp["s"], w // sp["s"]] if sp["t"]
            else [1, sp["ch"], h // sp["s"], w // sp["s"]])


def planned_runs(layouts, families, over, reserve):
    """[(family, (w, h, frames), latent shape, cond batch, weights, our memory_required, cap)] from the layouts."""
    from gpu_garden.memory.estimate import families as fams
    from gpu_garden.memory.fit import plan as fit_plan

    runs = []
    for family in families:
        spec = FAMILIES[family]
        name = spec.get("checkpoint") or spec["unet"]
        table = layouts.table(name)
        if "checkpoint" in spec:
            table = next(c["table"] for c in fams.split_components(table, name) if c["role"] == "diffusion_model")
        from gpu_garden.memory.estimate import weights

        w = weights.resident_bytes(table)
        arch = fams.detect_family(table).get("arch")
        cb = 1 if math.isclose(spec["cfg"], 1.0) else 2
        for size in spec["sizes"]:
            shape = latent_shape(family, *size)
            req = fit_plan.sample_memory_required(family, shape, "bf16" if family == "flux1" else "fp16", cb, arch)
            cap = int((w + req + reserve) * (1 - over) / (GiB // 4)) * (GiB // 4)
            runs.append({"family": family, "size": size, "latent": shape, "cond_batch": cb, "weights": w,
                         "memory_required": req, "cap": cap})
    return runs


# -- the GPU part -----------------------------------------------------------------------------------
def import_comfy(comfy_dir: str, cpu=False):
    sys.dont_write_bytecode = True  # never write into the ComfyUI checkout
    sys.path.insert(0, comfy_dir)
    import comfy.cli_args

    comfy.cli_args.args.cpu = cpu
    import comfy.model_management
    import comfy.sample
    import comfy.sd
    import comfy.utils  # noqa: F401

    return comfy


class NoCard:
    """--cpu-smoke: no card to emulate; models are unloaded between runs."""

    def __init__(self, comfy, torch):
        self.mm, self.dev = comfy.model_management, comfy.model_management.get_torch_device()

    def set(self, cap):
        self.mm.unload_all_models()
        gc.collect()


def peak(torch, dev):
    return torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None


class Ballast:
    """Device memory held through the CUDA driver (cuMemAlloc), outside PyTorch's allocator, as another process
    holds it: what is left is all the card has, for every reader of free memory (ComfyUI, cuDNN's workspace choice,
    the allocator backends). `hold(n)` replaces what was held; `hold(0)` releases it."""

    def __init__(self, lib=None):
        import ctypes

        self.ct = ctypes
        self.lib = lib if lib is not None else ctypes.CDLL("libcuda.so.1")
        self.lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        self.lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        self.ptr, self.size = None, 0

    def hold(self, n: int):
        ct = self.ct
        if self.ptr is not None:
            self.lib.cuMemFree_v2(self.ptr)
            self.ptr, self.size = None, 0
        if n <= 0:
            return
        ctx = ct.c_void_p()
        self.lib.cuCtxGetCurrent(ct.byref(ctx))
        if not ctx.value:  # torch's primary context is current once a CUDA call ran on this thread
            raise RuntimeError("ballast: no current CUDA context on this thread")
        ptr = ct.c_uint64()
        rc = self.lib.cuMemAlloc_v2(ct.byref(ptr), ct.c_size_t(n))
        if rc:
            raise RuntimeError(f"ballast: cuMemAlloc of {n} bytes failed (CUresult {rc})")
        self.ptr, self.size = ptr.value, n


class Card:
    """Emulates a `cap`-byte card: the allocator is capped and ComfyUI's free memory is shifted to match, or (with
    a ballast) the rest of the card is held outside PyTorch and nothing needs shifting."""

    def __init__(self, comfy, torch, ballast=None):
        self.mm, self.torch, self.ballast = comfy.model_management, torch, ballast
        self.dev = self.mm.get_torch_device()
        self.total = torch.cuda.get_device_properties(self.dev).total_memory
        self.hide = 0
        self.orig = self.mm.get_free_memory
        card = self

        def get_free_memory(dev=None, torch_free_too=False):
            r = card.orig(dev, torch_free_too)
            if dev is not None and getattr(dev, "type", str(dev)) == "cpu":
                return r
            if torch_free_too:
                return max(0, r[0] - card.hide), r[1]
            return max(0, r - card.hide)

        self.mm.get_free_memory = get_free_memory

    def set(self, cap):
        t = self.torch
        self.mm.unload_all_models()
        gc.collect()
        if self.ballast is not None:
            self.ballast.hold(0)
        self.mm.soft_empty_cache(True)
        t.cuda.synchronize(self.dev)
        free, total = t.cuda.mem_get_info(self.dev)
        outside = (total - free) - t.cuda.memory_reserved(self.dev)  # CUDA context and other processes
        hide = max(0, total - outside - cap)
        clear = getattr(t._C, "_cuda_clearCublasWorkspaces", None)
        if clear is not None:  # cuBLAS keeps its workspaces in the allocator: each run starts as the first did
            clear()
        if self.ballast is not None:
            self.ballast.hold(hide)
        else:
            self.hide = hide
            t.cuda.set_per_process_memory_fraction(min(1.0, cap / total), self.dev)
        t.cuda.reset_peak_memory_stats(self.dev)
        self.start = t.cuda.memory_allocated(self.dev)  # what an earlier run left behind (should be nothing)


class DecodeOOMs(logging.Handler):
    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        if "Ran out of memory when regular VAE decoding" in record.getMessage():
            self.count += 1


def comfy_nodes():
    """ComfyUI's own nodes.py (COMFYUI_DIR is first on sys.path): KSampler's common_ksampler and VAEDecode, so
    the runs take the path a queued prompt takes."""
    import nodes

    return nodes


def load_vae(comfy, path):
    """As VAELoader.load_vae (nodes.py): the state dict, comfy.sd.VAE, then its validity check."""
    vae = comfy.sd.VAE(sd=comfy.utils.load_torch_file(path))
    vae.throw_exception_if_invalid()
    return vae


def build(comfy, layouts, family, workdir):
    """The model and VAE as CheckpointLoaderSimple / UNETLoader / VAELoader load them, under torch.inference_mode()
    as ComfyUI's executor runs every node of a prompt (execution.py); the text encoders are not loaded."""
    import torch

    spec = FAMILIES[family]
    path = lambda name: str(layouts.write_sparse(name, workdir / f"{name}.safetensors"))  # noqa: E731
    with torch.inference_mode():
        if "vae" not in spec:  # a checkpoint with its VAE (the CPU smoke)
            out = comfy.sd.load_checkpoint_guess_config(path(spec["checkpoint"]), output_vae=True, output_clip=False)
            return out[0], out[2]
        if "checkpoint" in spec:
            model = comfy.sd.load_checkpoint_guess_config(path(spec["checkpoint"]), output_vae=False, output_clip=False)[0]
        else:
            model = comfy.sd.load_diffusion_model(path(spec["unet"]), model_options={})  # UNETLoader, weight_dtype default
        return model, load_vae(comfy, path(spec["vae"]))


def conds(torch, family):
    spec = FAMILIES[family]
    extra = {}
    if spec.get("pooled"):
        extra["pooled_output"] = torch.zeros(1, spec["pooled"])
    if spec.get("guidance"):
        extra["guidance"] = spec["guidance"]
    pos = [[torch.zeros(1, *spec["context"]), dict(extra)]]
    neg = [[torch.zeros(1, *spec["context"]), dict(extra)]]
    return pos, neg


SEED = 0  # KSampler's seed widget: common_ksampler hands the same seed to prepare_noise and to the sampler


def run_one(comfy, torch, card, model, vae, run, guard, steps, decode_ooms, nodes):
    """One run as a prompt runs it: KSampler (nodes.common_ksampler: fix_empty_latent_channels, prepare_noise
    from the seed, the preview callback, ComfyUI's progress-bar flag), then VAEDecode.decode, both under
    torch.inference_mode() as the executor runs nodes."""
    from gpu_garden.memory.fit import plan as fit_plan
    from gpu_garden.nodes import fit_guard

    mm = comfy.model_management
    card.set(run["cap"])
    spec = FAMILIES[run["family"]]
    latent = {"samples": torch.zeros(run["latent"])}  # EmptyLatentImage / EmptyHunyuanLatentVideo: zeros on the CPU
    pos, neg = conds(torch, run["family"])
    out = {"variant": "guard" if guard else "stock", "oom": False, "decode_oom": False, "samples": None, "supplied": None}
    m, v = model, vae
    ctx = None
    if guard:
        try:
            ctx = {"facts": fit_guard.model_facts(model), "budget": run["cap"], "reserve": mm.extra_reserved_memory(),
                   "context": 0, "origin": "benchmark"}
            m = fit_guard.attach(model, ctx)
            kind = fit_guard.vae_kind(vae, run["family"])
            p = fit_plan.plan(run["cap"], weights={"vae": int(vae.patcher.model_size())}, memory_required=0,
                              reserve=ctx["reserve"], decode={"kind": kind, "latent_shape": run["latent"], "dtype": str(vae.vae_dtype)})
            v = fit_guard.sized_vae(vae, kind, p["decode"].get("args") if p["decode"]["tiled"] else None)
            out["decode_tiled"] = p["decode"]["tiled"]
        except Exception as exc:  # the guard could not be set up: this run failed, the others still run
            return dict(out, error=f"guard setup: {type(exc).__name__}: {exc}"[:300], seconds=0.0)
    out["start_allocated"] = getattr(card, "start", None)
    t = time.perf_counter()
    try:
        with torch.inference_mode():   # as ComfyUI's executor runs every node (execution.py)
            s = nodes.common_ksampler(m, SEED, steps, spec["cfg"], "euler", "simple", pos, neg, latent, denoise=1.0)[0]
        out["samples"], out["latent"] = s["samples"], s
        out["peak_sample"] = peak(torch, card.dev)
    except mm.OOM_EXCEPTION:
        out["oom"] = True
    except Exception as exc:  # not an OOM (a cuDNN/cuBLAS status, a bug): this run failed, the others still run
        out["error"] = f"sampling: {type(exc).__name__}: {exc}"[:300]
    out["supplied"] = (ctx or {}).get("supplied", {}).get("memory_required")
    out["seconds"] = time.perf_counter() - t
    if guard and not out["oom"] and not out.get("error") and not guard_applied(ctx):
        out["error"] = "guard: not applied (Fit to Card fell back to ComfyUI's own figure; its warning is in the log)"
    if out["samples"] is not None:
        before = decode_ooms.count
        if card.dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(card.dev)
        try:
            with torch.inference_mode():   # without it autograd keeps every decoder activation (the VAE's
                out["images"] = nodes.VAEDecode().decode(v, out.pop("latent"))[0]  # parameters require grad)
            out["decoded"] = True
            out["peak_decode"] = peak(torch, card.dev)
        except mm.OOM_EXCEPTION:
            out["decode_oom"] = True
        except Exception as exc:
            out["error"] = f"decode: {type(exc).__name__}: {exc}"[:300]
        out["decode_oom"] = out["decode_oom"] or decode_ooms.count > before  # ComfyUI fell back to tiles after an OOM
    out.pop("latent", None)
    return out


def guard_applied(ctx: dict) -> bool:
    """Did ComfyUI's loader get our figure? The guard falls back to ComfyUI's own on any error of its own (it never
    fails a user's sampling), which would make a guard run a stock run in disguise."""
    rec = (ctx or {}).get("supplied") or {}
    return rec.get("memory_required") is not None and rec.get("consulted") is True


def completed(r: dict) -> bool:
    """Completed: sampled and decoded, with no out-of-memory error in either (a decode that ran out of memory and
    then finished in ComfyUI's tiles is not a completion; one the guard planned in tiles from the start is) and no
    other error."""
    return bool(r.get("decoded")) and not r["oom"] and not r["decode_oom"] and not r.get("error")


def decode_cell(r: dict) -> str:
    if r.get("samples") is None and not r.get("decoded"):
        return "n/a"
    if r.get("error", "").startswith("decode"):
        return "error"
    if r["decode_oom"]:
        return "OOM->tiled" if r.get("decoded") else "OOM"
    return "tiled (planned)" if r.get("decode_tiled") else "ok"


def same(a, b):
    """torch.equal of two outputs, None when either is missing (a failed run)."""
    import torch

    return torch.equal(a, b) if a is not None and b is not None else None


def loaded_vaes(comfy, torch, layouts, families, workdir):
    """(family, size, latent shape, vae, kind) for each family's VAE and size, with only that VAE loaded, fully, on
    an otherwise empty GPU; each VAE is dropped after its sizes."""
    from gpu_garden.nodes import fit_guard

    mm = comfy.model_management
    dev = mm.get_torch_device()
    for family in families:
        spec = FAMILIES[family]
        vae = load_vae(comfy, str(layouts.write_sparse(spec["vae"], workdir / f"{spec['vae']}.safetensors")))
        kind = fit_guard.vae_kind(vae, family)
        for size in spec["sizes"]:
            mm.unload_all_models()
            gc.collect()
            torch.cuda.empty_cache()
            mm.load_models_gpu([vae.patcher], force_full_load=True)
            torch.cuda.synchronize(dev)
            yield family, size, latent_shape(family, *size), vae, kind
        del vae
        mm.unload_all_models()


def decode_peaks(comfy, torch, layouts, units, families, workdir) -> list:
    """--decode-peaks: each family's untiled VAE decode on the uncapped GPU, one sample: the allocator's peak
    above the loaded weights, beside our per-sample figure (with margin) and ComfyUI's memory_used_decode."""
    from gpu_garden.memory.fit import plan as fit_plan

    mm = comfy.model_management
    dev = mm.get_torch_device()
    rows = []
    for family, size, shape, vae, kind in loaded_vaes(comfy, torch, layouts, families, workdir):
        base = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        lat = torch.zeros(shape)
        with torch.inference_mode():   # as ComfyUI's executor runs VAE Decode
            vae.decode(lat)
        torch.cuda.synchronize(dev)
        measured = torch.cuda.max_memory_allocated(dev) - base
        ours = fit_plan.with_margin(fit_plan.decode_bytes(kind, [1] + shape[1:], str(vae.vae_dtype)))
        comfy_fig = int(vae.memory_used_decode(lat.shape, vae.vae_dtype))
        rows.append({"family": family, "size": list(size), "kind": kind, "dtype": str(vae.vae_dtype), "measured": int(measured),
                     "ours": int(ours), "comfyui": comfy_fig, "ours_error": round(ours / measured - 1, 3),
                     "comfyui_error": round(comfy_fig / measured - 1, 3)})
        r = rows[-1]
        print(f"{family:6} {'x'.join(map(str, size)):12} {kind:8} measured {units.fmt_bytes(measured):>10}  ours "
              f"{units.fmt_bytes(ours):>10} ({r['ours_error']:+.0%})  ComfyUI {units.fmt_bytes(comfy_fig):>10} "
              f"({r['comfyui_error']:+.0%})", flush=True)
    return rows


def decode_need(comfy, torch, layouts, units, families, workdir, steps=7, ballast=None) -> list:
    """--decode-need: the smallest room above the loaded VAE weights in which the untiled decode of one sample
    runs (first_stage_model.decode, no tiled fallback), found by bisection with the allocator capped
    (set_per_process_memory_fraction) or, with a ballast, the rest of the card held outside PyTorch; an uncapped
    peak is elastic (the allocator and cuDNN take what is free)."""
    from gpu_garden.memory.fit import plan as fit_plan

    mm = comfy.model_management
    dev = mm.get_torch_device()
    total = torch.cuda.get_device_properties(dev).total_memory
    rows = []
    for family, size, shape, vae, kind in loaded_vaes(comfy, torch, layouts, families, workdir):
        base = torch.cuda.memory_reserved(dev)
        ours = fit_plan.decode_room(kind, [1] + shape[1:], str(vae.vae_dtype))  # the room Fit to Card sizes with
        comfy_fig = int(vae.memory_used_decode(shape, vae.vae_dtype))

        def runs(room):
            torch.cuda.empty_cache()
            if ballast is not None:  # free memory down to `room` above what PyTorch keeps (the loaded weights)
                torch.cuda.synchronize(dev)
                ballast.hold(max(0, torch.cuda.mem_get_info(dev)[0] - (room - (torch.cuda.memory_reserved(dev) - base))))
            else:
                torch.cuda.set_per_process_memory_fraction(min(1.0, (base + room) / total), dev)
            try:
                with torch.no_grad():
                    vae.first_stage_model.decode(torch.zeros(shape, dtype=vae.vae_dtype, device=dev))
                torch.cuda.synchronize(dev)
                return True
            except torch.cuda.OutOfMemoryError:
                return False
            finally:
                gc.collect()
                torch.cuda.empty_cache()
                if ballast is not None:
                    ballast.hold(0)
                else:
                    torch.cuda.set_per_process_memory_fraction(1.0, dev)

        lo, hi = 0, max(ours, comfy_fig)
        while not runs(hi) and hi < total - base:
            lo, hi = hi, min(total - base, hi * 2)
        for _ in range(steps):
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if runs(mid) else (mid, hi)
        rows.append({"family": family, "size": list(size), "kind": kind, "dtype": str(vae.vae_dtype), "need_at_most": int(hi),
                     "need_above": int(lo), "ours": int(ours), "comfyui": comfy_fig, "ours_error": round(ours / hi - 1, 3),
                     "comfyui_error": round(comfy_fig / hi - 1, 3)})
        r = rows[-1]
        print(f"{family:6} {'x'.join(map(str, size)):12} {kind:8} {r['dtype']:15} runs in {units.fmt_bytes(hi):>10} "
              f"(not in {units.fmt_bytes(lo)})  ours {units.fmt_bytes(ours):>10} ({r['ours_error']:+.0%})  ComfyUI "
              f"{units.fmt_bytes(comfy_fig):>10} ({r['comfyui_error']:+.0%})", flush=True)
    return rows


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
