"""Live budget for the browser: GET /gpu_garden/budget (also /api/gpu_garden/budget) returns a snapshot
with ComfyUI's loaded models; while at least one browser socket is connected, the websocket event
"gpu_garden.budget" carries a fresh snapshot about once a second (nothing is sampled when none is).
Browsers are the sockets that opened with the frontend's feature_flags message or asked for a rate;
API scripts on the websocket get none of this traffic.

Rate: each page may ask for a slower or faster push with POST /gpu_garden/budget/interval
{"client_id", "ms"}; the server pushes at the fastest rate any connected page asked for, 1 s for a page
that asked for nothing, clamped to [MIN_MS, MAX_MS]. Pages also throttle their own rendering.
"""
import asyncio
import logging

from ..memory.budget import probe

log = logging.getLogger("gpu_garden")

EVENT = "gpu_garden.budget"
DEFAULT_MS, MIN_MS, MAX_MS = 1000, 250, 60000

_state = {"task": None, "intervals": {}, "pushed": 0}


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
    return await loop.run_in_executor(None, current_snapshot)


async def push_loop(server):
    loop = asyncio.get_running_loop()
    while True:
        for sid in list(_state["intervals"]):
            if sid not in server.sockets:
                _state["intervals"].pop(sid, None)
        await asyncio.sleep(push_interval_ms(browser_sids(server)) / 1000)
        targets = browser_sids(server)
        if not targets:
            continue
        try:
            snap = await _sample(loop)
            for sid in targets:
                await server.send_json(EVENT, snap, sid)
            _state["pushed"] += 1
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("[GPU Garden] budget push failed")
            await asyncio.sleep(5)


def _start(server):
    if _state["task"] is None or _state["task"].done():
        _state["task"] = server.loop.create_task(push_loop(server))


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
            body = await request.json()
            ms = int(body["ms"])
            client_id = str(body.get("client_id") or "")
        except Exception:
            return web.json_response({"error": 'expected JSON {"client_id": str, "ms": int}'}, status=400)
        ms = max(MIN_MS, min(MAX_MS, ms))
        if client_id:
            _state["intervals"][client_id] = ms
        return web.json_response({"ms": ms, "push_ms": push_interval_ms(browser_sids(server)), "event": EVENT})

    # setup() runs on the loop thread while ComfyUI loads packs; schedule thread-safely regardless.
    server.loop.call_soon_threadsafe(_start, server)

