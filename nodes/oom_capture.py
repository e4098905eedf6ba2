"""Catches an out-of-memory failure of a queued run, records what memory looked like at that moment,
triages it with the core (oom_build.py) and pushes one "gpu_garden.oom" event to the browser that queued
the run; GET /gpu_garden/oom/reports serves the stored ones (oom_store.py).

Four thin wrappers, each calling the original first or around it so ComfyUI behaves exactly as before:
- execution.execute (runs one node): remembers which node is running and, when it fails with what the
  triage core calls an OOM, builds the report. Its arguments are read by ComfyUI's known parameter
  order (EXECUTE_PARAMS) unless inspect.unwrap(original) names them, so a foreign `(*args, **kwargs)`
  wrapper installed before ours (custom nodes load in filesystem order) does not lose the report;
- comfy.model_management.unload_all_models: when ComfyUI is about to unload everything because an OOM
  is being handled inside a node, takes the snapshot first, so the report shows the models that were
  resident when the allocation failed;
- PromptExecutor.handle_execution_error: after ComfyUI has sent its own execution_error, stores the
  report and sends it to the same client (sid = the prompt's client_id; nothing is broadcast);
- PromptExecutor.execute_async (one prompt): before it, re-installs any of these hooks that something
  removed (ComfyUI's hook breaker, hook_breaker_ac10a0.py, restores the functions it lists after custom
  nodes load and after prompts); after it, publishes any report still pending (a report is never lost
  because handle_execution_error was not reached or was not ours). A prompt-server on_prompt handler
  re-checks too, should execute_async itself be restored.

Ownership is an identity registry (_hooks: our wrapper objects), never an attribute (functools.wraps
copies __dict__ into a foreign wrapper). Each hook is a feature on GET /gpu_garden/health.
"""
import contextvars
import inspect
import logging
import os
import queue
import sys
import threading
import time

from . import health, oom_build, oom_store

log = logging.getLogger("gpu_garden")

EVENT = "gpu_garden.oom"
ROUTE = "/gpu_garden/oom/reports"
MAX_REPORTS = oom_store.MAX_REPORTS
# execution.execute's parameters in ComfyUI 0.3.4x-0.8.x (server ... ui_outputs); only the first seven matter here.
EXECUTE_PARAMS = ("server", "dynprompt", "caches", "current_item", "extra_data", "executed", "prompt_id",
                  "execution_list", "pending_subgraph_results", "pending_async_nodes", "ui_outputs")
HOOK_NAMES = ("execute", "unload_all_models", "handle_execution_error", "execute_async")

_running = contextvars.ContextVar("gpu_garden_oom_node", default=None)
_pending: dict[str, tuple] = {}  # prompt_id -> (report, server) waiting for handle_execution_error
_pending_lock = threading.Lock()
_hooks: dict[str, dict] = {}  # name -> {"owner", "attr", "wrappers": {wrapper: original}}
_install_lock = threading.RLock()  # the worker (execute_async) and the loop (on_prompt) may check at once
_active = {"on": False}
_route_added = False
_store_path = None
STORE_FEATURE = health.register("oom_capture.store")

# Kept at their old paths for callers and tests.
is_oom, capture_state, build_report, log_excerpt = (oom_build.is_oom, oom_build.capture_state,
                                                    oom_build.build_report, oom_build.log_excerpt)


# -- publishing ------------------------------------------------------------------------------------
def store():
    global _store_path
    if _store_path is None:
        import folder_paths
        _store_path = os.path.join(folder_paths.get_user_directory(), "gpu_garden", "oom_reports.jsonl")
    return oom_store.store_at(_store_path)


_to_store: "queue.Queue[dict]" = queue.Queue()
_writer: threading.Thread | None = None


def _store_later(report: dict) -> None:
    """The store write (a cross-process lock and an fsync) runs on one writer thread, never on ComfyUI's worker:
    a slow or locked user folder must not hold up the queue."""
    global _writer
    _to_store.put(report)
    if _writer is None or not _writer.is_alive():
        _writer = threading.Thread(target=_drain, name="gpu_garden-oom-store", daemon=True)
        _writer.start()


def _drain() -> None:
    while True:
        report = _to_store.get()
        try:
            store().add(report)
            STORE_FEATURE.ok()
        except Exception as exc:
            STORE_FEATURE.fail(exc)
            log.exception("[GPU Garden] could not store the OOM report")
        finally:
            _to_store.task_done()


def flush(timeout: float = 5.0) -> bool:
    """Wait (at most `timeout` s) until every published report is in the store; True when none is pending."""
    deadline = time.monotonic() + timeout
    while _to_store.unfinished_tasks and time.monotonic() < deadline:
        time.sleep(0.01)
    return not _to_store.unfinished_tasks


def publish(report: dict, server, sid) -> None:
    """Send to `sid` only, and store (bounded) on the writer thread; a failure to store still sends, and the reverse."""
    report = oom_store.bound_report(report)
    try:
        _store_later(report)
    except Exception as exc:
        STORE_FEATURE.fail(exc)
        log.exception("[GPU Garden] could not queue the OOM report for the store")
    if sid is not None and server is not None:
        try:
            server.send_sync(EVENT, report, sid)  # only the browser that queued the run; API clients read the route
        except Exception:
            log.exception("[GPU Garden] could not send the OOM report")
    node = report.get("node") or {}
    log.warning("[GPU Garden] OOM in %s #%s: cause %s (report %s)", node.get("type"), node.get("id"),
                report.get("cause"), report.get("id"))


def _client_of(server):
    return getattr(server, "client_id", None)


def flush_pending(prompt_id=None) -> None:
    """Publish what is still waiting (for one prompt, or all)."""
    with _pending_lock:
        keys = [k for k in _pending if prompt_id is None or k == str(prompt_id)]
        items = [_pending.pop(k) for k in keys]
    for report, server in items:
        publish(report, server, _client_of(server))


# -- binding execute's arguments ---------------------------------------------------------------------
def execute_param_names(fn) -> tuple:
    """Parameter names to bind execute's positional arguments to: those of the innermost function
    (inspect.unwrap) when they name the node, else ComfyUI's known order."""
    try:
        params = inspect.signature(inspect.unwrap(fn)).parameters.values()
        names = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    except (TypeError, ValueError):
        names = ()
    return names if {"dynprompt", "current_item"} <= set(names) else EXECUTE_PARAMS


def bind_execute(names: tuple, args: tuple, kwargs: dict) -> dict:
    b = dict(zip(names, args))
    b.update(kwargs)
    if not hasattr(b.get("dynprompt"), "get_node") and len(args) >= 4:  # names wrong for this call: known order
        b = dict(zip(EXECUTE_PARAMS, args))
        b.update(kwargs)
    return {"server": b.get("server"), "dynprompt": b.get("dynprompt"), "caches": b.get("caches"),
            "node_id": b.get("current_item"), "extra_data": b.get("extra_data"), "prompt_id": b.get("prompt_id"),
            "pre": None}


# -- the wrappers ---------------------------------------------------------------------------------
def _wrap_execute(original):
    names = execute_param_names(original)

    async def execute(*args, **kwargs):
        outer = _running.get()
        ctx = None
        if _active["on"]:
            try:
                ctx = bind_execute(names, args, kwargs)
            except Exception:
                log.exception("[GPU Garden] could not read execute's arguments")
        if ctx is not None and outer is not None and outer.get("node_id") == ctx["node_id"]:
            ctx = None  # ours twice in the chain (re-installed over a foreign wrapper): the outer one reports
        token = _running.set(ctx) if ctx is not None else None
        try:
            result = await original(*args, **kwargs)
        finally:
            if token is not None:
                _running.reset(token)
        if ctx is not None:
            _after_node(ctx, result)
        return result

    return execute


def _after_node(ctx: dict, result) -> None:
    feature = health.register("oom_capture.execute")
    try:
        status, _error, exc = result
        if getattr(status, "name", status) != "FAILURE" or not isinstance(exc, Exception) or not is_oom(exc):
            return
        state = ctx["pre"] or capture_state("at failure")
        report = build_report(ctx, exc, state)
        prompt_id = ctx.get("prompt_id")
        if prompt_id is not None and _installed_now("handle_execution_error"):
            with _pending_lock:
                _pending[str(prompt_id)] = (report, ctx.get("server"))
                while len(_pending) > 8:
                    _pending.pop(next(iter(_pending)))
        else:  # no prompt id to match later, or no later hook: now
            publish(report, ctx.get("server"), _client_of(ctx.get("server")))
        feature.ok()
    except Exception as exc:
        feature.fail(exc)
        log.exception("[GPU Garden] OOM capture failed (ComfyUI's own error handling is unaffected)")


def _wrap_unload_all_models(original):
    def unload_all_models(*args, **kwargs):
        try:
            ctx = _running.get()
            if _active["on"] and ctx is not None and ctx["pre"] is None:
                exc = sys.exc_info()[1]
                if isinstance(exc, Exception) and is_oom(exc):
                    ctx["pre"] = capture_state("before ComfyUI unloaded models")
        except Exception as exc:
            health.register("oom_capture.unload_all_models").fail(exc)
            log.exception("[GPU Garden] pre-unload capture failed")
        return original(*args, **kwargs)

    return unload_all_models


def _wrap_handle_execution_error(original):
    def handle_execution_error(self, prompt_id, *args, **kwargs):
        try:
            return original(self, prompt_id, *args, **kwargs)
        finally:
            try:
                flush_pending(prompt_id)
            except Exception as exc:
                health.register("oom_capture.handle_execution_error").fail(exc)
                log.exception("[GPU Garden] could not publish the OOM report")

    return handle_execution_error


def _wrap_execute_async(original):
    async def execute_async(self, *args, **kwargs):
        try:
            ensure_installed()
        except Exception:
            log.exception("[GPU Garden] hook check failed")
        try:
            return await original(self, *args, **kwargs)
        finally:
            try:
                flush_pending()
            except Exception:
                log.exception("[GPU Garden] could not publish a pending OOM report")

    return execute_async


_FACTORIES = {"execute": _wrap_execute, "unload_all_models": _wrap_unload_all_models,
              "handle_execution_error": _wrap_handle_execution_error, "execute_async": _wrap_execute_async}


# -- ownership, install, re-install ------------------------------------------------------------------
def _targets() -> dict:
    import comfy.model_management as mm
    import execution

    out = {"execute": (execution, "execute"), "unload_all_models": (mm, "unload_all_models")}
    executor = getattr(execution, "PromptExecutor", None)
    if executor is not None:
        out["handle_execution_error"] = (executor, "handle_execution_error")
        if hasattr(executor, "execute_async"):
            out["execute_async"] = (executor, "execute_async")
    return out


def _installed_now(name: str) -> bool:
    hook = _hooks.get(name)
    return bool(hook) and health.in_chain(getattr(hook["owner"], hook["attr"], None), hook["wrappers"])


def _install_one(name, owner, attr) -> bool:
    """Wrap owner.attr unless one of ours is already in its chain; True when a wrapper was added."""
    hook = _hooks.setdefault(name, {"owner": owner, "attr": attr, "wrappers": {}})
    current = getattr(owner, attr, None)
    if current is None or health.in_chain(current, hook["wrappers"]):
        return False
    wrapper = _FACTORIES[name](current)
    wrapper.__wrapped__ = current  # for others' inspect.unwrap; ownership is the registry, not this
    for a in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, a, getattr(current, a))
        except (AttributeError, TypeError):
            pass
    setattr(owner, attr, wrapper)
    hook["wrappers"][wrapper] = current
    return True


def install() -> None:
    _active["on"] = True
    with _install_lock:
        for name, (owner, attr) in _targets().items():
            _install_one(name, owner, attr)
            health.register(f"oom_capture.{name}", check=lambda f, n=name: _check(f, n)).ok()
    broken = hook_breaker_listed()
    if broken:
        log.warning("[GPU Garden] ComfyUI's hook breaker restores %s; the OOM capture re-installs them before "
                    "each prompt", ", ".join(broken))


def ensure_installed() -> list[str]:
    """Re-install any hook that was removed since install(); returns their names (also on /health)."""
    if not _active["on"]:
        return []
    again = []
    with _install_lock:
        for name, (owner, attr) in _targets().items():
            if _install_one(name, owner, attr):
                again.append(name)
                health.register(f"oom_capture.{name}").fail(
                    f"{owner.__name__}.{attr} had been replaced without our wrapper (ComfyUI's hook breaker or "
                    "another pack); re-installed").installed = True
    if again:
        log.warning("[GPU Garden] OOM capture hooks re-installed: %s", ", ".join(again))
    return again


def _check(feature, name) -> None:
    if not _active["on"]:
        feature.uninstalled()
    elif not _installed_now(name):
        feature.uninstalled(f"{name} is no longer wrapped (removed by ComfyUI's hook breaker or another pack); "
                            "it is re-installed before the next prompt")
    elif not feature.installed:
        feature.installed = True


def hook_breaker_listed() -> list[str]:
    """Our hook targets that ComfyUI's hook breaker (hook_breaker_ac10a0) saves and restores."""
    hb = sys.modules.get("hook_breaker_ac10a0")
    if hb is None:
        return []
    listed = list(getattr(hb, "HOOK_BREAK", ())) + [f[:2] for f in getattr(hb, "SAVED_FUNCTIONS", ())]
    return sorted({f"{getattr(o, '__name__', o)}.{a}" for o, a in listed
                   for owner, attr in _targets().values() if o is owner and a == attr})


def uninstall() -> None:
    """Put back the originals where ours is still the outermost wrapper; where a foreign wrapper sits on
    top, ours stays in its chain but does nothing (_active)."""
    _active["on"] = False
    with _install_lock:
        _uninstall_all()
    with _pending_lock:
        _pending.clear()


def _uninstall_all() -> None:
    for name, hook in list(_hooks.items()):
        owner, attr = hook["owner"], hook["attr"]
        for wrapper, original in reversed(list(hook["wrappers"].items())):
            if getattr(owner, attr, None) is wrapper:
                setattr(owner, attr, original)
        health.register(f"oom_capture.{name}").uninstalled()
    _hooks.clear()


# -- route ----------------------------------------------------------------------------------------
def _on_prompt(json_data):
    try:
        ensure_installed()
    except Exception:
        log.exception("[GPU Garden] hook check failed")
    return json_data


def _add_route() -> None:
    global _route_added
    if _route_added:
        return
    from aiohttp import web
    from server import PromptServer

    _route_added = True

    @PromptServer.instance.routes.get(ROUTE)
    async def oom_reports(request):
        try:
            limit = max(1, min(MAX_REPORTS, int(request.query.get("limit", MAX_REPORTS))))
        except ValueError:
            return web.json_response({"error": "limit must be an integer"}, status=400)
        def read():
            flush(2.0)  # a report published a moment ago is in the answer
            return store().read(limit)

        import asyncio

        return web.json_response({"reports": await asyncio.get_running_loop().run_in_executor(None, read)})

    if hasattr(PromptServer.instance, "add_on_prompt_handler"):
        PromptServer.instance.add_on_prompt_handler(_on_prompt)


def check_store() -> None:
    """At start: the report store's folder exists and is writable (ok), or health says why not. Until now
    the feature was only marked after the first stored report, so a fresh host showed it not installed."""
    try:
        folder = os.path.dirname(store().path)
        if not os.access(folder, os.W_OK):
            raise PermissionError(f"{folder} is not writable: OOM reports are sent but not kept")
        STORE_FEATURE.ok()
    except Exception as exc:
        STORE_FEATURE.fail(exc).installed = True
        log.warning("[GPU Garden] OOM report store: %s", exc)


def setup() -> None:
    install()
    _add_route()
    check_store()
