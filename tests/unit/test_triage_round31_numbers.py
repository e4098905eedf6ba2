"""Triage round 31's numbers patch (proposed in round 31, applied in round 32): PyTorch's per-process tail quoted with "This"
capitalised (the "Including non-PyTorch memory," clause dropped) and cut after "is allocated by PyTorch." or after the
private pools. Lines written from c10/cuda/CUDACachingAllocator.cpp's format, not copies of corpus cases."""
from support.triage_event import last_event

HEAD = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 36.00 MiB. GPU 0 has a total capacity of 23.55 GiB of which 39.00 MiB is free."
GiB, MiB = 1 << 30, 1 << 20


def test_a_cut_tail_keeps_what_it_says():
    _, ev = last_event(HEAD + " This process has 23.01 GiB memory in use. Of the allocated memory 21.52 GiB is allocated by PyTorch.\n")
    n = ev["numbers"]
    assert n["this_process"] == round(23.01 * GiB) and n["allocated"] == round(21.52 * GiB), n
    assert "reserved" not in n and "reserved_unallocated" not in n, n


def test_the_whole_tail_still_reads_reserved():
    _, ev = last_event(HEAD + " Including non-PyTorch memory, this process has 23.01 GiB memory in use. Of the allocated memory "
                       "21.52 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated.\n")
    n = ev["numbers"]
    assert n["reserved_unallocated"] == round(1.02 * GiB) and n["reserved"] == n["allocated"] + n["reserved_unallocated"], n


def test_a_tail_cut_after_the_private_pools_keeps_them():
    """PyTorch names CUDA graphs' private pools before the reserved part; a quote that stops there keeps both numbers."""
    _, ev = last_event(HEAD + " Process 9 has 23.40 GiB memory in use. Of the allocated memory 22.80 GiB is allocated by "
                       "PyTorch, with 2.10 GiB allocated in private pools (e.g., CUDA Graphs)\n")
    n = ev["numbers"]
    assert n["allocated"] == round(22.80 * GiB) and n["private_pools"] == round(2.10 * GiB), n
    assert "reserved" not in n, n
