"""kv-accuracy round 82 (task ellm60): batch 81's four SGLang rows after rounds 77-78. No rule and no data changed this
round; these tests pin what was read, so that the next round starts from the same arithmetic. Expected values are
worked here by hand from the printed lines and SGLang's source, not by the code under test.

SGLang's automatic --mem-fraction-static, python/sglang/srt/server_args.py _handle_gpu_memory_settings, read at
1b3513a7 (2026-02-16, the last change to the file before the rocm/sgl-dev:v0.5.8.post1-...-20260218 image) and at
2fb23945 (2026-02-25, the v0.5.9-...-20260225 image), in sgl-project/sglang's history as a fork's mirror carries it
(spacecat2002/sglang-sc-eplb; `fetch github:sgl-project/sglang` refused the 1.2 GB snapshot):
  a card of 160 GiB or more: chunked_prefill_size 16384, cuda_graph_max_bs 512;
  reserved = 512 + 1.5 x max(16384, 2048) + 2 x 512 + tp x pp / 8 x 1024 = 512 + 24576 + 1024 + 1024 = 27136 MiB at TP 8
  (piecewise CUDA graph off by default before c64274c7, 2026-03-02, and off on HIP after it; no speculative algorithm);
  mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3), gpu_mem = 287.98 GiB = 294891.52 MiB:
  267755.52 / 294891.52 = 0.90798 -> 0.908, both GLM-5-FP8 rows' printed fraction.
  For a multimodal config, adjust_mem_fraction_for_vlm: x 0.95 x clamp(1 - 0.1 x (L x H^2 / (24 x 1024^2) - 1), 0.8,
  1.05); configs/kimi_k25.py KimiK25VisionConfig's defaults are num_hidden_layers 27, hidden_size 1152 (MoonViT):
  27 x 1152^2 / (24 x 1024^2) = 1.423828125, 1 - 0.0423828125 = 0.9576171875, and 0.908 x 0.95 x 0.9576171875 =
  0.8260405859375, the Kimi-K2.5 row's printed fraction to the last digit.
model_runner_kv_cache_mixin.py profile_max_num_token (same commit): rest = available after the weights - total x (1 -
mem_fraction_static), tokens = int(rest x 2^30) // cell, the cell the MLA latent at the cache type's element (+ the NSA
indexer key, 128 + 128 // 128 x 4 bytes, for a DSA model) over the layers."""
import json
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes import sglang as SG

REPO = Path(__file__).resolve().parents[2]
GiB, MiB = 1 << 30, 1 << 20
MI355X = 287.98  # GiB, torch's total capacity in the rows' document
RESERVED_TP8 = 512 + 1.5 * 16384 + 2 * 512 + 8 / 8 * 1024  # MiB
GLM5_FP8_CELL = 78 * ((512 + 64) * 1 + 128 + 128 // 128 * 4)  # 55,224 bytes: latent at fp8 + indexer key
KIMI_BF16_CELL = 61 * (512 + 64) * 2  # 70,272 bytes


def _rows():
    return {r["id"]: r for r in json.loads((REPO / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]}


def _score(row):
    sys.path.insert(0, str(REPO / "benchmarks"))
    sys.path.insert(0, str(REPO / "tests"))
    from llm_score import score
    return score(row)


GLM_ROWS = ("sglang-ajith-glm5-fp8-tp8-mi355x-fp8kv-triton-v058post1", "sglang-ajith-glm5-fp8-tp8-mi355x-fp8kv-triton-v059")
KIMI_ROW = "sglang-ajith-kimi-k25-tp8-mi355x-bf16kv-v058post1"
MINIMAX_ROW = "sglang-johannes-minimax-m25-nvfp4-tp2-2xrtxpro6000-triton-196k"


def test_the_reserve_by_hand_gives_the_printed_0908():
    assert RESERVED_TP8 == 27136
    assert round((MI355X * 1024 - RESERVED_TP8) / (MI355X * 1024), 3) == 0.908


@pytest.mark.parametrize("version", ["0.5.8.post1", "0.5.9"])
def test_kvs_default_fraction_is_sglangs_on_an_mi355x_at_tp8(version):
    assert SG.default_mfs(8, MI355X * 1024, parse_version(version)) == 0.908


def test_kimi_k25s_printed_fraction_is_the_default_times_moonvits_factor():
    # SGLang: mem_fraction_static = original x (0.95 x dynamic_adjustment_factor); the float product is the printed one
    assert 0.908 * (0.95 * (1 - 0.1 * (27 * 1152 ** 2 / (24 * 1024 ** 2) - 1))) == 0.8260405859375
    assert 0.908 * SG.vlm_factor({"num_hidden_layers": 27, "hidden_size": 1152}) == 0.8260405859375


def test_kvs_kimi_k25_has_no_moonvit_so_its_own_default_would_be_0908():
    # left open: the K2.5 alias is K2-Thinking's decoder alone (names.py), so without the printed fraction kv plans
    # 0.908, not SGLang's 0.826; the row passes the printed fraction, which is what it is scored at
    spec = llm.describe(model="moonshotai/Kimi-K2.5")
    assert spec.vision is None
    r = llm.plan(spec, "sglang", ctx=262144, weights_dtype="int4", vram=MI355X * GiB, tensor_parallel_size=8,
                 runtime_version="0.5.8.post1")
    assert any("--mem-fraction-static 0.908" in n for n in r["notes"])


@pytest.mark.parametrize("rid", GLM_ROWS)
def test_the_glm5_rows_plan_the_same_pool_with_or_without_the_printed_fraction(rid):
    row = _rows()[rid]
    bare = dict(row, input={k: v for k, v in row["input"].items() if k != "mem_fraction_static"})
    assert _score(bare)["sglang_tokens"] == _score(row)["sglang_tokens"]


@pytest.mark.parametrize("rid,free0,weights,mfs,cell,printed", [
    (GLM_ROWS[0], 283.50, 89.58, 0.908, GLM5_FP8_CELL, 3262823),
    (GLM_ROWS[1], 279.50, 89.20, 0.908, GLM5_FP8_CELL, 3199575),
    (KIMI_ROW, 283.56, 73.58, 0.8260405859375, KIMI_BF16_CELL, 2454421),
])
def test_sglangs_profile_from_the_printed_lines_is_within_003_pct(rid, free0, weights, mfs, cell, printed):
    # TP0's 'Load weight begin. avail mem' as the total, its 'Load weight end' usage: SGLang's own arithmetic lands
    # 0.013-0.017 % above the printed pool in all three (about 9 bytes a token more, or 0.02-0.03 GiB less on the rank
    # the min-over-ranks reading takes: not read); kv's own gap is its free0 and its weights (the write-up)
    tokens = int((free0 * mfs - weights) * GiB) // cell
    assert 0 < tokens / printed - 1 < 0.0003
    assert _rows()[rid]["input"].get("mem_fraction_static") == mfs


def test_kv_cell_is_the_profiles():
    row = _rows()[GLM_ROWS[0]]
    assert SG.dsa_cell(llm.describe(model=row["input"]["model"]), "fp8_e4m3") == GLM5_FP8_CELL == 55224


def test_the_minimax_row_still_scores_nothing():
    # no card edition (vram_gib null) and no version (a nightly wheel of 2026-03-30: after c64274c7 made piecewise
    # CUDA graphs the default on CUDA, whose reserve depends on conditions not read for this checkpoint)
    row = _rows()[MINIMAX_ROW]
    assert row["vram_gib"] is None and row["version"] is None and "mem_fraction_static" not in row["input"]
    assert "sglang_tokens" not in _score(row)
