"""vLLM's V1 engine before 0.9.1 (vllm/v1/worker/gpu_worker.py of 0.7-0.8.5): the profile peak plus every byte the
device has in use that torch did not allocate, the process's own CUDA context among them, inside the share; and before
its sampler was profiled (vllm#13507 / #13594, from 0.8), the logits of the dummy batch in the model dtype instead,
of every max_num_tokens row in the January 2025 runner. Checked against printed figures:
  vllm#12569 (VLLM_USE_V1=1, a build between 0.7.0 and 0.7.1): Llama-3.1-70B w8a8 on an H100 at 0.98, 1381 GPU blocks
    (22,096 tokens), 10.79x at 2048 tokens;
  johnson7788/RLDecisionAgent reTool (0.8.5.post1 V1): Qwen2.5-0.5B on an RTX 4090 D, 1,606,496 tokens, 49.03x."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V

GiB = 1 << 30


def _w8a8_70b():
    s = llm.describe(model="neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8")
    return llm.plan(s, "vllm", ctx=2048, vram=79.18 * GiB, gpu_memory_utilization=0.98,
                    gpu_name="NVIDIA H100 80GB HBM3", vllm_engine="v1", runtime_version="0.7.1")


def test_llama70b_w8a8_early_v1_tokens_as_printed():
    # without the logits of all 8192 rows: +12 %; without the context inside the share: +14 % (was +19.6 %)
    assert _w8a8_70b()["kv_capacity_tokens"] == pytest.approx(22096, rel=0.07)


def test_early_v1_profile_peak_is_the_logits_of_every_batched_row():
    # 8192 rows x 128256 vocabulary in bf16, next to the 8192 x 8192 hidden states: 2.08 GiB, above the forward's 1.69
    s = llm.describe(model="meta-llama/Llama-3.1-70B-Instruct")
    peak = V.activation(s, 8192, 256, (0, 7, 1), v1=True)
    assert peak == (8192 * 128256 + 8192 * 8192) * 2
    # 0.7.2 on: the last row of each dummy request; from 0.8 the sampler's copies
    assert V.activation(s, 8192, 256, (0, 7, 2), v1=True) < peak / 1.2
    assert V.activation(s, 2048, 256, (0, 8, 0), v1=True) == int(256 * 128256 * 4 * V.SAMPLER_COPIES_NATIVE)


def test_v1_085_counts_the_context_inside_the_share():
    s = llm.describe(model="Qwen/Qwen2.5-0.5B-Instruct")
    r = llm.plan(s, "vllm", ctx=32768, vram=23.55 * GiB, gpu_name="NVIDIA GeForce RTX 4090 D",
                 runtime_version="0.8.5.post1")
    # printed 1,606,496 tokens: the context outside the share gives +2.3 %
    assert r["kv_capacity_tokens"] == pytest.approx(1606496, rel=0.01)
    assert any("vllm#19312" in n for n in r["notes"])


def test_context_outside_from_091_and_in_v0():
    assert V.context_in_share((0, 8, 5), True) and V.context_in_share((0, 7, 1), True)
    assert not V.context_in_share((0, 9, 1), True)
    assert not V.context_in_share((0, 8, 5), False)
    assert not V.context_in_share(None, True)
