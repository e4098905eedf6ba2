"""SGLang's Qwen-Image VAE precision by date (measured batch 23, after first sight; mapping_changes, ediff17): the
pipeline config inherited PipelineConfig's vae_precision 'fp32' until sgl-project/sglang#25411 (merged 2026-05-15) set
'bf16'. PR #16150's rows (2025-12-30) hold and decode the VAE in fp32; the CI baseline (2026-08) and PR #31538 (2026-07)
keep bf16. Expected bytes are the Wan 2.1 VAE layout's parameter count x 4, not the estimate's output."""
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

E = B.E
BEFORE = ("sglang-16150-qwen-image-bf16-te-offload-1024-h100", "sglang-16150-qwen-image-bf16-layerwise-te-offload-1024-h100")
AFTER = ("sglang-ci-h100-qwen-image-bf16-1024-runtime-peak-allocated", "sglang-31538-qwen-image-bf16-resident30-rtx5090",
         "sglang-31538-qwen-image-bf16-resident34-rtx5090", "sglang-31538-qwen-image-bf16-layerwise-prefetch1-rtx5090")


def _rows():
    return {r["id"]: r for r in json.loads(B.MEASURED.read_text())["rows"]}


def _estimate(r):
    pol = {"_no_knobs": True}
    pol.update({k: v for k, v in r["policy"].items() if k != "offload" or v in E.OFFLOAD_MODES})
    if r["policy"].get("offload") == "all":
        pol["offload_bytes"] = 1 << 50
    return E.estimate(B._measured_components(r), r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=pol)


def test_vae_precision_follows_the_sglang_revision():
    rows = _rows()
    changes = " ".join(c for m in json.loads(B.MEASURED.read_text())["mapping_changes"] for c in m["changes"])
    for rid in BEFORE:
        assert rows[rid]["policy"]["vae_dtype"] == "fp32" and rid in changes and rid in B.MEASURED_FIT
        assert "2025-12-30" in rows[rid]["source"]
    for rid in AFTER:
        assert rows[rid]["policy"]["vae_dtype"] == "bf16"


def test_the_decode_holds_the_vae_in_fp32():
    """Wan 2.1 VAE: 126,892,531 parameters (the layout's tensors) x 4 bytes = 507,570,124 B in the decode phase."""
    params = sum(math.prod(s) for _, s in B.table("vae_wan_2.1_vae").values())
    assert params == 126_892_531
    e = _estimate(_rows()[BEFORE[1]])
    assert e["breakdown"]["vae_decode"]["weights"] == 4 * params == 507_570_124


def test_the_streamed_run_peaks_in_its_fp32_decode():
    """With the DiT streamed the decode is the peak: in fp32 its bytes are twice the bf16 decode's (weights and activations)."""
    r = _rows()[BEFORE[1]]
    e32, e16 = _estimate(r), _estimate(dict(r, policy=dict(r["policy"], vae_dtype="bf16")))
    d32, d16 = e32["breakdown"]["vae_decode"], e16["breakdown"]["vae_decode"]
    assert d32["activations"] == 2 * d16["activations"] and d32["weights"] == 2 * d16["weights"]
    assert e32["peak_torch"] == d32["weights"] + d32["activations"]
