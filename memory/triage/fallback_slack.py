"""(fix66d) Fragmentation's slack rows yield to Windows sysmem fallback (aud66b finding 11, issue 14 class 5).

When PyTorch reports more allocated than the card holds (predicates.sysmem_fallback: NVIDIA's Windows driver spilled CUDA
allocations into shared system memory), the card was full before the spill, and the cache's unallocated slack sits on
top of a card already overrun: "the cache has room, not in one piece" does not describe that failure, the spill does
(rules_weights' sysmem row). So the two rows that make the slack decide (3.0, 3.2: slack many times the request, or a big
share of the card) do not fire then. The sliver rows (1.4) stay: the sysmem row (1.45) was set over them, and the even
half's one such log labelled fragmentation (batch 194, OOTDiffusion#59: max_split_size_mb helped) reads them.

(fix66g) Only ALLOCATED memory over the card counts here: sysmem_fallback takes the larger of allocated and reserved, and
reserved is allocated plus the very slack these rows read, so reserved alone over the card (6.91 GiB allocated, 2.47 GiB
unallocated, an 8 GiB card) is the cache's own unallocated blocks spilled: fragmentation's case, which the rows keep."""
from .predicates import slack_fits, sysmem_fallback
from .shares import OVER_CARD


def slack_on_card(x) -> bool:
    """The slack would have served the request (predicates.slack_fits), and PyTorch's allocated memory did not overrun
    the card (a sysmem spill)."""
    return slack_fits(x) and not (sysmem_fallback(x) and (x.allocated or 0) > OVER_CARD * x.total)
