"""Triage round 102 (task tune102: batches 508-532 after first sight), written from the runtimes' own message formats:
- vLLM's own raises that carry no memory word name vLLM for the PyTorch message they come with: the V1 front end's "Engine
  core initialization failed. See root cause above." after a worker died in start-up (on a line after the message), the V0
  model runner's wrapper "Error in model execution (input dumped to <file>.pkl): <error>" (on the message's own line).
- PyTorch's ROCm build names its allocator's source, HIPCachingAllocator.cpp, in its warnings before an out-of-memory error
  that keeps CUDA's words: the card is a ROCm one.
- A Metal program's refusal of one buffer, "failed to create Metal buffer of size N" (bytes), is a Metal out-of-memory with
  its request; it names no runtime.
The sizes, paths and lines around them are made up in the messages' layout; the expected values are worked out by hand."""
import time

from gpu_garden.memory.triage import fact_patterns as FP
from gpu_garden.memory.triage import other_patterns as OP

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_MIB = 1024 ** 2

_TORCH = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 300.00 MiB. GPU 0 has a total capacity of 23.50 GiB "
          "of which 250.00 MiB is free.\n")


def test_engine_core_initialization_failed_after_the_message_names_vllm():
    text = ("INFO: loading the audio tower\n" + _TORCH + "...\n"
            "ValueError: the encoder returned nothing for item 0\n"
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n")
    _, kind, runtime, dev, nums = _read(text)
    assert (kind, runtime, dev) == ("torch.cuda", "vllm", "cuda")
    assert nums["requested"] == 300 * _MIB
    # the same lines without vLLM's own raise are PyTorch's
    assert _read(text.replace("Engine core initialization failed", "start-up failed"))[2] == "pytorch"


def test_error_in_model_execution_wrapper_names_vllm():
    text = ("torch.OutOfMemoryError: Error in model execution (input dumped to /tmp/err_execute_model_input_20250101-120000.pkl): "
            "CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 has a total capacity of 15.00 GiB of which 40.00 MiB is "
            "free.\n")
    _, kind, runtime, _, nums = _read(text)
    assert (kind, runtime) == ("torch.cuda", "vllm")
    assert nums["requested"] == 128 * _MIB
    assert _read(text.replace("Error in model execution (input dumped to", "Error in my step (input saved to"))[2] == "pytorch"


def test_hip_caching_allocator_warning_names_a_rocm_card():
    warn = ("[W101 10:00:00.000000000 HIPCachingAllocator.cpp:4000] memory allocation failed with OOM on device 0 while trying "
            "to allocate 16777216 bytes (free: 0, total: 68702699520).\n")
    _, kind, _, dev, _ = _read(warn + _TORCH)
    assert (kind, dev) == ("torch.cuda", "rocm")
    # the same warning from the CUDA build's allocator keeps the card CUDA's
    assert _read(warn.replace("HIPCachingAllocator", "CUDACachingAllocator") + _TORCH)[3] == "cuda"


def test_metal_buffer_creation_refused_is_a_metal_oom_with_its_request():
    _, kind, _, dev, nums = _read("error: failed to create Metal buffer of size 6442450944\n")
    assert (kind, dev) == ("metal.oom", "metal")
    assert nums == {"requested": 6 * 1024 ** 3}
    assert OP.METAL_CREATE.search("failed to create Metal buffer of size 1024").group(1) == "1024"
    assert OP.METAL_CREATE.search("failed to create Metal buffer of size") is None
    # another device's buffer is not this form
    assert _kinds("note: failed to create Vulkan buffer of size 6442450944\n") == []


def test_round_102_patterns_stay_linear():
    mb = 1 << 20
    facts = dict(FP.FACTS)
    cases = [
        (facts["vllm_marker"].search, ("Engine core " * (mb // 12), "Error in model execution " * (mb // 25),
                                       "Error in model execution (input dumped" + " " * mb)),
        (facts["rocm"].search, ("HIPCachingAllocator" * (mb // 19), "HIPCachingAllocator." + "x" * mb)),
        (OP.METAL_CREATE.search, ("failed to create Metal buffer of size " * (mb // 38), "failed to create Metal buffer of size "
                                  + "9" * mb)),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds("failed to create Metal buffer of size " * (mb // 38) + "\n"
           + "RuntimeError: Engine core initialization failed. " * (mb // 50) + "\n"
           + "[W HIPCachingAllocator.cpp:1] " * (mb // 30) + "\n")
    assert cpu_now() - t < cpu_limit(10.0)
