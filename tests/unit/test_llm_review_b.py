"""Review rvB: vLLM's sliding-window blocks below the window's reach and Ollama's gpt-oss gate at its release
candidate. Expected values are hand-derived from the runtime's rule each test names."""
from gpu_garden.memory.llm import cache
from gpu_garden.memory.llm import kv as llm


def test_vllm_sliding_layer_keeps_one_block_more_than_a_short_request():
    # vllm/v1/kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes:
    #   num_tokens = min(sliding_window - 1 + max_num_batched_tokens, max_model_len); (cdiv(num_tokens, 16) + 1) pages
    # Gemma-3-27B (window 1024), max_num_batched_tokens 2048: 2048 tokens -> 129 blocks, 4096 -> cdiv(3071) + 1 = 193
    s = llm.describe(model="google/gemma-3-27b-it")
    assert cache.kv_cache(s, 2048, 1, "f16", "vllm", max_batched=2048)["sliding_cells"] == 129 * 16
    assert cache.kv_cache(s, 1000, 1, "f16", "vllm", max_batched=2048)["sliding_cells"] == 64 * 16
    assert cache.kv_cache(s, 4096, 1, "f16", "vllm", max_batched=2048)["sliding_cells"] == 193 * 16
    lay = {"groups": {"full": 1, "sliding": 1}, "block": {"full": 16, "sliding": 16}}
    assert cache.vllm_request_blocks(lay, 2048, 2048, 1024) == 128 + 129
    assert cache.vllm_request_blocks(lay, 8192, 2048, 1024) == 512 + 193


def test_ollama_gptoss_graph_gate_takes_the_release_candidate():
    # ollama fcec04bf4 ("gptoss: fix memory calc") was first tagged v0.11.3-rc0: its candidates price the partial graph
    # as the full one, as 0.11.3 does (ollama#11769: 1 of 25 layers at 3.6 GiB), not as 0.11.2 (twice the full graph)
    s = llm.describe(model="gpt-oss:20b")
    got = {v: llm.plan(s, "ollama", ctx=8192, vram=3.6 * (1 << 30), runtime_version=v)
           for v in ("0.11.2", "0.11.3-rc0", "0.11.3")}
    assert got["0.11.3-rc0"]["ollama_required_full"] == got["0.11.3"]["ollama_required_full"]
    assert got["0.11.3-rc0"]["gpu_layers_used"] == 1
    assert got["0.11.2"]["ollama_required_full"] != got["0.11.3"]["ollama_required_full"]


def test_zero_ngl_is_said_plainly():
    # (-ngl -1 / num_gpu -1, once refused here, are read as each build reads them: test_llm_ngl_default)
    s = llm.describe(model="Qwen3-8B")
    for runtime, flag in (("llama.cpp", "-ngl"), ("ollama", "num_gpu")):
        notes = "\n".join(llm.plan(s, runtime, ctx=4096, ngl=0, vram=8 * (1 << 30))["notes"])
        assert f"no layer on the GPU ({flag} 0)" in notes and "only none" not in notes and "only 0 of" not in notes
