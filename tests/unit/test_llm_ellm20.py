"""Batches 29-32, after first sight (task ellm20): models the rows named that kv had no description of, each from its
published config.json, checked by hand against what the runtime printed."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


# HuggingFaceTB/SmolLM3-3B: 36 layers, 4 KV heads x 128, every 4th layer without RoPE but still caching K and V.
# ggml-org SmolLM3-Q4_K_M on an M5 (llama.cpp b8193, 65536 cells): context 4608 MiB = 36 x 65536 x 4 x 128 x 2 x 2.
def test_smollm3_every_layer_caches():
    s = llm.describe(model="HuggingFaceTB/SmolLM3-3B")
    assert (s.n_layers, s.attn_layers, s.n_kv_heads, s.head_dim_k) == (36, 36, 4, 128)
    assert not s.generic and s.tied
    r = llm.plan(s, "llama.cpp", ctx=65536, weights_dtype="Q4_K_M", runtime_version="b8193")
    assert r["kv_total"] == 36 * 65536 * 4 * 128 * 2 * 2 == 4608 * MiB


# params by hand: tied table 128256 x 2048, a layer q/o 2 x 2048^2 + k/v 2 x 2048 x 512 + mlp 3 x 2048 x 11008 + two
# norms, a final norm: 3,075,098,624 (the card's 3.08B)
def test_smollm3_params():
    layer = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 11008 + 2 * 2048
    assert llm.describe(model="HuggingFaceTB/SmolLM3-3B").params == 128256 * 2048 + 36 * layer + 2048 == 3_075_098_624


# google/gemma-3-1b-it: 26 layers, window 512 on 5 of 6 (4 global), 1 KV head x 256. llama.cpp keeps window + ubatch
# cells on a sliding layer: 4 x 32768 x 1 x 256 x 2 x 2 + 22 x (512 + 512) x 1024 = 150 MiB (b8185 on an M5: context 150)
def test_gemma3_1b_sliding_cache():
    s = llm.describe(model="google/gemma-3-1b-it")
    assert s.layer_kinds.count("full") == 4 and s.layer_kinds.count("sliding") == 22 and s.sliding_window == 512
    assert s.vision is None
    r = llm.plan(s, "llama.cpp", ctx=32768, weights_dtype="Q4_K_M", runtime_version="b8185")
    assert r["kv_total"] == 4 * 32768 * 1024 + 22 * 1024 * 1024 == 150 * MiB


# params by hand: tied 262144 x 1152; a layer q/o 2 x 1152 x 1024, k/v 2 x 1152 x 256, mlp 3 x 1152 x 6912, four
# layer norms of 1152 and q/k norms of 256; a final norm: 999,885,952 (the card's 1B)
def test_gemma3_1b_params():
    layer = 2 * 1152 * 1024 + 2 * 1152 * 256 + 3 * 1152 * 6912 + 4 * 1152 + 2 * 256
    assert llm.describe(model="google/gemma-3-1b-it").params == 262144 * 1152 + 26 * layer + 1152 == 999_885_952


def test_ollama_gemma3_1b_tag():
    s = llm.describe(model="gemma3:1b")
    assert s.name == "Gemma-3-1B" and s.quant == "Q4_K_M"
