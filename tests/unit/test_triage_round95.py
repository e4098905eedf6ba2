"""Triage round 95 (task tune95: batches 408, 409, 411-415 and 417-420 after first sight), written from the runtimes' own message
formats:
- llama.cpp's decode with no room in its KV cache for a batch ("decode: failed to find a memory slot for batch of size N", before
  the memory API "failed to find KV cache slot for ubatch of size N", llama-server's "failed to find free space in the KV cache"):
  kv-cache, runtime llama.cpp, the batch's tokens read as requested_tokens where the line gives them.
- MPS's figures quoted without the message's words ("MPS allocated: 8.73 GB, max allowed: 9.07 GB" opening a line): still
  MPSAllocator's message, device mps, each figure read; the same words mid-sentence are not it.
- PyTorch's message broken after its first sentence ("CUDA out of memory." ending its line, the request and the card's figures on
  the lines after): the lines joined while they reach the card's capacity; a bracket in other words after it is not joined.
- The <= 2.0 bracket cut after the card's capacity ("Tried to allocate 36.00 GiB (GPU 0; 47.54 GiB total capacity)"): total read.
- ComfyUI's execution_error fields ('node_type: "KSampler"'): runtime comfyui; a quoted message closing its string after the
  capacity keeps the total.
- JAX's "Unable to initialize backend 'cuda':" names the run JAX's (a runtime marker).
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, last_event as _last, read as _read  # (cause, kind, runtime, device kind, numbers)

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_llamacpp_decode_finds_no_memory_slot_for_the_batch():
    text = ("srv  update_slots: all slots are idle\n"
            "decode: failed to find a memory slot for batch of size 2048\n"
            "srv  update_slots: failed to decode the batch: KV cache is full - try increasing it via the context size, i = 0\n")
    res, ev = _last(text)
    assert (res["cause"], ev["kind"], ev["runtime"]) == ("kv-cache", "ggml.kv_slot", "llama.cpp")
    assert ev["numbers"] == {"requested_tokens": 2048}


def test_llamacpp_older_kv_cache_slot_and_server_free_space_forms():
    cause, kind, runtime, _, nums = _read("llama_decode_internal: failed to find KV cache slot for ubatch of size 512\n")
    assert (cause, kind, runtime, nums) == ("kv-cache", "ggml.kv_slot", "llama.cpp", {"requested_tokens": 512})
    cause, kind, runtime, _, nums = _read("update_slots : failed to find free space in the KV cache, retrying with smaller batch "
                                          "size - try increasing it via the context size or enable defragmentation, i = 0, "
                                          "n_batch = 2048, ret = 1\n")
    assert (cause, kind, runtime, nums) == ("kv-cache", "ggml.kv_slot", "llama.cpp", {})


def test_mps_figures_alone_opening_a_line():
    cause, kind, runtime, dev, nums = _read("MPS allocated: 8.73 GB, max allowed: 9.07 GB\n")
    assert (kind, runtime, dev) == ("torch.mps", "pytorch", "mps")
    assert nums == {"allocated": round(8.73 * 1024 ** 3), "max_allowed": round(9.07 * 1024 ** 3)}


def test_mps_figures_mid_sentence_are_not_the_message():
    assert "torch.mps" not in _kinds("The run stopped once the MPS allocated: 8.73 GB, max allowed: 9.07 GB figures came up\n")


_SENTENCES = ("torch.OutOfMemoryError: CUDA out of memory.\n"
              "Tried to allocate 128.00 MiB.\n"
              "GPU 0 has a total capacity of 44.52 GiB of which 12.50 MiB is free.\n"
              "Process 3880772 has 38.92 GiB memory in use.\n")


def test_message_broken_after_its_first_sentence_is_joined():
    cause, kind, runtime, dev, nums = _read(_SENTENCES)
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert {k: nums[k] for k in ("requested", "free")} == {"requested": 128 * _MIB, "free": round(12.5 * _MIB)}
    assert nums["total"] == round(44.52 * _GIB)
    assert cause == "other-process"


def test_first_sentence_then_a_bracket_in_other_words_is_not_joined():
    _, kind, _, _, nums = _read("torch.cuda.OutOfMemoryError: CUDA out of memory.\n"
                                "Tried to allocate 23.04 GiB (GPU 0; 23.52 GiB total; 0 bytes free)\n")
    assert kind == "torch.cuda" and nums == {}


def test_old_bracket_cut_after_the_capacity_keeps_the_total():
    _, kind, _, _, nums = _read("torch.cuda.OutOfMemoryError: CUDA out of memory.\n"
                                "Tried to allocate 36.00 GiB (GPU 0; 47.54 GiB total capacity)\n")
    assert kind == "torch.cuda" and nums == {"requested": 36 * _GIB, "total": round(47.54 * _GIB)}


def test_comfyui_execution_error_fields_name_comfyui_and_the_quoted_total_is_read():
    text = ("exception_type: torch.OutOfMemoryError\n"
            "\"CUDA out of memory. Tried to allocate 12.50 GiB.\n"
            " GPU 0 has a total capacity of 23.98 GiB\"\n"
            "node_id: \"3\"  node_type: \"KSampler\"\n")
    cause, kind, runtime, _, nums = _read(text)
    assert (kind, runtime) == ("torch.cuda", "comfyui")
    assert nums == {"requested": round(12.5 * _GIB), "total": round(23.98 * _GIB)}


def test_jax_backend_start_up_names_the_run_jax():
    text = ("E0101 12:00:00.000000  1234 pjrt_stream_executor_client.cc:3067] Failed to create stream executor for device "
            "CUDA:0: CUDA_ERROR_OUT_OF_MEMORY\n"
            "RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA (you may "
            "need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)\n")
    assert _read(text)[2] == "jax"
