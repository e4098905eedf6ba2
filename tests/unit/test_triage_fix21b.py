"""Triage after review21 (session 21's code review): malformed figures are a miss, never an exception. Lines written from
the runtimes' own wordings with one figure made malformed ("0..99", "8..7 GiB", "1..2 MiB"): a truncated or garbled log
line must not cost the whole report its triage (ComfyUI's oom_build catches the exception and loses every event)."""
import pytest

from gpu_garden.memory.triage import engine
from support.triage_event import top

DS4_HEAD = "ds4: GLM memory guard refused ctx=1 before GLM graph allocation\n"


def test_ds4_guard_with_a_malformed_fraction_or_size_is_read_without_it():
    """ds4's guard lines with "fraction 0..99" or "model map: 8..7 GiB" (before: ValueError out of triage): the refusal is
    still found, the malformed figure is not read and nothing is computed from it."""
    _, _, ev = top(DS4_HEAD + "ds4:   required model+graph: 92.10 GiB; guard budget: 80.00 GiB (base 256.00 GiB, "
                              "fraction 0..99, reserve 32.00 GiB, transient 0.00 GiB)\n")
    assert ev["kind"] == "ds4.memory_guard" and "guard_room" not in ev, ev
    _, _, ev = top(DS4_HEAD + "ds4:   model map: 8..7 GiB\n")
    assert ev["kind"] == "ds4.memory_guard" and "weights" not in ev, ev


OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.99 GiB of "
       "which 1.00 GiB is free.\n")


@pytest.mark.parametrize("line", [
    # error lines: each recogniser's pattern takes the figure, parse_size refuses it
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1..2 MiB on device 0: cudaMalloc failed: out of memory",
    "Error: model requires more system memory (1..2 GiB) than is available (3 GiB)",
    "ggml_metal_buffer_alloc: error: failed to allocate buffer, size =  1..5 MiB",
    "RuntimeError: Invalid buffer size: 1..2 GiB",
    "Error in memory profiling. Initial free memory 1..2 GiB, current free memory 3.0 GiB",
    # fact lines before a real error: the fact is not stated, the error is still read
    "INFO Available KV cache memory: 1..2 GiB",
    "load_tensors: CUDA0 model buffer size = 1..2 MiB",
    "llama_kv_cache: CUDA0 KV buffer size = 1..2 MiB",
    "the rest of the memory reserved for KV Cache is 1..2 GiB",
])
def test_a_malformed_figure_never_raises(line):
    res = engine.triage_text(line + "\n" + OOM)
    assert res["found"] and res["events"][-1]["numbers"].get("requested") == 2 << 30, res["events"][-1]


# IREE's status as its Vulkan HAL makes it (iree/hal/drivers/vulkan/util/libvulkan.c: "[symbol] VkResult", code
# RESOURCE_EXHAUSTED) and as iree/modules/hal/module.c annotates it; the length is iree-org/iree#20518's
IREE_VK = ("RESOURCE_EXHAUSTED; [vkAllocateMemory] VK_ERROR_OUT_OF_DEVICE_MEMORY; failed to allocate buffer of length "
           "34638106880\n")
IREE_NO_DRIVER = "RESOURCE_EXHAUSTED; failed to allocate buffer of length 34638106880\n"


def test_iree_vulkan_status_is_iree_on_vulkan_not_ggml():
    """review21 finding 8: the VkResult in IREE's status was taken by ggml's Vulkan pattern (runtime llama.cpp, "device
    allocation failed while loading the model")."""
    _, _, ev = top(IREE_VK)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("iree.alloc", "iree", "vulkan"), ev
    assert ev["numbers"].get("requested") == 34638106880, ev["numbers"]


def test_iree_status_without_a_driver_is_not_read_as_larger_than_a_card():
    """No HAL driver named: the memory that refused is not known (a CPU HAL's buffer is the host's), so the row of one
    request larger than most cards does not fire (before: activations, "larger than any card")."""
    cause, _, ev = top(IREE_NO_DRIVER)
    assert cause != "activations", ev["causes"]
    assert not any("larger than" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_the_one_large_request_row_says_most_cards_not_any():
    """The row fires at 16 GiB with no card numbers; cards hold up to 192 GB, so "larger than any card" was false."""
    _, _, ev = top(IREE_VK)
    text = " ".join(e for c in ev["causes"] for e in c["evidence"])
    assert "larger than most cards hold" in text and "larger than any card" not in text, ev["causes"]


def test_mtplx_requirement_is_resident_plus_its_headroom():
    """review21 finding 9: MTPLX requires the resident figure plus the headroom it names (61.5 + 16 GiB); since fix21c
    (review21b finding 6) `required` is the printed resident figure and the headroom its own number, summed in the
    evidence (test_triage_fix21c)."""
    _, _, ev = top("RuntimeError: Gemma-5-27B cannot load inside the available Metal memory budget; at least 61.5 GiB "
                   "resident plus 16 GiB system headroom is required\n")
    assert ev["numbers"]["required"] + ev["numbers"]["headroom"] == int(77.5 * (1 << 30)), ev["numbers"]
    assert "77.50 GiB" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_preflight_weights_row_states_the_factor_the_predicate_uses(monkeypatch):
    """review21 finding 11: the evidence's factor is formatted from predicates.PREFLIGHT_WEIGHTS_OVER, not typed."""
    from gpu_garden.memory.triage import predicates
    text = ('Error: {"error":{"message":"Model \'Llama-4-Maverick-mxfp4\' (212.40GB) exceeds max-model-memory (48.00GB)"}}\n')
    cause, _, ev = top(text)
    assert cause == "weights-exceed-vram" and "more than 2 times" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    monkeypatch.setattr(predicates, "PREFLIGHT_WEIGHTS_OVER", 4.0)
    cause, _, ev = top(text)
    assert cause == "weights-exceed-vram" and "more than 4 times" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_vllm_metal_profile_row_names_the_batch_before_retained_buffers():
    """review21 finding 3: an overhead past the whole budget may be the profile's real peak (the budget is a fraction of
    a soft working-set figure), so the evidence names --max-num-batched-tokens first and retained buffers as the other
    reading, not "a run that finished inside that budget did not need it all at once"."""
    text = ("ValueError: Paged attention: not enough Metal memory for KV cache. metal_limit=40.20GB, fraction=0.92, "
            "usable_metal=36.98GB, model_memory=13.76GB, overhead=37.86GB, kv_budget=-14.63GB.\n")
    cause, _, ev = top(text)
    evidence = ev["causes"][0]["evidence"][0]
    assert cause == "other" and "did not need it all at once" not in evidence, ev["causes"][0]
    assert evidence.index("--max-num-batched-tokens") < evidence.index("retained buffers"), evidence
