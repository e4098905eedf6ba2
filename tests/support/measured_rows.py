"""Rows of benchmarks/data/diffusion_measured.json scored by bench_estimate.measured() alone: a test names the rows it
checks and gets the estimate's figure for each, without scoring the whole dataset."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_estimate as B  # noqa: E402
import estimate_measured as M  # noqa: E402  (measured() reads its MEASURED: patch it there)


def rows(ids):
    found = [r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"] in ids]
    assert len(found) == len(ids)
    return found


def scored(rows):
    orig = M.MEASURED
    try:
        M.MEASURED = type("M", (), {"read_text": lambda self: json.dumps({"rows": rows})})()
        return {r["id"]: ours for r, ours, _, _ in B.measured()}
    finally:
        M.MEASURED = orig
