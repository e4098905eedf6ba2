"""Out-of-memory messages of runtimes other than PyTorch's allocators, ComfyUI, vLLM, llama.cpp and Ollama: the
CUDA driver API as other libraries report it, ONNX Runtime, Apple Metal, Intel Level Zero, Ollama's scheduler, and
the operating system refusing memory (XLA's family, JAX and TensorFlow: xla_runtimes.py). parse.py lists them among
its recognisers; the strings come from each runtime's source or its users' reports (the threads named in
tests/unit/test_triage_families.py). This module holds the readers; their patterns are in other_patterns.py, re-exported."""

import re

from ..units import parse_size
# the XLA family (JAX, TensorFlow, TPU runtime, BFC allocator, stream executor): xla_runtimes.py, re-exported
from .xla_runtimes import BFC, STREAM_EXECUTOR, XLA, XLA_TPU, bfc, stream_executor, xla, xla_remat, xla_tpu, xla_tpu_exceed, xla_tpu_hbm, xla_fft_plan, tf_recv_alloc  # noqa: F401
# the patterns the readers below use (and parse.py, servers.py import from here): other_patterns.py, re-exported
from .other_patterns import (DRIVER_API, CUDA_CALL, CAFFE_CUDA, ENOKI_MALLOC, LEVEL_ZERO, OLLAMA_LAYOUT, ONNX, MLX_MALLOC, TENSORRT, HF_DISPATCH, OLLAMA_TOO_LARGE, EXL_SPLIT, SGLANG_UNBALANCED, TGI_PREFILL, BAD_ALLOC, DML_HRESULT, _NSZ, NPU, _PSZ, PADDLE, CUPY, RMM, OPENVINO, LMSTUDIO, WGPU, _OSZ, OLLAMA_FIT, GGML_SYCL, METAL, MPS_BUFFER, PAGING, LOW_VIRTUAL_MEMORY, KILLED, KILL_WORDS, ENOMEM, TRITON_SMEM, MPS_NDARRAY, MPSGRAPH_INT_MAX, NCCL_SHM, ARROW_ALLOC, TRITON_PB_SHM, VULKAN_LIMIT, VULKAN_MAX_BUFFER, AMDGPU_CS, GGML_CUDA_OLD, FLASHINFER_WS, VLLM_CUMEM, TURBOMIND, GGML_CUDA_CODE, ELECTRON_OOM, _OMLX_SIZE, OMLX_CEILING, OMLX_PREFLIGHT, OMLX_ADMIT, MLX_LOAD_PREFLIGHT, APP_VRAM_PREFLIGHT, IREE_ALLOC, VLLMRS_KV, VHS_RAM, SWARM_RAM, OPENCL, GGML_OPENCL, ONNX_CPU, _LOWER_FIX, NCNN_VK, LIBPLACEBO, LIBPLACEBO_HEAP, KIT_VK, DOTNET, DOTNET_OBJECT, DS4, DS4_CHUNK, TT_METAL, METAL_VALIDATION, WSL_RESIDENT, CUDA_NOT_READY, HAMI_OOM, XGB_ALLOC, XGB_FIGURE)  # noqa: F401
from .other_patterns import OLLAMA_GRAPH_FULL, OLLAMA_AVAILABLE, OLLAMA_LIBRARY, OLLAMA_SIZES  # noqa: F401 (round 106)


def level_zero(line):
    if "_ERROR_OUT_OF_" not in line:
        return None
    m = LEVEL_ZERO.search(line)
    if not m:
        return None
    host = (m.group(1) or m.group(3)) == "HOST"
    return {"kind": "xpu.driver", "device_kind": "cpu" if host else "xpu", "numbers": {}, "runtime": "pytorch", "complete": True,
            "host": host}


def onnx(line):
    if "for requested buffer" not in line:
        return None
    m = ONNX.search(line)
    # quoted without its size: counts only where the line names the arena (bfc_arena.cc, BFCArena::AllocateRawInternal)
    if not m and not ("bfc_arena" in line or "BFCArena" in line) or "Failed to allocate memory for requested buffer" not in line:
        return None
    return {"kind": "onnx.alloc", "device_kind": "cpu" if ONNX_CPU.search(line) else None,
            "numbers": {"requested": int(m.group(1))} if m else {}, "runtime": "onnxruntime", "complete": True}


def mlx_malloc(line):
    if "metal::malloc" not in line and "malloc_or_wait" not in line and "maximum allowed buffer size" not in line:
        return None
    m = MLX_MALLOC.search(line)
    if not m:
        return None
    if m.group(4):
        return {"kind": "mlx.malloc", "device_kind": "metal", "numbers": {"requested": int(m.group(4))}, "runtime": "mlx",
                "complete": True}
    if m.group(3):
        return {"kind": "mlx.resource_limit", "device_kind": "metal", "numbers": {"buffer_count_limit": int(m.group(3))},
                "runtime": "mlx", "complete": True}
    if m.group(5):                       # the limit elided from a quote
        return {"kind": "mlx.buffer_limit", "device_kind": "metal", "numbers": {"requested": int(m.group(5))}, "runtime": "mlx",
                "complete": True}
    nums = {"requested": int(m.group(1))}
    if m.group(2):
        nums["max_allowed"] = int(m.group(2))
    # cut after "buffer size of" (MLX Swift's fatalError wraps the message): the limit is on the next line
    cut = not m.group(2) and line[m.end():].strip() == "of"
    return {"kind": "mlx.buffer_limit", "device_kind": "metal", "numbers": nums, "runtime": "mlx", "complete": not cut}


def _upper(m):
    if m.group(1):
        return m.group(1).upper() + " out of memory. Tried"
    if m.group(2):
        return m.group(2).upper() + "iB"
    if m.group(3):
        return "(" + ("GPU" if m.group(3) == "gpu" else "device") + " "
    if m.group(4):
        return ". GPU "
    if m.group(5):
        return "by PyTorch"
    return "Process " if m.group(6) else "Of the allocated memory"


def upper_case(line: str) -> str:
    return _LOWER_FIX.sub(_upper, line)


def ollama_too_large(line):
    if "too large for system" not in line:
        return None
    m = OLLAMA_TOO_LARGE.search(line)
    if not m:
        return None
    avail = m.group(2)
    return {"kind": "ollama.system_memory", "device_kind": "cpu", "runtime": "ollama", "complete": True,
            "numbers": {"required": parse_size(m.group(1), binary_decimal=True),
                        "available": int(avail) if avail.isdigit() else parse_size(avail, binary_decimal=True)}}


def npu(line):
    if "NPU out of memory" not in line:
        return None
    m = NPU.search(line)
    if not m:
        return None
    ev = {"kind": "torch.npu", "device_kind": "npu", "numbers": {"requested": parse_size(m.group(1))}, "runtime": "pytorch",
          "complete": False, "form": "partial"}
    if m.group(3):
        nums = ev["numbers"]
        nums.update(total=parse_size(m.group(3)), allocated=parse_size(m.group(4)), free=parse_size(m.group(6)))
        if m.group(7):
            nums["allowed"] = parse_size(m.group(7))
        if not (m.group(2) and m.group(8)):     # a shortened quote: its figures, not the whole message
            ev["form"] = "npu_short"
            return ev
        held = parse_size(m.group(8))
        if m.group(9) == "cached":          # the unused part of the cache, as PyTorch <= 1.4 printed it
            nums["reserved_unallocated"], nums["reserved"] = held, nums["allocated"] + held
        else:
            nums["reserved"], nums["reserved_unallocated"] = held, max(0, held - nums["allocated"])
        ev.update(device_index=int(m.group(2)), complete=True, form="npu")
    return ev


def _psize(text):
    return parse_size(text, binary_decimal=True)


def paddle(line):
    if "Out of memory error on" not in line:
        return None
    m = PADDLE.search(line)
    if not m:
        return None
    nums = {"requested": _psize(m.group(3))}
    if m.group(4):
        nums["device_used"] = _psize(m.group(4))
    free = m.group(5) or m.group(6)
    if free:
        nums["free"] = _psize(free)
    if "device_used" in nums and "free" in nums:
        nums["total"] = nums["device_used"] + nums["free"]
    dev = {"GPU": "cuda", "XPU": "xpu", "NPU": "npu", "MLU": "mlu"}[m.group(1)]
    return {"kind": "paddle.oom", "device_kind": dev, "device_index": int(m.group(2)), "numbers": nums, "runtime": "paddle",
            "complete": True}


def cupy(line):
    if "ut of memory allocating" not in line and "out of memory to allocate" not in line:
        return None
    m = CUPY.search(line)
    if not m:
        return None
    if m.group(4):
        req = int(m.group(4))
        nums = {"requested": req, "allocated": max(0, int(m.group(5)) - req)}
    elif not m.group(2) and len(m.group(1)) >= 4 and "," not in m.group(1) and "cupy" not in line.lower() \
            and "OutOfMemoryError" not in line:     # (rev6 B6) CuPy's own class on the line: CuPy's, re-typed
        # (round 115) CuPy writes its sizes with thousands separators ("{:,}": "Out of memory allocating 25,600,000 bytes");
        # the same words with a bare figure of four digits or more and no pool's "(allocated so far" are XLA's allocator's
        # status message without its code ("Out of memory allocating 79744204800 bytes", as XLA above reads it after
        # RESOURCE_EXHAUSTED): JAX's, as xla() names it, the device left to the log
        return {"kind": "xla.oom", "device_kind": None, "numbers": {"requested": int(m.group(1))}, "runtime": "jax",
                "complete": True}
    else:
        nums = {"requested": int(m.group(1).replace(",", ""))}
        if m.group(2):
            nums["allocated"] = int(m.group(2).replace(",", ""))
        if m.group(3):
            nums["limit"] = int(m.group(3).replace(",", ""))
    return {"kind": "cupy.oom", "device_kind": "cuda", "numbers": nums, "runtime": "cupy", "complete": True}


def rmm(line):
    if "bad_alloc" not in line and "bad allocation" not in line:
        return None
    m = RMM.search(line)
    if not m:
        return None
    if m.group(2) and XGB_ALLOC.search(line):     # XGBoost's own wrapper: the card's free memory and the request (round 73)
        nums = {("free" if k == "Free" else "requested"): parse_size(v, binary_decimal=True) for k, v in XGB_FIGURE.findall(line)}
        return {"kind": "xgboost.alloc", "device_kind": "cuda", "numbers": nums, "runtime": "xgboost", "complete": True}
    if m.group(3):      # RMM's cudaMalloc refused N bytes (rmm::out_of_memory with the size, round 73)
        return {"kind": "rmm.oom", "device_kind": "cuda", "numbers": {"requested": int(m.group(3))}, "runtime": "rapids",
                "complete": True, "form": "device"}
    if m.group(2):      # thrust's allocator inside a PyTorch extension (rasterizers, samplers)
        return {"kind": "cuda.driver", "device_kind": "cuda", "numbers": {}, "runtime": "pytorch", "complete": True, "form": "thrust"}
    return {"kind": "rmm.oom", "device_kind": "cuda", "numbers": {}, "runtime": "rapids", "complete": True,
            "form": "pool_limit" if m.group(1) else "device"}


def cuda_call(line):
    if "cudaMalloc" not in line and "cudaHostAlloc" not in line:
        return None
    m = CUDA_CALL.search(line)
    if not m:
        return None
    host = (m.group(1) or m.group(2) or m.group(3)) in ("cudaMallocHost", "cudaHostAlloc")
    return {"kind": "cuda.driver", "device_kind": "cuda", "numbers": {}, "runtime": None, "complete": True,
            "form": "runtime_host" if host else "runtime_call"}


def kit_vk(line):
    """(fixV) Omniverse Kit's renderer refused device memory (other_patterns.KIT_VK): Isaac Sim's run, as the corpus names Kit's.
    (fixY) Its host form (ERROR_OUT_OF_HOST_MEMORY) is system RAM: device cpu, form "host"."""
    if "Result: ERROR_OUT_OF_" not in line:
        return None
    m = KIT_VK.search(line)
    if not m:
        return None
    if m.group(1) == "HOST":
        return {"kind": "kit.vulkan", "device_kind": "cpu", "numbers": {}, "runtime": "isaacsim", "complete": True, "form": "host"}
    return {"kind": "kit.vulkan", "device_kind": "vulkan", "numbers": {}, "runtime": "isaacsim", "complete": True}


def ncnn_vk(line):
    if "vkAllocateMemory failed" not in line:
        return None
    m = NCNN_VK.search(line)
    if not m:
        return None
    host = m.group(1) == "-1"
    return {"kind": "vulkan.alloc", "device_kind": "vulkan", "numbers": {}, "runtime": "ncnn", "complete": True,
            "form": "host" if host else "device"}


def _plsize(text):
    return int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]] if text[-1] in "KMG" else int(text)


def libplacebo(line):
    if "Allocation of size" not in line:
        return None
    m = LIBPLACEBO.search(line)
    if not m:
        return None
    host = m.group(2) == "HOST"
    return {"kind": "libplacebo.alloc", "device_kind": "cpu" if host else "vulkan", "numbers": {"requested": _plsize(m.group(1))},
            "runtime": "libplacebo", "complete": True, "form": "host" if host else "device"}


def libplacebo_heap(ev, text) -> bool:
    """The first device-local heap libplacebo lists under its failure: the card's memory, as `total`."""
    line = text.split("] ")[-1]          # FFmpeg's "[libplacebo @ 0x...] " prefix
    m = LIBPLACEBO_HEAP.match(line)
    if not m or "total" in ev["numbers"]:
        return False
    if int(m.group(1), 16) & 1:
        ev["numbers"]["total"] = _plsize(m.group(2))
    return True


def dotnet(line):
    if "System.OutOfMemoryException" not in line:
        return None
    return {"kind": "dotnet.oom", "device_kind": "cpu", "numbers": {}, "runtime": "dotnet", "complete": True}


def ds4(line):
    if "ds4: " not in line:
        return None
    m = DS4.search(line)
    if not m:
        return None
    c = DS4_CHUNK.search(m.group(0))
    return {"kind": "ds4.alloc", "device_kind": m.group(1).lower(), "numbers": {"requested": parse_size(c.group(1))} if c else {},
            "runtime": "ds4", "complete": True, "form": "model" if m.group(2) == "model arena" else "tensor"}


def tt_metal(line):
    if "Not enough space to allocate" not in line:
        return None
    m = TT_METAL.search(line)
    if not m:
        return None
    return {"kind": "ttmetal.oom", "device_kind": None, "runtime": "tt-metal", "complete": True,
            "numbers": {"requested": int(m.group(1)), "total": int(m.group(2)), "allocated": int(m.group(3)), "free": int(m.group(4))}}


def lmstudio(line):
    if "insufficient system resources" not in line and "Not enough resources to load" not in line:
        return None
    m = LMSTUDIO.search(line)
    if not m:
        return None
    ev = {"kind": "lmstudio.guardrail", "device_kind": None, "numbers": {}, "runtime": "lmstudio", "complete": True}
    if m.group(1):
        ev["numbers"]["required"] = parse_size(m.group(1), binary_decimal=True)
    elif m.group(2):
        ev["form"] = "no_estimate"       # its estimate failed ("NaN undefined"): a bug of the estimate, not a shortage
    return ev


def mlx_load_preflight(line):
    """An MLX server's load pre-flight refusal (MLX_LOAD_PREFLIGHT): the load requirement it computed and the memory it
    counted (free, available, or its configured max-model-memory), and the weights where the message names them apart."""
    if "Insufficient memory to load model" not in line and "available Metal memory budget" not in line \
            and "exceeds max-model-memory" not in line:
        return None
    m = MLX_LOAD_PREFLIGHT.search(line)
    if not m:
        return None
    b = lambda i: parse_size(m.group(i).replace(" ", ""), binary_decimal=True)
    if m.group(1):
        nums, weights = {"required": b(1), "available": b(3)}, b(2)
    elif m.group(4):
        nums, weights = {"required": b(4), "free": b(5)}, b(4)
    elif m.group(6):        # MTPLX: "at least A resident plus H system headroom": required is the printed resident
        # figure A (weights and caches), the headroom H its own number; the evidence sums them (rules_other)
        nums, weights = {"required": b(6), **({"headroom": b(7)} if m.group(7) else {})}, b(6)
    else:
        nums, weights = {"required": b(8), "max_allowed": b(9)}, b(8)
    ev = {"kind": "mlx.load_preflight", "device_kind": "metal", "numbers": nums, "runtime": "mlx", "complete": True}
    if weights is not None:
        ev["weights"] = weights
    return ev


mlx_load_preflight.needed = ("Insufficient memory to load model", "available Metal memory budget", "exceeds max-model-memory")


def app_vram_preflight(line):
    """An application's own VRAM pre-flight refusal (APP_VRAM_PREFLIGHT): its estimate of the job's need over the memory
    free on the card at that moment. The same line with the need under the free figure is the check passing: no event."""
    if "VRAM pre" not in line:
        return None
    m = APP_VRAM_PREFLIGHT.search(line)
    if not m:
        return None
    b = lambda i: parse_size(m.group(i).replace(" ", ""), binary_decimal=True)
    free, need = b(1), b(2)
    if need <= free:
        return None
    return {"kind": "app.vram_preflight", "device_kind": None, "numbers": {"free": free, "required": need},
            "runtime": "pytorch", "complete": True}


app_vram_preflight.needed = ("VRAM pre-flight", "VRAM preflight")


# (round 117) Unsloth Studio's host-offload guard refusing a GGUF load before llama-server starts (studio's load check,
# unslothai/unsloth#9482): "About N GB of this model does not fit in GPU memory and would run from system RAM. Only about A GB
# is available and K GB of that is kept free for the rest of the system, leaving about U GB usable. ... set
# UNSLOTH_ALLOW_HOST_OFFLOAD=1 to load it anyway". The spill it priced (required), the RAM it counted (available) and what it
# leaves usable (limit); GB as printed. Runtime unsloth-studio, the app, whose engine for GGUFs is llama.cpp (env.ENGINE_OF)
_STUDIO_GB = r"(\d{1,6}(?:\.\d{1,3})?) ?([KMGT]i?B)"
STUDIO_HOST_GUARD = re.compile(r"About " + _STUDIO_GB + r" of this model does not fit in GPU memory and would run from system "
                               r"RAM\. Only about " + _STUDIO_GB + r" is available(?: and " + _STUDIO_GB + r" of that is kept "
                               r"free for the rest of the system, leaving about " + _STUDIO_GB + r" usable)?")


# (rev8 S2) its unified-memory APU form (_apu_ram_shortfall_message): "This model needs about N GB but only about A GB of
# memory is available. On a unified-memory APU the weights load into system RAM, ..." - the weights (required) against
# the RAM it counted (available)
STUDIO_APU_GUARD = re.compile(r"This model needs about " + _STUDIO_GB + r" but only about " + _STUDIO_GB + r" of memory is "
                              r"available\. On a unified-memory APU")


def studio_host_guard(line):
    """Unsloth Studio's host-RAM guards (STUDIO_HOST_GUARD: a discrete GPU's spill; STUDIO_APU_GUARD, form "apu": a
    unified-memory APU's weights): a refusal by the application's estimate before llama-server starts."""
    if "would run from system RAM" in line:
        m, form = STUDIO_HOST_GUARD.search(line), None
    elif "unified-memory APU" in line:
        m, form = STUDIO_APU_GUARD.search(line), "apu"
    else:
        return None
    if not m:
        return None
    b = lambda i: parse_size(m.group(i) + " " + m.group(i + 1), binary_decimal=True)
    nums = {"required": b(1), "available": b(3), **({"limit": b(7)} if form is None and m.group(7) else {})}
    return {"kind": "app.host_offload_guard", "device_kind": None, "numbers": nums, "runtime": "unsloth-studio", "complete": True,
            **({"form": form} if form else {})}


studio_host_guard.needed = ("would run from system RAM", "unified-memory APU")


def iree_alloc(line):
    if "RESOURCE_EXHAUSTED" not in line:
        return None
    m = IREE_ALLOC.search(line)
    if not m:
        return None
    return {"kind": "iree.alloc", "device_kind": {"HIP": "rocm", "CUDA": "cuda"}.get(m.group(1)) or ("vulkan" if m.group(2) else None),
            "runtime": "iree", "numbers": {"requested": int(m.group(3))}, "complete": True}


iree_alloc.needed = ("RESOURCE_EXHAUSTED",)


def ollama_fit(line):
    if "are available (after" not in line:
        return None
    m = OLLAMA_FIT.search(line)
    if not m:
        return None
    nums = {"required": parse_size(m.group(1)), "available": parse_size(m.group(2)), "overhead": parse_size(m.group(3))}
    return {"kind": "ollama.fit", "device_kind": None, "numbers": nums, "runtime": "ollama", "complete": True}


def ollama_graph_over(line):
    """(round 106) Ollama's offload record placing no layer on the GPU (layers.offload=0) while its own estimate of the
    compute graph alone (memory.graph.full) is over every GPU's available memory (memory.available): the graph, sized by
    the context and the parallel slots, does not fit, so the whole model goes to system RAM (ollama/ollama#11790: 3 x 128k
    context, a 96.0 GiB graph over 95.8 GiB). The same record with the graph under the memory is a plan, not a failure."""
    if "layers.offload=0 " not in line or "memory.graph.full" not in line:
        return None
    g, a = OLLAMA_GRAPH_FULL.search(line), OLLAMA_AVAILABLE.search(line)
    avail = [parse_size(s) for s in OLLAMA_SIZES.findall(a.group(1))] if a else []
    if not g or not avail or parse_size(g.group(1)) <= max(avail):
        return None
    lib = OLLAMA_LIBRARY.search(line)
    return {"kind": "ollama.graph_over", "device_kind": {"cuda": "cuda", "rocm": "rocm"}.get(lib.group(1).lower()) if lib else None,
            "numbers": {"required": parse_size(g.group(1)), "available": max(avail)}, "runtime": "ollama", "complete": True}


ollama_graph_over.needed = ("msg=offload", 'msg="offload to ')


def ggml_sycl(line):
    if "Bytes of memory on" not in line:
        return None
    m = GGML_SYCL.search(line)
    if not m:
        return None
    host = m.group(2) == "host"
    return {"kind": "ggml.host" if host else "ggml.buffer", "device_kind": "cpu" if host else "xpu",
            "numbers": {"requested": int(m.group(1))}, "runtime": "llama.cpp", "complete": True, "form": "sycl"}
