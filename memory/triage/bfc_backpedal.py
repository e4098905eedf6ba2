"""(task tri87) The stream executor's failed device allocations that are its BFC allocator backing off, and no failure after.

TensorFlow's (and XLA's, for JAX) BFCAllocator::Extend asks the device for a new region; where that fails it tries once more
with less, each try 0.9 of the last (kBackpedalFactor, "Only backpedal once", tensorflow/core/common_runtime/bfc_allocator.cc,
the same in tsl/framework/bfc_allocator.cc), until one succeeds or the size falls under the request. Each refused try is logged
by the driver wrapper as "failed to allocate <size> (<n> bytes) from device: CUDA_ERROR_OUT_OF_MEMORY" (cuda_driver.cc,
GpuDriver::DeviceAllocate). With preallocation on (TF 1.x's default, allow_growth off), the first region is the whole memory
limit sized from the free memory at device creation, and the first tensor is small, so the backing off nearly always ends in a
smaller region: the run goes on with it. Only where every try down to the request fails does Extend return false, and then the
allocator's own out-of-memory error ("Allocator ... ran out of memory", ResourceExhaustedError) follows as a failure of its own.

So two or more such lines, each 0.9 of the one before, with nothing else in the failure and no failure after it, are the
allocator's tries, not a refusal of the program's memory: `other` (docs/triage-causes.md: not a shortage of the workload's own
memory), not another program that took the card since (the stream-executor row's reading for one line, which stays the
reading of a lone line). A single line says nothing about the tries after it and is not read here.

(fix67h, rev67c F5) Nor where an error line follows the tries: cuDNN could not start ("Could not create cudnn handle:
CUDNN_STATUS_INTERNAL_ERROR", TensorFlow's "Failed to get convolution algorithm"), or the process crashed ("Segmentation
fault"). Then the run did not go on: the preallocated region left no room for cuDNN's own (those threads' answer is
allow_growth or a smaller memory fraction), and the reading stays the stream-executor rows'.

(fix67o, rev67j #3) A crash counts only where no step or progress line of the run comes between the tries and it: with
step lines between ("step 999990, loss = 0.15 (477.1 examples/sec; ...)"), the run went on after the tries, and a crash long
after is not theirs. (A step line past the log's first 512 KiB, read only near an anchor, may go unseen.)"""
import re

from .rule_row import Rule
from .xla_runtimes import stream_executor

BACKPEDAL = 0.9         # kBackpedalFactor
# the next try is RoundedBytes(bytes * 0.9f): float32 arithmetic and a 256-byte round; a tenth of a percent covers both
BACKPEDAL_TOL = 0.001

# the fact the row reads (fact_patterns.FACTS / FACT_KEYS; facts.HANDLERS): the last line of the log that says cuDNN did not
# start or the process crashed ("could not create cudnn handle" in JAX's build too), by line
FACT = ("bfc_after_error", re.compile(r"\b(?:[Cc]ould not create cudnn handle|Failed to get convolution algorithm|"
                                      r"(?P<crash>Segmentation fault))\b"))
FACT_WORDS = ("ould not create cudnn handle", "Failed to get convolution algorithm", "Segmentation fault")
# (fix67o) a run's step or progress line, by line: TensorFlow's examples ("step 999990, loss = 0.15 (477.1 examples/sec;
# 0.268 sec/batch)", Estimator's "global_step/sec", "loss = 0.3, step = 100"), Keras's "Epoch 3/10", tqdm's "42%|"
WENT_ON = ("bfc_went_on", re.compile(r"\b[Ss]tep[ =]{1,3}\d{1,12}\b|\bglobal_step/sec\b|\bEpoch \d{1,9}/\d{1,9}\b|\b\d{1,3}%\|"))
WENT_ON_WORDS = ("tep ", "tep=", "global_step/sec", "Epoch ", "%|")
CRASHES_KEPT = 16


def read(s, f, m, text, lineno, window):
    """facts.py's handler: the line of the last such error (not from the window: no line of its own); a crash kept with
    the last step line before it (crashes: [(line, last step line before or 0)], the last CRASHES_KEPT)."""
    if window:
        return
    if m.group("crash"):
        crashes = f.setdefault("bfc_crashes", [])
        crashes.append((lineno, f.get("bfc_went_on") or 0))
        del crashes[:-CRASHES_KEPT]
    else:
        f["bfc_after_error"] = lineno


def read_went_on(s, f, m, text, lineno, window):
    """facts.py's handler: the last step or progress line (WENT_ON)."""
    if not window:
        f["bfc_went_on"] = lineno


def _device_tries(texts):
    """The requested bytes of each stream-executor device allocation among the failure's error lines, in order; None where a
    line is anything else (another kind of error: the failure is not the tries alone)."""
    sizes = []
    for t in texts:
        ev = stream_executor(t)
        if not ev or ev.get("form") != "stream_executor":
            return None
        sizes.append(ev["numbers"]["requested"])
    return sizes


def backed_off(x) -> bool:
    """The failure is two or more stream-executor device allocations, each 0.9 of the one before (BFC's backpedal), its
    error lines nothing else, and no failure after it in the log (x.until: where the next failure begins)."""
    if x.kind != "cuda.driver" or x.ev.get("form") != "stream_executor" or x.until is not None:
        return False
    line = x.line or 0
    if (x.f.get("bfc_after_error") or 0) > line:      # (fix67h F5) cuDNN failed after
        return False
    if any(n > line and step <= line for n, step in x.f.get("bfc_crashes") or ()):     # a crash with no step between
        return False
    sizes = _device_tries(x.texts)
    if not sizes or len(sizes) < 2:
        return False
    return all(abs(b - BACKPEDAL * a) <= BACKPEDAL_TOL * a for a, b in zip(sizes, sizes[1:]))


BACKPEDAL_ROWS = [
    Rule("other", 2.0, backed_off,
         lambda x: "the stream executor's allocator backed off: each refused region is 0.9 of the one before (BFC's backpedal, "
                   "TensorFlow/XLA bfc_allocator.cc), and no out-of-memory error follows, so a smaller region was taken and the run "
                   "went on; these lines are its tries, not a failure (allow_growth, or a memory limit, stops the large first try)"),
]
