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


# swa_slack: one batch (max_num_batched_tokens) before 0.26.0 and on V0, two batches from 0.26.0 exactly, pp + 1 at
# pp > 1 only from 0.30 (the V2 model runner the comment's source ties it to); 0.26-0.29 at pp 2 keep two
@pytest.mark.parametrize("version, v1, pp, batches", [
    ((0, 25, 1), True, 1, 1), ((0, 26, 0), True, 1, 2), ((0, 26), True, 1, 2), ((0, 29, 0), False, 1, 1),
    ((0, 29, 0), True, 2, 2), ((0, 26, 0), True, 2, 2), ((0, 30, 0), True, 2, 3), ((0, 30, 0), True, 4, 5),
    ((0, 30, 0), True, 1, 2),
])
def test_swa_slack_batches_in_flight(version, v1, pp, batches):
    from gpu_garden.memory.llm.runtimes.vllm import swa_slack
    assert swa_slack({"version": version, "v1": v1, "pp": pp, "max_batched": 2048}) == batches * 2048


# the boundary in a plan: Gemma-4-E2B on the T4 keeps (511 + 2 x 2048) / 32 + 1 = 145 blocks a sliding layer at 0.26.0
# exactly, (511 + 2048) / 32 + 1 = 81 at 0.25.1 (3 full layers x 1024 blocks, 32 KiB a block)
def test_in_flight_swa_from_0_26_0_exactly():
    from gpu_garden.memory.units import GiB
    def req(version):
        return llm.plan(llm.describe(model="google/gemma-4-E2B-it"), "vllm", ctx=16384, weights_dtype="w4a16",
                        runtime_version=version, vram=14.75 * GiB, gpu_name="Tesla T4", gpu_memory_utilization=0.9,
                        max_num_seqs=8)["kv_request_bytes"]
    assert req("0.26.0") == (3 * 1024 + 12 * 145) * 32768
    assert req("0.25.1") == (3 * 1024 + 12 * 81) * 32768
