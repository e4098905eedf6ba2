"""PyTorch's caching-allocator message quoted as its sentences alone: a note, a comment or a report that copies one or
two sentences of the message and none of its "out of memory" words ("Tried to allocate 84.00 MiB", "Process 947712 has
4.17 GiB memory in use. Process 947858 has 4.01 GiB memory in use"), or keeps its first words and elides the rest ("CUDA
out of memory ... total capacity of 7.60 GiB"). The fuller forms are read in torch_readers.py.

c10/cuda/CUDACachingAllocator.cpp (torch 2.14.1, the strings of libc10_cuda.so) builds the message from these sentences,
each a row of SENTENCES: "CUDA out of memory. Tried to allocate {req}. GPU {i} has a total capacity of {total} of which
{free} is free. [Process {pid} has {n} memory in use. ]Including non-PyTorch memory, this process has {n} memory in use.
Of the allocated memory {a} is allocated by PyTorch, [with {p} allocated in private pools (e.g., CUDA Graphs), ]and {r} is
reserved by PyTorch but unallocated." A HIP build prints the same words, so a line without the first words leaves the
device to the log."""
import re

from . import error_patterns as RX
from .prefilter import _gate
from .processes import split_listed
from .text import size
from .torch_readers import _of_alloc

_N = r"(\d{1,20})"
# one row per sentence: (name, pattern read at the sentence's start). A quote may stop a sentence early, so every part
# after the first figure is optional; after an ellipsis a sentence may also start late (its subject elided)
SENTENCES = (
    ("request", re.compile(r"Tried to allocate " + RX.SZ)),
    ("capacity", re.compile(r"(?:(?:GPU|Device) " + _N + r" has )?(?:a )?total capacity of " + RX.SZ
                            + r"(?: of which " + RX.SZ + r" is free)?")),
    ("process", re.compile(r"Process " + _N + r" has " + RX.SZ + r" memory in use")),
    ("self", re.compile(r"(?:Including non-PyTorch memory, )?this process has " + RX.SZ + r" memory in use")),
    ("allocated", re.compile(r"Of the allocated memory " + RX.SZ + r" is allocated by PyTorch(?:, with " + RX.SZ
                             + r" allocated in private pools \(e\.g\., (?:CUDA|HIP) Graphs\))?(?:,? and " + RX.SZ
                             + r" is reserved by PyTorch but unallocated)?")),
)
# the message's first words, its sentences elided by the quoter ("CUDA out of memory ... total capacity of 7.60 GiB")
_HEAD = re.compile(r"(?P<dev>CUDA|HIP|XPU) out of memory\.?[ \t]{0,4}(?:\.{3}|\u2026)")
_SEP = re.compile(r"(?:[ \t]|\.(?!\d)|\u2026)*")
_ELLIPSIS = re.compile(r"\.{3}|\u2026")


def _sentences(text, pos):
    """The rows read one after another from pos to the end of text: [(name, match)], or None where anything else stands
    (a line with words of its own is prose, not the message). A capacity sentence without its subject ("total capacity of
    N") is read only after an ellipsis."""
    found, cut = [], pos > 0
    while True:
        sep = _SEP.match(text, pos)
        cut = cut or bool(_ELLIPSIS.search(sep.group()))
        pos = sep.end()
        if pos >= len(text):
            return found
        for name, rx in SENTENCES:
            m = rx.match(text, pos)
            if m and (name != "capacity" or m.group(1) is not None or cut):
                found.append((name, m))
                pos, cut = m.end(), False
                break
        else:
            return None


@_gate("Tried to allocate ", "total capacity of ", "memory in use", "Of the allocated memory ")
def torch_sentences(line):
    """A line made of nothing but the message's sentences (rows of SENTENCES, in any order a quote keeps them), or of its
    first words and an ellipsis before them: the message, cut. A lone capacity sentence is not read (prose gives a card's
    capacity in the same words; torch_readers._torch_capacity_open reads it with its free figure when the card is full)."""
    text = line.strip()
    head = _HEAD.match(text)
    found = _sentences(text, head.end() if head else 0)
    if not found or (not head and [n for n, _ in found] == ["capacity"]):
        return None
    nums, procs = {}, []
    for name, m in found:
        if name == "request":
            nums["requested"] = size(m.group(1))
        elif name == "capacity":
            nums["total"] = size(m.group(2))
            if m.group(3):
                nums["free"] = size(m.group(3))
        elif name == "process":
            procs.append((int(m.group(1)), size(m.group(2))))
        elif name == "self":
            nums["this_process"] = size(m.group(1))
        else:
            _of_alloc(nums, m)     # the allocated sentence's figures as every reader takes them
    ev = {"kind": {"HIP": "torch.hip", "XPU": "torch.xpu"}.get(head and head.group("dev"), "torch.cuda"), "form": "partial",
          "device_kind": None, "numbers": nums, "runtime": "pytorch", "complete": False, "no_prefix": True, "sentences": True}
    if procs:
        nums["other_processes"] = sum(s for _, s in procs)
        if "this_process" not in nums:
            split_listed(nums, procs)
        if "other_processes" in nums:     # (rev51) a lone entry is this process's: no other's largest (as torch_readers)
            ev["others_largest"] = max(s for _, s in procs)
            ev["others_second"] = sorted((s for _, s in procs), reverse=True)[1] if len(procs) > 1 else 0    # (op53)
    if head:
        ev["device_kind"] = {"CUDA": "cuda", "HIP": "rocm", "XPU": "xpu"}[head.group("dev")]
    return ev
