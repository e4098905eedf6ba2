"""FastVideo's FastHunyuan rows (measured batch 15, after first sight; mapping_changes, ediff14): diffusers 0.32.0's
HunyuanVideo transformer holds a dense bool [1, N, N] attention mask and torch 2.5's SDPA a bf16 copy of it. Expected
values are hand counts: N = 12 latent frames x 45 x 80 patches + 256 text tokens = 43,456; 3 bytes per pair; the
transformer's 12,821,012,544 parameters x 2 bytes (bf16 row), not the estimate's output. The NF4 and int8 rows also keep
the Linears named proj_out / norm_out in bf16 (the script's llm_int8_skip_modules; diffusers 0.32.0 skips by name)."""
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


# llm_int8_skip_modules ['proj_out', 'norm_out']: diffusers 0.32.0 skips every Linear named so (hand count from its
# HunyuanVideoTransformer3DModel: 40 single-block proj_out 15360 -> 3072, the output proj_out 3072 -> 64, norm_out.linear
# and two token-refiner norm_out.linear 3072 -> 6144, each with its bias)
NAMED = 40 * (3072 * 15360 + 3072) + (64 * 3072 + 64) + 3 * (6144 * 3072 + 6144)


def test_named_outs_table_keeps_the_published_count():
    t = B.hv13b_named_outs()
    assert sum(B.math.prod(s) for _, s in t.values()) == 12_821_012_544
    assert NAMED == 1_944_397_888
    assert sum(B.math.prod(s) for k, (_, s) in t.items() if "proj_out" in k or "norm_out" in k) == NAMED


def test_skipped_linears_stay_bf16_in_the_quantized_rows():
    rows = _rows()
    for rid, q in ((IDS[1], "F8_E4M3"), (IDS[2], "Q4_0")):
        dm = next(c for c in B._measured_components(rows[rid]) if c["role"] == "diffusion_model")
        kept = {k: v for k, v in dm["table"].items() if "proj_out" in k or "norm_out" in k}
        assert {d for d, _ in kept.values()} == {"BF16"}
        assert sum(B.tensor_bytes(d, s) for d, s in kept.values()) == NAMED * 2
        assert {d for k, (d, s) in dm["table"].items() if k.startswith("params.") and len(s) == 2} == {q}
