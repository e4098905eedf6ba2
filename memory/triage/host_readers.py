"""Host-memory failure lines (parse.py's recognisers, split from it for its 600-line guard; parse re-exports them): the
kernel's OOM killer in any parent's words, earlyoom, Python's MemoryError (and NumPy's array allocation),
VideoHelperSuite's Load Video RAM guard, a Jupyter kernel that died with no reply (tri75), and data-loading worker processes
found dead (tri76). Each returns None or parse's event dict."""
import re

from . import error_patterns as RX
from .other_patterns import EARLYOOM, KILLED, KILL_WORDS, VHS_RAM
from .prefilter import _gate
from .text import size


@_gate("Memory limit hit after loading", "can fit in memory")
def _vhs_ram(line):
    """VideoHelperSuite's Load Video RAM guard: the frames it decoded (form "frames") or a Meta Batch's frames against those
    that fit (form "meta_batch")."""
    m = VHS_RAM.search(line) if ("Memory limit hit" in line or "can fit in memory" in line) else None
    if not m:
        return None
    ev = {"kind": "comfy.vhs_ram", "device_kind": "cpu", "numbers": {}, "runtime": "comfyui", "complete": True}
    if m.group(1):
        ev.update(form="frames", frames=int(m.group(1)))
    else:
        ev.update(form="meta_batch", frames=int(m.group(2)), fit=int(m.group(3)))
    return ev


# (round 118) the kernel's kill line as a write-up quotes it with anon-rss in a unit ("Out of memory: Killed process (llama-server)
# anon-rss 6.7GB", "... Killed process 42 (python) anon-rss: 3.1 GiB"): the victim's own memory, as the kernel's kB figure is read
KILLED_UNIT = re.compile(r"\bKill(?:ed)? process(?: \d{1,10})? \([^\n()]{1,64}\),? anon-rss[: ][ \t]{0,2}(\d{1,9}(?:\.\d{1,6})?[ \t]?[KMGT]i?B)\b")


@_gate(*KILL_WORDS)
def _killed(line):
    """The OOM killer's SIGKILL, in any parent's words; Ollama's runner wrapper keeps Ollama as the runtime and the device to the log."""
    if not any(k in line for k in KILL_WORDS):
        return None
    m = KILLED.search(line)
    if not m:
        return None
    # (round 94) or systemd naming Ollama's unit ("ollama.service: A process of this unit has been killed by the OOM killer.")
    runner = RX.OLLAMA_RUNNER.search(line) or line.lstrip().startswith("ollama.service: ")
    kib = m.group(1) or m.group(2) or m.group(3)      # the kernel's anon-rss, Android's lmkd "to free NkB", the elided kernel line's
    # anon-rss:0kB is a victim whose memory was already torn down (or file-backed/shmem only): not its footprint (review B4)
    nums = {"this_process": int(kib) * 1024} if kib and int(kib) else {}
    unit = None if kib or "anon-rss" not in line else KILLED_UNIT.search(line)
    if unit and size(unit.group(1)):
        nums = {"this_process": size(unit.group(1))}
    return {"kind": "os.oom_killer", "device_kind": None if runner else "cpu", "numbers": nums,
            "runtime": "ollama" if runner else "pytorch", "complete": True}


@_gate(RX.PY_MEMORY, "for an array with shape")
def _py_memory(line):
    m = RX.PY_MEMORY.search(line)
    if not m:
        n = RX.NP_ALLOC_FULL.search(line) if "for an array with shape" in line else None
        if not n:
            return None
        return {"kind": "python.memory_error", "device_kind": "cpu", "numbers": {"requested": size(n.group(1) + n.group(2))},
                "runtime": "pytorch", "complete": True, "form": "numpy"}
    nums = {}
    n = RX.NP_ALLOC.search(m.group(1) or "")
    if n:
        nums["requested"] = size(n.group(1) + n.group(2))
    return {"kind": "python.memory_error", "device_kind": "cpu", "numbers": nums, "runtime": "pytorch", "complete": True}


@_gate("at or below SIG", "VmRSS")
def _earlyoom(line):
    """(round 94) earlyoom acting on the host's available memory: its "low memory! at or below SIGTERM limits" notice and its kill
    line ("sending SIGTERM to process N uid N "name": badness N, VmRSS N MiB", the victim's resident memory read as this_process).
    Host RAM as the kernel's OOM killer reads it (os.oom_killer, form earlyoom); the device and runtime left to the log."""
    m = EARLYOOM.search(line) if ("at or below SIG" in line or "VmRSS" in line) else None
    if not m:
        return None
    nums = {"this_process": int(m.group(1)) * 1024 ** 2} if m.group(1) else {}
    return {"kind": "os.oom_killer", "device_kind": None, "numbers": nums, "runtime": None, "complete": True, "form": "earlyoom"}


# (tri75) A Jupyter kernel that died while a cell ran. nbclient (papermill, nbconvert --execute, Kaggle's notebook runner) polls
# the kernel while it waits for a cell's reply and, when the kernel process is no longer alive, logs "Kernel died while waiting
# for execute reply." and raises DeadKernelError("Kernel died") (nbclient/client.py, _async_check_alive); the classic Notebook's
# front end shows "The kernel appears to have died. It will restart automatically." when the server's restarter finds the
# process gone (status_autorestarting). A Python exception, a CUDA out-of-memory error or a MemoryError among them, is sent back
# as the cell's error reply and leaves the kernel alive; a kernel that dies was ended from outside the interpreter, in an out-
# of-memory report by the host's OOM killer (or the container's memory limit): system RAM. Any device message in the same
# failure outranks it (parse.PRIORITY: a low rank, so it joins that failure and does not lead it)
KERNEL_DIED = re.compile(r"\bDeadKernelError\b|\bKernel died while waiting for execute reply\b"
                         r"|\bThe kernel appears to have died\b")
KERNEL_DIED_WORDS = ("DeadKernelError", "Kernel died while waiting", "kernel appears to have died")


@_gate(*KERNEL_DIED_WORDS)
def _kernel_died(line):
    """(tri75) nbclient's dead kernel or the Notebook's "kernel appears to have died" (KERNEL_DIED): host RAM, the runtime
    and the device left to the log."""
    if not any(w in line for w in KERNEL_DIED_WORDS) or not KERNEL_DIED.search(line):
        return None
    return {"kind": "jupyter.kernel_died", "device_kind": "cpu", "numbers": {}, "runtime": None, "complete": True}


# (tri76) Data-loading worker processes found dead by their parent. batchgenerators (nnU-Net's augmentation pipeline:
# dataloading/nondet_multi_threaded_augmenter.py and multi_threaded_augmenter.py) runs each worker as a process whose producer
# catches any Python exception, prints "Exception in background worker N:" with the traceback, sets the abort event and
# returns; the parent's results loop checks is_alive() on every worker and raises "One or more background workers are no longer
# alive. Exiting. Please check the print statements above for the actual error message". nnU-Net's export pool
# (nnunetv2/utilities/file_path_utilities.py, check_workers_alive_and_busy) raises "Some background workers are no longer
# alive" when a multiprocessing.Pool worker is gone, and a Pool worker survives its task's exceptions (they come back to the
# caller). With no worker exception printed (the rule reads facts' bg_worker_exception), the worker was ended by a signal:
# the OOM killer, or SIGBUS from a full /dev/shm in a container: system RAM. A device message in the same failure outranks it
WORKERS_DEAD = re.compile(r"\b(?:One or more|Some) background workers are no longer alive\b")
WORKERS_DEAD_WORDS = ("background workers are no longer alive",)


@_gate(*WORKERS_DEAD_WORDS)
def _workers_dead(line):
    """(tri76) batchgenerators' or nnU-Net's dead background workers (WORKERS_DEAD): host RAM where no worker printed an
    exception (rules_host), the runtime and the device left to the log."""
    if WORKERS_DEAD_WORDS[0] not in line or not WORKERS_DEAD.search(line):
        return None
    return {"kind": "batchgen.workers_dead", "device_kind": "cpu", "numbers": {}, "runtime": None, "complete": True}
