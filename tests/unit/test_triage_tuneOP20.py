"""Triage session 20 (tuneOP, regression-tuned on batches 21 and 37; fix20a). Lines written from PyTorch's 2.1+ CUDA
message format, not copies of corpus cases. PyTorch for Windows never asks NVML, so its message goes from the free figure
straight to "Of the allocated memory"; on a log that shows Windows, a request refused with VRAM free several times over it
is the system commit (RAM plus page file, which WDDM charges for device memory), not the card: lllyasviel/Fooocus#780
(8 GB of RAM), lllyasviel/FramePack#168 (page file off). No process listed is no evidence of Windows by itself (fix20a)."""
from support.triage_event import top


def _cuda(req, total, free, procs="", head="torch.OutOfMemoryError: CUDA out of memory. "):
    return (f"{head}Tried to allocate {req}. GPU 0 has a total capacity of {total} of which {free} is free. {procs}"
            "Of the allocated memory 5.87 GiB is allocated by PyTorch, and 297.67 MiB is reserved by PyTorch but unallocated. "
            "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
            "fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")


# a Windows traceback frame (a drive-letter path): the log shows Windows
WIN = '  File "D:\\FramePack\\system\\python\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1751, in _wrapped_call_impl\n'


def test_no_process_listed_and_plenty_free_reads_as_the_system_commit():
    cause, _, ev = top(WIN + _cuda("212.00 MiB", "11.99 GiB", "4.57 GiB"))
    assert cause == "host-ram", ev["causes"]
    assert "page file" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert ev["causes"][1]["id"] == "other", ev["causes"]        # the driver's refusal stays the runner-up
    assert ev["guide"]["id"] == "os-host-ram" and "commit charge" in ev["guide"]["markdown"], ev["guide"]["id"]
    assert [a["guide"]["id"] for a in ev["alternatives"]] == ["os-host-ram", "allocation-refused"], ev["alternatives"]


def test_a_listed_process_keeps_the_driver_reading():
    """A process listed is a Linux build's message (Windows builds list none): the driver's refusal (other)."""
    cause, _, ev = top(WIN + _cuda("212.00 MiB", "11.99 GiB", "4.57 GiB",
                             procs="Including non-PyTorch memory, this process has 6.26 GiB memory in use. "))
    assert cause == "other", ev["causes"]


def test_a_linux_log_or_a_cut_quote_keeps_the_driver_reading():
    """No process listed on Linux is ROCm, or NVML missing or listing nothing; a quote cut before "CUDA out of memory" could
    be ROCm's."""
    linux = '  File "/home/user/app/run.py", line 12, in <module>\n' + _cuda("1.35 GiB", "31.86 GiB", "13.40 GiB")
    assert top(linux)[0] == "other", top(linux)[2]["causes"]
    cut = WIN + _cuda("1.12 GiB", "15.92 GiB", "9.12 GiB", head="")
    assert top(cut)[0] == "other", top(cut)[2]["causes"]


def test_free_not_several_times_the_request_is_not_this_rule():
    cause, _, ev = top(WIN + _cuda("1.50 GiB", "11.99 GiB", "2.10 GiB"))
    assert cause != "host-ram", ev["causes"]
