"""Triage after batches 88-90 (first sight recorded: 3/5, 0/2, 2/9). Lines written from the MLX servers' own load
pre-flight messages (mlx-serve's src/scheduler.zig wordings, MTPLX's preload check, oMLX's max-model-memory refusal), model
names and numbers made up, expected values by hand."""
from support.triage_event import top

# mlx-serve's current wording: the requirement (weights plus headroom) against what is available
SERVE_NEEDS = ("Insufficient memory to load model: needs ~41.2 GB free (35.0 GB of weights plus headroom for warmup buffers "
               "and a baseline KV cache) but only 22.4 GB is available. Close other models/apps (or wait for a prior mlx-serve "
               "to fully exit) and retry; pass --skip-mem-preflight to override.\n")
# its older wording: the raw weights against what is free
SERVE_OLD = "Insufficient memory to load model: weights ~18.5 GB but only 17.9 GB free. Close other models/apps\n"
MTPLX = ("RuntimeError: Gemma-5-27B cannot load inside the available Metal memory budget; at least 61.5 GiB resident plus "
         "16 GiB system headroom is required\n")
OMLX_CAP = ('Error: {"error":{"message":"Model \'Llama-4-Maverick-mxfp4\' (212.40GB) exceeds max-model-memory (48.00GB)",'
            '"type":"server_error","param":null,"code":null}}\n')
GIB, GB = 1 << 30, 1 << 30      # the MLX servers print GB; triage reads their GB as binary (text.size)
DEC_GB = 10**9                  # vllm-metal prints bytes / 1e9 as GB (cache_policy.py format_breakdown): decimal


def test_mlx_load_preflight_is_read_with_its_runtime_device_and_figures():
    """Each server's refusal is an event of its own (before: no out-of-memory error found in any of them): MLX on Metal,
    with the requirement and the figure it was compared with."""
    for text, numbers in ((SERVE_NEEDS, {"required": 41.2 * GB, "available": 22.4 * GB}),
                          (SERVE_OLD, {"required": 18.5 * GB, "free": 17.9 * GB}),
                          (MTPLX, {"required": 61.5 * GIB, "headroom": 16 * GIB}),  # the resident figure, its headroom
                          (OMLX_CAP, {"required": 212.40 * GB, "max_allowed": 48.00 * GB})):
        _, _, ev = top(text)
        assert ev["runtime"] == "mlx" and ev["device_kind"] == "metal", (ev["runtime"], ev["device_kind"])
        for k, v in numbers.items():
            assert abs(ev["numbers"][k] - v) < 0.01 * GIB, (k, ev["numbers"])


def test_load_preflight_within_twice_the_figure_is_the_guards_arithmetic():
    """The requirement adds the server's fixed headroom and the figure is what is free right now: a refusal whose weights are
    not far over it reads other (nothing was allocated), not the weights."""
    for text in (SERVE_NEEDS, SERVE_OLD, MTPLX):
        cause, scores, ev = top(text)
        assert cause == "other", ev["causes"]
        assert "pre-flight" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_load_preflight_with_the_weights_over_twice_the_figure_is_the_weights():
    """oMLX's cap refusal of a model whose weights are over four times its max-model-memory: the model is too large."""
    cause, scores, ev = top(OMLX_CAP)
    assert cause == "weights-exceed-vram", ev["causes"]
    # the same weights at 1.5x the cap: the guard's reading, not the weights
    cause, scores, ev = top(OMLX_CAP.replace("(48.00GB)", "(141.60GB)"))
    assert cause == "other", ev["causes"]
    # mlx-serve's wording, weights alone 2.5x what is available (35.0 GB against 14.0 GB)
    cause, scores, ev = top(SERVE_NEEDS.replace("22.4 GB is available", "14.0 GB is available"))
    assert cause == "weights-exceed-vram", ev["causes"]


# Ollama's server (2026: it runs a bundled llama-server) logs in Go's slog text form with the source file's base name; the
# runner's ggml lines follow (numbers made up)
OLLAMA_SLOG = ('time=2026-04-02T09:12:44.101Z level=INFO source=llama_server.go:612 msg="waiting for llama-server to become '
               'available" status="llm server loading model"\n'
               "load_tensors: offloaded 41/41 layers to GPU\n"
               "load_tensors:        CUDA0 model buffer size =  9120.33 MiB\n"
               "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: cudaMalloc failed: out of memory\n")


def test_ollama_named_by_its_slog_lines():
    """The server's own log line (level=, source=<file>.go:<line>, msg=) names Ollama as the runtime of the ggml failure
    under it; the same ggml lines alone stay llama.cpp, and a Go program's slog line with a full source path does not."""
    _, _, ev = top(OLLAMA_SLOG)
    assert ev["runtime"] == "ollama", ev["runtime"]
    ggml_only = OLLAMA_SLOG.split("\n", 1)[1]
    _, _, ev = top(ggml_only)
    assert ev["runtime"] == "llama.cpp", ev["runtime"]
    _, _, ev = top(OLLAMA_SLOG.replace("source=llama_server.go:612", "source=/home/u/src/app/main.go:612"))
    assert ev["runtime"] == "llama.cpp", ev["runtime"]
    # a Go wrapper of llama-server that shortens its source to the base name too (review21 finding 7): its file names are
    # not Ollama's (before: runtime ollama)
    for wrapper in ('level=INFO source=process.go:210 msg="starting llama-server" cmd="llama-server -m q.gguf"',
                    'level=WARN source=main.go:61 msg="llama-server exited"'):
        _, _, ev = top(OLLAMA_SLOG.replace(OLLAMA_SLOG.split("\n", 1)[0], "time=2026-04-02T09:12:44.101Z " + wrapper))
        assert ev["runtime"] == "llama.cpp", (wrapper, ev["runtime"])
    # Ollama's scheduler line marks it as before
    _, _, ev = top(OLLAMA_SLOG.replace("source=llama_server.go:612", "source=sched.go:449"))
    assert ev["runtime"] == "ollama", ev["runtime"]


def _metal_kv(model_gb, overhead_gb, limit=24.50, fraction=0.90):
    usable = round(limit * fraction, 2)
    budget = round(usable - model_gb - overhead_gb, 2)
    return ("$ vllm serve Qwen/Qwen3-8B --max-model-len 4096 --max-num-batched-tokens 4096\n"
            "ValueError: Paged attention: not enough Metal memory for KV cache.\n"
            f"metal_limit={limit:.2f}GB, fraction={fraction:.2f}, usable_metal={usable:.2f}GB,\n"
            f"model_memory={model_gb:.2f}GB, overhead={overhead_gb:.2f}GB, kv_budget={budget:.2f}GB.\n"
            "Mitigations: increase VLLM_METAL_MEMORY_FRACTION; use a smaller or more quantized model.\n")


def test_vllm_metal_kv_refusal_is_read_with_its_budget():
    """vllm-metal's refusal (before: no out-of-memory error found): vLLM on Metal, the limit, the fraction and the usable
    budget from the lines under it."""
    _, _, ev = top(_metal_kv(8.20, 23.10))
    assert ev["runtime"] == "vllm" and ev["device_kind"] == "metal", (ev["runtime"], ev["device_kind"])
    assert abs(ev["numbers"]["device_limit"] - 24.50 * DEC_GB) < 0.001 * DEC_GB, ev["numbers"]
    assert abs(ev["numbers"]["max_allowed"] - 22.05 * DEC_GB) < 0.001 * DEC_GB, ev["numbers"]
    assert ev["numbers"]["gpu_memory_utilization_ratio"] == 0.90, ev["numbers"]


# vllm-metal's message as its source raises it: one line, the breakdown after "for KV cache. " (cache_policy.py
# _validate_paged_attention_plan; the numbers are vllm-project/vllm-metal#585's, the corpus copy of which is rewrapped)
METAL_ONE_LINE = ("ValueError: Paged attention: not enough Metal memory for KV cache. metal_limit=40.20GB, fraction=0.92, "
                  "usable_metal=36.98GB, model_memory=13.76GB, overhead=37.86GB, kv_budget=-14.63GB. Mitigations: increase "
                  "VLLM_METAL_MEMORY_FRACTION; use a smaller or more quantized model.\n")


def test_vllm_metal_one_line_message_is_read_in_decimal_gb():
    """The one-line form gives the same budget as the rewrapped one (before: no numbers, "without numbers"), and each GB
    is 10**9 bytes: 40.20 GB is 37.44 GiB, not 40.20 GiB."""
    _, _, ev = top(METAL_ONE_LINE)
    assert ev["numbers"].get("device_limit") == 40_200_000_000, ev["numbers"]
    assert ev["numbers"].get("max_allowed") == 36_980_000_000, ev["numbers"]
    assert ev["numbers"].get("gpu_memory_utilization_ratio") == 0.92, ev["numbers"]
    assert "36.98 GiB" not in " ".join(ev["causes"][0]["evidence"]), ev["causes"][0]


def test_vllm_metal_overhead_over_the_whole_budget_is_the_measurement():
    """A profile-run overhead (23.10) over the whole usable budget (22.05) and over the weights (8.20): other, the profile's
    count; the same refusal with the weights the larger share (17.50 against 6.00) reads the weights."""
    cause, _, ev = top(_metal_kv(8.20, 23.10))
    assert cause == "other" and "profile" in ev["causes"][0]["evidence"][0], ev["causes"]
    cause, _, ev = top(_metal_kv(17.50, 6.00))
    assert cause == "weights-exceed-vram", ev["causes"]
    # an overhead larger than the weights but within the budget: the profile run's peak (review21 finding 4: before, the
    # fallback "an out-of-memory error without numbers" although the budget was read)
    cause, scores, ev = top(_metal_kv(6.00, 17.50))
    assert cause == "activations" and "--max-num-batched-tokens" in ev["causes"][0]["evidence"][0], ev["causes"]


IREE_HIP = ("RESOURCE_EXHAUSTED; HIP driver error 'hipErrorOutOfMemory' (2): out of memory; failed to allocate buffer of "
            "length 6442450944\n")


def test_iree_status_is_read_as_iree_not_a_pytorch_check():
    """IREE's runtime status (a HIP driver error inside it) is IREE's buffer allocation on the device the driver names,
    with its length: not PyTorch's CUDA check (before: runtime pytorch, no numbers, the pinned-host-memory reading)."""
    cause, scores, ev = top(IREE_HIP)
    assert ev["runtime"] == "iree" and ev["device_kind"] == "rocm", (ev["runtime"], ev["device_kind"])
    assert ev["numbers"].get("requested") == 6442450944, ev["numbers"]
    assert "pinned" not in " ".join(e for c in ev["causes"] for e in c["evidence"]).lower(), ev["causes"]
    _, _, ev = top(IREE_HIP.replace("HIP driver error 'hipErrorOutOfMemory'", "CUDA driver error 'CUDA_ERROR_OUT_OF_MEMORY'"))
    assert ev["runtime"] == "iree" and ev["device_kind"] == "cuda", (ev["runtime"], ev["device_kind"])


# a traceback through Fooocus's cloned ComfyUI backend (its launch.py clones ComfyUI into this folder), path made up
FOOOCUS_CLONE = ('  File "D:\\apps\\Fooocus\\repositories\\ComfyUI-from-StabilityAI-Official\\comfy\\model_management.py", line 412, in load_models_gpu\n'
                 "    real_model = model.patch_model()\n"
                 "RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough "
                 "memory: you tried to allocate 26214400 bytes.\n")


def test_fooocus_cloned_comfy_backend_is_a_pytorch_run():
    """comfy/ frames inside Fooocus's repositories/ComfyUI-from-StabilityAI-Official are Fooocus's script (the corpus labels
    Fooocus pytorch); the same frame in a ComfyUI folder stays comfyui."""
    _, _, ev = top(FOOOCUS_CLONE)
    assert ev["runtime"] == "pytorch", ev["runtime"]
    _, _, ev = top(FOOOCUS_CLONE.replace("Fooocus\\\\repositories\\\\ComfyUI-from-StabilityAI-Official", "ComfyUI")
                   .replace("Fooocus\\repositories\\ComfyUI-from-StabilityAI-Official", "ComfyUI"))
    assert ev["runtime"] == "comfyui", ev["runtime"]
