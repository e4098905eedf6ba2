"""Review 13a's findings on the triage changes since f149366 (tfix14): each test fails on the code before its fix.
Lines modelled on the runtimes' own messages (llama.cpp ggml-backend/llama-model-loader, vLLM V1 gpu_worker, LM Studio);
numbers made up, expected figures by hand."""
from gpu_garden.memory.triage import engine, servers
from support.triage_event import LLAMA_KV_OOM


def test_ggml_pinned_host_buffers_of_every_backend_are_system_ram():
    # ggml-cuda/ggml-hip/ggml-vulkan/ggml-sycl name their pinned host buffer type "<backend>_Host"
    # (review18b #3: ggml_buf gives the backend and whether the buffer is host RAM, one lookup; was ggml_buf_kind -> "cpu")
    for name, kind in (("CUDA_Host", "cuda"), ("ROCm_Host", "rocm"), ("Vulkan_Host", "vulkan"), ("SYCL_Host", "xpu"),
                       ("CUDA0_Host", "cuda")):
        assert servers.ggml_buf(name) == (kind, True), name
    assert [servers.ggml_buf(n) for n in ("ROCm0", "Vulkan0", "SYCL0", "CUDA0")] == \
        [("rocm", False), ("vulkan", False), ("xpu", False), ("cuda", False)]


VK_MAX = ("ggml_vulkan: 0 = AMD Radeon RX 7900 XTX (RADV NAVI31) | uma: 0 | fp16: 1\n"
          "Validation Error: [ VUID-VkBufferCreateInfo-size-06409 ] | MessageID = 0x5e2d4e3f | vkCreateBuffer(): "
          "pCreateInfo->size (4294967296) is larger than the maximum allowed buffer size "
          "VkPhysicalDeviceMaintenance4Properties.maxBufferSize (2147483648).\n"
          "load_tensors: ok\n"
          "ggml_vulkan: Device memory allocation of size 4294967296 failed.\n"
          "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
          "llama_model_load: error loading model: unable to allocate Vulkan0 buffer\n")


def test_vulkan_driver_line_and_the_ggml_failure_after_it_are_one_incident():
    r = engine.triage_text(VK_MAX)
    assert r["count"] == 1 and r["events"][0]["kind"] == "vulkan.max_buffer"


LLAMA = LLAMA_KV_OOM.replace("{params}", "7.62")


def _sf(log):
    ev = engine.triage_text(log)["events"][-1]
    return next((e for c in ev["causes"] for e in c["evidence"] if e.startswith("should fit:")), None)


def test_llamacpp_full_offload_verdict_and_ngl99_does_not_hide_a_partial_offload():
    # Qwen2.5-7B Q4_K_M: 4168.09 + 292.36 MiB = 4.4 GiB of weights, 28 x 2 x 4 x 128 x 2 B x 8192 = 0.4 GiB KV on 22.5 GiB
    assert _sf(LLAMA.format(off=29)).startswith("should fit: 4.4 GiB of weights (+ 0.4 GiB KV")
    # -ngl 99 asks for every layer; the log says 20 of 29 went: a split, no verdict
    assert _sf("main: llama-server -m q.gguf -c 8192 -ngl 99\n" + LLAMA.format(off=20)) is None


VLLM = """INFO 03-02 10:11:12 [api_server.py:1043] vLLM API server version 0.9.2
INFO 03-02 10:11:20 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-7B-Instruct', \
speculative_config=None, tokenizer='Qwen/Qwen2.5-7B-Instruct', dtype={dtype}, max_seq_len=8192, load_format=auto
INFO 03-02 10:11:25 [gpu_model_runner.py:1329] Starting to load model Qwen/Qwen2.5-7B-Instruct...
{after}ERROR 03-02 10:11:41 [core.py:586] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has \
a total capacity of 79.19 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has 78.67 GiB \
memory in use. Of the allocated memory 77.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but \
unallocated.
"""


def test_vllm_no_verdict_once_the_kv_cache_is_allocated_or_graphs_are_captured():
    # Qwen2.5-7B bf16: 7,615,616,512 x 2 B = 14.2 GiB on an 80 GB card: fits at load
    assert _sf(VLLM.format(dtype="torch.bfloat16", after="")).startswith("should fit: 14.2 GiB of weights")
    for after in ("INFO 03-02 10:11:35 [gpu_worker.py:227] Available KV cache memory: 55.11 GiB\n",
                  "INFO 03-02 10:11:36 [kv_cache_utils.py:716] GPU KV cache size: 1,032,000 tokens\n",
                  "INFO 03-02 10:11:37 [gpu_model_runner.py:1681] Capturing CUDA graph shapes: 50%\n"):
        assert _sf(VLLM.format(dtype="torch.bfloat16", after=after)) is None, after


def test_vllm_float32_weights_give_no_verdict():
    # float32: 7.6 B x 4 B = 28.4 GiB, not the 14.2 GiB the plan sizes at 2 bytes
    assert _sf(VLLM.format(dtype="torch.float32", after="")) is None
    assert _sf(VLLM.format(dtype="torch.float16", after="")).startswith("should fit: 14.2 GiB")
    assert _sf(VLLM.format(dtype="torch.bfloat16, kv_cache_dtype=fp8", after="")).startswith("should fit: 14.2 GiB")


TWO = ("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - 1008 MiB free\n"
       "llama_model_load_from_file_impl: using device CUDA1 (NVIDIA GeForce RTX 4090) - 23008 MiB free\n")


def test_llamacpp_on_two_cards_the_failing_one_or_no_verdict():
    one = "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free\n"
    log = LLAMA.format(off=29).replace(one, TWO)
    assert _sf(log) is None                          # device 0 failed: 1008 MiB free, 4.8 GiB does not fit there
    assert _sf(log.replace("on device 0", "on device 1")).endswith("is likely") and " on 22.5 GiB " in _sf(
        log.replace("on device 0", "on device 1"))   # device 1: 23008 MiB = 22.5 GiB free
    assert _sf(log.replace(" on device 0", "")) is None   # the failing card not named: no verdict


AFTER = """build: 4069 (a1b2c3d4) with cc (GCC) 13.3.0 for x86_64-linux-gnu
llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free
llama_model_loader: - kv   2:                               general.name str              = Qwen2.5 7B Instruct
print_info: file type   = Q4_K - Medium
print_info: model params     = 7.62 B
load_tensors: offloaded 29/29 layers to GPU
main: server is listening on http://127.0.0.1:8080
"""


def test_a_model_loaded_after_the_failure_is_not_the_one_that_failed():
    # a 72B fails to load (its name and size printed before), then the user loads a 7B that works: not "should fit: 4.4 GiB"
    big = LLAMA.format(off=29).replace("Qwen2.5 7B", "Qwen2.5 72B").replace("7.62 B", "72.71 B").replace("/29 ", "/81 ") \
        .replace("29/", "81/").replace("4168.09", "41680.09")
    assert _sf(big) is None and _sf(big + AFTER) is None
    # the same 7B failing twice: the second failure reads the load lines printed after the first
    seven = LLAMA.format(off=29)
    assert _sf(seven + "\n" * 300 + seven).startswith("should fit: 4.4 GiB")


def test_llamacpp_ubatch_and_the_failed_request_count():
    # -ub 8192: compute buffer ~7.7 GiB; printed 4168.09 MiB weights + 448 MiB KV + the 7872 MiB that failed = 12488 MiB,
    # over 80 % of 11800 MiB free: a real shortage, no verdict
    card = LLAMA.format(off=29).replace("RTX 4090) - 23008", "RTX 4070 SUPER) - 11800")
    log = ("main: llama-server -m q.gguf -c 8192 -ub 8192 -b 8192 -ngl 99\n" + card).replace(
        "allocating 448.00 MiB", "allocating 7872.00 MiB")
    assert _sf(log) is None
    assert _sf(card).startswith("should fit: 4.4 GiB")             # default ubatch, 448 MiB failing: 6.1 GiB of 11.5
    # no -ub on the command line, but 4168.09 MiB printed + 7872 MiB failing is over 80 % of 11800 MiB: no verdict
    assert _sf(card.replace("allocating 448.00 MiB", "allocating 7872.00 MiB")) is None
    # the calculator alone (the failed request not printed as a size) also sees -ub 8192: 13.3 GiB > 80 % of 11.5 GiB
    assert _sf(log.replace("allocating 7872.00 MiB on device 0: cudaMalloc failed: out of memory\n", "")) is None


def test_the_calculator_is_asked_once_per_load_not_once_per_failure(monkeypatch):
    from gpu_garden.memory.llm import kv
    calls = []
    describe, plan = kv.describe, kv.plan
    monkeypatch.setattr(kv, "describe", lambda **k: calls.append("d") or describe(**k))
    monkeypatch.setattr(kv, "plan", lambda *a, **k: calls.append("p") or plan(*a, **k))
    one = VLLM.format(dtype="torch.bfloat16", after="")
    r = engine.triage_text("".join(one.replace("1.02 GiB", f"1.0{i} GiB") + "\n" * 300 for i in range(3)))
    assert r["count"] == 3 and all(any(e.startswith("should fit:") for c in ev["causes"] for e in c["evidence"])
                                   for ev in r["events"])
    assert calls == ["d", "p"]


def test_pip_lines_are_not_read_for_the_load_facts(monkeypatch):
    # pip's own lines hold "version" and "build" (pip 23's upgrade notice, a wheel build): none is a start-up line
    from gpu_garden.memory.triage import facts, lines
    read = []
    apply = facts.apply
    monkeypatch.setattr(facts, "apply", lambda scan, n, text, window=False: read.append(text) or apply(scan, n, text, window))
    pip = ("  Building wheel for llama-cpp-python (pyproject.toml) ... done\n"
           "[notice] A new release of pip is available: 23.0.1 -> 24.0; you are using pip version 23.0.1\n") * 500
    engine.triage_text(pip + "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free\n")
    assert not [t for t in read if "pip" in t]
    assert b"ollama run" in lines.LOAD_KEYS and b"build: " in lines.LOAD_KEYS     # the start-up lines are still read


def test_an_apps_guardrail_names_the_engine_the_log_names():
    # LM Studio's load guardrail (lmstudio.guardrail) in front of its MLX engine: mlx, not its usual llama.cpp
    guard = ("Error: Model loading was stopped due to insufficient system resources. Under the current settings, this model "
             "requires approximately 18.50 GB of memory.\n")
    mlx = "[LM Studio] Loading model mlx-community/Qwen3-30B-A3B-4bit with mlx-engine (MLX) on Apple M2 Max, macOS 15.3\n"
    assert engine.triage_text(mlx + guard)["events"][-1]["runtime"] == "mlx"
    assert engine.triage_text(guard)["events"][-1]["runtime"] == "llama.cpp"


FLAT = ("ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory "
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4403.49 MiB on device 0: cudaMalloc failed: out of memory "
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n")


def test_a_pinned_memory_warning_flattened_onto_a_failure_line_hides_not_the_failure():
    assert engine.triage_text(FLAT)["count"] == 1
    # the warning alone (CUDA's and Vulkan's): ggml goes on with pageable memory, no failure
    assert engine.triage_text(FLAT.split(" ggml_backend")[0] + "\n")["count"] == 0
    assert engine.triage_text("ggml_vulkan: Failed to allocate pinned memory: vk::Device::allocateMemory: "
                              "ErrorOutOfDeviceMemory\n")["count"] == 0


def test_the_vulkan_pinned_warnings_quoted_error_is_skipped_across_a_chunk_boundary():
    # ggml-vulkan before 2024 printed e.what() on the line after the warning; here that line starts the scan's second 1 MiB chunk
    pin, what = "ggml_vulkan: Failed to allocate pinned memory.\n", "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
    pre = (1 << 20) - len(pin)
    log = ("x" * 99 + "\n") * (pre // 100) + "y" * (pre % 100 - 1) + "\n" + pin + what + "done\n"
    assert engine.triage_text(log)["count"] == 0
    assert engine.triage_text(pin + what)["count"] == 0 and engine.triage_text(what)["count"] == 1
