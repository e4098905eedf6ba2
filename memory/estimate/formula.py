"""Footprint estimate: tensor tables + latent size -> per-phase peak memory as ComfyUI would run it, a verdict
against a budget, the smallest common card that fits, and the knobs that would make it fit.

Weights are exact (sums of tensor bytes, as ComfyUI keeps them: weights.py). Activations are structural
(phases.py for sampling and text encoding, vae.py for the VAE as ComfyUI batches, casts and tiles it). Each
phase's peak on a budget is in phase_peaks.py; the verdicts (VRAM, host RAM, Dynamic VRAM) and knobs are in
verdict.py; text output and the CLI in report.py.
This module assembles them; its public names are kept for callers (nodes, benchmarks, tests)."""
import os

from . import audio_decode, families, image_encoder as IE, latent_upscale, sample_acts, sample_cache, spec, te_device, vae as vae_mod, weights as W
from .headers import read_tensors, tensor_bytes
from .phases import comfy_factor as _comfy_factor
from .phases import (block_units, dense_mask_bytes, int8_matmul_peak, comfy_memory_required, diffusers_rope_peak, dtype_bytes, latent_geometry, naive_total,  # noqa: F401
                     sample_activation_bytes, sample_parts, te_activation, te_tokens, wan_reference_peak)
from .spec import CARD_SIZES_GB, CUDA_CONTEXT, card_bytes, FAMILY, FITS_BELOW, FRAGMENTATION, TE_TOKENS  # noqa: F401
from .vae import vae_decode_bytes, vae_encode_bytes  # noqa: F401
from ..errors import UserError
from ..units import GiB, fmt_bytes

COMFY_RESERVE = {"linux": spec.comfy_reserve("linux"), "darwin": spec.comfy_reserve("darwin"),
                 "windows": spec.comfy_reserve("windows")}
resident_bytes, dtype_mix = W.resident_bytes, W.dtype_mix  # public names kept for callers


# -- components ----------------------------------------------------------------------------------

def components_from(inputs) -> list[dict]:
    """inputs: tables ({name: (dtype, shape)}), {label: table}, or component dicts (with "table", optional
    "role"/"kind"/"source"). Returns split, classified components."""
    if isinstance(inputs, dict) and inputs and all(isinstance(v, dict) for v in inputs.values()) and \
            not all(isinstance(v, (tuple, list)) for v in inputs.values()):
        inputs = [{"table": t, "source": str(k)} for k, t in inputs.items()]
    elif isinstance(inputs, dict):
        inputs = [inputs]
    out = []
    for item in inputs:
        if isinstance(item, dict) and "table" in item:
            table, source = item["table"], item.get("source", "")
            if item.get("role"):
                c = {"role": item["role"], "kind": item.get("kind"), "table": table, "source": source}
                c["bytes"] = item.get("bytes") or sum(tensor_bytes(d, s) for d, s in table.values())
                if c["role"] == "diffusion_model":
                    if not (item.get("family") and item.get("arch")):
                        c.update(families.detect_family(table))
                    for k in ("family", "variant", "arch"):
                        if item.get(k):
                            c[k] = item[k]
                elif c["role"] == "text_encoder" and not c["kind"]:
                    c["kind"] = families.text_encoder_kind(table) or "text encoder"
                elif c["role"] == "vae" and not c["kind"]:
                    c["kind"] = families.vae_kind(table) or "vae"
                c.update({k: item[k] for k in ("resident", "gguf_patcher") if k in item})  # gguf: dynamic_stream
                out.append(c)
                continue
        else:
            table, source = item, ""
        out.extend(families.split_components(table, source))
    return out


def from_files(paths) -> list[dict]:
    comps = []
    for p in paths:
        table = read_tensors(p)
        if not table:  # an empty header ({} or __metadata__ alone) was passed over, then "no diffusion model"
            raise UserError(f"{p}: holds no tensors (its header lists none): not a model file to estimate")
        comps.extend(families.split_components(table, os.path.basename(str(p))))
    return comps


DEFAULT_POLICY = {"text_encoders": "unload", "models": "swap", "platform": "linux", "compute_bytes": 2, "vae_bytes": None,
                  "offload_bytes": 0, "cast_fp32": True, "int8_matmul": False, "weights_dtype": None, "vae_dtype": "auto",
                  "gpu_halves": ("bf16", "fp16"), "text_tokens": None, "vae_decode": "auto", "tile": None,
                  "reserve": None, "device": "cuda", "runner": "comfyui", "offload": None, "vae_slicing": False,
                  "block_swap": None, "i2v": None, "attention": "flash", "attention_mask": None, "gpu_arch": None,
                  "audio_fps": None, "latent_upscale": None}

# --offload: the names diffusers and ComfyUI users know, as policies. none: every model stays on the device
# (diffusers pipe.to("cuda"), ComfyUI --highvram); model: one model on the device at a time (diffusers
# enable_model_cpu_offload, ComfyUI's own model swap); sequential: every model's weights stay in host RAM and
# reach the device one layer at a time (diffusers enable_sequential_cpu_offload / group offload leaf_level,
# ComfyUI --novram): a phase holds its activations plus the streamed layer(s) (weights.OFFLOAD_LAYERS); encoders: only
# the diffusion model and the text encoders take turns, the VAE stays and decodes beside the diffusion model (vLLM-Omni
# --enable-cpu-offload: its hooks move the encoders off before the DiT runs and the DiT off before an encoder runs;
# the VAE is in neither list).
# block_swap N (ComfyUI-WanVideoWrapper's blocks_to_swap, read from its wanvideo/modules/model.py block_swap and forward):
# the last N of the model's numbered blocks stay on the offload device; in forward each is moved onto the device just
# before it runs (block.to(main_device)) and back right after (block.to(offload_device)), so the device holds the
# non-block weights, the blocks not swapped and one swapped block in flight, not one layer.
OFFLOAD_MODES = ("none", "model", "sequential", "encoders")
SEQUENTIAL_OFF = 1 << 62  # offload sequential: more than any model, so none of its weights stays (policy offload_bytes None)
# --text-encoders: unload (off the device after encoding), resident (kept), cpu (run on the CPU: ComfyUI's CLIP loader
# device cpu), stream (run on the device a block at a time from host memory, as LightX2V's Wan T5 with cpu_offload: the
# token embedding, norms and one block buffer move onto the device and stay there, weights.streamed_bytes; an image
# encoder is moved on and off whole, as LightX2V's CLIPModel.visual does under cpu_offload; LightX2V's Qwen2.5-VL
# offload is another scheme, an accelerate device map with lm_head on the device)
TE_MODES = ("unload", "resident", "cpu", "stream")
# --attention: flash (a fused kernel, O(n) memory: SDPA flash / memory-efficient, xformers, sage; ComfyUI's default on
# torch 2) or math (the n x n scores held whole: ComfyUI's attention_basic, SDPA's math backend, and diffusers before
# torch 2 / its AttnProcessor: CrossAttention._attention in 0.11 allocates torch.empty(b*h, n, n) for baddbmm, then
# softmax makes a second n x n; phases.naive_total). The sample phase takes the chosen figure.
ATTENTION_MODES = ("flash", "math")
# attention_mask: None (no mask, or one without an n x n extent) or "dense" (the model passes a bool [B, N, N] mask to
# SDPA, which converts it to the compute dtype at each call: diffusers 0.32.0/0.32.1's HunyuanVideo; phases.dense_mask_bytes).
# Batch 1 only there: SDPA broadcasts the [B, N, N] mask against [B, H, N, N] scores, so B > 1 (a CFG batch) raises
# (0.32.2 passes a [B, 1, 1, N] mask: no n x n extent)
ATTENTION_MASKS = (None, "none", "dense")
# audio_fps: LTX-2's audio latent length is ceil(frames / frame_rate x 25) (spec.audio_tokens); the frame_rate of the
# workflow's LTXVEmptyLatentAudio (workflow.read), None for its default 25. latent_upscale: the upscaler (latent_upscale.py)
# for LTX-2's two-stage run (an LTXVLatentUpsampler, --upscale, the node's input; the size given is stage 2's)
# offload sequential under runner diffusers is enable_sequential_cpu_offload: accelerate's cpu_offload hooks move each
# leaf module's weights onto the device for its forward and to meta after it, and every such move ends in
# clear_device_cache() (accelerate.utils.modeling.set_module_tensor_to_device: torch.cuda.empty_cache() whenever the
# target is not the CPU). The caching allocator so holds no freed blocks between layers: the reserved peak is the
# allocated one, and the decode's fitted reserved slack (vae.allocator_slack_bytes, cached_slack) is not there.


# -- the estimate ---------------------------------------------------------------------------------

TILE_PX = (64, 4096)  # ComfyUI 0.8.0 nodes.py VAEDecodeTiled tile_size: min 64, max 4096 (step 32: not required here)
TILE_FRAMES = (1, 4096)  # temporal_size: the node asks 8-4096, decode clamps to max(2, size // compression) latent frames


def _on_cpu(comps, pol, given):
    """ComfyUI 0.8.0 on a CPU device (--cpu): model_management.should_use_fp16 / should_use_bf16 are False there, so
    unet_dtype is fp32 (an fp8 file too, unless twice its parameter count is over the RAM it allows weights),
    unet_manual_cast None (compute fp32) and vae_dtype fp32; text_encoder_dtype stays fp16 on a CPU. The diffusion
    model's float weights are held in fp32 unless --weights-dtype says otherwise, activations in fp32 unless the caller
    gave compute_bytes (the node passes the loaded model's), the VAE as on a GPU without halves. (comps, note)."""
    if "compute_bytes" not in given:
        pol["compute_bytes"] = 4
    pol["gpu_halves"] = ()
    chosen = bool(pol.get("weights_dtype"))  # fp8 / GGUF as asked; the tensors it leaves as stored are fp32 too
    out = []
    for c in comps:
        if c["role"] == "diffusion_model":
            t = {k: ("F32" if W.is_float(dt) or (str(dt).startswith("F8") and not chosen) else dt, sh)
                 for k, (dt, sh) in c["table"].items()}
            c = dict(c, table=t, bytes=sum(tensor_bytes(d, sh) for d, sh in t.values()))
            c["resident"] = W.resident_bytes(t, False)
        elif c["role"] == "vae":  # VAE.__init__ moves it to vae_dtype, fp32 here: its weights sit in RAM at 4 bytes
            t = {k: ("F32" if W.is_float(dt) else dt, sh) for k, (dt, sh) in c["table"].items()}
            c = dict(c, table=t, bytes=sum(tensor_bytes(d, sh) for d, sh in t.values()))
            c["resident"] = W.resident_bytes(t, False)
        out.append(c)
    return out, ("CPU device: ComfyUI holds the diffusion model in fp32" + (" (but for the --weights-dtype tensors)" if chosen else "")
                 + " and computes in fp32 (unet_dtype and vae_dtype without fp16/bf16 on a CPU); text encoders stay "
                 "16-bit (text_encoder_dtype)")


def _check_tile(tile):
    """policy tile {"tile": px, "frames": n} (--vae-tile, the node's vae_tile, a VAEDecodeTiled node): a clear error
    outside VAEDecodeTiled's tile_size range (TILE_PX), for either runner. frames from 1 (an image VAE ignores it, and
    ComfyUI clamps a short video tile to 2 latent frames itself) to the node's 4096."""
    if not tile:
        return
    px, fr = tile.get("tile"), tile.get("frames")
    if px is not None and (not isinstance(px, int) or isinstance(px, bool) or not TILE_PX[0] <= px <= TILE_PX[1]):
        raise UserError(f"VAE tile size must be a whole number of pixels from {TILE_PX[0]} to {TILE_PX[1]} "
                        f"(VAE Decode (Tiled)'s tile_size), not {px!r}")
    if fr is not None and (not isinstance(fr, int) or isinstance(fr, bool) or not TILE_FRAMES[0] <= fr <= TILE_FRAMES[1]):
        raise UserError(f"VAE tile length must be a whole number of frames from {TILE_FRAMES[0]} to {TILE_FRAMES[1]}, not {fr!r}")


def estimate(components, width, height, frames=1, batch=1, *, cfg=True, policy=None) -> dict:
    """components: tensor tables or component dicts (see components_from). cfg: True batches cond+uncond (x2),
    False runs them as separate passes, None takes the family's usual workflow, "on" is CFG on as ComfyUI runs it
    (batched, but for a family whose conds do not concatenate: spec cfg_separate). policy (DEFAULT_POLICY):
    text_encoders unload|resident|cpu|stream (TE_MODES), models swap|resident, platform linux|windows|darwin, compute_bytes,
    weights_dtype fp32|bf16|fp16|fp8|bnb-int8|bnb-nf4|gguf|q4_k... (bnb-*: bitsandbytes' storage of the Linear weights,
    weights.bnb_requant; bnb-int8 is load_in_8bit and sets int8_matmul; bnb-nf4 dequantizes each weight to 16 bits as it runs),
    vae_dtype auto|bf16|fp16|fp32 (vae_bytes overrides),
    gpu_halves (the half dtypes the GPU has), runner comfyui|diffusers|wan (whose model code runs: diffusers' VAE
    decoders; wan: Wan's reference DiT, as Wan's generate.py and DiffSynth-Studio run it),
    text_tokens, vae_slicing (diffusers' enable_vae_slicing: one sample per decode call), vae_decode auto|untiled|tiled (tiled_decode=True
    is tiled), tile {tile, frames}, reserve (bytes; default ComfyUI's), offload_bytes (None: sequential; block swap writes its bytes, offload_by block_swap), cast_fp32, device
    cuda|rocm|mps|xpu|cpu, family/arch overrides, budget (bytes: decode batch and fallback as on that card),
    host_ram, pinned_memory, cache_models, dynamic_vram auto|on|off (verdict.py), i2v (Wan 2.1 image-to-video: the
    CLIP-H image encoder counted when no file gives one; None: from the layout), offload none|model|sequential|encoders
    (sets models/text_encoders/offload_bytes), block_swap N (the diffusion model's last N numbered blocks offloaded,
    one in flight; not with offload_bytes or offload sequential), keep_on_device ["diffusion_model"] (stays through every phase),
    attention flash|math (ATTENTION_MODES: math holds the n x n attention scores whole in the sample phase),
    attention_mask dense|none (ATTENTION_MASKS: dense adds a bool [B, N, N] mask and SDPA's copy of it to sampling),
    gpu_arch pascal|None (vae.GPU_ARCHS: the GPU generation where a figure differs by it, diffusers' KL decode),
    sample_activations (bytes: the sampling step's activations as traced, replacing the formula's; exact mode)."""
    if width <= 0 or height <= 0 or frames <= 0 or batch <= 0:
        raise UserError(f"width, height, frames and batch must be positive (got {width}x{height}, {frames} frames, batch {batch})")
    if max(width, height, frames) > spec.MAX_RESOLUTION or batch > spec.MAX_BATCH:
        raise UserError(f"{width}x{height}, {frames} frames, batch {batch} is beyond what ComfyUI's nodes accept (sides and "
                        f"frames up to {spec.MAX_RESOLUTION}, batch up to {spec.MAX_BATCH})")
    pol = dict(DEFAULT_POLICY)
    pol.update({k: v for k, v in (policy or {}).items() if v is not None or k == "budget"})
    if pol.get("tiled_decode") or (pol.get("tile") and pol["vae_decode"] == "auto"):
        pol["vae_decode"] = "tiled"  # a tile size given (--vae-tile, the node's vae_tile) is a tiled decode, as workflow.py reads VAEDecodeTiled
    if pol["runner"] not in vae_mod.RUNNERS:
        raise UserError(f"runner must be one of {', '.join(vae_mod.RUNNERS)}, not {pol['runner']!r}")
    if pol["vae_slicing"] and pol["runner"] != "diffusers":
        raise UserError("VAE slicing is diffusers' enable_vae_slicing: use it with runner diffusers "
                        "(ComfyUI picks its decode batch from free memory itself)")
    _check_tile(pol.get("tile"))
    tt = pol.get("text_tokens")
    if tt is not None and (not isinstance(tt, int) or isinstance(tt, bool) or tt < 0):
        raise UserError(f"text tokens must be a whole number, 0 (the encoder's own count) or more, not {tt!r}")
    if pol.get("reserve") is not None and not pol["reserve"] >= 0:
        raise UserError(f"the reserve must be 0 or more bytes, not {pol['reserve']!r}")
    if pol["attention"] not in ATTENTION_MODES:
        raise UserError(f"attention must be one of {', '.join(ATTENTION_MODES)}, not {pol['attention']!r}")
    if pol["gpu_arch"] not in (None,) + vae_mod.GPU_ARCHS:
        raise UserError(f"gpu arch must be one of {', '.join(vae_mod.GPU_ARCHS)} (or none: the default, fitted on Ampere and newer), not {pol['gpu_arch']!r}")
    if pol["attention_mask"] not in ATTENTION_MASKS:
        raise UserError(f"attention mask must be dense or none, not {pol['attention_mask']!r}")
    if pol["text_encoders"] not in TE_MODES:
        raise UserError(f"text encoders must be one of {', '.join(TE_MODES)}, not {pol['text_encoders']!r}")
    if pol["offload"] is not None:
        if pol["offload"] not in OFFLOAD_MODES:
            raise UserError(f"offload must be one of {', '.join(OFFLOAD_MODES)}, not {pol['offload']!r}")
        pol["models"], pol["text_encoders"] = ("resident", "resident") if pol["offload"] == "none" else ("swap", "unload")
        if pol["offload"] == "sequential":
            pol["offload_bytes"] = None  # every weight streams (SEQUENTIAL_OFF inside): no byte count to report
    te_device.apply(pol)  # ComfyUI's text_encoder_device(): the CPU on some cards, the phase off the card (te_device.py)
    comps = components_from(components)
    bnb_note = None
    if pol.get("weights_dtype"):
        try:
            qt = W.weights_dtype(pol["weights_dtype"])
        except ValueError as exc:
            raise UserError(str(exc)) from None
        swap = (lambda t: W.bnb_requant(t, qt)) if qt in W.BNB_TYPES else (lambda t: W.requant(t, qt))
        comps = [dict(c, table=swap(c["table"]), resident=None) if c["role"] == "diffusion_model" else c for c in comps]
        for c in comps:
            if c.get("resident", 0) is None:
                c.pop("resident")
                c["bytes"] = sum(tensor_bytes(d, s) for d, s in c["table"].values())
        if qt == "F32":  # the diffusion model's dtype only: the text encoders and the VAE keep their own (aud67a F4)
            comps = [dict(c, keep_fp32=True) if c["role"] == "diffusion_model" else c for c in comps]
        if str(pol["weights_dtype"]).lower() == "bnb-int8":
            pol["int8_matmul"] = True
        if qt in W.BNB_TYPES:
            kept = sum(tensor_bytes(d, s) for c in comps if c["role"] == "diffusion_model" for d, s in c["table"].values()
                       if d not in W.BNB_TYPES)
            bnb_note = (f"bitsandbytes swaps the Linear layers only: {kept / GiB:.2f} GiB of the diffusion model (conv kernels, "
                        "embeddings, norms, biases) stays as stored")
    cpu_note = None
    if pol["device"] == "cpu" and pol["runner"] == "comfyui":
        comps, cpu_note = _on_cpu(comps, pol, policy or {})
    comps = _with_image_encoder(comps, pol.get("i2v"))
    dms = [c for c in comps if c["role"] == "diffusion_model"]
    tes = [c for c in comps if c["role"] == "text_encoder"]
    vaes = [c for c in comps if c["role"] == "vae"]
    assumptions = [x for x in (bnb_note, cpu_note) if x]
    dm = max(dms, key=lambda c: c["bytes"]) if dms else None
    family = pol.get("family") or (dm["family"] if dm else spec.VAE_FAMILY.get(vaes[0]["kind"], "unknown") if vaes else "unknown")
    arch = dict(spec.DEFAULT_ARCH.get(family, {}))
    # an undetected file's arch (its width alone, families._generic_width) only for the generic figure: a family named
    # by the policy (the node's ComfyUI config class) keeps its DEFAULT_ARCH (depth, heads, ffn, block)
    if dm and dm.get("arch", {}).get("hidden") and (dm.get("family") != "unknown" or family == "unknown"):
        arch.update(dm["arch"])
    arch.update(pol.get("arch") or {})
    variant = (dm or {}).get("variant", "")
    sp = spec.family(family)
    if len(dms) > 1:
        assumptions.append(f"{len(dms)} diffusion models given; the largest is sampled with, the others are "
                           + ("kept on the device too (models resident), as a pipeline that holds both Wan 2.2 experts does"
                              if pol["models"] == "resident" else "swapped out" + (
                                  " as far as each later sampler's load asks (comfy_load.sample_loads)"
                                  if pol["runner"] == "comfyui" else "")))
    if not dm:
        assumptions.append("no diffusion model among the files: the sample phase is left out")
    if family == "unknown" and dm:
        assumptions.append("family not recognised: generic DiT figures (20 x hidden per token), flagged unknown")
    if sp["t"] is None and frames > 1:
        assumptions.append(f"{sp['name']} is an image model: frames={frames} ignored")
        frames = 1
    separate = sp.get("cfg_separate") in (True, pol["runner"])  # CFG on, the conds not concatenated (spec.FAMILY)
    cfg_separate = False
    if cfg == "on" and not separate:  # CFG on (a workflow's cfg > 1): batched where the conds concatenate
        cfg = True
    if (cfg is None and sp["cfg"] or cfg == "on") and separate:
        how = "as " + sp["name"] + " workflows usually run it" if cfg is None else "(the workflow's cfg)"
        cfg, cfg_separate = False, True  # the header says CFG on, separate passes (rev52 J)
        assumptions.append(f"CFG on {how}, cond and uncond as separate passes: ComfyUI concatenates their text contexts "
                           "only when both prompts have the same token count (--cfg: batched)")
    elif cfg is None:
        cfg = sp["cfg"]
        assumptions.append(f"CFG {'on: cond and uncond batched (x2)' if cfg else 'off (cfg 1, guidance-distilled workflow)'} as {sp['name']} workflows usually run")
    else:
        assumptions.append(f"CFG on: ComfyUI batches cond and uncond (x{pol.get('conds') or 2}) when memory allows" if cfg else
                           "cond and uncond as separate passes (or cfg 1): one conditioning per model call")
    per_sample = (pol.get("conds") or 2) if cfg else 1  # model calls' batch per latent sample: cond and uncond batched (x2; dual_cfg.py)
    b_eff = batch * per_sample
    lat = sample_acts.latent(family, width, height, frames, batch, pol)
    assumptions += lat.pop("ref_lines", [])  # an edit model's reference images (ref_latents.py)
    bc = pol["compute_bytes"]

    # weights (exact) and what ComfyUI keeps resident
    te_drop = W.COMFY_TE_DROPPED if pol["runner"] == "comfyui" else ()
    for c in comps:
        drop = te_drop if c["role"] == "text_encoder" else ()
        gguf_te = c["role"] == "text_encoder" and pol["runner"] == "comfyui"  # ComfyUI-GGUF's fp16 token embedding
        c.setdefault("resident", W.resident_bytes(c["table"], pol["cast_fp32"] and not c.get("keep_fp32"), drop, gguf_te)
                     if c["role"] != "other" else 0)
    w_dm = dm["resident"] if dm else 0
    # bytes of the diffusion model kept off the device; the policy keeps what was asked (knobs re-run it)
    off = SEQUENTIAL_OFF if pol["offload"] == "sequential" else \
        0 if pol.get("offload_by") == "block_swap" else int(pol["offload_bytes"] or 0)  # block swap's: sized below again
    in_flight = None  # in_flight: the swapped block being run (None: one streamed layer)
    if pol["block_swap"] is not None:
        blocks = [W.resident_bytes(t, pol["cast_fp32"] and not dm.get("keep_fp32")) for t in W.numbered_blocks(dm["table"])] if dm else []
        n = int(pol["block_swap"])
        if not blocks or not 0 <= n <= len(blocks):
            raise UserError(f"block swap {n}: the diffusion model has {len(blocks)} numbered blocks" if blocks else
                            "block swap needs a diffusion model whose keys number its blocks (blocks.N.)")
        if pol["offload"] == "sequential":
            raise UserError("give either block swap or offload sequential, not both (sequential offload already "
                            "streams every block a layer at a time)")
        if off:
            raise UserError("give either block swap or offload bytes, not both")
        off, in_flight = sum(blocks[len(blocks) - n:]), (max(blocks) if n else 0)
        pol["offload_bytes"], pol["offload_by"] = off, "block_swap"  # the JSON's figure; a re-run (knobs) sizes it again
        assumptions.append(f"block swap: {n} of {len(blocks)} blocks ({fmt_bytes(off)}) stay off the device; "
                           f"each is moved onto it as it runs, one block ({fmt_bytes(in_flight)}) in flight")
    elif off and pol["offload"] != "sequential":  # sequential's off is SEQUENTIAL_OFF: its own note below
        assumptions.append(f"partial offload: {fmt_bytes(off)} of the diffusion model stays in host RAM; "
                           "the layer being run is copied onto the device")
    w_dm = max(0, w_dm - off)
    # a model diffusers' offload leaves on the device (weights.DIFFUSERS_EXCLUDED_FROM_OFFLOAD: SD's safety checker): under
    # every phase when models swap or stream under runner diffusers, not among the encoders that take turns
    tes_all = tes
    kept = [c for c in tes if pol["runner"] == "diffusers" and pol["models"] != "resident" and W.diffusers_kept_on_device(c["table"])]
    kept_bytes = sum(c["resident"] for c in kept)
    if kept:
        tes = [c for c in tes if all(c is not k for k in kept)]  # (the report's weights still count it: tes_all)
        assumptions.append(f"diffusers keeps {', '.join(sorted({str(c.get('kind')) for c in kept}))} (its safety checker: "
                           f"_exclude_from_cpu_offload) on the device through every phase ({fmt_bytes(kept_bytes)})")
    # the other diffusion models (Wan 2.2 A14B's second expert): on the device only when every model stays resident
    w_dm_rest = max(0, sum(c["resident"] for c in dms if c is not dm) - off)
    w_te = sum(c["resident"] for c in tes)
    w_vae = max((c["resident"] for c in vaes), default=0)
    # enable_sequential_cpu_offload (offload sequential, runner diffusers) keeps every model's buffers on the device from
    # the start (weights.SEQUENTIAL_RESIDENT_BUFFERS): not streamed, under every phase (buffers: bytes, under every phase)
    bufs = ({id(c): W.sequential_buffers(c["table"]) for c in comps if c["role"] != "other"}
            if pol["offload"] == "sequential" and pol["runner"] == "diffusers" else {})
    buffers = sum(W.resident_bytes({k: c["table"][k] for k in bufs[id(c)]}, pol["cast_fp32"]) for c in comps if bufs.get(id(c)))
    if pol["offload"] == "sequential":  # text encoders and VAE stream too: their largest layer(s) on the device
        w_te = max((W.OFFLOAD_LAYERS * W.largest_layer(c["table"], bufs.get(id(c), ())) for c in tes), default=0)
        w_vae = max((W.OFFLOAD_LAYERS * W.largest_layer(c["table"], bufs.get(id(c), ())) for c in vaes), default=0)
        assumptions.append("sequential offload: every model's weights stay in host RAM; each phase holds its activations "
                           f"and {W.OFFLOAD_LAYERS} streamed layer(s)")
        if pol["runner"] == "diffusers":
            assumptions.append("enable_sequential_cpu_offload: accelerate empties the CUDA cache at every layer move, so "
                               "the reserved peak is the allocated one (no decode slack)")
        if buffers:
            assumptions.append(f"enable_sequential_cpu_offload: accelerate moves the models' buffers to the device once and "
                               f"never offloads them ({', '.join(sorted({k for v in bufs.values() for k in v}))}: "
                               f"{fmt_bytes(buffers)}), so they sit under every phase")
    te_kept = 0  # a streamed text encoder's weights that stay on the device after its phase (TE_MODES stream)
    te_stream = pol["text_encoders"] == "stream" and pol["offload"] != "sequential"
    if te_stream:
        te_kept = sum(W.streamed_bytes(c["table"], pol["cast_fp32"], te_drop) for c in tes if not _is_image_encoder(c))
        w_te = te_kept + sum(c["resident"] for c in tes if _is_image_encoder(c))
        assumptions.append(f"text encoders streamed block by block (as LightX2V's Wan T5 with cpu_offload): their token "
                           f"embedding, norms and one block buffer ({fmt_bytes(te_kept)}) move onto the device and stay "
                           "through every phase")
    # the VAE's fp32 weights are cast only when it runs in 16 bits (its dtype, vdt below: --vae-dtype fp32 keeps them)
    cast_at = len(assumptions)
    cast = pol["cast_fp32"] and any(_has_fp32(c["table"]) for c in comps if not c.get("keep_fp32")  # --weights-dtype
                                    if c["role"] not in ("other", "vae", "diffusion_model" if cpu_note else ""))
    if any(W.dropped(c["table"]) for c in tes):
        assumptions.append("T5's encoder.embed_tokens.weight is a copy of shared.weight that ComfyUI does not load: not counted")
    if te_drop and any(k.endswith(te_drop) for c in tes for k in c["table"]):
        assumptions.append("the text encoder's output head (lm_head) is not loaded: ComfyUI's text encoders have none")
    if pol["runner"] == "comfyui" and any(W.gguf_embed_dequantized(c["table"]) for c in tes):
        assumptions.append("the GGUF text encoder's token embedding is held in fp16: ComfyUI-GGUF dequantizes it on load")

    act, naive, how, mask, call = 0, 0, "", 0, None
    if dm:  # the sampling activations (sample_acts.py: the same code counts them at another sampler's size)
        held = in_flight if in_flight is not None else (  # the swapped block, or the offloaded layer being run (a
            W.OFFLOAD_LAYERS * W.largest_layer(dm["table"], bufs.get(id(dm), ())) if off else 0)  # resident buffer is not streamed)
        call = {"b_eff": b_eff, "per_sample": per_sample, "table": dm["table"], "held": held}
        s = sample_acts.activations(family, arch, lat, b_eff, pol, dm["table"], held, assumptions)
        act, naive, how, mask = s["act"], s["naive"], s["how"], s["mask"]
    te_act = max((te_activation(c.get("kind"), c["table"], IE.CONTEXT_TOKENS if _is_image_encoder(c) else
                                te_tokens(family, c.get("kind"), pol.get("text_tokens"))) for c in tes), default=0)
    if any(c.get("assumed_i2v") for c in tes):
        assumptions.append(f"image-to-video: no image encoder file given, the CLIP-H image encoder (clip_vision_h, "
                           f"{fmt_bytes(next(c['bytes'] for c in tes if c.get('assumed_i2v')))} in fp16) counted with the "
                           "encoders")

    kind = spec.vae_kind_for((vaes[0]["kind"] if vaes else None), family)
    # ComfyUI's WanImageToVideo encodes the start image padded to every frame (the conditioning latent): a Wan 2.1 I2V
    # model (its image encoder), or any 36-channel patch embedding (Wan 2.2 I2V A14B: no image encoder, same node)
    clip_i2v = any(_is_image_encoder(c) for c in tes)
    said = (getattr(pol["i2v_encode"], "says", lambda: "")() or "the graph's image-to-video node") if pol.get("i2v_encode") \
        else "WanImageToVideo pads it to every frame"  # the node and its rule (i2v_nodes.Encoded), rev68d F2
    i2v_encode = tuple(pol["i2v_encode"]) if pol.get("i2v_encode") and dm else (width, height, frames) if family == "wan21" \
        and kind == "wan21" and (clip_i2v or (dm is not None and arch.get("in_dim") == 36)) else None  # a workflow's node: i2v_nodes
    if i2v_encode:
        assumptions.append(f"image-to-video: the start image is VAE-encoded before sampling ({i2v_encode[0]}x{i2v_encode[1]}, "
                           f"{i2v_encode[2]} frame{'s' if i2v_encode[2] > 1 else ''}: {said}), a phase of its own"
                           + ("; the 257 image tokens in the cross-attention are not counted" if clip_i2v else ""))
    vdt, vdt_why = vae_mod.decode_dtype(kind, pol["vae_dtype"], tuple(pol["gpu_halves"]), pol["runner"], family,
                                        pol.get("vae_bytes"))
    if pol["cast_fp32"] and dtype_bytes(vdt) == 2 and any(_has_fp32(c["table"]) for c in vaes):
        cast = True
    if cast:
        assumptions.insert(cast_at, "32-bit float weights are cast to 16-bit on load (ComfyUI's default on GPUs with "
                           "fp16/bf16" + (", and its text encoder dtype on a CPU" if cpu_note else "") + ")")
    if pol["gpu_arch"] and pol["runner"] == "diffusers" and kind == "kl" and (pol["gpu_arch"], vdt) in vae_mod.DIFFUSERS_KL_DECODE_ARCH:
        assumptions.append(f"VAE decode on a {pol['gpu_arch']} GPU in {vdt}: diffusers' KL decoder holds "
                           f"{vae_mod.DIFFUSERS_KL_DECODE_ARCH[(pol['gpu_arch'], vdt)]} elements per output pixel there "
                           f"({vae_mod.DIFFUSERS_KL_DECODE} on newer GPUs: cuDNN's convolution workspace differs)")
    if vdt_why == vae_mod.UPCAST_WHY:
        assumptions.append("VAE decode in fp32: diffusers' SDXL pipelines upcast an fp16 VAE (force_upcast) before decoding; "
                           "--vae-dtype overrides (a bf16 pipeline or the fp16-fix VAE decodes in 16 bits)")
    if not vaes and dm:
        assumptions.append(f"no VAE file given: decode figured for {sp['name']}'s usual VAE, its weights not counted")
    if vaes and pol["offload"] != "sequential":
        # the VAE's weights sit in the dtype it runs in: ComfyUI moves it there (comfy/sd.py VAE.__init__:
        # first_stage_model.to(vae_dtype)); diffusers and Wan's runner load it in the dtype they decode in
        for c in vaes:  # its row and host RAM's copy too, as loaded (not diffusers' upcast inside the decode)
            if vdt_why != vae_mod.UPCAST_WHY:
                c["resident"] = W.at_dtype_bytes(c["table"], dtype_bytes(vdt))
        w_vae = max(W.at_dtype_bytes(c["table"], dtype_bytes(vdt)) for c in vaes)
    elif vaes and pol["runner"] == "diffusers":
        # streamed, its layer in the dtype it decodes in: from_pretrained's torch_dtype casts the file, and accelerate's
        # set_module_tensor_to_device casts each streamed weight to the module's dtype (an upcast VAE's fp32)
        w_vae = max(W.OFFLOAD_LAYERS * W.largest_layer(c["table"], bufs.get(id(c), ()), dtype_bytes(vdt)) for c in vaes)

    # LTX-2: the audio latent decoded after sampling by the audio VAE and vocoder (LTXVAudioVAEDecode), a phase of its own
    audio = audio_decode.phase_inputs(comps, lat.get("audio_tokens"), batch, assumptions) if dm else None
    upscale = latent_upscale.phase_inputs(lat["shape"], dtype_bytes(vdt), pol["latent_upscale"], assumptions) \
        if dm and family == "ltx-2" and pol["latent_upscale"] else None  # LTXVLatentUpsampler between the two stages
    from .verdict import reserve_on  # decided again where the estimate is judged (verdict.finish: a card tier keeps it)
    reserve = reserve_on(pol, pol.get("budget"))
    in_host_ram = bool(cpu_note) and not pol.get("budget")  # a budget on a --cpu host plans for a card, which keeps it
    fixed = {"cuda_context": CUDA_CONTEXT if pol.get("device", "cuda") in ("cuda", "rocm") else 0, "comfyui_reserve": int(reserve)}
    keep = pol["models"] == "resident"
    te_resident = pol["text_encoders"] == "resident" or keep
    te_w_phase = w_te if pol["text_encoders"] != "cpu" else 0
    te_extra = w_te if (te_resident and not keep and pol["text_encoders"] != "cpu") else 0 if keep else te_kept
    # weights that stay on the device under another model's phase (te, dm, vae): a diffusion model that cannot leave
    # it while the others swap (bitsandbytes 8-bit under diffusers' model offload; policy keep_on_device
    # ["diffusion_model"]) sits under every phase; offload encoders swaps only the diffusion model and the text
    # encoders, so the VAE sits under every phase and the diffusion model under the decode
    under = {"te": 0, "dm": 0, "vae": 0}
    if not keep and "diffusion_model" in (pol.get("keep_on_device") or ()):
        under.update(te=w_dm, vae=w_dm)
        assumptions.append("the diffusion model stays on the device through every phase (it cannot be offloaded)")
    elif not keep and pol["offload"] == "encoders":
        under.update(te=w_vae, dm=w_vae, vae=w_dm)
        assumptions.append("offload encoders: only the diffusion model and the text encoders take turns on the device; "
                           "the VAE stays on it and decodes beside the diffusion model")
    if buffers or kept_bytes:  # enable_sequential_cpu_offload's resident buffers (weights.SEQUENTIAL_RESIDENT_BUFFERS),
        under = {k: v + buffers + kept_bytes for k, v in under.items()}  # and what diffusers never offloads
    est = {
        "family": family, "variant": variant, "family_name": sp["name"] if dm else "no diffusion model",
        "unknown": bool(dm) and family == "unknown",
        "width": width, "height": height, "frames": frames, "batch": batch, "cfg": bool(cfg), "cfg_separate": cfg_separate,
        "latent": {"shape": lat["shape"], "image_tokens": lat["image_tokens"], "text_tokens": lat["text_tokens"],
                   "tokens": lat["tokens"], "batch_in_model": b_eff},
        "components": [{"source": c["source"], "role": c["role"], "kind": c.get("kind") or c.get("family"),
                        "family": c.get("family"), "bytes": c["bytes"], "resident": c["resident"], "dtypes": W.dtype_mix(c["table"])}
                       for c in comps],
        "weights": {"diffusion_model": dm["bytes"] if dm else 0, "text_encoders": sum(c["bytes"] for c in tes_all),
                    "vae": sum(c["bytes"] for c in vaes), "other": sum(c["bytes"] for c in comps if c["role"] == "other"),
                    "total": sum(c["bytes"] for c in comps)},
        "fixed": fixed,
        "comfyui_memory_required": comfy_memory_required(family, arch, lat["shape"], b_eff, bc, audio_fps=pol["audio_fps"]) if dm else None,
        "comfyui_factor": _comfy_factor(family, arch) if dm else None,
        "offload": pol["offload"] or ("sequential" if off >= 1 << 50 else "none" if keep else "model"),
        "policy": pol, "verdict": "no budget", "budget": None, "min_vram_gb": None, "knobs": [],
        "_ctx": {"components": comps, "width": width, "height": height, "frames": frames, "batch": batch, "cfg": cfg,
                 "policy": pol, "family": family, "has_dm": bool(dm), "has_te": bool(tes), "has_vae_or_dm": bool(dm or vaes),
                 "w": {"dm": w_dm, "te": te_w_phase, "vae": w_vae, "te_extra": te_extra, "dm_rest": w_dm_rest,
                       "te_stay": te_kept if te_stream else te_w_phase, "under": under,
                       "dm_before": [c["resident"] for c in dms if c is not dm]},  # earlier samplers' models (te_loaded)
                 "keep": keep,
                 "act": act, "sample_call": call, "naive": naive, "arch": arch, "mask": mask, "te_act": te_act, "vae_kind": kind, "vae_dtype": vdt, "vae_dtype_why": vdt_why,
                 "lat_shape": lat["shape"], "sample_how": how,
                 "empty_cache": pol["offload"] == "sequential" and pol["runner"] == "diffusers",
                 "i2v_encode": i2v_encode, "audio": audio, "latent_upscale": upscale},
    }
    cache_ratio = sample_cache.ratio(family, pol.get("attention") == "math")
    assumptions += [
        ("every model stays resident (no swapping)" if keep else
         "ComfyUI swaps models between phases: each phase needs only its own model (the VAE decode also what of the "
         "diffusion model ComfyUI leaves loaded where the card has room) "
         f"(text encoders {'kept resident' if te_resident else 'on the CPU' if pol['text_encoders'] == 'cpu' else 'streamed' if te_kept else 'unloaded'} during sampling)"),
        f"activations in {bc * 8}-bit; " + ("attention with its n x n scores held whole (--attention math)" if pol["attention"] == "math"
                                             else "memory-efficient attention (SDPA flash / xformers) unless the naive figure is read"),
        f"sample: {how}" if dm else "",
        f"fixed: {pol.get('device', 'cuda').upper()} context {fmt_bytes(fixed['cuda_context'])} and ComfyUI's reserve "
        f"{fmt_bytes(fixed['comfyui_reserve'])} ({'none on a CPU device' if in_host_ram else pol['platform'] + '; --reserve-vram changes it'}); allocator margin "
        f"{int(FRAGMENTATION * 100)} % of activations. peak_torch (max_memory_allocated) leaves out all three, "
        "peak_device (nvidia-smi) leaves out the reserve; both count what ComfyUI leaves loaded beside a phase on a budget" + (
            f"; peak_device adds the cache PyTorch's allocator keeps through sampling ({cache_ratio:.0%} of activations as "
            "traced for the family, sample_cache)" if cache_ratio and sample_cache.applies(pol, est["_ctx"]) else ""),
    ]
    est["assumptions"] = [a for a in assumptions if a]
    from . import verdict
    verdict.finish(est, pol.get("budget"))
    return est


def _is_image_encoder(c) -> bool:
    return str(c.get("kind") or "").startswith("clip-vision")


def _with_image_encoder(comps, i2v):
    """An I2V diffusion model's image encoder: the file given, else the CLIP-H that Wan 2.1 I2V workflows load
    (image_encoder.clip_vision_h, fp16), flagged assumed_i2v. i2v None: as the diffusion model's layout says: img_emb,
    as ComfyUI's model_detection reads model_type i2v (Wan 2.2 I2V A14B files have the 36-channel patch embedding and
    no img_emb: no image encoder)."""
    dm = max((c for c in comps if c["role"] == "diffusion_model"), key=lambda c: c["bytes"], default=None)
    layout_i2v = bool(dm) and dm.get("family") == "wan21" and any(k.endswith("img_emb.proj.0.bias") for k in dm["table"])
    if i2v and not layout_i2v:
        raise UserError("--i2v: the image-to-video inputs are described for Wan 2.1's I2V models only, and this diffusion "
                        "model " + ("is a text-to-video layout (no img_emb; Wan 2.2's I2V A14B has none either and loads no image "
                                    "encoder): give the Wan 2.1 I2V model file"
                                    if dm and dm.get("family") == "wan21" else "is not one" if dm
                                    else "was not given: give the Wan 2.1 I2V model file"))
    if not (layout_i2v if i2v is None else i2v) or any(_is_image_encoder(c) for c in comps):
        return comps
    t = IE.clip_vision_h("F16")
    enc = {"role": "text_encoder", "kind": IE.KIND, "table": t, "bytes": sum(tensor_bytes(d, s) for d, s in t.values()),
           "source": "assumed: clip_vision_h", "assumed_i2v": True}
    return comps + [enc]


def _has_fp32(table):
    return any(dt == "F32" for dt, _ in table.values())


def min_vram_gb(peak: int):
    for gb in CARD_SIZES_GB:
        if peak <= card_bytes(gb):
            return gb
    return None


def budget_from_snapshot(snap: dict, index: int | None = None):
    """(bytes, label) from a probe snapshot: the accelerator ComfyUI computes on (`index`; else the first one)
    with its total less other processes' use."""
    devs = [d for d in (snap or {}).get("devices", ()) if d.get("backend") != "cpu" and d.get("total")]
    devs.sort(key=lambda d: d.get("index") != index)  # ComfyUI's own device first, when it is known
    for d in devs:
        other = d.get("other_processes") or 0
        label = f"device {d.get('index', 0)} {d.get('name') or ''}".strip()
        if other:
            label += f" (less {fmt_bytes(other)} held by other processes)"
        return int(d["total"]) - int(other), label
    return None, "no GPU found"


def judge(est: dict, budget_bytes) -> dict:
    """Sets verdict (fits / tight / does not fit / no budget), budget, headroom, each knob's fits, and the VAE
    decode as ComfyUI would run it on that budget (batch, tiled fallback). Updates est in place."""
    from . import verdict
    return verdict.finish(est, int(budget_bytes) if budget_bytes else None)


def knobs(est: dict) -> list[dict]:
    from . import verdict
    return verdict.knobs(est)


def public(est: dict) -> dict:
    """The estimate without internals (for JSON)."""
    return {k: v for k, v in est.items() if not k.startswith("_")}


def format_text(est: dict, budget_label: str = "") -> str:
    from . import report
    return report.format_text(est, budget_label)


def run_cli(args) -> int:
    from . import report
    return report.run_cli(args)


def demo_section(as_json: bool = False):
    from . import report
    return report.demo_section(as_json)
