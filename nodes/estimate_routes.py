"""POST /gpu_garden/estimate/workflow: the whole-workflow estimate (memory/estimate/workflow.py) for the graph
open in the browser, with the files found through ComfyUI's folder_paths (every models folder it knows, incl.
extra_model_paths). Body: {"workflow": <UI or API format>, "vram_gb": optional, "width", "height", "frames", "batch":
optional, the size when the graph has no latent node (the Footprint Estimate node's own widgets, as the node uses them
when no latent is connected; a latent node in the graph wins)}. Judged on the device this ComfyUI computes on, as the
node's run is (nodes/estimate.host_policy: --cpu is fp32 in host RAM). Answers what extra.gpu_garden.memory would
carry (peak, phases, per-card-tier verdicts) plus the verdict, the outcome (what ComfyUI does about it: runs with
offload, incomplete when a file is not found, ...), the device, where the size came from and the assumptions; the
header reads run off the event loop."""
import asyncio
import logging
import os

from ..memory.errors import UserError
from ..memory.units import GiB
from . import health

log = logging.getLogger("gpu_garden")
FEATURE = health.register("estimate.workflow_route")
MAX_BODY = 32 << 20


def resolve(folders, name):
    """folder_paths.get_full_path over the loader's folders (None when the file is not there). A dangling symlink,
    which ComfyUI lists in the loader's dropdown and get_full_path skips, raises model_files.BrokenLink, a file or
    folder this process may not read (get_full_path skips it too, or open would be denied) model_files.NotReadable: the
    estimate reports that file and estimates the others."""
    import folder_paths

    from ..memory.estimate.model_files import unusable

    denied = False
    for f in folders:
        try:
            p = folder_paths.get_full_path(f, name)
        except Exception:  # a folder name this ComfyUI does not know
            p = None
        if p and os.access(p, os.R_OK):
            return p
        denied = denied or bool(p)
    bases = []
    for f in folders:
        try:
            bases += folder_paths.get_folder_paths(f)
        except Exception:
            pass
    unusable(bases, name, denied)
    return None


def image_reader():
    """The size of an image a LoadImage node names, read from its header in ComfyUI's input folder (output / temp for a
    "name [output]" / "[temp]" name, folder_paths.annotated_filepath): never a file outside those folders. None (the
    image's size not known, said) where this folder_paths has no input folder."""
    from ..memory.estimate.input_image import folder_reader

    try:
        import folder_paths

        return folder_reader(folder_paths.get_input_directory(), folder_paths.get_output_directory(),
                             folder_paths.get_temp_directory())
    except (ImportError, AttributeError, TypeError, OSError):
        return None


def as_shown(text: str) -> str:
    """text with ComfyUI's model folders (each folder_paths.get_folder_paths of the folders the loaders read, then its
    models_dir) taken off the file paths in it: a file is named as the loader's dropdown shows it, relative to its models
    folder, never by the user's own folders (a header error names the file it read by its full path)."""
    try:
        import folder_paths
    except ImportError:
        return text
    from ..memory.estimate.model_files import subfolders

    bases = set()
    for f in subfolders():
        try:
            bases.update(str(b) for b in folder_paths.get_folder_paths(f))
        except Exception:  # a folder name this ComfyUI does not know
            pass
    top = getattr(folder_paths, "models_dir", None)
    for b in sorted(bases, key=len, reverse=True) + ([str(top)] if top else []):
        if b.rstrip(os.sep):  # a folder at the root would take every separator
            text = text.replace(b.rstrip(os.sep) + os.sep, "")
    return text


def answer(body) -> tuple:
    """(the JSON answer, its HTTP status) for a parsed body: the estimate, or {"error": ...} with the files in it named
    as ComfyUI shows them (as_shown). Never a 500 with a traceback for a graph it could not read."""
    try:
        return estimate_graph(body), 200
    except UserError as exc:
        return {"error": as_shown(str(exc))}, 400
    except Exception as exc:
        log.warning("[GPU Garden] workflow estimate failed: %s: %s", type(exc).__name__, exc)
        FEATURE.fail(exc)
        return {"error": as_shown(f"{type(exc).__name__}: {exc}")}, 400


NO_SIZE = ("set width and height on the Footprint Estimate node (its size when no latent is connected), or add an "
           "EmptyLatentImage node")


def body_size(body: dict):
    """(width, height, frames, batch) from the body, or None when it gives no width and height; a clear error for a
    value out of the node's ranges (its widgets' own, nodes/estimate.SIZE_RANGES) or one of width / height alone."""
    from .estimate import SIZE_RANGES

    got = {}
    for k, (lo, hi) in SIZE_RANGES.items():
        v = body.get(k)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or not lo <= v <= hi or v != int(v):
            raise UserError(f"{k} must be a whole number from {lo} to {hi}, not {v!r}"[:200])
        got[k] = int(v)
    if ("width" in got) != ("height" in got):
        raise UserError("width and height go together (the Footprint Estimate node's size), or give neither")
    return (got["width"], got["height"], got.get("frames", 1), got.get("batch", 1)) if "width" in got else None


def _size_from(wf: dict) -> str:
    """Where the estimated size came from, for the face: "graph" (a latent node, or the image the graph encodes at a
    size it sets), "body" (the Footprint Estimate node's own size: the graph sets none), "assumed" (the family's native
    size, or a square of a known area: size_assumed says which)."""
    if wf["size_given_used"]:
        return "body"
    return "assumed" if wf["size_assumed"] else "graph"


def estimate_graph(body: dict) -> dict:
    from ..memory.estimate import formula, verdict, workflow
    from .estimate import host_policy

    wf = body.get("workflow") if isinstance(body, dict) else None
    if not isinstance(wf, dict):
        raise UserError('expected JSON {"workflow": {...}, "vram_gb": optional number}')
    vram = body.get("vram_gb")
    if vram is not None and (isinstance(vram, bool) or not isinstance(vram, (int, float)) or not 0 <= vram <= 4096):
        raise UserError(f"vram_gb must be a number of GiB from 0 to 4096 (0 or absent: no budget), not {vram!r}"[:200])
    size = body_size(body)
    budget = int(vram * GiB) if vram else None  # on a --cpu host vram_gb plans for a card, as the node's does
    pol = dict(host_policy(), host_ram=verdict.host_available_ram(), budget=budget)
    est = workflow.estimate_workflow(wf, None, policy=pol, resolve=resolve, default_size=size, no_size=NO_SIZE,
                                     read_image=image_reader())
    formula.judge(est, budget)
    if budget and pol["device"] == "cpu":  # as the node does: the card is judged with this host's fp32 figures
        est["assumptions"].append("vram_gb on a --cpu host: the card is judged with the fp32 weights this host runs; "
                                  "on a card ComfyUI would load them in 16 bits, about half the weights")
    card = None  # a card tier is a GPU: on a --cpu host its tiers are judged as ComfyUI runs on one (aud66a F8: the
    # CPU's fp32 weights made an 8 GB card "runs with offload" where the CLI says fits)
    if pol["device"] == "cpu":
        card = workflow.estimate_workflow(wf, None, policy=dict(pol, device="cuda", budget=None), resolve=resolve,
                                          default_size=size, no_size=NO_SIZE, read_image=image_reader())
        formula.judge(card, None)
        est["assumptions"].append("card tiers on a --cpu host: judged as ComfyUI runs on a GPU (16-bit weights, "
                                  "model_management.unet_dtype), not with this host's fp32 figures")
    out = workflow.metadata(est, tiers_of=card)
    out.update(family_name=est["family_name"], variant=est.get("variant") or "",  # the face names it as the node's run does
               unknown=bool(est.get("unknown")),  # generic figures: the face says so, as the node's and the CLI's do
               verdict=est["verdict"], verdict_caveat=est.get("verdict_caveat"), outcome=est["outcome"], budget=est["budget"], assumptions=est["assumptions"],
               missing=est["workflow"]["missing"], host_ram=est["host_ram"], dynamic_vram=est["dynamic_vram"],
               missing_where=est["workflow"]["missing_where"],  # each one's why: "not found", "a broken link (...)"
               device=pol["device"], size_from=_size_from(est["workflow"]), size_assumed=est["workflow"]["size_assumed"],
               size_uncertain=est["workflow"]["size_uncertain"],  # nodes the estimate does not size (latent_custom.py)
               stage1=dict(zip(("width", "height"), est["workflow"]["stage1"])) if est["workflow"]["stage1"] else None,
               vae=est.get("vae"),  # per sample and the decode batch ComfyUI would pick on this budget (free memory)
               side_models=est["workflow"]["side_models"])  # a ControlNet, model patch, ...: its phase and weights
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
        out, status = await asyncio.get_running_loop().run_in_executor(None, answer, body)
        if status == 200:
            FEATURE.ok()
        return web.json_response(out, status=status)

    FEATURE.ok()  # the route is in place; a graph it could not read marks it failed until the next success
