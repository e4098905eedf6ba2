"""(aud67b #10) comfy-aimdo's "memory compile error" raised by malloc_graph.abort while ComfyUI cleans up after an
interrupt: a bug of comfy-aimdo's abort path, not a custom node's allocations. Comfy-Org/ComfyUI PR #16108 ("comfy-aimdo
0.5.2") shows this traceback (execution.py -> model_prefetch.cleanup_prefetch_queues -> graph.abort() ->
malloc_graph.py _call raising RuntimeError("aimdo memory compile error") after InterruptProcessingException) and moves
ComfyUI to comfy-aimdo 0.5.2, whose PR #103 ("Abort incomplete malloc graphs safely") made the abort safe.
The comfyui-compiler guide then puts "update comfy-aimdo" first, with the pip line for the install the log shows."""

FIXED_IN = "0.5.2"
# the pip that installs into ComfyUI's own Python, by comfy_launch's install kind (portable: its embedded interpreter,
# as ComfyUI's own requirements warning words it; Desktop: the app's terminal runs in its venv)
PIP = {"portable": r".\python_embeded\python.exe -s -m pip", "manual": "python -m pip", "desktop": "python -m pip"}


def params(frames, facts, line, install) -> dict:
    """aimdo_abort_interrupt: the failure's traceback runs through comfy_aimdo's malloc_graph `abort` and the log showed an
    interrupt at or before its line (`line`); aimdo_pip: the pip line for `install` (comfy_launch's kind, None: manual)."""
    abort = any("malloc_graph" in (src or "") and fn == "abort" for src, fn in frames)
    at = facts.get("comfy_interrupted")
    hit = bool(abort and at is not None and at <= line)
    return {"aimdo_abort_interrupt": hit, "aimdo_fixed_in": FIXED_IN, "aimdo_pip": PIP.get(install, PIP["manual"])} if hit else {}
