"""kv-accuracy round 63 (task ellm41, batch 69 after first sight)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.cache import norm_kv
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes import vllm as V
from gpu_garden.memory.units import GiB

Q27 = "Qwen/Qwen3.6-27B"


# --- vLLM's own share when none is given ------------------------------------------------------------------------------
# vllm-project/vllm#38284 ("[Startup][UX] Enable CUDAGraph memory profiling by default") put the CUDA-graph estimate
# inside the share and raised CacheConfig.gpu_memory_utilization's default from 0.9 to 0.92 in the same change
# (config/cache.py at 002f10e0: `Field(default=0.92, gt=0, le=1)`); its log line says "default since v0.21.0", but the
# first release that carries it is 0.20.0 (round 64, task ellm42: PyPI's vllm-0.20.0.tar.gz reads config/cache.py:66
# `Field(default=0.92, gt=0, le=1)` and envs.py's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default "1", so do 0.20.1
# and 0.20.2; vllm-0.19.1.tar.gz reads 0.9 and "0"). So kv's default follows its graphs_in_budget gate: 0.92 from
# 0.20.0, in the main-branch nightlies after it (0.20.1rc1.devN sorts after 0.20.0) and for the newest; 0.90 before.
@pytest.mark.parametrize("version,util", [
    (None, 0.92), ("0.21.0", 0.92), ("0.22.0", 0.92),
    ("0.20.2rc1.dev9+g01d4d1ad3", 0.92), ("0.20.2rc1.dev129+g1acd67a79", 0.92),
    ("0.20.1rc1.dev16+g7a1eb8ac2", 0.92), ("0.20.2", 0.92), ("0.20.1", 0.92), ("0.20.0", 0.92),
    ("0.19.1", 0.90), ("0.19.2rc1.dev134", 0.90), ("0.11.0", 0.90)])
def test_default_share_follows_the_graph_estimate(version, util):
    assert V.default_util(parse_version(version, "vllm")) == util


def _club3090(**kw):
    # club-3090's dual compose (batch 25 #295, batch 33 #487, batch 69 #74 and #142): Qwen3.6-27B AutoRound int4 at
    # TP 2 on two RTX 3090s (23.56 GiB as vLLM reports one), fp8 cache, MTP 3, 2 sequences, 8192 batched tokens
    return llm.plan(llm.describe(model=Q27), runtime="vllm", ctx=262144, weights_dtype="auto_round",
                    tensor_parallel_size=2, kv_dtype="fp8", max_num_seqs=2, max_num_batched_tokens=8192, mtp_tokens=3,
                    gpu_name="NVIDIA GeForce RTX 3090", prefix_caching=True, vram=23.56 * GiB, **kw)


def test_no_share_given_is_vllms_092_on_a_new_build():
    # 23.56 GiB = 25,297,357,373.44 bytes: ceil(0.92 x) = 23,273,568,784; ceil(0.90 x) = 22,767,621,637, 505,947,147
    # bytes less; nothing else in the plan depends on the share, so the pool differs by exactly that much
    default, given, old = _club3090(), _club3090(gpu_memory_utilization=0.92), _club3090(gpu_memory_utilization=0.90)
    assert default["budget"] == given["budget"] == 23_273_568_784
    assert old["budget"] == 22_767_621_637
    assert default["kv_capacity_bytes"] == given["kv_capacity_bytes"]
    assert default["kv_capacity_bytes"] - old["kv_capacity_bytes"] == 23_273_568_784 - 22_767_621_637 == 505_947_147
    assert default["vllm_would_print"] == given["vllm_would_print"]
    # kv's hybrid arithmetic at 0.92 is the figure the batch-69 #74 row scores at its explicit 0.92 (591,654 = 2.26x;
    # 606,299 = 2.31x since round 66 sizes Lorbus's MTP layers at AutoRound's bits: tests/unit/test_kv_ellm44.py;
    # 604,835 since task kv64: the profile's tower term at TP 2 is 1,874,873,457 B, the 16,384-token dummy's
    # 2,415,919,104 x 11,976 / 15,432, against 1,849,688,064 before, 25,185,393 B more;
    # 598,977 = 2.28x since task kv66/kv67: vLLM's MRotaryEmbedding tabulates 4 x max_position_embeddings, so each
    # rank's weights hold 262,144 x 4 x 64 rotary values (256 x partial_rotary_factor 0.25) x 2 B = 134,217,728 B of
    # cos/sin table instead of 262,144 x 64 x 2 B = 33,554,432, 100,663,296 B more; the pool 11,519,365,830 B (kv64's)
    # - 100,663,296 = 11,418,702,534 B. A block is 17 tensors (16 attention layers + the MTP layer) x a 1,638,400 B
    # page (1600 tokens x 2 KV heads x 256 x 2 (K, V) x 1 B of fp8; the DeltaNet page 24 x 128 x 128 x 4 B
    # + 5120 x (3 + 3) x 2 B = 1,634,304 B rounds up to it) = 27,852,800 B: 11,418,702,534 // 27,852,800 = 409 blocks
    # (413 before); a request takes ceil(262,144 / 1600) = 164 + 3 DeltaNet groups x (2 + 3 speculative) state
    # blocks = 179; int(409 / 179 x 262,144) = 598,977 tokens, 409 / 179 = 2.28x)
    assert default["kv_capacity_bytes"] == 11_519_365_830 - 100_663_296 == 11_418_702_534
    assert "598,977 tokens" in default["vllm_would_print"] and "2.28x" in default["vllm_would_print"]
    # the printed command proposes that share, not 0.90 (the figures are the command's)
    assert "--gpu-memory-utilization 0.92" in default["command"]
    # a build before the change keeps 0.90
    before = _club3090(runtime_version="0.19.1")
    assert before["budget"] == 22_767_621_637 and "--gpu-memory-utilization 0.90" in before["command"]


# --- vLLM's TurboQuant caches: named, explained, not sized --------------------------------------------------------------
# batch 69's club-3090 #69 and #73 rows pass --kv-cache-dtype turboquant_3bit_nc on Qwen3.6-27B (a hybrid of 16
# attention and 48 DeltaNet layers) through the Genesis patch set (P4 lets a hybrid model take it, P5 pads every page to
# the largest, P8 counts the tokens its own way). vLLM's presets (TQ_PRESETS): k8v4 = fp8 keys + 4-bit values, 4bit_nc
# = 4 + 4, k3v4_nc = 3 + 4, 3bit_nc = 3 + 3; for a head of 256, 3bit_nc packs ceil(256 x 3 / 8) + 2 = 98 key bytes and
# 96 + 4 = 100 value bytes, 198 a head and token (fp8: 512). Where those slots sit in a hybrid pool was not read.
@pytest.mark.parametrize("name,words", [
    ("turboquant_3bit_nc", "3-bit keys and 3-bit values"), ("turboquant_k8v4", "fp8 keys and 4-bit values"),
    ("turboquant_4bit_nc", "4-bit keys and 4-bit values"), ("turboquant_k3v4_nc", "3-bit keys and 4-bit values")])
def test_turboquant_is_named_and_refused(name, words):
    with pytest.raises(UserError) as e:
        norm_kv(name, "vllm")
    msg = str(e.value)
    assert "TurboQuant" in msg and words in msg and "does not size" in msg and "--kv-dtype fp8" in msg
    assert "unknown KV cache type" not in msg


def test_turboquant_row_is_refused_with_the_reason():
    with pytest.raises(UserError, match="vLLM's TurboQuant cache"):
        _club3090_tq()


def _club3090_tq():
    return llm.plan(llm.describe(model=Q27), runtime="vllm", ctx=262144, weights_dtype="auto_round",
                    tensor_parallel_size=2, kv_dtype="turboquant_3bit_nc", max_num_seqs=4, max_num_batched_tokens=4128,
                    mtp_tokens=3, gpu_memory_utilization=0.85, vram=23.56 * GiB)


def test_an_unknown_cache_type_is_still_unknown():
    with pytest.raises(UserError, match="unknown KV cache type 'q3_k'"):
        norm_kv("q3_k", "vllm")
