"""A failure message wrapped over several lines (pasted logs, narrow terminals, a quote a sentence a line): the scanner's
line (scan.Scan._line) and the lines after it joined and read again. Moved from scan.py (the join loop unchanged but for
(fixT) a quote that opens with PyTorch's sentences alone)."""
import re

from . import parse as P

WRAPPABLE = re.compile(r"out of memory\. Tried to allocate|(?:Error|out of memory\.?):? Tried to allocate \d[\d.]{0,20} ?\w{1,5}\.\s*$|(?:CUDA|HIP|XPU) out of memory\.\s*$|max seq len|KV cache is needed|on startup is less than|"
                         r"MPS backend out of memory|DefaultCPUAllocator|model requires more system memory|"
                         # (round 97) PyTorch's second sentence opening a quote, its sentences after it on the next lines
                         r"^\s{0,16}(?:GPU|Device) \d{1,20} has a total capac(?:i)?ty of [^\n]{1,60} is free\.\s*$|"
                         # (round 100) PyTorch's 2.x message quoted from its request, elided ("Tried to allocate 44.00 MiB ... 35.25 MiB is free")
                         r"^\s{0,4}Tried to allocate \d[^\n]{0,40}?(?:\.{3}|\u2026)|"
                         # (round 106) Ollama's offload record broken after its message, its fields on the lines after it
                         r"\bmsg=(?:offload|\"offload to \w{1,12}\")\s*$|"
                         # cudaMallocAsync's message broken after its device (a GUI dialog, a narrow terminal)
                         r"Allocation on device \d+\s*$|"
                         # MLX Swift's fatalError wraps metal::malloc's message (ml-explore/mlx-swift ErrorHandler.swift)
                         r"\[metal::malloc\] Attempting to allocate\s*$|"
                         # (round 88) the TPU runtime's refusal quoted a sentence a line ("Attempting to reserve 19.00G at the bottom
                         # of memory." / "That was not possible. There are 13.10G free, ..."): its first sentence ends the line
                         r"\bAttempting to (?:allocate|reserve) \d[\d.]{0,12}[KMGT]?B?(?: at the bottom of memory)?\.\s*$")


SENTENCED = frozenset(("torch.cuda", "torch.hip", "torch.xpu"))


def join(scan, lineno, text, ev, more):
    """(event, text) of the line at lineno (ev: what it reads alone) joined with the lines after it (more(n)) where they
    continue its message; scan.consumed_until then skips the lines joined."""
    wrap = (ev is None or not ev.get("complete") or ev.get("wrapper")) and WRAPPABLE.search(text)
    # (fixT) a quote that opens with PyTorch's sentences alone ("Tried to allocate 2.00 GiB."): the sentence lines after it
    # are the quote's rest, joined while each adds figures; one that repeats the request or the capacity (sentences a message
    # has once) opens a new quote. Only where no failure is open: inside one, scan._place drops sentences alone, joined or not
    quote = not wrap and ev is not None and ev.get("sentences") and scan.cur is None
    following = more() if wrap or quote else ()
    if wrap and wrap.group().startswith("Allocation on device") and not (
            following and following[0].lstrip().startswith("would exceed")):
        following = ()  # only cudaMallocAsync's own second half continues this line (no join loop per such line)
    if wrap or quote:
        # a message wrapped over several lines (pasted logs, narrow terminals): join and look again, up to the
        # next line that repeats this message unfinished (a new message, not the rest of this one)
        grown = None     # (event, k): the longest join whose every added line added figures to the message
        for k in range(1, len(following) + 1):
            nxt = scan._recognise(following[k - 1])
            if quote and (nxt is None or not (nxt.get("sentences") or nxt.get("cap_open"))
                          or {"requested", "total"} & set(nxt["numbers"]) & set((grown[0] if grown else ev)["numbers"])):
                break
            if ev is not None and nxt is not None and nxt["kind"] == ev["kind"] and not nxt.get("complete") and not (
                    (nxt.get("cap_open") or nxt.get("bracket_open") or nxt.get("sentences")) and "OutOfMemoryError" not in following[k - 1]):
                # ((round 97) PyTorch's second sentence (or (none51) any of its sentences alone) opening the next line continues
                # this one; (trfix) not after the exception's type, which raises the message anew: joined, the line's request was lost)
                break
            again = ev is None and WRAPPABLE.search(following[k - 1])
            if again and again.group() == wrap.group():
                break  # the same cut phrase again: a new message, not the rest of this one
            joined = text.rstrip() + " " + " ".join(x.strip() for x in following[:k])
            ev2 = P.recognise(joined)
            # (cudaMallocAsync's message is whole with its first line: its numbers block follows, read below)
            whole = ev2 and (ev2.get("complete") or ev2["kind"] == "torch.cuda_async")
            if whole and (ev is None or P.PRIORITY.get(ev2["kind"], 0) >= P.PRIORITY.get(ev["kind"], 0)):
                ev, text = ev2, joined
                scan.consumed_until = lineno + k
                grown = None
                break
            # PyTorch's message kept broken at its sentences, a part cut with an ellipsis ("... this process has"): never
            # whole, but each line that adds figures still continues it; the first line that adds none ends it
            # (the request read after PyTorch's type alone, round 64, grows the same way)
            # ((round 95) and the bare first sentence, "CUDA out of memory." ending its line with no figure, where the lines
            # after it reach the card's capacity in PyTorch's words: the rest of the message follows)
            # ((round 97) or the first sentence with its request, "CUDA out of memory. Tried to allocate 490.00 MiB." after a
            # program's own words rather than the exception's type, the capacity on the line after it)
            if ev2 is not None and ev2["kind"] in SENTENCED and (ev is None or quote or ev.get("wrapper") or ev.get("type_request") or ev.get("cap_open") or (
                    ev.get("form") == "partial" and set(ev["numbers"]) <= {"requested"} and "total" in ev2["numbers"])) and len(
                    ev2["numbers"]) > (len(grown[0]["numbers"]) if grown else len(ev["numbers"]) if ev else 0):
                grown = (ev2, joined, k)
            elif grown:
                break
        if grown:
            ev, text = grown[0], grown[1]
            scan.consumed_until = lineno + grown[2]
    return ev, text
