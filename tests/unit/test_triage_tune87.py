"""Triage round 87 (task tune87: batches 310, 311, 312 and 314 after first sight), written from the runtimes' own message
formats:
- NCCL creating its SHM transport's segment in /dev/shm and finding no space (src/misc/shmutils.cc: "Error while creating
  shared memory segment /dev/shm/nccl-XXXXXX (size N), error: No space left on device (28)", also quoted wrapped after
  "segment"): /dev/shm is host RAM, so host-ram, its size the request; attaching to a segment, or another errno, is not it.
- jaxlib's exception with its status code alone ("XlaRuntimeError: RESOURCE_EXHAUSTED", newer jaxlib's "JaxRuntimeError"):
  XLA's allocator refusal with its message cut, read as the full message is (xla.oom, jax), no figures; the status followed
  by a message is read by the forms before, as it was.
- TensorRT-LLM's checkpoint conversion timing line ("Total time of reading and converting: N s", NIM's engine build's
  "Total time of reading and converting rank0 checkpoint: N s") names the run TensorRT-LLM's above TensorRT's [TRT] errors.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, read as _read


def test_nccl_shm_segment_no_space_is_host_ram():
    text = ("NCCL WARN Error while creating shared memory segment /dev/shm/nccl-a1B2c3 (size 9637888), error: No space left "
            "on device (28)\n")
    assert _read(text) == ("host-ram", "nccl.shm", "pytorch", "cuda", {"requested": 9637888})


def test_nccl_shm_segment_quoted_wrapped_after_segment_reads_the_same():
    text = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
            "ncclSystemError: Error while creating shared memory segment\n"
            "/dev/shm/nccl-Qz9x1w (size 20975616), error: No space left on device (28)\n")
    assert _read(text) == ("host-ram", "nccl.shm", "pytorch", "cuda", {"requested": 20975616})


def test_nccl_shm_attach_or_other_errno_is_not_read():
    attach = ("NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-a1B2c3 (size 9637888), error: No such "
              "file or directory (2)\n")
    assert "nccl.shm" not in _kinds(attach)
    assert "nccl.shm" not in _kinds("Error while creating shared memory segment /dev/shm/nccl-a1B2c3 (size 9637888), error: "
                                    "Permission denied (13)\n")


def test_bare_xla_runtime_error_resource_exhausted_is_xla_oom():
    assert _read("XlaRuntimeError: RESOURCE_EXHAUSTED\n") == ("activations", "xla.oom", "jax", "cuda", {})


def test_bare_jax_runtime_error_resource_exhausted_is_xla_oom():
    assert _read("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED\n")[1:3] == ("xla.oom", "jax")


def test_xla_runtime_error_with_its_message_reads_its_size_as_before():
    text = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2110783616 "
            "bytes.\n")
    assert _read(text)[1:] == ("xla.oom", "jax", "cuda", {"requested": 2110783616})


def test_trtllm_conversion_timing_names_tensorrt_llm_over_trt_errors():
    text = ("INFO 2025-01-02 10:00:00.000 build_utils.py:239] Total time of reading and converting rank0 checkpoint: 12.50 s\n"
            "[01/02/2025-10:05:00] [TRT] [E] [myelinResourceManager.cpp::allocate::196] Error Code 2: OutOfMemory (Requested "
            "size was 34359738368 bytes.)\n")
    assert _read(text)[2:] == ("tensorrt-llm", "cuda", {"requested": 34359738368})


def test_trt_errors_alone_stay_tensorrt():
    text = ("[01/02/2025-10:05:00] [TRT] [E] [myelinResourceManager.cpp::allocate::196] Error Code 2: OutOfMemory (Requested "
            "size was 34359738368 bytes.)\n")
    assert _read(text)[2] == "tensorrt"
