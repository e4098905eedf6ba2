"""The Z-Image GGUF rows of the measured benchmark, mapped tensor by tensor (bench_estimate.zimage_blocks and the row
field tensor_types) as ComfyUI-GGUF's 'gguf qtypes' line counts the files. Expected bytes are written out here from
the block shapes and the GGUF block sizes (Q8_0 34 bytes per 32 weights; Q4_K 144, Q5_K 176, Q6_K 210 per 256):
requantizing the whole table to one type (the first-sight mapping), or missing the 16-bit refiners, breaks them."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

BLOCK = {"qkv": 11520 * 3840, "out": 3840 * 3840, "w1": 10240 * 3840, "w2": 3840 * 10240, "w3": 10240 * 3840, "ada": 15360 * 256}
SIXTEEN_BIT = 2 * sum(BLOCK.values()) + 2 * (sum(BLOCK.values()) - BLOCK["ada"]) \
    + 3840 * 64 + 1024 * 256 + 256 * 1024 + 3840 * 2560 + 64 * 3840 + 3840 * 256  # 2 noise + 2 context refiners, embedders, final
SMALL = 6_154_908_736 - 30 * sum(BLOCK.values()) - SIXTEEN_BIT  # norms, biases, pad tokens: F32


def _dm_bytes(rid):
    row = next(r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"] == rid)
    return next(c["bytes"] for c in B._measured_components(row) if c["role"] == "diffusion_model")


def test_table_matches_the_qtypes_line():
    t = B.zimage_blocks()
    assert sum(d == "F32" for d, _ in t.values()) == 245  # 'F32 (245)'
    big = [k for k, (d, _) in t.items() if d == "BF16"]
    assert sum(k.startswith("layers.") for k in big) == 180 and len(big) - 180 == 24 + 4  # Q-types (180); F16 (24) + BF16 (4)


def test_q8_0_file():
    q8 = 30 * sum(BLOCK.values()) * 34 // 32
    assert _dm_bytes("orsoeric-zimage-turbo-gguf-q8_0-weights") == q8 + 2 * SIXTEEN_BIT + 4 * SMALL == 7_224_676_608


def test_q4_k_m_file():
    per_block = BLOCK["qkv"] * 176 // 256 + BLOCK["w2"] * 210 // 256 + (BLOCK["w1"] + BLOCK["w3"] + BLOCK["out"] + BLOCK["ada"]) * 144 // 256
    assert _dm_bytes("orsoeric-zimage-turbo-gguf-q4_k_m-weights") == 30 * per_block + 2 * SIXTEEN_BIT + 4 * SMALL == 4_981_502_208
