"""The plan's answer (plan._plan's last steps): the figures at the asked context (_answer), then each runtime's fields
beside them: vLLM's pool line and concurrency (_vllm_pool_fields), its start refusal when one request does not fit
the pool (_vllm_kv_refusal, vllm_refusal.py's figures), and llama.cpp / Ollama's layers, offload and buffers
(_gguf_runtime_fields). Bodies as they were in plan.py."""
from ..units import fmt_bytes
from . import vllm_refusal as VREF
from .runtimes import llamacpp as LC, ollama as OL, vllm as V, vllm_overheads as VO, vllm_pipeline as VP


def _drafter_per_token(ev, kv) -> int:
    """A separate drafter's layers' bytes a token on this GPU (cache.draft_token_bytes; vllm_drafter's kind of its own):
    kv_per_token counts them beside the target's, as kv_total does (rev25 S1). A drafter in the target's group is in
    ev's per_token already (with_draft_layers)."""
    from .cache import draft_token_bytes
    d = (ev["kv"].get("pool_args") or {}).get("drafter")
    return d["layers"] * draft_token_bytes(d, kv) if d else 0


def _answer(spec, runtime, ctx, parallel, kv, weights_dtype, roles, vram, s, ev, proj, refused, knobs, notes) -> dict:
    """The answer's figures at the asked context (ev: FS.evaluate's)."""
    out = {"model": spec.summary(), "runtime": runtime, "runtime_version": knobs.get("runtime_version"), "ctx": ctx,
           "parallel": parallel, "kv_dtype": kv, "weights_dtype": weights_dtype or spec.quant or spec.dtype,
           "weights": int(roles["total"]), "weights_how": roles["how"],
           "weights_by_role": {k: roles[k] for k in ("embedding", "output", "blocks")},
           "weights_gpu_full": int(roles["total"] if runtime == "vllm" else roles["blocks"] + roles["output"]),
           "kv_per_token": ev["kv"]["per_token"] + _drafter_per_token(ev, kv), "kv_total": ev["kv"]["total"],
           "kv_detail": ev["kv"],
           "kv_per_layer": {"full": ev["kv"]["per_full_layer"],
                            "device_buffer": ev["kv"]["per_full_layer"] + ev.get("kv_buffer_pad_per_layer", 0)},
           # (rev7 B5) the KV buffer lines' sum: the cache plus the CUDA buffer's padded rows of its layers on the GPU
           "kv_buffer_pad": ev.get("kv_buffer_pad", 0), "kv_buffer": ev["kv"]["total"] + ev.get("kv_buffer_pad", 0),
           "overhead": ev["overhead"], "overhead_total": int(sum(ev["overhead"].values())), "total": ev["total"],
           "vram": int(vram) if vram else None, "budget": ev["budget"], "fits_as_requested": ev["fits"] and not refused,
           "fits": ev["fits"] and not refused, "max_ctx": None, "max_ctx_by_kv_dtype": {}, "max_ctx_layers": {}, "flags": [],
           "command": "", "autofit": [], "notes": notes}
    if s.get("drafter_kv_sizing"):  # a mixed sliding/full drafter sized all full (vllm_drafter.separate_drafter)
        out["drafter_kv_sizing"] = s["drafter_kv_sizing"]
    host_exps = LC.cpu_expert_bytes(spec, s) if runtime == "llama.cpp" else None
    if host_exps:  # the experts --n-cpu-moe (the first N layers) or -ot (the layers its pattern names) keeps in host memory
        out["host_experts_full"] = sum(host_exps)
        out["weights_gpu_full"] -= out["host_experts_full"]
        out["n_cpu_moe"] = (min(knobs["n_cpu_moe"], spec.n_layers) if knobs.get("n_cpu_moe")
                            else len(s["cpu_moe_layers"]))
        if s.get("cpu_moe_layers") is not None:
            out["cpu_moe_layers"] = list(s["cpu_moe_layers"])
    if runtime == "vllm" and ev.get("stages"):  # pipeline parallelism: rank 0's figures, every stage listed
        out["weights"] = out["weights_gpu_full"] = int(ev["stage_weights"])
        out["weights_how"] += f"; stage 0 of {s['pp']}: {ev['stage_layers']} layers + the embedding"
        out["pp_stages"] = ev["stages"]
        if vram:  # the verdict's stage: the least KV pool left (the table stays rank 0's)
            out["pp_deciding_stage"] = VP.deciding_stage(ev["stages"])
            # --json: the deciding stage's pool beside kv_capacity_bytes, which stays rank 0's (rev23 D5)
            out["pp_deciding_kv_capacity_bytes"] = ev["stages"][out["pp_deciding_stage"]]["pool"]
        notes.append(f"pipeline parallel {s['pp']}: layers per stage "
                     + ", ".join(str(st["stage_layers"]) for st in ev["stages"])
                     + "; weights, KV and overheads are stage 0's (the first GPU, as vLLM's rank 0 prints them: the "
                     "embedding there, the head and the sampler on the last); KV tokens and concurrency are the smallest "
                     "stage's (every stage keeps the same number of blocks); --vram is one GPU's"
                     + (f"; the verdict is the deciding stage's, the one left the least KV pool "
                        f"({VP.stage_words(out['pp_deciding_stage'], ev['stages'])})"
                        if vram else ""))
    if runtime == "vllm" and ev.get("context_inside"):
        notes.append("this V1 build counts every byte torch did not allocate (the CUDA context, and any other process's "
                     "memory on the GPU) inside --gpu-memory-utilization, before vllm#19312 (0.9.1)")
    if runtime == "ollama":
        out["placement_need"] = ev["placement_need"]
        # what the placement check adds to a full load's allocation: the graph sized for a partial offload
        out["partial_graph_extra"] = int(max(ev["graph_partial"] - ev["overhead"]["compute_buffer"], 0))
    if proj and runtime != "vllm":
        out["projector"] = {"weights": proj["weights"], "graph": ev["overhead"].get("projector_graph", proj["graph"]),
                            "on_gpu": runtime == "ollama" or s.get("mmproj", False)}
    return out


def _vllm_pool_fields(out, runtime, ctx, parallel, vram, s, ev, refused, notes) -> None:
    """vLLM with --vram: its KV pool, what it would print, and why it stops (Mamba blocks, the graph profile)."""
    if runtime == "vllm" and vram:
        out.update(kv_capacity_bytes=ev["pool"], kv_capacity_tokens=ev["pool_tokens"], concurrency=ev["concurrency"],
                   pool_fixed=bool(s["kv_cache_memory"]), kv_request_bytes=ev.get("kv_request_bytes"))
        if ev.get("started") is not None:  # --kv-cache-memory: held once started, below a higher profile peak
            out["started_bytes"] = ev["started"]
        lowered = ev.get("pool_fit") is not None and ev["pool"] > ev["pool_fit"]  # OOMs allocating it: prints no line
        if not ev.get("free_refused") and not refused and not lowered:  # refused before it profiles: no pool line
            out["vllm_would_print"] = V.would_print(ev, ctx, s)
        if VO.compiles_in_profile(s) and not s["kv_cache_memory"] and ev["pool"] > 0:
            notes.append(VO.COLD_COMPILE_NOTE)
        if ev.get("mamba_blocks") is not None:
            notes.append(f"max_num_seqs ({s['max_seqs']}) exceeds the pool's {ev['mamba_blocks']} Mamba cache blocks: "
                         "vLLM refuses to capture its CUDA graphs (one state block per decode sequence); "
                         f"--max-num-seqs {ev['mamba_blocks']} or less, or a larger "
                         + ("--kv-cache-memory" if s["kv_cache_memory"] else "--gpu-memory-utilization"))
        if ev.get("graph_profile_oom"):
            notes.append(f"vLLM dies measuring its CUDA graphs: it first allocates a minimal KV cache of "
                         f"{VO.graph_profile_blocks(s)} blocks ({fmt_bytes(ev['graph_profile_oom'])}) outside "
                         "--gpu-memory-utilization, more than the weights leave (profile_cudagraph_memory); "
                         "--enforce-eager, or a lower --max-num-seqs")
        if ev["fits"] and ev["concurrency"] < 1 and ev.get("pool_tokens"):
            # vLLM's own rule, not a contradiction: from 0.8.3 to 0.9.0 its start check sizes a sliding layer by its
            # window but the pool gives every layer full-length pages (runtimes/vllm.py SWA_CHECKED), so it starts
            # with less than one request's room (vllm-plg-gemma3-12b-qat-awq-2x4090-tp2-128k printed 0.53x and served)
            notes.append(f"vLLM starts, but its pool holds {ev['pool_tokens']:,} tokens, {ev['concurrency']:.2f} of one "
                         f"request of {ctx:,}: its start check sized the sliding layers by their window, the pool keeps "
                         f"every layer at full length, so a request that grows past {ev['pool_tokens']:,} tokens finds no "
                         f"free page there; --max-model-len {ev['pool_tokens'] // 16 * 16} or less, or a "
                         "vLLM from 0.9.1 (the hybrid manager sizes the sliding layers' pages by their window)")
        elif ev["fits"] and ev["concurrency"] < parallel:
            notes.append(f"vLLM starts, but holds only {ev['concurrency']:.2f} requests of {ctx} tokens at once: "
                         f"the other requests of the {parallel} wait or are preempted")


def _vllm_kv_refusal(out, spec, runtime, ctx, kv, vram, s, ev, refused) -> None:
    """vLLM's start refusal when one request of --max-model-len needs more KV cache than the pool (vllm_refusal.py).
    Other refusals (free memory, the Mamba blocks, an empty pool, the model's limit) say their own reason elsewhere."""
    if runtime != "vllm" or not vram or refused or ev.get("free_refused") or ev["pool"] <= 0 or ev.get("mamba_blocks"):
        return
    if ev["starts"]:  # a --kv-cache-memory pool above what fits is still checked first: get_kv_cache_configs runs
        return        # the check before initialize_from_config allocates (EngineCore._initialize_kv_caches)
    ref = VREF.kv_refusal(spec, ctx, kv, s, ev)
    if ref:
        out["vllm_refusal"] = ref


def _gguf_runtime_fields(out, spec, runtime, ctx, parallel, kv, roles, vram, s, ev, proj, knobs, notes) -> None:
    """llama.cpp's and Ollama's fields: devices, host/GPU weights, Ollama's printed totals and its llama-server."""
    if runtime in ("llama.cpp", "ollama") and ev.get("devices"):  # Ollama >= 0.30: its llama-server over the cards
        out["devices"] = ev["devices"]
        out["per_gpu"] = "total" in ev["devices"][0]  # each card judged on --vram, else the whole load on their sum
        notes.append(("llama.cpp over " if runtime == "llama.cpp" else "Ollama's llama-server over ")
                     + str(len(ev["devices"])) + (" GPUs (--tensor-split)" if runtime == "llama.cpp" else
                                                  " GPUs (no -ts: split by free memory)") + ": layers per GPU "
                     + ", ".join(f"{d['layers']}" + (" + output" if d["output_layer"] else "") for d in ev["devices"])
                     + "; KV buffers " + ", ".join(fmt_bytes(d["kv"]) for d in ev["devices"])
                     + ("; each GPU (--vram each) holds its own context, compute buffer and margin: "
                        + ", ".join(fmt_bytes(d["total"]) for d in ev["devices"]) + ", judged one by one"
                        if "total" in ev["devices"][0] else
                        "; the totals and the verdict are the whole load's (give --vram as the GPUs' sum)"))
    if runtime == "llama.cpp" and LC.VULKAN_GPU.search(str(s.get("gpu_name") or "")) and "cuda_context" not in ev["overhead"]:
        notes.append("Vulkan device: no CUDA context charged (ggml-vulkan holds none); its preallocated matmul buffers "
                     "(tens of MiB at most) are not sized; give --vram as the free memory the build prints")
    if runtime != "vllm" and ev.get("metal_span"):
        notes.append("Metal maps the file from its first GPU tensor (Gemma 4's rope_freqs) to its last: the whole file, "
                     "host tables included, is in the GPU model buffer (MTL0_Mapped), as llama.cpp's fit step counts it")
    if runtime != "vllm":
        out["host_weights"] = ev["host_weights"]
        out["gpu_weights"] = ev["gpu_weights"]  # a tied output's copy included where the output layer is on the GPU
        out["gpu_layers_used"] = None if ev["ngl"] > spec.n_layers else ev["ngl"]
        out["ngl_counts_output"] = bool(s.get("output_first"))
    if runtime == "ollama":  # its log's memory.weights.total, defined differently before and after 0.6
        out["ollama_flash_shrinks_graph"] = OL.flash_shrinks_graph(spec, ctx, parallel, kv, roles, vram, s, proj, ev)
        out["ollama_weights_total"] = ev["printed_weights_total"]
        if "total_memory" in ev:  # 0.12.11-0.29's llama runner prints "total memory" instead (OL.LAYOUT_TOTAL)
            out["ollama_total_memory"] = ev["total_memory"]
        else:  # its memory.required.full
            out["ollama_required_full"] = ev["required_full"]
        if "kv_allocated" in ev:  # the llama runner's own allocation of the cache (its llama_kv_cache line)
            out["ollama_kv_allocated"] = ev["kv_allocated"]
        if OL.llama_server(s["version"]):
            notes.append(f"Ollama {knobs.get('runtime_version')} starts llama.cpp's llama-server (-c {ctx * parallel} "
                         f"-np {parallel}, no -ngl: its --fit places the layers); sized as llama.cpp, keeping --fit's "
                         "1 GiB free")
            if not s.get("flash_gpu", True) and knobs.get("flash_attn") is None:
                notes.append(f"{knobs.get('gpu_name')}: Ollama {knobs.get('runtime_version')} passes --flash-attn off "
                             "(ml/device.go FlashAttentionSupported refuses the card), and its automatic num_batch "
                             "is then 512, or 256 above 4096 tokens on a card of 8 GiB or less")
