"""LLM memory calculator: hand-computed KV sizes for real configs and the numbers vLLM, llama.cpp and
Ollama print in public logs (threads named beside each test; log lines re-typed, numbers exact), the answers and
flags, and the runtime details. Its inputs (config.json, safetensors, GGUF) are in test_llm_inputs.py, its CLI in
test_llm_cli.py."""
import pytest

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
