"""`gpu-garden kv` against the numbers runtimes printed in public threads (benchmarks/data/llm_measured.json).
Expected values are the logs' numbers, typed by hand; a doubled KV or weights term breaks these."""
import math

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB


def spec(name):
    return llm.describe(model=name)


# ---------------------------------------------------------------- vLLM

def test_vllm_064_rtx3090_pool_tokens_concurrency_and_refusal():
    # vllm-project/vllm#10517 (vLLM 0.6.4, RTX 3090 total_gpu_memory=23.58GiB, gpu_memory_utilization=0.90,
    # Llama-3.1-8B-Instruct):
    #   20000: Loading model weights took 14.9888 GB ... kv_cache_size=3.81GiB, GPU blocks: 1952,
    #          Maximum concurrency for 20000 tokens per request: 1.56x                      -> started
    #   29000: kv_cache_size=2.89GiB, # GPU blocks: 1478, concurrency 0.82x, "max seq len (29000) is larger than
    #          the maximum number of tokens that can be stored in KV cache (23648)"          -> refused
    s = spec("meta-llama/Llama-3.1-8B-Instruct")
    ok = llm.plan(s, "vllm", ctx=20000, vram=23.58 * GiB, runtime_version="0.6.4", max_num_batched_tokens=20000)
    assert abs(ok["weights"] / GiB / 14.9888 - 1) < 0.03
    assert ok["fits_as_requested"] is True
    assert abs(ok["kv_capacity_tokens"] / 31232 - 1) < 0.05
    assert abs(ok["concurrency"] - 1.56) < 0.08
    bad = llm.plan(s, "vllm", ctx=29000, vram=23.58 * GiB, runtime_version="0.6.4", max_num_batched_tokens=29000)
    assert bad["fits_as_requested"] is False
    assert abs(bad["kv_capacity_tokens"] / 23648 - 1) < 0.05
    assert round(bad["concurrency"], 2) == pytest.approx(0.82, abs=0.04)
    assert bad["kv_capacity_tokens"] < 29000  # vLLM's own rule: one request of max_model_len must fit


def test_vllm_fits_rule_is_one_request_not_parallel_times_ctx():
    # a server that starts (one 20000-token request fits) is not "does NOT fit" because --parallel 4 is asked:
    # it reports its concurrency instead
    s = spec("meta-llama/Llama-3.1-8B-Instruct")
    r = llm.plan(s, "vllm", ctx=20000, parallel=4, vram=23.58 * GiB, runtime_version="0.6.4", max_num_batched_tokens=20000)
    assert r["fits_as_requested"] is True and r["concurrency"] < 4
    assert any("holds only" in n for n in r["notes"])


def test_vllm_v1_tokens_and_concurrency_from_the_kv_pool():
    # LMCache/LMCache#1739 (vLLM V1, Qwen3-14B): Available KV cache memory: 6.51 GiB / GPU KV cache size:
    # 42,656 tokens / Maximum concurrency for 32,768 tokens per request: 1.30x
    s = spec("Qwen/Qwen3-14B")
    assert llm.vllm_kv_tokens(s, 6.51 * GiB) == 42656
    r = llm.plan(s, "vllm", ctx=32768, vram=80 * GiB, kv_cache_memory=int(6.51 * GiB))
    assert r["kv_capacity_tokens"] == 42656 and round(r["concurrency"], 2) == 1.30
    assert r["fits_as_requested"] is True


def test_vllm_073_awq_on_an_8_gib_card_does_not_start():
    # vllm-project/vllm#13882 (vLLM 0.7.3, RTX 4060 8.00GiB x 0.70): model weights take 5.20GiB;
    # non_torch_memory takes 0.03GiB; activation 1.42GiB; "the rest of the memory reserved for KV Cache is -1.05GiB"
    s = spec("Qwen/Qwen2.5-7B-Instruct-AWQ")
    r = llm.plan(s, "vllm", ctx=4096, vram=8 * GiB, gpu_memory_utilization=0.70, runtime_version="0.7.3",
                 max_num_batched_tokens=4096)
    assert abs(r["weights"] / GiB / 5.2032 - 1) < 0.03
    assert r["fits_as_requested"] is False and r["kv_capacity_bytes"] < 0


def test_vllm_overheads_follow_the_version():
    s = spec("Llama-3.1-8B")
    old = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.19.1", gpu_memory_utilization=0.9)
    new = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.21.0", gpu_memory_utilization=0.9)
    eager = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.21.0", enforce_eager=True,
                     gpu_memory_utilization=0.9)
    # from 0.20.0 the CUDA graph estimate (512 MiB) comes out of the KV pool (vllm#38284, first released in 0.20.0: round
    # 64); before, graphs lived outside the share
    assert old["kv_capacity_bytes"] - new["kv_capacity_bytes"] == 512 * MiB
    assert eager["kv_capacity_bytes"] == old["kv_capacity_bytes"]
    # ... and the share vLLM takes when none is given went from 0.90 to 0.92 with it (vllm#38284; ellm41):
    # ceil(0.92 x 80 GiB) = 79,027,398,247 B against ceil(0.90 x 80 GiB) = 77,309,411,328 B
    assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.19.1")["budget"] == 77309411328
    assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.20.0")["budget"] == 79027398247
    assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.21.0")["budget"] == 79027398247
    v06 = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.6.4", max_num_batched_tokens=8192)
    v07 = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.7.3", max_num_batched_tokens=8192)
    assert v06["overhead"]["non_torch"] == int(0.35 * GiB) and v07["overhead"]["non_torch"] == int(0.06 * GiB)
    flags = [a["flag"] for a in new["autofit"]]
    assert "--max-model-len auto" in flags and any(f.startswith("--kv-cache-memory") for f in flags)
    assert llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.9.2")["autofit"] == []


def test_vllm_activation_comes_from_max_num_batched_tokens():
    s = spec("Llama-3.1-8B")
    # V1 takes the larger of the forward and the sampler warm-up: with 16 sequences the forward is the peak
    a = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, max_num_batched_tokens=16384,
                 max_num_seqs=16)["overhead"]["activation_profile"]
    b = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, max_num_batched_tokens=32768,
                 max_num_seqs=16)["overhead"]["activation_profile"]
    # per token: (3 x 14336 + 2 x 4096) x 2 bytes x 1.08 = 110,592 bytes (vllm#10517's slope: 110 KB per token)
    assert b - a == 16384 * 110592
    # V0 too takes the larger of the two (not their sum): with 256 sequences its top-k/top-p sampler (~9.9 fp32
    # logits copies: 256 x 128256 x 4 x 9.9 = 1.21 GiB) is the peak below ~11,700 tokens, the forward above
    c = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, max_num_batched_tokens=2048, runtime_version="0.6.4")
    d = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, max_num_batched_tokens=4096, runtime_version="0.6.4")
    assert d["overhead"]["activation_profile"] == c["overhead"]["activation_profile"] == int(256 * 128256 * 4 * 9.9)
    e = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, max_num_batched_tokens=20000, runtime_version="0.6.4")
    assert e["overhead"]["activation_profile"] == int(20000 * 110592)


# ---------------------------------------------------------------- llama.cpp

def test_llama_cpp_kv_buffer_qwen25_7b():
    # abetlen/llama-cpp-python#1901: 28 layers, n_embd_k_gqa = n_embd_v_gqa = 512, n_ctx 2048:
    #   CUDA0 KV buffer size = 112.00 MiB
    assert llm.plan(spec("Qwen2.5-7B"), "llama.cpp", ctx=2048)["kv_total"] == 112 * MiB


def test_llama_cpp_ctx_is_shared_by_parallel_slots():
    # --ctx 65536 --parallel 4 is one cache of 65536 cells: 65536 x 128 KiB = 8 GiB for Llama-3.1-8B, not 32
    r = llm.plan(spec("Llama-3.1-8B"), "llama.cpp", ctx=65536, parallel=4, weights_dtype="Q4_K_M")
    assert r["kv_total"] == 8 * GiB
    assert [f["text"] for f in r["flags"]][:2] == ["-c 65536", "-np 4"]


def test_llama_cpp_deepseek_full_mla_cache_of_old_builds():
    # ggml-org/llama.cpp#9390 (early-2025 build, DeepSeek, -c 16384, n_seq_max 8, type_k q4_0, type_v f16):
    #   CUDA0 KV buffer size = 5824.00 MiB (8 layers)   CUDA3 KV buffer size = 5096.00 MiB (7 layers)
    s = spec("deepseek-ai/DeepSeek-R1")
    kv = llm.kv_cache(s, 16384, 8, "q4_0", "llama.cpp", kv_v="f16", mla_cache="full")
    assert kv["per_full_layer"] * 8 == 5824 * MiB and kv["per_full_layer"] * 7 == 5096 * MiB
    latent = llm.kv_cache(s, 16384, 1, "f16", "llama.cpp", mla_cache="latent")["per_token"]
    full = llm.kv_cache(s, 16384, 1, "f16", "llama.cpp", mla_cache="full")["per_token"]
    assert latent == 61 * 576 * 2 and full == 61 * 40960 * 2  # 71x


# ---------------------------------------------------------------- Ollama

def test_ollama_gemma3_12b_projector_and_48_of_49_layers():
    # ollama/ollama#12000 (Ollama 0.11.6, gemma3:12b, --ctx-size 8192, memory.available=[11.1 GiB]):
    #   layers.model=49 layers.offload=48 memory.required.kv="992.0 MiB" memory.weights.total="6.8 GiB"
    #   memory.weights.nonrepeating="787.5 MiB" memory.graph.full="519.5 MiB" projector.weights="795.9 MiB"
    #   projector.graph="1.0 GiB"
    r = llm.plan(spec("gemma3:12b"), "ollama", ctx=8192, vram=11.1 * GiB, runtime_version="0.11.6")
    assert r["kv_total"] == 992 * MiB
    assert round(r["weights"] / GiB, 1) == 6.8
    assert abs(r["weights_by_role"]["output"] / MiB - 787.5) < 787.5 * 0.001
    assert abs(r["overhead"]["compute_buffer"] / MiB - 519.5) < 0.2
    assert abs(r["projector"]["weights"] / MiB / 795.9 - 1) < 0.03 and round(r["projector"]["graph"] / GiB, 1) == 1.0
    assert r["fits_as_requested"] is False  # the runner got --n-gpu-layers 48


def test_ollama_gemma3_12b_default_context_fits():
    # ollama/ollama#10341 (Ollama 0.6.5, gemma3:12b, memory.available=[11.5 GiB]): layers.offload=49 of 49,
    # memory.required.kv="608.0 MiB"
    r = llm.plan(spec("gemma3:12b"), "ollama", ctx=2048, vram=11.5 * GiB, runtime_version="0.6.5")
    assert r["kv_total"] == 608 * MiB and r["fits_as_requested"] is True


def test_ollama_parallel_sliding_cells_and_old_versions():
    # atineiatte/deep-research-at-home#14: gemma3 --ctx-size 8192 --parallel 2 -> memory.required.kv="1.3 GiB"
    assert round(llm.plan(spec("gemma3:12b"), "ollama", ctx=4096, parallel=2)["kv_total"] / GiB, 1) == 1.3
    # ollama/ollama#1495 (0.3.11, gemma2:9b, --ctx-size 8192 --parallel 4): memory.required.kv="2.6 GiB"
    r = llm.plan(spec("gemma2:9b"), "ollama", ctx=2048, parallel=4, runtime_version="0.3.11")
    assert round(r["kv_total"] / GiB, 1) == 2.6


def test_ollama_runtime_defaults_to_the_library_quantization():
    r = llm.plan(spec("Qwen2.5-7B"), "ollama")
    assert r["weights_dtype"] == "Q4_K_M" and 4.2 * GiB < r["weights"] < 4.5 * GiB  # qwen2.5:7b is 4.7 GB (4.36 GiB)


def test_largest_context_says_when_it_assumes_partial_offload(capsys):
    assert cli.main(["kv", "--model", "Llama-3.1-70B", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M",
                     "--ctx", "8192", "--vram", "24"]) in (0, 1)
    out = capsys.readouterr().out
    assert "partial offload" in out and "layers on the GPU" in out


def test_cli_flags_reach_the_plan(capsys):
    assert cli.main(["kv", "--model", "Llama-3.1-8B", "--vram", "24", "--gpu-memory-utilization", "0.8",
                     "--max-num-batched-tokens", "4096", "--enforce-eager", "--runtime-version", "0.10.1", "--json"]) in (0, 1)
    import json
    r = json.loads(capsys.readouterr().out)
    assert r["budget"] == math.ceil(0.8 * 24 * GiB) and r["overhead"]["cuda_graphs"] == 0
    # V1: the larger of the 4096-token forward and the sampler warm-up (256 x 128256 x 4 bytes x 9.7 copies, the
    # PyTorch-native top-k/top-p sampler a plain install runs)
    assert r["overhead"]["activation_profile"] == max(4096 * 110592, int(256 * 128256 * 4 * 9.7))
    assert cli.main(["kv", "--model", "deepseek-ai/DeepSeek-V3", "--runtime", "llama.cpp", "--mla-cache", "full",
                     "--ngl", "10", "--flash-attn", "off", "--ubatch", "256", "--kv-dtype", "q4_0", "--kv-dtype-v", "f16",
                     "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["kv_per_token"] == 61 * (24576 * 18 // 32 + 16384 * 2)
    assert "-ngl 10" in r["command"] and "-fa off" in r["command"] and "-ub 256" in r["command"]


def test_bad_settings_get_a_clear_error():
    with pytest.raises(UserError, match="mla-cache"):
        llm.plan(spec("DeepSeek-V3"), "llama.cpp", mla_cache="half")
    with pytest.raises(UserError, match="version"):
        llm.plan(spec("Llama-3.1-8B"), "vllm", runtime_version="x.y")
    with pytest.raises(UserError, match="unknown setting"):
        llm.plan(spec("Llama-3.1-8B"), "vllm", flux_capacitor=1)
