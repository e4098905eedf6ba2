"""Triage's rule rows for *other*: the driver, the platform, a runtime's own limit, or nothing to go on (rows, not
code: the row format is in rules.py's docstring). rules.py puts them after the cause sections, before the fallbacks."""
from ..units import GiB, fmt_bytes
from .server_predicates import sglang_attn_init     # (round 117)
from .predicates import (ABSURD_HOST, aimdo_file_read, own_pool, aimdo_reader_only, ds4_guard_fits, OWN_POOLS, VA_RESERVE, async_numbers, compiler_flood, compiler_note, fraction_cap,
                         ggml_header_failed, gpu_fault, host, kind, metal_kv_overhead_over_budget, preflight_room, preflight_weights_over, release_frame, sglang_pool_room, shortage_shown, sleep_mode_budget, sync_frame,
                         tgi, tgi_tiny, torch, trt_tactic_skip_near)
from . import aimdo_forms as AF
from . import alloc_caps, ollama_estimate     # (aud68c #5, #8)
from .native_runtimes import hip_host_call, physx_setting, rknn_errno_fault
from .rule_row import Rule
from .should_fit import FIT_SHARE, sentence, verdict

# (round 107) a Metal buffer this small failing, with nothing loaded before it, is no shortage (R17)
TINY_METAL_BUFFER = 16 << 20
# (tri67) MLX refuses a buffer over MTLDevice.maxBufferLength before it asks Metal for memory: a per-buffer cap, not the
# machine's memory. R5 labels such a refusal other while the machine's memory would hold the buffer. The log prints the cap,
# not the memory; on the Macs whose memory the threads name the cap is 50-61 % of it (16 GiB on 32 GB, 21.06 GiB on 36 GB,
# 28.08 GiB on 48 GB, 38.88 GiB on 64 GB), so memory is at least 1.64 times the cap there. A buffer up to 1.5 times the cap is
# under the machine's memory on each of them; a larger one may be over it (R5: label the mechanism)
MLX_CAP_WITHIN_MEMORY = 1.5

R = Rule

def omlx_safety(x) -> bool:
    """oMLX's preflight safety cap (parse.OMLX_SAFETY: form "safety") refused the prompt."""
    return x.kind == "mlx.ceiling" and x.ev.get("form") == "safety"


def mlx_cap_within_memory(x) -> bool:
    """MLX's per-buffer refusal (other_runtimes: mlx.buffer_limit) of a buffer over the printed cap by at most
    MLX_CAP_WITHIN_MEMORY times it: over Metal's per-buffer maximum, under the machine's memory."""
    cap = x.n.get("max_allowed")
    return x.kind == "mlx.buffer_limit" and bool(cap) and cap < x.req <= MLX_CAP_WITHIN_MEMORY * cap


def _omlx_binding_advice(x) -> str:
    """The limit the guard's advice names for its binding ceiling (parse._omlx_preflight), as the fix to try first."""
    binding, limit = x.ev.get("binding") or "", x.n.get("limit")
    if "metal_cap" in binding and limit:
        return f"; Metal's wired limit caps it at {fmt_bytes(limit)}: raise iogpu.wired_limit_mb (sysctl) to give it more"
    if "dynamic" in binding and limit and "free" not in x.n:
        return f"; the custom ceiling is pinned at {fmt_bytes(limit)}: raise custom_ceiling_bytes"
    return ""

OTHER = [
    # --- other: the driver, the platform, or nothing to go on ------------------------------------------
    # (a cap explains a refusal only while the device would hold the buffer: docs/triage-causes.md R5. A request over the
    # whole device is a working tensor too large for it, up to case.ABSURD_REQUEST times the device (real tensors reach 9x
    # and 13x); past that the impossible-numbers row reads a size computed wrong)
    R("other", 3.0, lambda x: x.kind == "torch.xpu" and x.req >= 4 * GiB and not x.impossible
      and (x.allocated is None or x.allocated < 0.25 * x.total) and not (x.total and x.req > x.total),
      "Intel XPU: one allocation of {req:b}; a single allocation above 4 GiB is refused on many driver and runtime versions"),
    # the log shows NVML unable to start beside a GPU failure: the process had lost the GPU's driver, not memory
    # (not beside an OOM that carries the driver's own numbers: that process did reach the driver)
    R("other", 4.0, lambda x: x.f["nvml_init"] and not host(x) and not x.total, lambda x: (
        f"the log shows \"Failed to initialize NVML: {x.f['nvml_init']}\": this process cannot reach the GPU's driver, so its "
        "allocations fail whatever is free; " + (
            "the driver was updated without reloading it: reboot (or reload the nvidia kernel module)"
            if "mismatch" in x.f["nvml_init"].lower() else
            "in a container, systemd reapplied its device rules without the GPU (a daemon-reload; NVIDIA/nvidia-docker#1730): "
            "restart the container, and pass the GPU through CDI (--device nvidia.com/gpu=all) so it does not recur"
            if "unknown" in x.f["nvml_init"].lower() else "check nvidia-smi, the driver and the device's permissions"))),
    # the log reports the GPU's own hardware fault (an uncorrectable ECC error, an NVRM Xid, the GPU off the bus) beside a GPU
    # out-of-memory that shows no shortage of its own (a bare driver error, or a free figure covering the request): a faulty
    # card or node fails allocations (and a job started after it on that node too) whatever is free
    R("other", 6.0, lambda x: gpu_fault(x) and not shortage_shown(x), lambda x: (
        f"the log reports a GPU hardware fault (\"{x.f['gpu_fault']}\") beside this out-of-memory: a faulty card or node "
        "fails allocations whatever is free, not a shortage of this job's memory; check the card (nvidia-smi -q -d ECC, the "
        "kernel log's Xid lines) and run elsewhere (a scheduler: exclude that node)")),
    # ...beside a message whose own numbers show a shortage (a request over the free figure): that shortage is read first; the
    # fault is named, weighed below it (a card with a fault can also be simply full)
    R("other", 0.3, lambda x: gpu_fault(x) and shortage_shown(x),
      lambda x: f"the log also reports a GPU hardware fault (\"{x.f['gpu_fault']}\"), but this message's own numbers show a "
                "shortage (the request is more than the free memory): read that first; check the card if the failure recurs "
                "with memory free"),
    # numbers no shortage produces outweigh what the failing node or frame would suggest
    R("other", 4.5, lambda x: x.impossible, "{impossible}"),
    # PyTorch's MPS allocator (MPSAllocator.h) fails a request past its high watermark, or when Metal returns no heap
    # (newHeapWithDescriptor: nil); with nothing allocated by PyTorch or anyone else the watermark cannot be the reason
    R("other", 6.0, lambda x: x.branch == "mps" and x.allocated == 0 and x.other_alloc == 0 and "requested" in x.n
      and x.req < 0.5 * x.cap,
      "MPS: nothing is allocated (0 bytes, no other allocations) and a {req:b} request under the {cap:b} limit fails: Metal "
      "gave the allocator no heap at all, a machine without a usable Metal device (a CI runner or VM), not a shortage"),
    R("other", 3.0, lambda x: x.kind == "rmm.oom" and x.ev.get("form") == "pool_limit",
      "RMM's pool reached the maximum_pool_size it was created with, whatever the card has free: raise that maximum, or "
      "create the pool without one"),
    R("other", 4.0, lambda x: x.kind == "lmstudio.guardrail" and x.ev.get("form") == "no_estimate",
      "LM Studio could not estimate this model's memory (NaN): its guardrail refuses any load it cannot size; update LM Studio, "
      "or turn the guardrail off for this model"),
    R("other", 6.0, lambda x: x.kind in OWN_POOLS and x.req >= ABSURD_HOST,
      "one buffer of {req:b}: more memory than any device has; a size computed wrong (a bug, or a corrupt or unsupported input shape), not a shortage"),
    # PyTorch's CUDA allocators refuse a size of 1 EiB or more before asking the card ("Tried to allocate more than 1EB
    # memory"): a size computed wrong (an overflow, a negative size cast to unsigned, a collective that read another rank's
    # bytes as a size after a timeout: NVIDIA/nccl#1284), not a shortage; no smaller batch or model fixes it
    R("other", 8.0, lambda x: bool(x.ev.get("over_1eb")),
      "PyTorch refused a request of more than 1 EB (2^60 bytes) before trying it: no GPU has that, so the size was computed "
      "wrong (an overflow, a negative size, a collective or checkpoint that read garbage as a size), not a shortage; find the "
      "error before it (an NCCL timeout, a failed rank, a corrupt input) and fix that"),
    R("other", 8.0, lambda x: x.kind == "torch.cpu" and (x.n.get("requested") or 0) >= ABSURD_HOST,
      "one host allocation of {n[requested]:b}: more RAM than any machine has; a size computed wrong (a bug in the node or its input), not a RAM shortage"),
    # (round 70) llama.cpp's pre-GGUF loader threw std::bad_alloc after "llama.cpp: loading model from" and before it printed
    # anything it read from the file ("llama_model_load_internal: format = ...", n_vocab, ...): it was still reading the
    # header, whose vocabulary and tensor lengths size its vectors, so a length read wrong (a file in a format this build does
    # not read: made before or after an on-disk format change, or corrupt or cut short) asks for an absurd size; the RAM the
    # model needs is never asked for there (ggml-org/llama.cpp#1538: an old q4_1 file after PR #1508 changed the format)
    R("other", 5.0, lambda x: x.kind == "cpp.bad_alloc" and x.env["runtime"] == "llama.cpp" and ggml_header_failed(x),
      lambda x: "std::bad_alloc while llama.cpp was reading the model file's header (after \"loading model from\", before it "
                "printed the file's format and sizes): a length read from the file was wrong, so the file is not in the format "
                + (f"this build (build {x.f['runtime_version']['llama.cpp']}) reads" if x.f["runtime_version"].get("llama.cpp")
                   else "this build reads")
                + " (made before or after a change of the on-disk format, or corrupt or cut short), not a RAM shortage; "
                "re-convert or re-quantize the model from its original weights with this build, or run the build it was made "
                "for (a regression of this version for files made before it is likely)"),
    R("other", 4.0, fraction_cap,
      "{n[allowed]:b} allowed by a per-process memory fraction on a {total:b} card with {free:b} free: the cap ran out, not the card"),
    # the runtime's own numbers say it fits: the driver or a runtime version refused it (a regression is likely)
    R("other", 5.0, lambda x: x.branch == "ggml" and x.ggml_stage in ("device-alloc", "model-load-failed") and not x.f["ggml_bufs"]
      and x.f["ggml_device_free"] and x.req and x.req <= x.f["ggml_device_free"],
      lambda x: f"the device listed {fmt_bytes(x.f['ggml_device_free'])} free, more than the {fmt_bytes(x.req)} that failed: "
                "the allocation was refused (a single-allocation or shared-memory limit), not short"),
    R("other", 5.0, lambda x: x.branch == "ggml" and x.f["ollama_required"] and x.f["ollama_available"]
      and x.f["ollama_required"] <= FIT_SHARE * x.f["ollama_available"],
      lambda x: f"should fit: Ollama's own estimate needs {fmt_bytes(x.f['ollama_required'])} of "
                f"{fmt_bytes(x.f['ollama_available'])} available; a regression of this driver or runtime version is likely"),
    # the LLM calculator, asked about the model, context and card the log names, says the load fits with clear room
    # (should_fit.py: FIT_SHARE, and why no verdict without them) and it failed loading: a fault of the version
    R("other", 5.0, lambda x: verdict(x) is not None, lambda x: sentence(verdict(x))),
    # cudaMallocAsync message cut before "Free": PyTorch's allocations and the request are well under the limit
    R("other", 2.0, lambda x: async_numbers(x) and x.free is None and x.allocated + x.req <= 0.8 * x.total,
      lambda x: f"PyTorch's {fmt_bytes(x.allocated)} plus the {fmt_bytes(x.req)} request are well under the {fmt_bytes(x.total)} limit: "
                "memory the message does not show (mapped weights, another allocator, the runtime's own limit) refused it"),
    R("other", 3.0, mlx_cap_within_memory,
      lambda x: f"MLX asked Metal for one buffer of {fmt_bytes(x.req)}, {x.req / x.n['max_allowed']:.2f} times the "
                f"{fmt_bytes(x.n['max_allowed'])} one Metal buffer may hold: Metal's per-buffer cap (maxBufferLength) refused it "
                "before any memory was asked for; on the Macs whose memory the reports name that cap is half to three fifths of it, so "
                "a buffer this close to the cap would most likely fit the machine: a platform limit, not a shortage; split the "
                "array (smaller chunks of the input or prefill)"),
    R("other", 6.0, lambda x: x.kind == "mlx.buffer_limit" and x.req >= ABSURD_HOST,
      "MLX asked Metal for one buffer of {req:b}, more than any machine has: a size computed wrong (an overflow in the array's "
      "size), not a shortage"),
    # vllm-metal's KV refusal whose profile-run overhead alone passes the whole usable Metal budget: in vllm-metal#585 the
    # measurement counted retained buffers (an MLX buffer setting, dropped by #586). One case; the source cannot confirm it:
    # usable_metal is a fraction of Metal's recommended working set, a soft figure MLX may pass, so a real activation peak (a
    # large --max-num-batched-tokens) prints the same line. The evidence names both
    R("other", 4.0, metal_kv_overhead_over_budget,
      lambda x: f"vllm-metal measured {fmt_bytes(x.ev['overhead'])} of overhead in its profile run, more than its whole usable "
                f"Metal budget ({fmt_bytes(x.n['max_allowed'])}) and more than the {fmt_bytes(x.ev['model_memory'])} of weights: "
                "either the profile run's real peak is that large (lower --max-num-batched-tokens first), or it counted retained "
                "buffers as overhead (MLX's buffer cache, an MLX_MAX_MB_PER_BUFFER or cache-limit setting: unset such settings "
                "or compare the previous release); either way, not the model's size"),
    # an MLX server's load pre-flight refused the model on its own requirement before loading any of it (mlx-serve, MTPLX,
    # oMLX): nothing was allocated; the requirement adds the server's fixed headroom and the figure it compares is what is free
    # right now, so the refusal is the guard's arithmetic until the weights alone are far over it (the weights row above)
    R("other", 3.0, lambda x: x.kind == "mlx.load_preflight" and not preflight_weights_over(x),
      lambda x: "the server's load pre-flight refused the model before loading any of it, on its own requirement"
      + (f" ({fmt_bytes(x.n['required'])}"
         + (f" resident plus {fmt_bytes(x.n['headroom'])} headroom = {fmt_bytes(x.n['required'] + x.n['headroom'])}"
            if x.n.get("headroom") else "")
         + (f" against {fmt_bytes(preflight_room(x))}" if preflight_room(x) else "") + ")"
         if "required" in x.n else "")
      + ": nothing was allocated; the requirement adds the server's fixed headroom (warmup buffers, a first KV cache, a system "
        "reserve) and the figure it compares is the unified memory free right now: free memory (quit apps, wait for a previous "
        "server to exit) and retry, or bypass the guard once (mlx-serve --skip-mem-preflight) to see whether the model runs"),
    # (round 71) an application's own VRAM pre-flight check refused the job before running it: its estimate of the job's need
    # over what the card had free at that moment. Nothing was allocated and nothing ran out; such an estimate adds up every
    # model of the pipeline as if all were resident at once, and compares with what is free while earlier stages still hold
    # the card, so under CPU offload (one model at a time) it over-counts: the check refused, not the card
    # (ace-step/ACE-Step-1.5#747, fixed by #759: the check is skipped under offload)
    R("other", 3.0, kind("app.vram_preflight"),
      "the application's own VRAM pre-flight check refused the job before running it: its estimate ({n[required]:b} needed) "
      "against what the card had free at that moment ({n[free]:b}); nothing was allocated. Such an estimate counts every model "
      "as resident at once and compares with what earlier stages still hold: with CPU offload (one model at a time) it "
      "over-counts. Update the application or skip its check once and watch the real peak, before cutting the job"),
    # (round 117) SGLang ran out of memory while building its attention backend (server_predicates.sglang_attn_init: the model
    # runner's init_attention_backend, a backend's __init__ under layers/attention/): the backend's fixed workspace (FlashInfer's
    # global workspace buffer) comes after the static pool and is not part of mem-fraction-static's share, so a fraction set
    # near 1 leaves it no room (mattbucci/2x-3090-GA102-300-A1-sglang-inference's GLM-4.5-Air probe: 0.985 failed at the 384 MiB
    # workspace, 0.96-0.97 built it). 5.0: over the request-over-free and frame readings (activations, 4.5 there) and a capture
    # line another rank printed before the failure (graph-capture, 4.0): the failing rank's stack is the backend's constructor
    R("other", 5.0, sglang_attn_init,
      "the out-of-memory came while SGLang built its attention backend, after its static memory pool: the backend's fixed "
      "workspace is allocated outside --mem-fraction-static's share, so the fraction left it too little; lower "
      "--mem-fraction-static a step (0.01-0.03) to leave headroom for it"),
    # (round 117; rev8 S2) Unsloth Studio's host-RAM guard refused a GGUF load before llama-server started (parse:
    # app.host_offload_guard). Its source (studio/backend/core/inference/llama_cpp.py, _host_offload_shortfall_message) means a
    # shortage: on a discrete GPU the weights that miss free VRAM (priced with no margin, so under-stated) are more than the
    # RAM it leaves usable, a mapping that would page until the OS kills the app: host-ram (rules_host). Where the log names
    # an integrated GPU or unified memory (facts "igpu_named"), the guard's release may not credit the memory the GPU shares
    # with the system (the credit came later: unslothai/unsloth#9461): other, as here
    R("other", 3.0, lambda x: x.kind == "app.host_offload_guard" and x.ev.get("form") is None and bool(x.f.get("igpu_named")),
      lambda x: "the application's own guard refused the load before the server started: by its estimate "
                + (f"{fmt_bytes(x.n['required'])} of the model would run from system RAM with " if x.n.get("required") else "")
                + (f"about {fmt_bytes(x.n['limit'])} usable; " if x.n.get("limit") else "too little usable; ")
                + "nothing was allocated. The log names an integrated GPU or unified memory, which a release of the guard "
                "may not credit (it priced the whole model as a spill): update it, set the bypass it names once and watch "
                "the real load, or use a smaller GGUF"),
    # ds4's memory guard refused a plan that the budget its printed fields give from the machine would hold: the budget it used
    # looks set lower (a fixed per-model ceiling); nothing was allocated (antirez/ds4#889; the formula is inferred from that
    # issue's printed line, not checked against ds4's source)
    R("other", 3.0, ds4_guard_fits,
      lambda x: f"ds4's memory guard refused the plan before allocating the graph: it needs {fmt_bytes(x.n['required'])}, its "
                f"guard budget is {fmt_bytes(x.n['limit'])}, but the fields it prints for this machine ({fmt_bytes(x.n['total'])} "
                f"base x fraction - reserve - transient) come to {fmt_bytes(x.ev['guard_room'])}: the budget looks like a fixed "
                "ceiling below the machine's, not a shortage (that formula is read from the message, not from ds4's source); "
                "a ds4 build whose guard scales with the machine's memory, or the ceiling raised"),
    # oMLX's prefill guard refused the prompt on its own prediction before allocating it: nothing ran out; its KV+SDPA estimate
    # is a dense-attention formula, high for models whose cache is compressed (MLA, quantized KV), so run the prompt with the
    # guard relaxed and compare the real peak before cutting the context
    R("other", 3.0, lambda x: x.kind == "mlx.ceiling" and x.ev.get("form") == "preflight",
      lambda x: f"the server's memory guard refused the prefill before running it, on its own estimate ({fmt_bytes(x.n['requested'])} "
      f"of KV cache and attention on top of {fmt_bytes(x.n['allocated'])}, against a {fmt_bytes(x.n['max_allowed'])} "
      + (f"{x.ev['binding']} " if x.ev.get("binding") else "") + "ceiling): nothing was allocated, and that estimate assumes "
      "dense attention, high for models whose cache is compressed or quantized; raise or relax the ceiling and compare the real "
      "peak, else shorten the prompt" + _omlx_binding_advice(x)),
    # (tri50) the safety cap's runner-up: its KV figure follows the model's cache layout and may over-count a cache the model
    # compresses or quantizes
    R("other", 1.0, lambda x: omlx_safety(x),
      "if this model's cache is compressed or quantized, the guard's KV figure ({n[requested]:b}) may over-count it: loosen "
      "memory_guard_tier once and read the real peak"),
    # the runner-up: the scheduler counts what it thinks is held; when its own cache lines show the cache far from full, its
    # accounting (prefix-cached blocks, watermark) is what refused, not a shortage
    R("other", 1.0, kind("vllmrs.kv_admit"),
      "if vLLM.rs's own \"GPU Kvcache\" lines showed the cache far from full, the scheduler's accounting refused the prompt (a "
      "cached prefix of the same conversation counted as new tokens, a watermark rule): not a shortage; update vLLM.rs"),
    # the count is a limit of the platform; what reaches it is arrays kept alive (the leak row, rules.py): the runner-up
    R("other", 2.0, kind("mlx.resource_limit"),
      "Metal's limit on live buffers ({n[buffer_count_limit]}) is a count, not bytes: memory itself did not run out"),
    # FlashInfer plans its attention temporaries inside a workspace of fixed size its caller allocated: the workspace is full
    R("other", 8.0, kind("flashinfer.workspace"),
      lambda x: "FlashInfer's workspace (a fixed-size buffer the server allocated for it) has no room for a "
      + (f"{fmt_bytes(x.req)} temporary" if x.req else "temporary (this release prints no size)")
      + (f" ({fmt_bytes(x.n['available'])} left)" if "available" in x.n else "")
      + ": not the GPU's memory; a larger workspace (vLLM: VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE), a release that sizes it for "
        "this model, or another attention backend"),
    R("other", 4.0, kind("ggml.metal_max"),
      "one Metal buffer of {n[requested]:b} is larger than the device's maximum buffer size ({n[max_buffer]:b}): a single-allocation limit"),
    # (round 107, R17) ggml-metal refusing a buffer of a few MiB ("ggml_metal_buffer_init: error: failed to allocate buffer,
    # size = 2.20 MiB") with no model, KV or compute buffer and no offload printed before it: on a Mac's unified memory no
    # shortage shows at that size, so Metal itself refused (a sandbox, the driver, a bundled build), not this job's memory
    R("other", 6.0, lambda x: x.kind == "ggml.buffer" and x.ev.get("device_kind") == "metal" and 0 < x.req < TINY_METAL_BUFFER
      and not x.f.get("ggml_bufs") and not x.f.get("ggml_offloaded"),
      "Metal refused one buffer of only {n[requested]:b}, with no model, KV or compute buffer in the log before it: on unified "
      "memory that is not a lack of memory but Metal refusing the allocation (an app sandbox, the driver, the build); run "
      "outside the sandbox or with a fresh build, and the CPU (--no-gpu / -ng) meanwhile"),
    # comfy-aimdo reserves GPU virtual address space for the whole model (VBAR): vGPUs, WSL and some drivers refuse it
    R("other", 6.0, lambda x: x.kind == "comfy.dynamic_vram" and any(w in x.text for w in VA_RESERVE),
      "ComfyUI Dynamic VRAM (comfy-aimdo) could not reserve GPU virtual address space for its VBAR: a platform or driver limit "
      "(vGPU, WSL, some laptops), not a memory shortage; start ComfyUI with --disable-dynamic-vram"),
    # comfy-aimdo logs a CUDA driver call's failure as "CUDA API FAILED" only when it is not out-of-memory (src/plat.h): with no
    # aimdo error or OOM after it (those lead the failure), aimdo passed the driver something it refuses, or the driver faulted
    R("other", 6.0, kind("comfy.aimdo_cuda"),
      lambda x: f"comfy-aimdo (ComfyUI's Dynamic VRAM) had the CUDA call {x.ev.get('call')}() refused with \"{x.ev.get('error')}\": "
                "aimdo logs a driver call this way only when it failed for another reason than a lack of memory, so this is a "
                "fault of its version (0.2.4 fixed unaligned buffer sizes) or of the driver, not a shortage; update comfy-aimdo "
                "and ComfyUI, or start ComfyUI with --disable-dynamic-vram"),
    # comfy-aimdo's file reader (Dynamic VRAM's weight streaming) raised with no shortage line: of the reader's failure paths
    # (device context, file read, CUDA event, copy, staging allocation) only the last is a lack of memory
    R("other", 5.0, aimdo_reader_only,
      "comfy-aimdo's file reader failed (hostbuf_file_reader_read) and nothing in the log says it ran out of memory: a fault of "
      "the reader in this comfy-aimdo version (0.4.8 gave each device its own staging ring buffer) or of the file or driver; "
      "update ComfyUI and comfy-aimdo, or start ComfyUI with --disable-dynamic-vram"),
    # (tri66) comfy-aimdo's host buffer failed where its own log says the file read failed (predicates.aimdo_file_read): the
    # buffer was in place and the read into it (ReadFile / GetOverlappedResult on Windows) failed: the reader's I/O path, no
    # allocation; the definition's aimdo fault (docs/triage-causes.md, other), which --disable-dynamic-vram leaves out
    R("other", 5.0, aimdo_file_read,
      lambda x: f"comfy-aimdo's host buffer was in place and reading the weights file into it failed (\"{x.f['aimdo_file_read']}\"): "
                "the reader's file I/O, not an allocation of RAM or pinned memory; a fault of comfy-aimdo's reader in this version "
                "(or of the file or driver); update ComfyUI and comfy-aimdo, or start ComfyUI with --disable-dynamic-vram"),
    # Ollama's server could not get its runner to load the model: the client's line names no allocation, and the message itself
    # allows an internal error (the server log says which)
    R("other", 0.5, kind("ollama.load_failed"),
      "Ollama's own words allow \"an internal error\" too (a runner crash of this version): the server log names what failed"),
    # PyTorch's private pools are CUDA graphs' pools or a MemPool a program set up (a pluggable allocator: comfy-aimdo 0.1,
    # vLLM's sleep-mode cumem pool); the caching allocator cannot hand their memory to other requests. Only a line naming
    # such an allocator says the pools are not graphs' (PyTorch's own message says "e.g., CUDA Graphs", and logs seldom show
    # the capture): then pools of at least the request, with no graph capture in the log, are that allocator's, an
    # allocator-integration fault of the runtime's version, not the workload's size
    R("other", 1.6, lambda x: torch(x) and own_pool(x) and not x.graph_capture and x.n.get("private_pools") is not None and x.n["private_pools"] >= x.req,
      lambda x: f"{fmt_bytes(x.n['private_pools'])} of what PyTorch holds sits in private pools, and the log names the runtime's "
                "own allocator pool (a pluggable allocator, a MemPool, a sleep-mode pool), not a CUDA graph: that pool keeps "
                f"memory the {fmt_bytes(x.req)} request could not use; update the runtime (or turn that allocator off)"),
    # the Vulkan driver refused ggml's pinned (host-visible) buffer as out of DEVICE memory, and a device buffer (weights, KV
    # cache) failed after it: a host allocation cannot exhaust the card, so the driver is refusing allocations for another
    # reason than the sizes (a driver fault, or a version that sizes differently), not this buffer's lack of room; over the
    # KV-cache and weights stage rows, which stay the runner-up
    R("other", 4.5, lambda x: x.f["vk_pinned_device"] and x.branch == "ggml"
      and any(k in x.kinds for k in ("ggml.buffer", "ggml.kv_cache", "ggml.model_load")),
      "the Vulkan driver refused a pinned (host-visible) buffer as out of device memory before this device buffer failed: a "
      "host allocation cannot fill the card, so the driver is refusing allocations for another reason than their size (a "
      "driver or version fault); try another driver or runtime version, or keep that buffer off pinned memory"),
    R("other", 8.0, kind("ggml.vulkan_limit"),
      "Vulkan refused one buffer above the device's per-allocation limit (maxMemoryAllocationSize / maxBufferSize, often 4 GiB): "
      "a limit on one buffer, not a lack of VRAM; a smaller -ub/-b or context splits it"),
    # the validation layer's check of one vkCreateBuffer against maxBufferSize (R5): a cap on one buffer, the card may hold it
    # GPU PhysX's buffers are sized once from the scene description (PxgDynamicsMemoryConfig): one that overflowed names the
    # capacity it needed, a count of pairs, patches or contacts. The buffer is full, the card is not: raise that capacity (or
    # keep cloned environments apart, so their bodies do not meet) (R4; isaac-sim/IsaacLab#1389, isaac-sim/OmniIsaacGymEnvs#3)
    R("other", 8.0, kind("physx.capacity"),
      lambda x: f"GPU PhysX's {x.ev['capacity']} buffer overflowed"
      + (f" (it needs at least {x.ev['capacity_needed']})" if x.ev.get("capacity_needed") is not None else "")
      + ": a capacity fixed in the scene description when the simulation started, not a lack of device memory; raise it"
      + physx_setting(x.ev)
      + ", or space the environments apart so bodies of different clones do not meet"),
    R("other", 8.0, kind("vulkan.max_buffer"),
      lambda x: "the Vulkan validation layer refused one buffer" + (f" of {fmt_bytes(x.n['requested'])}" if x.n.get("requested") else "")
      + " above the device's maxBufferSize" + (f" ({fmt_bytes(x.n['max_allowed'])})" if x.n.get("max_allowed") else "")
      + ": a cap on one buffer set by the driver or a layer overriding it (the Vulkan Configurator), not a lack of VRAM; "
        "a smaller -ub/-b or context splits the buffer"),
    # (round 69) Metal's API validation layer stops one buffer over the per-buffer maximum (llama.cpp#6861): a cap on one
    # buffer, as R5 reads every such cap when the log shows no total the buffer exceeds
    R("other", 8.0, kind("metal.max_buffer"),
      lambda x: f"Metal's validation layer refused one buffer of {fmt_bytes(x.n['requested'])} over the device's per-buffer "
      f"maximum ({fmt_bytes(x.n['limit'])}): a cap on one buffer, not the device's total; a smaller -ub, -fa or a shorter "
      "context shrinks the buffer, and a shorter context also the KV cache if the device is near its total"),
    # (round 72) WSL2's GPU paravirtualisation refusing residency (dxgkio_make_resident -12), and the "device not ready" CUDA's
    # virtual-memory calls return to PyTorch's expandable segments there: a platform fault, not this job's shortage
    # (microsoft/WSL#41176, syv-ai/qwen38-27b-rtx3090#2, noonghunna/club-3090#84; docs/triage-causes.md R17/R18)
    R("other", 8.0, kind("wsl.make_resident"),
      "WSL2's GPU paravirtualisation (the dxgkrnl driver) refused to make an allocation resident (dxgkio_make_resident: -12, "
      "ENOMEM): WSL pages the card's memory through the Windows host and can refuse below what nvidia-smi shows free; a "
      "platform limit, not this job's memory exceeding the card: run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False, "
      "and if it persists leave headroom (a lower --gpu-memory-utilization)"),
    R("other", 7.0, kind("cuda.vmm_not_ready"),
      "\"CUDA driver error: device not ready\" is PyTorch's check of a CUDA virtual-memory call (cuMemCreate, cuMemMap) made "
      "for expandable segments: those calls never wait on work, and CUDA_ERROR_NOT_READY from them is the platform refusing "
      "the mapping (WSL2's GPU paravirtualisation), not a shortage; run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False"),
    # (round 72) HAMi-core's tracked usage near 2^64 is its counter wrapped below zero (Project-HAMi/HAMi#1181, fixed in
    # v2.6.1): an accounting bug of the vGPU layer (R12, a wrapped size), whatever the card holds
    R("other", 8.0, lambda x: x.kind == "hami.oom" and x.n.get("required", 0) >= 1 << 63,
      lambda x: f"HAMi-core refused device {x.ev.get('device_index')}'s allocation with a tracked usage of {x.n['required']} bytes, "
      "just under 2^64: its usage counter wrapped below zero (freed more than it counted), an accounting bug of the vGPU layer, "
      f"not memory this pod holds (its limit is {fmt_bytes(x.n['limit'])}); update HAMi (v2.6.1 and later) and restart the pod"),
    R("other", 6.0, lambda x: x.kind == "xla.oom" and x.ev.get("form") == "scratch",
      lambda x: f"a TPU kernel's {x.ev.get('memory_space')} scratchpad needs "
                + (f"{fmt_bytes(x.n['scratch_required'])} of its {fmt_bytes(x.n['scratch_limit'])}" if "scratch_required" in x.n
                   else "more than it holds (its figures not quoted)")
                + ": a kernel's block (tile) sizes, not the device's memory; smaller blocks or a higher vmem_limit_bytes"),
    # a fixed host buffer the program sized from its own tables (ggml's scratch buffer, or its context pool quoted without
    # numbers): too small for this model or input means the build's sizing, fixed by updating it (KoboldCpp's FAQ: a smaller
    # context or batch, else a bug to file)
    R("other", 4.0, lambda x: x.kind == "ggml.ctx_pool" and x.ev.get("form") in ("scratch", "cut"),
      lambda x: f"ggml's fixed {'scratch buffer' if x.ev.get('form') == 'scratch' else 'context memory pool'} is too small: "
                "the program sized it from its own tables for this model and batch, so a build that sizes it wrong overflows "
                "it whatever the machine has free; update the program (a smaller context or batch until then)"),
    # (round 84) the context pool's line without its function's name, its numbers quoted: the same fixed pool, sized by the program
    R("other", 4.0, lambda x: x.kind == "ggml.ctx_pool" and x.ev.get("form") == "bare",
      "ggml's context memory pool needed {n[requested]} bytes and holds {n[available]}: a fixed pool the program sized from its "
      "own tables for this model and graph, not the machine's memory, so a build that sizes it wrong overflows it whatever is "
      "free; update the program (a smaller context or batch until then)"),
    # vkQueueSubmit returning VK_ERROR_OUT_OF_DEVICE_MEMORY: the program allocated every buffer already; the driver could not
    # make the submission's memory resident (WDDM residency, a driver fault, a build that splits or keeps more at once)
    R("other", 1.5, lambda x: x.branch == "ggml" and x.ggml_stage == "submit", lambda x: (
        "the Vulkan driver refused a command submission for memory (vk::Queue::submit: ErrorOutOfDeviceMemory) " + (
            "while the weights were uploaded: the model's buffers had been allocated, so the driver could not make the "
            "upload's memory resident" if x.submit_phase == "model" else
            "while a graph ran: every buffer had been allocated, so the driver could not make what the commands use resident "
            "at once") + "; a fault of the driver or of this build's placement (a regression if an earlier build ran the same "
        "command), not one allocation")),
    # vkCreateComputePipelines returning VK_ERROR_OUT_OF_DEVICE_MEMORY: creating a pipeline compiles a shader and allocates
    # none of the program's buffers (weights, cache, compute), so no size of the model's failed: the driver's own memory
    R("other", 2.0, lambda x: x.branch == "ggml" and x.ggml_stage == "pipeline",
      "the Vulkan driver could not create a compute pipeline (createComputePipeline: ErrorOutOfDeviceMemory): creating a "
      "pipeline compiles a shader and allocates none of the program's buffers, so no allocation of the model failed; a fault "
      "of the driver or of this build (a regression if an earlier build ran the same command), or a card left with no room "
      "at all"),
    # (round 63) ggml's HIP build aborts "HipVMM Failure: out of memory" when its VMM pool cannot reserve or map memory through
    # HIP's virtual memory management; on some ROCm installs every load fails this way whatever the model's size, and a
    # build without the VMM pool loads the same models (native_runtimes.HIP_VMM)
    R("other", 4.0, kind("ggml.hip_vmm"), lambda x: (
        f"ggml's HIP VMM pool failed (\"HipVMM Failure: {x.ev.get('error')}\"): HIP's virtual memory management could not "
        "reserve or map the pool's memory. On some ROCm installs this fails whatever the model's size (a ROCm or llama.cpp "
        "upgrade regression, ggml-org/llama.cpp#11405): rebuild with -DGGML_CUDA_NO_VMM=ON (the legacy pool); if a smaller "
        "model and context load, it was a real shortage of compute buffers")),
    # (round 63) YOLOX's -o/--occupy grabs one block of 0.9 x the card's total minus nvidia-smi's used figure before the model
    # is built (yolox/utils/metric.py occupy_mem): a request of half the card or more with next to nothing allocated is that
    # block, sized from the card (and from another card's figures under CUDA_VISIBLE_DEVICES before YOLOX fixed it), not the
    # model or the batch (Megvii-BaseDetection/YOLOX#665)
    R("other", 6.0, lambda x: x.f["yolox_occupy"] and torch(x) and x.total and x.req >= 0.5 * x.total
      and x.allocated is not None and x.allocated < 0.1 * x.total,
      "the YOLOX command has -o (--occupy): before building the model it allocates one block of 0.9 x the card's total minus "
      "what nvidia-smi shows used; this {req:b} request with {allocated:b} allocated is that block, not the model or the "
      "batch: drop -o (the run does not need it), or lower the fraction in yolox/utils/metric.py occupy_mem"),
    # (round 67) WebGPU's device loss (native_runtimes.WEBGPU_LOST): the runner-up to the model not fitting (rules_weights)
    R("other", 1.0, kind("webgpu.device_lost"),
      "a WebGPU device loss with nothing else in the log: a driver reset, a GPU hang or another tab's GPU process reads the same"),
    # (round 67) TensorRT's builder could not allocate a tactic's workspace and skipped the tactic (fact_patterns.trt_tactic_skip):
    # the request is the builder's workspace pool limit, a setting, not the engine's weights or an inference tensor
    R("other", 4.0, lambda x: x.kind == "tensorrt.oom" and trt_tactic_skip_near(x),
      lambda x: "TensorRT's builder skipped a tactic whose workspace"
      + (f" ({fmt_bytes(x.n['requested'])})" if x.n.get("requested") else "")
      + " could not be allocated: the request is the builder's workspace pool, a setting; set it below the card's free memory "
        "(IBuilderConfig::setMemoryPoolLimit, trtexec --memPoolSize=workspace:N, DeepStream's workspace-size); the build "
        "goes on with other tactics"),
    # (round 86) WebGPU's validation refused one buffer or binding over the adapter's cap (native_runtimes.WEBGPU_MAX_BUFFER):
    # a per-buffer cap of the platform (R5), not the device's memory running out
    R("other", 8.0, kind("webgpu.max_buffer"),
      "WebGPU refused one buffer of {n[requested]:b} over this adapter's per-buffer cap of {n[max_allowed]:b} "
      "(maxBufferSize or maxStorageBufferBindingSize): a cap set by the adapter, not the device's memory running out; "
      "request the adapter's own limit when creating the device, split the buffer, or use a backend without the cap (wasm, cpu)"),
    # (round 86) MPSGraph refused a tensor whose dimensions pass INT_MAX (other_patterns.MPSGRAPH_INT_MAX): a cap of the
    # platform on one tensor, whatever memory is free (R5)
    R("other", 6.0, kind("mps.int_max_dims"),
      "MPSGraph does not support a tensor whose dimensions pass INT_MAX (2**31 - 1): a cap of Apple's MPS on one tensor, "
      "not the Mac's memory running out; split the work so no one tensor is that large (a tiled VAE decode, a smaller "
      "resolution or length), or run that step on the CPU"),
    # (round 64) TensorFlow.js's WebGL backend refused a texture over the browser's/GPU's MAX_TEXTURE_SIZE (native_runtimes.
    # TFJS_TEXTURE): a per-texture cap of the platform (R5), in texels, not memory running out
    R("other", 6.0, kind("tfjs.texture_size"),
      lambda x: "TensorFlow.js's WebGL backend needs a texture of {}x{} texels, over this browser's/GPU's maximum of {}x{}: a "
                "cap on one texture's sides, set by the platform, not memory running out; make the tensor smaller (a smaller "
                "batch or input), or use a backend without the cap (wasm, cpu, WebGPU) or a machine whose GPU allows larger "
                "textures".format(*x.ev["texture"], *x.ev["max_texture"])),
    # (round 63) MediaTek's APUSys could not allocate an NPU command's memory: the APU's fixed platform resources, which the
    # user cannot enlarge or move operators out of (native_runtimes.APUSYS_ALLOC)
    R("other", 4.0, kind("npu.apusys"),
      "MediaTek's APUSys could not allocate this NPU command's memory (memAlloc ... Cannot allocate memory): the APU's fixed "
      "platform resources, not system RAM or a batch; the model (or an operator of it) asks more than this NPU generation "
      "holds or supports: check the platform's supported model classes (e.g. transformers need a newer MDLA), or run it on "
      "the CPU or GPU delegate"),
    # (round 74) Rockchip's RKNPU driver refused the NPU buffer with an errno other than ENOMEM (EFAULT, "Bad address"): the
    # runtime and the kernel driver do not agree (a runtime built for another driver version), not memory running out
    R("other", 8.0, rknn_errno_fault,
      lambda x: f"the RKNPU driver refused the NPU buffer with errno {x.ev['errno']} ({x.ev.get('errstr')}), not ENOMEM: the "
                "runtime and the kernel driver do not agree (a runtime built for another driver version), not a shortage; "
                "update the RKNN/RKLLM runtime, the toolkit that converted the model and the RKNPU driver together"),
    # (round 74) ... on a board whose firmware runs the NPU without its IOMMU: it gets only memory reserved for it, not RAM
    R("other", 8.0, lambda x: x.kind == "npu.rknn" and x.f["rknpu_no_iommu"],
      "the RKNPU driver runs without its IOMMU on this board (\"rknpu iommu is disabled, using non-iommu mode\"): the NPU gets "
      "only the memory reserved for it, not the board's RAM, so buffers far below the RAM are refused; use a firmware or "
      "device tree with the RKNPU IOMMU enabled (or reserve memory for the NPU)"),
    # (round 74) any other refusal of RKNN's (RKNN_ERR_MALLOC_FAIL, "failed to malloc npu memory"): the NPU maps system RAM,
    # so a model that loads on the same board in another form, or a runtime that matches the driver, is the usual cure
    R("other", 4.0, kind("npu.rknn"),
      "Rockchip's NPU runtime could not allocate the model's NPU memory: the NPU maps system RAM, so this is seldom the RAM "
      "itself; check that the runtime, the converting toolkit and the RKNPU driver versions match, and the converted model "
      "(export only the outputs needed: a multi-branch ONNX export can fail where a single-output one loads)"),
    # (round 74) LMCache's pool (its CPU tier of max_local_cpu_size, or a GDS backend's cuFile buffer) had no free chunk: a
    # fixed pool sized by a setting that is meant to evict, not the card and not the machine's RAM (R4)
    R("other", 4.0, kind("lmcache.pool"),
      "LMCache's allocator found no free chunk in its own pool for this KV chunk: a fixed pool (the CPU tier's "
      "max_local_cpu_size, or a GDS backend's cuFile buffer) that should evict old chunks, not the GPU and not free RAM; "
      "update LMCache (its CPU tier's eviction and chunk release were fixed in 0.3.x), give the CPU tier its own allocator "
      "when GDS is on, or raise max_local_cpu_size"),
    # (round 74) PyTorch's CUDA check said "invalid argument" with no pinned allocation under it: a call was given a bad
    # argument, not memory running out
    R("other", 2.0, lambda x: x.kind == "cuda.invalid_arg" and not x.f["pinned_src"],
      "CUDA refused a call as given an invalid argument: no shortage is named; find the call (CUDA_LAUNCH_BLOCKING=1)"),
    # .NET throws OutOfMemoryException when one object would pass its size limit, whatever RAM is free
    R("other", 4.0, lambda x: x.kind == "dotnet.oom" and x.ev.get("form") == "object_limit",
      lambda x: f"the .NET exception was thrown growing one object ({x.ev['frame'][3:]}): a StringBuilder, string, array or "
                "MemoryStream has a size limit (about 2**30 characters, 2 GB) that RAM does not lift; build smaller pieces "
                "(page a list, stream the output)"),
    # ggml's graph allocator could not place a tensor in the buffer it had sized itself (measure pass, reserve): the buffer
    # exists and the card gave it; ggml's own sums were short for this graph ("this should never happen", ggml-alloc.c)
    R("other", 4.0, lambda x: x.kind == "ggml.ctx_pool" and x.ev.get("form") == "tallocr",
      "ggml's graph allocator needed {n[requested]:b} in a buffer it had sized itself and found {n[available]:b} at most: "
      "the buffer was already allocated, its size came from ggml's own measure of the graph, and that measure was short for "
      "this model (a bug of this build, often a recent change; a smaller -b does not cure it): update, or go back to the build "
      "that worked"),
    R("other", 4.0, lambda x: x.kind == "ggml.ctx_pool" and x.ev.get("form") == "object",
      "ggml's context ran out of room for its own objects (needed {n[requested]}, had {n[available]} bytes): a size the "
      "program computed for its metadata, not the machine's memory; update the program"),
    R("other", 6.0, kind("triton.shared_memory"),
      "a Triton kernel (torch.compile, SageAttention) needs {n[requested]} bytes of shared memory per block and this GPU "
      "allows {n[max_allowed]}: a kernel configuration this GPU cannot run, not VRAM"),
    # (round 110) Metal's pipeline compiler: a kernel's threadgroup memory over the GPU's maximum (kernel_limits.METAL_THREADGROUP):
    # on-chip memory per threadgroup, a limit on the kernel's configuration, whatever unified memory is free (R5's family)
    R("other", 6.0, kind("metal.threadgroup"),
      lambda x: f"a Metal kernel needs {x.req} bytes of threadgroup (on-chip) memory"
                + (f" and this GPU allows {x.n['max_allowed']}" if "max_allowed" in x.n else " over this GPU's maximum")
                + ": a kernel configuration (tile size, head dimension, dtype) this GPU cannot run, not a shortage of memory; "
                "a smaller head dimension or a lower-precision dtype picks a smaller kernel, or update the library"),
    R("other", 6.0, lambda x: x.kind == "torch.xpu" and "larger than 4GB" in x.text,
      "Intel XPU refuses any single allocation above 4 GiB on this platform ({req:b} asked): a per-allocation limit, not a shortage"),
    # the Comfy Compiler (2026): comfy-aimdo's memory compiler records a model's allocations and replays them
    R("other", 7.0, kind("comfy.compiler"), lambda x: (
        "the Comfy Compiler (comfy-aimdo's memory compiler) could not " + ("start recording" if "could not start" in x.text else "record")
        + " this model's allocations" + compiler_note(x) + ": an allocation pattern it cannot plan (often a custom node "
        "allocating inside the compiled forward), not a lack of memory; update that node, or start ComfyUI with --disable-comfy-compiler")),
    R("other", 2.5, lambda x: torch(x) and x.comfy and compiler_flood(x.f),
      lambda x: "the Comfy Compiler reported a flood of graph breaks and rogue allocations before this OOM" + compiler_note(x)
                + ": allocations outside its compiled plan (a custom node patching the model) take memory the plan does not "
                  "count; update that node, or start ComfyUI with --disable-comfy-compiler"),
    R("other", 3.0, lambda x: kind("comfy.dynamic_vram")(x) and not AF.named_form(x),
      AF.dynamic_words),          # (fix66g) "the driver refused" only where aimdo's line says so
    # (fix66d) comfy-aimdo's own forms (aimdo_forms.py): the model file's mapping, and the VBAR's own range overrun
    R("other", 6.0, AF.model_mmap, lambda x: "comfy-aimdo could not open, size or map the model file" + AF.mmap_file(x) + ": a "
      "missing, unreadable or empty file, a path Windows cannot open (non-ASCII characters), or a mapping the OS refused, not "
      "a lack of RAM or VRAM; check the file, keep models on a local disk under an ASCII path, or start ComfyUI with "
      "--disable-dynamic-vram"),
    R("other", 6.0, AF.vbar_oom, "the model's tensors ran past the range comfy-aimdo reserved for this model (VBAR OOM): the "
      "range is sized from what ComfyUI counts for the model, so the model holds far more than ComfyUI counted (often a "
      "custom node that adds layers or brings its own model class), not a full card; update the node that loads it and ComfyUI, or start ComfyUI with --disable-dynamic-vram"),
    # vLLM's cumem allocator (sleep mode) reporting a driver error other than out of memory: a call of the allocator failed
    R("other", 6.0, lambda x: x.kind == "vllm.cumem" and x.ev.get("form") == "fault",
      lambda x: f"vLLM's cumem allocator (the one --enable-sleep-mode uses) got \"{x.ev.get('error')}\" from a CUDA driver call: "
                "the allocator or the driver failed, not the memory; start without --enable-sleep-mode, or a vLLM release "
                "that fixes it"),
    # the same allocator running out after vLLM sized the KV cache: the profile's budget, not the workload (R18)
    R("other", 2.5, sleep_mode_budget,
      "vLLM's sleep-mode (cumem) allocator ran out after vLLM sized the KV cache at {f[vllm_kv_mem]:b} from its own profile: "
      "with that allocator the profile can count PyTorch's memory past the card (vllm#40256), so the budget was larger than "
      "the card; lower --gpu-memory-utilization (or set kv_cache_memory_bytes), or start without --enable-sleep-mode"),
    # SGLang's KV pool refused a batch its own printed count had room for: the pool's page accounting (the scheduler's check
    # before the step under-counted the pages a paged pool hands out), not the context; over the KV-pool row (kv-cache 4.0),
    # which stays the runner-up (the pool was nearly full all the same)
    R("other", 5.0, sglang_pool_room,
      lambda x: f"SGLang's KV pool refused {x.n['requested_tokens']} tokens while its own count showed {x.n['available_tokens']} "
                "free (free plus evictable): the slots were there, so the refusal is the pool's accounting, not the context; "
                "with --page-size above 1 each request crossing a page takes a whole page, which the scheduler's check before "
                "the step must count (sglang#4602, fixed by PR 4913): update SGLang, or run with --page-size 1"),
    *alloc_caps.rows(),     # (aud68c #8) Level Zero's 4 GiB and Vulkan's one-allocation cap in llama.cpp's logs
    R("other", 1.5, lambda x: x.kind == "xpu.driver" and not x.ev.get("host"),
      "Intel Level Zero refused a device allocation: its limits (one allocation over 4 GiB, contexts spanning several GPUs) "
      "refuse as often as the memory runs out"),
    R("other", 1.8, kind("torch.nvml_assert"),
      "NVML assert while PyTorch built its out-of-memory report (MIG, WSL or Jetson): the OOM numbers are lost"),
    # Ollama sized its GPU layers from its own estimate: a CUDA out-of-memory inside the runner afterwards (not its compute
    # pool growing; cuBLAS failing to create its handle at the first matmul too) means the estimate was low for this build
    R("other", 1.5, lambda x: x.kind in ("cuda.driver", "cublas.alloc") and x.env["runtime"] == "ollama"
      and not (x.f["ggml_cuda_fn"] or "").startswith(("ggml_cuda_pool", "alloc")),
      lambda x: ollama_estimate.why(x, "Ollama chose how many layers to put on the GPU from its own memory estimate, and CUDA ran "
                                    "out afterwards")),     # (aud68c #5) a regression only with should_fit's verdict
    # the same estimate placed only part of the model on the GPU, counting those layers' KV cache, and that KV buffer failed
    # all the same: the estimate, not the context, is what was wrong (R2); close to the KV row (4.0), so the two are a pair.
    # Not when the user chose the split (layers.requested >= 0: num_gpu), nor when the KV buffer that failed was the host's
    R("other", 4.5, lambda x: x.env["runtime"] == "ollama" and x.ggml_stage == "kv-cache-failed" and not x.host_buffer
      and (x.f["ollama_requested"] is None or x.f["ollama_requested"] < 0)
      and 0 < (x.f["ggml_offloaded"] or (0, 0))[0] < (x.f["ggml_offloaded"] or (0, 0))[1],
      lambda x: ollama_estimate.why(x, f"Ollama put {x.f['ggml_offloaded'][0]} of {x.f['ggml_offloaded'][1]} layers on the GPU "
                                    "by its own estimate, which counts those layers' KV cache, and that KV buffer failed all the same")),
    # torch.cuda.empty_cache() only frees (cudaFree of PyTorch's cached blocks): an out-of-memory raised there is not a
    # request the card could not hold but the driver's error, or an earlier asynchronous call's reported late; over the
    # bare check's pinned-RAM reading (host-ram 1.4), which needs a transfer that allocates
    R("other", 2.0, release_frame,
      lambda x: f"the CUDA out-of-memory was raised inside {x.frames[-1][1]}(), which only returns PyTorch's cached memory to the "
                "driver: freeing cannot run out of memory, so the driver (a driver version's fault) or an earlier asynchronous "
                "call failed; update or roll back the GPU driver, and run with CUDA_LAUNCH_BLOCKING=1 to find the call"),
    # a stream or device synchronize only waits for queued work (predicates.SYNC_FRAMES): the error belongs to an earlier
    # asynchronous copy or kernel (ComfyUI's offload stream), not to a request made there; over the same pinned-RAM reading
    R("other", 2.0, sync_frame,
      lambda x: f"the CUDA out-of-memory was raised inside {x.frames[-1][1]}(), which only waits for work already queued: an "
                "earlier asynchronous copy or kernel failed and is reported late, not a request made there; run with "
                "CUDA_LAUNCH_BLOCKING=1 to find the call, and if the same workload ran before an update of the runtime or "
                "driver, the update is the likelier cause (roll it back and report it)"),
    # TGI's warm-up says "not enough memory" for a prefill batch that needs well under a GiB (predicates.TGI_TINY_PREFILL): not
    # the batch's memory; the warm-up failed for another reason it reports this way (a kernel that failed to build, a release's bug)
    R("other", 5.0, tgi_tiny,
      lambda x: f"text-generation-inference's warm-up reports no memory for a prefill batch of only {tgi(x)['prefill_tokens']} "
                "tokens, whose working memory is well under a GiB on any model: the warm-up failed for another reason it reports "
                "as memory (read the error above it: a kernel that did not compile or load, a bug of this release); update the "
                "image, or check the shard's own log"),
    # hipHostRegister page-locks a range the program already owns; a range of under 1 GiB is far below any pinned limit
    # (a share of system RAM), so the range itself was refused: not memory the program allocated, or a size past its buffer
    # (ROCm/legacy-rocm-build#1483: the address of the pointer variable passed for the buffer); over the pinned-RAM hint (1.2)
    R("other", 1.5, lambda x: hip_host_call(x) == "hipHostRegister" and 0 < x.req < GiB,
      lambda x: f"hipHostRegister could not page-lock {fmt_bytes(x.req)}, far below any pinned-memory limit: the range passed "
                "was refused, not RAM (an address that is not the start of a buffer of that size, such as a variable's own "
                "address); check the call's arguments in the trace"),
    R("other", 1.0, kind("cuda.driver"), "driver-level CUDA error without allocator numbers"),
    # libplacebo names the one allocation and the heap, not what holds the rest of it (its own frames are small)
    R("other", 1.0, kind("libplacebo.alloc"),
      lambda x: f"libplacebo could not allocate {fmt_bytes(x.req)}" + (f" of the {fmt_bytes(x.total_heap)} device heap" if x.total_heap else "")
      + ": it does not say what holds the rest (another Vulkan user in the process, the decoder, or the driver refusing); "
        "retry with another input codec or a smaller output to see which"),
    # (fixV) Vulkan's refusal in the driver's words with no program named (env.guess_runtime: runtime "vulkan"): nothing says
    # what the memory held, and no one program's advice (llama.cpp's -ngl, PyTorch's allocator) applies
    R("other", 1.0, lambda x: x.branch is None and x.env["runtime"] == "vulkan",
      "Vulkan refused a device-memory allocation (VK_ERROR_OUT_OF_DEVICE_MEMORY), and the log names no program this triage "
      "recognises (runtime not recognised): the card's memory, or one allocation past what the driver gives at once"),
    # (fixV) Omniverse Kit's Vulkan renderer (Isaac Sim, Isaac Lab): what it allocates is the scene's and the cameras'
    R("other", 3.0, lambda x: x.kind == "kit.vulkan" and x.ev.get("form") != "host",
      "Omniverse Kit's Vulkan renderer (carb.graphics-vulkan) ran out of device memory: the scene's geometry and textures "
      "and each render product (viewport, camera: times its resolution) are its allocations, beside the simulation's own "
      "CUDA memory on the same card; the renderer's load is what to cut, not a PyTorch or llama.cpp setting"),
    R("other", 1.0, lambda x: x.branch is None and x.env["runtime"] != "vulkan", "an out-of-memory error without numbers"),
]
