"""Triage round 10 (batches 29-30 tuned on): rows read from the runtimes' own sources, each pinned by the machine
lines of a public thread and by a near miss the row must leave alone."""
from gpu_garden.memory.triage import engine as triage
from support.regex_time import cpu_limit, cpu_now


def _causes(log):
    res = triage.triage_text(log)
    return res["cause"], {c["id"]: c for c in res["events"][-1]["causes"]}


MPS = ("RuntimeError: MPS backend out of memory (MPS allocated: {a}, other allocations: {o}, max allowed: {cap}). Tried to "
       "allocate {req} on {pool} pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
       "allocations (may cause system failure).\n")


def test_mps_with_nothing_allocated_is_no_metal_device():
    # sktime/pytorch-forecasting#1596 (macos-latest CI runner) and pytorch/pytorch#111449 (macOS x86 runner, 0-byte request):
    # MPSAllocator.h fails a request past the high watermark or when Metal returns no heap; with 0 bytes held the
    # watermark cannot be it. other 6.0 against the MPS catch-all activations 1.5
    for a, cap, req, pool in (("0 bytes", "7.93 GB", "256 bytes", "shared"), ("0 bytes", "1.70 GB", "0 bytes", "private")):
        cause, c = _causes(MPS.format(a=a, o="0 bytes", cap=cap, req=req, pool=pool))
        assert cause == "other", (cap, req)
        assert c["other"]["confidence"] == round(6.0 / 8.25, 2)
        assert any("no heap" in e for e in c["other"]["evidence"])


def test_mps_near_misses_stay_shortages():
    # something held (a byte of other allocations) or a request of half the limit: the watermark can refuse it
    assert _causes(MPS.format(a="0 bytes", o="5.10 GB", cap="7.93 GB", req="256 bytes", pool="shared"))[0] != "other"
    assert _causes(MPS.format(a="0 bytes", o="0 bytes", cap="7.93 GB", req="4.00 GB", pool="private"))[0] == "activations"


SDCPP_VULKAN = ("ggml_vulkan: Device memory allocation of size {n} failed.\n"
                "ggml_vulkan: Requested buffer size exceeds device memory allocation limit: ErrorOutOfDeviceMemory\n"
                "ggml_gallocr_reserve_n: failed to allocate {dev} buffer of size {n}\n"
                "[ERROR] ggml_extend.hpp:{line} - {part}: failed to allocate the compute buffer\n")


def test_sdcpp_vae_compute_buffer_over_the_vulkan_limit_is_the_decode():
    # leejet/stable-diffusion.cpp#291 (FirePro W8100, SDXL 1024x1024; --vae-tiling decodes it): the failing part is the VAE
    log = ("[INFO ] stable-diffusion.cpp:1326 - decoding 1 latents\n"
           + SDCPP_VULKAN.format(n=6979321856, dev="AMD Radeon FirePro W8100 (RADV HAWAII)", line=991, part="vae"))
    cause, c = _causes(log)
    assert cause == "vae-decode"
    # 3.0 (the part) + 2.6 (decode phase) + 4.0 (its buffer over the per-buffer limit) against other 8.0, weights 2.4
    assert c["vae-decode"]["confidence"] == round(9.6 / 20.75, 2)
    assert any("--vae-tiling decodes in tiles" in e for e in c["vae-decode"]["evidence"])


def test_sdcpp_other_parts_over_the_vulkan_limit_stay_a_limit():
    # leejet/stable-diffusion.cpp#791: the LoRA's compute buffer (a ggml update splitting buffers fixed it): no VAE row
    cause, c = _causes(SDCPP_VULKAN.format(n=5365186568, dev="Vulkan0", line=1412, part="lora"))
    assert cause == "other" and "vae-decode" not in c


DLIB = ("step#: 0     learning rate: 0.1   average loss: 0           steps without apparent progress: 0 Error while calling "
        "{fn}(&data, new_size*sizeof(float)) in file {path}gpu_data.cpp:{line}. code: 2, reason: out of memory\n")


def test_cuda_malloc_host_is_pinned_system_ram():
    # davisking/dlib#391 (8 GB of RAM beside an 8 GB GTX 1070): cudaMallocHost is page-locked host memory (CUDA runtime
    # API); host-ram 5.0 against the generic driver rows other-process 0.9 and other 1.0
    cause, c = _causes(DLIB.format(fn="cudaMallocHost", path="C:\\dlib\\dlib\\dnn\\", line=181))
    assert cause == "host-ram" and c["host-ram"]["confidence"] == round(5.0 / 7.65, 2)


def test_cuda_malloc_named_in_the_error_is_a_device_allocation():
    # davisking/dlib#252 and lhnguyen102/cuTAGI#71: cudaMalloc itself, found as the driver's out-of-memory, not RAM
    for log in (DLIB.format(fn="cudaMalloc", path="/home/user/dlib/dlib/dnn/", line=191),
                "CUDA Runtime Error at: /home/user/cuTAGI/src/data_struct_cuda.cu:83\n"
                "out of memory cudaMalloc(&this->d_jcb, size * sizeof(float))\n"):
        res = triage.triage_text(log)
        assert res["found"] and res["events"][-1]["kind"] == "cuda.driver", log
        assert res["cause"] != "host-ram"


def test_cuda_call_scan_is_linear():
    import time
    line = "cudaMalloc(" * 200_000 + "\n"
    t = cpu_now()
    triage.triage_text(line)
    assert cpu_now() - t < cpu_limit(5.0)


def test_cuda_malloc_in_a_dlib_training_step_is_the_mini_batch():
    # davisking/dlib#252 (4 GB card, mini-batch of 150 crops; a smaller one ran): dnn_trainer's "step#:" line says training;
    # activations 1.5 against the driver rows other-process 0.9 and other 1.0
    err = ("Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file /home/user/dlib/dlib/dnn/gpu_data.cpp:191. "
           "code: 2, reason: out of memory\n")
    step = "step#: 0     learning rate: 0.1   average loss: 0           steps without apparent progress: 0\n"
    cause, c = _causes("num training images: 4\n" + step + err)
    assert cause == "activations" and c["activations"]["confidence"] == round(1.5 / 4.15, 2)
    # no training line: nothing says a step ran; the program's own cudaMalloc still names a data buffer (round 12), read as
    # its working memory at the same weight, without the training evidence
    cause, c = _causes(err)
    assert cause == "activations" and "training" not in c["activations"]["evidence"][0]


def test_ds4_model_arena_is_the_weights():
    # antirez/ds4#475 (80.45 GiB of tensors on a Strix Halo; the progress line runs into the error without a newline)
    res = triage.triage_text("ROCm preparing model tensor mappings: 80.45 GiBds4: ROCm model arena alloc failed for "
                             "tensor-span:128 (1792.00 MiB chunk): out of memory\n")
    ev = res["events"][-1]
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("ds4.alloc", "ds4", "rocm")
    assert ev["numbers"]["requested"] == 1792 * 2 ** 20
    # weights 3.0 against the catch-all of a message without numbers (other 1.0) and "not determined" 0.75
    assert res["cause"] == "weights-exceed-vram" and ev["causes"][0]["confidence"] == round(3.0 / 4.75, 2)


def test_ds4_session_tensor_is_found_and_not_read_as_weights():
    # antirez/ds4#459: a session's tensors (the firmware's UMA carve-out decided it): found, no row claims a cause
    res = triage.triage_text("HSA exception: MemoryRegion::BlockAllocator::alloc failed.\n"
                             "ds4: ROCm tensor alloc failed: out of memory\nfailed to create rocm session\n")
    assert res["found"] and res["events"][-1]["kind"] == "ds4.alloc" and res["cause"] == "other"


def test_tensorflow_1x_bfc_line_is_found_with_its_request():
    # endernewton/tf-faster-rcnn#7: TensorFlow 1.x's BFC allocator names no allocator in its line
    res = triage.triage_text("tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out of memory trying to allocate "
                             "392.00MiB. See logs for memory state.\n")
    ev = res["events"][-1]
    assert res["found"] and ev["kind"] == "xla.oom" and ev["numbers"]["requested"] == 392 * 2 ** 20
    # TensorFlow's own note that a failed attempt is not a failure stays unread
    assert not triage.triage_text("Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.19GiB. The caller indicates "
                                  "that this is not a failure, but may mean that there could be performance gains\n")["found"]


def test_tensorrt_safe_runtime_allocate_is_found():
    # microsoft/onnxruntime#10770 (ONNX Runtime's TensorRT execution provider logging TensorRT's own error)
    res = triage.triage_text("E:onnxruntime:Default, tensorrt_execution_provider.h:50 log] [2022-03-04 13:39:28 ERROR] "
                             "../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)\n")
    assert res["found"] and res["events"][-1]["kind"] == "tensorrt.oom"
    assert not triage.triage_text("../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 700 (an illegal memory access)\n")["found"]


def test_tt_metal_dram_buffer_is_found_with_one_banks_numbers():
    # tenstorrent/tt-forge#855: the request is the whole buffer, the rest one bank's; no row reads a cause from it (the
    # thread traced it to a compiler commit), so the catch-all for a runtime's own message answers
    res = triage.triage_text("| critical |          Always | TT_FATAL: Out of Memory: Not enough space to allocate 1050673152 B "
                             "DRAM buffer across 12 banks, where each bank needs to store 87556096 B, but bank size is "
                             "1073741792 B (allocated: 943941568 B, free: 129800224 B, largest free block: 34201600 B)\n")
    ev = res["events"][-1]
    assert (ev["kind"], ev["runtime"]) == ("ttmetal.oom", "tt-metal")
    assert ev["numbers"] == {"requested": 1050673152, "total": 1073741792, "allocated": 943941568, "free": 129800224}
    assert res["cause"] == "other"
