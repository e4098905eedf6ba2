"""review25: mends to session 24's changes, each with a test that fails without it."""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

QWEN = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "max_position_embeddings": 32768, "torch_dtype": "float16", "tie_word_embeddings": False}


def _awq(tmp_path, bits):
    q = {"quant_method": "awq", "bits": bits, "group_size": 128, "zero_point": True}
    (tmp_path / "config.json").write_text(json.dumps(dict(QWEN, quantization_config=q)))
    return str(tmp_path / "config.json")


# 1. SGLang's AWQConfig raises "Currently, only 4-bit weight quantization is supported for AWQ, but got {bits} bits."
# as vLLM's does (python/sglang/srt/layers/quantization/awq.py at sgl-project/sglang 0149944f; AWQ-Marlin takes 4 and
# 8 only, so a 2/3-bit config falls to AWQConfig). fix25 refused a 2/3-bit AWQ for vLLM only; SGLang sized it.
# Breaking it: the ("sglang", "awq") row of vllm_loader.QUANT_WIDTHS out, or plan_weights' check back to vLLM only.
@pytest.mark.parametrize("bits", [3, 2])
def test_a_low_bit_awq_checkpoint_is_refused_for_sglang(tmp_path, bits):
    s = llm.describe(config=_awq(tmp_path, bits))
    with pytest.raises(UserError, match=f"{bits}-bit AWQ does not load in SGLang.*only 4-bit weight quantization"):
        llm.plan(s, "sglang", ctx=4096)


def test_a_4_bit_awq_is_still_sized_for_sglang_and_a_3_bit_one_for_llamacpp(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert llm.plan(llm.describe(config=_awq(tmp_path / "a", 4)), "sglang", ctx=4096)["weights"] > 0
    assert llm.plan(llm.describe(config=_awq(tmp_path / "b", 3)), "llama.cpp", ctx=4096)["weights"] > 0
