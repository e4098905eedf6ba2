"""The KV cache each runtime allocates.

Bytes = K and V elements per token and layer x cells x bytes per element, with
  - MLA (DeepSeek): `latent` (llama.cpp since 2026-01, ggml-org/llama.cpp#19067; vLLM): one latent of
    kv_lora_rank + qk_rope_head_dim per token and layer; `latent+v`: 2025 llama.cpp builds, which also kept a
    V cache of kv_lora_rank; `full`: builds before early 2025, which stored per-head K and V:
    heads x (qk_nope + qk_rope) + heads x v_head = 128 x 192 + 128 x 128 = 40,960 values per token and layer;
  - sliding-window layers holding at most the window plus the runtime's batch slack;
  - hybrid models counting only attention layers (mamba / linear-attention layers keep a fixed state);
  - quantized caches with their block overheads: q8_0 = 34 bytes per 32 elements, q4_0 = 18 per 32; K and V
    may differ (llama.cpp -ctk / -ctv).

Cells per runtime:
  vLLM       blocks of 16 tokens; one sequence of max_model_len must fit, the rest of the pool is concurrency;
  llama.cpp  -c cells in total, shared by the -np slots (one unified cache, or -np streams of -c/-np cells:
             the same bytes either way), padded to 256 cells with flash attention and to 32 without
             (llama_kv_cache::get_padding: "the FA kernels require padding"); a sliding layer keeps
             n_swa x slots + n_ubatch cells (unified) or n_swa + n_ubatch per slot (llama_kv_cache_iswa), padded alike;
  Ollama     num_ctx per request x OLLAMA_NUM_PARALLEL (the runner gets --ctx-size num_ctx x parallel); its
             estimate keeps window x parallel + batch cells for a sliding layer (memory.required.kv)."""
import math

from ..errors import UserError
from .spec import FULL, SLIDING, LLMSpec

# bytes per cache element; ggml block types carry a per-block scale (q8_0: 32 int8 + fp16 scale = 34 bytes)
KV_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1,
            "q8_0": 34 / 32, "q5_1": 24 / 32, "q5_0": 22 / 32, "q4_1": 20 / 32, "q4_0": 18 / 32, "iq4_nl": 18 / 32}
_KV_ALIASES = {"fp16": "f16", "float16": "f16", "half": "f16", "bfloat16": "bf16", "fp32": "f32", "float32": "f32",
               "float8": "fp8", "fp8_e4m3fn": "fp8_e4m3", "q8": "q8_0", "q4": "q4_0", "int8": "q8_0"}
RUNTIME_KV = {
    "vllm": ("f16", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2"),
    "llama.cpp": ("f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"),
    "ollama": ("f16", "q8_0", "q4_0"),
    "sglang": ("f16", "bf16", "fp8_e5m2", "fp8_e4m3"),
}
KV_LADDER = {"vllm": ("f16", "fp8"), "llama.cpp": ("f16", "q8_0", "q4_0"), "ollama": ("f16", "q8_0", "q4_0"),
             "sglang": ("f16", "fp8_e5m2")}
MLA_CACHES = ("latent", "latent+v", "full")
# vLLM's own MLA layouts (runtimes/vllm.py mla_layout): "latent-256b", V0's CacheEngine padding each latent entry to
# 256 bytes (align_to_256bytes, VLLM_CUDA_MEM_ALIGN_KV_CACHE: 576 x 2 -> 1280 bytes); "heads", vLLM before its MLA
# backends: K and V per head at the query-key head size (V zero-padded to it: 192 + 192 values a head)
VLLM_MLA_LAYOUTS = ("latent-256b", "heads")
BLOCK = 16                    # vLLM KV block size (tokens)
CTX_STEP = 256                # llama.cpp pads its cache to 256 cells with flash attention; contexts we suggest are multiples of this
LLAMACPP_PAD_NO_FLASH = 32    # ... and to 32 cells without it (ggml-org/llama.cpp#13661: -c 30016 keeps 30016 cells)
MIN_CTX = 256
OLLAMA_BATCH = 512
# llama.cpp architectures whose GGUF carries a sliding window it honours (llama_kv_cache_iswa); Mistral-7B-v0.1
# converts to plain `llama`, so llama.cpp and Ollama give its layers a full cache
LLAMACPP_SWA_ARCHS = ("gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "cohere2", "llama4", "gpt_oss",
                      "gpt-oss", "exaone4", "starcoder2")


def norm_kv(kv: str | None, runtime: str, spec: LLMSpec | None = None, fp32_model: bool = False) -> str:
    """The cache type asked for, or the runtime's default: vLLM's and SGLang's auto is the model's dtype (an fp32
    model keeps an fp32 cache), else 16-bit."""
    if kv is None or str(kv).lower() in ("auto", "default"):
        return "f32" if fp32_model and runtime in ("vllm", "sglang") else "f16"
    k = _KV_ALIASES.get(str(kv).lower(), str(kv).lower())
    if k not in KV_BYTES:
        raise UserError(f"unknown KV cache type {kv!r} (one of: {', '.join(KV_BYTES)})")
    if k not in RUNTIME_KV[runtime]:
        alt = {"vllm": "fp8", "sglang": "fp8_e5m2"}.get(runtime, "q8_0")
        raise UserError(f"{runtime} has no {k} KV cache (it supports {', '.join(RUNTIME_KV[runtime])}); try {alt}")
    return k


def _pad(n: int, step: int) -> int:
    return -(-n // step) * step


def layer_elems(spec: LLMSpec, mla_cache: str = "latent") -> tuple:
    """(K elements, V elements) one token adds to one full-attention layer."""
    if spec.mla:
        if mla_cache == "heads":
            d = (spec.mla_qk_nope or 128) + spec.qk_rope_head_dim
            return spec.n_heads * d, spec.n_heads * d
        if mla_cache == "full":
            h = spec.n_heads
            return h * ((spec.mla_qk_nope or 128) + spec.qk_rope_head_dim), h * (spec.mla_v_head or 128)
        latent = spec.kv_lora_rank + spec.qk_rope_head_dim
        return latent, (spec.kv_lora_rank if mla_cache == "latent+v" else 0)
    return spec.n_kv_heads * spec.head_dim_k, spec.n_kv_heads * spec.head_dim_v


# Ollama's estimate (memory.required.kv, and the layer placement built on it) prices a quantized cache without
# its block scales: fs/ggml kvCacheBytesPerElement returns 1 byte for q8_0 ("1/2 of fp16") and 0.5 for q4_0
# (0.6.0 through 0.12); the runner then allocates llama.cpp's 34/32 and 18/32 (gemma3:27b at num_ctx 20000 with
# q8_0: 4.7 GiB printed, 62 layers x 20000 x 4096 values x 1 byte; ollama/ollama#9678).
OLLAMA_ESTIMATE_BYTES = {"q8_0": 1.0, "q4_0": 0.5}
# gpt-oss in Ollama's estimate (fs/ggml GraphSize, case "gptoss", from 0.11.0): a sliding layer is priced at
# numParallel x 4096 + batch cells whatever its 128-token window, a full layer at num_ctx x numParallel
# (gpt-oss:20b at num_ctx 8192: 12 x 8192 + 12 x 4608 cells x 2 KiB = 300.0 MiB, ollama/ollama#11711)
OLLAMA_GPTOSS_SWA = 4096
# mllama (llama3.2-vision) in Ollama's estimate (fs/ggml GraphSize, case "mllama", 0.4 through 0.11): a
# cross-attention layer caches the image's 1601 vision tokens x 4 tiles in fp32, whatever num_ctx; the other layers
# num_ctx x parallel cells at 2 bytes (llama3.2-vision:11b at num_ctx 2048: 32 x 2048 x 4 KiB + 8 x 6404 x 8 KiB =
# 656.25 MiB, printed 656.2; ollama/ollama#9311)
OLLAMA_MLLAMA_CROSS_CELLS = 1601 * 4
OLLAMA_MLLAMA_CROSS_BYTES = 4
GPTOSS_ARCHS = ("gpt_oss", "gpt-oss")


def bytes_per_token(spec: LLMSpec, kv: str, kv_v: str | None = None, mla_cache: str = "latent",
                    table: dict | None = None) -> dict:
    """{layer kind: bytes one token adds across all layers of that kind}. table: bytes per element by cache type
    when a runtime prices them otherwise than KV_BYTES (Ollama's estimate)."""
    sizes = dict(KV_BYTES, **(table or {}))
    kb, vb = sizes[kv], sizes[kv_v or kv]
    if spec.layer_kv_elems and not spec.mla:  # per-layer widths (GGUF / safetensors): K and V taken as equal halves
        per = [e / 2 * kb + e / 2 * vb for e in spec.layer_kv_elems]
    else:
        k, v = layer_elems(spec, mla_cache)
        kbytes = k * kb
        if spec.mla and mla_cache == "latent-256b":
            kbytes = -(-kbytes // 256) * 256
        per = [kbytes + v * vb] * spec.n_layers
    out = {FULL: 0.0, SLIDING: 0.0}
    for kind, b in zip(spec.layer_kinds, per):
        if kind in out:
            out[kind] += b
    return out


OLLAMA_SWA_ESTIMATE = (0, 6, 3)


def kv_cache(spec: LLMSpec, ctx: int, parallel: int, kv: str, runtime: str, *, ubatch: int = 512,
             max_batched: int = 2048, swa_full: bool = False, kv_v: str | None = None, mla_cache: str = "latent",
             unified: bool = True, version=None, flash: bool = True) -> dict:
    """Bytes the runtime allocates (vLLM, llama.cpp); for Ollama the bytes its own estimate prices and prints
    (memory.required.kv: a quantized cache at OLLAMA_ESTIMATE_BYTES, which is what decides its layer placement before
    0.12; the runner then allocates llama.cpp's block sizes). ctx: vLLM max_model_len (one sequence); llama.cpp -c (all
    slots together); Ollama num_ctx (per request, x parallel)."""
    by_kind = bytes_per_token(spec, kv, kv_v, mla_cache, OLLAMA_ESTIMATE_BYTES if runtime == "ollama" else None)
    win = spec.sliding_window or ctx
    if runtime == "vllm":
        seqs = 1  # the fits rule: one sequence of max_model_len
        cells = math.ceil(ctx / BLOCK) * BLOCK
        swa_cells = cells if swa_full else min(cells, math.ceil((win - 1 + max_batched) / BLOCK) * BLOCK + BLOCK)
    elif runtime == "llama.cpp":
        seqs = parallel
        step = CTX_STEP if flash else LLAMACPP_PAD_NO_FLASH
        cells = _pad(ctx, step)
        honoured = spec.arch in LLAMACPP_SWA_ARCHS and not swa_full
        if not honoured:
            swa_cells = cells
        elif unified:
            swa_cells = min(cells, _pad(win * parallel + ubatch, step))
        else:
            swa_cells = parallel * min(cells // parallel, _pad(win + ubatch, step))
    else:  # ollama
        seqs = parallel
        cells = ctx * parallel
        # Ollama's estimate sized every layer in full until 0.6.3 (sliding-window estimates: ollama/ollama#9987,
        # merged 2025-03-25; 0.6.2 prints gemma3:27b's 62 layers at 2048 tokens in full, ollama/ollama#9791)
        old = version is not None and version < OLLAMA_SWA_ESTIMATE
        honoured = spec.arch in LLAMACPP_SWA_ARCHS and not swa_full and not old
        swa_cells = min(cells, win * parallel + OLLAMA_BATCH) if honoured else cells
        if spec.arch in GPTOSS_ARCHS and not swa_full:
            swa_cells = parallel * OLLAMA_GPTOSS_SWA + OLLAMA_BATCH
    full = by_kind[FULL] * cells
    n_full = sum(k == FULL for k in spec.layer_kinds)
    cross = len(spec.cross_attn_layers) if runtime == "ollama" else 0
    if cross and n_full:
        per_layer = by_kind[FULL] / n_full  # one full layer's bytes per token at the estimate's pricing
        elems = per_layer / dict(KV_BYTES, **OLLAMA_ESTIMATE_BYTES)[kv]
        full += cross * (elems * OLLAMA_MLLAMA_CROSS_BYTES * OLLAMA_MLLAMA_CROSS_CELLS - per_layer * cells)
    swa = by_kind[SLIDING] * swa_cells
    state = spec.recurrent_state_per_seq * seqs
    return {"per_token": int(by_kind[FULL] + by_kind[SLIDING]), "full_layers": int(full),
            "sliding_layers": int(swa), "recurrent_state": int(state), "total": int(full + swa + state),
            "cells": cells, "sliding_cells": swa_cells,
            "per_full_layer": int(full / n_full) if n_full else 0}


def vllm_hybrid_groups(spec: LLMSpec) -> tuple | None:
    """(layers per group, groups) of vLLM's hybrid KV cache manager (from 0.10) for a model whose layers are all
    attention layers of two kinds, full and sliding, with one page size: groups of the rarer kind's count (of the
    larger count when the two differ by less than 25 %), each kind padded to whole groups; the memory is group-size
    tensors that every group's blocks share (kv_cache_utils._get_kv_cache_groups_uniform_page_size: Gemma-3-27B's 10
    full and 52 sliding layers make 7 groups of 10, 8 of them padding). None when the plain per-token sum holds."""
    counts = [spec.layer_kinds.count(FULL), spec.layer_kinds.count(SLIDING)]
    if min(counts) == 0 or sum(counts) != spec.n_layers or spec.layer_kv_elems or spec.mla:
        return None
    size = min(counts) if max(counts) >= min(counts) * 1.25 else max(counts)
    return size, sum(-(-n // size) for n in counts)


def vllm_hybrid_request_bytes(spec: LLMSpec, need: dict) -> float | None:
    """Pool bytes one request (kv_cache's figures for it) holds under the hybrid manager: each kind's bytes per layer
    times its layers padded to whole groups (vllm_hybrid_groups; Gemma-3-27B: 70 layer slots, not 62). None when the
    groups do not apply."""
    groups = vllm_hybrid_groups(spec)
    if not groups:
        return None
    size = groups[0]
    n_full, n_swa = spec.layer_kinds.count(FULL), spec.layer_kinds.count(SLIDING)
    return size * (-(-n_full // size) * need["full_layers"] / n_full + -(-n_swa // size) * need["sliding_layers"] / n_swa)


def vllm_kv_tokens(spec: LLMSpec, available: float, kv: str = "f16", mla_cache: str = "latent",
                   hybrid: bool = True) -> int:
    """What vLLM prints as "GPU KV cache size: N tokens" for `available` bytes of KV memory: whole blocks of 16
    tokens; with the hybrid manager (hybrid=True: vLLM >= 0.10) a sliding/full model's blocks are shared by its
    groups, and the printed tokens are blocks // groups x 16. mla_cache: the version's MLA layout (runtimes/vllm.py
    mla_layout)."""
    per_token = kv_cache(spec, 1, 1, kv, "vllm", mla_cache=mla_cache)["per_token"]
    groups = vllm_hybrid_groups(spec) if hybrid else None
    if groups:
        size, n = groups
        blocks = int(max(available, 0) // (BLOCK * per_token / spec.n_layers * size))
        return blocks // n * BLOCK
    return int(max(available, 0) // (BLOCK * per_token)) * BLOCK
