"""Triage round 109 (batches 565-567): llama.cpp's loader line naming a device whose name holds its own parentheses
("AMD Radeon (TM) Pro VII", "Intel(R) Arc(TM) B390 GPU") gives the device's free memory at start. Inputs are written by
hand from the loader's message form; expected values are worked out by hand. The change moves no cause: it feeds the
kv-cache guide's context that fits, which fell back to "half of this log's context" when the free figure was not read."""
import re

import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage.fact_patterns import FACTS
from support.regex_time import cpu_limit, cpu_now

MB = 1 << 20
DEVICE_FREE = dict(FACTS)["ggml_device_free"]

# a ROCm llama-server start whose KV cache is refused after 9000 MiB of weights on a card with 14000 MiB free: by hand,
# 14000 - 9000 - 1024 (compute buffers, not yet sized) - 512 (margin) = 3464 MiB of room; the cache is 8192 MiB for 65536
# tokens, 0.125 MiB a token, so 27712 tokens fit, rounded down to 24576 (1.5 x 16384)
KV_REFUSED = """ggml_cuda_init: found 1 ROCm devices:
llama_model_load_from_file_impl: using device ROCm0 ({name}) (0000:0b:00.0) - 14000 MiB free
load_tensors: offloaded 30/41 layers to GPU
load_tensors:   CPU_Mapped model buffer size =  3000.00 MiB
load_tensors:        ROCm0 model buffer size =  9000.00 MiB
llama_context: n_ctx         = 65536
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate ROCm0 buffer of size 8589934592
llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
"""


@pytest.mark.parametrize("name", ["AMD Radeon (TM) Pro W6600", "AMD Radeon(TM) 8060S Graphics", "Intel(R) Arc(TM) A770 Graphics",
                                  "NVIDIA GeForce RTX 4080"])
def test_kv_guide_reads_the_free_memory_of_a_device_named_with_parentheses(name):
    res, ev = last_event(KV_REFUSED.format(name=name))
    assert res["cause"] == "kv-cache"
    md = ev["guide"]["markdown"]
    assert "-c 24576 " in md and "13.67 GiB (the device's free memory at start)" in md
    assert "does not print enough" not in md


@pytest.mark.parametrize("line, want", [
    ("llama_model_load_from_file_impl: using device ROCm0 (AMD Radeon (TM) Pro VII) (0000:03:00.0) - 10874 MiB free",
     ("ROCm0", "AMD Radeon (TM) Pro VII", "10874")),
    ("0.00.347.552 I llama_prepare_model_devices: using device Vulkan0 (Intel(R) Arc(TM) B390 GPU) (unknown id) - 47865 MiB free",
     ("Vulkan0", "Intel(R) Arc(TM) B390 GPU", "47865")),
    ("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) - 23871 MiB free",
     ("CUDA0", "NVIDIA GeForce RTX 3090", "23871")),
])
def test_device_line_groups(line, want):
    m = DEVICE_FREE.search(line)
    assert m and m.groups() == want


@pytest.mark.parametrize("line", [
    # parentheses two levels deep, an unclosed one, or no "MiB free" figure: not read
    "using device ROCm0 (AMD (Radeon (TM)) Pro) - 100 MiB free",
    "using device ROCm0 (AMD Radeon (TM Pro VII) - 100 MiB free",
    "using device ROCm0 (AMD Radeon (TM) Pro VII) (0000:03:00.0)",
])
def test_device_line_controls(line):
    assert DEVICE_FREE.search(line) is None


def _linear(rx, text):
    t = cpu_now()
    rx.search(text)
    assert cpu_now() - t < cpu_limit(1.0)


def test_device_line_pattern_is_linear_on_adversarial_lines():
    for text in ("using device X (" + "(" * MB, "using device X (" + "a(a" * (MB // 3), "using device X (" + "(a" * (MB // 2),
                 "using device X (" + "a" * MB, "using device X (" + "(TM) " * (MB // 5) + "x",
                 "using device X (a) " + "(b) " * (MB // 4), "using device " * (MB // 13),
                 "using device X (a) - " + "9" * MB, "using device " + "x" * MB + " (a)"):
        _linear(DEVICE_FREE, text)


def test_device_line_with_an_empty_name_still_reads():
    # the bound's lower end is 0, as the star's was: a loader that prints no name gives its free memory all the same
    m = DEVICE_FREE.search("llama_model_load_from_file_impl: using device CUDA0 () - 100 MiB free")
    assert m and m.groups() == ("CUDA0", "", "100")
