"""Measured beats modelled: a recorded run that matches the current workflow (same model files, same latent
size, same dtypes) gives the peak this machine really reached, which the Footprint Estimate shows beside its
formula as "measured here", and `gpu-garden estimate --measured RUNS.jsonl` prints in the terminal.

Matching: model files by file name (a folder prefix or a full path does not matter), latent by width, height,
frames and batch, dtypes as a set (None: not compared). Only successful runs count; the newest match names
the run, the peak is the highest over every matching run (the worst case seen here)."""
import json
import sys

from ..errors import UserError
from ..units import fmt_bytes
from .record import basename, run_peak
from .store import parse_lines, read_lines

LABEL = "measured here"


def _latent(latent_shape) -> tuple | None:
    """{"width", "height", "frames", "batch"} (pixels, as records store it) or a LATENT tensor shape
    [B, C, H, W] / [B, C, T, H, W] (x8 spatially) -> (width, height, frames, batch)."""
    if latent_shape is None:
        return None
    if isinstance(latent_shape, dict):
        try:
            return (int(latent_shape["width"]), int(latent_shape["height"]), int(latent_shape.get("frames") or 1),
                    int(latent_shape.get("batch") or 1))
        except (KeyError, TypeError, ValueError):
            return None
    shape = [int(x) for x in latent_shape]
    if len(shape) == 4:
        return (shape[3] * 8, shape[2] * 8, 1, shape[0])
    if len(shape) == 5:
        return (shape[4] * 8, shape[3] * 8, shape[2], shape[0])
    raise ValueError(f"latent_shape: expected a size dict or a 4/5-d shape, got {latent_shape!r}")


def _dtype(d) -> str:
    return str(d).replace("torch.", "").lower()


def run_dtypes(run: dict) -> set[str]:
    return {_dtype(m["dtype"]) for m in run.get("models") or () if isinstance(m, dict) and m.get("dtype")}


def matches(run: dict, files: set[str], latent: tuple | None, dtypes: set[str] | None) -> bool:
    if run.get("status") != "success" or not run.get("nodes"):
        return False
    if {basename(f) for f in run.get("model_files") or ()} != files:
        return False
    if latent is not None and _latent(run.get("latent")) != latent:
        return False
    return dtypes is None or run_dtypes(run) == dtypes


def measured_peak(runs, model_files, latent_shape, dtypes=None) -> dict | None:
    """The measured peak of the recorded runs matching these model files, latent size and dtypes, or None.

    Returns {"label": "measured here", "peak": {DEVICE: bytes}, "runs": N, "prompt_id", "ended",
    "by_type": {node type: {DEVICE: bytes}}, "dtypes": [...]}. `runs` is any iterable of run dicts (the store
    reads newest first; order only decides which run is named)."""
    files = {basename(f) for f in model_files or ()}
    if not files:
        return None
    latent = _latent(latent_shape)
    want = {_dtype(d) for d in dtypes} if dtypes is not None else None
    found = [r for r in runs if isinstance(r, dict) and matches(r, files, latent, want)]
    if not found:
        return None
    peak, by_type = {}, {}
    for r in found:
        for dev, b in run_peak(r).items():
            peak[dev] = max(peak.get(dev, 0), b)
        for n in r.get("nodes") or ():
            slot = by_type.setdefault(n.get("type"), {})
            for dev, b in (n.get("peak") or {}).items():
                slot[dev] = max(slot.get(dev, 0), int(b))
    newest = max(found, key=lambda r: r.get("ended") or 0)
    return {"label": LABEL, "peak": peak, "runs": len(found), "prompt_id": newest.get("prompt_id"),
            "ended": newest.get("ended"), "by_type": by_type, "dtypes": sorted(run_dtypes(newest))}


def read_runs(path: str) -> list[dict]:
    """The recorded runs in a runs.jsonl, newest first; a file with text but no run in it is a usage error."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            runs = parse_lines(read_lines(f))
            nonempty = f.tell() > 0
    except FileNotFoundError:
        raise UserError(f"--measured: no such file: {path}") from None
    except IsADirectoryError:
        raise UserError(f"--measured: {path} is a folder; give the runs.jsonl file") from None
    except OSError as exc:
        raise UserError(f"--measured: cannot read {path}: {exc}") from None
    if not runs and nonempty:
        raise UserError(f"--measured: {path} holds no recorded run (give the flight recorder's "
                        "<ComfyUI user dir>/gpu_garden/runs.jsonl)")
    runs.reverse()  # newest first, like the store
    return runs


def format_text(m: dict | None, path: str) -> str:
    if m is None:
        return f"Measured here: no successful recorded run in {path} matches these model files and latent size."
    peaks = ", ".join(f"{dev} {fmt_bytes(b)}" for dev, b in sorted(m["peak"].items()))
    return (f"Measured here: peak {peaks} over {m['runs']} matching run(s) (newest {m['prompt_id']}"
            + (f", dtypes {', '.join(m['dtypes'])}" if m.get("dtypes") else "") + ")")


def _from_workflow(path: str) -> tuple[list[str], dict | None]:
    """Model files and latent size of a workflow file: API format (node id -> class_type, inputs) or UI
    format (nodes with widgets_values; the latent size is then not compared)."""
    from ..estimate.workflow import load  # the estimate's own reader: size bound, JSON object, clear errors
    from .record import is_model_file, latent_size, model_files

    try:
        wf = load(path)
    except OSError as exc:
        raise UserError(f"--workflow: cannot read {path}: {exc}") from None
    if isinstance(wf.get("nodes"), list):
        files = sorted({v for n in wf["nodes"] if isinstance(n, dict) for v in (n.get("widgets_values") or [])
                        if is_model_file(v)})
        return files, None
    prompt = wf.get("prompt", wf)
    if not isinstance(prompt, dict):
        raise UserError(f"--workflow: {path}: \"prompt\" is not an API-format prompt (an object of nodes)")
    return model_files(prompt), latent_size(prompt)


def run_estimate_cli(args) -> int:
    """`gpu-garden estimate --measured RUNS.jsonl`: the estimate as usual, then the measured peak of the
    matching recorded runs (text: one more line; --json: a "measured" key)."""
    import contextlib
    import importlib
    import io

    from .. import cli

    runs = read_runs(args.measured)
    if getattr(args, "workflow", None):
        files, latent = _from_workflow(args.workflow)
    else:
        files = list(args.files or ())
        latent = {"width": args.width, "height": args.height, "frames": args.frames, "batch": args.batch} \
            if args.width and args.height else None
    m = measured_peak(runs, files, latent, None)
    module, func = cli.COMMANDS["estimate"]
    run = getattr(importlib.import_module("." + module, cli.__package__), func)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = run(args)
    out = buf.getvalue()
    if args.json:
        data = json.loads(out)
        data["measured"] = m
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    else:
        sys.stdout.write(out + format_text(m, args.measured) + "\n")
    return code
