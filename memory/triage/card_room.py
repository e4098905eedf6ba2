"""(task tri73) Whether PyTorch's own figures say the card still had room when the one failing request was refused.

PyTorch's caching allocator raises its out-of-memory error only after it has returned every idle cached block to the
driver and retried (c10/cuda/CUDACachingAllocator.cpp, the OOM branch: "at this point free_cached_blocks has already
returned all possible cached memory to the driver"), and the message's "free" figure is the driver's own
(cudaMemGetInfo, "free memory as reported by the CUDA API"). So where that figure is past one parameter tensor's share of
the card (predicates.PARAM_SHARE) and the request is larger still, the card was not full: what was placed on it, the
model's weights included, left more room than any one weight needs, and the one request that failed was bigger than all of
that room by itself: a working buffer, not the model being placed. The tiny-card weights row ("the weights cannot fit",
a prior from the card's size alone) stands aside there."""
from .predicates import PARAM_SHARE


def room_left(x) -> bool:
    """The message itself gave the free figure (not one worked out from the reserved one), it is past PARAM_SHARE of the
    card, and the failing request is larger than it."""
    free = x.n.get("free")
    return bool(x.total) and free is not None and free > PARAM_SHARE * x.total and x.req > free
