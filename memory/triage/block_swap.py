"""(fix66d) A wrapper pack's block swap with non-blocking transfers, read from its own lines (issue 14, class 6).

kijai's ComfyUI-WanVideoWrapper (wanvideo/modules/model.py, and the other wrappers that share its block swap) prints
"Swapping N transformer blocks" and a tqdm bar "Initializing block swap" when it moves N blocks to the offload device,
then (later versions) "Non-blocking memory transfer: True|False"; each step it moves the blocks back with
`block.to(self.main_device, non_blocking=self.use_non_blocking)`. Non-blocking transfers keep the swapped blocks in
page-locked (pinned) host RAM (the node's tooltip: "reserves more RAM"), so a bare driver-level "CUDA error: out of
memory" there (no allocator numbers: not the caching allocator's VRAM) is that pinned RAM running out. case.py gives it to
the pinned-host reading (rules_host) as the summary line already was.

(fix66g) Only "Non-blocking memory transfer: True" says the moves are non-blocking: the source line is the same whatever
the setting, and the node's use_non_blocking defaults to False (pageable copies, nothing pinned)."""
import re

FACT = re.compile(r"\bSwapping (\d{1,4}) transformer blocks\b|\bInitializing block swap\b|Non-blocking memory transfer: (True|False)\b")
KEYS = ("transformer block", "Initializing block swap", "Non-blocking memory transfer")


def read(s, f, m, *_):
    """facts.py's handler: what the log shows of a block swap (blocks, whether it ran, non-blocking as printed)."""
    bs = f["block_swap"]
    if m.group(1):
        bs.update(swap=True, blocks=int(m.group(1)))
    elif m.group(2):
        bs["nonblocking"] = m.group(2) == "True"
    else:
        bs["swap"] = True


def pinned(f):
    """The pinned-host words for a block swap whose transfers are non-blocking, or None: a swap seen and non-blocking
    printed True."""
    bs = f.get("block_swap") or {}
    if not bs.get("swap") or bs.get("nonblocking") is not True:
        return None
    n = f" of {bs['blocks']} transformer blocks" if bs.get("blocks") else ""
    return f"block swap{n} with non-blocking transfers"
