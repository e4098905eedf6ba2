"""The modules a quantization_config leaves in 16 bits, under each scheme's own key (task kv51): ModelOpt's wildcard
"ignore" / legacy "exclude_modules", vLLM's Fp8Config "ignored_layers" and GPTQ's "-:" dynamic rules. Every config is
hand-made on Qwen3-4B's geometry; every expected count is the projections' shapes multiplied out by hand:
  attention of one layer: q 2560 x 4096 + k 2560 x 1024 + v 2560 x 1024 + o 4096 x 2560 = 26,214,400
  MLP of one layer:       gate, up 2560 x 9728 + down 9728 x 2560                       = 74,711,040
Before kv51 kv read none of these keys, or read a wildcard entry as a plain name that matches nothing: each count
below was 0."""
import pytest

from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.llm import weights as W

QWEN3_4B = {"model_type": "qwen3", "vocab_size": 151936, "head_dim": 128, "max_position_embeddings": 40960,
            "tie_word_embeddings": True, "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8}
ATTN, MLP = 26_214_400, 74_711_040


def _spec(q):
    return llm_spec.from_config(dict(QWEN3_4B, quantization_config=q), name="hand-made")


def test_modelopt_wildcards_keep_every_attention_layer_in_16_bits():
    # config.json of a ModelOpt NVFP4 export: "ignore" holds shell wildcards (vLLM modelopt.py: fnmatch)
    s = _spec({"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head", "model.layers.*.self_attn*"]})
    assert s.quant == "nvfp4"
    assert W.skipped_linear_params(s) == 36 * ATTN
    # the weights gain those matmuls at 16 bits instead of NVFP4's 4.5: 943,718,400 x 11.5 / 8 bytes
    plain = _spec({"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head"]})
    gained = W.weights_by_role(s)["total"] - W.weights_by_role(plain)["total"]
    assert gained == pytest.approx(1_356_595_200, abs=8)


def test_a_modelopt_entry_with_a_layer_index_and_a_trailing_star_takes_that_layer_alone():
    s = _spec({"quant_method": "modelopt", "quant_algo": "NVFP4",
               "ignore": ["model.language_model.layers.1.self_attn*", "model.layers.35.mlp*", "*visual*"]})
    # a root before "layers." (a multimodal export's language_model.) names the same decoder layer
    assert W.skipped_linear_params(s) == ATTN + MLP


def test_the_legacy_hf_quant_config_form_names_its_format_and_exclusions():
    # hf_quant_config.json's layout: {"quantization": {"quant_algo", "exclude_modules"}}
    s = _spec({"quant_method": "modelopt",
               "quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head", "model.layers.2.mlp*"]}})
    assert s.quant == "nvfp4"
    assert W.skipped_linear_params(s) == MLP


def test_fp8_ignored_layers_are_read():
    # vLLM's Fp8Config.from_config reads "ignored_layers" (fp8.py); names as the checkpoint stores them
    s = _spec({"quant_method": "fp8", "activation_scheme": "dynamic",
               "ignored_layers": ["model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.o_proj"]})
    assert s.quant == "fp8"
    assert W.skipped_linear_params(s) == 2560 * 4096 + 4096 * 2560


def test_gptq_negative_dynamic_rules_skip_their_modules_and_positive_ones_do_not():
    # GPTQModel's "dynamic": "-:" regex = left out of quantized init (vLLM gptq_utils.get_dynamic_override: re.match);
    # "+:" (or no prefix) only changes the bits / group of what it matches, which stays quantized
    s = _spec({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True,
               "dynamic": {r"-:model\.layers\.1\..*": {}, r"+:model\.layers\.2\..*": {"bits": 8},
                           r"-:.*\.layers\.3\.mlp\.down_proj": {}}})
    assert W.skipped_linear_params(s) == ATTN + MLP + 9728 * 2560


def test_a_wildcard_that_names_no_decoder_matmul_changes_nothing():
    s = _spec({"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head", "*mtp*", "*visual*",
                                                                             "model.layers.*.mlp.gate"]})
    assert W.skipped_linear_params(s) == 0


def test_a_wildcard_on_a_vision_tower_or_mtp_layers_leaves_the_decoder_quantized():
    # (rev51) a ModelOpt wildcard under another module's own "layers." (a vision tower's encoder, an MTP head) names no
    # decoder matmul; read from its layer index on, it matched every decoder layer (36 x (ATTN + MLP) counted 16-bit)
    s = _spec({"quant_method": "modelopt", "quant_algo": "NVFP4",
               "ignore": ["model.vision_tower.encoder.layers.*", "mtp.layers.0*", "model.language_model.layers.4.mlp*"]})
    assert W.skipped_linear_params(s) == MLP


def test_a_plain_entry_under_a_vision_tower_or_mtp_layer_leaves_the_decoder_quantized():
    # (fixT) a plain entry under another module's own "layers.N" (a vision tower's encoder, an MTP head) names no decoder
    # matmul; read from its layer index on, 'vision_tower.encoder.layers.3' skipped decoder layer 3 (ATTN + MLP counted 16-bit)
    s = _spec({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
               "modules_to_not_convert": ["vision_tower.encoder.layers.3", "model.mtp.layers.0",
                                          "language_model.model.layers.5.mlp"]})
    assert W.skipped_linear_params(s) == MLP
    # bitsandbytes' prefix rule from a language model's root still names the decoder's layer
    s = _spec({"quant_method": "bitsandbytes", "load_in_4bit": True, "llm_int8_skip_modules": ["model.layers.3.self_attn"]})
    assert W.skipped_linear_params(s) == ATTN
