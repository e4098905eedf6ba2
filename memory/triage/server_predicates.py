"""The named predicates of the LLM servers and runtimes that the rules table reads (rules.py, via predicates.py):
Ollama's estimate and llama.cpp's KV cache and buffer placement, vLLM's cumem allocator and sleep mode, SGLang's KV pool,
TensorRT-LLM, TGI, the cudarc servers' error chain, MLX's load pre-flight and Metal KV figures, ds4's guard. Moved from
predicates.py (bodies and thresholds unchanged), which re-exports them. No weights here."""
import re

from ..units import MiB, fmt_bytes
from .facts import chain_place

KV_DOMINANT = 0.5      # Ollama's estimate: the KV cache is this share of memory.required.full or more


def ollama_kv_first(x):
    """Ollama's own "offload to" estimate (llm/memory.go, the last such line) puts the context's KV cache at half the
    requirement or more, and half the layers or fewer on the GPU: the context (num_ctx x OLLAMA_NUM_PARALLEL) sized the
    load, not the weights."""
    f = x.f
    kv, full, layers = f["ollama_kv"], f["ollama_required"], f["ollama_layers"]
    return bool(x.branch == "ggml" and kv and full and layers and layers[1] > 0 and KV_DOMINANT * full <= kv <= full
                and 2 * layers[0] <= layers[1])


KV_GRAIN = 128 * MiB   # llama.cpp's KV cache: n_layer x n_ctx x (K+V width) x bytes, a multiple of this at power-of-two contexts
# (tri69) the same grain in ggml's quantized cache types (-ctk/-ctv q8_0 or q4_0, OLLAMA_KV_CACHE_TYPE): a row of 32 values takes
# one block, 34 bytes in q8_0 (ggml_half d + 32 int8 quants) and 18 in q4_0 (ggml_half d + 16 bytes of nibbles), ggml-common.h's
# static_asserts, against 64 bytes in f16: 17/32 and 9/32 of the f16 cache, so 68 MiB and 36 MiB (f32 and bf16 keep 128 MiB)
KV_GRAINS = {"f16": KV_GRAIN, "q8_0": KV_GRAIN * 17 // 32, "q4_0": KV_GRAIN * 9 // 32}


def kv_grain(req):
    """The cache type whose grain `req` is an exact multiple of (two grains at least), f16 first; None if none."""
    return next((t for t, g in KV_GRAINS.items() if req and req >= 2 * g and req % g == 0), None)


def kv_sized(x):
    """A buffer that ggml-alloc failed to place, an exact multiple of 128 MiB, while loading (not the model's own load nor
    the graph's compute buffer): the KV cache's shape. llama.cpp allocates the cache as layers x cells x heads x head size x
    bytes for K and V, with the cells (n_ctx, times the parallel slots) a power of two: 30 x 32768 x 8 x 128 x 2 x 2 bytes =
    3840 MiB; a weights buffer sums quantized tensors and norm vectors (KiBs), which are no such multiple.
    (tri64) The refusal is ggml-alloc's "failed to allocate <buffer type> buffer of size N" (alloc_tensor_range prints it,
    and ggml_gallocr_reserve_n for a compute buffer, which the compute stage excludes), with or without its function name:
    a quote often drops it. Not ggml_vulkan's own "Device memory allocation of size N failed", which also backs the backend's
    preallocated working buffers. The plain CPU buffer type counts too: a layer's cache not offloaded (the CPU backend, the
    layers left on the CPU, --no-kv-offload) takes ggml_backend_cpu_buffer_type() (llama_kv_cache's constructor,
    src/llama-kv-cache.cpp), and the cache is the cause wherever it lives (R14); a backend's pinned host buffer (CUDA_Host,
    SYCL_Host, ...) never holds it: that one is the model's host copy or the output buffer, system RAM. Where the log gives
    the whole cache's size (Ollama's memory.required.kv, one decimal: OLLAMA_KV_ROUNDING), a buffer over it is not the cache.
    (tri69) A quantized cache has its own grain (KV_GRAINS: 68 MiB in q8_0, 36 MiB in q4_0), read with the same guards."""
    kv = x.f["ollama_kv"]
    return bool(x.branch == "ggml" and x.ggml_stage in ("device-alloc", "after-model-buffers")
                and kv_grain(x.req) and not (kv and x.req > OLLAMA_KV_ROUNDING * kv)
                and any(not m.group(1).endswith("_Host") for t in x.texts for m in GGML_ALLOC_REFUSED.finditer(t)))


OLLAMA_KV_ROUNDING = 1.1   # Ollama prints its estimate with one decimal ("1.2 GiB" for up to 1.25 GiB): 10 % covers that
# ggml-alloc's refusal of a whole buffer of one buffer type (CUDA0, ROCm1, Vulkan0, CPU, CUDA_Host): ggml/src/ggml-alloc.c
GGML_ALLOC_REFUSED = re.compile(r"failed to allocate (\S+) buffer of size \d")


def cumem_wake_up(x):
    """vLLM's cumem allocator ran out of device memory inside its wake_up (vllm/device_allocator/cumem.py: sleep() unmaps and
    releases every allocation, wake_up() creates and maps each again with cuMemCreate): the same sizes fitted before the
    sleep, so what took the memory meanwhile is something else on the card, in RL the colocated trainer (OpenRLHF, verl,
    NeMo RL; TideDra/lmm-r1#43). Its own out-of-memory line, not its fault form (a driver call refused)."""
    return ("vllm.cumem" in x.kinds and not (x.kind == "vllm.cumem" and x.ev.get("form") == "fault")
            and any(fn == "wake_up" and "cumem" in path for path, fn in x.frames or ()))


def sglang_pool_room(x):
    """SGLang's KV pool refused a batch while its own count shows the slots it asked for (free plus evictable >= the tokens
    requested). Its token allocator hands out any free slots, so with room for the request a refusal is the pool's
    accounting: with --page-size > 1 every request that crosses a page in a decode step takes a whole page (the request's
    N tokens can need N pages), which the scheduler's check before the step must count and retract requests for (sgl-project/
    sglang#4602, PR 4913; sglang-jax shows the same with its paged pool)."""
    n = x.n or {}
    return x.kind == "sglang.kv_pool" and "requested_tokens" in n and n.get("available_tokens", -1) >= n["requested_tokens"]


def sleep_mode_budget(x):
    """vLLM's cumem allocator (the one --enable-sleep-mode switches on) ran out of device memory (its own line, alone or
    before PyTorch's message for the same request) after vLLM had sized its KV cache from its own profile ("Available KV
    cache memory"). With that allocator PyTorch's reserved figure, which the profile reads as this process's memory, can
    count more than the card holds (vllm#40256, PR 40258), so the budget it handed the KV cache was larger than what was
    there. Not its fault form (a driver call failing: its own row)."""
    return (("vllm.cumem" in x.kinds or "vllm.cumem" in (x.prior_kinds or ())) and x.f["vllm_kv_mem"] is not None
            and not (x.kind == "vllm.cumem" and x.ev.get("form") == "fault"))


def ggml_placed(x):
    """A driver-level CUDA error after ggml printed the model's buffers on a device (llama.cpp's load order: model, then KV
    cache, then the graph's compute buffer; none of the last yet), and those buffers fill the room the log gives: the
    process already holds what those lines say, so a call that fails now (a stream, a cuBLAS handle, the pool) found the
    card filled by them. The room is what the devices holding them listed free at load ("using device CUDA0 (...) - N MiB
    free"), else the message's card total where they sit on one device (ggml_room); filled means it leaves less than
    llama.cpp's own --fit margin (llamacpp.FIT_TARGET, 1 GiB a device: what --fit keeps free for what it does not size),
    88-97 % of the 8-32 GB cards' room. No room in the log: no reading (468 MiB on a card that listed 23512 MiB free is not
    the weights)."""
    if x.kind != "cuda.driver" or not x.placed_model or not ggml_room(x):
        return False
    from ..llm.runtimes.llamacpp import FIT_TARGET     # lazy: triage loads no LLM runtime code at import
    return x.placed_model + (x.placed_kv or 0) >= ggml_room(x) - FIT_TARGET * len(ggml_placed_devices(x))


def ggml_placed_devices(x) -> set:
    """The devices ggml's model and KV buffer lines put memory on ("CUDA0", "Vulkan1"; "MTL0_Mapped" is MTL0), as
    case.placed_model and placed_kv sum them: not CPU, CPU_Mapped or a *_Host buffer."""
    return {k.split(":", 1)[1].split("_")[0] for k in x.f["ggml_bufs"]
            if k.startswith(("model:", "kv:")) and "CPU" not in k and "Host" not in k}


def ggml_room(x):
    """The room ggml's buffers went into, like with like: the free figures the log lists for the devices holding them
    (summed over those devices; every one of them must have a figure), else the card total where they sit on one device
    (a card total is one card's: never a room for buffers split over several); else None."""
    placed, devs = ggml_placed_devices(x), x.f["ggml_devices"]
    if placed and devs and placed <= set(devs):
        return sum(devs[d] for d in placed)
    return x.total if len(placed) == 1 and not devs else None


# TensorRT-LLM's executor names the component it could not create (_torch/pyexecutor/py_executor_creator.py); each has
# its own knob in the runtime's table
# (compared case-folded: releases spell "Initial KV cache" and "Initial KV Cache"). The executor's message is raised from
# PyTorch's OOM, so it is read among the failure's events, not only as its primary one
TRT_WEIGHTS = ("model", "draft model for speculative decoding")
TRT_KV = ("kv cache", "initial kv cache (temporary for kv cache size estimation)")


def trt_component(x):
    ev = x.explained.get("trtllm.executor") if x.explained else None
    return (ev.get("component") or "executor resources").lower() if ev else None


def trt_free(x):
    n = x.explained["trtllm.executor"]["numbers"]
    return f" with {fmt_bytes(n['free'])} free of {fmt_bytes(n['total'])}" if "free" in n and "total" in n else ""


def tgi(x):
    """text-generation-inference's warm-up numbers (its message is raised from PyTorch's OOM), or None."""
    ev = x.explained.get("tgi.prefill") if x.explained else None
    return ev["numbers"] if ev else None


# a prefill batch this small needs well under a GiB of working memory on any model TGI serves: its widest activation is
# tokens x the MLP's intermediate width (28672 on a 70B: 512 x 28672 x 2 bytes = 28 MiB a tensor) and its logits tokens x the
# vocabulary (512 x 152064 x 4 bytes = 297 MiB); TGI's default --max-batch-prefill-tokens is 4096
TGI_TINY_PREFILL = 512

# ...which is only no reason to fail where the weights left it room: a GiB of the card beyond what PyTorch had allocated
# (a 7B in fp16 on a 16 GB T4 leaves none, and a tiny batch fails there for lack of memory)
TGI_TINY_ROOM = 1 << 30


def tgi_tiny(x):
    """TGI's warm-up reported "not enough memory" for a prefill batch of at most TGI_TINY_PREFILL tokens, and PyTorch's figures
    (where the shard's log prints them) show the weights left the card TGI_TINY_ROOM or more."""
    n = tgi(x)
    return bool(n) and "total_tokens" not in n and n["prefill_tokens"] <= TGI_TINY_PREFILL \
        and (not tgi_figures(x) or x.total - x.allocated >= TGI_TINY_ROOM)


def tgi_figures(x):
    """PyTorch's message beside TGI's printed the card's total and what PyTorch had allocated."""
    return bool(x.total) and x.allocated is not None


# the stage a runtime's own error context names (lines.py stage_said) around cudarc's DriverError(CUDA_ERROR_OUT_OF_MEMORY...)
# (Rust servers on cudarc: candle, mistral.rs, text-embeddings-inference): the failure's own line ("cache alloc failed:
# DriverError(...)"), or a context of the same anyhow chain above it (facts.chain_place): "Error: <top>", a blank line,
# "Caused by:", then the causes one a line, numbered from 0 when two or more, so a context at line n is on the failure's
# chain only where the line distance is what the numbering says. PyTorch's "CUDA error: out of memory" is no such chain
STAGE_SAID = {"load": "weights-exceed-vram", "kv": "kv-cache", "act": "activations"}
CUDARC_OOM = "DriverError(CUDA_ERROR_OUT_OF_MEMORY"


def stage_said(x):
    """The stage ("load", "kv", "act") a cudarc driver error's own chain names, or None: the failure's line, else the
    nearest context above it on the same anyhow chain, else (round 114, rev6 B2) the nearest later line of its incident."""
    if x.kind != "cuda.driver" or CUDARC_OOM not in (x.text or ""):
        return None
    said = x.f["stage_said"]
    if x.line in said:
        return said[x.line][0]
    k = chain_place(x.text)
    k = None if k == "top" else k
    own = sorted((n for n in said if x.after < n < x.line), reverse=True)
    for n in own:
        stage, place = said[n]
        gap = x.line - n
        if (place == "top" and gap == (3 if k is None else k + 3)) or (k is not None and isinstance(place, int) and gap == k - place > 0):
            return stage
    # (round 114) the same failure again on a later line of this incident, its context named there ("[prime-batch] failed
    # (DriverError(...))", then the request's "cache alloc failed: DriverError(...)"): (rev6 B2) only after the failure's own
    # line and chain, only where its own preceding lines name no stage (those are its request's context, and a later line
    # naming another is a different request's failure), and the nearest such line. (rev7 D6) rev6 B2 asked for the first
    # repeat of x's own kind; this takes the first with a stage-said line, which is the same: stage_said's words are
    # read on cudarc's DriverError chains only, x's kind (cuda.driver, CUDARC_OOM above)
    again = [n for n in x.repeats if n in said]
    if again and not own:
        return said[again[0]][0]
    return None


# (round 114) how far after a CUDA error ggml's backtrace names the kernel it came from: the error's own lines (the check's
# source line, "current device", the call), then the backtrace's frames, innermost first
FATTN_FRAMES = 16


def fattn_frame(x):
    """A CUDA driver error whose backtrace, within FATTN_FRAMES lines after it, names ggml-cuda's flash-attention launch
    (facts "ggml_fattn"): the kernel's own pool buffers (K/V converted to F16 for the kernel, its partial results) failed.
    (rev6 D) A cuda.driver event is the driver's out-of-memory error only: an illegal memory access there opens no incident."""
    return x.kind == "cuda.driver" and any(x.line <= n <= x.line + FATTN_FRAMES for n in x.f["ggml_fattn"])


# TensorRT-LLM's KV sizing line printed before this failure: the engine left under this share of the card's total free
TRT_KV_STARVED = 0.05


def trt_kv_sizing(x):
    """{"total", "free"} of TensorRT-LLM's last KV-cache sizing line before this failure (after the one before it), or None."""
    return next((v for n, v in sorted(x.f["trt_kv_sizing"].items(), reverse=True) if x.after < n <= x.line), None)


def trt_kv_starved(x):
    s = trt_kv_sizing(x)
    return bool(s) and (s.get("short") or s["free"] < TRT_KV_STARVED * s["total"])


# An MLX server's load pre-flight (parse: mlx.load_preflight) compares its load requirement with one figure: the memory it
# counts as available or free right now, or its configured max-model-memory. On unified memory the free figure moves with
# every other program (a desktop's apps can hold half of it) and the requirement adds the server's own fixed headroom, so
# only weights more than PREFLIGHT_WEIGHTS_OVER times that figure settle that the model itself is too large.
PREFLIGHT_WEIGHTS_OVER = 2.0


def preflight_room(x):
    """The figure the load pre-flight compared against (available, free or max-model-memory), or None."""
    return next((x.n[k] for k in ("available", "free", "max_allowed") if x.n.get(k)), None)


def startup_free_says(x):
    """The evidence of vLLM's start-up free check (rules.py, other-process): its figures as the message gives them; (tri70) a
    launcher's gate that mirrors it (form launcher) gives the free figure and the per-card share, before anything is loaded."""
    n = x.n
    if "requested" in n and "total" in n and "gpu_memory_utilization_ratio" in n:
        return (f"only {fmt_bytes(n['free'])} of {fmt_bytes(n['total'])} free at startup; gpu_memory_utilization "
                f"{n['gpu_memory_utilization_ratio']} asks for {fmt_bytes(n['requested'])}")
    if x.ev.get("form") == "launcher" and "requested" in n:
        return (f"only {fmt_bytes(n['free'])} free on the card before vLLM started; the launcher's gate, which repeats vLLM's own "
                f"start-up check, needs {fmt_bytes(n['requested'])} per card (gpu_memory_utilization x the card): nothing of "
                "this job was loaded yet, so memory held outside it (another program or server, a desktop, a stack not fully "
                "stopped) makes the share unavailable")
    return ("vLLM found less memory free at startup than gpu_memory_utilization x the card asks for: memory held outside "
            "vLLM (another program or server) makes the share unavailable")


def preflight_weights_over(x):
    room = preflight_room(x)
    return x.kind == "mlx.load_preflight" and room is not None and (x.ev.get("weights") or 0) > PREFLIGHT_WEIGHTS_OVER * room


def metal_kv_overhead_over_budget(x):
    """vllm-metal's profile run measured an overhead (beyond the weights) larger than its whole usable Metal budget and larger
    than the weights: the profile's peak (or what it counted of retained buffers), not the model's size."""
    ov, model, usable = x.ev.get("overhead"), x.ev.get("model_memory"), x.n.get("max_allowed")
    return x.kind == "vllm_metal.kv_budget" and None not in (ov, model, usable) and ov >= usable and ov > model


def metal_kv_profile_peak(x):
    """vllm-metal's profile-run overhead is larger than the weights but inside the usable budget: its peak (activations at
    --max-num-batched-tokens) plus the weights left no KV cache."""
    ov, model, usable = x.ev.get("overhead"), x.ev.get("model_memory"), x.n.get("max_allowed")
    return x.kind == "vllm_metal.kv_budget" and None not in (ov, model, usable) and model < ov < usable


def metal_kv_weights(x):
    """vllm-metal's budget left no KV cache and the weights are the larger share of what filled it."""
    ov, model = x.ev.get("overhead"), x.ev.get("model_memory")
    return x.kind == "vllm_metal.kv_budget" and None not in (ov, model) and model >= ov


def ds4_guard_fits(x):
    """ds4's memory guard (parse: ds4.memory_guard) refused a plan that the figure its own formula gives from the machine
    (base x fraction - reserve - transient, servers.add_block_fields) would hold: the budget it compared was set lower than that
    figure (a fixed per-model ceiling), so the refusal is the guard's, not a shortage."""
    room = x.ev.get("guard_room")
    return x.kind == "ds4.memory_guard" and room is not None and x.n.get("required") is not None and x.n["required"] <= room


def ds4_guard_weights_over(x):
    """ds4's memory guard refused a model whose map alone passes the figure its formula gives from the machine."""
    room = x.ev.get("guard_room")
    return x.kind == "ds4.memory_guard" and room is not None and (x.ev.get("weights") or 0) > room


# (round 121) how far after a CUDA failure Ollama's discovery record may come to be that discovery's outcome: it logs its
# discovery's errors, then one "inference compute" line per device it kept, the next lines
OLLAMA_DISCOVERY_SPAN = 12


def ollama_discovery_cpu(x):
    """(round 121) A GPU out-of-memory error followed, within OLLAMA_DISCOVERY_SPAN lines and before the next failure, by Ollama's
    discovery record listing the CPU as its compute (facts "ollama_compute"): the error was its GPU discovery's, which creates a
    context on the card and places nothing, and the card was dropped from the list.
    (rev14 B1) Only where the error is discovery's own: not where Ollama started again between the error and the record
    (facts "ollama_restart": "Listening on"; a later start's record), nor where the failure shows a model load (_model_load).
    (rev15 S2) "no compatible GPUs were discovered" refuses nothing (rev15 F1: it is no longer read): 2025 builds print it during
    discovery right before the CPU record (app/server/server_test.go:288), which is what a discovery OOM on the only card gives."""
    rows = x.f.get("ollama_compute") or {}
    end = x.line + OLLAMA_DISCOVERY_SPAN
    restart = x.f.get("ollama_restart") or {}
    return x.kind == "cuda.driver" and any(
        cpu and x.line < n <= end and (x.until is None or n < x.until) and not any(x.line < r < n for r, what in restart.items() if what == "listening")
        and not _model_load(x, n, restart) for n, cpu in rows.items())


# (rev14 B1) ggml-cuda's functions a discovery runs too (device set-up; its memory query is ggml_backend_cuda_device_get_memory):
# an error in any other ggml_cuda_* function, or in the pool's alloc (rules.py reads it so), is a runner's at work on a model
GGML_CUDA_SETUP = ("ggml_cuda_init", "ggml_cuda_set_device")
GGML_FN_NEAR = 3      # lines from the failure's line to ggml's "current device: N, in function X" line (CUDA error, then it)


def _model_load(x, record, restart) -> bool:
    """(rev14 B1) The failure shows a model load: Ollama's runner wrapper among its lines ("error loading llama server",
    "llama runner process has terminated": the incident's ollama.runner event), ggml naming a model's function beside its line
    (facts "ggml_cuda_fn_at"), or a load started (facts "ggml_load_start": "load_tensors: loading model tensors", the loader's
    meta data, Ollama's "starting llama server" / load request) since the failure before and Ollama's last start. (rev15 B2)
    Not a "starting runner" whose cmd has no --model: Ollama >= 0.12's GPU discovery starts its bootstrap runner so
    (discover/runner.go:497 llm.StartRunner(true, "", ...), "no model"; llm/server.go:357-365 adds "--model" only for a
    model path, then "--port"; logged at llm/server.go:433 msg="starting runner" cmd=...), a model load with --model
    (llm/server.go:276 StartRunner(..., modelPath, ...))."""
    if "ollama.runner" in x.kinds or any("error loading llama server" in t for t in x.texts):
        return True
    fns = x.f.get("ggml_cuda_fn_at") or {}
    if any(abs(n - x.line) <= GGML_FN_NEAR and (fn.startswith("ggml_cuda") and fn not in GGML_CUDA_SETUP or fn == "alloc")
           for n, fn in fns.items()):
        return True
    since = max([x.after or 0] + [r for r, what in restart.items() if what == "listening" and r < x.line])
    return any(since < n < record for n, load in x.f["ggml_load_start"].items() if load is True)


def sglang_attn_init(x):
    """(round 117) An out-of-memory error raised while SGLang built its attention backend (the model runner's
    init_attention_backend on the stack, the innermost SGLang frame a backend's __init__ under layers/attention/): the
    backend's fixed workspace, allocated after the static memory pool and outside mem-fraction-static's share. (rev8 D9)
    Both in one traceback: each traceback of a chained one (x.trace_from: where each begins) on its own (rev10 S1), so a
    wrapper's re-raise after the backend's own OOM keeps it and a fallback's __init__ after it does not join it.
    (rev12 B1) A traceback counts where its own exception line is an OOM line (x.trace_how: each later traceback's link to the
    one before it and whether that one closed on an OOM line), where it is the last (closed by the failure's line, as
    before), or where "The above exception was the direct cause" links it to one that counts: the usual wrapper (`except X:
    raise Y(...)`, "During handling of the above exception") after the backend's own OOM keeps it, and a backend __init__
    that failed on something else (an ImportError) before an OOM raised elsewhere (rev11 S1) is not read as the workspace."""
    frames = x.frames or []
    tf = list(getattr(x, "trace_from", None) or ())
    how = list(getattr(x, "trace_how", None) or ())
    how += [("cause", False)] * (len(tf) - len(how))
    cuts, counts = [0, *tf, len(frames)], [True]
    for link, closes_oom in reversed(how[:len(tf)]):
        counts.append(closes_oom or (link == "cause" and counts[-1]))
    counts.reverse()
    return x.env["runtime"] == "sglang" and any(counts[i] and _attn_init(frames[cuts[i]:cuts[i + 1]])
                                                for i in range(len(cuts) - 1))


def _attn_init(frames) -> bool:
    own = [(p.replace("\\", "/"), fn) for p, fn in frames if "/sglang/" in "/" + p.replace("\\", "/")]
    return (bool(own) and own[-1][1] == "__init__" and "/layers/attention/" in own[-1][0]
            and any(fn == "init_attention_backend" for _, fn in own))
