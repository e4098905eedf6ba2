"""What ComfyUI's model management says is loaded, as plain data for the core (memory/)."""
import comfy.model_management as mm


def model_name(patcher) -> str:
    model = getattr(patcher, "model", None)
    name = type(model).__name__ if model is not None else "model"
    cfg = getattr(model, "model_config", None)
    if cfg is not None:
        name = f"{type(cfg).__name__} ({name})"
    return name


def loaded_models() -> list[dict]:
    """One entry per model ComfyUI holds: name, device, bytes loaded there, whether partially loaded."""
    out = []
    for lm in list(mm.current_loaded_models):
        patcher = lm.model
        if patcher is None:
            continue
        try:
            total = int(lm.model_memory())
            loaded = int(lm.model_loaded_memory())
        except Exception:
            total = loaded = 0
        out.append({
            "name": model_name(patcher),
            "device": str(lm.device),
            "bytes": loaded,
            "total_bytes": total,
            "partial": 0 < loaded < total,
            "is_text_encoder": bool(getattr(patcher, "is_clip", False)),
            "currently_used": bool(getattr(lm, "currently_used", False)),
        })
    return out


def models_by_device() -> dict[str, list[dict]]:
    by = {}
    for m in loaded_models():
        by.setdefault(m["device"], []).append(m)
    return by
