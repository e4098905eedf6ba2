"""The facts of one failure, as the rules table reads them.

`build()` turns an incident (scan.py), the log's startup facts, the host's context and the inferred
environment into one flat `Case`: the allocator's numbers under common names (req, total, free,
allocated, others ...), the phase the log shows, the traceback's verdict, the failing node, earlier
runs. Everything here is measurement or classification; no weights. The weights live in rules.py.
"""
from . import categories as C
from .card_room import HELD_SHARE
from .driver_predicates import NVML_NA
from .aimdo_forms import aimdo_true_oom
from . import block_swap
from ..estimate.spec import CUDA_CONTEXT
from ..units import GiB, MiB, fmt_bytes as b

TORCH = ("torch.cuda", "torch.hip", "torch.xpu", "torch.npu")
SIMPLE = ("torch.cpu", "python.memory_error", "ollama.system_memory", "ggml.host", "vllm.kv_max_len", "vllm.no_kv_blocks", "vllm.mamba_blocks",
          "vllm.startup_free", "vllm.profile_race", "comfy.dynamic_vram", "comfy.aimdo_cuda", "comfy.compiler", "torch.nvml_assert", "cuda.driver",
          "cublas.alloc", "cudnn.alloc", "comfy.vae_tiled_fallback", "comfy.pinned_host",
          "onnx.alloc", "xla.oom", "metal.oom", "mps.buffer_size", "os.paging_file", "os.oom_killer", "xpu.driver", "ollama.layout",
          "os.enomem", "os.system_memory", "comfy.vhs_ram", "opencl.alloc", "triton.shared_memory", "mps.ndarray_limit",
          "sglang.pool", "sglang.kv_pool", "trtllm.executor", "mlx.buffer_limit", "mlx.resource_limit", "mlx.ceiling", "mlx.admission", "vllmrs.kv_admit", "tensorrt.oom",
          "transformers.dispatch", "exllama.split", "sglang.unbalanced", "tgi.prefill", "cpp.bad_alloc", "ggml.ctx_pool", "paddle.oom", "cupy.oom", "rmm.oom", "vllm.warmup", "openvino.buffer_limit",
          "lmstudio.guardrail", "wgpu.oom", "ollama.fit", "ollama.load_failed", "mlx.malloc", "vulkan.alloc", "kit.vulkan", "vulkan.max_buffer", "dotnet.oom", "libplacebo.alloc", "vllm.cumem", "enoki.malloc",
          "catboost.pool", "faiss.alloc", "physx.capacity", "kmcuda.alloc", "xla.remat")
# (round 106) Ollama's offload record: its compute graph's estimate over the GPU's available memory
SIMPLE += ("ollama.graph_over",)
SIMPLE += ("metal.threadgroup",)     # (round 110) Metal's threadgroup-memory limit on a kernel: its request and the limit
# (round 73) XGBoost's device allocator: its message gives the request and the card's free memory
SIMPLE += ("xgboost.alloc",)
# (round 73) a traceback cut inside vLLM's memory profiling: no message, nothing measured
SIMPLE += ("vllm.profile_cut",)
# (round 59) the Spark RAPIDS plugin's pool sized over what is free: its request is a pool, not one tensor
SIMPLE += ("rapids.rmm_init",)
# (round 61) MLC LLM's memory plan refused before any allocation: its figures are a plan, not one tensor
SIMPLE += ("mlc.insufficient",)
# (round 63) ggml's HIP VMM pool, the JVM's heap, MediaTek's APUSys command memory, a DataLoader worker's shared memory
SIMPLE += ("ggml.hip_vmm", "jvm.heap", "npu.apusys", "os.shm")
SIMPLE += ("tfjs.texture_size",)      # (round 64)
SIMPLE += ("vllm.cpu_node",)      # (fixZ) vLLM's CPU worker: the NUMA node's RAM
SIMPLE += ("mnn.acquire", "js.array_buffer", "webgpu.device_lost")      # (round 67)
SIMPLE += ("torch.alloc_warn",)       # (round 68) the caching allocator's cudaMalloc warning: the device's figures, no cache's
SIMPLE += ("metal.max_buffer",)       # (round 69) Metal validation's per-buffer cap
SIMPLE += ("jupyter.kernel_died",)       # (tri75) a Jupyter kernel that died with no reply: nothing measured
SIMPLE += ("batchgen.workers_dead",)       # (tri76) data-loading workers found dead: nothing measured
SIMPLE += ("python.native_abort",)       # (tri82) a native abort (faulthandler): nothing measured
SIMPLE += ("wsl.make_resident", "cuda.vmm_not_ready", "hami.oom")     # (round 72) WSL2 residency, CUDA VMM, HAMi's vGPU limit
SIMPLE += ("npu.rknn", "lmcache.pool", "cuda.invalid_arg")     # (round 74) Rockchip's NPU, LMCache's pool, CUDA invalid argument
SIMPLE += ("npu.cann_malloc",)     # (round 84) CANN's rtMalloc refusal on an Ascend NPU: one request, no card figures
SIMPLE += ("webgpu.max_buffer",)     # (round 86) WebGPU's per-buffer and per-binding caps: one request and the cap
SIMPLE += ("mps.int_max_dims",)     # (round 86) MPSGraph's cap on a tensor's dimensions: no figures
SIMPLE += ("nccl.shm",)     # (round 87) NCCL's shared-memory segment in /dev/shm: one request, no card figures
SIMPLE += ("tritonserver.shm_pool",)     # (round 89) Triton's Python-backend shared-memory pool: its size, no card figures


# messages a runtime raises from PyTorch's own OOM, naming the stage that failed (read among a failure's events)
EXPLAINING = ("trtllm.executor", "tgi.prefill", "vllm.warmup")

# runtimes whose own allocators print ggml-like lines ("cudaMalloc failed: out of memory" is MXNet's too); a llama.cpp
# node inside ComfyUI keeps the ggml reading
NOT_GGML = ("mxnet", "sglang", "mlx", "tensorrt-llm", "tinygrad", "vulkan")     # (fixV) vulkan: a program not recognised


class Case:
    """Attribute bag; a missing attribute reads as None so a rule can test any field."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def _training_seen(step, src_step, log_line, frames) -> str | None:
    """What showed a training run, in words for the evidence: the step on the stack, a source line, or a log line."""
    if step:
        return f"{step}() on the stack"
    if src_step:
        return f"source line {src_step!r}"
    if not log_line:
        return None
    if log_line.endswith(".py"):
        where = "on the stack" if any(p.replace("\\", "/").endswith(log_line) for p, _ in frames) else "named in the log"
        return f"training script {log_line} {where}"
    return f"training log line {log_line!r}"


def async_card(n: dict, facts) -> int | None:
    """The card behind a cudaMallocAsync message: its "Device limit", unless that is more than 1.25x the card ComfyUI
    measured at start ("Total VRAM N MB", torch.cuda.mem_get_info): then a number this allocator got wrong (a 4 GB
    GTX 1650 printing 13.81 GiB), and the start-up total is the card. Only when what PyTorch reports holding and free
    fits that card: "Total VRAM" is the card ComfyUI starts on, and an error on a larger second GPU (ComfyUI-MultiGPU,
    "Allocation on device 1") prints that GPU's true limit. Shared by the ranking and the guide's numbers."""
    limit, start = n.get("device_limit"), facts["total_vram"]
    held = (n.get("allocated") or 0) + (n.get("free") or 0)
    return start if limit and start and limit > 1.25 * start and held <= 1.05 * start else limit


# one request this many times the card is a size computed wrong (a wrong-arch build, a driver bug: 21x and 30x in the
# corpus), not a tensor. Real ones reach further than 8x: the full attention matrix where no fused kernel runs (video
# models on ROCm without flash or memory-efficient SDPA, a broken xformers) was 9x and 13x the card
ABSURD_REQUEST = 16
# (round 77) the most memory one accelerator has (B300 and MI355X: 288 GB of HBM3e). A PyTorch message cut after its request
# names no card; a request ABSURD_REQUEST times this is past any card's reach (EmbodiedScan#52: MinkowskiEngine's sparse
# multiply sized a buffer from an int nnz that overflowed, "Tried to allocate 1048475.67 GiB"; casting it to size_t fixed it)
LARGEST_CARD = 288 * GiB
# a card of at most this much is an integrated GPU's carve-out (APU) or a card too small for any current model (x.tiny;
# (tri78) rules_weights' figureless row, from a card's total that nvidia-smi's table or deviceQuery printed)
TINY_CARD = 2 * GiB
# (rev65b) three figures printed to 0.01 GiB (free, total, allocated: up to 5.12 MiB off each) and a margin: free_worked_out
XPU_ROUNDING = 16 * MiB


def derived_free_counts(n, total, kind=None):
    """(tri81) Whether the message's free figure may stand as room for the refusal reading (impossible): the message stated
    it, or it follows from the reserved one (total - reserved, the message giving no free figure) while PyTorch reserved
    under card_room.HELD_SHARE of the card. IPEX's XPU message states no free figure (Level Zero reports none; IPEX's own
    mem_get_info is documented as an overestimate), and total - reserved counts as free all the memory outside PyTorch's
    allocator: the runtime's, its native kernels' and other programs'. While PyTorch holds little of the card even a large
    share outside it leaves the request plenty of room, so a refusal there is the platform's; where PyTorch reserved half the
    card or more, the rest may be that outside memory, and the worked-out figure says nothing of the driver's free memory.
    (rev65b) PyTorch's own XPU message states the same worked-out figure as free (free_worked_out): it is read as one."""
    if n.get("free") is not None and not free_worked_out(n, total, kind):
        return True
    return n.get("reserved") is not None and bool(total) and n["reserved"] < HELD_SHARE * total


def free_worked_out(n, total, kind) -> bool:
    """(rev65b) Whether the message's free figure is total - reserved, not the driver's: it gives none (IPEX's XPU form), or
    it is PyTorch's own XPU message (2.8+), whose free figure is that difference unless the device reports its free memory
    (pytorch c10/xpu/XPUCachingAllocator.cpp malloc(): device_free = device_total - reserved_bytes, replaced by the driver's
    figure only where raw_device.has(sycl::aspect::ext_intel_free_memory); Level Zero reports it only with
    ZES_ENABLE_SYSMAN=1). Its figures are printed to 0.01 GiB (format_size), so free, total and allocated each carry up to
    5 MiB of rounding: within XPU_ROUNDING of total - reserved the figure is read as worked out. A device that does report
    its free memory leaves out what its runtime and other programs hold too; only where they hold under XPU_ROUNDING is its
    figure read as worked out, and then the two differ by less than that margin."""
    if n.get("reserved") is None or not total:
        return False
    if n.get("free") is None:
        return True
    return kind == "torch.xpu" and abs(n["free"] - (total - n["reserved"])) <= XPU_ROUNDING


def impossible(req, total, free, allowed):
    """Numbers no real shortage produces (the driver or the platform refused, not the memory): why, or None."""
    if allowed or not total:
        return None
    if free > total * 1.01:
        return f"{b(free)} free on a {b(total)} card: the driver reports impossible numbers"
    if req > ABSURD_REQUEST * total:
        return f"a single {b(req)} request on a {b(total)} card: a size no workload asks for; a driver or build bug"
    if req and free >= 4 * req and free >= 2 * GiB:
        return f"the allocation of {b(req)} failed with {b(free)} free: the driver or platform refused it, not a lack of memory"
    return None


def impossible_unsized(req):
    """A request with no card figures beside it (a message cut after "Tried to allocate N") that no card could hold even at
    ABSURD_REQUEST times its size: a size computed wrong (an integer overflow, a negative size), or None."""
    if req > ABSURD_REQUEST * LARGEST_CARD:
        return (f"a single {b(req)} request: more than {ABSURD_REQUEST} times the largest GPU's memory ({b(LARGEST_CARD)}), a "
                "size computed wrong (an integer overflow in the library that sized it, a negative size), not a shortage")
    return None


def impossible_mps(allocated, other, allowed):
    """MPS's figures are the allocator's own count against its high watermark, so neither PyTorch's allocations nor
    "other allocations" can be many times that limit: one that is (67108914 GiB under a 30 GiB limit) is a count gone
    wrong (an underflow in the accounting), and the watermark check failed on it, not on the memory."""
    held = max(allocated, other)
    if allowed and held > ABSURD_REQUEST * allowed:
        which = "other allocations" if other >= allocated else "MPS allocated"
        return (f"{which} {b(held)} under a {b(allowed)} limit: a figure no machine holds; the allocator's count is wrong "
                "and its watermark check refused the request, not the memory (PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 "
                "turns that check off)")
    return None


def _attention(frames):
    """The innermost frame computes attention (its n^2 score matrix is the one tensor that legitimately gets that large)."""
    func = frames[-1][1].lower() if frames else ""
    return any(w in func for w in ("attention", "attn", "scaled_dot_product"))


def build(scan, inc, context, env) -> Case:
    x = Case()
    ev = inc.primary
    n = ev.get("numbers") or {}
    f = scan.facts
    ctx = context or {}
    x.kind, x.n, x.f, x.ctx, x.env, x.ev = ev["kind"], n, f, ctx, env, ev
    x.comfy = env["runtime"] == "comfyui"
    x.kinds = [e["kind"] for e in inc.events]
    x.device_kinds = {e.get("device_kind") for e in inc.events}   # the devices the failure's events name (None: none)
    # runtimes that raise their own explanation from PyTorch's OOM (`raise RuntimeError(...) from e`): PyTorch's message,
    # with the numbers, is the primary event; theirs names the stage (TensorRT-LLM's component, TGI's and vLLM's warm-up)
    x.explained = {e["kind"]: e for e in inc.events if e["kind"] in EXPLAINING}
    wu = x.explained.get("vllm.warmup")
    if wu:      # which warm-up run, with how many dummy requests
        x.warmup = "pooler" if "warming up pooler" in wu["text"] else "sampler"
        x.warmup_requests = wu["numbers"].get("dummy_requests_count")
    x.hint = 0.3 if x.kind in ("comfy.dynamic_vram", "comfy.aimdo_cuda") else 1.0      # Dynamic VRAM: the phase clues weigh less
    x.text = ev["text"]
    x.texts = inc.texts                           # every error line of the failure (the primary's first)
    if aimdo_true_oom(x):      # (fix66d) aimdo evicted weights and still found no room: a real shortage, the phase decides
        x.hint = 1.0
    x.frames_n = len(inc.frames)                  # 0: the message alone, no traceback
    x.frames = inc.frames
    x.trace_from = f.get("trace_from", {}).get(inc.index, [])    # (rev8 D9) where each chained traceback's frames begin
    x.trace_how = f.get("trace_how", {}).get(inc.index, [])      # (rev11 S1, rev12 B1) ("cause"/"during"/"", the one before closed on an OOM)
    # a training step: the backward pass (autograd) or an optimizer step is on the stack; else a source line or a log line
    # that shows a training run. training_seen says which, for the evidence (a script named train.py is not a backward frame)
    step = next((func for p, func in inc.frames if func in ("backward", "run_backward", "_engine_run_backward")
                 or p.replace("\\", "/").endswith("autograd/__init__.py") or func == "step" and "optim" in p), None)
    # the source lines under the frames, innermost first: a training step, or the part being loaded or run
    src = [(C.source_category(line), line) for line in reversed(inc.sources)]
    src_step = next((line.strip()[:60] for c, line in src if c == "training"), None)
    x.training = bool(step or src_step or f.get("training_log"))
    x.training_step = bool(step or src_step)     # (fix67h F1) a step ran: not a log line alone (train.py can fail in .to())
    x.training_seen = _training_seen(step, src_step, f.get("training_log"), inc.frames)
    causes = [(c, line[:120]) for c, line in src if c and c != "training"]
    x.src_cause, x.src_line = causes[0] if causes else (None, None)
    part = next((cl for cl in causes[1:] if cl[0] in ("text-encoder", "vae-decode")), None)
    if x.src_cause == "weights-exceed-vram" and part:
        x.src_cause, x.src_line = part        # loading weights for the text encoder or the VAE: that part does not fit
    # the log shows CUDA-graph capture before the failure, or the traceback runs through a capture (torch.cuda.graphs,
    # torch.compile's cudagraph trees)
    x.graph_capture = f.get("graph_capture") or next(
        (f"{func}() in {p.replace(chr(92), '/').rsplit('/', 1)[-1]}" for p, func in inc.frames
         if ("cudagraph" in p.lower() or p.replace("\\", "/").endswith("cuda/graphs.py")) and func != "replay"), None)   # (fix67g) replay: captured
    # a validation or evaluation pass of the program's own code on the stack (not a library's frames)
    x.eval_frame = next((func for p, func in reversed(inc.frames) if C.eval_function(func)
                         and not any(w in p.replace("\\", "/") for w in ("site-packages/", "dist-packages/", "/lib/python"))), None)
    x.line, x.after = ev.get("_line", inc.first_line), inc.after    # where it failed; where the failure before it ended
    x.repeats = tuple(n for n in inc.lines if n > x.line)     # (round 114) the incident's later event lines (not always the same failure)
    x.until = next((i.first_line for i in scan.incidents if i.first_line > x.line), None)   # (rev6 B1) where the next failure begins
    x.epoch = inc.epoch                           # the training loop's epoch counter when it failed, if the log shows one
    x.partial_load = inc.partial_load           # ComfyUI loaded the model it ran only in part: its weights exceed what it may use
    x.pinned_host = f.get("pinned_host") or block_swap.pinned(f)   # pinned host buffers in play (block swap non-blocking, mmap release)
    _numbers(x, n)
    # the device buffers ggml had printed when this failure came (the model's, then the KV cache's; none for the graph yet)
    if inc.ggml_phase in ("model", "kv"):
        x.placed_model, x.placed_kv = (_device_bufs(scan.facts["ggml_bufs"], k) for k in ("model", "kv"))
    if x.branch == "ggml":
        _ggml(x, scan, inc, n)
    _snapshot(x, ctx, ev)
    _phase(x, scan, inc, ctx)
    if x.impossible and x.req > ABSURD_REQUEST * (x.total or 0) and (x.frame_cause == "vae-decode" or _attention(inc.frames)):
        x.impossible = None     # a real n^2 tensor: attention (a UNet's or the VAE's) at this resolution passes 16x a small card
    _history(x, scan, inc, ctx)
    return x


def _numbers(x, n):
    k = x.kind
    x.req = n.get("requested") or 0
    if k in TORCH and "total" in n:
        x.branch = "torch"
        x.total = n["total"]
        x.free = n["free"] if n.get("free") is not None else max(0, x.total - (n.get("reserved") or 0))
        # (trfix, review B2) whether the message gave the free figure (or the reserved one it follows from): without either the
        # card's total stands in above, a guess the evidence must not state as read
        x.free_said = n.get("free") is not None or n.get("reserved") is not None
        # (rev65b) the free figure is total - reserved (the message states none, or PyTorch's XPU message printed that
        # difference as its free figure): the evidence must not state it as the driver's free memory
        x.free_worked = free_worked_out(n, x.total, k)
        x.ru, x.reserved, x.allocated = n.get("reserved_unallocated"), n.get("reserved"), n.get("allocated")
        x.short = max(x.req - x.free, 0)
        # ((round 97) a message cut before its free figure and its reserved one, "(GPU 0; 7.80 GiB total capacity; 6.45": the
        # free figure above is the card's, a guess no refusal can be read from; the request against the card still is)
        # (tri81) a free figure worked out from the reserved one (the message states none, as IPEX's XPU form) is room for the
        # refusal reading only while PyTorch reserved under card_room.HELD_SHARE of the card: see derived_free_counts
        x.impossible = impossible(x.req, x.total, x.free if derived_free_counts(n, x.total, k) else 0, n.get("allowed"))
        # ((tri50) NVML's not-available figure, WDDM under WSL2: driver_predicates.NVML_NA, is no memory held by anyone)
        na = [k for k in ("other_processes", "this_process") if (n.get(k) or 0) >= NVML_NA]
        x.others = n.get("other_processes") if "other_processes" not in na else None
        # (NVML's figure for this process below what PyTorch itself has reserved is NVML not seeing it, as parse.py's
        # "this process has 0 bytes" reading; a lone "Process N has 0 bytes memory in use" in a container is the same:
        # the card less free less that figure is this process's own memory, not other programs')
        if x.others is None and n.get("this_process") is not None and not na and not (
                x.reserved is not None and n["this_process"] < x.reserved):
            x.others = max(0, x.total - x.free - n["this_process"])
        if x.reserved is not None:
            x.outside = x.total - x.free - x.reserved        # neither free nor PyTorch's: CUDA context + other programs
        x.cap = n.get("allowed") or x.total
        if x.allocated is not None:
            # what PyTorch could ever hold: the card less this process's CUDA context (what is outside PyTorch, up to the
            # estimator's CUDA_CONTEXT). The context was never PyTorch's to fill and weighs most on small cards; more than
            # it outside is other programs, read by the other-process rows
            x.reach = min(x.cap, x.total - min(max(x.outside or 0, 0), CUDA_CONTEXT))
    elif k in TORCH:
        x.impossible = impossible_unsized(x.req)      # no card figures: only a size past every card is read
    elif k == "torch.cuda_async":
        x.branch = "async"
        # a message cut before "Free (according to CUDA)" leaves free and what is outside PyTorch unknown (None)
        x.total, x.free, x.allocated = async_card(n, x.f), n.get("free"), n.get("allocated") or 0
        if x.total != n.get("device_limit"):
            x.bogus_limit = n.get("device_limit")
        if x.total:
            lim = n.get("limit")
            x.impossible = impossible(x.req, x.total, x.free or 0, lim if (lim or 0) < x.total else None)
            x.others = x.total - x.free - x.allocated if x.free is not None else None
        x.cap = x.total
    elif k == "torch.directml":
        x.branch = "dml"         # torch-directml: the size of one tensor, nothing about the card
    elif k == "torch.mps":
        x.branch = "mps"
        x.allocated, x.other_alloc, x.max_allowed = n.get("allocated") or 0, n.get("other_allocations") or 0, n.get("max_allowed")
        x.cap = x.max_allowed or (x.allocated + x.other_alloc + x.req) or 1
        x.impossible = impossible_mps(x.allocated, x.other_alloc, x.max_allowed)
    elif (k.startswith("ggml") or k in ("ollama.runner", "ollama.insufficient")) and x.env["runtime"] not in NOT_GGML:
        x.branch = "ggml"
    elif k in SIMPLE:
        x.branch = k
    if k == "libplacebo.alloc":
        x.total_heap = n.get("total")      # the device-local heap it listed (not a PyTorch-style card total: no shares)
    if x.branch == "torch" and x.total <= TINY_CARD:
        x.tiny = True            # an integrated GPU's carve-out (APU), or a card too small for any current model
    if x.total:                          # torch and cudaMallocAsync: shares of the card
        x.req_share = x.req / x.total
        if x.ru is not None:
            x.ru_share = x.ru / x.total
        if x.others is not None:
            x.others_share = x.others / x.total
    elif x.cap:                          # MPS: shares of its limit
        x.req_share = x.req / x.cap


def _device_bufs(bufs, kind) -> int:
    """What ggml's buffer lines of one kind ("model", "kv") put on devices: not CPU, CPU_Mapped or a *_Host buffer."""
    return sum(v for k, v in bufs.items() if k.startswith(kind + ":") and "CPU" not in k and "Host" not in k)


def _ggml(x, scan, inc, n):
    """Where llama.cpp's load order stopped: model buffers, then KV buffers, then compute buffers."""
    kinds, f = x.kinds, scan.facts
    texts = " | ".join(inc.texts + inc.inner)
    # a Vulkan queue submission refused for memory is not an allocation: the buffers it uses exist, the driver could not make
    # them resident (vkQueueSubmit's VK_ERROR_OUT_OF_DEVICE_MEMORY). Read before the load phase (a log that printed its
    # buffers still failed no allocation), and only where no device allocation failed in the same incident
    no_alloc = not x.req and not any(w in texts for w in ("allocation of size", "allocateMemory", "failed to allocate", "unable to allocate"))
    submit = ("Queue::submit" in texts or "vkQueueSubmit" in texts) and no_alloc
    # a Vulkan pipeline the driver could not create (vk::Device::createComputePipeline, vkCreateComputePipelines): it compiles
    # a shader, no buffer of the program's; same condition
    pipeline = any(w in texts for w in ("createComputePipeline", "CreateComputePipelines")) and no_alloc
    if "ggml.kv_cache" in kinds or "kv cache" in texts.lower():
        x.ggml_stage = "kv-cache-failed"
    elif submit and any(k in kinds for k in ("ggml.malloc", "ggml.vulkan", "ggml.buffer")) \
            and any("error loading model: " + w in texts for w in ("vk::Queue::submit", "vkQueueSubmit")):
        # the load's own error is the refused submission ("error loading model: vk::Queue::submit: ErrorOutOfDeviceMemory"):
        # the weights' buffers were allocated and their upload could not be made resident, no allocation failed
        x.ggml_stage = "submit"
        x.submit_phase = "model"
    elif "ggml.model_load" in kinds or "error loading model" in texts:
        x.ggml_stage = "model-load-failed"
    elif "ggml.compute" in kinds or "gallocr_reserve" in texts:
        x.ggml_stage = "compute-failed"
    elif pipeline and "ggml.vulkan" in kinds:
        x.ggml_stage = "pipeline"
    elif submit and any(k in kinds for k in ("ggml.malloc", "ggml.vulkan", "ggml.buffer")):
        x.ggml_stage = "submit"
        x.submit_phase = inc.ggml_phase        # None (no buffer line read), "model" (uploading weights), "kv"/"compute"
    elif inc.ggml_phase == "model":
        x.ggml_stage = "after-model-buffers"
    elif inc.ggml_phase in ("kv", "compute"):
        x.ggml_stage = "after-kv-buffers"
    elif any(k in kinds for k in ("ggml.malloc", "ggml.vulkan", "ggml.buffer")):
        x.ggml_stage = "device-alloc"
    elif "ollama.insufficient" in kinds:
        x.ggml_stage = "ollama-estimate"
    x.n_ctx = f["ggml_n_ctx"]
    x.kv_bytes = sum(v for k, v in f["ggml_bufs"].items() if k.startswith("kv:"))
    x.model_bytes = sum(v for k, v in f["ggml_bufs"].items() if k.startswith("model:"))
    x.n_ctx_note = f" (n_ctx {f['ggml_n_ctx']})" if f["ggml_n_ctx"] else ""
    x.ub = f["ggml_args"].get("ub")
    # the buffer refused: alloc_tensor_range's line, else llama_model_load's naming a host buffer (CPU, SYCL_Host, ...)
    buf = next((e for e in inc.events if e["kind"] == "ggml.buffer"), None) or \
        next((e for e in inc.events if e["kind"] == "ggml.model_load" and e.get("host")), {})
    bufname = buf.get("text", "")
    host = bufname if buf.get("host") or any(w in bufname for w in (" CPU buffer", "CPU_Mapped")) else \
        next((t for t in inc.texts + inc.inner if "cpu_buffer_type_alloc_buffer" in t or "ggml_aligned_malloc" in t), "")
    x.host_buffer = host[:160] if host and x.ggml_stage != "compute-failed" else None


def snapshot_device(ctx: dict, ev: dict):
    """The host's probe sample of the failing device (the OOM panel passes it), or None."""
    try:
        devs = (ctx.get("snapshot") or {}).get("devices") or []
    except AttributeError:
        return None
    idx, kind = ev.get("device_index"), ev.get("device_kind")
    for d in devs:
        if isinstance(d, dict) and (idx is None or d.get("index") == idx) and _same_kind(kind, d.get("backend")):
            return d
    return None


_GPU = ("cuda", "rocm")  # PyTorch names ROCm devices "cuda" too


def _same_kind(event_kind, backend) -> bool:
    """A snapshot of host RAM says nothing about a GPU's other processes, and one GPU backend nothing of another."""
    if not event_kind or not backend:
        return backend != "cpu" or event_kind in (None, "cpu")
    return event_kind == backend or (event_kind in _GPU and backend in _GPU)


def _snapshot(x, ctx, ev):
    dev = snapshot_device(ctx, ev)
    if dev and dev.get("other_processes") and dev.get("total"):
        x.snap_others, x.snap_total = dev["other_processes"], dev["total"]
        # what the figures are of, and which library read them: host RAM (psutil or /proc) on a CPU device
        x.snap_of = {"cpu": "of host RAM", "rocm": "card (AMD SMI)"}.get(dev.get("backend"), "card (NVML)")


def _phase(x, scan, inc, ctx):
    x.node = ctx.get("node_type") or inc.node_type
    x.phase = inc.phase            # (fix67b) ComfyUI's last "Requested to load" / progress state (te_load.py)
    x.node_cause = C.node_category(x.node)
    # traceback frames, innermost first: what the failing code was doing
    cats = []
    for path, func in reversed(inc.frames):
        c = C.frame_category(path, func)
        if c and c not in cats:
            cats.append(c)
            if len(cats) == 1:
                x.where = f"{func}() in {'/'.join(path.replace(chr(92), '/').split('/')[-3:])}"
    inner = cats[0] if cats else None
    if inner == "activations" and cats[1:2] and cats[1] in ("vae-decode", "text-encoder"):
        inner = cats[1]       # attention (or another working tensor) inside the VAE or the text encoder: that part's own
    if inner == "weights-exceed-vram" and any(c in ("text-encoder", "vae-decode") for c in cats[1:]):
        # loading the text encoder or the VAE: that component is what does not fit
        inner = next(c for c in cats[1:] if c in ("text-encoder", "vae-decode"))
        x.frame_loading = True
        x.part = inner.replace("-decode", "")
    x.frame_cause = inner
    for path, func in inc.frames:
        outer = C.nodes_py_category(path, func)
        if outer and outer not in cats:
            # a node's FUNCTION names what it does
            x.entry_cause = outer
            x.entry = f"{func}() in {path.replace(chr(92), '/').rsplit('/', 1)[-1]}"
            break
    tiled = next((e for e in inc.events if e["kind"] == "comfy.vae_tiled_fallback"), None)
    x.tiled_text = tiled["text"][:140] if tiled else None
    # ComfyUI's own log: the last "Requested to load X" and whether sampling had started since
    no_node = not x.node_cause
    if inc.phase and inc.phase[0] == "decode" and no_node and inner in (None, "activations"):
        x.log_phase = "decode"
    elif (x.comfy or x.branch == "dml" or scan.facts.get("forge") or scan.facts.get("moved_to_device")) and inc.phase and no_node and inner in (None, "weights-exceed-vram", "activations"):
        state, model = inc.phase
        mc = C.model_category(model) if model else None
        x.model = model
        if state == "load" and mc in ("text-encoder", "vae-decode"):
            x.log_phase, x.loading_cause, x.part_loading = "loading-part", mc, mc.replace("-decode", "")
        elif state == "load" and model:
            x.log_phase = "loading"
        elif state == "progress":
            x.log_phase, x.sampling = "sampling", f"sampling {model or ''} had started".replace("  ", " ")
        elif state == "done" and mc in (None, "activations"):
            x.log_phase = "sampled"
    tes = [m for m in ctx.get("loaded_models") or [] if m.get("is_text_encoder") and (m.get("bytes") or 0) > 0]
    if tes and x.node_cause in (None, "activations") and inner != "text-encoder":
        x.te_resident = sum(m.get("bytes") or 0 for m in tes)
        x.te_names = ", ".join(m.get("name", "?") for m in tes)[:120]


def _history(x, scan, inc, ctx):
    """Earlier failures and successful runs of this log, and earlier OOMs of the same host process."""
    x.recoverable = inc.recoverable_only
    x.successes = inc.successes_before
    model = inc.phase[1] if inc.phase else None
    x.ran_before = model if model and model in scan.ok_models else None
    prior = [i for i in scan.incidents if i.index < inc.index and not i.recoverable_only]
    x.prior_ooms = len(prior)
    x.prior_kinds = {i.primary.get("kind") for i in prior}      # a runtime's own line before PyTorch's (vLLM's cumem allocator)
    x.oom_number = len(prior) + 1
    a = (inc.primary.get("numbers") or {}).get("allocated")
    if prior:
        pa = (prior[-1].primary.get("numbers") or {}).get("allocated")
        if a and pa and a > pa * 1.05 and a - pa >= 256 * MiB:
            x.grew_from, x.grew_to = pa, a
    # context "previous_ooms", oldest first: only growth counts, the same failure repeated on retry is not a leak
    kind = inc.primary.get("kind")
    session = [p for p in ctx.get("previous_ooms") or () if isinstance(p, dict) and p.get("kind") in (None, kind)]
    if session:
        pa = (session[-1].get("numbers") or {}).get("allocated")
        if a and pa and a > pa * 1.05 and a - pa >= 256 * MiB:
            x.session_grew_from, x.session_grew_to = pa, a

