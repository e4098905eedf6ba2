"""The named predicates and thresholds the rules table (rules.py) reads: tests over a failure's `Case` that
several rows share, or whose why needs more than a comment beside one row. No weights here."""
import re

from ..llm.cards import unified_by_total
from ..units import GiB, MiB, fmt_bytes
from .facts import chain_place

SLIVER = 0.04                  # cached-but-unallocated slack under this share of the card is a sliver, not a layout problem
ABSURD_HOST = 1024 * GiB       # one system-RAM request this large is a size computed wrong, not a shortage


# one parameter tensor as a share of the card: the largest (an embedding or lm_head, vocab x hidden; 2.4 GiB of a 72B model's
# on 80 GB, 100-130 MiB of a Stable Diffusion UNet's on 4 GB) stay under it. A request this small with the card held is a
# weight being placed, not an activation of this input
PARAM_SHARE = 0.05


def torch(x):
    return x.branch == "torch"


EAGER_EXTRA = GiB       # what an eagerly loaded CUDA context adds to a lazy one


# what a display and the desktop beside it (compositor, browser, a second app's context) hold on a card: well under this. Past
# it, memory another process holds is a program's working set, whatever the card's size
DESKTOP = 4 * GiB


def unified_pool(x):
    """The unified-memory device whose pool the failure's total is (memory/llm/cards.UNIFIED, the project's card table),
    or None (a discrete card's total is its own VRAM)."""
    if not x.total or x.kind != "torch.cuda" or x.env["backend"] == "rocm":
        return None
    return unified_by_total(x.total)


def unified_host_held(x):
    """On a unified pool, a quarter of it or more held outside this process, covering the shortfall. On such a device
    the host's own memory (page cache, a host-side copy of the weights) is drawn from the pool the GPU allocates from,
    and NVML names no process there, so PyTorch's message cannot tell it from a second program (a server or container
    beside this one): the row that reads this (rules_host.py) stays within rank.PAIR_RATIO of other-process's, and
    both are shown. A "Process N has" entry, where some tool does print one, is that program's."""
    return (torch(x) and unified_pool(x) is not None and x.n.get("other_processes") is None and x.others is not None
            and x.others >= 0.25 * x.total and x.others >= x.short)


def others_hold(x):
    """Other processes' share of the card (their own "Process N has" figures, or the card less free less this process's
    NVML figure, which holds all of this process: context, cache, pools) passes a desktop's and covers the shortfall. A
    tenth of a small card (2.4 GiB of 24) is still a display's; on a 140 GiB card a tenth is 14 GiB, far past any desktop."""
    return (torch(x) and x.others is not None and x.others >= max(1.5 * GiB, min(0.1 * x.total, DESKTOP))
            and x.others >= x.short)


def outside_others(x):
    """Of what is neither free nor PyTorch's, the part other programs may hold. PyTorch <= 1.12 (its message is the
    "<=2.0" form) loaded every kernel when the context was created: over 1 GiB of its own, with cuDNN's ~0.75 GiB on top
    (pytorch#12873); 1.13 set CUDA_MODULE_LOADING=LAZY (pytorch#86509: 667 -> 287 MB for one tensor). An old message's
    context is a GiB larger, and that GiB is this process's own."""
    old = x.ev.get("form") == "<=2.0" and x.env["backend"] != "rocm"
    return x.outside - (EAGER_EXTRA if old else 0)


def torch_full(x):
    """ComfyUI, PyTorch holds nearly the whole card and a small request fails: what it holds is mostly weights."""
    return (torch(x) and x.req < 0.5 * x.total and x.comfy and x.allocated is not None
            and x.allocated >= 0.85 * x.reach and x.req <= PARAM_SHARE * x.total)


def slack_fits(x):
    """The cached-but-unallocated slack alone would have served the request, had it been in one piece."""
    return torch(x) and not x.impossible and not x.tiny and x.ru is not None and x.req and x.ru >= x.req and x.ru >= 64 * MiB


SLACK_SHARE = 0.25     # PyTorch <= 2.0: cached-but-unallocated slack that decides fragmentation, a quarter of the card


def big_slack(x):
    """The slack is the card's problem, not the workload's. PyTorch <= 2.0 (its message "N already allocated; M free;
    R reserved in total") predates expandable_segments (2.1), and its cache keeps split blocks per segment: slack under a
    quarter of the card is live tensors' leftovers, and the reports quoting it fixed the batch, resolution or length.
    Newer messages and ROCm keep the SLIVER floor."""
    old = x.ev.get("form") == "<=2.0" and x.env["backend"] != "rocm"
    return x.ru >= (SLACK_SHARE if old else SLIVER) * x.total


def torch_cut(x):
    """PyTorch's caching-allocator message cut after its request ("CUDA out of memory. Tried to allocate 28.00 MiB")."""
    return x.kind in ("torch.cuda", "torch.hip") and x.ev.get("form") == "partial" and bool(x.req)


def async_numbers(x):
    return x.branch == "async" and x.total and not x.impossible


def async_full(x):
    return async_numbers(x) and x.free is not None and x.req < 0.5 * x.total and x.comfy and x.allocated >= 0.85 * x.total and x.req <= 0.05 * x.total


# PyTorch holding more than this share of the card is past rounding: the memory is not all on the card
OVER_CARD = 1.02


def script_full(x):
    """A plain PyTorch script, the message alone (no traceback): PyTorch holds what it can reach of the card (not more:
    sysmem fallback is apart) and a parameter-sized request fails. Copying a model in moves one parameter at a time; a training
    step's tensors would show their traceback or the training loop around them. Not where the driver spilled (allocated
    within the card, reserved past it): that is sysmem_fallback's row, and the two would say the same weights twice."""
    return (torch(x) and x.env["runtime"] == "pytorch" and not x.frames_n and not x.training and x.allocated is not None
            and 0.85 * x.reach <= x.allocated <= OVER_CARD * x.total and x.req <= PARAM_SHARE * x.total and not sysmem_fallback(x))


# one layer's matrix of a model that about fills the card: 24 layers or more of ~7 matrices each put under 1 % of the weights in
# any one (the embedding apart); a request under this share of the card is one of those, or the last of many small ones
LAYER_SHARE = 0.02


def cut_full(x):
    """script_full for PyTorch's message quoted up to "of which N is free" (the per-process tail, with what PyTorch holds,
    dropped): a plain script, the message alone, the card full (under a SLIVER free) and a layer-sized request fails. The
    request did not fill the card; what was placed before it did, and with no step, traceback or training shown that is
    most often the model (a batch's tensors stay the runner-up, the bare message row). Not under ComfyUI's own lines ("Requested
    to load", its exception banner): that is ComfyUI, whose loader places what fits, not a script. Not after a progress bar
    with completed steps (window facts steps_done): the loop ran, what it holds per step is the knob."""
    return (torch(x) and x.env["runtime"] == "pytorch" and not x.frames_n and not x.training and bool(x.total)
            and not x.f.get("comfy") and not x.f.get("ui_loader") and not x.f.get("steps_done")
            and not x.impossible and not x.tiny and x.allocated is None and x.reserved is None and x.others is None
            and x.free is not None and x.free <= SLIVER * x.total and x.req <= LAYER_SHARE * x.total)


def sysmem_fallback(x):
    """NVIDIA's Windows driver spills CUDA allocations into shared system memory when the card is full (the control panel's
    "CUDA - Sysmem Fallback Policy"), so PyTorch can report more allocated (or reserved) than the card's total capacity and
    fail only later, on a parameter-sized request. CUDA, real numbers (not an impossible free value), and no Linux or macOS
    in the log: those drivers have no such fallback. The bare message cannot tell a model too large from a training batch
    too large (both are in the corpus with the same shape), so the row that reads it names the weights beside the batch."""
    held = max(x.allocated or 0, x.reserved or 0) if x.branch == "torch" else 0
    return (torch(x) and not x.impossible and not x.tiny and bool(x.total) and x.env["backend"] == "cuda"
            and x.env.get("os") not in ("linux", "darwin") and held > OVER_CARD * x.total and x.req <= PARAM_SHARE * x.total)


CAP_SHARE = 0.75       # a per-process memory fraction at or under this share of the card withholds a quarter of it or more
# PyTorch prints "allowed" and the total to two decimals: 0.75 of a 23.65 GiB card prints "17.74 GiB allowed", over
# 0.75 x 23.65 = 17.7375. Up to 0.005 GiB on each number: a fraction of exactly CAP_SHARE compares within this (review16a F3)
PRINTED_ROUNDING = 0.01 * GiB


def fraction_cap(x):
    """PyTorch prints "N allowed" only under a per-process memory fraction (torch.cuda.set_per_process_memory_fraction; a
    server's cuda_memory_fraction). The cap withholds a quarter of the card or more and the card still has that much free
    beside the request: the cap refused, not the card (the allocator compares the cap with its reserved memory plus the
    segment it rounds the request up to, so reserved + request may sit under it). At 0.9 of a full card the cap only
    decided which request failed: a model or a batch that fills the card. Where the cache's own unallocated slack would
    have served the request (the fragmentation rows' test), the cap is not what to change: expandable segments fit it
    under the cap (review16a F2). The free bound binds: the allocator refuses once reserved + the request passes the cap,
    and the process's CUDA context sits outside it, so a quarter free beside the request means a cap of about 0.72 or
    under. The cap bound (as printed: PRINTED_ROUNDING) keeps out the logs whose free figure does not match their reserved one."""
    cap = x.n.get("allowed")
    return (torch(x) and bool(cap) and bool(x.total) and cap <= CAP_SHARE * x.total + PRINTED_ROUNDING and x.free is not None
            and x.free >= x.req + (1 - CAP_SHARE) * x.total and not (slack_fits(x) and big_slack(x)))


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


def kv_sized(x):
    """A device buffer that ggml-alloc's alloc_tensor_range failed to place, an exact multiple of 128 MiB, while loading
    (not the model's own load nor the graph's compute buffer), not host memory: the KV cache's shape. llama.cpp allocates the
    cache as layers x cells x heads x head size x bytes for K and V, with the cells (n_ctx, times the parallel slots) a power
    of two: 30 x 32768 x 8 x 128 x 2 x 2 bytes = 3840 MiB; a weights buffer sums quantized tensors and norm vectors (KiBs),
    which are no such multiple."""
    return bool(x.branch == "ggml" and x.ggml_stage in ("device-alloc", "after-model-buffers") and not x.host_buffer
                and x.req and x.req >= 2 * KV_GRAIN and x.req % KV_GRAIN == 0 and any("alloc_tensor_range" in t for t in x.texts))


def vllm_loading_cut(x):
    """vllm_loading for PyTorch's message quoted up to "of which N is free" (what PyTorch holds dropped), as cut_full is for
    a plain script: vLLM, the message alone, the card full (under a SLIVER free), a layer-sized request, and no line shows
    the weights loaded, the KV cache sized, graphs captured or a request served: the weights were still being placed."""
    return (torch(x) and x.env["runtime"] == "vllm" and not x.frames_n and bool(x.total) and not x.impossible and not x.tiny
            and x.allocated is None and x.reserved is None and x.others is None and x.free is not None
            and x.free <= SLIVER * x.total and x.req <= LAYER_SHARE * x.total and not x.graph_capture
            and not x.f["vllm_model_mem"] and not x.f["vllm_kv_mem"] and not x.f["vllm_serving"])


def vllm_loading(x):
    """vLLM, the message alone, PyTorch holds the card and no line shows the weights loaded, the KV cache sized or graphs
    captured, and no request served: it failed loading the weights (its start order: weights, profile, KV cache, graph capture)."""
    return (torch(x) and x.env["runtime"] == "vllm" and not x.frames_n and x.allocated is not None
            and x.allocated >= 0.85 * x.reach and x.req <= PARAM_SHARE * x.total and not x.graph_capture
            and not x.f["vllm_model_mem"] and not x.f["vllm_kv_mem"] and not x.f["vllm_serving"])


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


def mps_full(x):
    """MPS: PyTorch holds most of the limit and a small request fails. Not in training, where what PyTorch holds is
    mostly the step's activations, gradients and optimizer state. The request read (a message cut before it says nothing
    of its size)."""
    return x.branch == "mps" and not x.training and "requested" in x.n and x.req < 0.3 * x.cap and x.allocated >= 0.7 * x.cap and (x.comfy or x.allocated >= 0.85 * x.cap)


# runtimes with their own memory pool, whose message gives the one buffer that failed (the row's evidence names them)
OWN_POOLS = {"onnx.alloc": "ONNX Runtime", "xla.oom": "XLA (JAX/TensorFlow)", "paddle.oom": "PaddlePaddle", "cupy.oom": "CuPy's memory pool",
             "rmm.oom": "RAPIDS (RMM)", "wgpu.oom": "wgpu (WebGPU)", "catboost.pool": "CatBoost's GPU memory pool",
             "faiss.alloc": "Faiss (GPU)",
             "mlx.malloc": "MLX (all its Metal buffers together)"}
HOST_KINDS = ("cpp.bad_alloc", "torch.cpu", "python.memory_error", "os.paging_file", "os.oom_killer", "ollama.system_memory", "ggml.host", "comfy.pinned_host",
              "os.enomem", "os.system_memory", "comfy.vhs_ram", "jvm.heap", "os.shm")
PARAM_RE = re.compile(r"\b[\w.]{1,200}\.(?:weight|bias)\b")      # a model parameter's name: "diffusion_model.out.0.weight"
VA_RESERVE = ("VBAR allocation failed", "Virtual Address space")


# TensorFlow names the tensor it could not allocate ("OOM when allocating tensor with shape[3,3,2560,1280] and type float");
# its convolution kernels are laid out HWIO (kernel height, width, in and out channels), its activations NHWC. A first pair
# of equal small sizes (a kernel of 1-7) over two channel counts is a kernel: a weight being created, not a batch
TF_SHAPE = re.compile(r"OOM when allocating tensor with shape\[(\d{1,6}),(\d{1,6}),(\d{1,9}),(\d{1,9})\]")


def tf_kernel(x):
    """The 4-D tensor TensorFlow failed to allocate is a convolution kernel (HWIO), or None."""
    for t in x.texts or ():
        m = TF_SHAPE.search(t)
        if m:
            h, w, cin, cout = map(int, m.groups())
            return m.group(0)[len("OOM when allocating tensor with "):] if h == w <= 7 and min(cin, cout) >= 16 else None
    return None


# CUDA calls that create this process's context or a stream: they fail with "out of memory" before the process holds any
# memory of its own, so what fills the card is another process's (cudaSetDevice / cuInit / the primary context, a stream)
CONTEXT_CALL = re.compile(r"\b(?:cudaStreamCreate|cuStreamCreate|cuCtxCreate)\w{0,16}\(|\b(?:cuDevicePrimaryCtxRetain|cudaSetDevice|cuInit)\b")


# a failed memory query belongs to the failure it leads (since the failure before it ended) or follows within these lines
QUERY_FOLLOWS = 5


def mem_query(x):
    """The memory query (lines.py mem_query_oom) that failed for lack of memory beside this failure, by its function, or None."""
    return next((fn for n, fn in sorted(x.f["mem_query_oom"].items()) if x.after < n <= x.line + QUERY_FOLLOWS), None)


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


def context_call(x):
    """A driver-level error names a call that creates the context or a stream (ONNX Runtime's expr=..., a CUDA check), or
    a memory query beside it failed for lack of memory (it needs the context: mem_query)."""
    return x.kind == "cuda.driver" and (any(CONTEXT_CALL.search(t) for t in x.texts or ()) or bool(mem_query(x)))


def bare_driver(x):
    """PyTorch's own CUDA check raised cudaErrorMemoryAllocation: not the caching allocator (which reports VRAM with its
    numbers), so a CUDA call outside it failed; in a PyTorch process that is mostly pinned (page-locked) host memory
    (DataLoader pin_memory, non_blocking copies, WSL's pinned limit) or context creation."""
    return (x.kind == "cuda.driver" and x.ev.get("form") == "torch_check" and not x.pinned_host and not x.graph_capture
            and not context_call(x))


# PyTorch's message (2.1+) names the processes NVML lists on the card ("Including non-PyTorch memory, this process has X",
# "Process N has X") between the free figure and "Of the allocated memory", but only in builds with
# PYTORCH_C10_DRIVER_API_SUPPORTED (c10/cuda/driver_api.cpp dlopens libcuda.so.1 and NVML): Linux. PyTorch for Windows never
# asks NVML, so its message lists no process; a Linux process can list none too (ROCm; NVML missing, or answering with no
# process, as in some containers), so no process listed is no evidence of Windows: the log must show Windows itself (env's os, from
# lines.py's markers: a drive-letter path, ComfyUI_windows_portable, an .exe, WinError) or WSL (env's wsl: "WSL", a
# "microsoft-standard" kernel), whose CUDA runs over the Windows host's WDDM driver (GPU paravirtualisation; its os reads
# linux by its paths). Under Windows' driver model (WDDM)
# the driver pages device memory and backs each allocation with the system's commit (RAM plus page file), so an allocation
# can be refused with VRAM free when RAM and the page file are used up (offloaded weights, a small RAM, a page file turned
# off). The message must be whole from "CUDA out of memory" (ROCm's PyTorch says "HIP out of memory") and list no process
# (on WSL too: PyTorch there is a Linux build, and a message that lists a process keeps the driver's refusal)
WDDM_HEAD = "CUDA out of memory. Tried to allocate"
WDDM_NO_PROCS = "is free. Of the allocated memory"


def wddm_refused(x):
    """An NVIDIA card on a log that shows Windows or WSL (both under WDDM; PyTorch's whole CUDA message, no process listed)
    refused a request its free figure covers several times over: the system commit (RAM plus page file), not VRAM."""
    return (x.kind == "torch.cuda" and x.env["backend"] == "cuda" and (x.env["os"] == "windows" or x.env["wsl"])
            and not x.n.get("allowed")
            and x.total and x.free <= 1.01 * x.total and x.req and x.free >= 4 * x.req and x.free >= 2 * GiB
            and WDDM_HEAD in x.text and WDDM_NO_PROCS in x.text)


# stable-diffusion.cpp's get_desc() of its parts: VAEs ("vae", "wan_vae", "HunyuanVideoVAE", "tae"), text encoders ("clip",
# "t5", "umt5", and the LLM conditioners named by their architecture: "qwen2.5vl", "qwen3", "mistral", "llama", "gemma3")
SDCPP_TE = ("clip", "t5", "umt5", "llm", "qwen2", "qwen3", "mistral", "llama", "gemma", "cond_stage")


def sdcpp_part(x):
    """The part whose compute buffer stable-diffusion.cpp sized last (its graph ran when it failed), as a cause, else None."""
    p = x.f.get("sdcpp_part") or ""
    if "vae" in p or p.startswith("tae"):
        return "vae-decode"
    return "text-encoder" if p.startswith(SDCPP_TE) else None


def torch29_conv3d(x):
    """PyTorch 2.9 on NVIDIA (its wheels ship cuDNN 9.10+) without ComfyUI's conv3d workaround line in the log."""
    v = x.f.get("torch_version") or ""
    return v.startswith("2.9.") and x.env["backend"] == "cuda" and not x.f.get("conv3d_workaround")


COMPILER_FLOOD = 50     # graph breaks + rogues a run reported: ComfyUI's own tests show 0-3, a node allocating inside the
                        # compiled forward 100+ (ComfyUI#16144: 156 and 199 before an OOM; 12 and 9 once fixed)


def compiler_flood(f) -> bool:
    """The Comfy Compiler reported a flood of graph breaks or rogue allocations: something allocates outside its plan."""
    return bool(f.get("compiler")) and sum(f["compiler"]) >= COMPILER_FLOOD


def compiler_note(x) -> str:
    c = x.f.get("compiler")
    return f" (the last run reported {c[0]} graph breaks and {c[1]} rogue allocations)" if c else ""


def ct2_load(x):
    """CTranslate2 puts the whole model on the device when the model object is built (WhisperModel(...), Translator(...))."""
    return x.env["runtime"] == "ctranslate2" and (not x.frames_n or any(f in ("__init__", "init") for _, f in x.frames))


def host(x):
    """A failure of system RAM: what the code was doing names the phase, not a GPU cause."""
    return x.kind in HOST_KINDS


def shortage_shown(x):
    """The failure's own numbers show a shortage: a request larger than the free figure the same message prints."""
    return bool(x.req and x.total and x.free is not None and x.free < x.req)


def gpu_fault(x):
    """The log reports the GPU's own hardware fault (lines.FACTS gpu_fault) beside a failure of the device's memory."""
    return bool(x.f["gpu_fault"]) and not host(x)


def stage(name):
    return lambda x: x.ggml_stage == name


def aimdo_reader_only(x):
    """comfy-aimdo's reader raised (hostbuf_file_reader_read failed) and that line leads the failure: a C-side line that said
    its copy ran out of memory ("device copy failed result=2") comes first and is the failure read (host-ram, round 30).
    error_patterns.AIMDO_READER says why the Python line alone is no shortage."""
    return x.kind == "comfy.pinned_host" and x.ev.get("form") == "reader"


def kind(*kinds):
    return lambda x: x.kind in kinds


def fresh(x):
    """History rows: a failure ComfyUI recovered from (tiled VAE retry) is no evidence of a leak."""
    return not x.recoverable


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


# the innermost frame releases memory: torch.cuda.empty_cache() returns PyTorch's cached blocks to the driver (cudaFree)
RELEASE_FRAMES = ("empty_cache",)


def release_frame(x):
    """A driver-level CUDA out-of-memory raised where PyTorch frees memory: no request of its own failed there."""
    return x.kind == "cuda.driver" and bool(x.frames) and x.frames[-1][1] in RELEASE_FRAMES


# the innermost frame waits for a stream, an event or the device (torch.cuda Stream/Event.synchronize, torch.cuda.synchronize):
# a wait allocates nothing, so a CUDA error raised there is an earlier asynchronous call's, reported late
SYNC_FRAMES = ("synchronize",)


def async_named(x):
    """The log (or the host) names PyTorch's cudaMallocAsync backend: its message's kind, ComfyUI's "Device: ... :
    cudaMallocAsync" line, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, or the panel's own flag; not ComfyUI's default
    guessed where nothing says it."""
    return ("torch.cuda_async" in (x.kinds or ()) or x.f["allocator"] == "cudaMallocAsync"
            or "backend:cudaMallocAsync" in x.f["args"] or bool(x.ctx.get("cuda_malloc_async")))


def sync_frame(x):
    """A driver-level CUDA out-of-memory raised where PyTorch only waits for queued work: no request of its own failed there.
    Not under cudaMallocAsync: its allocations are stream-ordered (cudaMallocAsync is queued on the stream like a kernel), so a
    real shortage surfaces at the next synchronize, and the wait is where the request's failure shows."""
    return x.kind == "cuda.driver" and bool(x.frames) and x.frames[-1][1] in SYNC_FRAMES and not async_named(x)


# the stage a runtime's own error context names (lines.py stage_said) around cudarc's DriverError(CUDA_ERROR_OUT_OF_MEMORY...)
# (Rust servers on cudarc: candle, mistral.rs, text-embeddings-inference): the failure's own line ("cache alloc failed:
# DriverError(...)"), or a context of the same anyhow chain above it (facts.chain_place): "Error: <top>", a blank line,
# "Caused by:", then the causes one a line, numbered from 0 when two or more, so a context at line n is on the failure's
# chain only where the line distance is what the numbering says. PyTorch's "CUDA error: out of memory" is no such chain
STAGE_SAID = {"load": "weights-exceed-vram", "kv": "kv-cache", "act": "activations"}
CUDARC_OOM = "DriverError(CUDA_ERROR_OUT_OF_MEMORY"


def stage_said(x):
    """The stage ("load", "kv", "act") a cudarc driver error's own chain names, or None: the failure's line, else the
    nearest context above it on the same anyhow chain."""
    if x.kind != "cuda.driver" or CUDARC_OOM not in (x.text or ""):
        return None
    said = x.f["stage_said"]
    if x.line in said:
        return said[x.line][0]
    k = chain_place(x.text)
    k = None if k == "top" else k
    for n in sorted((n for n in said if x.after < n < x.line), reverse=True):
        stage, place = said[n]
        gap = x.line - n
        if (place == "top" and gap == (3 if k is None else k + 3)) or (k is not None and isinstance(place, int) and gap == k - place > 0):
            return stage
    return None


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
