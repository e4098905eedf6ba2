"""MPS: PyTorch alone holds nearly the whole limit and almost nothing else is allocated (aud68c #7, Comfy-Org/ComfyUI#7372).

Why: under MPS's message "MPS allocated: A, other allocations: O, max allowed: M" a small request failing with A at 90 %
of M or more and O a sliver (under 1 % of M: 3.95 MB of 18.13 GB in #7372, right after ComfyUI loaded a 15366.80 MB
SD3 completely) is the model's weights filling the limit, not the step's working tensors: a step's activations are a
fraction of a diffusion model's weights. rules_weights.py's two MPS rows (1.5 + 2.0) lost to the request's and the
forward frame's activation rows (about 5 points); this row adds the reading they miss."""
from .rule_row import Rule

TINY_OTHER = 0.01      # other allocations under 1 % of the limit: nothing but PyTorch's own tensors
FULL = 0.9             # PyTorch's tensors at 90 % of the limit or more


def weights_fill(x) -> bool:
    return (x.branch == "mps" and not x.training and bool(x.cap) and x.allocated is not None and x.allocated >= FULL * x.cap
            and "requested" in x.n and x.req <= 0.1 * x.cap
            and x.other_alloc is not None and x.other_alloc < TINY_OTHER * x.cap)


def _said(x) -> str:
    return (f"MPS: PyTorch's own tensors hold {x.allocated / x.cap:.0%} of the limit and little else is allocated: a step's "
            "working tensors are a fraction of that, so the model's weights fill the limit (a smaller or quantized model, "
            "or --lowvram / offload)")


ROWS = [Rule("weights-exceed-vram", 3.0, weights_fill, _said)]
