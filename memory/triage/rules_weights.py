"""Triage's rule rows for *weights-exceed-vram*: the model itself does not fit (rows, not code: the row format is in
rules.py's docstring). rules.py puts them at their place among the cause sections."""
from ..units import fmt_bytes
from . import predicates
from .predicates import (OVER_CARD, big_request, ds4_guard_weights_over, fsdp_clone_near, PARAM_RE, TRT_WEIGHTS, async_full, ct2_load, cut_full, ggml_placed, ggml_room, host, kind,
                         metal_kv_weights, mps_full, preflight_room, preflight_weights_over, script_full, script_packed, stage, stage_said, sysmem_fallback, tf_kernel, torch, torch_full, tpu_full, trt_component, trt_free,
                         trt_kv_sizing, trt_kv_starved, vllm_loading, vllm_loading_cut)
from .card_room import room_left
from .printed_card import printed_total, tiny_printed
from .native_runtimes import mnn_parameter
from .rule_row import Rule
from .should_fit import over_card
from .tiny_shared import others_fill_tiny
from .te_load import te_loading
from .ollama_forced_layers import ROWS as OLLAMA_FORCED_ROWS     # (aud68c #6)
from .mps_weights import ROWS as MPS_WEIGHTS_ROWS     # (aud68c #7)

R = Rule
# ggml's SYCL check prints its error, "in function ... at ...ggml-sycl.cpp:N" and "SYCL error" together: the function line is
# this close to the failure it belongs to (intel/ipex-llm#13273: the line after the runner's error)
SYCL_CHECK_LINES = 3
# (round 113) PyTorch holding under this share of a tiny card has its (small) weights in place: a big request is a buffer
TINY_HELD_SHARE = 0.1
WEIGHTS = [
    *OLLAMA_FORCED_ROWS,     # (aud68c #6) Ollama's num_gpu over its own estimate, with the full load over the room
    # --- weights-exceed-vram: the model itself does not fit --------------------------------------------
    # exllamav3's loader found no room in the GPU split for the modules and the cache: mostly the weights (a bpw too high
    # for the cards); a cache_size too large for what the weights leave is the runner-up
    R("weights-exceed-vram", 3.0, kind("exllama.split"),
      "ExLlama's loader could not fit the model's modules and its cache in the GPUs' split: a lower-bpw quant, or less cache "
      "(cache_size, a Q4/Q8 cache mode), or another GPU in the split"),
    R("weights-exceed-vram", 1.6, torch_full, "PyTorch already holds {allocated:b} of {total:b} and fails on a small {req:b} request"),
    # (round 105) the error FSDP's full state_dict hook carries in its clone warning (predicates.fsdp_clone_near): saving a
    # full state_dict on the GPU gathers an unsharded copy of every parameter onto each rank's card beside the training
    # shards; the copies, not a working tensor of the step, fill it (FSDP's remedy: offload_to_cpu=True, rank0_only=True)
    R("weights-exceed-vram", 4.0, fsdp_clone_near,
      "FSDP could not clone a gathered parameter while taking the full state_dict (its warning carries this error): a full "
      "state_dict on the GPU gathers an unsharded copy of the model's weights onto each rank's card beside the training "
      "shards; take it with FullStateDictConfig(offload_to_cpu=True, rank0_only=True), or save a sharded state_dict"),
    R("weights-exceed-vram", 1.6, async_full, "PyTorch holds {allocated:b} of {total:b} and fails on a {req:b} request"),
    R("weights-exceed-vram", 1.6, script_full,
      "a script without a traceback: PyTorch holds {allocated:b} of {total:b} and a {req:b} (per-tensor sized) request fails: the model fills the card"),
    R("weights-exceed-vram", 1.6, lambda x: script_packed(x) and not script_full(x),
      "a script without a traceback: PyTorch's tensors hold {allocated:b} of {total:b} with almost nothing cached and free in "
      "its pool (nothing freed yet): what was placed fills the card, most often the model"),
    R("weights-exceed-vram", 1.6, cut_full,
      "a script without a traceback, its message cut before what PyTorch holds: the card is full ({free:b} free of {total:b}) "
      "and a {req:b} (per-tensor sized) request fails: what was placed before it, most often the model, fills the card"),
    # (round 76) the same reading of XLA's TPU refusal of a device buffer: the chip full, a layer-sized request, the message
    # alone; over the buffer row (activations 1.5) as cut_full is over the bare message's
    R("weights-exceed-vram", 1.6, tpu_full,
      "XLA on a TPU could not allocate a {req:b} device buffer with {n[free]:b} free, the message alone: the chip is full and "
      "the request is layer-sized; what was placed before it, most often the model's weights (with its optimizer state), "
      "fills the chip: a smaller model, or shard it over more cores (FSDP/SPMD), or a larger TPU"),
    # Windows sysmem fallback: the card was full before the driver spilled. Under the bare small-request activations row (1.5)
    # and over the sliver fragmentation row (1.4): two training runs paste the same bare message (docs/triage-accuracy.md,
    # rounds 21-22), so the answer stays uncertain between the batch and the model, with the model named beside it
    R("weights-exceed-vram", 1.45, sysmem_fallback,
      lambda x: (f"PyTorch reports {fmt_bytes(x.allocated)} allocated" if (x.allocated or 0) > OVER_CARD * x.total else
                 f"PyTorch reports {fmt_bytes(x.reserved)} reserved") + f" on a {fmt_bytes(x.total)} card: more than the card, "
                "the driver spilled into shared system memory (Windows sysmem fallback); the model may not fit the card"),
    R("weights-exceed-vram", 2.0, vllm_loading,
      "vLLM: PyTorch holds {allocated:b} of {total:b} before any line shows the weights loaded or the KV cache sized: the weights do not fit"),
    R("weights-exceed-vram", 1.6, vllm_loading_cut,
      "vLLM: the card is full ({free:b} free of {total:b}) and a {req:b} (per-tensor sized) request fails before any line shows "
      "the weights loaded or the KV cache sized: the weights do not fit"),
    # the model its command names is, by the LLM calculator (`gpu-garden kv`), bigger than the card by its weights alone
    R("weights-exceed-vram", 4.0, lambda x: over_card(x) is not None,
      lambda x: f"{over_card(x)['model']}'s weights alone are {fmt_bytes(over_card(x)['weights'])} {over_card(x)['precision']} (by "
                f"`gpu-garden kv`), more than the {fmt_bytes(over_card(x)['card'])} card: a quantized checkpoint, a smaller "
                "model, or --tensor-parallel-size over more GPUs"),
    # ggml's SYCL backend threw in set_tensor, the copy of a tensor's data into its device buffer: a load copies every weight
    # so (intel/ipex-llm#13273, round 61: an fp16 8B model on a 16 GB Arc card; the maintainer's answer, the model alone needs
    # the card). Why the copy and not the buffer's allocation throws is not established here: the row reads the function only
    # (round 66: only the failure whose own check printed the line, within SYCL_CHECK_LINES of it; an earlier SYCL run's line
    # does not speak for a later CUDA failure)
    R("weights-exceed-vram", 2.0, lambda x: x.f["ggml_sycl_fn"] == "ggml_backend_sycl_buffer_set_tensor"
      and x.f["ggml_sycl_line"] is not None and abs(x.f["ggml_sycl_line"] - x.line) <= SYCL_CHECK_LINES,
      "llama.cpp's SYCL backend failed copying a tensor into its device buffer (ggml_backend_sycl_buffer_set_tensor), "
      "which is how the model's weights are loaded onto the card: the weights do not fit; a smaller quantization "
      "(Q4_K_M, Q8_0 instead of fp16) or fewer GPU layers"),
    # MLC LLM's memory plan: one shard's weights alone pass the share of the card it may use (round 61)
    R("weights-exceed-vram", 4.0, lambda x: x.kind == "mlc.insufficient" and x.n.get("weights", 0) >= x.n.get("available", 0) > 0,
      "MLC LLM's memory plan: the weights alone ({n[weights]:b} a shard) pass the {n[available]:b} it may use "
      "(gpu_memory_utilization x the card): more --tensor-parallel-shards in `mlc_llm gen_config`, or a quantized model"),
    R("weights-exceed-vram", 1.5, mps_full, "MPS already holds {allocated:b} of {cap:b}"),
    R("weights-exceed-vram", 2.0, lambda x: x.branch == "mps" and not x.training and x.allocated >= 0.9 * x.cap
      and "requested" in x.n and x.req <= 0.1 * x.cap
      and x.other_alloc < 0.1 * x.cap,     # implies mps_full (held >= 0.9 limit, small request): its numbers are said once, there
      "MPS: nearly all of that is PyTorch's own (other allocations {other_alloc:b}) and a small request fails: the model fills the limit"),
    *MPS_WEIGHTS_ROWS,     # (aud68c #7) PyTorch at 90 % of the limit with other allocations a sliver: the weights
    # (round 113) not where the one failing request is itself over half the tiny card while PyTorch holds under a tenth of
    # it: the weights are in place and small, and that request is a working buffer (a load goes tensor by tensor, each well
    # under the card): the activations' 50%-of-the-card row reads it ((rev6 S4) its own test, predicates.big_request)
    # (tri73) nor where the message's free figure is past a parameter's share of the card and the request is larger still:
    # the card was not full, so what was placed did not fill it (card_room.room_left); (tri74) and only where PyTorch held
    # under half the card: a load refused on its next weight leaves free memory short of one (perhaps large) tensor
    # (fix67b, aud67b #3) nor in a training step (backward/optimizer on the stack, a training source or log line): the
    # weights were placed and ran forward; the batch's activations and gradients are what failed. A total below 2 GiB
    # instead lost three corpus cases (a bare 2.00 GiB message, PyTorch's rounding of a 2 GiB card). (fix67h F1) A step on
    # the stack or a source line, not a log line alone: train.py failing in model.to(device) has placed nothing yet
    R("weights-exceed-vram", 6.0, lambda x: x.tiny and not x.training_step and not (x.req and big_request(x) and x.allocated is not None
                                                       and x.allocated < TINY_HELD_SHARE * x.total) and not room_left(x)
      and not others_fill_tiny(x),     # (tri86) nor where PyTorch's figures show the card shared (tiny_shared.py)
      "the device has only {total:b}: an integrated GPU's carve-out (APU) or a very small card; the weights cannot fit"),
    # (tri78) a failure that gives no figure of its own on a card whose total nvidia-smi's table or deviceQuery printed (every
    # card alike) of at most case.TINY_CARD: the tiny-card reading above, from that total (printed_card.py)
    R("weights-exceed-vram", 6.0, tiny_printed,
      lambda x: f"the card has only {fmt_bytes(printed_total(x))} (its total as nvidia-smi or deviceQuery printed it) and the "
                "failure gives no figure of its own: an integrated GPU's carve-out (APU) or a very small card; the weights cannot fit"),
    R("weights-exceed-vram", 2.0, lambda x: (torch_full(x) or async_full(x)) and {"--gpu-only", "--highvram"} & x.f["args"],
      lambda x: f"{' '.join(sorted({'--gpu-only', '--highvram'} & x.f['args']))} keeps every model in VRAM at once, and they fill it"),
    # (not a first request larger than the whole card: a model is placed tensor by tensor, and a layer's tensor usually
    # stays well under the card it is being loaded onto; a request past the card is read as sized by its input, the
    # activations' 50%-of-the-card row. Not always: a token table in fp32 can pass a ~4 GB card by itself (Gemma-3-12B's
    # embed_tokens 262144 x 3840 x 4 B = 3.75 GiB, umt5-xxl's 256384 x 4096 x 4 B = 3.9 GiB, each loaded first); a bare
    # message without frames then reads activations, and a .to('cuda') / _apply traceback still lets weights lead)
    R("weights-exceed-vram", 2.6, lambda x: torch(x) and x.total and not x.impossible and x.allocated == 0
      and 0.25 * x.total <= x.req <= x.total,
      "nothing was allocated yet and the first request is {req:b} ({req_share:.0%} of the card): the model is being loaded"),
    R("weights-exceed-vram", 2.8, lambda x: x.ggml_stage == "after-model-buffers" and x.n_ctx and x.n_ctx <= 4096,
      "the model's buffers were allocated and the next small allocation failed; a {n_ctx}-token context's KV cache is small: the weights fill the card"),
    # ggml printed the model's device buffers (and the KV cache's, the smaller), then a CUDA call failed for memory before any
    # compute buffer, and those buffers fill the room the log lists (predicates.ggml_placed: within llama.cpp's --fit margin
    # of the free figure): what was placed filled the card, the weights most of it (a stream or cuBLAS handle needs little)
    R("weights-exceed-vram", 2.0, lambda x: ggml_placed(x) and x.placed_model >= (x.placed_kv or 0),
      lambda x: f"the log placed {fmt_bytes(x.placed_model)} of the model's weights on the device"
      + (f" and {fmt_bytes(x.placed_kv)} of KV cache" if x.placed_kv else "") + f", nearly all of the {fmt_bytes(ggml_room(x))} "
      "the log gives as the room, then a CUDA call failed for memory before any compute buffer: the weights fill the card; fewer GPU layers (-ngl) "
      "or a smaller quantization"),
    R("weights-exceed-vram", 3.0, kind("vllm.no_kv_blocks"),
      lambda x: "no memory left for KV cache blocks after weights and activations"
      + (f" (Available KV cache memory: {fmt_bytes(x.f['vllm_kv_mem'])})" if x.f["vllm_kv_mem"] is not None else "")),
    R("weights-exceed-vram", 0.5, lambda x: x.kind == "vllm.no_kv_blocks" and x.f["vllm_model_mem"],
      "model loading took {f[vllm_model_mem]:b}"),
    # (review30) SGLang's check only where the run is SGLang's: its message cut to "RuntimeError: Not enough memory" under
    # another program's frames is that program's (env._cut_foreign), and nothing says what it ran short of
    R("weights-exceed-vram", 3.0, lambda x: x.kind == "sglang.pool" and x.env["runtime"] == "sglang",
      lambda x: "SGLang: after the weights, mem_fraction_static"
      + (f" ({x.n['mem_fraction_static_ratio']})" if "mem_fraction_static_ratio" in x.n else "")
      + " of the card left no room for the KV pool: that static share holds the weights and the KV cache together; "
        "raise --mem-fraction-static, or a smaller or quantized model"),
    R("weights-exceed-vram", 4.0, lambda x: trt_component(x) in TRT_WEIGHTS,
      lambda x: f"TensorRT-LLM could not create the {trt_component(x)}{trt_free(x)}: the weights do not fit; "
                "shard them (tensor or pipeline parallelism) or quantize"),
    # TensorRT-LLM sizes the KV cache from what cudaMemGetInfo reports free once the engine is resident: next to nothing free
    # then (predicates.TRT_KV_STARVED) is the engine's weights and runtime buffers filling the card before any KV block
    R("weights-exceed-vram", 3.0, trt_kv_starved, lambda x: (
        "TensorRT-LLM's KV-cache sizing found "
        + (f"{fmt_bytes(trt_kv_sizing(x)['free'])} available of {fmt_bytes(trt_kv_sizing(x)['total'])}" if "free" in trt_kv_sizing(x)
           else f"a negative amount available of {fmt_bytes(trt_kv_sizing(x)['total'])}")
        + " once the engine was resident: its weights and runtime buffers fill the card before any KV cache; a smaller or "
          "more quantized engine, tensor parallelism, or a rebuild with a lower max_seq_len / max_input_len")),
    # a runtime's own error context around a bare driver error names the stage (predicates.stage_said): starting the backend
    # (text-embeddings-inference loads the weights there, before any request) is the weights
    R("weights-exceed-vram", 3.0, lambda x: stage_said(x) == "load",
      "the runtime's own message says the backend could not start, which loads the model's weights onto the device before "
      "any request: the weights do not fit the card; a smaller model or a lower-precision checkpoint"),
    R("weights-exceed-vram", 2.0, lambda x: x.kind == "lmstudio.guardrail" and x.ev.get("form") != "no_estimate",
      lambda x: "LM Studio's guardrail stopped the load: at these settings the model"
      + (f" needs about {fmt_bytes(x.n['required'])}" if "required" in x.n else "")
      + " (weights plus the KV cache of the context length) and does not fit what the system can hold; lower the context "
        "length, offload fewer layers, or take a smaller quantization (its estimate can also be wrong)"),
    # an MLX server's load pre-flight refused a model whose weights alone are far over the memory it compared them with:
    # neither its headroom nor the programs holding unified memory explain that gap (predicates.PREFLIGHT_WEIGHTS_OVER)
    R("weights-exceed-vram", 5.0, preflight_weights_over,
      lambda x: f"the server's load pre-flight refused the model: its weights alone are {fmt_bytes(x.ev['weights'])}, more than "
                f"{predicates.PREFLIGHT_WEIGHTS_OVER:g} times the {fmt_bytes(preflight_room(x))} it counts as available to a model (free memory, or its max-model-memory setting): "
                "the model is too large for this machine; a smaller model or a lower-bit quantization"),
    # (tri50) oMLX's safety cap (rules.py's kv-cache row) where what the process already holds is at or over the cap: the
    # estimate is held memory + the prompt's KV + one minimum chunk, so no context length passes; the resident model (and
    # whatever else the process keeps) is what does not fit
    R("weights-exceed-vram", 3.5, lambda x: x.kind == "mlx.ceiling" and x.ev.get("form") == "safety"
      and x.n["allocated"] >= x.n["max_allowed"],
      "the process already holds {n[allocated]:b}, at or over the server's {n[max_allowed]:b} prefill safety cap before any of "
      "this prompt: no context length passes; a smaller model or quantization, or a higher ceiling (memory_guard_tier)"),
    # vllm-metal left no KV cache and its weights are the larger share of the budget that filled
    R("weights-exceed-vram", 3.0, metal_kv_weights,
      lambda x: f"vllm-metal's usable Metal budget ({fmt_bytes(x.n['max_allowed'])}) left no room for the KV cache and the "
                f"weights ({fmt_bytes(x.ev['model_memory'])}) are the larger share of it: a smaller or more quantized model, "
                "or a larger VLLM_METAL_MEMORY_FRACTION"),
    R("weights-exceed-vram", 4.0, kind("ollama.fit"),
      lambda x: f"Ollama (MLX runner): the model needs {fmt_bytes(x.n['required'])} and the GPU has {fmt_bytes(x.n['available'])} "
                "free after Ollama's overhead: the weights do not fit; a smaller or more quantized model, or free the GPU"),
    R("weights-exceed-vram", 6.0, kind("transformers.dispatch"),
      "transformers (bitsandbytes) would have put modules on the CPU or the disk: the quantized model does not fit the GPU's free "
      "memory; a smaller model, fewer bits, or an explicit device_map with llm_int8_enable_fp32_cpu_offload=True"),
    # (round 67) MNN could not acquire a layer's parameter buffer (native_runtimes.mnn_parameter: gamma, beta, weight, bias, ...):
    # parameters are acquired while the model is set up, so the device is full of weights (wangzhaode/mnn-llm#25: int4 weights
    # are dequantized at load, the resident model is as large as the float one; a lower GPU memory setting ran)
    # (round 67) WebGPU lost its device while an in-browser model ran (native_runtimes.WEBGPU_LOST): most often the model asked
    # more than the GPU holds (mlc-ai/web-llm#387: a smaller model ran); a driver reset reads the same (the runner-up, other)
    R("weights-exceed-vram", 2.0, kind("webgpu.device_lost"),
      "WebGPU lost its device while the page's model ran: most often the model (its weights and buffers) needs more than the "
      "GPU holds (WebLLM lists each model's vram_required_MB); a smaller or more quantized model, a shorter context"),
    R("weights-exceed-vram", 3.0, mnn_parameter,
      lambda x: f"MNN could not acquire {x.ev['op']}'s {x.ev['buffer']} (a layer's parameters, acquired while the model is set "
                "up): the model's weights fill the device; fewer layers on the GPU (a lower GPU memory setting), a smaller model "
                "(weight-only int4 is dequantized at load: it takes the float size)"),
    R("weights-exceed-vram", 3.0, lambda x: x.kind == "tensorrt.oom" and "deserializ" in x.text.lower(),
      lambda x: "TensorRT could not allocate the engine while deserializing it" + (f" ({fmt_bytes(x.req)})" if x.req else "")
      + ": the engine's weights do not fit"),
    # ds4's memory guard refused a model whose map alone passes what its formula allows on this machine: the model is too large
    R("weights-exceed-vram", 3.0, ds4_guard_weights_over,
      lambda x: f"ds4's memory guard refused the plan: the model map alone is {fmt_bytes(x.ev['weights'])}, more than the "
                f"{fmt_bytes(x.ev['guard_room'])} its formula allows on this machine: a smaller quantization or tensor parallelism"),
    # ds4 maps the model's tensors into its arena chunk by chunk before any session: a chunk refused is the weights
    R("weights-exceed-vram", 3.0, lambda x: x.kind == "ds4.alloc" and x.ev.get("form") == "model",
      lambda x: "ds4 could not allocate its model arena" + (f" (a {fmt_bytes(x.req)} chunk)" if x.req else "")
      + " while mapping the model's tensors: the weights do not fit what the GPU may allocate; a smaller quant, or stream "
        "the weights from disk"),
    R("weights-exceed-vram", 4.0, lambda x: x.ggml_stage == "model-load-failed" and not x.host_buffer,
      "llama.cpp could not allocate the model's weight buffer"),
    R("weights-exceed-vram", 2.4, stage("device-alloc"), "device allocation failed while loading the model"),
    R("weights-exceed-vram", 2.0, lambda x: x.kind == "ollama.layout" and "num_gpu_layers" in x.n,
      "Ollama could not place {n[num_gpu_layers]} layers on the GPU as num_gpu asks: the weights do not fit"),
    R("weights-exceed-vram", 2.0, stage("ollama-estimate"), "Ollama's estimate: the model's allocations do not fit"),
    R("weights-exceed-vram", 0.9, kind("ollama.load_failed"),
      "Ollama's runner failed while it loaded the model: the weights may not fit what the GPU (and RAM) had free"),
    R("weights-exceed-vram", 4.0, lambda x: x.node_cause == "weights-exceed-vram", "failing node: {node}", hint=True),
    # (fix67b) not on a text encoder's load: that evidence is the text encoder's (te_load.py, rules_stages)
    R("weights-exceed-vram", 1.5, lambda x: x.frame_loading and not te_loading(x), "traceback: {where}", hint=True),
    R("weights-exceed-vram", 3.0, lambda x: x.frame_cause == "weights-exceed-vram", "traceback: {where}", hint=True),
    # ComfyUI offloads what does not fit the VRAM it may use (free less its inference reserve) and says "loaded partially":
    # by its own sums the weights exceed the card; an out-of-memory then is weights plus work on a card they already fill. Only
    # PyTorch's allocator reporting VRAM: the offloaded part sits in pinned RAM, and a driver-level error then is that RAM
    R("weights-exceed-vram", 1.5, lambda x: x.partial_load and x.comfy and x.branch in ("torch", "async") and not te_loading(x),
      lambda x: f"ComfyUI loaded {x.model or 'the model'} only partially before it failed: by its own sums the weights do not fit "
                "the VRAM it may use", hint=True),
    # ComfyUI in low-VRAM mode (--lowvram; older ComfyUI also chose it on a card of 4 GB or less) keeps in VRAM only the part of each
    # model that leaves its inference reserve free: PyTorch then holding half the card or more is that resident part, and
    # an out-of-memory means the weights with their work do not fit even split (the same reading as a partial load)
    R("weights-exceed-vram", 1.6, lambda x: x.comfy and x.f["vram_state"] == "LOW_VRAM" and x.branch in ("torch", "async")
      and x.total and not x.impossible and (x.allocated or 0) >= 0.5 * x.total,
      lambda x: f"ComfyUI runs in low-VRAM mode (it keeps only part of each model in VRAM) and PyTorch still holds "
                f"{fmt_bytes(x.allocated)} of the {fmt_bytes(x.total)} card"
                + (f" (the card ComfyUI measured at start; the {fmt_bytes(x.bogus_limit)} device limit in the message is not "
                   "this card)" if x.bogus_limit else "") + ": the weights do not fit even split; --novram, or smaller models",
      hint=True),
    R("weights-exceed-vram", 1.5, lambda x: x.log_phase == "loading",
      "ComfyUI was loading {model} when it failed; sampling had not started", hint=True),
    # the source line under a frame: `pipe.to("cuda")`, `from_pretrained(...)`, `load_state_dict(...)`
    R("weights-exceed-vram", 2.0, lambda x: x.src_cause == "weights-exceed-vram" and not host(x) and not te_loading(x),
      "traceback source line: {src_line}", hint=True),
    # the program says the model failed to load, around a PyTorch out-of-memory: the weights were being placed
    R("weights-exceed-vram", 2.0, lambda x: x.f["load_failed"] and x.branch in ("torch", "async") and not host(x),
      "the log says the load failed: {f[load_failed]}", hint=True),
    # torch-directml names the parameter it could not place: a weight is being moved to the card
    R("weights-exceed-vram", 2.5, lambda x: x.branch == "dml" and PARAM_RE.search(x.text[:300]),
      lambda x: f"DirectML could not place the model parameter {PARAM_RE.search(x.text[:300]).group(0)[-80:]}: the weights are being moved to the card and do not fit"),
    # any other runtime's message with a parameter's name on its line: the program was placing or patching that weight when it
    # failed (ComfyUI's weight adapters log "ERROR lora <key> <exception>" when merging a LoRA into a weight fails; Fooocus
    # "ERROR <key> <exception>"), so the model with its patches is what fills the card, not this input's tensors. It outweighs
    # the cache-slack reading (6.2 at most): patching allocates a copy of each weight in turn, and the slack is that churn
    R("weights-exceed-vram", 5.0, lambda x: x.branch != "dml" and PARAM_RE.search(x.text[:300]),
      lambda x: f"the error names the model parameter {PARAM_RE.search(x.text[:300]).group(0)[-80:]}: a weight was being placed or "
                "patched (a LoRA merged into it) when memory ran out; the model and its patches do not fit"),
    # TensorFlow could not create a convolution kernel (HWIO shape): the model's variables are being built and do not fit
    R("weights-exceed-vram", 3.0, tf_kernel,
      lambda x: f"TensorFlow could not allocate a convolution kernel ({tf_kernel(x)}: kernel height, width, in and out channels): "
                "the model's weights are being created and do not fit; a smaller model or precision (mixed float16)"),
    R("weights-exceed-vram", 1.6, ct2_load,
      lambda x: "CTranslate2 allocates the whole model on the GPU when the model is created"
      + (f" ({x.where})" if x.where else " (no traceback: the usual place)") + "; a smaller model or compute_type int8 fits"),
]
