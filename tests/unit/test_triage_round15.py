"""Triage round 15: priors where a log names no holder, written from the runtimes' own strings, each with a control that
keeps its old reading."""
import pytest

from support.triage_event import fired, top as _top
from support.regex_time import cpu_limit, cpu_now


# --- a driver-level out-of-memory with no allocator numbers: cudaErrorMemoryAllocation is "unable to allocate enough
# memory or other resources" (CUDA runtime API); nothing in it names another process ----------------------------------

@pytest.mark.parametrize("log", [
    # thrust's allocator rethrowing the runtime's error string (thrust/system/cuda/detail/malloc_and_free.h)
    "terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n"
    "  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n",
    # the driver API's name and string (cuGetErrorName / cuGetErrorString) from a program's own check
    "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
    "Error: cuMemCreate failed with CUDA_ERROR_OUT_OF_MEMORY\n",
])
def test_a_bare_driver_error_reads_as_other_before_another_process(log):
    cause, c, ev = _top(log)
    assert ev["kind"] == "cuda.driver" and cause == "other", c
    order = [x["id"] for x in ev["causes"]]
    assert order[:2] == ["other", "other-process"], order


def test_pytorch_cuda_check_keeps_pinned_host_memory_first_and_other_second():
    # c10/cuda/CUDAException.h: PyTorch's own CUDA check, not its caching allocator (which prints numbers for VRAM)
    cause, c, ev = _top("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at "
                        "some other API call, so the stacktrace below might be incorrect.\n")
    order = [x["id"] for x in ev["causes"]]
    assert cause == "host-ram" and order[:3] == ["host-ram", "other", "other-process"], c


def test_a_driver_error_with_numbers_showing_another_process_still_reads_it():
    # PyTorch >= 2.1's caching-allocator message: 21.30 GiB outside this process on a 23.65 GiB card
    cause, c, ev = _top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                        "23.65 GiB of which 512.00 MiB is free. Process 4242 has 21.30 GiB memory in use. Including non-PyTorch "
                        "memory, this process has 1.83 GiB memory in use. Of the allocated memory 1.20 GiB is allocated by "
                        "PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n")
    assert cause == "other-process", c


# --- ... unless the call that failed is the process's first footprint: a context or stream being created -------------------

@pytest.mark.parametrize("log", [
    # a program's own driver-API check on context creation
    "cuCtxCreate(&ctx, 0, dev) failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
    # ONNX Runtime's CudaCall report (core/providers/cuda/cuda_call.cc) naming the expression that failed
    "CUDA failure 2: out of memory ; GPU=0 ; hostname=host ; file=cuda_stream_handle.cc ; line=175 ; "
    "expr=cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);\n",
])
def test_a_context_or_stream_that_cannot_be_created_is_another_process(log):
    cause, c, ev = _top(log)
    assert ev["kind"] == "cuda.driver" and cause == "other-process", c
    assert "creates a context or stream" in ev["causes"][0]["evidence"][0]


def test_the_stream_executors_region_refused_is_another_process():
    # tensorflow/stream_executor/cuda/cuda_driver.cc GpuDriver::DeviceAllocate
    cause, c, ev = _top("2021-03-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate "
                        "3.90G (4190765056 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n")
    assert (ev["kind"], ev.get("form"), cause) == ("cuda.driver", "stream_executor", "other-process"), c


def test_a_data_allocation_is_not_a_context_call():
    # cuMemCreate backs data (a virtual-memory allocation), not a context: no context reading
    cause, c, ev = _top("Error: cuMemCreate failed with CUDA_ERROR_OUT_OF_MEMORY\n")
    assert cause == "other" and not any("creates a context" in e for x in ev["causes"] for e in x["evidence"]), c


def test_context_call_scan_is_linear():
    import time
    from gpu_garden.memory.triage.predicates import CONTEXT_CALL
    line = ("cudaStreamCreate" + "a" * 15 + " ") * 62500          # 2 MB of near misses
    t = cpu_now()
    assert CONTEXT_CALL.search(line) is None
    assert cpu_now() - t < cpu_limit(1.0)


# --- Ollama placed the layers from its own estimate: cuBLAS failing to create its handle afterwards is that estimate -------

CUBLAS_HANDLE = ("CUDA error: the resource allocation failed\n"
                 "  current device: 0, in function cublas_handle at ggml/src/ggml-cuda/common.cuh:644\n"
                 "  cublasCreate_v2(&cublas_handles[device])\n")


def test_ollama_cublas_handle_failure_is_its_estimate():
    # Ollama's runner wrapper (llm/server.go) relays the runner's last error
    cause, c, ev = _top('time=2025-01-01T10:00:00.000Z level=INFO source=server.go:104 msg="system memory" total="62.6 GiB"\n'
                        "Error: llama runner process has terminated: " + CUBLAS_HANDLE)
    assert (ev["runtime"], ev["kind"], cause) == ("ollama", "cublas.alloc", "other"), c
    assert "estimate was low" in ev["causes"][0]["evidence"][0]


def test_llamacpp_cublas_handle_failure_keeps_the_workspace_reading():
    cause, c, ev = _top(CUBLAS_HANDLE)
    assert (ev["runtime"], ev["kind"], cause) == ("llama.cpp", "cublas.alloc", "activations"), c


# --- PyTorch's caching-allocator message cut after its request reads like the same message cut before it -------------------

@pytest.mark.parametrize("log, req", [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB\n", 8 * 2**30),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory.\n", None),
])
def test_a_cut_pytorch_message_in_a_script_is_its_working_tensors(log, req):
    cause, c, ev = _top(log)
    assert cause == "activations" and c == {"activations": round(1.2 / 2.95, 2), "other": round(1.0 / 2.95, 2)}, c
    assert ev["numbers"].get("requested") == req


def test_a_cut_request_larger_than_any_card_keeps_its_own_row():
    cause, c, ev = _top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 400.00 GiB\n")
    assert cause == "activations" and "larger than most cards hold" in ev["causes"][0]["evidence"][0], c


def test_a_cut_message_outside_a_script_is_not_read_as_a_scripts():
    # vLLM's engine relays PyTorch's message: the script row does not apply (its own rows decide)
    cause, c, ev = _top("INFO 01-01 10:00:00 [llm_engine.py:100] vllm\nvllm.v1.engine.exceptions.EngineGenerateError: "
                        "CUDA out of memory. Tried to allocate 1.50 GiB\n")
    assert ev["runtime"] == "vllm" and "activations" not in fired(ev), c      # (alt1) only rules_runner_up's other reading


# --- cudaMallocAsync's report: the pool keeps what this process freed (release threshold UINT64_MAX), so the gap between
# the device limit, "Free" and "Currently allocated" is this process's as much as other programs' ----------------------------

def _async(allocated, requested, free, limit="15.99 GiB"):
    return ("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
            f"Currently allocated     : {allocated}\nRequested               : {requested}\nDevice limit            : {limit}\n"
            f"Free (according to CUDA): {free}\nPyTorch limit (set by user-supplied memory fraction)\n"
            "                        : 17179869184.00 GiB\n")


def test_async_gap_under_half_the_card_stays_the_working_tensors():
    # 15.99 - 0.50 - 12.00 = 3.49 GiB outside PyTorch's allocations (22 %): the pool's freed memory can be that much
    cause, c, ev = _top(_async("12.00 GiB", "1.50 GiB", "512.00 MiB"))
    assert cause == "activations" and c == {"activations": round(1.5 / 3.65, 2), "other-process": round(1.4 / 3.65, 2)}, c


def test_async_gap_over_half_the_card_is_another_program():
    # 15.99 - 1.00 - 4.00 = 10.99 GiB outside (69 %)
    cause, c, ev = _top(_async("4.00 GiB", "1.50 GiB", "1.00 GiB"))
    assert cause == "other-process" and c["other-process"] == round(2.6 / 4.85, 2), c
