"""(fixV) quantization_config readers: an omni model's thinker (thinker.model.layers.N) is the decoder spec.py plans, so its
ignore/skip entries name decoder layers; GPTQ's modules_in_block_to_quantize lists the block's modules that ARE quantized
(the rest stay 16-bit). Expected parameter counts are the configs' geometry multiplied out by hand."""
import pytest

from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.llm import weights as W

# Qwen2.5-Omni-7B's thinker decoder (hidden 3584, MLP 18944, 28 layers, 28 heads / 4 KV heads of 128)
OMNI_TEXT = {"vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
             "num_attention_heads": 28, "num_key_value_heads": 4}
MLP = 3 * 3584 * 18944                                   # gate, up, down: 203,685,888
ATTN = 3584 * 3584 + 2 * 3584 * 512 + 3584 * 3584        # q, k, v (4 x 128), o: 29,360,128


def _omni(skip):
    cfg = {"architectures": ["Qwen2_5OmniForConditionalGeneration"], "model_type": "qwen2_5_omni",
           "thinker_config": {"text_config": OMNI_TEXT},
           "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
                                   "modules_to_not_convert": skip}}
    return llm_spec.from_config(cfg, name="omni-awq")


def test_a_thinker_entry_names_its_decoder_layer():
    assert W.skipped_linear_params(_omni(["thinker.model.layers.0.mlp"])) == MLP
    assert W.skipped_linear_params(_omni(["thinker.model.layers.3.self_attn", "thinker.model.layers.*.mlp.down_proj"])) == \
        ATTN + 28 * 3584 * 18944
    # the talker's layers are another decoder's; the thinker's towers are 16-bit in the plan already
    assert W.skipped_linear_params(_omni(["talker.model.layers.0.mlp", "thinker.visual", "thinker.audio_tower", "talker"])) == 0


def _gptq(inside, text=OMNI_TEXT, model_type="qwen2"):
    cfg = dict(text, model_type=model_type,
               quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False,
                                    "modules_in_block_to_quantize": inside})
    return llm_spec.from_config(cfg, name="gptq")


def test_gptq_modules_in_block_to_quantize_leaves_the_rest_16_bit():
    attn_only = [["self_attn.k_proj", "self_attn.v_proj", "self_attn.q_proj"], ["self_attn.o_proj"]]
    assert W.skipped_linear_params(_gptq(attn_only)) == 28 * MLP
    every = attn_only + [["mlp.up_proj", "mlp.gate_proj"], ["mlp.down_proj"]]
    assert W.skipped_linear_params(_gptq(every)) == 0
    assert W.skipped_linear_params(_gptq(["self_attn", "mlp"])) == 0          # a parent names its modules
    assert W.skipped_linear_params(_gptq([])) == 0                           # empty: the default, all quantized


# Qwen1.5-MoE-A2.7B's geometry (hidden 2048, 24 layers, 60 experts of 1408, a shared expert of 5632), as its GPTQ-Int4
# config.json lists its blocks: attention, the shared expert and every routed expert quantized
MOE = {"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
       "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4,
       "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "decoder_sparse_step": 1}


def test_gptq_moe_listing_keeps_every_listed_module_quantized():
    experts = [[f"mlp.experts.{e}.{p}" for e in range(60) for p in ("up_proj", "gate_proj")],
               [f"mlp.experts.{e}.down_proj" for e in range(60)]]
    listed = [["self_attn.k_proj", "self_attn.v_proj", "self_attn.q_proj"], ["self_attn.o_proj"],
              ["mlp.shared_expert.up_proj", "mlp.shared_expert.gate_proj"], ["mlp.shared_expert.down_proj"]] + experts
    spec = _gptq(listed, MOE, "qwen2_moe")
    assert spec.n_experts == 60 and W.skipped_linear_params(spec) == 0
    # without the shared expert listed it stays 16-bit: 24 layers x 3 x 2048 x 5632
    assert W.skipped_linear_params(_gptq(listed[:2] + experts, MOE, "qwen2_moe")) == 24 * 3 * 2048 * 5632


@pytest.mark.parametrize("entries", [["model.layers.0.mlp"], ["language_model.model.layers.0.mlp"]])
def test_other_roots_still_name_layer_0(entries):
    assert W.skipped_linear_params(_omni(entries)) == MLP
