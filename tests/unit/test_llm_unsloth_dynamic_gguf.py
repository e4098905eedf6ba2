"""Unsloth Dynamic GGUFs (UD-*) are refused by name: their per-model tensor choices are not in the name. llama-bench
labels Qwen3.6-27B-UD-Q8_K_XL 'Q8_0' at 33.31 GiB for 27.32 B parameters (kyuz0/amd-strix-halo-toolboxes, b9193):
10.5 bits a weight where Q8_0 throughout is 8.5."""
import pytest

from gpu_garden.memory.llm import kv as llm


@pytest.mark.parametrize("dt", ["UD-Q8_K_XL", "UD-Q4_K_XL", "ud-iq2_m", "UD_Q3_K_XL"])
def test_refused_with_the_way_out(dt):
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    with pytest.raises(llm.UserError, match="--gguf"):
        llm.plan(s, "llama.cpp", ctx=4096, weights_dtype=dt)


def test_the_label_does_not_explain_the_printed_size():
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    q8 = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q8_0")["weights"] / (1 << 30)
    assert q8 < 33.31 * 0.85  # Q8_0 sizing sits 20 % under the UD file: not a usable stand-in
