"""Task review27: mends to round 55's data parallelism (vLLM --data-parallel-size, SGLang --dp with
--enable-dp-attention). Expected figures are worked by hand from Qwen3-30B-A3B's config.json and the runtimes' source."""
import pytest
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


@pytest.mark.parametrize("knobs", [
    {"runtime_version": "0.6.3"},  # V0 is the default before 0.8
    {"runtime_version": "0.8.4", "gpu_name": "Tesla V100-SXM2-32GB"},  # 0.8-0.9 fall back to V0 below sm 8.0
    {"runtime_version": "0.9.2", "vllm_engine": "v0"},  # VLLM_USE_V1=0
])
def test_vllm_data_parallel_on_the_v0_engine_is_refused(knobs):
    # vllm#18702 (0.8.3): "the config param of data_parallel_size can be only used with v1 engine"
    for model in ("Qwen/Qwen3-30B-A3B", "meta-llama/Llama-3.1-8B-Instruct"):
        s = llm.describe(model=model)
        with pytest.raises(UserError, match="runs on the V1 engine only"):
            llm.plan(s, "vllm", ctx=8192, vram=40 * GiB, data_parallel_size=2, **knobs)


def test_vllm_data_parallel_on_v1_still_plans():
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    r = llm.plan(s, "vllm", ctx=8192, vram=40 * GiB, data_parallel_size=2, runtime_version="0.8.4")
    assert "--data-parallel-size 2" in r["command"]
