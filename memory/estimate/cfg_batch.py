"""Cond and uncond batched or one at a time, as ComfyUI 0.8.0 chooses on a budget (aud66a F4: they were always counted
batched, so a Wan 2.2 14B run on 24 GB was estimated with twice the activations ComfyUI runs it with).

comfy/samplers.py:263-274 (_calc_cond_batch): the conds that concatenate (cond and uncond) are tried batched first,
then in halves: to_batch_temp[:len // i] for i = 1, 2, ... is taken while model.memory_required(its input shape) * 1.5 <
model_management.get_free_memory(device); with the two of CFG that is both batched, else one at a time. memory_required
is linear in the batch (comfy/model_base.py:359-383), so one cond's is half the batched figure (formula's
comfyui_memory_required is the batched one).

get_free_memory (model_management.py:1278) is the device's free memory: the card less the CUDA context and what is
loaded (ComfyUI's reserve is not subtracted there). At sampling the diffusion model (and what the estimate keeps beside
it) was loaded by load_models_gpu (comfy/sampler_helpers.py:137-138, model_management.py:621-707) with
minimum_memory_required = max(minimum_inference_memory(), memory_required(one cond) + reserve), minimum_inference_memory
= 0.8 GiB + reserve (:581-582): it loads whole where the weights leave that much free, else partially, keeping
lowvram_model_memory (:695, comfy_load.comfy_weights_kept): free - minimum_memory_required on NVIDIA, and never less
than min(0.4 x free, free - minimum_inference_memory()) on ROCm and XPU (MIN_WEIGHT_MEMORY_RATIO, comfy_load.py), which
can leave less than that minimum free. So the free memory at sampling is card - context - the weights kept - what of
the text encoders the text encode left loaded (te_loaded.py: unloaded only as far as that load asks; the conds' own
inference memory, a ControlNet's, is left out).

`--cond-uncond batched|separate` (policy cond_uncond) forces one; with no budget the smallest card that fits decides
(verdict.finish tries each card with what ComfyUI would choose there)."""
from . import dual_cfg, te_loaded
from ..units import fmt_bytes

SRC = "comfy/samplers.py:263-274"
FACTOR = 1.5  # samplers.py:273


def applies(est: dict) -> bool:
    """Whether ComfyUI's own choice is modelled: CFG batched by the estimate (not forced by --cond-uncond), ComfyUI's
    sampler (not diffusers / Wan's reference code), on a card, with ComfyUI's memory_required known."""
    pol = est["policy"]
    return bool(est.get("cfg") and not pol.get("cond_uncond") and pol.get("runner", "comfyui") == "comfyui"
                and est.get("comfyui_memory_required") and "sample" in est.get("phases", {}))


def free_at_sample(est: dict, budget: int) -> int:
    """get_free_memory at sampling on `budget` bytes: the card less the CUDA context and the sample phase's weights as
    load_models_gpu keeps them (all, or a partial load: comfy_load.comfy_weights_kept with the --device's
    MIN_WEIGHT_MEMORY_RATIO)."""
    return held_at_sample(est, budget)[0]


def held_at_sample(est: dict, budget: int) -> tuple[int, int]:
    """(get_free_memory at sampling, text-encoder bytes still loaded then): te_loaded.at_sample, the text encoders
    the text encode left on the card unloaded only as far as the sampler's load asks (est67)."""
    room = budget - est["fixed"].get("cuda_context", 0)
    te, kept, before = te_loaded.at_sample(est, budget, est["breakdown"]["sample"]["weights"])
    before += te_loaded.vae_at_sample(est, budget, est["breakdown"]["sample"]["weights"])  # an i2v encode's VAE (fix68d)
    return max(0, min(room, room - te - kept - before)), te


def batched_on(est: dict, budget: int) -> tuple[bool, str]:
    """(batched, why) as ComfyUI decides on `budget` for this (batched) estimate."""
    need, (free, te) = est["comfyui_memory_required"], held_at_sample(est, budget)
    ok = need * FACTOR < free
    return ok, (f"cond and uncond {f'batched (x{dual_cfg.of(est)})' if ok else 'one at a time'}: ComfyUI batches them only while "
                f"{FACTOR:g} x its memory_required batched ({fmt_bytes(need)}) is under the free memory at sampling "
                f"(~{fmt_bytes(free)} on {fmt_bytes(budget)}: the card less the CUDA context and the loaded weights"
                + (f", {fmt_bytes(te)} of the text encoders still loaded from the text encode among them" if te else "")
                + f"), {SRC}; --cond-uncond batched|separate forces one")


def _like(src: dict, est: dict) -> dict:
    """A shallow copy of src judged as est is: est's policy (a tier's copy has its own) and fixed figures."""
    out = dict(src, policy=est["policy"], fixed=dict(est["fixed"]))
    out["_ctx"] = dict(src["_ctx"], policy=est["policy"])
    return out


def _separate(base: dict, held: dict, two=False) -> dict:
    """base (the batched estimate) with cond and uncond one at a time: formula.estimate again with cfg False, once per
    estimate (held["est"], shared by the tiers' copies); two: a DualCFGGuider's three conds where all three do not fit
    but two do: one runs alone, the two left batched (samplers.py:263-274 again on what is left; dual_cfg.py)."""
    from .formula import estimate

    key = "est2" if two else "est"
    if key not in held:
        ctx = base["_ctx"]
        p = dict(base["policy"], **({"conds": 2, "cond_uncond": "batched"} if two else {}))  # two: judged as is
        p.pop("weights_dtype", None)  # the components carry it already (verdict.knobs' again)
        comps = [{k: v for k, v in c.items() if k != "resident"} | {"role": c["role"]} for c in ctx["components"]]
        held[key] = estimate(comps, ctx["width"], ctx["height"], ctx["frames"], ctx["batch"], cfg=two, policy=p)
    alt = held[key]
    out = dict(base)
    for k, v in alt.items():
        if k not in ("policy", "fixed", "assumptions", "knobs", "verdict", "budget", "min_vram_gb"):
            out[k] = dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v
    out["_ctx"] = dict(alt["_ctx"], policy=base["policy"], cfg_alt=held)
    out["cfg_separate"] = True  # the header: CFG on, separate passes
    return out


def choose(est: dict, budget) -> dict:
    """est as ComfyUI would run it on `budget` bytes: a new dict, batched or one at a time, whose assumptions end with
    the line saying which and why (cond_uncond: the same as data); est itself where the choice is not modelled (no
    budget, --cond-uncond given, CFG off, ...). The batched estimate is kept (est["_ctx"]["cfg_alt"]["batched"]) so a
    tier's copy of an estimate judged one at a time on its own budget may batch again."""
    if not budget:
        return est
    held = est["_ctx"].get("cfg_alt")
    if held is None:
        if not applies(est):
            return est
        held = est["_ctx"]["cfg_alt"] = {}
        held["batched"] = dict(est)
    base = _like(held["batched"], est)
    ok, why = batched_on(base, budget)
    two = not ok and dual_cfg.of(base) == 3 and base["comfyui_memory_required"] * 2 // 3 * FACTOR < held_at_sample(base, budget)[0]
    out = base if ok else _separate(base, held, two)
    keep = [_cfg_on(a) for a in est["assumptions"] if not a.startswith(CFG_LINES)]
    why += "; of a DualCFGGuider's three, one runs alone and the two left batched" if two else ""
    out["assumptions"] = keep + [why]
    free, te = held_at_sample(base, budget)
    out["cond_uncond"] = {"batched": ok, "free_at_sample": free, "te_kept": te,
                          "memory_required_batched": base["comfyui_memory_required"], "why": why,
                          "conds": 3 if ok and dual_cfg.of(base) == 3 else 2 if two else 1 if not ok else 2}
    return out


def _cfg_on(line: str) -> str:
    """formula's "CFG on: cond and uncond batched (x2) as X workflows usually run" without the batched: choose says."""
    return line.replace("CFG on: cond and uncond batched (x2) as ", "CFG on as ", 1)


# the lines formula.estimate writes on how the conds run (replaced by choose's) and choose's own (a re-judged estimate)
CFG_LINES = ("CFG on: ComfyUI batches cond and uncond", "cond and uncond as separate passes (or cfg 1)",
             "cond and uncond batched (x2): ComfyUI", "cond and uncond batched (x3): ComfyUI",  # x3: dual_cfg.py
             "cond and uncond one at a time: ComfyUI")
