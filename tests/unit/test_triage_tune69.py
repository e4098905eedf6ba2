"""Triage after batches 67-69 (first sight recorded). Lines written from the runtimes' own message formats (ggml-alloc's
alloc_tensor_range, vLLM's launch command, Ollama's scheduler, PyTorch's CUDA message), numbers made up or from the
reports named at each test, expected values by hand."""
from support.triage_event import top


def test_a_backends_pinned_host_buffer_refused_is_system_ram_on_that_backend():
    """ggml names a backend's pinned host buffer "<backend>_Host" (SYCL_Host, CUDA_Host, ROCm_Host, Vulkan_Host): a failure to
    allocate one is system RAM (a --no-mmap load staging the model in host memory, as in the SYCL DeepSeek README of
    chmihimabb-max/llama.cpp-2x-Arc-B70-Pro-SYCL-DeepSeekV4-Flash-731-Custom), on the device of that backend."""
    for name, dk in (("SYCL_Host", "xpu"), ("ROCm_Host", "rocm"), ("Vulkan_Host", "vulkan")):
        cause, _, ev = top(f"alloc_tensor_range: failed to allocate {name} buffer of size 96636764160\n")
        assert cause == "host-ram", (name, ev["causes"])
        assert ev["device_kind"] == dk, (name, ev["device_kind"])
    cause, _, ev = top("alloc_tensor_range: failed to allocate SYCL0 buffer of size 96636764160\n")
    assert cause != "host-ram" and ev["device_kind"] == "xpu", ev["causes"]      # the card's own buffer is not host RAM


def _vllm_cmd(model, extra=""):
    # the vllm-openai image's command line, then PyTorch's message cut after the free figure (the shape of the Mixtral
    # walkthrough in redhat-na-ssa/whitepaper-stt-evaluation-on-kubernetes, crawl/vllm README)
    return (f"$ docker run --gpus all -p 8000:8000 vllm/vllm-openai --model {model} --dtype=half "
            f"--gpu-memory-utilization 0.7{extra}\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total capacity of 14.56 GiB "
            "of which 602.81 MiB is free.\n")


def _over_card_evidence(ev):
    return [e for c in ev["causes"] for e in c["evidence"] if "weights alone" in e]


def test_vllm_model_named_on_the_command_line_whose_weights_outgrow_the_card():
    """Mixtral-8x7B in fp16 is 87 GiB of weights (46.7 B parameters x 2 bytes): on a 14.56 GiB card the weights cannot fit,
    whatever the failing request's size."""
    cause, _, ev = top(_vllm_cmd("mistralai/Mixtral-8x7B-Instruct-v0.1"))
    assert cause == "weights-exceed-vram", ev["causes"]
    assert any("87.00 GiB" in e and "14.56 GiB" in e for e in _over_card_evidence(ev)), ev["causes"]


def test_a_small_model_or_weights_split_over_cards_gives_no_over_card_reading():
    """Qwen2.5-1.5B (about 3 GiB in fp16) fits the card; Mixtral over 8 cards (tensor parallel) is 11 GiB a card."""
    assert not _over_card_evidence(top(_vllm_cmd("Qwen/Qwen2.5-1.5B-Instruct"))[2])
    assert not _over_card_evidence(top(_vllm_cmd("mistralai/Mixtral-8x7B-Instruct-v0.1", " --tensor-parallel-size 8"))[2])
    assert not _over_card_evidence(top(_vllm_cmd("mistralai/Mixtral-8x7B-Instruct-v0.1", " -tp 8"))[2])


# Ollama's runner refusing a weight buffer, then its scheduler's answer (server.go, sched.go), as in the Strix Halo
# write-up of MaxusAI/ryzen-ai-max-rocm-ollama-testbench docs/break-modes.md (mode 2); sizes made up
_OLLAMA_FAIL = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9216.00 MiB on device 0: cudaMalloc failed: out of memory\n"
                "alloc_tensor_range: failed to allocate ROCm0 buffer of size 9663676416\n")
_OLLAMA_EVICT = ('time=2026-05-01T10:00:02.000Z level=INFO source=server.go:1043 msg="model requires more gpu memory than is '
                 'currently available, evicting a model to make space" "loaded layers"=20\n'
                 'time=2026-05-01T10:00:02.001Z level=INFO source=sched.go:892 msg="no idle runners, picking the shortest '
                 'duration" runner_count=1 runner.size="40.0 GiB"\n')


def test_ollama_evicting_a_loaded_model_after_a_failed_load_names_the_resident_model():
    cause, _, ev = top(_OLLAMA_FAIL + _OLLAMA_EVICT)
    assert cause == "other-process" and ev["runtime"] == "ollama", (ev["runtime"], ev["causes"])
    # the scheduler's eviction before the load (room already made): no reading of this failure
    cause, conf, ev = top(_OLLAMA_EVICT + _OLLAMA_FAIL)
    assert "other-process" not in conf, ev["causes"]


def test_pytorchs_message_quoted_with_an_ellipsis_keeps_what_pytorch_holds():
    """A digest quoting PyTorch's message with "Of the allocated memory" elided and the last figure cut after "is reserved"
    (misaya-yang/hybrid-rope analysis/kkt_20260910/mine/T6_tools_a.md): the two figures are still PyTorch's allocated and
    reserved-but-unallocated memory; 5.50 GiB unallocated is over 3x the 1.50 GiB request: fragmentation."""
    log = ("torch.OutOfMemoryError\n"
           "Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 31.47 GiB of which 512.00 MiB is free... "
           "25.00 GiB is allocated by PyTorch, and 5.50 GiB is reserved\n")
    cause, _, ev = top(log)
    assert ev["numbers"]["allocated"] == 25 * 2**30 and ev["numbers"]["reserved_unallocated"] == int(5.5 * 2**30), ev["numbers"]
    assert cause == "fragmentation", ev["causes"]


def test_a_vulkan_pipeline_the_driver_could_not_create_is_no_allocation_of_the_model():
    """vk::Device::createComputePipeline: ErrorOutOfDeviceMemory (stable-diffusion.cpp's Vulkan build, leejet/stable-diffusion.cpp
    #1946, fixed in the runtime): creating a pipeline allocates none of the program's buffers: other. A device allocation
    failing in the same incident is still an allocation."""
    run = ("[DEBUG  ] ggml_runner.cpp:929  - clip executing segment 1/1: graph\n"
           "vk::Device::createComputePipeline: ErrorOutOfDeviceMemory\n")
    cause, _, ev = top(run)
    assert cause == "other" and ev["device_kind"] == "vulkan", ev["causes"]
    assert any("compute pipeline" in e for e in ev["causes"][0]["evidence"]), ev["causes"]
    cause, conf, ev = top("ggml_vulkan: Device memory allocation of size 4294967296 failed.\n"
                          "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n" + run)
    assert not any("compute pipeline" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def _ggml_fail(nbytes):
    return (f"ggml_backend_cuda_buffer_type_alloc_buffer: allocating {nbytes / 2**20:.2f} MiB on device 0: cudaMalloc failed: "
            f"out of memory\nalloc_tensor_range: failed to allocate CUDA0 buffer of size {nbytes}\n")


def test_a_device_buffer_an_exact_multiple_of_128_mib_is_the_kv_cache_shape():
    """Qwen2.5-14B's 30 offloaded layers x 32768 cells (num_ctx 8192 x 4 slots) x 8 KV heads x 128 x K,V x 2 bytes =
    4,026,531,840 bytes (San2k/aifood GPU_MEMORY_FIX.md); a weights buffer of about that size (norm vectors of KiBs in the
    sum) is no multiple of 128 MiB and stays the weights."""
    kv = 30 * 32768 * 8 * 128 * 2 * 2
    cause, _, ev = top(_ggml_fail(kv))
    assert cause == "kv-cache", ev["causes"]
    assert any("multiple of 128 MiB" in e for e in ev["causes"][0]["evidence"]), ev["causes"]
    cause, conf, ev = top(_ggml_fail(kv + 30 * 5120 * 4))
    assert cause == "weights-exceed-vram" and "kv-cache" not in conf, ev["causes"]
    cause, conf, ev = top(_ggml_fail(kv).replace("CUDA0 buffer", "CUDA_Host buffer"))
    assert cause == "host-ram", ev["causes"]         # the pinned host buffer of that size is RAM
