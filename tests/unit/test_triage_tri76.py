"""Task tri76 (issue 14): data-loading worker processes found dead, with no worker's exception printed, read as host RAM.
Inputs written by hand in the runtimes' own words; none taken from a corpus file.

batchgenerators (nnU-Net's augmentation pipeline) runs its workers as processes whose producer catches any Python exception,
prints "Exception in background worker N:" and the traceback, sets the abort event and returns; the parent checks is_alive()
on every worker and raises "One or more background workers are no longer alive. Exiting. Please check the print statements
above for the actual error message". nnU-Net's export pool raises "Some background workers are no longer alive" when a
multiprocessing.Pool worker is gone (a Pool worker survives its task's exceptions). With no worker exception printed, the
worker was ended by a signal: the OOM killer, or SIGBUS from a full /dev/shm (host_readers.WORKERS_DEAD)."""
import pytest

from support.triage_event import kinds, read, top

TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB "
             "of which 1.20 GiB is free. Including non-PyTorch memory, this process has 22.34 GiB memory in use. Of the "
             "allocated memory 21.10 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")
BATCHGEN = ("RuntimeError: One or more background workers are no longer alive. Exiting. Please check the print statements "
            "above for the actual error message\n")


@pytest.mark.parametrize("text", [
    # the message as batchgenerators raises it, after an nnU-Net trainer's own start-up lines
    "2026-03-02 10:14:07.512301: unpacking dataset...\n2026-03-02 10:14:21.004512: unpacking done...\n" + BATCHGEN,
    # wrapped over two lines, as a write-up quotes it
    "RuntimeError: One or more background workers are no longer alive. Exiting.\n"
    "Please check the print statements above for the actual error message\n",
    # the traceback from the results loop's thread
    "Exception in thread Thread-4 (results_loop):\nTraceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/batchgenerators/dataloading/nondet_multi_threaded_augmenter.py", line 125, in results_loop\n'
    "    raise e\n" + BATCHGEN,
    # nnU-Net's export pool during the validation that follows training
    "2026-03-02 18:40:11.100102: predicting case_0042\nRuntimeError: Some background workers are no longer alive\n",
])
def test_dead_workers_read_as_host_ram(text):
    # fails on the old rules: none of these lines was recognised, so the triage found no failure at all
    cause, kind, _runtime, device, numbers = read(text)
    assert (cause, kind, device, numbers) == ("host-ram", "batchgen.workers_dead", "cpu", {})


def test_a_worker_that_printed_its_exception_is_not_host_ram():
    # the worker's own Python error is printed above the message (batchgenerators' producer): the workers did not die of a
    # signal, so the dead-worker row does not read host RAM
    text = ("Exception in background worker 2:\n mmap length is greater than file size\nTraceback (most recent call last):\n"
            "ValueError: mmap length is greater than file size\n" + BATCHGEN)
    cause, conf, _ev = top(text)
    assert cause != "host-ram" and "host-ram" not in conf


def test_a_device_message_before_the_dead_workers_leads():
    # control (holds on the old rules too): PyTorch's own message names the failure, the dead workers join it
    cause, conf, ev = top(TORCH_OOM + BATCHGEN)
    assert ev["kind"] == "torch.cuda"
    assert cause != "host-ram" and "host-ram" not in conf


@pytest.mark.parametrize("text", [
    "all background workers are alive\n",
    "RuntimeError: background worker exited\n",
    "One or more workers are no longer alive\n",
])
def test_other_worker_words_are_not_read(text):
    assert "batchgen.workers_dead" not in kinds(text)
