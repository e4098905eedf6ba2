"""Triage round 22 (batch 43, after first sight): ggml's pinned-memory fallback is a warning, never the failure.
Lines written from the format strings (ggml-cuda.cu ggml_cuda_host_malloc: "%s: failed to allocate %.2f MiB of pinned memory:
%s"; ggml-vulkan.cpp ggml_backend_vk_host_buffer_type_alloc_buffer: "ggml_vulkan: Failed to allocate pinned memory (%s)", older
builds "ggml_vulkan: Failed to allocate pinned memory." with e.what() on its own line); both then use pageable memory."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage import engine

CUDA_PIN = "ggml_cuda_host_malloc: failed to allocate 6144.00 MiB of pinned memory: out of memory\n"
CUDA_PIN_OLD = "ggml_cuda_host_malloc: warning: failed to allocate 6144.00 MiB of pinned memory: out of memory\n"
VK_PIN = "ggml_vulkan: Failed to allocate pinned memory (vk::Device::allocateMemory: ErrorOutOfHostMemory)\n"
VK_PIN_OLD = "ggml_vulkan: Failed to allocate pinned memory.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
CUDA_MALLOC = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 7300.50 MiB on device 0: cudaMalloc failed: out of memory\n"


@pytest.mark.parametrize("log", [CUDA_PIN, CUDA_PIN_OLD, VK_PIN, VK_PIN_OLD, "llama_context: n_ctx = 32768\n" + CUDA_PIN * 2])
def test_a_pinned_memory_fallback_alone_is_no_failure(log):
    res = engine.triage_text(log)
    assert not res["found"] and res["count"] == 0, res["events"]


@pytest.mark.parametrize("warn", [CUDA_PIN, CUDA_PIN_OLD, VK_PIN, VK_PIN_OLD])
def test_the_failure_after_the_warning_leads_with_its_own_numbers(warn):
    res, ev = last_event("load_tensors: offloading 40 repeating layers to GPU\n" + warn + CUDA_MALLOC)
    assert res["count"] == 1 and ev["kind"] == "ggml.malloc", (res["count"], ev["kind"])
    assert ev["runtime"] == "llama.cpp" and ev["device_kind"] == "cuda" and ev["numbers"]["requested"] == int(7300.50 * 2**20)
    assert ev["line"] == 2 + warn.count("\n"), ev["line"]


def test_older_vulkan_what_line_is_a_failure_only_after_a_device_allocation():
    # the same e.what() line after "Memory allocation of size N failed." is the device allocation's own failure
    res, ev = last_event("ggml_vulkan: Device memory allocation of size 4294967296 failed.\n"
                         "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert res["found"] and ev["runtime"] == "llama.cpp" and ev["device_kind"] == "vulkan", ev


def test_comfyui_pinned_host_failures_keep_their_reading():
    res, ev = last_event("comfy_aimdo: HostBuffer allocation failed\n")
    assert ev["kind"] == "comfy.pinned_host" and res["cause"] == "host-ram", (ev["kind"], res["cause"])
