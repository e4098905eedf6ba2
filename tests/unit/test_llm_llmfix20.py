"""Task llmfix20: review15a's findings on the Gemma 4 E2B / E4B changes, ChatGLM configs and vLLM's fixed pool, each
expected value by hand from the runtime's source or a config's arithmetic."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.cache import kv_cache
from gpu_garden.memory.llm.gguf import from_gguf_metadata
from gpu_garden.memory.llm.spec import from_config
from gpu_garden.memory.llm.weights import weights_by_role
from support.pack import load_benchmark

GiB, MiB = 1 << 30, 1 << 20
ROOT = Path(__file__).resolve().parents[2]

# Gemma 4 E4B: 42 layers, full every 6th (5, 11, ..., 41), the last 18 (24-41) KV-shared; 8 heads, 2 KV heads x 256
# (x 512 on the full layers), per-layer input 256, vocab 262144 (google/gemma-4-E4B-it text_config)
E4B_PLE = 262144 * 42 * 256 + 2560 * 42 * 256 + 256   # the table, per_layer_model_projection, its norm


def _e4b_layer(full: bool, shared: bool) -> int:
    # transformers 5.24.0 Gemma4TextDecoderLayer: q, o (+ k, v unless shared), q_norm (+ k_norm), 4 layer norms,
    # gate/up/down 10240, per_layer_input_gate + per_layer_projection (2560 x 256 each) + post_per_layer_input_norm
    d, hd = 2560, 512 if full else 256
    return (2 * d * 8 * hd + (0 if shared else 2 * d * 2 * hd) + hd * (1 if shared else 2) + 4 * d
            + 3 * d * 10240 + 2 * d * 256 + d)


def test_gemma4_e4b_params_by_hand():
    # own cache: 20 sliding + 4 full (5, 11, 17, 23); shared: 15 sliding + 3 full (29, 35, 41); tied table 262144 x
    # 2560, the per-layer table and projection, final norm
    total = (20 * _e4b_layer(False, False) + 4 * _e4b_layer(True, False) + 15 * _e4b_layer(False, True)
             + 3 * _e4b_layer(True, True) + 262144 * 2560 + E4B_PLE + 2560)
    s = llm.describe(model="google/gemma-4-E4B-it")
    assert s.params == total == 7_463_013_376
    assert s.ple_params == E4B_PLE


# ---------------------------------------------------------------- finding 1: a Gemma 4 GGUF's shared layers
def _e4b_gguf_meta(**extra):
    # the keys ollama/ollama convert/convert_gemma4.go writes (fb307609): head_count_kv a scalar (no separate global KV
    # heads), key_length the global head size, shared_kv_layers and embedding_length_per_layer_input always written
    meta = {"general.architecture": "gemma4", "gemma4.block_count": 42, "gemma4.embedding_length": 2560,
            "gemma4.attention.head_count": 8, "gemma4.attention.head_count_kv": 2,
            "gemma4.attention.key_length": 512, "gemma4.attention.value_length": 512,
            "gemma4.attention.key_length_swa": 256, "gemma4.attention.value_length_swa": 256,
            "gemma4.attention.sliding_window": 512,
            "gemma4.attention.sliding_window_pattern": [(i + 1) % 6 != 0 for i in range(42)],
            "gemma4.attention.shared_kv_layers": 18, "gemma4.embedding_length_per_layer_input": 256,
            "gemma4.context_length": 131072, "gemma4.feed_forward_length": 10240, "tokenizer.ggml.vocab_len": 262144}
    meta.update(extra)
    return meta


def test_gemma4_gguf_reads_the_shared_kv_layers():
    # llama.cpp has_kv(il): il < n_layer - shared_kv_layers, so layers 0-23 keep a cache: -c 8192 f16, one slot:
    # 4 full x 8192 x 2 heads x 512 x K,V x 2 B = 128 MiB + 20 sliding x 1024 cells (512 + ubatch 512) x 2 x 256 x 2 x 2 B
    # = 40 MiB (every layer caching would be 7 full + 35 sliding = 294 MiB)
    s = from_gguf_metadata(_e4b_gguf_meta())
    assert s.summary()["layer_kinds"] == {"full": 4, "sliding": 20, "shared": 18}
    assert kv_cache(s, 8192, 1, "f16", "llama.cpp")["total"] == 4 * 8192 * 2 * 512 * 2 * 2 + 20 * 1024 * 2 * 256 * 2 * 2
    assert s.ple_params == E4B_PLE
    # no shared layers written: every layer caches
    assert from_gguf_metadata(_e4b_gguf_meta(**{"gemma4.attention.shared_kv_layers": 0})).summary()["layer_kinds"] \
        == {"full": 7, "sliding": 35}


def test_gemma4_gguf_table_bytes_go_to_the_embedding_role():
    # a tensor table: the per-layer table's own bytes (here Q6_K, as google's E2B QAT GGUF keeps it) counted with the
    # token embedding, not with the blocks
    d, V = 2560, 262144
    tensors = {"token_embd.weight": (V * d * 6.5625 / 8, "Q6_K", V * d),
               "per_layer_token_embd.weight": (V * 10752 * 6.5625 / 8, "Q6_K", V * 10752),
               "per_layer_model_proj.weight": (d * 10752 * 2, "BF16", d * 10752),
               "per_layer_proj_norm.weight": (256 * 4, "F32", 256),
               "blk.0.attn_q.weight": (1_000_000, "Q4_0", 1_777_777)}
    tensors = {k: (int(b), t, n) for k, (b, t, n) in tensors.items()}
    s = from_gguf_metadata(_e4b_gguf_meta(), tensors)
    ple = int(V * 10752 * 6.5625 / 8) + d * 10752 * 2 + 256 * 4
    r = weights_by_role(s)
    assert r["per_layer"] == s.ple_bytes == ple
    assert r["embedding"] == int(V * d * 6.5625 / 8) + ple
    assert r["blocks"] == 1_000_000
    assert s.ple_params == V * 10752 + d * 10752 + 256


# ---------------------------------------------------------------- finding 2: where the per-layer table sits
TABLE_F16 = E4B_PLE * 2   # Ollama's gemma4:e4b keeps it in F16 (ollama#15749: 6.6 GiB on the CPU)


def test_ollama_llama_server_keeps_the_table_on_the_host():
    # Ollama >= 0.30 starts llama-server (llm/llama_server.go): per_layer_token_embd is an input tensor there
    # (LLM_TENSOR_LAYER_INPUT), on the host, as in llama.cpp; before 0.30 it loads with the output layer
    s = llm.describe(model="gemma4:e4b")
    new = llm.plan(s, "ollama", ctx=8192, vram=6 * GiB, runtime_version="0.30.0")
    assert new["host_weights"] >= TABLE_F16
    assert new["gpu_weights"] <= new["weights"] - TABLE_F16
    old = llm.plan(s, "ollama", ctx=8192, runtime_version="0.23.1")
    assert old["weights_by_role"]["output"] >= TABLE_F16 > old["weights_by_role"]["embedding"]


def test_ollama_output_layer_on_the_cpu_keeps_the_table_there():
    # 0.23.1 on 6 GiB places 42 of 43 layers: the output layer (a tied model's token_embd again, with the table) stays
    # on the CPU; what is on the GPU and in host RAM together is every weight
    r = llm.plan(llm.describe(model="gemma4:e4b"), "ollama", ctx=8192, vram=6 * GiB, runtime_version="0.23.1")
    assert r["gpu_layers_used"] == 42
    assert r["host_weights"] >= TABLE_F16
    assert r["gpu_weights"] + r["host_weights"] >= r["weights"]


def test_given_weights_size_keeps_the_table_off_the_blocks():
    # --weights-gib 8: the table is 2,846,097,664 of 7,463,013,376 params; at the file's mean rate, with the tied
    # token table (262144 x 2560) both on the host in llama.cpp: nothing of it on the GPU
    s = llm.describe(model="google/gemma-4-E4B-it")
    r = llm.plan(s, "llama.cpp", ctx=8192, weights_bytes=8 * GiB, runtime_version="b8766")
    per = 8 * GiB / 7_463_013_376
    assert r["weights_by_role"]["embedding"] == pytest.approx((E4B_PLE + 262144 * 2560) * per, abs=8)
    assert r["host_weights"] == pytest.approx((E4B_PLE + 262144 * 2560) * per, abs=8)


# ---------------------------------------------------------------- finding 3: -ngl takes each layer's own cache
def test_llamacpp_ngl_share_of_the_cache_by_bytes():
    # -c 131072, f16: a full layer 131072 x 2 x 512 x 2 x 2 B = 512 MiB, a sliding one 1024 cells x 2 x 256 x 2 x 2 B =
    # 2 MiB. b8766 counts the output layer first: -ngl 20 = layers 23-41, whose only cache is layer 23's (full);
    # -ngl 26 = layers 17-41: full 17 and 23, sliding 18-22
    s = llm.describe(model="google/gemma-4-E4B-it")
    for ngl, kv in ((19, 0), (20, 512 * MiB), (26, 2 * 512 * MiB + 5 * 2 * MiB)):
        r = llm.plan(s, "llama.cpp", ctx=131072, weights_dtype="Q8_0", runtime_version="b8766", ngl=ngl)
        assert r["total"] - r["gpu_weights"] - sum(r["overhead"].values()) == pytest.approx(kv, abs=1)


# ---------------------------------------------------------------- finding 5: no full-attention layer
def test_gemma4_config_without_full_layers_still_shares():
    cfg = json.loads((ROOT / "memory/llm/models/Gemma-4-E4B.json").read_text())["text_config"]
    s = from_config(dict(cfg, layer_types=["sliding_attention"] * 42))
    assert s.summary()["layer_kinds"] == {"sliding": 24, "shared": 18}
    assert s.ple_params == E4B_PLE
    # 24 sliding layers x 1024 cells x 2 heads x 256 x 2 x 2 B
    assert kv_cache(s, 8192, 1, "f16", "llama.cpp")["total"] == 24 * 1024 * 2 * 256 * 2 * 2


# ---------------------------------------------------------------- finding 6: ChatGLM's own config.json
def test_chatglm_config_reads_its_kv_groups():
    # CodeGeeX4-ALL-9B's config.json (model_type chatglm): multi_query_attention with multi_query_group_num 2,
    # kv_channels 128 (modeling_chatglm.py SelfAttention: K and V of num_multi_query_groups_per_partition heads x
    # hidden_size_per_attention_head); -c 32768 f16: 40 x 32768 x 2 x 128 x 2 x 2 B = 1.25 GiB (Ollama 0.17.0 printed
    # 1280 MiB for codegeex4)
    cfg = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "add_qkv_bias": True, "ffn_hidden_size": 13696,
           "hidden_size": 4096, "kv_channels": 128, "multi_query_attention": True, "multi_query_group_num": 2,
           "num_attention_heads": 32, "num_layers": 40, "padded_vocab_size": 151552, "seq_length": 131072,
           "torch_dtype": "bfloat16", "tie_word_embeddings": False}
    s = from_config(cfg)
    assert (s.n_kv_heads, s.head_dim_k) == (2, 128)
    assert kv_cache(s, 32768, 1, "f16", "llama.cpp")["total"] == 40 * 32768 * 2 * 128 * 2 * 2 == 1280 * MiB
    # without multi_query_attention (ChatGLM-6B v1) every head keeps its K and V
    assert from_config(dict(cfg, multi_query_attention=False)).n_kv_heads == 32


# ---------------------------------------------------------------- finding 8: which llama.cpp KV lines hold the state
def _bench():
    return load_benchmark("bench_llm")


def test_kv_with_state_is_anchored():
    b = _bench()
    row = {"measured": {"kv_mib": 256.0}}
    assert b.kv_holds_state(dict(row, notes=["llama_kv_cache_init: KV self size = 256.00 MiB, K (f16): 128.00 MiB"]))
    assert b.kv_holds_state(dict(row, notes=["KV cache self-memory in MiB: 4K 256"]))
    # "self" and "KV" apart in one note are not a self-memory figure
    assert not b.kv_holds_state(dict(row, notes=["self-built llama.cpp b8766; CUDA0 KV buffer size = 256.00 MiB"]))
    assert not b.kv_holds_state(dict(row, notes=["KV buffer 256 MiB; the reporter compiled it himself"]))


# ---------------------------------------------------------------- finding 9: vLLM --kv-cache-memory wording
def test_fixed_pool_peak_and_started_are_told_apart():
    # gpu_worker.determine_available_memory returns kv_cache_memory_bytes after profile_run: the profile's activations
    # are freed before the pool; so the peak (held - graphs + activations) and what is held once started
    # (held + pool) differ by activations - pool - graphs
    s = llm.describe(model="Llama-3.1-8B")
    r = llm.plan(s, "vllm", ctx=2048, vram=24 * GiB, kv_cache_memory=int(0.3 * GiB), max_num_batched_tokens=32768)
    o = r["overhead"]
    assert r["total"] - r["started_bytes"] == o["activation_profile"] - r["kv_capacity_bytes"] - o["cuda_graphs"]
    assert r["started_bytes"] < r["total"]


# ---------------------------------------------------------------- the GPU's part of the cache under partial offload
def test_ollama_uneven_layers_hold_their_own_cache():
    # Ollama 0.21.0's own engine allocates the donors' caches alone (kvDonorMap): at num_ctx 8192, f16, a full layer
    # 8192 x 2 x 512 x 2 x 2 B = 32 MiB, a sliding one (4096 + 512) x 2 x 256 x 2 x 2 B = 9 MiB. Blocks placed from the
    # last: num_gpu 18 = the 18 shared layers, no cache; 24 = layers 18-41, of which 23 (full) and 18-22 own one
    s = llm.describe(model="gemma4:e4b")
    for ngl, kv in ((18, 0), (24, 32 * MiB + 5 * 9 * MiB), (43, 4 * 32 * MiB + 20 * 9 * MiB)):
        r = llm.plan(s, "ollama", ctx=8192, vram=16 * GiB, runtime_version="0.21.0", ngl=ngl)
        assert r["chosen"]["kv_gpu"] == pytest.approx(kv, abs=1)


def test_partial_offload_line_says_the_gpu_part_of_the_cache(capsys):
    # llama.cpp b8766 -ngl 20 at -c 4096: layers 23-41 and the output; layer 23's cache alone, 4096 x 2 x 512 x 2 x 2 B
    # = 16 MiB, of 4 x 16 + 20 x 2 = 104 MiB
    from gpu_garden.memory import cli
    assert cli.main(["kv", "--model", "google/gemma-4-E4B-it", "--runtime", "llama.cpp", "--ctx", "4096",
                     "--weights-dtype", "Q8_0", "--runtime-version", "b8766", "--ngl", "20", "--vram", "16"]) == 0
    from support.cli_run import unwrap  # the line as kv wrote it (term.py wraps it at 80 columns in a pipe)
    line = next(x for x in unwrap(capsys.readouterr().out).splitlines() if x.startswith("with the flags"))
    assert line.endswith("(KV 16.00 MiB of 104.00 MiB on the GPU)")


# ---------------------------------------------------------------- finding 7: Ollama library names
def test_ollama_library_names_from_the_inventory():
    # ollama/ollama integration/reg_library_test.go (fb307609) lists qwen3-coder-next and qwen3-embedding among the
    # libraries with local tags (smollm2 and smollm, no smollm3)
    s = llm.describe(model="qwen3-coder-next")
    assert (s.name, s.ollama, s.quant) == ("Qwen3-Next-80B-A3B", True, "Q4_K_M")
    e = llm.describe(model="qwen3-embedding:8b")
    assert (e.name, e.ollama) == ("Qwen3-Embedding-8B", True)
    with pytest.raises(Exception, match="latest"):
        llm.describe(model="qwen3-embedding")
    with pytest.raises(Exception, match="unknown model"):
        llm.describe(model="smollm3:3b")
