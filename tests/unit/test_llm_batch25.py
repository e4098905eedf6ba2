"""Batch 25 (read by ellm5). Expected values are what the runtimes printed: llama.cpp's model buffers under
partial offload (LM Studio's engine, lmstudio-ai/lmstudio-bug-tracker#1360; Ollama 0.5.7's bundled llama.cpp,
ollama/ollama#8964); AutoRound's sizes are hand-derived from its GPTQ packing (no printed figure in the batch)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import names
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.llm.runtimes.llamacpp import layer_devices

MiB, GiB = 1 << 20, 1 << 30


def _gpu_weights_mib(model, ngl, version=None, dtype="Q4_K_M"):
    r = llm.plan(llm.describe(model=model), "llama.cpp", ctx=2048, ngl=ngl, weights_dtype=dtype,
                 runtime_version=version)
    return (r["weights"] - r["host_weights"]) / MiB


def test_ngl_counts_the_output_layer_first():
    # 'offloading output layer and 19 repeating layers to GPU, offloaded 20/49' (-ngl 20, 48 repeating layers):
    # i_gpu_start = 49 - 20 = 29, the output on the GPU; before ggml-org/llama.cpp#18148 the last 20 and no output
    assert layer_devices(48, 20, [1], output_first=True) == ([19], 0, 29)
    assert layer_devices(48, 20, [1]) == ([20], None, 28)


def test_partial_offload_output_first_r1_distill_qwen14b():
    # LM Studio, January 2026: 'CUDA0 model buffer size = 3621.44 MiB' with 20 of 49 (Q4_K_M); the last 20 repeating
    # layers without the output would be 3153 MiB (-12.9 %)
    assert abs(_gpu_weights_mib("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", 20) / 3621.44 - 1) <= 0.01


def test_partial_offload_moe_layers_are_larger_than_dense_ones():
    # Ollama 0.5.7's llama.cpp: 'offloading 5 repeating layers to GPU', 'CUDA0 model buffer size = 35533.34 MiB':
    # deepseek-r1:671b's last five layers are expert layers (its first three are dense) and use_more_bits puts their
    # ffn_down in Q6_K; an average layer would be 31418 MiB (-11.6 %)
    assert abs(_gpu_weights_mib("deepseek-r1:671b", 5, "b4400") / 35533.34 - 1) <= 0.01


# ------------------------------------------------------------------ AutoRound (vllm-club3090-295: quantization auto_round)

_QWEN2_7B = {"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
             "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
             "max_position_embeddings": 32768}


@pytest.mark.parametrize("q,fmt,group", [
    # Intel's AutoRound exports: quant_method "auto-round" (older "intel/auto-round"), GPTQ packing, group_size
    ({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True, "data_type": "int",
      "packing_format": "auto_round:auto_gptq"}, "auto_round", 128),
    ({"quant_method": "intel/auto-round", "bits": 4, "group_size": 32, "sym": True}, "auto_round", 32),
    ({"quant_method": "auto-round", "bits": 8, "group_size": 128}, "int8", 128),
])
def test_auto_round_config_is_read(q, fmt, group):
    s = llm_spec.from_config(dict(_QWEN2_7B, quantization_config=q), name="cfg")
    assert s.quant == fmt and s.quant_group == group


def test_auto_round_is_sized_as_gptq_packing():
    # GPTQ packing: 4 bits a weight + an fp16 scale and a packed 4-bit zero per group of 128 = 4.15625 bits.
    # Llama-3.1-8B by hand: 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6,979,321,856 matmul weights;
    # the other 1,050,939,392 (embedding, head, norms) in 16 bits: 3,625,975,808 + 2,101,878,784 bytes
    s = llm.describe(model="Llama-3.1-8B")
    for name in ("auto_round", "auto-round", "autoround"):
        assert llm.weights(s, name)[0] == 5_727_854_592
    # with 32-value groups (4.625 bits)
    s.quant_group = 32
    assert llm.weights(s, "auto_round")[0] == 6979321856 * 4.625 / 8 + 2_101_878_784


def test_auto_round_repo_names():
    s = llm.describe(model="Intel/Qwen3-8B-int4-AutoRound")
    assert s.name == "Qwen3-8B" and s.quant == "auto_round"
    assert names.repo_quant("someone/Qwen3.6-27B-autoround-int4") == "auto_round"


def test_auto_round_int2_is_refused():
    s = llm_spec.from_config(dict(_QWEN2_7B, quantization_config={"quant_method": "auto-round", "bits": 2}), name="c")
    with pytest.raises(UserError, match="unknown weights dtype"):
        llm.weights(s)


# ------------------------------------------------------------------ Ollama's mllama estimate by version

def test_ollama_040_rc6_prices_mllama_layers_as_self_attention():
    # ollama/ollama#7440 (0.4.0-rc6): llama3.2-vision:11b at num_ctx 2048 prints required.kv 320.0 MiB and
    # weights.total 5.2 GiB (its blocks + that KV); the cross-attention estimate (656.2 MiB on 0.5.12,
    # ollama/ollama#9311) came with ollama 8c238e70a, first tagged v0.4.0-rc7
    s = llm.describe(model="llama3.2-vision:11b")
    old = llm.plan(s, "ollama", ctx=2048, runtime_version="0.4.0-rc6", vram=9.5 * GiB)
    assert abs(old["kv_total"] / MiB - 320.0) <= 0.05
    assert abs(old["ollama_weights_total"] / GiB - 5.2) <= 0.05
    new = llm.plan(s, "ollama", ctx=2048, runtime_version="0.5.12")
    assert abs(new["kv_total"] / MiB - 656.2) <= 0.05


# ------------------------------------------------------------------ batch 25's families (unknown models at first sight)

def test_qwen3_coder_480b_kv_for_one_request():
    # vllm-project/recipes#12 (vLLM 0.10.1): one request of 262144 tokens needs 62.00 GiB of KV cache (bf16)
    s = llm.describe(model="Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8")
    assert s.name == "Qwen3-Coder-480B-A35B" and s.quant == "fp8"
    r = llm.plan(s, "vllm", ctx=262144, runtime_version="0.10.1")
    assert abs(r["kv_total"] / GiB - 62.00) <= 0.005


def test_minimax_m27_kv_at_tensor_parallel_2():
    # eugr/spark-vllm-docker#396 (vLLM 0.29): 23.25 GiB of KV for one 196608-token request at tensor parallel 2
    s = llm.describe(model="MiniMaxAI/MiniMax-M2.7")
    r = llm.plan(s, "vllm", ctx=196608, weights_dtype="awq", tensor_parallel_size=2, runtime_version="0.29.1")
    assert abs(r["kv_total"] / GiB - 23.25) <= 0.005
    assert s.max_ctx == 196608   # the max seq len the refusal names


def test_qwen3_vl_30b_a3b_kv_buffer():
    # ggml-org/llama.cpp#16895: -c 32768 -np 2, kv_unified false: 'size = 3072.00 MiB (16384 cells, 48 layers,
    # 2/2 seqs)'; n_ctx_train 262144
    s = llm.describe(model="Qwen/Qwen3-VL-30B-A3B-Instruct")
    r = llm.plan(s, "llama.cpp", ctx=32768, parallel=2, kv_unified=False, flash_attn="on", kv_dtype="f16")
    assert abs(r["kv_total"] / MiB - 3072.00) <= 0.005
    assert s.max_ctx == 262144


def test_phi4_mini_bf16_file_size():
    # ggml-org/llama.cpp#14740: 'file type = BF16', 'file size = 7.15 GiB (16.00 BPW)': 3.84 B parameters with the
    # output tied to the token embedding
    s = llm.describe(model="microsoft/Phi-4-mini-instruct")
    assert s.name == "Phi-4-mini" and s.tied
    w = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="BF16")["weights"] / GiB
    assert abs(w - 7.15) <= 0.005


def test_ollama_0113_gptoss_partial_graph_equals_the_full_one():
    # ollama/ollama#11769 (0.11.3, 3.6 GiB free): gpt-oss:20b at 8192: layers.offload=1 of 25, required.full 14.9 GiB.
    # 0.11.3 took ollama fcec04bf4 (partial graph = full graph, 2.0 GiB); 0.11.2's 4.0 GiB partial graph would leave
    # no room for a layer (ollama#11711 prints the two graphs)
    r = llm.plan(llm.describe(model="gpt-oss:20b"), "ollama", ctx=8192, vram=3.6 * GiB, runtime_version="0.11.3")
    assert abs(r["ollama_required_full"] / GiB - 14.9) <= 0.05
    assert r["gpu_layers_used"] == 1
