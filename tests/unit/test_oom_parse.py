"""Each recogniser on the runtime's own message form, with its numbers in bytes."""
import pytest

from gpu_garden.memory.triage import parse as P
from gpu_garden.memory.triage import lines as L
from gpu_garden.memory.units import GiB, MiB, parse_size


def b(s):
    return parse_size(s, binary_decimal=True)


CASES = [
    # PyTorch caching allocator, current form (2.2+), with per-process report and private pools
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 546.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which "
     "514.19 MiB is free. Process 1234 has 2.00 GiB memory in use. Including non-PyTorch memory, this process has 13.25 GiB memory "
     "in use. Of the allocated memory 11.73 GiB is allocated by PyTorch, with 46.00 MiB allocated in private pools (e.g., CUDA "
     "Graphs), and 736.86 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
     "torch.cuda", "cuda", {"requested": b("546.00 MiB"), "total": b("15.77 GiB"), "free": b("514.19 MiB"),
                            "other_processes": b("2.00 GiB"), "this_process": b("13.25 GiB"), "allocated": b("11.73 GiB"),
                            "private_pools": b("46.00 MiB"), "reserved_unallocated": b("736.86 MiB")}),
    # 2.1 form with the "capacty" typo
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 14.00 MiB. GPU 0 has a total capacty of 4.00 GiB of which "
     "0 bytes is free. Of the allocated memory 3.41 GiB is allocated by PyTorch, and 65.23 MiB is reserved by PyTorch but "
     "unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.",
     "torch.cuda", "cuda", {"requested": 14 * MiB, "total": 4 * GiB, "free": 0, "allocated": b("3.41 GiB"),
                            "reserved_unallocated": b("65.23 MiB")}),
    # <= 2.0 form, with "allowed"
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 6.11 GiB already allocated; "
     "18.44 MiB free; 7.00 GiB allowed; 6.27 GiB reserved in total by PyTorch)",
     "torch.cuda", "cuda", {"requested": 20 * MiB, "total": b("7.93 GiB"), "allocated": b("6.11 GiB"), "free": b("18.44 MiB"),
                            "allowed": 7 * GiB, "reserved": b("6.27 GiB"), "reserved_unallocated": b("6.27 GiB") - b("6.11 GiB")}),
    # <= 1.4 form: "cached" is the unused part of the cache
    ("RuntimeError: CUDA out of memory. Tried to allocate 384.00 MiB (GPU 2; 10.73 GiB total capacity; 9.59 GiB already allocated; "
     "290.56 MiB free; 25.84 MiB cached)",
     "torch.cuda", "cuda", {"requested": 384 * MiB, "reserved_unallocated": b("25.84 MiB")}),
    # ROCm
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.25 GiB. GPU 0 has a total capacity of 7.98 GiB of which "
     "1.45 GiB is free. Of the allocated memory 5.91 GiB is allocated by PyTorch, and 237.18 MiB is reserved by PyTorch but "
     "unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True",
     "torch.hip", "rocm", {"requested": b("2.25 GiB"), "free": b("1.45 GiB")}),
    # XPU (with and without the free figure) and intel-extension-for-pytorch
    ("XPU out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 11.93 GiB of which 5.62 MiB is free. Of the "
     "allocated memory 10.43 GiB is allocated by PyTorch, and 94.57 MiB is reserved by PyTorch but unallocated. Please use "
     "`empty_cache` to release all unoccupied cached memory.",
     "torch.xpu", "xpu", {"requested": 20 * MiB, "total": b("11.93 GiB"), "free": b("5.62 MiB"), "allocated": b("10.43 GiB")}),
    ("XPU out of memory. Tried to allocate 128.00 GiB. GPU 0 has a total capacity of 15.56 GiB. Of the allocated memory 2.50 GiB "
     "is allocated by PyTorch, and 39.26 MiB is reserved by PyTorch but unallocated.",
     "torch.xpu", "xpu", {"requested": 128 * GiB, "total": b("15.56 GiB"), "allocated": b("2.50 GiB")}),
    ("XPU out of memory. Tried to allocate 5.12 GiB (GPU 0; 15.11 GiB total capacity; 13.40 GiB already allocated; 13.90 GiB "
     "reserved in total by PyTorch)", "torch.xpu", "xpu", {"requested": b("5.12 GiB"), "reserved": b("13.90 GiB")}),
    # MPS, with and without the watermark
    ("RuntimeError: MPS backend out of memory (MPS allocated: 17.68 GB, other allocations: 3.95 MB, max allowed: 18.13 GB). Tried "
     "to allocate 1024.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit",
     "torch.mps", "mps", {"allocated": b("17.68 GB"), "other_allocations": b("3.95 MB"), "max_allowed": b("18.13 GB"),
                          "requested": 1024 * MiB}),
    ("MPS backend out of memory (MPS allocated: 9.00 GiB, other allocations: 1.00 GiB). Tried to allocate 2.00 GiB on shared pool.",
     "torch.mps", "mps", {"allocated": 9 * GiB, "requested": 2 * GiB}),
    # CPU
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate "
     "5242880 bytes.", "torch.cpu", "cpu", {"requested": 5242880}),
    ("[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 238551040 "
     "bytes. Error code 12 (Cannot allocate memory)", "torch.cpu", "cpu", {"requested": 238551040}),
    ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array with shape (1024, 1024, 768) and data "
     "type float32", "python.memory_error", "cpu", {"requested": 3 * GiB}),
    ("MemoryError", "python.memory_error", "cpu", {}),
    # CUDA driver, cuBLAS, cuDNN, NVML
    ("RuntimeError: CUDA error: out of memory", "cuda.driver", "cuda", {}),
    ("RuntimeError: HIP error: out of memory", "cuda.driver", "rocm", {}),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cublas.alloc", "cuda", {}),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "cudnn.alloc", "cuda", {}),
    ("RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":830, please report a bug",
     "torch.nvml_assert", "cuda", {}),
    # ComfyUI and comfy-aimdo
    ("Got an OOM, unloading all loaded models.", "comfy.got_oom", None, {}),
    ("Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.", "comfy.vae_tiled_fallback", None, {}),
    ("Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding with tile size 512 and overlap 64.",
     "comfy.vae_tiled_fallback", None, {"tile_size": 512, "overlap": 64}),
    ("[ERROR] aimdo: src/model-vbar.c:399:ERROR:VRAM Allocation failed (non OOM)", "comfy.dynamic_vram", "cuda", {}),
    ("!!! Exception during processing !!! Fault failed: 2", "comfy.dynamic_vram", "cuda", {}),
    ("torch.OutOfMemoryError: Allocation on device ", "torch.cuda_async", "cuda", {}),
    # vLLM
    ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
     "vllm.no_kv_blocks", "cuda", {}),
    ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (7344).",
     "vllm.kv_max_len", "cuda", {"max_model_len_tokens": 32768, "kv_max_tokens": 7344}),
    ("ValueError: To serve at least one request with the models's max seq len (65536), (7.0 GiB KV cache is needed, which is larger "
     "than the available KV cache memory (2.39 GiB). Based on the available memory, the estimated maximum model length is 22336.",
     "vllm.kv_max_len", "cuda", {"max_model_len_tokens": 65536, "kv_needed": 7 * GiB, "kv_available": b("2.39 GiB"),
                                 "estimated_max_len_tokens": 22336}),
    ("ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU memory utilization (0.9, 71.24 GiB).",
     "vllm.startup_free", "cuda", {"free": b("59.32 GiB"), "total": b("79.15 GiB"), "gpu_memory_utilization_ratio": 0.9,
                                   "requested": b("71.24 GiB")}),
    ("ValueError: Error in memory profiling. Initial free memory 30.1 GiB, current free memory 31.5 GiB. This happens when other",
     "vllm.profile_race", "cuda", {"free_initial": b("30.1 GiB"), "free_current": b("31.5 GiB")}),
    # llama.cpp / ggml
    ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 10956.01 MiB on device 0: cudaMalloc failed: out of memory",
     "ggml.malloc", "cuda", {"requested": b("10956.01 MiB")}),
    ("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 9332334592", "ggml.buffer", None, {"requested": 9332334592}),
    ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504", "ggml.buffer", None,
     {"requested": 137438953504}),
    ("llama_kv_cache_init: failed to allocate buffer for kv cache", "ggml.kv_cache", None, {}),
    ("llama_new_context_with_model: failed to allocate compute buffers", "ggml.compute", None, {}),
    ("llama_model_load: error loading model: unable to allocate CUDA0 buffer", "ggml.model_load", None, {}),
    ("ggml_vulkan: Device memory allocation of size 1037832192 failed.", "ggml.vulkan", "vulkan", {"requested": 1037832192}),
    ("ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "ggml.vulkan", "vulkan", {}),
    ("ggml_aligned_malloc: insufficient memory (attempted to allocate 36000.00 MB)", "ggml.host", "cpu", {"requested": b("36000.00 MB")}),
    # Ollama
    ("Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)", "ollama.system_memory", "cpu",
     {"required": b("164.8 GiB"), "available": b("13.4 GiB")}),
    ("Error: llama runner process has terminated: cudaMalloc failed: out of memory", "ollama.runner", None, {}),
    ("llama-server reported out-of-memory during startup: failed to allocate compute buffers", "ollama.runner", None, {}),
]


@pytest.mark.parametrize("line,kind,device,numbers", CASES, ids=[c[1] + ":" + c[0][:40] for c in CASES])
def test_recognise(line, kind, device, numbers):
    ev = P.recognise(line)
    assert ev is not None, line
    assert ev["kind"] == kind
    if device:
        assert ev["device_kind"] == device
    for k, v in numbers.items():
        assert ev["numbers"].get(k) == v, k


def test_async_block_numbers():
    ev = P.recognise("Allocation on device 0 would exceed allowed memory. (out of memory)")
    assert ev["kind"] == "torch.cuda_async" and not ev["complete"]
    for line in ["Currently allocated     : 9.43 GiB", "Requested               : 640.00 MiB", "Device limit            : 11.59 GiB",
                 "Free (according to CUDA): 7.12 MiB", "PyTorch limit (set by user-supplied memory fraction)",
                 "                        : 17179869184.00 GiB"]:
        P.add_async_fields(ev, line)
    assert ev["complete"]
    # the message prints no card total: "Device limit" stays its own number (the Case decides whether it is the card)
    assert ev["numbers"] == {"allocated": b("9.43 GiB"), "requested": 640 * MiB, "device_limit": b("11.59 GiB"), "free": b("7.12 MiB"),
                             "limit": b("17179869184.00 GiB")}


@pytest.mark.parametrize("line", [
    "loss: 0.31, memory: 12.3 GiB", "Requested to load SDXL", "Prompt executed in 3.21 seconds",
    "mat1 and mat2 shapes cannot be multiplied (77x768 and 2048x320)", "Allocated memory: memory=6.429 GB", "",
    "torch.cuda.memory_summary()", "INFO 06-28 [gpu_worker.py:298] Available KV cache memory: 12.34 GiB",
    "except MemoryError as e:", "class MemoryErrorHandler:",
])
def test_not_an_error(line):
    assert P.recognise(line) is None


def test_clean_strips_ansi_cr_and_control_bytes():
    assert P.clean(b"\x1b[31mCUDA out of memory\x1b[0m\r\n") == "CUDA out of memory"
    assert P.clean("a\x00b\x07c") == "abc"
    assert P.clean(b"\xff\xfeok") == "\ufffd\ufffdok"


def test_size_units():
    assert P.size("0 bytes") == 0
    assert P.size("1.50 GiB") == int(1.5 * GiB)
    assert P.size("-1.05 GiB") == -int(round(1.05 * GiB))
    assert P.size("17.68 GB") == P.size("17.68 GiB")     # PyTorch's MPS messages say GB and mean GiB


def test_facts():
    got = dict(L.facts("Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync"))
    assert got["device"].group(3) == "cudaMallocAsync"
    assert "frame" in dict(L.facts('  File "/srv/ComfyUI/comfy/sd.py", line 640, in decode'))
    assert dict(L.facts("load_tensors:        CUDA0 model buffer size = 48928.09 MiB"))["ggml_model_buf"].group(2) == "48928.09"
