"""Triage after batches 95-97 (round 53). Lines written from AMReX's GPU checks (Src/Base/AMReX_GpuError.H:
AMREX_HIP_SAFE_CALL, AMREX_CUDA_SAFE_CALL, relayed by amrex::Abort; BLAST-WarpX/warpx#3398's form), the HIP runtime's
AMD_LOG_LEVEL trace (ROCclr's memory.cpp lines and hip_memory.cpp's API result; ROCm/legacy-rocm-build#1483's form) and
llama.cpp's model load failing on a Vulkan queue submission (ggml-org/llama.cpp#18642's form); paths, ranks, addresses,
sizes and models made up, expected values by hand."""
from support.triage_event import top

MIB = 1 << 20

AMREX_HIP = ("amrex::Abort::0::HIP error in file /opt/build/_deps/amrex-src/Src/Base/AMReX_GpuDevice.cpp line 404 "
             "hipErrorOutOfMemory !!!\nSIGABRT\n")
AMREX_CUDA = ("amrex::Abort::3::CUDA error 2 in file /home/sim/nyx/subprojects/amrex/Src/Base/AMReX_GpuDevice.cpp line 418: "
              "out of memory !!!\nSIGABRT\n")


def test_amrex_gpu_check_names_amrex_not_pytorch():
    """AMReX's own abort on a HIP call: runtime amrex, device rocm, its device-setup file; PyTorch's reading of a bare
    hipErrorOutOfMemory (its caching allocator would have printed numbers, so pinned host RAM) does not apply."""
    cause, scores, ev = top(AMREX_HIP)
    assert (ev["runtime"], ev["device_kind"], ev["form"]) == ("amrex", "rocm", "amrex_setup"), ev
    assert cause == "other", ev["causes"]
    assert "host-ram" not in scores, scores
    assert ev["guide"]["id"] == "amrex-gpu-call", ev["guide"]["id"]


def test_amrex_cuda_check_is_cuda_device():
    cause, _, ev = top(AMREX_CUDA)
    assert (ev["runtime"], ev["device_kind"]) == ("amrex", "cuda"), ev
    assert cause == "other", ev["causes"]


def test_a_file_and_line_check_outside_amrex_is_not_amrex():
    """The same "HIP error in file F line N" shape from a program that is not AMReX (no amrex::Abort, no AMReX_ file)."""
    _, _, ev = top("HIP error in file /src/solver/kernels.cpp line 77 hipErrorOutOfMemory\n")
    assert ev["runtime"] != "amrex", ev


HIP_TRACE = (":3:hip_memory.cpp           :690 : 0001200345 us: 5120 : [7f31c2a0b740] hipHostRegister ( 0x7ffd11c2a010, 268435456, 0 )\n"
             ":1:rocdevice.cpp            :1700: 0001200410 us: Failed creating memory\n"
             ":1:memory.cpp               :328 : 0001200413 us: Video memory allocation failed!\n"
             ":1:memory.cpp               :292 : 0001200415 us: Can't allocate memory size - 0x10000000 bytes!\n"
             ":3:hip_memory.cpp           :701 : 0001200431 us: 5120 : [7f31c2a0b740] hipHostRegister: Returned hipErrorOutOfMemory :\n")


def test_hip_runtime_trace_is_hip_with_the_refused_size():
    """The HIP runtime's own trace: runtime hip, device rocm, the refused size read from ROCclr's hex figure
    (0x10000000 = 256 MiB); PyTorch's pinned-RAM row (its caching allocator's premise) does not fire for a program that is
    not PyTorch. hipHostRegister of 256 MiB, far below any pinned limit: the range was refused (other), pinned RAM second."""
    cause, scores, ev = top(HIP_TRACE)
    assert (ev["runtime"], ev["device_kind"]) == ("hip", "rocm"), ev
    assert ev["numbers"].get("requested") == 256 * MIB, ev["numbers"]
    assert cause == "other", ev["causes"]
    assert [c["id"] for c in ev["causes"][:2]] == ["other", "host-ram"], ev["causes"]
    assert any("hipHostRegister could not page-lock 256.00 MiB" in e for e in ev["causes"][0]["evidence"]), ev["causes"][0]
    assert not any("PyTorch" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
    assert ev["guide"]["id"] == "hip-runtime-trace", ev["guide"]["id"]


def test_a_large_hip_host_registration_is_pinned_ram():
    """The boundary: 8 GiB (0x200000000) registered can meet the pinned limit: the small-range row stays out and the
    host-memory hint leads."""
    cause, scores, _ = top(HIP_TRACE.replace("0x10000000", "0x200000000").replace("268435456", "8589934592"))
    assert cause == "host-ram", scores


def test_a_hip_device_allocation_is_not_host_memory():
    """hipMalloc (the card's memory) returning hipErrorOutOfMemory: neither host-memory row fires."""
    _, scores, ev = top(HIP_TRACE.replace("hipHostRegister", "hipMalloc"))
    assert ev["runtime"] == "hip", ev
    assert "host-ram" not in scores, scores


def test_hip_trace_under_a_pytorch_message_stays_pytorch():
    """The trace is the layer under every framework on ROCm: beside PyTorch's own HIP message and a Python traceback the
    runtime is PyTorch's, and PyTorch's message carries the numbers."""
    text = ("Traceback (most recent call last):\n"
            '  File "/home/u/proj/train.py", line 41, in <module>\n'
            "    out = model(batch)\n"
            ":3:hip_memory.cpp           :701 : 0009100431 us: 5120 : [7f31c2a0b740] hipMalloc: Returned hipErrorOutOfMemory :\n"
            "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.98 GiB of "
            "which 1.20 GiB is free. Of the allocated memory 13.50 GiB is allocated by PyTorch, and 200.00 MiB is reserved by "
            "PyTorch but unallocated.\n")
    _, _, ev = top(text)
    assert ev["runtime"] == "pytorch", ev
    assert ev["numbers"].get("requested") == 2048 * MIB, ev["numbers"]


LOAD_SUBMIT = ("load_tensors: offloaded 49/49 layers to GPU\n"
               "load_tensors:      Vulkan0 model buffer size = 41210.55 MiB\n"
               "load_tensors:  CPU_Mapped model buffer size =   333.84 MiB\n"
               "llama_model_load: error loading model: vk::Queue::submit: ErrorOutOfDeviceMemory\n"
               "llama_model_load_from_file_impl: failed to load model\n")


def test_model_load_failing_on_a_queue_submission_is_the_submission():
    """The load's own error is the refused submission: the weights' buffer was allocated (its line printed), the
    upload could not be made resident; the submission row reads it (other), not the weights not fitting."""
    cause, scores, ev = top(LOAD_SUBMIT)
    assert ev["runtime"] == "llama.cpp", ev
    assert cause == "other", ev["causes"]
    assert "weights-exceed-vram" not in scores, scores


def test_model_load_failing_an_allocation_is_still_the_weights():
    """The boundary: the load's error names a buffer it could not allocate: the weights' reading is unchanged."""
    text = LOAD_SUBMIT.replace("vk::Queue::submit: ErrorOutOfDeviceMemory", "unable to allocate Vulkan0 buffer")
    cause, _, _ = top(text)
    assert cause == "weights-exceed-vram", cause


# ROCm 6's trace puts "[pid:<pid>  tid:0x<tid>] " on every line where ROCm 5 put "<pid> : [<tid>] " on the API lines only
# (a Blender Cycles report's ROCm 6.0 trace: ":3:hip_memory.cpp :3965: 0305756402 us: [pid:3158  tid:0x7fbce550b680]
# hipDrvMemcpy2DUnaligned: Returned hipErrorOutOfMemory : "); review22: the pattern read only ROCm 5's, and the ROCm 6 form
# fell to PyTorch's bare-check reading (runtime pytorch, host-ram first, the pytorch-pinned-memory guide)
HIP_TRACE_ROCM6 = "".join(ln.replace(" us: 5120 : [7f31c2a0b740] ", " us: ").replace(" us: ", " us: [pid:5120  tid:0x7f31c2a0b740] ")
                          for ln in HIP_TRACE.splitlines(True))


def test_rocm6_hip_runtime_trace_is_hip_with_the_refused_size():
    assert HIP_TRACE_ROCM6.count("[pid:5120  tid:0x7f31c2a0b740] ") == 5 and "5120 : [" not in HIP_TRACE_ROCM6
    cause, _, ev = top(HIP_TRACE_ROCM6)
    assert (ev["runtime"], ev["device_kind"]) == ("hip", "rocm"), ev
    assert ev["numbers"].get("requested") == 256 * MIB, ev["numbers"]
    assert cause == "other", ev["causes"]
    assert ev["guide"]["id"] == "hip-runtime-trace", ev["guide"]["id"]
