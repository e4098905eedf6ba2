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


def test_sglang_dp_attention_keeps_awq_experts_built_in_16_bits():
    # an AWQ MoE on a V100: SGLang builds the routed experts in 16 bits (plan_weights.by_role); DP attention must keep
    # them so. By hand: 48 x 128 x 3 x 2048 x 768 expert params x 2 bytes over tp 2 = 27.0 GiB a GPU; everything else
    # (30.53 B - 28.99 B params, at most 16 bits, whole) adds at most 3.08 GB
    experts = 48 * 128 * 3 * 2048 * 768 * 2 // 2
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=32 * GiB, weights_dtype="awq", mem_fraction_static=0.85,
                 tensor_parallel_size=2, data_parallel_size=2, dp_attention=True, gpu_name="Tesla V100-SXM2-32GB")
    assert experts < r["weights"] < experts + 3.08e9
