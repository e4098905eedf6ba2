"""Flight recorder, ComfyUI side: every node of every run -> duration, peak memory per device, free memory
before and after, models loaded and unloaded; per run: status, versions, devices, arguments, allocator,
Dynamic VRAM, OOM report id. Runs go to a bounded store (memory/recorder/store.py) in the user directory.

How it hooks in, without wrapping a node's execution:
- a ComfyUI progress handler (comfy_execution.progress) receives start/update/finish for every node: the
  same channel that drives the frontend's progress bars. The registry is rebuilt for each prompt, so the
  handler is added right after execution.reset_progress_state (one small wrapper there, owned through an
  identity check so uninstall never removes someone else's wrapper);
- the run ends at the prompt queue's task_done (a per-instance attribute on PromptServer.prompt_queue),
  which carries ComfyUI's status and messages.
Everything runs inside try/except and does bounded work; the disk, versions and events are handled by a
background writer thread. A watchdog thread warns about nodes that hang (memory/recorder/watchdog.py).
"""
import logging
import threading
import time

from ..memory.recorder import record
from . import health
from .recorder_state import (EVENT_RUN, _feature, _finalize, _load_settings, _state, check_settings, settings,  # noqa: F401
                             store, update_settings, writer)

log = logging.getLogger("gpu_garden")

EVENT_WATCHDOG = "gpu_garden.recorder.watchdog"
HANDLER_NAME = "gpu_garden_recorder"

_installed: dict = {}  # name -> (owner, attr, original, wrapper)


class Recorder:
    """The recording state machine, fed by the hooks. Host objects are injected (meter, model list, names),
    so tests and the benchmark drive it without ComfyUI."""

    def __init__(self, meter, loaded=lambda: [], model_info=lambda m: {"name": type(m).__name__}, clock=time.perf_counter):
        self.meter, self.loaded, self.model_info, self.clock = meter, loaded, model_info, clock
        self.run = None
        self.open: dict = {}  # node id -> working dict
        self.last_progress = 0.0
        self.overhead = 0.0
        self._models = {}
        self._lock = threading.Lock()  # the watchdog's appends vs the run's end (see add_warning)

    # -- run ----------------------------------------------------------------------------------------
    def begin_run(self, prompt_id, prompt, wall=None):
        t = self.clock()
        self.run = record.new_run(prompt_id, prompt, wall if wall is not None else time.time())
        self.t0, self.open, self._models = t, {}, {}
        self.last_progress = time.monotonic()
        self.overhead = 0.0
        for m in self._loaded_map().values():
            self._note_model(m)
        self.meter.take_peaks()
        self.overhead += self.clock() - t

    def end_run(self, status_str, messages, wall=None) -> dict | None:
        run = self.run
        if run is None:
            return None
        t = self.clock()
        status, error = record.status_from_messages(status_str, messages)
        for nid in list(self.open):
            self.node_finish(nid, status="error" if error and error.get("node_id") == nid else status)
        self.meter.idle()
        for m in self._loaded_map().values():
            self._note_model(m)
        run["models"] = list(self._models.values())
        record.finish_run(run, wall if wall is not None else time.time(), status, error, record.cached_nodes(messages))
        self.overhead += self.clock() - t
        run["recorder_overhead_s"] = round(self.overhead, 6)
        with self._lock:  # after this no warning is added: the run goes to the store as it is now
            self.run, self.open = None, {}
        return run

    def add_warning(self, run, entry) -> bool:
        """The watchdog thread notes a warning in `run` while it is still the running one; False once it ended
        (the writer may be serializing it). end_run detaches the run under the same lock, so a warning decided
        before the end is in the stored run and none is appended to a stored one."""
        with self._lock:
            if self.run is not run:
                return False
            run["watchdog"].append(entry)
            return True

    # -- nodes --------------------------------------------------------------------------------------
    def _loaded_map(self) -> dict:
        return {id(m): m for m in self.loaded()}

    def _note_model(self, m) -> str:
        info = self.model_info(m)
        self._models.setdefault((info.get("name"), info.get("dtype")), info)
        return info.get("name")

    def _fold(self, sync=False):
        if sync:
            self.meter.sync()
        peak, reserved = self.meter.take_peaks()
        for w in self.open.values():
            for dev, v in peak.items():
                if v > w["peak"].get(dev, 0):
                    w["peak"][dev] = v
            for dev, v in reserved.items():
                if v > w["reserved"].get(dev, 0):
                    w["reserved"][dev] = v

    def node_start(self, node_id, class_type, display_id=None):
        if self.run is None or node_id in self.open:
            return  # a lazy node re-staged: its window started the first time
        t = self.clock()
        self._fold()
        self.meter.begin()
        self.open[node_id] = {"t": t, "type": class_type, "display_id": display_id, "peak": {}, "reserved": {},
                              "free_before": self.meter.free(), "models": self._loaded_map()}
        self.last_progress = time.monotonic()
        self.overhead += self.clock() - t

    def node_progress(self):
        self.last_progress = time.monotonic()

    def node_finish(self, node_id, status="success"):
        w = self.open.get(node_id)
        if w is None or self.run is None:
            return  # a cached node (finish without start)
        t = self.clock()
        self._fold(sync=True)
        del self.open[node_id]
        if not self.open:
            self.meter.idle()
        after = self._loaded_map()
        before = w["models"]
        loaded = [self._note_model(after[k]) for k in after if k not in before]
        unloaded = [self.model_info(before[k]).get("name") for k in before if k not in after]
        self.run["nodes"].append(record.node_record(
            node_id, w["type"], t0_s=w["t"] - self.t0, duration_s=t - w["t"], peak=w["peak"],
            reserved_peak=w["reserved"], free_before=w["free_before"], free_after=self.meter.free(),
            models_loaded=loaded, models_unloaded=unloaded, display_id=w["display_id"], status=status))
        self.overhead += self.clock() - t

    def innermost(self):
        """(node id, working dict) of the most recently started open node, or None."""
        # Called from the watchdog thread while the worker adds and removes nodes: work on a snapshot.
        for _ in range(3):
            try:
                items = list(self.open.items())
                break
            except RuntimeError:  # "dictionary changed size during iteration"
                continue
        else:
            return None
        return max(items, key=lambda kv: kv[1]["t"]) if items else None


# -- ComfyUI glue ---------------------------------------------------------------------------------
def _model_info(lm) -> dict:
    from . import host_models

    patcher = lm.model
    info = {"name": host_models.model_name(patcher), "label": host_models.model_label(patcher),
            "device": str(getattr(lm, "device", ""))}
    info["dtype"] = host_models.patcher_dtype(patcher)  # the Footprint Estimate matches runs on this
    try:
        info["bytes"] = int(lm.model_memory())
    except Exception:
        pass
    return info


def _make_recorder() -> Recorder:
    import torch

    from . import host_models
    from .recorder_meter import Meter

    device = host_models.compute_device()
    if device is None:  # as before: no recorder until ComfyUI can name its device (retried at the next run)
        raise RuntimeError("ComfyUI's compute device is unknown")
    return Recorder(Meter(torch, device), loaded=host_models.entries, model_info=_model_info)


def _on_run_start(prompt_id, dynprompt) -> None:
    if not settings()["enabled"]:
        _state["run_active"] = False
        return
    if _state["recorder"] is None:
        _state["recorder"] = _make_recorder()
    rec = _state["recorder"]
    if rec.run is not None:  # the previous run never reached task_done
        rec.end_run("unknown", [])
    server = _state["server"]
    _state["sid"] = getattr(server, "client_id", None)
    _state["warned"] = set()
    rec.begin_run(prompt_id, getattr(dynprompt, "original_prompt", None) or {})
    from comfy_execution.progress import add_progress_handler

    add_progress_handler(_handler_class()())


def _start_hook_in_place() -> bool:
    entry = _installed.get("reset_progress_state")
    return entry is not None and _in_chain(getattr(entry[0], entry[1], None), entry[3])


def _in_chain(fn, wrapper) -> bool:
    return wrapper is not None and health.in_chain(fn, (wrapper,))


def _on_run_end(status) -> None:
    rec = _state["recorder"]
    if settings()["enabled"] and "reset_progress_state" in _installed and not _start_hook_in_place():
        owner, attr, _orig, _wrapper = _installed.pop("reset_progress_state")
        log.warning("[GPU Garden] recorder: execution.reset_progress_state was replaced; hooking it again")
        _patch("reset_progress_state", owner, attr, _wrap_reset)
    if rec is None or rec.run is None:
        return
    run = rec.end_run(getattr(status, "status_str", None), getattr(status, "messages", None))
    if run is not None:
        writer().submit(_finalize, run, _state["sid"])
        f = _feature("recorder.hooks")
        if f is not None:
            f.ok()


def _guarded(fn, *args, feature="recorder.hooks"):
    try:
        fn(*args)
    except Exception as exc:
        log.exception("[GPU Garden] recorder: %s failed (the run is unaffected)", getattr(fn, "__name__", fn))
        f = _feature(feature)
        if f is not None:
            f.fail(exc)


_handler_cls = None


def _handler_class():
    global _handler_cls
    if _handler_cls is None:
        from comfy_execution.progress import ProgressHandler

        class RecorderHandler(ProgressHandler):
            def __init__(self):
                super().__init__(HANDLER_NAME)
                self.registry = None

            def set_registry(self, registry):
                self.registry = registry

            # ComfyUI calls these from its progress registry without a try (update_handler from every sampler
            # step): they take any arguments after node_id, so a host that passes one more never fails a run.
            def start_handler(self, node_id, *args, **kwargs):
                _guarded(_node_start, self.registry, node_id)

            def update_handler(self, node_id, *args, **kwargs):
                rec = _state["recorder"]
                if rec is not None:
                    rec.last_progress = time.monotonic()

            def finish_handler(self, node_id, *args, **kwargs):
                rec = _state["recorder"]
                if rec is not None:
                    _guarded(rec.node_finish, node_id)

        _handler_cls = RecorderHandler
    return _handler_cls


def _node_start(registry, node_id) -> None:
    rec = _state["recorder"]
    if rec is None or rec.run is None:
        return
    dp = getattr(registry, "dynprompt", None)
    class_type, display = None, None
    if dp is not None:
        try:
            class_type = dp.get_node(node_id).get("class_type")
            display = dp.get_display_node_id(node_id)
        except Exception:
            pass
    rec.node_start(node_id, class_type, display)


def _wrap_reset(original):
    def reset_progress_state(prompt_id, dynprompt, *args, **kwargs):
        result = original(prompt_id, dynprompt, *args, **kwargs)
        _guarded(_on_run_start, prompt_id, dynprompt)
        return result

    reset_progress_state.__wrapped__ = original
    return reset_progress_state


def _wrap_task_done(original):
    def task_done(item_id, history_result, status=None, *args, **kwargs):
        try:
            return original(item_id, history_result, status, *args, **kwargs)
        finally:
            _guarded(_on_run_end, status)

    task_done.__wrapped__ = original
    return task_done


def _patch(name, owner, attr, factory) -> None:
    current = getattr(owner, attr, None)
    if current is None or name in _installed:
        return
    wrapper = factory(current)
    setattr(owner, attr, wrapper)
    _installed[name] = (owner, attr, current, wrapper)


def install(server) -> None:
    import execution

    _state["server"] = server
    _patch("reset_progress_state", execution, "reset_progress_state", _wrap_reset)
    queue = getattr(server, "prompt_queue", None)
    if queue is not None:
        _patch("task_done", queue, "task_done", _wrap_task_done)


def uninstall() -> None:
    """Put back what we replaced, only where our wrapper is still the one installed."""
    for name in list(_installed):
        owner, attr, original, wrapper = _installed.pop(name)
        if getattr(owner, attr, None) is wrapper:
            cls_fn = getattr(type(owner), attr, None)
            if cls_fn is not None and getattr(original, "__func__", None) is cls_fn and attr in getattr(owner, "__dict__", {}):
                delattr(owner, attr)  # the instance attribute we added goes; the class's method shows again
            else:
                setattr(owner, attr, original)


def setup() -> None:
    from server import PromptServer

    server = getattr(PromptServer, "instance", None)
    if server is None:
        return
    _load_settings()
    install(server)

    def check(f):
        if not settings()["enabled"]:
            return f.uninstalled("recording is off (setting)")
        missing = [n for n in ("reset_progress_state", "task_done") if n not in _installed]
        if missing or not _start_hook_in_place():
            return f.uninstalled("hook missing: " + ", ".join(missing or ["reset_progress_state"]))
        return None if f.installed else f.ok()
    f = _feature("recorder.hooks", check=check)
    if f is not None and not f.as_dict().get("last_error"):
        f.ok()
    from .recorder_watchdog import start

    _state["watchdog"] = start(_state, settings)
