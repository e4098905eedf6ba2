"""Triage after batches 93-94 (round 52). Lines written from PyTorch's XPU/CUDA out-of-memory message with nothing
allocated (intel/torch-xpu-ops#3157's form) and Ollama's HTTP 500 body quoting the runner's ggml allocator lines
(ollama/ollama's "process has terminated" wrapper); cards, sizes and models made up, expected values by hand."""
from support.triage_event import top

GIB = 1 << 30


def torch_new(device, req, total, free):
    return (f"torch.OutOfMemoryError: {device} out of memory. Tried to allocate {req} GiB. GPU 0 has a total capacity of "
            f"{total} GiB of which {free} GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes "
            "is reserved by PyTorch but unallocated. See documentation for Memory Management\n")


def test_first_request_larger_than_the_whole_card_is_one_working_tensor():
    """Nothing allocated and one 24 GiB request on a 15.70 GiB card: no model's layer is one tensor larger than the card
    it is placed on, so the weights' nothing-allocated row stays out and the 50%-of-the-card tensor row leads."""
    cause, scores, ev = top(torch_new("CUDA", "24.00", "15.70", "14.90"))
    assert ev["numbers"]["requested"] == 24 * GIB, ev["numbers"]
    assert cause == "activations", ev["causes"]
    assert "weights-exceed-vram" not in scores, scores


def test_first_request_within_the_card_with_nothing_allocated_is_still_the_load():
    """The boundary: a first request of 9.00 GiB on the same card (57%), nothing allocated, still reads the model load."""
    cause, scores, ev = top(torch_new("CUDA", "9.00", "15.70", "14.90"))
    assert cause == "weights-exceed-vram", ev["causes"]


OLLAMA_500 = ("Error: 500 Internal Server Error: llama runner process has terminated: exit status 2: "
              "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 6174015488 "
              "alloc_tensor_range: failed to allocate CUDA_Host buffer of size 6174015488 "
              "llama_model_load: error loading model: unable to allocate CUDA_Host buffer\n")


def test_ollama_terminated_wrapper_reads_the_quoted_allocator_size():
    """The wrapper's quoted runner line carries the refused size; before, the event had no figures."""
    cause, _, ev = top(OLLAMA_500)
    assert (ev["kind"], ev["runtime"]) == ("ollama.runner", "ollama"), (ev["kind"], ev["runtime"])
    assert ev["numbers"].get("requested") == 6174015488, ev["numbers"]
    assert cause == "host-ram", ev["causes"]
