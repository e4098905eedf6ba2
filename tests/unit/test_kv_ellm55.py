"""kv-accuracy round 77 (task ellm55): the DeepSeek-sparse-attention rows kv refused for vLLM's and SGLang's caches
(regression rows of batches 30 and 58). Every expected figure is computed here by hand from the config's fields and the
runtimes' source constants, not by the code under test."""
import json
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.names import MODELS_DIR
from gpu_garden.memory.llm.spec import from_config

REPO = Path(__file__).resolve().parents[2]
GiB = 1 << 30
GLM5 = json.loads((MODELS_DIR / "GLM-5.json").read_text())
GLM52 = json.loads((MODELS_DIR / "GLM-5.2.json").read_text())
# per layer and token in vLLM: fp8_ds_mla = 512 fp8 latent values + 512 / 128 fp32 scales + 64 rope values x 2 bytes;
# the indexer key (DeepseekV32IndexerCache, uint8) = 128 fp8 values + 128 / 128 fp32 scales
FP8_DS_MLA = 512 + 512 // 128 * 4 + 64 * 2
INDEXER_KEY = 128 + 128 // 128 * 4
# GLM-5.2: index_topk_freq 4, index_skip_topk_offset 3; vLLM's deepseek_v2.py skips the top-k (no Indexer) where
# max(layer - 3 + 1, 0) % 4 != 0: layers 0, 1, 2 (max(.., 0) = 0), then 6, 10, ..., 74
FULL_LAYERS = (0, 1, 2) + tuple(range(6, 75, 4))


def _cfg(d: dict) -> dict:
    return {k: v for k, v in d.items() if not k.startswith("_")}


# --- vLLM: the indexer key only in the layers that build an Indexer ------------------------------------------------

def test_vllm_keeps_glm52s_indexer_key_in_21_layers_and_the_latent_in_78():
    assert len(FULL_LAYERS) == 21
    s = llm.describe(model="zai-org/GLM-5.2")
    assert s.indexer_layers == FULL_LAYERS
    r = llm.plan(s, "vllm", ctx=400000, tensor_parallel_size=4, kv_dtype="fp8")
    assert r["kv_per_token"] == 78 * FP8_DS_MLA + 21 * INDEXER_KEY == 53940  # 78 x 788 = 61,464 with a key in each
    # GLM-5 and GLM-5.1 keep one in every layer, as before
    assert llm.plan(llm.describe(model="zai-org/GLM-5"), "vllm", ctx=4096, kv_dtype="fp8")["kv_per_token"] == 61464


def test_the_per_token_size_matches_the_printed_glm52_pools():
    # alint77/jupiter-glm52-vllm-worklog baseline/server.out (vLLM 0.23.1rc1.dev1201, kv_cache_dtype fp8_ds_mla, TP 4):
    # 'Available KV cache memory: 28.85 GiB', 'GPU KV cache size: 574,336 tokens' (block 64: 8974 blocks)
    assert round(574336 * 53940 / GiB, 2) == 28.85
    assert round(574336 * 61464 / GiB, 2) == 32.88  # a key in every layer: 3.6 GiB more than printed
    # the 0.94 run: 32.32 GiB for 643,136 tokens; 53,940 bytes give 10,052 blocks of 64, printed 10,049 (the smallest
    # rank's blocks; 0.03 %), a key in every layer 8,822
    assert 32.32 * GiB // (64 * 53940) == 10052 and 32.32 * GiB // (64 * 61464) == 8822


def test_vllms_indexer_layers_follow_index_topk_freq_without_indexer_types():
    cfg = dict(_cfg(GLM52))
    del cfg["indexer_types"]
    assert from_config(cfg, "config.json").indexer_layers == FULL_LAYERS
    # an explicit pattern: "S" skips ("F" or past its end keeps one)
    pat = dict(_cfg(GLM5), index_topk_pattern="FS" * 39)
    assert from_config(pat, "config.json").indexer_layers == tuple(range(0, 78, 2))
    # the defaults (freq 1): every layer, as GLM-5's config
    assert from_config(_cfg(GLM5), "config.json").indexer_layers == ()


def test_a_config_whose_two_indexer_descriptions_disagree_is_refused():
    with pytest.raises(UserError, match="inconsistent"):
        from_config(dict(_cfg(GLM52), index_topk_freq=2), "config.json")


# --- GLM-5.1 built in ----------------------------------------------------------------------------------------------

def test_glm51_is_built_in_with_glm5s_geometry():
    s = llm.describe(model="zai-org/GLM-5.1")
    g = llm.describe(model="zai-org/GLM-5")
    assert s.name == "GLM-5.1"
    assert (s.n_layers, s.kv_lora_rank, s.index_head_dim, s.indexer_layers, s.params) == \
        (g.n_layers, g.kv_lora_rank, g.index_head_dim, (), g.params)
    # voipmonitor's vLLM log (batch 30, MTP x3): 'GPU KV cache size 432,832 tokens', 'Available KV cache memory
    # 25.09 GiB' = 79 layers (78 and the MTP layer, whose Indexer vLLM always builds) x (656 + 132)
    assert round(432832 * 79 * (FP8_DS_MLA + INDEXER_KEY) / GiB, 2) == 25.09
    assert llm.plan(s, "vllm", ctx=4096, kv_dtype="fp8")["kv_per_token"] == 78 * 788
    # its MTP drafter (num_nextn_predict_layers) is not modelled: the batch-30 rows stay refused for it
    with pytest.raises(UserError, match="multi-token-prediction"):
        llm.plan(s, "vllm", ctx=4096, kv_dtype="fp8", mtp_tokens=3)


# --- SGLang's NSA profile --------------------------------------------------------------------------------------------

def test_sglangs_nsa_cell_is_the_latent_at_the_cache_type_and_the_indexer_key_in_every_layer():
    # sgl-project/sglang pool_configurator.py DefaultPoolConfigurator._compute_cell_size: (kv_lora_rank +
    # qk_rope_head_dim) x layers x element size, + (index_head_dim + index_head_dim // 128 x 4) x layers (uint8)
    from gpu_garden.memory.llm.runtimes.sglang import cell_bytes
    s = llm.describe(model="zai-org/GLM-5.1")
    assert cell_bytes(s, "fp8_e4m3") == 78 * ((512 + 64) * 1 + INDEXER_KEY) == 55224  # not the 656-byte record
    assert cell_bytes(s, "bf16") == 78 * ((512 + 64) * 2 + INDEXER_KEY) == 100152
    r = llm.plan(s, "sglang", ctx=4096, kv_dtype="fp8_e4m3", tensor_parallel_size=8)
    assert r["kv_per_token"] == 55224


def test_sglang_is_refused_for_shared_indexers_and_for_its_drafter():
    with pytest.raises(UserError, match="SGLang's NSA pool for such a model was not read"):
        llm.plan(llm.describe(model="zai-org/GLM-5.2"), "sglang", ctx=4096)
    with pytest.raises(UserError, match="sglang's drafter is not modelled"):
        llm.plan(llm.describe(model="zai-org/GLM-5.1"), "sglang", ctx=4096, mtp_tokens=3)


# --- the rows ----------------------------------------------------------------------------------------------------------

def _row(rid):
    sys.path.insert(0, str(REPO / "benchmarks"))
    sys.path.insert(0, str(REPO / "tests"))
    from llm_score import score
    rows = json.loads((REPO / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
    return score(next(r for r in rows if r["id"] == rid))


@pytest.mark.parametrize("util,printed,exact", [("090", 574336, True), ("094", 643136, False)])
def test_the_glm52_rows_score_from_the_printed_budget(util, printed, exact):
    s = _row(f"vllm-jupiter-glm52-w4a16-tp4-ep-4xgh200-400k-u{util}-fp8mla-uvaoffload40")
    assert "error" not in s
    ours, theirs = s["tokens_from_printed"]
    assert theirs == printed and s["tokens_from_printed_exact"] is exact
    assert abs(ours / theirs - 1) < 0.001
    # --cpu-offload-gb 40 (the log's non-default args): the experts moved to Grace memory, the run fits
    assert s["fits"] == (True, True)
