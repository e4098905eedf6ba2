"""LLM memory calculator: hand-computed KV sizes for real configs and the numbers vLLM, llama.cpp and
Ollama print in public logs (threads named beside each test; log lines re-typed, numbers exact)."""
import json
import math
import struct

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.units import GiB, KiB, MiB


def spec(name):
    return llm_spec.load_builtin(name)


def gib2(n):  # how vLLM prints GiB: two decimals
    return round(n / GiB, 2)


# ---------------------------------------------------------------- hand-computed geometry

def test_llama3_8b_kv_per_token_is_128_kib_at_f16():
    s = spec("Llama-3-8B")
    # 32 layers x 8 KV heads x 128 dim x 2 (K,V) x 2 bytes
    assert llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"] == 32 * 8 * 128 * 2 * 2 == 128 * KiB
    assert llm.kv_cache(s, 1, 1, "fp8", "vllm")["per_token"] == 64 * KiB
    # ggml blocks: q8_0 = 34 bytes per 32 elements, q4_0 = 18 per 32
    assert llm.kv_cache(s, 1, 1, "q8_0", "llama.cpp")["per_token"] == 32 * 8 * 128 * 2 * 34 // 32
    assert llm.kv_cache(s, 1, 1, "q4_0", "llama.cpp")["per_token"] == 32 * 8 * 128 * 2 * 18 // 32


def test_gqa_is_not_sized_from_hidden_size():
    # the classic calculator error (2 x layers x hidden) is 4x too high for Llama-3-8B (8 KV heads of 32)
    # and 8x for Llama-3-70B (8 of 64)
    s = spec("Llama-3-70B")
    assert llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"] == 80 * 8 * 128 * 2 * 2 == 320 * KiB
    assert 2 * 80 * 8192 * 2 == 8 * 320 * KiB


def test_exact_parameter_counts_of_public_models():
    assert spec("Llama-3-8B").params == 8_030_261_248
    assert spec("Mistral-7B-v0.1").params == 7_241_732_096
    assert spec("Mixtral-8x7B").params == 46_702_792_704
    assert spec("Qwen2.5-7B").params == 7_615_616_512
    assert spec("Gemma-2-9B").params == 9_241_705_984
    assert round(spec("Llama-3.1-70B").params / 1e9, 2) == 70.55   # llama.cpp prints "model params = 70.55 B"
    assert round(spec("DeepSeek-V3").params / 1e9) == 671          # without the MTP module
    assert spec("Phi-3-mini-4k").params == 3_821_079_552
    assert spec("Llama-3.2-3B").params == 3_212_749_824
    assert spec("Qwen3-30B-A3B").params == 30_532_122_624
    # gated DeltaNet + gated attention + 512 experts; the published total of the Qwen3-Next architecture
    assert spec("Qwen3-Next-80B-A3B").params == 79_674_391_296


def test_mla_caches_one_latent_per_layer():
    s = spec("DeepSeek-V3")
    assert s.mla and s.attn_layers == 61
    assert llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"] == 61 * (512 + 64) * 2


def test_sliding_window_layers_hold_only_the_window():
    s = spec("Gemma-3-12B")  # 5 local : 1 global, window 1024
    assert s.layer_kinds.count("sliding") == 40 and s.layer_kinds.count("full") == 8
    kv = llm.kv_cache(s, 32768, 1, "f16", "llama.cpp")
    per_layer_token = 8 * 256 * 2 * 2
    assert kv["full_layers"] == 8 * per_layer_token * 32768
    # llama_kv_cache_iswa keeps n_swa x n_seq + n_ubatch cells, padded to 256
    assert kv["sliding_layers"] == 40 * per_layer_token * 1536
    assert llm.kv_cache(s, 32768, 1, "f16", "llama.cpp", swa_full=True)["sliding_layers"] == 40 * per_layer_token * 32768
    g2 = spec("Gemma-2-9B")
    assert g2.layer_kinds[:4] == ["sliding", "full", "sliding", "full"] and g2.sliding_window == 4096


def test_hybrid_models_count_only_attention_layers():
    qn = spec("Qwen3-Next-80B-A3B")
    assert (qn.attn_layers, qn.n_layers) == (12, 48)
    assert llm.kv_cache(qn, 1, 1, "f16", "vllm")["per_token"] == 12 * 2 * 256 * 2 * 2
    assert qn.recurrent_state_per_seq > 0
    jamba = spec("Jamba-v0.1")
    assert jamba.attn_layers == 4 and jamba.layer_kinds[4] == "full" and jamba.layer_kinds.count("mamba") == 28


def test_moe_keeps_all_experts_resident():
    s = spec("Mixtral-8x7B")
    w, _ = llm.weights(s, "bf16")
    assert w == s.params * 2 and w > 80 * GiB  # 46.7 B, not the 12.9 B active


def test_explicit_head_dim_wins_over_hidden_over_heads():
    s = spec("Qwen3-30B-A3B")  # hidden 2048 / 32 heads = 64, but head_dim is 128
    assert s.head_dim_k == 128
    assert llm.kv_cache(s, 1, 1, "fp8", "vllm")["per_token"] == 48 * 4 * 128 * 2 * 1


# ---------------------------------------------------------------- weights

def test_weights_by_dtype():
    s = spec("Llama-3-8B")
    assert llm.weights(s)[0] == 8_030_261_248 * 2
    assert llm.weights(s, "fp32")[0] == 8_030_261_248 * 4
    # GGUF whole-file rates: llama.cpp lists Q4_K_M at 4.58 GiB and Q8_0 at 7.96 GiB for Llama-3-8B
    assert llm.weights(s, "Q4_K_M")[0] / GiB == pytest.approx(4.58, rel=0.01)
    assert llm.weights(s, "Q8_0")[0] / GiB == pytest.approx(7.96, rel=0.01)
    # AWQ/GPTQ quantize the block matmuls only; embeddings and lm_head stay 16-bit
    awq = llm.weights(s, "awq")[0]
    lin = s.linear_params
    assert awq == int(lin * (4 + 20 / 128) / 8 + (s.params - lin) * 2)
    assert 5.0 * GiB < awq < 5.6 * GiB
    assert llm.weights(s, "fp8")[0] == pytest.approx(lin + (s.params - lin) * 2, rel=1e-9)
    with pytest.raises(UserError, match="weights dtype"):
        llm.weights(s, "int3")


def test_vllm_log_model_weights_take(tmp_path):
    # vllm-project/vllm#10511, `vllm serve meta-llama/Meta-Llama-3-8B` on an 80 GB card:
    #   model weights take   14.96GiB
    assert gib2(llm.weights(spec("Llama-3-8B"))[0]) == 14.96


def test_deepseek_config_quantization_is_fp8():
    s = spec("DeepSeek-V3")
    assert s.quant == "fp8"
    w = llm.weights(s)[0]
    assert 600 * GiB < w < 660 * GiB


# ---------------------------------------------------------------- against runtime logs

def test_vllm_v0_gpu_blocks_and_token_capacity():
    # vllm-project/vllm#10517, Llama-3.1-8B-Instruct on an RTX 3090, --max-model-len 29000:
    #   ... kv_cache_size=2.89GiB gpu_memory_utilization=0.90
    #   # GPU blocks: 1478, # CPU blocks: 2048
    #   The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648).
    s = spec("Llama-3.1-8B")
    per_block = llm.BLOCK * llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"]
    assert 1478 * llm.BLOCK == 23648
    assert gib2(1478 * per_block) == 2.89
    assert llm.vllm_kv_tokens(s, 1478 * per_block) == 23648
    # the fix: the capacity in the log rounded down to 256
    flags = llm.suggest_flags_from_log({"max_model_len": 29000, "kv_tokens": 23648}, "vllm")
    assert flags[0]["text"] == "--max-model-len 23552"


def test_vllm_v1_kv_cache_size_tokens_qwen3_14b():
    # LMCache/LMCache#1739, Qwen3-14B on one GPU:
    #   Available KV cache memory: 6.51 GiB
    #   GPU KV cache size: 42,656 tokens
    s = spec("Qwen3-14B")
    assert llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"] == 40 * 8 * 128 * 2 * 2
    lo, hi = llm.vllm_kv_tokens(s, 6.505 * GiB), llm.vllm_kv_tokens(s, 6.515 * GiB)
    assert lo <= 42656 <= hi
    assert llm.vllm_kv_tokens(s, 6.51 * GiB) == 42656


def test_vllm_v1_fp8_needed_and_estimated_max_len_qwen3_30b_a3b():
    # vllm-project/vllm#25350, Qwen3-30B-A3B with --kv-cache-dtype fp8:
    #   Available KV cache memory: 10.55 GiB / GPU KV cache size: 230,528 tokens
    #   ... max seq len (221000), (10.12 GiB KV cache is needed, which is larger than the available KV cache
    #   memory (5.59 GiB). Based on the available memory, the estimated maximum model length is 122080.
    s = spec("Qwen3-30B-A3B")
    assert gib2(llm.kv_cache(s, 221000, 1, "fp8", "vllm")["total"]) == 10.12
    per_tok = llm.kv_cache(s, 1, 1, "fp8", "vllm")["per_token"]
    assert gib2(122080 * per_tok) == 5.59
    assert llm.vllm_kv_tokens(s, 10.545 * GiB, "fp8") <= 230528 <= llm.vllm_kv_tokens(s, 10.555 * GiB, "fp8")
    numbers = {"max_model_len": 221000, "kv_needed": int(10.12 * GiB), "kv_available": int(5.59 * GiB),
               "estimated_max_len": 122080, "kv_cache_dtype": "fp8", "model": "Qwen/Qwen3-30B-A3B"}
    flags = llm.suggest_flags_from_log(numbers, "vllm")
    assert flags[0] == {"kind": "flag", "name": "--max-model-len", "value": "121856", "text": "--max-model-len 121856",
                        "reason": "the log's estimated maximum (122080) rounded down to 256"}
    assert not any(f["name"] == "--kv-cache-dtype" for f in flags)  # already fp8


def test_vllm_suggestion_offers_fp8_when_cache_is_16_bit():
    flags = llm.suggest_flags_from_log({"max_model_len": 131072, "estimated_max_len": 52000}, "vllm")
    texts = [f["text"] for f in flags]
    assert texts[0] == "--max-model-len 51968"
    assert "--kv-cache-dtype fp8" in texts and "--max-model-len 103936" in texts


def test_vllm_suggestion_from_model_name_and_available_memory():
    flags = llm.suggest_flags_from_log({"model": "meta-llama/Llama-3.1-8B", "kv_available": 4 * GiB}, "vllm")
    # 4 GiB / 128 KiB per token = 32768 tokens
    assert flags[0]["text"] == "--max-model-len 32768"


def test_vllm_startup_free_memory_lowers_utilization():
    flags = llm.suggest_flags_from_log({"free": 20 * GiB, "total": 24 * GiB, "gpu_memory_utilization": 0.9}, "vllm")
    assert flags[0]["name"] == "--gpu-memory-utilization" and flags[0]["value"] == "0.81"  # floor((20/24 - 0.02) x 100) / 100


def test_llama_cpp_kv_self_size_qwen25_7b():
    # JamePeng/llama-cpp-python#1: an F16 GGUF of a Qwen2.5-7B-architecture model (DeepSeek-R1 distill tokens),
    # 28 layers with n_embd_k_gqa = 512; the context is llama-cpp-python's default 2048 (implied by the sizes):
    #   print_info: file size   = 14.19 GiB (16.00 BPW)
    #   llama_kv_cache_init:      CUDA0 KV buffer size =   112.00 MiB
    #   llama_init_from_model: KV self size  =  112.00 MiB, K (f16):   56.00 MiB, V (f16):   56.00 MiB
    #   llama_init_from_model:      CUDA0 compute buffer size =   304.xx MiB
    s = spec("Qwen2.5-7B")
    assert gib2(llm.weights(s, "f16")[0]) == 14.19
    kv = llm.kv_cache(s, 2048, 1, "f16", "llama.cpp")
    assert kv["total"] == 112 * MiB and kv["total"] // 2 == 56 * MiB
    assert llm.llamacpp_compute(s, 2048, 512, flash=False) // MiB == 304


def test_ollama_parallel_multiplies_the_cache_and_compute_buffer():
    # Ollama 0.5.4 on an RTX 4090 with OLLAMA_NUM_PARALLEL=4 and num_ctx 2048, Llama-3.1-8B Q4_K_M (a server log
    # published on GitHub): "--ctx-size 8192 ... --parallel 4", memory.required.kv="1.0 GiB",
    # memory.graph.full="560.0 MiB", and from the runner:
    #   llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB
    #   llama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB
    s = spec("Llama-3.1-8B")
    r = llm.plan(s, runtime="ollama", ctx=2048, parallel=4, weights_dtype="Q4_K_M", vram=int(23.6 * GiB))
    assert r["kv_total"] == 1024 * MiB
    assert round(r["overhead"]["compute_buffer"] / MiB, 2) == 560.00
    assert r["overhead"]["cuda_context"] == 457 * MiB
    assert r["fits"] and r["fits_as_requested"]


def test_llama_cpp_flash_attention_compute_is_the_logits():
    # with -fa the KQ matrix is gone; the output logits (ubatch x vocab x f32) dominate: 258.50 MiB for Llama-3
    s = spec("Llama-3-8B")
    assert llm.llamacpp_compute(s, 8192, 512, flash=True) == 4 * 512 * (4096 + 128256)
    assert llm.llamacpp_compute(s, 8192, 256, flash=True) * 2 == llm.llamacpp_compute(s, 8192, 512, flash=True)


# ---------------------------------------------------------------- answers and flags

def test_fits_and_largest_context_vllm_24gib():
    s = spec("Llama-3.1-8B")
    r = llm.plan(s, runtime="vllm", ctx=8192, vram=24 * GiB)
    assert r["fits"] and r["fits_as_requested"]
    big = llm.plan(s, runtime="vllm", ctx=131072, vram=24 * GiB)
    assert not big["fits"]
    m = big["max_ctx"]
    assert m % 256 == 0 and 0 < m < 131072
    assert big["max_ctx_by_kv_dtype"]["fp8"] >= 2 * big["max_ctx_by_kv_dtype"]["f16"] - 512
    by = {f["name"]: f["value"] for f in big["flags"]}
    assert by["--kv-cache-dtype"] == "fp8" and int(by["--max-model-len"]) == m
    # the printed flags hold up when evaluated again
    again = llm.plan(s, runtime="vllm", ctx=m, kv_dtype="fp8", vram=24 * GiB,
                     gpu_memory_utilization=float(by["--gpu-memory-utilization"]))
    assert again["fits_as_requested"]
    over = llm.plan(s, runtime="vllm", ctx=m + 256, kv_dtype="fp8", vram=24 * GiB,
                    gpu_memory_utilization=llm.VLLM_MAX_UTIL)
    assert not over["fits_as_requested"]


def test_vllm_weights_that_cannot_fit_say_so():
    r = llm.plan(spec("Llama-3-70B"), runtime="vllm", ctx=8192, vram=48 * GiB)
    assert r["fits"] is False and r["max_ctx"] == 0 and r["flags"] == []
    assert any("tensor-parallel" in n for n in r["notes"])
    ok = llm.plan(spec("Llama-3-70B"), runtime="vllm", ctx=8192, vram=48 * GiB, weights_dtype="awq")
    assert ok["fits"]


def test_llama_cpp_quantized_cache_before_shorter_context():
    s = spec("Llama-3.1-8B")
    r = llm.plan(s, runtime="llama.cpp", ctx=65536, weights_dtype="Q4_K_M", vram=12 * GiB)
    assert r["fits"] and not r["fits_as_requested"]
    texts = [f["text"] for f in r["flags"]]
    assert "-c 65536" in texts and "-ctk q8_0" in texts and "-ctv q8_0" in texts and "-fa on" in texts
    assert r["command"].startswith("llama-server -m MODEL.gguf -c 65536")


def test_llama_cpp_partial_offload_keeps_context():
    s = spec("Llama-3.1-70B")
    r = llm.plan(s, runtime="llama.cpp", ctx=8192, weights_dtype="Q4_K_M", vram=24 * GiB)
    ngl = next(f for f in r["flags"] if f["name"] == "-ngl")
    assert r["fits"] and 0 < int(ngl["value"]) < 80
    assert any("from RAM" in n for n in r["notes"])


def test_ollama_flags_are_env_and_num_ctx():
    s = spec("Qwen2.5-14B")
    r = llm.plan(s, runtime="ollama", ctx=32768, parallel=2, weights_dtype="Q4_K_M", vram=16 * GiB)
    names = {f["name"]: f for f in r["flags"]}
    assert names["OLLAMA_NUM_PARALLEL"]["text"] == "OLLAMA_NUM_PARALLEL=2"
    assert names["num_ctx"]["kind"] == "param"
    if r["kv_dtype"] != r["chosen"]["kv_dtype"]:
        assert names["OLLAMA_FLASH_ATTENTION"]["value"] == "1"
        assert names["OLLAMA_KV_CACHE_TYPE"]["value"] == r["chosen"]["kv_dtype"]


def test_ollama_log_suggestions():
    # the runner's n_ctx is num_ctx x OLLAMA_NUM_PARALLEL (8192 = 2048 x 4); one slot and q8_0 shrink the
    # cache to 1024 MiB / 4 x 34/64 = 136 MiB, which 200 MiB holds: the context stays
    numbers = {"n_ctx": 8192, "num_parallel": 4, "kv_buffer": 1024 * MiB, "alloc": 1024 * MiB, "free": 200 * MiB}
    texts = [f["text"] for f in llm.suggest_flags_from_log(numbers, "ollama")]
    assert texts == ["OLLAMA_NUM_PARALLEL=1", "OLLAMA_FLASH_ATTENTION=1", "OLLAMA_KV_CACHE_TYPE=q8_0"]
    flags = llm.suggest_flags_from_log(dict(numbers, free=100 * MiB), "ollama")
    ctx = next(f for f in flags if f["name"] == "num_ctx")
    assert int(ctx["value"]) % 256 == 0 and int(ctx["value"]) < 2048 and ctx["text"].startswith("PARAMETER num_ctx")


def test_llama_cpp_log_suggestions_keep_context_when_q8_is_enough():
    flags = llm.suggest_flags_from_log({"n_ctx": 32768, "kv_buffer": 4096 * MiB, "alloc": 4096 * MiB,
                                        "free": 3000 * MiB}, "llama.cpp")
    assert [f["text"] for f in flags] == ["-fa on", "-ctk q8_0", "-ctv q8_0"]
    flags = llm.suggest_flags_from_log({"n_ctx": 32768, "kv_buffer": 4096 * MiB, "alloc": 4096 * MiB,
                                        "free": 1000 * MiB}, "llama.cpp")
    c = next(f for f in flags if f["name"] == "-c")
    assert int(c["value"]) < 32768 and int(c["value"]) * 4096 * MiB / 32768 * 34 / 64 <= 1000 * MiB


def test_suggest_accepts_the_oom_parser_numbers():
    # the triage parser (memory/oom_parse.py) names the numbers of vLLM's V1 and V0 messages its own way
    from gpu_garden.memory.triage import parse as oom_parse
    v1 = ("ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is "
          "needed, which is larger than the available KV cache memory (5.59 GiB). Based on the available memory, the "
          "estimated maximum model length is 122080. Try increasing `gpu_memory_utilization` or decreasing "
          "`max_model_len` when initializing the engine.")
    v0 = ("ValueError: The model's max seq len (29000) is larger than the maximum number of tokens that can be stored "
          "in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
          "initializing the engine.")
    for line, want in ((v1, "--max-model-len 121856"), (v0, "--max-model-len 23552")):
        ev = oom_parse.recognise(line)
        assert ev and ev.get("numbers"), "the triage parser no longer reads vLLM's KV message"
        assert llm.suggest_flags_from_log(ev["numbers"], "vllm")[0]["text"] == want


def test_suggest_unknown_runtime_is_empty():
    assert llm.suggest_flags_from_log({"n_ctx": 4096}, "tgi") == []


def test_runtime_rejects_foreign_cache_types():
    with pytest.raises(UserError, match="fp8"):
        llm.plan(spec("Llama-3-8B"), runtime="vllm", kv_dtype="q8_0")
    with pytest.raises(UserError, match="q8_0"):
        llm.plan(spec("Llama-3-8B"), runtime="ollama", kv_dtype="fp8")


# ---------------------------------------------------------------- inputs

def _write(tmp_path, cfg, name="config.json"):
    p = tmp_path / name
    p.write_text(json.dumps(cfg))
    return p


LLAMA_CFG = json.loads((llm_spec.MODELS_DIR / "Llama-3-8B.json").read_text())


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c.pop("num_hidden_layers"), "num_hidden_layers"),
    (lambda c: c.update(num_attention_heads=0), "num_attention_heads"),
    (lambda c: c.update(num_key_value_heads=0), "num_key_value_heads"),
    (lambda c: c.update(num_key_value_heads=64), "num_key_value_heads"),
    (lambda c: c.update(num_key_value_heads=7), "multiple"),
    (lambda c: c.update(num_hidden_layers=100000), "plausible"),
    (lambda c: c.update(hidden_size=10 ** 9), "plausible"),
    (lambda c: c.update(vocab_size="many"), "whole number"),
])
def test_bad_configs_get_a_clear_error(tmp_path, mutate, message):
    cfg = dict(LLAMA_CFG)
    mutate(cfg)
    with pytest.raises(UserError, match=message):
        llm_spec.load_config(str(_write(tmp_path, cfg)))


def test_unreadable_files(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="JSON"):
        llm_spec.load_config(str(bad))
    with pytest.raises(UserError, match="no such file"):
        llm_spec.load_config(str(tmp_path / "missing.json"))
    with pytest.raises(UserError, match="unknown model"):
        llm_spec.load_builtin("Llama-9-1T")


def test_config_beside_safetensors_gives_exact_weights(tmp_path):
    _write(tmp_path, LLAMA_CFG)
    # Llama-3-8B's 8,030,261,248 parameters (Meta's figure): the token table, the rest as one tensor of 4096 columns
    # (ux50 S8: a file beside a config counts only when it holds the config's parameters)
    table, rest = 128256 * 4096 * 2, (8030261248 - 128256 * 4096) * 2
    header = {"model.embed_tokens.weight": {"dtype": "BF16", "shape": [128256, 4096], "data_offsets": [0, table]},
              "model.layers.0.mlp.up_proj.weight": {"dtype": "BF16", "shape": [(8030261248 - 128256 * 4096) // 4096, 4096],
                                                    "data_offsets": [table, table + rest]},
              "__metadata__": {"format": "pt"}}
    raw = json.dumps(header).encode()
    with open(tmp_path / "model.safetensors", "wb") as f:  # sparse: the header, then a hole as long as the data
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + table + rest)
    s = llm_spec.load_config(str(tmp_path / "config.json"))
    assert s.weights_bytes == 8030261248 * 2
    assert llm.weights(s)[1].startswith("exact")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 16060522496}}))
    assert llm_spec.load_config(str(tmp_path)).weights_bytes == 16060522496


def test_bad_safetensors_header(tmp_path):
    # ux50 S8: an unreadable file beside a config is skipped and named, not an error (the config alone sizes the model)
    _write(tmp_path, LLAMA_CFG)
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    s = llm_spec.load_config(str(tmp_path / "config.json"))
    assert s.weights_bytes is None
    assert any("model.safetensors (unreadable" in n and "safetensors" in n for n in s.notes)


def test_vision_language_config_uses_the_text_decoder():
    s = spec("Qwen2.5-VL-7B")
    assert (s.n_layers, s.n_kv_heads, s.head_dim_k) == (28, 4, 128)
    assert any("vision" in n for n in s.notes)
    g3 = spec("Gemma-3-27B")
    assert g3.n_layers == 62 and g3.layer_kinds.count("full") == 10


def test_builtin_descriptions_all_load_and_are_sane():
    names = llm_spec.builtin_names()
    assert {"Llama-3-8B", "Llama-3-70B", "Llama-3.1-8B", "Mistral-7B-v0.1", "Qwen2.5-7B", "Qwen2.5-14B", "Qwen2.5-32B",
            "Qwen2.5-72B", "Qwen2.5-VL-7B", "Gemma-2-9B", "Gemma-2-27B", "Gemma-3-12B", "DeepSeek-V3", "DeepSeek-R1",
            "Mixtral-8x7B", "Phi-3-mini-4k"} <= set(names)
    for n in names:
        s = spec(n)
        assert s.attn_layers > 0 and s.params > 1e8 and s.max_ctx  # Qwen2.5-0.5B: 0.49 B
        assert json.loads((llm_spec.MODELS_DIR / f"{n}.json").read_text())["_source"].startswith("https://huggingface.co/")
    assert spec("llama-3-8b").name == "Llama-3-8B"


# ---------------------------------------------------------------- GGUF

def test_gguf_metadata_and_exact_tensor_bytes(tmp_path):
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    path = tmp_path / "tiny-llama.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(32)
    w.add_context_length(131072)
    w.add_embedding_length(4096)
    w.add_feed_forward_length(14336)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_rope_dimension_count(128)
    w.add_vocab_size(128256)
    w.add_file_type(15)
    w.add_tensor("token_embd.weight", np.zeros((16, 64), dtype=np.float16))
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 64), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    s = llm_spec.load_gguf(str(path))
    assert (s.arch, s.n_layers, s.n_kv_heads, s.head_dim_k, s.vocab) == ("llama", 32, 8, 128, 128256)
    assert s.quant == "Q4_K_M" and s.max_ctx == 131072
    assert s.weights_bytes == 16 * 64 * 2 + 64 * 64 * 4
    assert s.embed_bytes == 16 * 64 * 2
    assert llm.kv_cache(s, 1, 1, "f16", "llama.cpp")["per_token"] == 128 * KiB
    r = llm.plan(s, runtime="llama.cpp", ctx=8192, vram=8 * GiB)
    assert r["weights_how"].startswith("exact")


def test_gguf_per_layer_kv_heads_mark_recurrent_layers():
    meta = {"general.architecture": "granitehybrid", "granitehybrid.block_count": 4,
            "granitehybrid.embedding_length": 1024, "granitehybrid.attention.head_count": 8,
            "granitehybrid.attention.head_count_kv": [0, 0, 0, 4], "granitehybrid.ssm.state_size": 64,
            "granitehybrid.ssm.inner_size": 2048, "tokenizer.ggml.tokens": ["a"] * 100}
    s = llm_spec.from_gguf_metadata(meta, {"blk.0.x.weight": (100, "F16", 50)}, name="hybrid.gguf")
    assert s.attn_layers == 1 and s.layer_kinds[:3] == ["mamba"] * 3
    assert s.recurrent_state_per_seq > 0
    with pytest.raises(UserError, match="attention.head_count"):
        llm_spec.from_gguf_metadata({"general.architecture": "llama", "llama.block_count": 2}, None)


def test_gguf_needs_no_optional_package_and_refuses_truncation(monkeypatch, tmp_path):
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    path = tmp_path / "g.gguf"
    w = gguf.GGUFWriter(str(path), "gemma3")
    for add, v in ((w.add_block_count, 48), (w.add_embedding_length, 3840), (w.add_head_count, 16),
                   (w.add_head_count_kv, 8), (w.add_key_length, 256), (w.add_value_length, 256),
                   (w.add_sliding_window, 1024), (w.add_context_length, 131072)):
        add(v)
    w.add_token_list([f"t{i}" for i in range(5000)])
    w.add_tensor("token_embd.weight", np.zeros((64, 32), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    import builtins
    real = builtins.__import__

    def no_gguf(name, *a, **k):
        if name == "gguf" or name.startswith("gguf."):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_gguf)
    s = llm_spec.load_gguf(str(path))
    assert s.vocab == 5000 and s.layer_kinds.count("sliding") == 40 and s.weights_bytes == 64 * 32 * 2
    assert s.tied  # no output.weight: llama.cpp reuses the embedding
    data = path.read_bytes()
    path.write_bytes(data[:-1000])
    with pytest.raises(UserError, match="truncated"):
        llm_spec.load_gguf(str(path))


def test_gguf_not_a_gguf(tmp_path):
    pytest.importorskip("gguf")
    p = tmp_path / "junk.gguf"
    p.write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(UserError, match="GGUF"):
        llm_spec.load_gguf(str(p))


# ---------------------------------------------------------------- CLI

def test_cli_json_contract_and_exit_codes(capsys):
    rc = cli.main(["kv", "--model", "Llama-3-8B", "--ctx", "8192", "--vram", "24", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    for key in ("weights", "kv_per_token", "kv_total", "overhead", "total", "fits", "max_ctx", "flags"):
        assert key in out
    assert out["kv_per_token"] == 128 * KiB and out["kv_total"] == 8192 * 128 * KiB and out["fits"] is True
    rc = cli.main(["kv", "--model", "Llama-3-70B", "--ctx", "8192", "--vram", "24", "--json"])
    assert rc == 1 and json.loads(capsys.readouterr().out)["fits"] is False
    rc = cli.main(["kv", "--model", "Nope-1B"])
    assert rc == 2 and "unknown model" in capsys.readouterr().err
    rc = cli.main(["kv", "--model", "Llama-3-8B", "--kv-dtype", "q3_x"])
    assert rc == 2


def test_cli_text_and_list(capsys):
    assert cli.main(["kv", "--model", "list"]) == 0
    assert "Llama-3-8B" in capsys.readouterr().out.split()
    assert cli.main(["kv", "--model", "Mistral-7B-v0.1", "--runtime", "llama.cpp", "--ctx", "32768",
                     "--weights-dtype", "Q4_K_M", "--vram", "8"]) in (0, 1)
    text = capsys.readouterr().out
    assert "KV cache" in text and "llama-server" in text and "compute buffer" in text


def test_cli_does_not_import_torch():
    from support.pack import run_python
    out = run_python("import sys, gpu_garden.memory.llm.kv; print('torch' in sys.modules, 'gguf' in sys.modules)", timeout=60)
    assert out.stdout.strip() == "False False", out.stderr


# ---------------------------------------------------------------- runtime details

def test_sliding_window_is_runtime_specific_for_mistral_v01():
    s = spec("Mistral-7B-v0.1")  # window 4096 on every layer
    vllm_kv = llm.kv_cache(s, 32768, 1, "f16", "vllm", max_batched=2048)
    assert vllm_kv["sliding_layers"] < 32 * 2048 * 2 * 32768 / 4
    # the GGUF of Mistral-7B-v0.1 is plain `llama`: llama.cpp keeps the whole context
    cpp = llm.kv_cache(s, 32768, 1, "f16", "llama.cpp")
    assert cpp["total"] == 32 * 8 * 128 * 2 * 2 * 32768
    notes = llm.plan(s, runtime="llama.cpp", ctx=32768)["notes"]
    assert any("not kept by llama.cpp" in n for n in notes)


def test_vllm_activation_profile_tracks_the_logged_peaks():
    # "PyTorch activation peak memory 1.26GiB" (Llama-3-8B, 8192 batched tokens, vllm-project/vllm#10511) and
    # peak_torch_memory 17.06GiB - 14.99 GB weights = 2.07 GiB (Llama-3.1-8B, 20000 tokens, vllm-project/vllm#10517)
    s = spec("Llama-3-8B")
    assert llm.vllm_activation(s, 8192, 256) / GiB == pytest.approx(1.26, rel=0.15)
    assert llm.vllm_activation(s, 20000, 256) / GiB == pytest.approx(2.07, rel=0.15)


def test_llama_cpp_keeps_the_embedding_on_the_host():
    s = spec("Llama-3.1-8B")  # untied: embedding on the host, output head on the GPU
    w = llm.weights(s, "bf16")[0]
    emb, out, blocks = llm.split_weights(s, w)
    assert emb == out == 128256 * 4096 * 2 and blocks == w - 2 * emb
    r = llm.plan(s, runtime="llama.cpp", ctx=4096, weights_dtype="bf16", vram=80 * GiB)
    assert r["host_weights"] == emb and r["total"] < w + r["kv_total"] + r["overhead_total"]
    t = spec("Llama-3.2-3B")  # tied: llama.cpp copies the embedding to the GPU as the output head
    w = llm.weights(t, "bf16")[0]
    emb, out, blocks = llm.split_weights(t, w)
    assert emb == out and blocks == w - emb


def test_partial_offload_prefers_q8_over_q4_cache():
    r = llm.plan(spec("Llama-3.1-70B"), runtime="llama.cpp", ctx=8192, weights_dtype="Q4_K_M", vram=24 * GiB)
    assert r["chosen"]["kv_dtype"] in ("f16", "q8_0")
    assert r["overhead"]["margin"] >= llm.LLAMACPP_MARGIN


def test_hf_repo_names_resolve_to_builtins():
    assert spec("meta-llama/Meta-Llama-3.1-8B-Instruct").name == "Llama-3.1-8B"
    assert spec("mistralai/Mixtral-8x7B-Instruct-v0.1").name == "Mixtral-8x7B"
    assert spec("mistralai/Mistral-7B-Instruct-v0.3").name == "Mistral-7B-v0.3"
    assert spec("google/gemma-3-12b-it").name == "Gemma-3-12B"
    q = spec("Qwen/Qwen2.5-72B-Instruct-AWQ")
    assert q.name == "Qwen2.5-72B" and q.quant == "awq"
    assert spec("Qwen/Qwen3-30B-A3B-FP8").quant == "fp8"


def test_config_quantization_config_sets_the_weight_format(tmp_path):
    cfg = dict(LLAMA_CFG, quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128})
    s = llm_spec.load_config(str(_write(tmp_path, cfg)))
    assert s.quant == "awq" and llm.weights(s)[0] == llm.weights(spec("Llama-3-8B"), "awq")[0]
    cfg = dict(LLAMA_CFG, quantization_config={"quant_method": "compressed-tensors", "config_groups": {
        "group_0": {"weights": {"num_bits": 8, "type": "float"}}}})
    assert llm_spec.load_config(str(_write(tmp_path, cfg))).quant == "fp8"


def test_no_vram_gives_sizes_without_verdict(capsys):
    rc = cli.main(["kv", "--model", "Gemma-2-9B", "--ctx", "8192", "--runtime", "ollama", "--vram", "0.1", "--json"])
    assert rc == 2  # 0.1 GiB is not a GPU
    capsys.readouterr()
    r = llm.plan(spec("Gemma-2-9B"), runtime="ollama", ctx=8192)
    assert r["fits"] is None and r["max_ctx"] is None and r["flags"]


def _gemma4_12b_meta():
    # gemma-4-12B GGUF metadata as llama.cpp's loader prints it: 48 blocks, head_count_kv per layer
    # [8, 8, 8, 8, 8, 1, ...] (five sliding layers of 8 heads x 256, then a global layer of 1 head x 512)
    return {"general.architecture": "gemma4", "gemma4.block_count": 48, "gemma4.embedding_length": 3840,
            "gemma4.attention.head_count": 16, "gemma4.attention.head_count_kv": [8, 8, 8, 8, 8, 1] * 8,
            "gemma4.attention.key_length": 512, "gemma4.attention.value_length": 512,
            "gemma4.attention.key_length_swa": 256, "gemma4.attention.value_length_swa": 256,
            "gemma4.attention.sliding_window": 1024, "gemma4.context_length": 131072,
            "tokenizer.ggml.vocab_len": 262144}


def test_llama_cpp_iswa_cache_per_layer_geometry_and_q8_blocks():
    # llama.cpp logs quoted in a public project's notes (gemma-4-12B, `-c 16384 -fa on -ctk q8_0 -ctv q8_0`):
    #   llama_kv_cache_iswa: creating non-SWA KV cache, size = 16384 cells
    #   llama_kv_cache: size =  136.00 MiB ( 16384 cells,   8 layers,  1/1 seqs), K (q8_0):   68.00 MiB, V (q8_0):   68.00 MiB
    #   llama_kv_cache_iswa: creating     SWA KV cache, size = 1536 cells
    #   llama_kv_cache: size =  255.00 MiB ( 1536 cells,  40 layers,  1/1 seqs), K (q8_0):  127.50 MiB, V (q8_0):  127.50 MiB
    s = llm_spec.from_gguf_metadata(_gemma4_12b_meta(), None, name="gemma-4-12B.gguf")
    assert s.layer_kinds.count("full") == 8 and s.layer_kinds.count("sliding") == 40
    kv = llm.kv_cache(s, 16384, 1, "q8_0", "llama.cpp")
    assert kv["full_layers"] == 136 * MiB and kv["sliding_layers"] == 255 * MiB


def test_llama_cpp_c_is_shared_by_the_slots():
    # same notes, `-c 8192 -np 2` at f16: -c is the whole cache, split into 2 streams of 4096 cells (not 2 x 8192);
    # each stream keeps 1536 SWA cells
    #   llama_kv_cache: size =  128.00 MiB ( 4096 cells,  8 layers, 2/2 seqs), K (f16): 64.00 MiB, V (f16): 64.00 MiB
    #   llama_kv_cache: size =  960.00 MiB ( 1536 cells, 40 layers, 2/2 seqs), K (f16): 480.00 MiB, V (f16): 480.00 MiB
    s = llm_spec.from_gguf_metadata(_gemma4_12b_meta(), None, name="gemma-4-12B.gguf")
    kv = llm.kv_cache(s, 8192, 2, "f16", "llama.cpp", unified=False)
    assert kv["full_layers"] == 128 * MiB and kv["sliding_layers"] == 960 * MiB
    s = llm_spec.from_gguf_metadata(_gemma4_12b_meta(), {"token_embd.weight": (1 << 30, "Q8_0", 1 << 30),
                                                         "blk.0.attn_q.weight": (12 << 30, "Q8_0", 12 << 30)})
    r = llm.plan(s, runtime="llama.cpp", ctx=8192, parallel=2, vram=24 * GiB)
    assert r["fits"] and [f["text"] for f in r["flags"]][:3] == ["-c 8192", "-np 2", "-ngl 99"]
    assert r["kv_detail"]["full_layers"] == 128 * MiB and r["kv_detail"]["sliding_layers"] == 960 * MiB


def test_cli_without_vram_uses_this_machines_first_gpu(monkeypatch, capsys):
    from gpu_garden.memory.budget import probe
    fake = {"devices": [{"index": 0, "name": "CPU (host RAM)", "backend": "cpu", "total": 64 * GiB},
                        {"index": 0, "name": "NVIDIA GeForce RTX 4090", "backend": "cuda", "total": 24 * GiB}]}
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: fake)
    assert cli.main(["kv", "--model", "Llama-3-8B", "--ctx", "8192", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["vram"] == 24 * GiB and out["fits"] is True
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: {"devices": [fake["devices"][0]]})
    assert cli.main(["kv", "--model", "Llama-3-8B", "--ctx", "8192", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is None


def _llama_table(L=32, d=4096, kv=1024, ff=14336, V=128256, dtype="BF16"):
    t = {"model.embed_tokens.weight": (dtype, (V, d)), "lm_head.weight": (dtype, (V, d)), "model.norm.weight": (dtype, (d,))}
    for i in range(L):
        p = f"model.layers.{i}."
        t.update({p + "self_attn.q_proj.weight": (dtype, (d, d)), p + "self_attn.k_proj.weight": (dtype, (kv, d)),
                  p + "self_attn.v_proj.weight": (dtype, (kv, d)), p + "self_attn.o_proj.weight": (dtype, (d, d)),
                  p + "mlp.gate_proj.weight": (dtype, (ff, d)), p + "mlp.up_proj.weight": (dtype, (ff, d)),
                  p + "mlp.down_proj.weight": (dtype, (d, ff)), p + "input_layernorm.weight": (dtype, (d,)),
                  p + "post_attention_layernorm.weight": (dtype, (d,))})
    return t


def test_description_from_safetensors_headers_alone():
    s = llm_spec.from_tensor_table(_llama_table(), name="Meta-Llama-3-8B")
    assert (s.n_layers, s.attn_layers, s.n_kv_heads, s.head_dim_k, s.vocab) == (32, 32, 8, 128, 128256)
    assert s.params == 8_030_261_248 and s.weights_bytes == 16_060_522_496 and not s.tied
    assert llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"] == 128 * KiB
    r = llm.plan(s, runtime="vllm", ctx=8192, vram=24 * GiB)
    assert r["fits"] and r["weights_how"].startswith("exact")
    # MLA: the latent width is kv_a_proj_with_mqa's output, kv_lora_rank its layernorm
    mla = {"model.embed_tokens.weight": ("BF16", (129280, 7168)),
           "model.layers.0.self_attn.kv_a_proj_with_mqa.weight": ("BF16", (576, 7168)),
           "model.layers.0.self_attn.kv_a_layernorm.weight": ("BF16", (512,))}
    m = llm_spec.from_tensor_table(mla)
    assert m.mla and (m.kv_lora_rank, m.qk_rope_head_dim) == (512, 64)
    with pytest.raises(UserError, match="config.json"):
        llm_spec.from_tensor_table({"model.layers.0.self_attn.qkv_proj.weight": ("BF16", (9216, 3072)),
                                    "model.embed_tokens.weight": ("BF16", (32064, 3072))})


def test_cli_config_accepts_a_safetensors_file(tmp_path, capsys):
    table = _llama_table(L=2, d=64, kv=16, ff=128, V=1000)
    header, off = {}, 0
    for name, (dt, shape) in table.items():
        n = math.prod(shape) * 2
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + off)
    assert cli.main(["kv", "--config", str(path), "--ctx", "1024", "--vram", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == off and out["kv_per_token"] == 2 * 32 * 2
    assert cli.main(["kv", "--config", str(tmp_path), "--ctx", "1024", "--json"]) == 0  # the folder, no config.json
