"""Triage round 26 (batches 47-48, after first sight). Lines written from the runtimes' own formats:
ggml-alloc.c's graph allocator ("%s: not enough space in the buffer (needed %zu, largest block available %zu)" then
GGML_ASSERT, early 2024; "%s: not enough space in the buffer to allocate %zu bytes, largest block available %zu bytes"
then GGML_ABORT, later), not copies of corpus cases."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage import engine

CUDA_HEAD = ("ggml_init_cublas: found 1 CUDA devices:\n"
             "  Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9\n"
             "llm_load_tensors: offloaded 33/33 layers to GPU\n")
TALLOC_OLD = ("ggml_tallocr_alloc: not enough space in the buffer (needed 209715200, largest block available 201326592)\n"
              'GGML_ASSERT: ggml-alloc.c:114: !"not enough space in the buffer"\n')
TALLOC_DYN = ("ggml_dyn_tallocr_alloc: not enough space in the buffer to allocate 73400320 bytes, largest block available "
              "67108864 bytes\nggml-alloc.c:182: GGML_ABORT(graph allocation: failed to reserve memory)\n")


@pytest.mark.parametrize("log,req,avail", [(TALLOC_OLD, 209715200, 201326592), (CUDA_HEAD + TALLOC_OLD, 209715200, 201326592),
                                           (TALLOC_DYN, 73400320, 67108864)])
def test_the_graph_allocators_own_buffer_coming_up_short_is_a_sizing_bug(log, req, avail):
    res, ev = last_event(log)
    assert res["found"] and ev["kind"] == "ggml.ctx_pool" and ev["form"] == "tallocr", ev.get("kind")
    assert ev["numbers"] == {"requested": req, "available": avail}, ev["numbers"]
    assert res["cause"] == "other" and not res["uncertain"], ev["causes"][:2]
    assert ev["runtime"] == "llama.cpp" and ev["guide"]["id"] == "ggml-graph-allocator", (ev["runtime"], ev["guide"]["id"])
    assert "measure pass" in ev["guide"]["markdown"]


def test_the_device_comes_from_the_log_not_the_host_pool():
    _, ev = last_event(CUDA_HEAD + TALLOC_OLD)
    assert ev["device_kind"] == "cuda", ev["device_kind"]


def test_the_evidence_names_both_sizes():
    _, ev = last_event(TALLOC_OLD)
    why = " ".join(ev["causes"][0]["evidence"])
    assert "200.00 MiB" in why and "192.00 MiB" in why and "measure" in why, why


@pytest.mark.parametrize("line", [
    "warning: not enough space in the buffer for the header, flushing\n",
    "ggml_tallocr_alloc: not enough space in the buffer (needed many)\n",
])
def test_other_buffer_space_words_are_no_failure(line):
    assert not engine.triage_text(line)["found"]


def _hip(req_gib, total_gib=15.98, free_gib=9.5):
    # PyTorch 2.x's caching-allocator message (c10/cuda/CUDACachingAllocator.cpp), as a ROCm build prints it
    return (f"torch.OutOfMemoryError: HIP out of memory. Tried to allocate {req_gib:.2f} GiB. GPU 0 has a total capacity of "
            f"{total_gib:.2f} GiB of which {free_gib:.2f} GiB is free. Of the allocated memory 5.12 GiB is allocated by PyTorch, "
            "and 31.00 MiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize("ratio", [9, 12, 15])
def test_a_request_up_to_16x_the_card_is_a_real_tensor(ratio):
    # a full attention matrix without a fused kernel reaches 9-13x the card in the corpus (ROCm without flash SDPA, broken xformers)
    res, ev = last_event(_hip(ratio * 15.98))
    assert res["cause"] == "activations" and not res["uncertain"], ev["causes"][:2]


@pytest.mark.parametrize("ratio", [17, 24, 45])
def test_a_request_past_16x_the_card_stays_a_size_computed_wrong(ratio):
    res, ev = last_event(_hip(ratio * 15.98))
    assert res["cause"] == "other" and "no workload asks for" in " ".join(ev["causes"][0]["evidence"]), ev["causes"][:2]


VK_HEAD = ("ggml_vulkan: Found 1 Vulkan devices:\n"
           "ggml_vulkan: 0 = AMD Radeon RX 7800 XT (AMD proprietary driver) | uma: 0 | fp16: 1 | warp size: 64\n")
# vulkan-hpp throws vk::OutOfDeviceMemoryError with "<call>: ErrorOutOfDeviceMemory" as its what()
SUBMIT = ("terminate called after throwing an instance of 'vk::OutOfDeviceMemoryError'\n"
          "  what():  vk::Queue::submit: ErrorOutOfDeviceMemory\n")


def test_a_refused_queue_submission_is_not_an_allocation_while_loading():
    res, ev = last_event(VK_HEAD + "llama_perf_context_print: prompt eval time = 812.40 ms\n" + SUBMIT)
    assert ev["kind"] == "ggml.vulkan" and ev["device_kind"] == "vulkan", ev["kind"]
    assert res["cause"] == "other" and "weights-exceed-vram" not in [c["id"] for c in ev["causes"]], ev["causes"][:2]
    assert "resident" in " ".join(ev["causes"][0]["evidence"])


def test_a_refused_device_allocation_is_still_read_as_one():
    _, ev = last_event(VK_HEAD + "ggml_vulkan: Device memory allocation of size 2147483648 failed.\n"
                       "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert ev["causes"][0]["id"] == "weights-exceed-vram", ev["causes"][:2]


def _ollama(layers):
    # Ollama's server log around its llama.cpp runner (llama/llama.cpp's load_tensors, alloc_tensor_range, llama_kv_cache)
    return ('time=2026-05-02T09:14:03.112Z level=INFO source=server.go:211 msg="starting runner" cmd="ollama runner --port 40123"\n'
            f"load_tensors: offloaded {layers} layers to GPU\n"
            "alloc_tensor_range: failed to allocate CUDA0 buffer of size 805306368\n"
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n")


def test_ollama_partial_offload_then_kv_buffer_failing_names_the_estimate():
    res, ev = last_event(_ollama("20/41"))
    ids = [c["id"] for c in ev["causes"]]
    assert ids[:2] == ["other", "kv-cache"] and res["uncertain"], ev["causes"][:2]
    assert "20 of 41 layers" in " ".join(ev["causes"][0]["evidence"])


def test_ollama_full_offload_kv_buffer_failing_stays_the_context():
    res, ev = last_event(_ollama("41/41"))
    assert res["cause"] == "kv-cache", ev["causes"][:2]


def _offload(available, full):
    # Ollama's "offload to" line (llm/memory.go MemoryEstimate.LogValue): memory.available lists each GPU's free memory
    return ('time=2025-06-11T08:00:00.000Z level=INFO source=memory.go:326 msg="offload to cuda" layers.requested=-1 '
            f'layers.model=49 layers.offload=49 layers.split="25,24" memory.available="[{available}]" '
            f'memory.required.full="{full}" memory.required.partial="{full}" memory.required.kv="1.5 GiB" '
            'memory.required.allocations="[7.9 GiB 7.4 GiB]" memory.weights.total="12.1 GiB" memory.graph.full="676.0 MiB"\n'
            "alloc_tensor_range: failed to allocate CUDA1 buffer of size 4294967296\n")


@pytest.mark.parametrize("available", ["11.5 GiB 11.5 GiB", "11.5 GiB,11.5 GiB"])
def test_ollama_several_gpus_available_is_their_sum(available):
    # 15.3 GiB needed over two GPUs with 11.5 GiB free each: fits (the first GPU alone, 11.5, would not under FIT_SHARE)
    res, ev = last_event(_offload(available, "15.3 GiB"))
    assert res["cause"] == "other" and "23.00 GiB available" in " ".join(ev["causes"][0]["evidence"]), ev["causes"][:2]


def test_ollama_one_gpu_too_small_is_no_should_fit():
    res, ev = last_event(_offload("11.5 GiB", "15.3 GiB"))
    assert "should fit" not in " ".join(e for c in ev["causes"] for e in c["evidence"]), ev["causes"][:2]
