"""gpu_fit_to_card.py's runs as a queued prompt runs them: ComfyUI imported from COMFYUI_DIR, the model and VAE as
its loaders load them, zero conditionings, one run (KSampler, then VAE Decode, stock or through the guard) and how
a run is judged (completed, the decode cell, identical outputs)."""
import sys
import time

from gpu_fit_card import peak
from gpu_fit_plan import FAMILIES


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
