"""POST /gpu_garden/estimate/workflow: the whole-workflow estimate (memory/estimate/workflow.py) for the graph
open in the browser, with the files found through ComfyUI's folder_paths (every models folder it knows, incl.
extra_model_paths). Body: {"workflow": <UI or API format>, "vram_gb": optional}. Answers what
extra.gpu_garden.memory would carry (peak, phases, per-card-tier verdicts) plus the verdict, the outcome (what
ComfyUI does about it: runs with offload, incomplete when a file is not found, ...) and the assumptions; the header
reads run off the event loop."""
import asyncio
import logging

from ..memory.errors import UserError
from ..memory.units import GiB
from . import health

log = logging.getLogger("gpu_garden")
FEATURE = health.register("estimate.workflow_route")
MAX_BODY = 32 << 20


def resolve(folders, name):
    """folder_paths.get_full_path over the loader's folders (None when the file is not there)."""
    import folder_paths

    for f in folders:
        try:
            p = folder_paths.get_full_path(f, name)
        except Exception:  # a folder name this ComfyUI does not know
            p = None
        if p:
            return p
    return None


def estimate_graph(body: dict) -> dict:
    from ..memory.estimate import formula, verdict, workflow
    from .estimate import comfy_reserve, dynamic_vram_mode

    wf = body.get("workflow") if isinstance(body, dict) else None
    if not isinstance(wf, dict):
        raise UserError('expected JSON {"workflow": {...}, "vram_gb": optional number}')
    vram = body.get("vram_gb")
    if vram is not None and (isinstance(vram, bool) or not isinstance(vram, (int, float)) or not 0 <= vram <= 4096):
        raise UserError(f"vram_gb must be a number of GiB from 0 to 4096 (0 or absent: no budget), not {vram!r}"[:200])
    budget = int(vram * GiB) if vram else None
    pol = {"reserve": comfy_reserve(), "dynamic_vram": dynamic_vram_mode(), "host_ram": verdict.host_available_ram(),
           "budget": budget}
    est = workflow.estimate_workflow(wf, None, policy=pol, resolve=resolve)
    formula.judge(est, budget)
    out = workflow.metadata(est)
    out.update(verdict=est["verdict"], outcome=est["outcome"], budget=est["budget"], assumptions=est["assumptions"],
               missing=est["workflow"]["missing"], host_ram=est["host_ram"], dynamic_vram=est["dynamic_vram"])
    return out


def setup():
    try:
        from aiohttp import web
        from server import PromptServer
    except ImportError:
        return
    server = getattr(PromptServer, "instance", None)
    if server is None:
        return

    @server.routes.post("/gpu_garden/estimate/workflow")
    async def post_workflow(request):
        if (request.content_length or 0) > MAX_BODY:
            return web.json_response({"error": "workflow too large"}, status=413)
        try:
            body = await request.json()
        except Exception:
            return web.json_response({"error": 'expected JSON {"workflow": {...}}'}, status=400)
        try:
            out = await asyncio.get_running_loop().run_in_executor(None, estimate_graph, body)
        except UserError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        except Exception as exc:  # never a 500 with a traceback for a graph we could not read
            log.warning("[GPU Garden] workflow estimate failed: %s: %s", type(exc).__name__, exc)
            FEATURE.fail(exc)
            return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=400)
        FEATURE.ok()
        return web.json_response(out)

    FEATURE.ok()  # the route is in place; a graph it could not read marks it failed until the next success
