"""Exact mode of the Footprint Estimate: one sampling step of the LOADED diffusion model, traced at this latent
on meta tensors (memory/trace.py), beside the formula.

The model is traced as it is: trace() swaps every parameter and buffer for a meta twin of the same shape and
dtype for the duration of the call (torch's functional_call reparametrisation), so no weight is read or
copied and the activations are shapes only. The step is called the way the sampler calls it
(BaseModel.apply_model with cond and uncond batched), with the family's standard text conditioning. Attention
goes through ComfyUI's own override hook (transformer_options["optimized_attention_override"]) to PyTorch SDPA,
which the tracer models as the kernel the host picked (O(n) fused, or the n^2 math path); both figures come out
of one trace.

Never raises: a model or torch the tracer cannot handle, or a trace over the time limit, gives
{"ok": False, "reason": one line} and the node shows the formula alone."""
import contextlib
import logging
import time

from ..memory.estimate.spec import FAMILY
from ..memory.trace import comfy_checkout as trace_comfy
from ..memory.units import fmt_bytes

log = logging.getLogger("gpu_garden")

TIME_LIMIT_S = 60.0


def _name(family: str) -> str:
    return FAMILY.get(family, {}).get("name", family)   # display names live in estimate.spec.FAMILY (one table)


class TraceTimeout(Exception):
    pass


class NotTraceable(Exception):
    """A model exact mode has no recipe for; the message is shown on the node as it is."""


def conditioning_shapes(family: str, batch: int) -> dict:
    """{kwarg: shape} of the conditioning the family's diffusion model takes in one step (its standard prompt
    length), from the tracer's per-family recipe."""
    spec = trace_comfy.FAMILIES[family]
    length, dim = spec["context"]
    shapes = {"c_crossattn": (batch, length, dim)}
    if spec.get("y"):
        shapes["y"] = (batch, spec["y"])
    if spec.get("guidance"):
        shapes["guidance"] = (batch,)
    return shapes


def traceable_family(base_model) -> str:
    fam = trace_comfy.detected_family(getattr(base_model, "model_config", None))
    if fam is None:
        config = type(getattr(base_model, "model_config", None)).__name__
        known = ", ".join(_name(f) for f in trace_comfy.exact_family_names())
        raise NotTraceable(f"no exact recipe for {config} models (known: {known})")
    return fam


@contextlib.contextmanager
def deadline(seconds: float):
    """Stops a forward at the next module call once `seconds` have passed (raises TraceTimeout). Cooperative:
    the trace unwinds normally, so the model's own parameters are restored."""
    from torch.nn.modules import module as torch_module

    end = time.perf_counter() + seconds

    def check(_module, _inputs):
        if time.perf_counter() > end:
            raise TraceTimeout(f"trace stopped at the {seconds:g} s limit")

    handle = torch_module.register_module_forward_pre_hook(check)
    try:
        yield
    finally:
        handle.remove()


def _sdpa_override():
    """ComfyUI's attention override hook -> its PyTorch SDPA attention, which the tracer intercepts. None on a
    ComfyUI without the hook (the host's own attention runs then, traced op by op)."""
    try:
        from comfy.ldm.modules import attention
    except Exception:
        return None
    sdpa = getattr(attention, "attention_pytorch", None)
    if sdpa is None or not hasattr(attention, "wrap_attn"):
        return None

    def override(_func, *args, **kwargs):
        return sdpa(*args, **kwargs)
    return override


def trace_sample(base_model, latent_shape, batch_in_model: int, *, time_limit: float = TIME_LIMIT_S) -> dict:
    """The tracer's result for one step of `base_model` (comfy.model_base.BaseModel) at this latent (raises)."""
    import torch

    from ..memory.trace.tracer import trace

    family = traceable_family(base_model)
    host = trace_comfy.host_attention() or {"function": "unknown", "kernel": "flash", "why": "host attention not found"}
    meta = torch.device("meta")
    b = int(batch_in_model)
    x = torch.empty([b] + [int(d) for d in latent_shape[1:]], dtype=torch.float32, device=meta)
    sigma = torch.empty((b,), dtype=torch.float32, device=meta)
    kwargs = {k: torch.empty(s, dtype=torch.float32, device=meta) for k, s in conditioning_shapes(family, b).items()}
    override = _sdpa_override()
    kwargs["transformer_options"] = {"optimized_attention_override": override} if override else {}
    with deadline(time_limit):
        r = trace(base_model, x, sigma, kwargs=kwargs, call=base_model.apply_model, attention=host["kernel"], top=5)
    r["family"] = family
    r["host_attention"] = host
    r["latent"] = list(x.shape)
    r["context"] = list(kwargs["c_crossattn"].shape)
    r["dtype"] = _dtype_name(base_model.get_dtype() if hasattr(base_model, "get_dtype") else None)
    r["manual_cast"] = _dtype_name(getattr(base_model, "manual_cast_dtype", None))
    return r


def _dtype_name(dt):
    return str(dt).replace("torch.", "") if dt is not None else None


def exact(model, latent_shape, batch_in_model: int, *, time_limit: float = TIME_LIMIT_S) -> dict:
    """Exact mode for a MODEL (ModelPatcher): summary() of the trace, or {"ok": False, "reason"}; never raises."""
    t0 = time.perf_counter()
    try:
        base = getattr(model, "model", None)
        if base is None or not hasattr(base, "apply_model"):
            raise NotTraceable("this MODEL has no ComfyUI diffusion model to trace")
        r = trace_sample(base, latent_shape, batch_in_model, time_limit=time_limit)
    except Exception as exc:     # never fail the run: the formula stands alone
        reason = reason_of(exc, latent_shape)
        log.info("[GPU Garden] Footprint Estimate exact mode fell back to the formula: %s", reason)
        return {"ok": False, "reason": reason, "seconds": round(time.perf_counter() - t0, 2)}
    return summary(r, time.perf_counter() - t0)


def reason_of(exc: BaseException, latent_shape=None) -> str:
    """One line for the node's face."""
    if isinstance(exc, (NotTraceable, TraceTimeout)):
        return str(exc)
    first = (str(exc).strip().splitlines() or [""])[0]
    if isinstance(exc, ImportError):
        return f"this torch cannot trace ({first})"[:200]
    on = f" on latent {list(latent_shape)}" if latent_shape is not None else ""
    return f"trace failed{on}: {type(exc).__name__}: {first}"[:200]


def summary(r: dict, seconds: float) -> dict:
    """The tracer's result -> the figures the node shows and the report prints (plain JSON)."""
    a = r.get("attention") or {}
    host = r.get("host_attention") or {}
    at = r.get("at") or {}
    return {
        "ok": True, "family": r.get("family"), "peak": r["peak"], "weights": r["weights"],
        "activations_peak": r["activations_peak"], "inputs": r.get("inputs"),
        "at": {"op": at.get("op"), "module": at.get("module")},
        "attention": {"host": host.get("function"), "why": host.get("why"), "traced": a.get("kernel"),
                      "calls": a.get("calls", 0), "peak": dict(a.get("peak") or {}),
                      "largest_scores": a.get("largest_scores")},
        "allocator": {k: (r.get("allocator") or {}).get(k) for k in ("allocated_peak", "reserved_peak")},
        "top": [{k: t[k] for k in ("bytes", "kind", "op", "module", "shape", "dtype")} for t in (r.get("top") or [])[:3]],
        "latent": r.get("latent"), "context": r.get("context"), "dtype": r.get("dtype"),
        "manual_cast": r.get("manual_cast"), "ops": r.get("ops"), "seconds": round(seconds, 2),
    }


def compare(ex: dict, est: dict) -> list | None:
    """Traced vs formula for the sample phase, model only (weights + activations; no fixed costs, no margin),
    kernel for kernel: the formula's sample figure assumes a fused (O(n)) attention kernel, its naive figure the
    math path. [{"kernel", "formula", "traced", "error" (formula / traced - 1), and the same for the activations
    alone: "formula_activations", "traced_activations", "error_activations"}]."""
    bds = est.get("breakdown") or {}
    peaks = (ex.get("attention") or {}).get("peak") or {}
    if not ex.get("ok") or "sample" not in bds:
        return None
    fused = next((k for k in peaks if k != "math"), None)
    out = []
    for phase, kernel in (("sample", fused), ("sample_naive_attention", "math")):
        bd = bds.get(phase)
        traced = peaks.get(kernel) if kernel else None
        if bd is None or not traced:
            continue
        formula = bd["weights"] + bd["activations"]
        traced_act = traced - (ex.get("weights") or 0)
        out.append({"kernel": kernel, "formula": formula, "traced": traced, "error": formula / traced - 1,
                    # weights dwarf activations for most models: the activations' own error is the real test
                    "formula_activations": bd["activations"], "traced_activations": traced_act,
                    "error_activations": (bd["activations"] / traced_act - 1) if traced_act > 0 else None})
    return out or None


def headline(ex: dict) -> str:
    if not ex.get("ok"):
        return f"exact mode unavailable, formula shown: {ex['reason']}"
    return (f"traced sample peak {fmt_bytes(ex['peak'])} = weights {fmt_bytes(ex['weights'])} + activations "
            f"{fmt_bytes(ex['activations_peak'])} ({ex['seconds']:.1f} s)")


def attention_line(ex: dict) -> str:
    a = ex["attention"]
    others = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in a["peak"].items())
    return f"attention: host uses {a['host']}; traced as {a['traced']} ({a['calls']} calls); peak by kernel: {others}"


def format_text(ex: dict, est: dict | None = None) -> str:
    """The report's exact-mode section."""
    lines = ["", "exact mode (the loaded model traced on meta tensors, one sampling step):"]
    if not ex.get("ok"):
        lines.append(f"  unavailable, formula only: {ex['reason']}")
        return "\n".join(lines)
    dtype = ex["dtype"] + (f" weights, {ex['manual_cast']} compute" if ex.get("manual_cast") else "")
    lines += [
        f"  {_name(ex['family'])} as loaded ({dtype}), latent {ex['latent']}, "
        f"text context {ex['context']}",
        f"  peak           {fmt_bytes(ex['peak'])}",
        f"    weights      {fmt_bytes(ex['weights'])} (resident, as loaded)",
        f"    activations  {fmt_bytes(ex['activations_peak'])}",
        f"  at             {ex['at']['op']} in {ex['at']['module']}",
        "  " + attention_line(ex),
        f"  host attention: {ex['attention']['why']}",
    ]
    al = ex["allocator"]
    if al.get("reserved_peak"):
        lines.append(f"  CUDA allocator model: max_memory_allocated ~ {fmt_bytes(al['allocated_peak'])}, "
                     f"max_memory_reserved ~ {fmt_bytes(al['reserved_peak'])}")
    for c in compare(ex, est or {}) or ():
        lines.append(f"  formula vs traced, {c['kernel']} attention (weights + activations): {fmt_bytes(c['formula'])} "
                     f"vs {fmt_bytes(c['traced'])} ({c['error']:+.0%})")
    lines.append(f"  traced {ex['ops']} ops in {ex['seconds']:.1f} s; figures exclude the runtime's fixed costs "
                 "(CUDA context, ComfyUI's reserve)")
    return "\n".join(lines)
