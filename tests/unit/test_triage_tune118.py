"""Triage after batches 118-120, 122 and 123 (round 62). thrust's and RMM's bad_alloc build what() as std::bad_alloc::what()
+ ": " + the message (thrust/system/detail/bad_alloc.h); an MSVC build's std::bad_alloc::what() is "bad allocation", so a
Windows build of a PyTorch CUDA extension prints "MemoryError: bad allocation: cudaErrorMemoryAllocation: out of memory"
(the shape of graphdeco-inria/gaussian-splatting#99). Paths, names and frames made up; expected values by hand."""
import pytest

from support.triage_event import top

FRAMES = ('  File "C:\\proj\\splats\\scene\\points.py", line 61, in init_from_cloud\n'
          "    d2 = torch.clamp_min(knn_dist(torch.from_numpy(np.asarray(cloud.xyz)).float().cuda()), 1e-7)\n")
MSVC = FRAMES + "MemoryError: bad allocation: cudaErrorMemoryAllocation: out of memory\n"
GCC = FRAMES + "MemoryError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n"


def test_msvc_thrust_bad_allocation_is_the_gpu_not_system_ram():
    """The Windows form reads as thrust's device allocation (the GPU, runtime pytorch), not as a native library's host
    std::bad_alloc (host-ram on the cpu): before round 62 it read host-ram 0.91 with device cpu."""
    cause, causes, ev = top(MSVC)
    assert (ev["kind"], ev.get("form"), ev["device_kind"], ev["runtime"]) == ("cuda.driver", "thrust", "cuda", "pytorch"), ev
    assert cause == "other", causes
    assert "host-ram" not in causes, causes


def test_msvc_and_gcc_forms_read_alike():
    """The same failure from a Linux (libstdc++) and a Windows (MSVC) build: the same event and the same causes."""
    a, b = top(MSVC), top(GCC)
    assert a[0] == b[0] and a[1] == b[1], (a[:2], b[:2])
    assert (a[2]["kind"], a[2].get("form")) == (b[2]["kind"], b[2].get("form")) == ("cuda.driver", "thrust")


@pytest.mark.parametrize("text", [
    # a native library's MSVC std::bad_alloc without a CUDA error after it stays the host's (round 16's forms)
    "Unhandled exception. OnnxRuntimeGenAIException: 'bad allocation'\n",
    "MemoryError: bad allocation\n",
])
def test_msvc_bad_allocation_without_a_cuda_error_stays_host_memory(text):
    cause, causes, ev = top(text)
    assert ev["kind"] in ("cpp.bad_alloc", "python.memory_error") and ev["device_kind"] == "cpu", ev
    assert cause == "host-ram", causes
