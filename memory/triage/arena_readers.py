"""(tri77) A library's own device-memory arena that could not grow, read from the call its check prints.

tiny-cuda-nn (instant-ngp, nerfstudio's tcnn fields) keeps its working buffers in tcnn::GPUMemoryArena. Where the driver
supports virtual memory management, GPUMemoryArena::enlarge grows the arena in place: cuMemCreate a physical block for the
bytes missing, cuMemMap it after the arena's end, cuMemSetAccess it, each through CU_CHECK_THROW, which throws
"<file>:<line> <the call as written> failed with error <cuGetErrorName>" (include/tiny-cuda-nn/gpu_memory.h; later
versions format it "failed: <name>" and may define the arena in a gpu_memory.cu under the library's tree). The arena serves
the network's and the trainer's allocations at each step (forward and backward buffers per batch, the optimiser's scratch),
so a refusal there is the run's working memory at its settings, as the same library's cudaMalloc of a data buffer
(other_patterns.CUDA_CALL) is. A virtual-memory call refused elsewhere (PyTorch's
expandable segments on WSL or Jetson) is not read here: it names no tiny-cuda-nn source.
"""
import re

TCNN_ARENA = re.compile(r"tiny-cuda-nn[\\/][^\n]{0,80}?gpu_memory\.(?:h|cu):\d{1,6} (cuMemCreate|cuMemMap|cuMemSetAccess)"
                        r"\([^\n]{0,300}?\) failed(?: with error|:) CUDA_ERROR_OUT_OF_MEMORY\b")


def tcnn_arena(line):
    """tiny-cuda-nn's arena refused more device memory: a CUDA driver refusal of the program's own working memory (form
    "arena_grow", read by rules_libs' row), or None."""
    if "gpu_memory." not in line or "CUDA_ERROR_OUT_OF_MEMORY" not in line:
        return None
    m = TCNN_ARENA.search(line)
    if not m:
        return None
    return {"kind": "cuda.driver", "device_kind": "cuda", "numbers": {}, "runtime": "tiny-cuda-nn", "complete": True,
            "form": "arena_grow"}


tcnn_arena.needed = ("CUDA_ERROR_OUT_OF_MEMORY",)
