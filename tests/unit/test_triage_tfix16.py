"""Review 15b's findings mended (tfix16). Lines written from the runtimes' own formats (Ollama's llm/memory.go "offload to"
line and its runner command, llama.cpp's load_tensors / ggml-vulkan / llama_kv_cache lines, PyTorch's CUDA OOM message,
nvidia-smi's NVML error, oMLX's scheduler lines), not copies of corpus cases or of the reviewer's logs."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage import engine


def _ollama(requested, fail):
    return (
        'time=2025-06-10T08:00:00.000Z level=INFO source=memory.go:356 msg="offload to cuda" '
        f'layers.requested={requested} layers.model=33 layers.offload=14 layers.split="" memory.available="[7.6 GiB]" '
        'memory.gpu_overhead="0 B" memory.required.full="12.4 GiB" memory.required.partial="7.3 GiB" '
        'memory.required.kv="4.0 GiB" memory.required.allocations="[7.3 GiB]"\n'
        'time=2025-06-10T08:00:00.100Z level=INFO source=server.go:405 msg="starting llama server" '
        'cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-ab12 --ctx-size 16384 --batch-size 512 '
        '--n-gpu-layers 14 --threads 6 --parallel 1 --port 39001"\n'
        "load_tensors: offloaded 14/33 layers to GPU\n"
        "load_tensors:        CUDA0 model buffer size =  3120.50 MiB\n"
        "load_tensors:   CPU_Mapped model buffer size =  4010.25 MiB\n"
        + fail +
        "llama_kv_cache_init: failed to allocate buffer for kv cache\n"
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n")


GPU_FAIL = "alloc_tensor_range: failed to allocate CUDA0 buffer of size 1879048192\n"
HOST_FAIL = "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 2415919104\n"
ESTIMATE_ROW = "by its own estimate"


def _evidence(ev):
    return " | ".join(e for c in ev["causes"] for e in c["evidence"])


def test_ollama_estimate_row_keeps_its_case_when_ollama_chose_the_split():
    res, ev = last_event(_ollama(-1, GPU_FAIL))
    assert res["cause"] == "other" and ESTIMATE_ROW in ev["causes"][0]["evidence"][0], ev["causes"][:2]


def test_ollama_estimate_row_is_not_said_of_a_split_the_user_chose():
    res, ev = last_event(_ollama(14, GPU_FAIL))
    assert res["cause"] == "kv-cache", ev["causes"][:2]
    assert ESTIMATE_ROW not in _evidence(ev), ev["causes"]


def test_ollama_estimate_row_is_not_said_of_a_host_kv_buffer():
    res, ev = last_event(_ollama(-1, HOST_FAIL))
    assert res["cause"] != "other", ev["causes"][:2]
    assert ESTIMATE_ROW not in _evidence(ev), ev["causes"]


VK_HEAD = ("ggml_vulkan: Found 1 Vulkan devices:\n"
           "ggml_vulkan: 0 = Intel(R) Arc(TM) A750 Graphics (Intel Corporation) | uma: 0 | fp16: 1 | warp size: 32\n")
SUBMIT = ("terminate called after throwing an instance of 'vk::OutOfDeviceMemoryError'\n"
          "  what():  vk::Queue::submit: ErrorOutOfDeviceMemory\n")


def test_a_failed_device_allocation_beside_a_submit_is_an_allocation():
    res, ev = last_event(VK_HEAD + "ggml_vulkan: Device memory allocation of size 3221225472 failed.\n"
                         "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n" + SUBMIT)
    assert res["cause"] != "other", ev["causes"][:2]
    assert "every buffer had been allocated" not in _evidence(ev), ev["causes"]


MODEL_BUFS = ("load_tensors: offloaded 29/29 layers to GPU\n"
              "load_tensors:      Vulkan0 model buffer size =  6211.40 MiB\n"
              "load_tensors:   CPU_Mapped model buffer size =   410.98 MiB\n")


def test_a_submit_while_weights_upload_is_the_submission_not_the_kv_cache():
    res, ev = last_event(VK_HEAD + MODEL_BUFS + SUBMIT)
    assert ev["causes"][0]["id"] == "other", ev["causes"][:2]
    assert "weights were uploaded" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


def test_a_submit_while_serving_is_the_submission_not_the_compute_buffer():
    res, ev = last_event(VK_HEAD + MODEL_BUFS + "llama_context: n_ctx         = 16384\n"
                         "llama_kv_cache_unified:    Vulkan0 KV buffer size =  1792.00 MiB\n"
                         "llama_context:    Vulkan0 compute buffer size =   296.00 MiB\n"
                         "slot update_slots: id  0 | task 3 | prompt processing progress, n_past = 1024, n_tokens = 1024\n"
                         + SUBMIT)
    assert ev["causes"][0]["id"] == "other", ev["causes"][:2]
    assert "every buffer had been allocated" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]
    assert "compute buffer failed" not in _evidence(ev), ev["causes"]


NUMBERED_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of "
                "15.99 GiB of which 1.20 GiB is free. Of the allocated memory 13.50 GiB is allocated by PyTorch, and "
                "800.00 MiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize("reason", ["Driver/library version mismatch", "Unknown Error"])
def test_nvml_does_not_outweigh_an_oom_with_the_drivers_numbers(reason):
    res, ev = last_event(f"Failed to initialize NVML: {reason}\n" + NUMBERED_OOM)
    assert res["cause"] == "activations", ev["causes"][:2]
    assert "NVML" not in _evidence(ev), ev["causes"]


@pytest.mark.parametrize("line", [
    "Prefill would require ~3.1.4 GB peak (current 20.0 GB + KV+SDPA 1.2.3 GB) but ceiling is 40.0 GB\n",
    "Prefill would require ~50.0 GB peak (current 20.0 GB + KV+SDPA ... GB) but ceiling is 40.0 GB\n",
    "Prefill force-stopped at 96 tokens: memory 4.2.1 GB exceeds ceiling 40 GB\n",
])
def test_omlx_lines_with_malformed_numbers_do_not_raise(line):
    res = engine.triage_text(line)          # parse_size raised ValueError here before
    assert not res["found"] or not res["events"][-1]["numbers"], res["events"][-1]["numbers"]


@pytest.mark.parametrize("text", [
    # the same class as oMLX's: a size pattern that took any run of digits and dots (vLLM's KV check, llama.cpp's
    # print_info, Ollama's inference compute line)
    "ValueError: To serve at least one request with the models's max seq len (8192), (2.1.0 GiB KV cache is needed, "
    "which is larger than the available KV cache memory (1.50 GiB).\n",
    "(3.0.1 GiB KV cache is needed, which is larger than the available KV cache memory (1.50 GiB)\n",
    "print_info: model params     = 7.6.1 B\nprint_info: model size       = 4.3.6 GiB\n"
    "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n",
    'level=INFO source=types.go:130 msg="inference compute" id=GPU-1 library=cuda total="11.6.2 GiB"\n'
    "alloc_tensor_range: failed to allocate CUDA0 buffer of size 1073741824\n",
])
def test_other_size_patterns_with_malformed_numbers_do_not_raise(text):
    engine.triage_text(text)                # parse_size / float raised ValueError here before


def test_omlx_well_formed_numbers_still_read():
    _, ev = last_event("Prefill force-stopped at 4096 tokens: memory 42.8GB exceeds ceiling 42.0GB\n")
    assert ev["kind"] == "mlx.ceiling" and ev["numbers"], ev
    _, ev = last_event("Prefill would require ~61.5 GB peak (current 33.0 GB + KV+SDPA 28.5 GB) but ceiling is 56.0 GB\n")
    assert ev.get("form") == "preflight" and ev["numbers"], ev


# --- review 15b 6-9 -----------------------------------------------------------------------------------------------

def test_a_real_attention_matrix_past_16x_a_small_card_is_the_tensor_not_a_driver_bug():
    # the UNet's cross-attention without a fused kernel at a large resolution: the n^2 score matrix (A1111's split attention)
    res, ev = last_event(
        '  File "/opt/sd-webui/modules/sd_hijack_optimizations.py", line 130, in split_cross_attention_forward\n'
        "    s1 = einsum('b i d, b j d -> b i j', q[:, i:end], k)\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 GiB (GPU 0; 4.00 GiB total capacity; "
        "2.10 GiB already allocated; 1.30 GiB free; 2.30 GiB reserved in total by PyTorch)\n")
    assert res["cause"] == "activations", ev["causes"][:2]
    assert "no workload asks for" not in _evidence(ev), ev["causes"]


def test_a_vae_attention_matrix_past_16x_is_the_decode():
    res, ev = last_event(
        '  File "/srv/ComfyUI/comfy/ldm/modules/diffusionmodules/model.py", line 260, in normal_attention\n'
        "    r1 = torch.bmm(q, k)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 GiB. GPU 0 has a total capacity of 5.60 GiB "
        "of which 3.50 GiB is free. Of the allocated memory 1.60 GiB is allocated by PyTorch, and 100.00 MiB is reserved "
        "by PyTorch but unallocated.\n")
    assert res["cause"] == "vae-decode", ev["causes"][:2]
    assert "no workload asks for" not in _evidence(ev), ev["causes"]


def test_a_request_past_16x_outside_attention_stays_a_size_computed_wrong():
    res, ev = last_event(
        '  File "/opt/app/render/__init__.py", line 88, in forward\n'
        "    out = _C.rasterize(*args)\n"
        "RuntimeError: CUDA out of memory. Tried to allocate 100.00 GiB. GPU 0 has a total capacity of 5.60 GiB of which "
        "3.50 GiB is free. Of the allocated memory 1.60 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch "
        "but unallocated.\n")
    assert res["cause"] == "other" and "no workload asks for" in ev["causes"][0]["evidence"][0], ev["causes"][:2]


def _offload(available, full, split="", requested=-1, what="cuda"):
    return ('time=2025-05-02T09:00:00.000Z level=INFO source=memory.go:326 msg="offload to ' + what + '" '
            f'layers.requested={requested} layers.model=41 layers.offload=41 layers.split="{split}" '
            f'memory.available="[{available}]" memory.gpu_overhead="0 B" memory.required.full="{full}" '
            f'memory.required.partial="{full}" memory.required.kv="1.2 GiB"\n')


OLLAMA_FAIL = "alloc_tensor_range: failed to allocate CUDA1 buffer of size 3221225472\n"


def test_ollama_zero_bytes_on_one_gpu_reads_this_loads_list():
    # Ollama's HumanBytes2 prints "0 B" under 1 KiB: the list still reads, as this load's (no earlier load's value)
    text = (_offload("15.0 GiB 15.0 GiB", "5.0 GiB", "20,21") + _offload("0 B 20.4 GiB", "19.0 GiB", "0,41") + OLLAMA_FAIL)
    res, ev = last_event(text)
    assert "should fit: Ollama" not in _evidence(ev), ev["causes"]           # 19.0 of 20.4 is no clear room (of 30.0 was)
    res, ev = last_event(_offload("15.0 GiB 15.0 GiB", "5.0 GiB", "20,21") + _offload("0 B 20.4 GiB", "12.0 GiB", "0,41")
                         + OLLAMA_FAIL)
    assert "needs 12.00 GiB of 20.40 GiB available" in _evidence(ev), ev["causes"]


def test_an_offload_line_whose_list_does_not_parse_keeps_no_earlier_value():
    text = (_offload("30.0 GiB", "6.0 GiB") + _offload("n/a", "19.5 GiB") + OLLAMA_FAIL)
    res, ev = last_event(text)
    assert "should fit: Ollama" not in _evidence(ev), ev["causes"]


def test_an_offload_to_cpu_line_is_not_gpu_memory():
    text = (_offload("30.0 GiB", "14.0 GiB", requested=0, what="cpu")
            + "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 4294967296\n"
              "alloc_tensor_range: failed to allocate CPU buffer of size 4294967296\n")
    res, ev = last_event(text)
    assert res["cause"] == "host-ram", ev["causes"][:2]
    assert "should fit" not in _evidence(ev), ev["causes"]


def test_the_calculator_takes_the_failing_gpus_own_entry_not_the_sum():
    # two 6 GiB cards: a 7B Q4_K_M at 8192 fits 12 GiB in all, not one 6 GiB card
    text = ('time=2025-05-02T08:59:00.000Z level=INFO source=routes.go:1259 msg="Listening on 127.0.0.1:11434 (version 0.6.8)"\n'
            + _offload("5.8 GiB 5.8 GiB", "7.1 GiB", "15,14") +
            "llama_model_loader: - kv   2:                               general.name str              = Qwen2.5 7B Instruct\n"
            "print_info: file type   = Q4_K - Medium\n"
            "load_tensors: offloaded 29/29 layers to GPU\n"
            "llama_context: n_ctx         = 8192\n"
            "alloc_tensor_range: failed to allocate CUDA1 buffer of size 234881024\n"
            "llama_kv_cache_unified: failed to allocate buffer for kv cache\n")
    res, ev = last_event(text)
    assert "by `gpu-garden kv`" not in _evidence(ev), ev["causes"]


MPS_HEAD = ("!!! Exception during processing !!! MPS backend out of memory (MPS allocated: 17.90 GB, other allocations: "
            "800.00 MB, max allowed: 18.13 GB).\n")


def test_an_mps_message_wrapped_before_its_request_reads_it_on_the_next_line():
    res, ev = last_event("Device: mps\n" + MPS_HEAD + "Tried to allocate 3.00 GB on private pool. Use "
                         "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause "
                         "system failure).\n")
    assert ev["numbers"].get("requested") == 3 * 2**30, ev["numbers"]


def test_an_mps_message_without_its_request_says_nothing_of_a_small_request():
    res, ev = last_event("Device: mps\n" + MPS_HEAD)
    assert "requested" not in ev["numbers"], ev["numbers"]
    assert "small request fails" not in _evidence(ev) and "0 B requested" not in _evidence(ev), ev["causes"]


# --- review 15b 10, and the two round-26 mutations that survived ----------------------------------------------------

TALLOC = ("ggml_dyn_tallocr_alloc: not enough space in the buffer to allocate 94371840 bytes, largest block available "
          "90177536 bytes\nggml-alloc.c:182: GGML_ABORT(graph allocation: failed to reserve memory)\n")


def test_the_graph_allocator_gets_its_own_guide_without_a_smaller_batch():
    res, ev = last_event("llama_context: n_ctx         = 8192\n" + TALLOC)
    assert ev["guide"]["id"] == "ggml-graph-allocator", ev["guide"]["id"]
    md = ev["guide"]["markdown"]
    assert "measure pass" in md and "-b 64" not in md and "--blasbatchsize" not in md, md
    assert "failed allocation" not in _evidence(ev), ev["causes"]      # nothing was allocated there


def test_the_fixed_context_pool_keeps_its_guide():
    _, ev = last_event("ggml_new_tensor_impl: not enough space in the scratch memory pool (needed 603979776, "
                       "available 536870912)\n")
    assert ev["guide"]["id"] == "ggml-fixed-pool" and "-b 64" in ev["guide"]["markdown"], ev["guide"]["id"]


def test_a_whisper_cpp_log_is_not_read_as_llama_cpp():
    res, ev = last_event("whisper_init_from_file_with_params_no_state: loading model from 'models/ggml-medium.bin'\n"
                         "whisper_backend_init: using CUDA backend\n" + TALLOC)
    assert ev["runtime"] == "whisper.cpp", ev["runtime"]


def test_no_layer_on_the_gpu_is_no_partial_offload():
    # round 26's row needs some layers on the GPU and not all: 0 of 33 is a CPU load (a `0 <=` bound would fire here)
    text = _ollama(-1, GPU_FAIL).replace("offloaded 14/33", "offloaded 0/33")
    res, ev = last_event(text)
    assert ESTIMATE_ROW not in _evidence(ev), ev["causes"]


def test_the_c_spelling_of_the_submit_call_is_a_submission_too():
    res, ev = last_event(VK_HEAD + "ggml_vulkan: vkQueueSubmit returned VK_ERROR_OUT_OF_DEVICE_MEMORY\n")
    assert ev["causes"][0]["id"] == "other" and "command submission" in ev["causes"][0]["evidence"][0], ev["causes"][:2]
