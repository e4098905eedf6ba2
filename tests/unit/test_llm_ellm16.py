"""Round 18 (task ellm16): the fits verdict's misses. Expected values come from the runtimes' source (named) or hand
arithmetic, never from the code under test."""
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _pp2(engine):
    # a fixed 1 GiB pool a stage (--kv-cache-memory) keeps the profile out of the arithmetic
    s = llm.describe(model="Llama-3.1-8B")
    return llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.10.1", vllm_engine=engine,
                    pipeline_parallel_size=2, kv_cache_memory=GiB, gpu_name="NVIDIA A100-SXM4-80GB")


def test_vllm_v0_pipeline_parallel_splits_the_blocks_between_virtual_engines():
    # Llama-3.1-8B at PP 2: 16 layers a stage x 8 KV heads x 128 x K,V x 2 B = 65,536 B a token, 1 MiB a 16-token block:
    # 1 GiB = 1024 blocks. V0 runs one virtual engine a stage, each scheduler with num_gpu_blocks // pp
    # (core/scheduler.py); raise_if_cache_size_invalid: max_seq_len = block_size x (num_gpu_blocks // pp) = 16 x 512
    assert _pp2("v0")["kv_capacity_tokens"] == 8192
    # V1 has no virtual engines: the stages' smallest block count, 16 x 1024
    assert _pp2("v1")["kv_capacity_tokens"] == 16384
