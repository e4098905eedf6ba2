"""(task tri78) A card's total printed beside the failure by a tool, for a failure that gives no figure of its own.

The CUDA samples' deviceQuery prints each card's "Total amount of global memory" (round 111), and nvidia-smi's GPU table
prints, on each card's row, its Memory-Usage column as "<used>MiB / <total>MiB" (facts "cuda_query_total" holds both, in
bytes, by line). Where every card printed the same total, that total is the card's (engine.py reports it as the failure's
"total"). A failure that gives no request and no card figure of its own (an "out of memory" from a runtime's CUDA check:
TVM's for MLC LLM, a miner's, a C++ program's) is then read as rules_weights' tiny-card row reads PyTorch's: on a card of
at most case.TINY_CARD (an integrated GPU's carve-out or a very small card) the weights are what cannot fit."""
from .case import TINY_CARD


def printed_total(x):
    """The card's total deviceQuery or nvidia-smi's table printed, where every card printed the same; else None."""
    totals = set((x.f.get("cuda_query_total") or {}).values())
    return totals.pop() if len(totals) == 1 else None


def tiny_printed(x) -> bool:
    """No figure of the failure's own (no branch read one, no request) and a printed card total of at most TINY_CARD."""
    total = printed_total(x)
    return x.branch is None and not x.req and total is not None and 0 < total <= TINY_CARD
