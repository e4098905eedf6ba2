"""PyTorch's own out-of-memory messages: the caching allocator's (CUDA, HIP, XPU, MUSA; every wording since 1.x), the
bare and cut forms, cudaMallocAsync's block and MPS's message. Each reader takes one cleaned line and returns None or
an event dict (kind, runtime, device_kind, numbers in bytes); parse.RECOGNISERS lists them in the order tried."""
import re

from . import error_patterns as RX
from .other_runtimes import upper_case as _upper_case
from .prefilter import _gate
from .processes import split_listed
from .shares import OVER_CARD, SLIVER
from .text import size

# (round 72) torch.distributed's prefix on a rank's lines ("[rank0]: torch.OutOfMemoryError: ..."): processes.split_listed
_RANK = re.compile(r"\s{0,8}\[rank\d{1,5}\]:")


def _dev_kind(dev):
    return {"CUDA": "cuda", "HIP": "rocm", "ROCm": "rocm", "XPU": "xpu", "MUSA": "musa", "cuda": "cuda", "hip": "rocm"}.get(dev, "cuda")


def _device_index(g):
    """The GPU index of PyTorch's message: digits, or the int8 printed as a character (empty: a NUL stripped, unknown)."""
    return int(g) if g.isdigit() else ord(g) if g else None


# (trfix) after a quote's ellipsis the sentences read stop at the next message ("out of memory", "has a total capac") or a
# closing quote character (a list of messages on one line); the figures read there past shares.OVER_CARD of the card are dropped
_NEXT_MESSAGE = re.compile(r"out of memory|has a total capac|[\"'\u2019\u201d]")
# (round 100) the slack's figure before PyTorch's own words for it, "is" kept or dropped (bounded, linear)
_RU_ANY = re.compile(RX.SZ + r" (?:is )?reserved by PyTorch but unallocated")
_AFTER_ELLIPSIS = ("this_process", "other_processes", "allowed", "allocated", "private_pools", "reserved_unallocated", "reserved")


@_gate(RX.TORCH_NEW)
def _torch_new(line):
    m = RX.TORCH_NEW.search(line)
    if not m:
        return None
    nums = {"requested": size(m.group("req")), "total": size(m.group("total"))}
    o = _rest_numbers(nums, m, line)
    kind = {"CUDA": "torch.cuda", "HIP": "torch.hip", "XPU": "torch.xpu"}[m.group("dev")]
    form = "2.1" if "capacty" in line else "current"
    return {"kind": kind, "form": form, "device_kind": _dev_kind(m.group("dev")), "device_index": _device_index(m.group("gpu")),
            "numbers": nums, "runtime": "pytorch", "complete": bool(o and o.group(3))}


def _rest_numbers(nums, m, line):
    """The card's free figure and the sentences after the capacity (this process, the others, the allocated and reserved
    figures), into nums; the allocated sentence's match (None without it)."""
    rest = m.group("rest")
    cut = rest is None
    if cut:     # (round 97) or the sentences kept after a quote's ellipsis, up to the next message or the quote's end (trfix)
        rest = line[m.end():]
        e = _NEXT_MESSAGE.search(rest)
        rest = rest[:e.start()] if e else rest
    if m.group("free"):
        nums["free"] = size(m.group("free"))
    procs = [(int(p), size(s)) for p, s in RX.PROC.findall(rest)]
    me = RX.SELF.search(rest)
    if me:
        nums["this_process"] = size(me.group(1))
    if procs:
        nums["other_processes"] = sum(s for _, s in procs)
    a = RX.ALLOWED.search(rest)
    if a:
        nums["allowed"] = size(a.group(1))
    o = RX.OF_ALLOC.search(rest)
    if o:
        _of_alloc(nums, o, reserved=True)
    # (round 100) the slack's own words kept, the sentence around it retyped ("..., with N reserved by PyTorch but unallocated");
    # not where "Of the allocated memory" is there unread (a line rejoined without its space: the other glue reads it whole)
    r = _RU_ANY.search(rest) if "reserved_unallocated" not in nums and (o or "allocated memory" not in rest) else None
    if r:
        nums["reserved_unallocated"] = size(r.group(1))
        if "allocated" in nums:
            nums["reserved"] = nums["allocated"] + nums["reserved_unallocated"]
    c = RX.POOLS_CUT.search(rest) if "private_pools" not in nums else None
    if c:
        nums["private_pools"] = size(c.group(1))     # (round 97) the pools' figure alone after an ellipsis
    if procs and not me:
        split_listed(nums, procs, rank=bool(_RANK.match(line)))      # which listed process is this one (processes.py)
    if me and "reserved" in nums and nums["this_process"] < nums["reserved"]:
        del nums["this_process"]    # NVML could not see this process ("0 bytes"): the figure means nothing
    if cut and nums.get("total"):
        # (trfix) a figure after the ellipsis past the card is not this message's (another message's, prose's): dropped
        for k in [k for k in _AFTER_ELLIPSIS if nums.get(k) is not None and nums[k] > OVER_CARD * nums["total"]]:
            del nums[k]
    return o


# (trfix) the message's own sentences after its capacity one
_CAP_NEXT = re.compile(r"^\s{0,4}(?:Tried to allocate |Including non-PyTorch memory|Process \d{1,20} has |This process has |Of the allocated memory )")


@_gate("has a total capac")  # capacity, and older PyTorch's "capacty" (TORCH_CAP_OPEN reads both)
def _torch_capacity_open(line):
    """(round 97) PyTorch's message quoted from its second sentence ("GPU 0 has a total capacity of T of which F is free.",
    RX.TORCH_CAP_OPEN): a cut message, the request unknown, the device left to the log; at a line's start only with its free
    figure; after the exception type a request in the sentences after it ("... is free.  Tried to allocate 28.00 MiB.") is read."""
    m = RX.TORCH_CAP_OPEN.search(line)
    if not m:
        return None
    nums = {"total": size(m.group("total"))}
    rest = m.group("rest") or ""
    # (trfix, review B3) without the exception type, the sentence is the message's only with its card nearly full (free under
    # SLIVER of it: a mostly free card refused nothing) or a sentence of the message after it; prose that gives a capacity is not
    if not ("OutOfMemoryError" in line[:m.start("gpu")] or m.group("free") and (
            size(m.group("free")) < SLIVER * nums["total"] or _CAP_NEXT.search(rest))):
        return None
    _rest_numbers(nums, m, line)
    r = RX.TORCH_REQ_AFTER.search(rest)
    if r is None and m.group("rest") is None:
        # (round 101) cut at the free figure by an ellipsis: the request among the sentences kept after it, before the next message
        cut = line[m.end():]
        e = _NEXT_MESSAGE.search(cut)
        r = RX.TORCH_REQ_CUT.search(cut[:e.start()] if e else cut)
    if r:
        nums["requested"] = size(r.group(1))
    return {"kind": "torch.cuda", "form": "partial", "device_kind": None, "device_index": _device_index(m.group("gpu")),
            "numbers": nums, "runtime": "pytorch", "complete": False, "no_prefix": True, "cap_open": True}


@_gate("out of memory. tried to allocate")
def _torch_lower(line):
    if "out of memory. tried to allocate" not in line:
        return None
    fixed = _upper_case(line)
    return _torch_new(fixed) or _torch_old(fixed)


@_gate("Tried to allocate ")
def _torch_no_prefix(line):
    """PyTorch's caching-allocator message quoted from "Tried to allocate" on, its "CUDA out of memory." (or HIP's) cut off
    (a copy that starts mid-line): read as the full message, the device left to the log (a HIP build prints the same words)."""
    i = line.find("Tried to allocate ")
    if i < 0 or "out of memory" in line:
        return None
    if "has a total capac" not in line and "total capacity;" not in line:
        # only the request left, right after PyTorch's exception type: a cut message, its card's figures unknown (round 64,
        # NVIDIA-NeMo/RL#2871's shape)
        m = RX.TORCH_TYPE_REQ.search(line)
        if not m:
            return _torch_lead_cut(line)
        nums = {"requested": size(m.group(1))}
        f = RX.TORCH_CUT_FREE.search(line, m.end())     # (round 78) "... M is free": the card's free figure, its total elided
        if f:
            nums["free"] = size(f.group(1))
        return {"kind": "torch.cuda", "form": "partial", "device_kind": None, "numbers": nums,
                "runtime": "pytorch", "complete": False, "no_prefix": True, "type_request": True}
    fixed = "CUDA out of memory. " + line[i:]
    # (round 104) the <= 2.0 bracket cut by its quoter after its allocated figure, the line's end ("Tried to allocate 38.00 MiB
    # (GPU 0; 15.78 GiB total capacity; 14.10 GiB already allocated"): read as _torch_bare reads it after its prefix; a line
    # that stops before that figure ("... total capacity; ") is left to scan.py's wrap joins, the rest on the next line
    ev = _torch_new(fixed) or _torch_old(fixed) or _bracket_cut(fixed)
    if ev:
        ev.update(device_kind=None, no_prefix=True)
    return ev


def _bracket_cut(fixed):
    ev = _torch_bare(fixed)
    return ev if ev and "allocated" in ev["numbers"] else None


# (round 100) PyTorch's 2.x message quoted from "Tried to allocate N" at a line's start, the rest elided by the quoter's own
# ellipsis up to the sentences kept ("Tried to allocate 44.00 MiB ... 35.25 MiB is free", "Tried to allocate 60.00 MiB. GPU 1
# ... 48.06 MiB is free", "Tried to allocate 1.76 GiB ... this process has 5.89 GiB memory in use"); bounded, linear
# ((round 106) or "GPU N has" before the ellipsis, the capacity elided after its verb: "Tried to allocate 156.00 MiB. GPU 0 has ...
# 39.88 MiB is free.")
_LEAD_CUT = re.compile(r"^\s{0,4}Tried to allocate " + RX.SZ + r"(?:\. ?(?:GPU|Device) \d{1,20}(?: has)?)?(?=\s{0,4}(?:\.{3}|\u2026))")
_RU_CUT = re.compile(r"(?:\.{3}|\u2026|, and)\s{1,4}" + RX.SZ + r" is reserved by PyTorch but unallocated")
# (round 101) the free figure right after the request's ellipsis, its "is" (or "of which") retyped away: "Tried to allocate
# 1.56 GiB ... 558.56 MiB free" (the <= 2.0 bracket's own "M free"); read with .match on the text after the request
# ((round 106) or after the capacity sentence's "GPU N has", the rest of it elided: ". GPU 0 has ... 39.88 MiB is free.")
_FREE_AFTER_REQ = re.compile(r"(?:\.[ \t]{0,4}(?:GPU|Device) \d{1,20} has)?\.?[ \t]{0,4}(?:\.{3}|\u2026)[ \t]{1,4}" + RX.SZ
                             + r" (?:is )?free\b")
# (rev2 B4; rev3 B4) what may stand between the request's sentence (or its free figure) and a process sentence PyTorch
# wrote after it: no words, only a quoter's separators (stop, blank, ellipsis, "[...]", ";", a table's "|", "<br>", a
# repr's literal "\n", a bullet), the capacity clause cut down to its free figure ("... of which 3.69 MiB is free."), and
# 2.x's "Including non-PyTorch memory, " before "this process"; a note's own words end the run. Bounded, linear
_PROC_SEP = r"(?:[^\w\n]|\n|<br\s*/?>|\\n)"
_PROC_LEAD = re.compile(_PROC_SEP + r"{0,12}(?:(?:of which )?" + RX.SZ + r" (?:is )?free\b" + _PROC_SEP + r"{0,12})?"
                        r"(?:Including non-PyTorch memory, ?)?(?=Process \d|[Tt]his process )")


def _process_sentences(rest):
    """(rev2 B4) The process sentences that follow the request's, one after another ("Process 7208 has N memory in use.
    This process has M memory in use."): (listed (pid, size text) pairs, this process's size text or None). A sentence
    further on ("Then nvidia-smi said Process 5150 has ...") is a note's, not PyTorch's, and ends the run. Linear."""
    procs, me, pos = [], None, 0
    while True:
        lead = _PROC_LEAD.match(rest, pos)
        if not lead:
            return procs, me
        m = RX.PROC.match(rest, lead.end())
        if m:
            procs.append((m.group(1), m.group(2)))
        else:
            m = RX.SELF.match(rest, lead.end())
            if not m:
                return procs, me
            me = me or m.group(1)
        pos = m.end()


def _torch_lead_cut(line):
    """(round 100) _LEAD_CUT's quote: the request, and after the ellipsis the 2.x sentences' own figures (free, this process,
    allocated by PyTorch, reserved but unallocated); at least one of them, or the line is not read. A cut message: the
    device left to the log, its total unknown; a line the quote continues on ("... 119.90 MiB is reserved by PyTorch but
    unallocated") grows it (scan.py's wrap joins, as the request after PyTorch's type)."""
    m = _LEAD_CUT.match(line)
    if not m:
        return None
    nums, rest = {"requested": size(m.group(1))}, line[m.end():]
    e = _NEXT_MESSAGE.search(rest)
    rest = rest[:e.start()] if e else rest
    f = RX.TORCH_CUT_FREE.search(rest) or _FREE_AFTER_REQ.match(rest)
    me = RX.SELF.search(rest)
    o = RX.OF_ALLOC.search(rest)
    r = _RU_CUT.search(rest)
    if f:
        nums["free"] = size(f.group(1))
    if me:
        nums["this_process"] = size(me.group(1))
    if o:
        _of_alloc(nums, o)
    if r:       # the slack sentence read on its own wins over the allocated sentence's
        nums["reserved_unallocated"] = size(r.group(1))
    if len(nums) == 1:
        return None
    return {"kind": "torch.cuda", "form": "partial", "device_kind": None, "numbers": nums,
            "runtime": "pytorch", "complete": False, "no_prefix": True, "type_request": True, "lead_cut": True}


def _of_alloc(nums, o, reserved=False):
    """(rev5 S1/B3) "Of the allocated memory A is allocated by PyTorch, [with P allocated in private pools (e.g., CUDA
    Graphs),] and R is reserved by PyTorch but unallocated": its figures, the same wherever the sentence is read
    (reserved=True: the whole message, whose reserved total is A + R)."""
    nums["allocated"] = size(o.group(1))
    if o.group(2):
        nums["private_pools"] = size(o.group(2))
    if o.group(3):
        nums["reserved_unallocated"] = size(o.group(3))
        if reserved:
            nums["reserved"] = nums["allocated"] + nums["reserved_unallocated"]


def _bracket_numbers(nums, m):
    """The <= 2.0 bracket's figures after its capacity (allocated, free, allowed, reserved) into nums."""
    nums.update(allocated=size(m.group("alloc")), free=size(m.group("free")))
    if m.group("allowed"):
        nums["allowed"] = size(m.group("allowed"))
    if m.group("reserved") is None:
        return nums
    if m.group("what") == "cached":     # <= 1.4: "cached" is the unused part of the cache, not the total
        nums["reserved_unallocated"] = size(m.group("reserved"))
        nums["reserved"] = nums["allocated"] + nums["reserved_unallocated"]
    else:
        nums["reserved"] = size(m.group("reserved"))
        nums["reserved_unallocated"] = max(0, nums["reserved"] - nums["allocated"])
    return nums


@_gate(RX.TORCH_OLD)
def _torch_old(line):
    m = RX.TORCH_OLD.search(line)
    if not m:
        return None
    nums = _bracket_numbers({"requested": size(m.group("req")), "total": size(m.group("total"))}, m)
    kind = "torch.hip" if m.group("dev") == "HIP" else "torch.cuda"      # (MUSA: a port of the CUDA allocator)
    return {"kind": kind, "form": "<=2.0", "device_kind": _dev_kind(m.group("dev")), "device_index": _device_index(m.group("gpu")),
            "numbers": nums, "runtime": "pytorch", "complete": True}


@_gate("total capacity; ")
def _torch_bracket_open(line):
    """(round 98) The <= 2.0 message's bracket quoted without its first sentence, opening a line ("GPU 0; 15.72 GiB total
    capacity; 1.49 GiB already allocated; 832.00 KiB free", RX.TORCH_BRACKET_OPEN): a cut message, the request unknown, the
    device left to the log (a HIP build prints the same words). Without its reserved figure, only with the card nearly full (free
    under SLIVER of it): a mostly free card refused nothing."""
    m = RX.TORCH_BRACKET_OPEN.search(line)
    if not m:
        return None
    nums = _bracket_numbers({"total": size(m.group("total"))}, m)
    if m.group("reserved") is None and not nums["free"] < SLIVER * nums["total"]:
        return None
    return {"kind": "torch.cuda", "form": "<=2.0", "device_kind": None, "device_index": _device_index(m.group("gpu")),
            "numbers": nums, "runtime": "pytorch", "complete": False, "no_prefix": True, "bracket_open": True}


@_gate(RX.XPU_OLD)
def _xpu_old(line):
    m = RX.XPU_OLD.search(line)
    if not m:
        return None
    nums = {"requested": size(m.group("req")), "total": size(m.group("total")), "allocated": size(m.group("alloc")),
            "reserved": size(m.group("reserved"))}
    nums["reserved_unallocated"] = max(0, nums["reserved"] - nums["allocated"])
    return {"kind": "torch.xpu", "form": "ipex", "device_kind": "xpu", "device_index": _device_index(m.group("gpu")),
            "numbers": nums, "runtime": "pytorch", "complete": True}


@_gate(RX.TORCH_BARE)
def _torch_bare(line):
    m = RX.TORCH_BARE.search(line)
    if not m:
        return None
    nums = {"requested": size(m.group("req"))} if m.group("req") else {}
    largest = second = None
    if m.group("req") and not m.group("total"):
        rest = line[m.end():]
        f = _FREE_AFTER_REQ.match(rest)
        if f:
            nums["free"] = size(f.group(1))     # (round 101) "Tried to allocate N ... M free": the free figure, the rest elided
        # (round 101) the request's sentence followed by the processes' ("Process 7208 has N memory in use. This process has
        # M memory in use."), the capacity sentence left out by the quoter: each figure read
        e = _NEXT_MESSAGE.search(rest)
        rest = rest[:e.start()] if e else rest
        procs, me = _process_sentences(rest[f.end():] if f else rest)
        if procs:
            nums["other_processes"] = sum(size(s) for _, s in procs)
            largest = max(size(s) for _, s in procs)    # (rev2 B2) the largest listed entry, for rules_process's cut row
            second = sorted((size(s) for _, s in procs), reverse=True)[1] if len(procs) > 1 else 0    # (op53) the next one
        if me:
            nums["this_process"] = size(me)
        elif procs:     # (rev2 B1) as _torch_new: a lone listed entry, no "this process" sentence, is this process (a container)
            split_listed(nums, [(int(p), size(s)) for p, s in procs], rank=bool(_RANK.match(line)))
        # (round 111) the capacity sentence elided by the quoter ("Tried to allocate N. GPU 0 ... M memory in use. Of the
        # allocated memory A is allocated by PyTorch, and R is reserved by PyTorch but unallocated."): the allocated sentence's
        # own figures, read as the lead-cut quote reads them
        o = RX.OF_ALLOC.search(rest)
        if o:
            _of_alloc(nums, o)
    if m.group("total"):
        nums["total"] = size(m.group("total"))     # (round 95) the <= 2.0 bracket cut after the capacity
    if m.group("alloc"):    # ((round 104) or after "N already allocated", the line's end: the allocated figure alone)
        nums["allocated"] = size(m.group("alloc"))
    if m.group("free"):     # (trfix, review B2) or after "N already allocated; M free", before its reserved figure
        nums["free"] = size(m.group("free"))
    kind = {"CUDA": "torch.cuda", "HIP": "torch.hip", "XPU": "torch.xpu", "MUSA": "torch.cuda"}[m.group("dev")]
    ev = {"kind": kind, "form": "partial", "device_kind": _dev_kind(m.group("dev")), "numbers": nums,
          "runtime": "pytorch", "complete": False, "over_1eb": bool(m.group("eb"))}    # (the size check: no figure)
    if "other_processes" in nums:
        ev["others_largest"], ev["others_second"] = largest, second
    return ev


@_gate("memory allocation failed with OOM")
def _torch_alloc_warn(line):
    """(round 68) The caching allocator's warning that cudaMalloc failed: a retry follows once its cache is freed."""
    m = RX.TORCH_ALLOC_WARN.search(line)
    if not m:
        return None
    return {"kind": "torch.alloc_warn", "device_kind": "cuda", "device_index": int(m.group(1)), "runtime": "pytorch",
            "numbers": {"requested": int(m.group(2)), "free": int(m.group(3)), "total": int(m.group(4))}, "complete": True}


@_gate(RX.ASYNC)
def _async(line):
    m = RX.ASYNC.search(line)
    if not m:
        return None
    dev = m.group(1) or m.group(2)
    ev = {"kind": "torch.cuda_async", "device_kind": "cuda", "device_index": int(dev) if dev else None, "numbers": {},
          "runtime": "pytorch", "complete": False, "allocator": "cudaMallocAsync"}
    add_async_fields(ev, line[m.end():])
    return ev


@_gate(RX.ASYNC_CUT)
def _async_cut(line):
    if not RX.ASYNC_CUT.search(line):
        return None
    return {"kind": "torch.cuda_async", "device_kind": "cuda", "numbers": {}, "runtime": "pytorch", "complete": True,
            "allocator": "cudaMallocAsync", "form": "cut"}


def add_async_fields(ev, text) -> bool:
    """Fill cudaMallocAsync numbers from a follow-up line (or the rest of a joined one). True if any matched."""
    hit = False
    for key, rx in RX.ASYNC_FIELDS.items():
        for m in rx.finditer(text):
            ev["numbers"][key] = size(m.group(1))
            hit = True
    if "PyTorch limit" in text:
        m = RX.ASYNC_LIMIT.search(text)
        if m:
            ev["numbers"]["limit"] = size(m.group(1))
        ev["_await_limit"] = not m
        hit = True
    elif ev.get("_await_limit"):
        m = RX.ASYNC_LIMIT_NEXT.match(text)
        if m:
            ev["numbers"]["limit"] = size(m.group(1))
            ev["_await_limit"] = False
            hit = True
    nums = ev["numbers"]
    if {"allocated", "requested", "device_limit", "free"} <= nums.keys():
        ev["complete"] = True     # "Device limit" stays its own number: the card is case.async_card's to decide
    return hit


@_gate("MPS backend out of memory", "MPS allocated: ")     # (round 95) its figures alone (RX.MPS_OPEN)
def _mps(line):
    m = RX.MPS.search(line)
    if not m:
        return _mps_cut(line)
    nums = {"allocated": size(m.group(1)), "other_allocations": size(m.group(2))}
    if m.group(4):
        nums["requested"] = size(m.group(4))
    if m.group(3):
        nums["max_allowed"] = size(m.group(3))
    # without its request the message may be wrapped before it ("Tried to allocate ..." on the next line): not complete,
    # so the scanner joins the next line and reads it there
    return {"kind": "torch.mps", "device_kind": "mps", "numbers": nums, "runtime": "pytorch", "complete": bool(m.group(4)),
            "pool": m.group(5)}


def _mps_cut(line):
    """MPS's message quoted with its middle elided ("MPS allocated: 8.23 GiB ... max allowed: 8.00 GiB"): still an OOM,
    with the figures it kept."""
    m = RX.MPS_OPEN.search(line)     # the message itself, its figures opened: not advice naming it ("to avoid MPS backend
    if not m:                        # out of memory errors, set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0")
        return None
    rest = line[m.start():]
    nums = {}
    for key, rx in RX.MPS_FIELDS.items():
        f = rx.search(rest)
        if f:
            nums[key] = size(f.group(1))
    return {"kind": "torch.mps", "device_kind": "mps", "numbers": nums, "runtime": "pytorch", "complete": "requested" in nums,
            "form": "cut"}
