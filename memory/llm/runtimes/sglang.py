"""SGLang (python -m sglang.launch_server): one static KV pool sized at start-up, as model_runner.py computes it
(sglang/srt/model_executor/model_runner.py, 0.4.x):

  free0  = the GPU's free memory once torch.distributed is up (init_torch_distributed's min_per_gpu_memory; the
           log's "Load weight begin. avail mem=..."): the card less the CUDA context and, with TP, NCCL's buffers
           ("Init torch distributed ends. mem usage=0.13 GB" at TP 4)
  rest   = free after the weights - free0 x (1 - mem_fraction_static)          (profile_max_num_token)
  tokens = rest / cell, cell = one token's K and V over the layers on this GPU (MHATokenToKVPool), or its MLA
           latent (MLATokenToKVPool): "KV Cache is allocated. #tokens: N, K size: ..., V size: ...", and
           max_total_num_tokens
  so tokens = (mem_fraction_static x free0 - weights) / cell; free0 x (1 - mem_fraction_static) is left for CUDA
  graphs and activations. SGLang refuses to start when rest <= 0 ("Not enough memory. Please try to increase
  --mem-fraction-static"); otherwise it starts and caps a request's input at the pool (TpModelWorker:
  max_req_input_len = min(context_len - 1, max_total_num_tokens - 1)), which the notes say.
  mem_fraction_static default (server_args.py), by version (default_mfs):
    0.4.x: 0.88 on one GPU, 0.87 at TP 2, 0.85 at TP 4, 0.81 at TP 8, 0.79 from TP 16;
    sgl-project/sglang#7054 (merged 2025-06-10): (gpu_mem - reserved) / gpu_mem, reserved by the card's size:
      (2.8 + TPxPP / 10) GiB below 35 GiB, (9.5 + TPxPP / 2) below 90, (12 + TPxPP / 2) below 160, else 32 GiB;
    sgl-project/sglang#10975 (merged 2025-09-27; still the base of 2026 main): reserved = 512 MiB
      + 1.5 MiB x max(chunked_prefill_size, 2048) + 2 MiB x cuda_graph_max_bs + TPxPP / 8 GiB, at least 10 GiB on a
      card above 60 GiB; chunked_prefill_size and cuda_graph_max_bs by the card (below 20 GiB 2048 / 8; below 35
      2048 / 24, 80 from TP 4; below 60 4096 / 32, 160; below 160 8192 / 256, 512; else 16384 / 512): 0.911 on an
      MI355X (printed by sglang#18263's branch), 0.835 on an H100 80GB, 0.847 on a 4090.
    gpu_mem is the card's capacity in MiB (nvidia-smi's total; here --vram). The first releases carrying #7054 and
    #10975 are not read: taken as 0.4.8 and 0.5.3. A model whose config has a vision_config then gets
    adjust_mem_fraction_for_vlm (sglang#6881, merged 2025-06-29, inside the #7054 gate here): x 0.95 x clamp(1 - 0.1
    x (ratio - 1), 0.8, 1.05), ratio = the tower's num_hidden_layers (24 when the config names none) x hidden_size^2
    against ViT-L/14's 24 x 1024^2 (not re-rounded). With --enable-dp-attention #10975's reserve adds
    3 MiB x cuda_graph_max_bs x dp (+1.5 more above a max_bs of 300) before the 10 GiB floor (DP_ATTENTION_RESERVE;
    the earlier formulas not read for it). Not modelled: a speculative draft (+2 GiB, STANDALONE +6) and 2026's
    prefill CUDA-graph reserve.
  hybrid gated-DeltaNet models (Qwen3-Next, Qwen 3.5+): the requests' recurrent state sits in its own pool
  (HybridReqToTokenPool) taken from `rest` first (model_runner_kv_cache_mixin handle_max_mamba_cache): without
  --max-mamba-cache-size or --disable-radix-cache it is rest x r / (1 + r), r = --mamba-full-memory-ratio (0.9), in
  whole request states of mamba_cache_per_req (every DeltaNet layer's conv state in the model's dtype and its
  temporal state in --mamba-ssm-dtype, float32 by default, or bfloat16 / float16 as given: kv's
  --mamba-ssm-cache-dtype, SSM_STATE_BYTES), and the KV pool is what is left. Not modelled: the
  speculative intermediate states, the fork's demand-driven sizing. --max-mamba-cache-size N (server_args) takes the
  ratio's place: exactly N request states come out of `rest` first (handle_max_mamba_cache's "explicitly set" branch).
  A running request holds MAMBA_REQ_RATIO (3) states: fewer than that and SGLang refuses to start ("... state cache is
  too small to serve any requests", _resolve_max_num_reqs), whatever the KV pool.
  hybrid sliding-window models (model_config is_hybrid_swa_model: Llama 4, gpt-oss, Gemma 4; not Gemma 2 or 3, whose
  sliding layers SGLang sizes in full): two pools, full layers of max_total_num_tokens and sliding layers of
  r x that, r = --swa-full-tokens-ratio (0.8): tokens = rest / (F + r x S), F and S one token's bytes over the full and
  the sliding layers (set_num_tokens_hybrid_swa, 0.5.x; pool_configurator HybridSWAPoolConfigurator on main): "Use
  sliding window memory pool. full_layer_tokens=92143, swa_layer_tokens=73714" for Gemma-4-31B. Not modelled: the
  SWA chunk-cache cap (--disable-radix-cache with --max-running-requests on main).
  SGLang's "GB" in these lines is GiB (bytes / 2**30)."""
import math
import re

from ...errors import UserError
from ...units import GiB, MiB, fmt_bytes
from ..cache import KV_BYTES, bytes_per_token, dsa_token_bytes, kv_cache
from ..spec import FULL, LINEAR, MAMBA, SLIDING
from . import at_least, parse_version
from .vllm import pre_ampere  # CUDA cards below compute 8.0

CUDA_CONTEXT = 512 * MiB      # as vLLM's: the PyTorch context before anything is loaded
NCCL = int(0.13 * GiB)        # "Init torch distributed ends. mem usage=0.13 GB" (TP 4, didier-durand/llms-in-clouds)
DEFAULT_MFS = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
KV = ("f16", "bf16", "fp8_e5m2", "fp8_e4m3")
# An AWQ checkpoint of a MoE model (layers/quantization/awq/awq.py, read at the 0.5.11 layout): AWQConfig.get_quant_method
# gives LinearBase its AWQ method and FusedMoE none (a method only on Ascend NPU), so FusedMoE builds its experts with
# UnquantizedFusedMoEMethod in the model's dtype (unquant.py create_weights: torch.empty(num_experts, ...), the OOM
# traceback of mattbucci's 2x R9700 Qwen3.6-35B-A3B-AWQ log). AWQMarlinConfig, which has an expert method, is taken
# only on CUDA (is_awq_marlin_compatible: "if not _is_cuda: return False") from compute 8.0 (get_min_capability 80),
# and not when --quantization awq is given explicitly ("forcing awq"): on ROCm, and on a CUDA card below 8.0, the
# experts are 16-bit. --quantization awq on a newer CUDA card is the same but is not an input here; moe_wna16 quantizes
# them (not an input either).
# an AMD card by its name (not a bare "AMD": a host CPU named beside an NVIDIA card, review16b F10); a CUDA card named
# in the same text wins
ROCM_CARD = re.compile(r"\b(radeon|instinct|mi\d{3}\w*|rocm|gfx\d+)\b", re.I)
CUDA_CARD = re.compile(r"\b(nvidia|geforce|tesla|quadro|rtx|[ahlb]\d{2,3}[a-z]*|gh200|gb\d{2,3})\b", re.I)


# Decoders whose token table SGLang builds as a plain torch nn.Embedding, not a VocabParallelEmbedding, so the whole
# table sits on every tensor-parallel GPU; one row per model_type read (exact names: a prefix would take in any later
# gemma3*/gemma4* type unread):
#   gemma3, gemma3_text: models/gemma3_causal.py Gemma3TextScaledWordEmbedding(nn.Embedding) for embed_tokens
#     (Gemma3TextModel, which gemma3_mm.py's language model is too); the tied head is that module (no copy)
#   gemma3n, gemma3n_text: models/gemma3n_causal.py (at 184c9526, review21b) builds embed_tokens and
#     embed_tokens_per_layer as Gemma3nTextScaledWordEmbedding (an nn.Embedding); kv's gemma3n role holds the main
#     table only (its per-layer table is not sized here)
#   gemma4, gemma4_text: models/gemma4_causal.py `Gemma4TextScaledWordEmbedding = Gemma3TextScaledWordEmbedding`, for
#     embed_tokens and the E2B/E4B per-layer table (embed_tokens_per_layer); gemma4_mm.py ties lm_head to embed_tokens
#     at PP 1
#   gemma4_unified, gemma4_unified_text (Gemma 4 12B, Gemma4UnifiedForConditionalGeneration, and its text_config's
#     type): models/gemma4_unified.py (sgl-project/sglang 06e7e7d, task ellm28) builds its language model as
#     gemma4_causal.py's Gemma4TextModel, the same embed_tokens, and ties lm_head to it at PP 1 (no copy); its
#     encoder-free vision and audio embedders are plain nn modules (whole on each GPU, not sized here)
# (read at sgl-project/sglang 03826cd and 038c87d, task ellm21b; the 0.5.11/0.5.12 builds of batch 53's rows are
# assumed to match: mattbucci's patches against them touch neither). Another layout of gemma4_causal.py exists (review21b
# and fix21c read a copy that imports get_global_server_args): its Gemma4PerLayerEmbedding builds embed_tokens_per_layer
# as a VocabParallelEmbedding, split over TP; on such a build each GPU holds (1 - 1/tp) of the E2B/E4B per-layer table
# less than kv says (Gemma-4-E4B at TP 2: 262144 x 42 x 256 x 2 B / 2 = 2.63 GiB). Which releases carry which was not
# read; kv keeps the layout of the commits read (test_kv_fix21c sizes E4B at TP 2 by hand)
WHOLE_TOKEN_TABLE = ("gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text", "gemma4_unified",
                     "gemma4_unified_text")


def token_table_whole(arch) -> bool:
    """Does SGLang keep this decoder's whole token table (and a per-layer table) on every tensor-parallel GPU?"""
    return str(arch or "") in WHOLE_TOKEN_TABLE


def awq_experts_dense(gpu_name) -> bool:
    """Does SGLang build an AWQ checkpoint's routed experts unquantized on this card (ROCm, or CUDA below 8.0)?"""
    g = str(gpu_name or "")
    return bool(pre_ampere(g) or (ROCM_CARD.search(g) and not CUDA_CARD.search(g)))


MFS_BY_CARD = (0, 4, 8)       # sglang#7054, taken as its first release
# Before sglang#6881 moved it into server_args (inside the #7054 gate here), ModelRunner.__init__ multiplied the
# fraction, given or default, for a multimodal model: "Automatically reduce --mem-fraction-static to ... because this is
# a multimodal model" (x 0.95 in the early-2025 model_runner.py that also turns chunked prefill off for mllama and
# qwen2-vl; a spring-2025 one has x 0.90: the release that changed it is not read, 0.95 is kept)
RUNNER_VLM_FACTOR = 0.95
MFS_FORMULA = (0, 5, 3)       # sglang#10975, taken as its first release
# (card below MiB, reserved GiB = a + TPxPP x b) of #7054; chunked_prefill_size, cuda_graph_max_bs below 4 / from
# TP 4 of #10975, by the card's MiB
# sglang#10975's reserve with --enable-dp-attention ("DP attention needs more padding for some operations"), added
# before the 10 GiB floor: (cuda_graph_max_bs above, MiB x cuda_graph_max_bs x dp); the releases before its formula
# were not read for it (a note says so)
DP_ATTENTION_RESERVE = ((0, 3.0), (300, 1.5))
RESERVED_BY_CARD = ((35 * 1024, 2.8, 0.1), (90 * 1024, 9.5, 0.5), (160 * 1024, 12.0, 0.5), (None, 32.0, 0.0))
PREFILL_GRAPH_BY_CARD = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
                         (160 * 1024, 8192, 256, 512), (None, 16384, 512, 512))


# sgl-project/sglang#6564 ("Fix GPU OOM", 2025-05-24; first in v0.4.7): with the aiter attention backend and a context
# above 8192 tokens the fraction, given or default, is multiplied by 0.85 (model_runner.py until #12136 moved it to
# server_args _handle_attention_backend_compatibility, "# AMD platforms backends": `if self.attention_backend ==
# "aiter": if model_config.context_len > 8192: self.mem_fraction_static *= 0.85`; 0.90 on main between #12136 and #12317,
# 2025-10-25 to -29, in no release). aiter is SGLang's default attention on ROCm (_get_default_attn_backend: `elif
# is_hip(): return "aiter"` for an MHA model; an MLA model gets it only with 16 or 128 KV heads a GPU, else triton)
AITER_FACTOR, AITER_CTX, AITER_FROM = 0.85, 8192, (0, 4, 7)


def aiter_factor(spec, ctx, tp: int, gpu_name, version, backend=None) -> float:
    """SGLang's cut of --mem-fraction-static for the aiter attention backend at a context above 8192 (1.0 otherwise):
    backend as --attention-backend gives it, or (None) SGLang's pick, aiter on a ROCm card (by its name); from v0.4.7
    (version None: the newest)."""
    if ctx <= AITER_CTX or (version is not None and not at_least(version, *AITER_FROM)):
        return 1.0
    if backend is not None:
        return AITER_FACTOR if str(backend).strip().lower() == "aiter" else 1.0
    g = str(gpu_name or "")
    if not (ROCM_CARD.search(g) and not CUDA_CARD.search(g)):
        return 1.0
    if spec.mla and (spec.n_kv_heads // max(tp, 1)) not in (16, 128):
        return 1.0  # SGLang's default for this MLA model on ROCm is triton
    return AITER_FACTOR


def vlm_factor(vision: dict | None) -> float:
    """adjust_mem_fraction_for_vlm: the share a vision tower's ViT takes off the default fraction (1.0 without one)."""
    if not vision:
        return 1.0
    layers, hidden = vision.get("num_hidden_layers") or 24, vision.get("hidden_size") or 1024
    ratio = layers * hidden ** 2 / (24 * 1024 ** 2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def default_mfs(tp: int, gpu_mib: float | None = None, version=None, pp: int = 1, dp_attention: int = 1) -> float:
    """SGLang's --mem-fraction-static when none is given: the 0.4 table by TP, or (with the card's capacity and a
    version from MFS_BY_CARD on; None = the newest) the reserve its version computes from the card. dp_attention: the
    --dp of --enable-dp-attention, whose padding the #10975 reserve adds (DP_ATTENTION_RESERVE)."""
    if gpu_mib is None or (version is not None and not at_least(version, *MFS_BY_CARD)):
        return next(f for n, f in DEFAULT_MFS if tp >= n)
    par = tp * pp
    if version is not None and not at_least(version, *MFS_FORMULA):
        a, b = next((a, b) for lim, a, b in RESERVED_BY_CARD if lim is None or gpu_mib < lim)
        reserved = (a + par * b) * 1024
    else:
        chunk, bs_small, bs_large = next((c, s, g) for lim, c, s, g in PREFILL_GRAPH_BY_CARD
                                         if lim is None or gpu_mib < lim)
        bs = bs_small if tp < 4 else bs_large
        reserved = 512 + 1.5 * max(chunk, 2048) + 2 * bs + par / 8 * 1024
        if dp_attention > 1:
            reserved += sum(mib * bs * dp_attention for above, mib in DP_ATTENTION_RESERVE if bs > above)
        if gpu_mib > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
    return round((gpu_mib - reserved) / gpu_mib, 3)


# model_config.is_hybrid_swa_model (0.5.x): the architectures whose sliding layers get their own, smaller pool; a
# sliding layer of any other model is sized like a full one. Gemma 4 12B (gemma4_unified,
# Gemma4UnifiedForConditionalGeneration) is one: batch 55's 0.5.12 runs of it (mattbucci's 3090 A1 ladder) print "Use
# sliding window memory pool. full_layer_tokens=102094, swa_layer_tokens=81675" at ratio 0.8, its 40 sliding layers'
# 8 KV heads x 256 in the smaller pool and its 8 global layers' one 512-wide head in the larger (kv-accuracy round 48).
# poolside's Laguna is one too: SGLang 0.5.16 on Laguna-S-2.1 prints 'Hybrid swa model' and "Use sliding window memory
# pool. full_layer_tokens=185897, swa_layer_tokens=148717", as llm_measured.json's row
# sglang-spark-laguna-s21-int4-dflash-gb10-64k-mf085 quotes sostrowsk/dgx-spark-local-llm sglang-int4.log at a30decd7
HYBRID_SWA_ARCHS = ("llama4", "llama4_text", "gpt_oss", "gemma4", "gemma4_text", "gemma4_unified", "gemma4_unified_text",
                    "laguna")
SWA_FULL_TOKENS_RATIO = 0.8  # server_args swa_full_tokens_ratio


def hybrid_swa(spec) -> bool:
    return spec.arch in HYBRID_SWA_ARCHS and SLIDING in spec.layer_kinds and not spec.mla


# DeepSeek sparse attention (NSA in SGLang): the profile's cell is the MLA latent (kv_lora_rank + qk_rope_head_dim
# values at the cache type's element size) and the Lightning Indexer's key with its scales (index_head_dim +
# index_head_dim // NSATokenToKVPool.quant_block_size (128) x 4 bytes, index_k_with_scale_buffer_dtype uint8), both
# over every layer: sgl-project/sglang python/sglang/srt/model_executor/pool_configurator.py,
# DefaultPoolConfigurator._compute_cell_size ("Add indexer KV cache overhead for NSA models (DeepSeek V3.2)"; the same
# lines in model_runner.profile_max_num_token before the configurator). The profile prices the latent at the cache
# type's element (576 bytes with fp8), not the pool's own fp8 record; max_total_num_tokens is what it prints.
def dsa_cell(spec, kv: str) -> int:
    """One token's bytes over the layers in SGLang's NSA profile: the latent at the cache type and the indexer key."""
    key = dsa_token_bytes(spec, 2)[1]  # the indexer key and its fp32 scales, whatever the cache type
    return int(len(spec.layer_kinds) * ((spec.kv_lora_rank + spec.qk_rope_head_dim) * KV_BYTES[kv] + key))


def cell_bytes(spec, kv: str, swa_ratio: float | None = None) -> float:
    """Bytes one token of max_total_num_tokens takes in SGLang's pool on this GPU: K and V for every attention layer,
    or the MLA latent (kv_lora_rank + qk_rope_head_dim, no padding), with DeepSeek sparse attention's indexer key
    (dsa_cell); for a hybrid sliding-window model the full layers plus swa_ratio (--swa-full-tokens-ratio) of the
    sliding layers, whose pool holds that share of the tokens."""
    if spec.index_head_dim:
        return dsa_cell(spec, kv)
    if not hybrid_swa(spec):
        return int(kv_cache(spec, 1, 1, kv, "vllm")["per_token"])
    by_kind = bytes_per_token(spec, kv)
    ratio = SWA_FULL_TOKENS_RATIO if swa_ratio is None else swa_ratio
    return by_kind[FULL] + ratio * by_kind[SLIDING]


MAMBA_FULL_MEMORY_RATIO = 0.9  # server_args mamba_full_memory_ratio
MAMBA_SSM_BYTES = 4            # server_args mamba_ssm_dtype "float32"
# request states a running request holds (model_runner_kv_cache_mixin _calculate_mamba_ratio, read at akao-amd/sglang
# cf772ab4 and in a 2026 copy of the KVCacheConfigurator): MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO 3 with the radix
# cache, + 2 (1 without the overlap scheduler) with --mamba-scheduler-strategy extra_buffer, 1 with --disable-radix-cache;
# server_args resolves "auto" to no_buffer there (3). _resolve_max_num_reqs caps the running requests at
# max_mamba_cache_size // ratio and raises when that is 0 ("Hybrid (mamba/linear-attention) state cache is too small to
# serve any requests. max_mamba_cache_size=4, mamba_ratio=5, resulting max_num_reqs=0", batch 98's 0.86 start, a build
# that took extra_buffer). Which release first raises was not read; an earlier one went on with no request slot.
MAMBA_REQ_RATIO = 3
# --mamba-ssm-dtype T (server_args mamba_ssm_dtype; kv's knob mamba_ssm_cache_dtype, vLLM's name for the same element):
# the temporal state's element. SGLang's server-args handler (handle_environment_variables) sets SGLANG_MAMBA_SSM_DTYPE
# from it when given, and configs/mamba_utils.py mamba2_state_dtype (sgl-project/sglang 02e208de) takes that variable
# over the config's mamba_ssm_dtype, from {float32, bfloat16, float16}; the conv state stays bf16
# (SGLANG_MAMBA_CONV_DTYPE). Checked on a printed pool (shun8686/for_debug tc/test_vlm_gdn_warmup.log, Qwen3.5-9B, TP 2,
# --mamba-ssm-dtype bfloat16): 'max_mamba_cache_size: 1521, ... ssm_state size: 17.84GB' is 1522 states x 24 DeltaNet
# layers x 16 x 128 x 128 x 2 bytes; at float32 it would be twice that and about 777 states. Which release first took
# the flag was not read: any version is planned with it.
SSM_STATE_BYTES = {"auto": None, "float32": 4, "bfloat16": 2, "float16": 2}


def ssm_state_bytes(name) -> int:
    """The temporal state's element bytes for --mamba-ssm-dtype `name` (None / "auto": float32, SGLang's default)."""
    key = str(name or "auto").lower()
    if key not in SSM_STATE_BYTES:
        raise UserError(f"--mamba-ssm-dtype (SGLang) must be one of {', '.join(SSM_STATE_BYTES)}, got {name!r}")
    return SSM_STATE_BYTES[key] or MAMBA_SSM_BYTES


def mamba_state_per_req(spec, ssm_bytes: int = MAMBA_SSM_BYTES) -> int:
    """mamba_cache_per_req on this GPU: every gated-DeltaNet or Mamba-2 layer's conv and temporal state (0 for other
    models), the temporal state in ssm_bytes (--mamba-ssm-dtype; float32 by default). Granite 4.0-H's Mamba-2 layers
    are paged the same way (sglang bench_one_batch on granite-4.0-h-micro: 'max_mamba_cache_size: 38, conv_state size:
    0.03GB, ssm_state size: 2.74GB' = 39 states x 36 layers x (3 x 4352 bf16 conv values, 64 x 64 x 128 fp32 state
    values))."""
    if not spec.linear_state:
        return 0
    conv, conv_b, ssm, _ = spec.linear_state
    return (spec.layer_kinds.count(LINEAR) + spec.layer_kinds.count(MAMBA)) * (conv * conv_b + ssm * ssm_bytes)


def evaluate(spec, ctx, kv, w_bytes, vram, tp: int, mfs: float, *, swa_ratio: float | None = None,
             mamba_cache: int | None = None, ssm_bytes: int = MAMBA_SSM_BYTES, free: int | None = None) -> dict:
    """swa_ratio: --swa-full-tokens-ratio (None: 0.8); mamba_cache: --max-mamba-cache-size (None: the ratio split);
    ssm_bytes: the temporal state's element (--mamba-ssm-dtype, ssm_state_bytes)."""
    cell = cell_bytes(spec, kv, swa_ratio)
    detail = dict(kv_cache(spec, ctx, 1, kv, "vllm", swa_full=True), layout="latent" if spec.mla else "heads")
    need = int(cell * ctx)
    detail.update(per_token=int(cell), total=need)
    if hybrid_swa(spec):  # one request of ctx in the full layers holds ratio x ctx sliding-pool tokens beside it
        ratio = SWA_FULL_TOKENS_RATIO if swa_ratio is None else swa_ratio
        detail.update(sliding_cells=int(ctx * ratio), sliding_layers=need - detail["full_layers"])
    out = {"kv": detail,
           "overhead": {"cuda_context": CUDA_CONTEXT, "nccl": NCCL if tp > 1 else 0}, "fits": None, "tokens": None}
    if not vram:
        out["total"] = int(w_bytes + need + CUDA_CONTEXT + out["overhead"]["nccl"])
        return out
    # (batch 107, after first sight) free0 is what the GPU has free once SGLang's context is up, not the card: another
    # process's memory (--free-gib: the free memory when SGLang starts) is out of it, and the pool with it
    # (profile_max_num_token: rest = available - total_gpu_memory x (1 - mem_fraction_static), total_gpu_memory the
    # min_per_gpu_memory init_torch_distributed read as free; model_runner_kv_cache_mixin.py)
    free0 = (vram if free is None else free) - CUDA_CONTEXT - out["overhead"]["nccl"]
    rest = mfs * free0 - w_bytes
    per_req = mamba_state_per_req(spec, ssm_bytes)
    if per_req and rest > 0:  # the recurrent-state pool first (handle_max_mamba_cache: the given size, or the ratio split)
        slots = (mamba_cache if mamba_cache is not None
                 else int(rest * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO) // per_req))
        out["mamba_slots"], out["mamba_pool"] = slots, slots * per_req
        out["mamba_reqs"] = slots // MAMBA_REQ_RATIO  # _resolve_max_num_reqs' cap; 0: SGLang refuses to start
        rest -= slots * per_req
    tokens = max(int(rest // cell), 0)
    if hybrid_swa(spec):
        ratio = SWA_FULL_TOKENS_RATIO if swa_ratio is None else swa_ratio
        out["swa_tokens"] = int(tokens * ratio)
    out.update(free0=int(free0), pool=int(max(rest, 0)), tokens=tokens, fits=bool(tokens > 0 and out.get("mamba_reqs") != 0),
               whole=tokens >= ctx,
               total=int(vram), budget=int(mfs * free0),
               mfs_needed=(w_bytes + need) / free0)
    return out


def fraction_text(x: float) -> str:
    """A --mem-fraction-static as the command prints it: at least 2 places, and as many more as it takes for SGLang's
    float() to read back the very fraction planned (0.767, not 0.77: the pool stated is the pool that command gets)."""
    for places in range(2, 18):
        text = f"{x:.{places}f}"
        if float(text) == x:
            return text
    return repr(float(x))


def plan(spec, ctx, kv, roles, vram, knobs, notes) -> dict:
    """The verdict and the flags for `python -m sglang.launch_server` (no layer offload, no search of other
    settings: the least --mem-fraction-static that holds one request is named instead)."""
    r, n = knobs.get("swa_full_tokens_ratio"), knobs.get("max_mamba_cache_size")
    if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r <= 1):
        raise UserError(f"--swa-full-tokens-ratio must be a share above 0 and at most 1, got {r!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise UserError(f"--max-mamba-cache-size must be a whole number of request states, at least 1, got {n!r}")
    if knobs.get("swa_full_tokens_ratio") is not None and not hybrid_swa(spec):
        raise UserError(f"--swa-full-tokens-ratio sizes SGLang's sliding-window pool of a hybrid model (Gemma 4, gpt-oss, "
                        f"Llama 4); {spec.name} has none (SGLang sizes its layers alike): drop it")
    for key, name in (("max_mamba_cache_size", "--max-mamba-cache-size"), ("mamba_ssm_cache_dtype", "--mamba-ssm-dtype")):
        if knobs.get(key) not in (None, "auto") and not mamba_state_per_req(spec):
            raise UserError(f"{name} sizes SGLang's recurrent-state pool of a DeltaNet / Mamba-2 hybrid; "
                            f"{spec.name} has no recurrent layers: drop it")
    ssm_bytes = ssm_state_bytes(knobs.get("mamba_ssm_cache_dtype"))
    tp = knobs.get("tensor_parallel_size") or 1
    mfs = knobs.get("mem_fraction_static")
    runner = 1.0  # the old model runner's factor on the fraction SGLang is given (RUNNER_VLM_FACTOR)
    if not mfs:
        version = parse_version(knobs.get("runtime_version"))
        dp_attn = (knobs.get("data_parallel_size") or 1) if knobs.get("dp_attention") else 1
        mfs = default_mfs(tp, vram / MiB if vram else None, version, dp_attention=dp_attn)
        if dp_attn > 1 and vram and version is not None and not at_least(version, *MFS_FORMULA):
            notes.append(f"--enable-dp-attention: this version's default --mem-fraction-static was not read for DP "
                         f"attention's reserve (read from sglang#10975, taken as {'.'.join(map(str, MFS_FORMULA))}); "
                         "give --mem-fraction-static from the log")
        if vram and (version is None or at_least(version, *MFS_BY_CARD)):
            vlm = 1.0 if "omni" in (spec.arch or "") else vlm_factor(spec.vision)  # an omni config nests it
            mfs *= vlm
            notes.append(f"--mem-fraction-static {mfs:.3f}: SGLang's default for a {vram / GiB:.0f} GiB card at TP {tp}"
                         + (f" with DP attention {dp_attn}" if dp_attn > 1 else "") + " "
                         f"({'its' if version is None else 'this version' + chr(39) + 's'} reserve for activations and "
                         "CUDA graphs, server_args _handle_gpu_memory_settings"
                         + (f"; x {vlm:.3f} for the vision tower, adjust_mem_fraction_for_vlm)" if vlm != 1.0 else ")"))
    version = parse_version(knobs.get("runtime_version"))
    if version is not None and not at_least(version, *MFS_BY_CARD) and spec.vision and "omni" not in (spec.arch or ""):
        runner = RUNNER_VLM_FACTOR
        notes.append(f"--mem-fraction-static {mfs * runner:.3f}: this version's model runner lowers the fraction for a "
                     f"multimodal model (x {RUNNER_VLM_FACTOR}, given or default); the command gives the fraction "
                     "before it")
    backend = knobs.get("attention_backend")
    aiter = aiter_factor(spec, ctx, tp, knobs.get("gpu_name"), version, backend)
    if aiter != 1.0:
        runner *= aiter
        notes.append(f"--mem-fraction-static {mfs * runner:.3f}: with the aiter attention backend ("
                     + ("--attention-backend aiter" if backend else f"SGLang's pick on {knobs.get('gpu_name')}")
                     + f") and a context above {AITER_CTX} SGLang multiplies the fraction by {AITER_FACTOR} (given or "
                     "default; server_args _handle_attention_backend_compatibility); the command gives the fraction "
                     "before it")
    asked, mfs = mfs, mfs * runner
    ev = evaluate(spec, ctx, kv, roles["total"], vram, tp, mfs, swa_ratio=knobs.get("swa_full_tokens_ratio"),
                  mamba_cache=knobs.get("max_mamba_cache_size"), ssm_bytes=ssm_bytes, free=knobs.get("free_memory"))
    if knobs.get("free_memory") is not None and vram:  # rev10 S3: say the pool follows the free memory given
        notes.append(f"the pool is sized from --free-gib {knobs['free_memory'] / GiB:g}, not the {vram / GiB:.2f} GiB card: "
                     f"{fmt_bytes(ev['free0'])} once SGLang's CUDA context" + (" and NCCL's buffers" if tp > 1 else "")
                     + f" are up, x --mem-fraction-static {mfs:.3f} = {fmt_bytes(ev['budget'])} for weights and KV pool")
    out = {"model": spec.summary(), "runtime": "sglang", "runtime_version": knobs.get("runtime_version"), "ctx": ctx,
           "parallel": 1, "kv_dtype": kv, "weights": int(roles["total"]), "weights_how": roles["how"],
           "weights_by_role": {k: roles[k] for k in ("embedding", "output", "blocks")},
           "kv_per_token": ev["kv"]["per_token"], "kv_total": ev["kv"]["total"], "kv_detail": ev["kv"],
           "overhead": ev["overhead"], "overhead_total": int(sum(ev["overhead"].values())), "total": ev["total"],
           "vram": int(vram) if vram else None, "budget": ev.get("budget"), "fits_as_requested": ev["fits"],
           "fits": ev["fits"], "max_ctx": None, "max_ctx_by_kv_dtype": {}, "flags": [], "autofit": [], "notes": notes}
    flags = [{"kind": "flag", "name": "--context-length", "value": str(ctx), "text": f"--context-length {ctx}",
              "reason": "longest request"}]
    if tp > 1:
        flags.append({"kind": "flag", "name": "--tp", "value": str(tp), "text": f"--tp {tp}",
                      "reason": "the GPUs these per-GPU figures are for"})
    if (knobs.get("data_parallel_size") or 1) > 1:  # runtimes/sglang_dp.py: DP attention only
        dp = knobs["data_parallel_size"]
        flags.append({"kind": "flag", "name": "--dp", "value": str(dp), "text": f"--dp {dp} --enable-dp-attention",
                      "reason": "the attention groups, each with its own pool of these figures"})
    for key, name in (("swa_full_tokens_ratio", "--swa-full-tokens-ratio"), ("max_mamba_cache_size", "--max-mamba-cache-size")):
        if knobs.get(key) is not None:
            flags.append({"kind": "flag", "name": name, "value": f"{knobs[key]:g}", "text": f"{name} {knobs[key]:g}",
                          "reason": "the pool split these figures are for"})
    if knobs.get("attention_backend"):
        name = str(knobs["attention_backend"]).strip().lower()
        flags.append({"kind": "flag", "name": "--attention-backend", "value": name, "text": f"--attention-backend {name}",
                      "reason": "the backend these figures are for (aiter above an 8192-token context cuts the fraction)"})
    ssm = str(knobs.get("mamba_ssm_cache_dtype") or "auto").lower()
    if ssm != "auto":  # SGLang's own name for the state's element (vLLM's is --mamba-ssm-cache-dtype)
        flags.append({"kind": "flag", "name": "--mamba-ssm-dtype", "value": ssm, "text": f"--mamba-ssm-dtype {ssm}",
                      "reason": "the recurrent state's element these figures are for"})
    if kv not in ("f16", "bf16", "f32"):  # the cache these figures are for (auto: the model's dtype)
        flags.append({"kind": "flag", "name": "--kv-cache-dtype", "value": kv, "text": f"--kv-cache-dtype {kv}",
                      "reason": "one byte per element (auto picks fp8_e4m3 itself for a checkpoint whose "
                                "kv_cache_quant_algo is FP8)"})
    if vram:
        out["kv_capacity_tokens"] = out["sglang_max_total_tokens"] = ev["tokens"]
        out["kv_capacity_bytes"] = ev["pool"]
        out["max_ctx"] = out["max_ctx_by_kv_dtype"][kv] = ev["tokens"]
        least = ev["mfs_needed"] / runner  # as the flag gives it (before the runner's factor)
        need = math.ceil(least * 100) / 100
        # the fraction the pool below is sized at (SGLang's default, or the user's) wherever it holds one request, the
        # least rounded up to 2 places only above it (a 0.847 default holding 0.841 printed 0.85 by 0.847's pool: ux57)
        use = (asked if least <= asked else need) if need < 0.95 else None
        if use is not None:
            whose = ("yours" if knobs.get("mem_fraction_static") else "SGLang's default for this card and version "
                     "(server_args _handle_gpu_memory_settings), the pool's") if use == asked else "raised"
            flags.append({"kind": "flag", "name": "--mem-fraction-static", "value": fraction_text(use),
                          "text": f"--mem-fraction-static {fraction_text(use)}",
                          "reason": f"static share for weights + KV pool, {whose}; one {ctx}-token request needs at "
                                    f"least {math.ceil(least * 1000) / 1000:.3f}"})
        notes.append(f"SGLang would allocate a pool of {ev['tokens']:,} tokens (max_total_num_tokens) at "
                     f"--mem-fraction-static {fraction_text(asked)}")
        if ev.get("mamba_slots") is not None and knobs.get("max_mamba_cache_size") is not None:
            notes.append(f"hybrid: {ev['mamba_slots']} request states of the recurrent (DeltaNet / Mamba-2) layers "
                         f"({fmt_bytes(ev['mamba_pool'])}, --max-mamba-cache-size) come out of the static share before "
                         "the KV pool")
        elif ev.get("mamba_slots") is not None:
            notes.append(f"hybrid: {ev['mamba_slots']} request states of the recurrent (DeltaNet / Mamba-2) layers ({fmt_bytes(ev['mamba_pool'])}, "
                         f"--mamba-full-memory-ratio {MAMBA_FULL_MEMORY_RATIO}) come out of the static share before the "
                         "KV pool; --max-mamba-cache-size N sets their number instead")
        if ev.get("swa_tokens") is not None:
            ratio = knobs.get("swa_full_tokens_ratio") or SWA_FULL_TOKENS_RATIO
            notes.append(f"sliding-window layers: their own pool of {ev['swa_tokens']:,} tokens (--swa-full-tokens-ratio "
                         f"{ratio:g} of the full layers' {ev['tokens']:,}); a request needs its window there, the rest of "
                         "its context in the full layers")
        if ev.get("mamba_reqs") == 0 and ev["tokens"] > 0:
            notes.append(f"the recurrent-state pool holds {ev['mamba_slots']} request states, fewer than the "
                         f"{MAMBA_REQ_RATIO} a running request takes (mamba_ratio): SGLang stops with 'Hybrid "
                         "(mamba/linear-attention) state cache is too small to serve any requests. "
                         f"max_mamba_cache_size={ev['mamba_slots']}, mamba_ratio={MAMBA_REQ_RATIO}, resulting "
                         "max_num_reqs=0' (a build that takes --mamba-scheduler-strategy extra_buffer needs 5; an older "
                         "release may start instead, with no request slot, and serve nothing); raise "
                         "--mem-fraction-static or --max-mamba-cache-size")
        elif ev.get("mamba_reqs"):
            notes.append(f"SGLang runs at most {ev['mamba_reqs']} requests at once (max_mamba_cache_size "
                         f"{ev['mamba_slots']} // mamba_ratio {MAMBA_REQ_RATIO}; 5 with extra_buffer), lowering "
                         "--max-running-requests to that")
        if not ev["tokens"]:
            notes.append("the weights leave no KV pool: SGLang stops with 'Not enough memory. Please try to increase "
                         "--mem-fraction-static'")
        elif ev["fits"] and not ev["whole"]:
            notes.append(f"SGLang starts, but a request's input is capped at {ev['tokens'] - 1:,} tokens, not {ctx:,} "
                         "(the pool); " + ("raise --mem-fraction-static" if use else "an fp8 cache or more GPUs hold more"))
    if hybrid_swa(spec):  # review 2: the row is the pools' price of ctx tokens, not one request's own need
        ratio = knobs.get("swa_full_tokens_ratio") or SWA_FULL_TOKENS_RATIO
        notes.append(f"'KV, one request' here is what {ctx:,} tokens cost across the two pools as SGLang sizes them (full "
                     f"layers + {ratio:g} x sliding layers a token, set_num_tokens_hybrid_swa), not one request's own "
                     f"cache: a request keeps its {ctx:,} tokens in the full pool and in the sliding pool at least its "
                     f"{spec.sliding_window:,}-token window, at most all {ctx:,}; how far SGLang trims that part to the "
                     "window (its SWA eviction) was not read, and the verdict checks the full pool's tokens only")
    out["flags"] = flags
    out["command"] = "python -m sglang.launch_server --model-path MODEL " + " ".join(f["text"] for f in flags)
    _context_limit(out, spec, ctx, parse_version(knobs.get("runtime_version")), notes)
    return out


# SGLang's ModelConfig._derive_context_length (python/sglang/srt/configs/model_config.py, read at sgl-project/sglang
# 001adf56, 2026 main; no release read): a --context-length above get_context_length(hf_text_config) raises "User-specified
# context_length (N) is greater than the derived context_length (M). ... To allow overriding this maximum, set the env
# var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"; with the variable set it logs that text as a warning and runs. With a
# --runtime-version the refusal is a note, not the verdict: batch 17's 0.4.3.post4 row started QwQ-32B at
# context_len=131072 above its 40,960. The check came with sgl-project/sglang#1778 ("check user-specified model_max_len
# with hf derived max_model_len", BBuf, opened 2024-10-24, merged; read in its thread, not its diff): before it SGLang
# took a longer --context-length as given. Every release from 0.4.0 (December 2024) is later, so that run had the
# variable set (kv cannot see the environment); which 0.3.x release first carried the check was not read.
OVERRIDE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
CHECK_PR = "sgl-project/sglang#1778, merged after 2024-10-24"
CHECK_BY = (0, 4, 0)  # the first release certainly after CHECK_PR; 0.3.x releases of late 2024 may carry it too


def _context_limit(out, spec, ctx, version, notes) -> None:
    """A --context-length above the model's derived length (spec.sglang_max_len, else max_ctx): SGLang refuses it
    unless OVERRIDE_ENV=1; the verdict is the refusal (a given version: a note), the command sets the variable (the
    figures are that run's), and no largest context above the limit is stated (the pool may hold more tokens than one
    request may have)."""
    limit = spec.sglang_max_len or spec.max_ctx
    if not limit:
        return
    out["context_limit"] = limit
    if out.get("max_ctx_by_kv_dtype"):  # a pool above the limit is not a context: one request stops at the limit
        out["max_ctx"] = min(out["max_ctx"], limit)
        out["max_ctx_by_kv_dtype"] = {k: min(v, limit) for k, v in out["max_ctx_by_kv_dtype"].items()}
    if ctx <= limit:
        return
    quote = (f"(\"User-specified context_length ({ctx}) is greater than the derived context_length ({limit})\") unless "
             f"{OVERRIDE_ENV}=1 is set")
    tail = (f"positions past {limit:,} may then give wrong output or CUDA errors (SGLang's own warning); --ctx {limit} or "
            "less starts without it, and a rope_scaling (YaRN) in config.json raises the limit")
    if version is not None:  # a release: said, not the verdict (a run that started there had the variable set)
        v = ".".join(map(str, version))
        out["context_check"] = at_least(version, *CHECK_BY)  # the release has it: the verdict line says so
        has = (f"{v} has the check ({CHECK_PR}, before {'.'.join(map(str, CHECK_BY))}): it refuses to start {quote} "
               "(a run that starts there has the variable set)" if at_least(version, *CHECK_BY) else
               f"since {CHECK_PR} SGLang refuses to start {quote}; whether {v} has that check was not read (before "
               "it SGLang took the length as given)")
        notes.append(f"--context-length {ctx} is above the {limit:,} tokens SGLang derives from the model's config.json: "
                     f"{has}; {tail}")
        return
    refused = (f"--context-length {ctx} is above the {limit:,} tokens SGLang derives from the model's config.json: it "
               f"refuses to start {quote}, as the command above does; {tail}")
    notes.append(refused)
    out.update(refused=refused, fits_with_override=out["fits"], fits=False, fits_as_requested=False)
    out["command"] = f"{OVERRIDE_ENV}=1 " + out["command"]
