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


def test_ollama_relayed_runner_error_is_ollamas_and_rocm_error_is_ggmls_check():
    """Ollama's server relays a runner that failed mid-request as "an error was encountered while running the model: <the
    runner's error>" (the CLI prints it after "Error: 500"; ollama/ollama#16752 quotes it over ROCm). Its runners are ggml's
    and MLX's, never PyTorch: the CUDA/ROCm check under it is the runner's, not PyTorch's pinned-memory reading. ggml's HIP
    build spells its check "ROCm error:" (GGML_CUDA_NAME); PyTorch's HIP check says "HIP error:"."""
    for dev, dk in (("ROCm", "rocm"), ("CUDA", "cuda")):
        cause, _, ev = top(f"Error: 500 an error was encountered while running the model: {dev} error\n {dev} error: out of memory\n")
        assert ev["runtime"] == "ollama", (dev, ev["runtime"])
        assert ev["device_kind"] == dk, (dev, ev["device_kind"])
        assert cause == "other", (dev, ev["causes"])          # Ollama's own estimate placed the layers (its layer-plan row)
    cause, _, ev = top("ROCm error: out of memory\n")
    assert ev["runtime"] == "llama.cpp" and cause != "host-ram", (ev["runtime"], ev["causes"])
    # PyTorch's HIP check keeps its reading: a CUDA call outside the caching allocator, most often pinned host memory
    cause, _, ev = top("RuntimeError: HIP error: out of memory\n")
    assert ev["runtime"] == "pytorch" and cause == "host-ram", (ev["runtime"], ev["causes"])


def test_omlx_cluster_admission_is_the_nodes_free_host_memory():
    """oMLX's cluster mode refuses to start any rank when a node cannot admit its rank's share right now (jundot/omlx#3526: a
    node's limit follows the memory free on it, and MLX's memory is unified, the host's RAM; dropping the page cache fixed it):
    nothing of the model was allocated, the node's free host memory is short."""
    log = ("Model does not fit the current per-node memory limits; no ranks were started.\n"
           "rank 0 (node-a) needs 40.2 GiB but can admit 31.5 GiB right now\n")
    cause, _, ev = top(log)
    assert cause == "host-ram", ev["causes"]
    assert ev["runtime"] == "mlx", ev["runtime"]
    assert ev["guide"]["id"] == "mlx-cluster-admission", ev["guide"]["id"]      # not the PyTorch CPU allocator's guide
    assert abs(ev["numbers"]["required"] - 40.2 * 2**30) < 2 and ev["numbers"]["available"] == 31.5 * 2**30, ev["numbers"]
    cause, _, ev = top(log.splitlines()[0] + "\n")       # the summary line alone: the same reading, no numbers
    assert cause == "host-ram" and ev["runtime"] == "mlx", (ev["causes"], ev["runtime"])


def test_vllm_rs_scheduler_refusing_a_prompt_is_recognised_as_vllm_rs():
    """vLLM.rs's server answers a prompt its scheduler will not admit with "Remaining N kvcache tokens, but your prompt requires
    M new tokens, please request later!" (guoqingbao/xinfer#278); its tracing lines name its crate ("vllm_rs::")."""
    line = ("2026-01-02T03:04:05.000001Z ERROR vllm_rs::server::server: Stream generation failed: Remaining 2048 kvcache tokens, "
            "but your prompt requires 5120 new tokens, please request later!\n")
    cause, scores, ev = top(line)
    assert ev["runtime"] == "vllm-rs", ev["runtime"]
    assert ev["numbers"] == {"available_tokens": 2048, "requested_tokens": 5120}, ev["numbers"]
    # the cache's free tokens short of the prompt's: the KV cache first, the scheduler's own accounting the runner-up
    assert cause == "kv-cache" and "other" in scores, ev["causes"]
    assert ev["guide"]["id"] == "vllmrs-kv-admission", ev["guide"]["id"]
    # the message alone (no tracing prefix) is still vLLM.rs's own
    _, _, ev = top("Remaining 2048 kvcache tokens, but your prompt requires 5120 new tokens, please request later!\n")
    assert ev["runtime"] == "vllm-rs", ev["runtime"]
