"""What every part of the footprint benchmark (bench_estimate.py) shares: the pack loaded from this checkout, the
estimate's modules, the layout tables, a synthetic table of a published parameter count, and how an error is scored."""
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.pack import BOOT, load_pack  # noqa: E402,F401

load_pack()

from gpu_garden.memory.estimate import formula as E, families, layouts, spec, vae as V, weights as W  # noqa: E402,F401
from gpu_garden.memory.estimate.headers import tensor_bytes  # noqa: E402,F401
from gpu_garden.memory.units import GiB, MiB  # noqa: E402,F401

table = layouts.table


def blob(dtype, n, **keys):
    """A synthetic table: the detection keys of a family plus one tensor carrying the published parameter count."""
    t = {k: (dtype, s) for k, s in keys.items()}
    t["params.blob"] = (dtype, (n,))
    return t


def err(a, b):
    return a / b - 1


def scored(ours, ref, bound=None):
    """(|error| to count in the statistics or None, whether a stated bound holds or None). A peak scores |ours/ref - 1|.
    A stated bound ('less than 16GB', 'as little as 8GB': row field 'fairness') is no peak: a figure on its right
    side is no error and stays out of every median and worst; one past it is wrong by at least that much."""
    if not bound:
        return abs(err(ours, ref)), None
    if bound not in ("upper", "lower"):
        raise ValueError(f"bound must be 'upper' or 'lower', not {bound!r}")
    ok = ours <= ref if bound == "upper" else ours >= ref
    return (None if ok else abs(err(ours, ref))), ok


def _stats(xs):
    return {"median": round(statistics.median(xs), 4), "max": round(max(xs), 4), "n": len(xs)} if xs else None
