"""Triage after batches 67-69 (first sight recorded). Lines written from the runtimes' own message formats (ggml-alloc's
alloc_tensor_range, vLLM's launch command, Ollama's scheduler, PyTorch's CUDA message), numbers made up or from the
reports named at each test, expected values by hand."""
from support.triage_event import top


def test_a_backends_pinned_host_buffer_refused_is_system_ram_on_that_backend():
    """ggml names a backend's pinned host buffer "<backend>_Host" (SYCL_Host, CUDA_Host, ROCm_Host, Vulkan_Host): a failure to
    allocate one is system RAM (a --no-mmap load staging the model in host memory, as in the SYCL DeepSeek README of
    chmihimabb-max/llama.cpp-2x-Arc-B70-Pro-SYCL-DeepSeekV4-Flash-731-Custom), on the device of that backend."""
    for name, dk in (("SYCL_Host", "xpu"), ("ROCm_Host", "rocm"), ("Vulkan_Host", "vulkan")):
        cause, _, ev = top(f"alloc_tensor_range: failed to allocate {name} buffer of size 96636764160\n")
        assert cause == "host-ram", (name, ev["causes"])
        assert ev["device_kind"] == dk, (name, ev["device_kind"])
    cause, _, ev = top("alloc_tensor_range: failed to allocate SYCL0 buffer of size 96636764160\n")
    assert cause != "host-ram" and ev["device_kind"] == "xpu", ev["causes"]      # the card's own buffer is not host RAM
