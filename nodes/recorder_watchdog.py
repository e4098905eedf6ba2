"""The flight recorder's watchdog thread: every few seconds while a node runs, apply the rules of
memory/recorder/watchdog.py to the innermost running node; on a hit, push one "gpu_garden.recorder.watchdog"
event (a warning toast in the browser) with the memory snapshot and the hang guide, log it, and note it in
the run record. It only reads: it never interrupts or touches the run."""
import logging
import threading
import time

from ..memory.recorder import watchdog as rules

log = logging.getLogger("gpu_garden")

EVENT = "gpu_garden.recorder.watchdog"


def _snapshot():
    try:
        from . import budget_routes

        return budget_routes.current_snapshot()
    except Exception as exc:
        return {"devices": [], "notes": [f"snapshot unavailable: {type(exc).__name__}: {exc}"]}


def _durations(state) -> dict:
    if state.get("durations") is None:
        try:
            from .recorder import store

            state["durations"] = rules.expected_durations(store().read())
        except Exception:
            state["durations"] = {}
    return state["durations"]


def tick(state, cfg, now=None, guide=None) -> dict | None:
    """One look at the running node; returns the event it sent (or None)."""
    rec = state.get("recorder")
    run = getattr(rec, "run", None)
    inner = rec.innermost() if run is not None else None
    if inner is None:
        state["pinned_since"] = None
        return None
    node_id, w = inner
    now = time.perf_counter() if now is None else now
    mono = time.monotonic()
    try:
        free, total = rec.meter.device_free_total()
    except Exception:
        free = total = None
    pinned = rules.is_pinned(free, total, cfg)
    if not pinned:
        state["pinned_since"] = None
    elif state.get("pinned_since") is None:
        state["pinned_since"] = now
    key = (run["prompt_id"], node_id)
    if key in state["warned"]:
        return None
    expected = rules.expected_for(_durations(state), node_id, w["type"])
    since = now - (mono - rec.last_progress)  # last progress, on the perf_counter clock
    warning = rules.check(now, w["t"], since, expected, state.get("pinned_since"), cfg)
    if warning is None:
        return None
    msg = rules.message(w["type"], node_id, warning)
    entry = {"node": {"id": node_id, "type": w["type"], "display_id": w["display_id"]}, **warning, "message": msg,
             "free": free, "total": total, "sampled_at": time.time()}
    if not rec.add_warning(run, entry):  # noted before the slow snapshot, so a run that ends meanwhile keeps it
        return None
    state["warned"].add(key)
    event = {"prompt_id": run["prompt_id"], **entry, "snapshot": _snapshot(), "guide": guide or rules.guide()}
    log.warning("[GPU Garden] watchdog: %s", msg)
    server, sid = state.get("server"), state.get("sid")
    if server is not None and sid:  # only the page that queued the run: never broadcast one user's run to all
        server.send_sync(EVENT, event, sid)
    return event


def start(state, settings) -> threading.Thread:
    cfg = rules.config()
    guide = rules.guide()

    def loop():
        while True:
            time.sleep(cfg["interval_s"])
            try:
                if settings()["enabled"]:
                    tick(state, cfg, guide=guide)
            except Exception:
                log.exception("[GPU Garden] watchdog check failed")
                time.sleep(10)

    t = threading.Thread(target=loop, name="gpu-garden-watchdog", daemon=True)
    t.start()
    return t
