"""Flight recorder routes (also under /api/...):

- GET  /gpu_garden/runs?limit=N                      {"runs": [run, ...]} newest first (N: 1..200, default 50)
- GET  /gpu_garden/runs/{prompt_id}/report.md       "Copy memory report" as markdown
- GET  /gpu_garden/runs/{prompt_id}/report.json     the same as JSON
- GET  /gpu_garden/runs/{prompt_id}/compare         this run against the previous run of the same workflow
- GET  /gpu_garden/runs/measured?model=F&model=G&width=W&height=H[&frames=T&batch=B&dtype=D...]
                                                     measured beats modelled: the peak recorded runs of these
                                                     model files at this size reached here, or {"measured": null}
- GET  /gpu_garden/recorder/settings                {"enabled", "report_detail"}
- POST /gpu_garden/recorder/settings                {"enabled": bool, "report_detail": "redacted" | "full"}

Reports are redacted unless the setting says "full" (or the request asks ?detail=full). The store is read
off the event loop."""
import asyncio
import logging

from ..memory.recorder import compare as rcompare, measured_peak, report as rreport, store as rstore
from . import recorder

log = logging.getLogger("gpu_garden")


def _oom(run: dict) -> dict | None:
    rid = run.get("oom_report_id")
    if not rid:
        return None
    try:
        from . import oom_capture

        for rep in oom_capture.store().read():
            if rep.get("id") == rid:
                return rep
    except Exception:
        return None
    return None


def comparison(run: dict, runs: list[dict] | None = None) -> dict:
    runs = recorder.store().read() if runs is None else runs
    return rcompare.compare(rcompare.pick_previous(runs, run), run)


def build_report(prompt_id: str, detail: str | None = None) -> dict | None:
    runs = recorder.store().read()
    run = next((r for r in runs if r.get("prompt_id") == prompt_id), None)
    if run is None:
        return None
    detail = detail or recorder.settings().get("report_detail", "redacted")
    return rreport.build(run, comparison(run, runs), _oom(run), redact=detail != "full")


def setup() -> None:
    try:
        from aiohttp import web
        from server import PromptServer
    except ImportError:
        return
    server = getattr(PromptServer, "instance", None)
    if server is None:
        return
    routes = server.routes

    async def off_loop(fn, *args):
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    @routes.get("/gpu_garden/runs")
    async def runs(request):
        try:
            limit = max(1, min(rstore.MAX_RUNS, int(request.query.get("limit", 50))))
        except ValueError:
            return web.json_response({"error": "limit must be an integer"}, status=400)
        return web.json_response({"runs": await off_loop(recorder.store().read, limit)})

    def _detail(request):
        d = request.query.get("detail")
        return d if d in ("redacted", "full") else None

    @routes.get("/gpu_garden/runs/measured")
    async def measured(request):
        q = request.query
        try:
            latent = {k: int(q[k]) for k in ("width", "height") if k in q} or None
            if latent is not None:
                latent.update({"frames": int(q.get("frames", 1)), "batch": int(q.get("batch", 1))})
        except ValueError:
            return web.json_response({"error": "width, height, frames and batch must be integers"}, status=400)
        if latent is not None and len(latent) < 4:
            return web.json_response({"error": "give both width and height"}, status=400)
        models, dtypes = q.getall("model", []), q.getall("dtype", []) or None
        if not models:
            return web.json_response({"error": "give at least one model=<file name>"}, status=400)
        m = await off_loop(lambda: measured_peak(recorder.store().read(), models, latent, dtypes))
        return web.json_response({"measured": m})

    @routes.get("/gpu_garden/runs/{prompt_id}/report.json")
    async def report_json(request):
        rep = await off_loop(build_report, request.match_info["prompt_id"], _detail(request))
        if rep is None:
            return web.json_response({"error": "no recorded run with this prompt id"}, status=404)
        return web.json_response(rep)

    @routes.get("/gpu_garden/runs/{prompt_id}/report.md")
    async def report_md(request):
        rep = await off_loop(build_report, request.match_info["prompt_id"], _detail(request))
        if rep is None:
            return web.Response(text="no recorded run with this prompt id\n", status=404)
        return web.Response(text=rreport.markdown(rep), content_type="text/markdown", charset="utf-8")

    @routes.get("/gpu_garden/runs/{prompt_id}/compare")
    async def compare(request):
        def work(pid):
            all_runs = recorder.store().read()
            run = next((r for r in all_runs if r.get("prompt_id") == pid), None)
            return None if run is None else comparison(run, all_runs)

        res = await off_loop(work, request.match_info["prompt_id"])
        if res is None:
            return web.json_response({"error": "no recorded run with this prompt id"}, status=404)
        return web.json_response(res)

    @routes.get("/gpu_garden/recorder/settings")
    async def get_settings(request):
        return web.json_response(recorder.settings())

    @routes.post("/gpu_garden/recorder/settings")
    async def post_settings(request):
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise ValueError
        except Exception:
            return web.json_response({"error": 'expected JSON {"enabled": bool, "report_detail": "redacted"|"full"}'},
                                     status=400)
        try:
            recorder.check_settings(body)
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response(await off_loop(recorder.update_settings, body))
