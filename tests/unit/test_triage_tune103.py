"""Triage after batches 103-104 (round 56). Lines written from PyTorch's allocator size check ("Tried to allocate more than
1EB memory", NVIDIA/nccl#1284's form), XLA's BFC allocator message (google-deepmind/alphafold#355's form) and PyTorch's
caching-allocator message quoted a sentence a line: its bracket dropped (karpathy/nanoGPT#236's form), indented under a
rank prefix and elided with "..." (NVIDIA-NeMo/Automodel#1975 and #2673's forms). Ranks, sizes, paths and frames made up;
expected values by hand."""
from support.triage_event import top

from gpu_garden.memory.triage import paste

GIB, MIB = 1 << 30, 1 << 20


def test_more_than_1eb_request_is_a_size_computed_wrong():
    """PyTorch's allocators refuse any size of 2^60 bytes or more before asking the card: no batch or model is that large,
    so the cause is other (before: the bare-message rows read it as the caching allocator's shortage, activations)."""
    log = ("[rank3]: Traceback (most recent call last):\n"
           '[rank3]:   File "/opt/job/sync.py", line 41, in gather_state\n'
           "[rank3]:     dist.all_gather_object(out, state)\n"
           "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.\n")
    cause, scores, ev = top(log)
    assert cause == "other", ev["causes"]
    assert "requested" not in ev["numbers"], ev["numbers"]
    assert any("more than 1 EB" in e for c in ev["causes"][:1] for e in c["evidence"]), ev["causes"]
    # the boundary: the same message with a size the card could be short of is not read this way
    cause2, _, ev2 = top(log.replace("more than 1EB memory", "64.00 GiB"))
    assert cause2 != "other" and ev2["numbers"]["requested"] == 64 * GIB, ev2["causes"]


def test_bfc_request_is_the_printed_size_not_its_rounded_bin():
    """tsl's BFC allocator prints the request (HumanReadableNumBytes) and then the bin size it rounded it up to: the request
    is the first figure (before: the rounded figure was read as the request)."""
    log = ("2022-02-03 04:05:06.789012: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:457] "
           "Allocator (GPU_0_bfc) ran out of memory trying to allocate 12.38GiB (rounded to 13295423744)requested by op\n")
    _, _, ev = top(log)
    assert ev["numbers"]["requested"] == round(12.38 * GIB), ev["numbers"]
    assert ev["numbers"]["requested"] != 13295423744


def test_old_message_broken_after_request_without_its_bracket():
    """PyTorch <= 2.0's message quoted on two lines, the bracket around the card's figures dropped: the figures are read
    (before: only the request, the rest of the message lost)."""
    log = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 44.00 MiB\n"
           "GPU 0; 11.00 GiB total capacity; 10.31 GiB already allocated; 0 bytes free; 10.46 GiB reserved in total by PyTorch\n"
           "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n")
    _, _, ev = top(log)
    n = ev["numbers"]
    assert n["requested"] == 44 * MIB and n["total"] == 11 * GIB and n["free"] == 0, n
    assert n["allocated"] == round(10.31 * GIB) and n["reserved"] == round(10.46 * GIB), n


def test_indented_sentences_under_a_rank_prefix_with_an_ellipsis():
    """The 2.1+ message a sentence a line, the later lines indented under "[rank2]: " and one opened with the quoter's
    "...": total, free and this process's figure are read (before: only the request)."""
    log = ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.12 GiB.\n"
           "         GPU 2 has a total capacity of 79.11 GiB of which 3.40 GiB is free.\n"
           "         ... this process has 75.70 GiB memory in use.\n")
    _, _, ev = top(log)
    n = ev["numbers"]
    assert n["total"] == round(79.11 * GIB) and n["free"] == round(3.40 * GIB), n
    assert n["this_process"] == round(75.70 * GIB), n


def test_elided_allocated_sentence_on_its_own_line():
    """"... N is allocated by PyTorch ..." on the line after the capacity sentence, a frame after it, is the message's
    allocated figure (before: not read)."""
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.48 GiB.\n"
           "GPU 6 has a total capacity of 79.11 GiB of which 1.32 GiB is free.\n"
           "... 72.84 GiB is allocated by PyTorch ...\n"
           '  File ".../parallel/_gather.py", line 91, in alloc_out\n'
           "    out = torch.empty(numel, dtype=dtype, device=dev)\n")
    _, _, ev = top(log)
    assert ev["numbers"]["allocated"] == round(72.84 * GIB), ev["numbers"]


def test_sentence_join_leaves_other_lines_alone():
    """Only the message's own sentences are joined: a line after it that is not one stays a line of its own."""
    buf = (b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.\n"
           b"GPU 1 has a total capacity of 79.11 GiB of which 812.00 MiB is free.\n"
           b"    ... 74.02 GiB of checkpoints written so far\n")
    out = paste.undo(buf).split(b"\n")
    assert any(b"is free" in ln and b"GPU 1 has" in ln for ln in out), out
    assert not any(b"is free" in ln and b"checkpoints" in ln for ln in out), out
