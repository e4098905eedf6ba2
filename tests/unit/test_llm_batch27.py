"""Batch 27 (read by ellm9). Expected values are what the runtimes printed, in the threads each test names."""
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _club3090_tp4(util, version, kv=None, seqs=4):
    # noonghunna/club-3090 e3f8f020 docker-compose.dual4*.yml: an int4 AutoRound Qwen3.6-27B on 4x RTX 3090 (23.56 GiB
    # as vLLM reports it), TP 4, 262,144 tokens, --max-num-batched-tokens 8192, vLLM nightly 0.20.1rc1.dev16
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=262144, kv_dtype=kv, weights_dtype="auto_round",
                    vram=23.56 * GiB, gpu_memory_utilization=util, gpu_name="NVIDIA GeForce RTX 3090",
                    tensor_parallel_size=4, max_num_seqs=seqs, max_num_batched_tokens=8192, runtime_version=version)


def test_hybrid_tokens_before_024_are_blocks_per_group_not_concurrency_times_ctx():
    # 'GPU KV cache size: 483,200 tokens' next to 6.77x at 262,144 (fp8_e5m2, 0.92): the nightly prints blocks // groups
    # x the block, a quarter of 6.77 x 262,144 = 1.77 M for the four groups of 16 layers; read as the newest release
    # (concurrency x max_model_len) it is 1.87 M (+287 %)
    r = _club3090_tp4(0.92, "0.20.1", kv="fp8")
    assert abs(r["kv_capacity_tokens"] / 483200 - 1) <= 0.05
    newest = _club3090_tp4(0.92, None, kv="fp8")
    assert newest["kv_capacity_tokens"] > 3 * 483200
