"""kvfix17: a GGUF repo named as llama.cpp's -hf (`user/repo[:quant]`) and Ollama's hf.co (`hf.co/user/repo:quant`)
take the tag as the weights' type on every runtime; without a tag, Q4_K_M (llama.cpp common/arg.cpp -hf help:
"default to Q4_K_M, or falls back to the first file in the repo"). Expected values by hand from the GGUF block sizes
(ggml-common.h: Q4_K 144 bytes a 256, Q6_K 210 a 256, Q8_0 34 a 32) and the configs' shapes."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

# Gemma 4 E4B (config.json text_config): vocab 262144, hidden 2560, 42 layers, 256 per layer, tied embedding
E4B_TOKENS = 262144 * 2560
E4B_PLE = 262144 * 42 * 256 + 2560 * 42 * 256 + 256
# Qwen3-8B: untied 151936 x 4096 tables; 36 layers of q/o 4096 x 4096, k/v 4096 x 1024, MLP 3 x 4096 x 12288, norms
QWEN3_8B_TABLE = 151936 * 4096
QWEN3_8B_PARAMS = 36 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 12288 + 2 * 4096 + 2 * 128) + 2 * QWEN3_8B_TABLE + 4096


def roles(model, runtime="llama.cpp", **kw):
    return llm.plan(llm.describe(model=model), runtime, ctx=4096, **kw)["weights_by_role"]


def test_the_hf_tag_sizes_gemma4_e4b_as_q4_k_m_under_llama_cpp():
    """The review's case: 13.90 GiB (16 bits) before. Q4_K_M ties the output to the token table in Q6_K, and the
    per-layer table takes the token embedding's Q4_K (llama-quantize): 2,151,432,336 B in the embedding role."""
    r = roles("hf.co/unsloth/gemma-4-E4B-it-GGUF:Q4_K_M")
    assert r["embedding"] == E4B_TOKENS * 210 // 256 + E4B_PLE * 144 // 256 == 2_151_432_336


def test_the_hf_tag_is_the_type_under_ollama_too():
    """`ollama run hf.co/...:Q8_0` loads the Q8_0 file, not the library's Q4_K_M default: Ollama places the per-layer
    table with the output layer, both Q8_0 (34 bytes a 32): 3,737,010,448 B."""
    r = roles("hf.co/unsloth/gemma-4-E4B-it-GGUF:Q8_0", "ollama")
    assert r["output"] == (E4B_TOKENS + E4B_PLE) * 34 // 32 == 3_737_010_448


@pytest.mark.parametrize("model", ["unsloth/Qwen3-8B-GGUF", "hf.co/unsloth/Qwen3-8B-GGUF",
                                   "bartowski/Qwen_Qwen3-8B-GGUF:q4_k_m", "hf.co/bartowski/Qwen_Qwen3-8B-GGUF:Q4_K_M"])
def test_no_tag_is_q4_k_m_as_llama_cpp_picks_it_and_a_tag_any_case(model):
    """Q4_K_M: token embedding Q4_K (350,060,544 B), output Q6_K (510,504,960 B); 16 bits would be 1,244,659,712 each."""
    r = roles(model)
    assert (r["embedding"], r["output"]) == (QWEN3_8B_TABLE * 144 // 256, QWEN3_8B_TABLE * 210 // 256) \
        == (350_060_544, 510_504_960)


def test_xl_tags_read_as_fix17_reads_them():
    """A bare Q3_K_XL tag is bartowski's file (Q3_K_L with embed and output Q8_0: +544,538,624 B over Q3_K_L) unless
    the repo is unsloth's, whose tag is its Dynamic file: Q3_K (3.4375 bits) to Q8_0 (8.5) throughout, a range."""
    bart = llm.plan(llm.describe(model="bartowski/Qwen_Qwen3-8B-GGUF:Q3_K_XL"), "llama.cpp", ctx=4096)
    l3 = llm.plan(llm.describe(model="bartowski/Qwen_Qwen3-8B-GGUF:Q3_K_L"), "llama.cpp", ctx=4096)
    assert "weights_range" not in bart
    assert bart["weights"] - l3["weights"] == QWEN3_8B_TABLE * 7 // 8 == 544_538_624
    ud = llm.plan(llm.describe(model="unsloth/Qwen3-8B-GGUF:Q3_K_XL"), "llama.cpp", ctx=4096)
    assert QWEN3_8B_PARAMS == 8_190_735_360
    assert ud["weights_range"] == [QWEN3_8B_PARAMS * 55 // 128, QWEN3_8B_PARAMS * 17 // 16] == [3_519_456_600, 8_702_656_320]


def test_a_contradicting_weights_dtype_wins_with_a_note_naming_both():
    # refused here until ux48b, while an Ollama library tag let the flag win with a note: the flag wins in both now
    spec = llm.describe(model="unsloth/Qwen3-8B-GGUF:Q4_K_M")
    r = llm.plan(spec, "llama.cpp", ctx=4096, weights_dtype="Q8_0")
    assert r["weights_by_role"]["output"] == QWEN3_8B_TABLE * 34 // 32  # Q8_0: 34 bytes a 32
    assert ("'unsloth/Qwen3-8B-GGUF:Q4_K_M': weights sized as Q8_0 (--weights-dtype), not as the Q4_K_M file the tag "
            "names (llama.cpp -hf / Ollama hf.co load that one)") in r["notes"]
    assert llm.plan(spec, "llama.cpp", ctx=4096, weights_dtype="q4_k_m")["weights_by_role"]["output"] == 510_504_960
    # without a tag the default gives way: Q8_0 (34 bytes a 32) for the untied output
    r = llm.plan(llm.describe(model="unsloth/Qwen3-8B-GGUF"), "llama.cpp", ctx=4096, weights_dtype="Q8_0")
    assert r["weights_by_role"]["output"] == QWEN3_8B_TABLE * 34 // 32


def test_an_unknown_repo_or_tag_is_refused():
    with pytest.raises(UserError, match="unknown model 'unsloth/Nope-8B-GGUF'"):
        llm.describe(model="hf.co/unsloth/Nope-8B-GGUF:Q4_K_M")
    with pytest.raises(UserError, match="names no GGUF quantization"):
        llm.describe(model="hf.co/unsloth/Qwen3-8B-GGUF:fast")
