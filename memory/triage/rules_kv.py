"""Triage's rule rows for *kv-cache*: the cache of keys and values a serving runtime sizes from its context, slots or
batch (rows, not code: the row format is in rules.py's docstring). rules.py puts them at their place among the cause
sections: the rows are one ordered group there."""
from ..units import GiB, fmt_bytes
from .predicates import TRT_KV, host, kind, kv_sized, KV_GRAINS, kv_grain, ollama_kv_first, stage, stage_said, tgi, trt_component, trt_free
from .rule_row import Rule
from .rules_other import omlx_safety

MLX_PROMPT_CACHE_MIN = 1e9     # 1 GB (the line prints decimal GB): a cache this size is a real part of any Mac's Metal budget

R = Rule
KV_CACHE = [
    R("kv-cache", 3.0, lambda x: x.frame_cause == "kv-cache",
      "traceback: {where}, which preallocates the KV cache for the maximum batch and sequence length: a shorter "
      "max_seq_len (or batch) sizes it to what the weights leave", hint=True),
    # the runtime's error context names the cache's allocation (predicates.stage_said: "cache alloc failed"): the KV cache of
    # a new sequence or session, allocated after the weights were resident
    R("kv-cache", 3.0, lambda x: stage_said(x) == "kv",
      "the runtime's own message says the cache allocation failed: the KV cache of a new sequence or session, after the weights "
      "were resident; fewer concurrent sequences (admit a new one only while its cache fits), a shorter context, or a quantized "
      "cache"),
    R("kv-cache", 1.5, kind("exllama.split"), "the cache is placed with the weights in the same split: a smaller cache_size or "
      "cache mode leaves room for the model"),
    R("kv-cache", 4.0, lambda x: x.kind == "vllm.kv_max_len" and "kv_needed" in x.n,
      "{n[kv_needed]:b} of KV cache needed for one full-length request, {n[kv_available]:b} available"),
    R("kv-cache", 4.0, lambda x: x.kind == "vllm.kv_max_len" and "kv_needed" not in x.n,
      lambda x: f"max_model_len {x.n.get('max_model_len_tokens')} tokens > {x.n.get('kv_max_tokens')} tokens the KV cache can hold"
      if "kv_max_tokens" in x.n else "vLLM: one request at max_model_len needs more KV cache than the memory left for it: lower "
      "--max-model-len, or raise --gpu-memory-utilization"),
    R("kv-cache", 1.5, kind("vllm.no_kv_blocks"), "the KV cache gets what is left of gpu_memory_utilization x total"),
    # a hybrid model's state cache: one block per decoding sequence, from what gpu_memory_utilization leaves after the weights
    R("kv-cache", 4.0, kind("vllm.mamba_blocks"),
      "vLLM: max_num_seqs {n[max_num_seqs_count]} sequences need as many Mamba state blocks, and the memory left after the "
      "weights holds {n[mamba_blocks_count]}: lower --max-num-seqs to {n[mamba_blocks_count]} or less, or raise "
      "--gpu-memory-utilization"),
    # Ollama found no placement: most often the context (the default grew to 256k tokens for some models) and its KV cache
    # Ollama's runner died loading the model ("model failed to load, this may be due to resource limitations"): the load
    # allocates the weights and the KV cache of num_ctx together, and since 0.15 Ollama picks large default contexts by VRAM
    # (262144 tokens on 48 GiB and more): the context leads, narrowly, over the weights (the client's line names neither)
    # Ollama's own estimate ("offload to" line) says the context's KV cache is most of what the load needs and left the
    # GPU half the layers or fewer: whatever failed after it (a context not created, the runner gone), the context sized it
    R("kv-cache", 3.0, kv_sized,
      lambda x: f"the buffer that failed ({fmt_bytes(x.req)}) is an exact multiple of {KV_GRAINS[kv_grain(x.req)] >> 20} MiB"
                + ("" if kv_grain(x.req) == "f16" else f", a {kv_grain(x.req)} cache's grain") + ", the shape of llama.cpp's KV cache "
                "(layers x context cells x K/V width x bytes, the context a power of two): the context (times the parallel "
                "slots) sized it; a smaller context, fewer slots, or a quantized cache"),
    R("kv-cache", 3.0, ollama_kv_first,
      lambda x: f"Ollama's own estimate: the KV cache of the context needs {fmt_bytes(x.f['ollama_kv'])} of the "
                f"{fmt_bytes(x.f['ollama_required'])} the model needs, and {x.f['ollama_layers'][0]} of {x.f['ollama_layers'][1]} "
                "layers fit the GPU: the context (num_ctx x OLLAMA_NUM_PARALLEL) is too long; lower num_ctx or "
                "OLLAMA_NUM_PARALLEL, or an 8-bit cache (OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1)"),
    R("kv-cache", 1.0, kind("ollama.load_failed"),
      "Ollama's runner failed while it loaded the model, when it allocates the KV cache of the whole context (num_ctx, "
      "OLLAMA_CONTEXT_LENGTH; Ollama 0.15+ defaults large contexts by VRAM) with the weights"),
    R("kv-cache", 2.0, lambda x: x.kind == "ollama.layout" and "num_gpu_layers" not in x.n,
      "Ollama could not lay out weights, KV cache and compute graph on the devices: the context length's KV cache is the usual excess"),
    R("kv-cache", 4.0, lambda x: tgi(x) and "total_tokens" in tgi(x),
      lambda x: f"text-generation-inference could not hold {tgi(x)['total_tokens']} tokens of KV cache (--max-batch-total-tokens) "
                "next to the weights: lower --max-batch-total-tokens, or leave it unset so TGI sizes the cache from free memory"),
    # vLLM.rs's scheduler would not admit a prompt whose new tokens pass the cache's free tokens: the running requests (and
    # the prefixes it keeps cached) hold the rest
    R("kv-cache", 2.0, kind("vllmrs.kv_admit"),
      "vLLM.rs's scheduler refused the request: its prompt needs {n[requested_tokens]} new tokens of KV cache and "
      "{n[available_tokens]} were free; the running requests and the prefixes kept cached hold the rest: retry later, fewer "
      "concurrent requests or a shorter prompt, or give the KV cache more memory"),
    # (round 95) llama.cpp's decode found no cells left in its KV cache for a batch: the context (per slot, with --parallel)
    # is full of the requests' tokens
    R("kv-cache", 4.0, kind("ggml.kv_slot"),
      "llama.cpp found no room in its KV cache for the batch: the tokens of the running requests fill the context (divided among "
      "the slots with --parallel); raise -c (--ctx-size), lower --parallel, or shorten the prompts"),
    R("kv-cache", 4.0, kind("sglang.kv_pool"),
      lambda x: f"SGLang's KV pool could not place the {x.ev.get('stage', 'next')} batch"
                + (f" ({x.n['requested_tokens']} tokens)" if "requested_tokens" in x.n else "")
                + ": the running requests' context fills it; lower --max-running-requests or --chunked-prefill-size, or give the pool more"),
    R("kv-cache", 4.0, lambda x: trt_component(x) in TRT_KV,
      lambda x: f"TensorRT-LLM could not create the {trt_component(x)}{trt_free(x)}: "
                + ("lower kv_cache_config.free_gpu_memory_fraction" if trt_component(x) == "kv cache" else "lower max_num_tokens")),
    # LMDeploy's TurboMind: the weights are placed at load; what it allocates after is the KV cache, sized by
    # cache_max_entry_count (entries of session_len tokens before v0.1, a share of the free memory since) and its batch
    # (round 63) mlx_lm.server logged a prompt cache of a gigabyte or more (its cached KV, in unified memory) before Metal ran
    # out of memory: the KV caches it keeps, with the live requests' own, are what filled the Metal working set
    R("kv-cache", 3.0, lambda x: x.kind == "metal.oom" and (x.f["mlx_prompt_cache"] or 0) >= MLX_PROMPT_CACHE_MIN,
      lambda x: f"mlx_lm.server's prompt cache held {x.f['mlx_prompt_cache'] / 1e9:.2f} GB of KV caches before Metal ran out: "
                "cached and live KV share the Metal working set; a lower --prompt-cache-bytes (and shorter contexts per request) "
                "leaves room for the live requests"),
    R("kv-cache", 3.0, kind("lmdeploy.turbomind"),
      "LMDeploy's TurboMind ran out of GPU memory: after its weights, its KV cache (cache_max_entry_count, session_len, "
      "max_batch_size) is what it allocates; lower cache_max_entry_count or session_len, or max_batch_size"),
    # TurboMind's CUDA check quoted without its "[TM][ERROR]" prefix ("CUDA runtime error: out of memory", the check's
    # cudaGetErrorString wording) in a log that names LMDeploy: the same reading (InternLM/lmdeploy#978, round 61); its PyTorch
    # engine raises PyTorch's own message instead
    R("kv-cache", 3.0, lambda x: x.kind in ("cuda.driver", "generic.oom") and x.env["runtime"] == "lmdeploy"
      and "CUDA runtime error: out of memory" in x.text,
      "LMDeploy's TurboMind ran out of GPU memory (its CUDA check's wording): after its weights, its KV cache "
      "(cache_max_entry_count, a share of the card's memory, session_len, max_batch_size) is what it allocates; lower "
      "cache_max_entry_count or session_len, or max_batch_size"),
    # the traceback's source line passes the KV cache through a decoding step (not training, where no cache grows)
    R("kv-cache", 3.0, lambda x: x.src_cause == "kv-cache" and not x.training and not host(x),
      "traceback source line: {src_line} (a KV cache extended token by token: batch x length sets it)", hint=True),
    # (fixV) whisper.cpp's own cache (whisper_kv_cache_init): the decoder's self-attention cache (its 448-token text context,
    # times beam size + 2 under beam search) and the cross-attention cache over the audio, after the weights; no -c to cut
    R("kv-cache", 4.0, lambda x: x.ggml_stage == "kv-cache-failed" and x.env["runtime"] == "whisper.cpp",
      "whisper.cpp could not allocate its decoder's KV cache (whisper_kv_cache_init): the self-attention cache (grown for each "
      "beam-search or best-of decoder) and the cross-attention cache over the audio did not fit beside the model's weights"),
    R("kv-cache", 4.0, lambda x: x.ggml_stage == "kv-cache-failed" and x.env["runtime"] != "whisper.cpp",
      "llama.cpp: failed to allocate buffer for kv cache{n_ctx_note}"),
    R("kv-cache", 1.0, lambda x: x.ggml_stage == "compute-failed" and x.n_ctx and x.n_ctx >= 32768, "context of {n_ctx} tokens"),
    # the KV buffers the log shows outweigh the weights: the context (times Ollama's parallel slots) is what to cut
    R("kv-cache", 3.0, lambda x: x.ggml_stage in ("after-kv-buffers", "compute-failed") and x.kv_bytes >= 4 * GiB and x.kv_bytes >= 2 * x.model_bytes,
      lambda x: f"the KV cache already takes {fmt_bytes(x.kv_bytes)}" + (f" for {x.n_ctx} cells" if x.n_ctx else "")
      + (f", more than the {fmt_bytes(x.model_bytes)} of weights" if x.model_bytes else "")
      + ": the context length (times the parallel slots) sets the KV cache and the compute buffer over it"),
    R("kv-cache", 2.6, stage("after-model-buffers"), "the model's buffers were allocated; the next allocation (the KV cache) failed"),
    # llama.cpp on Metal: the command buffer of a graph over a very long context (KV cache and its attention scratch)
    # a server's memory guard refused a prefill by its own estimate of the prompt's KV cache and attention: when the estimate
    # is right, the prompt is too long for what the model leaves (the guard's own advice); the runner-up to its estimate (other)
    R("kv-cache", 1.2, lambda x: x.kind == "mlx.ceiling" and x.ev.get("form") == "preflight",
      "if the guard's estimate is right, this prompt's KV cache ({n[requested]:b} with its attention) does not fit next to the "
      "{n[allocated]:b} the process holds: a shorter context, or smaller prefill chunks"),
    # (tri50) oMLX's safety cap refused a prompt its estimate above had let pass: the prompt's KV cache (from the model's cache
    # layout, no attention term) and one minimum chunk at the full context, over what the process holds, pass the cap; no
    # smaller chunk helps, so the context's cache is what does not fit (R14). Held memory alone over the cap: rules_weights
    R("kv-cache", 3.0, lambda x: omlx_safety(x) and x.n["allocated"] < x.n["max_allowed"],
      "the server's safety check found that even its smallest prefill chunk cannot run: this prompt's KV cache ({n[requested]:b}) "
      "and one minimum chunk on top of the {n[allocated]:b} the process holds pass its {n[max_allowed]:b} cap, so no chunking "
      "helps; a shorter context, a quantized KV cache, or a higher ceiling (memory_guard_tier)"),
    R("kv-cache", 3.0, lambda x: x.kind == "metal.oom" and (x.f["ggml_n_ctx"] or 0) >= 32768,
      "Metal could not back the graph of a {f[ggml_n_ctx]}-token context: its KV cache and the attention over it; a smaller -c / num_ctx fits"),

]
