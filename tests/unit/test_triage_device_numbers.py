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


def test_vllms_sampler_warmup_message_keeps_the_pytorch_numbers_it_was_raised_from():
    """vLLM v1 raises "CUDA out of memory occurred when warming up sampler" from PyTorch's message: the scan keeps them two
    failures (two runtimes' messages), and the warm-up's answer shows PyTorch's sizes beside its dummy requests."""
    pre = "(VllmWorker rank=0 pid=4242) ERROR 01-02 03:04:05 [multiproc_executor.py:375] "
    log = (pre + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
           "11.00 GiB of which 500.00 MiB is free. Including non-PyTorch memory, this process has 10.40 GiB memory in use.\n"
           + pre + "    raise RuntimeError(\n"
           + pre + "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests. Please try "
           "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n")
    res, ev = last_event(log)
    assert ev["kind"] == "vllm.warmup" and ev["numbers"]["requested"] == GiB and ev["numbers"]["free"] == 500 * MiB
    assert ev["numbers"]["dummy_requests_count"] == 256
    # a PyTorch message far before (another failure, EXPLAINED_WITHIN lines up) lends it nothing
    far = log.replace(pre + "    raise", "".join(f"step {i}\n" for i in range(100)) + pre + "    raise")
    assert "requested" not in last_event(far)[1]["numbers"]
    # nor another runtime's failure just before (it did not raise this one)
    ggml = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 0: cudaMalloc failed: out of memory\n"
    assert "requested" not in last_event(ggml + log.split("\n", 1)[1])[1]["numbers"]


def test_pytorchs_message_cut_with_an_ellipsis_after_the_capacity_keeps_the_total():
    log = "[ERROR] [trainer] XPU out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 14.50 GiB ...\n"
    nums = last_event(log)[1]["numbers"]
    assert nums["requested"] == 3 * GiB and nums["total"] == round(14.5 * GiB)
    assert "total" not in last_event(log.replace(" ...", " and"))[1]["numbers"]


def test_tensorflows_bfc_stats_after_the_failure_give_its_limit_and_bytes_in_use():
    log = ("2021-01-02 03:04:05.000001: W tensorflow/core/common_runtime/bfc_allocator.cc:440] Allocator (GPU_0_bfc) ran out "
           "of memory trying to allocate 3.00MiB (rounded to 3145728).\n"
           + "".join(f"2021-01-02 03:04:05.000002: I tensorflow/core/common_runtime/bfc_allocator.cc:900] Bin ({i}): "
                     "Total Chunks: 1, Chunks in use: 1.\n" for i in range(30))
           + "2021-01-02 03:04:05.000003: I tensorflow/core/common_runtime/bfc_allocator.cc:950] Stats: \n"
           "Limit:                  4000000000\nInUse:                  3990000000\nMaxInUse:               3995000000\n")
    nums = last_event(log)[1]["numbers"]
    assert nums["device_limit"] == 4000000000 and nums["allocated"] == 3990000000


def test_jetsons_nvmap_refusing_with_enomem_is_a_cuda_device_failure():
    """Tegra's nvmap (CUDA's unified memory on Jetson) refusing an allocation with errno 12; another errno is not memory."""
    quiet = "".join(f"[tts] chunk {i} done\n" for i in range(40))
    _, ev = last_event(quiet + "NvMapMemAllocInternalTagged: 1075072516 error 12\n")
    assert ev["device_kind"] == "cuda" and ev["form"] == "nvmap" and ev["numbers"] == {}
    from gpu_garden.memory.triage import engine
    assert not engine.triage_text(quiet + "NvMapMemAllocInternalTagged: 1075072516 error 22\n")["found"]
