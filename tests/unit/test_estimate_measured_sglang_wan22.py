"""SGLang PR #21248's Wan2.2-T2V-A14B run on an H200 (measured batch 23, after first sight; mapping_changes, ediff13):
read with every component on the device, the PR's 'no-offload default'. Expected values are parameter counts x bytes
(the two experts: Wan2.1-T2V-14B's 14,288,491,584 in bf16; UMT5-XXL's 5,680,910,336 in the te_umt5_xxl_fp16 layout, in
fp32 as Wan's text_encoder_precisions say, except its 24 relative-attention biases (32 x 64) and 49 layer norms (4096),
249,856 parameters the requantized table keeps at the stored fp16: 0.5 MB), not the estimate's output."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

E = B.E
PREFIX = "sglang-21248-wan22-t2v-a14b-1280x720x81-1step-h200-"
EXPERT = 14_288_491_584 * 2
UMT5_FP32 = (5_680_910_336 - 249_856) * 4 + 249_856 * 2


def _rows():
    return [r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"].startswith(PREFIX)]


def _est(r, drop=None, **over):
    comps = B._measured_components(r)
    if drop:
        comps.remove(next(c for c in comps if c["role"] == drop))
    return E.estimate(comps, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"],
                      policy={"_no_knobs": True, **r["policy"], **over})


def test_rows_are_mapped_resident_and_fit():
    rows = _rows()
    assert sorted(r["compare"] for r in rows) == ["torch_allocated", "torch_reserved"]
    changes = " ".join(c for m in json.loads(B.MEASURED.read_text())["mapping_changes"] for c in m["changes"])
    for r in rows:
        assert r["batch_id"] == 23 and r["id"] in B.MEASURED_FIT and r["id"] in changes
        assert r["components"].count("synth:wan2.1-t2v-14B") == 2
        assert (r["policy"]["models"], r["policy"]["text_encoders"], r["policy"]["cast_fp32"]) == ("resident", "resident", False)


def test_the_idle_expert_stays_on_the_device():
    """Both experts resident: dropping one lowers every phase by exactly one expert's bf16 bytes."""
    r = _rows()[0]
    assert _est(r)["peak_torch"] - _est(r, drop="diffusion_model")["peak_torch"] == EXPERT


def test_umt5_is_held_in_fp32():
    """The encoder sits under the decode at 4 bytes a parameter (cast_fp32 false); at 2 bytes the peak would be
    11.3 GB lower."""
    r = _rows()[0]
    assert _est(r)["peak_torch"] - _est(r, drop="text_encoder")["peak_torch"] == UMT5_FP32


def test_the_default_offload_reading_is_under_half_the_figure():
    """Why the mapping changed: with server_args' defaults (one expert while sampling, encoder and VAE offloaded) the
    run is under half the measured allocated peak, and the feature-cache decode cannot make up the rest."""
    r = next(r for r in _rows() if r["compare"] == "torch_allocated")
    comps = B._measured_components(r)[1:]  # one expert
    e = E.estimate(comps, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"],
                   policy={"_no_knobs": True, **r["policy"], "models": "swap", "text_encoders": "cpu", "cast_fp32": True})
    assert e["peak_torch"] < r["measured_gib"] * B.GiB / 2
    assert 2 * EXPERT + UMT5_FP32 < r["measured_gib"] * B.GiB  # the resident weights alone fit under the figure
