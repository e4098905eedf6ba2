"""Task tri64 (issue 14, the kv-cache class): ggml-alloc's refusal of a buffer of the KV cache's shape, quoted without its
function name, or of the plain CPU buffer type. Lines written from ggml-alloc's own format ("failed to allocate %s buffer of
size %zu", ggml/src/ggml-alloc.c) and ggml_vulkan's; sizes by hand from llama.cpp's cache layout (layers x cells x K/V width x
2 for K and V x bytes), none taken from a corpus file."""
from support.triage_event import top

MiB = 2 ** 20
# 36 layers x 16384 cells x (8 KV heads x 128) x K,V x 2 bytes (f16) = 2304 MiB, 18 x 128 MiB
DEVICE_KV = 36 * 16384 * 8 * 128 * 2 * 2
# 28 layers x 32768 cells x (8 x 128) x K,V x 2 bytes = 3584 MiB, 28 x 128 MiB: the cache on the CPU backend
CPU_KV = 28 * 32768 * 8 * 128 * 2 * 2


def test_hand_sizes():
    assert DEVICE_KV == 2304 * MiB and CPU_KV == 3584 * MiB


def test_a_quoted_refusal_without_its_function_name_of_the_kv_shape_is_the_kv_cache():
    """A quote that drops "alloc_tensor_range: " keeps the buffer type and size; the size is the cache's shape."""
    cause, _, ev = top(f"failed to allocate CUDA0 buffer of size {DEVICE_KV}\n")
    assert cause == "kv-cache", ev["causes"]
    assert any("multiple of 128 MiB" in e for e in ev["causes"][0]["evidence"]), ev["causes"]
    # a weights-sized buffer (norm vectors of KiBs in the sum) is no such multiple and stays what it was
    cause, conf, ev = top(f"failed to allocate CUDA0 buffer of size {DEVICE_KV + 36 * 4096 * 4}\n")
    assert cause != "kv-cache" and "kv-cache" not in conf, ev["causes"]


def test_the_plain_cpu_buffer_type_of_the_kv_shape_is_the_kv_cache_in_system_ram():
    """llama_kv_cache takes ggml_backend_cpu_buffer_type() for a layer it does not offload: the cache in RAM is kv-cache (R14)."""
    cause, _, ev = top(f"failed to allocate CPU buffer of size {CPU_KV}\n")
    assert cause == "kv-cache", ev["causes"]
    cause, _, ev = top(f"alloc_tensor_range: failed to allocate CPU buffer of size {CPU_KV}\n")
    assert cause == "kv-cache", ev["causes"]
    # not that shape: a CPU buffer is system RAM, as before
    cause, _, ev = top(f"failed to allocate CPU buffer of size {CPU_KV + 28 * 3072 * 4}\n")
    assert cause == "host-ram", ev["causes"]


def test_a_pinned_host_buffer_or_vulkans_own_allocation_line_is_not_read_by_its_size():
    """A backend's pinned host buffer never holds the cache; ggml_vulkan's allocation line also backs its working buffers."""
    cause, _, ev = top(f"failed to allocate CUDA_Host buffer of size {CPU_KV}\n")
    assert cause == "host-ram", ev["causes"]
    cause, conf, ev = top(f"ggml_vulkan: Device memory allocation of size {DEVICE_KV} failed.\n"
                          "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert cause != "kv-cache", ev["causes"]


def _ollama_estimate(kv):
    # Ollama's scheduler line (llm/memory.go "offload to"), its KV estimate for the whole context as it prints it
    return ('time=2025-06-01T10:00:00.000Z level=INFO source=memory.go:326 msg="offload to cpu" layers.requested=-1 '
            'layers.model=29 layers.offload=0 layers.split="" memory.available="[30.0 GiB]" memory.gpu_overhead="0 B" '
            f'memory.required.full="6.0 GiB" memory.required.partial="0 B" memory.required.kv="{kv}"\n')


def test_a_buffer_over_the_kv_size_the_log_gives_is_not_the_cache():
    """Where Ollama's estimate prints the whole cache's size, a refused buffer over it (beyond its one-decimal rounding) is
    not the cache, whatever its shape; one within it is."""
    line = f"alloc_tensor_range: failed to allocate CPU buffer of size {CPU_KV}\n"      # 3.50 GiB
    cause, _, ev = top(_ollama_estimate("1.2 GiB") + line)
    assert cause == "host-ram", ev["causes"]
    cause, _, ev = top(_ollama_estimate("3.5 GiB") + line)
    assert cause == "kv-cache", ev["causes"]
