"""Unload Text Encoders: once the prompts are encoded, take that encoder's weights off the device before
the sampler loads the diffusion model, and report what left, measured before and after.

Only LoadedModel entries whose patcher shares weights with `clip.patcher` (ModelPatcher.is_clone) are
touched, so clones made by LoRA/CLIPSetLastLayer nodes and GGUF's GGUFModelPatcher clones match, and
the diffusion model or any other model never does. With Dynamic VRAM (comfy-aimdo) a loaded model is
a VBAR of VRAM pages plus pinned host buffers, and ComfyUI itself never unloads a dynamic model for
another one (it evicts pages on demand), so "offload" there releases the VRAM pages only and keeps
the pinned RAM copy and the registration: the next encode faults the weights back in from RAM.
"""
import gc
import logging

from comfy_api.latest import io

from ..memory.unload import report as unload_report

log = logging.getLogger("gpu_garden")

MODES = ("offload", "free")
CATEGORY = "GPU Garden"


def _mm():
    import comfy.model_management as mm

    return mm


def dynamic_vram_enabled() -> bool:
    """True on 2026 hosts running the comfy-aimdo allocator (host_models.dynamic_vram)."""
    from . import host_models

    return bool(host_models.dynamic_vram())


def is_dynamic(patcher) -> bool:
    f = getattr(patcher, "is_dynamic", None)
    try:
        return bool(f()) if callable(f) else False
    except Exception:
        return False


def same_weights(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a.is_clone(b) or b.is_clone(a))
    except Exception:
        return False


# -- measuring -----------------------------------------------------------------------------------
def _device_counters(dev) -> dict:
    import torch

    c = {"torch_allocated": None, "torch_reserved": None, "free": None, "total": None}
    kind = getattr(dev, "type", None)
    try:
        if kind == "cuda" and torch.cuda.is_initialized():
            c["torch_allocated"], c["torch_reserved"] = torch.cuda.memory_allocated(dev), torch.cuda.memory_reserved(dev)
            c["free"], c["total"] = torch.cuda.mem_get_info(dev)
        elif kind == "xpu" and hasattr(torch, "xpu") and torch.xpu.is_initialized():
            c["torch_allocated"], c["torch_reserved"] = torch.xpu.memory_allocated(dev), torch.xpu.memory_reserved(dev)
            if hasattr(torch.xpu, "mem_get_info"):
                c["free"], c["total"] = torch.xpu.mem_get_info(dev)
        elif kind == "mps":
            c["torch_allocated"] = torch.mps.current_allocated_memory()
            c["torch_reserved"] = torch.mps.driver_allocated_memory()
    except Exception as exc:  # a counter we cannot read stays null, never invented
        log.debug("[GPU Garden] no allocator stats for %s: %s", dev, exc)
    return {k: (int(v) if v is not None else None) for k, v in c.items()}


def _host_available():
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:
        return None


def snapshot(devices=None) -> tuple[dict, dict]:
    """(snapshot for memory.unload_report, {device name: torch.device}) of what ComfyUI holds now."""
    from . import host_models

    models, seen = [], {}
    for lm in host_models.entries():
        d = host_models.describe(lm)
        models.append({k: d[k] for k in ("key", "name", "label", "device", "bytes", "total_bytes", "is_text_encoder")})
        seen.setdefault(str(lm.device), lm.device)
    devices = dict(seen, **(devices or {}))
    snap = {"models": models, "devices": {k: _device_counters(d) for k, d in devices.items()},
            "host_available": _host_available()}
    return snap, devices


# -- unloading -----------------------------------------------------------------------------------
def encoder_entries(clip_patcher) -> tuple[list, list]:
    """LoadedModel entries holding this encoder's weights, and entries sharing them that are not text
    encoders (left alone and named in the report)."""
    from . import host_models

    hits, foreign = [], []
    for lm in host_models.entries():
        p = lm.model
        if not same_weights(p, clip_patcher):
            continue
        (hits if getattr(p, "is_clip", False) else foreign).append(lm)
    return hits, foreign


def _drop_entry(lm) -> None:
    from . import host_models

    host_models.forget_loaded(lm)


def _full_unload(lm) -> None:
    if lm.model_finalizer is not None:
        done = lm.model_unload()  # detach: weights to the offload device, unpinned
    else:  # registered but never loaded through load_models_gpu
        lm.model.detach(unpatch_all=True)
        done = True
    if done:
        _drop_entry(lm)


def unload_entry(lm, mode: str) -> str:
    """Take one LoadedModel off its device; returns the action taken, for the report's notes."""
    p = lm.model
    if is_dynamic(p) and mode == "offload":
        # ModelPatcherDynamic.partially_unload frees the VBAR's pages and restores force-loaded weights;
        # pinned host buffers and the LoadedModel stay, exactly as ComfyUI's own free_memory leaves them.
        p.partially_unload(p.offload_device, 1e32)
        return "dynamic: VRAM pages released, pinned RAM copy kept"
    _full_unload(lm)
    # _drop_entry took it off ComfyUI's loaded-model list: the CLIP keeps its patcher, so the next encode's
    # load_models_gpu loads it again (the user's words for "unregistered")
    if is_dynamic(p):
        return "dynamic: VRAM pages and pinned RAM released; ComfyUI reloads the weights when next needed"
    dev = getattr(p, "offload_device", None)
    where = "system RAM" if getattr(dev, "type", str(dev)) == "cpu" else str(dev or "the offload device")
    return f"weights moved to {where}; ComfyUI reloads them when next needed"


def unload(entries, mode: str = "offload", foreign=(), origin: str = "node") -> dict:
    """Unload `entries` and return the measured report (memory.unload_report)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    mm = _mm()
    before, devices = snapshot()
    targets = {str(id(lm.model)) for lm in entries if lm.model is not None}
    actions = {}
    for lm in entries:
        if lm.model is None:
            continue
        try:
            action = unload_entry(lm, mode)
        except Exception as exc:
            log.exception("[GPU Garden] could not unload %s", type(lm.model.model).__name__)
            action = f"failed: {type(exc).__name__}: {exc}"
        actions[action] = actions.get(action, 0) + 1
    if mode == "free":
        gc.collect()
    mm.soft_empty_cache()
    after, _ = snapshot(devices)
    notes = [f"{n}x {a}" if n > 1 else a for a, n in actions.items()]
    if mode == "free" and entries:
        notes.append("free: garbage collected and the allocator cache emptied")
    if dynamic_vram_enabled():
        notes.append("Dynamic VRAM (comfy-aimdo) is on: torch allocator stats do not include VRAM pages; "
                     "'free' shows the device's free memory.")
    for lm in foreign:
        notes.append(f"left alone: {type(lm.model.model).__name__} shares these weights but is not a text encoder")
    strategy = "dynamic" if any(is_dynamic(lm.model) for lm in entries if lm.model is not None) else "classic"
    report = unload_report.build(before, after, targets, mode=mode, strategy=strategy, notes=notes)
    report["origin"] = origin
    return report


def unload_clip(clip, mode: str = "offload") -> dict:
    patcher = getattr(clip, "patcher", None)
    if patcher is None:
        raise ValueError("This CLIP has no ModelPatcher (clip.patcher): it is not managed by ComfyUI's model "
                         "management, so there is nothing this node can unload.")
    hits, foreign = encoder_entries(patcher)
    return unload(hits, mode, foreign=foreign)


def _for_ui(report: dict) -> dict:
    r = {k: v for k, v in report.items() if k not in ("targets", "others")}
    r["targets"] = [{k: v for k, v in t.items() if k != "key"} for t in report["targets"]]
    r["others"] = [{k: v for k, v in t.items() if k != "key"} for t in report["others"]]
    r["lines"] = unload_report.lines(report)
    return r


def _hidden_unique_id() -> list:
    unique_id = getattr(io.Hidden, "unique_id", None)
    return [unique_id] if unique_id is not None else []


class GPUGardenUnloadTextEncoders(io.ComfyNode):
    @classmethod
    def define_schema(cls):
        return io.Schema(
            node_id="GPUGardenUnloadTextEncoders",
            display_name="Unload Text Encoders",
            category=CATEGORY,
            description=("Passes the conditionings through unchanged and takes the CLIP's text encoder weights off "
                         "the GPU before the sampler runs; shows the memory it freed, measured."),
            inputs=[
                io.Conditioning.Input("positive"),
                io.Clip.Input("clip", tooltip="The CLIP that encoded these prompts: only its encoder is unloaded."),
                io.Combo.Input("mode", options=list(MODES), default="offload",
                               tooltip="offload: the encoder's weights go back to the offload device (RAM), it leaves "
                                       "ComfyUI's loaded-model list and the allocator cache is emptied; a later encode "
                                       "reloads them (with Dynamic VRAM only its VRAM pages go; the pinned RAM copy stays). "
                                       "free: the same, plus with Dynamic VRAM the pinned RAM copy and the registration, "
                                       "plus a Python garbage collection. Unlike ComfyUI's 'Free model and node cache' it "
                                       "touches only this encoder and keeps every cached node output."),
                io.Conditioning.Input("negative", optional=True),
            ],
            outputs=[io.Conditioning.Output(display_name="positive"), io.Conditioning.Output(display_name="negative")],
            hidden=_hidden_unique_id(),
            is_output_node=True,
        )

    @classmethod
    def execute(cls, positive, clip, mode="offload", negative=None):
        report = unload_clip(clip, mode)
        if negative is None:
            report["notes"].append("negative not wired through this node: if ComfyUI encodes it after this node "
                                   "runs, the encoder is loaded again before sampling.")
        node = getattr(getattr(cls, "hidden", None), "unique_id", None)
        log.info("[GPU Garden] Unload Text Encoders%s: %s", f" (node {node})" if node else "",
                 "\n  ".join(unload_report.lines(report)))
        return io.NodeOutput(positive, negative, ui={"gpu_garden_unload": [_for_ui(report)]})


NODES = [GPUGardenUnloadTextEncoders]
