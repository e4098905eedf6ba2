"""Task ellm22: Gemma 4's per-layer-embedding models (E2B, E4B) and two bench comparisons, each checked by hand against
the runtime's source or a config.json's arithmetic."""
from support.pack import load_benchmark

GiB, MiB = 1 << 30, 1 << 20


def _bench():
    return load_benchmark("bench_llm")


def _row(kv_mib, notes, runtime="llama.cpp"):
    return {"runtime": runtime, "measured": {"kv_mib": kv_mib}, "notes": notes}


# llama.cpp's memory breakdown prints size_t / MiB (common_memory_breakdown_print, ggml-org/llama.cpp common/fit.cpp):
# a context of 96 MiB KV + 4 x 36 x 2,195,456 B of DeltaNet state = 397.5 MiB prints 397 (Qwen3-Coder-Next, -c 4096
# -np 4); 396.99 or 398.0 would not print 397
BREAKDOWN = ["CUDA0 (RTX 5090) total 32606 = free 1057 + self 29365 (model 28609 + context 397 + compute 358)"]


def test_breakdown_context_column_truncates():
    b = _bench()
    assert b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 397.5, "MiB")
    assert b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 397.0, "MiB")
    assert not b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 398.0, "MiB")
    assert not b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 396.99, "MiB")


def test_two_decimal_kv_line_keeps_half_a_unit():
    # "KV buffer size = 397.50 MiB" is printed with two decimals: 397.5 is not 397, and a row whose breakdown quotes
    # another context figure is not read as truncated
    b = _bench()
    assert not b.kv_exact(_row(397.0, ["llama_kv_cache: KV buffer size = 397.00 MiB"]), "kv_mib", 397.5, "MiB")
    assert not b.kv_exact(_row(397.0, ["(model 1 + context 398 + compute 2)"]), "kv_mib", 397.5, "MiB")
    assert b.kv_exact(_row(397.5, []), "kv_mib", 397.5, "MiB")


# ---------------------------------------------------------------- Gemma 4 E2B / E4B (gemma4_ple.py)
import pytest  # noqa: E402

from gpu_garden.memory.errors import UserError  # noqa: E402
from gpu_garden.memory.llm import kv as llm  # noqa: E402
from gpu_garden.memory.llm.spec import from_config  # noqa: E402


def _e2b_layer(full: bool, shared: bool) -> int:
    # transformers 5.24.0 Gemma4TextDecoderLayer, E2B (hidden 1536, 8 heads, 1 KV head, head 256 / 512 on full layers,
    # intermediate 6144 doubled on shared layers, per-layer input 256)
    d, hd = 1536, 512 if full else 256
    attn = 2 * d * 8 * hd + (0 if shared else 2 * d * 1 * hd)        # q, o (+ k, v)
    norms = hd * (1 if shared else 2) + 4 * d                         # q_norm (+ k_norm), 4 layer norms
    mlp = 3 * d * 6144 * (2 if shared else 1)
    ple = 2 * d * 256 + d                                             # per_layer_input_gate, per_layer_projection, norm
    return attn + norms + mlp + ple


def test_gemma4_e2b_params_by_hand():
    # 35 layers, full every 5th (4, 9, ..., 34), layers 15-34 shared: 12 sliding + 3 full own a cache, 16 + 4 shared;
    # tied token table 262144 x 1536, per-layer table 262144 x 35 x 256, per_layer_model_projection 1536 x 8960 and
    # its norm 256, final norm 1536: 4,628,569,344 (the card's "5.1B with embeddings" adds the vision and audio towers)
    layers = 12 * _e2b_layer(False, False) + 3 * _e2b_layer(True, False) + 16 * _e2b_layer(False, True) \
        + 4 * _e2b_layer(True, True)
    total = layers + 262144 * 1536 + 262144 * 35 * 256 + 1536 * 35 * 256 + 256 + 1536
    s = llm.describe(model="google/gemma-4-E2B-it")
    assert s.params == total == 4_628_569_344
    assert s.ple_params == 262144 * 8960 + 1536 * 8960 + 256


def test_gemma4_e4b_llamacpp_cache_holds_the_first_24_layers():
    # E4B: 42 layers, full every 6th, the last 18 shared: 20 sliding + 4 full keep a cache (Ollama's
    # TestNewCachesAssistantSharedHistoryOrdering: 24). llama.cpp -c 131072, f16, one slot: full 4 x 131072 x 2 heads x
    # 512 x K,V x 2 B = 2 GiB; sliding 20 x (512 + 512 ubatch) cells x 2 x 256 x 2 x 2 B = 40 MiB
    r = llm.plan(llm.describe(model="google/gemma-4-E4B-it"), "llama.cpp", ctx=131072, weights_dtype="Q8_0",
                 runtime_version="b8766")
    assert r["kv_total"] == 4 * 131072 * 2 * 512 * 2 * 2 + 20 * 1024 * 2 * 256 * 2 * 2 == 2048 * MiB + 40 * MiB


def test_gemma4_per_layer_table_where_each_runtime_keeps_it():
    # per_layer_token_embd in F16 (Ollama's gemma4:e4b: 'model weights device=CPU size=6.6 GiB' beside 2.8 GiB on the
    # GPU, ollama#15749): 262144 x 10752 x 2 B + the projection 2560 x 10752 x 2 B + its norm = 5.30 GiB.
    # llama.cpp: an input tensor, on the host with the token table; Ollama: with the output layer
    table = (262144 * 42 * 256 + 2560 * 42 * 256 + 256) * 2
    s = llm.describe(model="gemma4:e4b")
    lc = llm.plan(s, "llama.cpp", ctx=4096, runtime_version="b8766")
    assert lc["host_weights"] >= table and lc["weights_by_role"]["embedding"] >= table
    ol = llm.plan(s, "ollama", ctx=4096, runtime_version="0.21.0")
    assert ol["weights_by_role"]["output"] >= table > ol["weights_by_role"]["embedding"]


def test_gemma4_e4b_on_ollama_leaves_the_output_layer_on_the_cpu():
    # ollama#15749 (0.21.0, RX 6600 XT, 7.5 GiB available, num_ctx 4096): 'offloaded 42/43 layers to GPU': the
    # repeating layers fit, the output layer (output + per-layer table, about 5.8 GiB) does not
    r = llm.plan(llm.describe(model="gemma4:e4b"), "ollama", ctx=4096, vram=7.5 * GiB, runtime_version="0.21.0")
    assert r["fits_as_requested"] is False and r["gpu_layers_used"] == 42
    assert any("42 repeating layers but not the output layer" in n for n in r["notes"])


def test_gemma4_e2b_vllm_cache_layers():
    # vLLM: a shared layer has no KV cache spec; one token: 3 full x 1 head x 512 x 2 x 2 B + 12 sliding x 256 x 2 x 2 B
    s = llm.describe(model="google/gemma-4-E2B-it")
    assert s.kv_elems_by_kind() == {"full": 3 * 2 * 512, "sliding": 12 * 2 * 256}


def test_gemma4_shared_layer_without_a_donor_is_refused():
    # transformers kv_sharing_modes: every kind a shared layer has must be produced by an earlier layer
    cfg = {"model_type": "gemma4_text", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 2,
           "num_key_value_heads": 1, "head_dim": 64, "vocab_size": 1000, "sliding_window": 16,
           "layer_types": ["sliding_attention"] * 3 + ["full_attention"], "num_kv_shared_layers": 1,
           "hidden_size_per_layer_input": 16}
    with pytest.raises(UserError, match="no earlier layer"):
        from_config(cfg)
    with pytest.raises(UserError, match="not plausible"):
        from_config(dict(cfg, num_kv_shared_layers=4))


# ---------------------------------------------------------------- llama.cpp model buffers of a tied model
def _smollm3_row(notes):
    # rabbit-holes M5 run (llama.cpp b8193, ggml-org SmolLM3-3B Q4_K_M, -c 65536): MTL0 model 1819 + Host 205 MiB
    return {"id": "t", "url": "", "runtime": "llama.cpp", "version": "b8193", "vram_gib": 17.76,
            "input": {"model": "HuggingFaceTB/SmolLM3-3B", "weights_dtype": "Q4_K_M", "ctx": 65536, "parallel": 1},
            "measured": {"weights_mib": 2024.0}, "notes": notes}


def test_buffer_sum_of_a_tied_model_holds_the_table_twice():
    # llama-model.cpp: a tied output is created from token_embd with TENSOR_DUPLICATED (the output layer's device)
    # while token_embd stays an input tensor (the host): the buffers hold the table twice, the file once. SmolLM3's
    # table 128256 x 2048 in Q6_K (Q4_K_M's output type): 128256 x 2048 x 6.5625 / 8 B = 205.49 MiB (the Host column
    # prints 205)
    b = _bench()
    table = 128256 * 2048 * 6.5625 / 8 / MiB
    buffers = b.score(_smollm3_row(["weights_mib = MTL0 1819 + Host 205"]))["weights_gib"][0] * 1024
    file = b.score(_smollm3_row(["llama-cli -hf ggml-org/SmolLM3-3B-GGUF"]))["weights_gib"][0] * 1024
    assert abs(buffers - file - table) < 2  # weights_gib is rounded to 0.001 GiB
    assert abs(buffers / 2024.0 - 1) < 0.01


def test_gemma4_e4b_llamacpp_partial_offload_of_shared_layers_moves_no_cache():
    # -ngl puts the last layers on the GPU; E4B's last 18 (24-41) are KV-shared (gemma4-iswa: has_kv(il) false), so
    # -ngl 18 on a build that counts the output layer first (b8766: layers 25-41 and the output) holds no KV on the GPU,
    # -ngl 43 all of it: 4 full x 4096 x 2 x 512 x 2 x 2 B + 20 sliding x 1024 cells x 2 x 256 x 2 x 2 B = 104 MiB
    s = llm.describe(model="google/gemma-4-E4B-it")
    for ngl, kv in ((18, 0), (43, 104 * MiB)):
        r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q8_0", runtime_version="b8766", ngl=ngl)
        assert r["total"] - r["gpu_weights"] - sum(r["overhead"].values()) == pytest.approx(kv, abs=1)
