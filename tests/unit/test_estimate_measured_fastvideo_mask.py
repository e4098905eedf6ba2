"""FastVideo's FastHunyuan rows (measured batch 15, after first sight; mapping_changes, ediff14): diffusers 0.32.0's
HunyuanVideo transformer holds a dense bool [1, N, N] attention mask and torch 2.5's SDPA a bf16 copy of it. Expected
values are hand counts: N = 12 latent frames x 45 x 80 patches + 256 text tokens = 43,456; 3 bytes per pair; the
transformer's 12,821,012,544 parameters x 2 bytes (bf16 row), not the estimate's output."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

E = B.E
IDS = [f"fastvideo-docs-fasthunyuan-{q}-model-offload-1280x720x45" for q in ("bf16", "int8", "nf4")]
MASK = 43_456 * 43_456 * 3


def _rows():
    return {r["id"]: r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"] in IDS}


def _estimate(r, **drop):
    pol = {"_no_knobs": True, **{k: v for k, v in r["policy"].items() if k not in drop}}
    return E.estimate(B._measured_components(r), r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=pol)


def test_rows_are_fit_and_logged():
    changes = " ".join(c for m in json.loads(B.MEASURED.read_text())["mapping_changes"] for c in m["changes"])
    rows = _rows()
    assert len(rows) == 3
    for rid in IDS:
        assert rid in B.MEASURED_FIT and rid in changes and rows[rid]["policy"]["attention_mask"] == "dense"


def test_mask_in_the_bf16_denoise():
    r = _rows()[IDS[0]]
    with_mask, without = _estimate(r), _estimate(r, attention_mask=1)
    s, s0 = with_mask["breakdown"]["sample"], without["breakdown"]["sample"]
    assert s["activations"] - s0["activations"] == MASK == 5_665_271_808
    assert s["weights"] == 12_821_012_544 * 2  # only the transformer on the device while it samples (model offload)
    assert with_mask["peak_torch"] == s["weights"] + s["activations"]  # the denoise is this row's peak
