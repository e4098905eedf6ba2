"""kv-accuracy round 64 (task ellm42): vLLM's 0.92 default share from its first release, 0.20.0, on the older rows,
and the OOM advice on the same rule. Expected figures are derived by hand in the comments."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes import vllm as V
from gpu_garden.memory.units import GiB

Q27 = "Qwen/Qwen3.6-27B"


# --- the first release with vllm#38284 -----------------------------------------------------------------------------------
# Read in PyPI's source archives (pip download vllm==X, the sdist): vllm/config/cache.py's CacheConfig reads
# `gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)` and vllm/envs.py defaults
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS to "1" in 0.20.0 (cache.py:66), 0.20.1, 0.20.2, 0.21.0, 0.23.0, 0.24.0,
# 0.25.1, 0.26.0 and 0.27.0; 0.19.0 and 0.19.1 read `Field(default=0.9, ...)` and "0". kv's default follows.
@pytest.mark.parametrize("version", ["0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.23.0", "0.24.0", "0.25.1", "0.26.0",
                                     "0.27.0", "0.26.1rc1.dev608+g99a10304d", "0.20.1rc1.dev16+g7a1eb8ac2"])
def test_builds_that_read_092_in_their_source(version):
    assert V.default_util(parse_version(version, "vllm")) == 0.92
    assert V.graphs_in_budget(parse_version(version, "vllm"))


@pytest.mark.parametrize("version", ["0.19.0", "0.19.1", "0.18.1", "0.11.0"])
def test_builds_that_read_090_in_their_source(version):
    assert V.default_util(parse_version(version, "vllm")) == 0.90
    assert not V.graphs_in_budget(parse_version(version, "vllm"))


def test_club3090_91_on_0_20_1_without_a_share_is_the_092_plan():
    # club-3090 #91 (batch 56): the dual compose's Qwen3.6-27B AutoRound int4, TP 2 on two RTX 3090s (23.56 GiB as vLLM
    # reports one), fp8 cache, MTP 3, 2 sequences, 8192 batched tokens, on the v0.20.1 release, no share printed.
    # 23.56 GiB = 25,297,357,373.44 bytes; x 0.92 = 23,273,568,783.56, ceil 23,273,568,784 (x 0.90: 22,767,621,637)
    kw = dict(runtime="vllm", ctx=262144, weights_dtype="auto_round", tensor_parallel_size=2, kv_dtype="fp8",
              max_num_seqs=2, max_num_batched_tokens=8192, mtp_tokens=3, gpu_name="NVIDIA GeForce RTX 3090",
              prefix_caching=True, vram=23.56 * GiB, runtime_version="0.20.1")
    spec = llm.describe(model=Q27)
    default, given = llm.plan(spec, **kw), llm.plan(spec, gpu_memory_utilization=0.92, **kw)
    assert default["budget"] == given["budget"] == 23_273_568_784
    assert default["kv_capacity_bytes"] == given["kv_capacity_bytes"]
    # the same figure round 63 derived for the batch-69 #74 row at its explicit 0.92 (591,654 tokens = 2.26x; 606,299
    # since round 66 sizes Lorbus's MTP layers at AutoRound's bits: tests/unit/test_kv_ellm44.py)
    # (604,835 since task kv64: its tower term at TP 2 is 25,185,393 B more, tests/unit/test_kv_ellm41.py)
    # (598,977 since task kv66/kv67: vLLM's MRotaryEmbedding table, 262,144 x 4 x 64 x 2 B = 134,217,728 B a rank
    # instead of 33,554,432, leaves the pool 100,663,296 B less: 409 blocks of 27,852,800 B instead of 413, a request
    # 179 blocks, int(409 / 179 x 262,144) = 598,977; the arithmetic in tests/unit/test_kv_ellm41.py)
    assert "598,977 tokens" in default["vllm_would_print"]
    before = llm.plan(spec, **dict(kw, runtime_version="0.19.1"))
    assert before["budget"] == 22_767_621_637


# --- the OOM advice: the share a log does not print ------------------------------------------------------------------------
def _share_flag(numbers):
    flags = llm.suggest_flags_from_log(numbers, "vllm")
    return next(f for f in flags if f["name"] == "--gpu-memory-utilization")


def test_advice_on_a_build_before_0_20_starts_from_090():
    # no KV room left (vLLM's "No available memory for the cache blocks") on 0.19.1: default 0.90, + 0.05 = 0.95
    f = _share_flag({"kv_available": 0, "runtime_version": "0.19.1"})
    assert f["value"] == "0.95"
    assert "vLLM 0.19.1's default 0.90" in f["reason"]


def test_advice_on_a_build_from_0_20_starts_from_092():
    # 0.24.0: default 0.92, + 0.05 = 0.97, capped at vLLM's MAX_UTIL here 0.95; the reason names 0.92, not 0.90
    f = _share_flag({"kv_available": -1 * GiB, "runtime_version": "0.24.0"})
    assert f["value"] == "0.95"
    assert "vLLM 0.24.0's default 0.92" in f["reason"] and "0.90" not in f["reason"]
    # triage's runtime_version fact is a {runtime: version} map; 0.20.1 already carries the change
    f = _share_flag({"kv_available": 0, "runtime_version": {"vllm": "0.20.1"}})
    assert "vLLM 0.20.1's default 0.92" in f["reason"]
    f = _share_flag({"kv_available": 0, "vllm_version": "0.19.0"})
    assert "vLLM 0.19.0's default 0.90" in f["reason"]


def test_advice_without_a_build_says_what_it_assumes():
    # no share and no version: kv's reading of no --runtime-version (the newest), 0.92, said as an assumption
    f = _share_flag({"kv_available": 0})
    assert f["value"] == "0.95"
    assert "assumed vLLM's default 0.92" in f["reason"] and "0.90 before" in f["reason"]


def test_advice_with_the_logs_own_share_keeps_it():
    # a printed share is the run's own: 0.85 + 0.05 = 0.90, and no default is named
    f = _share_flag({"kv_available": 0, "gpu_memory_utilization": 0.85, "runtime_version": "0.24.0"})
    assert f["value"] == "0.90"
    assert "default" not in f["reason"]
