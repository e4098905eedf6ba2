"""Measured batches leave the held-out set once a round tunes with them in view (bench_estimate.MEASURED_FIT); their
first-sight score stays in the ledger as recorded. Batches 22, 24, 25 and 26 joined in round 17 (ediff17); batch 31
(21 rows, 19 scored and two weights bounds) in session 19 (etune31); batch 33 (22 rows) in session 20 (etune33);
batches 34 (18 rows) and 35 (8 rows) in session 22 (etune35); batch 36 (13 rows, 12 scored and one bound that holds) in
session 23 (etune36)."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

JOINED = {22: 12, 24: 3, 25: 2, 26: 2, 31: 21, 33: 22, 34: 18, 35: 8, 36: 13}  # batch: rows (the ledger's batchNN_rows)


def test_every_row_of_the_read_batches_is_a_regression_row():
    rows = [r for r in json.loads(B.MEASURED.read_text())["rows"] if r.get("batch_id") in JOINED]
    for bt, n in JOINED.items():
        ids = {r["id"] for r in rows if r["batch_id"] == bt}
        assert len(ids) == n and ids <= B.MEASURED_FIT, bt
    assert not {r["id"] for r in rows} & set(B.NOT_SCORED)


def test_their_first_sight_stays_as_recorded():
    ledger = {e["id"]: e for e in json.loads(B.LEDGER.read_text())["entries"]}
    fs = {bt: ledger[f"measured batch {bt}"]["first_sight"] for bt in JOINED}
    assert [(fs[bt][f"batch{bt}_rows"], fs[bt][f"batch{bt}_median"], fs[bt][f"batch{bt}_max"]) for bt in JOINED] == [
        (12, 0.008, 0.065), (3, 0.002, 0.008), (2, 0.072, 0.093), (2, 0.0035, 0.004), (19, 0.118, 0.662), (22, 0.181, 0.395),
        (18, 0.011, 0.044), (8, 0.007, 0.586), (12, 0.025, 0.486)]
