"""Mechanisms tuned on batch 15 (benchmarks/data/llm_measured.json; those rows are regression rows now): llama.cpp's
cache padding by flash attention, and Ollama library tags that name a mixture-of-experts model by its total size or
a distilled model by the library of its teacher. Every expected value is a number the runtime printed in the thread
named beside it; each test also shows the figure the mechanism's absence gives, outside the tolerance."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


# --- llama.cpp pads its cache to 256 cells with flash attention, to 32 without -------------------------------

def test_llamacpp_pads_to_32_cells_without_flash_attention():
    # ggml-org/llama.cpp#13661 (b5261, no -fa): Qwen3-30B-A3B at n_ctx 30016, KV self size 2814.00 MiB,
    # CUDA2 KV buffer 703.50 MiB for 12 layers
    s = llm.describe(model="Qwen3-30B-A3B")
    r = llm.plan(s, "llama.cpp", ctx=30016, flash_attn=False, runtime_version="b5261")
    assert r["kv_detail"]["cells"] == 30016
    assert r["kv_total"] / MiB == pytest.approx(2814.0, abs=0.005)
    assert r["kv_total"] / s.n_layers * 12 / MiB == pytest.approx(703.5, abs=0.005)
    fa = llm.plan(s, "llama.cpp", ctx=30016, flash_attn=True, runtime_version="b5261")
    assert fa["kv_detail"]["cells"] == 30208                         # 256-cell padding: 2832 MiB, 18 MiB too many
    assert fa["kv_total"] / MiB - 2814.0 > 17


def test_llamacpp_keeps_the_256_cell_padding_with_flash_attention():
    # ggml-org/llama.cpp#13545 (b5384, -fa, 'padding = 256'): Qwen3-30B-A3B at 32768 cells, 3072.00 MiB
    s = llm.describe(model="Qwen3-30B-A3B")
    r = llm.plan(s, "llama.cpp", ctx=32768, flash_attn=True, runtime_version="b5384")
    assert r["kv_total"] / MiB == pytest.approx(3072.0, abs=0.005)
    assert llm.plan(s, "llama.cpp", ctx=32700, flash_attn=True)["kv_detail"]["cells"] == 32768
    assert llm.plan(s, "llama.cpp", ctx=32700, flash_attn=False)["kv_detail"]["cells"] == 32704


# --- Ollama library tags ------------------------------------------------------------------------------------------

def test_ollama_moe_tag_names_the_total_size():
    # ollama/ollama#10810 (0.7.0): qwen3:235b, memory.weights.total 132.3 GiB, nonrepeating 486.9 MiB,
    # memory.required.kv 752.0 MiB (94 layers at num_ctx 4096)
    s = llm.describe(model="qwen3:235b")
    assert s.name == "Qwen3-235B-A22B"
    r = llm.plan(s, "ollama", ctx=4096, runtime_version="0.7.0")
    assert r["kv_total"] / MiB == pytest.approx(752.0, abs=0.05)
    assert r["ollama_weights_total"] / GiB == pytest.approx(132.3, rel=0.015)
    assert r["weights_by_role"]["output"] / MiB == pytest.approx(486.9, abs=0.05)
    assert llm.describe(model="qwen3:30b").name == "Qwen3-30B-A3B"
    assert llm.describe(model="qwen3:32b").name == "Qwen3-32B"      # a dense size stays itself


def test_ollama_deepseek_r1_tags_are_r1_or_its_distills():
    # uv-genai/llm-setonix (Ollama's runner, April 2025): `ollama run deepseek-r1:671b`, the full MLA cache of
    # 61 layers at 8192 cells = 39040.00 MiB, model buffers 385689.61 MiB (376.65 GiB) in all
    s = llm.describe(model="deepseek-r1:671b")
    assert s.name == "DeepSeek-R1" and s.quant == "Q4_K_M"
    r = llm.plan(s, "llama.cpp", ctx=8192, parallel=4, mla_cache="full", runtime_version="b4800")
    assert r["kv_total"] / MiB == pytest.approx(39040.0, abs=0.005)
    assert r["weights"] / GiB == pytest.approx(376.65, rel=0.01)
    assert llm.describe(model="deepseek-r1:32b").name == "Qwen2.5-32B"
    assert llm.describe(model="deepseek-r1:70b").name == "Llama-3.3-70B"
    with pytest.raises(UserError, match="deepseek-r1"):
        llm.describe(model="deepseek-r1:1.5b")                        # no built-in Qwen2.5-1.5B: a clear error


# --- vLLM: a tensor-parallel worker's non-torch memory holds its NCCL buffers ------------------------------------

def _pool(res):
    return res["kv_capacity_bytes"]


def test_vllm_tensor_parallel_worker_has_nccl_non_torch_memory():
    # dennislee22/vLLM-benchmarking (0.10.1.1, TP 2 on A100 80 GB, --gpu-memory-utilization 0.5, FlashInfer
    # sampler): 'Available KV cache memory: 31.83 GiB' per rank
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(s, "vllm", ctx=16384, vram=79.25 * GiB, gpu_memory_utilization=0.5, max_num_batched_tokens=2048,
                 gpu_name="NVIDIA A100 80GB", vllm_sampler="flashinfer", tensor_parallel_size=2,
                 runtime_version="0.10.1.1")
    assert r["overhead"]["non_torch"] / GiB == pytest.approx(0.25, abs=0.005)
    assert _pool(r) / GiB == pytest.approx(31.83, abs=0.1)           # 0.06 GiB of non-torch memory: 32.04
    one = llm.plan(s, "vllm", ctx=16384, vram=79.25 * GiB, gpu_memory_utilization=0.5, runtime_version="0.10.1.1")
    assert one["overhead"]["non_torch"] / GiB == pytest.approx(0.06, abs=0.005)


def test_vllm_v0_tensor_parallel_refusal_counts_the_driver_rank():
    # vllm-project/vllm#13061 (0.7.2 V0, TP 2 on two 4090s, 0.98): a worker prints non_torch 0.25GiB; the engine
    # refuses 131072 tokens with room for 81536 -- the driver rank's pool, which also profiles the sampler
    s = llm.describe(model="deepseek-ai/DeepSeek-R1-Distill-Qwen-14B")
    r = llm.plan(s, "vllm", ctx=131072, vram=23.55 * GiB, gpu_memory_utilization=0.98, tensor_parallel_size=2,
                 gpu_name="NVIDIA GeForce RTX 4090", runtime_version="0.7.2")
    assert not r["fits_as_requested"]
    tokens = r["kv_capacity_tokens"]
    assert tokens == pytest.approx(81536, rel=0.035)                 # 0.06 GiB of non-torch memory: +4.8 %
