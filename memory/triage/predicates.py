"""The named predicates and thresholds the rules table (rules.py) reads: tests over a failure's `Case` that
several rows share, or whose why needs more than a comment beside one row. No weights here. The LLM servers' own
are in server_predicates.py, the CUDA driver's and WDDM's in driver_predicates.py, those on the traceback's frames in
frame_predicates.py, and those on facts kept by line near the failure in nearby_predicates.py; all re-exported here."""
import re

from ..llm.cards import unified_by_total
from ..units import GiB, MiB
# moved out, re-exported under their old names (rules.py, rules_*.py, engine.py and the tests import them from here)
from .driver_predicates import (CONTEXT_CALL, QUERY_FOLLOWS, mem_query, context_call, bare_driver, WDDM_HEAD, WDDM_NO_PROCS, wddm_refused)  # noqa: F401
from .server_predicates import (KV_DOMINANT, ollama_kv_first, KV_GRAIN, KV_GRAINS, kv_grain, kv_sized, cumem_wake_up, sglang_pool_room, sleep_mode_budget, ggml_placed, ggml_placed_devices, ggml_room, TRT_WEIGHTS, TRT_KV, trt_component, trt_free, tgi, TGI_TINY_PREFILL, TGI_TINY_ROOM, tgi_tiny, tgi_figures, STAGE_SAID, CUDARC_OOM, stage_said, TRT_KV_STARVED, trt_kv_sizing, trt_kv_starved, PREFLIGHT_WEIGHTS_OVER, preflight_room, preflight_weights_over, startup_free_says, metal_kv_overhead_over_budget, metal_kv_profile_peak, metal_kv_weights, ds4_guard_fits, ds4_guard_weights_over)  # noqa: F401
from .frame_predicates import (RELEASE_FRAMES, RAPIDS_OP_PATHS, rapids_op_frame, POOL_WORKER_FRAMES, PREALLOCATING, pool_worker_prealloc, release_frame, SYNC_FRAMES, async_named, sync_frame)  # noqa: F401
from .nearby_predicates import (ggml_header_failed, TRT_SKIP_SPAN, trt_tactic_skip_near, batch_ran_before, STEP_MEM_PRINTS, step_mem_grew, KALDI_REPORT_WITHIN, kaldi_held_outside)  # noqa: F401


from .shares import DESKTOP, OVER_CARD, REQUEST_SHARE, SLIVER, desktop_share  # noqa: F401 (one definition with the readers: shares.py)
ABSURD_HOST = 1024 * GiB       # one system-RAM request this large is a size computed wrong, not a shortage

# one parameter tensor as a share of the card: the largest (an embedding or lm_head, vocab x hidden; 2.4 GiB of a 72B model's
# on 80 GB, 100-130 MiB of a Stable Diffusion UNet's on 4 GB) stay under it. A request this small with the card held is a
# weight being placed, not an activation of this input
PARAM_SHARE = 0.05


def big_request(x):
    """(rev6 S4) The failing request is REQUEST_SHARE of the card or more: the activations' rows and the tiny-card hand-over."""
    return x.req >= REQUEST_SHARE * x.total


def torch(x):
    return x.branch == "torch"


EAGER_EXTRA = GiB       # what an eagerly loaded CUDA context adds to a lazy one
GAP_SHARE = 0.8         # (trfix2) the share of the card tensors_gap must reach to read as another program



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
    NVML figure, which holds all of this process: context, cache, pools) passes a desktop's (shares.desktop_share) and
    covers the shortfall."""
    return torch(x) and x.others is not None and x.others >= desktop_share(x.total) and x.others >= x.short


def outside_others(x):
    """Of what is neither free nor PyTorch's, the part other programs may hold. PyTorch <= 1.12 (its message is the
    "<=2.0" form) loaded every kernel when the context was created: over 1 GiB of its own, with cuDNN's ~0.75 GiB on top
    (pytorch#12873); 1.13 set CUDA_MODULE_LOADING=LAZY (pytorch#86509: 667 -> 287 MB for one tensor). An old message's
    context is a GiB larger, and that GiB is this process's own."""
    old = x.ev.get("form") == "<=2.0" and x.env["backend"] != "rocm"
    return x.outside - (EAGER_EXTRA if old else 0)


def tensors_gap(x):
    """(round 98) Where PyTorch's message gives its allocated and free figures and neither its reserved figure nor a process
    list (the <= 2.0 bracket quoted without "reserved in total", a quote cut after "M free"): the card less free less PyTorch's
    tensors (less the GiB an eager <= 2.0 context adds, as outside_others), or None. That gap is this process's cache and
    context or other programs, and the message does not say which: PyTorch's own reserved-but-unallocated cache can pass half
    the card (whole corpus messages: batch-09 58 %, batch-232's nerf 55 %), so gap_others takes GAP_SHARE of the card."""
    if not (torch(x) and x.others is None and x.reserved is None and x.allocated is not None and x.n.get("free") is not None
            and not x.impossible and not x.tiny):
        return None
    old = x.ev.get("form") == "<=2.0" and x.env["backend"] != "rocm"
    return x.total - x.free - x.allocated - (EAGER_EXTRA if old else 0)


def gap_others(x):
    """(round 98; trfix2 0.5 -> GAP_SHARE) tensors_gap at GAP_SHARE of the card or more and covering the shortfall: read as
    another program's. GAP_SHARE rests on the corpus's ten points (rev1 B2): the three labelled other-process at 0.83-0.96
    (455, 462, 232's MI355X); 287 (0.78) and 496 (0.57), not other-process; five whole messages whose reserved figure, cut,
    would leave 0.51-0.75, all this process's own cache (batches 03, 09, 47, 134, 232's nerf)."""
    gap = tensors_gap(x)
    return gap is not None and gap >= GAP_SHARE * x.total and gap >= x.short


# (round 104) PyTorch's own reserved memory under this share of the card: what it placed so far is no model that fills it
PLACED_SMALL = 0.25


def placing_taken(x):
    """(round 104) A model being placed on the card (a loading frame or source line: .to(), .cuda(), from_pretrained) fails
    while PyTorch's own reserved memory is under PLACED_SMALL of the card and what is neither free nor PyTorch's (less a
    context, outside_others) passes half of it: the card was taken before the model came, not filled by it. The message
    with its reserved figure and no process list (the <= 2.0 bracket, a Windows or container 2.x message)."""
    return (torch(x) and x.others is None and x.outside is not None and x.reserved is not None and bool(x.total)
            and "weights-exceed-vram" in (x.frame_cause, x.src_cause) and x.reserved < PLACED_SMALL * x.total
            and outside_others(x) >= 0.5 * x.total and outside_others(x) >= x.short)


def own_pool(x):
    """PyTorch's private pools are a program's own, not CUDA graphs': the log names such an allocator (fact own_pool: a
    pluggable allocator, a MemPool, comfy-aimdo, vLLM's cumem pool), or the OOM panel's host says ComfyUI runs Dynamic
    VRAM (comfy-aimdo 0.1 hooks PyTorch through a MemPool and a pluggable allocator) with the Comfy Compiler off (its
    CUDA graphs would make a graph's pool as likely). Context keys dynamic_vram / comfy_compiler: nodes/host_models."""
    return x.f["own_pool"] or (x.ctx.get("dynamic_vram") is True and x.ctx.get("comfy_compiler") in ("off", "not available"))


def torch_full(x):
    """ComfyUI, PyTorch holds nearly the whole card and a small request fails: what it holds is mostly weights."""
    # (rev8 D5) a small request: x.req <= PARAM_SHARE * x.total (below) is the test; no literal half besides it
    return (torch(x) and x.comfy and x.allocated is not None
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
    return async_numbers(x) and x.free is not None and x.comfy and x.allocated >= 0.85 * x.total and x.req <= PARAM_SHARE * x.total


def script_full(x):
    """A plain PyTorch script, the message alone (no traceback): PyTorch holds what it can reach of the card (not more:
    sysmem fallback is apart) and a parameter-sized request fails. Copying a model in moves one parameter at a time; a training
    step's tensors would show their traceback or the training loop around them. Not where the driver spilled (allocated
    within the card, reserved past it): that is sysmem_fallback's row, and the two would say the same weights twice."""
    return (torch(x) and x.env["runtime"] == "pytorch" and not x.frames_n and not x.training and x.allocated is not None
            and 0.85 * x.reach <= x.allocated <= OVER_CARD * x.total and x.req <= PARAM_SHARE * x.total and not sysmem_fallback(x)
            and not churned(x))


# (round 94) PyTorch's tensors packing the card: allocated this share of what it can reach or more, and its cache's unallocated
# slack under a SLIVER_PACKED of the card (nothing freed and kept: no pass has run through the cache)
PACKED_SHARE, SLIVER_PACKED = 0.95, 0.01


def script_packed(x):
    """(round 94) script_full's reading where the request is past a parameter's share or a training word is in the log: the message
    alone (no traceback), PyTorch's allocated tensors at PACKED_SHARE of what it can reach and within the card (sysmem fallback
    apart), its cache's unallocated slack under SLIVER_PACKED of the card. Placing a model allocates parameter after parameter
    and frees nothing; a pass's working tensors come and go and leave slack in the cache. The study in docs/triage-accuracy.md
    round 94 (one-line caching-allocator messages) names the logs it was counted on."""
    return (torch(x) and x.env["runtime"] == "pytorch" and not x.frames_n and x.allocated is not None and x.ru is not None
            and bool(x.total) and PACKED_SHARE * x.reach <= x.allocated <= x.total and x.ru <= SLIVER_PACKED * x.total
            and not sysmem_fallback(x) and not churned(x))


# (round 96) script_packed's converse: the cache's unallocated slack at PASSED_SLACK of the card or more (and under SLIVER, past
# which the slack is the fragmentation rows' to read)
PASSED_SLACK = 0.03


def slack_passed(x):
    """(round 96) PyTorch's message alone (no traceback) with its cache's reserved-but-unallocated slack from PASSED_SLACK of the
    card up to SLIVER: tensors were freed and their blocks kept, so passes have run through the cache (placing a model frees
    nothing: script_packed). The message's own figures (reserved less allocated, or "reserved by PyTorch but unallocated"),
    either form. The study in docs/triage-accuracy.md round 96 names the logs it was scored on."""
    return (torch(x) and x.env["runtime"] == "pytorch" and not x.frames_n and bool(x.total) and x.allocated is not None
            and x.ru is not None and PASSED_SLACK * x.total <= x.ru < SLIVER * x.total)


CHURN = 16      # cached-but-unallocated slack this many times the request, and a sliver of the card at least


def churned(x):
    """(round 71) PyTorch <= 2.0's message (no expandable segments): its cache holds unallocated slack many times the
    failing request (CHURN) and a sliver of the card or more, under the quarter that reads as fragmentation (big_slack):
    tensors were freed and their blocks kept, so passes have run (a batch's working tensors come and go). Placing a
    model's weights allocates parameter after parameter and frees little; what fills the card here is the pass, not the
    model (batch 111's fine-tunes, batch 165's sentence-transformers batch: the batch or the sequence length was cut).
    Newer messages with such slack read as fragmentation (the 3.0 row), beside a weight a line names (round 13)."""
    return (x.ev.get("form") == "<=2.0" and x.ru is not None and bool(x.req) and bool(x.total) and x.ru >= CHURN * x.req
            and x.ru >= SLIVER * x.total)


def own_whole_card(x):
    """(round 99) PyTorch's message reading "this process has N memory in use" with no other process listed, N the card less
    free within a SLIVER of it: the process itself holds the card (case._numbers' others is then that remainder, not a program's).
    That figure counts PyTorch's cache and context as well as its tensors, a weaker sign than what PyTorch holds: only for a
    request under OWN_LAYER_SHARE of the card (a 472 MiB request on a 48 GB card, 1 %, was a fp32 batch of 24: batch 480)."""
    return (x.n.get("other_processes") is None and x.n.get("this_process") is not None and x.others is not None
            and x.others <= SLIVER * x.total and x.req <= OWN_LAYER_SHARE * x.total)


# one layer's matrix of a model that about fills the card: 24 layers or more of ~7 matrices each put under 1 % of the weights in
# any one (the embedding apart); a request under this share of the card is one of those, or the last of many small ones
LAYER_SHARE = 0.02
# (round 99) a request under this share of the card is one tensor of a model's layer, not a batch's: own_whole_card's tighter bound
OWN_LAYER_SHARE = LAYER_SHARE / 4


def cut_full(x):
    """script_full for PyTorch's message quoted up to "of which N is free" (the per-process tail, with what PyTorch holds,
    dropped): a plain script, the message alone, the card full (under a SLIVER free) and a layer-sized request fails. The
    request did not fill the card; what was placed before it did, and with no step, traceback or training shown that is
    most often the model (a batch's tensors stay the runner-up, the bare message row). Not under ComfyUI's own lines ("Requested
    to load", its exception banner): that is ComfyUI, whose loader places what fits, not a script. Not after a progress bar
    with completed steps (window facts steps_done): the loop ran, what it holds per step is the knob. (round 99) The message
    cut so, or elided ("... this process has N memory in use"), keeping only this process's own figure: where that figure is
    the whole card less free (what is left for other programs under a SLIVER, no process list) it says the same, not others."""
    return (torch(x) and x.env["runtime"] == "pytorch" and not x.frames_n and not x.training and bool(x.total)
            and not x.f.get("comfy") and not x.f.get("ui_loader") and not x.f.get("steps_done")
            and not x.impossible and not x.tiny and x.allocated is None and x.reserved is None and (x.others is None or own_whole_card(x))
            and x.free is not None and x.free <= SLIVER * x.total and x.req <= LAYER_SHARE * x.total)


# the smallest HBM one TPU core (one XLA device) has: v2's 8 GiB (v3 and v5e have 16, v4 and v6e 32, v5p 95). The TPU
# runtime's refusal of a device buffer names no capacity; a figure under a share of this is under that share of any TPU
TPU_MIN_HBM = 8 * GiB


def tpu_full(x):
    """cut_full for XLA on a TPU (round 76): the runtime could not allocate a device buffer ("Attempting to allocate N. That
    was not possible. There are M free.", the message JAX and PyTorch/XLA both print), the message alone (no frames, no
    training or step lines, no completed steps), under a SLIVER of the chip free and a layer-sized request (LAYER_SHARE),
    both against the smallest TPU core's HBM when the log names no capacity: the request did not fill the chip, what was
    placed before it did, most often the model's weights (and its optimizer state). A run whose steps completed is read by
    the buffer rows (pytorch/xla#8020: a step's buffer at 1/300); a request larger than what is free by gigabytes is not
    a full chip (google-deepmind/gemma#85). An event of the same failure on another device (review31: the BFC allocator
    naming GPU_0_bfc) says the chip is not a TPU core, so the smallest core's HBM is no bound for it."""
    free, total = x.n.get("free"), x.n.get("total") or TPU_MIN_HBM
    return (x.kind == "xla.oom" and x.ev.get("form") == "allocate" and x.ev.get("device_kind") == "tpu"
            and (x.device_kinds or set()) <= {"tpu", None}
            and not x.frames_n and not x.training and not x.f.get("steps_done") and free is not None and bool(x.req)
            and free <= SLIVER * total and x.req <= LAYER_SHARE * total)


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


def vllm_loading_cut(x):
    """vllm_loading for PyTorch's message quoted up to "of which N is free" (what PyTorch holds dropped), as cut_full is for
    a plain script: vLLM, the message alone, the card full (under a SLIVER free), a layer-sized request, and no line shows
    the weights loaded, the KV cache sized, graphs captured or a request served (nor a worker's failure sent back over vLLM's
    RPC queue: vllm_loading): the weights were still being placed."""
    return (torch(x) and x.env["runtime"] == "vllm" and not x.frames_n and bool(x.total) and not x.impossible and not x.tiny
            and x.allocated is None and x.reserved is None and x.others is None and x.free is not None
            and x.free <= SLIVER * x.total and x.req <= LAYER_SHARE * x.total and not x.graph_capture
            and not x.f["vllm_model_mem"] and not x.f["vllm_kv_mem"] and not x.f["vllm_serving"] and not x.f["vllm_worker_rpc"])


def vllm_loading(x):
    """vLLM, the message alone, PyTorch holds the card and no line shows the weights loaded, the KV cache sized or graphs
    captured, and no request served: it failed loading the weights (its start order: weights, profile, KV cache, graph capture).
    (tri72) Nor where a worker's failure came back over V1's RPC queue (facts' vllm_worker_rpc): WorkerProc.__init__ loads the
    weights before the worker serves that queue, and a failure there is "WorkerProc failed to start" instead."""
    return (torch(x) and x.env["runtime"] == "vllm" and not x.frames_n and x.allocated is not None
            and x.allocated >= 0.85 * x.reach and x.req <= PARAM_SHARE * x.total and not x.graph_capture
            and not x.f["vllm_model_mem"] and not x.f["vllm_kv_mem"] and not x.f["vllm_serving"] and not x.f["vllm_worker_rpc"])


def mps_full(x):
    """MPS: PyTorch holds most of the limit and a small request fails. Not in training, where what PyTorch holds is
    mostly the step's activations, gradients and optimizer state. The request read (a message cut before it says nothing
    of its size)."""
    return x.branch == "mps" and not x.training and "requested" in x.n and x.req < 0.3 * x.cap and x.allocated >= 0.7 * x.cap and (x.comfy or x.allocated >= 0.85 * x.cap)


# runtimes with their own memory pool, whose message gives the one buffer that failed (the row's evidence names them)
OWN_POOLS = {"onnx.alloc": "ONNX Runtime", "xla.oom": "XLA (JAX/TensorFlow)", "paddle.oom": "PaddlePaddle", "cupy.oom": "CuPy's memory pool",
             "rmm.oom": "RAPIDS (RMM)", "wgpu.oom": "wgpu (WebGPU)", "catboost.pool": "CatBoost's GPU memory pool",
             "faiss.alloc": "Faiss (GPU)", "xgboost.alloc": "XGBoost's device allocator",
             "mlx.malloc": "MLX (all its Metal buffers together)"}
HOST_KINDS = ("cpp.bad_alloc", "torch.cpu", "python.memory_error", "os.paging_file", "os.oom_killer", "ollama.system_memory", "ggml.host", "comfy.pinned_host",
              "os.enomem", "os.system_memory", "comfy.vhs_ram", "jvm.heap", "os.shm", "js.array_buffer",
              "nccl.shm", "tritonserver.shm_pool", "jupyter.kernel_died", "batchgen.workers_dead")
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


def aimdo_file_read(x):
    """(tri66) comfy-aimdo's host-buffer failure where its own log names the file read as what failed (lines.FACTS
    aimdo_file_read): hostbuf_read_file_slice reads into a buffer hostbuf_extend already committed and registered, so the
    failing call is the read (ReadFile, GetOverlappedResult), not an allocation of pinned memory."""
    return x.kind == "comfy.pinned_host" and bool(x.f["aimdo_file_read"]) and not aimdo_reader_only(x)


def kind(*kinds):
    return lambda x: x.kind in kinds


def fresh(x):
    """History rows: a failure ComfyUI recovered from (tiled VAE retry) is no evidence of a leak."""
    return not x.recoverable


def listed_others_cut(x) -> bool:
    """(round 101) PyTorch's message cut before the card's figures (no capacity sentence) that still lists another process
    ("Process 7208 has 6.51 GiB memory in use.") beside this process's own sentence ("This process has 7.92 GiB memory in
    use."): with this process named apart, every listed entry is another program's; read where they hold at least the
    request and one of them holds past a desktop's 1.5 GiB ((rev2 B2) several small entries, ~0.5 GiB each, are CUDA
    contexts: a distributed job's other ranks or its own workers on this card, not another program)."""
    n = x.n
    return (x.kind in ("torch.cuda", "torch.hip") and x.branch is None and n.get("this_process") is not None
            and (n.get("other_processes") or 0) >= x.req and (x.ev.get("others_largest") or 0) >= 1.5 * GiB)


def listed_several_cut(x) -> bool:
    """(op53) PyTorch's message cut before the card's figures and before "Of the allocated memory" that lists two or more
    processes ("Process 947712 has 4.17 GiB memory in use. Process 947858 has 4.01 GiB memory in use.") and none as this
    process. PyTorch writes that list from NVML's compute processes on the card, one entry per process, and names its own
    pid "Including non-PyTorch memory, this process" (c10/cuda/CUDACachingAllocator.cpp, reportProcessMemoryInfo: `if
    (self_pid == proc.pid)`): where none is so named, at most one entry is this process (a container, whose pid NVML gives
    from the host), so every entry but the largest is another process's at least. Read where those cover the request and
    one of them (the second largest entry) holds past a desktop's 1.5 GiB, as listed_others_cut's floor (rev2 B2: several
    small entries are the CUDA contexts of a job's own ranks or workers, not another program)."""
    n = x.n
    largest, listed = x.ev.get("others_largest"), n.get("other_processes")
    return (x.kind in ("torch.cuda", "torch.hip") and x.branch is None and n.get("this_process") is None
            and "reserved" not in n and largest is not None and listed is not None
            and listed - largest >= (x.req or 0) and (x.ev.get("others_second") or 0) >= 1.5 * GiB)


FSDP_CLONE_SPAN = 8     # lines from FSDP's clone warning to the error it carries at its end (the warning wraps over a few)


def fsdp_clone_near(x) -> bool:
    """(round 105) PyTorch's GPU out-of-memory error is the one FSDP's full state_dict hook carries at the end of its warning
    "Failed to clone() tensor with name <fqn>. ... Error: CUDA out of memory. ..." (facts "fsdp_clone"): the warning on the
    failure's line or at most FSDP_CLONE_SPAN lines before it, after the failure before it. Taking the full state_dict (to
    save the model) gathers every unsharded parameter onto each rank's card beside the training state; FSDP's own remedy
    is FullStateDictConfig(offload_to_cpu=True, rank0_only=True)."""
    line = x.line or 0
    return torch(x) and any((x.after or 0) < n <= line and line - n <= FSDP_CLONE_SPAN for n in x.f["fsdp_clone"])


# (round 106) vLLM's functions that load or prepare weights inside its layer modules (layers/linear.py's weight_loader, a
# quantization method's create_weights and process_weights_after_loading): a failure there is the load, not a pass
VLLM_LAYER_LOADING = ("weight_loader", "create_weights", "process_weights_after_loading", "load_weights")


def vllm_layer_pass(x) -> bool:
    """(round 106) PyTorch's message cut after its request in a vLLM run, raised inside one of vLLM's
    model layers (a frame under model_executor/layers/, a Python frame or one quoted "at model_executor/layers/utils.py:98
    default_unquantized_gemm", facts "vllm_layer_at") that is not a weight-loading function, and no frame of its model
    loader: a forward pass's working tensors (a matmul's output at the batch served), as the same cut message in a script."""
    if x.env["runtime"] != "vllm" or not torch_cut(x):
        return False
    paths = [(p.replace("\\", "/"), fn) for p, fn in x.frames or ()]
    fns = [fn for p, fn in paths if "model_executor/layers/" in p] + list(x.f["vllm_layer_at"].values())
    return bool(fns) and not any(fn in VLLM_LAYER_LOADING for fn in fns) and not any("model_loader" in p for p, _ in paths)
