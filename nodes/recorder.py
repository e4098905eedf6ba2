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
import os
import sys
import threading
import time

from ..memory.recorder import record, store as rstore, versions as rversions, watchdog as rwatch

log = logging.getLogger("gpu_garden")

EVENT_RUN = "gpu_garden.recorder.run"
EVENT_WATCHDOG = "gpu_garden.recorder.watchdog"
HANDLER_NAME = "gpu_garden_recorder"
PACK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SETTINGS = {"enabled": True, "report_detail": "redacted"}

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
        self.run, self.open = None, {}
        return run

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
        if not self.open:
            return None
        nid = max(self.open, key=lambda k: self.open[k]["t"])
        return nid, self.open[nid]


# -- settings -------------------------------------------------------------------------------------
_settings = dict(DEFAULT_SETTINGS)
_state = {"recorder": None, "store": None, "writer": None, "versions": None, "devices": None, "sid": None,
          "durations": None, "server": None, "warned": set(), "watchdog": None}


def _user_dir() -> str:
    import folder_paths

    return os.path.join(folder_paths.get_user_directory(), "gpu_garden")


def settings() -> dict:
    out = dict(_settings)
    if os.environ.get("GPU_GARDEN_RECORDER", "").strip().lower() in ("0", "off", "false", "no"):
        out["enabled"], out["forced_off"] = False, "GPU_GARDEN_RECORDER"
    return out


def update_settings(new: dict) -> dict:
    import json

    if "enabled" in new:
        _settings["enabled"] = bool(new["enabled"])
    if new.get("report_detail") in ("redacted", "full"):
        _settings["report_detail"] = new["report_detail"]
    try:
        os.makedirs(_user_dir(), exist_ok=True)
        with open(os.path.join(_user_dir(), "recorder_settings.json"), "w", encoding="utf-8") as f:
            json.dump(_settings, f)
    except Exception:
        log.exception("[GPU Garden] recorder settings not saved")
    return settings()


def _load_settings():
    import json

    try:
        with open(os.path.join(_user_dir(), "recorder_settings.json"), encoding="utf-8") as f:
            saved = json.load(f)
        if isinstance(saved, dict):
            _settings.update({k: saved[k] for k in DEFAULT_SETTINGS if k in saved})
    except FileNotFoundError:
        pass
    except Exception as exc:
        log.warning("[GPU Garden] recorder settings unreadable (%s); using defaults", exc)


def store() -> rstore.RunStore:
    if _state["store"] is None:
        _state["store"] = rstore.RunStore(os.path.join(_user_dir(), "runs.jsonl"))
    return _state["store"]


def writer() -> rstore.Writer:
    if _state["writer"] is None:
        _state["writer"] = rstore.Writer()
    return _state["writer"]


# -- ComfyUI glue ---------------------------------------------------------------------------------
def _model_info(lm) -> dict:
    from . import host_models

    patcher = lm.model
    info = {"name": host_models.model_name(patcher), "device": str(getattr(lm, "device", ""))}
    try:
        dtype = patcher.model_dtype() or getattr(patcher.model, "dtype", None)
    except Exception:
        dtype = None
    info["dtype"] = str(dtype).replace("torch.", "") if dtype is not None else None
    try:
        info["bytes"] = int(lm.model_memory())
    except Exception:
        pass
    return info


def _make_recorder() -> Recorder:
    import comfy.model_management as mm
    import torch

    from .recorder_meter import Meter

    meter = Meter(torch, mm.get_torch_device())
    return Recorder(meter, loaded=lambda: [lm for lm in list(mm.current_loaded_models) if lm.model is not None],
                    model_info=_model_info)


def _devices(meter) -> list:
    out = []
    try:
        import comfy.model_management as mm

        if meter.key != "cpu":
            out.append({"device": meter.key, "name": mm.get_torch_device_name(meter.device),
                        "total": int(mm.get_total_memory(meter.device)), "backend": meter.kind})
    except Exception:
        log.debug("[GPU Garden] recorder: device name unavailable", exc_info=True)
    out.append({"device": "cpu", "name": "host RAM (process RSS)", "total": int(meter.psutil.virtual_memory().total),
                "backend": "cpu"})
    return out


def _versions() -> dict:
    if _state["versions"] is None:
        fp = sys.modules.get("folder_paths")
        comfy_dir = os.path.dirname(os.path.abspath(fp.__file__)) if fp else None
        try:
            dirs = fp.get_folder_paths("custom_nodes") if fp else []
        except Exception:
            dirs = []
        try:
            from comfy.cli_args import args as cli
            root = getattr(cli, "front_end_root", None)
        except Exception:
            root = None
        _state["versions"] = rversions.collect(comfy_dir, dirs, PACK_DIR, root)
    return _state["versions"]


def dynamic_vram() -> bool:
    from .unload import dynamic_vram_enabled

    return dynamic_vram_enabled()


def _oom_report_id(prompt_id):
    try:
        from . import oom_capture

        for rep in oom_capture.store().read(10):
            if rep.get("prompt_id") == prompt_id:
                return rep.get("id")
    except Exception:
        log.debug("[GPU Garden] recorder: OOM store unreadable", exc_info=True)
    return None


def _finalize(run: dict, sid) -> None:
    """Writer thread: the slow parts of a finished run (versions, devices, OOM id), then store and push."""
    rec = _state["recorder"]
    run["versions"] = _versions()
    if _state["devices"] is None and rec is not None:
        _state["devices"] = _devices(rec.meter)
    run["devices"] = _state["devices"] or []
    run["args"] = list(sys.argv[1:])
    run["allocator"] = rversions.allocator()
    try:
        run["dynamic_vram"] = dynamic_vram()
    except Exception:
        run["dynamic_vram"] = None
    if run["status"] == "error":
        run["oom_report_id"] = _oom_report_id(run["prompt_id"])
    store().add(run)
    _state["durations"] = rwatch.expected_durations(store().read())
    server = _state["server"]
    if server is not None and sid is not None:
        server.send_sync(EVENT_RUN, run, sid)


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


def _on_run_end(status) -> None:
    rec = _state["recorder"]
    if rec is None or rec.run is None:
        return
    run = rec.end_run(getattr(status, "status_str", None), getattr(status, "messages", None))
    if run is not None:
        writer().submit(_finalize, run, _state["sid"])


def _guarded(fn, *args):
    try:
        fn(*args)
    except Exception:
        log.exception("[GPU Garden] recorder: %s failed (the run is unaffected)", getattr(fn, "__name__", fn))


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

            def start_handler(self, node_id, state, prompt_id):
                _guarded(_node_start, self.registry, node_id)

            def update_handler(self, node_id, value, max_value, state, prompt_id, image=None):
                rec = _state["recorder"]
                if rec is not None:
                    rec.last_progress = time.monotonic()

            def finish_handler(self, node_id, state, prompt_id):
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
    from .recorder_watchdog import start

    _state["watchdog"] = start(_state, settings)
