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
    assert llm.describe(model="deepseek-r1:1.5b").name == "Qwen2.5-1.5B"   # built in since batch 17
    with pytest.raises(UserError, match="deepseek-r1"):
        llm.describe(model="deepseek-r1:3b")                          # no such tag: a clear error


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


# --- llama.cpp over several GPUs: load_tensors' placement of the layers --------------------------------------------

def test_llamacpp_places_layers_over_gpus_counting_the_output_layer():
    # ggml-org/llama.cpp#13545 (b5384, two gfx906 cards, -sm row, -fa): ROCm0 KV buffer 1600.00 MiB (25 layers),
    # ROCm1 1472.00 MiB (23) -- an even split of 49 (48 + output), not of 48 (24 + 24)
    s = llm.describe(model="Qwen3-30B-A3B")
    r = llm.plan(s, "llama.cpp", ctx=32768, flash_attn=True, tensor_split=[1, 1])
    assert [d["layers"] for d in r["devices"]] == [25, 23]
    assert [d["kv"] / MiB for d in r["devices"]] == pytest.approx([1600.0, 1472.0], abs=0.005)
    assert [d["output_layer"] for d in r["devices"]] == [False, True]
    # ggml-org/llama.cpp#13661 (b5261, four K80 dies, no -fa): CUDA2 703.50 MiB (12 layers), CUDA3 644.88 MiB (11)
    k80 = llm.plan(s, "llama.cpp", ctx=30016, flash_attn=False, tensor_split=[1, 1, 1, 1])
    assert [d["layers"] for d in k80["devices"]] == [13, 12, 12, 11]
    assert [d["kv"] / MiB for d in k80["devices"]][2:] == pytest.approx([703.5, 644.875], abs=0.005)


def test_llamacpp_four_gpu_split_and_the_weights_follow_the_layers():
    # AMD HPC Fund docs (llama-cpp-python, April 2024): Mistral-7B-Instruct-v0.2 on four ROCm GPUs, n_ctx 4096:
    # KV buffers 144 / 128 / 128 / 112 MiB (9 / 8 / 8 / 7 layers of 33 with the output)
    s = llm.describe(model="mistralai/Mistral-7B-Instruct-v0.2")
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q5_K_M", tensor_split=[1, 1, 1, 1])
    assert [d["kv"] / MiB for d in r["devices"]] == pytest.approx([144.0, 128.0, 128.0, 112.0], abs=0.005)
    assert sum(d["kv"] for d in r["devices"]) == r["kv_total"]
    w = [d["weights"] for d in r["devices"]]
    assert w[1] == w[2] and w[3] > w[1] * 7 / 8                        # the last GPU also holds the output tensor
    uneven = llm.plan(s, "llama.cpp", ctx=4096, tensor_split=[3, 1])
    assert [d["layers"] for d in uneven["devices"]] == [25, 7]


def test_tensor_split_is_llamacpp_only_and_checked():
    s = llm.describe(model="Qwen3-30B-A3B")
    for bad in ([0, 0], [-1, 2], []):
        with pytest.raises(UserError, match="tensor-split"):
            llm.plan(s, "llama.cpp", ctx=4096, tensor_split=bad)
    with pytest.raises(UserError, match="tensor-split"):
        llm.plan(s, "vllm", ctx=4096, tensor_split=[1, 1])


# --- vLLM's MXFP4 experts on a Hopper card from 0.14: the Triton backend's layout --------------------------------

def test_vllm_mxfp4_triton_backend_on_hopper():
    # vllm-project/vllm#33155 (0.14.1, H100, 'Using Triton backend'): gpt-oss-120b 'Model loading took 64.38 GiB'
    s = llm.describe(model="openai/gpt-oss-120b")
    r = llm.plan(s, "vllm", ctx=131072, gpu_name="NVIDIA H100 80GB", runtime_version="0.14.1")
    assert r["weights"] / GiB == pytest.approx(64.38, rel=0.005)      # Marlin's layout: 65.82 (+2.2 %)
    # vllm-project/vllm#23278 (0.10.1, H100, Marlin's layout): 'Model loading took 65.9651 GiB'
    old = llm.plan(s, "vllm", ctx=131072, gpu_name="NVIDIA H100 80GB", runtime_version="0.10.1")
    assert old["weights"] / GiB == pytest.approx(65.9651, rel=0.005)
    a100 = llm.plan(s, "vllm", ctx=131072, gpu_name="NVIDIA A100 80GB", runtime_version="0.14.1")
    assert a100["weights"] == old["weights"]                          # no Triton MXFP4 below SM90: Marlin


# --- Ollama's memory.required.full: the GPU's allocation plus what overflows it --------------------------------------

@pytest.mark.parametrize("model, ctx, vram, version, kw, printed", [
    # ollama/ollama#5913 (0.2.8, ROCm 24 GiB): dolphin-qwen2:72b Q4_K_S, 43 of 81 layers placed, required.full 43.1
    ("Qwen2.5-72B", 2048, 24.0, "0.2.8", {"weights_dtype": "Q4_K_S"}, 43.1),
    # ollama/ollama#9818 (0.6.2, RTX 3060): gemma3:27b at 1024 tokens, 28 of 63 layers, required.full 20.5 GiB
    ("gemma3:27b", 1024, 11.0, "0.6.2", {}, 20.5),
    # ollama/ollama#12000 (0.11.6, 11.1 GiB): gemma3:12b at 8192, 48 of 49 layers, required.full 11.4 GiB
    ("gemma3:12b", 8192, 11.1, "0.11.6", {}, 11.4),
    # ollama/ollama#10765 (0.7.0, 3.2 GiB): gemma3:4b, no layer placed: the weights and the cache, 2.6 GiB
    ("gemma3:4b", 4096, 3.2, "0.7.0", {}, 2.6),
])
def test_ollama_required_full_adds_what_overflows_the_gpu(model, ctx, vram, version, kw, printed):
    s = llm.describe(model=model)
    r = llm.plan(s, "ollama", ctx=ctx, vram=vram * GiB, runtime_version=version, **kw)
    assert r["ollama_required_full"] / GiB == pytest.approx(printed, rel=0.03)
    if printed > vram:                                                  # the on-GPU total is not that figure
        assert abs(r["total"] / GiB - printed) > 0.05 * printed


def test_llamacpp_split_with_exactly_n_layer_offloaded_keeps_the_output_on_the_cpu():
    """-ngl equal to the block count offloads every repeating layer and leaves the output layer on the CPU
    (llama.cpp's i_gpu_start = n_layer - ngl; "offloaded 32/33 layers"): the devices hold all 32 blocks, no output."""
    from gpu_garden.memory.llm.runtimes.llamacpp import layer_devices
    assert layer_devices(32, 32, [1, 1]) == ([16, 16], None, 0)
    assert layer_devices(32, 33, [1, 1]) == ([17, 15], 1, 0)
    assert layer_devices(32, 20, [1, 1]) == ([10, 10], None, 12)


def test_tensor_split_takes_llamacpps_comma_string():
    # llama.cpp#7366 (batch 19): a row written the way users type -ts ("10,10,10,10,10") was refused by the Python
    # API although the CLI parses that very form; the string and the list must give the same placement
    s = llm.describe(model="Qwen3-30B-A3B")
    a = llm.plan(s, "llama.cpp", ctx=4096, tensor_split="3,1")
    b = llm.plan(s, "llama.cpp", ctx=4096, tensor_split=[3, 1])
    la, lb = [d["layers"] for d in a["devices"]], [d["layers"] for d in b["devices"]]
    assert la == lb and len(la) == 2 and la[0] > 2 * la[1] > 0      # three quarters of the layers on the first GPU
    for bad in ("3,x", "", "0,0"):
        with pytest.raises(UserError, match="tensor-split"):
            llm.plan(s, "llama.cpp", ctx=4096, tensor_split=bad)
