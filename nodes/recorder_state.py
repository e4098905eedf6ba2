"""The flight recorder's state outside the hot path: settings (server-side flag, saved in the user folder),
the run store and its writer thread, and what a finished run gets there (versions, devices, arguments,
allocator, Dynamic VRAM, OOM report id) before it is stored and pushed to the page that queued it."""
import json
import logging
import os
import sys

from ..memory.recorder import store as rstore, versions as rversions, watchdog as rwatch
from . import host_models

log = logging.getLogger("gpu_garden")

EVENT_RUN = "gpu_garden.recorder.run"
PACK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SETTINGS = {"enabled": True, "report_detail": "redacted"}


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


DETAILS = ("redacted", "full")


def check_settings(new) -> dict:
    """The valid settings in `new`; ValueError for a wrong value (a string "false" must not switch recording on)."""
    if not isinstance(new, dict):
        raise ValueError('expected JSON {"enabled": bool, "report_detail": "redacted"|"full"}')
    out = {}
    if "enabled" in new:
        if not isinstance(new["enabled"], bool):
            raise ValueError(f"enabled must be true or false, not {new['enabled']!r}"[:200])
        out["enabled"] = new["enabled"]
    if "report_detail" in new:
        if new["report_detail"] not in DETAILS:
            raise ValueError(f"report_detail must be \"redacted\" or \"full\", not {new['report_detail']!r}"[:200])
        out["report_detail"] = new["report_detail"]
    return out


def update_settings(new: dict) -> dict:
    """Apply and save the settings in `new` (ValueError, nothing changed, for a wrong value)."""
    _settings.update(check_settings(new))
    try:
        from .oom_store import atomic_write  # temp file + fsync + os.replace: a crash never leaves it torn

        os.makedirs(_user_dir(), exist_ok=True)
        atomic_write(os.path.join(_user_dir(), "recorder_settings.json"), json.dumps(_settings))
    except Exception:
        log.exception("[GPU Garden] recorder settings not saved")
    return settings()


def _load_settings():
    try:
        with open(os.path.join(_user_dir(), "recorder_settings.json"), encoding="utf-8") as f:
            saved = json.load(f)
        if isinstance(saved, dict):
            _settings.update(check_settings({k: saved[k] for k in DEFAULT_SETTINGS if k in saved}))
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


def _feature(name, check=None):
    """The pack's health registry entry (nodes/health.py), or None where it is not built in."""
    try:
        from . import health
        return health.register(name, check=check)
    except Exception:
        return None


def _devices(meter) -> list:
    out = []
    if meter.key != "cpu":  # a total the host cannot say is None: the run still names its device
        out.append({"device": meter.key, "name": host_models.device_name(meter.device),
                    "total": host_models.device_total(meter.device), "backend": meter.kind})
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


def dynamic_vram() -> bool | None:
    return host_models.dynamic_vram()  # None when the host's flag is gone: the report says "unknown"


def _oom_report_id(prompt_id):
    try:
        from . import oom_capture

        oom_capture.flush(2.0)  # the capture stores on its own writer thread (this runs on the recorder's)
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
    try:
        run["comfy_compiler"] = host_models.comfy_compiler()
    except Exception:
        run["comfy_compiler"] = None
    if run["status"] == "error":
        run["oom_report_id"] = _oom_report_id(run["prompt_id"])
    try:
        store().add(run)
    except Exception as exc:
        f = _feature("recorder.store")
        if f is not None:
            f.fail(exc)
        raise
    f = _feature("recorder.store")
    if f is not None:
        f.ok()
    _state["durations"] = rwatch.expected_durations(store().read())
    server = _state["server"]
    if server is not None and sid is not None:
        server.send_sync(EVENT_RUN, run, sid)
