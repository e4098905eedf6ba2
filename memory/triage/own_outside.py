"""(task tri88) Memory this process holds outside PyTorch's cache, weighed against what other processes hold.

PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, 2.1+) reports the card by process after an out-of-memory
error (reportProcessMemoryInfo): NVML's compute processes on the card (nvmlDeviceGetComputeRunningProcesses), each with
its usedGpuMemory, this one's as "Including non-PyTorch memory, this process has X memory in use", the others' as
"Process N has Y memory in use". NVML's figure for this process is all it holds on the card: its CUDA context, PyTorch's
cache, and whatever any other library in the process allocated itself (a physics simulator's buffers, another runtime,
a CUDA extension that calls cudaMalloc). The message then gives PyTorch's own part: "Of the allocated memory A is
allocated by PyTorch, and R is reserved by PyTorch but unallocated" (case.reserved: A + R). So this process's figure less
PyTorch's reserved memory is what this process holds outside PyTorch (its context and those libraries).

The card's memory outside PyTorch's cache is then in two parts: this process's own, and other processes' (case.others:
the listed entries, or the card less free less this process). The other-process rows (rules.py: others_hold at 3.0 and
the others' share at 1.5) read the second part as the memory the run lacked. Where this process's own part, less a CUDA
context (estimate.spec.CUDA_CONTEXT), is at least as large as what other processes hold, most of what PyTorch does not
count is this process's: a library beside PyTorch that the program's own settings size (Isaac Gym's simulation buffers
grow with num_envs). The run filled the card itself, and the other programs' share is the smaller part; those two rows
stand aside there and the rows that read this process's own figures answer. Where the message gives no reserved figure
(a quote cut after the process sentences), or this process's figure is missing, nothing changes."""
from ..estimate.spec import CUDA_CONTEXT


def own_outside(x):
    """What this process holds outside PyTorch's cache, less a CUDA context: NVML's figure for this process ("this
    process has X memory in use") less PyTorch's reserved memory, or None where the message lacks either figure."""
    mine = x.n.get("this_process")
    if mine is None or x.reserved is None:
        return None
    return mine - x.reserved - CUDA_CONTEXT


def others_outweigh_own(x) -> bool:
    """Other processes hold more of the card than this process holds outside PyTorch's cache (less a context); true where
    the message does not give this process's own figures (the other-process rows read as before)."""
    own = own_outside(x)
    return own is None or x.others is None or x.others > own
