"""The cheapest plan that makes a run fit a budget, as ComfyUI 0.8.0's own loader will carry it out.

ComfyUI decides placement from two figures it guesses (comfy/sampler_helpers.estimate_memory ->
BaseModel.memory_required, and VAE.memory_used_decode). Fit to Card hands it ours instead; this module says
what ComfyUI will then do and what that costs, cheapest first:

1. text encoders off the GPU during sampling (they are not used there);
2. the weights kept on the GPU: load_models_gpu keeps `free - max(minimum_inference_memory(), memory_required +
   reserve)` of them, never less than its own floor min(free * MIN_WEIGHT_MEMORY_RATIO, free -
   minimum_inference_memory()), the rest is streamed from host RAM (same result, slower);
3. the VAE decode chunked (ComfyUI decodes int(free / per-sample) samples at once) or, when one sample does
   not fit, tiled with the largest tile the budget allows (ComfyUI would otherwise OOM first, then tile).

Changes that alter the image (fp8/GGUF weights, lower resolution, fewer frames, a wrapper's block-swap count)
are only offered, with the figure that would fit. Every activation figure comes through the one-line doors
below (memory/estimate is the single source), so swapping the estimate is a one-line change."""
import math

from ..estimate import phases, spec
from ..estimate import vae as vae_mod
from ..estimate import host_ram as est_ram
# the room an untiled video decode needs free on CUDA, one figure with the estimate's fallback test (decode_room.py)
from ..estimate.decode_room import CAPPED_ROOM, margin as room_margin  # noqa: F401
# load_models_gpu's arithmetic, one copy for the estimate and this plan (MIN_WEIGHT_RATIO: NVIDIA's; the node reads the
# live one): re-exported, fit_guard and the tests read plan.MIN_WEIGHT_RATIO / plan.comfy_weights_kept
from ..estimate.comfy_load import (MIN_WEIGHT_RATIO, WHOLE, WHOLE_DEVICES, comfy_minimum, comfy_weights_kept,  # noqa: F401
                                   partial_floor, sample_load)
from . import offers as offers_mod
from ..units import GiB, fmt_bytes

MARGIN = spec.FRAGMENTATION  # our allocator margin on activations (the estimate's)
MIN_INFERENCE = spec.MIN_INFERENCE  # minimum_inference_memory() less extra_reserved_memory()
TILE_STEP, TILE_MIN = 64, 128  # decode tile sizes tried, in pixels


# -- the estimate, one door each ---------------------------------------------------------------------
def activation_bytes(family, latent_shape, dtype="bf16", cond_batch=1, arch=None, text_tokens=None) -> int:
    """One model call's activations (weights, margin and fixed costs not included)."""
    return phases.sample_activation_bytes(family, latent_shape, dtype, cond_batch, arch, text_tokens=text_tokens)


def decode_bytes(kind, latent_shape, dtype="bf16", device="cuda") -> int:
    """One sample's VAE decode activations, untiled, on `device` (torch's device type): on "cuda" they include
    the CUDA convolution workspace (estimate/cuda_conv.py); elsewhere that term is 0."""
    return vae_mod.vae_decode_bytes(kind, latent_shape, dtype, device=device)


def decode_room(kind, latent_shape, dtype="bf16", device="cuda") -> int:
    """What one decode (a sample, or a tile) needs free: its activations plus our margin, or on CUDA a video decode's
    measured room (CAPPED_ROOM). Fit to Card sizes ComfyUI's decode batch and its tiles with this."""
    return int(decode_bytes(kind, latent_shape, dtype, device) * (1 + room_margin(kind, latent_shape, device, CAPPED_ROOM)))


def encode_bytes(kind, pixel_shape, dtype="bf16", device="cuda") -> int:
    return vae_mod.vae_encode_bytes(kind, pixel_shape, dtype, device=device)


def with_margin(n) -> int:
    return int(n * (1 + MARGIN))


def sample_memory_required(family, latent_shape, dtype="bf16", cond_batch=1, arch=None, text_tokens=None,
                           cast_bytes=0) -> int:
    """What ComfyUI's loader receives as memory_required: one model call on B x cond_batch samples, plus the
    manual-cast copy of the largest weight (fp8/GGUF), plus our allocator margin. ComfyUI adds its reserve."""
    return with_margin(activation_bytes(family, latent_shape, dtype, cond_batch, arch, text_tokens) + int(cast_bytes))


def planned_cond_batch(cond_counts: dict, cfg=None, disable_cfg1_optimization=False) -> int:
    """How many conditionings the sampler batches into one model call (comfy/samplers.py calc_cond_batch):
    every cond entry of every non-empty key, except that at cfg 1 the negative is skipped (ComfyUI's cfg1
    optimization). cfg None (a guider that has none): every key counts."""
    n = 0
    for key, count in cond_counts.items():
        if not count:
            continue
        if key == "negative" and cfg is not None and math.isclose(float(cfg), 1.0) and not disable_cfg1_optimization:
            continue
        n += int(count)
    return max(1, n)


# -- VAE tiles ------------------------------------------------------------------------------------
def tile_args(kind, px, frames=None) -> dict:
    """VAE.decode_tiled arguments (latent units) for a tile of `px` pixels (and `frames` frames)."""
    v = spec.VAE.get(kind, spec.VAE["video"])
    t = px // v["s"]
    args = {"tile_x": t, "tile_y": t, "overlap": max(1, t // 8)}
    if frames and v["t"]:
        args.update(tile_t=max(2, frames // v["t"]), overlap_t=max(1, 8 // v["t"]))
    return args


def decode_tile(kind, latent_shape, dtype, room, temporal=False, device="cuda") -> dict | None:
    """The largest tile (pixels, a multiple of 64, at least 128) whose decode_room fits `room` bytes;
    None when even the smallest does not. A video is tiled in space only, over all its frames, as ComfyUI's own
    fallback does (decode_tiled_3d, tile_t 999); temporal=True: the largest time chunk (VAE Decode (Tiled)'s
    temporal_size, 64/32/16/8 frames) and tile that fit, which changes the video at the seams (offered only)."""
    v = spec.VAE.get(kind, spec.VAE["video"])
    h, w = int(latent_shape[-2]) * v["s"], int(latent_shape[-1]) * v["s"]
    video = len(latent_shape) == 5 and v["t"]
    if temporal and not video:
        return None
    top = max(TILE_MIN, max(h, w) // TILE_STEP * TILE_STEP)
    if not video:
        chunks = (None,)
    elif temporal:
        chunks = tuple(f for f in (spec.TILE_NODE["frames"], 32, 16, 8) if f // v["t"] < int(latent_shape[2]))
    else:
        chunks = (int(latent_shape[2]) * v["t"],)  # every latent frame in one tile
    for frames in chunks:
        for px in range(top, TILE_MIN - 1, -TILE_STEP):
            shape = vae_mod.tile_latent_shape(kind, latent_shape, False, {"tile": px, "frames": frames or spec.TILE_NODE["frames"]})
            need = decode_room(kind, shape, dtype, device)
            if need <= room:
                f = frames if temporal else None
                return {"tile_px": px, "frames": f, "bytes": need, "args": tile_args(kind, px, f)}
    return None


# -- the plan -------------------------------------------------------------------------------------
def _step(sid, label, saving, kind="applied", **extra) -> dict:
    return dict({"id": sid, "label": label, "saving": int(max(0, saving)), "kind": kind}, **extra)


def plan(budget, *, weights: dict, memory_required: int, decode: dict | None = None, context=0, reserve=0,
         host_ram=None, te_on_gpu=None, dynamic_vram=False, blocks: dict | None = None, pixels: dict | None = None,
         stock_memory_required=None, min_weight_ratio=MIN_WEIGHT_RATIO, windows: dict | None = None,
         weight_bits=None, ram_policy: dict | None = None, files: dict | None = None) -> dict:
    """budget: bytes of VRAM this run may use (None: no budget). weights: {"diffusion_model", "text_encoders",
    "vae"} bytes as loaded. memory_required: sample_memory_required() for the batch the sampler runs.
    decode: {"kind", "latent_shape", "dtype"[, "device": torch's device type, default "cuda"]}. context: the CUDA context; reserve: ComfyUI's
    extra_reserved_memory(). te_on_gpu: text-encoder bytes on the GPU when the sampler starts (default all).
    blocks: {"count", "bytes"} of the diffusion model's repeated blocks (for block-swap counts). pixels:
    {"width", "height", "frames", "batch"} for the offers. stock_memory_required: ComfyUI's own figure, to say what
    stock would have done. windows: context-window options for the sampling offer (memory/fit/offers.py).
    weight_bits: the diffusion model's stored bits per weight (fp8 16 -> 8; None: 16), for the weight offers.
    ram_policy: the host RAM keys of an estimate policy (platform, pinned_memory, cache_models, weights_mmap), read by
    host_ram.ram_options as the estimate reads them. files: {"diffusion_model", "text_encoder", "vae": [file names]}
    the loaders name (workflow.files_by_role of the queued prompt), which decide per model whether its CPU copy is
    the file's pages (host_ram.mapped_split, as the estimate decides it); without them every model is as the policy says."""
    dm, vae_w = int(weights.get("diffusion_model", 0)), int(weights.get("vae", 0))
    te = int(weights.get("text_encoders", 0) if te_on_gpu is None else te_on_gpu)
    req = int(memory_required)
    out = {"budget": budget, "context": int(context), "reserve": int(reserve), "memory_required": req,
           "minimum_memory_required": req, "stock_memory_required": stock_memory_required, "dynamic_vram": bool(dynamic_vram),
           "weights": {"diffusion_model": dm, "text_encoders": te, "vae": vae_w}, "steps": [], "offers": []}
    n_dec = int(decode["latent_shape"][0]) if decode else 0
    dev = (decode or {}).get("device") or "cuda"
    # MPS (SHARED): load_models_gpu never loads partially (comfy_load.WHOLE_DEVICES). Not a --cpu host: there the node's
    # budget stands for a card and is planned as on a GPU, as the estimate route's tiers are (nodes/estimate_routes.py)
    if dev in WHOLE_DEVICES and dev != "cpu":
        min_weight_ratio = WHOLE
    per = decode_room(decode["kind"], [1] + list(decode["latent_shape"])[1:], decode["dtype"], dev) if decode else 0
    out["decode"] = {"tiled": False, "per_sample": per, "batch": n_dec, "of": n_dec, "bytes": per * n_dec} if decode else None
    if budget is None:
        out.update(weights_on_gpu=dm, weights_offloaded=0, text_encoders_off=False, fits=None,
                   peak={"sample": context + te + dm + req}, predicted_peak=None)
        out["summary"] = (f"no budget: ComfyUI gets our activation figure ({fmt_bytes(req)}) as memory_required; "
                          "nothing else changes")
        return out
    budget, steps = int(budget), out["steps"]
    free0 = budget - int(context)

    # 1. text encoders off the GPU while sampling, as far as the sampler's load unloads them: the estimate's rule
    # (comfy_load.sample_load, as te_loaded.at_sample reads it; rev67e F5), memory_required ours for both figures
    te_kept, kept = sample_load(free0, te, dm, req, req, int(reserve), min_weight_ratio)
    te_off = te_kept < te
    if te_off:
        off = f"{fmt_bytes(te - te_kept)} of {fmt_bytes(te)}" if te_kept else fmt_bytes(te)
        steps.append(_step("text_encoders_off", f"text encoders off the GPU during sampling ({off})", te - te_kept,
                           kind="comfyui" if dynamic_vram else "applied"))

    # 2. the weights kept on the GPU (ComfyUI's partial load, from our memory_required)
    free = free0 - te_kept
    offloaded = dm - kept
    if offloaded > 0:
        label = (f"weights page in on demand (Dynamic VRAM): about {fmt_bytes(kept)} resident, {fmt_bytes(offloaded)} "
                 "paged from RAM" if dynamic_vram else f"kept {fmt_bytes(kept)} of weights on the GPU, offloaded {fmt_bytes(offloaded)}")
        steps.append(_step("weights_on_gpu", label, offloaded, kind="comfyui" if dynamic_vram else "applied",
                           kept=kept, offloaded=offloaded))
    sample_peak = int(context) + te_kept + kept + req
    if stock_memory_required is not None:
        sk = comfy_weights_kept(dm, free, int(stock_memory_required), reserve, min_weight_ratio)
        out["stock"] = {"weights_on_gpu": sk, "sample_peak": int(context) + te_kept + sk + req,
                        "fits": int(context) + te_kept + sk + req + int(reserve) <= budget}
    # host RAM as the estimate judges it (host_ram.ram_need, one figure): models kept for reload, the spill, and with
    # Dynamic VRAM the running model's CPU copy and the pinned copies of its streamed layers
    opts = est_ram.ram_options(ram_policy or {}, bool(dynamic_vram))
    running = {"diffusion_model"} | ({"text_encoder"} if te_kept else set())
    opts["file_backed"] = est_ram.mapped_split([("diffusion_model", dm, None), ("text_encoder", te, None), ("vae", vae_w, None)],
                                                   opts["file_backed"], running, files)
    ram = est_ram.ram_need(dm + te + vae_w, dm + te_kept, offloaded, dynamic=bool(dynamic_vram), available=host_ram,
                               **opts)
    ram_short = est_ram.ram_short(ram)

    # 3. the VAE decode: ComfyUI's own batching from our per-sample figure, or tiles when one sample does not fit
    decode_peak = 0
    if decode:
        room = free0 - vae_w - int(reserve)
        d = out["decode"]
        if per <= room:
            n = max(1, min(n_dec, int((free0 - vae_w) / per)))  # VAE.decode: int(free_memory / memory_used)
            d.update(batch=n, bytes=n * per)
            if n < n_dec:
                steps.append(_step("decode_chunked", f"decode {n} of {n_dec} samples at a time", (n_dec - n) * per, n=n))
        else:
            tile = decode_tile(decode["kind"], decode["latent_shape"], decode["dtype"], room, device=dev)
            if tile:
                d.update(tiled=True, batch=1, bytes=tile["bytes"], tile_px=tile["tile_px"], frames=tile["frames"],
                         args=tile["args"])
                what = f"{tile['tile_px']} px" + (f" x {tile['frames']} frame" if tile["frames"] else "")
                steps.append(_step("decode_tiled", f"decode in {what} tiles", per - tile["bytes"], tile_px=tile["tile_px"],
                                   frames=tile["frames"]))
            else:
                d.update(tiled=True, batch=1, bytes=None, tile_px=None)
        decode_peak = int(context) + vae_w + (d["bytes"] if d["bytes"] is not None else per)
    peak = max(sample_peak, decode_peak)
    sample_fits = sample_peak + int(reserve) <= budget
    decode_fits = not decode or decode_peak + int(reserve) <= budget
    fits = sample_fits and decode_fits and not ram_short
    out.update(weights_on_gpu=kept, weights_offloaded=offloaded, text_encoders_off=te_off, fits=fits,
               peak={"sample": sample_peak, "decode": decode_peak}, predicted_peak=peak, host_ram_short=ram_short,
               host_ram=ram)
    floor = partial_floor(free, int(reserve), min_weight_ratio)
    temporal = None
    if decode and not decode_fits and out["decode"].get("tile_px") is None:
        temporal = decode_tile(decode["kind"], decode["latent_shape"], decode["dtype"], free0 - vae_w - int(reserve), temporal=True,
                               device=dev)

    def fits_with(r):  # the sample phase with memory_required r, weights kept as ComfyUI keeps them
        return int(context) + te_kept + comfy_weights_kept(dm, free, r, reserve, min_weight_ratio) + r + int(reserve) <= budget

    out["offers"] = offers_mod.build(
        req=req, dm=dm, offloaded=offloaded, ram_short=ram_short, sample_fits=sample_fits, decode_fits=decode_fits,
        blocks=blocks, pixels=pixels, target_required=free - int(reserve) - floor, fits_with=fits_with, windows=windows,
        decode=out["decode"], temporal=temporal, weight_bits=weight_bits)
    out["summary"] = summary(out)
    return out


def summary(p: dict) -> str:
    if p["budget"] is None:
        return p.get("summary", "")
    parts = []
    if p["text_encoders_off"]:
        parts.append("text encoders off the GPU")
    if p["dynamic_vram"]:
        parts.append(f"Dynamic VRAM pages the weights ({fmt_bytes(p['weights_on_gpu'])} resident expected)")
    elif p["weights_offloaded"]:
        free = comfy_minimum(p["memory_required"], p["reserve"])
        why = ("its 0.8 GiB minimum" if MIN_INFERENCE >= p["memory_required"] else "memory_required") + " + reserve"
        room = p["budget"] - p["context"] - (0 if p["text_encoders_off"] else p["weights"]["text_encoders"])
        if p["weights_on_gpu"] > max(0, room - free):  # kept by MIN_WEIGHT_MEMORY_RATIO's floor (0.4 off NVIDIA): less stays free
            free, why = room - p["weights_on_gpu"], f"less than {fmt_bytes(free)}, as MIN_WEIGHT_MEMORY_RATIO keeps those weights"
        parts.append(f"kept {fmt_bytes(p['weights_on_gpu'])} of weights on the GPU, offloaded {fmt_bytes(p['weights_offloaded'])} "
                     f"(ComfyUI's loader keeps {fmt_bytes(free)} free: {why})")
    else:
        parts.append(f"all {fmt_bytes(p['weights_on_gpu'])} of weights on the GPU")
    d = p.get("decode")
    if d and d["tiled"]:
        parts.append(f"decode in {d['tile_px']} px tiles" if d.get("tile_px") else "decode does not fit even in tiles")
    elif d and d["batch"] < d["of"]:
        parts.append(f"decode {d['batch']} of {d['of']} at a time")
    head = ", ".join(parts)
    tail = f"predicted peak {fmt_bytes(p['predicted_peak'])} of {fmt_bytes(p['budget'])}"
    if not p["fits"]:
        r = p.get("host_ram") or {}
        tail += " - does NOT fit" + (f" (host RAM too small: needs {fmt_bytes(r['needed'])} of {fmt_bytes(r['available'])})"
                                     if p.get("host_ram_short") else "")
    return f"{head}; {tail}"
