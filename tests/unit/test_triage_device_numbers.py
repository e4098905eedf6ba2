"""The device kind and the numbers a log shows, read exactly (issue 14, deliverable 4). Lines written from each runtime's own
formats (sizes and paths made up), not copies of corpus cases."""
from support.triage_event import last_event, top

GiB, MiB = 1 << 30, 1 << 20


def test_intels_tensorflow_extension_bfc_line_without_allocator_name():
    """ITEX prints "Allocator ran out of memory ... N Bytes (rounded to N Bytes)": the request is read, on the XPU."""
    log = ("2024-01-02 03:04:05.000001: E itex/core/devices/bfc_allocator.cc:98] Allocator ran out of memory trying to allocate "
           "52428800 Bytes (rounded to 52428800 Bytes)\n")
    _, ev = last_event(log)
    assert ev["numbers"]["requested"] == 52428800 and ev["device_kind"] == "xpu"


def test_tensorflows_oom_line_on_an_xpu_device():
    log = ("ResourceExhaustedError: OOM when allocating tensor with shape[4,4,640,640] and type float on "
           "/job:localhost/replica:0/task:0/device:XPU:0 by allocator Simple allocator\n")
    assert last_event(log)[1]["device_kind"] == "xpu"
    assert last_event(log.replace("device:XPU:0", "device:GPU:0"))[1]["device_kind"] != "xpu"


def test_tensorflow_directml_allocator_is_directml():
    log = ("2021-01-02 03:04:05.000001: W tensorflow/core/common_runtime/bfc_allocator.cc:440] Allocator (DmlAllocator) ran out "
           "of memory trying to allocate 3.00MiB (rounded to 3145728).\n")
    _, ev = last_event(log)
    assert ev["device_kind"] == "directml" and ev["numbers"]["requested"] == 3145728
    assert last_event(log.replace("DmlAllocator", "GPU_0_bfc"))[1]["device_kind"] == "cuda"


def test_ggmls_cuda_error_in_a_hip_build_is_rocm():
    """ggml's CUDA code built for HIP prints the failing hipMalloc call under "CUDA error": a ROCm card."""
    quiet = "".join(f"time=2024-01-02T03:04:{i:02d} level=INFO msg=\"tick\"\n" for i in range(40))
    log = (quiet + "CUDA error: out of memory\n  current device: 0, in function alloc at /src/ggml-cuda.cu:233\n"
           "  hipMalloc((void **) &ptr, look_ahead_size)\nGGML_ASSERT: /src/ggml-cuda.cu:60: !\"CUDA error\"\n")
    assert last_event(log)[1]["device_kind"] == "rocm"
    assert last_event(log.replace("hipMalloc", "cudaMalloc"))[1]["device_kind"] == "cuda"


TF1 = ("Found device 0 with properties:\nname: Radeon Test\nTotal memory: 6.00GiB\nFree memory: {free}\n"
       "Creating TensorFlow device (/gpu:0)\nfailed to allocate {req} from device: hipError_t(1002)\n")


def test_tf1_stream_executor_size_alone_and_device_memory_lines():
    """Old TensorFlow prints the size alone ("8.00G": binary units) and, at device creation, the card's total and free."""
    _, ev = last_event(TF1.format(free="5.50GiB", req="6.00G"))
    assert ev["runtime"] == "tensorflow" and ev["device_kind"] == "rocm"
    assert ev["numbers"]["requested"] == 6 * GiB and ev["numbers"]["total"] == 6 * GiB
    assert ev["numbers"]["free"] == round(5.5 * GiB)


def test_a_region_larger_than_the_free_memory_at_start_is_not_another_process():
    """The stream-executor row says memory free at start was taken since; a request above that free figure was never
    sized from it, so the row keeps out (the region the allocator asked for was the whole card)."""
    cause, conf, _ = top(TF1.format(free="5.50GiB", req="6.00G"))
    assert cause != "other-process", conf
    cause, conf, _ = top(TF1.format(free="5.50GiB", req="5.00G"))
    assert cause == "other-process", conf
