"""SGLang PR #31538's resident-layer rows (measured batch 23, after first sight; mapping_changes, ediff13): Qwen-Image's
60 blocks, the first k held across the denoise steps, and two streamed blocks on the device while one runs (the running
block and the one prefetched, LayerwiseOffloadManager with prefetch_size 1). Expected values are block counts x the DiT's
bf16 bytes (20.43e9 parameters x 2, the 60 blocks treated as equal), not the estimate's output."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

E = B.E
DIT, BLOCKS = 40_860_000_000, 60
RESIDENT = {"sglang-31538-qwen-image-bf16-resident30-rtx5090": 30, "sglang-31538-qwen-image-bf16-resident34-rtx5090": 34}


def _rows():
    return {r["id"]: r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"].startswith("sglang-31538-")}


def _sample_weights(r):
    pol = {"_no_knobs": True}
    pol.update({k: v for k, v in r["policy"].items() if k != "offload" or v in E.OFFLOAD_MODES})
    if r["policy"].get("offload") == "all":
        pol["offload_bytes"] = 1 << 50
    dm = [c for c in B._measured_components(r) if c["role"] == "diffusion_model"]
    return E.estimate(dm, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=pol)["breakdown"]["sample"]["weights"]


def test_rows_are_fit_and_logged():
    changes = " ".join(c for m in json.loads(B.MEASURED.read_text())["mapping_changes"] for c in m["changes"])
    for rid in RESIDENT:
        assert rid in B.MEASURED_FIT and rid in changes


def test_resident_blocks_plus_two_in_flight():
    """30 resident + 2 in flight = 32 of 60 blocks (21.792e9 B); 34 + 2 = 36 (24.516e9 B)."""
    rows = _rows()
    assert _sample_weights(rows["sglang-31538-qwen-image-bf16-resident30-rtx5090"]) == 21_792_000_000
    assert _sample_weights(rows["sglang-31538-qwen-image-bf16-resident34-rtx5090"]) == 24_516_000_000
    for rid, k in RESIDENT.items():
        assert _sample_weights(rows[rid]) == DIT * (k + 2) // BLOCKS


def test_pure_streaming_keeps_no_block():
    """The prefetch-1 row streams every block (offload all): no DiT bytes counted as held in the sample phase."""
    assert _sample_weights(_rows()["sglang-31538-qwen-image-bf16-layerwise-prefetch1-rtx5090"]) == 0
