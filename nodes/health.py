"""GET /gpu_garden/health (also /api/gpu_garden/health): is each hook and feature of the pack in place and
working, and what failed last. The sidebar tab shows it; scripts can poll it.

    {"pack_version": "0.1.0", "comfyui_version": "0.8.0" | null,
     "features": {name: {"installed": bool, "working": bool, "last_error": str | null,
                         "enabled": bool, "note": str,     # only for switchable features
                         "title": str}}}                   # only for a feature in TITLES

`title` is what the feature does, as the sidebar tab names it (TITLES below: the one table of them; the page has
none of its own). A name without a title (a pack module that failed to import) is shown by its id alone.

A feature a setting switches off (an automatic mode whose setting is off) stays installed and working and
says `"enabled": false` with a `note` naming the setting: deliberately off, not broken. `feature.switch(on,
note)` sets both (from a check, so a GET reads the setting as it is now).

Any module registers what it runs: `feature = health.register("recorder")`, then `feature.ok()` when it
is set up or has just worked, `feature.fail(exc)` when it failed (working -> false, last_error set; a later
ok() makes it working again and keeps the last error for reading). `register(name, check=fn)` adds a
probe run on every GET (fn(feature) may call ok/fail/uninstalled), for hooks that something else can
remove. No ComfyUI import at module level: unit tests drive everything but the route."""
import contextvars
import logging
import threading
import time

log = logging.getLogger("gpu_garden")

ROUTE = "/gpu_garden/health"
MAX_ERROR_CHARS = 500

# What each feature does, in the words of its setting or node, one row per feature id the pack registers (the
# sidebar tab shows it, with the id as secondary detail). tests/unit/test_health.py and tests/host/test_health.py
# fail on a registered feature without a row here.
TITLES = {
    "auto_unload.prepare_sampling": "Unload text encoders before every sampler (automatic)",
    "budget.push": "Live memory bar and meter",
    "estimate.workflow_route": "Estimate the open graph",
    "fit_guard.prepare_sampling": "Fit to Card before every sampler (automatic)",
    "oom_capture.execute": "OOM capture: the failing node",
    "oom_capture.execute_async": "OOM capture: each queued prompt",
    "oom_capture.handle_execution_error": "OOM capture: the report to the page",
    "oom_capture.store": "OOM capture: saved reports",
    "oom_capture.unload_all_models": "OOM capture: models resident at the failure",
    "recorder.hooks": "Flight recorder: node timing and memory",
    "recorder.store": "Flight recorder: saved runs",
}

_lock = threading.Lock()
_features: dict[str, "Feature"] = {}
_asking: contextvars.ContextVar = contextvars.ContextVar("gpu_garden_health_user", default=None)


def asking_user() -> str | None:
    """The user whose page asked for this report (ComfyUI's request user), for checks that read a per-user setting."""
    return _asking.get()
_route_added = False


def _error_text(exc) -> str:
    text = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 1] + "…"


class Feature:
    """One hook or feature's state. Thread-safe enough for flags set from the worker and read on the loop."""

    def __init__(self, name: str, check=None):
        self.name, self.check = name, check
        self.installed = False
        self.working = False
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        self.enabled: bool | None = None  # None: not a switchable feature (no "enabled"/"note" keys)
        self.note: str | None = None

    def switch(self, on: bool, note: str | None = None) -> "Feature":
        """A setting turns this feature on or off; off is a state, not a failure."""
        self.enabled, self.note = bool(on), note
        return self

    def ok(self) -> "Feature":
        self.installed = self.working = True
        return self

    def fail(self, exc) -> "Feature":
        """exc: an exception or a sentence. The feature stays installed (if it was) but is not working."""
        self.working = False
        self.last_error, self.last_error_at = _error_text(exc), time.time()
        return self

    def uninstalled(self, reason=None) -> "Feature":
        self.installed = self.working = False
        if reason is not None:
            self.last_error, self.last_error_at = _error_text(reason), time.time()
        return self

    def as_dict(self) -> dict:
        out = {"installed": bool(self.installed), "working": bool(self.working), "last_error": self.last_error}
        if self.enabled is not None:
            out.update(enabled=self.enabled, note=self.note)
        if self.name in TITLES:
            out["title"] = TITLES[self.name]
        return out


def register(name: str, check=None) -> Feature:
    """The Feature called `name` (created on first call; later calls return the same one, updating check)."""
    with _lock:
        feature = _features.get(name)
        if feature is None:
            feature = _features[name] = Feature(name, check)
        elif check is not None:
            feature.check = check
        return feature


def get(name: str) -> Feature | None:
    return _features.get(name)


def pack_version() -> str | None:
    try:
        from .. import __version__
        return str(__version__)
    except Exception:
        return None


def comfyui_version() -> str | None:
    try:
        import comfyui_version as cv  # ComfyUI's own module (server.py reads it the same way)
        return str(cv.__version__)
    except Exception:
        return None


def report(user: str | None = None) -> dict:
    """`user`: whose per-user settings the checks read (the asking page's; None: the running prompt's, else "default")."""
    with _lock:
        features = sorted(_features.items())
    token = _asking.set(user)
    try:
        for name, feature in features:
            if feature.check is not None:
                try:
                    feature.check(feature)
                except Exception as exc:  # a broken probe marks its own feature, never the route
                    feature.fail(exc)
    finally:
        _asking.reset(token)
    return {"pack_version": pack_version(), "comfyui_version": comfyui_version(),
            "features": {name: f.as_dict() for name, f in features}}


def setup() -> None:
    global _route_added
    if _route_added:
        return
    from aiohttp import web
    from server import PromptServer

    server = getattr(PromptServer, "instance", None)
    if server is None:
        return

    @server.routes.get(ROUTE)
    async def health(request):
        try:  # the asking page's user, for the automatic modes' on/off (any failure: the running prompt's)
            from .auto_unload import request_user

            user = request_user(request)
        except Exception:
            user = None
        return web.json_response(report(user))

    _route_added = True


def in_chain(fn, wrappers) -> bool:
    """One of `wrappers` (our own wrapper objects, compared by identity) is `fn` or down its `__wrapped__` chain:
    another pack that stacked its functools.wraps wrapper on top keeps ours in place. Used by every hook's check."""
    for _ in range(32):
        if fn is None:
            return False
        if any(fn is w for w in wrappers):
            return True
        fn = getattr(fn, "__wrapped__", None)
    return False
