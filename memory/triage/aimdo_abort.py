"""(aud67b #10) comfy-aimdo's "memory compile error" raised by malloc_graph.abort while ComfyUI cleans up after an
interrupt: a bug of comfy-aimdo's abort path, not a custom node's allocations. Comfy-Org/ComfyUI PR #16108 ("comfy-aimdo
0.5.2") shows this traceback (execution.py -> model_prefetch.cleanup_prefetch_queues -> graph.abort() ->
malloc_graph.py _call raising RuntimeError("aimdo memory compile error") after InterruptProcessingException) and moves
ComfyUI to comfy-aimdo 0.5.2, whose PR #103 ("Abort incomplete malloc graphs safely") made the abort safe.
The comfyui-compiler guide then puts "update comfy-aimdo" first, with the pip line for the install the log shows.

(rev67d F4) The interrupt must be the failing prompt's: facts "comfy_prompt" ("got prompt", execution's start of a
prompt) and "comfy_interrupted" are kept by line, and an interrupt counts only after the last "got prompt" before the
failure (an earlier prompt's interrupt is not this one's; a later prompt's does not hide it). Either line may carry a
timestamp prefix (ComfyUI-Manager's "[2026-09-04 11:43:11.512] ", ISO "2026-...T... - "): no start-of-line anchor."""
import re

FIXED_IN = "0.5.2"
# the pip that installs into ComfyUI's own Python, by comfy_launch's install kind (portable: its embedded interpreter,
# as ComfyUI's own requirements warning words it; Desktop: the app's terminal runs in its venv)
PIP = {"portable": r".\python_embeded\python.exe -s -m pip", "manual": "python -m pip", "desktop": "python -m pip"}


FACTS = [("comfy_prompt", re.compile(r"\bgot prompt\b"), ("got prompt",)),
         # execution.py: logging.info("Processing interrupted"); the exception it raises
         ("comfy_interrupted", re.compile(r"\bProcessing interrupted\b|\bInterruptProcessingException\b"),
          ("Processing interrupted", "InterruptProcessingException"))]
KEPT = 1024     # lines kept of each (a long session's prompts)


def handler(kept):
    """facts.py's handler for both facts, by line (`kept`: facts._kept). A line read back from the window before a
    failure (line 0) is placed just before that failure's line, in the order the window reads them."""
    def read(s, f, m, text, lineno, window):
        name = "comfy_interrupted" if m.group(0)[0] in "PI" else "comfy_prompt"
        if window:
            seq = f["_comfy_seq"] = f.get("_comfy_seq", 0) + 1
            lineno = s._lineno - 1 + 0.5 * seq / (seq + 1)
        kept(f.setdefault(name, {}), lineno, True, KEPT)
    return read


def params(frames, facts, line, install) -> dict:
    """aimdo_abort_interrupt: the failure's traceback runs through comfy_aimdo's malloc_graph `abort` and the log showed an
    interrupt after the last "got prompt" before its line (`line`) and at or before it; aimdo_pip: the pip line for `install` (comfy_launch's kind, None: manual)."""
    abort = any("malloc_graph" in (src or "") and fn == "abort" for src, fn in frames)
    start = max((n for n in facts.get("comfy_prompt") or {} if n <= line), default=float("-inf"))
    hit = abort and any(start < n <= line for n in facts.get("comfy_interrupted") or {})
    return {"aimdo_abort_interrupt": hit, "aimdo_fixed_in": FIXED_IN, "aimdo_pip": PIP.get(install, PIP["manual"])} if hit else {}
