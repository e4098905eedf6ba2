"""How much of a model ComfyUI 0.8.0's load_models_gpu keeps on the device, and the free memory it leaves: one copy,
read by the estimate (cfg_batch, vae_resident) and by fit/plan (which imports the estimate, so it lives here).

comfy/model_management.py:621-707 load_models_gpu: minimum_memory_required = max(minimum_inference_memory(),
memory_required + extra_reserved_memory()) (:625-630); a model loads partially with lowvram_model_memory =
max(0, free - minimum_memory_required, min(free * MIN_WEIGHT_MEMORY_RATIO, free - minimum_inference_memory())) (:695).
MIN_WEIGHT_MEMORY_RATIO (:313-315) is 0.4 unless is_nvidia() (a CUDA build of torch on a GPU: 0.0); it only acts in
that branch, taken in LOW_VRAM / NORMAL_VRAM states with lowvram_available (:691), so on ROCm and XPU; MPS runs SHARED
and a CPU run DISABLED (:412-416), and DirectML turns lowvram_available off (:103): there models load whole."""
from .spec import MIN_INFERENCE

MIN_WEIGHT_RATIO = 0.0  # MIN_WEIGHT_MEMORY_RATIO on NVIDIA (model_management.py:315)
OTHER_GPU_RATIO = 0.4  # model_management.py:313, any GPU torch.version.cuda is not set for (ROCm's HIP, Intel's XPU)
RATIO_DEVICES = ("rocm", "xpu")  # the estimate's --device values on which load_models_gpu partially loads with 0.4


def weight_ratio(device) -> float:
    """MIN_WEIGHT_MEMORY_RATIO as ComfyUI reads it on the estimate's --device (None: cuda)."""
    return OTHER_GPU_RATIO if device in RATIO_DEVICES else MIN_WEIGHT_RATIO


def comfy_minimum(required, reserve) -> int:
    """load_models_gpu's minimum_memory_required once it has added its reserve: max(minimum_inference_memory(),
    minimum_memory_required + extra_reserved_memory()). A small batch still gets 0.8 GiB + reserve."""
    return int(max(MIN_INFERENCE + reserve, required + reserve))


def comfy_weights_kept(dm, free, required, reserve, ratio=MIN_WEIGHT_RATIO) -> int:
    """Bytes of a model (dm bytes) load_models_gpu keeps on the device with `free` bytes free before it loads, as
    ComfyUI 0.8.0 computes its lowvram_model_memory: max(0, free - minimum, min(free * MIN_WEIGHT_MEMORY_RATIO,
    free - minimum_inference_memory())) with minimum = comfy_minimum(required, reserve)."""
    floor = min(free * ratio, free - MIN_INFERENCE - reserve)
    return int(min(dm, max(0, free - comfy_minimum(required, reserve), floor)))
