"""The checks `gpu-garden kv` makes on a request before sizing it (plan.py's first steps): the names, the models
whose state a runtime's pool was not read for, the ranges of the numbers, the parallelism, the modules kept unquantized
and the adapters (LoRA, MTP, a quantized head). Each refuses with a UserError that says what to give instead."""
from dataclasses import replace

from ..errors import UserError
from ..units import GiB, fmt_bytes, gpu_size_problem
from .cache import MLA_CACHES, norm_kv
from .runtimes import RUNTIME_NAMES, RUNTIMES, llamacpp as LC, parse_version, sglang as SG, vllm as V, vllm_drafter as VD
from .runtimes import vllm_loader as VL
from .spec import FULL, MAMBA

KNOBS = ("gpu_memory_utilization", "flash_attn", "ubatch", "batch", "ngl", "max_num_batched_tokens", "max_num_seqs",
         "enforce_eager", "swa_full", "kv_cache_memory", "kv_dtype_v", "mla_cache", "kv_unified", "mmproj",
         "runtime_version", "gpu_name", "vllm_engine", "vllm_sampler", "mla_disable", "moe_backend",
         "vllm_entrypoint", "tensor_parallel_size", "tensor_split", "mem_fraction_static",
         "num_gpus", "pipeline_parallel_size", "pp_layer_partition", "nccl_nvls", "prefix_caching",
         "max_lora_rank", "max_loras", "quant_skip", "quant_group", "mtp_tokens", "draft_kv_dtype", "language_model_only", "lm_head_dtype",
         "limit_mm_per_prompt", "mm_encoder_tp_mode", "mamba_ssm_cache_dtype", "weights_bytes", "gguf_types", "free_memory", "swa_full_tokens_ratio", "max_mamba_cache_size",
         "cuda_graph_memory", "n_cpu_moe", "override_tensor", "speculative_config", "cpu_offload_gb", "data_parallel_size", "dp_attention",
         "attention_backend", "llamacpp_entrypoint")


# the settings some runtimes only read, one row each: (plan()'s setting, the CLI's option as its argparse name, the
# runtimes whose plan reads it). Given for another runtime it would change nothing, so plan() refuses the setting
# (check_names) and the CLI its option (report._refuse_unread): this table is the one both read
READ_BY = (
    ("gpu_memory_utilization", "gpu_memory_utilization", ("vllm",)),
    ("max_num_batched_tokens", "max_num_batched_tokens", ("vllm",)),
    ("max_num_seqs", "max_num_seqs", ("vllm",)),
    ("enforce_eager", "enforce_eager", ("vllm",)),
    ("kv_cache_memory", "kv_cache_memory", ("vllm",)),
    ("vllm_engine", "vllm_engine", ("vllm",)),
    ("vllm_sampler", "vllm_sampler", ("vllm",)),
    ("moe_backend", "moe_backend", ("vllm",)),
    ("mla_disable", "vllm_mla_disable", ("vllm",)),
    ("vllm_entrypoint", "vllm_entrypoint", ("vllm",)),
    ("nccl_nvls", "nccl_nvls", ("vllm",)),
    ("mem_fraction_static", "mem_fraction_static", ("sglang",)),
    ("flash_attn", "flash_attn", ("llama.cpp", "ollama")),
    ("ubatch", "ubatch", ("llama.cpp", "ollama")),
    ("batch", "batch", ("llama.cpp",)),  # Ollama's num_batch (ubatch) is its -b and -ub at once
    ("ngl", "ngl", ("llama.cpp", "ollama")),
    ("num_gpus", "num_gpus", ("llama.cpp", "ollama")),
    ("mla_cache", "mla_cache", ("llama.cpp",)),
    ("swa_full", "swa_full", ("llama.cpp",)),
    ("kv_unified", "kv_unified", ("llama.cpp",)),
    ("mmproj", "mmproj", ("llama.cpp",)),
    ("llamacpp_entrypoint", "llamacpp_entrypoint", ("llama.cpp",)),
    ("kv_dtype_v", "kv_dtype_v", ("llama.cpp",)),
    ("free_memory", "free_gib", ("vllm", "sglang")),
    ("cuda_graph_memory", "cuda_graph_gib", ("vllm",)),
    ("language_model_only", "language_model_only", ("vllm",)),
    ("limit_mm_per_prompt", "limit_mm_per_prompt", ("vllm",)),
    ("mm_encoder_tp_mode", "mm_encoder_tp_mode", ("vllm",)),
    ("mamba_ssm_cache_dtype", "mamba_ssm_cache_dtype", ("vllm", "sglang")),  # SGLang: its --mamba-ssm-dtype
    ("prefix_caching", "enable_prefix_caching", ("vllm",)),
    ("quant_skip", "quant_skip", ("vllm", "sglang")),
    ("quant_group", "quant_group", ("vllm", "sglang")),
    ("swa_full_tokens_ratio", "swa_full_tokens_ratio", ("sglang",)),
    ("max_mamba_cache_size", "max_mamba_cache_size", ("sglang",)),
    ("attention_backend", "attention_backend", ("sglang",)),
    ("n_cpu_moe", "n_cpu_moe", ("llama.cpp",)),
    ("override_tensor", "override_tensor", ("llama.cpp",)),
    ("gguf_types", "gguf_types", ("llama.cpp",)),
    ("cpu_offload_gb", "cpu_offload_gb", ("vllm",)),
    ("dp_attention", "enable_dp_attention", ("sglang",)),
    ("data_parallel_size", "data_parallel_size", ("vllm", "sglang")),  # above 1 (refuse_data_parallel drops a 1)
    ("tensor_parallel_size", "tensor_parallel_size", ("vllm", "sglang")),  # above 1 (ONE_FOR_ALL)
)
# READ_BY settings every runtime runs at one value (one GPU, no split): given as that value it changes nothing and is
# not refused (plan()'s check_names and the CLI's report._refuse_unread); any other value is refused by the row as usual.
# llama.cpp and Ollama split layers across GPUs instead of tensors (--tensor-split, num_gpus)
ONE_FOR_ALL = {"tensor_parallel_size": 1}
# what a runtime does instead of a setting it does not read, added to that READ_BY refusal (plan() and the CLI)
INSTEAD = {("tensor_parallel_size", "llama.cpp"): "llama.cpp splits layers across GPUs instead (--split-mode layer, "
                                                  "--tensor-split)",
           ("tensor_parallel_size", "ollama"): "Ollama splits layers across GPUs instead"}


def refused_for(runtime, setting, value, rts) -> bool:
    """The READ_BY rule, one place for plan() and the CLI: a setting given (not None) to a runtime outside its row,
    unless it is the value every runtime runs at (ONE_FOR_ALL)."""
    return value is not None and runtime not in rts and not (setting in ONE_FOR_ALL and value == ONE_FOR_ALL[setting])
# a setting whose CLI option, as plan()'s refusal names it, is not its argparse name with dashes
KNOB_OPTIONS = {"prefix_caching": "--enable-prefix-caching / --no-enable-prefix-caching"}
# the on/off settings, one row each: (plan()'s setting, what True, False and None mean); any other value (a string such
# as "no", a number) is refused by check_names rather than read as truthy
BOOL_KNOBS = (
    ("prefix_caching", ("True (--enable-prefix-caching), False (--no-enable-prefix-caching) or None (not given: "
                        "vLLM's default)")),
    ("dp_attention", "True (--enable-dp-attention), False or None (not given: SGLang's default, off)"),
)


def check_names(runtime, knobs) -> None:
    """The runtime and the settings are ones plan() knows, and each setting one this runtime reads (READ_BY)."""
    if runtime not in RUNTIMES:
        raise UserError(f"unknown runtime {runtime!r} (one of: {', '.join(RUNTIMES)})")
    refuse_data_parallel(runtime, knobs)
    bad = set(knobs) - set(KNOBS)
    if bad:
        raise UserError(f"unknown setting(s): {', '.join(sorted(bad))}")
    for k, cli, rts in READ_BY:
        if refused_for(runtime, k, knobs.get(k), rts):
            option = KNOB_OPTIONS.get(k, f"--{cli.replace('_', '-')}")
            raise UserError(f"{runtime} does not read {k} ({option}, {' and '.join(rts)} only): "
                            f"drop it, or plan for {rts[0]}" + (f"; {INSTEAD[k, runtime]}" if (k, runtime) in INSTEAD else ""))
    for k, meaning in BOOL_KNOBS:
        if knobs.get(k) is not None and not isinstance(knobs[k], bool):
            raise UserError(f"{k} is {meaning}, got {knobs[k]!r}")


# data parallelism: vLLM's --data-parallel-size (runtimes/vllm_dp.py) and SGLang's --dp with --enable-dp-attention
# (runtimes/sglang_dp.py) are modelled, each as far as its source was read; llama.cpp and Ollama have none


def refuse_data_parallel(runtime, knobs) -> None:
    """data_parallel_size, for the runtimes of its READ_BY row (vLLM, SGLang: runtimes/vllm_dp.py, sglang_dp.py check
    what they model): 1 (or None) changes nothing and is dropped, above 1 it is kept. Another runtime has none: above 1
    is refused here, 1 by check_names' READ_BY refusal, as any option its runtime does not read."""
    dp = knobs.get("data_parallel_size")
    if dp is None:
        knobs.pop("data_parallel_size", None)
        return
    if isinstance(dp, bool) or not isinstance(dp, int) or not 1 <= dp <= 1024:
        raise UserError(f"data_parallel_size must be a whole number of ranks (1 to 1024), got {dp!r}")
    rts = next(r for k, _, r in READ_BY if k == "data_parallel_size")
    if dp == 1 and runtime in rts:
        knobs.pop("data_parallel_size")
    if dp == 1 or runtime in rts:
        return
    knobs.pop("data_parallel_size")
    raise UserError(f"{runtime} has no data parallelism (data_parallel_size is "
                    f"{' and '.join(RUNTIME_NAMES[r] + chr(39) + 's' for r in rts)}): drop it")


def check_weights_dtype(weights_dtype) -> None:
    """A --weights-dtype is a file type or a checkpoint format, never one of kv's own names for a type
    (weights.internal_name: an Ollama library build's variant, a 16-bit GGUF of an MXFP4 checkpoint)."""
    from .weights import internal_name
    named = internal_name(weights_dtype)
    if named:
        what, base, other = named
        raise UserError(f"--weights-dtype {weights_dtype}: that is kv's internal name for {what}, not a GGUF file "
                        f"type; give the file's type ({base}) or {other}")


def _listed(names: list) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def refuse_non_gguf_dtype(spec, runtime, weights_dtype) -> None:
    """Ollama and llama.cpp load GGUF files only: a GGUF tag (hf.co/user/repo-GGUF:Q4_K_M, an Ollama library tag) with
    --weights-dtype awq, gptq, fp8 or w4a16 names no file they load; it was sized silently as that checkpoint."""
    from . import gguf_repo as GR, weights as W
    if runtime not in ("ollama", "llama.cpp") or weights_dtype is None or not (spec.gguf_tag or spec.ollama):
        return
    t = str(weights_dtype).strip()
    if GR.tag_type(t) or t.upper() in W.IK_TYPES:
        return
    from .linear_quant import DENSE_BITS, FORMAT_ALIASES, LINEAR_BITS
    low = FORMAT_ALIASES.get(t.lower(), t.lower())
    if low in DENSE_BITS or low in LINEAR_BITS:  # a checkpoint's format: the user meant vLLM or SGLang
        why = f"{weights_dtype} is a vLLM or SGLang checkpoint's type: kv --model REPO --runtime vllm"
    else:  # a typo of a GGUF type (q4km, Q4-K-M) names no format at all: say which type it spells, if one
        key = lambda s: "".join(c for c in s.upper() if c.isalnum())
        same = sorted(g for g in GR._gguf_types() if key(g) == key(t))
        why = f"{weights_dtype} is no type kv knows" + (f"; did you mean {' or '.join(same)}?" if same else "")
    raise UserError(f"--weights-dtype {weights_dtype}: {RUNTIME_NAMES[runtime]} loads GGUF files only, whose types are "
                    f"Q4_K_M, Q5_K_M, Q6_K, Q8_0, IQ4_XS, F16, BF16 ...; give one of those or drop --weights-dtype ({why})")


def refuse_unmodelled(spec, runtime) -> None:
    """Hybrid models whose state pool this runtime's plan does not hold."""
    from .deepseek_v4 import refuse_runtime
    refuse_runtime(spec, runtime)  # DeepSeek-V4: vLLM's cache groups only
    if spec.arch.startswith("nemotron_h") and runtime in ("ollama", "sglang"):
        raise UserError(f"{spec.name}: Nemotron-H's Mamba-2 state is modelled for vLLM (MambaSpec pages) and llama.cpp "
                        f"(its recurrent-state buffer) only; {runtime}'s estimate and state pool for it were not read")
    if spec.arch.startswith("granitemoehybrid") and MAMBA in spec.layer_kinds and runtime in ("ollama", "vllm"):
        # Granite 4.0-H: its Mamba-2 state is read for SGLang (mamba_state_per_req, checked on a printed pool) and
        # llama.cpp (llama_memory_recurrent, f32); vLLM's state dtype for this model and Ollama's handling were not read
        raise UserError(f"{spec.name}: Granite 4.0-H's Mamba-2 state is modelled for SGLang and llama.cpp only; "
                        f"{runtime}'s state pool for it was not read")
    dsa_rts = DSA_RUNTIMES.get(spec.arch, ("vllm",))
    if spec.index_head_dim and runtime not in dsa_rts:
        # DeepSeek sparse attention: vLLM's two caches are read (cache.dsa_token_bytes), and llama.cpp's and SGLang's
        # for glm-dsa (llama_kv_cache_dsa, cache.kv_cache; the NSA profile, sglang.dsa_cell); Ollama's handling of the
        # indexer and llama.cpp's deepseek32 memory were not
        raise UserError(f"{spec.name}: DeepSeek sparse attention (its Lightning Indexer's key cache beside the MLA "
                        f"latent) is modelled for {_listed([RUNTIME_NAMES[r] for r in dsa_rts])} only; "
                        f"{runtime}'s cache for it was not read")
    if spec.indexer_layers and runtime == "sglang":
        # GLM-5.2's shared indexers: SGLang's NSA profile prices an indexer key in every layer (sglang.dsa_cell); whether
        # its pool and profile follow indexer_types / index_topk_freq was not read
        raise UserError(f"{spec.name}: {len(spec.indexer_layers)} of its {spec.n_layers} layers keep a Lightning "
                        "Indexer, the others reusing another layer's top-k; SGLang's NSA pool for such a model was not "
                        "read (vLLM's and llama.cpp's are)")
    if spec.arch.startswith("nemotron_h") and runtime == "vllm" and FULL not in spec.layer_kinds:
        raise UserError(f"{spec.name}: a hybrid_override_pattern without an attention layer ('*'): vLLM's KV pool "
                        "is modelled from the attention pages; llama.cpp plans it")


# the runtimes whose cache for a DeepSeek-sparse-attention model was read, by model_type: llama.cpp's glm-dsa memory
# (llama_kv_cache_dsa: the MLA latent in every layer, the indexer keys in the indexer layers; cache.kv_cache), read in
# ggml-org/llama.cpp src/llama-kv-cache-dsa.cpp and src/models/glm-dsa.cpp and in b10505's logs (batch 79); SGLang's
# NSA profile (runtimes/sglang.dsa_cell: the latent and the indexer key in every layer, pool_configurator.py)
DSA_RUNTIMES = {"glm_moe_dsa": ("vllm", "llama.cpp", "sglang")}


def refuse_rocm_dsa_fp8(spec, runtime, kv, knobs) -> None:
    """DeepSeek sparse attention with an fp8 cache on AMD: vLLM's ROCm sparse-MLA backend has no fp8_ds_mla record.
    vllm/v1/attention/backends/mla/rocm_aiter_mla_sparse.py (ROCMAiterMLASparseBackend, read at 007c8d81):
    get_kv_cache_shape (num_blocks, block_size, head_size) with head size 576 only, supported_dtypes [bfloat16], one
    _forward_bf16_kv path and block size 1: the dense 16-bit latent, which "auto" sizes (cache.dsa_token_bytes)."""
    if (runtime == "vllm" and spec.index_head_dim and str(kv).startswith("fp8") and V.on_rocm(knobs)):
        raise UserError(f"{spec.name}: --kv-cache-dtype {kv} with DeepSeek sparse attention on ROCm ("
                        f"{knobs.get('gpu_name') or knobs.get('runtime_version')}): vLLM's ROCm sparse-MLA backend "
                        "(ROCM_AITER_MLA_SPARSE) keeps only a bf16 latent of 576 values, not FlashMLA's fp8_ds_mla "
                        "record; drop --kv-cache-dtype (auto sizes the bf16 cache)")


# vLLM's default cache for DeepSeek sparse attention depends on the release: vllm#25988 (merged 2025-09-30, about
# 0.11.0) made DeepseekV32ForCausalLM.verify_and_update_config resolve "auto" as well as fp8* to fp8_ds_mla ("we use
# a custom fp8 format as default (i.e. 'auto')", logging "Using custom fp8 kv-cache format for DeepSeekV3.2"); the
# current source (model_executor/models/config.py as review21b read it) maps only fp8* there, so "auto" stays 16-bit,
# which is what kv sizes. The release that changed it was not read.
DSA_AUTO_NOTE = ("DeepSeek sparse attention without --kv-cache-dtype: sized as the 16-bit latent, as current vLLM "
                 "keeps it; releases from vllm#25988 (2025-09-30, about 0.11) resolved auto to the fp8_ds_mla record "
                 "(1.63x the tokens) and the release that changed that is not known here: if the log says \"Using "
                 "custom fp8 kv-cache format\", size it with --kv-cache-dtype fp8")


# llama.cpp's glm-dsa before its DSA memory: the first glm-dsa support (ggml-org/llama.cpp#19460, "indexer is not yet
# supported") ran dense attention with the MLA cache alone; the build that brought llama_kv_cache_dsa to glm-dsa was
# not read, so kv sizes the current source's two caches and says so
DSA_LLAMACPP_NOTE = ("DeepSeek sparse attention in llama.cpp: the MLA latent in every layer and the Lightning Indexer's "
                     "keys ({n} x {d} values a cell, at the K cache type) in {n} layers, two caches as "
                     "llama_kv_cache_dsa keeps them (b10505 prints both); builds before its DSA support (#19460's "
                     "dense glm-dsa) keep the latent alone, and which build added the indexer cache is not known here")


def dsa_auto_note(spec, runtime, kv_dtype, notes) -> None:
    """The note DSA_AUTO_NOTE for vLLM's default cache of a DeepSeek-sparse-attention model; DSA_LLAMACPP_NOTE for
    llama.cpp's."""
    if runtime == "vllm" and spec.index_head_dim and (kv_dtype is None or str(kv_dtype).lower() == "auto"):
        notes.append(DSA_AUTO_NOTE)
    if runtime == "llama.cpp" and spec.index_head_dim:
        notes.append(DSA_LLAMACPP_NOTE.format(n=len(spec.indexer_layers or range(spec.n_layers)),
                                              d=spec.index_head_dim))


def read_knobs(runtime, parallel, knobs):
    """--parallel checked, -fa and -ngl in the runtime's own reading; returns the -ngl asked."""
    if parallel is None or parallel < 1 or parallel > 65536:
        raise UserError(f"--parallel must be 1..65536, got {parallel}")
    fa = knobs.get("flash_attn")
    if isinstance(fa, str):  # as the runtimes' flags write it (-fa on|off|auto); bool("off") would read as on
        if fa not in ("on", "off", "auto"):
            raise UserError(f"flash_attn must be on, off or auto, got {fa!r}")
        knobs["flash_attn"] = {"on": True, "off": False, "auto": None}[fa]
    asked_ngl = knobs.get("ngl")
    if asked_ngl is not None:  # -1 / auto, -2 / all as the build reads them
        knobs["ngl"] = LC.resolve_ngl(asked_ngl, parse_version(knobs.get("runtime_version"), runtime), knobs, runtime)
    return asked_ngl


def check_vram(vram) -> None:
    """--vram within a GPU's range; checked before the default context is picked (Ollama's tiers read it)."""
    if vram is not None and gpu_size_problem(vram):  # the range estimate's --vram has too
        raise UserError(gpu_size_problem(vram))


def check_ranges(runtime, ctx, vram, knobs) -> None:
    """--ctx, --vram, --mla-cache, --tensor-split, --free-gib, --cuda-graph-gib and --gpu-memory-utilization within their
    ranges."""
    if ctx < 1 or ctx > 1 << 24:
        raise UserError(f"--ctx must be 1..{1 << 24}, got {ctx}")
    check_vram(vram)
    if knobs.get("mla_cache") not in (None,) + MLA_CACHES:
        raise UserError(f"--mla-cache must be one of {', '.join(MLA_CACHES)}")
    split = knobs.get("tensor_split")
    if isinstance(split, str):  # llama.cpp's own form, "-ts 3,1", as users write it (the CLI parses it the same way)
        try:
            split = knobs["tensor_split"] = [float(x) for x in split.replace("/", ",").split(",")]
        except ValueError:
            split = knobs["tensor_split"] = []  # refused below with the usual message
    if split is not None:
        if (runtime != "llama.cpp" or not isinstance(split, (list, tuple)) or not split or len(split) > 64
                or any(not isinstance(x, (int, float)) or x < 0 or x != x for x in split) or sum(split) <= 0):
            raise UserError("--tensor-split takes llama.cpp's -ts proportions, e.g. 3,1 (llama.cpp only; non-negative, "
                            "at least one above 0, at most 64 GPUs)")
    free = knobs.get("free_memory")  # vLLM's and SGLang's: check_names has refused it for the others (READ_BY)
    if free is not None and (not vram or not 0 < free <= vram):
        raise UserError("--free-gib is the GPU's free memory when vLLM or SGLang starts (nvidia-smi's total - used): above 0, at most "
                        "--vram, and needs --vram")
    tp = knobs.get("tensor_parallel_size")
    nccl = runtime == "sglang" and isinstance(tp, int) and not isinstance(tp, bool) and tp > 1
    floor = SG.CUDA_CONTEXT + SG.NCCL if nccl else SG.CUDA_CONTEXT if runtime == "sglang" else V.CUDA_CONTEXT
    what = "its own CUDA context and NCCL's buffers (TP above 1)" if nccl else "its own CUDA context"
    if free is not None and free <= floor:  # SGLang's free0 (sglang.evaluate) is free less both: none left, no pool
        raise UserError(f"--free-gib {free / GiB:g}: {'SGLang' if runtime == 'sglang' else 'vLLM'} needs more than {fmt_bytes(floor)} free for {what} "
                        "before any share (its startup check counts the rest); free memory on the GPU")
    graph = knobs.get("cuda_graph_memory")  # vLLM's only
    if graph is not None and (isinstance(graph, bool) or not isinstance(graph, (int, float))
                              or not 0 < graph <= (vram or 1 << 50)):
        raise UserError("--cuda-graph-gib is the CUDA graph memory vLLM printed ('Estimated CUDA graph memory: N GiB'): "
                        "vLLM only, a size above 0 and at most --vram")
    util = knobs.get("gpu_memory_utilization")
    if util is not None and not 0.05 <= util <= 1.0:
        raise UserError(f"--gpu-memory-utilization must be 0.05..1.0, got {util}")


def check_parallelism(spec, runtime, knobs) -> int:
    """--tensor-parallel-size / --pipeline-parallel-size checked; returns the tensor-parallel size (above 1 only on the
    runtimes of its READ_BY row: check_names has refused it for the others)."""
    tp = 1 if knobs.get("tensor_parallel_size") is None else knobs["tensor_parallel_size"]
    if not isinstance(tp, int) or not 1 <= tp <= 64:
        raise UserError(f"--tensor-parallel-size must be 1..64, got {tp!r}")
    pp = 1 if knobs.get("pipeline_parallel_size") is None else knobs["pipeline_parallel_size"]
    if not isinstance(pp, int) or not 1 <= pp <= 64 or pp > spec.n_layers:
        raise UserError(f"--pipeline-parallel-size must be 1..{min(64, spec.n_layers)}, got {pp!r}")
    if (pp > 1 or knobs.get("pp_layer_partition")) and runtime != "vllm":
        raise UserError(f"--{'pipeline-parallel-size' if pp > 1 else 'pp-layer-partition'} is modelled for vLLM only, "
                        f"not {runtime} (llama.cpp splits layers with "
                        "--tensor-split, Ollama by itself; SGLang's --pp-size is not modelled)")
    if knobs.get("pp_layer_partition") and pp == 1:
        raise UserError("--pp-layer-partition needs --pipeline-parallel-size above 1")
    heads = spec.n_heads if spec.arch != "safetensors" else 0  # header-only specs guess the head size: not judged
    if tp > 1 and heads and heads % tp and (runtime == "vllm" or not knobs.get("dp_attention")):
        # vLLM's ModelConfig.verify_with_parallel_config refuses to start ("Total number of attention heads (32) must
        # be divisible by tensor parallel size (3)"); SGLang's attention layers assert the same (with DP attention
        # the heads split over tp / dp GPUs: not judged). kv planned it, one GPU's share rounded.
        sizes = ", ".join(str(n) for n in range(2, min(heads, 64) + 1) if heads % n == 0)
        said = (f" ('Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})')"
                if runtime == "vllm" else "")
        raise UserError(f"{RUNTIME_NAMES[runtime]} refuses --tensor-parallel-size {tp}: {spec.name}'s {heads} attention heads "
                        f"must split evenly over the GPUs{said}; sizes that divide them: {sizes or 'none'}")
    return tp


def quant_skip(spec, knobs, notes) -> tuple:
    """--quant-skip: the modules kept unquantized as given; (spec, notes, the list or None)."""
    skip = knobs.get("quant_skip")
    if skip is not None:  # the modules a log prints as llm_int8_skip_modules / modules_to_not_convert
        if not isinstance(skip, (list, tuple)) or len(skip) > 4096 or not all(isinstance(m, str) for m in skip):
            raise UserError("--quant-skip takes the module names the checkpoint leaves unquantized (its config's "
                            "llm_int8_skip_modules / modules_to_not_convert), e.g. model.layers.0.mlp,lm_head")
        spec = replace(spec, quant_skip=tuple(skip), notes=[n for n in spec.notes if "llm_int8_skip_modules" not in n])
        notes = [n for n in notes if "llm_int8_skip_modules" not in n]
        notes.append(f"{len(skip)} module name(s) kept unquantized as given (--quant-skip)")
    return spec, notes, skip


# --quant-group: the values per scale of a 4-bit group quantization as the checkpoint's quantization_config states it
# (group_size); kv reads it from a config.json (spec.quant_group), a model name gives none and is read at 128. 32 is
# the group of cyankiwi's Qwen3.6-35B-A3B-AWQ-4bit (batch 66's patcarter log: "int4 g=32 has_zp=True"). The
# group formats' bits are linear_quant.linear_bits(fmt, group): AWQ 4 + 20 / group
QUANT_GROUPS = (16, 32, 64, 128, 256, 512, 1024)


def quant_group(spec, knobs, notes):
    """--quant-group: the checkpoint's group size as given; (spec, notes)."""
    g = knobs.get("quant_group")
    if g is None:
        return spec, notes
    if isinstance(g, bool) or g not in QUANT_GROUPS:
        raise UserError(f"--quant-group takes the group_size of the checkpoint's quantization_config, one of "
                        f"{', '.join(map(str, QUANT_GROUPS))}; got {str(g)[:20]!r}")
    notes = notes + [f"4-bit groups of {g} values as given (--quant-group; a model name alone is read at 128)"]
    return replace(spec, quant_group=g), notes


def speculative_config(runtime, knobs) -> None:
    """vLLM's --speculative-config read (runtimes/vllm_drafter.py): method mtp is --mtp-tokens; a separate drafter's
    method keeps the parsed config in knobs["speculative_config"] for the weights and the pool."""
    raw = knobs.get("speculative_config")
    if raw is None or (isinstance(raw, dict) and "tokens" in raw and "num_speculative_tokens" not in raw):
        return  # none, or read already (plan re-plans other contexts with the same settings)
    if runtime != "vllm":
        raise UserError(f"--speculative-config is vLLM's; {runtime}'s drafting is not read from it"
                        + (" (llama.cpp's MTP: --mtp-tokens)" if runtime == "llama.cpp" else ""))
    parsed = VD.parse(raw)
    if parsed["method"] in VD.OWN_LAYER_METHODS:
        if knobs.get("mtp_tokens") not in (None, parsed["tokens"]):
            raise UserError(f"--mtp-tokens {knobs['mtp_tokens']} and --speculative-config num_speculative_tokens "
                            f"{parsed['tokens']} disagree")
        knobs["mtp_tokens"], knobs["speculative_config"] = parsed["tokens"], None
        knobs["mtp_others"] = parsed["others"]  # the keys kv does not read: printed in the command (flags.mtp_flags)
        return
    if knobs.get("mtp_tokens") is not None:
        raise UserError("--mtp-tokens (the target's own MTP layers) and a separate drafter in --speculative-config "
                        "are two drafters; vLLM runs one")
    knobs["speculative_config"] = parsed


def check_adapters(spec, runtime, knobs, notes) -> tuple:
    """LoRA slots, MTP drafting and a quantized head checked; (LoRA rank, LoRA slots)."""
    rank, loras = VL.lora_rank(knobs), 1 if knobs.get("max_loras") is None else knobs["max_loras"]
    speculative_config(runtime, knobs)
    if knobs.get("mtp_others") and runtime == "vllm":
        notes.append(VD.others_note(knobs["mtp_others"]))
    if knobs.get("lm_head_dtype") is not None and runtime != "vllm":  # a GGUF/Ollama head has its own quant type
        raise UserError(f"--lm-head-dtype is modelled for vLLM only (a checkpoint whose quantization also targets "
                        f"lm_head), not {runtime}; a GGUF file's output tensor keeps the type it was written with")
    if knobs.get("draft_kv_dtype") is not None and (runtime != "llama.cpp" or knobs.get("mtp_tokens") is None):
        raise UserError("--draft-kv-dtype is the cache type of llama.cpp's MTP context (-ctkd / -ctvd): it needs "
                        "--runtime llama.cpp and --mtp-tokens N")
    if knobs.get("mtp_tokens") is not None and runtime == "llama.cpp":  # --spec-type draft-mtp (runtimes/llamacpp.py)
        LC.check_draft_mtp(spec, knobs["mtp_tokens"], knobs)
        knobs["draft_kv_dtype"] = norm_kv(knobs.get("draft_kv_dtype"), runtime, spec)
        notes.append(f"draft-mtp, --spec-draft-n-max {knobs['mtp_tokens']}: the recurrent state is kept "
                     f"{1 + knobs['mtp_tokens']} times and the MTP context holds its own {knobs['draft_kv_dtype']} cache "
                     "of the MTP layer; "
                     "its compute buffer (about 0.3 GiB on Metal and ROCm for a 27B) is not counted")
    elif knobs.get("mtp_tokens") is not None and runtime != "vllm":
        raise UserError(f"--mtp-tokens is MTP speculative decoding as vLLM (num_speculative_tokens) and llama.cpp "
                        f"(--spec-type draft-mtp) run it; {runtime}'s drafter is not modelled")
    if (knobs.get("max_lora_rank") is not None or knobs.get("max_loras") is not None) and runtime != "vllm":
        raise UserError("--max-lora-rank / --max-loras size vLLM's LoRA slots (--enable-lora); not modelled for "
                        f"{runtime}")
    if (isinstance(rank, bool) or rank not in (0,) + VL.LORA_RANKS or isinstance(loras, bool) or not isinstance(loras, int)
            or not 1 <= loras <= 256):
        raise UserError(f"--max-lora-rank must be one of vLLM's ranks {', '.join(map(str, VL.LORA_RANKS))} (0: no LoRA) "
                        f"and --max-loras 1..256, got {rank!r} and {loras!r}")
    return rank, loras
