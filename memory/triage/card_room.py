"""(task tri73) Whether PyTorch's own figures say the card still had room when the one failing request was refused.

PyTorch's caching allocator raises its out-of-memory error only after it has returned every idle cached block to the
driver and retried (c10/cuda/CUDACachingAllocator.cpp, the OOM branch: "at this point free_cached_blocks has already
returned all possible cached memory to the driver"), and the message's "free" figure is the driver's own
(cudaMemGetInfo, "free memory as reported by the CUDA API"). So where that figure is past one parameter tensor's share of
the card (predicates.PARAM_SHARE) and the request is larger still, the card was not full: what was placed on it, the
model's weights included, left more room than any one weight needs, and the one request that failed was bigger than all of
that room by itself: a working buffer, not the model being placed. The tiny-card weights row ("the weights cannot fit",
a prior from the card's size alone) stands aside there.

(task tri74, review rev64 #5) On a card of 2 GiB or less one weight can itself be far past that share (Llama-2-7B's
embedding is 32000 x 4096 x 2 bytes = 250 MiB, 12.5 % of a 2 GiB card). A load places the weights tensor by tensor, so the
free figure shrinks until one tensor does not fit: a free figure past the share beside a larger request is then a load
refused on its next weight, and by itself does not show the card was not full of weights. What a load leaves behind is in
PyTorch's allocated figure (the live tensors, every weight placed so far among them): the reading now also needs the
message to say PyTorch held under half the card (HELD_SHARE), the rest being free, cached or outside PyTorch."""
from .predicates import PARAM_SHARE

# PyTorch's live tensors at or past this share of the card are most of it: what the tiny-card prior reads as the weights
HELD_SHARE = 0.5


def held(n):
    """What the message says PyTorch held: its allocated figure, else the process's own in-use figure (PyTorch 2.x's
    "this process has ... memory in use", which counts the allocated memory and more, so under a share it still bounds
    the allocated figure); None where it says neither."""
    for key in ("allocated", "this_process"):
        if n.get(key) is not None:
            return n[key]
    return None


def room_left(x) -> bool:
    """The message itself gave the free figure (not one worked out from the reserved one), it is past PARAM_SHARE of the
    card, the failing request is larger than it, and (tri74) the message says PyTorch held under HELD_SHARE of the card."""
    free, now = x.n.get("free"), held(x.n)
    return (bool(x.total) and free is not None and free > PARAM_SHARE * x.total and x.req > free
            and now is not None and now < HELD_SHARE * x.total)
