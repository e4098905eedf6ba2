"""Recognise out-of-memory and allocation-failure lines from PyTorch, ComfyUI, vLLM, llama.cpp and
Ollama, and pull their numbers out as bytes.

Two kinds of line matter: *errors* (a failed allocation, with the runtime's own numbers) and *facts*
(context a diagnosis needs: the model being loaded, the allocator backend, vLLM's KV budget,
llama.cpp's buffer sizes). Every recogniser works on one cleaned line; multi-line messages
(cudaMallocAsync's block, wrapped copies) are stitched together by the scanner (scan.py).

The exact strings come from the runtimes' sources (see the comments per pattern).
"""
import re

from .other_patterns import METAL_CREATE as _METAL_CREATE   # (round 102)
from .other_patterns import OMLX_SAFETY as _OMLX_SAFETY   # (tri50) oMLX's preflight safety cap
from .other_runtimes import (DRIVER_API as _DRIVER_API, GGML_CUDA_OLD as _GGML_CUDA_OLD, METAL as _METAL,
                             ENOMEM as _ENOMEM, MPS_BUFFER as _MPS_BUFFER, MPS_NDARRAY as _MPS_NDARRAY, MPSGRAPH_INT_MAX as _MPSGRAPH_INT_MAX,
                             NCCL_SHM as _NCCL_SHM, ARROW_ALLOC as _ARROW_ALLOC, TRITON_PB_SHM as _TRITON_PB_SHM,
                             TRITON_SMEM as _TRITON_SMEM, OLLAMA_LAYOUT as _OLLAMA_LAYOUT, OPENCL as _OPENCL,
                             PAGING as _PAGING, LOW_VIRTUAL_MEMORY as _LOW_VIRTUAL_MEMORY, SWARM_RAM as _SWARM_RAM, FLASHINFER_WS as _FLASHINFER_WS, ENOKI_MALLOC as _ENOKI_MALLOC, TURBOMIND as _TURBOMIND,
                             GGML_CUDA_CODE as _GGML_CUDA_CODE, ELECTRON_OOM as _ELECTRON_OOM, OMLX_CEILING as _OMLX_CEILING, OMLX_PREFLIGHT as _OMLX_PREFLIGHT, OMLX_ADMIT as _OMLX_ADMIT, VLLMRS_KV as _VLLMRS_KV, VULKAN_LIMIT as _VULKAN_LIMIT, VULKAN_MAX_BUFFER as _VULKAN_MAX_BUFFER, METAL_VALIDATION as _METAL_VALIDATION, WSL_RESIDENT as _WSL_RESIDENT, CUDA_NOT_READY as _CUDA_NOT_READY, AMDGPU_CS as _AMDGPU_CS, level_zero as _level_zero,
                             onnx as _onnx, xla as _xla, xla_tpu as _xla_tpu, xla_remat as _xla_remat, xla_tpu_exceed as _xla_tpu_exceed, xla_tpu_hbm as _xla_tpu_hbm, xla_fft_plan as _xla_fft_plan, tf_recv_alloc as _tf_recv_alloc,
                             mlx_malloc as _mlx_malloc, bfc as _bfc, ollama_too_large as _ollama_too_large,
                             TENSORRT as _TENSORRT, HF_DISPATCH as _HF_DISPATCH, TGI_PREFILL as _TGI_PREFILL, EXL_SPLIT as _EXL_SPLIT, SGLANG_UNBALANCED as _SGLANG_UNBALANCED,
                             BAD_ALLOC as _BAD_ALLOC, DML_HRESULT as _DML_HRESULT,
                             npu as _npu, paddle as _paddle, cupy as _cupy, rmm as _rmm,
                             OPENVINO as _OPENVINO, stream_executor as _stream_executor, cuda_call as _cuda_call, ds4 as _ds4, tt_metal as _tt_metal,
                             lmstudio as _lmstudio, mlx_load_preflight as _mlx_load_preflight, app_vram_preflight as _app_vram_preflight, studio_host_guard as _studio_host_guard, iree_alloc as _iree_alloc, WGPU as _WGPU, ollama_fit as _ollama_fit,
                             ggml_sycl as _ggml_sycl, ncnn_vk as _ncnn_vk, kit_vk as _kit_vk, dotnet as _dotnet, libplacebo as _libplacebo)
from .other_runtimes import ollama_graph_over as _ollama_graph_over     # (round 106)
from .xla_runtimes import xla_constant as _xla_constant     # (round 110)
from .torch_sentences import torch_sentences as _torch_sentences     # (none51)
from .kernel_limits import metal_threadgroup as _metal_threadgroup     # (round 110)
from .native_runtimes import (amrex_gpu as _amrex_gpu, hip_trace as _hip_trace, catboost_pool as _catboost_pool,
                              faiss_alloc as _faiss_alloc, gunrock_alloc as _gunrock_alloc,
                              physx_capacity as _physx_capacity, kmcuda_alloc as _kmcuda_alloc, cudf_java as _cudf_java, rapids_rmm_init as _rapids_rmm_init,
                              spark_device_alloc as _spark_device_alloc, mlc_insufficient as _mlc_insufficient,
                              hip_vmm as _hip_vmm, jvm_heap as _jvm_heap, apusys_alloc as _apusys_alloc, dataloader_shm as _dataloader_shm, CANN_RTMALLOC as _CANN_RTMALLOC,
                              tfjs_texture as _tfjs_texture, mnn_acquire as _mnn_acquire, js_array_buffer as _js_array_buffer,
                              webgpu_lost as _webgpu_lost, WEBGPU_MAX_BUFFER as _WEBGPU_MAX_BUFFER, rknn_alloc as _rknn_alloc, lmcache_alloc as _lmcache_alloc,
                              cuda_invalid_arg as _cuda_invalid_arg)
# (round 88) ONNX Runtime's arena at its limit, PaddlePaddle's host allocator and CUDA check, TensorRT's "Cuda Runtime", Isaac Gym's check
from .other_patterns import (ONNX_ARENA_LIMIT as _ONNX_ARENA_LIMIT, PADDLE_HOST as _PADDLE_HOST, PADDLE_CUDA as _PADDLE_CUDA,
                             TRT_CUDA_RUNTIME as _TRT_CUDA_RUNTIME, GYM_CUDA as _GYM_CUDA,
                             TENSORVIEW_CUDA as _TENSORVIEW_CUDA,     # (round 90) spconv's / cumm's tensorview CUDA check
                             CUDA_SAFE_CALL as _CUDA_SAFE_CALL, COLMAP_SIFT_MATCH as _COLMAP_SIFT_MATCH,     # (round 91)
                             VTK_GL_OOM as _VTK_GL_OOM, FACESWAP_TRAIN_OOM as _FACESWAP_TRAIN_OOM,     # (tri63)
                             CUDA_BARE_CODE as _CUDA_BARE_CODE, HIP_BARE_CODE as _HIP_BARE_CODE,     # (tri69, tri70)
                             NCCL_CUDA_CHECK as _NCCL_CUDA_CHECK, PYCUDA_MEM as _PYCUDA_MEM, ROCR_BLOCK_ALLOC as _ROCR_BLOCK_ALLOC,     # (round 92)
                             CAFFE_HOST as _CAFFE_HOST,     # (round 112) a CPU_ONLY Caffe's host malloc refused
                             KENLM_MALLOC as _KENLM_MALLOC,     # (round 118) KenLM's MallocException
                             THEANO_ALLOC as _THEANO_ALLOC, RENDER_OOM as _RENDER_OOM, PAGING_LOCALIZED as _PAGING_LOCALIZED,     # (round 93)
                             KALDI_ALLOC as _KALDI_ALLOC, DARKNET_CUDA as _DARKNET_CUDA,     # (round 94)
                             JAVACPP_PHYSICAL as _JAVACPP_PHYSICAL, REPLAY_BUFFER_RAM as _REPLAY_BUFFER_RAM,
                             LLAMA_KV_SLOT as _LLAMA_KV_SLOT)     # (round 95)
from . import error_patterns as RX
from . import aimdo_forms as AF
from .check_readers import _aimdo_cuda, _caffe_cuda, _driver, _ggml_opencl, _hami, _marian_cuda, _vllm_cumem
from .servers import (BLOCK_KINDS, add_block_fields, vllm_metal_kv as _vllm_metal_kv, _ds4_guard, _ggml_buffer, _ggml_load, _ggml_ctx_pool, _ollama_runner, _sglang_kv, _trtllm,
                      _vllm_startup, _vllm_v1, _vllm_cpu_node)
from .text import attempt, clean, num, size  # noqa: F401  (re-exported: scan, window and facts read P.clean and P.size)
from .lines import ERROR_KEYS, RECOGNISE_WORDS
from .host_readers import _earlyoom, _kernel_died, _killed, _py_memory, _vhs_ram, _workers_dead
from .native_abort import _native_abort
from .prefilter import _gate, _prefilter
from .ray_oom import _ray_oom
from .bare_words import _bare_words     # (tri85)
from .torch_readers import (_torch_alloc_warn, _torch_new, _torch_old, _xpu_old, _torch_lower, _torch_no_prefix, _torch_bare,  # noqa: F401
                            _torch_capacity_open, _torch_bracket_open,
                            _async, _async_cut, add_async_fields, _mps)  # (add_async_fields: scan reads P.add_async_fields)


# --- errors -------------------------------------------------------------------------------------
# Each recogniser returns None or a dict: kind, runtime, device_kind, numbers (bytes unless the key
# says tokens/ratio), and optional "needs_block" (the numbers follow on the next lines). PyTorch's own messages are read
# in torch_readers.py, native libraries' one-line error checks in check_readers.py.


def _simple(rx, kind, device_kind, runtime, numbers=None, keys=None, **extra):
    """A recogniser for one regex. `keys`: substrings one of which every match holds; a line without any
    costs a few substring tests instead of a regex scan (what keeps a megabyte message cheap)."""
    def rec(line):
        if keys is not None and not any(k in line for k in keys):
            return None
        m = rx.search(line)
        if not m:
            return None
        ev = {"kind": kind, "device_kind": device_kind, "numbers": numbers(m) if numbers else {}, "runtime": runtime,
              "complete": True}
        ev.update(extra)
        return ev
    rec.needed = keys or (rx,)
    return rec


def _omlx_preflight(line):
    """oMLX's prefill estimate refused (OMLX_PREFLIGHT): peak, current, KV+SDPA and the binding ceiling as printed, the binding's
    name ("static", "dynamic", "metal_cap", joined by "/"; "effective" or none), the limit its advice names (pinned custom
    ceiling, Metal's wired cap, or the static cap) as `limit`, and what it calls reclaimable as `free`."""
    if "Prefill would require" not in line:
        return None
    m = _OMLX_PREFLIGHT.search(line)
    if not m:
        return None
    n = {"required": size(m.group(1)), "allocated": size(m.group(2)), "requested": size(m.group(3)), "max_allowed": size(m.group(5))}
    if m.group(6):
        n["limit"] = size(m.group(6))
    if m.group(7):
        n["free"] = size(m.group(7))
    return {"kind": "mlx.ceiling", "device_kind": "metal", "numbers": n, "runtime": "mlx", "complete": True, "form": "preflight",
            "binding": m.group(4).strip() or None}


_omlx_preflight.needed = ("Prefill would require",)


@_gate(RX.GENERIC_OOM, RX.GENERIC_TAIL)
def _generic(line):
    """The last recogniser: an error line in the words any runtime uses, when no runtime's own form matched."""
    if (RX.GENERIC_HEAD.match(line) and RX.GENERIC_OOM.search(line) or RX.GENERIC_TAIL.search(line)) and not RX.GENERIC_NOT.search(line):
        return {"kind": "generic.oom", "device_kind": None, "numbers": {}, "runtime": None, "complete": True}
    return None


def _ollama_runner_gone(line):
    """Ollama's runner wrapper; "process no longer running" counts only when the runner's last error, which it quotes, is an
    OOM, and that error's numbers and device are the event's."""
    ev = _ollama_runner(line)
    if ev and ev.get("form") == "gone":
        sub = recognise(ev["inner"]) if ev["inner"] else None
        if not sub:
            return None
        ev.update(numbers=dict(sub.get("numbers") or {}), device_kind=sub.get("device_kind"))
    return ev


RECOGNISERS = [
    _torch_new, _torch_old, _xpu_old, _torch_lower, _torch_no_prefix, _torch_capacity_open, _torch_bracket_open, _async, _async_cut, _mps, _npu, _paddle, _torch_alloc_warn,
    _simple(RX.CPU, "torch.cpu", "cpu", "pytorch", lambda m: {"requested": int(m.group(1))} if m.group(1)
            else {"requested": int(m.group(2)) * 1024 ** 3} if m.group(2) and int(m.group(2)) else {}),
    # (fix66d) comfy-aimdo's model-file mapping and its VBAR's own range, each by its form (aimdo_forms.py says what each is)
    _simple(AF.MODEL_MMAP, "comfy.dynamic_vram", None, "comfyui", keys=("ModelMMAP",), form="model_mmap"),
    _simple(AF.VBAR_OOM, "comfy.dynamic_vram", "cuda", "comfyui", keys=("VBAR OOM",), form="vbar_oom"),
    _simple(RX.AIMDO, "comfy.dynamic_vram", "cuda", "comfyui", lambda m: {"requested": int(m.group(1))} if m.group(1) else {},
            keys=("VRAM ", "Fault failed", "aimdo", "VBAR", "Virtual Address")),
    _simple(RX.COMFY_COMPILER, "comfy.compiler", "cuda", "comfyui", keys=("memory compile error",)),
    _aimdo_cuda,
    _simple(_ENOMEM, "os.enomem", None, "pytorch", lambda m: {"requested": int(m.group(1))} if m.group(1) else {},
            keys=("unable to mmap", "Errno 12", "os error 12")),
    # (round 85) its numbers named as the corpus reads a per-allocation cap (requested, max_allowed; were shared_memory_required,
    # shared_memory_limit), and Inductor's "No valid triton configs" form
    _simple(_TRITON_SMEM, "triton.shared_memory", "cuda", "pytorch",
            lambda m: {"requested": int(m.group(1) or m.group(3)), "max_allowed": int(m.group(2) or m.group(4))},
            keys=("out of resource", "No valid triton configs")),
    _metal_threadgroup,     # (round 110) Metal's "Threadgroup memory size (N) exceeds the maximum threadgroup memory allowed (M)"
    _simple(_MPS_NDARRAY, "mps.ndarray_limit", "mps", "pytorch", keys=("NDArray",)),
    _simple(_MPSGRAPH_INT_MAX, "mps.int_max_dims", "mps", "pytorch", keys=("larger than INT_MAX",)),     # (round 86) MPSGraph's dims cap
    # (round 87) NCCL's shared-memory segment in /dev/shm refused for want of space: host RAM, a CUDA run's collectives
    _simple(_NCCL_SHM, "nccl.shm", "cuda", "pytorch", lambda m: {"requested": int(m.group(1))}, keys=("/dev/shm/nccl-",)),
    # (round 89) Arrow's memory pool refusing host memory (pyarrow's ArrowMemoryError is a MemoryError): system RAM, the request
    _simple(_ARROW_ALLOC, "python.memory_error", "cpu", "pytorch", lambda m: {"requested": int(m.group(1))}, keys=("alloc of size",),
            form="arrow"),
    # (round 89) Triton Inference Server's Python backend could not grow its shared-memory pool (/dev/shm): host RAM, its size the limit
    _simple(_TRITON_PB_SHM, "tritonserver.shm_pool", "cpu", "triton-server", lambda m: {"limit": int(m.group(1))},
            keys=("shared memory pool size",)),
    _simple(_SWARM_RAM, "os.system_memory", "cpu", "comfyui", lambda m: {"ram_used_pct_ratio": num(m.group(1))},
            keys=("system memory usage exceeded",)),
    _vhs_ram,
    _simple(RX.AIMDO_READER, "comfy.pinned_host", None, "comfyui", keys=("hostbuf_file_reader_read failed",), form="reader"),
    _simple(RX.PINNED_HOST, "comfy.pinned_host", None, "comfyui", keys=("HostBuffer", "hostbuf_", "HostAlloc", "Host OOM")),
    _rmm,
    # (round 93) Theano's CUDA backend refusing a device buffer of the program's own (its device_malloc: a cudaMalloc of its data, form
    # runtime_call as Caffe's and dlib's are), the request and the driver's free and total in exact bytes; runtime theano. Before
    # Python's MemoryError: Theano raises the device's refusal as one ("MemoryError: Error allocating N bytes of device memory")
    _simple(_THEANO_ALLOC, "cuda.driver", "cuda", "theano",
            lambda m: {"requested": int(m.group(1)), **({"free": int(m.group(2)), "total": int(m.group(3))} if m.group(2) else {})},
            keys=("bytes of device memory",), form="runtime_call"),
    # (round 94) Kaldi's CUDA allocator refusing a region of its pool (cu-allocator.cc): a cudaMalloc of its own (form kaldi_region), the
    # request in bytes and GetFreeGpuMemory's free and total (MiB, "M"); Marian's CUDA check at error 2 on a cudaMalloc of its own
    # workspace (runtime_call; another wrapped call: form marian_check); Darknet's bare check line (runtime cuda, as a CUDA program's
    # cudaSafeCall is read: its assertion line names Darknet, runtime_markers); JavaCPP's physical-memory cap under DL4J (host RAM,
    # the process's resident bytes read as used); Stable-Baselines3's replay buffer over the host's available memory (GB of 1e9)
    _simple(_KALDI_ALLOC, "cuda.driver", "cuda", "kaldi",
            lambda m: {"requested": int(m.group(1)), **({"free": int(m.group(2)) * 1024 ** 2, "total": int(m.group(3)) * 1024 ** 2}
                                                        if m.group(2) else {})},
            keys=("Failed to allocate a memory region",), form="kaldi_region"),
    _marian_cuda,
    _simple(_DARKNET_CUDA, "cuda.driver", "cuda", "cuda", keys=("CUDA Error: out of memory",), form="runtime_call"),
    _simple(_JAVACPP_PHYSICAL, "javacpp.physical", "cpu", "java", lambda m: {"used": int(m.group(1)) if m.group(1) else size(m.group(2))},
            keys=("Physical memory usage is too high",)),
    _simple(_REPLAY_BUFFER_RAM, "sb3.replay_buffer", "cpu", "pytorch",
            lambda m: {"required": round(float(m.group(1)) * 1e9), "available": round(float(m.group(2)) * 1e9)},
            keys=("complete replay buffer",)),
    # (round 95) llama.cpp's decode with no room left in its KV cache for a batch (its "memory slot", the older "KV cache slot" and
    # llama-server's "free space in the KV cache"): the batch's tokens when the line gives them; the device left to the log
    _simple(_LLAMA_KV_SLOT, "ggml.kv_slot", None, "llama.cpp",
            lambda m: {"requested_tokens": int(m.group(1))} if m.group(1) else {},
            keys=("failed to find a memory slot", "failed to find KV cache slot", "failed to find free space in the KV cache")),
    _py_memory,
    _vllm_v1,
    _simple(RX.VLLM_V0_LEN, "vllm.kv_max_len", "cuda", "vllm",
            lambda m: {"max_model_len_tokens": int(m.group(1)), **({"kv_max_tokens": int(m.group(2))} if m.group(2) else {})}),
    _simple(RX.VLLM_NOBLOCKS, "vllm.no_kv_blocks", "cuda", "vllm"),
    _simple(RX.VLLM_MAMBA, "vllm.mamba_blocks", "cuda", "vllm",
            lambda m: {"max_num_seqs_count": int(m.group(1)), "mamba_blocks_count": int(m.group(2))}, keys=("Mamba cache blocks",)),
    _vllm_cumem,
    _simple(_VULKAN_LIMIT, "ggml.vulkan_limit", "vulkan", "llama.cpp", keys=("exceeds device",)),
    _simple(_VULKAN_MAX_BUFFER, "vulkan.max_buffer", "vulkan", None,
            lambda m: {**({"requested": int(m.group(1))} if m.group(1) else {}), **({"max_allowed": int(m.group(2))} if m.group(2) else {})},
            keys=("maximum allowed buffer size",)),
    _simple(_METAL_VALIDATION, "metal.max_buffer", "metal", None,
            lambda m: {"requested": int(m.group(1), 16 if m.group(1).startswith("0x") else 10), "limit": int(m.group(2)) * 1024 * 1024},
            keys=("must not exceed",)),
    _simple(_AMDGPU_CS, "amdgpu.cs_enomem", "vulkan", "llama.cpp", keys=("command submission",)),
    # (round 72) WSL2's residency refusal and the VMM call's "device not ready" under expandable segments; HAMi-core's vGPU limit
    _simple(_WSL_RESIDENT, "wsl.make_resident", "cuda", None, keys=("dxgkio_make_resident",)),
    _simple(_CUDA_NOT_READY, "cuda.vmm_not_ready", "cuda", "pytorch", keys=("device not ready",)),
    _hami,
    _simple(_GGML_CUDA_OLD, "cuda.driver", "cuda", "llama.cpp", keys=("ggml-cuda.cu:",), form="ggml_old"),
    _simple(_GGML_CUDA_CODE, "cuda.driver", "cuda", "llama.cpp", keys=("CUDA error 2:",), form="ggml_code"),
    _simple(_FLASHINFER_WS, "flashinfer.workspace", "cuda", None,
            lambda m: {"requested": int(m.group(2)), **({"available": int(m.group(3))} if m.group(3) else {})} if m.group(2) else {},
            keys=("AlignedAllocator", "AlignedAlloactor")),
    _simple(_OMLX_CEILING, "mlx.ceiling", "metal", "mlx",
            lambda m: {"allocated": size(m.group(1)), "max_allowed": size(m.group(2))}
            if m.group(1) else {}, keys=("force-stopped", "Memory limit exceeded")),
    _omlx_preflight,
    _simple(_OMLX_SAFETY, "mlx.ceiling", "metal", "mlx",
            lambda m: {"required": size(m.group(3)), "allocated": size(m.group(4)), "requested": size(m.group(5)),
                       "max_allowed": size(m.group(7)), **({"limit": size(m.group(8))} if m.group(8) else {})},
            keys=("preflight safety guard",), form="safety"),
    _simple(_OMLX_ADMIT, "mlx.admission", None, "mlx",
            lambda m: {"required": size(m.group(1)), "available": size(m.group(2))} if m.group(1) else {},
            keys=("can admit", "per-node memory limits")),
    _simple(_VLLMRS_KV, "vllmrs.kv_admit", None, "vllm-rs",
            lambda m: {"available_tokens": int(m.group(1)), "requested_tokens": int(m.group(2))}, keys=("kvcache tokens",)),
    _simple(_TURBOMIND, "lmdeploy.turbomind", "cuda", "lmdeploy", keys=("[TM][",)),
    _simple(_ELECTRON_OOM, "electron.renderer_oom", "cpu", "comfyui", keys=("render-process-gone",)),
    _vllm_startup,
    # (tri70) a launcher's mirror of vLLM's start-up check, before vLLM starts (club-3090's preflight gate): the same reading
    _simple(RX.VLLM_LAUNCHER_GATE, "vllm.startup_free", "cuda", "vllm", lambda m: {"free": size(m.group(1) + " GiB"),
            "requested": size(m.group(2) + " GiB")}, keys=("this config needs ~",), form="launcher"),
    _vllm_cpu_node,
    _simple(RX.SGLANG_POOL, "sglang.pool", None, "sglang",
            lambda m: {"mem_fraction_static_ratio": num(m.group(1))} if m.group(1) else {},
            keys=("mem-fraction-static",)),
    _simple(RX.SGLANG_POOL_CUT, "sglang.pool", None, "sglang", keys=("RuntimeError: Not enough memory",), form="cut"),
    _sglang_kv,
    _trtllm,
    _mlx_malloc,
    _xla_tpu,
    _xla_tpu_exceed,     # (round 92) the TPU compiler's "Allocation (size=N) would exceed memory (size=M)"
    _xla_tpu_hbm,     # (round 118) "CompileTimeHbmOom: Used N of M hbm", "Ran out of memory on HBM"
    _xla_fft_plan,     # (round 118) "Failed to create cuFFT batched plan with scratch allocator"
    _bfc,
    _xla_remat,     # XLA's rematerialization warning: a program over the limit (round 58)
    _ollama_too_large,
    _ollama_fit,
    _ollama_graph_over,     # (round 106) Ollama's offload record: its compute graph over the GPU's available memory
    _simple(_TENSORRT, "tensorrt.oom", "cuda", "tensorrt", lambda m: {"requested": int(m.group(1))} if m.group(1) else {},
            keys=("Error Code 2", "Cuda Error in allocate")),
    _simple(_HF_DISPATCH, "transformers.dispatch", "cuda", "pytorch", keys=("dispatched on the CPU",)),
    _simple(_EXL_SPLIT, "exllama.split", None, "pytorch", keys=("Insufficient VRAM in split",)),
    _simple(_SGLANG_UNBALANCED, "sglang.unbalanced", "cuda", "sglang", keys=("memory capacity is unbalanced",)),
    _simple(_TGI_PREFILL, "tgi.prefill", "cuda", "tgi",
            lambda m: {"prefill_tokens": int(m.group(2)), **({"total_tokens": int(m.group(1))} if m.group(1) else {})},
            keys=("prefill tokens",)),
    # before the runner's wrapper: "llama runner process has terminated: CUDA error: the resource allocation failed" is cuBLAS's
    _simple(RX.CUBLAS, "cublas.alloc", "cuda", "pytorch"),
    # (round 92: runtime cuda, was pytorch) nvmap is Tegra's allocator under CUDA itself: a framework the log's marker names wins
    _simple(RX.NVMAP, "cuda.driver", "cuda", "cuda", keys=("NvMapMem",), form="nvmap"),
    # and a runner (or any child) ended by SIGKILL ("llama-server process has terminated: signal: killed") is the OOM killer's
    _ray_oom,     # (tri84) Ray's memory monitor killing a task for the node's RAM (ray_oom.RAY_OOM)
    _earlyoom,     # (round 94) earlyoom's low-memory notice and kill line: host RAM, as the kernel's OOM killer
    _killed,
    _kernel_died,     # (tri75) a Jupyter kernel that died with no reply (host_readers.KERNEL_DIED)
    _workers_dead,     # (tri76) data-loading workers found dead (host_readers.WORKERS_DEAD)
    _native_abort,     # (tri82) faulthandler's native abort (native_abort.NATIVE_ABORT)
    _ollama_runner_gone,
    _lmstudio,
    _mlx_load_preflight,
    _app_vram_preflight, _studio_host_guard,     # (round 117) Unsloth Studio's host-offload guard
    _vllm_metal_kv,
    _simple(_WGPU, "wgpu.oom", None, "wgpu", keys=("Not enough memory left",)),
    _simple(RX.VLLM_WARMUP, "vllm.warmup", "cuda", "vllm", lambda m: {"dummy_requests_count": int(m.group(2))} if m.group(2) else {},
            keys=("when warming up",)),
    _simple(RX.VLLM_PROFILE, "vllm.profile_race", "cuda", "vllm",
            lambda m: {"free_initial": size(m.group(1) + " GiB"), "free_current": size(m.group(2) + " GiB")}),
    _simple(RX.GGML_MALLOC, "ggml.malloc", "cuda", "llama.cpp",
            lambda m: {"requested": size(m.group(1) + " MiB")}),
    _simple(RX.GGML_METAL_BUF, "ggml.buffer", "metal", "llama.cpp", lambda m: {"requested": size(m.group(1) + " MiB")},
            keys=("failed to allocate buffer, size",)),
    _ggml_buffer,
    _ggml_sycl,
    _ggml_ctx_pool,
    _simple(RX.GGML_KV, "ggml.kv_cache", None, "llama.cpp"),
    _simple(RX.GGML_KV_INIT, "ggml.kv_cache", None, "llama.cpp", keys=("kv_cache_init",)),     # whisper.cpp's (runtime by its marker)
    _simple(RX.GGML_COMPUTE, "ggml.compute", None, "llama.cpp"),
    _ggml_load,
    _libplacebo,
    _iree_alloc,        # before ggml's Vulkan pattern: IREE's Vulkan HAL status names VK_ERROR_OUT_OF_DEVICE_MEMORY too
    _simple(RX.GGML_VULKAN, "ggml.vulkan", "vulkan", "llama.cpp",
            lambda m: {"requested": int(m.group(1))} if m.group(1) else {}),
    _simple(RX.GGML_METAL_MAX, "ggml.metal_max", "metal", "llama.cpp",
            lambda m: {"requested": int(m.group(2)), "max_buffer": int(m.group(3))}),
    _simple(RX.GGML_HOST, "ggml.host", "cpu", "llama.cpp", lambda m: {"requested": size(m.group(1) + " MiB")} if m.group(1) else {}),
    _simple(RX.GGML_CTX_ASSERT, "ggml.host", "cpu", "llama.cpp", keys=("mem_buffer",), form="context"),
    _simple(RX.GGML_MALLOC_BARE, "ggml.malloc", "cuda", "llama.cpp"),
    _simple(RX.GGML_CANN_MALLOC, "ggml.malloc", "npu", "llama.cpp", lambda m: {"requested": size(m.group(1) + " MiB")}),
    _simple(RX.OLLAMA_SYS, "ollama.system_memory", "cpu", "ollama",
            lambda m: {"required": size(m.group(1)), "available": size(m.group(2))}),
    _simple(RX.OLLAMA_SYS2, "ollama.system_memory", "cpu", "ollama"),
    _simple(RX.OLLAMA_INSUFF, "ollama.insufficient", None, "ollama"),
    _simple(RX.OLLAMA_LOAD_FAILED, "ollama.load_failed", None, "ollama", keys=("resource limitations",)),
    _simple(RX.DML, "torch.directml", "directml", "pytorch", lambda m: {"requested": int(m.group(1))} if m.group(1) else {}),
    _simple(RX.COMFY_VAE, "comfy.vae_tiled_fallback", None, "comfyui",
            lambda m: {k: int(v) for k, v in (("tile_size", m.group(2)), ("overlap", m.group(3))) if v},
            recoverable=True),
    _simple(RX.COMFY_ATTN_RETRY, "comfy.attention_retry", None, "comfyui", keys=("trying again", "softmax in", "OOMed"), recoverable=True,
            retried=True),
    _simple(RX.NVML, "torch.nvml_assert", "cuda", "pytorch"),
    _simple(RX.CUDNN, "cudnn.alloc", "cuda", "pytorch"),
    _cudf_java, _amrex_gpu, _hip_trace, _driver,     # cuDF's Java exception (round 58), AMReX's and the HIP runtime's own forms before PyTorch's bare hipErrorOutOfMemory
    _catboost_pool, _faiss_alloc, _gunrock_alloc, _physx_capacity, _kmcuda_alloc, _rapids_rmm_init,  # libraries' own forms (rounds 57-59)
    _spark_device_alloc, _mlc_insufficient,   # Spark RAPIDS' RMM event handler, MLC LLM's memory plan (round 61)
    _hip_vmm, _jvm_heap, _apusys_alloc, _dataloader_shm,   # ggml's HIP VMM pool, the JVM's heap, MediaTek's APUSys, a DataLoader worker's SIGBUS (round 63)
    _tfjs_texture,      # TensorFlow.js's WebGL texture-size cap (round 64)
    _mnn_acquire, _js_array_buffer, _webgpu_lost,     # MNN's acquire check, V8's ArrayBuffer refusal, WebGPU's device loss (round 67)
    # WebGPU's per-buffer and per-binding caps (round 86)
    _simple(_WEBGPU_MAX_BUFFER, "webgpu.max_buffer", "webgpu", "webgpu",
            lambda m: {"requested": int(m.group(1) or m.group(3)), "max_allowed": int(m.group(2) or m.group(4))},
            keys=("max buffer size limit", "buffer binding size")),
    _rknn_alloc, _lmcache_alloc, _cuda_invalid_arg,   # Rockchip's NPU runtimes, LMCache's pool, PyTorch's CUDA invalid argument (round 74)
    # CANN's graph engine refusing an Ascend NPU allocation (round 84)
    _simple(_CANN_RTMALLOC, "npu.cann_malloc", "npu", None, lambda m: {"requested": int(m.group(1))}, keys=("rtMalloc fail",)),
    # (round 88) ONNX Runtime's arena at its memory limit (what it had left, the request); PaddlePaddle's host allocator (posix_memalign
    # refused: ENOMEM, system RAM) and its own CUDA check; TensorRT's "Cuda Runtime" error code (before the CUDA driver row that
    # reads the same words as any program's); Isaac Gym's CUDA check, a call of the simulator's own (form runtime_call)
    _simple(_ONNX_ARENA_LIMIT, "onnx.alloc", None, "onnxruntime", lambda m: {"available": int(m.group(1)), "requested": int(m.group(2))},
            keys=("smaller than requested bytes",)),
    _simple(_PADDLE_HOST, "os.enomem", "cpu", "paddle", lambda m: {"requested": int(m.group(1))}, keys=("Fail to alloc memory of",)),
    _simple(_PADDLE_CUDA, "cuda.driver", "cuda", "paddle", keys=("(External) CUDA error",)),
    _simple(_TRT_CUDA_RUNTIME, "cuda.driver", "cuda", "tensorrt", keys=("Cuda Runtime (",)),
    _simple(_GYM_CUDA, "cuda.driver", "cuda", "isaacsim", keys=("Gym cuda error",), form="runtime_call"),
    # (round 90) spconv's and cumm's tensorview CUDA check at error 2 (cudaErrorMemoryAllocation): a PyTorch extension's, no call named
    # and no figures (form tensorview: not a cudaMalloc of the program's own data, as runtime_call is read)
    _simple(_TENSORVIEW_CUDA, "cuda.driver", "cuda", "pytorch", keys=("failed with error 2",), form="tensorview"),
    # (round 91) a CUDA program's own cudaSafeCall check at "out of memory": a runtime call of its own (form runtime_call), no figures;
    # COLMAP's SIFT matcher could not allocate its buffers for max_num_matches features (CUDA or OpenGL: no device named)
    _simple(_CUDA_SAFE_CALL, "cuda.driver", "cuda", "cuda", keys=("cudaSafeCall()",), form="runtime_call"),
    # (tri69) the same kind of check printing the bare code 2 (cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY)
    _simple(_CUDA_BARE_CODE, "cuda.driver", "cuda", "cuda", keys=("CUDA error: 2", "CUDA error 2"), form="runtime_call"),
    # (tri70) a HIP program's check printing its bare code 2 (hipErrorOutOfMemory): a HIP program of its own, device rocm
    _simple(_HIP_BARE_CODE, "cuda.driver", "rocm", "hip", keys=("HIP error: 2", "HIP error 2"), form="runtime_call"),
    _simple(_COLMAP_SIFT_MATCH, "colmap.sift_match", None, "colmap", keys=("GPU memory to match",)),
    # (tri63) VTK's OpenGL error listing at GL_OUT_OF_MEMORY (1285) and faceswap's training OOM message: each a memory failure in
    # its runtime's own words, read as any runtime's (generic.oom: no figure, the log's context decides the cause)
    _simple(_VTK_GL_OOM, "generic.oom", None, None, keys=("(1285) Out of memory",), form="opengl"),
    _simple(_FACESWAP_TRAIN_OOM, "generic.oom", None, None, keys=("enough GPU memory available to train",), form="faceswap"),
    # (round 92) NCCL's own CUDA check at out of memory (its quoted error string, named NCCL or relayed as its last error); PyCUDA's
    # driver error at a cuMem* call (a CUDA program's own: runtime cuda, a marker naming a framework wins); ROCr's block allocator
    _simple(_NCCL_CUDA_CHECK, "cuda.driver", "cuda", "pytorch", keys=("Cuda failure",), form="nccl"),
    _simple(_PYCUDA_MEM, "cuda.driver", "cuda", "cuda", keys=("cuMem",), form="pycuda"),
    _simple(_ROCR_BLOCK_ALLOC, "cuda.driver", "rocm", "pytorch", keys=("BlockAllocator::alloc",), form="hsa_block"),
    # (round 93) Render's instance event over its plan's memory: the platform's host-RAM limit killed the service (os.oom_killer, as a
    # container's memory limit is read), the plan's size read as the limit; no runtime named
    _simple(_RENDER_OOM, "os.oom_killer", "cpu", None, lambda m: {"limit": size(m.group(1))}, keys=("(used over",), form="platform_limit"),
    _stream_executor,
    _simple(_DRIVER_API, "cuda.driver", "cuda", "pytorch",
            lambda m: {"requested": int(m.group(1) or m.group(2))} if m.group(1) or m.group(2) else {},
            keys=("CUDA_ERROR_OUT_OF_MEMORY", "CUDA failed with", "Cuda Runtime (", "Cuda failure", "cuMem", "Requested amount of GPU",
                  "CUDA runtime error", "CUDA calloc", "CUDA failure")),
    _cuda_call,
    _caffe_cuda,
    _simple(_CAFFE_HOST, "os.enomem", "cpu", "caffe", lambda m: {"requested": int(m.group(1))}, keys=("host allocation of size",)),
    _simple(_KENLM_MALLOC, "os.enomem", "cpu", "kenlm", lambda m: {"requested": int(m.group(1))}, keys=("bytes in ",)),
    _simple(_ENOKI_MALLOC, "enoki.malloc", "cuda", "enoki", keys=("cuda_malloc()",)),
    _ds4, _ds4_guard,
    _tt_metal,
    _simple(_DML_HRESULT, "torch.directml", "directml", "pytorch", keys=("8007000E", "E_OUTOFMEMORY"), form="hresult"),
    _simple(_BAD_ALLOC, "cpp.bad_alloc", "cpu", "pytorch", keys=("bad_alloc", "bad allocation")),
    _onnx,
    _ncnn_vk,
    _kit_vk,     # (fixV) Omniverse Kit's Vulkan renderer
    _dotnet,
    _level_zero,
    _simple(_OLLAMA_LAYOUT, "ollama.layout", None, "ollama", lambda m: {"num_gpu_layers": int(m.group(1))} if m.group(1) else {},
            keys=("memory layout cannot",)),
    _xla,
    _xla_constant,     # (round 110) XLA's GPU executable: "INTERNAL: Failed to allocate N bytes for new constant"
    _tf_recv_alloc,     # (round 93) TensorFlow's rendezvous: "SameWorkerRecvDone unable to allocate output tensor"
    _cupy,
    _simple(_OPENVINO, "openvino.buffer_limit", "xpu", "openvino",
            lambda m: {"requested": int(m.group(1)), **({"max_allowed": int(m.group(2))} if m.group(2) else {})},
            keys=("memory object allocation",)),
    _simple(_METAL, "metal.oom", "metal", None, keys=("kIOGPUCommandBuffer", "Insufficient Memory", "with status 5")),
    _simple(_METAL_CREATE, "metal.oom", "metal", None, lambda m: {"requested": int(m.group(1))}, keys=("failed to create Metal buffer",)),
    _ggml_opencl,
    _simple(_OPENCL, "opencl.alloc", None, None, keys=("MEM_OBJECT_ALLOCATION_FAILURE", "CL_OUT_OF_RESOURCES")),
    _simple(_MPS_BUFFER, "mps.buffer_size", "mps", "pytorch", lambda m: {"requested": size(m.group(1))}, keys=("Invalid buffer size",)),
    _simple(_PAGING, "os.paging_file", "cpu", "pytorch", keys=("paging file", "1455") + _PAGING_LOCALIZED),     # (round 93) localized
    _simple(_LOW_VIRTUAL_MEMORY, "os.paging_file", "cpu", None, lambda m: {"this_process": int(m.group(1))} if m.group(1) else {},
            keys=("low virtual memory condition",), form="low_virtual_memory"),
    _torch_sentences,     # (none51) PyTorch's message as its sentences alone, its first words left out
    _torch_bare,
    _simple(RX.TORCH_THC, "torch.cuda", "cuda", "pytorch", keys=("cuda runtime error",), form="thc"),
    _simple(RX.COMFY_OOM, "comfy.got_oom", None, "comfyui", wrapper=True),
    _simple(RX.COMFY_TIP, "comfy.got_oom", None, "comfyui", wrapper=True),
    _simple(RX.TORCH_OOM_TYPE, "torch.oom_type", None, "pytorch", wrapper=True),
    _bare_words,     # (tri85) "CUDA out of memory" alone ending a line: read as _generic reads it after "RuntimeError:"
    _generic,
]

# Which error kinds carry the numbers; a wrapper (Got an OOM, a runner dying) joins the event it wraps.
PRIORITY = {
    "torch.cuda": 10, "torch.hip": 10, "torch.xpu": 10, "torch.cuda_async": 10, "torch.mps": 10, "torch.npu": 10, "torch.cpu": 9, "python.memory_error": 8,
    "vllm.kv_max_len": 9, "vllm.startup_free": 9, "vllm.cpu_node": 9, "vllm.no_kv_blocks": 8, "vllm.mamba_blocks": 9, "vllm.profile_race": 8, "vllm.warmup": 8,
    "ggml.malloc": 7, "ggml.buffer": 7.5, "ggml.vulkan": 7, "ggml.host": 7, "ggml.kv_cache": 8, "ggml.compute": 8,
    "ggml.model_load": 8, "ggml.metal_max": 8, "ollama.system_memory": 9, "ollama.insufficient": 5,
    "cuda.driver": 6, "cublas.alloc": 6, "cudnn.alloc": 5, "torch.nvml_assert": 6, "comfy.dynamic_vram": 8.5, "comfy.compiler": 8.5, "comfy.aimdo_cuda": 8,
    "comfy.pinned_host": 7, "torch.directml": 9,
    "onnx.alloc": 8, "xla.oom": 8, "xpu.driver": 6, "ollama.layout": 6, "metal.oom": 7, "mps.buffer_size": 8, "os.paging_file": 8, "os.oom_killer": 7,
    "os.enomem": 8, "triton.shared_memory": 8, "mps.ndarray_limit": 8, "mps.int_max_dims": 8, "os.system_memory": 8, "comfy.vhs_ram": 8, "ggml.vulkan_limit": 9, "amdgpu.cs_enomem": 7, "opencl.alloc": 7,
    "tensorrt.oom": 7, "cpp.bad_alloc": 5, "ggml.ctx_pool": 8, "paddle.oom": 9, "cupy.oom": 8, "rmm.oom": 8, "openvino.buffer_limit": 8, "lmstudio.guardrail": 6, "wgpu.oom": 7, "ollama.fit": 9, "mlx.malloc": 8, "transformers.dispatch": 8, "tgi.prefill": 8,
    "sglang.pool": 8, "exllama.split": 8, "sglang.unbalanced": 8, "sglang.kv_pool": 8, "trtllm.executor": 8.5, "mlx.buffer_limit": 8, "mlx.resource_limit": 8,
    "flashinfer.workspace": 8, "vllm.cumem": 8, "enoki.malloc": 7, "catboost.pool": 8, "rapids.rmm_init": 8, "faiss.alloc": 7, "physx.capacity": 8, "kmcuda.alloc": 8.5, "xgboost.alloc": 8, "vllm.profile_cut": 2, "xla.remat": 6, "lmdeploy.turbomind": 7, "ds4.alloc": 7, "ds4.memory_guard": 8, "ttmetal.oom": 8, "mlx.ceiling": 8, "mlx.admission": 8, "mlx.load_preflight": 8, "app.vram_preflight": 8, "app.host_offload_guard": 8, "vllm_metal.kv_budget": 8, "iree.alloc": 7, "vllmrs.kv_admit": 8, "electron.renderer_oom": 7,
    "vulkan.alloc": 7, "kit.vulkan": 7, "vulkan.max_buffer": 9, "metal.max_buffer": 9, "wsl.make_resident": 8, "cuda.vmm_not_ready": 7, "hami.oom": 8, "mlc.insufficient": 8, "ggml.hip_vmm": 7, "jvm.heap": 7, "npu.apusys": 7, "tfjs.texture_size": 7, "mnn.acquire": 7, "js.array_buffer": 6, "webgpu.device_lost": 5, "webgpu.max_buffer": 9, "os.shm": 8, "nccl.shm": 8, "tritonserver.shm_pool": 8, "dotnet.oom": 7, "libplacebo.alloc": 8,
    "npu.rknn": 7, "lmcache.pool": 6, "cuda.invalid_arg": 3,     # (round 74)
    "npu.cann_malloc": 7,     # (round 84)
    "colmap.sift_match": 7,     # (round 91)
    "ollama.graph_over": 8, "metal.threadgroup": 8,     # (rounds 106, 110)
    "comfy.vae_tiled_fallback": 4, "comfy.attention_retry": 3.5, "ollama.runner": 3, "ollama.load_failed": 2.5, "generic.oom": 1.5, "torch.alloc_warn": 5, "comfy.got_oom": 2, "torch.oom_type": 1,
    # (tri75, rev64b #1) below the device messages, torch.oom_type's and generic.oom's included: it joins their failure
    "jupyter.kernel_died": 0.5,
    "batchgen.workers_dead": 0.5,     # (tri76) the same
    "python.native_abort": 0.5,     # (tri82) the same
}


# (round 73) vLLM's start-up measures its peak by running the model once on dummy inputs (max_num_seqs sequences filling
# max_num_batched_tokens; for a multimodal model, dummy images or audio up to the model's per-prompt limit) before it sizes the
# KV cache: Worker.determine_num_available_blocks (V0) / determine_available_memory (V1) -> profile_run -> _dummy_run. A paste
# that ends inside those frames, cut before its exception line, with no failure line anywhere in the log, failed there
# (OpenBMB/MiniCPM-V#392, vllm-project/vllm#10569: the profile run's dummy batch; the fix, a lower max_num_seqs/max_model_len)
PROFILE_FUNCS = ("determine_num_available_blocks", "determine_available_memory", "profile_run", "_dummy_run",
                 "_dummy_sampler_run", "_profile_run")


def profile_cut(frames, sources):
    """The event for a log whose last traceback ends in vLLM's memory profiling without an exception line, else None: the
    innermost frame is a vLLM profiling function, or the source line under the innermost vLLM frame calls one."""
    if not frames or "vllm" not in frames[-1][0].replace("\\", "/").split("/"):
        return None
    at = frames[-1][1] if frames[-1][1] in PROFILE_FUNCS else None
    if at is None and sources:
        at = next((fn for fn in PROFILE_FUNCS if re.search(r"\b" + fn + r"\(", sources[-1])), None)
    if at is None:
        return None
    return {"kind": "vllm.profile_cut", "device_kind": "cuda", "runtime": "vllm", "numbers": {}, "complete": False, "at": at}


def recognise(line: str):
    """The first error recogniser that matches `line`, or None."""
    if not any(k in line for k in ERROR_KEYS) or not any(w in line for w in RECOGNISE_WORDS):
        return None
    if "pinned memory" in line and RX.GGML_PINNED_WARN.search(line):
        # ggml goes on with pageable memory: a warning, never the failure; cut it (and the error it quotes) out and
        # read the rest, a failure flattened onto the same line
        line = RX.GGML_PINNED_CUT.sub(" ", line)
        if not line.strip():
            return None
    ev = attempt(RECOGNISERS[0], line)     # PyTorch's full message, the most frequent: tried before the prefilter costs a pass
    if ev:
        return ev
    for rec in _candidates(line):
        if rec is not RECOGNISERS[0]:
            ev = attempt(rec, line)     # a figure that is no number: this recogniser's miss, the next is tried
            if ev:
                return ev
    return None


_GATE = []          # [_prefilter()], once built
_PICKED = {}        # the words a line holds -> the recognisers to try, in order (bounded)


def _candidates(line: str) -> tuple:
    if not _GATE:
        _GATE.append(_prefilter())
    words, word_recs, always = _GATE[0]
    found = frozenset(words.findall(line))
    got = _PICKED.get(found)
    if got is None:
        got = tuple(RECOGNISERS[i] for i in sorted(always.union(*(word_recs[w] for w in found))))
        if len(_PICKED) >= 4096:
            _PICKED.clear()
        _PICKED[found] = got
    return got


OOM_TYPE_NAMES = ("OutOfMemoryError", "OOMError", "MemoryError", "_ArrayMemoryError")
HEAD_TAIL = 16 << 10        # is_oom_error reads this much of a message's start and of its end


def bounded(message: str, part: int = HEAD_TAIL) -> str:
    """The first and last `part` characters of a message (all of it when short): an OOM message is at
    the start of an exception's text or at its end, and nothing else needs reading."""
    if len(message) <= 2 * part:
        return message
    return message[:part] + "\n" + message[-part:]


def is_oom_error(exc_type_name: str, message: str) -> bool:
    """True when an exception is an out-of-memory error, by its type name or by its message. Runs on
    ComfyUI's prompt worker for every failed node: it reads at most 2 x HEAD_TAIL characters, and every
    pattern is linear, so a message of any size is classified in milliseconds (benchmarks/bench_triage.py)."""
    name = (exc_type_name or "").rsplit(".", 1)[-1]
    if name in OOM_TYPE_NAMES or name.endswith("OutOfMemoryError"):
        return True
    msg = bounded(message or "")
    if not msg:
        return False
    if recognise(msg):
        return True
    lines = msg.splitlines()
    return any(recognise(line) for line in (lines[:100] + lines[-100:] if len(lines) > 200 else lines))
