"""Task ellm32 (round 55): vLLM's --data-parallel-size (runtimes/vllm_dp.py, read in vLLM's source). A model that is
not MoE runs independent engines, each as with DP 1; a MoE model's routed experts are split over tp x dp GPUs while the
rest stays split over tp; each engine sizes its own pool. Expected figures are worked by hand from Qwen3-30B-A3B's
config.json (48 layers, 128 experts of moe_intermediate 768 at hidden 2048, 4 KV heads of 128) and batch 61's log."""
import pytest
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30
# Qwen3-30B-A3B's routed experts in bf16: 48 layers x 128 experts x (gate, up, down) 3 x 2048 x 768 x 2 bytes
EXPERT_BYTES = 48 * 128 * 3 * 2048 * 768 * 2


def _plan(**kw):
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    return llm.plan(s, "vllm", ctx=40960, vram=39.49 * GiB, weights_dtype="bf16", gpu_memory_utilization=0.85,
                    runtime_version="0.20.2rc1.dev50+g48954de23.d20260519", max_num_seqs=128,
                    max_num_batched_tokens=8192, prefix_caching=False, gpu_name="NVIDIA A100-PCIE-40GB", **kw)


def test_moe_experts_split_over_tp_times_dp():
    tp2, dp2 = _plan(tensor_parallel_size=2), _plan(tensor_parallel_size=2, data_parallel_size=2)
    # a GPU holds a quarter of the experts instead of a half: 57,982,058,496 / 2 - / 4 = 14,495,514,624 bytes less
    assert EXPERT_BYTES == 57_982_058_496
    less = tp2["weights"] - dp2["weights"]
    assert abs(less - EXPERT_BYTES // 4) <= 4
    # the printed load of batch 61's TP2 x DP2 run: 'Model loading took 14.96 GiB memory' (TP 4: 14.25)
    assert abs(dp2["weights"] / GiB / 14.96 - 1) < 0.01
    # the KV pool is one engine's TP-2 pool: 2 of the 4 KV heads, 48 layers, K and V in bf16
    assert dp2["kv_per_token"] == tp2["kv_per_token"] == 48 * 2 * 128 * 2 * 2
    assert any("data parallel 2" in n for n in dp2["notes"])


def test_printed_pool_gives_the_printed_tokens_per_engine():
    # each engine prints 'Available KV cache memory: 15.22 GiB' and 'GPU KV cache size: 332,480 tokens':
    # 15.22 GiB / 49,152 bytes a token = 332,488, whole blocks of 16: 332,480
    r = _plan(tensor_parallel_size=2, data_parallel_size=2, kv_cache_memory=15.22 * GiB)
    assert r["kv_capacity_tokens"] == 332_480


def test_a_dense_model_runs_independent_engines_as_without_dp():
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    one = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, tensor_parallel_size=2)
    two = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, tensor_parallel_size=2, data_parallel_size=4)
    assert two["weights"] == one["weights"] and two["kv_capacity_tokens"] == one["kv_capacity_tokens"]
    assert any("independent engines" in n for n in two["notes"])


@pytest.mark.parametrize("kw, words", [
    ({"pipeline_parallel_size": 2}, "pipeline parallelism"),
    ({"cpu_offload_gb": 4}, "--cpu-offload-gb"),
    ({"weights_dtype": "mxfp4"}, "expert layout was not laid out"),
])
def test_moe_dp_refuses_what_was_not_read(kw, words):
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    args = {"ctx": 8192, "vram": 39.49 * GiB, "tensor_parallel_size": 2, "data_parallel_size": 2, "weights_dtype": "bf16"}
    args.update(kw)
    with pytest.raises(UserError, match="data_parallel_size 2") as e:
        llm.plan(s, "vllm", **args)
    assert words in str(e.value)


def _sglang(**kw):
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    return llm.plan(s, "sglang", ctx=8192, vram=39.49 * GiB, weights_dtype="bf16", mem_fraction_static=0.85,
                    tensor_parallel_size=4, **kw)


def test_sglang_dp_attention_holds_attention_and_token_table_whole():
    r = _sglang(data_parallel_size=4, dp_attention=True)
    # Qwen3-30B-A3B in bf16, by hand from config.json: experts 48 x 128 x 3 x 2048 x 768 = 28,991,029,248 params (over
    # the 4 GPUs); attention, norms and router 48 x (2048 x 4096 + 2 x 2048 x 512 + 4096 x 2048 + 2 x 128 + 2 x 2048
    # + 2048 x 128) + 2048 = 918,763,520 (whole: attention over tp // dp = 1 GPU); the token table 151,936 x 2048 =
    # 311,164,928 whole, the untied head over 4
    layer = 2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048 + 2 * 128 + 2 * 2048 + 2048 * 128
    rest = 48 * layer + 2048
    assert rest == 918_763_520
    table = 151936 * 2048
    hand = (48 * 128 * 3 * 2048 * 768 // 4 + rest + table + table // 4) * 2
    assert hand == 17_110_953_984
    assert abs(r["weights"] - hand) <= 1 << 20
    # batch 61's 'Load weight end ... mem usage=15.96 GB' (SGLang's GB is GiB) on each rank
    assert abs(r["weights"] / GiB / 15.96 - 1) < 0.01
    # each GPU keeps all 4 KV heads: 48 layers x 4 x 128 x K and V x 2 bytes; batch 61 pools 186,344 tokens a rank
    assert r["kv_per_token"] == 48 * 4 * 128 * 2 * 2
    assert abs(r["kv_capacity_tokens"] / 186344 - 1) < 0.01
    assert "--dp 4 --enable-dp-attention" in r["command"]


@pytest.mark.parametrize("kw, words", [
    ({"data_parallel_size": 4}, "without --enable-dp-attention"),
    ({"data_parallel_size": 3, "dp_attention": True}, "multiple of --data-parallel-size"),
    ({"dp_attention": True}, "needs --data-parallel-size"),
])
def test_sglang_dp_refuses_what_was_not_read(kw, words):
    with pytest.raises(UserError, match=words):
        _sglang(**kw)


def test_sglang_dp_attention_on_an_unread_architecture_is_refused():
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    with pytest.raises(UserError, match="was not read for DP attention"):
        llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=2, data_parallel_size=2, dp_attention=True)
