"""Catches an out-of-memory failure of a queued run, records what memory looked like at that moment,
triages it with the core and pushes one "gpu_garden.oom" event to the browser that queued the run.

Three thin wrappers, installed once and removable (uninstall()), each calling the original first or
around it so ComfyUI behaves exactly as before, API clients included:
- execution.execute (runs one node): remembers which node is running and, when it fails with what the
  triage core calls an OOM, builds the report;
- comfy.model_management.unload_all_models: when ComfyUI is about to unload everything because an OOM
  is being handled inside a node, takes the snapshot first, so the report shows the models that were
  resident when the allocation failed, not the empty device left after the cleanup;
- PromptExecutor.handle_execution_error: after ComfyUI has sent its own execution_error, stores the
  report and sends it to the same client (sid = the prompt's client_id; nothing is broadcast).
"""
import contextvars
import inspect
import logging
import os
import sys
import time
import uuid

from . import oom_report

log = logging.getLogger("gpu_garden")

EVENT = "gpu_garden.oom"
ROUTE = "/gpu_garden/oom/reports"

_core = None  # the triage module once imported; False if it failed to import
_core_missing = None


def _triage():
    """The triage core, imported at the first failure rather than at ComfyUI's start (its pattern tables cost
    tens of ms to compile). Capture still records and serves reports without it."""
    global _core, _core_missing
    if _core is None:
        try:
            from ..memory.triage import engine as core
        except Exception as exc:  # noqa: BLE001 - a broken core must not stop the capture
            _core, _core_missing = False, f"{type(exc).__name__}: {exc}"
        else:
            _core = core
    return _core or None

_session_ooms: list[dict] = []  # this process's earlier OOMs (raw numbers), for the triage core's leak check
_running = contextvars.ContextVar("gpu_garden_oom_node", default=None)
_pending: dict[str, dict] = {}  # prompt_id -> report waiting for handle_execution_error
_installed: dict[str, tuple] = {}  # name -> (owner, attribute, original)
_store = None
_route_added = False


# -- recognising an OOM ----------------------------------------------------------------------------
def short_type_name(exc_type_name: str) -> str:
    return exc_type_name[len("builtins."):] if exc_type_name.startswith("builtins.") else exc_type_name


def full_type_name(exc: BaseException) -> str:
    t = type(exc)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


_FALLBACK_MARKERS = ("out of memory", "can't allocate memory", "not enough memory", "alloc_failed",
                     "would exceed allowed memory", "failed to allocate")


def is_oom(exc: BaseException) -> bool:
    name, message = full_type_name(exc), str(exc)
    core = _triage()
    if core is not None and hasattr(core, "is_oom_error"):
        try:
            return bool(core.is_oom_error(name, message))
        except Exception:
            log.exception("[GPU Garden] triage.is_oom_error failed")
    low = message.lower()
    return name.endswith("OutOfMemoryError") or name == "MemoryError" or any(m in low for m in _FALLBACK_MARKERS)


# -- what the host knows at the moment of failure ---------------------------------------------------
def _host_backend() -> str:
    try:
        import torch
        import comfy.model_management as mm
        dev = mm.get_torch_device()
        kind = getattr(dev, "type", str(dev))
        if kind == "cuda" and getattr(torch.version, "hip", None):
            return "rocm"
        return kind if kind in ("cuda", "mps", "xpu", "cpu") else str(kind)
    except Exception:
        return "cpu"


def _platform() -> str:
    return "windows" if sys.platform.startswith("win") else "darwin" if sys.platform == "darwin" else "linux"


def _cuda_malloc_async(backend: str) -> bool:
    """ComfyUI turns cudaMallocAsync on through the env var before torch starts (cuda_malloc.py), even
    under --cpu; it matters only where CUDA allocates, and torch knows for sure once CUDA is up."""
    if backend != "cuda":
        return False
    try:
        import torch
        if torch.cuda.is_initialized():
            return torch.cuda.get_allocator_backend() == "cudaMallocAsync"
    except Exception:
        pass
    conf = os.environ.get("PYTORCH_ALLOC_CONF", "") + "," + os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return "cudaMallocAsync" in conf


def _loaded_models() -> list:
    try:
        from . import host_models
        return host_models.loaded_models()
    except Exception as exc:
        log.debug("[GPU Garden] loaded models unavailable: %s", exc)
        return []


def _model_family() -> str | None:
    try:
        import comfy.model_management as mm
        best = None
        for lm in list(mm.current_loaded_models):
            model = getattr(lm.model, "model", None) if lm.model is not None else None
            cfg = getattr(model, "model_config", None)
            if cfg is not None and (best is None or getattr(lm, "currently_used", False)):
                best = type(cfg).__name__
        return oom_report.family_of(best)
    except Exception:
        return None


def _display_name(class_type) -> str | None:
    try:
        import nodes
        return nodes.NODE_DISPLAY_NAME_MAPPINGS.get(class_type)
    except Exception:
        return None


def _snapshot(models: list) -> tuple[dict | None, str | None]:
    try:
        from ..memory.budget import probe
    except Exception as exc:
        return None, f"budget probe unavailable ({type(exc).__name__})"
    try:
        return probe.snapshot(models=models), None
    except Exception as exc:
        log.exception("[GPU Garden] probe.snapshot failed during OOM capture")
        return None, f"budget probe failed: {type(exc).__name__}: {exc}"


def capture_state(when: str) -> dict:
    models = _loaded_models()
    snap, note = _snapshot(models)
    return {"when": when, "sampled_at": time.time(), "loaded_models": models, "snapshot": snap,
            "snapshot_note": note, "model_family": _model_family()}


def _latent(node_ctx: dict) -> dict | None:
    """The LATENT the failing node received (its real shape), else the size set upstream in the prompt."""
    dynprompt, caches, node_id = node_ctx.get("dynprompt"), node_ctx.get("caches"), node_ctx.get("node_id")
    try:
        inputs = dynprompt.get_node(node_id).get("inputs", {})
        for value in inputs.values():
            if not (isinstance(value, list) and len(value) == 2):
                continue
            entry = caches.outputs.get(value[0])
            outputs = getattr(entry, "outputs", None)
            if not outputs or value[1] >= len(outputs):
                continue
            for item in outputs[value[1]] or []:
                samples = item.get("samples") if isinstance(item, dict) else None
                if samples is not None and hasattr(samples, "shape"):
                    lat = oom_report.latent_from_samples(list(samples.shape))
                    if lat:
                        return lat
    except Exception:
        pass
    try:
        return oom_report.latent_from_prompt(dynprompt.original_prompt, node_id)
    except Exception:
        return None


# -- the report ---------------------------------------------------------------------------------
def log_excerpt(exc_type: str, message: str) -> str:
    """The failure as ComfyUI's own log prints it (execution.py), so triage knows the runtime is ComfyUI."""
    return (f"!!! Exception during processing !!! {message}\nTraceback (most recent call last):\n"
            f"{short_type_name(exc_type)}: {message}")


def _triage_report(text: str, context: dict) -> dict | None:
    core = _triage()
    if core is None:
        return None
    try:
        return core.triage_text(text, context)
    except Exception:
        log.exception("[GPU Garden] triage_text failed on an OOM")
        return None


def build_report(node_ctx: dict, exc: BaseException, state: dict) -> dict:
    prompt = getattr(node_ctx.get("dynprompt"), "original_prompt", None) or {}
    node_id = str(node_ctx.get("node_id"))
    class_type = (prompt.get(node_id) or {}).get("class_type")
    if class_type is None:
        try:
            class_type = node_ctx["dynprompt"].get_node(node_id).get("class_type")
        except Exception:
            pass
    extra = node_ctx.get("extra_data") or {}
    node = oom_report.node_info(node_id, class_type, extra.get("extra_pnginfo"), _display_name(class_type))
    exc_type, message = full_type_name(exc), str(exc)
    backend = _host_backend()
    latent = _latent(node_ctx)
    session = list(_session_ooms)
    context = {"node_type": class_type, "node_title": node["title"], "platform": _platform(), "backend": backend,
               "cuda_malloc_async": _cuda_malloc_async(backend), "snapshot": state.get("snapshot"),
               "loaded_models": state.get("loaded_models"), "latent": latent, "model_family": state.get("model_family"),
               "previous_ooms": session}
    tri = _triage_report(log_excerpt(exc_type, message), context)
    event = (tri or {}).get("events", [None])[-1] if (tri or {}).get("events") else None
    event = event or {}
    _session_ooms[:] = (session + [{"numbers": event.get("numbers") or {}, "kind": event.get("kind"),
                                    "node_type": class_type}])[-20:]
    causes = event.get("causes") or []
    cause = (tri or {}).get("cause") or (causes[0]["id"] if causes else None)
    guide = event.get("guide")
    device = oom_report.matching_device(state.get("snapshot"), event.get("device_kind"), event.get("device_index"))
    numbers = oom_report.bar_numbers(event.get("numbers"), device, event.get("device_kind"))
    return {
        "id": uuid.uuid4().hex, "version": 1, "timestamp": time.time(), "prompt_id": node_ctx.get("prompt_id"),
        "node": node, "exception_type": exc_type, "message": message,
        "runtime": event.get("runtime"), "device_kind": event.get("device_kind"),
        "cause": cause, "causes": causes, "guide": guide, "numbers": numbers,
        "actions": oom_report.swap_actions(node, cause, guide),
        "latent": latent, "model_family": state.get("model_family"),
        "loaded_models": state.get("loaded_models"), "snapshot": state.get("snapshot"),
        "captured": state.get("when"), "notes": [n for n in (state.get("snapshot_note"),
                                                          None if _triage() else f"triage core unavailable ({_core_missing})") if n],
        "host": {"platform": context["platform"], "backend": backend, "cuda_malloc_async": context["cuda_malloc_async"]},
        "session_history": session,  # what triage was told of this process's earlier OOMs (its leak evidence)
    }


def store():
    global _store
    if _store is None:
        import folder_paths
        _store = oom_report.ReportStore(os.path.join(folder_paths.get_user_directory(), "gpu_garden", "oom_reports.jsonl"))
    return _store


def publish(report: dict, server, sid) -> None:
    try:
        store().add(report)
    except Exception:
        log.exception("[GPU Garden] could not store the OOM report")
    if sid is not None and server is not None:
        server.send_sync(EVENT, report, sid)  # only the browser that queued the run; API clients read the route
    log.warning("[GPU Garden] OOM in %s #%s: cause %s (report %s)", report["node"].get("type"), report["node"].get("id"),
                report.get("cause"), report["id"])


# -- the wrappers ---------------------------------------------------------------------------------
def _wrap_execute(original):
    try:
        sig = inspect.signature(original)
    except (TypeError, ValueError):
        sig = None

    async def execute(*args, **kwargs):
        ctx = None
        if sig is not None:
            try:
                b = sig.bind_partial(*args, **kwargs).arguments
                ctx = {"server": b.get("server"), "dynprompt": b.get("dynprompt"), "caches": b.get("caches"),
                       "node_id": b.get("current_item"), "extra_data": b.get("extra_data"),
                       "prompt_id": b.get("prompt_id"), "pre": None}
            except TypeError:
                ctx = None
        token = _running.set(ctx)
        try:
            result = await original(*args, **kwargs)
        finally:
            _running.reset(token)
        if ctx is not None:
            _after_node(ctx, result)
        return result

    execute.__wrapped__ = original
    return execute


def _after_node(ctx: dict, result) -> None:
    try:
        status, _error, exc = result
        if getattr(status, "name", status) != "FAILURE" or not isinstance(exc, Exception) or not is_oom(exc):
            return
        state = ctx["pre"] or capture_state("at failure")
        report = build_report(ctx, exc, state)
        if "handle_execution_error" in _installed:
            _pending[str(ctx.get("prompt_id"))] = report
            while len(_pending) > 8:
                _pending.pop(next(iter(_pending)))
        else:
            publish(report, ctx.get("server"), getattr(ctx.get("server"), "client_id", None))
    except Exception:
        log.exception("[GPU Garden] OOM capture failed (ComfyUI's own error handling is unaffected)")


def _wrap_unload_all_models(original):
    def unload_all_models(*args, **kwargs):
        ctx = _running.get()
        if ctx is not None and ctx["pre"] is None:
            exc = sys.exc_info()[1]
            if isinstance(exc, Exception):
                try:
                    if is_oom(exc):
                        ctx["pre"] = capture_state("before ComfyUI unloaded models")
                except Exception:
                    log.exception("[GPU Garden] pre-unload capture failed")
        return original(*args, **kwargs)

    unload_all_models.__wrapped__ = original
    return unload_all_models


def _wrap_handle_execution_error(original):
    def handle_execution_error(self, prompt_id, *args, **kwargs):
        try:
            return original(self, prompt_id, *args, **kwargs)
        finally:
            report = _pending.pop(str(prompt_id), None)
            if report is not None:
                try:
                    server = getattr(self, "server", None)
                    publish(report, server, getattr(server, "client_id", None))
                except Exception:
                    log.exception("[GPU Garden] could not publish the OOM report")

    handle_execution_error.__wrapped__ = original
    return handle_execution_error


def _patch(name, owner, attr, wrapper_factory):
    current = getattr(owner, attr, None)
    if current is None or name in _installed or getattr(current, "__gpu_garden__", False):
        return
    wrapped = wrapper_factory(current)
    wrapped.__gpu_garden__ = True
    setattr(owner, attr, wrapped)
    _installed[name] = (owner, attr, current)


def install() -> None:
    import comfy.model_management as mm
    import execution

    _patch("execute", execution, "execute", _wrap_execute)
    _patch("unload_all_models", mm, "unload_all_models", _wrap_unload_all_models)
    if hasattr(execution, "PromptExecutor"):
        _patch("handle_execution_error", execution.PromptExecutor, "handle_execution_error", _wrap_handle_execution_error)


def uninstall() -> None:
    for name in list(_installed):
        owner, attr, original = _installed.pop(name)
        if getattr(getattr(owner, attr, None), "__gpu_garden__", False):
            setattr(owner, attr, original)
    _pending.clear()


# -- route ----------------------------------------------------------------------------------------
def _add_route() -> None:
    global _route_added
    if _route_added:
        return
    _route_added = True
    from aiohttp import web
    from server import PromptServer

    @PromptServer.instance.routes.get(ROUTE)
    async def oom_reports(request):
        try:
            limit = max(1, min(oom_report.MAX_REPORTS, int(request.query.get("limit", oom_report.MAX_REPORTS))))
        except ValueError:
            return web.json_response({"error": "limit must be an integer"}, status=400)
        return web.json_response({"reports": store().read(limit)})


def setup() -> None:
    install()
    _add_route()
