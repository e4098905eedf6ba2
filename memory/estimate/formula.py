"""Footprint estimate: tensor tables + latent size -> per-phase peak memory, a verdict against a budget,
the smallest common card that fits, and the knobs that would make it fit.

Weights are exact (sums of tensor bytes). Activations are structural: for each family, the tensors alive at
the peak of one transformer block (or of the U-Net's full-resolution level, or of the VAE decoder's last
up-block), counted from the model code ComfyUI runs, times the token count the latent gives. The policy the
numbers assume is stated in `assumptions`; fixed runtime costs are named terms."""
import json
import math
import os

from . import families
from ..errors import UserError
from .headers import ST_BYTES, read_tensors, tensor_bytes
from ..units import GiB, MiB, fmt_bytes

CUDA_CONTEXT = 450 * MiB  # CUDA context + cuBLAS/cuDNN handles of a torch process (300-700 MiB by driver/GPU)
COMFY_RESERVE = {"linux": 400 * MiB, "darwin": 400 * MiB, "windows": 700 * MiB}  # model_management.EXTRA_RESERVED_VRAM
FRAGMENTATION = 0.05  # caching-allocator margin on activations
CARD_SIZES_GB = (6, 8, 10, 12, 16, 20, 24, 32, 48, 80, 96, 141)
CARD_USABLE = 0.995  # a "24 GB" card reports ~23.99 GiB
FITS_BELOW = 0.90  # fits: peak <= 90 % of the budget; tight: <= 100 %
TILE = 512  # VAEDecodeTiled defaults: tile 512 px, temporal tile 64 frames
TILE_FRAMES = 64

# latent geometry and runtime facts per family:
#   ch latent channels, s spatial and t temporal compression (t None: image model), p patch (spatial),
#   txt tokens the DiT attends to jointly (0: cross-attention only), ctx cross-attention context tokens,
#   cfg: whether ComfyUI's usual workflow batches cond+uncond (guidance-distilled models run at cfg 1),
#   factor: ComfyUI v0.8.0 supported_models.py memory_usage_factor (callable on arch), vae: decoder model.
#   (Newer upstream retunes some: SD3 1.6 [1.2 in late 2025], Z-Image 2.8, Flux2 3.1*4*hidden/2604; inside
#   ComfyUI the node asks the live model's memory_required instead of this table.)
FAMILY = {
    "sd1": dict(ch=4, s=8, t=None, p=1, txt=0, ctx=77, cfg=True, factor=1.0, vae="kl", name="Stable Diffusion 1.x"),
    "sd2": dict(ch=4, s=8, t=None, p=1, txt=0, ctx=77, cfg=True, factor=1.0, vae="kl", name="Stable Diffusion 2.x"),
    "sdxl": dict(ch=4, s=8, t=None, p=1, txt=0, ctx=77, cfg=True, factor=lambda a: 0.8 if a.get("context_dim") != 1280 else 1.0,
                 vae="kl", name="Stable Diffusion XL"),
    "sd3": dict(ch=16, s=8, t=None, p=2, txt=154, ctx=0, cfg=True, factor=1.6, vae="kl", name="Stable Diffusion 3/3.5"),
    "flux1": dict(ch=16, s=8, t=None, p=2, txt=512, ctx=0, cfg=False, factor=3.1, vae="kl", name="FLUX.1"),
    "flux2": dict(ch=128, s=16, t=None, p=1, txt=512, ctx=0, cfg=False, factor=3.1 * 4 * 2.36, vae="kl", name="FLUX.2"),
    "chroma": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=3.2, vae="kl", name="Chroma"),
    "qwen-image": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=1.8, vae="wan21", name="Qwen-Image"),
    "hidream": dict(ch=16, s=8, t=None, p=2, txt=384, ctx=0, cfg=True, factor=2.0, vae="kl", name="HiDream-I1"),
    "lumina2": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=1.4, vae="kl", name="Lumina Image 2.0"),
    "z-image": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=False, factor=2.0, vae="kl", name="Z-Image"),
    "wan21": dict(ch=16, s=8, t=4, p=2, txt=0, ctx=512, cfg=True, factor=lambda a: a.get("hidden", 2000) / 2222, vae="wan21",
                  name="Wan 2.1"),
    "wan22": dict(ch=48, s=16, t=4, p=2, txt=0, ctx=512, cfg=True, factor=lambda a: a.get("hidden", 2000) / 2222, vae="wan22",
                  name="Wan 2.2"),
    "hunyuan-video": dict(ch=16, s=8, t=4, p=2, txt=256, ctx=0, cfg=False, factor=1.8, vae="hunyuan-video", name="HunyuanVideo"),
    "hunyuan-image": dict(ch=64, s=32, t=None, p=1, txt=256, ctx=0, cfg=True, factor=8.7, vae="kl", name="HunyuanImage 2.1"),
    "ltxv": dict(ch=128, s=32, t=8, p=1, txt=0, ctx=128, cfg=True, factor=lambda a: a.get("cross_attention_dim", 2048) / 2048 * 5.5,
                 vae="ltxv", name="LTX-Video"),
    "mochi": dict(ch=12, s=8, t=6, p=2, txt=256, ctx=0, cfg=True, factor=2.0, vae="mochi", name="Mochi"),
    "cosmos": dict(ch=16, s=8, t=8, p=2, txt=0, ctx=512, cfg=True, factor=1.6, vae="cosmos", name="Cosmos"),
    "pixart": dict(ch=4, s=8, t=None, p=2, txt=0, ctx=300, cfg=True, factor=0.5, vae="kl", name="PixArt"),
    "auraflow": dict(ch=4, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=2.0, vae="kl", name="AuraFlow"),
    "hunyuan-dit": dict(ch=4, s=8, t=None, p=2, txt=0, ctx=333, cfg=True, factor=1.3, vae="kl", name="Hunyuan-DiT"),
    "unknown": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=2.0, vae="kl", name="unknown model"),
}
# Families whose file layout is fixed and whose defaults apply when only a family name is known (bench, node fallbacks).
DEFAULT_ARCH = {
    "hunyuan-video": {"hidden": 3072, "depth": 60, "heads": 24, "ffn": 12288, "block": "flux"},
    "mochi": {"hidden": 3072, "depth": 48, "heads": 24, "ffn": 12288, "block": "mmdit"},
    "hidream": {"hidden": 2560, "depth": 48, "heads": 20, "ffn": 6912, "block": "moe"},
}
# text tokens an encoder produces per prompt in ComfyUI (padding included)
TE_TOKENS = {"clip-l": 77, "clip-g": 77, "clip-h": 77, "t5-xxl": 512, "umt5-xxl": 512, "t5": 256, "umt5": 512}


def block_units(arch: dict) -> float:
    """Elements alive per token at the peak of one block, in units of the hidden size. Structural counts of the
    tensors alive in ComfyUI's block code, checked against traced peaks of its real forward (memory/trace.py):
    FLUX.1 single-stream block 14.7 traced (x, linear1 output kept alive by the MLP view, normed q/k);
    SD3.5's joint block 28.8 traced (the mixing function keeps both streams' qkv, their concatenation and the
    attention output alive through the MLP; the dual-attention x block adds a second qkv); Wan's cross block
    15.2 (1.3B) and 12.9 (5B) traced against 3.5d + 2f (x, modulated input, GELU hidden and output)."""
    d = arch.get("hidden") or 1
    f = arch.get("ffn") or 4 * d
    b = arch.get("block")
    if b == "flux":  # scaled by linear1's width (3d + f, or 3d + 2f for FLUX.2's gated MLP) against FLUX.1's 7d
        return 14.8 * (3 * d + (2 * f if arch.get("gated_mlp") else f)) / (7 * d)
    if b == "mmdit":
        return 28.5 if arch.get("dual_attention") else 24.0
    if b == "double":
        return max(15.0, (3.5 * d + 2 * f) / d)
    if b == "cross":
        return max(11 * d, 3.5 * d + 2 * f) / d
    if b == "gated":  # SwiGLU: w1 out, silu, w3 out, product
        return max(11 * d, 3.5 * d + 3 * f) / d
    if b == "moe":  # routed SwiGLU experts plus shared expert and the per-token gather/scatter copies
        return max(13 * d, 5 * d + 3 * f) / d
    return 20.0


def _unet_units(arch, family):
    """Elements per latent pixel per model channel at the U-Net's peak (the GEGLU feed-forward of the last
    full-resolution transformer, with every skip connection held): 26.0 traced for SD1.5, 15.9 for SDXL,
    whose full-resolution level has no attention."""
    return 26.0 if arch.get("attention_at_full", family != "sdxl") else 15.9


def _is_float(dtype):
    return dtype in ("F32", "F64", "F16", "BF16")


def resident_bytes(table: dict, cast_fp32=True) -> int:
    """Bytes in VRAM once ComfyUI loads the table: 32/64-bit float weights are cast to 16-bit (its
    unet/text-encoder/VAE dtype on a GPU with bf16/fp16); everything else stays as stored."""
    n = 0
    for dt, shape in table.values():
        if cast_fp32 and dt in ("F32", "F64"):
            n += math.prod(shape) * 2
        else:
            n += tensor_bytes(dt, shape)
    return n


def dtype_mix(table: dict) -> dict:
    out = {}
    for dt, shape in table.values():
        out[dt] = out.get(dt, 0) + tensor_bytes(dt, shape)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _largest_cast(table: dict) -> int:
    """ComfyUI's manual cast (fp8, GGUF) makes a 16-bit copy of each weight as it is used: the largest one."""
    n = 0
    for dt, shape in table.values():
        if dt not in ST_BYTES or dt.startswith("F8"):
            n = max(n, math.prod(shape) * 2)
    return n


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
                if "resident" in item:
                    c["resident"] = item["resident"]
                out.append(c)
                continue
        else:
            table, source = item, ""
        out.extend(families.split_components(table, source))
    return out


def from_files(paths) -> list[dict]:
    comps = []
    for p in paths:
        comps.extend(families.split_components(read_tensors(p), os.path.basename(str(p))))
    return comps


# -- the estimate ---------------------------------------------------------------------------------

def latent_geometry(family: str, width: int, height: int, frames: int = 1, batch: int = 1, arch=None) -> dict:
    spec = FAMILY.get(family, FAMILY["unknown"])
    s, t, p = spec["s"], spec["t"], spec["p"]
    h, w = max(1, height // s), max(1, width // s)
    lat_t = ((frames - 1) // t + 1) if t else 1
    grid = math.ceil(h / p) * math.ceil(w / p)
    shape = [batch, spec["ch"], lat_t, h, w] if t else [batch, spec["ch"], h, w]
    return {"shape": shape, "frames": lat_t, "h": h, "w": w, "image_tokens": lat_t * grid, "text_tokens": spec["txt"],
            "tokens": lat_t * grid + spec["txt"], "elements": batch * spec["ch"] * lat_t * h * w}


def _te_activation(c) -> int:
    table = c["table"]
    d = 0
    for dt, shape in table.values():
        if len(shape) == 2 and shape[0] > 30000:  # token embedding: vocab x hidden
            d = max(d, min(shape))
    d = d or 1024
    tokens = TE_TOKENS.get(c.get("kind"), 256)
    return int(tokens * (6 * d + 2 * 4 * d) * 2 + tokens * tokens * 64 * 2 * 2)


def _vae_decode(kind, width, height, out_frames, lat, b_vae, tiled=False):
    """(bytes, how) for decoding one sample at full resolution, or per tile."""
    if tiled:
        width, height = min(width, TILE), min(height, TILE)
        out_frames = min(out_frames, TILE_FRAMES)
    hw = width * height
    if kind in ("kl", "kl-f8-4ch", "kl-f8-16ch", "kl-f16-32ch", "vae"):
        # upsample into full resolution: 256-ch interpolated input and conv output, the 512-ch half-res input
        # (880 elements per pixel traced at 512 and 1024 px); cuDNN workspaces are not in it
        return int(880 * hw * b_vae + 3 * hw * 4), "KL decoder, upsample into full resolution"
    if kind == "wan21":
        # causal decoder, one latent frame (4 video frames) per chunk: 96-ch full-res stage, 2-frame feature
        # caches per conv, 192-ch upsampled input; plus the decoded video kept on the device
        return int(6000 * hw * b_vae + 3 * out_frames * hw * b_vae), "Wan causal decoder, 4-frame chunks"
    lat_t, lh, lw = lat["frames"], lat["h"], lat["w"]
    if tiled:
        lh, lw = max(1, height // FAMILY_S.get(kind, 8)), max(1, width // FAMILY_S.get(kind, 8))
        lat_t = min(lat_t, max(1, TILE_FRAMES // 4))
    ds = lambda n: n * b_vae  # noqa: E731
    if kind == "wan22":
        return int(ds(8000 * lh * lw * 256)), "ComfyUI's decode formula (Wan 2.2 VAE)"
    if kind == "hunyuan-video":
        return int(ds(2800 * min(8, (lat_t - 1) * 4 + 1) * lh * lw * 64)), "ComfyUI's decode formula (HunyuanVideo VAE)"
    if kind == "ltxv":
        return int(ds(900 * lat_t * lh * lw * 512)), "ComfyUI's decode formula (LTXV VAE)"
    if kind == "mochi":
        return int(ds(1000 * lat_t * lh * lw * 384)), "ComfyUI's decode formula (Mochi VAE)"
    if kind == "cosmos":
        return int(ds(50 * lat_t * lh * lw * 512)), "ComfyUI's decode formula (Cosmos VAE)"
    return int(5000 * hw * b_vae), "generic video decoder"


VAE_FAMILY = {"wan21": "wan21", "wan22": "wan22", "hunyuan-video": "hunyuan-video", "ltxv": "ltxv", "mochi": "mochi"}
FAMILY_S = {"wan22": 16, "ltxv": 32, "hunyuan-video": 8, "mochi": 8, "cosmos": 8}


def _comfy_factor(family, arch):
    f = FAMILY.get(family, FAMILY["unknown"])["factor"]
    return f(arch) if callable(f) else f


def comfy_memory_required(family, arch, lat_shape, b_eff, dtype_size=2, flash=True) -> int:
    """ComfyUI's BaseModel.memory_required for this latent (what its loader plans with), in bytes."""
    area = b_eff * math.prod(lat_shape[2:])
    factor = _comfy_factor(family, arch)
    mib = area * dtype_size * 0.01 * factor if flash else area * 0.15 * factor
    return int(mib * MiB)


def estimate(components, width, height, frames=1, batch=1, *, cfg=True, policy=None) -> dict:
    """components: tensor tables or component dicts (see components_from). cfg: True batches cond+uncond (x2),
    False does not, None takes the family's usual workflow. policy: {"text_encoders": "unload"|"resident"|"cpu",
    "models": "swap"|"resident", "platform": "linux"|"windows"|"darwin", "compute_bytes": 2, "vae_bytes": 2,
    "offload_bytes": 0, "tiled_decode": False, "cast_fp32": True, "device": "cuda"|"rocm"|"mps"|"xpu"|"cpu",
    "family": override, "arch": override}."""
    if width <= 0 or height <= 0 or frames <= 0 or batch <= 0:
        raise UserError(f"width, height, frames and batch must be positive (got {width}x{height}, {frames} frames, batch {batch})")
    pol = {"text_encoders": "unload", "models": "swap", "platform": "linux", "compute_bytes": 2, "vae_bytes": 2,
           "offload_bytes": 0, "cast_fp32": True}
    pol.update(policy or {})
    comps = components_from(components)
    dms = [c for c in comps if c["role"] == "diffusion_model"]
    tes = [c for c in comps if c["role"] == "text_encoder"]
    vaes = [c for c in comps if c["role"] == "vae"]
    assumptions = []
    dm = max(dms, key=lambda c: c["bytes"]) if dms else None
    family = pol.get("family") or (dm["family"] if dm else VAE_FAMILY.get(vaes[0]["kind"], "unknown") if vaes else "unknown")
    arch = dict(DEFAULT_ARCH.get(family, {}))
    if dm and dm.get("arch", {}).get("hidden"):
        arch.update(dm["arch"])
    arch.update(pol.get("arch") or {})
    variant = (dm or {}).get("variant", "")
    spec = FAMILY.get(family, FAMILY["unknown"])
    if len(dms) > 1:
        assumptions.append(f"{len(dms)} diffusion models given; the largest is sampled with, the others are swapped out")
    if not dm:
        assumptions.append("no diffusion model among the files: the sample phase is left out")
    if family == "unknown" and dm:
        assumptions.append("family not recognised: generic DiT figures (20 x hidden per token), flagged unknown")
    if spec["t"] is None and frames > 1:
        assumptions.append(f"{spec['name']} is an image model: frames={frames} ignored")
        frames = 1
    if cfg is None:
        cfg = spec["cfg"]
        assumptions.append(f"CFG {'on: cond and uncond batched (x2)' if cfg else 'off (cfg 1, guidance-distilled workflow)'} as {spec['name']} workflows usually run")
    else:
        assumptions.append("CFG on: ComfyUI batches cond and uncond (x2) when memory allows" if cfg else "CFG off (cfg 1): one pass per step")
    b_eff = batch * (2 if cfg else 1)
    lat = latent_geometry(family, width, height, frames, batch)
    bc = pol["compute_bytes"]
    out_frames = ((lat["frames"] - 1) * spec["t"] + 1) if spec["t"] else 1

    # weights (exact) and what ComfyUI keeps resident
    for c in comps:
        c.setdefault("resident", resident_bytes(c["table"], pol["cast_fp32"]) if c["role"] != "other" else 0)
    w_dm = dm["resident"] if dm else 0
    if pol["offload_bytes"]:
        w_dm = max(0, w_dm - int(pol["offload_bytes"]))
        assumptions.append(f"partial offload: {fmt_bytes(pol['offload_bytes'])} of the diffusion model stays in host RAM")
    w_te = sum(c["resident"] for c in tes)
    w_vae = max((c["resident"] for c in vaes), default=0)
    if pol["cast_fp32"] and any(_has_fp32(c["table"]) for c in comps if c["role"] != "other"):
        assumptions.append("32-bit float weights are cast to 16-bit on load (ComfyUI's default on GPUs with fp16/bf16)")

    # sample
    act, naive, how = 0, 0, ""
    if dm:
        d, heads = arch.get("hidden") or 0, arch.get("heads") or max(1, (arch.get("hidden") or 0) // 128)
        if arch.get("block") == "unet" or family in ("sd1", "sd2", "sdxl"):
            mc = arch.get("model_channels", 320)
            n0 = lat["h"] * lat["w"]
            act = int(_unet_units(arch, family) * b_eff * n0 * mc * bc)
            full = arch.get("attention_at_full", family != "sdxl")
            na_tok = n0 if full else n0 // 4
            na_heads = (mc // 64 if family == "sd2" else 8) if full else 2 * mc // 64
            naive = int(b_eff * na_heads * na_tok * na_tok * 2 * bc)
            how = f"U-Net, {_unet_units(arch, family)} x {mc} channels per latent pixel"
        else:
            n = lat["tokens"]
            units = block_units(arch)
            act = int(units * b_eff * n * d * bc)
            head_dim = d // heads if heads else 128
            act += int(b_eff * n * head_dim * 8)  # rotary tables (fp32)
            naive = int(b_eff * heads * n * n * 2 * bc + b_eff * heads * n * spec["ctx"] * 2 * bc)
            how = f"{units:.1f} x hidden {d} per token, {n} tokens"
        act += lat["elements"] * 4 * 6 + lat["elements"] * bc * 4 // max(1, batch) * b_eff  # sampler state, model in/out
        act += _largest_cast(dm["table"])
    # text encode (encoders run one prompt at a time)
    te_act = max((_te_activation(c) for c in tes), default=0)
    # decode one sample
    vae_kind = (vaes[0]["kind"] if vaes else None) or spec["vae"]
    if vae_kind in ("kl-f8-4ch", "kl-f8-16ch", "kl-f16-32ch", "vae") or vae_kind.startswith("kl"):
        vae_kind = "kl" if spec["t"] is None else spec["vae"]
    dec, dec_how = _vae_decode(vae_kind, width, height, out_frames, lat, pol["vae_bytes"])
    dec_t, _ = _vae_decode(vae_kind, width, height, out_frames, lat, pol["vae_bytes"], tiled=True)
    if pol.get("tiled_decode"):
        dec, dec_how = dec_t, dec_how + " (tiled decode)"
    if not vaes and dm:
        assumptions.append(f"no VAE file given: decode figured for {spec['name']}'s usual VAE, its weights not counted")

    fixed = {"cuda_context": CUDA_CONTEXT if pol.get("device", "cuda") in ("cuda", "rocm") else 0,
             "comfyui_reserve": COMFY_RESERVE.get(pol["platform"], 400 * MiB)}
    fixed_total = sum(fixed.values())
    keep = pol["models"] == "resident"
    te_resident = pol["text_encoders"] == "resident" or keep
    others = lambda *exclude: sum(v for k, v in (("te", w_te if pol["text_encoders"] != "cpu" else 0), ("dm", w_dm), ("vae", w_vae))  # noqa: E731
                                  if k not in exclude) if keep else 0
    te_w_phase = w_te if pol["text_encoders"] != "cpu" else 0
    te_extra_in_sample = w_te if (te_resident and not keep and pol["text_encoders"] != "cpu") else 0
    breakdown = {}

    def phase(name, weights, acts):
        margin = int(FRAGMENTATION * acts)
        breakdown[name] = {"weights": int(weights), "activations": int(acts), "allocator_margin": margin, "fixed": fixed_total}
        return int(weights + acts + margin + fixed_total)

    phases = {}
    if tes:
        phases["text_encode"] = phase("text_encode", te_w_phase + others("te"), te_act if te_w_phase else 0)
    if dm:
        phases["sample"] = phase("sample", w_dm + te_extra_in_sample + others("dm"), act)
        phases["sample_naive_attention"] = phase("sample_naive_attention", w_dm + te_extra_in_sample + others("dm"),
                                                 max(act, int(0.6 * act) + naive))
    if dm or vaes:
        phases["vae_decode"] = phase("vae_decode", w_vae + te_extra_in_sample + others("vae"), dec)
        phases["vae_decode_tiled"] = phase("vae_decode_tiled", w_vae + te_extra_in_sample + others("vae"), dec_t)
    if not phases:
        raise UserError("none of these files is a diffusion model, text encoder or VAE")
    main = {k: v for k, v in phases.items() if k in ("text_encode", "sample", "vae_decode")}
    peak_phase = max(main, key=main.get)
    policy_line = ("every model stays resident (no swapping)" if keep else
                   "ComfyUI swaps models between phases: each phase needs only its own model "
                   f"(text encoders {'kept resident' if te_resident else 'on the CPU' if pol['text_encoders'] == 'cpu' else 'unloaded'} during sampling)")
    assumptions += [
        policy_line,
        f"activations in {bc * 8}-bit; memory-efficient attention (SDPA flash / xformers) unless the naive figure is read",
        f"sample: {how}" if dm else "",
        f"VAE decode: {dec_how}, one sample at a time, {pol['vae_bytes'] * 8}-bit; tiled: {TILE} px tiles" + (f", {TILE_FRAMES} frames" if spec["t"] else ""),
        f"fixed: {pol.get('device', 'cuda').upper()} context {fmt_bytes(fixed['cuda_context'])} and ComfyUI's reserve {fmt_bytes(fixed['comfyui_reserve'])} "
        f"({pol['platform']}; --reserve-vram changes it); allocator margin {int(FRAGMENTATION * 100)} % of activations",
    ]
    comfy = comfy_memory_required(family, arch, lat["shape"], b_eff, bc) if dm else None
    est = {
        "family": family, "variant": variant, "family_name": spec["name"] if dm else "no diffusion model",
        "unknown": bool(dm) and family == "unknown",
        "width": width, "height": height, "frames": frames, "batch": batch, "cfg": bool(cfg),
        "latent": {"shape": lat["shape"], "image_tokens": lat["image_tokens"], "text_tokens": lat["text_tokens"],
                   "tokens": lat["tokens"], "batch_in_model": b_eff},
        "components": [{"source": c["source"], "role": c["role"], "kind": c.get("kind") or c.get("family"),
                        "family": c.get("family"), "bytes": c["bytes"], "resident": c["resident"], "dtypes": dtype_mix(c["table"])}
                       for c in comps],
        "weights": {"diffusion_model": dm["bytes"] if dm else 0, "text_encoders": sum(c["bytes"] for c in tes),
                    "vae": sum(c["bytes"] for c in vaes), "other": sum(c["bytes"] for c in comps if c["role"] == "other"),
                    "total": sum(c["bytes"] for c in comps)},
        "phases": phases, "breakdown": breakdown, "fixed": fixed, "peak": phases[peak_phase], "peak_phase": peak_phase,
        "all_resident": w_dm + w_te + w_vae + int((1 + FRAGMENTATION) * max(act, dec, te_act)) + fixed_total,
        "comfyui_memory_required": comfy,
        "comfyui_factor": _comfy_factor(family, arch) if dm else None,
        "assumptions": [a for a in assumptions if a],
        "policy": pol, "verdict": "no budget", "budget": None, "min_vram_gb": None, "knobs": [],
        "_ctx": {"components": comps, "width": width, "height": height, "frames": frames, "batch": batch, "cfg": cfg,
                 "policy": pol},
    }
    est["min_vram_gb"] = min_vram_gb(est["peak"])
    if not pol.get("_no_knobs"):
        est["knobs"] = knobs(est)
    return est


def _has_fp32(table):
    return any(dt == "F32" for dt, _ in table.values())


def min_vram_gb(peak: int):
    for gb in CARD_SIZES_GB:
        if peak <= gb * GiB * CARD_USABLE:
            return gb
    return None


def budget_from_snapshot(snap: dict):
    """(bytes, label) from a probe snapshot: the first accelerator's total less other processes' use."""
    for d in (snap or {}).get("devices", ()):
        if d.get("backend") == "cpu" or not d.get("total"):
            continue
        other = d.get("other_processes") or 0
        label = f"device {d.get('index', 0)} {d.get('name') or ''}".strip()
        if other:
            label += f" (less {fmt_bytes(other)} held by other processes)"
        return int(d["total"]) - int(other), label
    return None, "no GPU found"


def judge(est: dict, budget_bytes) -> dict:
    """Sets verdict (fits / tight / does not fit / no budget), budget, headroom, and each knob's fits."""
    est["budget"] = int(budget_bytes) if budget_bytes else None
    if not budget_bytes:
        est["verdict"], est["headroom"] = "no budget", None
        return est
    peak = est["peak"]
    est["headroom"] = int(budget_bytes - peak)
    est["verdict"] = "fits" if peak <= FITS_BELOW * budget_bytes else "tight" if peak <= budget_bytes else "does not fit"
    for k in est.get("knobs", ()):
        k["fits"] = k["peak_after"] <= budget_bytes
    return est


# -- knobs ----------------------------------------------------------------------------------------

def _requant(comps, dtype):
    out = []
    for c in comps:
        c = dict(c)
        if c["role"] == "diffusion_model":
            c.pop("resident", None)
            c["table"] = {k: ((dtype if len(s) >= 2 and math.prod(s) >= 4096 and _is_float(dt) else dt), s)
                          for k, (dt, s) in c["table"].items()}
        out.append(c)
    return out


def knobs(est: dict) -> list[dict]:
    ctx = est["_ctx"]
    base = est["peak"]
    comps, pol = ctx["components"], ctx["policy"]
    w, h, f, b, cfg = ctx["width"], ctx["height"], ctx["frames"], ctx["batch"], ctx["cfg"]
    fam = est["family"]
    spec = FAMILY.get(fam, FAMILY["unknown"])
    out = []

    def add(kid, label, new_est=None, peak_after=None, note=""):
        after = peak_after if peak_after is not None else new_est["peak"]
        if after < base:
            out.append({"id": kid, "label": label, "saving": int(base - after), "peak_after": int(after), "note": note})

    def again(comps_=comps, w_=w, h_=h, f_=f, b_=b, cfg_=cfg, **pol_):
        p = dict(pol, **pol_)
        return _peak_only(comps_, w_, h_, f_, b_, cfg_, p)

    phases = est["phases"]
    if "vae_decode_tiled" in phases and phases["vae_decode"] > phases["vae_decode_tiled"]:
        add("tiled_vae", "VAE Decode (Tiled) instead of VAE Decode",
            peak_after=max([v for k, v in phases.items() if k in ("text_encode", "sample")] + [phases["vae_decode_tiled"]]))
    dm = [c for c in comps if c["role"] == "diffusion_model"]
    dm_dtypes = dm[0]["table"].values() if dm else ()
    if dm and not any(dt.startswith("F8") or dt not in ST_BYTES for dt, _ in dm_dtypes):
        add("fp8_weights", "fp8 (e4m3fn) diffusion model weights (weight_dtype fp8_e4m3fn or an fp8 file)",
            peak_after=again(_requant(comps, "F8_E4M3")))
    if dm and not any(dt in ("Q4_K", "Q4_0", "Q3_K", "Q2_K") for dt, _ in dm_dtypes):
        add("gguf_q8_0", "GGUF Q8_0 diffusion model (ComfyUI-GGUF)", peak_after=again(_requant(comps, "Q8_0")))
        add("gguf_q4_k", "GGUF Q4_K diffusion model (ComfyUI-GGUF; some quality loss)", peak_after=again(_requant(comps, "Q4_K")))
    if "text_encode" in phases and phases["text_encode"] >= base:
        add("te_cpu", "run the text encoders on the CPU (CLIP loader device: cpu)", peak_after=again(text_encoders="cpu"))
        tes = [c for c in comps if c["role"] == "text_encoder" and c["bytes"] > 2 * GiB]
        if tes:
            add("te_fp8", "fp8 text encoder (e.g. t5xxl_fp8_e4m3fn)", peak_after=again(_requant_te(comps)))
    if pol.get("models") == "resident" or pol.get("text_encoders") == "resident":
        add("unload_te", "unload the text encoders after encoding (GPU Garden Unload Text Encoders)",
            peak_after=again(models="swap", text_encoders="unload"))
    if cfg and spec["cfg"] and "sample" in phases:
        add("cfg_sequential", "cond and uncond one at a time (ComfyUI does this by itself when memory is short)",
            peak_after=again(cfg_=False))
    if b > 1:
        add("batch_1", f"batch 1 instead of {b}", peak_after=again(b_=1))
    if spec["t"] and f > 1:
        nf = max(1, ((f - 1) // 2) // spec["t"] * spec["t"] + 1)
        add("fewer_frames", f"{nf} frames instead of {f}", peak_after=again(f_=nf))
    nw, nh = max(64, int(w * 0.75) // 64 * 64), max(64, int(h * 0.75) // 64 * 64)
    if (nw, nh) != (w, h):
        add("lower_resolution", f"{nw}x{nh} instead of {w}x{h} (then upscale)", peak_after=again(w_=nw, h_=nh))
    peak_phase = est["peak_phase"]
    if peak_phase in ("sample", "text_encode") and est["breakdown"][peak_phase]["weights"] > 0:
        bd = est["breakdown"][peak_phase]
        keep = max(bd["weights"] // 10, 256 * MiB)
        rest = [v for k, v in phases.items() if k in ("text_encode", "sample", "vae_decode") and k != peak_phase]
        after = max(rest + [bd["activations"] + bd["allocator_margin"] + bd["fixed"] + keep])
        what = "diffusion model" if peak_phase == "sample" else "text encoders"
        add("partial_offload", f"partial offload of the {what} (ComfyUI does it when weights do not fit; --lowvram forces it; slower)",
            peak_after=after, note=f"needs about {fmt_bytes(bd['weights'] - keep)} of free host RAM")
    return sorted(out, key=lambda k: -k["saving"])


def _requant_te(comps):
    out = []
    for c in comps:
        c = dict(c)
        if c["role"] == "text_encoder" and c["bytes"] > 2 * GiB:
            c.pop("resident", None)
            c["table"] = {k: (("F8_E4M3" if len(s) >= 2 and _is_float(dt) else dt), s) for k, (dt, s) in c["table"].items()}
        out.append(c)
    return out


def _peak_only(comps, w, h, f, b, cfg, pol) -> int:
    e = estimate([{k: v for k, v in c.items() if k != "resident"} | ({"role": c["role"]}) for c in comps], w, h, f, b,
                 cfg=cfg, policy=pol | {"_no_knobs": True})
    return e["peak"]


# -- output ---------------------------------------------------------------------------------------

def public(est: dict) -> dict:
    """The estimate without internals (for JSON)."""
    return {k: v for k, v in est.items() if not k.startswith("_")}


PHASE_LABELS = {"text_encode": "text encode", "sample": "sample", "sample_naive_attention": "  naive attention",
                "vae_decode": "VAE decode", "vae_decode_tiled": "  tiled"}
ROLE_LABELS = {"diffusion_model": "diffusion model", "text_encoder": "text encoder", "vae": "VAE", "other": "other"}


def format_text(est: dict, budget_label: str = "") -> str:
    g = lambda n: "—" if n is None else f"{n / GiB:6.2f}"  # noqa: E731
    fam = est["family"] + (f" {est['variant']}" if est.get("variant") else "")
    size = f"{est['width']}x{est['height']}" + (f"x{est['frames']}f" if est["frames"] > 1 else "")
    lines = [f"{est['family_name']} ({fam}) at {size}, batch {est['batch']}, CFG {'on' if est['cfg'] else 'off'}"
             + ("   [UNKNOWN family: generic figures]" if est["unknown"] else "")]
    lines.append("")
    lines.append(f"{'component':38} {'role':15} {'kind':16} {'GiB':>7} {'in VRAM':>8}  dtypes")
    for c in est["components"]:
        dts = ", ".join(f"{k}" for k in list(c["dtypes"])[:3])
        lines.append(f"{(c['source'] or '-')[:38]:38} {ROLE_LABELS[c['role']]:15} {str(c['kind'] or '-')[:16]:16} "
                     f"{g(c['bytes']):>7} {g(c['resident']):>8}  {dts}")
    lat = est["latent"]
    lines.append("")
    lines.append(f"latent {lat['shape']}: {lat['image_tokens']} image tokens + {lat['text_tokens']} joint text tokens, "
                 f"batch {lat['batch_in_model']} in the model")
    lines.append("")
    lines.append(f"{'phase (GiB)':22} {'weights':>8} {'activ.':>8} {'margin':>7} {'fixed':>7} {'total':>8}")
    for k, v in est["phases"].items():
        bd = est["breakdown"][k]
        mark = "  <- peak" if k == est["peak_phase"] else ""
        lines.append(f"{PHASE_LABELS.get(k, k):22} {g(bd['weights']):>8} {g(bd['activations']):>8} {g(bd['allocator_margin']):>7} "
                     f"{g(bd['fixed']):>7} {g(v):>8}{mark}")
    if est.get("comfyui_memory_required") is not None:
        lines.append(f"ComfyUI's own memory_required (factor {est['comfyui_factor']:.2f}): {fmt_bytes(est['comfyui_memory_required'])} "
                     f"for sampling activations (ours: {fmt_bytes(est['breakdown']['sample']['activations'])})")
    lines.append("")
    lines.append(f"peak {fmt_bytes(est['peak'])} in {PHASE_LABELS[est['peak_phase']].strip()}; "
                 f"smallest common card: {str(est['min_vram_gb']) + ' GB' if est['min_vram_gb'] else 'none up to 141 GB'}")
    if est["budget"]:
        lines.append(f"verdict: {est['verdict'].upper()} in {fmt_bytes(est['budget'])}" + (f" ({budget_label})" if budget_label else "")
                     + f", headroom {fmt_bytes(est['headroom'])}")
    else:
        lines.append(f"verdict: no budget ({budget_label or 'pass --vram GIB'})")
    if est["knobs"]:
        lines.append("knobs (saving, then what to change):")
        for k in est["knobs"]:
            fits = "" if est["budget"] is None else ("  fits" if k.get("fits") else "  still over")
            lines.append(f"  {'saves ' + fmt_bytes(k['saving']):>16}  {k['label']}{fits}" + (f" ({k['note']})" if k.get("note") else ""))
    lines.append("assumptions:")
    lines += [f"  - {a}" for a in est["assumptions"]]
    return "\n".join(lines)


def run_cli(args) -> int:
    comps = from_files(args.files)
    policy = {"models": getattr(args, "models", "swap"), "text_encoders": getattr(args, "text_encoders", "unload")}
    est = estimate(comps, args.width, args.height, args.frames, args.batch, cfg=getattr(args, "cfg", None), policy=policy)
    budget, label = None, ""
    if args.vram is not None:
        if not args.vram > 0:
            raise UserError(f"--vram needs a positive number of GiB, got {args.vram}")
        budget, label = int(args.vram * GiB), "--vram"
    else:
        try:
            from ..budget import probe
        except ImportError:
            label = "no budget: pass --vram GIB"
        else:
            try:
                budget, label = budget_from_snapshot(probe.snapshot())
            except Exception as exc:  # a broken driver must not stop an estimate
                label = f"no budget: device probe failed ({type(exc).__name__})"
    judge(est, budget)
    if args.json:
        out = public(est)
        out["budget_source"] = label
        print(json.dumps(out, indent=2, default=str))
    else:
        print(format_text(est, label))
    return 1 if est["verdict"] == "does not fit" else 0


def demo_section(as_json: bool = False):
    """A FLUX.1-dev + T5-XXL + CLIP-L + ae workflow at 1024x1024, estimated from the bundled layouts, judged on a 24 GB card."""
    from . import layouts

    comps = []
    for name, file in (("flux_flux1-dev", "flux1-dev.safetensors"), ("te_t5xxl_fp16", "t5xxl_fp16.safetensors"),
                       ("te_clip_l", "clip_l.safetensors"), ("vae_flux_ae", "ae.safetensors")):
        lay = layouts.load(name)
        table = {k: (v["dtype"], tuple(v["shape"])) for k, v in lay["tensors"].items()}
        comps.extend(families.split_components(table, file))
    est = judge(estimate(comps, 1024, 1024, cfg=None), 24 * GiB)
    return public(est) if as_json else format_text(est, "a 24 GB card")
