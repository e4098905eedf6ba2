"""`gpu-garden kv` against the runs of benchmark batches 6-7 (benchmarks/data/llm_measured.json) and the two
regression rows re-attributed with them. Every expected value is a number the runtime printed in the thread
named in the comment; the tolerances are the runtimes' own rounding or a few per cent, never enough to pass a
2x error in the term under test."""
import math

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V, vllm_overheads as VO

GiB, MiB = 1 << 30, 1 << 20


def spec(name):
    return llm.describe(model=name)


def act(r):
    return r["overhead"]["activation_profile"] / GiB


# ---------------------------------------------------------------- vLLM: the profile peak


def test_v0_sampler_peak_qwen25_7b_on_a_4060():
    # vllm-project/vllm#13882 (0.7.3, V0): "PyTorch activation peak memory takes 1.42GiB" for Qwen2.5-7B at
    # --max-model-len 4096 with 256 sequences: the top-k/top-p sampler on 256 x 152064 fp32 logits (~9.9 copies)
    # is the peak, not the 4096-token forward
    r = llm.plan(spec("Qwen2.5-7B"), "vllm", ctx=4096, vram=8 * GiB, gpu_memory_utilization=0.7,
                 runtime_version="0.7.3")
    assert act(r) == pytest.approx(1.42, rel=0.03)


def test_forward_peak_grows_with_the_profiled_tokens():
    # vllm-project/vllm#10517 (0.6.4, V0): peak_torch_memory - weights = 2.07 GiB at 20000 tokens, 2.99 at 29000
    s = spec("Llama-3.1-8B")
    a = llm.plan(s, "vllm", ctx=20000, vram=23.58 * GiB, runtime_version="0.6.4")
    b = llm.plan(s, "vllm", ctx=29000, vram=23.58 * GiB, runtime_version="0.6.4")
    assert act(a) == pytest.approx(2.07, rel=0.03) and act(b) == pytest.approx(2.99, rel=0.03)


def test_v0_takes_the_larger_of_forward_and_sampler_not_their_sum():
    s = spec("Llama-3.1-8B")
    fwd = V.activation(s, 8192, 1, (0, 7, 3))           # one sequence: the sampler is negligible
    smp = V.activation(s, 16, 256, (0, 7, 3))            # 16 tokens: the forward is negligible
    both = V.activation(s, 8192, 256, (0, 7, 3))
    assert both == max(fwd, smp) < fwd + smp


# ---------------------------------------------------------------- vLLM: engine, graphs, sliding windows


def test_qwen3_4b_on_a_12gb_rtx_2060_starts():
    # Q07K/langgraph-mcp-example README (0.8.5, V0 on a compute-7.5 card): --max-num-seqs 1, --max-model-len 10k,
    # 0.95 of 12.00 GiB; it started with "# cuda blocks: 1394" (22,304 tokens). With one sequence the CUDA graph
    # pool is small, so the 0.6 GiB outside the share holds the context and the graphs.
    r = llm.plan(spec("Qwen/Qwen3-4B"), "vllm", ctx=10000, vram=12 * GiB, gpu_memory_utilization=0.95,
                 max_num_seqs=1, weights_dtype="fp16", runtime_version="0.8.5", gpu_name="NVIDIA GeForce RTX 2060")
    assert r["fits_as_requested"] is True
    assert r["overhead"]["cuda_graphs"] < 64 * MiB
    assert abs(r["kv_capacity_tokens"] / 22304 - 1) < 0.05
    # the default capture list (256 sequences; V1 from 0.10: 512 tokens) keeps the 512 MiB figure
    s = V.settings((0, 11, 0), 24 * GiB, 8192, {})
    assert VO.graph_memory(dict(s, max_seqs=256)) == VO.CUDA_GRAPHS == VO.graph_memory(dict(s, max_seqs=1024))


def test_sliding_layers_kept_in_full_before_vllm_010():
    # vllm-project/vllm#16199 (0.8.3, VLLM_USE_V1=0): gemma-3-27b at --max-model-len 4096 needs every one of its 62
    # layers at 4096 tokens (16 KV heads x 128): the refusal's "maximum number of tokens that can be stored in KV
    # cache (3584)" is 1.70 GiB at 62 x 16 x 128 x 2 x 2 bytes per token
    s = spec("google/gemma-3-27b-it")
    old = llm.plan(s, "vllm", ctx=4096, runtime_version="0.8.3", vllm_engine="v0")
    assert old["kv_total"] == 62 * 16 * 128 * 2 * 2 * 4096
    assert llm.vllm_kv_tokens(s, 3584 * 62 * 16 * 128 * 4, hybrid=False) == 3584  # no hybrid manager before 0.10
    # at 32k tokens the hybrid manager (on by default from 0.9.1 on CUDA: ellm29) keeps the window (plus a profile
    # batch) in 52 of the 62 layers; 0.9.0 unifies every layer to full
    old32 = llm.plan(s, "vllm", ctx=32768, runtime_version="0.9.0")
    new32 = llm.plan(s, "vllm", ctx=32768, runtime_version="0.11")
    assert old32["kv_total"] == 62 * 16 * 128 * 2 * 2 * 32768
    assert new32["kv_total"] < old32["kv_total"] / 3


def test_vllm_engine_knob():
    s = spec("Llama-3.1-8B")
    v1 = llm.plan(s, "vllm", ctx=2048, vram=80 * GiB, runtime_version="0.7.1", vllm_engine="v1")
    v0 = llm.plan(s, "vllm", ctx=2048, vram=80 * GiB, runtime_version="0.7.1")
    # V1 of January 2025 ran no sampler in its profile (vllm#13507) but took the logits of all 8192 batched rows in bf16
    # next to the hidden states; V0 samples 256 rows (~9.9 fp32 copies)
    assert act(v1) == pytest.approx((8192 * 128256 + 8192 * 4096) * 2 / GiB)
    assert act(v1) > act(v0)
    assert v1["command"].startswith("VLLM_USE_V1=1 vllm serve")
    assert any("VLLM_USE_V1=1" in n for n in v1["notes"])
    forced = llm.plan(s, "vllm", ctx=2048, vram=80 * GiB, runtime_version="0.8.3", vllm_engine="v0")
    assert any("V0 engine (VLLM_USE_V1=0)" in n for n in forced["notes"])
    with pytest.raises(UserError):
        llm.plan(s, "vllm", ctx=2048, runtime_version="0.8.3", vllm_engine="v2")


def test_cli_vllm_engine_flag(capsys):
    from gpu_garden.memory import cli
    import json
    assert cli.main(["kv", "--model", "Llama-3.1-8B", "--vram", "80", "--runtime-version", "0.7.1",
                     "--vllm-engine", "v1", "--json"]) in (0, 1)
    r = json.loads(capsys.readouterr().out)
    assert r["command"].startswith("VLLM_USE_V1=1 ")


# ---------------------------------------------------------------- llama.cpp / Ollama


def test_k_quant_fallback_for_rows_not_divisible_by_256():
    # ollama/ollama#5913 (0.2.8): dolphin-qwen2:72b-v2.9.2-q4_k_s prints memory.weights.total 39.9 GiB (its
    # 974.6 MiB output tensor is Qwen2's 152064 x 8192 in Q6_K). Qwen2-72B's ffn_down rows are 29568 long, not a
    # multiple of 256: llama.cpp stores them in Q5_0 instead of Q4_K (+2.3 GiB over the Q4_K_S mix)
    s = spec("Qwen2.5-72B")
    r = llm.plan(s, "ollama", ctx=2048, weights_dtype="Q4_K_S", runtime_version="0.2.8")
    assert abs(r["ollama_weights_total"] / GiB - 39.9) <= 0.05
    assert r["weights_by_role"]["output"] / MiB == pytest.approx(974.6, abs=0.1)
    assert "not a multiple of 256" in r["weights_how"]
    # a model whose rows divide 256 is untouched
    assert "not a multiple" not in llm.plan(spec("Qwen2.5-32B"), "ollama", ctx=2048, weights_dtype="Q4_K_S")["weights_how"]


def test_old_ollama_sizes_the_graph_without_flash_attention():
    # ollama/ollama#5821 (0.2.8): llama3.1:8b-instruct-q8_0 at num_ctx 80000 with --flash-attn on the runner's command
    # line; the estimate still prints graph.full 5.1 GiB, required.full 23.5 GiB, and puts 31 of 33 layers on 22.7 GiB
    s = spec("llama3.1:8b-instruct-q8_0")
    old = llm.plan(s, "ollama", ctx=80000, vram=22.7 * GiB, flash_attn=True, runtime_version="0.2.8")
    assert old["overhead"]["compute_buffer"] / GiB == pytest.approx(5.1, abs=0.05)
    assert old["kv_total"] / GiB == pytest.approx(9.8, abs=0.05)
    assert old["fits_as_requested"] is False
    # nor does a later one: 0.9.6's llm/memory.go still calls GraphSize(numCtx, batch, numParallel, kvct), no flash
    # attention argument (it came in 0.11.11 and only gpt-oss's case reads it; task efits18)
    new = llm.plan(s, "ollama", ctx=80000, vram=22.7 * GiB, flash_attn=True, runtime_version="0.9.6")
    assert new["overhead"]["compute_buffer"] / GiB == pytest.approx(5.1, abs=0.05)


def test_ollama_batch6_rows():
    # ollama/ollama#8098 (0.5.x): llama3.2:3b, --ctx-size 8192 --parallel 4: kv 896.0 MiB, nonrepeating 308.2 MiB
    r = llm.plan(spec("llama3.2:3b"), "ollama", ctx=2048, parallel=4, vram=78.6 * GiB, runtime_version="0.5.1")
    assert r["kv_total"] == 896 * MiB and r["fits_as_requested"] is True
    assert r["weights_by_role"]["output"] / MiB == pytest.approx(308.2, abs=0.05)
    # take0a/mcp docs/ollama.md (0.9.6): gemma3:27b, --ctx-size 8192 with parallel=2: kv 1.6 GiB, weights 15.4 GiB
    g = llm.plan(spec("gemma3:27b"), "ollama", ctx=4096, parallel=2, vram=33.6 * GiB, runtime_version="0.9.6")
    assert abs(g["kv_total"] / GiB - 1.6) <= 0.05 and abs(g["ollama_weights_total"] / GiB - 15.4) <= 0.05
    assert g["fits_as_requested"] is True


def test_llamacpp_batch6_rows():
    # ollama/ollama#9091: qwen2.5:14b in Ollama 0.5.10's llama.cpp: n_ctx 8192 (4 x 2048): KV 1536.00 MiB; model
    # buffers CUDA0 8148.38 + CPU 417.66 MiB
    r = llm.plan(spec("qwen2.5:14b"), "llama.cpp", ctx=8192, parallel=4)
    assert r["kv_total"] == 1536 * MiB
    assert abs(r["weights"] / MiB / (8148.38 + 417.66) - 1) < 0.01
    # gpustack/gpustack#1231: R1-Distill-Qwen-32B, ctx_size 8192: KV self size 2048.00 MiB
    assert llm.plan(spec("Qwen2.5-32B"), "llama.cpp", ctx=8192, parallel=4)["kv_total"] == 2048 * MiB
    # ggml-org/llama.cpp#11861: the same model in Q4_K_M: CUDA0 18508.35 + CPU_Mapped 417.66 MiB
    w = llm.plan(spec("Qwen2.5-32B"), "llama.cpp", ctx=16384, weights_dtype="Q4_K_M")["weights"]
    assert abs(w / MiB / 18926.01 - 1) < 0.01
    assert math.isclose(18926.01, 18508.35 + 417.66)


# ---------------------------------------------------------------- batch 10: the V1 sampler's implementation

def test_v1_native_sampler_qwen3_8b_on_an_a100_40gb():
    # dariustanrd/tokenkaki (vLLM 0.9.2 V1, "FlashInfer is not available. Falling back to the PyTorch-native
    # implementation of top-p & top-k sampling"): Qwen3-8B, default 0.9 of an A100-SXM4-40GB (39.39 GiB), max model
    # len 40960: "Model loading took 15.2683 GiB", "Available KV cache memory: 18.69 GiB", "GPU KV cache size:
    # 136,080 tokens", "Maximum concurrency for 40,960 tokens per request: 3.32x". The sort-based sampler on 256 x
    # 151936 fp32 logits is the activation peak (~9.7 copies); 3 copies would leave ~1 GiB (+5 %) too much KV.
    kw = dict(ctx=40960, vram=39.39 * GiB, runtime_version="0.9.2", gpu_name="NVIDIA A100-SXM4-40GB")
    r = llm.plan(spec("Qwen/Qwen3-8B"), "vllm", **kw)
    assert abs(r["kv_capacity_tokens"] / 136080 - 1) < 0.015
    assert abs(r["kv_capacity_bytes"] / GiB / 18.69 - 1) < 0.015
    assert r["fits_as_requested"] and round(r["concurrency"], 1) == 3.3
    fi = llm.plan(spec("Qwen/Qwen3-8B"), "vllm", vllm_sampler="flashinfer", **kw)
    assert fi["kv_capacity_tokens"] / 136080 - 1 > 0.04      # FlashInfer's sampler keeps ~3 copies: more KV
    assert "VLLM_USE_FLASHINFER_SAMPLER=1" in fi["command"] and "VLLM_USE_FLASHINFER_SAMPLER" not in r["command"]


def test_v1_flashinfer_sampler_keeps_three_copies():
    # dennislee22/vLLM-benchmarking (0.10.1.1, "Using FlashInfer for top-p & top-k sampling"), Qwen2-7B on an A100
    # 80 GB at 0.5: "Available KV cache memory: 24.83 GiB", 464,848 tokens; the sampler is 256 x 152064 x 4 x 3
    s = spec("Qwen/Qwen2.5-7B-Instruct")
    assert V.activation(s, 16, 256, (0, 10, 1), v1=True, sampler="flashinfer") == int(256 * 152064 * 4 * 3)
    assert V.activation(s, 16, 256, (0, 10, 1), v1=True) == int(256 * 152064 * 4 * 9.7)
    r = llm.plan(s, "vllm", ctx=16384, vram=79.25 * GiB, gpu_memory_utilization=0.5, runtime_version="0.10.1.1",
                 gpu_name="NVIDIA A100-SXM4-80GB", vllm_sampler="flashinfer")
    assert abs(r["kv_capacity_tokens"] / 464848 - 1) < 0.01
    with pytest.raises(UserError, match="vllm-sampler"):
        llm.plan(s, "vllm", ctx=2048, vllm_sampler="sorted")


# ---------------------------------------------------------------- batch 9-10: the vision encoder's profile run

def test_vllm_profiles_the_vision_tower_on_one_largest_image():
    # johnson7788/RLDecisionAgent docs/VL/Qwen2_5_7B_VL_GRPO.ipynb: vLLM 0.9.2 on a T4 (V0 fall-back), Qwen2.5-VL-7B,
    # 1 sequence, 2048 batched tokens: "PyTorch activation peak memory takes 2.71GiB" - not the 2048-token forward
    # (~0.27 GiB) but the vision tower on one 12845056-pixel image (65536 patches of 14 px, hidden 1280)
    s = spec("Qwen/Qwen2.5-VL-7B-Instruct")
    r = llm.plan(s, "vllm", ctx=16384, vram=14.74 * GiB, gpu_memory_utilization=0.7693, max_num_seqs=1,
                 max_num_batched_tokens=2048, runtime_version="0.9.2", gpu_name="Tesla T4", weights_dtype="bnb-4bit")
    act = r["overhead"]["activation_profile"] / GiB
    assert abs(act / 2.71 - 1) < 0.10
    assert V.encoder_peak(s) == 65536 * 1280 * 32
    # docs/VL/Error.md: Qwen2.5-VL-3B (same tower), 0.9.2 V1, 16384 batched tokens, 0.7861 of 23.55 GiB: weights 2.5988,
    # KV 13.48 GiB, so 2.43 GiB of activation + non-torch memory: the tower (2.5 GiB) outweighs the 16384-token forward
    s3 = spec("Qwen/Qwen2.5-VL-3B-Instruct")
    assert V.encoder_peak(spec("Qwen/Qwen2.5-7B-Instruct")) == 0                      # a text model: no tower
    fwd = 16384 * (3 * 11008 + 2 * 2048) * 2 * 1.08                                     # the decoder's forward
    a3 = V.activation(s3, 16384, 1, (0, 9, 2), v1=True, sampler="flashinfer")
    assert a3 == V.encoder_peak(s3) > fwd
    assert abs((a3 + VO.NON_TORCH) / GiB / 2.43 - 1) < 0.10
    # SigLIP's fixed 896 px images (Gemma 3: 4096 patches) add little
    assert V.encoder_peak(spec("google/gemma-3-27b-it")) == 4096 * 1152 * 32


def test_vllm_08_runs_bitsandbytes_on_its_v0_engine():
    # vLLM 0.8: "--quantization bitsandbytes is not supported by the V1 Engine. Falling back to V0" (unslothai/unsloth
    # #2102); 0.9.2 runs it on V1 (johnson7788/RLDecisionAgent docs/VL/Error.md: "Initializing a V1 LLM engine (v0.9.2)")
    s = spec("unsloth/qwen2.5-0.5b-instruct-unsloth-bnb-4bit")
    old = llm.plan(s, "vllm", ctx=8192, vram=23.55 * GiB, runtime_version="0.8.5", gpu_name="NVIDIA GeForce RTX 4090 D")
    new = llm.plan(s, "vllm", ctx=8192, vram=23.55 * GiB, runtime_version="0.9.2", gpu_name="NVIDIA GeForce RTX 4090 D")
    assert any("bitsandbytes" in n and "V0" in n for n in old["notes"])
    assert not any("bitsandbytes" in n and "V0" in n for n in new["notes"])
    # for a 0.5 B model the sampler on 256 x 151936 fp32 logits is the peak: V0's ~9.9 copies, V1's native ~9.7
    assert old["overhead"]["activation_profile"] == int(256 * 151936 * 4 * 9.9)
    assert new["overhead"]["activation_profile"] == int(256 * 151936 * 4 * 9.7)


def test_offline_llm_class_takes_a_larger_prefill_chunk():
    # vLLM's LLM() class defaults to 8192 batched tokens on a card below 70 GiB (`vllm serve`: 2048) and 16384 on a
    # larger one (8192): a 0.9.2 LLM() log on a 24 GB card prints "max_num_batched_tokens=8192"
    s = spec("Qwen/Qwen2.5-32B-Instruct")
    per_token = (3 * 27648 + 2 * 5120) * 2 * 1.08
    serve = llm.plan(s, "vllm", ctx=4096, vram=44.42 * GiB, runtime_version="0.9.2", weights_dtype="awq")
    offline = llm.plan(s, "vllm", ctx=4096, vram=44.42 * GiB, runtime_version="0.9.2", weights_dtype="awq",
                       vllm_entrypoint="llm")
    assert offline["overhead"]["activation_profile"] == int(8192 * per_token)
    assert serve["overhead"]["activation_profile"] < offline["overhead"]["activation_profile"]
    big = llm.plan(s, "vllm", ctx=4096, vram=79.18 * GiB, runtime_version="0.9.2", vllm_entrypoint="llm",
                   max_num_seqs=16)                                     # 16 sequences: the sampler is no peak
    assert big["overhead"]["activation_profile"] == int(16384 * per_token)
    with pytest.raises(UserError, match="vllm-entrypoint"):
        llm.plan(s, "vllm", ctx=2048, vllm_entrypoint="python")
