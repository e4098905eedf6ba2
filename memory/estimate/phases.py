"""Activation bytes of each phase, per family: sampling (one model call), text encoding, and ComfyUI's own
sampling heuristic. The stable entry point for other modules is `sample_activation_bytes`; the VAE phase is
in vae.py.

Coefficients are structural counts of the tensors alive at the peak of one block, calibrated on the FIT set
of benchmarks/bench_estimate.py (traced peaks of ComfyUI 0.8.0's real forward); the benchmark reports the
held-out rows separately, and tests/host/test_trace_comfy.py pins the traced peaks they were fitted to."""
import math

from . import hunyuan3d as H3D, spec
from ..units import MiB

DTYPE_SIZE = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
DTYPE_NAMES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}  # torch's names -> the estimate's


def dtype_name(dtype):
    """The estimate's name of a compute dtype: "fp16" for "fp16", "float16", "torch.float16" or torch.float16 (any
    case); a number (bytes per element) is returned as it is. Unknown names raise ValueError."""
    if isinstance(dtype, (int, float)):
        return dtype
    name = str(dtype).replace("torch.", "").lower()
    name = DTYPE_NAMES.get(name, name)
    if name not in DTYPE_SIZE:
        raise ValueError(f"unknown compute dtype {dtype!r}; one of {', '.join(list(DTYPE_SIZE) + list(DTYPE_NAMES))} "
                         "or a byte count")
    return name


def dtype_bytes(dtype) -> int:
    """2 for "bf16"/"fp16"/2, 4 for "fp32"/4, ... (a number is taken as bytes per element; names as dtype_name)."""
    name = dtype_name(dtype)
    return int(name) if isinstance(name, (int, float)) else DTYPE_SIZE[name]


def block_units(arch: dict) -> float:
    """Elements alive per token at the peak of one block, in units of the hidden size (traced on ComfyUI's
    block code, memory/trace): FLUX.1's single-stream block (x, linear1's output kept alive by the MLP view,
    normed q/k) scaled by linear1's width; SD3.5's joint block (both streams' qkv, their concatenation and the
    attention output alive through the MLP; the dual-attention x block adds a second qkv); Wan's cross block
    (x, modulated input, GELU hidden and output: a + b*f/d, fitted on Wan 2.1 1.3B and Wan 2.2 5B)."""
    d = arch.get("hidden") or 1
    f = arch.get("ffn") or 4 * d
    b = arch.get("block")
    if b == "flux":  # scaled by linear1's width (3d + f, or 3d + 2f for FLUX.2's gated MLP) against FLUX.1's 7d
        return FLUX_UNITS * (3 * d + (2 * f if arch.get("gated_mlp") else f)) / (7 * d)
    if b == "mmdit":
        if arch.get("gated_mlp"):  # Mochi's asymmetric joint block: its peak is in the SwiGLU MLP (MOCHI_MLP)
            return MOCHI_MLP_HIDDEN + MOCHI_MLP_GATED * f / d
        return 28.5 if arch.get("dual_attention") else 24.0
    if b == "double":
        return max(15.0, (3.5 * d + 2 * f) / d)
    if b == "dual":  # Qwen-Image's and HunyuanVideo 1.5's image tokens (DUAL_*; text tokens: DUAL_TEXT, sample_parts)
        return DUAL_HIDDEN + DUAL_MLP * f / d
    if b == "nextdit":  # Lumina 2 / Z-Image (NEXTDIT_*)
        return NEXTDIT_HIDDEN + NEXTDIT_MLP * f / d
    if b == "cross":
        return max(10.5, CROSS_A + CROSS_B * f / d)
    if b == "gated":  # SwiGLU: w1 out, silu, w3 out, product
        return max(11 * d, 3.5 * d + 3 * f) / d
    if b == "moe":  # routed SwiGLU experts plus shared expert and the per-token gather/scatter copies
        return max(13 * d, 5 * d + 3 * f) / d
    return 20.0


# Qwen-Image (ComfyUI 0.8.0 comfy/ldm/qwen_image/model.py QwenImageTransformerBlock, block "dual": two streams with their
# own MLPs): its peak is the image MLP's GELU (FeedForward: proj then gelu, both f wide), with three hidden-sized image
# tensors alive: the block's input (still bound in the caller's loop), the residual after the gated attention and its
# modulated norm (img_modulated2). The text stream holds its input and its residual there (DUAL_TEXT per text token).
# Read from the code; the meta trace of ComfyUI's forward (tests/host/test_trace_comfy.py, 1024x1024, one conditioning)
# lists exactly these at its peak (img_mlp.net.0 aten.gelu: 2 x [4096, 12288] + 3 x [4096, 3072] bf16).
# HunyuanVideo 1.5 has only double blocks (54, depth_single_blocks 0; hunyuan_video/model.py:237-254), flux/layers.py
# DoubleStreamBlock (flipped_img_txt): its peak is the same GELU (l.257, build_mlp: Linear then GELU, f wide each) with
# three hidden-sized tensors per image token: img (the block input, updated in place by l.255's +=), the joint
# attention output (l.239: txt_attn, a view, keeps it whole until l.260) and the MLP's modulated input (apply_mod's
# addcmul, the call's argument); a text token holds txt and its attention rows (DUAL_TEXT). The meta trace at 320x192x9
# (hv17: double_blocks.0.img_mlp.1 aten.gelu) lists 2 x [720, 8192] + [720, 2048] x 2 + [730, 16, 128] fp16.
DUAL_HIDDEN, DUAL_MLP, DUAL_TEXT = 3.0, 2.0, 2.0
# Lumina 2 / Z-Image (comfy/ldm/lumina/model.py NextDiT, block "nextdit"): the peak is the SwiGLU product in a layer's
# feed-forward, where _forward_silu_gating(w1(x), w3(x)) keeps both projections alive as its arguments beside silu(w1)
# and the product (4 f), with four hidden-sized tensors: the joint sequence the forward keeps as img_input through the
# loop, the layer's input, the residual after attention and the modulated ffn input. Read from the code; the trace
# (Z-Image 1024x1024, layers.1.feed_forward aten.mul) lists exactly these (4 x [4128, 10240] + 4 x [4128, 3840] bf16).
NEXTDIT_HIDDEN, NEXTDIT_MLP = 4.0, 4.0
# Mochi (ComfyUI's AsymmetricJointBlock and diffusers' MochiTransformerBlock alike): at the MLP's product
# silu(x) * gate the live tensors are four hidden-sized ones (the block input, still held by the caller's loop; the
# attention output, still bound to a local; the residual after attention; its modulated norm) and the SwiGLU's fused
# w1 output (2 f), silu(x) (f) and the product (f), with f the SwiGLU width (8192 for hidden 3072). Read from the
# code, not fitted; a one-off meta trace of ComfyUI 0.8.0's GenmoMochi at 848x480x85 with CFG batched peaks there
# (blocks.0.mlp_x, aten.mul) at 4,476,015,760 bytes of activations (tests/unit/test_estimate_mochi.py).
MOCHI_MLP_HIDDEN, MOCHI_MLP_GATED = 4.0, 4.0
# FLUX.1 single-stream block, fitted on flux1 1024x1024 at the trace's 4352 tokens (4096 image + the 256 of ComfyUI's
# T5 context, memory/trace/comfy_checkout.py): (388893194 - 8388608 sampler state - 4352 x 1024 rope) / (4352 x 3072 x 2)
# = 14.06. 13.3 was fitted counting 512 text tokens the trace did not have (14.8 on the older tracer)
FLUX_UNITS = 14.06
CROSS_A, CROSS_B = 2.43, 2.083  # Wan cross block, fitted on wan21 832x480x33 and wan22 1280x704x41


# LTX-2 (ComfyUI 0.8.0 comfy/ldm/lightricks/av_model.py BasicAVTransformerBlock.forward, l.154-319): the block runs
# video self- and text cross-attention, then audio's, then the audio<->video cross attention, then the video
# FeedForward, then audio's. Per video token, through the whole block: vx (updated in place), norm_vx (l.185, bound and
# never deleted), and the block's arguments v_pe, cos and sin d wide each in the model dtype (model.py:702
# .to(out_dtype), interleaved [B, N, d]), and v_cross_pe over the video tokens at the audio cross width
# (av_model.py:656-662, 2 x audio_cross_attention_dim). Two places peak:
# - the video FeedForward's GELU (model.py:280-281 GELU_approx: proj's output and gelu's, f wide each) with vx_norm3
#   (l.218, never deleted) and vx_scaled (l.304) beside vx and norm_vx: 4 d + 2 f per video token; per audio token
#   ax, norm_ax (l.201), ax_norm3 (l.219), the v2a ax_scaled (l.274): 4 + a_pe 2 + a_cross_pe 2, audio-wide;
# - the text cross-attention's k_norm (model.py:366-373, attn2 over the context): vx, norm_vx, attn2's argument
#   rms_norm(vx) and the normed q (4 d per video token), to_k's output, to_v's and k_norm's (3 d per context token);
#   audio holds ax, a_pe, a_cross_pe (5). At 320x192x9 (120 video tokens) this one is the larger.
# Beside both, for the whole forward: the context as the sampler hands it (fp32 [B, ctx, 2 x 3840]), its cast to the
# model dtype (model_base.py:186) and its two projections, d and audio wide (model.py:674, av_model.py:631).
# Read from the code; the meta trace of ComfyUI's forward lists exactly these at both peaks (ltx58). Not fitted.
AV_HIDDEN, AV_MLP, AV_ROPE, AV_CROSS_ROPE = 4.0, 2.0, 2.0, 2.0
AV_AUDIO_FF, AV_AUDIO_CA = 8.0, 5.0  # audio-wide tensors per audio token at the FeedForward / cross-attention peak
AV_CA_CONTEXT = 3.0                  # k, v, normed k per context token, video width
AV_CONTEXT_IN = 2 * 3840             # the connectors' video + audio halves (text_encoders/lt.py:105-107, 30 x 128 each)


def av_units(arch) -> tuple:
    """(per video token in units of the video width, per audio token in units of the audio width) at LTX-2's
    FeedForward peak."""
    d, da = arch.get("hidden") or 1, arch.get("audio_hidden") or 2048
    f = arch.get("ffn") or 4 * d
    return AV_HIDDEN + AV_MLP * f / d + AV_ROPE + AV_CROSS_ROPE * da / d, AV_AUDIO_FF


def av_bytes(arch, lat, ctx, b_eff, bc) -> int:
    """LTX-2's sampling activations (without the sampler state): the larger of its two block peaks plus the context."""
    d, da = arch.get("hidden") or 1, arch.get("audio_hidden") or 2048
    nv, na = lat["image_tokens"], lat["audio_tokens"]
    vu, au = av_units(arch)
    ff = nv * vu * d + na * au * da
    ca = nv * (AV_HIDDEN + AV_ROPE + AV_CROSS_ROPE * da / d) * d + na * AV_AUDIO_CA * da + ctx * AV_CA_CONTEXT * d
    context = ctx * (AV_CONTEXT_IN * (4 + bc) + (d + da) * bc)
    return int(b_eff * (max(ff, ca) * bc + context))


def unet_units(arch, family):
    """Elements per latent pixel per model channel at the U-Net's peak (the GEGLU feed-forward of the last
    full-resolution transformer, with every skip connection held): 26.0 traced for SD1.5, 15.9 for SDXL,
    whose full-resolution level has no attention."""
    return 26.0 if arch.get("attention_at_full", family != "sdxl") else 15.9


def latent_geometry(family: str, width: int, height: int, frames: int = 1, batch: int = 1, arch=None, audio_fps=None) -> dict:
    sp = spec.family(family)
    s, t, p = sp["s"], sp["t"], sp["p"]
    h, w = max(1, height // s), max(1, width // s)
    lat_t = ((frames - 1) // t + 1) if t else 1
    grid = math.ceil(h / p) * math.ceil(w / p)
    shape = [batch, sp["ch"], lat_t, h, w] if t else [batch, sp["ch"], h, w]
    return _with_audio(family, {"shape": shape, "frames": lat_t, "h": h, "w": w, "image_tokens": lat_t * grid,
                                "text_tokens": sp["txt"], "tokens": lat_t * grid + sp["txt"],
                                "elements": batch * sp["ch"] * lat_t * h * w}, audio_fps)


def _with_audio(family, lat, fps=None) -> dict:
    """LTX-2: the audio latent beside the video one (spec.audio_tokens, for the pixel frames the video latent's
    latent frames stand for: (T - 1) x 8 + 1, nodes_lt.py:34 inverted): its tokens join the sequence count and its
    elements the sampler's packed latent (utils.py:1182 pack_latents); fps: the audio node's frame_rate (spec.audio_tokens).
    Other families: unchanged, audio_tokens 0."""
    a = spec.family(family).get("audio")
    if not a:
        return dict(lat, audio_tokens=0)
    n = spec.audio_tokens(family, (lat["frames"] - 1) * spec.family(family)["t"] + 1, fps)
    return dict(lat, audio_tokens=n, tokens=lat["tokens"] + n, elements=lat["elements"] + lat["shape"][0] * a["ch"] * n * a["bins"])


def geometry_from_shape(family: str, latent_shape, text_tokens=None, audio_fps=None) -> dict:
    """latent_geometry for a latent tensor shape as ComfyUI holds it ([B, C, H, W] or [B, C, T, H, W])."""
    sp = spec.family(family)
    sh = spec.checked_latent_shape(latent_shape)
    b, ch = sh[0], sh[1]
    lat_t = sh[2] if len(sh) == 5 else 1
    h, w = sh[-2], sh[-1]
    p = sp["p"]
    txt = sp["txt"] if text_tokens is None or not sp["txt"] else int(text_tokens)
    grid = math.ceil(h / p) * math.ceil(w / p)
    return _with_audio(family, {"shape": sh, "frames": lat_t, "h": h, "w": w, "image_tokens": lat_t * grid, "text_tokens": txt,
                                "tokens": lat_t * grid + txt, "elements": b * ch * lat_t * h * w}, audio_fps)


def sample_parts(family, arch, lat, b_eff, bc, batch=None):
    """(activations, naive-attention extra, how) of one model call on b_eff samples of the latent `lat`
    (latent_geometry), compute dtype bc bytes. Without the manual-cast copy (weights.largest_cast)."""
    sp = spec.family(family)
    batch = batch or lat["shape"][0]
    d, heads = arch.get("hidden") or 0, arch.get("heads") or max(1, (arch.get("hidden") or 0) // 128)
    if arch.get("block") == "unet" or family in ("sd1", "sd2", "sdxl"):
        mc = arch.get("model_channels", 320)
        n0 = lat["h"] * lat["w"]
        act = int(unet_units(arch, family) * b_eff * n0 * mc * bc)
        full = arch.get("attention_at_full", family != "sdxl")
        na_tok = n0 if full else n0 // 4
        na_heads = (mc // 64 if family == "sd2" else 8) if full else 2 * mc // 64
        naive = int(b_eff * na_heads * na_tok * na_tok * 2 * bc)
        how = f"U-Net, {unet_units(arch, family)} x {mc} channels per latent pixel"
    else:
        n = lat["tokens"]
        units = block_units(arch)
        if arch.get("block") == "av":  # LTX-2: both streams, each at its own width, at the block's larger peak (av_bytes)
            act, units = av_bytes(arch, lat, sp["ctx"], b_eff, bc), av_units(arch)[0]
        elif family == H3D.FAMILY:  # read from ComfyUI's code (hunyuan3d.sample_bytes); neither variant has rotary tables
            act, units = H3D.sample_bytes(arch, lat, b_eff, bc), H3D.sample_units(arch)
        elif arch.get("block") == "dual":  # the image MLP's peak: text tokens hold only their stream (DUAL_TEXT)
            act = int(units * b_eff * lat["image_tokens"] * d * bc + DUAL_TEXT * b_eff * (n - lat["image_tokens"]) * d * bc)
        else:
            act = int(units * b_eff * n * d * bc)
        head_dim = d // heads if heads else 128
        if arch.get("block") != "av" and family != H3D.FAMILY:  # LTX-2's tables are in av_units (model dtype)
            act += int(b_eff * n * head_dim * 8)  # rotary tables (fp32)
        naive = int(b_eff * heads * n * n * 2 * bc + b_eff * heads * n * sp["ctx"] * 2 * bc)
        if family == H3D.FAMILY and H3D.naive_extra(arch, lat, b_eff, bc) is not None:  # 2.1: its own sequence's scores
            naive = H3D.naive_extra(arch, lat, b_eff, bc)
        how = f"{units:.1f} x hidden {d} per token, {n} tokens" if family != H3D.FAMILY else H3D.sample_how(arch, lat)
    act += sampler_state_bytes(lat, bc, b_eff, batch)  # sampler state, model in/out
    return act, naive, how


def sampler_state_bytes(lat, bc, b_eff, batch) -> int:
    """The sampler's fp32 state and the model's input/output latents (outside the blocks)."""
    return lat["elements"] * 4 * 6 + lat["elements"] * bc * 4 // max(1, batch) * b_eff


# bitsandbytes LLM.int8 (load_in_8bit, MatMul8bitLt.forward): each nn.Linear quantizes its input to int8 (1 byte per
# input feature), multiplies it into an int32 accumulator (4 bytes per output feature), dequantizes that to fp16 (2)
# and then casts to the compute dtype; no 16-bit copy of the weight is made. At a block's widest linear, with its
# input and modulated input alive in the compute dtype, one token holds 2*d*bc + d + (4 + 2) * d_out bytes. Read from
# bitsandbytes' code (autograd/_functions.py, backends int8_scaled_mm), not fitted.
INT8_IN, INT8_ACC, INT8_OUT = 1, 4, 2


def int8_widest_linear(arch) -> int:
    """Output features of a transformer block's widest linear: FLUX-style single blocks fuse qkv and the MLP (3d + f,
    or 3d + 2f gated); elsewhere the MLP's up projection (2f when its SwiGLU is fused) or a fused qkv (3d)."""
    d = arch.get("hidden") or 0
    f = arch.get("ffn") or 4 * d
    g = 2 if arch.get("gated_mlp") else 1
    if arch.get("block") == "flux":
        return 3 * d + g * f
    return max(g * f, 3 * d)


def int8_matmul_peak(family, arch, lat, b_eff, bc, batch=None) -> int:
    """Sampling activations at the widest linear under bitsandbytes LLM.int8 (0 for U-Nets: not modelled)."""
    if arch.get("block") == "unet" or family in ("sd1", "sd2", "sdxl"):
        return 0
    d = arch.get("hidden") or 0
    per = 2 * d * bc + INT8_IN * d + (INT8_ACC + INT8_OUT) * int8_widest_linear(arch)
    return int(b_eff * lat["tokens"] * per) + sampler_state_bytes(lat, bc, b_eff, batch or lat["shape"][0])


def naive_total(act, naive, arch=None):
    """Activations with the n^2 attention scores held whole (attention_basic, or math SDPA). A FLUX-style
    single-stream block peaks at its attention call (block_units: x, linear1's output, normed q/k), so all of its
    activations are alive beside the scores; elsewhere part of them is (0.6)."""
    if (arch or {}).get("block") in ("flux", H3D.BLOCK_21):  # 2.1: naive is what its peak holds beyond act (naive_extra)
        return act + naive
    return max(act, int(0.6 * act) + naive)


def default_arch(family, arch=None) -> dict:
    out = dict(spec.DEFAULT_ARCH.get(family, {}))
    out.update({k: v for k, v in (arch or {}).items() if v})
    if not out.get("hidden"):
        out.update(_TYPICAL.get(family, {"hidden": 3072, "heads": 24, "ffn": 12288, "block": "flux"}))
    return out


# the arch of each family's standard file, for callers that know only the family id
_TYPICAL = {
    "sd1": {"hidden": 320, "model_channels": 320, "block": "unet", "context_dim": 768, "attention_at_full": True},
    "sd2": {"hidden": 320, "model_channels": 320, "block": "unet", "context_dim": 1024, "attention_at_full": True},
    "sdxl": {"hidden": 320, "model_channels": 320, "block": "unet", "context_dim": 2048, "attention_at_full": False},
    "sd3": {"hidden": 1536, "heads": 24, "ffn": 6144, "block": "mmdit", "dual_attention": True},
    "flux1": {"hidden": 3072, "heads": 24, "ffn": 12288, "block": "flux"},
    "flux2": {"hidden": 6144, "heads": 48, "ffn": 18432, "block": "flux", "gated_mlp": True},
    "chroma": {"hidden": 3072, "heads": 24, "ffn": 12288, "block": "flux"},
    "qwen-image": {"hidden": 3072, "heads": 24, "ffn": 12288, "block": "dual"},
    "lumina2": {"hidden": 2304, "heads": 24, "ffn": 6144, "block": "nextdit"},
    "z-image": {"hidden": 3840, "heads": 30, "ffn": 10240, "block": "nextdit"},
    "wan21": {"hidden": 1536, "heads": 12, "ffn": 8960, "block": "cross"},
    "wan22": {"hidden": 3072, "heads": 24, "ffn": 14336, "block": "cross"},
    "ltxv": {"hidden": 2048, "heads": 32, "ffn": 8192, "block": "cross", "cross_attention_dim": 2048},
    "cosmos": {"hidden": 4096, "heads": 32, "ffn": 16384, "block": "cross"},
    "pixart": {"hidden": 1152, "heads": 16, "ffn": 4608, "block": "cross"},
    "auraflow": {"hidden": 3072, "heads": 24, "ffn": 8192, "block": "double"},
    "hunyuan-dit": {"hidden": 1408, "heads": 16, "ffn": 6144, "block": "cross"},
    "hunyuan-image": {"hidden": 3584, "heads": 28, "ffn": 14336, "block": "flux"},
}


def sample_activation_bytes(family: str, latent_shape, dtype="bf16", cond_batch: int = 1, arch=None,
                            attention: str = "flash", text_tokens=None) -> int:
    """Activation bytes of ONE sampling step (one model call) of ComfyUI's model for `family` on a latent of
    `latent_shape` ([B, C, H, W] or [B, C, T, H, W], as ComfyUI holds it), with `cond_batch` conditionings
    batched into the call (2: cond and uncond together, as calc_cond_batch does when memory allows; 1: one at
    a time). dtype: the compute dtype ("bf16", "fp16", "fp32" or bytes). arch: detect_family()["arch"] of the
    real file (default: the family's standard file). attention: "flash" (SDPA/xformers/sage: O(n)) or "math"
    (the n^2 scores held whole). Weights, the allocator margin and fixed costs are NOT included. Stable API."""
    if cond_batch < 1:
        raise ValueError("cond_batch must be >= 1")
    lat = geometry_from_shape(family, latent_shape, text_tokens)
    b = lat["shape"][0]
    act, naive, _ = sample_parts(family, default_arch(family, arch), lat, b * int(cond_batch), dtype_bytes(dtype), b)
    a = default_arch(family, arch)
    return naive_total(act, naive, a) if attention == "math" else act


# Text encoders: ComfyUI runs them in fp32 over their stored weights (manual cast): one fp32 copy of the layer
# weight in use, fp32 hidden-sized tensors per token, and per head the n^2 scores, their softmax and (T5) the
# position bias. Fitted on the FIT rows flux1 text (T5-XXL at 256 tokens) and wan21 text (UMT5-XXL at 512).
# diffusers' LTX-Video attention applies RoPE in fp32 (apply_rotary_emb: x.float() * cos + x_rotated.float() * sin,
# with cos/sin fp32 tables of [tokens, hidden] built once per forward); ComfyUI casts its tables to the model dtype
# (lightricks/model.py _precompute_freqs_cis(out_dtype=x_dtype)), so only runner "diffusers" pays it. Bytes per
# token x hidden at the peak, read from the code (not fitted): q, k, v, the block input and its norm in bf16
# (5 x 2), the cos and sin tables (2 x 4), and the live fp32 temporaries x.float()*cos, x_rot.float()*sin, their
# sum (3 x 4) plus x_rot in bf16 (2).
DIFFUSERS_FP32_ROPE = {"ltxv": 5 * 2 + 2 * 4 + 3 * 4 + 2}


# runner "wan": Wan's reference DiT code (wan/modules/model.py, which DiffSynth-Studio's Wan pipeline copied up to
# its 2025 rewrite, e.g. diffsynth/models/wan_video_dit.py at 0219e8d2) keeps the residual stream in fp32 (x + y * e
# under autocast(float32)) and applies RoPE through float64 complex numbers (rope_apply: x.to(float64) ->
# view_as_complex -> x * freqs -> view_as_real, cat, stack, then .float()). ComfyUI's port keeps the stream in the
# model dtype and rotates in bf16/fp32 real arithmetic. Bytes per token x hidden at the self-attention peak, read
# from the code (not fitted): the fp32 block input (4) and the fp32 modulated input held as the call's argument (4),
# q, k, v in bf16 (3 x 2), rope(q) already returned in fp32 (4), and inside rope(k) the float64 copy and the
# complex128 product, or later the product and its cat, or the cat and its stack (2 x 8).
WAN_REFERENCE_DIT = 4 + 4 + 3 * 2 + 4 + 2 * 8
# Wan 2.2's reference DiT (Wan-Video/Wan2.2 wan/modules/model.py; zysno1/Wan2.2-Enhanced runs it unchanged) embeds one
# timestep per token (WanModel.forward: t.expand(bt, seq_len) when t has one per sample; TI2V passes them per token),
# so its modulation is per token and in fp32 (autocast float32): e0 = time_projection(e) [B, L, 6, C] held through every
# block as their argument (6 x 4), e [B, L, C] held for the head (4), and inside each block
# (self.modulation + e0).chunk(6) [B, L, 6, C] (6 x 4). Bytes per token x hidden beside the self-attention peak, read
# from the code (not fitted). Wan 2.1's code embeds one timestep per sample ([B, 6, C]): nothing per token.
WAN22_REFERENCE_MODULATION = 6 * 4 + 4 + 6 * 4


def wan_reference_peak(family, arch, lat, b_eff) -> int:
    """The self-attention peak of Wan's reference DiT (runner "wan"); 0 for families other than Wan. Wan 2.2's
    models (TI2V-5B, and the A14B experts, which keep Wan 2.1's latent: arch timestep "token", families.WAN22_NAME)
    run through Wan2.2's WanModel and add its per-token modulation."""
    if family not in ("wan21", "wan22"):
        return 0
    per_token = family == "wan22" or (arch or {}).get("timestep") == "token"
    per = WAN_REFERENCE_DIT + (WAN22_REFERENCE_MODULATION if per_token else 0)
    return int(per * b_eff * lat["image_tokens"] * (arch.get("hidden") or 0))


# A dense boolean self-attention mask (policy attention_mask "dense"): diffusers 0.32.0 and 0.32.1's
# HunyuanVideoTransformer3DModel (and main 2024-12-16..2025-01-07, until diffusers#10482 made it [B, N]) builds
# torch.zeros(batch, N, N, dtype=bool) over the whole sequence (N = image + text tokens) and passes it to every block's
# F.scaled_dot_product_attention; torch 2.5's SDPA (aten scaled_dot_product_attention: convert_boolean_attn_mask, before
# the backend runs) turns it into a zeros_like mask of the query dtype at each call. While the kernel runs the
# block holds the bool mask (1 byte) and its converted copy (bc bytes) per query-key pair beside its other tensors.
# Read from the code, not fitted.
DENSE_MASK_BOOL = 1


def dense_mask_bytes(lat, b_eff, bc) -> int:
    """The bool [B, N, N] attention mask and SDPA's copy of it in the compute dtype (bc bytes), for b_eff samples."""
    n = lat["tokens"]
    return int(b_eff * n * n * (DENSE_MASK_BOOL + bc))


def diffusers_rope_peak(family, arch, lat, b_eff) -> int:
    """The attention-side peak of a diffusers transformer whose RoPE runs in fp32 (0 for other families)."""
    per = DIFFUSERS_FP32_ROPE.get(family)
    if not per:
        return 0
    return int(per * b_eff * lat["image_tokens"] * (arch.get("hidden") or 0))


TE_TOKEN_UNITS = 2.38
TE_SCORE_UNITS = 3.03


def te_dims(table: dict):
    """(hidden, heads, largest non-embedding 2-D weight in elements) of a text encoder's table."""
    d, largest, heads = 0, 0, 0
    for name, (dt, shape) in table.items():
        if len(shape) != 2:
            continue
        n = shape[0] * shape[1]
        # embedding tables are not multiplied; a projection is a Linear whatever its name: LTX-2's
        # text_embedding_projection (text_encoders/lt.py:70, 3840 x 188160) runs on the fp32 hidden states
        # (sd1_clip.py:273 .float()) under manual_cast (sd1_clip.py:117), so its weight is cast to fp32 (rev58)
        if shape[0] > 30000 or (any(w in name for w in ("embed", "shared", "position", "lm_head"))
                                and not name.endswith("_projection.weight")):
            if shape[0] > 30000:
                d = max(d, min(shape))
            if name.endswith("relative_attention_bias.weight"):
                heads = max(heads, shape[1])
            continue
        largest = max(largest, n)
    d = d or 1024
    return d, heads or max(1, d // 64), largest


def te_tokens(family: str, kind: str, text_tokens=None) -> int:
    """Tokens one prompt becomes for this encoder in ComfyUI (its tokenizer's min_length; --text-tokens wins)."""
    if kind in spec.IMAGE_ENCODER_TOKENS:  # an image encoder's tokens are the image's, whatever the prompt's
        return spec.IMAGE_ENCODER_TOKENS[kind]
    if text_tokens:
        return int(text_tokens)
    return spec.TE_TOKENS_FAMILY.get(family, {}).get(kind) or spec.TE_TOKENS.get(kind, 128)


def te_activation(kind: str, table: dict, tokens=None) -> int:
    """Activation bytes of one prompt through one text encoder."""
    if kind in H3D.DINOV2:  # Hunyuan3D's DINOv2 image encoder: read from ComfyUI's code (hunyuan3d.dinov2_encode_bytes)
        return H3D.dinov2_encode_bytes(kind, table, tokens or spec.IMAGE_ENCODER_TOKENS[kind])
    d, heads, largest = te_dims(table)
    n = tokens or spec.TE_TOKENS.get(kind, 128)
    return int(largest * 4 + n * d * 4 * TE_TOKEN_UNITS + n * n * heads * 4 * TE_SCORE_UNITS)


def comfy_factor(family, arch):
    f = spec.family(family)["factor"]
    return f(arch) if callable(f) else f


def comfy_memory_required(family, arch, lat_shape, b_eff, dtype_size=2, flash=True, audio_fps=None) -> int:
    """ComfyUI's BaseModel.memory_required for this latent (what its loader plans with), in bytes. LTX-2's sampler hands
    it the packed latent [B, 1, video + audio elements] (utils.py:1182), so its area counts channels and audio."""
    area = b_eff * math.prod(lat_shape[2:])
    if spec.family(family).get("audio"):
        area = b_eff * (geometry_from_shape(family, lat_shape, audio_fps=audio_fps)["elements"] // lat_shape[0])
    factor = comfy_factor(family, arch)
    mib = area * dtype_size * 0.01 * factor if flash else area * 0.15 * factor
    return int(mib * MiB)
