"""Review 13a's findings on the triage changes since f149366 (tfix14): each test fails on the code before its fix.
Lines modelled on the runtimes' own messages (llama.cpp ggml-backend/llama-model-loader, vLLM V1 gpu_worker, LM Studio);
numbers made up, expected figures by hand."""
from gpu_garden.memory.triage import engine, servers


def test_ggml_pinned_host_buffers_of_every_backend_are_system_ram():
    # ggml-cuda/ggml-hip/ggml-vulkan/ggml-sycl name their pinned host buffer type "<backend>_Host"
    for name in ("CUDA_Host", "ROCm_Host", "Vulkan_Host", "SYCL_Host", "CUDA0_Host"):
        assert servers.ggml_buf_kind(name) == "cpu", name
    assert [servers.ggml_buf_kind(n) for n in ("ROCm0", "Vulkan0", "SYCL0", "CUDA0")] == ["rocm", "vulkan", "xpu", "cuda"]


VK_MAX = ("ggml_vulkan: 0 = AMD Radeon RX 7900 XTX (RADV NAVI31) | uma: 0 | fp16: 1\n"
          "Validation Error: [ VUID-VkBufferCreateInfo-size-06409 ] | MessageID = 0x5e2d4e3f | vkCreateBuffer(): "
          "pCreateInfo->size (4294967296) is larger than the maximum allowed buffer size "
          "VkPhysicalDeviceMaintenance4Properties.maxBufferSize (2147483648).\n"
          "load_tensors: ok\n"
          "ggml_vulkan: Device memory allocation of size 4294967296 failed.\n"
          "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
          "llama_model_load: error loading model: unable to allocate Vulkan0 buffer\n")


def test_vulkan_driver_line_and_the_ggml_failure_after_it_are_one_incident():
    r = engine.triage_text(VK_MAX)
    assert r["count"] == 1 and r["events"][0]["kind"] == "vulkan.max_buffer"
