"""Triage after batches 85-87 (first sight recorded: 1/3, 2/3, 1/3). Lines written from llama.cpp's own formats (load_tensors'
and the KV cache's buffer lines, ggml-cuda's CUDA_CHECK report of a failed stream creation), numbers made up, expected
values by hand."""
from support.triage_event import top

STREAM_OOM = ("CUDA error: out of memory\n"
              "  current device: 0, in function ggml_cuda_stream at ggml/src/ggml-cuda/common.cuh:1012\n"
              "  cudaStreamCreateWithFlags(&streams[device][stream], 0x01)\n")


def _log(model_mib, kv_mib, model_dev="CUDA0", compute=False, free_mib=23008):
    # (fix20a: the device's free figure at load, which the placed buffers must fill: 21500 + 1536 MiB against 23008 MiB)
    return (f"llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - {free_mib} MiB free\n"
            "load_tensors: offloaded 37/37 layers to GPU\n"
            f"load_tensors: {model_dev:>12} model buffer size = {model_mib:.2f} MiB\n"
            "load_tensors:   CPU_Mapped model buffer size =   586.82 MiB\n"
            f"llama_kv_cache:        CUDA0 KV buffer size = {kv_mib:.2f} MiB\n"
            + ("llama_context:      CUDA0 compute buffer size =   398.38 MiB\n" if compute else "")
            + STREAM_OOM)


def test_driver_oom_after_the_models_device_buffers_is_the_weights():
    """A CUDA call that allocates next to nothing (a stream) fails for memory after llama.cpp printed 21 GiB of the model's
    weights on CUDA0 and a smaller KV cache, before any compute buffer: the process already held those buffers, so the card
    was filled by them; the weights are most of it."""
    cause, scores, ev = top(_log(21500, 1536))
    assert ev["runtime"] == "llama.cpp" and ev["device_kind"] == "cuda", (ev["runtime"], ev["device_kind"])
    assert cause == "weights-exceed-vram", ev["causes"]
    # the same stream failure with no buffer printed: nothing shows what the card held (the driver's reading, another process)
    cause, scores, ev = top(STREAM_OOM)
    assert cause != "weights-exceed-vram" and "weights-exceed-vram" not in scores, ev["causes"]


def test_driver_oom_after_buffers_names_the_weights_only_where_they_are_on_the_device_and_the_larger_share():
    # a KV cache larger than the weights on the card: not the weights' reading
    cause, _, ev = top(_log(2000, 12288))
    assert cause != "weights-exceed-vram", ev["causes"]
    # the model's buffer in host memory (CPU): nothing of the weights is on the card
    cause, _, ev = top(_log(21500, 1536, model_dev="CPU"))
    assert cause != "weights-exceed-vram", ev["causes"]
    # a compute buffer was reserved before the failure: the graph ran, past the load (not this row)
    cause, _, ev = top(_log(21500, 1536, compute=True))
    assert cause != "weights-exceed-vram", ev["causes"]



# gpt-fast's frames (generate.py -> model.py setup_caches -> KVCache.__init__), each source line left out as some pastes do:
# the frame names alone decide (a source line naming k_cache is read on its own, categories.SOURCE)
GPT_FAST = """Traceback (most recent call last):
  File "/home/user/gpt-fast/generate.py", line 441, in <module>
  File "/home/user/gpt-fast/generate.py", line 326, in main
  File "/home/user/gpt-fast/model.py", line 114, in {func}
  File "/home/user/gpt-fast/model.py", line 84, in __init__
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which \
1.21 GiB is free. Including non-PyTorch memory, this process has 22.41 GiB memory in use. Of the allocated memory 21.95 GiB \
is allocated by PyTorch, and 12.50 MiB is reserved by PyTorch but unallocated.
"""


def test_oom_inside_setup_caches_is_the_preallocated_kv_cache():
    """gpt-fast's model.setup_caches(max_batch_size, max_seq_length) builds every layer's KVCache (torch.zeros of batch x heads x
    max length x head size) before any token; fish-speech's text2semantic and torchtune's TransformerDecoder name it the same:
    a failure on that frame is the cache sized for the maximum length, not the weights that were already placed."""
    cause, scores, ev = top(GPT_FAST.format(func="setup_caches"))
    assert cause == "kv-cache", ev["causes"]
    assert ev["guide"]["id"] == "pytorch-kv-cache", ev["guide"]["id"]
    # torchtune's frames (site-packages/torchtune/...) are read too
    tt = GPT_FAST.format(func="setup_caches").replace("/home/user/gpt-fast/model.py",
                                                       "/venv/lib/python3.11/site-packages/torchtune/modules/transformer.py")
    assert top(tt)[0] == "kv-cache", top(tt)[2]["causes"]
    # the same failure one frame name off (lit-gpt's setup_cache builds the rotary tables, not a KV cache): no such reading
    cause, scores, ev = top(GPT_FAST.format(func="setup_cache"))
    assert cause != "kv-cache" and "kv-cache" not in scores, ev["causes"]
