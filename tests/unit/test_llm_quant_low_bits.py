"""review24 item 6: 2- and 3-bit GPTQ/AWQ checkpoints were sized at 8 bits (spec._quant_name mapped any width but 4
to int8), targets and DFlash drafters alike, and a name saying '-GPTQ-Int3' at the format's 4 bits. GPTQ packs a
b-bit checkpoint's values and its zero points at b bits (qweight, qzeros: int32 words of 32 / b values) beside an
fp16 scale a group. Every expected value is worked by hand: b + (16 + b) / group bits a decoder-matmul weight.
Breaking it: _quant_name back to `(bits or 4) == 4`, linear_bits without its width, or name_quant.name_bits not called."""
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import weights as W
from support.dflash_drafter import plan_1085 as _plan_1085, write_drafter as _write

QWEN = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "max_position_embeddings": 32768, "torch_dtype": "float16", "tie_word_embeddings": False}


def test_low_widths_carry_their_bits_and_zero_points():
    assert W.linear_bits("gptq", 128, None, 3) == 3 + (16 + 3) / 128
    assert W.linear_bits("gptq", 128, True, 3) == 3 + (16 + 3) / 128   # no Marlin kernel at 3 bits: qzeros kept
    assert W.linear_bits("gptq", 64, None, 2) == 2 + (16 + 2) / 64
    assert W.linear_bits("awq", None, None, 3) == 3 + (16 + 3) / 128
    assert W.linear_bits("gptq", 128, None, None) == 4 + 20 / 128       # the 4-bit layout unchanged


@pytest.mark.parametrize("bits", [3, 2])
def test_a_low_bit_gptq_config_is_sized_at_its_bits(tmp_path, bits):
    cfg = dict(QWEN, quantization_config={"quant_method": "gptq", "bits": bits, "group_size": 128, "sym": True})
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    s = llm.describe(config=str(tmp_path / "config.json"))
    assert s.quant == "gptq" and s.quant_bits == bits
    roles = W.weights_by_role(s)
    lin = 28 * (3584 * 3584 * 2 + 3584 * 512 * 2 + 3 * 3584 * 18944)   # q, o, k, v, gate, up, down
    by_hand = lin * (bits + (16 + bits) / 128) / 8 + (s.params - lin) * 2
    assert roles["total"] == pytest.approx(by_hand, rel=1e-3)
    assert roles["total"] < lin * 4 / 8 + (s.params - lin) * 2           # under 4 bits, far under the 8 it was


def test_a_name_that_says_int3_is_sized_at_3_bits():
    s3 = llm.describe(model="Qwen/Qwen2.5-7B-Instruct-GPTQ-Int3")
    s4 = llm.describe(model="Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4")
    assert (s3.quant, s3.quant_bits, s4.quant_bits) == ("gptq", 3, None)
    lin = s3.linear_params
    assert W.weights_by_role(s4)["total"] - W.weights_by_role(s3)["total"] == pytest.approx(
        lin * ((4 + 20 / 128) - (3 + 19 / 128)) / 8, rel=1e-3)
    assert any("3 bits, as the name says" in n for n in s3.notes)


def test_a_3_bit_gptq_drafter_is_sized_at_3_bits(tmp_path):
    # the DFlash2 drafter of test_kv_ellm24 item 7 as a 3-bit GPTQ checkpoint, fc left in bf16: by hand at TP 2,
    # 5 x (2 x 5120 x 4096 + 2 x 5120 x 1024 + 3 x 5120 x 17408) x (3 + 19 / 128) / 8 / 2 + 25600 x 5120 x 2 bytes
    qc = {"quant_method": "gptq", "bits": 3, "group_size": 128, "sym": True, "modules_to_not_convert": ["model.fc"]}
    base = _plan_1085()
    r = _plan_1085(speculative_config={"method": "dflash", "num_speculative_tokens": 7,
                                       "model": _write(tmp_path, quantization_config=qc)})
    layers = 5 * (2 * 5120 * 4096 + 2 * 5120 * 1024 + 3 * 5120 * 17408)
    assert r["weights"] - base["weights"] == int(layers * (3 + 19 / 128) / 8 / 2 + 25600 * 5120 * 2)
