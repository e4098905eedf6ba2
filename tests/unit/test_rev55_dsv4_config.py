"""Review rev55: a DeepSeek-V4 config.json with a weights field missing, null, zero or text is refused with the field's
name (a UserError the CLI prints), never a KeyError, TypeError or ZeroDivisionError from deepseek_v4.layer_bytes.
Breaks on the code before rev55 (layer_bytes read cfg["q_lora_rank"], cfg.get("hc_mult", 4) and num_hash_layers as
given): each case below raised a traceback there."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm.spec import from_config

BASE = {"model_type": "deepseek_v4", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2,
        "head_dim": 64, "sliding_window": 128, "vocab_size": 100, "compress_ratios": [4, 128], "q_lora_rank": 32,
        "o_groups": 2, "o_lora_rank": 16, "n_routed_experts": 4, "moe_intermediate_size": 32, "num_experts_per_tok": 2}


@pytest.mark.parametrize("change, field", [
    ({"q_lora_rank": None}, "q_lora_rank"),      # was KeyError
    ({"o_groups": 0}, "o_groups"),               # was ZeroDivisionError
    ({"num_hash_layers": "3"}, "num_hash_layers"),  # was TypeError ('<' between int and str)
    ({"moe_intermediate_size": None}, "moe_intermediate_size"),  # was KeyError
])
def test_bad_weights_field_is_named(change, field):
    cfg = {k: v for k, v in dict(BASE, **change).items() if v is not None}
    with pytest.raises(UserError, match=field):
        from_config(cfg, "config.json")


# null optional fields take the released configs' values: the same bytes as leaving them out (was TypeError on
# hc_mult None). The small config's weights are compared with themselves, not with a figure the code computed.
def test_null_optional_fields_read_as_absent():
    nulls = dict(BASE, hc_mult=None, n_shared_experts=None, index_head_dim=None, index_n_heads=None,
                 num_nextn_predict_layers=None, num_hash_layers=None)
    assert from_config(nulls, "config.json").weights_bytes == from_config(dict(BASE), "config.json").weights_bytes
