"""vLLM's start refusal when one request of --max-model-len needs more KV cache than the pool (plan_answer._vllm_kv_refusal,
report._refusal_line): V1 raises before it prints a pool line, naming the KV cache needed, the memory available and
"the estimated maximum model length"; V0 names the tokens its blocks hold. Expected values by hand in the comments."""
import json
from pathlib import Path

from gpu_garden.memory.llm import kv as K
from gpu_garden.memory.llm.report import format_plan

GiB = 2 ** 30
REPO = Path(__file__).resolve().parents[2]


def _plan(model, ctx, vram_gib, version=None):
    spec = K.describe(model=model)
    return K.plan(spec, runtime="vllm", ctx=ctx, vram=vram_gib * GiB, runtime_version=version)


def test_v1_refusal_names_the_need_the_pool_and_the_estimate():
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", 131072, 24)
    ref = r["vllm_refusal"]
    # Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 131,072 bytes a token; 131,072 tokens: 16 GiB
    assert ref["engine"] == "v1" and ref["needed_bytes"] == 16 * GiB
    assert ref["available_bytes"] == r["kv_capacity_bytes"] < 16 * GiB
    # full attention: the longest length whose 16-token blocks (2 MiB each over the 32 layers) fit the pool
    assert ref["estimated_max_len"] == r["kv_capacity_bytes"] // (16 * 131072) * 16
    text = format_plan(r)
    assert f"the estimated maximum model length is {ref['estimated_max_len']}\"" in text
    assert "needs 16.00 GiB of KV cache" in text
    # the available memory in GiB as vLLM prints it (its pool / 2**30), not in GB
    assert f"more than the available {ref['available_bytes'] / GiB:.2f} GiB" in text
    assert "vLLM would print" not in text  # it raises before its "GPU KV cache size" line


def test_v0_refusal_names_the_tokens_its_blocks_hold():
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", 131072, 24, "0.6.0")
    ref = r["vllm_refusal"]
    # V0's blocks: the pool's whole 2 MiB blocks (16 tokens of 131,072 bytes), 16 tokens each
    assert ref == {"engine": "v0", "tokens": r["kv_capacity_bytes"] // (16 * 131072) * 16}
    assert 0 < ref["tokens"] < 131072
    assert ("The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV "
            f"cache ({ref['tokens']})") in format_plan(r)


def test_a_request_that_fits_prints_the_pool_line_and_no_refusal():
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", 32768, 24)
    assert "vllm_refusal" not in r and r["concurrency"] >= 1
    assert "vLLM would print \"GPU KV cache size:" in format_plan(r)


def test_no_pool_at_all_is_not_this_refusal():
    # 16-bit weights of 14.96 GiB over an 8 GiB card: vLLM stops with no room for the cache, another message
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", 8192, 8)
    assert "vllm_refusal" not in r and r["kv_capacity_bytes"] <= 0
    text = format_plan(r)
    assert "does NOT fit: weights alone" in text and "vLLM refuses to start: one request" not in text


def test_a_reference_refusal_whose_pool_kv_reads_exactly():
    # vllm-solodba-r1-0528-qwen3-8b-3090-32k-refused (vLLM 0.9.1): printed 4.47 GiB available and "the estimated maximum
    # model length is 32560" = 2035 blocks of 16 tokens (Qwen3-8B: 36 layers x 8 KV heads x 128 x 2 x 2 bytes = 147,456
    # bytes a token, 2.25 MiB a block; 2035 blocks = 4.472 GiB, within the printed figure's rounding). kv's pool for the
    # row (its regression figures) gives the same estimate
    import sys
    sys.path.insert(0, str(REPO / "benchmarks"))
    import llm_score
    row = next(r for r in json.loads((REPO / "benchmarks/data/llm_measured.json").read_text())["rows"]
               if r["id"] == "vllm-solodba-r1-0528-qwen3-8b-3090-32k-refused")
    _, res = llm_score._plan(row)
    assert row["measured"]["estimated_max_len"] == 32560
    assert res["vllm_refusal"]["estimated_max_len"] == 32560


def test_a_fixed_pool_smaller_than_one_request_is_refused_before_it_is_allocated():
    # rev3 B3: --kv-cache-memory 12 on a 24 GiB card (12 GiB does not fit beside the weights and the rest) is still
    # refused by the KV check, which vLLM runs before it allocates the pool (get_kv_cache_configs, then
    # initialize_from_config). Need: 131,072 tokens x 128 KiB = 16 GiB; available: the fixed 12 GiB; estimate: 12 GiB /
    # 2 MiB a block (16 tokens x 128 KiB) = 6144 blocks x 16 = 98,304 tokens
    spec = K.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    r = K.plan(spec, runtime="vllm", ctx=131072, vram=24 * GiB, kv_cache_memory=12 * GiB)
    assert r["vllm_refusal"] == {"engine": "v1", "needed_bytes": 16 * GiB, "available_bytes": 12 * GiB,
                                 "estimated_max_len": 98304, "estimate_printed": "unknown"}
    assert "more than the available 12.00 GiB" in format_plan(r)


def test_v0_prints_its_blocks_line_then_the_refusal():
    # rev3 B2: V0 logs "# GPU blocks: N" (executor_base.initialize_cache) before raise_if_cache_size_invalid raises.
    # Llama-3.1-8B at 131,072 on 24 GiB, vLLM 0.6.0: 2585 blocks of 16 tokens = 41,360 tokens
    text = format_plan(_plan("meta-llama/Llama-3.1-8B-Instruct", 131072, 24, "0.6.0"))
    assert "vLLM prints \"# GPU blocks: 2585" in text and "then refuses to start" in text
    assert "stored in KV cache (41360)" in text
    assert text.index("# GPU blocks: 2585") < text.index("stored in KV cache (41360)")


def test_v0_under_pipeline_parallelism_divides_the_blocks_by_the_stages_from_0_8():
    # rev3 B2: from vllm#13873 (0.8.0) max_seq_len = 16 x (num_gpu_blocks // pp). Llama-3.1-8B, PP 2 on 12 GiB cards:
    # the engine's 2067 blocks (the smaller stage's) // 2 = 1033 x 16 = 16,528 on 0.8.2; 0.7.3 checks all 2067 x 16 = 33,072
    spec = K.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    for version, tokens in (("0.8.2", 16528), ("0.7.3", 33072)):
        r = K.plan(spec, runtime="vllm", ctx=131072, vram=12 * GiB, runtime_version=version, vllm_engine="v0",
                   pipeline_parallel_size=2)
        assert r["vllm_refusal"] == {"engine": "v0", "tokens": tokens}
        assert "# CUDA blocks: 2067" in format_plan(r)


def test_the_estimate_is_said_as_the_build_prints_it():
    # rev3 B6: vllm#16168 (0.8.4) added the estimate as a bare second f-string, so 0.8.4-0.9.0 print "Based on the
    # available memory," without the figure; vllm#18966 (0.9.1) prints it; 0.8.3 and older V1 builds print neither.
    # Llama-3.1-8B at 131,072 on 24 GiB: 0.8.4's pool 4.86 GiB holds 2490 blocks of 2 MiB = 39,840 tokens
    said = {}
    for v in ("0.8.3", "0.8.4", "0.9.1", None):
        r = _plan("meta-llama/Llama-3.1-8B-Instruct", 131072, 24, v)
        said[v] = (r["vllm_refusal"]["estimate_printed"], format_plan(r))
    assert said["0.8.4"][0] == "blank" and "it prints" not in said["0.8.4"][1]
    assert "this build prints \"Based on the available memory,\" without the figure" in said["0.8.4"][1]
    assert "it would be 39840)" in said["0.8.4"][1]
    assert said["0.8.3"][0] == "none"
    assert "estimated maximum model length" not in said["0.8.3"][1] and "Based on" not in said["0.8.3"][1]
    assert said["0.9.1"][0] == "figure" and "(vLLM 0.9.1 on" not in said["0.9.1"][1]
    assert "it prints \"the estimated maximum model length is " in said["0.9.1"][1]
    assert said[None][0] == "unknown" and "(vLLM 0.9.1 on; 0.8.4-0.9.0 print" in said[None][1]


def _pp2(vram_gib, version):
    spec = K.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    return K.plan(spec, runtime="vllm", ctx=131072, vram=vram_gib * GiB, runtime_version=version,
                  pipeline_parallel_size=2)


def test_pipeline_0_12_to_0_15_checks_the_whole_model_against_the_smallest_stage():
    # rev3 B1, reproducer 1: from 0.12 to 0.15 one check, min(available) against the whole model's KV. Llama-3.1-8B,
    # PP 2 on 24 GiB, 0.15.2: need 131,072 x 128 KiB = 16 GiB; available: stage 1's 13,790,642,014 B (12.84 GiB, the
    # smaller; stage 0 has 13.82 GiB); estimate 13,790,642,014 // 2 MiB (16 tokens x 128 KiB, all 32 layers) = 6575
    # blocks x 16 = 105,200, never above --max-model-len (131,072)
    r = _pp2(24, "0.15.2")
    ref = r["vllm_refusal"]
    assert ref["needed_bytes"] == 16 * GiB and ref["available_bytes"] == 13790642014
    assert ref["estimated_max_len"] == 105200
    assert "needs 16.00 GiB of KV cache, more than the available 12.84 GiB" in format_plan(r)


def test_pipeline_elsewhere_the_first_worker_short_of_memory_raises_with_its_own_figures():
    # rev3 B1, reproducer 2: 0.10.0 checks each worker in turn; worker 0 (16 layers: 16 x 8 x 128 x 2 x 2 = 64 KiB a
    # token, 8 GiB for 131,072) is short first, with its own 3,241,679,095 B (3.02 GiB) and its own estimate:
    # 3,241,679,095 // (16 x 64 KiB) = 3091 blocks x 16 = 49,456 (not stage 1's 2.04 GiB worth, 33,472)
    ref = _pp2(12, "0.10.0")["vllm_refusal"]
    assert ref == {"engine": "v1", "needed_bytes": 8 * GiB, "available_bytes": 3241679095, "estimated_max_len": 49456,
                   "estimate_printed": "figure", "stage": 0}


def test_a_sliding_model_before_the_hybrid_manager_needs_its_window_sized_check():
    # rev3 B5: 0.8.3-0.9.0 check a sliding layer by its window (SlidingWindowSpec.max_memory_usage_bytes), not the
    # full length. Mistral-7B-v0.1 (window 4096), 32,768 tokens, 0.8.5, 16 GiB at 0.93: cdiv(4095 + 2048 batched, 16) = 384
    # blocks + 1 = 385 a layer, x 32 layers x 64 KiB a block (16 x 8 KV heads x 128 x 2 x 2 bytes) = 807,403,520 B
    # (0.75 GiB; the full length would be 4.00 GiB); 0.8.5 prints no estimate's figure
    spec = K.describe(model="Mistral-7B-v0.1")
    r = K.plan(spec, runtime="vllm", ctx=32768, vram=16 * GiB, runtime_version="0.8.5", gpu_memory_utilization=0.93)
    ref = r["vllm_refusal"]
    assert ref["needed_bytes"] == 32 * 385 * 65536 and ref["estimate_printed"] == "blank"
    assert "needs 0.75 GiB of KV cache, more than the available 0.53 GiB" in format_plan(r)


def test_a_sliding_window_model_under_the_hybrid_manager_prints_its_estimate():
    # rev3 T1 (kills V2, no estimate for sliding models): gpt-oss-20b (12 full + 12 sliding layers of window 128, 8 KV
    # heads x 64: 16 x 8 x 64 x 2 x 2 = 32 KiB a page) at its 131,072 on 18 GiB, newest vLLM: pool 1,705,000,526 B =
    # 52,032 whole pages. A sliding layer needs cdiv(127 + 2 x 2048, 16) + 1 = 265 pages (two batches in flight, the
    # newest's: task dsv4d), a full one cdiv(n, 16): 12 x (4071 + 265) = 52,032 pages fit at n = 65,136 (4071 blocks),
    # 12 x 4337 do not at 65,137 (one batch, 137 pages, gave 67,184)
    spec = K.describe(model="gpt-oss-20b")
    r = K.plan(spec, runtime="vllm", vram=18 * GiB)
    ref = r["vllm_refusal"]
    assert r["ctx"] == 131072 and ref["available_bytes"] == 1705000526
    assert ref["estimated_max_len"] == 65136
    assert "the estimated maximum model length is 65136\"" in format_plan(r)


def test_the_largest_context_says_its_share_when_it_is_not_the_runs():
    # rev3 D4: DeepSeek-V2-Lite at 163,840 on 36 GiB (0.9.1) is refused at the run's 0.90 with an estimate of 73,088;
    # its "largest context" (f16 135,168) is at the search's --gpu-memory-utilization 0.95, and says so
    spec = K.describe(model="DeepSeek-V2-Lite")
    r = K.plan(spec, runtime="vllm", ctx=163840, vram=36 * GiB, runtime_version="0.9.1")
    assert r["vllm_refusal"]["estimated_max_len"] == 73088 and r["max_ctx_util"] == 0.95
    assert "largest context (--max-model-len, at --gpu-memory-utilization 0.95): f16 135,168" in format_plan(r)
    same = _plan("meta-llama/Llama-3.1-8B-Instruct", 32768, 24)
    assert "largest context (--max-model-len): " in format_plan(same) and "max_ctx_util" not in same


def test_a_padded_hybrid_takes_need_and_estimate_from_one_vllm_era():
    # rev3 B7: Gemma-3-4B (5 full + 29 sliding layers, window 1024, 4 KV heads x 256: a 16-token page is 64 KiB) at
    # 131,072 on 14 GiB. A full layer needs 8192 pages, a sliding one cdiv(1023 + 2048, 16) + 1 = 193 with one batch in
    # flight (0.11.0 below), cdiv(1023 + 2 x 2048, 16) + 1 = 321 with the newest's two (task dsv4d).
    # Since vllm#29431 (0.12) both count groups of 5 tensors, the 29 sliding layers padded to 6 groups (newest):
    # need (8192 + 6 x 321) x 5 x 64 KiB = 3,315,466,240 B; estimate: 2,816,407,913 B // 320 KiB = 8594 pages a tensor
    # set, less 1926 sliding = 6668 full blocks = 106,688 tokens. (The available bytes were 2,990,638,646 before kv59:
    # the profile's vision tower now encodes N copies of the largest image in one call, 174,230,733 B more peak.)
    # Before it (0.11.0) both are per layer: need (5 x 8192 + 29 x 193) x 64 KiB = 3,051,159,552 B; estimate:
    # 1,656,131,044 B // 64 KiB = 25,270 pages, less 5597 sliding = 19,673 / 5 = 3934 full blocks = 62,944 tokens
    spec = K.describe(model="Gemma-3-4B")
    new = K.plan(spec, runtime="vllm", ctx=131072, vram=14 * GiB)["vllm_refusal"]
    assert (new["needed_bytes"], new["available_bytes"], new["estimated_max_len"]) == (3315466240, 2816407913, 106688)
    old = K.plan(spec, runtime="vllm", ctx=131072, vram=14 * GiB, runtime_version="0.11.0")["vllm_refusal"]
    assert (old["needed_bytes"], old["available_bytes"], old["estimated_max_len"]) == (3051159552, 1656131044, 62944)
