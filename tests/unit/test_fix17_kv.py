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
