"""Rendering a triage result for people: the cause (or, when unsure, the top two side by side), the
message's numbers, the evidence, earlier events, and the guide. The JSON form is the result dict itself."""
import re

from .. import term
from ..units import fmt_bytes
from . import rank

SIZE_RE = re.compile(r"\d+(?:\.\d+)? [KMGT]i?B\b")

# cudaMallocAsync's "PyTorch limit" when no memory fraction was set: pytorch_memory_limits[device] starts at UINT64_MAX
# (CUDAMallocAsyncAllocator.cpp lazy_init_device), which format_size prints as 17179869184.00 GiB (2^34 GiB)
NO_LIMIT = 1 << 63
# (fixB S4) under an uncertain verdict, a cause past the first three is listed from this share (it rounds to 5 %)
SHARE_SHOWN = 0.05


NUMBER_LABELS = [
    ("requested", "requested"), ("total", "total"), ("device_limit", "device limit"), ("free", "free"),
    ("allocated", "allocated by PyTorch"), ("reserved", "reserved by PyTorch"),
    ("reserved_unallocated", "reserved but unallocated"), ("private_pools", "in private pools"),
    ("this_process", "this process"), ("other_processes", "other processes"), ("allowed", "allowed (memory fraction)"),
    ("limit", "PyTorch limit"), ("other_allocations", "other allocations"), ("max_allowed", "max allowed"),
    ("required", "required"), ("headroom", "headroom on top"), ("available", "available"), ("kv_needed", "KV cache needed"), ("kv_available", "KV cache available"),
    ("free_initial", "free at start"), ("free_current", "free now"),
    ("ollama_partial", "planned by Ollama"),     # (aud68c #5) memory.required.partial beside memory.available
    ("weights", "weights"),     # (fix67a) vLLM's "Model loading took", MLC's weights (the key they share)
    ("host_total", "system RAM"), ("pinned_limit", "pinned RAM limit"),      # (aud67b #8) ComfyUI's start-up line
]


# the allocator whose figures an event's "allocated" and "reserved" are, by the event that printed them (kind, form or
# None for any form); PyTorch's caching allocator otherwise (the only other runtime whose message prints both)
ALLOCATORS = [
    ("xla.oom", "bfc", "TensorFlow's BFC allocator"),      # its Stats block: InUse (facts.bfc_stats_after)
    ("cupy.oom", None, "CuPy's memory pool"),
    ("ttmetal.oom", None, "tt-metal's bank allocator"),
]


def allocator_of(event: dict) -> str:
    return next((name for kind, form, name in ALLOCATORS
                 if event.get("kind") == kind and (form is None or event.get("form") == form)), "PyTorch")


def render_numbers(nums: dict, allocator: str = "PyTorch", kind: str | None = None) -> str:
    parts = []
    for key, label in NUMBER_LABELS:
        if key in ("allocated", "reserved"):
            label = label.replace("PyTorch", allocator)
        if key == "limit" and kind is not None and not kind.startswith("torch."):
            label = "limit"  # another runtime's cap (XLA's rematerialization target, a server's limit): not PyTorch's
        if key in nums and nums[key] is not None:
            if key == "limit" and nums[key] >= NO_LIMIT:
                parts.append(f"{label}: no limit (no memory fraction set)")
            elif key == "device_limit" and nums.get("total") and nums[key] > nums["total"] * 1.01:
                # cudaMallocAsync's limit past the card (triage replaced it by the card): not the card's size
                parts.append(f"{label} {fmt_bytes(nums[key])} (larger than the card's {fmt_bytes(nums['total'])})")
            else:
                parts.append(f"{label} {fmt_bytes(nums[key])}")
    for key, v in nums.items():
        if key.endswith("_tokens"):
            parts.append(f"{key[:-7].replace('_', ' ')} {v} tokens")
        elif key.endswith("_ratio"):
            parts.append(f"{key[:-6].replace('_', ' ')} {v}")
        elif key in ("tile_size", "overlap"):
            parts.append(f"{key.replace('_', ' ')} {v}")
    return ", ".join(parts)


def distinct(evidence: list) -> list:
    """Evidence lines, less any whose sizes all recur in a longer line (two rules reading the same numbers:
    "MPS already holds 17.21 GiB of 18.13 GiB" beside "MPS: PyTorch alone holds 17.21 GiB of the 18.13 GiB limit ...")."""
    sizes = [set(SIZE_RE.findall(e)) for e in evidence]
    return [e for i, e in enumerate(evidence)
            if not (sizes[i] and any(j != i and sizes[i] <= sizes[j] and (len(evidence[j]), j) > (len(e), i)
                                     for j in range(len(evidence))))]


def _render_recovered(res: dict, events: list, max_events: int) -> str:
    """Every event was recovered from (engine._result's recovered_only): no failure to fix; what happened, event by event."""
    n = len(events)
    out = [f"No failure to fix: the run went on after {'the' if n == 1 else n} out-of-memory event{'' if n == 1 else 's'} "
           f"below (recovered; {res['lines']} lines read)."]
    for e in events[-max_events:]:
        out.append(f"  line {e['line']}: {e['causes'][0]['id']} (recovered), {e['runtime']}, {e['device_kind'] or 'device'}"
                   f" - {e['message'][:100]}")
    if n > max_events:
        out.append(f"  ({n - max_events} earlier not shown)")
    g = events[-1]["guide"]
    if g:
        out.append("")
        out.append(f"To avoid the event next time, the guide for {events[-1]['causes'][0]['id']}:")
        out.append(f"== {g['title']} ==")
        out.append(term.reflow(g["markdown"].strip()))
    return "\n".join(out)


def render_human(res: dict, max_events: int = 3) -> str:
    if not res["found"]:
        n = res.get("lines", 0)
        if res.get("no_text"):  # bytes, none of them text (a file of NULs)
            return f"No out-of-memory error found: no text in it: {res['bytes']:,} bytes, none printable."
        if res.get("not_text"):  # (fixB D) engine.NOT_TEXT_SHARE of it or more binary: a model, an image, an archive
            return (f"No out-of-memory error found, and this is not a text log: {res['binary_bytes']:,} of its {res['bytes']:,} "
                    f"bytes ({res['binary_bytes'] / res['bytes']:.0%}) are NUL, control or non-UTF-8 bytes ({n:,} line"
                    f"{'' if n == 1 else 's'} read). Give the log the run printed.")
        if not n:
            return "No out-of-memory error found: the input is empty (0 lines)."
        return f"No out-of-memory error found ({n} line{'' if n == 1 else 's'} read)."
    out = []
    events = res["events"]
    last = events[res["headline"]] if res.get("headline") is not None else \
        next((e for e in reversed(events) if not e["recoverable"]), events[-1])
    top = last["causes"][0]
    where = f"{last['runtime']}, {last['device_kind'] or 'device'}"
    if res.get("recovered_only"):
        return _render_recovered(res, events, max_events)
    unsure = bool(last.get("uncertain")) and len(last.get("alternatives") or ()) >= 2
    pair = unsure and rank.pair(last["alternatives"])
    if unsure:
        a, b = last["alternatives"][:2]
        if pair:
            out.append(f"Cause: uncertain - {a['id']} ({a['confidence']:.0%} confidence) or {b['id']} ({b['confidence']:.0%} confidence)"
                       f" - {where}, line {last['line']}")
        else:       # the second has under rank.PAIR_RATIO of the first's confidence: the first is only the likelier
            out.append(f"Cause: uncertain: {a['id']}? ({b['id']} also possible) - {a['confidence']:.0%} and {b['confidence']:.0%}"
                       f" confidence - {where}, line {last['line']}")
    elif last.get("uncertain"):
        # one cause fired, too weakly to be stated alone (rank.NOT_DETERMINED keeps it under rank.UNCERTAIN)
        out.append(f"Cause: uncertain - {top['id']} ({top['confidence']:.0%} confidence, under {rank.UNCERTAIN * 100:.0f} %; "
                   f"one sign alone) - {where}, line {last['line']}")
    else:
        out.append(f"Cause: {top['id']} ({top['confidence']:.0%} confidence) - {where}, line {last['line']}")
    out = term.wrap_lines(out)  # the Cause line: prose, wrapped as the Numbers line below
    if last["numbers"]:
        # prose to the terminal's width (term.py), a figure never apart from its unit; continuation lines hang by 2
        gpu = f"GPU {last['device_index']}, " if (last.get("device_index") or 0) > 0 else ""     # (aud68c #9) a card past the first
        out += term.wrap_lines(["Numbers: " + gpu + render_numbers(last["numbers"], allocator_of(last), last.get("kind"))])
    if unsure:
        # no cause reaches rank.UNCERTAIN of the points: the two best side by side, each with the guide that fixes it
        out.append(f"No cause reaches {rank.UNCERTAIN * 100:.0f} %; the two that lead, side by side:" if pair else
                   f"No cause reaches {rank.UNCERTAIN * 100:.0f} %; the first is only the likelier, the second also possible:")
        for alt in last["alternatives"][:2]:
            out.append(f"  {alt['id']:<20} {alt['confidence']:.0%}  " + "; ".join(distinct(alt["evidence"])))
            if alt.get("guide"):
                out.append(f"  {'':<20}       guide: {alt['guide']['title']}")
        # (fixB S4) every other cause that took a share of the points (shown from 5 %): what kept the first under the bar
        # (a leak row from earlier successful runs alone, say), with the reason --json gives, not one row of them
        rest = last["causes"][2:3] + [c for c in last["causes"][3:] if c["confidence"] >= SHARE_SHOWN]
        if rest:
            out.append(f"Other causes that scored (their points keep the first under {rank.UNCERTAIN * 100:.0f} %):")
    else:
        rest = last["causes"][:3]
    for c in rest:
        ev = distinct(c["evidence"])
        out.append(f"  {c['id']:<20} {c['confidence']:.0%}  " + "; ".join(ev[:2]))
        # all --json has (rev52 K: the 3rd was JSON-only), under the row at the full width, hanging under the text (at the
        # evidence column they wrapped into 30 columns on a 60-column terminal)
        out += term.wrap_lines([f"    also: {e}" for e in ev[2:]], indent=len("also: "))
    if res["count"] > 1:
        out.append(f"{res['count']} out-of-memory events in this log; this is the last one that failed.")
        earlier = [e for e in events if e is not last][-max_events:]
        for e in earlier:
            out.append(f"  line {e['line']}: {e['causes'][0]['id']}{' (recovered)' if e['recoverable'] else ''} - {e['message'][:100]}")
    if unsure:
        out.append("")
        a, b = last["alternatives"][:2]
        same = a.get("guide") and b.get("guide") and a["guide"]["id"] == b["guide"]["id"]     # (tri67) guide_phase.py
        out.append(f"The guide below is for {top['id']} and {b['id']} both." if same else
                   f"The guide below is for {top['id']}; the one for {b['id']} is named above.")
    g = last["guide"]
    if g:
        out.append("")
        out.append(f"== {g['title']} ==")
        out.append(term.reflow(g["markdown"].strip()))
        for faq in g.get("faqs", []):
            out.append("")
            out.append(f"-- {faq['title']}")
            out.append(term.reflow(faq["markdown"].strip()))
    return "\n".join(out)

