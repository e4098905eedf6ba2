"""Fit to Card's adapter to ComfyUI: our figures in place of its two guesses, per model clone and per VAE copy.

Sampling. ComfyUI 0.8.0 loads the diffusion model in comfy.sampler_helpers._prepare_sampling, which asks
estimate_memory -> model.model.memory_required(shape) and hands the result to load_models_gpu(memory_required,
minimum_memory_required). Our PREPARE_SAMPLING wrapper (comfy.patcher_extension, registered on a model clone
with add_wrapper_with_key, so only that clone's samplers see it) answers that question with our estimate of
the batch the sampler will run (memory/fit/plan.py: cond and uncond as calc_cond_batch batches them, the
manual-cast copy, our allocator margin), for both figures. The answer is an attribute on the model instance
that exists only for the duration of the wrapped call, in the worker thread that runs it; it is removed in
`finally`. ComfyUI's own partial loading then keeps exactly the weights that leave room for it.

VAE: nodes/fit_vae.py (the node's sized copy, and automatic mode's decode/encode sizing).

Dynamic VRAM (comfy-aimdo, ComfyUI 2026): weights are paged in and evicted by the allocator itself, so the
guard moves no weights and unloads no encoders there; it only hands ComfyUI the activation figure through the
same memory_required parameter (the headroom ComfyUI keeps for activations) and sizes the VAE.

Automatic mode (setting GPUGarden.FitToCard, default off): the same for every sampler whose model has no Fit
to Card node, through one wrapper on comfy.sampler_helpers.prepare_sampling (as auto_unload.py does), and the
same VAE sizing for every VAE that did not go through a node (fit_vae.install)."""
import functools
import logging
import math
import weakref

from ..memory.estimate import families, spec
from ..memory.estimate.headers import tensor_bytes
from ..memory.estimate.weights import largest_cast, numbered_blocks
from ..memory.fit import offers as fit_offers
from ..memory.fit import plan as fit_plan
from . import health
from . import fit_vae
from .fit_vae import sized_vae, vae_kind  # noqa: F401  (the node's VAE copy; nodes/fit_vae.py)

log = logging.getLogger("gpu_garden")

KEY = "gpu_garden.fit_to_card"
SETTING_ID = "GPUGarden.FitToCard"
SEAM = "comfy.sampler_helpers.prepare_sampling"
FEATURE = health.register("fit_guard.prepare_sampling", check=lambda f: _check(f))
_state = {"last": None, "last_auto": None, "installed": False, "facts": {}}


# -- facts about the loaded objects ---------------------------------------------------------------
def model_facts(model) -> dict:
    """family, arch, compute dtype, manual-cast copy, weight bytes and repeated blocks of a MODEL (cached
    per loaded model: the state dict is read once)."""
    base = model.model
    key = id(base)
    hit = _state["facts"].get(key)
    if hit is not None and hit[0]() is base:
        return hit[1]
    from .estimate import table_of

    table = table_of(base.diffusion_model)
    det = families.detect_family(table)
    family = det["family"]
    config = type(getattr(base, "model_config", None)).__name__
    if family == "unknown" and families.family_for_config(config):
        family = families.family_for_config(config)
    dtype = getattr(base, "manual_cast_dtype", None) or (base.get_dtype() if hasattr(base, "get_dtype") else "bf16")
    largest, stored, params = 0, 0, 0
    for dt, shape in table.values():
        nbytes = tensor_bytes(dt, shape)
        largest = max(largest, nbytes)
        stored, params = stored + nbytes, params + math.prod(shape)
    # what a wrapper's block swap moves: the longest numbered list (one definition, memory/estimate/weights.py)
    groups = [sum(tensor_bytes(dt, s) for dt, s in b.values()) for b in numbered_blocks(table)]
    facts = {"family": family, "arch": det.get("arch") or None, "dtype": str(dtype), "cast_bytes": largest_cast(table), "largest": largest,
             "bytes": int(model.model_size()), "config": config,
             "blocks": {"count": len(groups), "bytes": max(groups)} if groups else None,
             "weight_bits": round(8 * stored / params, 2) if params else None}  # fp8 ~8, Q4_K ~4.5: what the offers may save
    if len(_state["facts"]) > 8:
        _state["facts"].clear()
    _state["facts"][key] = (weakref.ref(base), facts)  # never keeps a model alive
    return facts


def dynamic_vram() -> bool:
    try:
        from .unload import dynamic_vram_enabled

        return dynamic_vram_enabled()
    except Exception:
        return False


def min_weight_ratio() -> float:
    """ComfyUI's MIN_WEIGHT_MEMORY_RATIO (host_models), else the plan's default."""
    from . import host_models

    return host_models.min_weight_memory_ratio(fit_plan.MIN_WEIGHT_RATIO)


UNCALIBRATED = "unknown family: ComfyUI's own estimate kept"


def calibrated(family, shape=None) -> bool:
    """Our estimate covers this model: a known family on an image or video latent (4-D or 5-D). Otherwise (an audio,
    3D or unrecognised model) ComfyUI's own memory_required is kept, in the node as in automatic mode: a generic
    figure would offload weights for nothing (a Stable Audio latent [1, 64, 1024] read as 2.9 GiB)."""
    return family not in (None, "unknown") and (shape is None or len(shape) in (4, 5))


def cond_counts(conds: dict) -> dict:
    return {k: len(v or ()) for k, v in (conds or {}).items()}


def required_for(facts: dict, noise_shape, cond_batch: int, budget=None, reserve=0, context=0) -> int:
    """memory_required for this batch. When the weights will not all stay on the GPU (budget known), ComfyUI
    copies each offloaded weight to the GPU as a layer runs: room for two copies of the largest weight (the
    one in use and the one being prefetched) is added to the manual-cast copy."""
    def req(cast):
        return fit_plan.sample_memory_required(facts["family"], list(noise_shape), facts["dtype"], cond_batch, facts["arch"],
                                               cast_bytes=cast)

    out = req(facts["cast_bytes"])
    if budget is not None and facts["bytes"] + out + reserve + context > budget:
        out = req(max(facts["cast_bytes"], 2 * facts.get("largest", 0)))
    return out


def windowed_shape(model_options, noise_shape) -> list:
    """The latent one sampler call runs: with context windows (comfy/context_windows.py) only context_length
    frames along the handler's dim, as ComfyUI's own prepare-sampling wrapper for them counts it."""
    shape = [int(x) for x in noise_shape]
    h = (model_options or {}).get("context_handler")
    dim, n = getattr(h, "dim", None), getattr(h, "context_length", None)
    if isinstance(dim, int) and isinstance(n, int) and 0 <= dim < len(shape):
        shape[dim] = min(shape[dim], n)
    return shape


def stock_required(model, noise_shape, cond_batch: int):
    """ComfyUI's own memory_required for the same batch (estimate_memory asks it for 2B and B)."""
    try:
        return int(model.model.memory_required([int(noise_shape[0]) * cond_batch] + list(noise_shape[1:])))
    except Exception:
        return None


# -- the memory_required answer ---------------------------------------------------------------------
class _Answer:
    """model.model.memory_required answers `figure` while the wrapped call runs; removed afterwards."""

    def __init__(self, base, figure):
        self.base, self.figure, self.calls = base, int(figure), 0

    def __enter__(self):
        d = self.base.__dict__
        self.had, self.old = "memory_required" in d, d.get("memory_required")

        def memory_required(input_shape, cond_shapes={}):
            self.calls += 1
            return self.figure

        self.base.memory_required = memory_required
        return self

    def __exit__(self, *exc):
        if self.had:
            self.base.memory_required = self.old
        else:
            self.base.__dict__.pop("memory_required", None)
        return False


def _publish(record: dict) -> None:
    _state["last"] = record
    fit_vae.remember("last", record)  # the running prompt's user's: GET /gpu_garden/fit answers each their own
    if record.get("origin") == "auto":
        _state["last_auto"] = record
        fit_vae.remember("last_auto", record)
    try:
        from server import PromptServer

        inst = PromptServer.instance
        sid = getattr(inst, "client_id", None)
        if sid:
            inst.send_sync("gpu_garden.fit", record, sid)
    except Exception:
        pass


def _offload_encoders(ctx, model) -> list:
    """Text encoders off the sampler's device: the node's CLIP only, or (automatic mode) every encoder that
    is not one of the sampler's own models. Never with Dynamic VRAM (the allocator evicts pages itself)."""
    try:
        if ctx.get("clip") is not None:
            from .unload import unload_clip

            return unload_clip(ctx["clip"], "offload").get("left_device", [])
        from .auto_unload import unload_before_sampling

        r = unload_before_sampling(model)
        return (r or {}).get("left_device", [])
    except Exception as exc:
        log.warning("[GPU Garden] Fit to Card: text encoders could not be offloaded: %s", exc)
        return []


def _encoders_on_device(model) -> int:
    try:
        from . import host_models

        dev = getattr(model, "load_device", None)
        return sum(int(lm.model_loaded_memory()) for lm in host_models.entries()
                   if getattr(lm.model, "is_clip", False) and lm.device == dev)
    except Exception:
        return 0


def _model_options(args, kwargs):
    """prepare_sampling's model_options, however the caller passed it (4th positional or keyword)."""
    return kwargs.get("model_options", args[0] if args else None)


def guarded(ctx: dict, call, model, noise_shape, conds, *args, **kwargs):
    """Run ComfyUI's prepare_sampling (`call`) with our memory_required; record what was supplied. Any failure
    of ours falls back to ComfyUI's own figure: the guard never fails a user's sampling. The arguments after
    conds go to ComfyUI exactly as its caller gave them (0.8.0 has model_options and force_full_load; before
    December 2025 there was no force_full_load, and a keyword it does not know would fail every sampler)."""
    model_options = _model_options(args, kwargs)

    def plain():
        return call(model, noise_shape, conds, *args, **kwargs)

    try:
        facts = ctx.get("facts") or model_facts(model)
        kept = not calibrated(facts.get("family"), noise_shape)
    except Exception:
        kept = False
    if kept:  # ComfyUI's own figure; its call runs once, outside our try (an OOM or interrupt is its own)
        out = plain()
        try:
            _publish(kept_record(ctx, model, noise_shape))
        except Exception as exc:
            log.warning("[GPU Garden] Fit to Card: the kept record was not published: %s", exc)
        return out
    try:
        req, record = _prepare(ctx, model, noise_shape, conds, model_options)
        base = getattr(model, "model", None)
        if base is None or not hasattr(base, "memory_required"):
            FEATURE.fail(RuntimeError("this model has no memory_required: ComfyUI's own figure is used"))
            return plain()
        answer = _Answer(base, req).__enter__()
    except Exception as exc:
        FEATURE.fail(exc)
        log.warning("[GPU Garden] Fit to Card skipped, ComfyUI's own figure is used: %s: %s", type(exc).__name__, exc)
        return plain()
    try:
        out = plain()
    finally:
        answer.__exit__(None, None, None)
    record["consulted"] = answer.calls > 0
    if answer.calls:
        FEATURE.ok()
    else:  # a ComfyUI that no longer asks model.model.memory_required: say so, never guess
        FEATURE.fail(RuntimeError("ComfyUI's prepare_sampling did not ask memory_required: its own figure was used"))
        log.warning("[GPU Garden] Fit to Card: this ComfyUI did not ask memory_required; its own figure was used")
    return out


def kept_record(ctx: dict, model, noise_shape) -> dict:
    """What a sampler on a model our estimate does not cover got: ComfyUI's own figure, untouched."""
    record = {"origin": ctx.get("origin", "node"), "node": ctx.get("node"), "memory_required": None,
              "consulted": False, "kept": "comfyui", "latent_shape": [int(x) for x in noise_shape],
              "stock_memory_required": stock_required(model, noise_shape, 2),
              "stock_minimum_memory_required": stock_required(model, noise_shape, 1), "summary": UNCALIBRATED,
              "budget": ctx.get("budget"), "steps": [], "offers": []}
    ctx["supplied"] = record
    return record


def budget_now(source: dict):
    """(bytes, label) of the node's budget at this moment: vram_gb when set on the node; else the live budget of the
    model's device (a snapshot under 1.5 s old, as automatic mode reads it). A wired VRAM Budget snapshot is not read:
    it lists every device the probe measured, so it could not choose another card, and its figure would be the one
    frozen when the node ran, stale in ComfyUI's cache."""
    from .estimate import live_budget

    return live_budget(None, source.get("vram_gb"), source.get("device"))


def live_context(ctx: dict, *objs) -> dict:
    """ctx with the budget (and host RAM, for the run's models `objs`) of this moment, for the node's ctx (its
    "source"); automatic mode's ctx is already read at the call. Called by the wrapped prepare_sampling and by the node's
    VAE copy at each decode."""
    if ctx.get("source") is not None:
        ctx["budget"] = budget_now(ctx["source"])[0]
        ctx["host_ram"] = host_ram(*objs)
    return ctx


def host_ram(*objs):
    """Host RAM the run's models `objs` may use: available RAM now plus what their weights already hold in RAM. The
    loader nodes ran first, so MemAvailable no longer counts the weights the plan's need counts again (FLUX with Dynamic
    VRAM on 64 GiB read "does NOT fit" for a run already holding them). None when RAM cannot be read."""
    try:
        from ..memory.estimate import verdict

        avail = verdict.host_available_ram()
    except Exception:
        return None
    if avail is None:
        return None
    return avail if weights_mmap() == "on" else avail + cpu_weight_bytes(*objs)  # mapped pages: in MemAvailable already


def weights_mmap() -> str:
    """"on" when this ComfyUI's loader maps safetensors files now (comfy/utils.py load_safetensors, comfy_aimdo.model_mmap,
    taken when comfy.memory_management.aimdo_enabled), "off" when it does not (0.8.0 has no load_safetensors: safe_open,
    then load_state_dict copies into anonymous memory), "auto" (host_ram.aimdo_maps_files) when comfy is not loaded."""
    import sys

    utils = sys.modules.get("comfy.utils")
    if utils is None:
        return "auto"
    if not callable(getattr(utils, "load_safetensors", None)):
        return "off"
    return "on" if getattr(sys.modules.get("comfy.memory_management"), "aimdo_enabled", False) else "off"


def cpu_weight_bytes(*objs) -> int:
    """Bytes of the weights of `objs` (a ModelPatcher, or a CLIP / VAE holding one as .patcher) in host RAM now: each
    model's tensors on the CPU, through torch's public state_dict (ComfyUI 0.8.0 keeps no figure of its own for a model
    loaded to the GPU from the start), each model once (clones share it). Whatever cannot be read counts 0: the stricter
    figure. Weights mapped from the file (page cache) are in MemAvailable already: host_ram leaves them out then."""
    seen, total = set(), 0
    for o in objs:
        p = o if hasattr(o, "model_size") else getattr(o, "patcher", None)
        m = getattr(p, "model", None)
        if m is None or id(m) in seen or not hasattr(m, "state_dict"):
            continue
        seen.add(id(m))
        try:
            for t in m.state_dict(keep_vars=True).values():
                if getattr(getattr(t, "device", None), "type", None) == "cpu":
                    total += int(t.numel()) * int(t.element_size())
        except Exception:
            continue
    return total


def vae_context(ctx: dict) -> dict:
    """What the node's VAE copy plans a decode against, now (nodes/fit_vae.py decode_plan)."""
    live_context(ctx)
    return {"budget": ctx.get("budget"), "reserve": ctx.get("reserve", 0), "context": ctx.get("context", 0),
            "device": (ctx.get("source") or {}).get("device"), "origin": ctx.get("origin", "node"), "node": ctx.get("node")}


def _prepare(ctx: dict, model, noise_shape, conds, model_options):
    """Our figure for this sampler call, the plan (text encoders off when it needs their room) and the record."""
    facts = ctx.get("facts") or model_facts(model)
    live_context(ctx, model)  # the plan below counts the diffusion model's weights only
    mo = model_options or {}
    n = fit_plan.planned_cond_batch(cond_counts(conds), ctx.get("cfg"), bool(mo.get("disable_cfg1_optimization")))
    whole = [int(x) for x in noise_shape]
    noise_shape = windowed_shape(mo, noise_shape)
    args = (n, ctx.get("budget"), ctx.get("reserve", 0), ctx.get("context", 0))
    req = required_for(facts, noise_shape, *args)
    dyn = dynamic_vram()
    p = None
    left = []
    if ctx.get("budget") is not None:  # the node's offers too: automatic mode's plan has no node, only GET /gpu_garden/fit
        from . import host_models

        inputs = fit_offers.sample_inputs(facts["family"], whole, noise_shape, lambda s: required_for(facts, s, *args))
        p = fit_plan.plan(ctx["budget"], weights={"diffusion_model": facts["bytes"]}, memory_required=req,
                          context=ctx.get("context", 0), reserve=ctx.get("reserve", 0), te_on_gpu=_encoders_on_device(model),
                          dynamic_vram=dyn, host_ram=ctx.get("host_ram"), min_weight_ratio=min_weight_ratio(),
                          blocks=facts.get("blocks"), weight_bits=facts.get("weight_bits"),
                          ram_policy={"platform": host_models.platform_name(), "weights_mmap": weights_mmap()},
                          files=ctx.get("files"), **inputs)  # the node's loaders' file names, as its face had them
        if p["text_encoders_off"] and not dyn and ctx.get("apply", True):
            left = _offload_encoders(ctx, model)
    record = {"origin": ctx.get("origin", "node"), "node": ctx.get("node"), "memory_required": req,
              "minimum_memory_required": req, "cond_batch": n, "latent_shape": [int(x) for x in noise_shape],
              "stock_memory_required": stock_required(model, noise_shape, 2),
              "stock_minimum_memory_required": stock_required(model, noise_shape, 1),
              "dynamic_vram": dyn, "encoders_offloaded": left, "summary": p["summary"] if p else None,
              "fits": p["fits"] if p else None, "predicted_peak": p["predicted_peak"] if p else None,
              "budget": ctx.get("budget"), "steps": p["steps"] if p else [], "offers": p["offers"] if p else []}
    ctx["supplied"] = record
    _publish(record)
    log.info("[GPU Garden] Fit to Card: ComfyUI's loader gets memory_required %d (ours, %s; stock %s)%s", req,
             prompts_per_step(n), record["stock_memory_required"], f"; {p['summary']}" if p else "")
    return req, record


def prompts_per_step(n) -> str:
    """The sampler's conditioning batch in words, one wording for the log, the node's text face (fit_to_card.face) and
    the page's face (web/fit_to_card.js promptsPerStep): the prompt and the negative prompt are two, run together."""
    return "one prompt per step" if n == 1 else f"{n} prompts run together each step"


def _prepare_wrapper(ctx, executor, model, noise_shape, conds, *args, **kwargs):
    return guarded(ctx, executor, model, noise_shape, conds, *args, **kwargs)


def _outer_wrapper(ctx, executor, *args, **kwargs):
    ctx["cfg"] = getattr(getattr(executor, "class_obj", None), "cfg", None)  # the guider's cfg (None: BasicGuider)
    return executor(*args, **kwargs)


def attach(model, ctx: dict):
    """A clone of `model` whose samplers load it with our memory_required."""
    import comfy.patcher_extension as pe

    clone = model.clone()
    clone.remove_wrappers_with_key(pe.WrappersMP.PREPARE_SAMPLING, KEY)
    clone.remove_wrappers_with_key(pe.WrappersMP.OUTER_SAMPLE, KEY)
    clone.add_wrapper_with_key(pe.WrappersMP.OUTER_SAMPLE, KEY, functools.partial(_outer_wrapper, ctx))
    clone.add_wrapper_with_key(pe.WrappersMP.PREPARE_SAMPLING, KEY, functools.partial(_prepare_wrapper, ctx))
    return clone


def has_node_wrapper(model) -> bool:
    try:
        import comfy.patcher_extension as pe

        return bool(model.wrappers.get(pe.WrappersMP.PREPARE_SAMPLING, {}).get(KEY))
    except Exception:
        return False


# -- automatic mode -----------------------------------------------------------------------------------
def enabled(user: str | None = None) -> bool:
    """`user` (default: the running prompt's) has GPUGarden.FitToCard on (ComfyUI's settings store, read as
    auto_unload reads its own)."""
    from .auto_unload import user_setting

    return user_setting(SETTING_ID, user)


def auto_context(model) -> dict:
    from .estimate import comfy_reserve, compute_device_kind, live_budget

    budget, _ = live_budget(None, 0, getattr(model, "load_device", None))  # the sampler's device (None: ComfyUI's)
    return {"origin": "auto", "budget": budget, "reserve": comfy_reserve() or 0, "cfg": None,
            "context": spec.CUDA_CONTEXT if compute_device_kind() in ("cuda", "rocm") else 0}


def _wrap(original):
    @functools.wraps(original)
    def prepare_sampling(model, noise_shape, conds, *args, **kwargs):  # passed on as given (see guarded)
        ctx = None
        try:
            if _state["installed"] and not has_node_wrapper(model) and enabled():
                facts = model_facts(model)
                if calibrated(facts.get("family"), noise_shape):  # audio, 3D, unknown models: ComfyUI's own figure
                    ctx = dict(auto_context(model), facts=facts)
        except Exception as exc:
            log.warning("[GPU Garden] Fit to Card automatic mode skipped: %s", exc)
        if ctx is None:
            return original(model, noise_shape, conds, *args, **kwargs)
        return guarded(ctx, original, model, noise_shape, conds, *args, **kwargs)

    return prepare_sampling


def _ours(fn) -> bool:
    return health.in_chain(fn, [w for w in (_state.get("wrapper"),) if w is not None])


def install() -> None:
    import comfy.sampler_helpers as sh

    if not _ours(sh.prepare_sampling):
        _state["wrapper"] = _wrap(sh.prepare_sampling)
        sh.prepare_sampling = _state["wrapper"]
    _state["installed"] = True
    FEATURE.ok()
    try:
        fit_vae.install(_auto_on, lambda: auto_context(None), health.in_chain)
    except Exception as exc:  # the sampler's guard works without it
        log.warning("[GPU Garden] Fit to Card automatic VAE sizing disabled: %s", exc)


def _auto_on() -> bool:
    try:
        return enabled()
    except Exception:
        return False


def _check(feature) -> None:
    try:
        import comfy.sampler_helpers as sh
    except Exception:
        return
    if _state["installed"] and not _ours(sh.prepare_sampling):
        feature.uninstalled(f"{SEAM} was replaced without keeping our wrapper (__wrapped__): automatic mode is off")
    elif _state["installed"]:  # the setting (default off) is a state, not a failure: health shows it as off
        try:
            on = enabled(health.asking_user())  # the asking page's user; else the running prompt's
        except Exception:
            on = False
        feature.switch(on, f"automatic mode {'on' if on else 'off'} (setting {SETTING_ID}); Fit to Card nodes work either way")


def status(user: str | None = None) -> dict:
    """Automatic mode as `user` (the asking page's; default: the running prompt's) has it, and that user's last
    plans: another user's prompts, their models and sizes, are not shown."""
    user = user or fit_vae.running_user()
    try:
        on = enabled(user)
    except Exception:
        on = False
    mine = fit_vae.recalled(user)
    return {"setting": SETTING_ID, "enabled": on, "user": user, "installed": _state["installed"], "seam": SEAM,
            "dynamic_vram": dynamic_vram(), "last": mine.get("last"), "last_auto": mine.get("last_auto"),
            "last_vae": mine.get("last_vae"), "vae_installed": fit_vae._state["installed"]}


def setup() -> None:
    try:
        install()
    except ImportError as exc:
        log.warning("[GPU Garden] Fit to Card automatic mode disabled: %s", exc)
        return
    from aiohttp import web
    from server import PromptServer

    @PromptServer.instance.routes.get("/gpu_garden/fit")
    async def fit_status(request):
        from .auto_unload import current_user, request_user

        cid = request.query.get("client_id")  # as GET /gpu_garden/auto_unload: a page, else the request's user
        return web.json_response(status(current_user(cid) if cid else request_user(request)))
