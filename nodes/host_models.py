"""What the host is and what ComfyUI's model management holds, as plain data for the core (memory/).

The one place in nodes/ that asks ComfyUI for its compute device, names the platform, and enumerates
loaded models; every node, route and hook uses these. comfy is imported lazily, so the module loads
(and unit tests run) without a host. Each read has a fallback for a host that renamed what it reads.

Not here: the hooks (execution.execute, PromptExecutor methods, sampler_helpers.prepare_sampling, sd.VAE's
memory_used_*, model_management.unload_all_models). A wrapper is a patch point by nature: it replaces an
attribute of the module it wraps, stays with its feature (oom_capture, recorder, fit_guard, fit_vae,
auto_unload), and health.in_chain reports when someone replaced it without keeping ours."""
import importlib
import sys


def _mm():
    import comfy.model_management as mm

    return mm


def _host_module(name: str):
    """ComfyUI's module `name`, already imported or imported now; None on a host without it."""
    mod = sys.modules.get(name)
    if mod is None:
        try:
            mod = importlib.import_module(name)
        except Exception:
            return None
    return mod


# -- the host ---------------------------------------------------------------------------------------
def compute_device():
    """ComfyUI's compute device (a torch.device), or None where model management cannot say."""
    try:
        return _mm().get_torch_device()
    except Exception:
        return None


def text_encoders_on_device() -> bool | None:
    """Whether ComfyUI loads the text encoders on the compute device: text_encoder_device() == get_torch_device()
    (0.8.0 model_management.py:875-884: the CPU under --lowvram / --novram and where should_use_fp16(
    prioritize_performance=False) is False, Pascal and older on Linux, GTX 16xx); None where it cannot say."""
    try:
        mm = _mm()
        return bool(mm.text_encoder_device() == mm.get_torch_device())
    except Exception:
        return None


def compute_device_name() -> str | None:
    """"cuda:0", "cpu", "mps" ... as the probe names devices; None when unknown."""
    dev = compute_device()
    return None if dev is None else str(dev)


def compute_backend() -> str | None:
    """The compute device's backend as the core spells it: cuda, rocm (a HIP build of torch), mps, xpu,
    cpu, or the device type itself; None when unknown (callers pick their own default)."""
    dev = compute_device()
    if dev is None:
        return None
    kind = getattr(dev, "type", None) or str(dev).split(":")[0]
    if kind == "cuda":
        try:
            import torch

            if getattr(torch.version, "hip", None):
                return "rocm"
        except Exception:
            pass
    return kind


def device_name(device) -> str:
    """ComfyUI's name for a device ("cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync"); str(device) as fallback."""
    try:
        return str(_mm().get_torch_device_name(device))
    except Exception:
        return str(device)


def device_total(device) -> int | None:
    """The device's memory as ComfyUI counts it (model_management.get_total_memory); None when unreadable."""
    try:
        return int(_mm().get_total_memory(device))
    except Exception:
        return None


def min_weight_memory_ratio(default: float) -> float:
    """ComfyUI's MIN_WEIGHT_MEMORY_RATIO (0.0 on NVIDIA, 0.4 elsewhere in 0.8.0), read live; `default` where gone."""
    try:
        return float(_mm().MIN_WEIGHT_MEMORY_RATIO)
    except Exception:
        return default


def dynamic_vram() -> bool | None:
    """Is ComfyUI running Dynamic VRAM now: comfy.memory_management.aimdo_enabled, which main.py sets only once
    comfy-aimdo initialised (NVIDIA, not WSL, torch >= 2.8). comfy.cli_args.enables_dynamic_vram() is only the
    request, true by default on AMD, Apple and Intel too. False on a host without the module (ComfyUI 0.8.0);
    None where the module has no such flag (renamed upstream: callers detect)."""
    mod = _host_module("comfy.memory_management")
    if mod is None:
        return False
    flag = getattr(mod, "aimdo_enabled", None)
    return None if flag is None else bool(flag)


def comfy_compiler() -> str | None:
    """"on", "off" or "not available": the Comfy Compiler (comfy-aimdo's, ComfyUI 2026) runs with Dynamic VRAM
    unless ComfyUI was launched with --disable-comfy-compiler; a ComfyUI without that flag (0.8.0) has no compiler.
    None when unknown (no host, or Dynamic VRAM's flag renamed upstream)."""
    cli = _host_module("comfy.cli_args")
    if cli is None:
        return None
    args = getattr(cli, "args", None)
    if args is None:
        return None
    if not hasattr(args, "disable_comfy_compiler"):
        return "not available"
    if args.disable_comfy_compiler:
        return "off"
    dv = dynamic_vram()
    return None if dv is None else "on" if dv else "off"


def platform_name(platform: str | None = None) -> str:
    """windows / darwin / linux (what the core's rules and reserves key on)."""
    p = platform or sys.platform
    return "windows" if p.startswith("win") else "darwin" if p == "darwin" else "linux"


# -- loaded models ----------------------------------------------------------------------------------
def entries() -> list:
    """ComfyUI's LoadedModel entries that still hold a patcher (a copy of the list: safe to iterate)."""
    return [lm for lm in list(_mm().current_loaded_models) if getattr(lm, "model", None) is not None]


def forget_loaded(lm) -> bool:
    """Unregister one LoadedModel whose weights the Unload node already moved off (True when it was listed).
    ComfyUI has no call for this: its own free_memory/unload_all_models pop from current_loaded_models, the only
    way to drop one entry, so this is the one place that edits the private list (by identity: LoadedModel's ==
    compares patchers). A host without the list: False, the weights stay moved and ComfyUI reloads as it would."""
    models = getattr(_mm(), "current_loaded_models", None)
    if not isinstance(models, list):
        return False
    for i in range(len(models) - 1, -1, -1):
        if models[i] is lm:
            models.pop(i)
            return True
    return False


def model_name(patcher) -> str:
    model = getattr(patcher, "model", None)
    name = type(model).__name__ if model is not None else "model"
    cfg = getattr(model, "model_config", None)
    if cfg is not None:
        name = f"{type(cfg).__name__} ({name})"
    return name


# Text encoders by ComfyUI's class for them, as a user knows them (Load CLIP's type, the model card); any other
# encoder shows its class name inside "text encoder (...)".
ENCODER_NAMES = {
    "SD1ClipModel": "SD1 CLIP",
    "SD2ClipModel": "SD2 CLIP-H",
    "SDXLClipModel": "SDXL CLIP-L + CLIP-G",
    "SDXLRefinerClipModel": "SDXL refiner CLIP-G",
    "StableCascadeClipModel": "Stable Cascade CLIP-G",
    "SD3ClipModel": "SD3 CLIP-L + CLIP-G + T5-XXL",
    "FluxClipModel": "Flux CLIP-L + T5-XXL",
    "T5XXLModel": "T5-XXL",
}


def _is_vae_class(cls) -> bool:
    """A VAE by where ComfyUI defines its class (comfy.ldm.models.autoencoder, comfy.ldm.wan.vae,
    comfy.ldm.lightricks.vae...): a VAE's patcher carries no flag of its own, as a text encoder's is_clip does."""
    parts = str(getattr(cls, "__module__", "") or "").lower().split(".")
    return any(p == "vae" or p.endswith("_vae") or p.startswith("vae_") or "autoencoder" in p for p in parts)


def model_label(patcher) -> str:
    """What a user recognises a loaded model as, for text they read: "text encoder (SD1 CLIP)", "VAE", else the
    model's config and class as model_name() gives them. model_name() stays the identity recorded runs match on."""
    model = getattr(patcher, "model", None)
    if model is None:
        return model_name(patcher)
    cls = type(model)
    if getattr(patcher, "is_clip", False):
        return f"text encoder ({ENCODER_NAMES.get(cls.__name__, cls.__name__)})"
    if _is_vae_class(cls):
        return "VAE"
    return model_name(patcher)


def patcher_dtype(patcher) -> str | None:
    """The dtype a patcher's model is loaded in ("float16", "bfloat16", ...), or None."""
    try:
        dtype = patcher.model_dtype() or getattr(patcher.model, "dtype", None)
    except Exception:
        dtype = None
    return str(dtype).replace("torch.", "") if dtype is not None else None


def describe(lm) -> dict:
    """One LoadedModel as data: name, device, bytes loaded there and in all, flags, and `key` (the
    patcher's identity within this process, for before/after comparisons)."""
    patcher = lm.model
    try:
        total = int(lm.model_memory())
        loaded = int(lm.model_loaded_memory())
    except Exception:
        total = loaded = 0
    return {
        "key": str(id(patcher)),
        "name": model_name(patcher),
        "label": model_label(patcher),
        "device": str(lm.device),
        "bytes": loaded,
        "total_bytes": total,
        "partial": 0 < loaded < total,
        "is_text_encoder": bool(getattr(patcher, "is_clip", False)),
        "currently_used": bool(getattr(lm, "currently_used", False)),
    }


def loaded_models(with_key: bool = False) -> list[dict]:
    """One entry per model ComfyUI holds (describe()); `key` only when asked (it means nothing outside
    this process, so reports and pushes leave it out)."""
    out = []
    for lm in entries():
        d = describe(lm)
        if not with_key:
            d.pop("key")
        out.append(d)
    return out
