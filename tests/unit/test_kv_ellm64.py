"""Task ellm64 (kv-accuracy round 86, batch 90 after its first sight).

vLLM's "GPU KV cache size" line: vllm#41069 (e68fa1b90, 2026-04-28, read in 1CatAI/1Cat-vLLM at ae13773a,
vllm/v1/core/kv_cache_utils.py _report_kv_cache_config) replaced `num_blocks // len(kv_cache_groups) * min_block_size`
by `int(max_concurrency * max_model_len)`. It landed 31 commits past the base of the 0.20.1rc1 nightlies: their build
a749a33d8 (0.20.1rc1.dev91) is 60 commits past it, 91 past ebf862c35. So a 0.20.1rc1.devN nightly prints the new figure
from dev31 on; kv's version parse kept no dev number for an rc nightly, and the gate stood at 0.20.1 final, so the
dev91 row of Nemotron-3-Nano (Cascade-2 NVFP4, batch 90) got the old figure: 258,912 tokens against 1,206,303 printed.
"""
import json

from gpu_garden.memory.llm import cache as C
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import PRE, at_least, parse_version
from gpu_garden.memory.llm.runtimes.vllm import TOKENS_FROM_CONCURRENCY
from gpu_garden.memory.units import GiB

ROW = "vllm-99sono-nemotroncascade2-30b-a3b-nvfp4-5090-256k-u085-fp8kv-mns128-v020"


def test_rc_nightly_keeps_its_commit_count():
    assert parse_version("0.20.1rc1.dev91+ga749a33d8", "vllm") == (0, 20, 0, PRE, 1, 91)
    assert parse_version("0.20.1rc1.dev16+ge3f8f020", "vllm") == (0, 20, 0, PRE, 1, 16)
    assert parse_version("0.20.1rc1", "vllm") == (0, 20, 0, PRE, 1)  # a candidate itself: unchanged
    # a gate of five numbers or fewer reads the nightly as its candidate, as before
    assert at_least(parse_version("0.20.1rc1.dev91", "vllm"), 0, 20, 0, PRE, 1)
    assert not at_least(parse_version("0.20.1rc1.dev91", "vllm"), 0, 20, 1)


def test_tokens_from_concurrency_from_the_nightly_with_vllm_41069():
    new = [("0.20.1rc1.dev91+ga749a33d8", True), ("0.20.1rc1.dev31+ge68fa1b90", True), ("0.20.1", True),
           ("0.20.1rc1.dev16+g0", False), ("0.20.0", False), ("0.20.1.dev0+g101584af0", False)]
    for v, expect in new:
        assert at_least(parse_version(v, "vllm"), *TOKENS_FROM_CONCURRENCY) is expect, v


def test_nemotron_nano_pool_tokens_by_hand():
    # vllm_layout: page 2,138,112 bytes, 6 tensors (1 attention group + 4 Mamba groups' share), block 4176 tokens:
    # 3.72 GiB = 3,994,319,585 bytes // (6 x 2,138,112 = 12,828,672) = 311 blocks. A 256,000-token request needs
    # cdiv(256,000, 4176) = 62 attention blocks + 4 Mamba groups x 1 state block = 66: concurrency 311 / 66 = 4.712
    # (printed 4.71x). New figure int(311 / 66 x 256,000) = int(1,206,303.03) = 1,206,303 (printed); old figure
    # 311 // 5 groups x 4176 = 62 x 4176 = 258,912.
    spec = llm.describe(model="nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B")
    kw = dict(max_batched=32768)
    new = C.vllm_pool(spec, 3.72 * GiB, "fp8", 256000, tokens_from_concurrency=True, **kw)
    old = C.vllm_pool(spec, 3.72 * GiB, "fp8", 256000, tokens_from_concurrency=False, **kw)
    assert new["blocks"] == 311 and round(new["concurrency"], 2) == 4.71
    assert new["tokens"] == 1_206_303 and old["tokens"] == 258_912


def test_the_dev91_row_gets_the_printed_tokens():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    rows = {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}
    s = b.score(rows[ROW])
    assert s["tokens_from_printed"] == (1_206_303, 1_206_303) and s["tokens_from_printed_exact"]
