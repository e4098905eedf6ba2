"""vLLM's rotary cos/sin tables (RotaryEmbedding.cos_sin_cache: positions x rotary_dim in the model's dtype, a buffer
of every GPU's model) are part of what "Model loading took" prints. Expected values: the tables' sizes worked out by
hand from the released configs, and the 0.19.0 H100 logs of batch 23 (llm-d-planner accuracy/results/v0.19.0/logs)."""
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import weights as W

GiB = 1 << 30
H100 = dict(vram=79.19 * GiB, gpu_memory_utilization=0.95, gpu_name="NVIDIA H100 80GB HBM3", runtime_version="0.19.0")


def test_table_sizes_by_rope_kind():
    # Gemma 3: linear scaling x 8 over 131072 positions for the full layers, an unscaled local table for the sliding ones
    assert llm.describe(model="Gemma-3-4B").rope_cache_elems == (131072 * 8 + 131072) * 256
    assert llm.describe(model="Gemma-3-27B").rope_cache_elems == (131072 * 8 + 131072) * 128
    assert llm.describe(model="Llama-3.1-8B").rope_cache_elems == 131072 * 128      # llama3 rope: no extra positions
    assert llm.describe(model="gpt-oss-20b").rope_cache_elems == 4096 * 32 * 64      # YaRN: original positions x 32
    assert llm.describe(model="DeepSeek-V2-Lite").rope_cache_elems == 163840 * 64   # MLA: the 64 rope dims alone
    assert llm.describe(model="Jamba-v0.1").rope_cache_elems == 0                    # no positional encoding at all


def test_partial_rotary_factor(tmp_path):
    cfg = {"model_type": "phi", "vocab_size": 1000, "hidden_size": 2560, "num_hidden_layers": 2,
           "num_attention_heads": 32, "max_position_embeddings": 2048, "partial_rotary_factor": 0.4}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert llm.describe(config=str(tmp_path / "config.json")).rope_cache_elems == 2048 * 32   # 80 x 0.4 dims


@pytest.mark.parametrize("model, printed, tol", [
    ("google/gemma-3-4b-it", 8.58, 0.01),               # google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192.log (8.01 without)
    ("google/gemma-3-12b-it", 23.31, 0.06),             # (22.70 without; 0.05 GiB still unexplained)
    ("google/gemma-3-27b-it", 51.45, 0.08),             # (51.10 without; 0.07 GiB still unexplained)
    ("meta-llama/Llama-3.1-8B-Instruct", 14.99, 0.005),  # (14.96 without)
])
def test_model_loading_took(model, printed, tol):
    r = llm.plan(llm.describe(model=model), "vllm", ctx=8192, **H100)
    assert r["weights"] / GiB == pytest.approx(printed, abs=tol)


def test_every_tensor_parallel_rank_holds_the_whole_table():
    # meta-llama-llama-3-1-8b---h100-80gb--tp4pp1dp1--8192.log: 'Model loading took 3.77 GiB' (a quarter of the
    # checkpoint is 3.74; the 32 MiB table is not split)
    r = llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=8192, tensor_parallel_size=4, **H100)
    assert r["weights"] / GiB == pytest.approx(3.77, abs=0.005)


def test_other_runtimes_do_not_count_it():
    s = llm.describe(model="Gemma-3-4B")
    a = llm.plan(s, "llama.cpp", ctx=8192, weights_dtype="bf16")
    assert "rotary" not in a["weights_how"]


def test_an_fp32_config_keeps_fp32_tables(tmp_path):
    # RotaryEmbedding builds cos_sin_cache in the model's dtype: a float32 config's weights are fp32 (weights.py), so
    # are its tables, 2048 positions x 80 dims x 4 bytes, with or without --weights-dtype fp32
    cfg = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 640, "intermediate_size": 1024,
           "num_hidden_layers": 2, "num_attention_heads": 8, "max_position_embeddings": 2048, "torch_dtype": "float32"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    s = llm.describe(config=str(tmp_path / "config.json"))
    for dtype in (None, "fp32"):
        r = llm.plan(s, "vllm", ctx=2048, weights_dtype=dtype)
        assert r["weights"] - W.weights_by_role(s, dtype)["total"] == 2048 * 80 * 4


def test_every_pipeline_stage_holds_the_tables():
    # each stage's process builds the rotary embedding of its own attention layers: Llama-3.1-8B's 131072 x 128 bf16
    # table (32 MiB) is in the last stage's weights as well as stage 0's
    r = llm.plan(llm.describe(model="Llama-3.1-8B"), "vllm", ctx=8192, pipeline_parallel_size=2, **H100)
    s = llm.describe(model="Llama-3.1-8B")
    roles = W.weights_by_role(s)
    first, last = r["pp_stages"]
    assert first["stage_weights"] == roles["blocks"] // 2 + roles["embedding"] + 131072 * 128 * 2
    assert last["stage_weights"] == roles["blocks"] // 2 + roles["output"] + 131072 * 128 * 2
