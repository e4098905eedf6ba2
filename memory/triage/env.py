"""Environment inference: the OS, backend, allocator and runtime of one failure, from the log's facts,
the failure's own message and what the host knows (context). Guides are chosen by these values."""
import re

from .runtime_around import seen_around
from .runtime_markers import CUT_FRAMES, MARKERS_NOT_OVER_TORCH, MARKERS_UNDER_COMFYUI, NAMED_FRAMES

# PyTorch honours expandable_segments on ROCm (HIP virtual memory management) from 2.12, in builds for ROCm 7.0 or later
# (pytorch#177974, the reland of #173330; gated to ROCM_VERSION >= 70000 by #179930). Upstream 2.11 (released 2026-03-23)
# predates it, but AMD's own 2.11 wheels carry the backport (ROCm/pytorch#3106), so 2.11 stays undecided.
ROCM_EXPANDABLE_TORCH = (2, 12)
ROCM_EXPANDABLE_UNSURE = (2, 11)
ROCM_EXPANDABLE_ROCM = (7, 0)
_VERSION_RE = re.compile(r"^(\d{1,20})\.(\d{1,20})")
_ROCM_RE = re.compile(r"rocm(\d{1,20})\.(\d{1,20})")


def rocm_expandable(torch_version) -> bool | None:
    """Whether a ROCm build of this PyTorch version honours expandable_segments; None where the log does not say."""
    m = _VERSION_RE.match(torch_version or "")
    if not m:
        return None
    v = (int(m.group(1)), int(m.group(2)))
    if v < ROCM_EXPANDABLE_UNSURE:
        return False
    if v == ROCM_EXPANDABLE_UNSURE:
        return None
    r = _ROCM_RE.search(torch_version)
    return None if not r else (int(r.group(1)), int(r.group(2))) >= ROCM_EXPANDABLE_ROCM


def expandable_note(env) -> str | None:
    """What a fragmentation guide must add on ROCm when the log does not show the PyTorch version."""
    if env.get("backend") != "rocm" or env.get("expandable_segments") is not None:
        return None
    t, r = ROCM_EXPANDABLE_TORCH, ROCM_EXPANDABLE_ROCM
    return (f"**Unknown here: whether this ROCm build honours expandable_segments.** PyTorch {t[0]}.{t[1]} or later built for "
            f"ROCm {r[0]}.{r[1]} or later does (pytorch#177974); older builds print \"expandable_segments not supported on this "
            "platform\" and ignore it, and the log does not show the version (AMD's own 2.11 wheels carry the backport). Check:\n\n"
            "```bash\npython -c \"import torch; print(torch.__version__, torch.version.hip)\"\n```\n")


def expandable_segments(os_name, backend, allocator, torch_version) -> bool | None:
    """Whether PyTorch honours expandable_segments here: Linux CUDA with the native allocator; ROCm by version
    (rocm_expandable); never on Windows, under cudaMallocAsync or on other backends. None: the log does not say."""
    if os_name == "windows" or allocator == "cudaMallocAsync":
        return False
    if backend in (None, "cuda"):
        return True
    return rocm_expandable(torch_version) if backend == "rocm" else False


def infer(scan, inc, context: dict) -> dict:
    f = scan.facts
    ev = inc.primary
    ctx = context or {}
    votes = f["os_votes"]
    os_name = ctx.get("platform")
    tied = False
    if not os_name:
        best = max(("windows", "linux", "darwin"), key=lambda k: votes.get(k, 0))
        os_name = best if votes.get(best, 0) > 0 else None
        # (fix67f) two OSes with the top vote: os stays max()'s first (windows, linux, darwin) for the allocator's
        # answers, but no OS is known; comfy_launch and the guides' "windows" condition read this one flag
        tied = os_name is not None and sorted(votes.get(k, 0) for k in ("windows", "linux", "darwin"))[-2] == votes[best]
        if tied and votes.get("wsl", 0) > 0 and votes.get("linux", 0) == votes[best]:
            os_name, tied = "linux", False     # (fix67m, rev67g F6) WSL's kernel line: Linux, whatever Windows paths it shows
    kinds = {e["kind"] for e in inc.events}
    backend = ctx.get("backend")
    if not backend:
        # the event that carries the failure names its device first (comfy-aimdo's VBAR error raises a Python MemoryError)
        dk = ev.get("device_kind") or next((e["device_kind"] for e in inc.events if e.get("device_kind")), None)
        # (fixT) a VLLM_ROCM_* switch set on names a ROCm card only where no line names an NVIDIA one
        rocm = f["rocm"] or f["vllm_rocm_on"] and not f["cuda_device"]
        backend = "rocm" if (dk == "rocm" or rocm and dk in (None, "cuda")) else dk
        if backend is None and f["ggml_sycl_fn"]:
            backend = "xpu"     # ggml's SYCL check named the function that threw: an Intel GPU (round 61)
    runtime = ctx.get("runtime") or ("comfyui" if ctx.get("node_type") or ctx.get("loaded_models") is not None
                                      else guess_runtime(scan, inc))
    allocator = None
    if "torch.cuda_async" in kinds:
        allocator = "cudaMallocAsync"
    elif ev["kind"] in ("torch.cuda", "torch.hip") and ev.get("form") != "partial":
        allocator = "native"
    elif ctx.get("cuda_malloc_async") is not None:
        allocator = "cudaMallocAsync" if ctx["cuda_malloc_async"] else "native"
    elif f["allocator"]:
        allocator = f["allocator"]
    elif "backend:cudaMallocAsync" in f["args"]:
        allocator = "cudaMallocAsync"
    elif "--disable-cuda-malloc" in f["args"]:
        allocator = "native"
    elif runtime == "comfyui" and backend in (None, "cuda"):
        allocator = "cudaMallocAsync"     # ComfyUI's default on CUDA (cuda_malloc.py) unless --disable-cuda-malloc
    expandable_ok = expandable_segments(os_name, backend, allocator, f["torch_version"])
    return {"os": os_name, "os_tied": tied, "backend": backend or "cuda", "allocator": allocator, "runtime": runtime,
            "expandable_segments": expandable_ok, "wsl": votes.get("wsl", 0) > 0,
            "dynamic_vram": f["dynamic_vram"] and "--disable-dynamic-vram" not in f["args"]}


# runtimes whose out-of-memory messages are their own: an event of theirs names the runtime
# PyTorch/XLA's status exception as PyTorch raises it (round 76): its XLA messages are PyTorch's run, not JAX's. The
# Python class is part of it (review31): absl's own words "Bad StatusOr access" are any C++ program's uncaught exception
# (std::terminate prints its what(): a JAX abort), only PyTorch's binding raises it as RuntimeError
TORCH_XLA_STATUS = "RuntimeError: Bad StatusOr access"
# (round 115) the BFC allocator's warning cut at "requested by op" with no name after it (bounded, linear)
BFC_NO_OP = re.compile(r"\brequested by op[ \t]{0,8}$")

OWN_MESSAGE_RUNTIMES = ("sglang", "tensorrt-llm", "mlx", "tgi", "tensorrt", "paddle", "cupy", "rapids", "openvino", "lmstudio", "wgpu",
                        "lmdeploy", "ds4", "tt-metal", "ncnn", "dotnet", "libplacebo", "caffe", "enoki", "vllm-rs", "iree",
                        "amrex", "catboost", "faiss", "gunrock", "isaacsim", "physx", "kmcuda", "xgboost",
                        "sapien", "mlc-llm", "java", "tfjs", "mnn", "javascript", "webgpu", "rknn",
                        "triton-server",     # (round 89) Triton Inference Server's Python backend (its shared-memory pool)
                        "colmap", "cuda",     # (round 91) COLMAP's SIFT matcher; a CUDA program's own cudaSafeCall check
                        "theano",     # (round 93) Theano's CUDA backend (its device_malloc's "Error allocating N bytes of device memory")
                        "kaldi", "marian",     # (round 94) Kaldi's cu-allocator, Marian's CUDA check (JavaCPP's physical cap: "java", above)
                        "unsloth-studio",     # (round 117) Unsloth Studio's own host-RAM guard (other_runtimes.studio_host_guard)
                        "kenlm")     # (round 118) KenLM's util MallocException ("Cannot allocate memory for N bytes in malloc")

# of those, generic runtimes the program on top of them names better: TensorRT under TensorRT-LLM (or an app that prints
# TensorRT's message), the JVM under a JVM library whose frames name it (round 63: SKaiNET): the log's marker wins
MARKER_FIRST = ("tensorrt", "java", "javascript", "webgpu")
MARKER_FIRST += ("rknn",)      # (round 74) RKLLM loads its models through RKNN and prints RKNN's lines: its marker wins
# (round 91) a cudaSafeCall check is a macro many CUDA programs copy: the program the log's marker names (InfiniTAM's ORUtils/,
# ITMLib/ paths) wins over the bare CUDA program
MARKER_FIRST += ("cuda",)

# of those, a browser's own (V8's ArrayBuffer refusal, WebGPU's device loss): they name the runtime only as the incident's
# failure itself; beside another runtime's error in the same incident (a log mixing a page's console and a PyTorch run) the
# failure's own runtime stands (review28: a WebGPU loss before a torch OutOfMemoryError named webgpu)
BROWSER_RUNTIMES = ("javascript", "webgpu")


# of those, apps in front of a runtime: their own message (LM Studio's load guardrail) names the app, the answer names the
# engine it runs models on (LM Studio: llama.cpp, as the corpus's LM Studio cases and the llama.cpp guides have it)
# (round 117) Unsloth Studio's own host-RAM guard names the app; its GGUFs run on llama.cpp
ENGINE_OF = {"lmstudio": "llama.cpp", "unsloth-studio": "llama.cpp"}

# of those, libraries a ComfyUI node may call (TensorRT engines, CuPy, RAPIDS, OpenVINO, wgpu): inside ComfyUI, ComfyUI is the runtime
LIBRARIES = ("tensorrt", "cupy", "rapids", "openvino", "wgpu")


_COMFY_PATH = re.compile(r"(?:^|[\s/])comfy/")
# (fixV) ggml-vulkan's own wording of a refused allocation (ggml-vulkan.cpp: "Device memory allocation of size N failed.")
_GGML_VK_OWN = re.compile(r"Device memory allocation of size \d")
_NAMED_FRAMES = {rt: re.compile(rx) for rt, rx in NAMED_FRAMES}


def _comfy_frames(paths: str) -> bool:
    """ComfyUI's frames in an incident's joined frame paths (absolute, or relative to its folder: "comfy/ops.py"; its
    executor; a custom node's)."""
    return bool(_COMFY_PATH.search(paths)) or "execution.py" in paths or "custom_nodes" in paths


def _comfy_seen(f, inc) -> bool:
    """(fix34) ComfyUI's own evidence for this failure: its lines (facts comfy, comfy_node), its error block, its frames."""
    if f["comfy"] or f["comfy_node"] or inc.has_exception_block:
        return True
    return _comfy_frames(" ".join(p for p, _ in inc.frames).replace("\\", "/"))


_CUT_FRAMES = {rt: re.compile(rx) for rt, rx in CUT_FRAMES}


def _cut_foreign(ev, inc) -> bool:
    """(review30) The event is a cut message (form "cut") of a runtime in runtime_markers.CUT_FRAMES, under frames none of
    which is that runtime's own: another program raised the same words."""
    rx = _CUT_FRAMES.get(ev.get("runtime")) if ev.get("form") == "cut" else None
    return bool(rx and inc.frames) and not any(rx.search(p) for p, _ in inc.frames)


def guess_runtime(scan, inc) -> str:
    kinds = [e["kind"] for e in inc.events]
    f = scan.facts
    # Ollama runs models through llama.cpp and, since 2026, through its own MLX runner ("mlx runner failed: ...")
    if any(k.startswith("ollama") or e.get("runtime") == "ollama" for k, e in zip(kinds, inc.events)) \
            or (f["ollama"] and any(k.startswith(("ggml", "mlx.")) for k in kinds)) \
            or any("runner process has terminated" in e.get("text", "") for e in inc.events):
        return "ollama"
    # Electron's renderer: the logs it comes in are Comfy Desktop's (its app log)
    if "electron.renderer_oom" in kinds:
        return "comfyui"
    # runtimes whose own message names them (the recogniser's runtime), whatever else the log mentions; TensorRT's
    # message is TensorRT-LLM's too when the log names it
    own = next((e["runtime"] for e in inc.events if e.get("runtime") in OWN_MESSAGE_RUNTIMES
                and (e.get("runtime") not in BROWSER_RUNTIMES or e is inc.primary) and not _cut_foreign(e, inc)), None)
    if own in LIBRARIES and (f["comfy"] or seen_around(f, "comfyui") or inc.has_exception_block or _comfy_frames(
            " ".join(p for p, _ in inc.frames).replace("\\", "/"))):
        return "comfyui"          # a library used by a ComfyUI node: the host is ComfyUI
    if own:
        # (an app's engine: the one the log names wins, LM Studio's MLX engine included, by a passing name too:
        # "mlx-community/... with mlx-engine (MLX)"; else its usual one)
        if own in MARKER_FIRST:
            return f["runtime_marker"] or own
        return f["runtime_marker"] or f["runtime_named"] or ENGINE_OF[own] if own in ENGINE_OF else own
    if f["runtime_marker"] and not (f["runtime_marker"] in MARKERS_UNDER_COMFYUI and _comfy_seen(f, inc)) \
            and not (f["runtime_marker"] in MARKERS_NOT_OVER_TORCH and any(k.startswith("torch.") for k in kinds)):
        return f["runtime_marker"]
    # (fixV) a Vulkan refusal in the driver's words alone (VK_ERROR_OUT_OF_DEVICE_MEMORY, vk::...: ErrorOutOfDeviceMemory) with
    # nothing of ggml's around it (no ggml_/llama_ line, none of its other messages) names no program: any Vulkan
    # renderer or engine prints it
    if kinds and all(k == "ggml.vulkan" and not _GGML_VK_OWN.search(e.get("text", "")) for k, e in zip(kinds, inc.events)) \
            and not f["ggml"] and not f["ggml_vk_names"] and not any("error loading model" in t for t in inc.texts):
        return "vulkan"
    if any(k.startswith("ggml") for k in kinds):
        return "llama.cpp"
    if any(k.startswith("vllm") for k in kinds):
        return "vllm"
    if any(k.startswith("comfy") for k in kinds) and not f.get("forge") or inc.has_exception_block:
        return "comfyui"
    # vLLM's own start-up lines (its KV budget, "GPU KV cache size: N tokens", "Model loading took X GiB") name it as its
    # markers do
    if (f["vllm"] or f["vllm_kv_mem"] is not None or f["vllm_kv_tokens"] or f["vllm_model_mem"]) and not f["comfy"]:
        return "vllm"
    # LMDeploy, MLX or MLC LLM only named (LMDeploy's pin in an environment line, InternLM/lmdeploy#978) and nothing above
    # named another runtime: its run (round 66, fix27: a passing mention no longer claims a vLLM or ComfyUI log as the
    # bare-word markers did)
    if f["runtime_named"] and not f["comfy"] and not inc.frames:
        return f["runtime_named"]
    if "os.system_memory" in kinds:
        return "comfyui"          # SwarmUI's note on its ComfyUI backend
    # CTranslate2 (faster-whisper, OpenNMT) prints the CUDA runtime's error string after "CUDA failed with error"
    if "cuda.driver" in kinds and "CUDA failed with error" in inc.primary.get("text", ""):
        return "ctranslate2"
    # Rust programs on cudarc (Candle, mistral.rs) print its DriverError's Debug form (huggingface/candle#2046)
    if "cuda.driver" in kinds and "DriverError(CUDA_ERROR_OUT_OF_MEMORY" in inc.primary.get("text", ""):
        return "candle"
    # (round 72) ... and beside a refusal of a layer under it (HAMi-core's vGPU hook), cudarc's DriverError for the call that
    # failed: that program's run, where no frame says a Python program's
    # (review30) not where the failure is PyTorch's own message (its kinds "torch.*"): the fact is the whole log's, and a
    # sidecar's DriverError beside it is another program's
    if f["cudarc"] and not inc.frames and not f["comfy"] and not any(k.startswith("torch.") for k in kinds):
        return "candle"
    if not f["comfy"] and not inc.has_exception_block:
        # runtimes with their own allocator and message: ONNX Runtime's arena, XLA (JAX, or TensorFlow's "OOM when allocating")
        text = inc.primary.get("text", "")
        if inc.primary.get("form", "").startswith("stream_executor") or inc.primary["kind"] == "xla.remat":
            return inc.primary["runtime"]        # TensorFlow's or JAX's stream executor or XLA's
            # rematerialization pass, by its paths
        if inc.primary.get("form") in ("xla_constant", "fft_scratch"):     # (rev9 D5) and XLA's FFT plan (TensorFlow's too)
            # (round 110) XLA's GPU executable placing a constant: PJRT's status, JAX's by default; (rev5 B4) TensorFlow's
            # (jit_compile) where the log shows TensorFlow's own words and none of JAX's
            return inc.primary["runtime"] or ("tensorflow" if f["tf_own"] and not f["jax_own"] and not any(
                "jax" in p for p, _ in inc.frames) else "jax")
        if "onnx.alloc" in kinds or "onnxruntime" in text and ("torch.directml" in kinds or "CUDA failure" in text):
            return "onnxruntime"
        if "xla.oom" in kinds:
            # (the BFC allocator's warning beside PJRT's own refusal, "RESOURCE_EXHAUSTED: Out of memory while trying to
            # allocate", is JAX's run: TensorFlow's graph runtime reports "OOM when allocating tensor")
            pjrt = any(e["kind"] == "xla.oom" and e.get("runtime") == "jax" and "Out of memory while trying" in e.get("text", "")
                       for e in inc.events)
            # (round 115) or the BFC warning ending at "requested by op" with no op's name after it: XLA's executable names no
            # op to the allocator (JAX's run); TensorFlow's executor names the op whose kernel asked ("requested by op
            # conv4_block2_3_conv/kernel/Regularizer/Square")
            pjrt = pjrt or inc.primary.get("form") == "bfc" and bool(BFC_NO_OP.search(inc.primary.get("text", "")))
            # (TensorFlow's own op kernels log the failed op's status from tensorflow/core/framework/op_kernel.cc, round 64)
            if "OOM when allocating" in inc.primary.get("text", "") or inc.primary.get("form") == "bfc" and not pjrt \
                    or "tensorflow/core/framework/op_kernel.cc" in inc.primary.get("text", "") \
                    or "memory [Op:" in inc.primary.get("text", "") \
                    or inc.primary.get("form") == "recv":     # (round 91) its eager op error ("[Op:Name]"); (round 93) its rendezvous
                return "tensorflow"
            # (round 76) PyTorch/XLA's C++ reads a failed status through absl's StatusOr, whose exception PyTorch's binding
            # raises as "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: ..." (pytorch/xla#8020, googlecolab/colabtools#5126);
            # JAX raises the status itself (XlaRuntimeError)
            torch_xla = "torch_xla" in " ".join(p for p, _ in inc.frames) or any(
                e["kind"] == "xla.oom" and TORCH_XLA_STATUS in e.get("text", "") for e in inc.events)
            return "pytorch" if torch_xla else "jax"
    paths = " ".join(p for p, _ in inc.frames).replace("\\", "/")
    # Fooocus's early releases ran a copy of ComfyUI's backend cloned into repositories/ComfyUI-from-StabilityAI-Official (its
    # launch.py's folder name): comfy/ frames there are Fooocus's own script, a PyTorch run like its later ldm_patched ones
    if "/repositories/ComfyUI-from-StabilityAI-Official/" in paths and not f["comfy_node"]:
        return "pytorch"
    # ComfyUI's frames (absolute, or relative to its folder: "comfy/ops.py") and its node lines ("Error occurred when
    # executing VAEDecode:", the error dialog's node type above the message)
    if f["comfy"] or seen_around(f, "comfyui") or f["comfy_node"] or _comfy_frames(paths):
        return "comfyui"
    # (fix34) a runtime only named, with frames of its own package (runtime_markers.NAMED_FRAMES: llama-cpp-python's own
    # exception raised from llama_cpp/_internals.py): its run, ComfyUI's frames and lines having been read above
    if f["runtime_named"] in _NAMED_FRAMES and any(_NAMED_FRAMES[f["runtime_named"]].search(p) for p, _ in inc.frames):
        return f["runtime_named"]
    if "vllm_omni/" in paths or "/vllm/" in paths:
        return "vllm"
    # PyTorch's cudaMallocAsync report ("Allocation on device N would exceed allowed memory"): ComfyUI's default allocator
    # on CUDA; plain scripts and the LLM servers run PyTorch's native one
    # (a traceback through a training script of its own is a plain PyTorch run; one through the A1111/Forge web UI's folder
    # ("stable-diffusion-webui-forge", "sd-webui-forge-neo") is Forge's, which runs cudaMallocAsync too)
    if "torch.cuda_async" in kinds and not (paths and f["training_log"]) and not f["forge"] and "webui" not in paths.lower():
        return "comfyui"
    # (ggml's own CUDA check, "ROCm error: out of memory", and its OpenCL check, "ggml_opencl: ... error -4 at", name ggml as its markers do; in an Ollama log a CUDA check is its
    # runner's: Ollama's runners are ggml's and MLX's, no PyTorch)
    if (f["ggml"] or f["ollama"] or any(e.get("form") == "ggml_check" for e in inc.events)) \
            and any(k in ("cuda.driver", "metal.oom", "cublas.alloc", "opencl.alloc") for k in kinds):
        return "ollama" if f["ollama"] else "llama.cpp"
    # amdgpu's command submission and the Vulkan validation layer serve graphics APIs (PyTorch's ROCm goes through KFD):
    # with no other runtime named, ggml's Vulkan backend
    # (round 69: Metal's validation layer likewise; PyTorch's MPS and MLX refuse such a buffer in their own words first)
    if "amdgpu.cs_enomem" in kinds or "vulkan.max_buffer" in kinds or "metal.max_buffer" in kinds:
        return "ollama" if f["ollama"] else "llama.cpp"
    # the HIP runtime's own trace (AMD_LOG_LEVEL) is the layer under every framework on ROCm: it names the runtime only where
    # nothing above it does (no framework's marker or message, no Python frames), as a HIP program of its own prints it
    if any(e.get("runtime") == "hip" for e in inc.events) and not inc.frames and not any(k.startswith("torch") for k in kinds):
        return "hip"
    # (round 110) ggml's SYCL check (its function "in function X at .../ggml-sycl.cpp:N") above a refusal in no runtime's own
    # words ("Failed to allocate physical memory." from its VMM pool): ggml's SYCL backend threw, llama.cpp's (Ollama's in its log)
    if f["ggml_sycl_fn"] and not inc.frames:
        return "ollama" if f["ollama"] else "llama.cpp"
    return "pytorch"
