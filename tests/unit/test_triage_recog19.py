"""Every runtime's own out-of-memory messages, written from the strings its SOURCE prints (the file and function are named
per row; sizes and paths made up, never a corpus case or a user's prose), read whole and cut the ways users paste them:
the first line alone, the middle of the first line elided with "...", and wrapped at 80 columns. Each row says what the
message names: the runtime and the device kind (None: the message names no device). A row that needs its runtime's log
prefix carries the prefix the runtime itself prints (SGLang's "[date TP0]", Ollama's slog "level= source= msg=")."""
import textwrap

import pytest

from gpu_garden.memory.triage import engine

# (id, source, text, runtime, device kind)
MESSAGES = [
    # --- PyTorch ----------------------------------------------------------------------------------------------------
    ("torch-cuda", "c10/cuda/CUDACachingAllocator.cpp malloc (2.2+)",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB of "
     "which 3.06 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use. Of the allocated memory "
     "22.91 GiB is allocated by PyTorch, and 263.52 MiB is reserved by PyTorch but unallocated. If reserved but unallocated "
     "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
     "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n", "pytorch", "cuda"),
    ("torch-hip", "c10/cuda/CUDACachingAllocator.cpp hipified (ROCm builds)",
     "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB of which "
     "1.12 GiB is free. Of the allocated memory 20.61 GiB is allocated by PyTorch, and 1.83 GiB is reserved by PyTorch but "
     "unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to "
     "avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n",
     "pytorch", "rocm"),
    ("torch-cuda-old", "c10/cuda/CUDACachingAllocator.cpp (<= 2.0)",
     "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.76 GiB total capacity; 9.12 GiB already "
     "allocated; 301.56 MiB free; 9.33 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
     "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n",
     "pytorch", "cuda"),
    ("torch-xpu", "c10/xpu/XPUCachingAllocator.cpp malloc (2.7+, with the free figure)",
     "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.11 GiB of which "
     "1.00 GiB is free. Of the allocated memory 12.00 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but "
     "unallocated. Please use `empty_cache` to release all unoccupied cached memory.\n", "pytorch", "xpu"),
    ("torch-xpu-2.5", "c10/xpu/XPUCachingAllocator.cpp malloc (2.5, no free figure)",
     "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.11 GiB. Of the "
     "allocated memory 12.00 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated. Please use "
     "`empty_cache` to release all unoccupied cached memory.\n", "pytorch", "xpu"),
    ("torch-mps", "aten/src/ATen/mps/MPSAllocator.mm malloc",
     "RuntimeError: MPS backend out of memory (MPS allocated: 8.23 GiB, other allocations: 1.20 GiB, max allowed: 8.00 GiB). "
     "Tried to allocate 256.00 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
     "allocations (may cause system failure).\n", "pytorch", "mps"),
    ("torch-async", "c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync",
     "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
     "Currently allocated     : 22.11 GiB\nRequested               : 1.00 GiB\nDevice limit            : 23.99 GiB\n"
     "Free (according to CUDA): 0 bytes\nPyTorch limit (set by user-supplied memory fraction)\n"
     "                        : 17179869184.00 GiB\n", "comfyui", "cuda"),      # (alone: ComfyUI's default allocator, docs/triage.md)
    ("torch-accelerator", "c10/cuda/CUDAException.cpp c10_cuda_check_implementation (torch.AcceleratorError, 2.8+)",
     "torch.AcceleratorError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API "
     "call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
     "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n", "pytorch", "cuda"),
    ("torch-cpu-win", "c10/core/impl/alloc_cpu.cpp alloc_cpu (Windows: _aligned_malloc)",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you tried to allocate "
     "4294967296 bytes.\n", "pytorch", "cpu"),
    ("torch-cpu-posix", "c10/core/impl/alloc_cpu.cpp alloc_cpu (posix_memalign)",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to "
     "allocate 4294967296 bytes. Error code 12 (Cannot allocate memory)\n", "pytorch", "cpu"),
    ("torch-directml", "torch-directml's DML allocator",
     "RuntimeError: Could not allocate tensor with 471859200 bytes. There is not enough GPU video memory available!\n",
     "pytorch", "directml"),
    ("torch-npu", "torch_npu csrc/core/npu/NPUCachingAllocator.cpp malloc",
     "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity; 57.15 GiB already "
     "allocated; 57.15 GiB current active; 1.53 GiB free; 58.78 GiB reserved in total by PyTorch) If reserved memory is >> "
     "allocated memory try setting max_split_size_mb to avoid fragmentation.\n", "pytorch", "npu"),
    ("torch-musa", "torch_musa csrc/core/MUSACachingAllocator.cpp malloc",
     "torch.OutOfMemoryError: MUSA out of memory. Tried to allocate 896.00 MiB (GPU 0; 47.99 GiB total capacity; 45.20 GiB "
     "already allocated; 512.00 MiB free; 46.10 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory "
     "try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_MUSA_ALLOC_CONF\n",
     "pytorch", "musa"),
    # --- ggml / llama.cpp ---------------------------------------------------------------------------------------------
    ("ggml-cuda", "ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer; ggml-alloc.c ggml_gallocr_reserve_n",
     "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2304.00 MiB on device 0: cudaMalloc failed: out of memory\n"
     "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 2415919104\n"
     "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers\n", "llama.cpp", "cuda"),
    ("ggml-hip", "ggml-cuda.cu built for HIP (the format string names cudaMalloc; the buffer ROCm0)",
     "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory\n"
     "alloc_tensor_range: failed to allocate ROCm0 buffer of size 8589934592\n"
     "llama_model_load: error loading model: unable to allocate ROCm0 buffer\n", "llama.cpp", "rocm"),
    ("ggml-load", "llama-model.cpp load_tensors (unable to allocate <buft> buffer)",
     "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n"
     "llama_model_load_from_file_impl: failed to load model\n", "llama.cpp", "cuda"),
    ("ggml-kv", "llama-kv-cache.cpp (failed to allocate buffer for kv cache)",
     "llama_kv_cache_unified: failed to allocate buffer for kv cache\n"
     "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n", "llama.cpp", None),
    ("ggml-vulkan", "ggml-vulkan.cpp ggml_vk_create_buffer (catch vk::SystemError)",
     "ggml_vulkan: Device memory allocation of size 1037832192 failed.\n"
     "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
     "alloc_tensor_range: failed to allocate Vulkan0 buffer of size 1037832192\n", "llama.cpp", "vulkan"),
    ("ggml-vulkan-limit", "ggml-vulkan.cpp ggml_vk_create_buffer (over maxMemoryAllocationSize)",
     "ggml_vulkan: Device memory allocation of size 5368709120 failed.\n"
     "ggml_vulkan: Requested buffer size exceeds device memory allocation limit: ErrorOutOfDeviceMemory\n", "llama.cpp", "vulkan"),
    ("ggml-metal", "ggml-metal-device.m ggml_metal_buffer_init",
     "ggml_metal_buffer_init: error: failed to allocate buffer, size = 24576.00 MiB\n"
     "alloc_tensor_range: failed to allocate Metal buffer of size 25769803776\n", "llama.cpp", "metal"),
    ("ggml-metal-compute", "ggml-metal.m command buffer status (MTLCommandBufferStatusError)",
     "ggml_metal_graph_compute: command buffer 0 failed with status 5\n"
     "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n", "llama.cpp", "metal"),
    ("ggml-sycl", "ggml-sycl.cpp ggml_backend_sycl_buffer_type_alloc_buffer",
     "ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 8589934592 Bytes of memory on device\n"
     "alloc_tensor_range: failed to allocate SYCL0 buffer of size 8589934592\n", "llama.cpp", "xpu"),
    ("ggml-cann", "ggml-cann.cpp ggml_backend_cann_buffer_type_alloc_buffer",
     "ggml_backend_cann_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: aclrtMalloc failed: EL0004: The memory "
     "pool is insufficient.\nalloc_tensor_range: failed to allocate CANN0 buffer of size 8589934592\n", "llama.cpp", "npu"),
    ("ggml-opencl", "ggml-opencl.cpp CL_CHECK (-4: CL_MEM_OBJECT_ALLOCATION_FAILURE)",
     "ggml_opencl: clCreateBuffer(backend_ctx->context, CL_MEM_READ_WRITE, size, NULL, &err) error -4 at "
     "ggml/src/ggml-opencl/ggml-opencl.cpp:2816\n", "llama.cpp", None),
    ("ggml-host", "ggml.c ggml_aligned_malloc",
     "ggml_aligned_malloc: insufficient memory (attempted to allocate 24576.00 MB)\n", "llama.cpp", "cpu"),
    ("ggml-cuda-error", "ggml-cuda.cu ggml_cuda_error (CUDA_CHECK)",
     "CUDA error: out of memory\n  current device: 0, in function ggml_backend_cuda_buffer_set_tensor at ggml-cuda.cu:612\n"
     "  cudaMemcpyAsyncReserve(...)\n", "llama.cpp", "cuda"),
    # --- Ollama -------------------------------------------------------------------------------------------------------
    ("ollama-sysmem", "llm/server.go NewLlamaServer",
     "Error: model requires more system memory (12.3 GiB) than is available (8.0 GiB)\n", "ollama", "cpu"),
    ("ollama-runner", "llm/server.go (llama runner process has terminated)",
     'time=2025-06-01T10:00:00.000Z level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner '
     'process has terminated: cudaMalloc failed: out of memory"\n', "ollama", "cuda"),
    ("ollama-nomem", "ml/backend.go ErrNoMem.Error (the new engine's runner)",
     "panic: insufficient memory - required allocations: {InputWeights:550502400A CPU:{Name:CPU Weights:[0U] Cache:[0U] "
     "Graph:0U} GPUs:[{Name:CUDA0 Weights:[60561408A] Cache:[0U] Graph:1212612608F}]}\n", "ollama", "cuda"),
    ("ollama-load-failed", "llm/server.go initModel (0.15.3+)",
     "Error: 500 Internal Server Error: model failed to load, this may be due to resource limitations or an internal error, "
     "check ollama server logs for details\n", "ollama", None),
    # --- vLLM ---------------------------------------------------------------------------------------------------------
    ("vllm-noblocks", "v1/core/kv_cache_utils.py check_enough_kv_cache_memory",
     "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
     "engine.\n", "vllm", None),
    ("vllm-v0-len", "worker/worker.py raise_if_cache_size_invalid",
     "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache "
     "(20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n", "vllm", None),
    ("vllm-v1-len", "v1/core/kv_cache_utils.py check_enough_kv_cache_memory",
     "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is "
     "larger than the available KV cache memory (9.37 GiB). Based on the available memory, the estimated maximum model length "
     "is 76704. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n", "vllm", None),
    ("vllm-mamba", "config/compilation.py resolve_cudagraph_mode_and_sizes (hybrid models' state blocks)",
     "ValueError: max_num_seqs (256) exceeds available Mamba cache blocks (196)\n", "vllm", None),   # (its first sentence, as quoted)
    ("vllm-startup", "v1/worker/gpu_worker.py init_device",
     "ValueError: Free memory on device (12.3/23.6 GiB) on startup is less than desired GPU memory utilization (0.9, 21.24 "
     "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n", "vllm", None),
    ("vllm-warmup", "v1/worker/gpu_model_runner.py _dummy_sampler_run",
     "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests. Please try lowering "
     "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n", "vllm", None),
    ("vllm-graph", "v1/worker/gpu_model_runner.py capture_model (an OOM under its capture lines)",
     "(EngineCore_DP0 pid=812) INFO 06-01 10:00:00 [gpu_model_runner.py:3480] Capturing CUDA graphs (mixed prefill-decode, "
     "PIECEWISE): 45%\n(EngineCore_DP0 pid=812) ERROR 06-01 10:00:01 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. "
     "Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 23.57 GiB of which 40.25 MiB is free.\n", "vllm", "cuda"),
    # --- SGLang -------------------------------------------------------------------------------------------------------
    ("sglang-pool", "srt/model_executor/model_runner.py init_memory_pool",
     "[2025-06-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
     "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n", "sglang", None),
    ("sglang-prefill", "srt/mem_cache/common.py alloc_token_slots",
     "[2025-06-01 10:00:00 TP0] Prefill out of memory. Try to lower your batch size.\n", "sglang", None),
    ("sglang-graph", "srt/model_executor/cuda_graph_runner.py CudaGraphRunner.__init__",
     "[2025-06-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
     "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
     "79.10 GiB of which 1.02 GiB is free.\nPossible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or "
     "0.7)\n2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n", "sglang", "cuda"),
    # --- MLX ----------------------------------------------------------------------------------------------------------
    ("mlx-malloc", "mlx/backend/metal/allocator.cpp MetalAllocator::malloc",
     "[metal::malloc] Attempting to allocate 137438953472 bytes which is greater than the maximum allowed buffer size of "
     "77309411328 bytes.\n", "mlx", "metal"),
    ("mlx-limit", "mlx/backend/metal/allocator.cpp MetalAllocator::malloc (resource limit)",
     "[metal::malloc] Resource limit (499000) exceeded.\n", "mlx", "metal"),
    ("mlx-cmdbuf", "mlx/backend/metal/device.cpp check_error",
     "[METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n",
     "mlx", "metal"),
    # --- JAX / XLA, TensorFlow -------------------------------------------------------------------------------------------
    ("xla-gpu", "xla/pjrt/gpu (BFC allocator under PJRT)",
     "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.\n",
     "jax", None),
    ("xla-tpu-compile", "XLA:TPU compiler (hbm)",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. "
     "Used 17.52G of 15.48G hbm. Exceeded hbm capacity by 2.04G.\n", "jax", "tpu"),
    ("tf-bfc", "tensorflow/core/common_runtime/bfc_allocator.cc AllocateRawInternal",
     "W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
     "1.00GiB (rounded to 1073741824)requested by op MatMul\n", "tensorflow", None),
    ("tf-oom", "tensorflow/core/framework/op_kernel.cc (OOM when allocating tensor)",
     "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024,256] "
     "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n", "tensorflow", None),
    # --- ONNX Runtime, TensorRT, CTranslate2, candle ------------------------------------------------------------------
    ("ort-bfc", "onnxruntime/core/framework/bfc_arena.cc AllocateRawInternal",
     "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero "
     "status code returned while running Conv node. Name:'Conv_12' Status Message: /onnxruntime_src/onnxruntime/core/framework/"
     "bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
     "onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 1073741824\n", "onnxruntime", None),
    ("ort-cuda", "onnxruntime/core/providers/cuda/cuda_call.cc CudaCall",
     "[E:onnxruntime:Default, cuda_call.cc:123 CudaCall] CUDA failure 2: out of memory ; GPU=0 ; hostname=host ; "
     "file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)&p, size);\n",
     "onnxruntime", "cuda"),
    ("trt-oom", "TensorRT's builder/runtime logger (Error Code 2: OutOfMemory)",
     "[TRT] [E] 2: [executionContext.cpp::ExecutionContext::410] Error Code 2: OutOfMemory (no further information)\n",
     "tensorrt", None),
    ("trt-runtime", "TensorRT's default allocator through its Python logger ([TRT] [E])",
     "[06/01/2025-10:00:00] [TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)\n",
     "tensorrt", "cuda"),
    ("ct2", "ctranslate2 src/cuda/utils.h CUDA_CHECK",
     "RuntimeError: CUDA failed with error out of memory\n", "ctranslate2", "cuda"),
    ("candle", "cudarc DriverError (candle, mistral.rs)",
     'Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")\n', "candle", "cuda"),
]

# the words each message is known by: a quote keeps the line that holds them
KEYS = {
    "torch-cuda": "CUDA out of memory", "torch-hip": "HIP out of memory", "torch-cuda-old": "CUDA out of memory",
    "torch-xpu": "XPU out of memory", "torch-xpu-2.5": "XPU out of memory", "torch-mps": "MPS backend out of memory",
    "torch-async": "would exceed allowed memory", "torch-accelerator": "CUDA error: out of memory",
    "torch-cpu-win": "DefaultCPUAllocator: not enough memory", "torch-cpu-posix": "DefaultCPUAllocator: can't allocate memory",
    "torch-directml": "Could not allocate tensor with", "torch-npu": "NPU out of memory", "torch-musa": "MUSA out of memory",
    "ggml-cuda": "cudaMalloc failed: out of memory", "ggml-hip": "cudaMalloc failed: out of memory",
    "ggml-load": "unable to allocate CUDA0 buffer", "ggml-kv": "failed to allocate buffer for kv cache",
    "ggml-vulkan": "Device memory allocation of size", "ggml-vulkan-limit": "Device memory allocation of size",
    "ggml-metal": "failed to allocate buffer, size =", "ggml-metal-compute": "failed with status 5",
    "ggml-sycl": "can't allocate", "ggml-opencl": " error -4 at ", "vllm-mamba": "exceeds available Mamba cache blocks",
    "trt-runtime": "Error Code 1: Cuda Runtime (out of memory)", "ggml-cann": "aclrtMalloc failed", "ggml-host": "ggml_aligned_malloc: insufficient memory",
    "ggml-cuda-error": "CUDA error: out of memory", "ollama-sysmem": "model requires more system memory",
    "ollama-runner": "llama runner process has terminated", "ollama-nomem": "insufficient memory - required allocations",
    "ollama-load-failed": "model failed to load, this may be due to resource limitations",
    "vllm-noblocks": "No available memory for the cache blocks", "vllm-v0-len": "is larger than the maximum number of tokens",
    "vllm-v1-len": "KV cache is needed, which is larger than the available KV cache memory",
    "vllm-startup": "on startup is less than desired GPU memory utilization", "vllm-warmup": "occurred when warming up sampler",
    "vllm-graph": "CUDA out of memory", "sglang-pool": "Not enough memory. Please try to increase --mem-fraction-static",
    "sglang-prefill": "Prefill out of memory", "sglang-graph": "Capture cuda graph failed",
    "mlx-malloc": "Attempting to allocate", "mlx-limit": "Resource limit", "mlx-cmdbuf": "Insufficient Memory",
    "xla-gpu": "Out of memory while trying to allocate", "xla-tpu-compile": "Ran out of memory in memory space hbm",
    "tf-bfc": "ran out of memory trying to allocate", "tf-oom": "OOM when allocating tensor",
    "ort-bfc": "Failed to allocate memory for requested buffer", "ort-cuda": "CUDA failure 2: out of memory",
    "trt-oom": "Error Code 2: OutOfMemory", "ct2": "CUDA failed with error out of memory", "candle": "CUDA_ERROR_OUT_OF_MEMORY",
}

# quotes cut as users cut them, with what they still name (the MPS one: the middle elided as a reader quoted it)
QUOTES = [
    ("mps-elided", "MPS backend out of memory (MPS allocated: 8.23 GiB ... max allowed: 8.00 GiB)\n", "pytorch", "mps"),
    ("mps-elided-unicode", "RuntimeError: MPS backend out of memory (MPS allocated: 17.02 GiB\u2026 max allowed: 18.13 GiB)\n",
     "pytorch", "mps"),
    ("sglang-graph-alone", "Exception: Capture cuda graph failed: CUDA out of memory.\n", "sglang", "cuda"),
    ("ollama-relay-rocm", "Error: 500 an error was encountered while running the model: ROCm error\n ROCm error: out of memory\n",
     "ollama", "rocm"),
    ("sglang-frame", 'File "/sgl-workspace/aiter/aiter/fused_moe.py", line 88, in fused_moe\n'
     "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 191.98 GiB of which "
     "100.00 MiB is free.\n", "sglang", "rocm"),
    ("ggml-opencl-host", "ggml_opencl: clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, size, data, 0, NULL, NULL) error -6 at "
     "ggml/src/ggml-opencl/ggml-opencl.cpp:3120\n", "llama.cpp", "cpu"),      # -6: CL_OUT_OF_HOST_MEMORY
    ("ggml-cann-buffer", "alloc_tensor_range: failed to allocate CANN0 buffer of size 8589934592\n", "llama.cpp", "npu"),
    ("ggml-cann-alone", "ggml_backend_cann_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: aclrtMalloc failed: "
     "EL0004: The memory pool is insufficient.\n", "llama.cpp", "npu"),
]


# messages whose first line alone names no runtime (ggml's CUDA_CHECK prints the CUDA runtime's string first, as PyTorch's
# does; the function on the next line is ggml's): cut there, only their recognition is checked
HEAD_NAMES_NO_RUNTIME = {"ggml-cuda-error"}


def _event(text):
    res = engine.triage_text(text)
    return res["events"][-1] if res["found"] else None


def _head(rid, text):
    """The lines up to the one holding the message's words, and that line's index."""
    lines = text.rstrip("\n").split("\n")
    i = next(i for i, line in enumerate(lines) if KEYS[rid] in line)
    return lines[:i + 1], i


def _first_line(rid, text):
    lines, _ = _head(rid, text)
    return "\n".join(lines) + "\n"


def _elided(rid, text):
    # the message's line with its middle elided ("..."): its words and what follows them for a clause, then its end
    lines, i = _head(rid, text)
    line = lines[i]
    keep = line.index(KEYS[rid]) + len(KEYS[rid])
    rest = line[keep:]
    if len(rest) < 60:
        return None
    cut = rest[:24].rfind(" ")
    tail = rest[-24:]
    tail = tail[tail.find(" ") + 1:] if " " in tail else tail
    return "\n".join(lines[:i] + [line[:keep] + rest[:max(cut, 0)] + " ... " + tail]) + "\n"


def _wrapped(rid, text):
    return "".join(textwrap.fill(line, 80, break_long_words=False, break_on_hyphens=False) + "\n" if line.strip() else "\n"
                   for line in text.rstrip("\n").split("\n"))


def test_every_message_has_its_words():
    assert {m[0] for m in MESSAGES} == set(KEYS)
    for rid, _, text, _, _ in MESSAGES:
        assert KEYS[rid] in text, rid


@pytest.mark.parametrize("rid,source,text,runtime,device", MESSAGES, ids=[m[0] for m in MESSAGES])
def test_source_message_is_read_with_its_runtime_and_device(rid, source, text, runtime, device):
    ev = _event(text)
    assert ev is not None, f"{rid} ({source}) not recognised"
    assert ev["runtime"] == runtime, (rid, ev["runtime"], ev["kind"])
    if device:
        assert ev.get("device_kind") == device, (rid, ev.get("device_kind"), ev["kind"])


CUT_FORMS = {"first_line": _first_line, "elided": _elided, "wrapped": _wrapped}
# each message cut each way that leaves a different text: "elided" only where the line goes on for a clause after the
# message's words (_elided returns None otherwise), so every parameter runs and none skips
CUTS = [(m, cut) for cut in CUT_FORMS for m in MESSAGES if CUT_FORMS[cut](m[0], m[2]) is not None]


def test_cuts_cover_every_message_and_some_elided():
    assert {m[0] for m, cut in CUTS if cut == "first_line"} == {m[0] for m in MESSAGES}
    assert {m[0] for m, cut in CUTS if cut == "wrapped"} == {m[0] for m in MESSAGES}
    assert sum(1 for _, cut in CUTS if cut == "elided") >= 10


@pytest.mark.parametrize("rid,source,text,runtime,device,cut", [(*m, c) for m, c in CUTS], ids=[f"{m[0]}-{c}" for m, c in CUTS])
def test_cut_message_is_still_an_oom_of_its_runtime(rid, source, text, runtime, device, cut):
    t = CUT_FORMS[cut](rid, text)
    ev = _event(t)
    assert ev is not None, f"{rid} cut ({cut}) not recognised: {t!r}"
    if not (cut == "first_line" and rid in HEAD_NAMES_NO_RUNTIME):
        assert ev["runtime"] == runtime, (rid, cut, ev["runtime"], ev["kind"], t)


@pytest.mark.parametrize("rid,text,runtime,device", QUOTES, ids=[q[0] for q in QUOTES])
def test_quoted_cut_is_read_with_its_runtime_and_device(rid, text, runtime, device):
    ev = _event(text)
    assert ev is not None, f"{rid} not recognised"
    assert (ev["runtime"], ev.get("device_kind")) == (runtime, device), (rid, ev["runtime"], ev.get("device_kind"), ev["kind"])


def test_sglang_capture_failure_is_graph_capture():
    """SGLang's CudaGraphRunner wraps the capture's error as "Capture cuda graph failed: <error>": the OOM happened while the
    CUDA graphs were captured (srt/model_executor/cuda_graph_runner.py), whatever the error's own words say."""
    res = engine.triage_text("Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                             "total capacity of 139.81 GiB of which 1.10 GiB is free.\n")
    assert res["cause"] == "graph-capture", res["events"][-1]["causes"]


def test_musa_message_reads_its_figures():
    """torch_musa's caching allocator prints PyTorch's <= 2.0 form with MUSA for CUDA: read as that form, with the card's
    total, what is free and what PyTorch holds (figures of the MUSA row above, by hand)."""
    ev = _event(dict((m[0], m[2]) for m in MESSAGES)["torch-musa"])
    GiB, MiB = 1 << 30, 1 << 20
    n = ev["numbers"]
    assert (ev["device_kind"], ev.get("form")) == ("musa", "<=2.0"), ev
    assert (n["requested"], n["total"], n["free"], n["reserved"]) == (896 * MiB, round(47.99 * GiB), 512 * MiB, round(46.10 * GiB)), n


@pytest.mark.parametrize("rid", ["vllm-mamba", "ggml-opencl", "ggml-cann"])
def test_message_after_the_logs_head_is_found(rid):
    """After the log's first 512 KiB the scanner looks only for its error words: each message is still found there."""
    text = dict((m[0], m[2]) for m in MESSAGES)[rid]
    ev = _event("INFO step done, all fine\n" * 30000 + text)
    assert ev is not None and ev["runtime"] == dict((m[0], m[3]) for m in MESSAGES)[rid], rid
