"""What the rows on Ollama's own layer estimate say (rules_other.py, aud68c #5).

Why: Ollama places layers by its estimate (llm/memory.go EstimateGPULayers: memory.required.partial for the layers it
offloads, within memory.available), and a CUDA failure after it means the estimate was short. That alone does not
make it a regression of the version: "a regression" is said only where should_fit.py's verdict holds (the calculator
finds the load fits with clear room). Where the plan already filled the room (partial within TIGHT of available:
ollama/ollama#9562's 4.9 GiB on 5.0) the reading is a tight estimate: a layer fewer leaves the slack it lacked."""
from ..units import fmt_bytes
from . import ollama_warnings
from .should_fit import NAME, shown_version, verdict

TIGHT = 0.95      # the plan at 95 % of the room or more: Ollama's figures print to 0.1 GiB, the room is the rest


def partial(f):
    """memory.required.partial in bytes (the last "offload to" line's), else None."""
    from .parse import size
    raw = (f.get("ollama_warn") or {}).get("partial")
    return size(raw) if raw else None


def numbers(nums: dict, f, runtime) -> None:
    """(aud68c #5) Ollama's room and plan under Numbers: memory.available, memory.required.partial."""
    if runtime != "ollama":
        return
    if f.get("ollama_available"):
        nums.setdefault("available", f["ollama_available"])
    if partial(f):
        nums.setdefault("ollama_partial", partial(f))


def why(x, what) -> str:
    """The row's reading after `what` (what failed): a regression only with should_fit's verdict; else a tight
    estimate where the plan filled the room; else an estimate short for this model on this build and device."""
    v = verdict(x)
    if v:
        return (f"{what}: the model should fit (`gpu-garden kv`: {v['need'] / (1 << 30):.1f} GiB of "
                f"{v['budget'] / (1 << 30):.1f} GiB), so a regression of {NAME['ollama']} "
                f"{shown_version('ollama', v['version']) or 'in use'} is likely; try the previous version, or set num_gpu lower")
    p, room = partial(x.f), x.f.get("ollama_available")
    if p and room and p >= TIGHT * room:
        return (f"{what}: Ollama planned {fmt_bytes(p)} on the GPU of the {fmt_bytes(room)} available, a tight estimate that "
                "left no slack for what it does not count; set num_gpu a few layers lower (or free VRAM)")
    return f"{what}: the estimate was low for this model on this build and device; set num_gpu lower, or try another Ollama version"
