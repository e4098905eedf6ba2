"""Weights of group-quantized and QAT checkpoints (tuned on benchmark rows vllm-16199-gemma3-27b-awq-24g and
ollama-8430-gemma3-12b-qat-2gpu, benchmarks/data/llm_measured.json). Every expected value is a number the runtime
printed in the thread named in the comment; each test breaks when its mechanism is removed (a 128-value group for
the QAT conversion, a Q6_K table for the QAT GGUF)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.llm import weights as W

GiB, MiB = 1 << 30, 1 << 20


def test_gemma3_qat_int4_awq_is_sized_with_32_value_groups():
    # vllm-project/vllm#16199 (0.8.3, V0): "Model loading took 17.6110 GiB" for gaunernst/gemma-3-27b-it-int4-awq,
    # a conversion of Gemma 3's QAT int4 weights (symmetric int4, groups of 32: gau-nernst/gemma3-int4)
    s = llm.describe(model="gaunernst/gemma-3-27b-it-int4-awq")
    assert s.quant == "awq" and s.quant_group == 32
    r = llm.plan(s, "vllm", ctx=4096, vram=21.99 * GiB, gpu_memory_utilization=0.98, vllm_engine="v0",
                 runtime_version="0.8.3")
    assert r["weights"] / GiB == pytest.approx(17.611, rel=0.03)
    # the same checkpoint read with AWQ's usual 128-value groups is 10 % light: the mechanism matters
    s.quant_group = 128
    light = llm.plan(s, "vllm", ctx=4096, vram=21.99 * GiB, gpu_memory_utilization=0.98, vllm_engine="v0",
                     runtime_version="0.8.3")
    assert light["weights"] / GiB < 17.611 * 0.92


def test_gemma3_qat_refusal_token_count_follows_the_weights():
    # vllm#16199: refused, "maximum number of tokens that can be stored in KV cache (3584)" at --max-model-len 4096
    s = llm.describe(model="gaunernst/gemma-3-27b-it-int4-awq")
    r = llm.plan(s, "vllm", ctx=4096, vram=21.99 * GiB, gpu_memory_utilization=0.98, vllm_engine="v0",
                 runtime_version="0.8.3")
    assert not r["fits_as_requested"]
    assert r["weights"] / GiB == pytest.approx(17.611, rel=0.01)     # 'Model loading took 17.6110 GiB'
    # 128-value groups gave 6784 (+89 %). The pool is small (1.7 GiB of a 21.55 GiB budget), so a token error is ten
    # times the memory error: -9.8 % is 352 tokens, 0.17 GiB the pool is short; with the weights 0.13 GiB short as
    # well, the terms inside the budget (V0's sampler peak, 9.9 copies = 2.48 GiB, and non-torch) are 0.30 GiB high
    # here, unexplained (the other V0 rows print 9.8-10.3 copies). 11 % is 0.19 GiB of pool: a sampler copy more breaks it.
    assert r["kv_capacity_tokens"] == pytest.approx(3584, rel=0.11)


def test_a_gemma3_awq_without_qat_provenance_keeps_128_value_groups():
    # a torchao AWQ of the bf16 model (namgyu-youn/gemma-3-27b-it-AWQ-INT4) names no QAT: the default groups
    s = llm.describe(model="namgyu-youn/gemma-3-27b-it-AWQ-INT4")
    assert s.quant == "awq" and s.quant_group is None
    # and the rule is Gemma 3's: another family's "-int4-awq" keeps the default
    assert llm.describe(model="someone/Qwen2.5-7B-Instruct-int4-awq").quant_group is None


@pytest.mark.parametrize("q, group", [
    ({"quant_method": "awq", "bits": 4, "group_size": 32, "zero_point": True}, 32),
    ({"quant_method": "awq", "w_bit": 4, "q_group_size": 64, "zero_point": True}, 64),
    ({"quant_method": "gptq", "bits": 4, "group_size": -1}, None),  # per-channel: the default rate
    ({"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 32}}}}, 32),
    ({"quant_method": "awq", "bits": 4}, None),
])
def test_a_config_states_its_group_size(q, group):
    cfg = {"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
           "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "max_position_embeddings": 32768, "quantization_config": q}
    s = llm_spec.from_config(cfg, name="cfg")
    assert s.quant_group == group
    # 4 bits + an fp16 scale and a 4-bit zero per group
    assert W.linear_bits(s.quant, s.quant_group) == pytest.approx({32: 4.625, 64: 4.3125, None: 4.15625}[group])


def test_linear_bits_by_group():
    assert W.linear_bits("awq", 32) == pytest.approx(4.625)
    assert W.linear_bits("awq", None) == pytest.approx(4 + 20 / 128)
    assert W.linear_bits("w4a16", 32) == pytest.approx(4.5)
    assert W.linear_bits("fp8", 32) == 8.0  # not a group format: the group size does not apply


def test_ollama_qat_tag_keeps_the_embedding_in_f16():
    # ollama/ollama#8430 (0.7, gemma3:12b-it-qat on two GPUs): memory.weights.total 7.5 GiB, repeating 5.6 GiB,
    # nonrepeating 1.9 GiB - Google's QAT GGUF keeps the tied 262144 x 3840 token table in F16, not Q6_K
    s = llm.describe(model="gemma3:12b-it-qat")
    assert s.quant == W.QAT_Q4_0
    r = llm.plan(s, "ollama", ctx=4096, runtime_version="0.7.0")
    assert r["weights_by_role"]["output"] / GiB == pytest.approx(1.9, rel=0.03)
    assert r["weights_by_role"]["blocks"] / GiB == pytest.approx(5.6, rel=0.03)
    assert r["ollama_weights_total"] / GiB == pytest.approx(7.5, rel=0.02)
    # a Q6_K table (the ordinary Q4_0 build) would be 1.1 GiB lighter
    plain = llm.plan(llm.describe(model="gemma3:12b-q4_0"), "ollama", ctx=4096, runtime_version="0.7.0")
    assert r["ollama_weights_total"] - plain["ollama_weights_total"] > 1.0 * GiB


# ---------------------------------------------------------------- modules a checkpoint leaves in 16 bits

QWEN3_4B = {"model_type": "qwen3", "vocab_size": 151936, "head_dim": 128, "max_position_embeddings": 40960,
            "tie_word_embeddings": True, "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8}


def _bnb(skip):
    q = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
         "bnb_4bit_use_double_quant": True, "llm_int8_skip_modules": skip}
    return llm_spec.from_config(dict(QWEN3_4B, quantization_config=q), name="qwen3-4b-bnb")


def test_skip_modules_keep_their_decoder_matmuls_in_16_bits():
    # the format of Unsloth's dynamic 4-bit configs (unsloth-zoo matches entries against dotted module prefixes):
    # the head and the multimodal parts are already 16-bit; decoder sub-blocks move to 16 bits
    base = W.weights_by_role(_bnb(["lm_head", "multi_modal_projector", "merger"]))["total"]
    skip = _bnb(["lm_head", "model.layers.0.self_attn", "model.layers.0.mlp", "model.layers.35.mlp",
                 "model.layers.35.mlp.down_proj"])  # a repeated part counts once
    attn = 2560 * 32 * 128 + 2 * 2560 * 8 * 128 + 32 * 128 * 2560
    mlp = 3 * 2560 * 9728
    kept = attn + 2 * mlp
    assert W.skipped_linear_params(skip) == kept
    extra = W.weights_by_role(skip)["total"] - base
    assert extra == pytest.approx(kept * (2 - W.LINEAR_BITS["bnb-4bit"] / 8), rel=1e-3)


def test_skip_entries_outside_the_decoder_or_out_of_range_change_nothing():
    s = _bnb(["vision_tower", "model.layers.99.mlp", "lm_head"])
    assert W.skipped_linear_params(s) == 0
    assert W.weights_by_role(s)["total"] == W.weights_by_role(_bnb([]))["total"]


def test_awq_modules_to_not_convert_are_read_too():
    q = {"quant_method": "awq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["model.layers.1"]}
    s = llm_spec.from_config(dict(QWEN3_4B, quantization_config=q), name="qwen3-4b-awq")
    assert W.skipped_linear_params(s) == 2560 * 32 * 128 + 2 * 2560 * 8 * 128 + 32 * 128 * 2560 + 3 * 2560 * 9728


def test_an_unsloth_dynamic_name_says_its_figure_is_a_lower_bound():
    s = llm.describe(model="unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit")
    assert any("lower bound" in n and "--config" in n for n in s.notes)
    assert not any("lower bound" in n for n in llm.describe(model="unsloth/Qwen2.5-VL-3B-Instruct").notes)


# ---------------------------------------------------------------- vLLM >= 0.16: the Triton top-k/top-p sampler

def test_triton_sampler_from_016_holds_about_four_logits_copies():
    from gpu_garden.memory.llm.runtimes import vllm as V
    s = llm.describe(model="Qwen2.5-7B")
    one_copy = 256 * s.vocab * 4
    new = V.activation(s, 2048, 256, version=(0, 16), v1=True, sampler="native")
    old = V.activation(s, 2048, 256, version=(0, 15), v1=True, sampler="native")
    # vllm#33538's kernel alone holds ~2.9 copies; the warm-up's peak with the logits, softmax and noise is ~3.9
    # (llm-d-planner's 0.19.0 H100 logs, tests/unit/test_llm_batch23.py)
    assert 3.5 * one_copy < new < 4.2 * one_copy
    assert old == pytest.approx(9.7 * one_copy, rel=0.01)     # the PyTorch sort before it


def test_vllm_026_native_sampler_pool_on_an_rtx_4080():
    # akiyax/kvcache-lab docs/phase1-baseline.md (vLLM 0.26.0, VLLM_USE_FLASHINFER_SAMPLER=0, RTX 4080 15.99 GiB,
    # --max-model-len 32768, 0.90): "GPU KV cache size: 149,712 tokens"; peak activation printed 1.04 GiB with the
    # CUDA-graph estimate folded in (0.2x logs: KV = desired - consumed - peak activation)
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct-AWQ")
    r = llm.plan(s, "vllm", ctx=32768, vram=15.99 * GiB, gpu_memory_utilization=0.9, runtime_version="0.26.0",
                 gpu_name="NVIDIA GeForce RTX 4080")
    assert r["kv_capacity_tokens"] == pytest.approx(149712, rel=0.04)
    inside = r["overhead"]["activation_profile"] + r["overhead"]["cuda_graphs"]
    assert inside / GiB == pytest.approx(1.04, rel=0.15)


# ---------------------------------------------------------------- bitsandbytes scales as vLLM loads them

def test_vllm_dequantizes_bnb_double_quant_scales_unless_unsloth_starts_it():
    # vLLM's bitsandbytes loader turns double-quantized block scales into fp32 at load (4 + 32/64 bits a weight);
    # Unsloth's loader keeps them packed (~4.13). Unsloth's own runs (johnson7788/RLDecisionAgent: "Model loading
    # took 3.4153 GiB" for qwen3-4b-instruct-2507-unsloth-bnb-4bit) are the regression rows; a plain server is heavier
    s = llm.describe(model="unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit")
    kw = dict(ctx=32768, vram=23.55 * GiB, gpu_memory_utilization=0.7763, runtime_version="0.8.5.post1",
              vllm_engine="v0", max_num_seqs=256, max_num_batched_tokens=32768)
    unsloth = llm.plan(s, "vllm", vllm_entrypoint="unsloth", max_lora_rank=0, **kw)  # Unsloth's LoRA slots off
    plain = llm.plan(s, "vllm", **kw)
    quantized = s.linear_params  # every decoder matmul is 4-bit when sized from the name
    assert plain["weights"] - unsloth["weights"] == pytest.approx(quantized * (4.5 - W.LINEAR_BITS["bnb-4bit"]) / 8,
                                                                  rel=1e-3)
    assert unsloth["weights"] == W.weights_by_role(s)["total"] + s.rope_cache_elems * 2   # + the rotary tables
    assert any("dequantizes the double-quantized" in n for n in plain["notes"])
    # the larger weights come out of the plain server's KV pool
    assert plain["kv_capacity_bytes"] < unsloth["kv_capacity_bytes"]
