"""Batches 29-32, after first sight (task ellm20): models the rows named that kv had no description of, each from its
published config.json, checked by hand against what the runtime printed."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import from_config

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


# Qwen/Qwen3-Coder-Next: Qwen3-Next-80B-A3B's config (published total 79,674,391,296). llama.cpp at -c 4096 -np 4
# (unified): 12 attention layers x 4096 cells x 2 KV heads x 256 x 2 (K, V) x 2 bytes = 96 MiB, and per slot and
# DeltaNet layer an f32 state of conv 3 x (2 x 16 x 128 + 32 x 128) + 32 x 128 x 128 values = 2,195,456 bytes, x 36
# layers x 4 slots = 301.5 MiB: 397.5 MiB (the Chaoses-Ib notes print context 397)
def test_qwen3_coder_next_is_qwen3_next():
    s = llm.describe(model="Qwen/Qwen3-Coder-Next")
    assert s.params == 79_674_391_296
    assert s.recurrent_state_per_seq == 36 * (3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 4
    r = llm.plan(s, "llama.cpp", ctx=4096, parallel=4, weights_dtype="Q4_K_M")
    assert r["kv_total"] == 12 * 4096 * 2 * 256 * 2 * 2 + 4 * 36 * 2_195_456
    assert int(r["kv_total"] / MiB) == 397
    # a size after the name is another model, never read as this one
    with pytest.raises(llm.UserError):
        llm.describe(model="Qwen/Qwen3-Coder-Next-30B")


# Qwen3.8-Flash-Next (qwen4_exp): sparse-attention indexer cache, hyper-connections, n-gram per-layer embeddings:
# refused with what is missing, by name and by config
def test_qwen38_flash_next_refused():
    with pytest.raises(llm.UserError, match="indexer key cache"):
        llm.describe(model="RadixArk/Qwen3.8-Flash-Next-NVFP4")
    with pytest.raises(llm.UserError, match="qwen4_exp"):
        from_config({"model_type": "qwen4_exp", "num_hidden_layers": 48, "hidden_size": 2560,
                     "num_attention_heads": 24, "num_key_value_heads": 2, "vocab_size": 151936})


# Qwen/Qwen3-Embedding-8B (llama.cpp b5618, ROCm/ROCm#4903, -c 0 = 40960): KV buffer 5760.00 MiB = 36 x 40960 x 8 x
# 128 x 2 x 2 bytes; ROCm_Host model buffer 629.47 MiB = the token table 151665 x 4096 in Q8_0 (34 bytes a 32-value
# block): 660,046,080 bytes
def test_qwen3_embedding_8b():
    s = llm.describe(model="Qwen/Qwen3-Embedding-8B")
    r = llm.plan(s, "llama.cpp", ctx=40960, weights_dtype="Q8_0", flash_attn="on", ngl=999)
    assert r["kv_total"] == 36 * 40960 * 8 * 128 * 2 * 2 == 5760 * MiB
    emb = llm.weights_by_role(s, "Q8_0")["embedding"]
    assert emb == 151665 * 4096 * 34 // 32 == 660_046_080
    assert round(emb / MiB, 2) == 629.47


# zai-org/GLM-4.6V: GLM-4.5-Air's decoder. llama.cpp b7522 (4 x RTX 3080 20 GB, -c 65536 -np 4, q4_0 K and V, 18 bytes
# a 32-value block): 46 layers x 65536 cells x 8 x 128 x 2 x 18 / 32 = 3312 MiB (864 x 3 + 720 printed over 4 GPUs),
# the MTP block left out as llama.cpp does
def test_glm46v_is_glm45_air_decoder():
    s = llm.describe(model="zai-org/GLM-4.6V")
    assert s.name == "GLM-4.5-Air" and any("vision tower is not described" in n for n in s.notes)
    r = llm.plan(s, "llama.cpp", ctx=65536, parallel=4, kv_dtype="q4_0", flash_attn="on", num_gpus=4,
                 weights_dtype="Q4_K_M", runtime_version="b7522")
    assert r["kv_total"] == 46 * 65536 * 8 * 128 * 2 * 18 // 32 == (864 * 3 + 720) * MiB
    # the token table the host keeps: 151552 x 4096 in Q4_K (4.5 bits) = 333 MiB printed
    assert llm.weights_by_role(s, "Q4_K_M")["embedding"] == 151552 * 4096 * 9 // 16 == 333 * MiB
    # GLM-4.6V-Flash is a 9B dense model: never read as this one
    with pytest.raises(llm.UserError):
        llm.describe(model="zai-org/GLM-4.6V-Flash")


# club-3090's Gemma 4 runs with speculative decoding name an external drafter (google/gemma-4-*-it-assistant in
# --speculative-config), not an MTP module of the target: refused, saying what is not read and how to size the target
def test_gemma4_external_drafter_refused_with_the_reason():
    s = llm.describe(model="google/gemma-4-26B-A4B-it")
    with pytest.raises(llm.UserError, match="separate drafter .* not modelled.*leave --mtp-tokens out"):
        llm.plan(s, "vllm", ctx=42000, weights_dtype="awq", vram=23.56 * GiB, mtp_tokens=4, runtime_version="0.22.0")


# THUDM/codegeex4-all-9b (GLM-4-9B geometry): Ollama 0.17.0 on an M4 prints a Metal KV buffer of 1280.00 MiB at 32768
# cells = 40 layers x 2 KV heads x 128 x 2 x 2 bytes, and CPU_Mapped 333.00 MiB = the token table 151552 x 4096 in
# Q4_0 (18 bytes a 32-value block)
def test_codegeex4_all_9b():
    s = llm.describe(model="THUDM/codegeex4-all-9b")
    assert not s.generic and (s.n_layers, s.n_kv_heads, s.head_dim_k) == (40, 2, 128)
    r = llm.plan(s, "ollama", ctx=32768, flash_attn="on", weights_dtype="Q4_0", vram=24.96 * GiB,
                 runtime_version="0.17.0")
    assert r["kv_total"] == 40 * 32768 * 2 * 128 * 2 * 2 == 1280 * MiB
    assert llm.weights_by_role(s, "Q4_0")["embedding"] == 151552 * 4096 * 18 // 32 == 333 * MiB
    tag = llm.describe(model="codegeex4:9b")
    assert tag.name == "CodeGeeX4-ALL-9B" and tag.quant == "Q4_0" and llm.describe(model="codegeex4").quant == "Q4_0"
