"""Task tri84 (issue 14): Ray's memory monitor killing a task or actor for the node's RAM, read as host RAM.
Inputs written by hand in the runtime's own words; none taken from a corpus file.

Ray's raylet watches each node's system memory (worker heaps, the object store, the raylet) and, past
RAY_memory_usage_threshold (0.95 by default), kills a worker; the caller's ray.get raises ray.exceptions.OutOfMemoryError
("Task was killed due to the node running low on memory. ..."). A task's own exception relayed by Ray
("ray.exceptions.RayTaskError(OutOfMemoryError): ...") is not that: it wraps what the task raised (ray_oom.RAY_OOM)."""
import pytest

from support.triage_event import kinds, read, top

RAY_GET = ("Traceback (most recent call last):\n"
           '  File "/srv/rl/train.py", line 88, in main\n'
           "    results = ray.get(refs)\n"
           '  File "/opt/venv/lib/python3.11/site-packages/ray/_private/worker.py", line 2771, in get\n'
           "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)\n"
           '  File "/opt/venv/lib/python3.11/site-packages/ray/_private/worker.py", line 921, in get_objects\n'
           "    raise value\n")
RAY_FULL = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
            "Memory on the node (IP: 10.4.0.17, ID: 5be1c0ffee) where the task (actor ID: 77aa01, name=PolicyActor.__init__, "
            "pid=40112, memory used=23.80GB) was running was 61.95GB / 64.00GB (0.967969), which exceeds the memory usage "
            "threshold of 0.95. Ray killed this worker (ID: 9d02) because it was the most recently scheduled task.\n")
TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB "
             "of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.88 GiB memory in use. Of the "
             "allocated memory 76.10 GiB is allocated by PyTorch, and 900.00 MiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize("text", [
    # the driver's traceback ending in Ray's exception with its message
    RAY_GET + RAY_FULL,
    # the exception's name alone, as a write-up quotes it, with the node's figures on the next line
    "ray.exceptions.OutOfMemoryError\n61.9 GB / 64.00 GB (0.97)\n",
    # Ray Data's retry line for workers the monitor killed
    "Task map_batches(Embed) failed due to oom. There are 14 oom retries remaining, so the task will be retried. Error: "
    "2 worker(s) were killed due to the node running low on memory.\n",
])
def test_ray_memory_monitor_reads_as_host_ram(text):
    # fails on the old rules: the bare type name read as an out-of-memory error with no figures (other 0.45), and Ray
    # Data's line was not read at all
    cause, conf, ev = top(text)
    assert (cause, ev["kind"], ev.get("form")) == ("host-ram", "os.oom_killer", "ray_monitor")
    assert conf["host-ram"] > 0.8
    assert "Ray's memory monitor" in next(c for c in ev["causes"] if c["id"] == "host-ram")["evidence"][0]


def test_device_and_runtime_are_left_to_the_log():
    # the monitor names no device: a PyTorch trainer's CUDA marker in the same log keeps its device
    _cause, kind, _runtime, device, numbers = read("Using device: cuda:0 (NVIDIA H100 80GB HBM3)\n" + RAY_FULL)
    assert (kind, numbers) == ("os.oom_killer", {})
    assert device != "cpu"


def test_a_task_exception_relayed_by_ray_is_not_the_monitor():
    # control (holds on the old rules too): RayTaskError(OutOfMemoryError) wraps the task's own CUDA out-of-memory error,
    # which leads; no node memory is named
    text = (RAY_GET + "ray.exceptions.RayTaskError(OutOfMemoryError): ray::Trainer.update_actor() (pid=5081, ip=10.4.0.17)\n"
            + TORCH_OOM)
    cause, conf, ev = top(text)
    assert ev["kind"] == "torch.cuda" and ev.get("form") != "ray_monitor"
    assert cause != "host-ram"


@pytest.mark.parametrize("text", [
    "ray.exceptions.RayTaskError(OutOfMemoryError): ray::f() (pid=12, ip=10.0.0.2)\n",
    "(raylet) WARNING: the node is running low on memory, consider fewer workers\n",
    "ray.exceptions.ObjectStoreFullError: Failed to put object in object store because it is full.\n",
])
def test_other_ray_lines_are_not_the_monitor(text):
    assert not any(e.get("form") == "ray_monitor" for e in _events(text))


def _events(text):
    from gpu_garden.memory.triage import engine
    return engine.triage_text(text)["events"]


def test_kinds_helper_sees_the_event():
    assert "os.oom_killer" in kinds(RAY_FULL)
