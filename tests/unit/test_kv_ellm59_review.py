"""Review of kv rounds 80-81 (task kvfix): the points the targeted tests of ellm58/59/56 left uncaught, each with a
hand-computed expectation."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import gguf_types

GEMMA_MOE = "google/gemma-4-26B-A4B-it"  # tied, 30 MoE layers, vocab 262144 x hidden 2816


# a tied file has no output.weight: token_embd is the output (Q6_K, the single-count tensor) and the head reuses it,
# as gguf.py sets output_bytes = embed_bytes. 262144 x 2816 = 738,197,504 values x 6.5625 / 8 = 605,552,640 bytes
# (at the 'rest' type Q8_0 it would be x 8.5 / 8 = 784,334,848)
def test_tied_moe_output_head_is_the_single_count_type():
    spec = llm.describe(model=GEMMA_MOE)
    assert spec.tied
    g = gguf_types.given(spec, {"f32": 300, "q8_0": 200, "q4_K": 60, "q5_K": 30, "q6_K": 1})
    assert g.embed_bytes == g.output_bytes == 605_552_640
    assert "output Q6_K" in g.weights_source
