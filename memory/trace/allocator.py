"""A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, default config), so a traced
sequence of allocations and frees can be compared with torch.cuda.max_memory_allocated / max_memory_reserved.

Rules modelled (defaults: no max_split_size, no roundup_power2_divisions, no expandable segments, one stream):
- every request is rounded up to a multiple of 512 B (at least 512 B);
- requests <= 1 MiB come from the small pool, which grows in 2 MiB segments;
- larger requests come from the large pool: 1-10 MiB requests get a 20 MiB segment, >= 10 MiB requests a segment
  rounded up to 2 MiB;
- a free request is served by the best fitting cached block (smallest size, then lowest address); it is split when the
  remainder is >= 512 B (small pool) or > 1 MiB (large pool), otherwise the whole block is handed out and counted
  as allocated;
- freed blocks merge with free neighbours of the same segment; segments are never returned (no empty_cache).
Pure Python, no torch: the tracer feeds it sizes.
"""
from bisect import bisect_left, insort

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20          # largest "small" request
SMALL_BUFFER = 2 << 20        # small pool segment
LARGE_BUFFER = 20 << 20       # segment for 1-10 MiB requests
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


def round_size(size: int) -> int:
    if size < MIN_BLOCK:
        return MIN_BLOCK
    return MIN_BLOCK * ((size + MIN_BLOCK - 1) // MIN_BLOCK)


def segment_size(size: int) -> int:
    """cudaMalloc size for a rounded request that no cached block can serve."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


class _Block:
    __slots__ = ("addr", "size", "small", "free", "prev", "next")

    def __init__(self, addr, size, small):
        self.addr, self.size, self.small = addr, size, small
        self.free, self.prev, self.next = True, None, None


class CachingAllocatorModel:
    def __init__(self):
        self._pools = {True: [], False: []}   # sorted [(size, addr)] of free blocks per pool (small?)
        self._by_addr = {}                    # addr -> free block
        self._next_addr = 0
        self.allocated = self.reserved = 0
        self.peak_allocated = self.peak_reserved = 0
        self.segments = 0

    def malloc(self, nbytes: int):
        if nbytes <= 0:
            return None
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        pool = self._pools[small]
        i = bisect_left(pool, (size, -1))
        if i < len(pool):
            _, addr = pool.pop(i)
            block = self._by_addr.pop(addr)
        else:
            seg = segment_size(size)
            block = _Block(self._next_addr, seg, small)
            self._next_addr += seg
            self.reserved += seg
            self.segments += 1
            self.peak_reserved = max(self.peak_reserved, self.reserved)
        remaining = block.size - size
        if (remaining >= MIN_BLOCK) if small else (remaining > SMALL_SIZE):
            rest = _Block(block.addr + size, remaining, small)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            self._insert(rest)
        block.free = False
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block

    def free(self, block) -> None:
        if block is None:
            return
        self.allocated -= block.size
        block.free = True
        prev, nxt = block.prev, block.next
        if prev is not None and prev.free:
            self._remove(prev)
            block.addr, block.size, block.prev = prev.addr, prev.size + block.size, prev.prev
            if block.prev is not None:
                block.prev.next = block
        if nxt is not None and nxt.free:
            self._remove(nxt)
            block.size += nxt.size
            block.next = nxt.next
            if block.next is not None:
                block.next.prev = block
        self._insert(block)

    def _insert(self, block):
        insort(self._pools[block.small], (block.size, block.addr))
        self._by_addr[block.addr] = block

    def _remove(self, block):
        pool = self._pools[block.small]
        i = bisect_left(pool, (block.size, block.addr))
        del pool[i]
        del self._by_addr[block.addr]


def replay(events, sizes, loaded=0) -> dict:
    """events: ints, i >= 0 allocates allocation i, ~i frees it; sizes[i] its bytes. loaded: how many leading events
    load the weights; the state after them is returned too (loaded_allocated, loaded_reserved), so that the forward's
    own excess, forward_excess = (reserved_peak - allocated_peak) - (loaded_reserved - loaded_allocated), can be told
    from the weights' packing into segments."""
    model, blocks = CachingAllocatorModel(), {}
    at_load = (0, 0)
    for i, e in enumerate(events):
        if i == loaded:
            at_load = (model.allocated, model.reserved)
        if e >= 0:
            blocks[e] = model.malloc(sizes[e])
        else:
            model.free(blocks.pop(~e, None))
    if loaded >= len(events):
        at_load = (model.allocated, model.reserved)
    excess = (model.peak_reserved - model.peak_allocated) - (at_load[1] - at_load[0])
    return {"allocated_peak": model.peak_allocated, "reserved_peak": model.peak_reserved,
            "segments": model.segments, "loaded_allocated": at_load[0], "loaded_reserved": at_load[1],
            "forward_excess": excess}
