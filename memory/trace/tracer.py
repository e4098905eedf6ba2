"""Traced footprint: the exact peak of live bytes of a model's forward, measured on meta tensors (no GPU, no
weights, no memory proportional to the model or the latent).

    trace(module, *args, **kwargs)        any torch.nn.Module (or a callable with module=...)
    trace_family(comfyui_dir, family, width, height, ...)   ComfyUI's real model class for a family (trace_comfy.py)
    `gpu-garden trace --comfyui DIR --family F --width W --height H ...`

torch is imported only when a trace runs (trace_mode.py); this module stays importable without it.
"""
import json
import sys

from .. import term
from ..errors import UserError
from ..units import fmt_bytes

ATTENTION = ("flash", "math")


def trace(module, *args, kwargs=None, call=None, attention="flash", device="meta", offload=None, inference=True,
          top=12) -> dict:
    """Peak memory of `module(*args, **kwargs)` (or `call(*args, **kwargs)`, with the module's parameters and
    buffers counted as resident weights).

    Parameters and tensors not on `device` are replaced by meta twins for the call (no copy is made), so a
    model already loaded on a GPU or on the CPU can be traced as it is. `offload="all"` (or a set of parameter
    names) models ComfyUI lowvram: those weights are not resident, and each op that reads one holds a
    device copy while it runs; `offload="cpu"` takes the parameters a partially loaded model still keeps on
    the CPU. For a model ComfyUI has loaded: trace(patcher.model, x, sigma, kwargs={"c_crossattn": ctx, ...},
    call=patcher.model.apply_model). Returns a dict: peak, weights, inputs, activations_peak, at {op, module},
    live_at_peak {kind: bytes}, top [allocations live at the peak], attention {kernel, peak per kernel, ...},
    allocator {allocated_peak, reserved_peak, forward_excess} (CUDA caching allocator model), ops, seconds.
    """
    if attention not in ATTENTION:
        raise UserError(f"attention must be one of {', '.join(ATTENTION)}, not {attention!r}")
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise UserError("tracing needs torch; run it with ComfyUI's Python") from exc
    from . import dispatch as trace_mode

    dev = torch.device(device)
    args = trace_mode.to_device(args, dev)
    kwargs = trace_mode.to_device(kwargs or {}, dev)
    fn = call if call is not None else module
    weights = None
    if module is not None:
        weights = dict(module.named_parameters())
        weights.update(module.named_buffers())
        if offload == "cpu":        # a partially loaded model: what is still on the CPU streams in per layer
            offload = {n for n, t in weights.items() if t.device.type == "cpu"}
        if any(t.device != dev for t in weights.values()):
            weights = {n: trace_mode.to_device(t, dev) for n, t in weights.items()}
            fn = _reparametrized(module, fn, weights)
    return trace_mode.run(fn, args, kwargs, module=module, weights=weights, attention=attention, device=dev,
                          offload=offload, inference=inference, top=top)


def _reparametrized(module, fn, twins):
    """fn run with every parameter and buffer swapped for its meta twin (the reparametrisation behind
    torch.func.functional_call), so real weights are neither read nor copied."""
    from torch.nn.utils.stateless import _reparametrize_module

    def run(*args, **kwargs):
        with _reparametrize_module(module, twins):
            return fn(*args, **kwargs)
    return run


def trace_family(comfyui_dir, family, width, height, frames=1, batch=1, attention="flash", phase="sample",
                 checkpoint=None, cfg=None, dtype=None, offload=None) -> dict:
    """Trace one step of ComfyUI's real model class for a family (see comfy_recipes.FAMILIES) on the meta device.
    Imports ComfyUI from `comfyui_dir` (forcing --cpu); must run in ComfyUI's interpreter."""
    from . import comfy_checkout as trace_comfy
    return trace_comfy.trace_family(comfyui_dir, family, width, height, frames=frames, batch=batch,
                                    attention=attention, phase=phase, checkpoint=checkpoint, cfg=cfg,
                                    dtype=dtype, offload=offload)


def format_result(r: dict) -> str:
    """The trace as text: its prose (the head line, the rows whose value is a sentence) wrapped to the terminal by
    term.py under the value's column; the figure rows and the table of live tensors whole."""
    lines = []
    head = r.get("model")
    if head:
        dtype = head["dtype"] + (f" weights, {head['manual_cast']} compute" if head.get("manual_cast") else "")
        latent = f"latent {head['latent']}, " if head.get("latent") else ""
        lines += term.wrap_lines([f"{head['family']} {head['phase']}: {head['class']} ({dtype}), {latent}{head['note']}"])
    lines += term.wrap_lines([f"note: {n}" for n in r.get("notes") or ()])
    lines.append(f"peak            {fmt_bytes(r['peak'])}")
    lines.append(f"  weights       {fmt_bytes(r['weights'])}")
    lines.append(f"  activations   {fmt_bytes(r['activations_peak'])}   (inputs {fmt_bytes(r['inputs'])})")
    cast = (r.get("live_at_peak") or {}).get("weight cast")
    if cast:
        lines += term.hang("  weight casts  ", f"{fmt_bytes(cast)} live at the peak (per-layer copies, freed after each op)")
    at = r.get("at") or {}
    lines += term.hang("at              ", f"{at.get('op', '-')} in {at.get('module', '-')}")
    a = r["attention"]
    if a.get("calls"):
        peaks = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in a["peak"].items())
        lines += term.hang("attention       ", f"{a['calls']} calls, traced with {a['kernel']}; peak by kernel: {peaks}; "
                                                f"largest n^2 scores {fmt_bytes(a['largest_scores'])}")
    host = r.get("host_attention")
    if host:
        lines += term.hang("host would use  ", f"{host['function']} ({host['kernel']}): {host['why']}")
    al = r["allocator"]
    lines += term.hang("CUDA allocator  ", f"max_memory_allocated ~ {fmt_bytes(al['allocated_peak'])}, "
                                           f"max_memory_reserved ~ {fmt_bytes(al['reserved_peak'])} ({al['segments']} "
                                           f"segments); the forward's own cache beyond the weights' packing "
                                           f"{fmt_bytes(al.get('forward_excess', 0))}")
    lines.append("largest live at the peak:")
    for t in r["top"][:8]:
        lines.append(f"  {fmt_bytes(t['bytes']):>11}  {t['kind']:<12} {t['op']:<28} {t['module']}  "
                     f"{'x'.join(map(str, t['shape']))} {t['dtype']}")
    lines.append(f"traced {r['ops']} ops in {r['seconds']:.1f} s")
    return "\n".join(lines)


def run_cli(args) -> int:
    try:
        r = trace_family(args.comfyui, args.family, args.width, args.height, frames=args.frames,
                         batch=args.batch, attention=args.attention, phase=args.phase,
                         checkpoint=getattr(args, "checkpoint", None),
                         cfg=getattr(args, "cfg", None),
                         dtype=getattr(args, "dtype", None),
                         offload="all" if getattr(args, "lowvram", False) else None)
    except UserError:
        raise
    if args.json:
        json.dump(r, sys.stdout, indent=1)
        print()
    else:
        print(format_result(r))
    return 0
