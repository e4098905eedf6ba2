"""Triage round 92 (task tune92: batches 78, 357, 358, 361, 368, 369 and 371 after first sight), written from the runtimes' own
message formats:
- The TPU compiler's refusal of one buffer ("RESOURCE_EXHAUSTED: Allocation (size=N) would exceed memory (size=M) :: #allocationK
  [shape = ..., space=hbm, ...]", libtpu's, raised by jaxlib): in hbm the buffer and the chip's memory (xla.oom, form exceed,
  requested and total, activations by the buffer row); in vmem a kernel's scratchpad, read as "in memory space vmem" is.
- XLA:TPU's compile failure with its figures quoted on the line under it ("Ran out of memory in memory space hbm." then "Used N of
  M hbm."): the same two figures as the one-line form.
- ROCr's block allocator ("HSA exception: MemoryRegion::BlockAllocator::alloc failed."): a ROCm device allocation refused, no size.
- NCCL's own CUDA check at out of memory as PyTorch relays its last error ("ncclUnhandledCudaError: Call to CUDA function failed."
  / "Last error:" / "Cuda failure 2 'out of memory'"): NCCL's buffers, read as its "NCCL WARN" line already is (activations).
- Jetson's nvmap refusal with its flags elided by a quote ("NvMapMemAllocInternalTagged: ... error 12"), and PyCUDA's driver error
  ("cuMemHostAlloc failed: out of memory"): the CUDA stack's own, runtime cuda unless a marker names a framework.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, last_event as _last, read as _read  # (cause, kind, runtime, device kind, numbers)

_EXCEED = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Allocation (size=21474836480) would exceed memory "
           "(size=17179869184) :: #allocation14 [shape = 'f32[320,4096,4096]{1,2,0:T(8,128)}', space=SPACE, size = "
           "0xffffffffffffffff, tag = 'output of fusion.7@{}'] :: <no-hlo-instruction>\n")


def test_tpu_allocation_would_exceed_hbm_is_one_buffer_over_the_chip():
    res, ev = _last(_EXCEED.replace("SPACE", "hbm"))
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == (
        "activations", "xla.oom", "jax", "tpu", "exceed")
    assert ev["numbers"] == {"requested": 21474836480, "total": 17179869184}


def test_tpu_allocation_would_exceed_vmem_is_a_kernels_scratchpad():
    assert _read(_EXCEED.replace("SPACE", "vmem")) == (
        "other", "xla.oom", "jax", "tpu", {"scratch_required": 21474836480, "scratch_limit": 17179869184})


def test_tpu_allocation_quoted_without_its_status_reads_the_same():
    assert _read("ValueError: Allocation (size=38654705664) would exceed memory (size=34359738368)\n")[1:] == (
        "xla.oom", "jax", "tpu", {"requested": 38654705664, "total": 34359738368})


def test_would_exceed_memory_without_its_sizes_is_not_read():
    assert "xla.oom" not in _kinds("the allocation would exceed memory (size unknown) on this chip, the notes say\n")


def test_tpu_compile_failure_reads_its_figures_from_the_line_under_it():
    text = "Ran out of memory in memory space hbm.\nUsed 9.10G of 8.00G hbm. Exceeded hbm capacity by 1.10G.\n"
    res, ev = _last(text)
    assert (ev["kind"], ev.get("form"), ev["device_kind"]) == ("xla.oom", "compile", "tpu")
    assert ev["numbers"] == {"required": 9771050598, "total": 8589934592}


def test_figures_of_another_memory_space_are_not_taken():
    assert _read("Ran out of memory in memory space hbm.\nUsed 9.10M of 8.00M vmem.\n")[4] == {}


def test_rocr_block_allocator_is_a_rocm_device_allocation():
    res, ev = _last("HSA exception: MemoryRegion::BlockAllocator::alloc failed.\n")
    assert (ev["kind"], ev["device_kind"], ev.get("form"), ev["numbers"]) == ("cuda.driver", "rocm", "hsa_block", {})


def test_nccl_last_error_relayed_by_pytorch_reads_as_its_buffers():
    text = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3699, unhandled cuda error, NCCL version 2.27.3\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\n"
            "Last error:\n"
            "Cuda failure 2 'out of memory'\n")
    res, ev = _last(text)
    assert (res["cause"], ev["kind"], ev.get("form")) == ("activations", "cuda.driver", "nccl")


def test_onnxruntime_cuda_failure_layout_is_not_nccls():
    res, ev = _last("CUDA failure 2: out of memory ; GPU=0 ; hostname=box ; expr=cudaMalloc((void**)&p, bytes);\n")
    assert ev.get("form") != "nccl"


def test_nvmap_with_its_flags_elided_is_read_as_the_cuda_stacks():
    assert _read("NvMapMemAllocInternalTagged: ... error 12\n")[1:4] == ("cuda.driver", "cuda", "cuda")


def test_pycuda_driver_error_is_a_cuda_programs_own():
    res, ev = _last("pycuda._driver.MemoryError: cuMemHostAlloc failed: out of memory\n")
    assert (ev["kind"], ev["runtime"], ev.get("form")) == ("cuda.driver", "cuda", "pycuda")
