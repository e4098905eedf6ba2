"""SGLang's diffusion CI rows (measured batch 21, after first sight): the DiT stays on the device through the VAE decode
and the text encoder is never on it beside the DiT (mapping_changes, ediff11). Expected values are the published
parameter counts x 2 bytes (bf16), not the estimate's output."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

E = B.E
SGLANG_CI = "sglang-ci-h100-"
# DiT parameters (bench_estimate.SYNTH / our FLUX.1-dev layout) and the text encoder's, bf16
DIT = {"zimage-turbo": 6_154_908_736, "flux2-dev": 32_223_281_152, "qwen-image": 20_430_000_000}
QWEN3_4B = 4_022_468_096


def _rows():
    return [r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"].startswith(SGLANG_CI)]


def _peak(r, drop=(), **over):
    comps = [c for c in B._measured_components(r) if c["role"] not in drop]
    pol = {"_no_knobs": True, **r["policy"], **over}
    return E.estimate(comps, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=pol)["peak_torch"]


def test_rows_are_mapped_and_fit():
    rows = _rows()
    assert len(rows) == 4 and all(r["batch_id"] == 21 for r in rows)
    for r in rows:
        assert r["policy"]["keep_on_device"] == ["diffusion_model"] and r["policy"]["text_encoders"] == "cpu"
        assert r["id"] in B.MEASURED_FIT  # a regression set: the mapping was written with these figures in view
    changes = " ".join(c for m in json.loads(B.MEASURED.read_text())["mapping_changes"] for c in m["changes"])
    assert all(r["id"] in changes for r in rows)


def test_the_dit_sits_under_the_decode():
    """The pipeline peak is the decode with the whole DiT under it: taking the DiT away lowers it by exactly the
    DiT's bf16 bytes (parameters x 2)."""
    for r in _rows():
        name = next((k for k in DIT if k in r["id"]), None)
        if name is None:
            continue
        assert _peak(r) - _peak(r, drop=("diffusion_model",)) == DIT[name] * 2


def test_the_text_encoder_is_not_resident():
    """Qwen3-4B (8,044,936,192 bytes in bf16) never sits beside Z-Image's DiT: the peak does not move with it, and is
    below DiT + encoder, which is over the row's measured 14.78 GiB."""
    r = next(r for r in _rows() if "zimage" in r["id"])
    with_te, without_te = _peak(r), _peak(r, drop=("text_encoder",))
    assert with_te == without_te
    both = (DIT["zimage-turbo"] + QWEN3_4B) * 2
    assert with_te < both and both > r["measured_gib"] * B.GiB
