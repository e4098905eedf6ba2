"""Triage after the second code review of round 19 (fix19c). Lines written from the runtimes' own message formats (cudarc's
DriverError Debug form in an anyhow chain, PyTorch's CUDA and MPS errors); numbers made up; expected values by hand."""
import pytest

GiB, MiB = 1 << 30, 1 << 20
from support.triage_event import top

DRV = 'DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")'
TORCH_DRV = "RuntimeError: CUDA error: out of memory\n"


def test_stage_said_reads_only_a_cudarc_error_chain():
    """A runtime's context names the stage only on cudarc's own error chain: never around PyTorch's driver error, never an
    unrelated line said earlier."""
    base, conf0, _ = top(TORCH_DRV)
    for earlier in ("WARN request 17: prefill failed (client disconnected), dropped\n", "disk prompt cache allocation failed\n",
                    "Could not start the backend\n"):
        cause, conf, ev = top(earlier + TORCH_DRV)
        assert (cause, conf) == (base, conf0), (earlier, ev["causes"])
    # PyTorch's driver error wrapped on one line by a context that names a pass: still PyTorch's, not a cudarc chain
    cause, conf, ev = top("RuntimeError: forward pass failed: CUDA error: out of memory\n")
    assert (cause, conf) == (base, conf0), ev["causes"]
    # a context line a few lines above a cudarc error but not on its chain (no "Caused by:" numbering joins them)
    cause, conf, ev = top("WARN prefill failed for request 3\nINFO retrying\nError: " + DRV + "\n")
    assert "activations" not in conf or conf["activations"] < 0.5, ev["causes"]
    # on the chain: anyhow's "Error: <top>", a blank line, "Caused by:", then one unnumbered cause
    cause, _, ev = top("Error: paged prefill forward pass failed\n\nCaused by:\n    " + DRV + "\n")
    assert cause == "activations", ev["causes"]
    # numbered causes: the context is the chain's entry the numbering places above the root error
    cause, _, ev = top("Error: serve failed\n\nCaused by:\n    0: cache alloc failed\n    1: layer 3\n    2: " + DRV + "\n")
    assert cause == "kv-cache", ev["causes"]
    # the same entry whose numbering does not lead to this error (another chain's) is not read
    cause, conf, ev = top("    0: cache alloc failed\nINFO request 4\n    1: " + DRV + "\n")
    assert cause != "kv-cache", ev["causes"]


def test_backend_start_without_a_backend_name():
    """"Could not start backend: DriverError(...)" (no backend named) is the backend's start, as with a name."""
    cause, _, ev = top("Could not start backend: " + DRV + "\n")
    assert cause == "weights-exceed-vram", ev["causes"]


def _triage(text):
    from gpu_garden.memory.triage import engine
    return engine.triage_text(text)


@pytest.mark.parametrize("text", [
    "to avoid MPS backend out of memory: set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0\n",
    "to avoid MPS backend out of memory (set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to lift the limit)\n",
    "Tip: if you see MPS backend out of memory, lower the batch size.\n",
])
def test_advice_naming_mps_message_is_no_oom_whatever_follows_its_words(text):
    res = _triage(text)
    assert not res["found"], res["events"]


@pytest.mark.parametrize("text, shown, absent", [
    ("RuntimeError: MPS backend out of memory\n", "no figures printed", "0 B"),
    ("torch.OutOfMemoryError: MPS backend out of memory\n", "no figures printed", "0 B"),
    ("Prompt failed: MPS backend out of memory (MPS allocated: 8.23 GiB ... max allowed: 8.00 GiB)\n",
     "MPS 8.23 GiB, limit 8.00 GiB", "other allocations"),
])
def test_mps_message_by_its_form_renders_only_printed_figures(text, shown, absent):
    """PyTorch's MPSAllocator message at a line's start or after an exception's type, or cut inside its figures: MPS's; the
    evidence names the figures it printed and no figure it did not (no "other allocations 0 B")."""
    res = _triage(text)
    assert res["found"] and res["events"][-1]["device_kind"] == "mps", res["events"]
    ev = [e for c in res["events"][-1]["causes"] for e in c["evidence"]]
    assert any(shown in e for e in ev) and not any(absent in e for e in ev), ev


TRT = ("Memory usage when calculating max tokens in paged kv cache: total: 5.67 GiB, available: {avail} GiB\n"
       "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMalloc(ptr, n): out of memory\n")


def test_trtllm_kv_sizing_names_other_processes_as_the_runner_up():
    """'available' is cudaMemGetInfo's free with the engine resident: other processes' memory is missing from it too. With
    no share printed, the weights lead but other-process is second, and neither is confident."""
    for avail in ("0.03", "-0.40"):
        res = _triage(TRT.format(avail=avail))
        ids = [c["id"] for c in res["events"][-1]["causes"]]
        conf = {c["id"]: c["confidence"] for c in res["events"][-1]["causes"]}
        assert ids[:2] == ["weights-exceed-vram", "other-process"] and conf["weights-exceed-vram"] < 0.7, conf
    # the host measured the others at the failure (the panel's snapshot): that measure speaks for them, not this row
    snap = {"devices": [{"index": 0, "name": "RTX 3050", "backend": "cuda", "total": round(5.67 * GiB), "free": 0,
                         "other_processes": 4 * GiB, "torch_reserved": 0}], "host_ram": {}, "sampled_at": 0.0}
    from gpu_garden.memory.triage import engine
    ev = engine.triage_text(TRT.format(avail="0.03"), {"snapshot": snap, "platform": "linux"})["events"][-1]
    other = next(c for c in ev["causes"] if c["id"] == "other-process")
    assert not any("TensorRT" in e for e in other["evidence"]), other


# the tail of a ComfyUI traceback as Comfy-Org/ComfyUI#13210 quotes it (path rewritten)
SYNC = ("    offload_stream.synchronize()\n"
        '  File "C:\\ComfyUI\\.venv\\Lib\\site-packages\\torch\\cuda\\streams.py", line 106, in synchronize\n'
        "    super().synchronize()\n"
        "torch.AcceleratorError: CUDA error: out of memory\n")


@pytest.mark.parametrize("named", ["PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync\n",
                                   "Device: cuda:0 NVIDIA GeForce RTX 4060 : cudaMallocAsync\n"])
def test_oom_in_a_synchronize_under_cudamallocasync_is_not_read_as_a_late_report(named):
    """cudaMallocAsync's allocations are queued on the stream: a real shortage surfaces at the next synchronize, so the
    'raised in a wait' reading (other) does not hold where the log names that allocator."""
    _, _, ev = top(SYNC)
    assert any("synchronize()" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
    _, _, ev = top(named + SYNC)
    assert not any("synchronize()" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
