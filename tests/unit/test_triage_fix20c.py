"""Review 20b's triage findings (task fix20c): each test failed before its fix. Logs written in the runtimes' own formats
(PyTorch's 2.1+ CUDA message, Python's platform string and uname's kernel name as WSL 2 prints them, llama.cpp's load
lines); numbers made up, expected values by hand."""
import pytest

from support.triage_event import last_event

# --- 3. WSL runs CUDA over the Windows host's WDDM: the system-commit reading counts a log that shows WSL ----------------
REFUSED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.55 GiB "
           "of which 8.20 GiB is free. {procs}Of the allocated memory 14.87 GiB is allocated by PyTorch, and 297.67 MiB is "
           "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
FRAME = ('Traceback (most recent call last):\n'
         '  File "/home/ana/ComfyUI/execution.py", line 496, in execute\n'
         '    output_data = get_output_data(obj, input_data_all)\n')
WSL_LINES = [
    "Platform: Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35\n",     # Python's platform.platform()
    "Linux DESKTOP-7QK2 5.15.167.4-microsoft-standard-WSL2 #1 SMP Tue Nov 5 00:21:55 UTC 2024 x86_64 GNU/Linux\n",  # uname -a
]
PROCESS = "Including non-PyTorch memory, this process has 15.18 GiB memory in use. "


@pytest.mark.parametrize("wsl", WSL_LINES)
def test_no_process_listed_on_a_wsl_log_is_the_system_commit(wsl):
    """A Linux-looking log (a /home path, a Linux kernel) that shows WSL: its CUDA goes through the host's WDDM, so a
    512 MiB request refused with 8.2 GiB free and no process listed is the commit charge, as on Windows."""
    res, ev = last_event(wsl + FRAME + REFUSED.format(procs=""))
    assert ev["platform"]["os"] == "linux", ev["platform"]          # the paths say Linux; WSL is what counts
    assert res["cause"] == "host-ram" and ev["guide"]["id"] == "os-host-ram", (ev["causes"][:2], ev["guide"]["id"])
    assert "WSL" in ev["guide"]["markdown"].split("**Mechanism.**")[0], ev["guide"]["markdown"][:400]


@pytest.mark.parametrize("wsl", WSL_LINES)
def test_a_wsl_log_whose_message_lists_the_process_keeps_the_drivers_refusal(wsl):
    res, ev = last_event(wsl + FRAME + REFUSED.format(procs=PROCESS))
    assert res["cause"] == "other" and "host-ram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:2]


def test_the_same_log_without_wsl_keeps_the_drivers_refusal():
    res, ev = last_event("Platform: Linux-6.8.0-45-generic-x86_64-with-glibc2.39\n" + FRAME + REFUSED.format(procs=""))
    assert res["cause"] == "other" and "host-ram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:2]
