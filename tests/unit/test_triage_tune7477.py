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


def test_npu_message_with_a_shortened_bracket_reads_its_labelled_figures():
    """torch_npu prints PyTorch's <= 2.0 bracket; a quote that keeps only its labelled figures ("T total; A already allocated;
    F free") still gives the card, what PyTorch holds and what is free (batch-76's Ascend 910A case, figures by hand), and a
    1.40 GiB request with 741 MiB free on a card PyTorch fills from its traceback line is the pass's activations."""
    GiB, MiB = 1 << 30, 1 << 20
    res = engine.triage_text("RuntimeError: NPU out of memory. Tried to allocate 1.40 GiB (32.00 GiB total; 28.00 GiB already allocated; "
                             "741.02 MiB free)\n  File \"src/networks/backbone.py\", line 1498, in _body\n"
                             "    h = h + torch.exp(sigma).unsqueeze(-1) * h_in\n")
    ev = res["events"][-1]
    n = ev["numbers"]
    assert (ev["kind"], ev["device_kind"]) == ("torch.npu", "npu"), ev
    assert (n["total"], n["allocated"], n["free"]) == (32 * GiB, 28 * GiB, round(741.02 * MiB)), n
    assert "reserved" not in n, n       # the quote does not say it
    assert res["cause"] == "activations", ev["causes"]


def test_npu_full_bracket_still_reads_what_is_reserved():
    GiB = 1 << 30
    res = engine.triage_text("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity; 57.15 GiB "
                             "already allocated; 1.02 GiB free; 58.00 GiB reserved in total by PyTorch)\n")
    n = res["events"][-1]["numbers"]
    assert (n["total"], n["reserved"], res["events"][-1]["device_index"]) == (round(60.97 * GiB), 58 * GiB, 0), n
