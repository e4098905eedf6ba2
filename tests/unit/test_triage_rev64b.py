"""Review rev64b #1: tri75's dead Jupyter kernel and tri76's dead data-loading workers join a device out-of-memory failure
logged before them instead of leading it (parse.PRIORITY 0.5, below torch.oom_type, generic.oom and comfy.got_oom). The
logs are the reviewer's reproductions: a traceback cut to PyTorch's exception type, a generic "out of memory" line and
ComfyUI's "Got an OOM" line, each followed by the host-side death line."""
import pytest

from support.triage_event import top

WORKERS = ("RuntimeError: One or more background workers are no longer alive. Exiting. Please check the print statements "
           "above for the actual error message\n")
CASES = {
    "oom_type_then_kernel": "Traceback (most recent call last):\n  File \"/kaggle/working/train.py\", line 88, in <module>\n"
                            "    loss.backward()\ntorch.OutOfMemoryError\nKernel died while waiting for execute reply.\n"
                            "nbclient.exceptions.DeadKernelError: Kernel died\n",
    "generic_oom_then_kernel": "Error: out of memory\nThe kernel appears to have died. It will restart automatically.\n",
    "got_oom_then_workers": "Got an OOM, unloading all loaded models.\n" + WORKERS,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_device_oom_before_the_host_side_death_leads(name):
    cause, conf, ev = top(CASES[name])
    assert ev["kind"] not in ("jupyter.kernel_died", "batchgen.workers_dead") and cause != "host-ram", (ev["kind"], cause)


def test_the_death_alone_still_reads_as_host_ram():
    for text in ("Kernel died while waiting for execute reply.\nnbclient.exceptions.DeadKernelError: Kernel died\n", WORKERS):
        assert top(text)[0] == "host-ram"
