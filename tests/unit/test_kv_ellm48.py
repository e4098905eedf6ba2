"""kv-accuracy round 70 (task ellm48, batch 75 after first sight): an EAGLE / EAGLE-3 head's layers in a dense
Llama's one KV cache group. Figures worked by hand in the comments, from the drafters' config.json
(benchmarks/data/drafters/) and the run's printed lines, not taken from kv."""
from pathlib import Path

from gpu_garden.memory.llm import cache, kv as llm
from gpu_garden.memory.llm.runtimes import vllm_drafter as VD
from gpu_garden.memory.units import GiB

DRAFTERS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "drafters"
EAGLE = str(DRAFTERS / "EAGLE-LLaMA3-Instruct-8B")
EAGLE3 = str(DRAFTERS / "EAGLE3-LLaMA3.1-Instruct-8B")
DFLASH = str(DRAFTERS / "Qwen3.6-35B-A3B-DFlash")


# vllm-manojspec-llama3-8b-gptq4-eagle5-a100-80g-4k-u080 (vLLM 0.24.0): 'Available KV cache memory: 56.41 GiB',
# 'GPU KV cache size: 448,064 tokens', 'Maximum concurrency for 4,096 tokens per request: 109.39x'.
# The EAGLE layer has the target's cache spec (8 KV heads x 128, 16-bit): every layer's spec is the same, so vLLM's
# get_kv_cache_groups makes one group of 33 layers (_get_kv_cache_groups_uniform_spec), a block 33 x 16 x 4096 =
# 2,162,688 bytes:
#   448,064 tokens = 28,004 blocks, which need 28,004 x 2,162,688 = 60,563,914,752 bytes = 56.4045 GiB, and 28,005
#   blocks 56.4066 GiB: the pool printed as 56.41 lies in [56.405, 56.4066), 28,004 blocks.
#   At 56.41 GiB (60,569,776,291 bytes): 28,006 blocks, 448,096 tokens (a whole number of blocks); at the printed
#   figure's floor, 56.405 GiB: 28,004 blocks, the printed 448,064.
# A kind of its own (33 one-layer groups of 65,536-byte pages, tokens = concurrency x 4096) prints no whole block:
#   56.41 GiB // 65,536 = 924,221 pages; a request 33 x 256 = 8,448 pages: 109.4012x, 448,107 tokens; at 56.405 GiB
#   924,139 pages, 448,067 tokens: no pool printed as 56.41 gives the printed 448,064 so (the first sight's one
#   tokens-from-printed miss, 448,107 against 448,064).
# Breaking it: joins_target_group returning False (the drafter a kind of its own): three tests below fail (checked).
def _eagle_plan(pool_gib, method="eagle", model="meta-llama/Meta-Llama-3-8B-Instruct", path=EAGLE, ctx=4096):
    spec = llm.describe(model=model)
    return llm.plan(spec, "vllm", ctx=ctx, weights_dtype="fp16", vram=79.25 * GiB, runtime_version="0.24.0",
                    kv_cache_memory=int(pool_gib * GiB), prefix_caching=False,
                    speculative_config={"method": method, "model": path, "num_speculative_tokens": 5})


def test_eagle_layer_in_the_targets_one_group_gives_whole_blocks():
    res = _eagle_plan(56.41)
    assert res["kv_capacity_tokens"] == 448_096 == 28_006 * 16
    assert res["kv_capacity_tokens"] % 16 == 0
    assert any("one KV cache group" in n for n in res["notes"])


def test_printed_eagle_pool_floor_gives_the_printed_tokens():
    # 56.405 GiB, the lowest pool printed as 56.41: 28,004 blocks of 2,162,688 bytes, the printed 448,064 tokens
    res = _eagle_plan(56.405)
    assert res["kv_capacity_tokens"] == 448_064


def test_eagle3_layer_joins_too_and_at_fp8():
    # EAGLE-3 on Llama-3.1-8B at 8192: 33 layers x 16 x 4096 bytes a block in 16 bits; 50.27 GiB (batch 61's
    # vllm-manojspec-llama31-8b-fp16-eagle3x5-a100-80g-8k-u085 prints 399,360 tokens = 24,960 blocks):
    # 50.27 x 2^30 / 2,162,688 = 24,958.3 -> 24,958 blocks, 399,328 tokens (the printed figure is within the 0.005 GiB
    # rounding: 24,960 blocks need 50.2734 GiB); one-layer groups: 399,332
    res = _eagle_plan(50.27, "eagle3", "meta-llama/Llama-3.1-8B-Instruct", EAGLE3, 8192)
    assert res["kv_capacity_tokens"] == 399_328
    assert 24_960 * 2_162_688 / GiB < 50.275


def test_joins_target_group_only_for_the_same_spec():
    llama = llm.describe(model="meta-llama/Meta-Llama-3-8B-Instruct")
    g = VD.read_drafter("eagle", EAGLE)
    assert VD.joins_target_group(llama, g)
    assert not VD.joins_target_group(llama, dict(g, head_dim=64))        # another head size: another spec
    assert not VD.joins_target_group(llama, dict(g, kv_heads_total=4))   # other KV heads
    assert not VD.joins_target_group(llama, dict(g, window=2048))        # a sliding drafter layer
    # a hybrid target (Qwen3.6-35B-A3B's DeltaNet and full layers) keeps the DFlash drafter a kind of its own
    qwen = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert not VD.joins_target_group(qwen, VD.read_drafter("dflash", DFLASH))


# --- Ollama: gpt-oss's runner rule folded into cache.OLLAMA_SWA_MEMORY (behaviour-preserving) --------------------------
# Each architecture's row is (SWA memory in cells, the first version that takes it): Gemma 4 every version, gpt-oss from
# 0.11.11 (round 69's OLLAMA_GPTOSS_RUNNER). gpt-oss:20b at num_ctx 4096, one sequence: the estimate's 4096 + 512 = 4608
# sliding cells before 0.11.11 or with no version (12 full x 4096 + 12 sliding x 4608 cells x 2 KiB = 204.0 MiB), the
# runner's whole num_ctx from 0.11.11 (24 x 4096 x 2 KiB = 192.0 MiB). Gemma 4 at 32768: 4096 + 512 = 4608 cells at
# any version. Breaking it: the table's old int values fail the first test (checked).
def test_swa_memory_table_carries_each_architectures_version_gate():
    assert cache.OLLAMA_SWA_MEMORY["gemma4"] == (4096, None)
    assert cache.OLLAMA_SWA_MEMORY["gpt_oss"] == cache.OLLAMA_SWA_MEMORY["gpt-oss"] == (4096, (0, 11, 11))


def test_gptoss_sliding_cells_by_version_unchanged():
    s = llm.describe(model="openai/gpt-oss-20b")
    got = {v: cache.kv_cache(s, 4096, 1, "f16", "ollama", version=v) for v in (None, (0, 11, 10), (0, 11, 11))}
    assert [got[v]["sliding_cells"] for v in got] == [4608, 4608, 4096]
    assert [got[v]["total"] / (1 << 20) for v in got] == [204.0, 204.0, 192.0]
    g = llm.describe(model="google/gemma-4-31B-it")
    assert cache.kv_cache(g, 32768, 1, "f16", "ollama", version=None)["sliding_cells"] == 4608
