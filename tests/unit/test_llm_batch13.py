"""Mechanisms tuned on batch 13 (benchmarks/data/llm_measured.json; those rows are regression rows now): Ollama's
estimate as its source computes it (0.6.0's weights total carries the KV; quantized caches priced without block
scales; gpt-oss's own KV and graph rule), MXFP4 checkpoints (experts alone quantized; llama.cpp's MXFP4 MoE GGUF;
vLLM's padded Marlin layout), vLLM tensor parallelism and the hybrid manager's concurrency, and fine-tune names.
Every expected value is a number the runtime printed in the thread named beside it; each test also shows the
figure the mechanism's absence gives, outside the tolerance."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import cache as C
from gpu_garden.memory.llm.runtimes import ollama as OL
from gpu_garden.memory.llm.runtimes import vllm as V
from gpu_garden.memory.llm.runtimes import vllm_loader as VL

GiB, MiB = 1 << 30, 1 << 20
H100, A100_80, A100_40 = 79.18, 79.25, 39.38


# --- Ollama's estimate -------------------------------------------------------------------------------------------

def test_ollama_060_weights_total_carries_the_kv_and_061_does_not():
    # ollama/ollama#9685 (0.6.0): gemma3:27b, memory.required.kv 248.0 MiB, memory.weights.total 14.6 GiB
    s = llm.describe(model="gemma3:27b")
    r = llm.plan(s, "ollama", ctx=512, runtime_version="0.6.0")
    assert r["kv_total"] / MiB == pytest.approx(248.0, abs=0.05)
    assert r["ollama_weights_total"] / GiB == pytest.approx(14.6, rel=0.01)
    later = llm.plan(s, "ollama", ctx=512, runtime_version="0.6.1")
    assert r["ollama_weights_total"] - later["ollama_weights_total"] == r["kv_total"]
    assert later["ollama_weights_total"] / GiB < 14.6 * 0.985      # blocks alone: 1.9 % light against 0.6.0's line


def test_ollama_prices_a_q8_0_cache_at_one_byte():
    # ollama/ollama#9678 (0.6.0, OLLAMA_KV_CACHE_TYPE=q8_0, flash attention): gemma3:27b at num_ctx 20000,
    # memory.required.kv 4.7 GiB, memory.weights.total 19.1 GiB (the KV inside, as 0.6.0 prints it)
    s = llm.describe(model="gemma3:27b")
    r = llm.plan(s, "ollama", ctx=20000, kv_dtype="q8_0", flash_attn=True, runtime_version="0.6.0")
    assert r["kv_total"] / GiB == pytest.approx(4.7, abs=0.05)     # 34/32 bytes would give 5.03
    assert r["ollama_weights_total"] / GiB == pytest.approx(19.1, rel=0.01)
    q4 = llm.plan(s, "ollama", ctx=20000, kv_dtype="q4_0", flash_attn=True, runtime_version="0.6.0")
    assert q4["kv_total"] * 2 == pytest.approx(r["kv_total"], rel=1e-6)
    # llama.cpp itself allocates the block scales
    lc = llm.plan(s, "llama.cpp", ctx=20000, kv_dtype="q8_0", flash_attn="on", swa_full=True)
    assert lc["kv_per_token"] / r["kv_per_token"] == pytest.approx(34 / 32, rel=1e-3)


def test_ollama_gpt_oss_tags_and_estimate_on_0_11_2():
    # ollama/ollama#11711 (0.11.2, RTX 4060 Ti, 15.6 GiB available): gpt-oss:20b at num_ctx 8192:
    # memory.required.kv 300.0 MiB, weights.total 11.7 GiB, nonrepeating 1.1 GiB, graph.full 2.0 GiB,
    # graph.partial 4.0 GiB, 23 of 25 layers offloaded
    s = llm.describe(model="gpt-oss:20b")
    assert s.name == "gpt-oss-20b" and s.quant == "mxfp4"
    r = llm.plan(s, "ollama", ctx=8192, vram=15.6 * GiB, runtime_version="0.11.2")
    assert r["kv_total"] / MiB == pytest.approx(300.0, abs=0.05)   # the 128-token window would give 198 MiB
    assert r["ollama_weights_total"] / GiB == pytest.approx(11.7, rel=0.01)
    assert r["overhead"]["compute_buffer"] / GiB == pytest.approx(2.0, abs=0.05)
    assert not r["fits_as_requested"]
    full, partial = OL.gptoss_graph(s, 8192, "f16", (0, 11, 2), False)
    assert partial == 2 * full
    # no flash attention for gpt-oss before 0.11.5, so a q8_0 cache stays f16: no cache flag gains context, and the
    # plan keeps 8192 tokens with 23 layers on the GPU, as Ollama placed them (layers.offload=23)
    assert r["max_ctx_by_kv_dtype"]["q8_0"] == r["max_ctx_by_kv_dtype"]["f16"]
    assert r["chosen"]["kv_dtype"] == "f16" and r["gpu_layers_used"] == 23
    later = llm.plan(s, "ollama", ctx=8192, vram=15.6 * GiB, runtime_version="0.11.5", kv_dtype="q8_0", flash_attn=True)
    assert later["kv_total"] * 2 == pytest.approx(r["kv_total"], rel=1e-6)


def test_ollama_gpt_oss_graph_from_0_11_5():
    # ollama/ollama#11982 (0.11.5): gpt-oss:120b at KvSize 75000: required.kv 2.7 GiB, graph.full and
    # graph.partial 13.7 GiB, weights.total 59.7 GiB
    s = llm.describe(model="gpt-oss:120b")
    r = llm.plan(s, "ollama", ctx=75000, flash_attn=True, runtime_version="0.11.5")
    assert r["kv_total"] / GiB == pytest.approx(2.7, abs=0.05)
    assert r["overhead"]["compute_buffer"] / GiB == pytest.approx(13.7, abs=0.05)   # 0.11.2's rule: 27.5
    assert r["ollama_weights_total"] / GiB == pytest.approx(59.7, rel=0.01)


# --- MXFP4 -------------------------------------------------------------------------------------------------------

def test_mxfp4_checkpoint_quantizes_the_experts_alone():
    # ollama/ollama#16416: Ollama's gpt-oss-120b blob (experts MXFP4, the rest bf16 as in OpenAI's checkpoint)
    # loads 61223 MiB on the GPU + 1104 MiB on the host
    s = llm.describe(model="gpt-oss-120b")
    w = llm.weights_by_role(s)["total"]
    assert w / MiB == pytest.approx(61223 + 1104, rel=0.01)
    every_matmul = s.linear_params * 4.25 / 8 + (s.params - s.linear_params) * 2     # attention at 4.25 bits too
    assert every_matmul / MiB < (61223 + 1104) * 0.985


def test_llama_cpp_sizes_a_named_mxfp4_model_as_the_mxfp4_moe_gguf():
    # ggml-org/llama.cpp#15253: "file type = MXFP4 MoE, file size = 59.02 GiB" (gpt-oss-120b);
    # lmstudio-ai/lmstudio-bug-tracker#900: gpt-oss-20b, CPU_Mapped model buffer 11536.18 MiB
    for name, printed in (("gpt-oss-120b", 59.02 * GiB), ("gpt-oss-20b", 11536.18 * MiB)):
        r = llm.plan(llm.describe(model=name), "llama.cpp", ctx=4096)
        assert r["weights"] == pytest.approx(printed, rel=0.01)
    # an Ollama tag's blob keeps its bf16 tensors under llama-server (ollama/ollama#16480)
    tag = llm.plan(llm.describe(model="gpt-oss:120b"), "llama.cpp", ctx=4096)
    assert tag["weights"] / MiB == pytest.approx(61223 + 1104, rel=0.01)


def test_vllm_pads_mxfp4_experts_for_marlin():
    # vllm-project/vllm#23278 (0.10.1, H100, Marlin weight-only FP4): "Model loading took 65.9651 GiB",
    # "Available KV cache memory: -2.14 GiB", the engine failed to start
    s = llm.describe(model="openai/gpt-oss-120b")
    r = llm.plan(s, "vllm", ctx=131072, vram=H100 * GiB, runtime_version="0.10.1", gpu_name="NVIDIA H100 80GB")
    assert r["weights"] / GiB == pytest.approx(65.9651, rel=0.005)  # unpadded: 60.69
    assert r["kv_capacity_bytes"] / GiB == pytest.approx(-2.14, abs=0.15)
    assert not r["fits_as_requested"]
    extra, kernel = VL.mxfp4_expert_padding(s, 1, "NVIDIA H100 80GB", (0, 10, 1))
    assert kernel == "marlin" and extra / GiB == pytest.approx(5.1, abs=0.1)
    assert VL.mxfp4_expert_padding(s, 1, "NVIDIA B200")[1] == "trtllm"


# --- vLLM tensor parallelism -------------------------------------------------------------------------------------

def _tp2(vram, **kw):
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    return s, llm.plan(s, "vllm", ctx=16384, vram=vram * GiB, runtime_version="0.10.1.1", gpu_memory_utilization=0.5,
                       max_num_batched_tokens=2048, tensor_parallel_size=2, **kw)


def test_tensor_parallel_splits_weights_and_kv_heads():
    # dennislee22/vLLM-benchmarking, Qwen2-7B at TP 2 on A100 80 GB (0.10.1.1, FlashInfer sampler): per GPU
    # "Model loading took 7.1217 GiB", "Available KV cache memory: 31.83 GiB", "GPU KV cache size: 1,192,160 tokens"
    s, r = _tp2(A100_80, gpu_name="NVIDIA A100 80GB", vllm_sampler="flashinfer")
    assert r["weights"] / GiB == pytest.approx(7.1217, rel=0.01)
    assert r["kv_capacity_bytes"] / GiB == pytest.approx(31.83, abs=0.3)
    rank = llm.vllm_per_rank(s, 2)
    assert rank.n_kv_heads == 2
    assert llm.vllm_kv_tokens(rank, 31.83 * GiB) == pytest.approx(1192160, abs=1000)   # all heads: half of it
    assert r["kv_capacity_tokens"] == pytest.approx(1192160, rel=0.02)
    assert any(f["name"] == "--tensor-parallel-size" for f in r["flags"])


def test_tensor_parallel_keeps_the_whole_vocabulary_in_the_sampler():
    # the same write-up on 2x A100 40 GB with the PyTorch-native sampler: 11.03 GiB available, 412,944 tokens
    s, r = _tp2(A100_40, gpu_name="NVIDIA A100-SXM4-40GB")
    assert r["kv_capacity_bytes"] / GiB == pytest.approx(11.03, abs=0.2)   # a vocabulary split in two: 11.7
    assert r["kv_capacity_tokens"] == pytest.approx(412944, rel=0.02)


def test_tensor_parallel_mxfp4_and_hybrid_concurrency():
    # dennislee22/vLLM-benchmarking, gpt-oss-120b at TP 4 on A100 80 GB (0.10.1.1): per GPU "Model loading took
    # 17.2217 GiB", 45.32 GiB available, "GPU KV cache size: 2,640,144 tokens", "Maximum concurrency for 16,384
    # tokens per request: 284.25x"
    s = llm.describe(model="openai/gpt-oss-120b")
    r = llm.plan(s, "vllm", ctx=16384, vram=A100_80 * GiB, runtime_version="0.10.1.1", gpu_memory_utilization=0.8,
                 gpu_name="NVIDIA A100 80GB", vllm_sampler="flashinfer", tensor_parallel_size=4)
    assert r["weights"] / GiB == pytest.approx(17.2217, rel=0.01)
    assert r["kv_capacity_bytes"] / GiB == pytest.approx(45.32, abs=0.4)
    assert r["concurrency"] == pytest.approx(284.25, rel=0.02)           # every layer in full: 162x
    assert llm.vllm_kv_tokens(llm.vllm_per_rank(s, 4), 45.32 * GiB) == pytest.approx(2640144, abs=200)


def test_tensor_parallel_is_vllms_and_bounded():
    s = llm.describe(model="Qwen2.5-7B")
    with pytest.raises(llm.UserError):
        llm.plan(s, "llama.cpp", ctx=4096, tensor_parallel_size=2)
    with pytest.raises(llm.UserError):
        llm.plan(s, "vllm", ctx=4096, tensor_parallel_size=0)


# --- names -------------------------------------------------------------------------------------------------------

def test_coder_and_math_fine_tunes_read_as_their_base_architecture():
    # vllm-project/vllm#34076 (0.15.2, pipeline parallel 2): Qwen3-Coder-30B-A3B-Instruct-FP8 refused at 262144:
    # "24.0 GiB KV cache is needed ... available KV cache memory (3.18 GiB) ... estimated maximum model length is 34736"
    s = llm.describe(model="Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8")
    assert s.name == "Qwen3-30B-A3B" and s.quant == "fp8"
    assert C.kv_cache(s, 262144, 1, "f16", "vllm")["total"] / GiB == pytest.approx(24.0, abs=0.005)
    lo, hi = (llm.vllm_kv_tokens(s, (3.18 + d) * GiB) for d in (-0.005, 0.005))
    assert lo <= 34736 <= hi
    assert llm.describe(model="Qwen/Qwen2.5-Coder-7B-Instruct").name == "Qwen2.5-7B"
    # Qwen3-Coder-480B-A35B has no base model of its size: its own built-in (ellm5), not a guess from the family
    assert llm.describe(model="Qwen/Qwen3-Coder-480B-A35B-Instruct").name == "Qwen3-Coder-480B-A35B"


def test_ollama_gptoss_flash_graph_counts_the_parallel_slots():
    """Ollama's fs/ggml gpt-oss graph with flash attention: (4 x numParallel + context>>10 + 110) MiB."""
    s = llm.describe(model="gpt-oss-20b")
    one, _ = OL.gptoss_graph(s, 8192, "f16", (0, 11, 11), True, parallel=1)
    four, _ = OL.gptoss_graph(s, 4 * 8192, "f16", (0, 11, 11), True, parallel=4)
    assert one == (4 + 8 + 110) * MiB
    assert four == (16 + 32 + 110) * MiB
