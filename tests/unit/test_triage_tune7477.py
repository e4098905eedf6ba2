"""Rules from tuning on unseen batches 74-77 (each test names the case whose log lines it is written from)."""
from gpu_garden.memory.triage import engine


def test_negative_kv_budget_alone_is_vllms_no_cache_blocks_failure():
    """vLLM v1's worker logs "Available KV cache memory: X GiB" and check_enough_kv_cache_memory raises "No available memory
    for the cache blocks" whenever X <= 0 (vllm-ascend's worker does the same): a quote that stops at the negative figure is
    that failure, with the weights the line before names (lines of batch-77's vllm-ascend Qwen3-14B case, #9372)."""
    res = engine.triage_text("Loading model weights took 27.5376 GB\nAvailable KV cache memory: -0.87 GiB\n")
    assert res["events"], "negative KV budget not recognised"
    ev = res["events"][-1]
    assert (ev["kind"], ev["runtime"]) == ("vllm.no_kv_blocks", "vllm"), ev
    assert res["cause"] == "weights-exceed-vram", ev["causes"]


def test_positive_kv_budget_is_no_failure():
    """The same line with a positive budget is vLLM's ordinary start-up: no out-of-memory."""
    res = engine.triage_text("Loading model weights took 27.5376 GB\nAvailable KV cache memory: 0.87 GiB\n")
    assert not res["events"], res["events"]
