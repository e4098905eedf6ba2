"""Triage after batches 98-102 (round 55). Lines written from PyTorch's caching-allocator message in a container where
NVML lists this process under its host pid with 0 bytes (black-forest-labs/flux#10's form) and from mistral.rs's panic on
cudarc's DriverError (EricLBuehler/mistral.rs#44's form); pids, paths, sizes and models made up, expected values by hand."""
from support.triage_event import top

GIB, MIB = 1 << 30, 1 << 20

# PyTorch holds nearly the whole card; NVML's one entry (this process, seen from a container) reads 0 bytes
LONE_ZERO = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 96.00 MiB. GPU 0 has a total capacity of 15.56 GiB "
             "of which 40.25 MiB is free. Process 2087 has 0 bytes memory in use. Of the allocated memory 15.31 GiB is allocated "
             "by PyTorch, and 9.87 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
             "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
             "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")


def test_lone_zero_byte_process_entry_is_not_other_programs():
    """NVML's figure for the one listed process (0 bytes) is below what PyTorch itself reserved (15.32 GiB): NVML did not
    see this process, so the card less free less that figure is PyTorch's own memory, not other programs' (the rows
    reading others_hold put 15.5 GiB on other processes before). The 0-byte figure itself is still reported."""
    cause, scores, ev = top(LONE_ZERO)
    assert ev["numbers"]["this_process"] == 0, ev["numbers"]
    assert cause == "weights-exceed-vram", ev["causes"]
    assert not any("other processes hold" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_lone_process_entry_that_holds_pytorch_memory_still_reads_others():
    """The boundary: a lone entry at least as large as PyTorch's reserved memory is this process's real figure, and what is
    neither free nor it is still other programs' (here 9.5 GiB of 24): the other-process rows keep reading it."""
    msg = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB "
           "of which 1.20 GiB is free. Process 2087 has 12.94 GiB memory in use. Of the allocated memory 11.80 GiB is "
           "allocated by PyTorch, and 650.00 MiB is reserved by PyTorch but unallocated.\n")
    cause, scores, ev = top(msg)
    assert abs(ev["numbers"]["this_process"] - 12.94 * GIB) < MIB, ev["numbers"]
    assert cause == "other-process", ev["causes"]


MISTRALRS = ("Loading model on Cuda(CudaDevice(DeviceId(3)))...\nModel loaded.\nServing on http://0.0.0.0:8080.\n"
             "thread '<unnamed>' panicked at mistralrs-core/src/pipeline/llama.rs:318:21:\n"
             "Model failed with error `DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")`. Please raise an issue.\n"
             "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")


def test_mistralrs_panic_names_mistral_rs():
    """mistral.rs's panic names its own crate (mistralrs-core): runtime mistral.rs, not Candle, whose cudarc error it
    relays."""
    _, _, ev = top(MISTRALRS)
    assert (ev["runtime"], ev["device_kind"]) == ("mistral.rs", "cuda"), ev


def test_cudarc_error_without_mistralrs_stays_candle():
    """The boundary: the same DriverError with no mistral.rs crate named is Candle's, as before."""
    _, _, ev = top("Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\n")
    assert ev["runtime"] == "candle", ev
