"""LLM serving memory: weights + KV cache + named runtime terms for vLLM, llama.cpp and Ollama, the largest
context that fits a VRAM budget, and the exact flags/env that make it fit.

KV cache = 2 (K,V) x attention layers x KV heads x head dim x tokens x sequences x bytes per element, with
  - MLA (DeepSeek): one latent of kv_lora_rank + qk_rope_head_dim per token and layer instead of K and V;
  - sliding-window layers holding at most the window (plus the runtime's batch slack);
  - hybrid models counting only attention layers (mamba / linear-attention layers keep a fixed state);
  - quantized caches with their block overheads: q8_0 = 34 bytes per 32 elements, q4_0 = 18 per 32.

Public API (other modules code against these):
  describe(config=None, gguf=None, model=None) -> LLMSpec
  plan(spec, runtime="vllm", ctx=None, parallel=1, kv_dtype=None, weights_dtype=None, vram=None, **knobs) -> dict
      ctx is per sequence, parallel the sequences served at once (vLLM --max-num-seqs, llama.cpp -np with
      -c = ctx x np, OLLAMA_NUM_PARALLEL), vram in bytes (None: sizes only). knobs: gpu_memory_utilization,
      flash_attn, ubatch, ngl, max_num_batched_tokens, enforce_eager, swa_full.
      keys: weights, weights_how, kv_per_token, kv_total, kv_detail, overhead (named terms), overhead_total, total,
      budget, fits (the asked ctx x parallel fits, with the flags), fits_as_requested (without changes), max_ctx
      (largest per-sequence context with the flags' settings, multiple of 256), max_ctx_by_kv_dtype, chosen,
      flags [{kind, name, value, text, reason}], command, notes; llama.cpp/Ollama add host_weights, gpu_layers_used
  vllm_kv_tokens(spec, available_bytes, kv="f16") -> int   # vLLM's "GPU KV cache size: N tokens"
  suggest_flags_from_log(numbers: dict, runtime: str) -> list[dict]
      For triage's kv-cache guide. `numbers` holds what an OOM log states (bytes for sizes, ints for counts);
      any subset of: model (name, resolved against the built-ins), max_model_len, estimated_max_len, kv_tokens,
      kv_needed, kv_available, gpu_memory_utilization, total, free, kv_cache_dtype, max_num_seqs (vLLM);
      n_ctx (llama.cpp's total cells), num_ctx (Ollama, per request), kv_buffer, alloc (the failed allocation),
      free, n_parallel / num_parallel, n_gpu_layers, n_layers, type_k, buffer ("compute" for a compute-buffer
      failure) (llama.cpp / Ollama). memory/oom_parse.py's names are accepted too (max_model_len_tokens,
      estimated_max_len_tokens, kv_max_tokens, gpu_memory_utilization_ratio, requested, ggml_n_ctx, ...).
      Returns [{"kind": "flag"|"env"|"param", "name", "value", "text", "reason"}] in order of preference, e.g.
      {"kind": "flag", "name": "--max-model-len", "value": "121856", "text": "--max-model-len 121856",
       "reason": "the log's estimated maximum (122080) rounded down to 256"}; [] when the numbers say nothing.
  run_cli(args) -> int    # `gpu-garden kv`
"""
import json
import math

from . import spec as llm_spec
from ..errors import UserError
from .spec import FULL, SLIDING, LLMSpec
from ..units import GiB, MiB, fmt_bytes

RUNTIMES = ("vllm", "llama.cpp", "ollama")

# bytes per cache element; ggml block types carry a per-block scale (q8_0: 32 int8 + fp16 scale = 34 bytes)
KV_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1,
            "q8_0": 34 / 32, "q5_1": 24 / 32, "q5_0": 22 / 32, "q4_1": 20 / 32, "q4_0": 18 / 32, "iq4_nl": 18 / 32}
_KV_ALIASES = {"fp16": "f16", "float16": "f16", "half": "f16", "bfloat16": "bf16", "fp32": "f32", "float32": "f32",
               "float8": "fp8", "fp8_e4m3fn": "fp8_e4m3", "q8": "q8_0", "q4": "q4_0", "int8": "q8_0"}
RUNTIME_KV = {
    "vllm": ("f16", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2"),
    "llama.cpp": ("f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"),
    "ollama": ("f16", "q8_0", "q4_0"),
}
KV_LADDER = {"vllm": ("f16", "fp8"), "llama.cpp": ("f16", "q8_0", "q4_0"), "ollama": ("f16", "q8_0", "q4_0")}

# bits per weight. Whole-file rates for GGUF types are llama.cpp's published sizes for Llama-3-8B
# (tools/quantize QUANT_OPTIONS, e.g. Q4_K_M 4.58 GiB for 8.03 B params = 4.90 bpw); exact sizes come from the file.
GGUF_BPW = {"F32": 32, "F16": 16, "BF16": 16, "Q8_0": 8.51, "Q6_K": 6.57, "Q5_K_M": 5.70, "Q5_K_S": 5.57,
            "Q5_1": 6.04, "Q5_0": 5.57, "Q4_K_M": 4.90, "Q4_K_S": 4.67, "Q4_1": 5.11, "Q4_0": 4.64,
            "IQ4_NL": 4.68, "IQ4_XS": 4.46, "Q3_K_L": 4.31, "Q3_K_M": 4.00, "Q3_K_S": 3.65, "IQ3_M": 3.90,
            "IQ3_S": 3.70, "IQ3_XS": 3.50, "IQ3_XXS": 3.30, "Q2_K": 3.17, "Q2_K_S": 2.97, "IQ2_M": 2.95,
            "IQ2_S": 2.75, "IQ2_XS": 2.56, "IQ2_XXS": 2.31, "IQ1_M": 2.00, "IQ1_S": 1.81, "MXFP4": 4.25}
DENSE_BITS = {"fp32": 32, "f32": 32, "bf16": 16, "fp16": 16, "f16": 16}
# methods that quantize only the decoder-block matmuls; embeddings, lm_head and norms stay 16-bit.
# AWQ/GPTQ 4-bit: 4 bits + an fp16 scale and a 4-bit zero per group of 128 = 4.16 bits.
LINEAR_BITS = {"fp8": 8.0, "int8": 8.0, "w8a8": 8.0, "awq": 4 + 20 / 128, "gptq": 4 + 20 / 128,
               "int4": 4 + 20 / 128, "bnb-4bit": 4.13, "nf4": 4.13, "mxfp4": 4.25}

# Named runtime terms (bytes). Sources in comments; all are estimates the log of a real start replaces.
CUDA_CONTEXT = {"vllm": 512 * MiB,     # PyTorch context + kernels, outside vLLM's gpu_memory_utilization share
                "llama.cpp": 384 * MiB,  # ggml-cuda context + cuBLAS handles
                "ollama": 457 * MiB}     # Ollama's own per-GPU reserve, ml.DeviceInfo.MinimumMemory (CUDA/ROCm)
VLLM_NON_TORCH = 384 * MiB    # cuBLAS/NCCL workspaces: "non_torch_memory" 0.20-0.35 GiB on single-GPU logs
VLLM_CUDA_GRAPHS = 512 * MiB  # "Graph capturing finished ... took 0.3-1 GiB"; 0 with --enforce-eager
LLAMACPP_MARGIN = 256 * MiB  # left free for fragmentation and the driver (llama.cpp's own --fit aims at 1 GiB free)
VLLM_DEFAULT_UTIL = 0.90
VLLM_MAX_UTIL = 0.95
BLOCK = 16                    # vLLM KV block size (tokens)
# llama.cpp architectures whose GGUF carries a sliding window it honours (llama_kv_cache_iswa); Mistral-7B-v0.1
# converts to plain `llama`, so llama.cpp and Ollama give its layers a full cache
LLAMACPP_SWA_ARCHS = ("gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "cohere2", "llama4", "gpt_oss",
                      "gpt-oss", "exaone4", "starcoder2")
CTX_STEP = 256                # contexts we suggest are multiples of this (llama.cpp pads its cache to 256)
MIN_CTX = 256


def norm_kv(kv: str | None, runtime: str, spec: LLMSpec | None = None) -> str:
    if kv is None or str(kv).lower() in ("auto", "default"):
        return "f16"
    k = _KV_ALIASES.get(str(kv).lower(), str(kv).lower())
    if k not in KV_BYTES:
        raise UserError(f"unknown KV cache type {kv!r} (one of: {', '.join(KV_BYTES)})")
    if k not in RUNTIME_KV[runtime]:
        alt = "fp8" if runtime == "vllm" else "q8_0"
        raise UserError(f"{runtime} has no {k} KV cache (it supports {', '.join(RUNTIME_KV[runtime])}); try {alt}")
    return k


def describe(config: str | None = None, gguf: str | None = None, model: str | None = None) -> LLMSpec:
    if config:
        return llm_spec.load_config(config)
    if gguf:
        return llm_spec.load_gguf(gguf)
    if model:
        return llm_spec.load_builtin(model)
    raise UserError("give one of --config FILE, --gguf FILE or --model NAME")


# ---------------------------------------------------------------- weights

def weights(spec: LLMSpec, weights_dtype: str | None = None) -> tuple:
    """(bytes, how) - exact from the file unless a different dtype is asked for."""
    if weights_dtype is None and spec.weights_bytes:
        return spec.weights_bytes, f"exact, {spec.weights_source}"
    dt = weights_dtype or spec.quant or spec.dtype
    if spec.params is None:
        raise UserError(f"{spec.name}: parameter count unknown, cannot size {dt} weights")
    key = str(dt)
    up, low = key.upper(), key.lower()
    if up in GGUF_BPW and low not in DENSE_BITS:
        return int(spec.params * GGUF_BPW[up] / 8), f"{spec.params / 1e9:.2f} B params x {GGUF_BPW[up]} bits ({up}, whole-file rate)"
    if low in DENSE_BITS:
        return int(spec.params * DENSE_BITS[low] / 8), f"{spec.params / 1e9:.2f} B params x {DENSE_BITS[low]} bits"
    if low in LINEAR_BITS:
        lin = spec.linear_params or spec.params
        b = lin * LINEAR_BITS[low] / 8 + (spec.params - lin) * 2
        return int(b), f"{lin / 1e9:.2f} B matmul params x {LINEAR_BITS[low]:.2f} bits ({low}) + {(spec.params - lin) / 1e9:.2f} B at 16 bits"
    raise UserError(f"unknown weights dtype {dt!r} (fp32, bf16, fp16, fp8, int8, awq, gptq or a GGUF type such as Q4_K_M)")


def split_weights(spec: LLMSpec, weights_total: int) -> tuple:
    """(token embedding, output head, repeating blocks) in bytes. llama.cpp keeps the embedding in host RAM and
    puts the output head (a copy of the embedding when tied) on the GPU with the last layer."""
    if spec.embed_bytes is not None and spec.weights_bytes == weights_total:  # exact, from the GGUF tensor table
        emb, out = spec.embed_bytes, spec.output_bytes or 0
        return emb, out, max(weights_total - emb - (0 if spec.tied else out), 0)
    per_param = weights_total / max(spec.params or 1, 1)
    emb = int(spec.vocab * spec.hidden * per_param)
    return emb, emb, max(weights_total - emb * (1 if spec.tied else 2), 0)


# ---------------------------------------------------------------- KV cache

def kv_cache(spec: LLMSpec, ctx: int, parallel: int, kv: str, runtime: str, *, ubatch: int = 512,
             max_batched: int = 2048, swa_full: bool = False) -> dict:
    """Bytes the runtime allocates for `parallel` sequences of `ctx` tokens."""
    bpe = KV_BYTES[kv]
    by_kind = spec.kv_elems_by_kind()
    win = spec.sliding_window or ctx
    if runtime == "vllm":
        per_seq = math.ceil(ctx / BLOCK) * BLOCK
        swa_seq = min(per_seq, math.ceil((win - 1 + max_batched) / BLOCK) * BLOCK + BLOCK)
    else:
        # llama.cpp: -c cells split into one stream per -np slot, padded to 256; a sliding-window layer keeps
        # n_swa + n_ubatch cells per slot (llama_kv_cache_iswa) unless --swa-full or the arch has no SWA there
        per_seq = _pad(ctx, CTX_STEP)
        honoured = spec.arch in LLAMACPP_SWA_ARCHS and not swa_full
        swa_seq = min(per_seq, _pad(win + ubatch, CTX_STEP)) if honoured else per_seq
    full = by_kind[FULL] * per_seq * parallel * bpe
    swa = by_kind[SLIDING] * swa_seq * parallel * bpe
    state = spec.recurrent_state_per_seq * parallel
    return {"per_token": int((by_kind[FULL] + by_kind[SLIDING]) * bpe), "full_layers": int(full),
            "sliding_layers": int(swa), "recurrent_state": int(state), "total": int(full + swa + state),
            "cells": per_seq * parallel}


def vllm_kv_tokens(spec: LLMSpec, available: float, kv: str = "f16") -> int:
    """What vLLM prints as "GPU KV cache size: N tokens" for `available` bytes of KV memory
    (whole blocks of 16 tokens; exact for models whose layers all use full attention)."""
    per_block = BLOCK * kv_cache(spec, 1, 1, kv, "vllm")["per_token"]
    return int(available // per_block) * BLOCK


def _pad(n: int, step: int) -> int:
    return -(-n // step) * step


# ---------------------------------------------------------------- runtime terms

def vllm_activation(spec: LLMSpec, max_batched: int, max_seqs: int) -> int:
    """vLLM's profile run peak: one forward of max_num_batched_tokens plus the sampler on max_num_seqs rows.
    Calibrated on vLLM's own "PyTorch activation peak memory" lines (Llama-3-8B: 1.26 GiB at 8192 tokens,
    vllm-project/vllm#10511; Llama-3.1-8B: 2.07 GiB at 20000 tokens, vllm-project/vllm#10517)."""
    d = spec.hidden
    if spec.n_experts:  # fused MoE keeps top_k copies of the gate/up (2N), act (N) and down outputs per token
        per_token = (spec.n_experts_per_tok * (3 * spec.moe_intermediate + d) + 5 * d) * 2
    else:
        per_token = (2 * spec.intermediate + 5 * d) * 2
    return int(max_batched * per_token + max_seqs * spec.vocab * 4 * 3)


def llamacpp_compute(spec: LLMSpec, cells: int, ubatch: int, flash: bool) -> int:
    """ggml compute buffer for a full offload: the larger of the attention scores (absent with flash attention)
    and the output logits, 4 bytes each (Ollama's GraphSize for llama-family graphs)."""
    d, H, V = spec.hidden, spec.n_heads, spec.vocab
    logits = 4 * ubatch * (d + V)
    ffn = 4 * ubatch * (4 * d + max(spec.intermediate, spec.moe_intermediate * max(spec.n_experts_per_tok, 1)))
    if flash:
        return int(max(logits, ffn))
    return int(max(4 * ubatch * (1 + 4 * d + cells * (1 + H)), logits))


# ---------------------------------------------------------------- one evaluation

def _evaluate(spec, runtime, ctx, parallel, kv, w_bytes, vram, s) -> dict:
    """s: runtime settings (util, flash, ubatch, ngl, max_batched, enforce_eager, swa_full)."""
    kvd = kv_cache(spec, ctx, parallel, kv, runtime, ubatch=s["ubatch"], max_batched=s["max_batched"], swa_full=s["swa_full"])
    over = {}
    if runtime == "vllm":
        over["cuda_context"] = CUDA_CONTEXT["vllm"]
        over["activation_profile"] = vllm_activation(spec, s["max_batched"], parallel)  # --max-num-seqs = parallel
        over["non_torch"] = VLLM_NON_TORCH
        over["cuda_graphs"] = 0 if s["enforce_eager"] else VLLM_CUDA_GRAPHS
        gpu_w, gpu_kv = w_bytes, kvd["total"]
        inside = gpu_w + gpu_kv + over["activation_profile"] + over["non_torch"] + over["cuda_graphs"]
        total = inside + over["cuda_context"]
        util_needed = inside / vram if vram else None
        fits = None
        if vram:
            fits = inside <= s["util"] * vram and over["cuda_context"] <= (1 - s["util"]) * vram
        return {"kv": kvd, "overhead": over, "total": int(total), "gpu_weights": gpu_w, "fits": fits,
                "util_needed": util_needed, "budget": int(s["util"] * vram) if vram else None}
    L = spec.n_layers
    ngl = L + 1 if s["ngl"] is None else s["ngl"]
    emb, out, blocks = split_weights(spec, w_bytes)
    on_gpu_layers = min(ngl, L)
    gpu_w = blocks * on_gpu_layers / L + (out if ngl > L else 0)
    gpu_kv = kvd["total"] * on_gpu_layers / L
    over["cuda_context"] = CUDA_CONTEXT[runtime]
    over["compute_buffer"] = llamacpp_compute(spec, kvd["cells"], s["ubatch"], s["flash"]) if ngl > 0 else 0
    if runtime == "llama.cpp" and vram:
        over["margin"] = max(LLAMACPP_MARGIN, int(0.02 * vram))
    total = gpu_w + gpu_kv + sum(over.values())
    fits = total <= vram if vram else None
    return {"kv": kvd, "overhead": over, "total": int(total), "gpu_weights": int(gpu_w), "fits": fits,
            "host_weights": int(emb + blocks * (L - on_gpu_layers) / L + (0 if spec.tied or ngl > L else out)), "ngl": ngl, "budget": int(vram) if vram else None}


def _settings(runtime, vram, **knobs):
    big = (vram or 0) >= 70 * GiB
    s = {"util": knobs.get("gpu_memory_utilization") or VLLM_DEFAULT_UTIL, "flash": knobs.get("flash_attn"),
         "ubatch": knobs.get("ubatch") or 512, "ngl": knobs.get("ngl"),
         "max_batched": knobs.get("max_num_batched_tokens") or (8192 if big else 2048),
         "enforce_eager": bool(knobs.get("enforce_eager")), "swa_full": bool(knobs.get("swa_full"))}
    if s["flash"] is None:
        s["flash"] = runtime == "llama.cpp"  # llama.cpp's -fa auto turns it on for CUDA; Ollama needs the env var
    return s


def _max_ctx(spec, runtime, parallel, kv, w_bytes, vram, s, cap) -> int:
    """Largest multiple of CTX_STEP (<= cap) that fits, 0 if not even MIN_CTX does."""
    def ok(c):
        return _evaluate(spec, runtime, c, parallel, kv, w_bytes, vram, s)["fits"]
    if not ok(MIN_CTX):
        return 0
    lo, hi = MIN_CTX // CTX_STEP, max(cap // CTX_STEP, 1)
    if ok(hi * CTX_STEP):
        return hi * CTX_STEP
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid * CTX_STEP):
            lo = mid
        else:
            hi = mid
    return lo * CTX_STEP


def _vllm_util_for(ev, vram) -> float | None:
    """Smallest gpu_memory_utilization (2 decimals) that holds this evaluation, None if none can."""
    need = math.ceil(ev["util_needed"] * 100 - 1e-9) / 100
    ceiling = min(VLLM_MAX_UTIL, math.floor((1 - ev["overhead"]["cuda_context"] / vram) * 100) / 100)
    return need if need <= ceiling else None


# ---------------------------------------------------------------- the answer

def plan(spec: LLMSpec, runtime: str = "vllm", ctx: int | None = None, parallel: int = 1, kv_dtype: str | None = None,
         weights_dtype: str | None = None, vram: float | None = None, **knobs) -> dict:
    """vram in bytes (None: no verdict). knobs: gpu_memory_utilization, flash_attn, ubatch, ngl,
    max_num_batched_tokens, enforce_eager, swa_full."""
    if runtime not in RUNTIMES:
        raise UserError(f"unknown runtime {runtime!r} (one of: {', '.join(RUNTIMES)})")
    if parallel is None or parallel < 1 or parallel > 65536:
        raise UserError(f"--parallel must be 1..65536, got {parallel}")
    model_max = spec.max_ctx or 131072
    if ctx is None:  # what the runtime uses by default: vLLM the model's limit, llama-server and Ollama 4096
        ctx = (spec.max_ctx or 8192) if runtime == "vllm" else 4096
    if ctx < 1 or ctx > 1 << 24:
        raise UserError(f"--ctx must be 1..{1 << 24}, got {ctx}")
    if vram is not None and not (256 * MiB <= vram <= 1 << 50):
        raise UserError(f"--vram {vram / GiB:g} GiB is not a plausible GPU size")
    kv = norm_kv(kv_dtype, runtime, spec)
    w_bytes, w_how = weights(spec, weights_dtype)
    s = _settings(runtime, vram, **knobs)
    notes = list(spec.notes)
    if runtime != "vllm" and kv != "f16" and KV_BYTES[kv] < 2 and not s["flash"]:
        notes.append(f"a quantized V cache needs flash attention in {runtime}: flash attention switched on")
        s["flash"] = True
    if ctx > model_max and spec.max_ctx:
        notes.append(f"{ctx} tokens is beyond the model's trained context ({spec.max_ctx})")
    if spec.mla and runtime != "vllm":
        notes.append("MLA cache counted as llama.cpp >= 2026-01 stores it (latent only, ggml-org/llama.cpp#19067); older builds also keep a V cache of kv_lora_rank per token")
    if spec.layer_kinds.count(SLIDING):
        if runtime != "vllm" and spec.arch not in LLAMACPP_SWA_ARCHS:
            notes.append(f"the {spec.sliding_window}-token sliding window is not kept by {runtime} for {spec.arch}: full cache counted")
        else:
            notes.append(f"{spec.layer_kinds.count(SLIDING)} of {spec.n_layers} layers use a {spec.sliding_window}-token sliding window")
    if spec.attn_layers < spec.n_layers:
        notes.append(f"hybrid: only {spec.attn_layers} of {spec.n_layers} layers keep a KV cache")

    ev = _evaluate(spec, runtime, ctx, parallel, kv, w_bytes, vram, s)
    out = {"model": spec.summary(), "runtime": runtime, "ctx": ctx, "parallel": parallel, "kv_dtype": kv,
           "weights_dtype": weights_dtype or spec.quant or spec.dtype, "weights": int(w_bytes), "weights_how": w_how,
           "kv_per_token": ev["kv"]["per_token"], "kv_total": ev["kv"]["total"], "kv_detail": ev["kv"],
           "overhead": ev["overhead"], "overhead_total": int(sum(ev["overhead"].values())), "total": ev["total"],
           "vram": int(vram) if vram else None, "budget": ev["budget"], "fits_as_requested": ev["fits"],
           "fits": ev["fits"], "max_ctx": None, "max_ctx_by_kv_dtype": {}, "flags": [], "command": "",
           "notes": notes}
    if runtime != "vllm":
        out["host_weights"] = ev["host_weights"]
        out["gpu_layers_used"] = None if ev["ngl"] > spec.n_layers else ev["ngl"]
    if vram is None:
        out["flags"] = _flags(runtime, ctx, parallel, kv, s, spec)
        out["command"] = _command(runtime, out["flags"])
        notes.append("no --vram given: sizes only, no verdict")
        return out

    cap = min(model_max, 1 << 24)
    if runtime == "vllm":
        s_max = dict(s, util=min(VLLM_MAX_UTIL, math.floor((1 - CUDA_CONTEXT["vllm"] / vram) * 100) / 100))
    else:
        s_max = s
    choice = _choose(spec, runtime, ctx, parallel, kv, w_bytes, vram, s, s_max, cap)
    for k in KV_LADDER[runtime]:  # all layers on the GPU when that holds any context, else the answer's layer count
        s_k = dict(choice[2] if choice is not None else s_max, ngl=None)
        if runtime != "vllm" and KV_BYTES[k] < 2:
            s_k = dict(s_k, flash=True)
        best = _max_ctx(spec, runtime, parallel, k, w_bytes, vram, s_k, cap)
        if not best and choice is not None and runtime != "vllm" and choice[2]["ngl"] is not None:
            best = _max_ctx(spec, runtime, parallel, k, w_bytes, vram, dict(s_k, ngl=choice[2]["ngl"]), cap)
        out["max_ctx_by_kv_dtype"][k] = best
    if choice is None:
        out["fits"] = False
        out["max_ctx"] = 0
        notes.append(_no_fit_reason(spec, runtime, w_bytes, vram))
        return out
    c_ctx, c_kv, c_s, c_ev = choice
    if runtime != "vllm":
        out["host_weights"] = c_ev["host_weights"]
        out["gpu_layers_used"] = c_ev["ngl"] if c_ev["ngl"] <= spec.n_layers else None
    if runtime != "vllm" and c_s["ngl"] is not None and c_s["ngl"] <= spec.n_layers:
        notes.append(f"only {c_s['ngl']} of {spec.n_layers} layers fit on the GPU; the rest run from RAM on the CPU (much slower)")
    out["fits"] = c_ctx >= ctx
    out["max_ctx"] = _max_ctx(spec, runtime, parallel, c_kv, w_bytes, vram, c_s, cap)
    out["chosen"] = {"ctx": c_ctx, "kv_dtype": c_kv, "total": c_ev["total"], "kv_total": c_ev["kv"]["total"],
                     "overhead": c_ev["overhead"]}
    out["flags"] = _flags(runtime, c_ctx, parallel, c_kv, c_s, spec, util=_vllm_util_for(c_ev, vram) if runtime == "vllm" else None)
    out["command"] = _command(runtime, out["flags"])
    if not out["fits"]:
        notes.append(f"{ctx} tokens x {parallel} does not fit; the flags give the largest context that does ({c_ctx})")
    return out


def _choose(spec, runtime, ctx, parallel, kv, w_bytes, vram, s, s_max, cap):
    """First setting, in order of least change, that serves ctx x parallel; else the largest context."""
    def ev(c, k, st):
        return _evaluate(spec, runtime, c, parallel, k, w_bytes, vram, st)

    ladder = [kv] + [k for k in KV_LADDER[runtime] if KV_BYTES[k] < KV_BYTES[kv]]
    tries = []
    if runtime == "vllm":
        for k in ladder:
            tries += [(k, s), (k, s_max), (k, dict(s_max, enforce_eager=True))]
    else:
        for k in ladder:
            base = dict(s, flash=s["flash"] or KV_BYTES[k] < 2)
            tries += [(k, base), (k, dict(base, flash=True)), (k, dict(base, flash=True, ubatch=256))]
    for k, st in tries:
        e = ev(ctx, k, st)
        if e["fits"]:
            return ctx, k, st, e
    if runtime != "vllm":  # keep the context, move layers to the CPU: the cache type that keeps most layers on the GPU
        best = None
        for k in [x for x in ladder if KV_BYTES[x] >= KV_BYTES["q8_0"]] or ladder[:1]:  # q4_0 only when asked
            st = dict(s, flash=True)
            for ngl in range(spec.n_layers, 0, -1):
                e = ev(ctx, k, dict(st, ngl=ngl))
                if e["fits"]:
                    if best is None or ngl > best[2]["ngl"]:
                        best = (ctx, k, dict(st, ngl=ngl), e)
                    break
        if best:
            return best
    # shorten the context with the smallest cache type
    k = ladder[-1]
    st = dict(s_max, flash=True) if runtime != "vllm" else dict(s_max, enforce_eager=False)
    best = _max_ctx(spec, runtime, parallel, k, w_bytes, vram, st, min(cap, ctx))
    if best:
        return best, k, st, ev(best, k, st)
    return None


def _no_fit_reason(spec, runtime, w_bytes, vram) -> str:
    if runtime == "vllm":
        return (f"weights alone ({fmt_bytes(w_bytes)}) leave no room for a {MIN_CTX}-token cache in {fmt_bytes(vram)}: "
                f"use a quantized checkpoint (AWQ/GPTQ 4-bit ~{fmt_bytes(weights(spec, 'awq')[0])}, fp8) or "
                f"--tensor-parallel-size over more GPUs")
    return f"even one layer with a {MIN_CTX}-token cache does not fit {fmt_bytes(vram)}"


def _flag(kind, name, value, reason, text=None):
    if text is None:
        text = f"{name}={value}" if kind == "env" else f"{name} {value}"
    return {"kind": kind, "name": name, "value": str(value), "text": text, "reason": reason}


def _flags(runtime, ctx, parallel, kv, s, spec, util=None) -> list:
    f = []
    if runtime == "vllm":
        f.append(_flag("flag", "--max-model-len", ctx, "context per request"))
        f.append(_flag("flag", "--max-num-seqs", parallel, "sequences decoded together"))
        f.append(_flag("flag", "--kv-cache-dtype", "auto" if kv in ("f16", "bf16") else kv,
                       "model dtype cache" if kv in ("f16", "bf16") else "halves the KV cache (one byte per element)"))
        if util is not None:
            u = max(util, VLLM_DEFAULT_UTIL) if util <= VLLM_DEFAULT_UTIL else util
            f.append(_flag("flag", "--gpu-memory-utilization", f"{u:.2f}",
                           f"share of VRAM vLLM takes; this model needs at least {util:.2f}"))
        if s.get("enforce_eager"):
            f.append(_flag("flag", "--enforce-eager", "", "skip CUDA graph capture to free its memory", text="--enforce-eager"))
        return f
    if runtime == "llama.cpp":
        ngl = s["ngl"]
        f.append(_flag("flag", "-c", ctx * parallel, f"total cache cells: {ctx} tokens x {parallel} slot(s)"))
        if parallel > 1:
            f.append(_flag("flag", "-np", parallel, "parallel slots; each gets -c / -np tokens"))
        f.append(_flag("flag", "-ngl", 99 if ngl is None or ngl > spec.n_layers else ngl,
                       "all layers on the GPU" if ngl is None or ngl > spec.n_layers else f"{ngl} of {spec.n_layers} layers on the GPU, the rest in RAM"))
        if kv != "f16":
            f.append(_flag("flag", "-ctk", kv, f"K cache as {kv}"))
            f.append(_flag("flag", "-ctv", kv, f"V cache as {kv} (needs flash attention)"))
        f.append(_flag("flag", "-fa", "on" if s["flash"] else "off", "flash attention: no score matrix in the compute buffer"))
        if s["ubatch"] != 512:
            f.append(_flag("flag", "-ub", s["ubatch"], "smaller micro-batch, smaller compute buffer"))
        return f
    # ollama
    f.append(_flag("env", "OLLAMA_NUM_PARALLEL", parallel, "each parallel slot gets its own num_ctx of cache"))
    if kv != "f16":
        f.append(_flag("env", "OLLAMA_FLASH_ATTENTION", 1, "required for a quantized KV cache"))
        f.append(_flag("env", "OLLAMA_KV_CACHE_TYPE", kv, f"KV cache as {kv}"))
    elif s["flash"]:
        f.append(_flag("env", "OLLAMA_FLASH_ATTENTION", 1, "smaller compute buffer"))
    f.append(_flag("env", "OLLAMA_CONTEXT_LENGTH", ctx, "server default num_ctx"))
    f.append(_flag("param", "num_ctx", ctx, "per request: options {\"num_ctx\": N} or PARAMETER num_ctx N in a Modelfile",
                   text=f"PARAMETER num_ctx {ctx}"))
    if s["ngl"] is not None and s["ngl"] <= spec.n_layers:
        f.append(_flag("param", "num_gpu", s["ngl"], "layers on the GPU", text=f"PARAMETER num_gpu {s['ngl']}"))
    return f


def _command(runtime, flags) -> str:
    if runtime == "vllm":
        return "vllm serve MODEL " + " ".join(f["text"] for f in flags if f["kind"] == "flag")
    if runtime == "llama.cpp":
        return "llama-server -m MODEL.gguf " + " ".join(f["text"] for f in flags)
    env = " ".join(f["text"] for f in flags if f["kind"] == "env")
    return f"{env} ollama serve"


# ---------------------------------------------------------------- from an OOM log (triage)

def _floor_step(n, step=CTX_STEP) -> int:
    return max(int(n) // step * step, 0)


# names memory/oom_parse.py and triage.py use for the same numbers
_LOG_ALIASES = {"max_model_len_tokens": "max_model_len", "vllm_maxlen": "max_model_len",
                "estimated_max_len_tokens": "estimated_max_len", "kv_max_tokens": "kv_tokens",
                "vllm_kv_tokens": "kv_tokens", "vllm_kv_mem": "kv_available", "vllm_util": "gpu_memory_utilization",
                "gpu_memory_utilization_ratio": "gpu_memory_utilization", "ggml_n_ctx": "n_ctx",
                "ggml_device_free": "free", "requested": "alloc", "model_name": "model"}


def suggest_flags_from_log(numbers: dict, runtime: str) -> list:
    """What to change, given the numbers an OOM log states. See the module docstring for the keys."""
    n = {_LOG_ALIASES.get(k, k): v for k, v in (numbers or {}).items() if v is not None}
    rt = {"llamacpp": "llama.cpp", "llama_cpp": "llama.cpp", "ggml": "llama.cpp"}.get(str(runtime).lower(), str(runtime).lower())
    spec = None
    if n.get("model"):
        try:
            spec = llm_spec.load_builtin(str(n["model"]).split("/")[-1])
        except UserError:
            spec = None
    if rt == "vllm":
        return _suggest_vllm(n, spec)
    if rt in ("llama.cpp", "ollama"):
        return _suggest_ggml(n, spec, rt)
    return []


def _suggest_vllm(n, spec) -> list:
    out = []
    want = n.get("max_model_len")
    kv_dtype = str(n.get("kv_cache_dtype") or "auto").lower()
    est = n.get("estimated_max_len") or n.get("kv_tokens")
    if not est and n.get("kv_available") and n.get("kv_needed") and want:
        est = int(want * n["kv_available"] / n["kv_needed"])
    if not est and spec is not None and n.get("kv_available"):
        per_tok = kv_cache(spec, BLOCK, 1, "fp8" if kv_dtype.startswith("fp8") else "f16", "vllm")["per_token"]
        est = int(n["kv_available"] // (per_tok * BLOCK)) * BLOCK
    if est and est > 0:
        src = "the log's estimated maximum" if n.get("estimated_max_len") else "the KV cache capacity in the log"
        v = _floor_step(est)
        if v >= MIN_CTX:
            out.append(_flag("flag", "--max-model-len", v, f"{src} ({int(est)}) rounded down to {CTX_STEP}"))
        if not kv_dtype.startswith("fp8"):
            v8 = _floor_step(est * 2)
            if want:
                v8 = min(v8, _floor_step(want) or want)
            out.append(_flag("flag", "--kv-cache-dtype", "fp8",
                             f"one byte per cache element doubles the room: about {v8} tokens"))
            out.append(_flag("flag", "--max-model-len", v8, "with --kv-cache-dtype fp8"))
    elif n.get("kv_available") is not None and n["kv_available"] <= 0:
        util = n.get("gpu_memory_utilization") or VLLM_DEFAULT_UTIL
        out.append(_flag("flag", "--gpu-memory-utilization", f"{min(VLLM_MAX_UTIL, util + 0.05):.2f}",
                         "weights and activations took the whole share: give vLLM more of the GPU"))
        out.append(_flag("flag", "--enforce-eager", "", "skip CUDA graphs", text="--enforce-eager"))
        out.append(_flag("flag", "--max-num-seqs", min(int(n.get("max_num_seqs") or 256), 64),
                         "a smaller profile batch lowers the activation peak"))
    if n.get("free") and n.get("total") and n.get("gpu_memory_utilization") and n["free"] < n["gpu_memory_utilization"] * n["total"]:
        u = math.floor(n["free"] / n["total"] * 100) / 100 - 0.01
        out.insert(0, _flag("flag", "--gpu-memory-utilization", f"{u:.2f}",
                            f"only {fmt_bytes(n['free'])} of {fmt_bytes(n['total'])} is free at start; or stop the other process"))
    return out


def _suggest_ggml(n, spec, rt) -> list:
    out = []
    par = int(n.get("n_parallel") or n.get("num_parallel") or 1)
    ctx = n.get("n_ctx")  # llama.cpp's total cells (-c); Ollama's runner prints num_ctx x OLLAMA_NUM_PARALLEL
    if rt == "ollama":
        ctx = n.get("num_ctx") or (ctx // par if ctx else None)
    need = n.get("kv_buffer") or n.get("alloc")
    free = n.get("free")
    quantized = str(n.get("type_k") or "f16").lower() not in ("f16", "f32", "bf16")
    shrink = 1.0  # what the cache shrinks to from the changes below
    if rt == "ollama" and par > 1:
        out.append(_flag("env", "OLLAMA_NUM_PARALLEL", 1, f"{par} slots each hold num_ctx tokens of cache"))
        shrink /= par
    if not quantized:
        if rt == "ollama":
            out.append(_flag("env", "OLLAMA_FLASH_ATTENTION", 1, "needed for a quantized cache"))
            out.append(_flag("env", "OLLAMA_KV_CACHE_TYPE", "q8_0", "34 bytes per 32 elements: about half of f16"))
        else:
            out.append(_flag("flag", "-fa", "on", "flash attention (needed for a quantized V cache)"))
            out.append(_flag("flag", "-ctk", "q8_0", "K cache at 34 bytes per 32 elements"))
            out.append(_flag("flag", "-ctv", "q8_0", "V cache likewise"))
        shrink *= KV_BYTES["q8_0"] / KV_BYTES["f16"]
    if ctx:
        if need and free is not None:
            fit = free / (need * shrink)   # share of the context that the free memory holds after the changes
        else:
            fit = 1.0 if not quantized else 0.5  # no free figure: the cache change, else half the context
        new = _floor_step(ctx * min(fit * 0.95, 1.0)) if fit < 1 else ctx
        if MIN_CTX <= new < ctx:
            if rt == "ollama":
                out.append(_flag("env", "OLLAMA_CONTEXT_LENGTH", new, "smaller default context"))
                out.append(_flag("param", "num_ctx", new, "per model or request", text=f"PARAMETER num_ctx {new}"))
            else:
                out.append(_flag("flag", "-c", new, "smaller context"))
    if n.get("n_gpu_layers") and n.get("n_layers") and need and free is not None and free < need and not ctx:
        ngl = max(int(min(n["n_gpu_layers"], n["n_layers"]) * free / need * 0.95), 0)
        if rt == "ollama":
            out.append(_flag("param", "num_gpu", ngl, "fewer layers on the GPU", text=f"PARAMETER num_gpu {ngl}"))
        else:
            out.append(_flag("flag", "-ngl", ngl, "fewer layers on the GPU, the rest in RAM"))
    if rt == "llama.cpp" and str(n.get("buffer", "")).lower().startswith("compute"):
        out.append(_flag("flag", "-ub", 256, "the compute buffer scales with the micro-batch (-ub, default 512)"))
    return out


# ---------------------------------------------------------------- CLI

def _vram_bytes(args):
    if args.vram is not None:
        return int(args.vram * GiB)
    try:  # this machine's first device, when the probe module has landed and sees a GPU
        from ..budget import probe
        snap = probe.snapshot()
        devs = [d for d in snap.get("devices", []) if d.get("backend") not in (None, "cpu") and d.get("total")]
        return int(devs[0]["total"]) if devs else None
    except Exception:
        return None


def run_cli(args) -> int:
    if getattr(args, "model", None) and args.model.strip().lower() == "list":
        names = llm_spec.builtin_names()
        if args.json:
            print(json.dumps({"models": names}))
        else:
            print("\n".join(names))
        return 0
    spec = describe(config=args.config, gguf=args.gguf, model=args.model)
    vram = _vram_bytes(args)
    res = plan(spec, runtime=args.runtime, ctx=args.ctx, parallel=args.parallel, kv_dtype=args.kv_dtype,
               weights_dtype=args.weights_dtype, vram=vram)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(format_plan(res))
    if res["vram"] is None:
        return 0
    return 0 if res["fits"] else 1


_TERM_HELP = {
    ("vllm", "cuda_context"): "outside --gpu-memory-utilization: must fit in the rest",
    ("vllm", "activation_profile"): "profile forward of max_num_batched_tokens + sampler",
    ("vllm", "non_torch"): "cuBLAS/NCCL workspaces",
    ("vllm", "cuda_graphs"): "0 with --enforce-eager",
    ("llama.cpp", "compute_buffer"): "grows with -ub; -fa removes the score matrix",
    ("llama.cpp", "margin"): "left free: fragmentation, driver",
    ("ollama", "compute_buffer"): "llama.cpp graph; OLLAMA_FLASH_ATTENTION=1 shrinks it",
    ("ollama", "cuda_context"): "Ollama's per-GPU minimum reserve",
}


def format_plan(r: dict) -> str:
    m = r["model"]
    lines = []
    kinds = ", ".join(f"{v} {k}" for k, v in m["layer_kinds"].items())
    geo = (f"MLA latent {m['mla']['kv_lora_rank']}+{m['mla']['qk_rope_head_dim']}" if m["mla"]
           else f"{m['kv_heads']} KV heads x {m['head_dim']}")
    lines.append(f"{m['name']} ({m['arch']}): {m['layers']} layers ({kinds}), {geo}"
                 + (f", {m['experts']} experts" if m["experts"] else ""))
    lines.append(f"runtime {r['runtime']}, context {r['ctx']:,} x {r['parallel']} sequence(s), KV cache {r['kv_dtype']}")
    lines.append("")
    w = 20
    lines.append(f"  {'weights':<{w}}{fmt_bytes(r['weights']):>11}   {r['weights_how']}")
    if r.get("host_weights"):
        lines.append(f"  {'  in host RAM':<{w}}{fmt_bytes(r['host_weights']):>11}   token embedding{' + CPU layers' if r.get('gpu_layers_used') else ''} (not on the GPU)")
    kv_how = f"{fmt_bytes(r['kv_per_token'])} per token"
    if r["kv_detail"]["sliding_layers"]:
        kv_how += f", sliding layers {fmt_bytes(r['kv_detail']['sliding_layers'])}"
    if r["kv_detail"]["recurrent_state"]:
        kv_how += f", recurrent state {fmt_bytes(r['kv_detail']['recurrent_state'])}"
    lines.append(f"  {'KV cache':<{w}}{fmt_bytes(r['kv_total']):>11}   {kv_how}")
    for k, v in r["overhead"].items():
        lines.append(f"  {k.replace('_', ' '):<{w}}{fmt_bytes(v):>11}   {_TERM_HELP.get((r['runtime'], k), '')}".rstrip())
    lines.append(f"  {'total on GPU':<{w}}{fmt_bytes(r['total']):>11}")
    if r["vram"]:
        lines.append("")
        verdict = "fits" if r["fits_as_requested"] else ("fits with the flags below" if r["fits"] else "does NOT fit")
        budget = f" (vLLM share {fmt_bytes(r['budget'])})" if r["runtime"] == "vllm" else ""
        lines.append(f"on {fmt_bytes(r['vram'])}{budget}: {verdict}")
        ch = r.get("chosen")
        if ch and not r["fits_as_requested"]:
            where = f", {r['gpu_layers_used']} layers on the GPU" if r.get("gpu_layers_used") else ""
            lines.append(f"with the flags: {ch['ctx']:,} tokens, KV cache {ch['kv_dtype']}{where}: "
                         f"{fmt_bytes(ch['total'])} on the GPU (KV {fmt_bytes(ch['kv_total'])})")
        if r["max_ctx_by_kv_dtype"]:
            per = " per sequence" if r["parallel"] > 1 else ""
            lines.append(f"largest context{per}: " + ", ".join(f"{k} {v:,}" for k, v in r["max_ctx_by_kv_dtype"].items()))
    if r["flags"]:
        lines.append("")
        lines.append("  " + r["command"])
        if r["runtime"] == "ollama":
            for f in r["flags"]:
                if f["kind"] == "param":
                    lines.append(f"  {f['text']}")
    for n in r["notes"]:
        lines.append(f"note: {n}")
    return "\n".join(lines)
