"""(task tri82) A ComfyUI server that died of a native abort: "Fatal Python error: Aborted".

CPython's faulthandler prints "Fatal Python error: Aborted" from its SIGABRT handler (Modules/faulthandler.c, the handler
table: SIGABRT, "Aborted"): the process was ended by abort() in native code (an uncaught C++ exception reaching
std::terminate, a failed assertion, a library's own fatal path), not by a Python exception. ComfyUI runs every node inside
execution.py's try/except (0.8.0, execution.py:589-605): any Python exception, PyTorch's OutOfMemoryError included, is
caught, logged as "!!! Exception during processing !!!" (and "Got an OOM, unloading all loaded models."), and the server
goes on. PyTorch's caching allocator raises its out-of-memory error; it does not abort. So a ComfyUI server that aborted
was not refused by the caching allocator for lack of memory in the usual way: native code below it gave up where it could
not raise, most often comfy-aimdo's Dynamic VRAM (its VBAR weights are faulted in from native code, and a failure there has
no Python caller to return to) or a custom node's extension. The label definition calls that a fault of the runtime
(docs/triage-causes.md, other: "a VBAR/aimdo/driver/build fault"), and the fix is to turn the path off
(--disable-dynamic-vram) or update, not a smaller workload.

Two readings use it (rules_other via NATIVE_ABORT):
- the abort line alone, in a ComfyUI log with no other failure line (event python.native_abort, ranked below every device
  message, so any out-of-memory message in the same failure leads it);
- comfy-aimdo's own "hostbuf_...: device copy failed result=2" (read as pinned host RAM, round 30, error_patterns.PINNED_HOST)
  followed, in the same failure, by the abort: the copy into the card failed on the fault path and aborted the process,
  where the reader called from Python raises RuntimeError instead (host_buffer.py). An abort after a C++ std::bad_alloc,
  or after a native library's own out-of-memory message, is read by that message's rows, not here."""
import re

from .prefilter import _gate
from .rule_row import Rule

# kinds that name no failure of their own where an earlier one was read: engine._result does not head the answer with them
TRAILING_KINDS = ("python.native_abort",)
NATIVE_ABORT = re.compile(r"Fatal Python error: Aborted\b")   # anywhere: a launcher's prefix (docker compose, journald) before it (rev65c #4)
NATIVE_ABORT_WORDS = ("Fatal Python error: Aborted",)
# what a native abort names when memory itself ran out (a C++ allocation, a runtime's own out-of-memory message): then the
# abort is how that failure ended, and its own rows read it
NATIVE_OOM_WORDS = ("bad_alloc", "out of memory", "Out of memory", "OutOfMemory", "Insufficient Memory", "OUT_OF_MEMORY")


@_gate(*NATIVE_ABORT_WORDS)
def _native_abort(line):
    """(tri82) faulthandler's "Fatal Python error: Aborted" (NATIVE_ABORT): the runtime and the device left to the log."""
    if NATIVE_ABORT_WORDS[0] not in line or not NATIVE_ABORT.search(line):
        return None
    return {"kind": "python.native_abort", "device_kind": None, "numbers": {}, "runtime": None, "complete": True}


def comfy_log(x) -> bool:
    """The log is ComfyUI's: its runtime, or ComfyUI's model-management lines (fact comfy_mm: "loaded partially; N MB
    usable, ...", "N models unloaded."), which name no runtime for the engine's runtime guess."""
    return x.comfy or bool(x.f.get("comfy_mm"))


def aborted(x) -> bool:
    """The failure closes with a native abort (the python.native_abort event among its events) and none of its error lines
    names a native out-of-memory (NATIVE_OOM_WORDS)."""
    return "python.native_abort" in x.kinds and not any(w in t for t in x.texts for w in NATIVE_OOM_WORDS)


def comfy_aborted(x) -> bool:
    """The abort is the failure itself, in a ComfyUI log."""
    return x.kind == "python.native_abort" and comfy_log(x) and aborted(x)


def aimdo_copy_aborted(x) -> bool:
    """comfy-aimdo's device copy failed (comfy.pinned_host, not the Python reader's line) and the server then aborted."""
    return (x.kind == "comfy.pinned_host" and x.ev.get("form") != "reader" and "device copy failed" in x.text
            and comfy_log(x) and "python.native_abort" in x.kinds)


NATIVE_ABORT_ROWS = [
    Rule("other", 6.0, comfy_aborted,
         "the ComfyUI server died of a native abort (\"Fatal Python error: Aborted\", SIGABRT) with no Python error: ComfyUI "
         "catches a node's exceptions, PyTorch's out-of-memory error included, and goes on, so native code below it gave up "
         "where it could not raise (comfy-aimdo's Dynamic VRAM, a custom node's extension): a fault of that path, not a "
         "workload too large; start ComfyUI with --disable-dynamic-vram, or update ComfyUI, comfy-aimdo and the node pack"),
    Rule("other", 6.0, aimdo_copy_aborted,      # over the pinned-host row (rules_host, 5.0)
         "comfy-aimdo's copy into the card failed (device copy failed) and the server then died of a native abort (\"Fatal "
         "Python error: Aborted\"): the copy failed on Dynamic VRAM's fault path, where no Python error can be raised, not in "
         "a reader called from Python; a fault of Dynamic VRAM on this setup, not host RAM: start ComfyUI with "
         "--disable-dynamic-vram, or update ComfyUI and comfy-aimdo"),
]
