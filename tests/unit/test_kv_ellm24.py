"""Task ellm24 (kv-accuracy round 49): batch 56 read after its first sight (vLLM speculative-decoding drafters). Each
test fails when its rule is broken on purpose (the commit says how). Expected values are worked here from the model's
geometry and the runs' printed figures, not taken from kv."""
import math

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


def _qwen36_27b_mtp3(version):
    # club-3090#91: Qwen3.6-27B int4 AutoRound, TP 2 on 3090s, fp8_e5m2 cache, MTP with 3 speculative tokens
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=262144, parallel=1, weights_dtype="auto_round",
                    tensor_parallel_size=2, gpu_memory_utilization=0.9, kv_dtype="fp8", max_num_seqs=2,
                    max_num_batched_tokens=8192, mtp_tokens=3, runtime_version=version, vram=23.56 * GiB)


# 1. vLLM 0.20.1 (the release) prints "GPU KV cache size" as concurrency x max_model_len: club-3090#91's
# 'Initializing a V1 LLM engine (v0.20.1)' run prints 619,479 tokens and 2.36x at 262,144 (619,479 / 262,144 = 2.363),
# no whole number of its 1600-token blocks (Qwen3.6-27B at TP 2, fp8, MTP 3: 16 x ceil(state page / (16 x 1024)) =
# 1600). kv took the change as 0.22 and printed blocks // groups x 1600 there (155,200: -75 %). The nightly
# 0.20.1rc1.dev16 that came before it still prints whole blocks (483,200 = 302 x 1600 next to 6.77x, club-3090 e3f8f020).
# Breaking it: runtimes/vllm.py TOKENS_FROM_CONCURRENCY back to (0, 22).
def test_vllm_0_20_1_prints_tokens_as_concurrency_times_the_length():
    r = _qwen36_27b_mtp3("0.20.1")
    assert r["kv_detail"]["pool_args"]["tokens_from_concurrency"] is True
    assert r["kv_capacity_tokens"] == int(r["concurrency"] * 262144)
    assert r["kv_capacity_tokens"] % 1600 != 0
    old = _qwen36_27b_mtp3("0.20.1rc1.dev16+g7a1eb8ac2")
    assert old["kv_detail"]["pool_args"]["tokens_from_concurrency"] is False
    assert old["kv_capacity_tokens"] % 1600 == 0
    # the printed pair is of that kind: tokens / length is the printed concurrency, and no whole number of blocks
    assert round(619479 / 262144, 2) == 2.36 and 619479 % 1600 != 0
    assert math.isclose(483200 / 1600, 302)
