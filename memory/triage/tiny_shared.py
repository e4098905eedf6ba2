"""(task tri86) A card of at most case.TINY_CARD that PyTorch's own message shows shared: other processes held at least as
much of it as this process did.

PyTorch's caching allocator writes its out-of-memory message after it has freed its cache and retried
(c10/cuda/CUDACachingAllocator.cpp). Since 2.1 the message reports the card's memory by process
(reportProcessMemoryInfo): the NVML figure for every process with a context on the card, this one's as "this process
has X memory in use" (its context, cache and tensors, all of it), the others' as "Process N has Y memory in use".
case.py reads what other processes hold (case.others) from the listed entries, or as the card less free less this
process's figure.

On a card of 2 GiB or less the tiny-card weights row reads the card's size alone: on a carve-out or a card that small,
the model is what cannot fit. Where the message's own figures say other processes held at least as much of the card as
this process did, and more than the request lacked, this process's weights did not fill the card: half of it or more
was never this process's. The card was taken by another program, and freeing it covers the shortfall. There the
tiny-card row stands aside (rules_weights) and the other-process row below reads it, at others_hold's weight: the same
reading, without its desktop floor (shares.desktop_share, 1.5 GiB at least: most of a tiny card, so others_hold never
reads one). The bar is this process's own figure, not a share of the card: a desktop on a small card beside a process
that holds more than it stays with the weights. A failure PyTorch re-raises from a DataLoader worker ("Caught
OutOfMemoryError in DataLoader worker process N", torch/_utils.py ExceptionWrapper) is the worker's: "this process" is the
worker and the other process the program's own main process (review rev66a #4), so the row does not read it."""
import re

from ..units import fmt_bytes
from .rule_row import Rule


# the fact the row reads (fact_patterns.FACTS / FACT_KEYS; facts.HANDLERS): a DataLoader worker's failure re-raised
FACT = ("dataloader_worker", re.compile(r"\bin DataLoader worker process \d"))
FACT_WORDS = ("DataLoader worker process",)


def others_fill_tiny(x) -> bool:
    """A tiny card (case.tiny) whose message gives this process's own figure ("this process has X memory in use"), and
    other processes (case.others) held at least that much and at least the shortfall; not a DataLoader worker's."""
    mine = x.n.get("this_process")
    return bool(x.tiny and x.others is not None and mine is not None and not x.f.get("dataloader_worker")
                and x.others >= mine and x.others >= x.short)


TINY_SHARED = [
    # (tri86) over the working-buffer rows (activations 1.5) and the others' share row (other-process 1.5); the tiny-card
    # weights row (6.0) stands aside where this holds
    Rule("other-process", 3.0, others_fill_tiny,
         lambda x: f"other processes hold {fmt_bytes(x.others)} of the {fmt_bytes(x.total)} card, as much as this process's "
                   f"{fmt_bytes(x.n['this_process'])} or more (PyTorch's figures by process): the small card was shared, and "
                   "freeing the other programs' memory covers the request; stop them (nvidia-smi lists them), or run on the CPU"),
]
