"""Task ellm18 (session 18): regression rows that errored on a model the project can describe, and the worst rows;
each built-in and rule checked against a config.json or a runtime's printed figures."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.ollama_tags import ollama_tag

GiB, MiB = 1 << 30, 1 << 20


def test_ollama_codestral_is_the_built_in_codestral_in_its_k_quant_default():
    # codestral:22b (the library's one size, its default tag) is mistralai/Codestral-22B-v0.1; Ollama 0.22.1 loading it
    # prints file type 'Q4_K - Medium', 12.42 GiB (Agentic_MalGen ollama-server.log): not a Q4_0 library
    assert ollama_tag("codestral:22b")[:2] == ("Codestral-22B", "Q4_K_M")
    assert ollama_tag("codestral")[:2] == ("Codestral-22B", "Q4_K_M")
    assert ollama_tag("codestral:22b-v0.1-q8_0")[:2] == ("Codestral-22B", "Q8_0")
    s = llm.describe(model="codestral:22b")
    r = llm.plan(s, "ollama", ctx=32768, runtime_version="0.22.1", flash_attn=True)
    # 56 layers x 2 x 8 KV heads x 128 x 2 bytes x 32768 = 7.0 GiB ("kv cache 7.0 GiB" in the same log)
    assert r["kv_total"] == 56 * 2 * 8 * 128 * 2 * 32768
    # Q4_K_M blocks + Q6_K output on the GPU: the log's "model weights 12.3 GiB"
    assert abs(r["ollama_weights_total"] / GiB - 12.3) <= 0.1
