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


def test_vllm_hybrid_pipeline_stages_share_the_whole_models_groups():
    # Qwen3.6-35B-A3B: 40 layers, full attention at 3, 7, ..., 39 (10), 30 gated-DeltaNet. fp8 cache: 2 KV heads x 256
    # x K,V = 1024 B a token a full layer; a state page = 24576 conv x 2 B + 524288 ssm x 4 B = 2,146,304 B, so a block
    # is 16 x cdiv(2146304, 16 x 1024) = 2096 tokens and a page 2096 x 1024 = 2,146,304 B. The whole model's groups:
    # one of the 10 full layers, three of 10 DeltaNet layers dealt in turn (layers[i::3], kv_cache_utils
    # _get_kv_cache_groups_uniform_page_size). At PP 4 (10 layers a stage) stage 0 holds full 3, 7 and DeltaNet
    # 0 1 2 4 5 6 8 9 = the kind's 0th-7th: groups of 3, 3, 2 -> 3 tensors (its own 2 full + 8 DeltaNet would group by
    # 2: 4 groups of 2). 2 GiB // (3 x 2146304) = 333 blocks; "GPU KV cache size" = 333 // 4 groups x 2096 = 173,968
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    r = llm.plan(s, "vllm", ctx=32768, vram=24 * GiB, kv_dtype="fp8", runtime_version="0.17.1",
                 pipeline_parallel_size=4, kv_cache_memory=2 * GiB, language_model_only=True)
    assert [st["stage_layers"] for st in r["pp_stages"]] == [10, 10, 10, 10]
    assert r["pp_stages"][0]["pool_tokens"] == 173968
    assert r["kv_capacity_tokens"] == 173968
