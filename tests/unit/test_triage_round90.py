"""Triage round 90 (task tune90: batches 331 and 336 after first sight), written from the runtimes' own message formats:
- Python's MemoryError type carrying a GPU runtime's out-of-memory head ("MemoryError: CUDA out of memory", HIP, XPU and MUSA
  the same): the device's memory, not the host's; read as the message is without the type (PyTorch's bare message with its
  request where it has one, else the generic reading), the device the one it names. A MemoryError with any other message
  (none, numpy's, "out of memory" alone) stays host RAM.
- spconv's and cumm's tensorview CUDA checks at error 2, cudaErrorMemoryAllocation (tensorview.h TV_CHECK_CUDA_ERR: "cuda
  execution failed with error 2", TV_CHECK_CUDA_ERR_V2 with the error's string after it; cumm's TV_CUDART_RESULT_CHECK: "cuda
  failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 ..."): a CUDA allocation error of a PyTorch extension, no call
  named and no figures (kind cuda.driver, form tensorview); another code is not read.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, last_event as _last, read as _read  # (cause, kind, runtime, device kind, numbers)


def test_memoryerror_with_cuda_out_of_memory_is_the_gpu_not_host_ram():
    cause, kind, runtime, device, numbers = _read("MemoryError: CUDA out of memory\n")
    assert (kind, runtime, device, numbers) == ("generic.oom", "pytorch", "cuda", {})
    assert cause != "host-ram"


def test_memoryerror_with_pytorchs_cuda_message_reads_its_request():
    text = "MemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert _read(text)[1:] == ("torch.cuda", "pytorch", "cuda", {"requested": 2147483648})


def test_memoryerror_with_hip_out_of_memory_is_the_amd_gpu():
    assert _read("MemoryError: HIP out of memory\n")[3] == "rocm"


def test_memoryerror_with_another_message_stays_host_ram():
    for text in ("MemoryError\n", "MemoryError: out of memory\n",
                 "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array with shape (402653184,) and "
                 "data type float64\n"):
        assert _read(text)[:4] == ("host-ram", "python.memory_error", "pytorch", "cpu"), text


def test_spconv_tensorview_check_at_error_2_is_a_cuda_allocation_error():
    text = ("  File \"/opt/mmdetection3d/mmdet3d/ops/spconv/ops.py\", line 94, in get_indice_pairs\n"
            "    return get_indice_pairs_func(indices, batch_size, out_shape, spatial_shape, ksize, stride, padding, dilation,\n"
            "RuntimeError: /opt/mmdetection3d/mmdet3d/ops/spconv/src/indice_cuda.cu 124\n"
            "cuda execution failed with error 2\n")
    res, ev = _last(text)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"], ev.get("form")) == (
        "cuda.driver", "pytorch", "cuda", {}, "tensorview")


def test_spconv_tensorview_check_alone_reads_the_same():
    assert _read("cuda execution failed with error 2\n")[1:] == ("cuda.driver", "pytorch", "cuda", {})


def test_tensorview_v2_check_with_the_errors_string_reads_the_same():
    res, ev = _last("RuntimeError: /io/src/spconv/indice.cu 125\ncuda execution failed with error 2 out of memory\n")
    assert (ev["kind"], ev.get("form")) == ("cuda.driver", "tensorview")


def test_cumm_runtime_call_check_at_error_2_reads_the_same():
    text = ("RuntimeError: /io/include/tensorview/tensor.h 205\n"
            "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.\n")
    res, ev = _last(text)
    assert (ev["kind"], ev["device_kind"], ev.get("form")) == ("cuda.driver", "cuda", "tensorview")


def test_tensorview_check_with_another_code_is_not_read():
    assert "cuda.driver" not in _kinds("RuntimeError: /io/src/spconv/indice.cu 274\ncuda execution failed with error 3 "
                                       "initialization error\nprepareSubMGridKernel failed\n")
    assert "cuda.driver" not in _kinds("cuda execution failed with error 209\n")
    assert "cuda.driver" not in _kinds("cuda execution failed with error 20\n")


def test_another_programs_execution_failed_code_is_not_tensorviews():
    assert "cuda.driver" not in _kinds("Error: Apex CUDA execution failed with error code: 2\n")
