"""Recognisers of a native library's own error check, one line each and mostly without figures: ggml's OpenCL status,
vLLM's cumem allocator, Caffe's and Marian's CUDA checks, HAMi-core's vGPU limit, comfy-aimdo's failed driver call, and
the CUDA/HIP/ROCm "error: out of memory" check of PyTorch, ggml and C++ extensions. parse.RECOGNISERS lists them at
their place in its order."""
from . import error_patterns as RX
from .other_patterns import MARIAN_CUDA as _MARIAN_CUDA
from .other_runtimes import CAFFE_CUDA as _CAFFE_CUDA, GGML_OPENCL as _GGML_OPENCL, HAMI_OOM as _HAMI_OOM, VLLM_CUMEM as _VLLM_CUMEM
from .prefilter import _gate
from .torch_readers import _dev_kind


@_gate(" error -4 at ", " error -5 at ", " error -6 at ")
def _ggml_opencl(line):
    m = _GGML_OPENCL.search(line) if "ggml_opencl: " in line else None
    if not m:
        return None
    if m.group(1) == "-6":           # CL_OUT_OF_HOST_MEMORY
        return {"kind": "ggml.host", "device_kind": "cpu", "numbers": {}, "runtime": "llama.cpp", "complete": True}
    return {"kind": "opencl.alloc", "device_kind": None, "numbers": {}, "runtime": "llama.cpp", "complete": True}


@_gate("cumem_allocator")
def _vllm_cumem(line):
    m = _VLLM_CUMEM.search(line) if "cumem_allocator" in line else None
    if not m:
        return None
    err = m.group(1).strip()
    return {"kind": "vllm.cumem", "device_kind": "cuda", "numbers": {}, "runtime": "vllm", "complete": True,
            "form": "oom" if err == "out of memory" else "fault", "error": err}


@_gate("cudaSuccess (2 vs. 0)")
def _caffe_cuda(line):
    m = _CAFFE_CUDA.search(line) if "cudaSuccess (2 vs. 0)" in line else None
    if not m:
        return None
    host = m.group(1) == "syncedmem.hpp"          # CaffeMallocHost: cudaMallocHost, pinned host memory
    return {"kind": "cuda.driver", "device_kind": "cuda", "numbers": {}, "runtime": "caffe", "complete": True,
            "form": "runtime_host" if host else "runtime_call"}


@_gate("HAMI-core")
def _hami(line):
    """(round 72) HAMi-core's refusal in a vGPU pod: the usage it tracks after the request, over the pod's limit (bytes)."""
    m = _HAMI_OOM.search(line) if "HAMI-core" in line else None
    if not m or int(m.group(2)) <= int(m.group(3)):     # (review30) HAMi prints it only over the limit (allocator.c oom_check)
        return None
    return {"kind": "hami.oom", "device_kind": "cuda", "device_index": int(m.group(1)), "runtime": None, "complete": True,
            "numbers": {"required": int(m.group(2)), "limit": int(m.group(3))}}


@_gate("API FAILED")
def _aimdo_cuda(line):
    """comfy-aimdo's log of a CUDA driver call that failed with anything but out-of-memory (a fault, not a shortage)."""
    if "API FAILED" not in line or "aimdo" not in line:
        return None
    m = RX.AIMDO_CUDA.search(line)
    err = line[m.end():].rpartition(":")[2].strip() if m else ""
    if not RX.AIMDO_CUDA_ERROR.fullmatch(err):
        return None
    return {"kind": "comfy.aimdo_cuda", "device_kind": "cuda", "numbers": {}, "runtime": "comfyui", "complete": True,
            "call": m.group(2), "error": err}


@_gate(RX.DRIVER)
def _driver(line):
    m = RX.DRIVER.search(line)
    if not m:
        return None
    dev = m.group(1) or ("HIP" if (m.group(3) or "").startswith("hip") else "CUDA")
    # "(at path/file.h:88)": a C++ extension's own allocation (nunchaku, ...), not a PyTorch runtime call
    ext = "(at " in line[m.end():m.end() + 8]
    # "ROCm error:" is ggml's CUDA check in a HIP build (GGML_CUDA_NAME); PyTorch's HIP check says "HIP error:"
    form = "extension" if ext else "driver_check" if m.group(2) == "driver" else "ggml_check" if dev == "ROCm" else "torch_check"
    return {"kind": "cuda.driver", "device_kind": _dev_kind(dev), "numbers": {}, "runtime": "pytorch", "complete": True, "form": form}


@_gate("CUDA error 2 'out of memory'")
def _marian_cuda(line):
    """(round 94) Marian's CUDA check at error 2: a cudaMalloc of its own (Device::reserve's workspace) is the program's own runtime
    call (form runtime_call, as Caffe's and Theano's are); another call the check wrapped, form marian_check. No figures."""
    m = _MARIAN_CUDA.search(line) if "CUDA error 2 'out of memory'" in line else None
    if not m:
        return None
    return {"kind": "cuda.driver", "device_kind": "cuda", "numbers": {}, "runtime": "marian", "complete": True,
            "form": "runtime_call" if m.group(1).startswith("cudaMalloc") else "marian_check"}
