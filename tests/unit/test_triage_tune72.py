"""Triage after batch 72 (first sight recorded: 0/7). Lines written from the runtimes' own message formats (SGLang's
cuda_graph_runner.py exception, Ollama's server error relaying ggml's ROCm check), numbers and wording of the prose made up,
expected values by hand."""
from support.triage_event import top


def test_sglang_capture_failed_exception_is_graph_capture_on_sglang():
    """SGLang raises "Capture cuda graph failed: <the error>" from its CUDA-graph runner (sgl-project/sglang#38861 quotes it
    for a decode capture): the failure is the capture's, before any request, and the message is SGLang's own."""
    cause, _, ev = top("Exception: Capture cuda graph failed: CUDA out of memory.\n")
    assert cause == "graph-capture", ev["causes"]
    assert ev["runtime"] == "sglang", ev["runtime"]
    # the same PyTorch message without the capture's words is no capture
    cause, _, ev = top("Exception: CUDA out of memory.\n")
    assert cause != "graph-capture" and ev["runtime"] != "sglang", (ev["causes"], ev["runtime"])
