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
             estimate keeps window x parallel + batch cells for a sliding layer (memory.required.kv).
vLLM's estimated maximum model length (a start refusal's figure) is vllm_max_len.py's."""
import math
from dataclasses import replace

from ..errors import UserError
from .spec import FFN, FULL, LINEAR, MAMBA, SHARED, SLIDING, LLMSpec
from . import deepseek_v4 as DSV4  # DeepSeek-V4's own groups: kv_cache and vllm_pool hand it over
from .ssm_cache import SSM_CACHE_DTYPE_FROM, SSM_CACHE_DTYPES, with_ssm_cache_dtype  # noqa: F401  (--mamba-ssm-cache-dtype)

# bytes per cache element; ggml block types carry a per-block scale (q8_0: 32 int8 + fp16 scale = 34 bytes)
KV_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1,
            "q8_0": 34 / 32, "q5_1": 24 / 32, "q5_0": 22 / 32, "q4_1": 20 / 32, "q4_0": 18 / 32, "iq4_nl": 18 / 32,
            "int8_per_token_head": 1, "fp8_per_token_head": 1, "fp4_e2m1": 0.5 + 1 / 16}
# (batch 107, after first sight) SGLang's fp4_e2m1 (torch.float4_e2m1fn_x2): MHATokenToKVPoolFP4 (mem_cache/
# memory_pool.py) keeps per layer (tokens, heads, head_dim // 2) uint8 of packed values beside a (tokens, heads x
# head_dim // 16) uint8 scale buffer, K and V each, and the profile's cell counts both (model_runner_kv_cache_mixin.py
# get_cell_size_per_token: cell // 2 + heads x head_dim x layers x 2 // 16): 0.5 + 1/16 bytes a value
# vLLM's per-token-head caches (vllm#38378, main of 2026-04-02; TRITON_ATTN only): one byte a value and an fp32 scale
# per token, head and K/V (v1/kv_cache_interface.py AttentionSpec.page_size_bytes adds 2 x block x heads x 4 to the
# page; triton_attn get_kv_cache_shape pads each head to head_size + 4 / 1). No MLA spec takes it. int4_per_token_head
# is no upstream type (the exl3 build's own, whose source was not read): unknown
PER_TOKEN_HEAD = {"int8_per_token_head", "fp8_per_token_head"}
PER_TOKEN_HEAD_SCALE = 4
_KV_ALIASES = {"fp16": "f16", "float16": "f16", "half": "f16", "bfloat16": "bf16", "fp32": "f32", "float32": "f32",
               "float8": "fp8", "fp8_e4m3fn": "fp8_e4m3", "q8": "q8_0", "q4": "q4_0", "int8": "q8_0"}
# vLLM's TurboQuant presets (--kv-cache-dtype turboquant_*; model_executor/layers/quantization/turboquant/config.py
# TQ_PRESETS: key bits, value bits; a head's slot is ceil(d x kbits / 8) + 2 key bytes (8: d bytes, fp8) and
# ceil(d x vbits / 8) + 4 value bytes, rounded up to even). Not sized: the main branch of late April 2026 raised for a
# hybrid model (arg_utils, as Genesis P4 quotes it at fe9c3d6c5: "TurboQuant KV cache is not supported for hybrid
# (attention + Mamba) models"; a later config.py handles hybrids, when it came was not read), and the build that runs
# Qwen 3.6 with it (Sandermage/genesis-vllm-patches 7b9fd319: P4, P5 pads every page to the largest, P8 reports the
# tokens by its own formula; club-3090's dual-turbo composes) is a patched vLLM (batch 69, after first sight:
# club-3090#69 and #73)
VLLM_TURBOQUANT = {"turboquant_k8v4": (8, 4), "turboquant_4bit_nc": (4, 4), "turboquant_k3v4_nc": (3, 4),
                   "turboquant_3bit_nc": (3, 3)}
RUNTIME_KV = {
    "vllm": ("f16", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2", "int8_per_token_head", "fp8_per_token_head"),
    "llama.cpp": ("f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"),
    "ollama": ("f16", "q8_0", "q4_0"),
    "sglang": ("f16", "bf16", "fp8_e5m2", "fp8_e4m3", "fp4_e2m1"),
}
KV_LADDER = {"vllm": ("f16", "fp8"), "llama.cpp": ("f16", "q8_0", "q4_0"), "ollama": ("f16", "q8_0", "q4_0"),
             "sglang": ("f16", "fp8_e5m2")}
MLA_CACHES = ("latent", "latent+v", "full")
# vLLM's own MLA layouts (runtimes/vllm_mla.py mla_layout): "latent-256b", V0's CacheEngine padding each latent entry to
# 256 bytes (align_to_256bytes, VLLM_CUDA_MEM_ALIGN_KV_CACHE: 576 x 2 -> 1280 bytes); "heads", vLLM before its MLA
# backends: K and V per head at the query-key head size (V zero-padded to it: 192 + 192 values a head)
VLLM_MLA_LAYOUTS = ("latent-256b", "heads")
BLOCK = 16                    # vLLM KV block size (tokens)
# vLLM on Intel XPU: a model with a gated-DeltaNet layer (GDN_ATTN backend) gets its attention block rounded up to
# a multiple of 64 tokens after the hybrid alignment, the state page padded with it ("kernel only supports block size
# dividable by 64": platforms/xpu.py XPUPlatform.update_block_size_for_backend)
XPU_GDN_BLOCK = 64
CTX_STEP = 256                # llama.cpp pads its cache to 256 cells with flash attention; contexts we suggest are multiples of this
LLAMACPP_PAD_NO_FLASH = 32    # ... and to 32 cells without it (ggml-org/llama.cpp#13661: -c 30016 keeps 30016 cells)
MIN_CTX = 256
OLLAMA_BATCH = 512
# llama.cpp architectures whose GGUF carries a sliding window it honours (llama_kv_cache_iswa); Mistral-7B-v0.1
# converts to plain `llama`, so llama.cpp and Ollama give its layers a full cache
# (a config's text_config names Gemma 4 and Llama 4 gemma4_text / llama4_text: llama-model.cpp gives LLM_ARCH_GEMMA4
# swa_type STANDARD and Llama 4 CHUNKED, both kept by llama_kv_cache_iswa)
# Gemma 4 12B (gemma4_unified) converts to the same arch (conversion/gemma.py: Gemma4UnifiedModel(Gemma4Model),
# registered for Gemma4UnifiedForConditionalGeneration, model_arch GEMMA4)
LLAMACPP_SWA_ARCHS = ("gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text", "cohere2",
                      "llama4", "llama4_text", "gpt_oss", "gemma4_unified", "gemma4_unified_text",
                      "gpt-oss", "exaone4", "starcoder2")


def head_scale_bytes(kv: str, kv_v: str | None = None) -> int:
    """(rev6 B5) The per-token-head scales one KV head adds a token, K's and V's (0 for other cache types)."""
    return sum(PER_TOKEN_HEAD_SCALE for t in (kv, kv_v or kv) if t in PER_TOKEN_HEAD)


def floor_ctx(tokens) -> int:
    """A context length rounded down to CTX_STEP; one under two steps is kept as it is (rounding it would leave
    nothing or half of it)."""
    t = int(tokens)
    return t // CTX_STEP * CTX_STEP if t >= 2 * CTX_STEP else t



def norm_kv(kv: str | None, runtime: str, spec: LLMSpec | None = None, fp32_model: bool = False) -> str:
    """The cache type asked for, or the runtime's default: vLLM's and SGLang's auto is the model's dtype (an fp32
    model keeps an fp32 cache), else 16-bit."""
    if spec is not None and spec.dsv4 and runtime == "vllm":  # fp8_ds_mla only (deepseek_v4.check_kv)
        return DSV4.check_kv(kv, runtime)
    if kv is None or str(kv).lower() in ("auto", "default"):
        return "f32" if fp32_model and runtime in ("vllm", "sglang") else "f16"
    k = _KV_ALIASES.get(str(kv).lower(), str(kv).lower())
    if runtime == "sglang" and k == "fp8":
        # no SGLang release takes --kv-cache-dtype fp8 (server_args choices: auto, fp8_e5m2, fp8_e4m3, bf16, ...); an
        # fp8 cache is fp8_e4m3, what its auto picks for a checkpoint whose quantization config says
        # kv_cache_quant_algo FP8 (model_runner configure_kv_cache_dtype: torch.float8_e4m3fn; fp8_e5m2 only when asked)
        k = "fp8_e4m3"
    if k in VLLM_TURBOQUANT:
        kb, vb = VLLM_TURBOQUANT[k]
        keys = "fp8 keys" if kb == 8 else f"{kb}-bit keys"
        raise UserError(f"KV cache type {kv!r} is vLLM's TurboQuant cache ({keys} and {vb}-bit values a head, packed with "
                        "fp16 norms and scales), which kv does not size: where its pages sit in the pool was not read "
                        "(vLLM's spring-2026 builds refuse it for a hybrid attention + DeltaNet/Mamba model, and the build "
                        "that runs one with club-3090's Genesis patches pads the pages and counts the tokens its own "
                        "way); give --kv-dtype fp8 for an 8-bit cache's figures")
    if k not in KV_BYTES:
        raise UserError(f"unknown KV cache type {kv!r} (one of: {', '.join(KV_BYTES)})")
    if k in PER_TOKEN_HEAD and spec is not None and (spec.mla or spec.index_head_dim):
        raise UserError(f"KV cache type {kv!r}: vLLM keeps per-token-head scales for standard attention (its Triton "
                        "backend) only; an MLA model's latent cache has no such layout (fp8 for an 8-bit cache)")
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
# From 0.11.11 Ollama prints its own engine's allocation (runtimes/ollama MEASURED_LAYOUT[0]), and gpt-oss's sliding
# layers are kvcache.NewSWAMemCache(128, 4096): kvcache/causal.go Init's rule (OLLAMA_SWA_MEMORY's row), the whole
# num_ctx when the 4096 cells are not fewer than num_ctx ("if int(c.swaMemorySize) >= capacity { c.swaMemorySize =
# math.MaxInt32 }"; gpt-oss:20b at num_ctx 4096 on Ollama 0.18.2: 'kv cache' 192.0 MiB = 24 x 4096 cells x 2 KiB,
# batch 74, after first sight). Below num_ctx 4096 the estimate and the runner differ only there.
OLLAMA_GPTOSS_RUNNER = (0, 11, 11)
# mllama (llama3.2-vision) in Ollama's estimate (fs/ggml GraphSize, case "mllama", 0.4 through 0.11): a
# cross-attention layer caches the image's 1601 vision tokens x 4 tiles in fp32, whatever num_ctx; the other layers
# num_ctx x parallel cells at 2 bytes (llama3.2-vision:11b at num_ctx 2048: 32 x 2048 x 4 KiB + 8 x 6404 x 8 KiB =
# 656.25 MiB, printed 656.2; ollama/ollama#9311)
OLLAMA_MLLAMA_CROSS_CELLS = 1601 * 4
OLLAMA_MLLAMA_CROSS_BYTES = 4
GPTOSS_ARCHS = ("gpt_oss", "gpt-oss")
# Gemma 4 in Ollama's own engine (0.20 on; model/models/gemma4: kvcache.NewSWAMemCache(sliding_window, 4096)):
# kvcache/causal.go Init keeps parallel x max(4096, window + 1 when parallel > 1) + one batch of cells in each sliding
# layer, or the whole num_ctx x parallel when the memory is not smaller than num_ctx (ollama#15388, num_ctx 32768:
# 25 sliding layers of 37748736 bytes = 4608 cells x 8 KiB); gpt-oss the same from OLLAMA_GPTOSS_RUNNER, its
# NewSWAMemCache(128, OLLAMA_GPTOSS_SWA). Each architecture: (the SWA memory in cells, the first version that takes
# it; None: every version kv reads, an unknown version included)
OLLAMA_SWA_MEMORY = {"gemma4": (4096, None), "gemma4_text": (4096, None),
                     **{arch: (OLLAMA_GPTOSS_SWA, OLLAMA_GPTOSS_RUNNER) for arch in GPTOSS_ARCHS}}


# DeepSeek sparse attention (DeepSeek-V3.2, GLM-5) in vLLM, two caches a layer:
#  - the Lightning Indexer's keys: vllm/model_executor/models/deepseek_v2.py, class Indexer, "self.k_cache =
#    DeepseekV32IndexerCache(head_dim=self.head_dim + self.head_dim // self.quant_block_size * 4, dtype=torch.uint8"
#    with quant_block_size = 128: one fp8 key of index_head_dim values and an fp32 scale per 128 of them a token,
#    whatever --kv-cache-dtype says (index_head_dim 128: 132 bytes);
#  - the latent: with an fp8 cache FlashMLASparse's fp8_ds_mla record (get_kv_cache_shape): kv_lora_rank fp8 values,
#    an fp32 scale per 128 of them and qk_rope_head_dim values in 16 bits (512 + 16 + 128 = 656 bytes, not 576);
#    with a 16-bit cache the dense latent (kv_lora_rank + qk_rope_head_dim values). The fp8_ds_mla record is CUDA's
#    (FlashMLASparse); vLLM's ROCm sparse-MLA backend keeps only the 16-bit dense latent, so an fp8 cache on ROCm is
#    refused before it gets here (plan_checks.refuse_rocm_dsa_fp8).
# The latent is in every layer; the indexer key only in a layer that builds an Indexer (DeepseekV2MLAAttention builds
# none where skip_topk, by index_topk_freq / index_skip_topk_offset / index_topk_pattern: spec.indexer_layers, the
# same list llama.cpp's indexer_types gives; every layer for GLM-5 / 5.1, 21 of 78 for GLM-5.2). The indexer keys are a
# second MLAAttentionSpec (head 132, uint8) in the same pool: the block's bytes are the sum over the layers, as
# vLLM's jupiter-glm52 logs print (28.85 GiB for 574,336 tokens: 53,940 bytes a token = 78 x 656 + 21 x 132).
DSA_QUANT_BLOCK = 128


def dsa_token_bytes(spec: LLMSpec, kv_bytes: float) -> tuple:
    """(latent, indexer key) bytes one token adds to one layer of a DeepSeek-sparse-attention model in vLLM."""
    scales = lambda n: -(-n // DSA_QUANT_BLOCK) * 4  # noqa: E731 (one fp32 scale per 128 values)
    if kv_bytes == 1:  # fp8_ds_mla
        latent = spec.kv_lora_rank + scales(spec.kv_lora_rank) + spec.qk_rope_head_dim * 2
    else:
        latent = (spec.kv_lora_rank + spec.qk_rope_head_dim) * kv_bytes
    return latent, spec.index_head_dim + scales(spec.index_head_dim)


def bytes_per_token_layers(spec: LLMSpec, kv: str, kv_v: str | None = None, mla_cache: str = "latent",
                           table: dict | None = None) -> list:
    """Bytes one token adds to each layer (every layer counted as attention; callers keep the attention kinds)."""
    sizes = dict(KV_BYTES, **(table or {}))
    kb, vb = sizes[kv], sizes[kv_v or kv]
    hs = head_scale_bytes(kv, kv_v)     # per-token-head scales, K's and V's, a KV head
    if spec.layer_kv_elems and not spec.mla:  # per-layer widths (GGUF / safetensors / Gemma 4): K and V equal halves
        if not hs:  # (rev6 S5, rev7 D4) the heads only where a per-token-head type needs them
            return [e / 2 * kb + e / 2 * vb for e in spec.layer_kv_elems]
        # a layer's KV heads: the spec's own list where layers differ in head size (Gemma 4's global layers, the only
        # such config vLLM - the runtime with per-token-head types - reads), else its width over the one head size
        # (GGUF / safetensors per-layer heads); a GGUF whose sliding layers have their own key_length_swa is not split
        heads = spec.layer_kv_heads or [e // (spec.head_dim_k + spec.head_dim_v) for e in spec.layer_kv_elems]
        return [e / 2 * kb + e / 2 * vb + h * hs for e, h in zip(spec.layer_kv_elems, heads)]
    if spec.index_head_dim:  # DeepSeek sparse attention: the latent, and the indexer's key where the layer keeps one
        latent, key = dsa_token_bytes(spec, kb)
        keep = set(spec.indexer_layers or range(spec.n_layers))
        return [latent + (key if il in keep else 0) for il in range(spec.n_layers)]
    k, v = layer_elems(spec, mla_cache)
    kbytes = k * kb
    if spec.mla and mla_cache == "latent-256b":
        kbytes = -(-kbytes // 256) * 256
    return [kbytes + v * vb + (0 if spec.mla else spec.n_kv_heads * hs)] * spec.n_layers


def bytes_per_token(spec: LLMSpec, kv: str, kv_v: str | None = None, mla_cache: str = "latent",
                    table: dict | None = None) -> dict:
    """{layer kind: bytes one token adds across all layers of that kind}. table: bytes per element by cache type
    when a runtime prices them otherwise than KV_BYTES (Ollama's estimate)."""
    out = {FULL: 0.0, SLIDING: 0.0}
    for kind, b in zip(spec.layer_kinds, bytes_per_token_layers(spec, kv, kv_v, mla_cache, table)):
        if kind in out:
            out[kind] += b
    return out


OLLAMA_SWA_ESTIMATE = (0, 6, 3)
# The GGUF architectures with sliding layers that Ollama (before 0.30's llama-server) runs on its llama runner alone
# (none is in fs/ggml OllamaEngineRequired: tags v0.6.0-v0.24.0, v0.25.0-rc0): every sliding layer keeps the whole
# num_ctx x parallel. The runner's vendored llama.cpp had one llama_kv_cache of n_ctx cells a layer before v0.11.5
# (1a19df1f3, no llama-kv-cache-unified-iswa.cpp) and from then keeps llama_context_default_params' swa_full = true
# (llama/llama.go NewContextParams sets n_ctx, n_batch, n_ubatch, n_seq_max, flash and the cache types only): 'using
# full-size SWA cache'. The estimate (fs/ggml GraphSize) windows gemma3 alone: "Gemma2 also has sliding window
# attention but we only have an optimized implementation in the Ollama engine" (f66216e39, v0.6.3). Batch 95:
# gemma2:2b at 8192 x 2 on 0.18.2 prints 'kv cache' 1.6 GiB and 832 + 832 MiB (non-SWA and SWA caches, 13 layers
# of 16384 cells each).
OLLAMA_RUNNER_FULL_SWA = ("gemma2", "cohere2", "exaone4", "starcoder2")


def kv_cache(spec: LLMSpec, ctx: int, parallel: int, kv: str, runtime: str, *, ubatch: int = 512,
             max_batched: int = 2048, swa_full: bool = False, kv_v: str | None = None, mla_cache: str = "latent",
             unified: bool = True, version=None, flash: bool = True, mllama_cross: bool = True) -> dict:
    """Bytes the runtime allocates (vLLM, llama.cpp); for Ollama the bytes its own estimate prices and prints
    (memory.required.kv: a quantized cache at OLLAMA_ESTIMATE_BYTES, which is what decides its layer placement before
    0.12; the runner then allocates llama.cpp's block sizes). ctx: vLLM max_model_len (one sequence); llama.cpp -c (all
    slots together); Ollama num_ctx (per request, x parallel)."""
    if spec.dsv4:  # DeepSeek-V4: vLLM's start check for one request (deepseek_v4.py); other runtimes refused before
        return DSV4.kv_detail(spec, ctx, max_batched, kind=mla_cache)  # mla_cache: its pool's form (layout_kind)
    # llama.cpp's DeepSeek sparse attention (llama_kv_cache_dsa): the MLA cache as any MLA model's, the indexer apart
    dsa = bool(spec.index_head_dim) and runtime == "llama.cpp"
    main = replace(spec, index_head_dim=0) if dsa else spec
    by_kind = bytes_per_token(main, kv, kv_v, mla_cache, OLLAMA_ESTIMATE_BYTES if runtime == "ollama" else None)
    win = spec.sliding_window or ctx
    if runtime == "vllm":
        seqs = 1  # the fits rule: one sequence of max_model_len
        cells = math.ceil(ctx / BLOCK) * BLOCK
        # SlidingWindowSpec.max_memory_usage_bytes: cdiv(min(window - 1 + batch, max_model_len), 16) + 1 blocks (the
        # window may start inside a block), one block more than a full layer when max_model_len is the smaller
        swa_cells = cells if swa_full else math.ceil(min(win - 1 + max_batched, ctx) / BLOCK) * BLOCK + BLOCK
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
        honoured = spec.arch in LLAMACPP_SWA_ARCHS and spec.arch not in OLLAMA_RUNNER_FULL_SWA and not swa_full and not old
        swa_cells = min(cells, win * parallel + OLLAMA_BATCH) if honoured else cells
        if spec.arch in GPTOSS_ARCHS and not swa_full:
            swa_cells = parallel * OLLAMA_GPTOSS_SWA + OLLAMA_BATCH
        mem, since = OLLAMA_SWA_MEMORY.get(spec.arch, (None, None))
        if since is not None and (version is None or version < since):
            mem = None  # the estimate's pricing before the runner's own allocation is printed (gpt-oss before 0.11.11)
        if mem and not swa_full:
            mem = max(mem, win + 1) if parallel > 1 else mem
            swa_cells = cells if mem >= ctx else parallel * mem + OLLAMA_BATCH
    full = by_kind[FULL] * cells
    n_full = sum(k == FULL for k in spec.layer_kinds)
    cross = len(spec.cross_attn_layers) if runtime == "ollama" and mllama_cross else 0
    if cross and n_full:
        per_layer = by_kind[FULL] / n_full  # one full layer's bytes per token at the estimate's pricing
        elems = per_layer / dict(KV_BYTES, **OLLAMA_ESTIMATE_BYTES)[kv]
        full += cross * (elems * OLLAMA_MLLAMA_CROSS_BYTES * OLLAMA_MLLAMA_CROSS_CELLS - per_layer * cells)
    swa = by_kind[SLIDING] * swa_cells
    state = spec.recurrent_state_per_seq * seqs
    indexer = indexer_bytes(spec, kv, cells) if dsa else 0
    out = {"per_token": int(by_kind[FULL] + by_kind[SLIDING]), "full_layers": int(full),
           "sliding_layers": int(swa), "recurrent_state": int(state), "total": int(full + swa + state + indexer),
           "cells": cells, "sliding_cells": swa_cells,
           "per_full_layer": int(full / n_full) if n_full else 0}
    if dsa:
        out["indexer"] = int(indexer)
    return out


# llama.cpp's DeepSeek sparse attention (src/llama-kv-cache-dsa.cpp, llama_kv_cache_dsa): "creating main KV cache", a
# llama_kv_cache of the model's MLA latent (576 values a cell and layer for GLM-5.x, K only), then "creating indexer KV
# cache", a second llama_kv_cache over the same cells whose hparams are hand-tweaked to one key head of
# indexer_head_size (n_head_kv 1, n_embd_head_k_full = indexer_head_size) at the same type_k, over the layers its filter
# keeps: glm-dsa's is_indexer_full layers (spec.indexer_layers; every layer for GLM-5 / 5.1, glm-dsa.cpp's BC fill).
# b10505 prints, for GLM-5.2 at 768000 cells with f16: 'size = 65812.50 MiB (768000 cells, 78 layers ...), K (f16):
# 65812.50 MiB, V (f16): 0.00 MiB' (78 x 576 x 2 bytes a cell) and 'size = 3937.50 MiB (768000 cells, 21 layers ...)'
# (21 x 128 x 2); its memory breakdown's context column sums both (49406 MiB on CUDA0 = 46406.25 + 3000) (batch 79)
def indexer_bytes(spec: LLMSpec, kv: str, cells: int) -> float:
    """The indexer key cache llama.cpp keeps beside a DSA model's MLA cache: its layers x indexer_head_size x cells."""
    return len(spec.indexer_layers or range(spec.n_layers)) * spec.index_head_dim * KV_BYTES[kv] * cells


def _layer_token_bytes(spec: LLMSpec, kv: str, mla_cache: str = "latent") -> list:
    """Bytes one token adds to each layer's cache in vLLM (0 for a layer without one)."""
    per = bytes_per_token_layers(spec, kv, None, mla_cache)
    return [(int(b) if float(b).is_integer() else b) if k in (FULL, SLIDING) else 0
            for k, b in zip(spec.layer_kinds, per)]


DRAFT = "draft"  # a separate drafter's attention layers (runtimes/vllm_drafter.py): a KV spec of their own in vLLM's pool


def draft_token_bytes(drafter: dict, kv: str) -> int:
    """Bytes one token adds to one of a separate drafter's layers on one GPU: its KV heads on that GPU x head size, K and
    V, at the pool's cache type (vLLM gives the draft model the target's --kv-cache-dtype), (rev6 B5) with a per-token-head
    type's scales, K's and V's, for each of its KV heads."""
    return int(drafter["kv_heads"] * (drafter["head_dim"] * 2 * KV_BYTES[kv] + head_scale_bytes(kv)))


def vllm_layout(spec: LLMSpec, kv: str = "f16", mla_cache: str = "latent", gdn_block: int = BLOCK,
                drafter: dict | None = None) -> dict | None:
    """vLLM's hybrid KV cache manager (from 0.9.1 on CUDA/ROCm, runtimes/vllm.SWA_SIZED) for a model with more than one kind of layer cache: full and
    sliding attention, or attention and gated-DeltaNet state (kv_cache_utils get_kv_cache_groups). None when one spec
    covers every layer (the plain per-token sum), or the kinds are not ones modelled here (Mamba, MLA, per-layer widths
    within a kind). Every kind gets one page size P, the memory is group-size tensors of num_blocks pages that every
    group's blocks share:
      - attention of two widths (Gemma 4: 16 x 256 sliding, 4 x 512 global): P is 16 tokens of the wider kind, the
        narrower kind's blocks hold P / its bytes per token (unify_kv_cache_spec_page_size);
      - a state layer's page (MambaSpec: conv + recurrent state of one sequence; gated DeltaNet or Mamba-2, the MLP
        and MoE layers of Nemotron-H having no cache spec) sets the attention block: 16 x
        cdiv(state page, 16 x attention bytes per token) tokens, the state page padded to it
        (HybridAttentionMambaModelConfig; Qwen3.6-35B-A3B at fp8: 2096 tokens, Qwen3.8-27B at TP 2: 1568); a
        gated-DeltaNet block then rounded up to a multiple of gdn_block (XPU_GDN_BLOCK on Intel XPU);
      - groups of the rarer kind's count (of the larger count when the two differ by less than 25 %), each kind padded
        to whole groups (Gemma-3-27B's 10 full and 52 sliding layers make 7 groups of 10);
      - a separate drafter (drafter: runtimes/vllm_drafter.py, a DFlash head) brings its layers as one more kind, DRAFT,
        counted in the groups like the others: jethac/dgx-spark-hijinks prints "Add 6 padding layers" (Qwen3.6-35B-A3B's
        10 full-attention layers to 2 groups of 8, the size its DFlash drafter's 8 layers set) and "Add 2" (30
        DeltaNet layers to 4 groups of 8), and 62.74 GiB make 1,241,920 tokens = 4.74x at 262,144 only with 8 tensors, 7 groups and
        a request of 2 x 225 + 4 x 17 + 225 blocks of 1168 tokens. The attention block is the target's (the state
        alignment reads the target's attention); the drafter's layers take the page too, their block the page over
        their bytes a token when that divides it (unify_kv_cache_spec_page_size), else a block of 16 tokens in a padded
        page (the fallback syv-ai/qwen38-27b-rtx3090 patches/hybrid-sw-block-promote.patch describes); a sliding
        drafter layer holds its window (vllm_request_blocks)."""
    if spec.mla:
        return None
    per = _layer_token_bytes(spec, kv, mla_cache)
    kinds = {}
    for k, b in zip(spec.layer_kinds, per):
        if k not in (FFN, SHARED):  # an MLP / MoE layer alone (Nemotron-H), a KV-shared layer have no cache spec
            kinds.setdefault(k, set()).add(b)
    state_kind = LINEAR if LINEAR in kinds else MAMBA  # gated DeltaNet, or Mamba-2 (Nemotron-H: mamba2_state_shape)
    state = state_kind in kinds and spec.linear_state
    if len(kinds) < (1 if drafter else 2) or any(len(v) > 1 for k, v in kinds.items() if k in (FULL, SLIDING)) \
            or not set(kinds) <= {FULL, SLIDING} | ({state_kind} if state else set()):
        return None
    attn = {k: v.pop() for k, v in kinds.items() if k in (FULL, SLIDING)}
    if not attn or (state and len(attn) > 1):
        return None
    widest = max(attn.values())
    dbytes = draft_token_bytes(drafter, kv) if drafter else 0
    block = {}
    if state:
        conv, cb, ssm, sb = spec.linear_state
        state_page = conv * cb + ssm * sb
        unit = math.lcm(spec.mamba_chunk, BLOCK) if spec.mamba_cache_all else BLOCK  # vllm_hybrid.py: whole chunks
        blk = unit * -(-state_page // (unit * widest))  # the state page over the attention's bytes a token, in units
        if state_kind == LINEAR and not spec.mamba_cache_all:
            blk = gdn_block * -(-blk // gdn_block)
        page = blk * widest
        block = {k: blk for k in (*attn, state_kind)}
    else:
        page = BLOCK * max(widest, dbytes)
        block = {k: page // b for k, b in attn.items()}
    if drafter:
        if dbytes > page:
            raise UserError(f"the drafter's layers take {dbytes} bytes a token, more than the target's page of "
                            f"{page} bytes: vLLM would raise every page to the drafter's; not modelled")
        block[DRAFT] = page // dbytes if page % dbytes == 0 else BLOCK
    counts = {k: spec.layer_kinds.count(k) for k in block if k != DRAFT}
    if drafter:
        counts[DRAFT] = drafter["layers"]
    lo, hi = min(counts.values()), max(counts.values())
    size = lo if hi >= lo * 1.25 else hi
    groups = {k: -(-n // size) for k, n in counts.items()}
    return {"page": page, "block": block, "size": size, "groups": groups, "state_page": state and page,
            "state_all": bool(state and spec.mamba_cache_all),
            "draft_window": drafter.get("window") if drafter else None, "counts": counts}


def vllm_hybrid_groups(spec: LLMSpec) -> tuple | None:
    """(layers per group, groups) of vLLM's hybrid KV cache manager (vllm_layout) for a model whose layers are all
    attention layers of two kinds, full and sliding, with one page size; None when the plain per-token sum holds."""
    lay = vllm_layout(spec)
    if not lay or lay["state_page"] or len(set(lay["block"].values())) > 1:
        return None
    return lay["size"], sum(lay["groups"].values())


def vllm_request_blocks(lay: dict, ctx: int, max_batched: int, window: int | None, state_blocks: int = 1) -> int:
    """Blocks of the shared pool one request of `ctx` tokens needs (get_max_concurrency_for_kv_cache_config: each
    group's max_memory_usage in pages): a full layer group all of ctx, a sliding one the smaller of its window plus
    the batch slack and ctx, and one block (SlidingWindowSpec), a state group one page, two with prefix caching
    (MambaSpec, mamba_cache_mode "align"), and one more per speculative token (num_speculative_blocks: pass
    state_blocks + num_speculative_tokens)."""
    out = 0
    for k, n in lay["groups"].items():
        blk = lay["block"][k]
        win = lay.get("draft_window") if k == DRAFT else window
        if k == FULL or (k == DRAFT and not win):
            per = -(-ctx // blk)
        elif k in (SLIDING, DRAFT):
            per = -(-min(win - 1 + max_batched, ctx) // blk) + 1
        else:  # a page per block of ctx in mamba_cache_mode "all" (MambaSpec.max_memory_usage_bytes)
            per = -(-ctx // blk) if lay.get("state_all") else state_blocks
        out += n * per
    return out


def with_draft_layers(spec: LLMSpec, n: int, spec_tokens: int = 0) -> LLMSpec:
    """The spec with a drafter's n full-attention layers after its own: vLLM gives a speculative drafter's layers (Qwen
    3.5+'s MTP module) KV cache specs next to the model's, so they share its pool and its layer groups (17 full
    layers with Qwen3.6-27B's 16: groups of 17). spec_tokens (num_speculative_tokens) widens a gated-DeltaNet conv
    state to conv_kernel_size - 1 + num_spec rows (mamba_utils gated_delta_net_state_shape), which grows the state
    page and so the unified block (Qwen3.6-27B at TP 2, fp8, 3 tokens: 1600 tokens, not 1568)."""
    if spec_tokens and spec.linear_state and spec.linear_dims:
        k = spec.linear_dims[4]
        if k < 2:  # the conv state is k - 1 rows: none to size the MTP rows by, and no kernel runs that width
            raise UserError(f"{spec.name}: linear_conv_kernel_dim {k} with MTP speculative tokens: a gated-DeltaNet "
                            "short convolution is 2 to 4 wide (vLLM's causal_conv1d kernels); check the config")
        conv, cb, ssm, sb = spec.linear_state
        spec = replace(spec, linear_state=(conv // (k - 1) * (k - 1 + spec_tokens), cb, ssm, sb))
    full = [i for i, k in enumerate(spec.layer_kinds) if k == FULL]
    if not n or not full:
        return spec
    j = full[-1]
    more = lambda xs: None if xs is None else list(xs) + [xs[j]] * n  # noqa: E731
    return replace(spec, layer_kinds=list(spec.layer_kinds) + [FULL] * n, layer_kv_elems=more(spec.layer_kv_elems),
                   layer_kv_heads=more(spec.layer_kv_heads), layer_params=more(spec.layer_params))


def vllm_pool(spec: LLMSpec, available: float, kv: str, ctx: int, *, mla_cache: str = "latent", hybrid: bool = True,
              max_batched: int = 2048, state_blocks: int = 1, tokens_from_concurrency: bool = False,
              draft_layers: int = 0, spec_tokens: int = 0, tensors: int | None = None,
              gdn_block: int = BLOCK, drafter: dict | None = None) -> dict | None:
    """The hybrid manager's pool (vllm_layout) of `available` bytes: {"blocks", "tokens", "concurrency",
    "request_bytes"}; None without a layout. tensors: the pool's tensor count on a pipeline stage (vllm_stage_tensors;
    the group size when None). "GPU KV cache size" was blocks // groups x the smallest block until
    vLLM printed concurrency x max_model_len (tokens_from_concurrency; vllm-project/vllm#41069, after #40691: the old
    figure disagreed with the concurrency for Qwen 3.5). draft_layers: a speculative drafter's layers in the pool
    (with_draft_layers); spec_tokens: its num_speculative_tokens, each a state page more a request (MambaSpec
    num_speculative_blocks) and a wider conv state; gdn_block: vllm_layout's; drafter: a separate drafter's layers
    (vllm_layout DRAFT)."""
    if spec.dsv4:  # DeepSeek-V4's own groups (deepseek_v4.py), MTP layers included
        return DSV4.pool(spec, available, ctx, max_batched, draft_layers, kind=mla_cache)
    spec = with_draft_layers(spec, draft_layers, spec_tokens)
    lay = vllm_layout(spec, kv, mla_cache, gdn_block, drafter) if hybrid else None
    if not lay:
        if drafter:
            raise UserError(f"{spec.name}: a separate drafter's share of vLLM's pool is modelled for the hybrid KV cache "
                            "manager's layouts (attention, sliding, gated-DeltaNet state; vLLM >= 0.9.1), not for "
                            "this model's cache or this version")
        return None
    blocks = int(max(available, 0) // ((tensors or lay["size"]) * lay["page"]))
    need = vllm_request_blocks(lay, ctx, max_batched, spec.sliding_window or ctx, state_blocks + spec_tokens)
    conc = blocks / need
    n_groups = sum(lay["groups"].values())
    tokens = int(conc * ctx) if tokens_from_concurrency else blocks // n_groups * min(lay["block"].values())
    return {"blocks": blocks, "tokens": tokens, "concurrency": conc, "request_bytes": need * lay["size"] * lay["page"]}


def vllm_stage_tensors(spec: LLMSpec, lay: dict, start: int, end: int) -> int:
    """Tensors of the pool on the pipeline stage holding layers [start, end): vLLM groups the whole model's layers
    (get_kv_cache_configs merges every worker's specs), dealing each kind's layers to its groups in turn
    (layers[i::num_groups], _get_kv_cache_groups_uniform_page_size), and a worker's pool has as many tensors as its
    largest share of one group (get_kv_cache_config_from_groups: max layers of a projected group)."""
    most = 0
    for kind, n_groups in lay["groups"].items():
        idx = [i for i, k in enumerate(spec.layer_kinds) if k == kind]
        most = max([most] + [sum(start <= i < end for i in idx[g::n_groups]) for g in range(n_groups)])
    return most


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
                   hybrid: bool = True, ctx: int | None = None, **pool) -> int:
    """What vLLM prints as "GPU KV cache size: N tokens" for `available` bytes of KV memory: whole blocks of 16
    tokens; with the hybrid manager (hybrid=True: vLLM >= 0.10) the blocks are shared by the groups (vllm_pool; ctx
    and its keywords give the request the concurrency counts, needed where the figure is concurrency x ctx).
    mla_cache: the version's MLA layout (runtimes/vllm_mla.py mla_layout)."""
    got = vllm_pool(spec, available, kv, ctx or BLOCK, mla_cache=mla_cache, hybrid=hybrid, **pool)
    if got:
        return got["tokens"]
    spec = with_draft_layers(spec, pool.get("draft_layers", 0))
    per_token = kv_cache(spec, 1, 1, kv, "vllm", mla_cache=mla_cache)["per_token"]
    return int(max(available, 0) // (BLOCK * per_token)) * BLOCK
