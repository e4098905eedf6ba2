"""kv-accuracy round 74 (task ellm52, batch 79 after first sight): GLM-5.2 on llama.cpp b10505 (glm-dsa), 4x RTX PRO
6000 Blackwell Max-Q, --n-cpu-moe 54 --tensor-split 54,9,8,8, f16 cache (dfch/biz.dfch.LlmOps)."""
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.names import MODELS_DIR
from gpu_garden.memory.llm.spec import from_config
from gpu_garden.memory.llm.weights import expert_layer_bytes

MiB = 1 << 20
GLM52 = "zai-org/GLM-5.2"
FILE = int(523.83 * 1024 * MiB)  # 'file size = 523.83 GiB (5.97 BPW)' (UD-Q5_K_XL)
CARD = 97288 * MiB  # the 'CUDA0 ... 97288 MiB' device line of the logs
FULL_LAYERS = (0, 1, 2) + tuple(range(6, 75, 4))  # GLM_5_2_DEFAULT_INDEXER_TYPES: 1, 1, then nineteen 1, 0, 0, 0


def _plan(ctx, **kw):
    knobs = dict(runtime_version="b10505", flash_attn="auto", ubatch=512, ngl=999, n_cpu_moe=54,
                 tensor_split=[54, 9, 8, 8], num_gpus=4, kv_unified=False)
    knobs.update(kw)
    return llm.plan(llm.describe(model=GLM52), "llama.cpp", ctx=ctx, parallel=1, kv_dtype="f16",
                    weights_dtype="UD-Q5_K_XL", vram=CARD, **knobs)


# --- --n-cpu-moe over several GPUs ---------------------------------------------------------------------------------
# Qwen3-30B-A3B Q4_K_M over two GPUs (-ts 1,1, 48 layers + output: 25 / 23), --n-cpu-moe 10: layers 0-9 are the first
# GPU's, so their experts (each layer's gate / up / down at Q4_K, down at Q6_K on use_more_bits' layers) leave its
# weights and only its; the GPUs' weights still sum to the plan's GPU weights
def test_n_cpu_moe_over_two_gpus_takes_the_first_devices_experts_off():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    kw = dict(runtime_version="b7000", ngl=999, num_gpus=2, tensor_split=[1, 1])
    moe = llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="f16", weights_dtype="Q4_K_M", vram=24 << 30, n_cpu_moe=10, **kw)
    whole = llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="f16", weights_dtype="Q4_K_M", vram=24 << 30, **kw)
    moved = sum(expert_layer_bytes(s, "Q4_K_M")[:10])
    assert [d["layers"] for d in moe["devices"]] == [25, 23]
    assert whole["devices"][0]["weights"] - moe["devices"][0]["weights"] == moved == moe["host_experts_full"]
    assert moe["devices"][1]["weights"] == whole["devices"][1]["weights"]
    assert sum(d["weights"] for d in moe["devices"]) == moe["gpu_weights"]


# a file known by its size alone (--weights-gib 523.83, the UD-Q5_K_XL file's 5.97 bits a parameter; the ends of an
# Unsloth Dynamic range are such files too): each MoE block's experts at those bits, not at the checkpoint's 16 (256 x 3
# x 6144 x 2048 x 2 bytes = 18 GiB a block, which over 54 blocks is more than the whole file: the GPU's weights went
# negative)
def test_a_file_known_by_its_size_prices_its_experts_at_its_bits():
    s = replace(llm.describe(model="zai-org/GLM-5"), weights_bytes=FILE)
    bpp = FILE * 8 / s.params
    assert 5.9 < bpp < 6.1
    per = expert_layer_bytes(s, None)
    assert per[:3] == [0, 0, 0] and set(per[3:]) == {int(256 * 3 * 6144 * 2048 * bpp / 8)}


# --- which layers keep an indexer ------------------------------------------------------------------------------------
def test_glm52_keeps_21_indexer_layers_as_llama_cpp_reads_them():
    s = llm.describe(model=GLM52)
    assert s.n_layers == 78 and s.index_head_dim == 128
    assert s.indexer_layers == FULL_LAYERS and len(FULL_LAYERS) == 21
    # GLM-5 (is_pre_5_2: every layer full) keeps an indexer in each of its 78 layers
    assert llm.describe(model="zai-org/GLM-5").indexer_layers == ()


def test_a_config_with_indexer_types_is_read():
    cfg = json.loads((MODELS_DIR / "GLM-5.2.json").read_text())
    assert from_config(cfg, "config.json").indexer_layers == FULL_LAYERS
    with pytest.raises(UserError, match="indexer_types"):
        from_config(dict(cfg, indexer_types=["full", "none"] * 39), "config.json")


# --- llama_kv_cache_dsa: the main (MLA) cache and the indexer cache --------------------------------------------------
# main: 78 layers x 576 values (kv_lora 512 + rope 64) x 2 bytes a cell, K only ('V (f16): 0.00 MiB')
#   768000 cells: 78 x 576 x 2 x 768000 = 69,009,408,000 bytes = 65812.50 MiB (printed 'size = 65812.50 MiB')
#   4096 cells: 351.00 MiB (printed)
# indexer: 21 layers x 128 values x 2 bytes a cell
#   768000 cells: 21 x 128 x 2 x 768000 = 4,128,768,000 bytes = 3937.50 MiB (printed 'size = 3937.50 MiB ... 21 layers')
#   4096 cells: 21.00 MiB (printed)
@pytest.mark.parametrize("ctx,main,indexer", [(768000, 65812.50, 3937.50), (4096, 351.00, 21.00),
                                              (131072, 11232.00, 672.00), (896000, 76781.25, 4593.75)])
def test_the_two_caches_as_b10505_prints_them(ctx, main, indexer):
    kvd = _plan(ctx)["kv_detail"]
    assert kvd["full_layers"] / MiB == main
    assert kvd["indexer"] / MiB == indexer
    assert kvd["total"] == kvd["full_layers"] + kvd["indexer"]


def test_sglang_and_ollama_stay_refused_for_glm52():
    # vLLM's cache for GLM-5.2 is read since round 77 (test_kv_ellm55.py: the key in the same 21 layers)
    with pytest.raises(UserError, match="SGLang's NSA pool for such a model was not read"):
        llm.plan(llm.describe(model=GLM52), "sglang", ctx=4096)
    with pytest.raises(UserError, match="modelled for vLLM, llama.cpp and SGLang only"):
        llm.plan(llm.describe(model=GLM52), "ollama", ctx=4096)


# --- the layers over the four GPUs ---------------------------------------------------------------------------------
# -ts 54,9,8,8 over the GGUF's 79 blocks (78 layers + the nextn block, placed, not loaded) + the output: 80 units;
# block il goes to the first device whose cumulative share exceeds il / 80: blocks 0-54, 55-63, 64-71, 72-78 (+ output).
# Cache layers: 55 / 9 / 8 / 6 (block 78 has none); 78 blocks + output would give 54 / 9 / 8 / 7.
#   main cache at 768000 cells, 843.75 MiB a layer: 46406.25 / 7593.75 / 6750.00 / 5062.50 MiB (printed)
#   indexer layers among them: {0, 1, 2, 6, ..., 54} = 16, {58, 62} = 2, {66, 70} = 2, {74} = 1, 187.5 MiB each:
#   3000.00 / 375.00 / 375.00 / 187.50 MiB (printed)
#   the breakdown's context column (main + indexer, truncated): 49406 / 7968 / 7125 / 5250 (printed)
def test_devices_hold_55_9_8_6_layers_and_their_indexer_layers():
    devs = _plan(768000)["devices"]
    assert [d["layers"] for d in devs] == [55, 9, 8, 6]
    assert [d["kv"] / MiB for d in devs] == [46406.25, 7593.75, 6750.00, 5062.50]
    assert [d["indexer"] / MiB for d in devs] == [3000.00, 375.00, 375.00, 187.50]
    assert [int((d["kv"] + d["indexer"]) / MiB) for d in devs] == [49406, 7968, 7125, 5250]
    assert devs[3]["output_layer"]


# the run's 54 stripped blocks and one whole one on CUDA0: block 54's experts are its, blocks 0-53's in host memory
def test_n_cpu_moe_54_leaves_block_54s_experts_on_the_first_gpu():
    r = _plan(4096, weights_bytes=FILE)
    whole = _plan(4096, weights_bytes=FILE, n_cpu_moe=0)
    per = expert_layer_bytes(replace(llm.describe(model=GLM52), weights_bytes=FILE), None)
    assert r["host_experts_full"] == sum(per[:54])
    assert whole["devices"][0]["weights"] - r["devices"][0]["weights"] == sum(per[:54])
    assert [d["weights"] for d in r["devices"][1:]] == [d["weights"] for d in whole["devices"][1:]]


# --- the rows --------------------------------------------------------------------------------------------------------
def test_batch79_rows_score_their_main_cache_and_device_exactly():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from llm_common import DATA
    from llm_score import score
    rows = [r for r in json.loads(DATA.read_text())["rows"] if r.get("batch") == 79]
    assert len(rows) == 9
    for row in rows:
        out = score(row)
        assert "error" not in out, out
        assert out["kv_exact"] and out["device_layers_exact"], out
