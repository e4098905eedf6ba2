"""Recognisers for the LLM servers' lines: vLLM's start-up and KV-length checks, llama.cpp's buffers and context pool,
Ollama's runner wrapper, TensorRT-LLM's executor and SGLang's KV pool (with the fields they print on the lines under
their first). parse.py lists them among its recognisers."""
import re

from . import error_patterns as RX
from .other_runtimes import DOTNET_OBJECT, XGB_FIGURE, libplacebo_heap
from .native_runtimes import kmcuda_buffer, rapids_rmm_max
from .text import num, size
from .xla_runtimes import xla_tpu_used
from .kernel_limits import metal_threadgroup_tail     # (round 110)


def _vllm_v1(line):
    m = RX.VLLM_V1_LEN.search(line)
    if m:
        nums = {"max_model_len_tokens": int(m.group(1)), "kv_needed": size(m.group(2)), "kv_available": size(m.group(3))}
        if m.group(4):
            nums["estimated_max_len_tokens"] = int(m.group(4))
        return {"kind": "vllm.kv_max_len", "device_kind": "cuda", "numbers": nums, "runtime": "vllm", "complete": True}
    m = RX.VLLM_V1_LEN_SHORT.search(line)
    if m:
        nums = {"kv_needed": size(m.group(1)), "kv_available": size(m.group(2))}
        if m.group(3):
            nums["estimated_max_len_tokens"] = int(m.group(3))
        return {"kind": "vllm.kv_max_len", "device_kind": "cuda", "numbers": nums, "runtime": "vllm", "complete": True}
    # the same check quoted without its numbers (v1/core/kv_cache_utils.py check_enough_kv_cache_memory's wording)
    if "KV cache is needed, which is larger than the available KV cache memory" in line:
        return {"kind": "vllm.kv_max_len", "device_kind": "cuda", "numbers": {}, "runtime": "vllm", "complete": False, "form": "bare"}
    return None


# (round 83) torch's device types as vLLM's start-up check names them: Intel's XPU and Ascend's NPU builds print their own
# ("xpu:0", "npu:0"); "cuda" is CUDA's and ROCm's (HIP runs under torch.cuda), told apart by the log's other lines
_TORCH_DEVICE = {"cuda": "cuda", "xpu": "xpu", "npu": "npu"}


def _vllm_startup(line):
    m = RX.VLLM_STARTUP.search(line)
    if not m:
        if "less than desired" in line and RX.VLLM_STARTUP_CUT.search(line):
            return {"kind": "vllm.startup_free", "device_kind": "cuda", "numbers": {}, "runtime": "vllm", "complete": True, "form": "cut"}
        m = RX.VLLM_STARTUP_HEAD.search(line)       # (round 116) the head alone: free and total, the rest of the sentence cut
        if m:
            return {"kind": "vllm.startup_free", "device_kind": _TORCH_DEVICE.get(m.group(1), "cuda"), "runtime": "vllm",
                    "numbers": {"free": size(m.group(2) + " GiB"), "total": size(m.group(3) + " GiB")}, "complete": True, "form": "cut"}
        return None
    nums = {"free": size(m.group(2) + " GiB"), "total": size(m.group(3) + " GiB"),
            "gpu_memory_utilization_ratio": num(m.group(4)), "requested": size(m.group(5) + " GiB")}
    return {"kind": "vllm.startup_free", "device_kind": _TORCH_DEVICE.get(m.group(1), "cuda"), "numbers": nums, "runtime": "vllm",
            "complete": True}



def _gib(text):
    """format_gib's figure (may be negative: vLLM's KV share less the worker's RSS) in bytes"""
    return -size(text[1:] + " GiB") if text.startswith("-") else size(text + " GiB")


def _vllm_cpu_node(line):
    """(fixZ) vLLM's CPU worker refused to start or to allocate its KV cache for lack of the NUMA node's RAM
    (error_patterns.VLLM_CPU_NODE). Form "startup" (the share of the node's total, nothing loaded yet: what is not available is
    held outside the worker), "kv_explicit" (--kv-cache-memory-bytes) or "kv_auto" (the share less the worker's RSS, which
    cpu_worker.determine_available_memory subtracted: this_process = share - kv, exactly that RSS to format_gib's rounding)."""
    if "Available memory on node" not in line:
        return None
    m = RX.VLLM_CPU_NODE.search(line)
    if not m or (m.group(5) is None) == (m.group(4) == "startup"):  # (rev54) halves of two checks: not vLLM's sentence
        return None
    avail, total = _gib(m.group(2)), _gib(m.group(3))
    nums = {"available": avail, "total": total}
    if m.group(4) == "startup":
        nums.update({"gpu_memory_utilization_ratio": num(m.group(5)), "requested": _gib(m.group(6))})
        nums["other_processes"] = max(total - avail, 0)
        form = "startup"
    else:
        kv = _gib(m.group(7))
        if kv > 0:
            nums["kv_needed"] = kv
        form = "kv_explicit" if m.group(8) is None else "kv_auto"
        if form == "kv_auto":
            nums["requested"] = _gib(m.group(8))
            nums["this_process"] = nums["requested"] - kv
            if total - avail - nums["this_process"] > 0:
                nums["other_processes"] = total - avail - nums["this_process"]
    return {"kind": "vllm.cpu_node", "device_kind": "cpu", "numbers": nums, "runtime": "vllm", "complete": True, "form": form}

# ggml buffer names: "CPU", "CPU_Mapped" and any backend's pinned "<name>_Host" (CUDA_Host, ROCm_Host, Vulkan_Host,
# SYCL_Host) are system RAM; "CUDA0", "ROCm0", "Vulkan0", "Metal" a device. The backend by the name's prefix (one table)
_GGML_BUF_KIND = (("CPU", "cpu"), ("CUDA", "cuda"), ("ROCm", "rocm"), ("HIP", "rocm"), ("Vulkan", "vulkan"),
                  ("Metal", "metal"), ("MTL", "metal"), ("SYCL", "xpu"),
                  # ggml-cann's buffers ("CANN0", ggml-cann.cpp GGML_CANN_NAME) and ggml-musa's ("MUSA0": ggml-cuda built for MUSA)
                  ("CANN", "npu"), ("MUSA", "musa"))


def ggml_buf(name):
    """(backend's device kind, host) of a ggml buffer name: the backend by its prefix (None: a name the table does not
    know, or none); host True for system RAM: the CPU backend's buffers and any backend's pinned '<backend>_Host' buffer,
    which that backend's driver page-locks (the device in question stays that backend's)."""
    kind = next((k for prefix, k in _GGML_BUF_KIND if name and name.startswith(prefix)), None)
    return kind, bool(name) and ("_Host" in name or kind == "cpu")


# (round 82) ggml-alloc's alloc_tensor_range line ("%s: failed to allocate %s buffer of size %zu") quoted cut before its size
# ("failed to allocate CPU buffer", the line's end): read when the name is a buffer type of the table above, no size
# (round 83) and the CPU backend's own line (ggml-backend.cpp ggml_backend_cpu_buffer_type_alloc_buffer: "%s: failed to allocate
# buffer of size %zu", its one message) quoted cut after "failed": the CPU backend's buffer, no size
GGML_BUFFER_CUT = re.compile(r"failed to allocate ((?:" + "|".join(p for p, _ in _GGML_BUF_KIND) + r")\w{0,20}) buffer\s*$"
                             r"|\bggml_backend_cpu_buffer_type_alloc_buffer: failed(?: to(?: allocate(?: buffer(?: of(?: size)?)?)?)?)?\s*$")


def _ggml_buffer(line):
    m = RX.GGML_BUFFER.search(line)
    cut = None if m or "buffer" not in line else GGML_BUFFER_CUT.search(line)
    if not (m or cut):
        return None
    name = (m or cut).group(1) or ""
    dk, host = ggml_buf(name)
    if not name and "ggml_backend_cpu_buffer_type" in line:
        dk = "cpu"                 # the CPU backend's buffer (llama.cpp before buffer names were printed, or its line cut)
    ev = {"kind": "ggml.buffer", "device_kind": dk, "numbers": {"requested": int(m.group(2))} if m else {},
          "runtime": "llama.cpp", "complete": True}
    if cut:
        ev["form"] = "cut"         # quoted without its size
    if host and "_Host" in name:
        ev["host"] = True          # a backend's pinned host buffer (SYCL_Host, CUDA_Host, ...): system RAM
    return ev


def _ggml_load(line):
    """llama_model_load's "unable to allocate Vulkan0 buffer": the device its buffer name says (llama.cpp's older
    "unable to allocate backend buffer" names none); a host buffer (CPU, SYCL_Host, ...) is system RAM, as on the
    alloc_tensor_range line before it."""
    m = RX.GGML_LOAD.search(line)
    if not m:
        return None
    dk, host = ggml_buf(m.group(1))
    ev = {"kind": "ggml.model_load", "device_kind": dk, "numbers": {}, "runtime": "llama.cpp", "complete": True}
    if host:
        ev["host"] = True
    return ev


def _trtllm(line):
    if "Executor creation failed" not in line:
        return None
    m = RX.TRTLLM_EXECUTOR.search(line)
    if not m:
        return None
    ev = {"kind": "trtllm.executor", "device_kind": "cuda", "numbers": {}, "runtime": "tensorrt-llm", "complete": True}
    add_block_fields(ev, line[m.end():])
    return ev


def _sglang_kv(line):
    if "lower your batch size" not in line:
        return None
    m = RX.SGLANG_KV.search(line)
    if not m:
        return None
    ev = {"kind": "sglang.kv_pool", "device_kind": None, "numbers": {}, "runtime": "sglang", "complete": True,
          "stage": (m.group(1) or "next").lower()}
    add_block_fields(ev, line[m.end():])
    return ev


BLOCK_KINDS = ("trtllm.executor", "vllm.kv_max_len", "sglang.kv_pool", "dotnet.oom", "libplacebo.alloc", "vllm_metal.kv_budget", "ds4.memory_guard",
               "kmcuda.alloc")
BLOCK_KINDS += ("rapids.rmm_init",)      # the Spark RAPIDS plugin's pool line under its warning (round 59)
BLOCK_KINDS += ("xgboost.alloc",)        # XGBoost's "- Free memory:" and "- Requested memory:" lines when printed unescaped (round 73)
BLOCK_KINDS += ("xla.oom",)             # XLA:TPU's compile failure with its "Used N of M hbm." on the next line (round 92)
BLOCK_KINDS += ("metal.threadgroup",)   # Metal's threadgroup-memory limit wrapped before "memory allowed (M)" (round 110)
# ds4's memory guard (its GLM branch, antirez/ds4#889) refuses a plan before allocating the graph: "ds4: GLM memory guard
# refused ctx=1000000 ... before GLM graph allocation"; the lines under it give the model map, then the sum it needed and the
# budget with what the budget came from ("required model+graph: 195.91 GiB; guard budget: 110.00 GiB (base 512.00 GiB,
# fraction 0.99, reserve 32.00 GiB, transient 0.00 GiB)"), read by add_block_fields. The lines do not name the backend.
# guard_room (base x fraction - reserve - transient) is inferred from those printed fields, one issue's line: the ds4 source
# snapshot read for this (antirez/ds4 8d57664) has no GLM memory guard to check it against.
_DS4_GUARD = re.compile(r"ds4: (?:\w{1,16} )?memory guard refused\b")
_DS4_SIZE = r"(\d{1,6}(?:\.\d{1,6})? [KMGT]iB)"   # digits and one point (not "8..7")
_DS4_MODEL_MAP = re.compile(r"ds4:\s{1,8}model map: " + _DS4_SIZE)
_DS4_GUARD_FIGURES = re.compile(r"ds4:\s{1,8}required model\+graph: " + _DS4_SIZE + "; guard budget: " + _DS4_SIZE
                                + r"(?: \(base " + _DS4_SIZE + r", fraction (\d{1,3}(?:\.\d{1,6})?), reserve " + _DS4_SIZE
                                + r"(?:, transient " + _DS4_SIZE + r")?)?")
# (a wrap may fall anywhere in "maximum model length is N": the line under the check is read joined to the end of the
# text before it, so each word gap is covered; review16a F7)
_VLLM_ESTIMATE = re.compile(r"maximum\s{1,4}model\s{1,4}length\s{1,4}is\s{1,4}(\d{1,20})")
_SGLANG_TOKENS = re.compile(r"Try to allocate (\d{1,20}) tokens")
# what the pool had when it refused: free plus evictable slots, as SGLang prints their sum ("Avaliable tokens: 2048" in its
# early spelling, "Available tokens: 5248 (available_size=5248 + evictable_size=0)"); the hybrid (SWA) pools' "Available
# full tokens" / "Available swa" lines are two pools' counts, not this one (not read)
# (round 74: and with no space after the colon, as a PR quotes it: "Avaliable tokens:5120", sgl-project/sglang#5081)
_SGLANG_AVAILABLE = re.compile(r"\bAva(?:il|li)able tokens: ?(\d{1,20})")

# vllm-metal (vLLM's Apple-silicon plugin) sizes the paged KV cache from its Metal budget after a profile run, and refuses
# to start when nothing is left: "ValueError: Paged attention: not enough Metal memory for KV cache." with its budget on the
# same line (vllm_metal/v1/cache_policy.py _validate_paged_attention_plan) or, rewrapped, on the lines under it
# ("metal_limit=40.20GB, fraction=0.92, usable_metal=36.98GB," / "model_memory=13.76GB, overhead=37.86GB, kv_budget=-14.63GB.":
# vllm-project/vllm-metal#585), read by vllm_metal_fields
VLLM_METAL_KV = re.compile(r"Paged attention: not enough Metal memory for KV cache\b")
# vllm-metal's budget after its KV refusal (_PagedAttentionPlan.format_breakdown): the Metal limit, the fraction of it vLLM may
# use and the product, then the weights, the profile run's measured overhead and what was left for the KV cache (negative when
# nothing was). The source prints one line ("...for KV cache. metal_limit=40.20GB, fraction=0.92, ..."); a copy rewrapped by
# its reporter has them on the lines under it. Each GB is decimal: the source divides the bytes by 1e9.
_VLLM_METAL_FIELD = re.compile(r"\b(metal_limit|fraction|usable_metal|model_memory|overhead|kv_budget)=(-?\d{1,6}(?:\.\d{1,6})?)(GB)?")
_VLLM_METAL_KEY = {"metal_limit": "device_limit", "usable_metal": "max_allowed", "fraction": "gpu_memory_utilization_ratio"}


def vllm_metal_fields(ev, text) -> bool:
    """vllm-metal's budget fields in text (the event's own line or one under it), into ev. True if a field matched."""
    hit = False
    for name, v, unit in _VLLM_METAL_FIELD.findall(text[:400]):
        if name == "fraction":
            ev["numbers"][_VLLM_METAL_KEY[name]] = num(v)
        elif unit:
            b = int(round(num(v) * 1e9))      # decimal GB (the source's `/ 1e9`), sign kept
            if name in _VLLM_METAL_KEY:
                ev["numbers"][_VLLM_METAL_KEY[name]] = b
            else:
                ev[name] = b        # weights, overhead, KV budget: no key of the numbers vocabulary
        hit = True
    return hit


def vllm_metal_kv(line):
    if "not enough Metal memory" not in line:
        return None
    m = VLLM_METAL_KV.search(line)
    if not m:
        return None
    ev = {"kind": "vllm_metal.kv_budget", "device_kind": "metal", "numbers": {}, "runtime": "vllm", "complete": True}
    vllm_metal_fields(ev, line[m.end():])
    return ev


vllm_metal_kv.needed = ("not enough Metal memory",)


def _ds4_guard(line):
    if "memory guard refused" not in line or not _DS4_GUARD.search(line):
        return None
    return {"kind": "ds4.memory_guard", "device_kind": None, "numbers": {}, "runtime": "ds4", "complete": True}


def add_block_fields(ev, text) -> bool:
    """What a message prints on the lines under its first: TensorRT-LLM's table under its executor failure (component,
    total, free before it), vLLM's estimated maximum length when its message is wrapped, the tokens SGLang's KV pool was
    asked for and the tokens it said it had. True if a field matched."""
    if ev.get("kind") == "sglang.kv_pool":
        hit = False
        for key, rx in (("requested_tokens", _SGLANG_TOKENS), ("available_tokens", _SGLANG_AVAILABLE)):
            m = rx.search(text) if key not in ev["numbers"] else None
            if m:
                ev["numbers"][key] = int(m.group(1))
                hit = True
        return hit
    if ev.get("kind") == "vllm.kv_max_len":
        text = ev.get("_tail", ev.get("text", "")[-48:]) + " " + text.strip()[:200]
        ev["_tail"] = text[-48:]
        m = _VLLM_ESTIMATE.search(text) if "estimated_max_len_tokens" not in ev["numbers"] else None
        if m:
            ev["numbers"]["estimated_max_len_tokens"] = int(m.group(1))
        return bool(m)
    if ev.get("kind") == "vllm_metal.kv_budget":
        return vllm_metal_fields(ev, text)
    if ev.get("kind") == "libplacebo.alloc":
        return libplacebo_heap(ev, text)
    if ev.get("kind") == "kmcuda.alloc":
        return kmcuda_buffer(ev, text)
    if ev.get("kind") == "rapids.rmm_init":
        return rapids_rmm_max(ev, text)
    if ev.get("kind") == "xla.oom":
        return xla_tpu_used(ev, text)
    if ev.get("kind") == "metal.threadgroup":
        return metal_threadgroup_tail(ev, text)     # (round 110) the limit of a wrapped message
    if ev.get("kind") == "xgboost.alloc":
        m = XGB_FIGURE.search(text)
        key = m and ("free" if m.group(1) == "Free" else "requested")
        if not m or key in ev["numbers"]:
            return False
        ev["numbers"][key] = size(m.group(2))     # HumanMemUnit's GB is GiB
        return True
    if ev.get("kind") == "ds4.memory_guard":
        m = _DS4_MODEL_MAP.search(text)
        if m:
            ev["weights"] = size(m.group(1))
            return True
        m = _DS4_GUARD_FIGURES.search(text)
        if not m:
            return False
        # every figure read before the event is touched: one that is no number (SizeError) leaves it as it was
        nums = {"required": size(m.group(1)), "limit": size(m.group(2))}
        room = None
        if m.group(3):
            nums["total"] = size(m.group(3))
            room = nums["total"] * num(m.group(4)) - size(m.group(5)) - (size(m.group(6)) if m.group(6) else 0)
        ev["numbers"].update(nums)
        if room is not None:
            ev["guard_room"] = room
        return True
    if ev.get("kind") == "dotnet.oom":
        # the first stack frame under .NET's exception is the method that threw it: an object grown past its size limit
        if "frame" in ev or not text.lstrip().startswith("at "):
            return False
        ev["frame"] = text.strip()[:120]
        if DOTNET_OBJECT.search(text):
            ev["form"] = "object_limit"
        return True
    if ev.get("kind") != "trtllm.executor":
        return False
    hit = False
    for key, rx in RX.TRTLLM_FIELDS.items():
        m = rx.search(text)
        if m:
            if key == "component":
                ev["component"] = m.group(1)
            else:
                ev["numbers"][key] = size(m.group(1) + " GiB")
            hit = True
    return hit


def _ggml_ctx_pool(line):
    """ggml's fixed pools: a context's memory pool or (2023) its scratch buffer. Forms: "tensor_impl" and "object"
    (the context's pool with its numbers), "scratch" (the scratch buffer), "cut" (the context's pool without numbers),
    "tallocr" (the graph allocator's own buffer, on whichever device the graph runs: no device kind of its own), "bare" (the
    context's pool with its numbers, quoted without the function's name; round 84)."""
    if "space in the buffer" in line:
        m = RX.GGML_TALLOC.search(line)
        if not m:
            return None
        req, avail = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        return {"kind": "ggml.ctx_pool", "device_kind": None, "numbers": {"requested": int(req), "available": int(avail)},
                "runtime": "llama.cpp", "complete": True, "form": "tallocr"}
    if "context's memory pool" not in line and "scratch memory" not in line:
        return None
    m = RX.GGML_CTX_POOL.search(line)
    if not m:
        return None
    if m.group(5):
        # (round 84) the bare line: ggml's context pool with its numbers, the function (tensor_impl, object) not named
        return {"kind": "ggml.ctx_pool", "device_kind": "cpu", "numbers": {"requested": int(m.group(6)), "available": int(m.group(7))},
                "runtime": "llama.cpp", "complete": True, "form": "bare"}
    nums = {"requested": int(m.group(3)), "available": int(m.group(4))} if m.group(3) else {}
    form = "scratch" if m.group(2) == "scratch memory" else m.group(1) if nums else "cut"
    return {"kind": "ggml.ctx_pool", "device_kind": "cpu", "numbers": nums, "runtime": "llama.cpp", "complete": True, "form": form}


def _ollama_runner(line):
    m = RX.OLLAMA_RUNNER.search(line)
    if not m:
        return None
    inner = (m.group(1) or m.group(2) or m.group(3) or "").strip()
    ev = {"kind": "ollama.runner", "device_kind": None, "numbers": {}, "runtime": "ollama", "complete": True,
          "inner": inner[:500], "wrapper": True}
    if m.group(3) is not None:
        ev["form"] = "gone"      # a runner that died: an OOM only when its last error is one (parse._ollama_runner_gone)
    elif b := RX.GGML_BUFFER.search(inner):
        # "process has terminated: ..." quoting the runner's own allocator line ("failed to allocate [CUDA_Host] buffer of
        # size N"): the refused size is the event's; its device is left to the incident's lines
        ev["numbers"]["requested"] = int(b.group(2))
    return ev


# (round 112) a GPU backend's pinned host buffer type allocates through the CPU backend when page-locking is refused or off
# (ggml-cuda's host buffer falls back to ggml_backend_cpu_buffer_type), so the CPU backend's own line
# ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size N") comes first and alloc_tensor_range's
# "failed to allocate CUDA_Host buffer of size N" (the same N) follows: the buffer is system RAM, the device that build's
def ggml_host_backend(events) -> str | None:
    """The GPU backend whose '<name>_Host' buffer of the same size follows a CPU-backend buffer failure, else None."""
    cpu = next((e for e in events if e.get("kind") == "ggml.buffer" and e.get("device_kind") == "cpu"), None)
    size = cpu and cpu["numbers"].get("requested")
    return next((e["device_kind"] for e in events if size and e.get("kind") == "ggml.buffer" and e.get("host")
                 and e.get("device_kind") not in (None, "cpu") and e["numbers"].get("requested") == size), None)
