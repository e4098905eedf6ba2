"""Triage after batches 79 and 80 (first sight recorded: 2/6, 2/4). Lines written from the runtimes' own message formats
(cudarc's DriverError Debug form inside a Rust program's error context, text-embeddings-inference's backend start, TensorRT-LLM's
KV-cache sizing line); numbers from the reports named at each test or made up; expected values by hand."""
GiB, MiB = 1 << 30, 1 << 20
from support.triage_event import top

DRV = 'DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")'


def test_cache_alloc_context_around_a_driver_error_is_the_kv_cache():
    """A server's own context "cache alloc failed" around cudarc's error (avifenesh/memra's c=16 serve run): a session's KV
    cache, allocated after the weights were resident."""
    cause, conf, ev = top('HTTP 400: {"error":"cache alloc failed: ' + DRV.replace('"', '\\"') + '"}\n')
    assert ev["runtime"] == "candle" and cause == "kv-cache", ev["causes"]
    # the bare driver error names no stage: no cause reads it as the cache
    cause, conf, _ = top(DRV + "\n")
    assert "kv-cache" not in conf and cause != "kv-cache", conf


def test_backend_that_could_not_start_is_the_weights():
    """text-embeddings-inference loads the weights when it starts its Candle backend (its warm-up comes later): out of
    memory there is the weights on the card."""
    cause, _, ev = top("Could not start Candle backend: DriverError(CUDA_ERROR_OUT_OF_MEMORY)\n")
    assert cause == "weights-exceed-vram", ev["causes"]


def test_forward_pass_named_in_the_caused_by_chain_is_activations():
    """anyhow prints the contexts above the root error (ericflo/kiln's 131072-token prefill): the prefill's working tensors."""
    chain = ("Caused by:\n    0: paged prefill forward pass failed\n    1: gated deltanet layer 0 (linear attention, paged)\n"
             f"    2: {DRV}\n")
    cause, _, ev = top(chain)
    assert cause == "activations", ev["causes"]
    # a context said before an earlier failure belongs to that one, not to a later bare driver error (past scan.GAP lines:
    # a failure of its own)
    cause, conf, ev = top(chain + "INFO request 2 started\n" * 250 + "Error: " + DRV + "\n")
    assert cause != "activations", ev["causes"]


TRT = ("Memory usage when calculating max tokens in paged kv cache: total: 5.67 GiB, available: {avail} GiB\n"
       "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMalloc(ptr, n): out of memory\n")


def test_trtllm_kv_sizing_with_nothing_left_after_the_engine_is_the_weights():
    """igorwaw/web-selfhosting's TensorRT-LLM 1.2.1 notes: 0.03 GiB available of 5.67 GiB once a 5.3 GB engine was resident."""
    cause, _, ev = top(TRT.format(avail="0.03"))
    assert cause == "weights-exceed-vram", ev["causes"]
    assert (ev["numbers"].get("total"), ev["numbers"].get("free")) == (round(5.67 * GiB), round(0.03 * GiB)), ev["numbers"]
    # half the card left for the cache: the engine fits, the sizing line is no evidence for the weights
    _, conf, ev = top(TRT.format(avail="2.80"))
    assert "weights-exceed-vram" not in conf, ev["causes"]
    assert ev["numbers"].get("free") == round(2.80 * GiB), ev["numbers"]
    # a negative amount available (the engine alone over the card): the weights, with no free figure made up
    cause, _, ev = top(TRT.format(avail="-0.40"))
    assert cause == "weights-exceed-vram" and "free" not in ev["numbers"], (ev["causes"], ev["numbers"])


# the tail of a ComfyUI traceback as Comfy-Org/ComfyUI#13210 quotes it (path rewritten)
SYNC = ("    offload_stream.synchronize()\n"
        '  File "C:\\ComfyUI\\.venv\\Lib\\site-packages\\torch\\cuda\\streams.py", line 106, in synchronize\n'
        "    super().synchronize()\n"
        "torch.AcceleratorError: CUDA error: out of memory\n")


def test_out_of_memory_raised_in_a_synchronize_is_an_earlier_asynchronous_call():
    """A stream synchronize only waits for queued work: a CUDA out-of-memory raised there is an earlier asynchronous copy's
    or kernel's, reported late (no shortage a request there shows): other, over ComfyUI's pinned-RAM reading."""
    cause, _, ev = top(SYNC)
    assert cause == "other", ev["causes"]
    assert any("synchronize()" in e for c in ev["causes"] if c["id"] == "other" for e in c["evidence"]), ev["causes"]
    # the same error raised in a call that allocates (a tensor moved to the device) is not read so
    cause, _, ev = top(SYNC.replace("offload_stream.synchronize()", "x = x.to(device)").replace("in synchronize", "in _to")
                       .replace("super().synchronize()", "return t.to(device)"))
    assert cause != "other", ev["causes"]
