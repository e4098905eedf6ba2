"""Mechanisms tuned on batch 23 (benchmarks/data/llm_measured.json: vLLM 0.19.0 startups on H100 80 GB, one log per
row, llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs; those rows are regression rows now). Each
expected value is a number vLLM printed in the log named beside it (its "Total non KV cache memory ... torch peak
memory increase ... non-torch forward increase memory" debug line, "Model loading took", "GPU KV cache size"); the
comment gives the figure the mechanism's absence gives."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V, vllm_overheads as VO, vllm_pipeline as VP

GiB = 1 << 30
H100 = dict(vram=79.19 * GiB, gpu_memory_utilization=0.95, gpu_name="NVIDIA H100 80GB HBM3", runtime_version="0.19.0")


def _plan(model, **kw):
    s = llm.describe(model=model)
    return s, llm.plan(s, "vllm", ctx=kw.pop("ctx", 8192), **dict(H100, **kw))


@pytest.mark.parametrize("model, printed", [
    ("meta-llama/Llama-3.1-8B-Instruct", 1.89),   # meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192.log
    ("Qwen/Qwen3-8B", 2.21),                      # qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192.log
    ("google/gemma-2-9b-it", 3.65),               # google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log
    ("microsoft/phi-4", 1.52),                    # microsoft-phi-4--h100-80gb--tp1pp1dp1--8192.log
])
def test_triton_sampler_warmup_peak_at_1024_sequences(model, printed):
    # "torch peak memory increase" of the profile: the sampler's warm-up on 1024 rows of fp32 logits dominates;
    # 3 copies (the masking kernel's own figure) gave 1.47 / 1.74 / 2.93 / 1.15 GiB
    _, r = _plan(model)
    assert r["overhead"]["activation_profile"] / GiB == pytest.approx(printed, rel=0.05)


def test_non_torch_memory_on_hopper_and_with_nvls():
    # single H100, 0.19.0: "non-torch forward increase memory" 0.24-0.27 GiB (25 logs); 0.11's llm-d H100 rows 0.13-0.14
    assert 0.23 <= VO.non_torch((0, 19, 0), 1, "NVIDIA H100 80GB HBM3") / GiB <= 0.27
    assert 0.12 <= VO.non_torch((0, 11, 0), 1, "NVIDIA H100 80GB") / GiB <= 0.16
    # TP 2 / TP 4 on H100 SXM (NVSwitch: NCCL's NVLS buffers): 2.06-2.11 / 2.13-2.21 GiB printed (0.25 before)
    assert 2.0 <= VO.non_torch((0, 19, 0), 2, "NVIDIA H100 80GB HBM3") / GiB <= 2.25
    # no NVLS on an A100 or without an NVSwitch: the NCCL buffers alone (dennislee22's A100 TP rows)
    assert VO.non_torch((0, 10, 1), 2, "NVIDIA A100 80GB") / GiB < 0.5
    assert VO.non_torch((0, 19, 0), 2, "NVIDIA H100 PCIe") / GiB < 0.5
    assert VO.non_torch((0, 19, 0), 2, "NVIDIA H100 NVL") / GiB < 0.5


def test_qwen25_72b_tp2_small_pool_on_h100():
    # qwen-qwen2-5-72b-instruc--h100-80gb--tp2pp1dp1--8192.log: 'Available KV cache memory: 3.04 GiB',
    # 'GPU KV cache size: 19,920 tokens'; with 0.25 GiB of non-torch memory at TP 2: 36,208 tokens (+82 %)
    _, r = _plan("Qwen/Qwen2.5-72B-Instruct", tensor_parallel_size=2)
    assert r["kv_capacity_tokens"] == pytest.approx(19920, rel=0.06)
    assert r["kv_capacity_bytes"] / GiB == pytest.approx(3.04, abs=0.2)


def test_llama33_70b_fp8_tp4_pool():
    # fp8dyn-llama-3-3-70b--h100-80gb--tp4pp1dp1--8192.log: 'GPU KV cache size: 708,992 tokens' (+4.6 % before)
    _, r = _plan("RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", tensor_parallel_size=4)
    assert r["kv_capacity_tokens"] == pytest.approx(708992, rel=0.015)


def test_fp32_model_keeps_an_fp32_cache():
    # meta-llama-llama-3--h100-80gb--tp1pp1dp1--8192-dtf32.log (--dtype float32): 'Model loading took 29.98 GiB',
    # 'GPU KV cache size: 175,296 tokens' (--kv-cache-dtype auto is the model's dtype; an f16 cache gave 358,704)
    _, r = _plan("meta-llama/Llama-3.1-8B-Instruct", weights_dtype="fp32")
    assert r["kv_dtype"] == "f32"
    assert r["kv_capacity_tokens"] == pytest.approx(175296, rel=0.015)
    assert r["weights"] / GiB == pytest.approx(29.98, rel=0.01)
    # a cache type the user names still wins
    _, r8 = _plan("meta-llama/Llama-3.1-8B-Instruct", weights_dtype="fp32", kv_dtype="fp8")
    assert r8["kv_dtype"] == "fp8"


def test_pp_partition_follows_get_pp_indices():
    # vllm/distributed/utils.py get_pp_indices: n // pp each, the remainder to the stages before the last
    assert VP.pp_partition(32, 2) == [16, 16]
    assert VP.pp_partition(61, 4) == [15, 15, 16, 15]
    assert VP.pp_partition(62, 4) == [15, 16, 16, 15]
    assert VP.pp_partition(48, 2, "16,32") == [16, 32]           # VLLM_PP_LAYER_PARTITION (vllm#34076)
    with pytest.raises(UserError):
        VP.pp_partition(48, 2, "16,30")


@pytest.mark.parametrize("pp, weights, available, tokens", [
    (2, 7.51, 66.54, 1075312),   # meta-llama-llama-3-1-8b---h100-80gb--tp1pp2dp1--8192.log (Worker_PP0)
    (4, 4.26, 69.80, 2257264),   # meta-llama-llama-3-1-8b---h100-80gb--tp1pp4dp1--8192.log
])
def test_pipeline_parallel_stages(pp, weights, available, tokens):
    # the whole model on one GPU gave 14.96 GiB and 481,232 tokens for both
    _, r = _plan("meta-llama/Llama-3.1-8B-Instruct", pipeline_parallel_size=pp)
    assert r["weights"] / GiB == pytest.approx(weights, rel=0.015)          # stage 0, as rank 0 prints it
    # stage 0 does not sample (its profile peak is the forward alone: 1.1 GiB printed, not the sampler's 1.89)
    assert r["kv_capacity_bytes"] / GiB == pytest.approx(available, abs=0.4)
    assert r["kv_capacity_tokens"] == pytest.approx(tokens, rel=0.005)      # the smallest stage's blocks
    assert len(r["pp_stages"]) == pp
    assert any("--pipeline-parallel-size" in f["text"] for f in r["flags"])


def test_pipeline_parallel_request_check_by_version():
    # vLLM 0.12-0.15 checked one request against each stage with the whole model's bytes per token (vllm#32105,
    # vllm#34076: "24.0 GiB KV cache is needed ... available 3.18 GiB" for 48 layers split 16 + 32); 0.16 (PR #33698)
    # checks each stage's own layers. Llama-3.1-8B at 131072 tokens on two 24 GiB cards: 8 GiB of cache per stage
    # fits, 16 GiB for the whole model does not
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    kw = dict(ctx=131072, vram=23.5 * GiB, gpu_memory_utilization=0.9, pipeline_parallel_size=2,
              max_num_seqs=64, max_num_batched_tokens=2048)
    assert llm.plan(s, "vllm", runtime_version="0.19.0", **kw)["fits_as_requested"]
    assert not llm.plan(s, "vllm", runtime_version="0.15.2", **kw)["fits_as_requested"]
    with pytest.raises(UserError):
        llm.plan(s, "llama.cpp", ctx=4096, pipeline_parallel_size=2)


def test_hybrid_manager_layer_groups():
    # kv_cache_utils._get_kv_cache_groups_uniform_page_size: groups of the rarer kind's count, padded
    assert llm.llm_spec and V  # modules loaded
    from gpu_garden.memory.llm.cache import vllm_hybrid_groups
    assert vllm_hybrid_groups(llm.describe(model="google/gemma-3-27b-it")) == (10, 7)   # 10 full + 52 sliding
    assert vllm_hybrid_groups(llm.describe(model="google/gemma-3-4b-it")) == (5, 7)     # 5 full + 29 sliding
    assert vllm_hybrid_groups(llm.describe(model="google/gemma-3-12b-it")) == (8, 6)
    assert vllm_hybrid_groups(llm.describe(model="openai/gpt-oss-20b")) == (12, 2)
    assert vllm_hybrid_groups(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")) is None


@pytest.mark.parametrize("model, available, printed", [
    ("google/gemma-3-27b-it", 19.53, 36560),   # google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log (41,280 unpadded)
    ("google/gemma-3-4b-it", 62.51, 468144),   # google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192.log (481,952 unpadded)
])
def test_hybrid_tokens_from_the_printed_memory(model, available, printed):
    s = llm.describe(model=model)
    lo = llm.vllm_kv_tokens(s, (available - 0.005) * GiB)
    hi = llm.vllm_kv_tokens(s, (available + 0.005) * GiB)
    assert lo <= printed <= hi


@pytest.mark.parametrize("kw", [
    dict(pipeline_parallel_size=2, pp_layer_partition=5),
    dict(pipeline_parallel_size=2, pp_layer_partition="a,b"),
    dict(pipeline_parallel_size=2, pp_layer_partition=[16, 15]),
    dict(pipeline_parallel_size="2"),
    dict(pipeline_parallel_size=0),
    dict(pipeline_parallel_size=33),          # more stages than Llama-3.1-8B's 32 layers
    dict(pp_layer_partition="16,16"),         # a partition without pipeline parallelism
])
def test_bad_pipeline_settings_are_clear_errors(kw):
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    with pytest.raises(UserError):
        llm.plan(s, "vllm", ctx=4096, **kw)


def test_hybrid_concurrency_counts_whole_groups():
    # vLLM's concurrency: the pool over one request's blocks in every group (kv_cache_utils
    # get_max_concurrency_for_kv_cache_config). Gemma-3-27B at 32768 tokens on an H100 (8192 batched tokens): one
    # group of its 10 full layers holds 32768 cells, six groups of 10 sliding layers (52 + 8 padding) the 1024-token
    # window plus the batch, 9232 cells; a layer's token is 16 KV heads x 128 x 2 x 2 bytes. At 8192 tokens the
    # printed 4.46x is the padded pool's 36,560 tokens / 8192 (google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log)
    _, r = _plan("google/gemma-3-27b-it", ctx=32768)
    per_layer_token = 16 * 128 * 2 * 2
    request = 10 * (1 * 32768 + 6 * 9232) * per_layer_token
    assert r["concurrency"] == pytest.approx(r["kv_capacity_bytes"] / request, rel=0.01)


@pytest.mark.parametrize("model, kw, printed", [
    ("Qwen/Qwen3-30B-A3B", {}, 2.68),                      # qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192.log
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", {}, 1.93),       # deepseek-ai-deepseek-v2---h100-80gb--tp1pp1dp1--8192.log
    ("openai/gpt-oss-20b", {"tensor_parallel_size": 2}, 2.87),  # MXFP4 experts: other kernels, no held workspace
])
def test_moe_workspace_held_through_the_sampler_warmup(model, kw, printed):
    # "torch peak memory increase": the sampler's 3.85 copies plus the fused-MoE workspace the WorkspaceManager keeps
    # (8192 tokens x top-k x (max(I, hidden) + max(2I, hidden)) x 2 bytes); the sampler alone gave 2.23 / 1.50 GiB
    _, r = _plan(model, **kw)
    assert r["overhead"]["activation_profile"] / GiB == pytest.approx(printed, rel=0.04)
