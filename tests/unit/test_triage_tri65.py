"""Task tri65: a training loop's own per-step lines print the allocated memory (facts "step_mem"; predicates.step_mem_grew,
one leak row in rules.py). Every step of a loop does the same work, so what stays allocated between steps is flat once the
first steps are done; a figure that rises at every print before the failure is memory kept from step to step. Lines made up
in a trainer's layout ("Epoch: [0] [  N/6250] mem_allocated: X MB ..."), PyTorch's message after them; expected by hand."""
from support.triage_event import read as _read

_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
        "of which 12.56 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use. Of the allocated "
        "memory 22.80 GiB is allocated by PyTorch, and 402.11 MiB is reserved by PyTorch but unallocated.\n")


def _log(figures, name="mem_allocated", after=False):
    steps = "".join(f"Epoch: [0] [{i:4d}/6250] loss: 1.{i:02d} {name}: {mb} MB mem_reserved: 23000 MB\n"
                    for i, mb in enumerate(figures))
    return _OOM + steps if after else steps + _OOM


def test_rising_at_every_print_reads_leak():
    # 1200 -> 5400 MB over six prints, never lower (4.5x, 4.1 GiB up): fails without the row (PyTorch's message alone
    # reads activations or weights-exceed-vram)
    assert _read(_log([1200, 1900, 2500, 3600, 4300, 5400]))[0] == "leak"


def test_flat_or_falling_figures_are_no_leak():
    # a flat loop, and a sweep whose figure falls back between larger steps (a bigger step, not memory kept)
    assert _read(_log([5400] * 6))[0] != "leak"
    assert _read(_log([1200, 3600, 1200, 5400, 1200, 6800]))[0] != "leak"


def test_thresholds():
    # four prints are too few; five read (the same rise)
    assert _read(_log([1200, 2500, 3600, 5400]))[0] != "leak"
    assert _read(_log([1200, 2500, 3600, 4300, 5400]))[0] == "leak"
    # under twice the first figure (5000 -> 9000 MB, 1.8x), and under 1 GiB up (300 -> 1000 MB, 700 MB)
    assert _read(_log([5000, 6000, 7000, 8000, 9000]))[0] != "leak"
    assert _read(_log([300, 450, 600, 800, 1000]))[0] != "leak"


def test_peak_figure_and_later_prints_do_not_count():
    # max_mem_allocated is a peak (it never falls), not what stays allocated between steps; prints after the failure
    # belong to no step before it
    assert _read(_log([1200, 1900, 2500, 3600, 4300, 5400], name="max_mem_allocated"))[0] != "leak"
    assert _read(_log([1200, 1900, 2500, 3600, 4300, 5400], after=True))[0] != "leak"
