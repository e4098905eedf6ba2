"""vLLM: what it reserves, by version (vllm/worker/worker.py for V0, vllm/v1/worker/gpu_worker.py and
vllm/v1/core/kv_cache_utils.py for V1), and its own fits rule.

  KV pool = ceil(total x gpu_memory_utilization) - weights - activation peak - non-torch memory
            [- CUDA graph estimate, from v0.20.0: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1; before,
             graphs were captured after the KV cache was allocated, outside the share (PR #30515 added the
             estimate off by default; vLLM 0.27's log: "CUDA graph memory profiling is enabled (default since
             v0.21.0)", a date 0.20.x prints too: GRAPHS_IN_BUDGET)]
  activation peak (vllm_activation.py): the larger of one profile forward of max_num_batched_tokens and the
  sampler on max_num_seqs rows, whose size depends on the top-k/top-p implementation (the `vllm_sampler` knob:
  native or flashinfer);
  rows (both engines run them one after the other: the forward's intermediates are freed before the sampler)
  non-torch memory: 0.35 GiB in 0.6.x logs (vllm-project/vllm#10517), 0.03-0.07 GiB from 0.7 on; about 0.25 GiB
  a worker with tensor parallelism (its NCCL buffers); more on Hopper, and about 2.1 GiB with tensor parallelism
  on an NVSwitch Hopper/Blackwell system (NCCL's NVLS buffers): vllm_overheads.py non_torch(), with the CUDA graphs
  V1 before 0.9.1 counts the CUDA context (and other processes' memory) as non-torch memory inside the share; V1
  before 0.8 profiles the logits, not the sampler (V1_CONTEXT_OUTSIDE, V1_SAMPLER_PROFILED)
  pipeline parallelism (vllm_pipeline.py): each stage holds its layers (get_pp_indices), the first the embedding,
  the last the head and the sampler; the pool is sized per stage and every stage keeps the smallest stage's block count
  sliding-window layers: kept in full before 0.9.1 (V0 and the first V1 gave every layer max_model_len; the
  hybrid KV cache manager that sizes them by the window is on by default from 0.9.1 in V1 on CUDA/ROCm, SWA_SIZED),
  though V1's start check sizes them by the window from 0.8.3 (SWA_CHECKED)
  engine: V1 by default from 0.8 (VLLM_USE_V1=0 forces V0 until 0.10; VLLM_USE_V1=1 gave V1 in 0.7):
  the `vllm_engine` knob
  fits: one request of max_model_len must fit the pool (V0: max_model_len <= GPU blocks x 16; V1:
        _check_enough_kv_cache_memory); the rest of the pool is concurrency, printed as
        "Maximum concurrency for N tokens per request: X" (V0: tokens / N; V1: blocks / ceil(N / 16))
  auto-fit: --kv-cache-memory BYTES (v0.10.1, PR #21489); --max-model-len auto (v0.12, PR #29431).
  MLA (vllm_mla.py): the latent cache's layout by version and the attention weight copies vLLM adds."""
import math
import re

from ...units import GiB, MiB
from ..cache import (BLOCK, XPU_GDN_BLOCK, draft_token_bytes, kv_cache, vllm_hybrid_request_bytes, vllm_kv_tokens,
                     vllm_layout, vllm_pool, with_draft_layers)
from ..cards import compute_capability, unified_by_name
from . import PRE, at_least
from .vllm_hybrid import with_cache_mode
from .vllm_mla import mla_layout
from .vllm_overheads import (NVLS_SETTINGS, graph_memory, graph_profile_blocks, graph_profile_bytes, graph_profile_seqs,
                             non_torch)
from .vllm_activation import (SAMPLER_COPIES_NATIVE, activation, cutlass_fp4, encoder_peak, mm_dummy,  # noqa: F401
                              mm_encoder_tp_mode, mm_limit_json, mm_limits, moe_backend_name,
                              qwen_vl_video_grid_t)

CUDA_CONTEXT = 512 * MiB      # PyTorch context + kernels, outside the --gpu-memory-utilization share
DEFAULT_UTIL = 0.90
# ...and 0.92 from the change that put the CUDA-graph estimate inside the share by default (vllm-project/vllm#38284,
# "[Startup][UX] Enable CUDAGraph memory profiling by default": it raised CacheConfig.gpu_memory_utilization's default
# to 0.92 with it; config/cache.py reads `Field(default=0.92, gt=0, le=1)` at 002f10e0): the same gate as
# graphs_in_budget (GRAPHS_IN_BUDGET). A run that passes no --gpu-memory-utilization, or passes 0.92, prints none among
# its non-default args there (club-3090#295 and #487 on the compose's v0.22.0, batch 69's round)
DEFAULT_UTIL_GRAPHS = 0.92
MAX_UTIL = 0.95
V1 = (0, 8)
# the first release with vllm#38284 is 0.20.0, read in PyPI's source archives (task ellm42): vllm-0.20.0.tar.gz has
# config/cache.py:66 `gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)` and envs.py's
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default "1", as do 0.20.1, 0.20.2, 0.21.0, 0.23.0, 0.24.0, 0.25.1, 0.26.0, 0.27.0;
# vllm-0.19.1.tar.gz (and 0.19.0) still read `Field(default=0.9, ...)` and "0". The log line's "default since v0.21.0"
# is the PR's plan, printed by 0.20.x as well (vllm#46462's 0.20.2 image; club-3090's docs/CLIFFS.md lists #38284 in its
# "v0.20 baseline checklist"). A main-branch nightly after 0.20.0 (0.20.1rc1.devN, 0.20.2rc1.devN) carries it; the
# 0.19.2rc1.devN nightlies before 0.20.0 may or may not (the merge commit was not placed among them): not taken
GRAPHS_IN_BUDGET = (0, 20)
KV_CACHE_MEMORY = (0, 10, 1)
MAX_MODEL_LEN_AUTO = (0, 12)
# V1's gpu_worker before vllm#19312 ("V1's memory profiling incorrectly counts memory used by other processes as
# non_torch_allocations", June 2025) added to the torch peak every byte the device had in use that torch had not
# allocated (mem_get_info's used - allocated_bytes.all.current): the process's own CUDA context among them, so the
# context sits inside the --gpu-memory-utilization share there. 0.9.1 is taken as the first release with the fix
# (vllm-solodba's 0.9.1 refusal prints available KV memory that the later form gives exactly); 0.8.5 still has the
# device-wide form (its "assert self.init_gpu_memory > free_gpu_memory").
V1_CONTEXT_OUTSIDE = (0, 9, 1)
SAMPLERS = ("native", "flashinfer")
# chunked prefill on by default above 32K tokens (vllm-project/vllm#6666, July 2024, first in 0.5.4): before it V0
# profiled one prompt of max_model_len whatever its length
CHUNKED_LONG_CONTEXT = (0, 5, 4)
# the hybrid KV cache manager (sliding layers sized by the window): on by default from 0.9.1, where VllmConfig.__post_init__
# disables it only off CUDA/ROCm (or with a KV transfer / KV events config) and get_kv_cache_config unifies the specs
# only when it is disabled; 0.9.0 unifies them always (v1/core/kv_cache_utils.py and config.py, 0.9.0 and 0.9.1 sdists).
# Before 0.10 it is taken off for V0 and on Intel XPU (not CUDA/ROCm); from 0.10 as before
SWA_SIZED = (0, 9, 1)
SWA_SIZED_ANY_PLATFORM = (0, 10)
# before it, V1's start check already sizes a sliding layer by its window: get_kv_cache_config runs
# check_enough_kv_cache_memory on the model's own specs (SlidingWindowSpec.max_memory_usage_bytes: cdiv(min(window - 1
# + max_num_batched_tokens, max_model_len), 16) + 1 blocks) and only then unify_hybrid_kv_cache_specs makes every layer
# a full one for the pool (v1/core/kv_cache_utils.py, read at 0.8.3, 0.8.4, 0.9.0, 0.9.2); so a Gemma 3 pool of less
# than one max_model_len starts, at a concurrency below 1x. 0.8.0 has no SlidingWindowSpec (every layer's
# bytes_for_tokens(max_model_len)); 0.8.1 and 0.8.2 are not read: taken as 0.8.0
SWA_CHECKED = (0, 8, 3)
# "GPU KV cache size" printed as max concurrency x max_model_len instead of blocks // groups x the smallest block
# (vllm-project/vllm#40691, #38364): a gate by observation - 0.19.0 prints the old figure (Gemma-4-31B, 10,432 tokens
# with 3.58x at 4096), so does the nightly 0.20.1rc1.dev16 (Qwen3.6-27B at TP 4, club-3090 e3f8f020: 483,200 tokens
# with 6.77x at 262,144); 0.22.0 prints the new one (Gemma-4-26B-A4B at 42,000: 42,993 tokens, no whole number of
# 16-token blocks, club-3090 pr334), so do 0.23.1rc1.dev301 (Qwen3.6-27B NVFP4 fp8 at 200,000: 223,880 = 1.12x,
# neko-legends), 0.24.0 and 0.27.1 (Qwen3.6-35B-A3B 567,978 = 4.33x x 131072), and so does 0.20.1 final (club-3090#91,
# 'Initializing a V1 LLM engine (v0.20.1)': 619,479 tokens = 2.36x x 262,144 for Qwen3.6-27B with MTP 3, no whole number
# of its 1600-token blocks), the first release after that nightly (kv-accuracy round 49). The change is vllm#41069
# (e68fa1b90, 2026-04-28: _report_kv_cache_config's num_tokens = int(max_concurrency * max_model_len)), 31 commits past
# the 0.20.1rc1 nightlies' base (a749a33d8, dev91, has it 60 commits down): dev16 prints the old figure, dev91 the new
# (Nemotron-3-Nano NVFP4: 1,206,303 tokens = 4.71x x 256,000; kv-accuracy round 86)
TOKENS_FROM_CONCURRENCY = (0, 20, 0, PRE, 1, 31)
# A sliding-window group keeps a request's pages for every batch still in flight: from 0.26.0
# SlidingWindowSpec.max_admission_blocks_per_request takes VllmConfig.max_in_flight_tokens = max_concurrent_batches x
# max_num_batched_tokens (cdiv(min(window - 1 + in-flight, max_model_len), block) + 1 blocks), max_concurrent_batches
# being 2 under async scheduling (vLLM's default) at pipeline parallel 1, pp + 1 with the V2 model runner (which 0.30
# logs using) at pp > 1 (V2_RUNNER_PP; 0.26-0.29 at pp > 1 are taken at 2, the V1 executor's figure under async
# scheduling: not read against a run, and --no-async-scheduling, 1 / pp, has no knob here): out-of-window blocks are freed on the processed-token basis (vllm-project/vllm#47728), and
# tenstorrent/tt-xla#5908 reads the 0.26.0 uplift as the rename of the argument from max_num_batched_tokens that hid
# the factor. Gemma-4-E2B's pools on 0.29.0 (T4) and 0.30.0 (L4) hold 145 blocks of 32 tokens a request in each
# sliding layer, (511 + 2 x 2048) / 32 + 1, not 81 (xbill9/gemma4-dev; kv-accuracy round 80); 0.25.1's GB10 runs of
# Gemma-4-26B-A4B are exact with one batch (round 78). No version (a nightly, a commit, an untagged build without a
# stated base) is the newest release here as in every gate: the dataset's untagged builds that print one batch's pools
# (jethac's June 2026 GB10 forks and P520 wheel) carry the release they are based on (task dsv4d)
IN_FLIGHT_SWA = (0, 26)
# the first release taken to run the V2 model runner, whose pipeline keeps pp + 1 batches in flight (IN_FLIGHT_SWA)
V2_RUNNER_PP = (0, 30)
# Llama 4's chunked local attention under the hybrid manager was switched off by default after 0.10.0
# (vllm-project/vllm#21761, "latency regression": VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0, every layer
# then keeps a full cache) and back on by #29627 (late 2025; taken as 0.13, the release is not pinned)
CHUNKED_HYBRID_OFF = ((0, 10, 1), (0, 13))
# A model with Mamba-like state layers (gated DeltaNet: MambaSpec groups) and full decode CUDA graphs refuses to start
# when max_num_seqs exceeds the pool's blocks (gpu_model_runner _check_and_update_cudagraph_mode: "max_num_seqs (N)
# exceeds available Mamba cache blocks (M)", kv_cache_config.num_blocks; vllm-project/vllm#34094; before it the
# capture sizes were capped silently). A gate by observation: 0.17.1 starts, 0.20.0 refuses (NeMo-RL's A/B of the
# bump); 0.18-0.19 unseen
MAMBA_SEQS_CHECKED = (0, 20)


def pre_ampere(gpu_name) -> bool:
    """A CUDA card below compute capability 8.0 (Turing, Volta, Pascal and older), by cards.COMPUTE_CAPABILITY; a card
    the table lacks is not taken for one."""
    cc = compute_capability(gpu_name)
    return cc is not None and cc[0] < 8


V1_EVERYWHERE = (0, 10)
# V0's executor prints its blocks under the platform's name: "# GPU blocks: N" in 0.6.x logs, "# CUDA blocks: N" (the
# dispatch key, executor_base initialize_cache) in the 0.7.1 and 0.7.2 logs; then "Maximum concurrency for L tokens
# per request" from the whole pool, num_gpu_blocks x block_size / max_model_len
V0_CUDA_BLOCKS = (0, 7)
# V1's worker refuses a share above the memory free when it starts (gpu_worker init_device: init_snapshot.free_memory
# < total x gpu_memory_utilization): "Free memory on device (F/T GiB) on startup is less than desired GPU memory
# utilization (U, R GiB)", free measured after the worker made its own CUDA context. Taken from 0.9.1, where other
# processes' memory left the share (V1_CONTEXT_OUTSIDE); the check's first release is not read here
FREE_CHECKED = V1_CONTEXT_OUTSIDE
BNB_FORMATS = ("bnb-4bit", "nf4")
# "unsloth": Unsloth's fast_inference starts vLLM's offline engine itself and patches its bitsandbytes loader
ENTRYPOINTS = ("serve", "llm", "unsloth")
# a card whose NVML has no memory figure: get_batch_defaults' current_platform.get_device_total_memory() raises
# (nvmlDeviceGetMemoryInfo NotSupported on the GB10's unified memory), its bare except takes device_memory = 0, and
# the small defaults follow on a 121.63 GiB card (vLLM 0.25.1 on a DGX Spark prints "Chunked prefill is enabled with
# max_num_batched_tokens=2048" for Qwen3.6-35B-A3B and raises Gemma 4's from 2048: sostrowsk/dgx-spark-local-llm)
# (cards.UNIFIED: the devices whose memory is the host's)
# a multimodal prefix-LM (Gemma 4: text_config.use_bidirectional_attention "vision") runs with chunked multimodal input
# off, so engine/arg_utils.py raises a default max_num_batched_tokens to its largest item ("Raising
# max_num_batched_tokens from 2048 to 2496 to accommodate 'video' input", 0.25.1): gemma4_mm.py's video, 32 frames of
# 70 soft tokens + 2 + 6 (_VIDEO_MAX_FRAMES, _VIDEO_MAX_SOFT_TOKENS); the first release doing so is not read
# (spec.mm_prefix_lm). Gemma 4 E2B / E4B leave use_bidirectional_attention unset (their image tokens attend causally)
# and are no prefix-LM: vLLM 0.30.0 keeps E2B's 2048 with its towers loaded ('compile_ranges_endpoints': [2048],
# 'Compiling a graph for compile range (1, 2048)', no 'Raising' line) while its encoder cache still takes the
# 2496-token video budget (xbill9/gemma4-dev gpu-vllm-g6-2b-w4a16/.../vllm-engine.log; kv-accuracy round 80)
GEMMA4_VIDEO_ITEM = 32 * (70 + 2 + 6)
MM_PREFIX_FLOOR = (0, 25, 1)
BNB_IN_V1 = (0, 9)       # V1 runs on compute 7.x and serves GGUF from 0.10 (V0 was removed in 0.11)


# --tensor-parallel-size N: each GPU holds 1/N of the attention heads (a KV head is replicated when N exceeds the
# KV heads: max(1, kv_heads // N); an MLA latent is not split), of the MLP and expert columns and of the vocabulary-
# parallel embedding and head. vLLM profiles every GPU alone and sizes its KV pool from that GPU's share; "GPU KV
# cache size" counts tokens in one GPU's pool (each token stored for that GPU's heads). The sampler still samples
# over the whole vocabulary on each GPU (dennislee22/vLLM-benchmarking: Qwen2-7B at TP 2 keeps the single-GPU
# sampler's peak, 0.5-1.4 GiB).
def per_rank(spec, tp: int):
    """The model as one of `tp` tensor-parallel GPUs sees it (for the KV cache and the activation peak)."""
    if tp <= 1:
        return spec
    import dataclasses
    kv = spec.n_kv_heads if spec.mla else max(1, spec.n_kv_heads // tp)
    heads = spec.layer_kv_heads or [spec.n_kv_heads] * spec.n_layers  # each layer's KV heads split or replicated
    elems = ([e * max(1, h // tp) // h for e, h in zip(spec.layer_kv_elems, heads)]
             if spec.layer_kv_elems and not spec.mla else spec.layer_kv_elems)
    # a gated-DeltaNet layer's state is split by its heads (conv channels and value heads / tp)
    state = spec.linear_state and (spec.linear_state[0] // tp, spec.linear_state[1], spec.linear_state[2] // tp,
                                   spec.linear_state[3])
    return dataclasses.replace(
        spec, n_heads=max(1, spec.n_heads // tp), n_kv_heads=kv, layer_kv_elems=elems,
        layer_kv_heads=spec.layer_kv_heads and [max(1, h // tp) for h in spec.layer_kv_heads], linear_state=state,
        intermediate=-(-spec.intermediate // tp), moe_intermediate=-(-spec.moe_intermediate // tp),
        recurrent_state_per_seq=spec.recurrent_state_per_seq // tp, notes=list(spec.notes))


def v0_fallback(version, knobs) -> str | None:
    """Why vLLM 0.8-0.9 would run its V0 engine although V1 is the default ("Compute Capability < 8.0 is not
    supported by the V1 Engine. Falling back to V0."; GGUF checkpoints were V0-only), or None."""
    if not at_least(version, *V1) or at_least(version, *V1_EVERYWHERE):
        return None
    if pre_ampere(knobs.get("gpu_name")):
        return "compute capability below 8.0"
    from ..weights import GGUF_BPW
    if str(knobs.get("weights_format") or "").upper() in GGUF_BPW and str(knobs.get("weights_format")).upper() not in (
            "F16", "BF16", "F32"):
        return "a GGUF checkpoint"
    # "--quantization bitsandbytes is not supported by the V1 Engine. Falling back to V0" (0.8: unslothai/unsloth#2102
    # on 0.8.0); 0.9.2 serves bitsandbytes with V1 (johnson7788/RLDecisionAgent docs/VL/Error.md)
    if str(knobs.get("weights_format") or "").lower() in BNB_FORMATS and not at_least(version, *BNB_IN_V1):
        return "bitsandbytes quantization"
    return None


def engine(version, knobs) -> tuple:
    """(v1, why-not-the-default or None). VLLM_USE_V1 (the `vllm_engine` knob: "v0" or "v1") overrides the
    version's default until V0 was removed in 0.11; otherwise 0.8-0.9 fall back to V0 where V1 could not run."""
    asked = str(knobs.get("vllm_engine") or "").lower()
    if asked not in ("", "v0", "v1"):
        from ...errors import UserError
        raise UserError(f"--vllm-engine must be v0 or v1, got {knobs.get('vllm_engine')!r}")
    if asked == "v0" and version is None:  # the newest vLLM has no V0: planning V1 would answer another question
        from ...errors import UserError
        raise UserError("--vllm-engine v0 needs --runtime-version: V0 was removed in vLLM 0.11, so the newest release "
                        "runs V1; give the release you run (e.g. 0.8.4)")
    if asked == "v1" or (asked == "v0" and at_least(version, 0, 11)):
        return True, ("VLLM_USE_V1=1" if asked == "v1" and not at_least(version, *V1) else None)
    if asked == "v0":
        return False, "VLLM_USE_V1=0"
    fallback = v0_fallback(version, knobs)
    return at_least(version, *V1) and not fallback, fallback


def swa_slack(s) -> int:
    """Tokens a sliding layer keeps a request beyond window - 1: max_num_batched_tokens, from IN_FLIGHT_SWA (and the
    newest, no version) every batch in flight (VllmConfig.max_in_flight_tokens)."""
    if not s.get("v1", True) or not at_least(s["version"], *IN_FLIGHT_SWA):
        return s["max_batched"]
    pp = s.get("pp", 1)
    return (pp + 1 if pp > 1 and at_least(s["version"], *V2_RUNNER_PP) else 2) * s["max_batched"]


def prefix_lm_floor(spec, version, knobs, batched: int) -> int:
    """A default max_num_batched_tokens raised to a multimodal prefix-LM's largest item (GEMMA4_VIDEO_ITEM)."""
    if (knobs.get("max_num_batched_tokens") or not spec.arch.startswith("gemma4") or not spec.vision
            or not spec.mm_prefix_lm or not at_least(version, *MM_PREFIX_FLOOR)):
        return batched
    return max(batched, GEMMA4_VIDEO_ITEM)


def graphs_in_budget(v) -> bool:
    """vLLM subtracts its CUDA-graph estimate from the share before sizing the pool: from 0.20.0 (GRAPHS_IN_BUDGET,
    vllm#38284), so in the main-branch nightlies after it too (0.20.1rc1.devN sorts after 0.20.0)."""
    return at_least(v, *GRAPHS_IN_BUDGET)


def default_util(version) -> float:
    """vLLM's own --gpu-memory-utilization when none is given: 0.92 where it subtracts its CUDA-graph estimate from the
    share (DEFAULT_UTIL_GRAPHS; vllm#38284 did both, first released in 0.20.0), else 0.90. The one rule for kv's plan,
    its printed command (flags.py) and the OOM advice (advise.py)."""
    return DEFAULT_UTIL_GRAPHS if graphs_in_budget(version) else DEFAULT_UTIL


def settings(version, vram, ctx, knobs) -> dict:
    # vLLM's larger defaults (8192 batched tokens, 1024 sequences) are for GPUs of 70 GiB or more that are not an
    # A100 (engine/arg_utils.py, _set_default_args_v1: `device_memory >= 70 GiB and "a100" not in device_name`)
    name = str(knobs.get("gpu_name") or "")
    big = (vram or 0) >= 70 * GiB and "a100" not in name.lower() and not unified_by_name(name)
    v1, fallback = engine(version, knobs)
    entry = str(knobs.get("vllm_entrypoint") or "serve").lower()
    if entry not in ENTRYPOINTS:
        from ...errors import UserError
        raise UserError(f"--vllm-entrypoint must be serve, llm or unsloth, got {knobs.get('vllm_entrypoint')!r}")
    if knobs.get("max_num_batched_tokens"):
        batched = knobs["max_num_batched_tokens"]
    elif v1:
        # the offline LLM() class takes a larger chunk than `vllm serve` (engine/arg_utils.py, per UsageContext:
        # LLM_CLASS 16384 / 8192 tokens, OPENAI_API_SERVER 8192 / 2048, on cards of >= 70 GiB / smaller ones; a
        # 0.9.2 LLM() log on a 24 GB card prints "Chunked prefill is enabled with max_num_batched_tokens=8192")
        offline = entry in ("llm", "unsloth") and at_least(version, *V1)
        batched = (16384 if offline else 8192) if big else (8192 if offline else 2048)
    else:  # V0 without chunked prefill profiles a whole max_model_len prompt (chunked prefill above 32k)
        batched = max(ctx, 2048) if ctx <= 32768 or not at_least(version, *CHUNKED_LONG_CONTEXT) else 2048
    # V0 keeps 256 on any card (engine/arg_utils.py _set_default_args_v0, 0.9.2)
    seqs = knobs.get("max_num_seqs") or (1024 if big and v1 and at_least(version, 0, 9) else 256)
    nvls = str(knobs.get("nccl_nvls") or "auto").lower()
    if nvls not in NVLS_SETTINGS:
        from ...errors import UserError
        raise UserError(f"--nccl-nvls must be on, off or auto, got {knobs.get('nccl_nvls')!r}")
    sampler = str(knobs.get("vllm_sampler") or "native").lower()
    if sampler not in SAMPLERS:
        from ...errors import UserError
        raise UserError(f"--vllm-sampler must be native or flashinfer, got {knobs.get('vllm_sampler')!r}")
    # vLLM's --enable-prefix-caching: with it a DeltaNet/Mamba state group keeps the pages vllm_hybrid.mamba_cache_mode
    # gives (two a request in "align", one per block of the context in "all", one where vLLM turns the flag off: 0.11.0
    # for every hybrid, Qwen3-Next / Qwen 3.5+ before 0.15.0), without it one (rev11 S5). vLLM turns it on by default for an attention-only decoder, where the pool does not depend on it,
    # and leaves it off for a hybrid model unless asked (ModelConfig.is_prefix_caching_supported: False for attn_type
    # "hybrid", vllm#23716 of 2025-08-27, before any release that serves a Qwen 3.5+ model; a 0.27.1 MTP-3 run of
    # Qwen3.8-27B with the flag not given prints enable_prefix_caching=False, batch 59). None: not given
    prefix = knobs.get("prefix_caching")
    return {"sampler": sampler, "util": knobs.get("gpu_memory_utilization") or default_util(version),
            "max_batched": batched, "max_seqs": seqs,
            "seqs_asked": knobs.get("max_num_seqs"), "batched_asked": knobs.get("max_num_batched_tokens"), "free": knobs.get("free_memory"),
            "prefix_caching": None if prefix is None else bool(prefix),
            "enforce_eager": bool(knobs.get("enforce_eager")), "kv_cache_memory": knobs.get("kv_cache_memory"),
            "version": version, "v1": v1, "v0_fallback": fallback, "tp": knobs.get("tensor_parallel_size") or 1,
            "dp": knobs.get("data_parallel_size") or 1,
            "pp": knobs.get("pipeline_parallel_size") or 1, "pp_partition": knobs.get("pp_layer_partition"),
            "gpu_name": knobs.get("gpu_name"), "weights_format": knobs.get("weights_format"), "nvls": NVLS_SETTINGS[nvls],
            "xpu": on_xpu(knobs), "rocm": on_rocm(knobs), "graph_given": knobs.get("cuda_graph_memory"),
            "engine_env": {"v0": "0", "v1": "1"}.get(str(knobs.get("vllm_engine") or "").lower()),
            "mla_disable": bool(knobs.get("mla_disable")), "moe_backend": moe_backend_name(knobs.get("moe_backend")),
            "mm_limits": mm_limits(knobs.get("limit_mm_per_prompt")), "mm_dummy": mm_dummy(knobs.get("limit_mm_per_prompt")),
            "mm_encoder_tp_mode": mm_encoder_tp_mode(knobs.get("mm_encoder_tp_mode"))}


# an Intel GPU: vLLM's XPU platform (its nightly images print the version as 0.26.1rc1.dev457+gc810e5ee9.xpu)
XPU_CARD = re.compile(r"\bintel\b|\barc\b|\bxpu\b", re.I)


def on_xpu(knobs) -> bool:
    """vLLM runs on Intel XPU: the card's name says Intel / Arc, or the version's local tag says xpu."""
    return bool(XPU_CARD.search(str(knobs.get("gpu_name") or ""))
                or str(knobs.get("runtime_version") or "").lower().split("+")[-1].split(".")[-1] == "xpu")


# an AMD GPU: vLLM's ROCm platform (its builds print the version as 0.19.1+rocm7.13)
ROCM_CARD = re.compile(r"\bamd\b|\bradeon\b|\binstinct\b|\bmi[1-4]\d\dx?\b", re.I)


def on_rocm(knobs) -> bool:
    """vLLM runs on ROCm: the card's name says AMD / Radeon / Instinct, or the version's local tag says rocm."""
    return bool(ROCM_CARD.search(str(knobs.get("gpu_name") or ""))
                or "rocm" in str(knobs.get("runtime_version") or "").lower().partition("+")[2])


def context_in_share(version, v1: bool) -> bool:
    """True where the profile counts the CUDA context inside the share (V1 before V1_CONTEXT_OUTSIDE)."""
    return bool(v1 and version is not None and not at_least(version, *V1_CONTEXT_OUTSIDE))


def evaluate(spec, ctx, kv, w_bytes, vram, s, roles=None) -> dict:
    """One GPU's figures; roles (plan's weights by role) split the model into pipeline stages when s["pp"] > 1."""
    spec, state_blocks = with_cache_mode(spec, s)  # prefix caching's state pages (vllm_hybrid.py)
    if s.get("pp", 1) > 1:
        from .vllm_pipeline import evaluate_pp  # it builds each stage with this function
        return evaluate_pp(spec, ctx, kv, roles, vram, s)
    v = s["version"]
    stage, n_stages = s.get("stage", (0, 1))
    first, last = stage == 0, stage == n_stages - 1
    hybrid = at_least(v, *SWA_SIZED) and (at_least(v, *SWA_SIZED_ANY_PLATFORM) or (s.get("v1", True) and not s.get("xpu")))
    # ^ the hybrid KV manager: sliding layers sized by their window, layer groups
    if (hybrid and spec.arch.startswith("llama4") and v is not None and at_least(v, *CHUNKED_HYBRID_OFF[0])
            and not at_least(v, *CHUNKED_HYBRID_OFF[1])):
        hybrid = False
    layout = mla_layout(spec, s)
    # a speculative drafter's layers share the pool (vllm_loader.mtp_drafter; an EAGLE head with the target's cache
    # spec, vllm_drafter.joins_target_group)
    drafter = s.get("draft_layers", 0)
    kv_spec = with_draft_layers(spec, drafter)
    slack = swa_slack(s)  # a sliding layer's tokens beyond its window (IN_FLIGHT_SWA)
    need = kv_cache(kv_spec, ctx, 1, kv, "vllm", max_batched=slack, swa_full=not hybrid, mla_cache=layout)
    sep = s.get("drafter")  # a separate drafter's layers: a kind of their own in the pool (runtimes/vllm_drafter.py)
    if sep:  # one request's cache in them: the whole length, or a sliding layer's window and batch
        cells = need["cells"] if not sep["window"] else min(math.ceil(min(sep["window"] - 1 + slack, ctx)
                                                                      / BLOCK) * BLOCK + BLOCK, need["cells"])
        need["drafter_layers"] = int(sep["layers"] * cells * draft_token_bytes(sep, kv))
        need["total"] += need["drafter_layers"]
    need["layout"] = layout
    need["hybrid_groups"] = hybrid  # vllm_kv_tokens' `hybrid` (the bench's block arithmetic)
    need["mamba_cache_all"] = spec.mamba_cache_all  # the spec's state paged per block (vllm_hybrid.with_cache_mode)
    # what the hybrid manager's pool arithmetic needs besides the memory (cache.vllm_pool; the bench's too)
    # "max_batched" is cache.vllm_pool's name for a sliding layer's tokens beyond its window: the in-flight slack
    # (swa_slack), which is max_num_batched_tokens only before IN_FLIGHT_SWA
    need["pool_args"] = {"mla_cache": layout, "hybrid": hybrid, "max_batched": slack,
                         "state_blocks": state_blocks,
                         "tokens_from_concurrency": at_least(v, *TOKENS_FROM_CONCURRENCY), "draft_layers": drafter,
                         "spec_tokens": s.get("spec_tokens", 0), "drafter": sep,
                         "gdn_block": XPU_GDN_BLOCK if s.get("xpu") else BLOCK}
    # what the V1 start check asks of the pool: the sliding layers by their window from SWA_CHECKED, the pool or not
    check = (kv_cache(kv_spec, ctx, 1, kv, "vllm", max_batched=slack, mla_cache=layout)["total"]
             if not hybrid and need["sliding_layers"] and at_least(v, *SWA_CHECKED) else need["total"])
    over = {"cuda_context": CUDA_CONTEXT,
            "activation_profile": activation(spec, s["max_batched"], s["max_seqs"], v, v1=s["v1"],
                                             sampler=s.get("sampler", "native"), first_stage=first, last_stage=last,
                                             max_model_len=ctx, weights_format=s.get("weights_format"),
                                             moe_backend=s.get("moe_backend"), aux_hidden=s.get("aux_hidden", 0),
                                             mm_limits=s.get("mm_limits"), mm_dummy=s.get("mm_dummy"),
                                             tp=s.get("tp", 1), tp_mode=s.get("mm_encoder_tp_mode", "weights")),
            "non_torch": non_torch(v, s.get("tp", 1), s.get("gpu_name"), last_stage=last, nvls=s.get("nvls")),
            "cuda_graphs": graph_memory(s)}
    # the estimate is measured and subtracted on CUDA only (gpu_worker: current_platform.is_cuda(); ROCm and XPU
    # capture their graphs after the pool, outside the share, as before 0.20)
    graphs_inside = graphs_in_budget(v) and not s.get("xpu") and not s.get("rocm")
    context_inside = context_in_share(v, s["v1"])
    inside = w_bytes + over["activation_profile"] + over["non_torch"] + (over["cuda_graphs"] if graphs_inside else 0)
    inside += over["cuda_context"] if context_inside else 0
    outside = (0 if context_inside else over["cuda_context"]) + (0 if graphs_inside else over["cuda_graphs"])
    out = {"kv": need, "kv_check_bytes": int(check), "overhead": over, "gpu_weights": w_bytes, "graphs_inside": graphs_inside,
           "context_inside": context_inside,
           "total": int(inside + need["total"] + outside), "budget": None, "fits": None, "util_needed": None}
    if not vram:
        return out
    budget = math.ceil(s["util"] * vram)
    pool = s["kv_cache_memory"] if s["kv_cache_memory"] else budget - inside
    if sep and not s["v1"]:
        from ...errors import UserError
        raise UserError("a separate drafter on vLLM's V0 engine: its cache is not modelled (V1 gives it pages of the pool)")
    grouped = vllm_pool(spec, pool, kv, ctx, **need["pool_args"]) if s["v1"] else None
    tokens = grouped["tokens"] if grouped else vllm_kv_tokens(kv_spec, pool, kv, layout, hybrid=hybrid)
    blocks = tokens // BLOCK
    per_req_blocks = math.ceil(ctx / BLOCK)
    if grouped and spec.linear_state:
        # attention and DeltaNet state share the pool's pages: one request needs its blocks of every group
        starts, conc = grouped["concurrency"] >= 1, grouped["concurrency"]
        starts = mamba_check(out, grouped["blocks"], s) and starts
    elif grouped and spec.dsv4:  # DeepSeek-V4's groups (deepseek_v4.py): the start check and vLLM's concurrency
        starts, conc = pool >= check, grouped["concurrency"]
    elif grouped and sep:  # a separate drafter's kind in the pool: vLLM's blocks per request, its groups included
        starts, conc = grouped["concurrency"] >= 1, grouped["concurrency"]
    elif s["v1"]:
        starts = pool >= check
        conc = blocks / per_req_blocks
        if grouped and len(set(vllm_layout(kv_spec, kv, layout)["block"].values())) > 1:
            conc = grouped["concurrency"]  # kinds of different block sizes (Gemma 4): vLLM's blocks per request
        elif need["sliding_layers"] and need["sliding_cells"] != need["cells"]:
            # the hybrid manager's groups share one pool; a request needs the window in its sliding layers only
            # (gpt-oss-120b at TP 4, 16384 tokens: 284.25x printed, not the 161x of every layer in full); each kind
            # counted in whole groups, padding included (cache.vllm_hybrid_request_bytes)
            padded = vllm_hybrid_request_bytes(kv_spec, need) if hybrid else None
            conc = pool / (padded or need["total"])
    else:
        starts = tokens >= ctx
        conc = tokens / ctx
    # a hybrid model's minimal profiling cache (GRAPH_PROFILE_CACHE); a plain model's is at most 512 x 16 tokens, which
    # a pool that holds one request of 8192 tokens or more already covers
    profile_cache = graph_profile_bytes(kv_spec, kv, layout, s, need["per_token"]) if grouped and spec.linear_state else 0
    card = card_room(s, vram)  # from FREE_CHECKED other processes' memory lies outside, pool or share alike
    room = card - CUDA_CONTEXT - w_bytes - over["non_torch"]  # none: the weights do not load (said elsewhere)
    if profile_cache and 0 < room < profile_cache:
        out["graph_profile_oom"] = profile_cache  # dies before the share matters
        # the plan's fix: --max-num-seqs down to the requests at once (a block each) and to the most sequences whose
        # profiling cache fits the room (before 0.26 its blocks are 2 x seqs x (1 + spec), not the pool's)
        seqs = graph_profile_seqs(s, room // (profile_cache // graph_profile_blocks(s))) if s.get("seqs_to_blocks") else 0
        if seqs:
            out.update(seqs_lowered=True, graph_seqs=seqs)
            out.setdefault("mamba_blocks", grouped["blocks"])
        else:
            starts = False
    if s["kv_cache_memory"]:
        # the fixed pool skips the profile (gpu_worker.determine_available_memory returns kv_cache_memory_bytes after
        # profile_run): the activation peak is freed before the pool is allocated, so it is held beside the weights,
        # not beside the pool; what stays is the weights, the pool and what sits outside PyTorch's peak
        held = inside + outside - over["activation_profile"]
        used = max(held - over["cuda_graphs"] + over["activation_profile"], held + pool)
        room = used <= card
        out["started"] = int(held + pool)  # what it holds once started (used: the larger of it and the profile peak)
        if vram:  # the largest pool beside what it holds, while the profile peak fits too (review16b F3), whole MiB
            peak_ok = held - over["cuda_graphs"] + over["activation_profile"] <= card
            out["pool_fit"] = int(max(card - held, 0) // MiB * MiB) if peak_ok else 0
    else:
        used, room = budget + outside, outside <= card - budget
    if free_refused(s, vram):
        out["free_refused"], starts = True, False
    if grouped:  # the hybrid manager's blocks one request needs, whole groups and padding included (cache.vllm_pool)
        out["kv_request_bytes"] = int(grouped["request_bytes"])
    out.update(budget=budget, pool=int(pool), pool_tokens=tokens, gpu_blocks=blocks, concurrency=conc, card_room=card,
               starts=bool(starts and pool > 0),
               fits=bool(starts and pool > 0 and room), total=int(used), util_needed=(inside + (check if s["v1"] else need["total"])) / vram)
    return out


def mamba_check(out, blocks, s) -> bool:
    """vLLM >= 0.20 refuses max_num_seqs above the engine's blocks (kv_cache_config.num_blocks) when it captures
    full CUDA graphs: one state block per decode sequence (gpu_model_runner _check_and_update_cudagraph_mode).
    Records mamba_blocks and whether the plan's fix (--max-num-seqs lowered, plan's ladder) applies; False if vLLM
    refuses. Fewer sequences only shrink the sampler and graph terms, so the figures stay an upper bound. No block
    at all is an empty pool, which refuses on its own (no sequence count helps)."""
    if (s["enforce_eager"] or not at_least(s["version"], *MAMBA_SEQS_CHECKED) or s["max_seqs"] <= blocks
            or blocks < 1):
        return True
    out["mamba_blocks"] = blocks
    out["seqs_lowered"] = bool(s.get("seqs_to_blocks"))
    return out["seqs_lowered"]


def util_for(ev, vram) -> float | None:
    """Smallest gpu_memory_utilization (2 decimals) that holds one sequence, None if none can."""
    need = math.ceil(ev["util_needed"] * 100 - 1e-9) / 100
    outside = ((0 if ev.get("context_inside") else ev["overhead"]["cuda_context"])
               + (0 if ev["graphs_inside"] else ev["overhead"]["cuda_graphs"]))
    ceiling = min(MAX_UTIL, math.floor((ev.get("card_room", vram) - outside) / vram * 100) / 100)
    return need if need <= ceiling else None


def autofit(version, ev) -> list:
    """The runtime's own fitting options this version has, as (flag, why)."""
    out = []
    if at_least(version, *MAX_MODEL_LEN_AUTO):
        out.append(("--max-model-len auto", "vLLM >= 0.12 picks the largest context its own profile leaves room for"))
    pool = ev.get("pool") or 0
    if ev.get("pool") is not None and ev.get("stages"):  # every pipeline stage allocates it: the smallest stage's
        pool = min(st["pool"] for st in ev["stages"])
    if ev.get("pool_fit") is not None and pool > ev["pool_fit"]:  # a fixed pool that does not fit: the largest that does
        pool = ev["pool_fit"]
    if at_least(version, *KV_CACHE_MEMORY) and pool > 0:
        out.append((f"--kv-cache-memory {int(pool)}", "vLLM >= 0.10.1: a fixed KV pool in bytes instead of a share "
                    "(it prints the value that fits after its first start)"))
    return out


def free_cap(s, vram) -> float | None:
    """The largest share (2 decimals, floored) vLLM's startup check takes with s["free"] bytes free before vLLM
    starts (as nvidia-smi shows total - used) less its own CUDA context; None where no check applies."""
    free = s.get("free")
    if not free or not vram or not s["v1"] or not at_least(s["version"], *FREE_CHECKED):
        return None
    return max(math.floor((free - CUDA_CONTEXT) / vram * 100) / 100, 0.0)


def card_room(s, vram) -> int:
    """Bytes the share and what lies outside it (the CUDA context, the graphs) must fit in: from FREE_CHECKED, where
    the share is this process's own memory, the memory free when vLLM starts (s["free"], when given); before, the
    share is the device's, other processes' memory inside it, so the card's total."""
    if s.get("free") and vram and s["v1"] and at_least(s["version"], *FREE_CHECKED):
        return min(int(s["free"]), int(vram))
    return int(vram) if vram else 0


def free_refused(s, vram) -> bool:
    """True when vLLM refuses the share: util x total above the free memory its check sees."""
    cap = free_cap(s, vram)
    return cap is not None and s["util"] * vram > s["free"] - CUDA_CONTEXT


def would_print(ev, ctx, s) -> str:
    """The pool line this vLLM prints: V1's "GPU KV cache size" in tokens, V0's blocks; both with the concurrency."""
    conc = f"Maximum concurrency for {ctx:,} tokens per request: {ev['concurrency']:.2f}x"
    if s["v1"]:
        return f"GPU KV cache size: {ev['pool_tokens']:,} tokens; {conc}"
    return f"# {'CUDA' if at_least(s['version'], *V0_CUDA_BLOCKS) else 'GPU'} blocks: {ev['gpu_blocks']}; {conc}"
