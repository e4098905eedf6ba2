"""Batch 34, after first sight (task ellm19): rules read from the runtimes' sources, each with hand arithmetic."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _graph_note(r):
    return next((n for n in r["notes"] if "measuring its CUDA graphs" in n), None)


# vLLM V1 measures its CUDA graphs before it sizes the pool (gpu_model_runner.profile_cudagraph_memory) and first
# allocates a minimal KV cache of min_blocks blocks in every tensor of the real layout
# (_init_minimal_kv_cache_for_profiling), outside --gpu-memory-utilization.
#
# Qwen3.8-27B, fp8 cache: a DeltaNet state page of 3 x (2 x 16 x 128 + 48 x 128) x 2 + 48 x 128 x 128 x 4 = 3,207,168
# bytes sets the block to 16 x ceil(3,207,168 / (16 x 2048)) = 1568 tokens, a page of 1568 x 2048 = 3,211,264 bytes
# (3.0625 MiB); 16 attention + 48 DeltaNet layers make 16 tensors (one layer of each of the 4 groups). 0.26.1rc1 at
# the default 256 sequences: min(256, capture 512) = 256 blocks, 784 MiB a tensor (the recipes' "Tried to allocate
# 784.00 MiB"), 16 x 784 MiB = 12.25 GiB, more than the ~7 GiB a 31.36 GiB 5090 has after the NVFP4 weights.
def test_graph_profile_cache_refuses_the_1x5090_nvfp4_run():
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    kw = dict(ctx=32768, kv_dtype="fp8", weights_dtype="nvfp4", vram=31.36 * GiB, gpu_memory_utilization=0.9,
              gpu_name="NVIDIA GeForce RTX 5090", runtime_version="0.26.1rc1.dev608")
    r = llm.plan(s, "vllm", **kw)
    assert 256 * 3211264 == 784 * MiB
    assert r["fits_as_requested"] is False
    assert "256 blocks (12.25 GiB)" in _graph_note(r)
    # the plan's way out keeps the graphs: one sequence, one block a tensor (49 MiB)
    assert r["fits"] is True and "--max-num-seqs 1 " in r["command"] and "--enforce-eager" not in r["command"]
    # at 0.80 and 0.93 it dies the same way: the share is not in the sum
    for util in (0.80, 0.93):
        assert "256 blocks (12.25 GiB)" in _graph_note(llm.plan(s, "vllm", **dict(kw, gpu_memory_utilization=util)))
    # no graphs, no profile: the eager run starts (91,022 tokens printed)
    eager = llm.plan(s, "vllm", **dict(kw, enforce_eager=True))
    assert eager["fits_as_requested"] is True and _graph_note(eager) is None
    # 8 sequences: 8 blocks x 16 x 3.0625 MiB = 392 MiB, which the weights leave
    assert _graph_note(llm.plan(s, "vllm", **dict(kw, max_num_seqs=8))) is None


# 0.18.0 took the largest capture size: Qwen3.5-9B (bf16, fp8 cache) at the default 256 sequences on an L4 prints
# "Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512" and dies asking 1.03 GiB. Its page: 3 x (2 x 16 x 128
# + 32 x 128) x 2 + 32 x 128 x 128 x 4 = 2,146,304 bytes -> a block of 16 x ceil(2,146,304 / 32768) = 1056 tokens
# (the log's "attention block size to 1056 tokens", "Padding mamba page size by 0.76%": 2,162,688 / 2,146,304),
# 512 x 2,162,688 bytes = 1.03 GiB a tensor, 8 tensors (8 attention + 24 DeltaNet layers): 8.25 GiB.
def test_graph_profile_cache_0_18_takes_the_capture_size():
    s = llm.describe(model="Qwen/Qwen3.5-9B")
    assert 512 * 1056 * 2048 / GiB == pytest.approx(1.03, abs=0.005)
    r = llm.plan(s, "vllm", ctx=65536, kv_dtype="fp8", vram=22.03 * GiB, gpu_name="NVIDIA L4",
                 runtime_version="0.18.0")
    assert r["fits_as_requested"] is False
    assert "512 blocks (8.25 GiB)" in _graph_note(r)
    # the same card with 80 GiB would hold it; before 0.18 the rule is not applied (not read)
    big = llm.plan(s, "vllm", ctx=65536, kv_dtype="fp8", vram=44.39 * GiB, runtime_version="0.18.0")
    assert _graph_note(big) is None
    assert _graph_note(llm.plan(s, "vllm", ctx=65536, kv_dtype="fp8", vram=22.03 * GiB,
                                runtime_version="0.17.1")) is None


# SGLang keeps a hybrid model's recurrent state in its own pool, taken from the static share before the KV pool
# (model_runner_kv_cache_mixin handle_max_mamba_cache): rest x 0.9 / 1.9 (--mamba-full-memory-ratio 0.9) in whole
# request states, conv state in the model's dtype, temporal state in --mamba-ssm-dtype (float32 by default).
def test_sglang_mamba_state_per_request_matches_kt1870():
    # kvcache-ai/ktransformers#1870 (Qwen3.5-397B-A17B, TP 2): 'max_mamba_cache_size: 82, conv_state size: 0.13GB,
    # ssm_state size: 7.29GB'. A rank holds 32 of the 64 value heads: 45 DeltaNet layers x 32 x 128 x 128 x 4 bytes =
    # 90 MiB of temporal state and 45 x (2 x 16 x 128 + 64 x 128) / 2 x 3 x 2 = 1.58 MiB of conv state a request; the
    # pool allocates 82 + 1 of them: 83 x 90 MiB = 7.295 GiB, 83 x 1.58 MiB = 0.128 GiB
    from gpu_garden.memory.llm.runtimes import sglang as SG
    spec = llm.vllm_per_rank(llm.describe(model="Qwen/Qwen3.5-397B-A17B"), 2)
    assert SG.mamba_state_per_req(spec) == 45 * (6144 * 3 * 2 + 32 * 128 * 128 * 4)
    assert 83 * 45 * 32 * 128 * 128 * 4 / GiB == pytest.approx(7.29, abs=0.01)


def test_sglang_hybrid_pool_splits_rest_by_the_ratio():
    # Qwen3.6-27B, one GPU, fp8 cache: a request's state is 48 x (10240 x 3 x 2 + 48 x 128 x 128 x 4) = 153,944,064
    # bytes; a token's cache 16 x 4 x 256 x 2 x 1 = 32768. rest = 0.9 x 20 GiB - 8 GiB = 10 GiB: the states get
    # 10 GiB x 0.9 / 1.9 = 5,086,145,482 bytes -> 33 states (5,080,154,112 bytes), the KV pool the other 5,657,264,128
    # bytes: 172,646 tokens (all 10 GiB would be 327,680)
    from gpu_garden.memory.llm.runtimes import sglang as SG
    spec = llm.describe(model="Qwen/Qwen3.6-27B")
    ev = SG.evaluate(spec, 131072, "fp8_e4m3", 8 * GiB, 20 * GiB + 512 * MiB, 1, 0.9)
    assert ev["mamba_slots"] == 33
    assert ev["tokens"] == (10 * GiB - 33 * 153944064) // 32768 == 172646
