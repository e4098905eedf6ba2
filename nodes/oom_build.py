"""One OOM report, built on ComfyUI's worker thread from what the failing node left behind: is it an OOM,
what memory looked like, which node and latent, and what the triage core makes of it.

Bounded work on any message: recognition reads only the first and last RECOGNITION_CHARS/2 characters
of the exception's text and the report keeps at most oom_store.MAX_MESSAGE_CHARS of it, so a node that
fails with megabytes of text ends as fast as any other failure. The hooks live in oom_capture.py."""
import logging
import os
import sys
import time
import uuid

from . import host_models, oom_report
from .oom_store import bounded_text
from ..memory.triage.comfy_launch import host_install

log = logging.getLogger("gpu_garden")

RECOGNITION_CHARS = 8 * 1024  # head + tail given to is_oom_error and triage_text

_core = None  # the triage module once imported; False if it failed to import
_core_missing = None
# a node raised, so its report is a failure even where triage reads the message alone as an event a run goes on from
RECOVERED_NOTE = ("the node raised, although triage reads its message alone as an event a run can go on from "
                  "(a retry or fallback message): the cause below is what that event points at")
_session_ooms: list[dict] = []  # this process's earlier OOMs (raw numbers), for the triage core's leak check


def triage_core():
    """The triage core, imported at the first failure rather than at ComfyUI's start (its pattern tables
    cost tens of ms to compile). Capture still records and serves reports without it."""
    global _core, _core_missing
    if _core is None:
        try:
            from ..memory.triage import engine as core
        except Exception as exc:  # noqa: BLE001 - a broken core must not stop the capture
            _core, _core_missing = False, f"{type(exc).__name__}: {exc}"
        else:
            _core = core
    return _core or None


# -- recognising an OOM ----------------------------------------------------------------------------
def short_type_name(exc_type_name: str) -> str:
    return exc_type_name[len("builtins."):] if exc_type_name.startswith("builtins.") else exc_type_name


def full_type_name(exc: BaseException) -> str:
    t = type(exc)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def message_of(exc: BaseException) -> str:
    """str(exc), or a placeholder when the exception's own __str__ fails."""
    try:
        return str(exc)
    except Exception as e:  # noqa: BLE001
        return f"<str() of {type(exc).__name__} failed: {type(e).__name__}>"


_FALLBACK_MARKERS = ("out of memory", "can't allocate memory", "not enough memory", "alloc_failed",
                     "would exceed allowed memory", "failed to allocate")


def is_oom(exc: BaseException, message: str | None = None) -> bool:
    name = full_type_name(exc)
    text = bounded_text(message_of(exc) if message is None else message, RECOGNITION_CHARS)
    core = triage_core()
    if core is not None and hasattr(core, "is_oom_error"):
        try:
            return bool(core.is_oom_error(name, text))
        except Exception:
            log.exception("[GPU Garden] triage.is_oom_error failed")
    low = text.lower()
    return name.endswith("OutOfMemoryError") or name == "MemoryError" or any(m in low for m in _FALLBACK_MARKERS)


# -- what the host knows at the moment of failure ---------------------------------------------------
def cuda_malloc_async(backend: str) -> bool:
    """ComfyUI turns cudaMallocAsync on through the env var before torch starts (cuda_malloc.py), even
    under --cpu; it matters only where CUDA allocates, and torch knows for sure once CUDA is up."""
    if backend != "cuda":
        return False
    try:
        import torch
        if torch.cuda.is_initialized():
            return torch.cuda.get_allocator_backend() == "cudaMallocAsync"
    except Exception:
        pass
    conf = os.environ.get("PYTORCH_ALLOC_CONF", "") + "," + os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return "cudaMallocAsync" in conf


def _loaded_models() -> list:
    try:
        return host_models.loaded_models()
    except Exception as exc:
        log.debug("[GPU Garden] loaded models unavailable: %s", exc)
        return []


def _model_family() -> str | None:
    """The family of the model in use (the report's label; triage does not read it)."""
    try:
        best = None
        for lm in host_models.entries():
            cfg = getattr(getattr(lm.model, "model", None), "model_config", None)
            if cfg is not None and (best is None or getattr(lm, "currently_used", False)):
                best = type(cfg).__name__
        return oom_report.family_of(best)
    except Exception:
        return None


def _display_name(class_type) -> str | None:
    try:
        import nodes
        return nodes.NODE_DISPLAY_NAME_MAPPINGS.get(class_type)
    except Exception:
        return None


def _snapshot(models: list) -> tuple[dict | None, str | None]:
    try:
        from ..memory.budget import probe
    except Exception as exc:
        return None, f"budget probe unavailable ({type(exc).__name__})"
    try:
        return probe.snapshot(models=models), None
    except Exception as exc:
        log.exception("[GPU Garden] probe.snapshot failed during OOM capture")
        return None, f"budget probe failed: {type(exc).__name__}: {exc}"


def capture_state(when: str) -> dict:
    models = _loaded_models()
    snap, note = _snapshot(models)
    return {"when": when, "sampled_at": time.time(), "loaded_models": models, "snapshot": snap,
            "snapshot_note": note, "model_family": _model_family()}


def _latent(node_ctx: dict, family: str | None = None) -> dict | None:
    """The LATENT the failing node received (its real shape), else the size set upstream in the prompt; `frames`
    is latent frames either way (oom_report), `family` (the running model's) where the latent does not say."""
    dynprompt, caches, node_id = node_ctx.get("dynprompt"), node_ctx.get("caches"), node_ctx.get("node_id")
    try:
        inputs = dynprompt.get_node(node_id).get("inputs", {})
        for value in inputs.values():
            if not (isinstance(value, list) and len(value) == 2):
                continue
            entry = caches.outputs.get(value[0])
            outputs = getattr(entry, "outputs", None)
            if not outputs or value[1] >= len(outputs):
                continue
            for item in outputs[value[1]] or []:
                samples = item.get("samples") if isinstance(item, dict) else None
                if samples is not None and hasattr(samples, "shape"):
                    lat = oom_report.latent_from_samples(list(samples.shape), family)
                    if lat:
                        return lat
    except Exception:
        pass
    try:
        return oom_report.latent_from_prompt(dynprompt.original_prompt, node_id, family)
    except Exception:
        return None


# -- the report ---------------------------------------------------------------------------------
def log_excerpt(exc_type: str, message: str) -> str:
    """The failure as ComfyUI's own log prints it (execution.py), so triage knows the runtime is ComfyUI."""
    return (f"!!! Exception during processing !!! {message}\nTraceback (most recent call last):\n"
            f"{short_type_name(exc_type)}: {message}")


def _triage_report(text: str, context: dict) -> dict | None:
    core = triage_core()
    if core is None:
        return None
    try:
        return core.triage_text(text, context)
    except Exception:
        log.exception("[GPU Garden] triage_text failed on an OOM")
        return None


def _class_type(node_ctx: dict, node_id: str):
    prompt = getattr(node_ctx.get("dynprompt"), "original_prompt", None) or {}
    class_type = (prompt.get(node_id) or {}).get("class_type") if isinstance(prompt, dict) else None
    if class_type is None:
        try:
            class_type = node_ctx["dynprompt"].get_node(node_id).get("class_type")
        except Exception:
            pass
    return class_type


def build_report(node_ctx: dict, exc: BaseException, state: dict) -> dict:
    node_id = str(node_ctx.get("node_id"))
    class_type = _class_type(node_ctx, node_id)
    extra = node_ctx.get("extra_data") or {}
    extra_pnginfo = extra.get("extra_pnginfo") if isinstance(extra, dict) else None
    node = oom_report.node_info(node_id, class_type, extra_pnginfo, _display_name(class_type))
    exc_type, full_message = full_type_name(exc), message_of(exc)
    message = bounded_text(full_message)
    backend = host_models.compute_backend() or "cpu"
    latent = _latent(node_ctx, state.get("model_family"))
    session = list(_session_ooms)
    context = {"node_type": class_type, "node_title": node["title"], "platform": host_models.platform_name(),
               "backend": backend, "cuda_malloc_async": cuda_malloc_async(backend), "snapshot": state.get("snapshot"),
               "loaded_models": state.get("loaded_models"), "latent": latent, "previous_ooms": session,
               # whose PyTorch private pools are (comfy-aimdo's MemPool, or the Comfy Compiler's CUDA graphs)
               "dynamic_vram": host_models.dynamic_vram(), "comfy_compiler": host_models.comfy_compiler(),
               "comfy_install": host_install(sys.executable, sys.argv[0] if sys.argv else "")}     # (fix66c) its launch line
    tri = _triage_report(log_excerpt(exc_type, bounded_text(full_message, RECOGNITION_CHARS)), context)
    events = (tri or {}).get("events") or []
    # the event triage's answer speaks of (its "headline": the last that failed; an event the run went on from is listed in
    # the log's events but names no cause while a failure exists), else the last
    head = (tri or {}).get("headline")
    event = events[head] if isinstance(head, int) and 0 <= head < len(events) else events[-1] if events else {}
    recovered_text = bool((tri or {}).get("recovered_only"))  # the message reads as recovered; the node still failed
    _session_ooms[:] = (session + [{"numbers": event.get("numbers") or {}, "kind": event.get("kind"),
                                    "node_type": class_type}])[-20:]
    causes = event.get("causes") or []
    cause = (tri or {}).get("cause") or (causes[0]["id"] if causes else None)
    guide = event.get("guide")
    device = oom_report.matching_device(state.get("snapshot"), event.get("device_kind"), event.get("device_index"))
    numbers = oom_report.bar_numbers(event.get("numbers"), device, event.get("device_kind"))
    notes = [n for n in (state.get("snapshot_note"),
                         None if triage_core() else f"triage core unavailable ({_core_missing})") if n]
    if recovered_text:
        notes.append(RECOVERED_NOTE)
    if len(message) < len(full_message):
        notes.append(f"message of {len(full_message)} characters: head and tail kept; recognition read "
                     f"{RECOGNITION_CHARS} of them")
    report = {
        "id": uuid.uuid4().hex, "version": 1, "timestamp": time.time(), "prompt_id": node_ctx.get("prompt_id"),
        "node": node, "exception_type": exc_type, "message": message,
        "runtime": event.get("runtime"), "device_kind": event.get("device_kind"),
        "cause": cause, "causes": causes, "guide": guide, "numbers": numbers,
        "uncertain": bool(event.get("uncertain")), "alternatives": event.get("alternatives") or [],  # panel: side by side
        "pair": bool(event.get("pair")),  # the two fit about equally (triage's rank.pair): the panel's label, not recomputed
        "recovered_only": False,  # triage's key, kept: the node raised (ComfyUI's FAILURE status), so there is a failure
        "actions": oom_report.swap_actions(node, cause, guide),
        "latent": latent, "model_family": state.get("model_family"),
        "loaded_models": state.get("loaded_models"), "snapshot": state.get("snapshot"),
        "captured": state.get("when"), "notes": notes,
        "host": {"platform": context["platform"], "backend": backend, "cuda_malloc_async": context["cuda_malloc_async"]},
        "session_history": session,  # what triage was told of this process's earlier OOMs (its leak evidence)
    }
    return report
