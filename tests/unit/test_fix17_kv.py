"""fix17 (review17 K1, K2, K5): which GGUF layout a name stands for, checked by hand against the GGUF block sizes
(ggml-common.h: Q4_K 144 bytes a 256, Q6_K 210 a 256, Q8_0 34 a 32, F16 2 a value)."""
from gpu_garden.memory.llm import kv as llm

# Gemma 4 E4B (config.json text_config): vocab 262144, hidden 2560, 42 layers, 256 per layer, tied embedding
E4B_PLE = 262144 * 42 * 256 + 2560 * 42 * 256 + 256
E4B_TOKENS = 262144 * 2560


def test_k1_an_hf_gguf_under_ollama_keeps_llama_quantize_table():
    """`ollama run hf.co/unsloth/gemma-4-E4B-it-GGUF:Q4_K_M` loads Unsloth's llama-quantize file unchanged: the
    per-layer table takes the token embedding's base type (Q4_K), as the same file under llama.cpp does."""
    r = llm.plan(llm.describe(model="hf.co/unsloth/gemma-4-E4B-it-GGUF:Q4_K_M"), "ollama", ctx=4096,
                 weights_dtype="Q4_K_M", runtime_version="0.21.0")
    roles = r["weights_by_role"]
    # Ollama places the table with the output layer (gemma4_ple): the output role is the tied token table (Q6_K, 210
    # bytes a 256) and the per-layer table at Q4_K, 1,600,929,936 B (F16, 2 bytes a value, would be 5,692,195,328)
    assert roles["output"] - E4B_TOKENS * 210 // 256 == E4B_PLE * 144 // 256 == 1_600_929_936


def test_k5_the_ollama_f16_table_is_kept_to_q4_k_s_and_q4_k_m():
    """The F16 table of an Ollama blob rests on gemma4:e4b (Q4_K_M) alone (ollama#15749); Ollama's quantizer keeps a
    per_layer_token_embd F16 only on Q4_K_S / Q4_K_M (quantization.go, gemma3n): a q8_0 tag takes Q8_0 there."""
    s = llm.describe(model="gemma4:e4b")
    q8 = llm.plan(s, "ollama", ctx=4096, weights_dtype="Q8_0", runtime_version="0.21.0")["weights_by_role"]
    # output role: tied token table (Q8_0's output Q8_0) + per-layer table Q8_0, 34 bytes a 32
    assert q8["output"] - E4B_TOKENS * 34 // 32 == E4B_PLE * 34 // 32 == 3_023_978_768
    q4 = llm.plan(s, "ollama", ctx=4096, weights_dtype="Q4_K_S", runtime_version="0.21.0")["weights_by_role"]
    assert q4["output"] - q4["embedding"] == E4B_PLE * 2 == 5_692_195_328      # F16, 2 bytes a value


def test_k2_a_bare_q3_k_xl_is_bartowskis_layout_unless_the_name_says_unsloth():
    """bartowski's Q3_K_XL: Q3_K_L blocks with the token embedding and the output in Q8_0 ("Uses Q8_0 for embed and
    output weights"). Qwen3-8B: untied 151936 x 4096 tables, Q3_K_L's Q3_K (3.4375 bits) and Q6_K (6.5625) raised to
    8.5: 151936 x 4096 x (5.0625 + 1.9375) / 8 = 544,538,624 B over Q3_K_L, one size, no range."""
    s = llm.describe(model="Qwen3-8B")
    xl = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q3_K_XL", runtime_version="b8680")
    l3 = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q3_K_L", runtime_version="b8680")
    assert "weights_range" not in xl
    assert xl["weights"] - l3["weights"] == 151936 * 4096 * 7 // 8 == 544_538_624
    # an unsloth repo's Q3_K_XL is its Dynamic file: a range
    ud = llm.plan(llm.describe(model="unsloth/Qwen3-8B-GGUF"), "llama.cpp", ctx=4096, weights_dtype="Q3_K_XL",
                  runtime_version="b8680")
    assert ud["weights_range"][0] < xl["weights"] < ud["weights_range"][1]


def test_k2_another_bare_xl_stays_unsloths():
    """Only Unsloth names a Q4_K_XL: bare, it is still its Dynamic file (a range), whatever the model's name."""
    r = llm.plan(llm.describe(model="Qwen3-8B"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_XL", runtime_version="b8680")
    assert r["weights_range"][0] < r["weights_range"][1]
