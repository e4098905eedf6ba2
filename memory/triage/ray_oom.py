"""(task tri84) Ray's memory monitor killing a task or actor for the node's system RAM.

Ray's raylet runs a memory monitor on each node (Ray's docs, ray-core/scheduling/ray-oom-prevention: "It periodically
checks the memory usage, which includes the worker heap, the object store, and the raylet"); when the node's memory passes
RAY_memory_usage_threshold (0.95 by default) it kills a worker to free memory. The caller's ray.get then raises
ray.exceptions.OutOfMemoryError (python/ray/exceptions.py: "Indicates that the node is running out of memory and is close
to full. This is raised if the node is low on memory and tasks or actors are being evicted to free up memory"), whose
message opens "Task was killed due to the node running low on memory." and goes on "Memory on the node (IP: ..., ID: ...)
... was U / T (f), which exceeds the memory usage threshold of 0.95"; Ray Data's retries say "N worker(s) were killed due to
the node running low on memory". The monitor reads system memory only (the host's, or the container's cgroup), never a GPU's,
so the line is the node's RAM, read as the kernel's OOM killer is (os.oom_killer, form ray_monitor; the raylet's own
"Workers (tasks / actors) killed due to memory pressure (OOM)" line is already read so, round 88).

Not read here: a task's own exception relayed by Ray, "ray.exceptions.RayTaskError(OutOfMemoryError): ray::f() ...", which
wraps whatever the task raised (PyTorch's CUDA out-of-memory error most often) and names no node memory; its own lines
are read by their own recognisers."""
import re

from .prefilter import _gate

RAY_OOM = re.compile(r"\bray\.exceptions\.OutOfMemoryError\b|\bkilled due to the node running low on memory\b")
RAY_OOM_WORDS = ("ray.exceptions.OutOfMemoryError", "due to the node running low on memory")


@_gate(*RAY_OOM_WORDS)
def _ray_oom(line):
    """(tri84) Ray's OutOfMemoryError or its message (RAY_OOM): the node's RAM, the runtime and the device left to the log."""
    if not any(w in line for w in RAY_OOM_WORDS) or not RAY_OOM.search(line):
        return None
    return {"kind": "os.oom_killer", "device_kind": None, "numbers": {}, "runtime": None, "complete": True,
            "form": "ray_monitor"}
