"""(fix66d) Which of comfy-aimdo's failures (ComfyUI's Dynamic VRAM) a log shows, read from what comfy-aimdo's own source
says each line means (Comfy-Org/comfy-aimdo), so that only the driver's refusal reads as "could not map weights":

- src/vrambuf.c vrambuf_grow: a failed map that is not CUDA_ERROR_OUT_OF_MEMORY logs "VRAM Allocation failed (non OOM)"
  (the driver refused; "(error)" likewise). An out-of-memory first makes aimdo evict model weights
  (vbars_free) and try again; failing again it logs "VRAM Allocation failed (OOM)" at INFO: the card has no room even with
  the evictable weights gone, a real shortage, so the phase clues decide (case.py gives them their full weight).
  comfy_aimdo/vram_buffer.py then raises "VRAM grow failed: N bytes" for either: alone it names no reason (fix66g:
  rules_other's Dynamic VRAM row says "the driver refused" only where aimdo's own line does, dynamic_words).
- comfy_aimdo/model_vbar.py ModelVBAR.alloc raises MemoryError("VBAR OOM") when the model's tensors run past the VBAR's
  own size (ComfyUI reserves model_size() * 10 per model: comfy/model_patcher.py): no VRAM is asked for; the model holds
  far more than ComfyUI counted for it (a custom model class whose size ComfyUI cannot count), not a full card.
- comfy_aimdo/model_mmap.py raises "ModelMMAP allocation failed for <file>" when model_mmap_allocate returns NULL: the
  model file could not be opened, sized or mapped (src-posix/model-mmap.c open/fstat/mmap, failing on a size <= 0;
  src-win/model-mmap.c CreateFileA, VirtualAlloc2, CreateFileMapping, MapViewOfFile3, which map any non-empty file;
  model_mmap.py passes the path UTF-8 encoded to CreateFileA, an ANSI call, so a non-ASCII path fails to open on
  Windows). A file-mapping failure, not pinned RAM (it was read with error_patterns.PINNED_HOST before).
"""
import re

AIMDO_TRUE_OOM = "VRAM Allocation failed (OOM)"
MODEL_MMAP = re.compile(r"ModelMMAP allocation failed(?: for (\S.{0,299}))?")
VBAR_OOM = re.compile(r"\bVBAR OOM\b")


def _dynamic(x):
    return x.kind == "comfy.dynamic_vram"


def aimdo_true_oom(x):
    """aimdo evicted weights and the card still had no room ("VRAM Allocation failed (OOM)" in the failure's lines)."""
    return _dynamic(x) and any(AIMDO_TRUE_OOM in t for t in x.texts or ())


def vbar_oom(x):
    """The model's tensors ran past its VBAR's own reserved range (ModelVBAR.alloc's MemoryError("VBAR OOM"))."""
    return _dynamic(x) and x.ev.get("form") == "vbar_oom"


def model_mmap(x):
    """comfy-aimdo could not open, size or map the model file (parse.py: form "model_mmap")."""
    return _dynamic(x) and x.ev.get("form") == "model_mmap"


def named_form(x):
    """One of the forms above: the Dynamic VRAM row's "failed to map weights" does not speak for it."""
    return aimdo_true_oom(x) or vbar_oom(x) or model_mmap(x)


def mmap_file(x):
    m = MODEL_MMAP.search(x.text or "")
    return (" (" + m.group(1).strip()[-120:] + ")") if m and m.group(1) else ""


REFUSED = ("VRAM Allocation failed (non OOM)", "VRAM Allocation failed (error)", "Fault failed")


def dynamic_words(x) -> str:
    """The Dynamic VRAM row's evidence: the driver's refusal only where aimdo's own line says so; a bare "VRAM grow
    failed" (vram_buffer.py raises it after an out-of-memory too) names no reason."""
    why = ("the driver refused the mapping (aimdo's line: not an out-of-memory)" if any(w in t for t in x.texts or ()
           for w in REFUSED) else "no aimdo line says whether the driver refused it or the card was full")
    return "ComfyUI Dynamic VRAM (comfy-aimdo) failed to map weights, " + why + ": " + x.text[:120]
