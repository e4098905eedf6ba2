"""Automatic mode: when the setting GPUGarden.AutoUnloadTextEncoders is on, text encoders leave the
sampler's device right before any sampler loads its models, without wiring the node.

Seam: comfy.sampler_helpers.prepare_sampling, the one function through which every sampler (KSampler,
SamplerCustom, SamplerCustomAdvanced: CFGGuider.outer_sample) loads the diffusion model. samplers.py
looks it up on the module at call time, so it is wrapped once here and unwrapped by teardown().

Where the setting lives: ComfyUI's own per-user settings store (<user dir>/<user>/comfy.settings.json,
written by the frontend through POST /settings/<id>). It is read when a sampler starts (cached on the
file's mtime), so it survives restarts and API-only users can set it with
`POST /settings/GPUGarden.AutoUnloadTextEncoders true`.

Whose settings: the user whose prompt is running. A prompt carries only its client_id (the page's
websocket id), so each page POSTs /gpu_garden/auto_unload {"client_id"} on load and on change; the
request's user (ComfyUI's user manager: the comfy-user header under --multi-user, else "default") is
remembered for that client id. A prompt from a client id nobody registered (an API script) follows
"default". One user's page never changes what another user's prompts do.
"""
import functools
import json
import logging
import os

from . import health

log = logging.getLogger("gpu_garden")

SETTING_ID = "GPUGarden.AutoUnloadTextEncoders"
SEAM = "comfy.sampler_helpers.prepare_sampling"
MAX_CLIENTS = 256
FEATURE = health.register("auto_unload.prepare_sampling", check=lambda f: _check(f))
_state = {"cache": {}, "last": None, "installed": False}
_users: dict[str, str] = {}  # client_id -> user, as the page's own request named it


def remember(client_id: str, user: str) -> None:
    _users.pop(client_id, None)
    _users[client_id] = user
    while len(_users) > MAX_CLIENTS:  # oldest first; a page re-registers on every load
        _users.pop(next(iter(_users)))


def running_client_id() -> str | None:
    """The client_id of the prompt running now (ComfyUI sets server.client_id from its extra_data)."""
    try:
        from server import PromptServer

        return PromptServer.instance.client_id
    except Exception:
        return None


def request_user(request) -> str:
    """The user of an HTTP request as ComfyUI's user manager names it (the comfy-user header under --multi-user),
    "default" where it cannot say."""
    try:
        from server import PromptServer

        return PromptServer.instance.user_manager.get_request_user_id(request)
    except Exception:
        return "default"


def current_user(client_id: str | None = None) -> str:
    cid = client_id if client_id is not None else running_client_id()
    return _users.get(cid, "default") if cid else "default"


def settings_file(user: str | None = None) -> str | None:
    import folder_paths

    user = user or current_user()
    root = folder_paths.get_public_user_directory(user) if hasattr(
        folder_paths, "get_public_user_directory") else os.path.join(folder_paths.get_user_directory(), user)
    return os.path.join(root, "comfy.settings.json") if root else None


def user_setting(setting_id: str, user: str | None = None) -> bool:
    """A boolean GPU Garden setting of `user` (default: the running prompt's), from ComfyUI's own settings
    store; the file is read again only when it changed. Automatic unload and Fit to Card both read theirs here."""
    path = settings_file(user)
    try:
        mtime = os.stat(path).st_mtime_ns if path else None
    except OSError:
        mtime = None
    key = (path, setting_id)
    if key in _state["cache"] and _state["cache"][key][0] == mtime:
        return _state["cache"][key][1]
    value = False
    if mtime is not None:
        try:
            with open(path, encoding="utf-8") as f:
                value = json.load(f).get(setting_id) is True
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("[GPU Garden] cannot read %s from %s: %s", setting_id, path, exc)
    if len(_state["cache"]) > MAX_CLIENTS:
        _state["cache"].clear()
    _state["cache"][key] = (mtime, value)
    return value


def enabled(user: str | None = None) -> bool:
    return user_setting(SETTING_ID, user)


def _sampler_models(model) -> list:
    models = [model]
    try:
        models += list(model.get_nested_additional_models())
    except Exception:
        pass
    return models


def unload_before_sampling(model) -> dict | None:
    """Unload every text encoder on the sampler's device that is not one of the sampler's own models."""
    from . import host_models, unload

    keep = _sampler_models(model)
    device = getattr(model, "load_device", None)
    entries = [lm for lm in host_models.entries()
               if getattr(lm.model, "is_clip", False) and lm.device == device
               and not any(unload.same_weights(lm.model, k) for k in keep)]
    if not entries:
        return None
    report = unload.unload(entries, "offload", origin="auto")
    _state["last"] = unload._for_ui(report)
    log.info("[GPU Garden] auto-unload before sampling: %s", "\n  ".join(unload.unload_report.lines(report)))
    try:
        from server import PromptServer

        sid = running_client_id()
        if sid:  # only the page that queued this prompt; an API script reads GET /gpu_garden/auto_unload
            PromptServer.instance.send_sync("gpu_garden.auto_unload",
                                            {"node": PromptServer.instance.last_node_id, "report": _state["last"]}, sid)
    except Exception:
        pass
    return report


def before_sampling(model) -> None:
    """Everything the wrapper does before ComfyUI's own prepare_sampling; never raises."""
    try:
        if _state["installed"] and enabled():
            unload_before_sampling(model)
        FEATURE.ok()
    except Exception as exc:
        FEATURE.fail(exc)
        log.exception("[GPU Garden] auto-unload failed; sampling continues with the encoders loaded")


def _wrap(original):
    @functools.wraps(original)
    def prepare_sampling(model, *args, **kwargs):
        before_sampling(model)
        return original(model, *args, **kwargs)

    _wrappers[prepare_sampling] = original  # ownership by identity: functools.wraps copies __dict__
    return prepare_sampling


_wrappers: dict = {}  # our wrapper -> the function it wraps


def _ours(fn) -> bool:
    return health.in_chain(fn, _wrappers)


def install() -> bool:
    import comfy.sampler_helpers as sh

    if not _ours(sh.prepare_sampling):
        sh.prepare_sampling = _wrap(sh.prepare_sampling)
    _state["installed"] = True
    FEATURE.ok()
    return True


def teardown() -> None:
    import comfy.sampler_helpers as sh

    _state["installed"] = False  # a wrapper someone stacked on ours keeps calling through, inertly
    for wrapper, original in list(_wrappers.items()):
        if sh.prepare_sampling is wrapper:
            sh.prepare_sampling = original
            del _wrappers[wrapper]
    FEATURE.uninstalled()


def _check(feature) -> None:
    try:
        import comfy.sampler_helpers as sh
    except Exception:
        return
    if _state["installed"] and not _ours(sh.prepare_sampling):
        feature.uninstalled(f"{SEAM} was replaced without keeping our wrapper (__wrapped__)")
    elif _state["installed"]:  # the setting (default off) is a state, not a failure: health shows it as off
        try:
            user = health.asking_user() or current_user()  # the asking page's user; else the running prompt's
            on = enabled(user)
        except Exception:
            user, on = "default", False
        feature.switch(on, f"automatic mode {'on' if on else 'off'} (setting {SETTING_ID}, user {user}); "
                           "the Unload node works either way")


def status(user: str | None = None) -> dict:
    user = user or current_user()
    return {"setting": SETTING_ID, "enabled": enabled(user), "user": user, "settings_file": settings_file(user),
            "installed": bool(_state["installed"]), "seam": SEAM, "last": _state["last"]}


def _routes():
    from aiohttp import web
    from server import PromptServer

    routes = PromptServer.instance.routes

    @routes.get("/gpu_garden/auto_unload")
    async def get_status(request):
        cid = request.query.get("client_id")
        return web.json_response(status(current_user(cid) if cid else request_user(request)))

    @routes.post("/gpu_garden/auto_unload")
    async def follow_user(request):
        """{"client_id": this page's websocket id}: prompts from that page follow this request's user."""
        user = request_user(request)
        try:
            body = await request.json() if request.can_read_body else {}
        except ValueError:
            body = {}
        cid = body.get("client_id") if isinstance(body, dict) else None
        if isinstance(cid, str) and 0 < len(cid) <= 128:
            remember(cid, user)
            return web.json_response(status(user))
        return web.json_response({**status(user), "note": "no client_id in the body: this page's prompts follow "
                                                          "\"default\" until it sends its websocket client_id"})


def setup() -> None:
    try:
        install()
    except ImportError as exc:  # a host without comfy.sampler_helpers: the node still works, auto mode does not
        log.warning("[GPU Garden] auto_unload disabled: %s", exc)
        return
    _routes()
