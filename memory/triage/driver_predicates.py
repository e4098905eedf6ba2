"""The named predicates of the CUDA driver and the OS under it that the rules table reads (rules.py, via predicates.py):
a driver call that creates a context or stream (context_call, bare_driver, mem_query) and Windows' WDDM refusing
memory (wddm_refused). Moved from predicates.py (bodies unchanged), which re-exports them. No weights here."""
import re

from ..units import GiB

# CUDA calls that create this process's context or a stream: they fail with "out of memory" before the process holds any
# memory of its own, so what fills the card is another process's (cudaSetDevice / cuInit / the primary context, a stream)
CONTEXT_CALL = re.compile(r"\b(?:cudaStreamCreate|cuStreamCreate|cuCtxCreate)\w{0,16}\(|\b(?:cuDevicePrimaryCtxRetain|cudaSetDevice|cuInit)\b")

# a failed memory query belongs to the failure it leads (since the failure before it ended) or follows within these lines
QUERY_FOLLOWS = 5


def mem_query(x):
    """The memory query (lines.py mem_query_oom) that failed for lack of memory beside this failure, by its function, or None."""
    return next((fn for n, fn in sorted(x.f["mem_query_oom"].items()) if x.after < n <= x.line + QUERY_FOLLOWS), None)


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
# (tri50) Under WDDM, NVML reports every process's memory as NVML_VALUE_NOT_AVAILABLE (ULLONG_MAX): Windows' kernel driver,
# not NVIDIA's, manages device memory (nvml.h, nvmlProcessInfo_t.usedGpuMemory). PyTorch's message prints that figure through
# format_size as "17179869184.00 GiB" (2^64 bytes; render.NO_LIMIT reads the same format of UINT64_MAX). PyTorch for Windows
# never asks NVML (above), so a message listing a process with that figure is a Linux build under WSL2 over WDDM: the log
# shows WSL by the message itself, and its processes hold no figure (the same as listing none)
NVML_NA = 1 << 63


def nvml_na(x) -> bool:
    """PyTorch's CUDA message lists processes whose memory NVML reports as not available (WDDM under WSL2: NVML_NA)."""
    return x.kind == "torch.cuda" and any((x.n.get(k) or 0) >= NVML_NA for k in ("this_process", "other_processes"))


def wddm_refused(x):
    """An NVIDIA card on a log that shows Windows or WSL (both under WDDM; PyTorch's whole CUDA message, no process listed,
    or processes listed with NVML's not-available figure: nvml_na) refused a request its free figure covers several times
    over: the system commit (RAM plus page file), not VRAM."""
    na = nvml_na(x)
    return (x.kind == "torch.cuda" and x.env["backend"] == "cuda" and (x.env["os"] == "windows" or x.env["wsl"] or na)
            and not x.n.get("allowed")
            and x.total and x.free <= 1.01 * x.total and x.req and x.free >= 4 * x.req and x.free >= 2 * GiB
            and WDDM_HEAD in x.text and (WDDM_NO_PROCS in x.text or na))
