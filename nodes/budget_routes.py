"""Live budget for the browser: GET /gpu_garden/budget (also /api/gpu_garden/budget) returns a snapshot
with ComfyUI's loaded models; while at least one browser socket is connected, the websocket event
"gpu_garden.budget" carries a fresh snapshot about once a second (nothing is sampled when none is).
Browsers are the sockets that opened with the frontend's feature_flags message or asked for a rate;
API scripts on the websocket get none of this traffic.

Rate: each page may ask for a slower or faster push with POST /gpu_garden/budget/interval
{"client_id", "ms"} (client_id: a websocket connected now, else 404); the server pushes at the fastest rate any connected page asked for, 1 s for a page
that asked for nothing, clamped to [MIN_MS, MAX_MS]. Pages also throttle their own rendering.
"""
import asyncio
import logging
import time

from ..memory.budget import probe
from . import health

log = logging.getLogger("gpu_garden")

EVENT = "gpu_garden.budget"
DEFAULT_MS, MIN_MS, MAX_MS = 1000, 250, 60000
ERROR_PAUSE_S = 5
FRESH_S = 1.5  # recent_snapshot: how old a snapshot may be to plan with (see there)
FEATURE = health.register("budget.push", check=lambda f: _check(f))

_state = {"task": None, "intervals": {}, "pushed": 0, "last": None}


def loaded_models() -> list:
    from . import host_models

    return host_models.loaded_models()


def current_snapshot() -> dict:
    try:
        models, note = loaded_models(), None
    except Exception as exc:  # a host whose model management changed: the memory numbers still matter
        models, note = [], f"loaded models unavailable: {type(exc).__name__}: {exc}"
    snap = probe.snapshot(models)
    if note:
        snap["notes"].append(note)
    return snap


def recent_snapshot(max_age_s: float = FRESH_S) -> dict:
    """The push loop's (or GET /gpu_garden/budget's) last snapshot when under max_age_s old, else a fresh one;
    read only. Fit to Card's automatic mode asks at every sampler start and VAE decode, on ComfyUI's worker: with a
    page open the push loop has one from the last second, so the worker reads no NVML then. Exact enough: a
    budget is the card's total less other processes' use (this process's own use is planned, not measured),
    and neither moves within a second or two; a free-memory read (torch.cuda.mem_get_info) would not do, as
    it counts this process's cache and models as taken."""
    last = _state["last"]
    if last is not None and 0 <= time.monotonic() - last[0] <= max_age_s:
        return last[1]
    return current_snapshot()


def browser_sids(server) -> list:
    meta = getattr(server, "sockets_metadata", None)
    sids = list(server.sockets)
    if meta is None:  # an older host: every socket
        return sids
    return [sid for sid in sids if (meta.get(sid) or {}).get("feature_flags") or sid in _state["intervals"]]


def push_interval_ms(connected) -> int:
    asked = _state["intervals"]
    values = [asked.get(sid, DEFAULT_MS) for sid in connected]
    return min(values) if values else DEFAULT_MS


async def _sample(loop):
    # off the event loop: NVML and the driver may block for a moment on a busy or recovering GPU
    t = time.monotonic()
    snap = await loop.run_in_executor(None, current_snapshot)
    _state["last"] = (t, snap)  # dated when sampling began: never younger than it is
    return snap


async def push_once(server, loop) -> bool:
    """One round: forget sockets that left, wait the interval, push one snapshot to every browser."""
    for sid in list(_state["intervals"]):
        if sid not in server.sockets:
            _state["intervals"].pop(sid, None)
    await asyncio.sleep(push_interval_ms(browser_sids(server)) / 1000)
    targets = browser_sids(server)
    if not targets:
        return False
    snap = await _sample(loop)
    for sid in targets:
        await server.send_json(EVENT, snap, sid)
    _state["pushed"] += 1
    return True


async def push_loop(server):
    """Runs for the server's life: an error in any round (sampling, a socket, a changed host) is logged,
    shown on /gpu_garden/health, and the loop goes on after a pause."""
    loop = asyncio.get_running_loop()
    FEATURE.ok()
    while True:
        try:
            if await push_once(server, loop):
                FEATURE.ok()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            FEATURE.fail(exc)
            log.exception("[GPU Garden] budget push failed; retrying in %ss", ERROR_PAUSE_S)
            await asyncio.sleep(ERROR_PAUSE_S)


def _restart_if_died(task) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:  # only a BaseException escapes push_loop; start over rather than stop pushing for good
        FEATURE.fail(exc)
        _state["task"] = None
        server = _state.get("server")
        if server is not None:
            server.loop.call_later(ERROR_PAUSE_S, _start, server)


def _start(server):
    if _state["task"] is None or _state["task"].done():
        _state["server"] = server
        _state["task"] = server.loop.create_task(push_loop(server))
        _state["task"].add_done_callback(_restart_if_died)


def _check(feature) -> None:
    task = _state["task"]
    if task is None or task.done():
        feature.uninstalled("budget push loop not running")


def parse_interval(body, connected) -> tuple[str | None, int]:
    """(client_id, ms) from the interval POST; ValueError with the reason for bad input, LookupError for an
    id with no open socket. Only a socket connected now may set its rate, so the table never grows past
    the open sockets. An empty client_id (a page whose socket has not said its id yet) stores nothing."""
    if not isinstance(body, dict):
        raise ValueError('expected JSON {"client_id": str, "ms": int}')
    client_id, ms = body.get("client_id") or None, body.get("ms")
    if client_id is not None and (not isinstance(client_id, str) or len(client_id) > 128):
        raise ValueError("client_id must be the id of this page's websocket")
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms != ms:
        raise ValueError("ms must be a number of milliseconds")
    if client_id is not None and client_id not in connected:
        raise LookupError(f"no websocket connected with client_id {client_id!r}")
    return client_id, int(max(MIN_MS, min(MAX_MS, ms)))


def setup():
    try:
        from aiohttp import web
        from server import PromptServer
    except ImportError:
        return
    server = getattr(PromptServer, "instance", None)
    if server is None:  # imported outside a running ComfyUI (tools, benchmarks)
        return
    routes = server.routes

    @routes.get("/gpu_garden/budget")
    async def get_budget(request):
        return web.json_response(await _sample(asyncio.get_running_loop()))

    @routes.post("/gpu_garden/budget/interval")
    async def set_interval(request):
        try:
            client_id, ms = parse_interval(await request.json(), server.sockets)
        except LookupError as exc:
            return web.json_response({"error": str(exc)}, status=404)
        except ValueError as exc:  # also a body that is not JSON
            return web.json_response({"error": str(exc) or 'expected JSON {"client_id": str, "ms": int}'}, status=400)
        if client_id is not None:
            _state["intervals"][client_id] = ms
        return web.json_response({"ms": ms, "push_ms": push_interval_ms(browser_sids(server)), "event": EVENT})

    # setup() runs on the loop thread while ComfyUI loads packs; schedule thread-safely regardless.
    server.loop.call_soon_threadsafe(_start, server)

