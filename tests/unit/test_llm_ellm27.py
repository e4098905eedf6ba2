"""Task ellm27: LLM batch 40 after its first sight (regression rows) and the regression set's worst rows, each change
checked by hand against the runtime's source, its printed figures or a config.json's arithmetic."""
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20

# Gemma 4 E4B (config.json text_config): vocab 262144, hidden 2560, 42 layers, hidden_size_per_layer_input 256, tied.
# The per-layer table 262144 x (42 x 256), per_layer_model_projection 2560 x (42 x 256), its norm 256
E4B_PLE = 262144 * 42 * 256 + 2560 * 42 * 256 + 256  # 2,846,097,664 parameters
E4B_TOKENS = 262144 * 2560


def test_gemma4_per_layer_table_takes_the_token_embedding_type_in_a_llamacpp_gguf():
    # llama-quantize gives per_layer_token_embd.weight the token embedding's type (llama-quant.cpp
    # llama_tensor_get_type: name == "token_embd.weight" || name == "per_layer_token_embd.weight"); only Ollama's
    # quantizer asks for f16 (server/quantization.go). unsloth's E4B Q8_0 (acdtrx llama-runner log, b8680): q8_0 296,
    # bf16 1, f32 423 tensors, 7.62 GiB: an F16 table alone would be 5.30 GiB of it. Q8_0 is 34 bytes a 32
    r = llm.plan(llm.describe(model="google/gemma-4-E4B-it"), "llama.cpp", ctx=4096, weights_dtype="Q8_0",
                 runtime_version="b8680")
    table = E4B_PLE * 34 // 32  # 3,023,978,768 B
    assert r["weights_by_role"]["embedding"] == E4B_TOKENS * 34 // 32 + table == 3_737_010_448
    # Q4_K_M: the token embedding Q4_K (144 bytes a 256), so the table too
    q4 = llm.plan(llm.describe(model="google/gemma-4-E4B-it"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M",
                  runtime_version="b8680")
    assert q4["weights_by_role"]["embedding"] - E4B_TOKENS * 210 // 256 == E4B_PLE * 144 // 256 == 1_600_929_936


def test_gemma4_per_layer_table_stays_f16_in_an_ollama_blob():
    # an Ollama library tag keeps the F16 table (ollama#15749: 6.6 GiB on the CPU), on Ollama and on llama.cpp alike
    s = llm.describe(model="gemma4:e4b")
    for rt, v in (("ollama", "0.21.0"), ("llama.cpp", "b8766")):
        r = llm.plan(s, rt, ctx=4096, runtime_version=v)
        roles = r["weights_by_role"]
        assert roles["embedding"] + roles["output"] >= E4B_PLE * 2 == 5_692_195_328
