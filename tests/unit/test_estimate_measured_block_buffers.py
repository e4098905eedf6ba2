"""Measured batch 28 (mickqian/diffusion-bench-framework reports/lightx2v-readme-repro-20260929; after first sight,
mapping_changes, etune28): LightX2V's block offload and SGLang's layerwise offload stream Wan2.1-I2V-14B's DiT a whole
block at a time and keep two blocks on the device (LightX2V: two block buffers allocated at load, WanTransformerWeights
offload_blocks_num 2; SGLang: LayerwiseOffloadManager's running layer and prefetch_size 1 more) beside the non-block
modules, which neither streams. The rows say so with policy blocks_in_flight 2 (bench_estimate.streamed_offload_bytes).
The expected bytes are counted here from Wan's WanModel shapes for model_type 'i2v' (dim 5120, ffn 13824, 40 blocks,
text 4096, freq 256, in 36, patch 1x2x2, CLIP-H 1280 image embedding), not taken from the estimate."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

E = B.E
D, FFN = 5120, 13824
LX2V = "dbf-lx2v-repro-wan21-i2v-14b-480p-lightx2v-block-offload-bf16-4090"
SGL = "dbf-lx2v-repro-wan21-i2v-14b-480p-sglang-layerwise-all-4090"


def _linear(i, o):
    return i * o + o


# one I2V block in bf16: self- and cross-attention q, k, v, o with their q/k RMSNorms, the image key/value pair and its
# norm, the FFN, norm3 (affine LayerNorm) and the 6 x dim modulation
BLOCK = 2 * (2 * (4 * _linear(D, D) + 2 * D) + 2 * _linear(D, D) + D + _linear(D, FFN) + _linear(FFN, D) + 2 * D + 6 * D)
# patch embedding (Conv3d 36 -> dim, 1x2x2), text and time embeddings, the time projection, the head and its
# modulation, and the image embedding MLP (LayerNorm, Linear, GELU, Linear, LayerNorm)
NON_BLOCK = 2 * (36 * 4 * D + D + _linear(4096, D) + _linear(D, D) + _linear(256, D) + _linear(D, D) + _linear(D, 6 * D)
                 + _linear(D, 64) + 2 * D + 2 * 1280 + _linear(1280, 1280) + _linear(1280, D) + 2 * D)


def _row(rid):
    return next(r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"] == rid)


def _dm(comps):
    return next(c for c in comps if c["role"] == "diffusion_model")


def test_block_and_non_block_bytes_follow_the_shapes():
    comps = B._measured_components(_row(LX2V))
    assert BLOCK == 807_676_928 and NON_BLOCK == 482_680_448
    assert _dm(comps)["bytes"] == 40 * BLOCK + NON_BLOCK


@pytest.mark.parametrize("rid", [LX2V, SGL])
def test_rows_keep_two_blocks_and_the_non_block_modules_on_the_device(rid):
    r = _row(rid)
    assert r["policy"]["offload"] == "all" and r["policy"]["blocks_in_flight"] == 2
    comps = B._measured_components(r)
    off = B.streamed_offload_bytes(comps, r["policy"]["blocks_in_flight"])
    assert _dm(comps)["bytes"] - off == 2 * BLOCK + NON_BLOCK
    pol = {"_no_knobs": True, **{k: v for k, v in r["policy"].items() if k not in ("offload", "blocks_in_flight")},
           "offload_bytes": off}
    e = E.estimate(comps, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=pol)
    assert e["_ctx"]["w"]["dm"] == 2 * BLOCK + NON_BLOCK
    # models resident: the buffers stay under the decode too (LightX2V allocates them once, at load)
    one_layer = dict(pol, offload_bytes=1 << 50)
    e1 = E.estimate(comps, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=one_layer)
    assert e["breakdown"]["vae_decode"]["weights"] - e1["breakdown"]["vae_decode"]["weights"] == 2 * BLOCK + NON_BLOCK


def test_measured_reads_the_row_field():
    got = {r["id"]: ours for r, ours, _, _ in B.measured() if r["id"] in (LX2V, SGL)}
    GiB = 1024 ** 3
    # against the measured peaks (22.35 / 12.99 GiB): read low still, but no longer by the streamed DiT's two blocks
    assert 19.5 * GiB < got[LX2V] < 22.35 * GiB
    assert 10.0 * GiB < got[SGL] < 12.99 * GiB
    assert {LX2V, SGL} <= B.MEASURED_FIT


def test_one_streamed_layer_without_the_field():
    comps = B._measured_components(_row(LX2V))
    assert B.streamed_offload_bytes(comps) == 1 << 50
    assert B.streamed_offload_bytes(comps, 1) == 39 * BLOCK


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2", 41])
def test_bad_block_counts_are_refused(bad):
    with pytest.raises(ValueError, match="blocks_in_flight"):
        B.streamed_offload_bytes(B._measured_components(_row(LX2V)), bad)
