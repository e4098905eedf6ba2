"""(fix66d) Apple MPS's "other allocations" outweighing PyTorch's own: one test for the rows and the guide.

MPSAllocator.mm prints "other allocations" as the Metal device's currentAllocatedSize for this process less PyTorch's own
buffers: memory this process holds outside PyTorch's allocator (MPSGraph's buffers and caches, another framework in the
process), which issue 14 reads as held outside PyTorch and the corpus labels other-process (docs/triage-causes.md). When it
is the larger part (and at least 30 % of the limit), a traceback frame that names an activation-heavy call (attention, a
sampler) says only where the last request came from, not what filled the limit: the frame's activation row yields to it
(rules.py), and the MPS guide says what to do about it (advice flag mps_other_held).

(fix66g) Other programs are not in the figure (MPSAllocator.mm raises when currentAllocatedSize + size passes the limit,
both this process's own), and a request that could not fit even beside PyTorch's own allocations alone (allocated +
requested over the limit) is the request's size, not what the process holds outside PyTorch: no such reading then."""

OTHER_SHARE = 0.3      # other allocations at least this share of the limit (and over PyTorch's own)


def dominates(other, allocated, cap, requested=0) -> bool:
    return (bool(other) and other >= max(allocated or 0, OTHER_SHARE * (cap or 0))
            and (allocated or 0) + (requested or 0) <= (cap or 0))


def held_outside(x) -> bool:
    """The Case's MPS message shows other allocations over PyTorch's own (a possible message: case.impossible_mps)."""
    return x.branch == "mps" and not x.impossible and dominates(x.other_alloc, x.allocated, x.cap, x.req)


def held_outside_numbers(n: dict) -> bool:
    """The same from the message's numbers alone (the guide's flag): the limit as printed, else the sum the Case uses."""
    other, allocated = n.get("other_allocations") or 0, n.get("allocated") or 0
    cap = n.get("max_allowed") or (allocated + other + (n.get("requested") or 0))
    return dominates(other, allocated, cap, n.get("requested"))
