"""Fit to Card's VAE adapter: decode and encode sized from our estimate instead of ComfyUI's guess.

ComfyUI 0.8.0's VAE.decode / VAE.encode ask the instance attributes memory_used_decode / memory_used_encode how
much one sample needs, hand that to load_models_gpu and batch int(free / figure) samples at once; when one
sample does not fit they run out of memory first and only then retry in tiles.

- The node returns a shallow copy of its VAE (same weights, same patcher) whose two attributes are ours; each
  decode is planned when it runs, from the live budget, and when one sample does not fit it goes straight to
  decode_tiled with the largest tile that does (sized_vae). The original VAE is untouched.
- Automatic mode (setting GPUGarden.FitToCard, no node) does the same for every VAE that did not go through a
  node: one wrapper each on comfy.sd.VAE.decode and VAE.encode (functools.wraps, so other packs' wrappers
  stack), which swaps the instance's two attributes for ours only for the duration of the call and puts
  ComfyUI's back in `finally`. A VAE whose kind is unknown keeps ComfyUI's figures. Any failure of ours falls
  back to ComfyUI's own call.
- On CUDA the figures include the CUDA convolution workspace (memory/estimate/cuda_conv.py); on ROCm, MPS, XPU
  and CPU they do not (device_type)."""
import copy
import functools
import logging
import types

from ..memory.estimate import families, spec
from ..memory.fit import plan as fit_plan

log = logging.getLogger("gpu_garden")
_state = {"last": None, "installed": False}
MAX_USERS = 64
_users: dict[str, dict] = {}  # user -> {"last", "last_auto", "last_vae"}: GET /gpu_garden/fit answers each their own


def running_user() -> str:
    """The user whose prompt is running (auto_unload.current_user: the page's client_id as its request named it)."""
    try:
        from .auto_unload import current_user

        return current_user()
    except Exception:
        return "default"


def remember(key: str, record: dict, user: str | None = None) -> None:
    """Keep `record` as `user`'s (default: the running prompt's) `key`; the oldest users drop out beyond MAX_USERS."""
    user = user or running_user()
    slot = _users.pop(user, {})
    slot[key] = record
    _users[user] = slot
    while len(_users) > MAX_USERS:
        _users.pop(next(iter(_users)))


def recalled(user: str) -> dict:
    return dict(_users.get(user) or {})


def vae_kind(vae, family: str) -> str:
    from .estimate import table_of

    fsm = getattr(vae, "first_stage_model", None)
    kind = families.vae_kind(table_of(fsm)) if fsm is not None else None
    return spec.vae_kind_for(kind, family)


def auto_vae_kind(vae) -> str | None:
    """The VAE's kind from its own weights (automatic mode has no model family to fall back on); None: unknown."""
    from .estimate import table_of

    fsm = getattr(vae, "first_stage_model", None)
    kind = families.vae_kind(table_of(fsm)) if fsm is not None else None
    if not kind:
        return None
    if kind.startswith("kl") or kind == "vae":
        return "kl"
    return kind if kind in spec.VAE else "video"


def device_type(vae) -> str:
    """torch's device type of the VAE's load device, "rocm" for a ROCm build's "cuda"; "cuda" when unknown."""
    kind = getattr(getattr(vae, "device", None), "type", None) or "cuda"
    if kind == "cuda":
        try:
            import torch
            if getattr(torch.version, "hip", None):
                return "rocm"
        except Exception:  # torch missing: nothing to size anyway
            pass
    return str(kind)


def on_compute_device(vae, budget_device=None) -> bool:
    """Does the VAE run on the device the budget measures (`budget_device`; default ComfyUI's compute device)? Not
    under --cpu-vae (the CPU beside a GPU budget): such a decode is sized, never tiled from the GPU's room. True
    when unknown."""
    dev = getattr(vae, "device", None)
    comp = budget_device if hasattr(budget_device, "type") else None
    try:
        from . import host_models

        comp = comp or host_models.compute_device()
    except Exception:
        comp = None
    if dev is None or comp is None:
        return True
    from ..memory.budget.probe import _device_key

    return _device_key(str(dev)) == _device_key(str(comp))


def _pixel_dims(shape):
    sh = [int(x) for x in shape]
    return (sh[-1], sh[-2], sh[2]) if len(sh) == 5 else (sh[-1], sh[-2])


def used_decode_for(kind: str, tile: dict | None, device: str = "cuda"):
    """memory_used_decode(shape, dtype) from our estimate: one sample, or one tile of `tile` (plan decode args),
    on `device` (a device type: the CUDA convolution workspace counts on "cuda" only)."""
    if tile:
        def used_decode(shape, dtype):
            s = list(shape)
            t = [1, s[1]] + ([min(s[2], tile.get("tile_t", s[2]))] if len(s) == 5 else []) + \
                [min(s[-2], tile["tile_y"]), min(s[-1], tile["tile_x"])]
            return fit_plan.decode_room(kind, t, str(dtype), device)
    else:
        def used_decode(shape, dtype):
            return fit_plan.decode_room(kind, [1] + list(shape)[1:], str(dtype), device)
    return used_decode


def used_encode_for(kind: str, device: str = "cuda"):
    return lambda shape, dtype: fit_plan.with_margin(fit_plan.encode_bytes(kind, _pixel_dims(shape), str(dtype), device))


def recorded_encode(kind: str, device: str, origin: str):
    """used_encode_for that also keeps what it answered (GET /gpu_garden/fit last_vae, op "encode")."""
    ours = used_encode_for(kind, device)

    def figure(shape, dtype):
        n = ours(shape, dtype)
        _state["last"] = {"origin": origin, "op": "encode", "kind": kind, "memory_used_encode": int(n),
                          "pixels": [int(x) for x in shape]}
        remember("last_vae", _state["last"])
        return n
    return figure


def with_fallback(ours, theirs):
    """memory_used_decode/encode that answers our figure, or ComfyUI's own (`theirs`) when ours raises: ComfyUI
    calls it inside a try that catches only OOM, so an error of ours would fail the user's decode or encode."""
    def figure(shape, dtype, *args, **kwargs):
        try:
            return ours(shape, dtype)
        except Exception as exc:
            if theirs is None:
                raise
            log.warning("[GPU Garden] Fit to Card VAE figure failed for shape %s, ComfyUI's own is used: %s: %s",
                        list(shape), type(exc).__name__, exc)
            return theirs(shape, dtype, *args, **kwargs)
    return figure


def decode_in_tiles(vae, samples_in, tile: dict):
    """VAE.decode's result, decoded with VAE.decode_tiled and the plan's tile (ComfyUI's own tiled path).

    A planned tile that still runs out of memory is halved and tried again, down to the tile ComfyUI's own fallback
    uses, so a planned decode never fails where ComfyUI's would have tiled and finished. The capped need can exceed
    our figure: on the second GPU run (benchmarks/results/gpu_fit_vae_decode_need.json) Wan 2.1's decode at 832x480x33
    ran only in 4.80 GiB where we said 4.03, and the guard's planned 640 px tile ran out of memory with no image."""
    if vae.latent_dim == 2 and samples_in.ndim == 5:
        samples_in = samples_in[:, :, 0]
    tries = smaller_tiles(tile, samples_in.ndim, _fallback_tile(vae))
    for i, args in enumerate(tries):
        try:
            return vae.decode_tiled(samples_in, **args)
        except Exception as exc:
            if i == len(tries) - 1 or not _is_oom(exc):
                raise
        # out of the except block, so the failed attempt's tensors can be freed (as comfy.sd.VAE.decode does)
        log.warning("[GPU Garden] Fit to Card: the VAE decode ran out of memory in %s latent tiles; retrying in %s",
                    _tile_name(args), _tile_name(tries[i + 1]))
        _retried(args, tries[i + 1])
        _empty_cache()


def smaller_tiles(tile: dict, ndim: int, floor: int) -> list[dict]:
    """decode_tiled arguments to try in order: the plan's tile, then its side halved while it stays above `floor`
    (ComfyUI's fallback tile side, latent units), then the floor itself; overlap an eighth of the side, as planned."""
    first = dict(tile)
    if ndim != 5:
        first.pop("tile_t", None), first.pop("overlap_t", None)
    out, side = [first], int(first.get("tile_x", floor))
    while side // 2 > floor:
        side //= 2
        out.append(dict(first, tile_x=side, tile_y=side, overlap=max(1, side // 8)))
    if side > floor:
        out.append(dict(first, tile_x=floor, tile_y=floor, overlap=max(1, floor // 4)))
    return out


def _fallback_tile(vae) -> int:
    """The tile side (latent units) of ComfyUI's own fallback after an OOM: 256 px for a video VAE (comfy.sd VAE.decode:
    256 // spacial_compression_decode()), decode_tiled_'s default 64 for an image VAE."""
    if getattr(vae, "latent_dim", 2) == 3:
        try:
            return max(1, 256 // int(vae.spacial_compression_decode()))
        except Exception:
            return 32
    return 64


def _tile_name(args: dict) -> str:
    return f"{args.get('tile_x')}x{args.get('tile_y')}" + (f"x{args['tile_t']}" if "tile_t" in args else "")


def _retried(failed: dict, then: dict) -> None:
    last = _state.get("last")
    if last and last.get("op") == "decode":
        last.setdefault("retries", []).append({"tile": failed, "then": then})


def _is_oom(exc: BaseException) -> bool:
    """What ComfyUI's own VAE.decode retries on (model_management.OOM_EXCEPTION), or any *OutOfMemoryError."""
    if type(exc).__name__.endswith("OutOfMemoryError"):
        return True
    try:
        import comfy.model_management as mm

        return mm.OOM_EXCEPTION is not Exception and isinstance(exc, mm.OOM_EXCEPTION)
    except Exception:
        return False


def _empty_cache() -> None:
    try:
        import comfy.model_management as mm

        mm.soft_empty_cache()
    except Exception:
        pass


def sized_vae(vae, kind: str, context=None):
    """A shallow copy of `vae` (same weights and patcher) whose decode/encode sizing is our estimate. With
    `context` (a callable returning the budget dict of this moment: nodes/fit_guard.py vae_context) each decode
    is planned when it runs, from the live budget: tiled when one sample does not fit it. The original VAE is
    untouched; nothing budget-dependent is frozen in the copy, which ComfyUI caches with the node's outputs.
    A dict for `context` is a fixed tile (plan decode args): every decode runs tiled with it (the GPU benchmark)."""
    v = copy.copy(vae)
    tile = context if isinstance(context, dict) else None
    v.gpu_garden_fit = {"kind": kind, "tile": tile}
    dev = device_type(vae)
    v.memory_used_decode = with_fallback(used_decode_for(kind, tile, dev), getattr(vae, "memory_used_decode", None))
    v.memory_used_encode = with_fallback(recorded_encode(kind, dev, "node"), getattr(vae, "memory_used_encode", None))
    if tile:
        v.decode = types.MethodType(lambda self, samples_in, vae_options={}: decode_in_tiles(self, samples_in, tile), v)
    elif callable(context):
        v.decode = types.MethodType(functools.partial(_planned_decode, kind, context), v)
    return v


def _planned_decode(kind, context, self, samples_in, *args, **kwargs):
    """The node's VAE copy's decode: planned now (decode_plan), tiled when the live budget says so; ComfyUI's own
    decode with our per-sample sizing otherwise, or when our planning fails."""
    plan = None
    try:
        ctx = context()
        plan = decode_plan(self, kind, samples_in.shape, ctx)
        _record(ctx.get("origin", "node"), self, samples_in, plan, ctx)
    except Exception as exc:
        log.warning("[GPU Garden] Fit to Card VAE decode planning skipped, sized from our per-sample figure: %s", exc)
    if plan is not None and plan["tile"]:
        with _Sizing(self, memory_used_decode=used_decode_for(kind, plan["tile"], plan["device"])):
            return decode_in_tiles(self, samples_in, plan["tile"])
    return type(self).decode(self, samples_in, *args, **kwargs)


def _record(origin, vae, samples_in, plan, ctx) -> None:
    used = used_decode_for(plan["kind"], plan["tile"], plan.get("device", "cuda"))
    _state["last"] = {"origin": origin, "node": ctx.get("node"), "op": "decode", "kind": plan["kind"], "tiled": bool(plan["tile"]),
                      "memory_used_decode": int(used(list(samples_in.shape), getattr(vae, "vae_dtype", "bf16"))),
                      "tile": plan["tile"], "budget": ctx.get("budget")}
    remember("last_vae", _state["last"])


# -- automatic mode -----------------------------------------------------------------------------------
class _Sizing:
    """The instance's memory_used_decode / memory_used_encode are ours while the call runs; ComfyUI's afterwards."""

    def __init__(self, vae, **attrs):
        self.vae, self.attrs = vae, attrs

    def __enter__(self):
        d = self.vae.__dict__
        self.saved = {k: (k in d, d.get(k)) for k in self.attrs}
        for k, fn in self.attrs.items():
            setattr(self.vae, k, with_fallback(fn, getattr(self.vae, k, None)))
        return self

    def __exit__(self, *exc):
        for k, (had, old) in self.saved.items():
            if had:
                setattr(self.vae, k, old)
            else:
                self.vae.__dict__.pop(k, None)
        return False


def auto_decode_plan(vae, shape, ctx: dict) -> dict | None:
    """What automatic mode does for this decode (decode_plan); None: a VAE of unknown kind keeps ComfyUI's own."""
    kind = auto_vae_kind(vae)
    return None if kind is None else decode_plan(vae, kind, shape, ctx)


def decode_plan(vae, kind: str, shape, ctx: dict) -> dict:
    """What a decode of `shape` does on ctx's budget: {"kind", "tile" (None: untiled), "per_sample", "tile_bytes",
    "device"}. Without a budget (no GPU found), or a VAE not on ctx["device"] (the budget's; --cpu-vae), only the
    sizing changes: ComfyUI batches from its free memory."""
    shape = [int(x) for x in shape]
    if getattr(vae, "latent_dim", 2) == 2 and len(shape) == 5:
        shape = shape[:2] + shape[3:]
    vae_w = int(vae.patcher.model_size()) if getattr(vae, "patcher", None) is not None else 0
    budget = ctx.get("budget") if on_compute_device(vae, ctx.get("device")) else None  # --cpu-vae: ComfyUI batches from host RAM
    p = fit_plan.plan(budget, weights={"diffusion_model": 0, "vae": vae_w}, memory_required=0,
                      decode={"kind": kind, "latent_shape": shape, "dtype": str(getattr(vae, "vae_dtype", "bf16")),
                              "device": device_type(vae)},
                      context=ctx.get("context", 0), reserve=ctx.get("reserve", 0))
    d = p["decode"]
    tile = d.get("args") if d.get("tiled") and d.get("tile_px") else None
    return {"kind": kind, "tile": tile, "per_sample": d["per_sample"], "tile_bytes": d["bytes"] if tile else None,
            "device": device_type(vae)}


def _wrap_decode(original, active, context):
    @functools.wraps(original)
    def decode(self, samples_in, *args, **kwargs):
        plan = None
        try:
            if _state["installed"] and getattr(self, "gpu_garden_fit", None) is None and active():
                ctx = context()
                plan = auto_decode_plan(self, samples_in.shape, ctx)
            if plan is not None:
                used = used_decode_for(plan["kind"], plan["tile"], plan.get("device", "cuda"))
                _record("auto", self, samples_in, plan, ctx)
        except Exception as exc:
            plan = None
            log.warning("[GPU Garden] Fit to Card automatic VAE sizing skipped, ComfyUI's own figure is used: %s", exc)
        if plan is None:
            return original(self, samples_in, *args, **kwargs)
        with _Sizing(self, memory_used_decode=used):
            if plan["tile"]:
                return decode_in_tiles(self, samples_in, plan["tile"])
            return original(self, samples_in, *args, **kwargs)

    return decode


def _wrap_encode(original, active):
    @functools.wraps(original)
    def encode(self, pixel_samples, *args, **kwargs):
        kind = None
        try:
            if _state["installed"] and getattr(self, "gpu_garden_fit", None) is None and active():
                kind = auto_vae_kind(self)
        except Exception as exc:
            log.warning("[GPU Garden] Fit to Card automatic VAE sizing skipped, ComfyUI's own figure is used: %s", exc)
        if kind is None:
            return original(self, pixel_samples, *args, **kwargs)
        with _Sizing(self, memory_used_encode=recorded_encode(kind, device_type(self), "auto")):
            return original(self, pixel_samples, *args, **kwargs)

    return encode


def install(active, context, in_chain) -> None:
    """Automatic mode's VAE wrappers (idempotent). active(): the setting is on; context(): the budget dict."""
    import comfy.sd as sd

    for name, make in (("decode", lambda f: _wrap_decode(f, active, context)), ("encode", lambda f: _wrap_encode(f, active))):
        mine = _state.get(name)
        if mine is None or not in_chain(getattr(sd.VAE, name), [mine]):
            _state[name] = make(getattr(sd.VAE, name))
            setattr(sd.VAE, name, _state[name])
    _state["installed"] = True
