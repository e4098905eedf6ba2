"""Round 15 (kvfix13): ignore lists of MLA/MoE checkpoints and zero points as vLLM keeps them. Every expected value
is hand arithmetic from the config and the runtime's source; each test names the deliberate error that breaks it."""
from dataclasses import replace

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.llm import weights as W

GiB = 1 << 30


def test_kimi_k2_ignore_list_keeps_mla_attention_shared_experts_and_dense_mlp_16_bit():
    # Kimi-K2-Thinking (config in models/): hidden 7168, 61 layers, 64 heads, q_lora 1536, kv_lora 512, nope 128,
    # rope 64, v 128, first_k_dense_replace 1 (intermediate 18432), 1 shared expert of 2048. Ignore list: lm_head,
    # re:.*self_attn.*, re:.*shared_experts.*, the dense MLP regex. A layer's MLA projections:
    # q_a 7168*1536 + q_b 1536*64*192 + kv_a 7168*576 + kv_b 512*64*256 + o 64*128*7168 = 101,122,048
    mla = 7168 * 1536 + 1536 * 64 * 192 + 7168 * 576 + 512 * 64 * 256 + 64 * 128 * 7168
    assert mla == 101_122_048
    dense0 = 3 * 7168 * 18432            # layer 0's MLP: 396,361,728
    shared = 60 * 3 * 7168 * 2048        # layers 1-60, one shared expert each: 2,642,411,520
    s = llm.describe(model="moonshotai/Kimi-K2-Thinking")
    # fails with MLA counted 0 (the old code: 0), without the shared experts or without the dense block
    assert W.skipped_linear_params(s) == 61 * mla + dense0 + shared == 9_207_218_176
    assert W.skipped_linear_params(s, experts_only=True) == 0      # the routed experts are int4


def test_deepseek_v2_lite_ignore_entries_by_part():
    # DeepSeek-V2-Lite config.json: hidden 2048, 27 layers, 16 heads, no q_lora (q_proj), kv_lora 512, nope 128,
    # rope 64, v 128, first_k_dense_replace 1 (intermediate 10944), 64 routed experts of 1408, 2 shared experts
    s = llm.describe(model="deepseek-ai/DeepSeek-V2-Lite")
    part = lambda *e: W.skipped_linear_params(replace(s, quant_skip=e))  # noqa: E731
    assert part("kv_b_proj") == 27 * 512 * 16 * 256                    # 56,623,104
    assert part("re:.*self_attn\\.q_proj") == 27 * 2048 * 16 * 192       # 169,869,312
    assert part("re:.*kv_a_proj_with_mqa") == 27 * 2048 * 576
    assert part("re:.*shared_experts.*") == 26 * 3 * 2048 * (2 * 1408)   # 449,839,104: n_shared x moe width
    assert part("model.layers.0.mlp") == 3 * 2048 * 10944                # the dense block only
    assert part("re:.*mlp\\.experts\\..*") == 26 * 64 * 3 * 2048 * 1408  # routed experts, 26 MoE layers
    assert part("mlp.gate") == 0                                         # the router: 16-bit in the plan already


def _qwen7(q):
    cfg = {"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
           "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "max_position_embeddings": 32768, "quantization_config": q}
    return llm_spec.from_config(cfg, name="cfg")


def _ct(group, **w):
    return {"quant_method": "compressed-tensors", "format": "pack-quantized",
            "config_groups": {"group_0": {"weights": dict(num_bits=4, type="int", strategy="group",
                                                          group_size=group, **w)}}}


@pytest.mark.parametrize("q, bits", [
    # compressed-tensors WNA16: weight_zero_point only when not symmetric; 4 + 16/32, 4 + 20/32, 4 + 16/128
    (_ct(32, symmetric=True), 4.5),
    (_ct(32, symmetric=False), 4.625),
    (_ct(128), 4.125),                                    # QuantizationArgs.symmetric defaults to True
    # GPTQ: sym -> GPTQ-Marlin drops qzeros after loading (4 + 16/128); sym false, or not stated, is not
    # Marlin-compatible and GPTQLinearMethod keeps them (4 + 20/128)
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}, 4.125),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": False, "desc_act": False}, 4.15625),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128}, 4.15625),
    # AWQ / AWQ-Marlin keep qzeros whatever zero_point says
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}, 4.15625),
    ({"quant_method": "awq", "bits": 4, "group_size": 64, "zero_point": False}, 4.3125),
])
def test_a_zero_point_is_counted_only_where_vllm_keeps_one(q, bits):
    s = _qwen7(q)
    assert W.linear_bits(s.quant, s.quant_group, s.quant_sym) == bits  # fails with a zero on sym (4.625 at 32)
    # the weights follow: 28 layers x (q 3584^2 + k,v 2 x 3584 x 512 + o 3584^2 + MLP 3 x 3584 x 18944 + qkv bias
    # 3584 + 1024) = 6,525,417,472 matmul parameters at `bits`, the rest (embedding, head, norms) at 16
    lin = 28 * (2 * 3584 * 3584 + 2 * 3584 * 512 + 3 * 3584 * 18944 + 3584 + 1024)
    assert s.linear_params == lin
    assert W.weights_by_role(s)["total"] == pytest.approx(lin * bits / 8 + (s.params - lin) * 2, abs=1)


def test_kimi_k2_thinking_weights_at_4_5_bits():
    # symmetric int4 in groups of 32 (4.5 bits) on the routed experts; what its ignore list names at 16 bits
    s = llm.describe(model="moonshotai/Kimi-K2-Thinking")
    r = W.weights_by_role(s)
    q = s.linear_params - 9_207_218_176
    assert r["total"] == pytest.approx(q * 4.5 / 8 + (s.params - q) * 2, abs=1)
    assert "4.50 bits" in r["how"]


def test_below_compute_8_vllm_builds_the_zero_tensor_a_symmetric_gptq_lacks():
    # ExllamaLinearKernel (compute 6.0+, the MP kernel left below Marlin's 8.0) creates qzeros for a zero-free
    # scheme: groups x out packed 4-bit, 4/128 bits a weight at group 128. 6,525,417,472 matmul params (see above)
    # x 4 / 128 / 8 = 25,489,912 bytes more on a T4 than on an A100
    s = _qwen7({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False})
    t4, a100 = (llm.plan(s, "vllm", ctx=4096, vram=14.74 * GiB, gpu_name=g)["weights"] for g in ("Tesla T4", "A100"))
    assert t4 - a100 == 6_525_417_472 * 4 // 128 // 8 == 25_489_912
    asym = _qwen7({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": False, "desc_act": False})
    assert len({llm.plan(asym, "vllm", ctx=4096, vram=14.74 * GiB, gpu_name=g)["weights"] for g in ("T4", "A100")}) == 1
