"""Automatic mode: when the setting GPUGarden.AutoUnloadTextEncoders is on, text encoders leave the
sampler's device right before any sampler loads its models, without wiring the node.

Seam: comfy.sampler_helpers.prepare_sampling, the one function through which every sampler (KSampler,
SamplerCustom, SamplerCustomAdvanced: CFGGuider.outer_sample) loads the diffusion model. samplers.py
looks it up on the module at call time, so it is wrapped once here and unwrapped by teardown().

Where the setting lives: ComfyUI's own per-user settings store (<user dir>/<user>/comfy.settings.json,
written by the frontend through POST /settings/<id>). It is read when a sampler starts (cached on the
file's mtime), so it survives restarts and API-only users can set it with
`POST /settings/GPUGarden.AutoUnloadTextEncoders true`. The user is "default"; under --multi-user the
frontend POSTs /gpu_garden/auto_unload on load and on change so the server follows that user's file.
"""
import functools
import json
import logging
import os

log = logging.getLogger("gpu_garden")

SETTING_ID = "GPUGarden.AutoUnloadTextEncoders"
SEAM = "comfy.sampler_helpers.prepare_sampling"
_state = {"user": "default", "cache": (None, None, False), "last": None}


def settings_file(user: str | None = None) -> str | None:
    import folder_paths

    root = folder_paths.get_public_user_directory(user or _state["user"]) if hasattr(
        folder_paths, "get_public_user_directory") else os.path.join(folder_paths.get_user_directory(), user or "default")
    return os.path.join(root, "comfy.settings.json") if root else None


def enabled() -> bool:
    path = settings_file()
    try:
        mtime = os.stat(path).st_mtime_ns if path else None
    except OSError:
        mtime = None
    cached_path, cached_mtime, value = _state["cache"]
    if (path, mtime) == (cached_path, cached_mtime):
        return value
    value = False
    if mtime is not None:
        try:
            with open(path, encoding="utf-8") as f:
                value = json.load(f).get(SETTING_ID) is True
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("[GPU Garden] cannot read %s from %s: %s", SETTING_ID, path, exc)
    _state["cache"] = (path, mtime, value)
    return value


def _sampler_models(model) -> list:
    models = [model]
    try:
        models += list(model.get_nested_additional_models())
    except Exception:
        pass
    return models


def unload_before_sampling(model) -> dict | None:
    """Unload every text encoder on the sampler's device that is not one of the sampler's own models."""
    import comfy.model_management as mm

    from . import unload

    keep = _sampler_models(model)
    device = getattr(model, "load_device", None)
    entries = [lm for lm in list(mm.current_loaded_models)
               if lm.model is not None and getattr(lm.model, "is_clip", False) and lm.device == device
               and not any(unload.same_weights(lm.model, k) for k in keep)]
    if not entries:
        return None
    report = unload.unload(entries, "offload", origin="auto")
    _state["last"] = unload._for_ui(report)
    log.info("[GPU Garden] auto-unload before sampling: %s", "\n  ".join(unload.unload_report.lines(report)))
    try:
        from server import PromptServer

        PromptServer.instance.send_sync("gpu_garden.auto_unload",
                                        {"node": PromptServer.instance.last_node_id, "report": _state["last"]})
    except Exception:
        pass
    return report


def _wrap(original):
    @functools.wraps(original)
    def prepare_sampling(model, *args, **kwargs):
        if _state.get("installed") and enabled():
            try:
                unload_before_sampling(model)
            except Exception:
                log.exception("[GPU Garden] auto-unload failed; sampling continues with the encoders loaded")
        return original(model, *args, **kwargs)

    prepare_sampling._gpu_garden_original = original
    return prepare_sampling


def install() -> bool:
    import comfy.sampler_helpers as sh

    if getattr(sh.prepare_sampling, "_gpu_garden_original", None) is None:
        sh.prepare_sampling = _wrap(sh.prepare_sampling)
    _state["installed"] = True
    return True


def teardown() -> None:
    import comfy.sampler_helpers as sh

    _state["installed"] = False  # a wrapper someone stacked on ours keeps calling through, inertly
    original = getattr(sh.prepare_sampling, "_gpu_garden_original", None)
    if original is not None:
        sh.prepare_sampling = original


def status() -> dict:
    return {"setting": SETTING_ID, "enabled": enabled(), "user": _state["user"], "settings_file": settings_file(),
            "installed": bool(_state.get("installed")), "seam": SEAM, "last": _state["last"]}


def _routes():
    from aiohttp import web
    from server import PromptServer

    routes = PromptServer.instance.routes

    @routes.get("/gpu_garden/auto_unload")
    async def get_status(request):
        return web.json_response(status())

    @routes.post("/gpu_garden/auto_unload")
    async def follow_user(request):
        try:
            _state["user"] = PromptServer.instance.user_manager.get_request_user_id(request)
        except Exception:
            _state["user"] = "default"
        return web.json_response(status())


def setup() -> None:
    try:
        install()
    except ImportError as exc:  # a host without comfy.sampler_helpers: the node still works, auto mode does not
        log.warning("[GPU Garden] auto_unload disabled: %s", exc)
        return
    _routes()
