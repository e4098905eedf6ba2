"""Measured beats modelled, on the Footprint Estimate node: when the flight recorder holds a successful run
of the same model files at the same latent size with the same models in the same dtypes, the node shows the
peak its sampler really reached here beside the formula's figure, labelled "measured here".

Like with like: the recorder stores, per node, torch's max_memory_allocated on CUDA / ROCm / XPU (compared
with the estimate's `peak_torch` terms: weights + activations of the sample phase, no CUDA context, no
reserve), and the driver's allocated memory on MPS (compared with `peak_device` terms: + allocator margin and
context). On a CPU-only host it is the process's peak RSS ("rss", nodes/recorder_meter.py: /proc/self/statm on Linux):
the whole ComfyUI process (the interpreter, torch's libraries, every model kept in RAM) and not one phase, so it is
shown with what it holds (RSS_NOTE) and no percentage: set against the sample phase's weights + activations, an SD1.5
run read "4.80 GiB, +49.7 % vs formula 3.21 GiB", a percentage of the rest of the process, not of the formula's error.

Matching (memory/recorder/measured.py does files and latent): model files are the prompt's, named as the
recorder names them (record.model_files); the latent is the node's own size; dtypes are compared per model
(the recorder's model name + dtype of MODEL, CLIP and VAE must each appear in the run's models: a run's list
also holds models that were still loaded from before, so a set equality would miss real matches)."""
import datetime
import logging

from ..memory.recorder import measured_peak
from ..memory.recorder.record import model_files

log = logging.getLogger("gpu_garden")

DYNAMIC = "peak_torch_dynamic_vram"  # a Dynamic VRAM run's torch peak: compared with the activations alone
SAMPLER_TYPES = ("KSampler", "KSamplerAdvanced", "SamplerCustom", "SamplerCustomAdvanced")
PHASE = "sample"


def patcher_entry(patcher) -> tuple | None:
    """(name, dtype) of a ModelPatcher as the recorder writes it in a run's "models" (host_models)."""
    if patcher is None:
        return None
    from . import host_models

    return host_models.model_name(patcher), host_models.patcher_dtype(patcher)


def current_models(model, clip=None, vae=None) -> list[tuple]:
    out = [patcher_entry(model), patcher_entry(getattr(clip, "patcher", None)), patcher_entry(getattr(vae, "patcher", None))]
    return [e for e in out if e is not None]


def _has_models(run: dict, wanted) -> bool:
    have = {(m.get("name"), m.get("dtype")) for m in run.get("models") or () if isinstance(m, dict)}
    return all(w in have for w in wanted)


def _device(peak: dict) -> tuple[str, str] | None:
    """(device key, compare_to) for a recorded peak: the accelerator when the run had one, else host RSS."""
    for dev in sorted(peak):
        kind = dev.split(":")[0]
        if kind in ("cuda", "rocm", "xpu"):
            return dev, "peak_torch"
        if kind == "mps":
            return dev, "peak_device"
    return ("cpu", "rss") if "cpu" in peak else None


def formula_figure(est: dict, compare_to: str) -> int | None:
    """The estimate's sample-phase figure in the recorded quantity's terms. The recorder reads max_memory_allocated
    after reset_peak_memory_stats (recorder_meter.take_peaks): every live tensor while the sampler runs, so the text
    encoders ComfyUI left loaded beside it (breakdown.sample.te_kept, te_loaded.py) are counted, as peak_torch counts
    them (rev67e F3)."""
    bd = (est.get("breakdown") or {}).get(PHASE)
    if not bd:
        return None
    if compare_to == DYNAMIC:  # the weights sit in Dynamic VRAM's pages, outside torch's counter
        return int(bd["activations"])
    torch_terms = int(bd["weights"] + bd["activations"] + (bd.get("te_kept") or 0) + (bd.get("dm_kept") or 0)
                      + (bd.get("vae_kept") or 0))  # an i2v node's VAE left loaded (te_loaded.vae_at_sample)
    if compare_to == "peak_device":
        return torch_terms + int(bd.get("allocator_margin") or 0) + int((est.get("fixed") or {}).get("cuda_context") or 0)
    return torch_terms


def _iso(t) -> str | None:
    try:
        return datetime.datetime.fromtimestamp(float(t), datetime.timezone.utc).isoformat(timespec="seconds")
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def measured_for(runs, files, size: dict, models: list[tuple], est: dict) -> dict | None:
    """{"peak", "compare_to", "run", "when", "node", "formula", "diff_pct", "runs", "device", "phase", "label"}
    from the recorded runs that match, or None. `size`: {"width", "height", "frames", "batch"} in pixels."""
    runs = [r for r in runs or () if isinstance(r, dict) and _has_models(r, models)]
    # Dynamic VRAM (comfy-aimdo) keeps the weights in VRAM pages outside PyTorch's allocator, so its runs' torch
    # peaks hold the activations only: they are not mixed with classic runs, and used only when no classic run matches
    m = measured_peak([r for r in runs if not r.get("dynamic_vram")], files, size, None)
    dynamic = m is None
    if dynamic:
        m = measured_peak([r for r in runs if r.get("dynamic_vram")], files, size, None)
    if m is None:
        return None
    samplers = {t: p for t, p in (m.get("by_type") or {}).items() if t in SAMPLER_TYPES and p}
    if not samplers:
        return None
    dev = None
    for p in samplers.values():
        dev = dev or _device(p)
    if dev is None:
        return None
    key, compare_to = dev
    if dynamic and compare_to == "peak_torch":
        compare_to = DYNAMIC
    node, peak = max(((t, int(p.get(key, 0))) for t, p in samplers.items()), key=lambda x: x[1])
    if peak <= 0:
        return None
    formula = formula_figure(est, compare_to) if compare_to != "rss" else None  # no phase figure is like a whole process
    diff = round(100.0 * (peak - formula) / formula, 1) if formula else None
    out = {"label": m["label"], "peak": peak, "compare_to": compare_to, "device": key, "phase": PHASE,
           "run": m.get("prompt_id"), "when": _iso(m.get("ended")), "node": node, "formula": formula,
           "diff_pct": diff, "runs": m.get("runs")}
    if compare_to == "rss":
        out["note"] = RSS_NOTE
    return out


def lookup(prompt, size: dict, model, clip, vae, est: dict) -> dict | None:
    """The node's hook: one read of the run store (nodes/recorder_state.py, cached by the file's stat), then
    measured_for. Never raises: a measured figure is a side figure, the estimate never fails for it."""
    try:
        files = model_files(prompt if isinstance(prompt, dict) else {})
        if not files:
            return None
        from . import recorder_state

        runs = recorder_state.store().read()
        return measured_for(runs, files, size, current_models(model, clip, vae), est)
    except Exception as exc:
        log.debug("[GPU Garden] measured here: lookup failed (%s)", exc, exc_info=True)
        return None


RSS_NOTE = "the whole ComfyUI process (Python, torch, every model in RAM), not one phase, so no % against the formula"
WHAT = {"peak_torch": "torch max_memory_allocated", "peak_device": "driver allocated memory", "rss": "process peak RSS",
        DYNAMIC: "torch max_memory_allocated under Dynamic VRAM, weights not included: vs the formula's activations"}


def format_text(m: dict) -> str:
    """One line for the node's report output."""
    from ..memory.units import fmt_bytes

    diff = f", {m['diff_pct']:+.1f} % vs formula {fmt_bytes(m['formula'])}" if m.get("diff_pct") is not None else \
        f": {m['note']}" if m.get("note") else ""
    return (f"{m['label'].capitalize()}: {m['node']} peaked at {fmt_bytes(m['peak'])} ({WHAT.get(m['compare_to'], m['compare_to'])}, "
            f"{m['device']}){diff}; run {m['run']} at {m['when']}, {m['runs']} matching run(s)")
