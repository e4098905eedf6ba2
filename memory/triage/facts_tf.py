"""What TensorFlow's own lines tell the scanner: its device blocks (each card's Total/Free memory) and the BFC allocator's
Stats block, read back for the failure they belong to (facts.py's handlers call _tf_device_mem; engine.py reads
bfc_stats_after through facts)."""


def _tf_device_mem(f, lineno, item):
    """TensorFlow 1.x's device blocks ("Found device N", then its Total/Free memory), one per card, by line: the stream
    executor's failure names no card, so tf_device_mem keeps only the figures every card printed alike (one card: its own)."""
    f["tf_mem_lines"][lineno] = item
    cards, dev = {}, 0
    for _, (key, v) in sorted(f["tf_mem_lines"].items()):
        if key == "device":
            dev = v
        else:
            cards.setdefault(dev, {})[key] = v
    f["tf_device_mem"] = {key: v for key, v in next(iter(cards.values()), {}).items()
                          if all(c.get(key) == v for c in cards.values())}


def bfc_stats_after(f, line):
    """The BFC Stats (limit, bytes in use) printed after the failure on `line` and before the next allocator's failure.
    (round 111) TensorFlow 0.x dumped them before its "Ran out of memory trying to allocate" warning: with none after the
    log's first failure, the Stats block before it (no failure before it to own them) is its own."""
    nxt = min((n for n in f["bfc_fail_lines"] if n > line), default=float("inf"))
    out = {}
    for n, (key, v) in sorted(f["bfc_stats"].items()):
        if line < n < nxt:
            out.setdefault(key, v)
    if not out and not any(n < line for n in f["bfc_fail_lines"]):
        # (rev5 B5) one whole block, the last before the failure, and only in TensorFlow 0.x's order: that block ends just
        # before the failure's "Ran out of memory trying to allocate" warning (the chunk map's bar line between); figures of
        # several earlier blocks are not merged, and a block far before the failure is some earlier state's
        block = _last_stats_block(f["bfc_stats"], line)
        if block and line - block[-1][0] <= BFC_STATS_GAP:
            out = {key: v for _, key, v in block}
    return out


BFC_STATS_GAP = 10      # InUse, then MaxInUse, NumAllocs, MaxAllocSize, a blank, the chunk bar, the warning (with room for a few more)


def _last_stats_block(stats, line):
    """The last Stats block (its Limit/InUse lines, adjacent) printed before `line`, as [(lineno, key, value)]."""
    block = []
    for n, (key, v) in sorted(stats.items()):
        if n >= line:
            break
        if not block or key in {k for _, k, _ in block} or n - block[-1][0] > 2:
            block = []      # a new block: a figure repeated, or not adjacent to the last
        block.append((n, key, v))
    return block
