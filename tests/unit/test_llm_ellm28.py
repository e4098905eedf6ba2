"""Task ellm28: LLM batch 41 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize("bare, base_bytes_per_value, top_bytes_per_value", [
    ("Q4_K_XL", 144 / 256, 34 / 32),   # Q4_K .. Q8_0 (ggml-common.h block_q4_K 144 B / 256, block_q8_0 34 B / 32)
    ("q3_k_xl", 110 / 256, 34 / 32),   # Q3_K .. Q8_0
    ("Q8_K_XL", 34 / 32, 2.0),         # Q8_0 .. BF16
])
def test_bare_k_xl_name_is_unsloth_dynamic(bare, base_bytes_per_value, top_bytes_per_value):
    # urika/llama-defender llama-server.log (b9090): Qwen3.5-9B-UD-Q4_K_XL.gguf, a user's "Q4_K_XL" (the -hf tag
    # form). llama-quantize's QUANT_OPTIONS (tools/quantize/quantize.cpp) has no *_XL type, so it is Unsloth's name
    s = llm.describe(model="Qwen/Qwen3.5-9B")
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype=bare)
    assert r["weights_range"] == [int(s.params * base_bytes_per_value), int(s.params * top_bytes_per_value)]
    assert r["weights_range"] == llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="UD-" + bare)["weights_range"]


def test_other_names_are_not_taken_for_unsloth():
    s = llm.describe(model="Qwen/Qwen3.5-9B")
    assert "weights_range" not in llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q4_K_M")
    with pytest.raises(UserError, match="Q4_K_XXL"):
        llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q4_K_XXL")
