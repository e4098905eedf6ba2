"""Task tri75 (issue 14): a Jupyter kernel that died while a cell ran is read as host RAM.
Inputs written by hand in the runtimes' own words; none taken from a corpus file.

nbclient (papermill, nbconvert --execute, Kaggle's notebook runner) polls the kernel while it waits for a cell's reply; when
the kernel process is no longer alive it logs "Kernel died while waiting for execute reply." and raises
DeadKernelError("Kernel died") (nbclient/client.py, _async_check_alive). The classic Notebook shows "The kernel appears to have
died. It will restart automatically." when the server's restarter finds the process gone. A Python exception, a device's out
of memory among them, comes back as the cell's error and leaves the kernel alive, so in an out-of-memory report a dead kernel
was ended from outside: the host's OOM killer or the container's limit (host_readers.KERNEL_DIED)."""
import pytest

from support.triage_event import kinds, read, top

TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.74 GiB "
             "of which 1.20 GiB is free. Including non-PyTorch memory, this process has 13.54 GiB memory in use. Of the "
             "allocated memory 12.10 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize("text", [
    # nbclient's log line and its exception, after a notebook's own stage markers (a runner's log as `kaggle kernels logs` prints it)
    "features_loaded\njoin_start\nKernel died while waiting for execute reply.\nnbclient.exceptions.DeadKernelError: Kernel died\n",
    # the exception alone, without its module (a status line before it)
    "KernelWorkerStatus.ERROR\nDeadKernelError: Kernel died\n",
    # papermill's traceback ending in nbclient's raise
    "Executing:  40%|####      | 4/10 [01:12<01:48, 18.00s/cell]\nTraceback (most recent call last):\n"
    '  File "/usr/lib/python3/site-packages/nbclient/client.py", line 837, in _async_check_alive\n'
    "    raise DeadKernelError(\"Kernel died\")\nnbclient.exceptions.DeadKernelError: Kernel died\n",
    # the classic Notebook's dialog, quoted
    "model.fit(X_train, y_train)\nThe kernel appears to have died. It will restart automatically.\n",
])
def test_a_dead_kernel_reads_as_host_ram(text):
    # fails on the old rules: none of these lines was recognised, so the triage found no failure at all
    cause, kind, _runtime, device, numbers = read(text)
    assert (cause, kind, device, numbers) == ("host-ram", "jupyter.kernel_died", "cpu", {})


def test_a_device_message_before_the_dead_kernel_leads():
    # control (holds on the old rules too): PyTorch's own message names the failure, the dead kernel joins it and does not
    # turn it into host RAM (parse.PRIORITY ranks jupyter.kernel_died below every device message)
    cause, conf, ev = top(TORCH_OOM + "Kernel died while waiting for execute reply.\n")
    assert ev["kind"] == "torch.cuda"
    assert cause != "host-ram" and "host-ram" not in conf


@pytest.mark.parametrize("text", [
    "the Linux kernel died with a panic\n",
    "Kernel died\n",          # without nbclient's words ("while waiting for execute reply", DeadKernelError)
    "KernelRestarter: restarting kernel (1/5), keep random ports\n",
])
def test_other_kernel_words_are_not_read(text):
    assert "jupyter.kernel_died" not in kinds(text)
