"""The flags and the command a `gpu-garden kv` plan prints, runtime by runtime: vLLM's and llama-server's flags,
Ollama's environment and Modelfile parameters. One `flag` record for the plan (plan.py) and for the fixes read from
an out-of-memory log (advise.py)."""
import json
import shlex

from .runtimes import at_least, llamacpp as LC, llamacpp_slots as LS, vllm as V, vllm_pipeline as VP

# llama-server's flags by build (a flag printed for a build that lacks it stops the server at its argument parser):
#   -kvu / --kv-unified came with the split streams, ggml-org/llama.cpp#14363 (commit 225e7a14, whose build prints
#   "version: 5913 (225e7a14)"): llamacpp.UNIFIED_SPLIT; before, the cache was one and there was no flag;
#   -fa takes on|off|auto from ggml-org/llama.cpp#15434 (release b6325, which also made auto the default); before,
#   -fa was a bare switch, off unless given.
FA_VALUE = (6325,)


def gpu_layers_words(ngl: int, n_layers: int, runtime: str, output_first: bool = False) -> str:
    """What -ngl N (num_gpu N) of no more than n_layers puts on the GPU, in words. llama.cpp builds from
    ggml-org/llama.cpp#18148 count the output layer first: the output and N - 1 repeating layers; before (and in
    Ollama's vendored llama.cpp) N repeating layers, the output left in RAM until N exceeds the layer count."""
    if ngl <= 0:
        return f"none of the {n_layers} layers"
    if runtime == "llama.cpp" and output_first:
        return "the output layer and " + ("no repeating layer" if ngl == 1 else f"{ngl - 1} of {n_layers} repeating layers")
    if runtime == "llama.cpp":
        return f"{ngl} of {n_layers} repeating layers (not the output layer)"
    if ngl >= n_layers:  # Ollama places the output layer last: every block but not it
        return f"all {n_layers} repeating layers but not the output layer"
    return f"{ngl} of {n_layers} layers"


def flag(kind, name, value, reason, text=None):
    if text is None:
        text = f"{name}={value}" if kind == "env" else f"{name} {value}"
    return {"kind": kind, "name": name, "value": str(value), "text": text, "reason": reason}


def runtime_flags(runtime, ctx, parallel, kv, s, spec, util=None, ngl=None, asked_util=None, vram=None,
                  asked_ngl=None) -> list:
    """util: the smallest vLLM share that holds the plan; asked_util: the user's --gpu-memory-utilization, kept
    (and said so) whenever it holds the plan, since a larger share only adds KV cache (concurrency). ngl: the layers
    the plan evaluated (every layer: more than the model has); asked_ngl: the user's -ngl / num_gpu as the runtime reads
    it (plan_checks: -ngl all is LC.ALL_LAYERS), printed as given (kv55), where kv's own every-layer choice is -ngl 99."""
    f = []
    if runtime == "vllm":
        if s.get("engine_env"):
            f.append(flag("env", "VLLM_USE_V1", s["engine_env"], "the engine these figures are for"))
        if s.get("mla_disable") and spec.mla:
            f.append(flag("env", "VLLM_MLA_DISABLE", "1", "the cache these figures are for: every head's K and V"))
        if s.get("sampler") == "flashinfer":
            f.append(flag("env", "VLLM_USE_FLASHINFER_SAMPLER", "1", "the sampler these figures are for (FlashInfer installed)"))
        f.append(flag("flag", "--max-model-len", ctx, "longest request; vLLM refuses to start unless one fits"))
        if s.get("tp", 1) > 1:
            f.append(flag("flag", "--tensor-parallel-size", s["tp"], "the GPUs these per-GPU figures are for"))
        if s.get("dp", 1) > 1:
            f.append(flag("flag", "--data-parallel-size", s["dp"], "the engines, each with these figures"))
        if s.get("pp", 1) > 1:
            f.append(flag("flag", "--pipeline-parallel-size", s["pp"], "the pipeline stages these figures are for"))
            if s.get("pp_partition"):
                f.append(flag("env", "VLLM_PP_LAYER_PARTITION", ",".join(str(x) for x in VP.pp_partition(
                    spec.n_layers, s["pp"], s["pp_partition"])), "layers per stage"))
        if s.get("seqs_graph") and s["max_seqs"] == s["seqs_graph"] < s.get("seqs_blocks", 1 << 30):
            f.append(flag("flag", "--max-num-seqs", s["max_seqs"], "requests decoded together: the most whose CUDA-graph "
                          "profiling cache (a block a sequence or more) fits beside the weights"))
        elif s.get("seqs_blocks"):  # lowered by the plan (plan.py): vLLM >= 0.20 refuses more than the Mamba blocks
            f.append(flag("flag", "--max-num-seqs", s["max_seqs"], f"requests decoded together: at most the pool's "
                          f"{s['seqs_blocks']} Mamba cache blocks (one per decode sequence)"))
        elif s.get("seqs_asked"):
            f.append(flag("flag", "--max-num-seqs", s["seqs_asked"], "yours, kept: requests decoded together"))
        elif parallel > 1:
            f.append(flag("flag", "--max-num-seqs", parallel, "requests decoded together"))
        f.append(flag("flag", "--kv-cache-dtype", "auto" if kv in ("f16", "bf16") else kv,
                       "model dtype cache" if kv in ("f16", "bf16") else "halves the KV cache (one byte per element)"))
        # a flag the user set is printed as given (kv55): the search keeps it (fit_search.choose), a plan that needs
        # another value does not fit and its note names the value that would
        if s.get("kv_cache_memory"):
            # vLLM sizes the pool from it and no longer from the share (CacheConfig.kv_cache_memory_bytes: "ignores
            # gpu_memory_utilization"); the user's share, if any, is kept as given
            f.append(flag("flag", "--kv-cache-memory", int(s["kv_cache_memory"]),
                          "yours: the KV pool in bytes, one GPU's (vLLM's --kv-cache-memory-bytes)"))
            top = V.free_cap(s, vram)
            if asked_util is not None:
                f.append(flag("flag", "--gpu-memory-utilization", f"{asked_util:.2f}", "yours, kept"))
            elif top is not None and V.free_refused(dict(s, util=V.default_util(s.get("version"))), vram):
                # Worker.init_device compares total x the share with the free memory whether or not the pool is fixed
                f.append(flag("flag", "--gpu-memory-utilization", f"{top:.2f}", "the most the free memory takes: vLLM's "
                              "startup check weighs the share with --kv-cache-memory too"))
        elif asked_util is not None:
            f.append(flag("flag", "--gpu-memory-utilization", f"{asked_util:.2f}",
                           f"yours, kept: it holds this plan (the least that does is {util:.2f}); the rest of the "
                           "share becomes KV cache for more requests at once" if util is not None else "yours, kept"))
        elif util is not None:
            default = V.default_util(s.get("version"))  # vLLM's own: 0.92 with the graph estimate
            u = max(util, default) if util <= default else util
            why = f"share of VRAM vLLM takes; this model needs at least {util:.2f}"
            top = V.free_cap(s, vram)
            if top is not None and u > top:  # vLLM's startup check: no more than the free memory (--free-gib)
                u, why = top, why + f", the free memory takes at most {top:.2f}"
            f.append(flag("flag", "--gpu-memory-utilization", f"{u:.2f}", why))
        if s.get("max_batched") and (s.get("batched_asked") or s["max_batched"] not in (2048, 8192)):
            f.append(flag("flag", "--max-num-batched-tokens", s["max_batched"], "profile batch: sets the activation peak"))
        if s.get("enforce_eager"):
            f.append(flag("flag", "--enforce-eager", "", "skip CUDA graph capture to free its memory", text="--enforce-eager"))
        if s.get("moe_backend") not in (None, "auto"):
            sized = V.cutlass_fp4(spec, s.get("weights_format"), s["moe_backend"])
            f.append(flag("flag", "--moe-backend", s["moe_backend"], "the experts' kernels: sizes the profile forward"
                          if sized else "the experts' kernels, as given (not modelled: the profile forward is sized as "
                          "vLLM's default)"))
        return f
    L = spec.n_layers
    ngl = s.get("ngl") if ngl is None else ngl
    all_on = ngl is None or ngl > L
    given = asked_ngl is not None and asked_ngl != LC.ALL_LAYERS  # the user's count: printed as given, even above L
    # kv's every-layer count: 99 by custom, 999 where 99 would leave layers in RAM (Llama-3.1-405B's 126 + the output)
    every = 99 if L + spec.gguf_nextn_blocks + 1 <= 99 else 999
    if runtime == "llama.cpp":
        f.append(flag("flag", "-c", ctx, f"cache cells, shared by the {parallel} slot(s)" if parallel > 1 else "cache cells"))
        if parallel > 1 or LS.np_printed(s):  # from b6925 a server given no -np starts 4 slots sharing -c
            f.append(flag("flag", "-np", parallel, "parallel slots" if parallel > 1 else
                          "one slot: without -np llama-server starts 4 sharing -c"))
            if parallel == 1 and LS.one_slot_kvu(s):  # b6925-b7432 turn -np 1 without -kvu into 4 slots
                f.append(flag("flag", "-kvu", "", "keeps -np 1 one slot (without it these builds start 4)", text="-kvu"))
            elif (parallel > 1 and s.get("unified")
                  and at_least(s.get("version"), *LC.UNIFIED_SPLIT)):  # older builds: one cache, no flag
                f.append(flag("flag", "-kvu", "", "one unified cache: a slot may use all of -c" if LS.unified_reach(s)
                              else "one unified cache (llama-server before b6925 still gives each slot -c / -np)",
                              text="-kvu"))
        f.append(flag("flag", "-ngl", asked_ngl if given else every if all_on else ngl, "all layers on the GPU" if all_on else
                       f"{gpu_layers_words(ngl, L, runtime, s.get('output_first'))} on the GPU, the rest in RAM"))
        kv_v = s.get("kv_v") or kv
        if kv != "f16":
            f.append(flag("flag", "-ctk", kv, f"K cache as {kv}"))
        if kv_v != "f16":
            f.append(flag("flag", "-ctv", kv_v, f"V cache as {kv_v} (needs flash attention)"))
        if at_least(s.get("version"), *FA_VALUE):
            f.append(flag("flag", "-fa", "on" if s["flash"] else "off", "flash attention: no score matrix in the compute buffer"))
        elif s["flash"]:  # a bare switch before -fa on|off|auto, off unless given
            f.append(flag("flag", "-fa", "", "flash attention: no score matrix in the compute buffer", text="-fa"))
        if s.get("swa_full") and not s.get("ik"):  # ik_llama.cpp has no SWA cache to shrink
            f.append(flag("flag", "--swa-full", "", "a full -c cache on the sliding-window layers", text="--swa-full"))
        if s["ubatch"] != 512:
            f.append(flag("flag", "-ub", s["ubatch"], "smaller micro-batch, smaller compute buffer"))
        if s.get("batch", LC.BATCH) != LC.BATCH:
            f.append(flag("flag", "-b", s["batch"], "logical batch: the micro-batch runs at no more than it"))
        if s.get("n_cpu_moe"):  # the experts these figures keep in host RAM
            n = min(s["n_cpu_moe"], L)
            f.append(flag("flag", "--n-cpu-moe", n, f"the routed experts of the first {n} layers in host RAM"))
        for ot in ([s["override_tensor"]] if isinstance(s.get("override_tensor"), str) else s.get("override_tensor") or ()):
            f.append(flag("flag", "-ot", f"'{ot}'", "the routed experts of the layers it names in host RAM"))
        if s.get("mmproj") and spec.vision:  # the projector these figures count
            f.append(flag("flag", "--mmproj", "MMPROJ.gguf", "the vision projector, on the GPU"))
        return f
    f.append(flag("env", "OLLAMA_NUM_PARALLEL", parallel, "each parallel slot gets its own num_ctx of cache"))
    if kv != "f16":
        f.append(flag("env", "OLLAMA_FLASH_ATTENTION", 1, "required for a quantized KV cache"))
        f.append(flag("env", "OLLAMA_KV_CACHE_TYPE", kv, f"KV cache as {kv}"))
    elif s["flash"]:
        f.append(flag("env", "OLLAMA_FLASH_ATTENTION", 1, "smaller compute buffer"))
    f.append(flag("env", "OLLAMA_CONTEXT_LENGTH", ctx, "server default num_ctx"))
    f.append(flag("param", "num_ctx", ctx, "per request: options {\"num_ctx\": N} or PARAMETER num_ctx N in a Modelfile",
                   text=f"PARAMETER num_ctx {ctx}"))
    if s.get("ubatch_asked"):  # Ollama >= 0.30 hands it to llama-server as -b and -ub
        f.append(flag("param", "num_batch", s["ubatch_asked"], "llama-server's -b/-ub (the micro-batch these figures are for)",
                      text=f"PARAMETER num_batch {s['ubatch_asked']}"))
    if given or not all_on:
        n = asked_ngl if given else ngl
        f.append(flag("param", "num_gpu", n, "layers on the GPU", text=f"PARAMETER num_gpu {n}"))
    return f


def lora_flags(runtime, knobs, rank, loras) -> list:
    """vLLM's LoRA flags when the plan sized LoRA slots for a server it starts (Unsloth starts its own engine)."""
    if runtime != "vllm" or not rank or str(knobs.get("vllm_entrypoint") or "").lower() == "unsloth":
        return []
    f = [flag("flag", "--enable-lora", None, "LoRA slots allocated at load", text="--enable-lora"),
         flag("flag", "--max-lora-rank", rank, "sizes every slot")]
    return f + ([flag("flag", "--max-loras", loras, "slots held on the GPU")] if loras > 1 else [])


def mtp_flags(knobs, runtime="vllm") -> list:
    """The speculative-decoding flags when the plan counted an MTP drafter (mtp_tokens): vLLM's config, llama.cpp's
    --spec-type draft-mtp with its draft length."""
    n = knobs.get("mtp_tokens")
    sep = knobs.get("speculative_config")  # a separate drafter (plan_checks.speculative_config: parsed)
    if sep and runtime == "vllm":
        return _speculative_flag({"method": sep["method"], **({"model": sep["model"]} if sep["model"] else {}),
                                  "num_speculative_tokens": sep["tokens"], **sep.get("others", {})},
                                 "drafter counted" if sep["model"] else "no drafter model: nothing of its own on the GPU")
    if not n:
        return []
    if runtime == "llama.cpp":
        f = [flag("flag", "--spec-type", "draft-mtp", "MTP context and state snapshots counted"),
             flag("flag", "--spec-draft-n-max", int(n), f"{int(n) + 1} recurrent-state snapshots")]
        t = knobs.get("draft_kv_dtype")
        if t and t != "f16":
            f += [flag("flag", "-ctkd", t, f"MTP context's K cache as {t}"),
                  flag("flag", "-ctvd", t, f"MTP context's V cache as {t}")]
        return f
    return _speculative_flag({"method": "mtp", "num_speculative_tokens": int(n), **(knobs.get("mtp_others") or {})},
                             "MTP drafter counted")


def _speculative_flag(cfg: dict, why: str) -> list:
    """vLLM's --speculative-config: JSON as vLLM reads it (a path's backslashes and quotes escaped), the keys kv does
    not read kept after those it does, quoted for the shell."""
    text = json.dumps(cfg, separators=(",", ":"))
    return [flag("flag", "--speculative-config", text, why, text=f"--speculative-config {shlex.quote(text)}")]


def lmo_flags(runtime, knobs) -> list:
    """--language-model-only and --limit-mm-per-prompt as given (JSON, the form vLLM 0.10+ takes)."""
    if runtime != "vllm":
        return []
    out = [flag("flag", "--language-model-only", "", "no vision tower", text="--language-model-only")
           ] if knobs.get("language_model_only") else []
    if knobs.get("limit_mm_per_prompt") not in (None, "", {}):
        text = json.dumps(V.mm_limit_json(knobs["limit_mm_per_prompt"]), separators=(",", ":"))
        out.append(flag("flag", "--limit-mm-per-prompt", text, "items a prompt may hold",
                        text=f"--limit-mm-per-prompt {shlex.quote(text)}"))
    if knobs.get("mm_encoder_tp_mode") not in (None, "", "weights"):
        out.append(flag("flag", "--mm-encoder-tp-mode", knobs["mm_encoder_tp_mode"], "the vision tower whole on every GPU"))
    return out


def offload_flags(runtime, knobs) -> list:
    """vLLM's --cpu-offload-gb as given: the weights these figures keep off the GPU (runtimes/vllm_offload.py)."""
    if runtime != "vllm" or not knobs.get("cpu_offload_gb"):
        return []
    return [flag("flag", "--cpu-offload-gb", f"{knobs['cpu_offload_gb']:g}", "decoder-layer weights kept in host RAM")]


def ssm_flags(runtime, knobs) -> list:
    """vLLM's --mamba-ssm-cache-dtype and --enable-prefix-caching as given: the state page and the state pages a
    request these figures are for (runtimes/vllm.py settings: prefix caching is off for a hybrid model unless given)."""
    if runtime != "vllm":
        return []
    t = str(knobs.get("mamba_ssm_cache_dtype") or "auto").lower()
    out = [] if t == "auto" else [flag("flag", "--mamba-ssm-cache-dtype", t, "the state page these figures are for")]
    if knobs.get("prefix_caching") is not None:
        name = "--enable-prefix-caching" if knobs["prefix_caching"] else "--no-enable-prefix-caching"
        out.append(flag("flag", name, "", "prefix caching as given", text=name))
    return out


# quantization methods vLLM applies at load to a 16-bit checkpoint: the checkpoint does not say them, the command must
# (--quantization experts_int8: ExpertsInt8Config; review16b F1: a plan sized for int8 experts printed a command that
# loads them in 16 bits)
ONLINE_QUANT = ("experts_int8",)


# vLLM's --quantization method names -> the weight format kv sizes (weights.LINEAR_BITS): the Marlin/other kernels' names
# for the same storage; bitsandbytes quantizes a 16-bit checkpoint in flight to 4-bit NF4 (vLLM's BitsAndBytesConfig
# default). A method not listed here is one kv has no size for
VLLM_QUANTIZATION = {"fp8": "fp8", "ptpc_fp8": "fp8", "fbgemm_fp8": "fp8", "bitsandbytes": "bnb-4bit", "awq": "awq",
                     "awq_marlin": "awq", "gptq": "gptq", "gptq_marlin": "gptq", "experts_int8": "experts_int8",
                     "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4", "auto-round": "auto_round", "auto_round": "auto_round"}


def quant_flags(runtime, weights_dtype) -> list:
    """vLLM's --quantization for an online method the plan sized (ONLINE_QUANT)."""
    q = str(weights_dtype or "").lower()
    if runtime != "vllm" or q not in ONLINE_QUANT:
        return []
    return [flag("flag", "--quantization", q, "quantized at load: the weights these figures are for")]


def command(runtime, flags) -> str:
    if runtime == "vllm":
        env = "".join(f["text"] + " " for f in flags if f["kind"] == "env")
        return env + "vllm serve MODEL " + " ".join(f["text"] for f in flags if f["kind"] == "flag")
    if runtime == "llama.cpp":
        return "llama-server -m MODEL.gguf " + " ".join(f["text"] for f in flags)
    env = " ".join(f["text"] for f in flags if f["kind"] == "env")
    return f"{env} ollama serve"
