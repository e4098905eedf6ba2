"""Task tri77 (issue 14): tiny-cuda-nn's memory arena that could not grow is read as the run's working memory.
Inputs written by hand in the library's own words; none taken from a corpus file.

tiny-cuda-nn (instant-ngp) keeps its per-step buffers in tcnn::GPUMemoryArena. Where the driver supports virtual memory
management, GPUMemoryArena::enlarge grows the arena with cuMemCreate, cuMemMap and cuMemSetAccess, each through CU_CHECK_THROW,
which throws "<file>:<line> <the call> failed with error <CUresult name>" (include/tiny-cuda-nn/gpu_memory.h). A refusal there
is the network's and trainer's working memory, as the same library's cudaMalloc of a data buffer is read (rules.py); before
this task the bare CUDA_ERROR_OUT_OF_MEMORY was read as a driver fault ("other")."""
import pytest

from support.triage_event import kinds, read, top

TCNN = "C:/src/instant-ngp/dependencies/tiny-cuda-nn/include\\tiny-cuda-nn/gpu_memory.h"


@pytest.mark.parametrize("text", [
    # the call that grants access to the new block, in instant-ngp's uncaught-exception line (Windows path, mixed slashes)
    f"10:02:11 ERROR    Uncaught exception: {TCNN}:592 cuMemSetAccess(m_base_address + m_size, n_bytes_to_allocate, "
    "&access_desc, 1) failed with error CUDA_ERROR_OUT_OF_MEMORY\n",
    # the physical block itself, on Linux, behind the arena's failed free that instant-ngp logs first
    "Attempting to free memory arena while it is still in use.\n"
    "Uncaught exception: /opt/ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/gpu_memory.h:580 "
    "cuMemCreate(&m_handles.back(), n_bytes_to_allocate, &prop, 0) failed with error CUDA_ERROR_OUT_OF_MEMORY\n",
    # a later tiny-cuda-nn's check (fmt's "failed: <name>"), the arena defined in a .cu file of the library's tree
    "RuntimeError: /build/tiny-cuda-nn/src/gpu_memory.cu:311 cuMemMap(m_base_address + m_size, n_bytes_to_allocate, 0, "
    "m_handles.back(), 0) failed: CUDA_ERROR_OUT_OF_MEMORY\n",
])
def test_the_arena_growing_reads_as_activations(text):
    # fails on the old rules: the line was the bare driver error (kind cuda.driver, no form), read as other first
    cause, conf, ev = top(text)
    assert (cause, ev["kind"], ev.get("form"), ev["runtime"]) == ("activations", "cuda.driver", "arena_grow", "tiny-cuda-nn")
    assert conf["activations"] > conf["other"]


def test_a_virtual_memory_call_outside_tiny_cuda_nn_is_not_the_arena():
    # control (holds on the old rules too): PyTorch's expandable segments map memory with the same calls; no tiny-cuda-nn
    # source is named, so the bare driver error's reading stands
    text = ("RuntimeError: CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY\n"
            "cuMemCreate(&handle, segment_size, &prop, 0) failed with error CUDA_ERROR_OUT_OF_MEMORY\n")
    cause, _conf, ev = top(text)
    assert ev.get("form") != "arena_grow" and cause != "activations"


def test_another_error_of_the_arena_is_not_read_as_a_refusal():
    # control: the arena's failed free (CUDA_ERROR_INVALID_VALUE) is no out-of-memory line at all
    text = (f"Could not free memory arena: {TCNN}:489 cuMemAddressFree(m_base_address, m_max_size) failed with error "
            "CUDA_ERROR_INVALID_VALUE\n")
    assert "cuda.driver" not in kinds(text)
