"""LLM serving memory: weights + KV cache + named runtime terms for vLLM, llama.cpp and Ollama, the largest
context that fits a VRAM budget, and the exact flags/env that make it fit.

KV cache = 2 (K,V) x attention layers x KV heads x head dim x tokens x sequences x bytes per element, with
  - MLA (DeepSeek): one latent of kv_lora_rank + qk_rope_head_dim per token and layer instead of K and V;
  - sliding-window layers holding at most the window (plus the runtime's batch slack);
  - hybrid models counting only attention layers (mamba / linear-attention layers keep a fixed state);
  - quantized caches with their block overheads: q8_0 = 34 bytes per 32 elements, q4_0 = 18 per 32.

The modules: cache.py (KV bytes per runtime), weights.py (weights by tensor role), runtimes/ (vLLM, llama.cpp,
Ollama: defaults by version, overheads, fits rules, flags), plan.py (the verdict and the flags), advise.py
(flags from an OOM log), report.py (the CLI). This module is the stable surface.

Public API (other modules code against these):
  describe(config=None, gguf=None, model=None) -> LLMSpec
  plan(spec, runtime="vllm", ctx=None, parallel=1, kv_dtype=None, weights_dtype=None, vram=None, **knobs) -> dict
      ctx: vLLM --max-model-len (one request), llama.cpp -c (all slots together), Ollama num_ctx (per request);
      parallel: requests at once (vLLM: compared with its concurrency; llama.cpp -np; OLLAMA_NUM_PARALLEL);
      vram in bytes (None: sizes only). knobs: plan.KNOBS (gpu_memory_utilization, flash_attn, ubatch, batch (llama.cpp
      -b, 2048 when not given: -ub runs at min(-c, -b, -ub)), ngl,
      max_num_batched_tokens, max_num_seqs, enforce_eager, swa_full, kv_cache_memory, kv_dtype_v, mla_cache,
      kv_unified, mmproj, n_cpu_moe (llama.cpp --n-cpu-moe), override_tensor (llama.cpp -ot PATTERN=CPU: the
      routed experts of the layers the pattern names in host RAM), cpu_offload_gb (vLLM --cpu-offload-gb: GiB of decoder-layer
      weights per GPU in host RAM; the answer's weights are the GPU's, host_offloaded the bytes moved), runtime_version, gpu_name, vllm_engine, vllm_sampler,
      vllm_entrypoint, llamacpp_entrypoint (llama.cpp: "server" or "library", whose reserve keeps a whole ubatch's
      logits), tensor_parallel_size, pipeline_parallel_size, pp_layer_partition, max_lora_rank, max_loras,
      data_parallel_size (vLLM --data-parallel-size, SGLang --dp; one engine's / DP rank's figures), dp_attention
      (SGLang --enable-dp-attention),
      quant_skip: the modules a bitsandbytes/AWQ checkpoint leaves unquantized, as a log prints them; quant_group: the
      group_size of a 4-bit checkpoint named without its config (plan_checks.QUANT_GROUPS; 128 when not given); weights_bytes:
      the user's figure for the weights, a file's size; free_memory: vLLM's free bytes at startup; cuda_graph_memory:
      the CUDA graph bytes vLLM printed, instead of kv's estimate). An Unsloth Dynamic weights_dtype (UD-Q4_K_XL) without a file
      or weights_bytes plans both ends of a range (unsloth.py): weights_range [low, high], the other figures the high
      end's, fits / fits_as_requested None where the ends disagree (depends: the line saying so).
      keys: weights, weights_how, kv_per_token, kv_total, kv_detail, overhead (named terms), overhead_total, total,
      budget, fits (the asked ctx x parallel fits, with the flags), fits_as_requested (without changes), max_ctx
      (largest per-sequence context with the flags' settings, multiple of 256), max_ctx_by_kv_dtype, chosen,
      flags [{kind, name, value, text, reason}], command, autofit [{flag, reason}], notes; vLLM adds
      kv_capacity_bytes, kv_capacity_tokens, concurrency, vllm_would_print; llama.cpp/Ollama add host_weights,
      gpu_layers_used, max_ctx_layers (the GPU layer count a largest-context figure assumes, None = all); llama.cpp
      with a vram adds max_ctx_as_asked (the largest context at the request's own -ub / -fa / cache type: where
      --fit lowers a -c not given)
  vllm_kv_tokens(spec, available_bytes, kv="f16", hybrid=True) -> int   # vLLM's "GPU KV cache size: N tokens"
      (hybrid: the layer groups of vLLM >= 0.10's hybrid manager; False for older versions)
  vllm_estimated_max_len(spec, available_bytes, kv, ctx, **pool) -> int | None   # a refusal's "estimated maximum
      model length" under the hybrid manager (the layers' own pages summed; None without a hybrid layout)
  vllm_per_rank(spec, tp) -> LLMSpec     # one tensor-parallel GPU's share (its KV heads, MLP columns)
  suggest_flags_from_log(numbers: dict, runtime: str) -> list[dict]
      For triage's kv-cache guide. `numbers` holds what an OOM log states (bytes for sizes, ints for counts);
      any subset of: model (name, resolved against the built-ins), max_model_len, estimated_max_len, kv_tokens,
      kv_needed, kv_available, gpu_memory_utilization, total, free, kv_cache_dtype, max_num_seqs, runtime_version
      (vLLM's build: without a printed share its default, 0.92 from 0.20.0, 0.90 before, as kv's plan takes it);
      n_ctx (llama.cpp's total cells), num_ctx (Ollama, per request), kv_buffer, alloc (the failed allocation),
      free, n_parallel / num_parallel, n_gpu_layers, n_layers, type_k, buffer ("compute" for a compute-buffer
      failure) (llama.cpp / Ollama). memory/oom_parse.py's names are accepted too (max_model_len_tokens,
      estimated_max_len_tokens, kv_max_tokens, gpu_memory_utilization_ratio, requested, ggml_n_ctx, ...).
      Returns [{"kind": "flag"|"env"|"param"|"note", "name", "value", "text", "reason"}] in order of preference
      ("note": no value of the flag it names can help, the reason says what does), e.g.
      {"kind": "flag", "name": "--max-model-len", "value": "121856", "text": "--max-model-len 121856",
       "reason": "the log's estimated maximum (122080) rounded down to 256"}; [] when the numbers say nothing.
  run_cli(args) -> int    # `gpu-garden kv`
"""
import re

from . import spec as llm_spec  # noqa: F401
from .advise import suggest_flags_from_log  # noqa: F401  (memory/triage/advice.py calls kv.suggest_flags_from_log)
from .cache import (BLOCK, CTX_STEP, KV_BYTES, KV_LADDER, LLAMACPP_SWA_ARCHS, MIN_CTX, RUNTIME_KV,  # noqa: F401
                    kv_cache, norm_kv, vllm_kv_tokens)
from .vllm_max_len import vllm_estimated_max_len  # noqa: F401
from .plan import plan  # noqa: F401
from .report import format_plan, run_cli  # noqa: F401
from .runtimes import RUNTIMES  # noqa: F401
from .runtimes.llamacpp import MARGIN as LLAMACPP_MARGIN, compute_buffer as llamacpp_compute  # noqa: F401
from .runtimes.ollama import projector  # noqa: F401
from .runtimes.vllm import (DEFAULT_UTIL as VLLM_DEFAULT_UTIL, MAX_UTIL as VLLM_MAX_UTIL,  # noqa: F401
                            activation as vllm_activation, per_rank as vllm_per_rank)
from .runtimes.vllm_overheads import CUDA_GRAPHS as VLLM_CUDA_GRAPHS  # noqa: F401
from .spec import LLMSpec
from .weights import DENSE_BITS, GGUF_BPW, LINEAR_BITS, split_weights, weights, weights_by_role  # noqa: F401
from ..errors import UserError


CT_ORGS = ("redhatai", "neuralmagic", "nm-testing")  # llm-compressor's uploads (compressed-tensors checkpoints)


def describe(config: str | None = None, gguf: str | None = None, model: str | None = None) -> LLMSpec:
    if config:
        return llm_spec.load_config(config)
    if gguf:
        return llm_spec.load_gguf(gguf)
    if model:
        spec = llm_spec.load_builtin(model)
        spec.unsloth = "unsloth" in model.lower()
        # llm-compressor's FP8_DYNAMIC checkpoints (RedHatAI/...-FP8-dynamic): channel-wise weights (vllm_rocm_fp8.py)
        spec.fp8_channel = spec.quant == "fp8" and bool(re.search(r"[-_.]fp8[-_.]dynamic\b", model.lower()))
        # an FP8 name under llm-compressor's organisations is a compressed-tensors checkpoint (padded from vLLM 0.11)
        spec.fp8_ct = spec.quant == "fp8" and model.strip().lower().split("/")[0] in CT_ORGS and "/" in model
        return spec
    raise UserError("give one of --config FILE, --gguf FILE or --model NAME")
