"""Session 18, task fix18c: the triage findings of review18b. Each test is written from the reviewer's example and failed
on the commit before its mend (the commit names the deliberate break that makes it fail again)."""
from support.cli_run import unwrap
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.categories import frame_category


def _top(text):
    r = engine.triage_text(text)
    return [c["id"] for c in r["events"][-1]["causes"]]


def test_loss_plural_is_a_loss_function_too():
    # review18b #7: losses / compute_losses / CamelCase Losses are a loss over the batch like compute_loss
    for func in ("losses", "compute_losses", "get_losses_step", "MultiLosses", "sum_losses"):
        assert frame_category("/srv/app/train/trainer.py", func) == "activations", func
    # still not inside another word
    for func in ("lossless", "glosses", "flosses", "decode_lossless"):
        assert frame_category("/srv/app/codec.py", func) is None, func


_TF_BFC = ("2021-01-02 03:04:05.000001: W tensorflow/core/common_runtime/bfc_allocator.cc:440] Allocator (GPU_0_bfc) ran out "
           "of memory trying to allocate 3.00MiB (rounded to 3145728).\n"
           "2021-01-02 03:04:05.000003: I tensorflow/core/common_runtime/bfc_allocator.cc:950] Stats: \n"
           "Limit:                  4000000000\nInUse:                  3990000000\nMaxInUse:               3995000000\n")


def test_tensorflows_bfc_figures_are_labelled_by_the_allocator_that_printed_them():
    # review18b #8: the BFC allocator's InUse printed as "allocated by PyTorch"
    out = unwrap(engine.render_human(engine.triage_text(_TF_BFC)))  # term.py's wrapping undone
    nums = next(l for l in out.splitlines() if l.startswith("Numbers:"))
    assert "PyTorch" not in nums, nums
    assert "allocated by TensorFlow's BFC allocator 3.72 GiB" in nums, nums


def test_pytorchs_figures_keep_their_pytorch_label():
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 6.00 GiB "
           "of which 10.00 MiB is free. Of the allocated memory 4.58 GiB is allocated by PyTorch, and 300.00 MiB is reserved "
           "by PyTorch but unallocated.\n")
    out = unwrap(engine.render_human(engine.triage_text(log)))  # term.py's wrapping undone
    assert "allocated by PyTorch 4.58 GiB" in out and "reserved by PyTorch" in out


def test_cupy_and_tt_metal_figures_name_their_own_allocator():
    cupy = ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes (allocated so far: "
            "3,635,267,072 bytes).\n")
    out = unwrap(engine.render_human(engine.triage_text(cupy)))  # term.py's wrapping undone
    assert "allocated by CuPy's memory pool 3.39 GiB" in out and "by PyTorch" not in out, out
    tt = ("RuntimeError: TT_THROW @ allocator.cpp:145: Out of Memory: Not enough space to allocate 104857600 B DRAM buffer "
          "across 12 banks, where each bank needs to store 8738133 B, but bank size is 1073741792 B (allocated: 1069547520 B, "
          "free: 4194272 B, largest free block: 4194272 B)\n")
    out = unwrap(engine.render_human(engine.triage_text(tt)))  # term.py's wrapping undone
    assert "allocated by tt-metal's bank allocator 1020.00 MiB" in out and "by PyTorch" not in out, out


def _ev(text):
    return engine.triage_text(text)["events"][-1]


_SYCL_LOAD = ("load_tensors: loading model tensors, this can take a while... (mmap = false)\n"
              "alloc_tensor_range: failed to allocate SYCL_Host buffer of size 141383696384\n"
              "llama_model_load: error loading model: unable to allocate SYCL_Host buffer\n"
              "llama_model_load_from_file_impl: failed to load model\n")


def test_a_host_buffer_named_by_llama_model_load_is_host_ram_on_its_backend():
    # review18b #3: llama_model_load's line after alloc_tensor_range's led the incident with device cpu
    ev = _ev(_SYCL_LOAD)
    assert (ev["causes"][0]["id"], ev["device_kind"]) == ("host-ram", "xpu")
    # the load line alone (the alloc_tensor_range line cut from the paste): the same
    ev = _ev(_SYCL_LOAD.replace("alloc_tensor_range: failed to allocate SYCL_Host buffer of size 141383696384\n", ""))
    assert (ev["causes"][0]["id"], ev["device_kind"]) == ("host-ram", "xpu")
    # a plain CPU buffer refused at load is system RAM too
    ev = _ev("llama_model_load: error loading model: unable to allocate CPU buffer\n"
             "llama_model_load_from_file_impl: failed to load model\n")
    assert (ev["causes"][0]["id"], ev["device_kind"]) == ("host-ram", "cpu")
    # a device buffer refused at load stays the weights on the card
    ev = _ev("llama_model_load: error loading model: unable to allocate SYCL0 buffer\n"
             "llama_model_load_from_file_impl: failed to load model\n")
    assert (ev["causes"][0]["id"], ev["device_kind"]) == ("weights-exceed-vram", "xpu")


def test_ggml_buffer_names_one_lookup():
    from gpu_garden.memory.triage.servers import ggml_buf
    assert ggml_buf("SYCL_Host") == ("xpu", True) and ggml_buf("ROCm_Host") == ("rocm", True)
    assert ggml_buf("CUDA0") == ("cuda", False) and ggml_buf("CPU_Mapped") == ("cpu", True) and ggml_buf("") == (None, False)


# review18b #5: Ollama's eviction answers the load that failed only when no other load started between them
_OLLAMA_FAIL = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9216.00 MiB on device 0: cudaMalloc failed: out of memory\n"
                "alloc_tensor_range: failed to allocate ROCm0 buffer of size 9663676416\n")
_OLLAMA_NEXT_LOAD = ('time=2026-05-01T10:00:05.000Z level=INFO source=server.go:400 msg="starting runner" cmd="/usr/bin/ollama '
                     'runner --ollama-engine --model /srv/models/blobs/sha256-0a1b2c --port 41234"\n'
                     'time=2026-05-01T10:00:06.000Z level=INFO source=runner.go:1290 msg="load request" request="{Operation:fit '
                     'GPULayers:24[ID:0 Layers:24(0..23)]}"\n')
_OLLAMA_EVICT = ('time=2026-05-01T10:00:07.000Z level=INFO source=server.go:1043 msg="model requires more gpu memory than is '
                 'currently available, evicting a model to make space" "loaded layers"=20\n')


def test_an_ollama_eviction_after_another_load_started_does_not_answer_the_failure():
    ev = _ev(_OLLAMA_FAIL + _OLLAMA_NEXT_LOAD + _OLLAMA_EVICT)
    assert "other-process" not in [c["id"] for c in ev["causes"]], ev["causes"]
    # the same eviction straight after the failure (its own load attempt) still names the resident model
    ev = _ev(_OLLAMA_FAIL + _OLLAMA_EVICT)
    assert ev["causes"][0]["id"] == "other-process", ev["causes"]
    # llama.cpp's loader starting a model again counts as a new load too
    ev = _ev(_OLLAMA_FAIL + "llama_model_loader: loaded meta data with 34 key-value pairs and 579 tensors from "
             "/srv/models/blobs/sha256-0a1b2c (version GGUF V3 (latest))\n" + _OLLAMA_EVICT)
    assert "other-process" not in [c["id"] for c in ev["causes"]], ev["causes"]


# review18b #1: vLLM's flags that shrink or split the weights on the card. The command, then PyTorch's message at load
# (a 448 MiB request on an 80 GB card), as in tests/unit/test_triage_tune69.py; numbers made up
def _vllm(model, flags, total="79.25 GiB", free="300.00 MiB"):
    return (f"$ vllm serve {model} {flags}\n"
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of {total} "
            f"of which {free} is free.\n")


def _over(ev):
    return [e for c in ev["causes"] for e in c["evidence"] if "weights alone" in e]


def test_vllm_quantization_and_splitting_flags_size_the_weights_on_the_card():
    # the reviewer's example: 70B in fp8 is about 66 GiB, under the 79.25 GiB card (fix66g: a checkpoint already in fp8 or
    # one packed by AWQ; fp8 quantised in flight loads the 16-bit weights first, test_triage_fix66g)
    assert not _over(_ev(_vllm("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "--quantization fp8")))
    assert not _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", "--quantization=awq --max-model-len 8192")))
    ev = _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", "--quantization fp8")))
    assert ev and "half precision (--quantization fp8 converts them after loading)" in ev[0], ev
    # unquantized it is 131 GiB in half precision: the reading stands, and says the precision it assumed
    ev = _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", "--max-model-len 8192")))
    assert ev and "131.4" in ev[0] and "GiB in half precision" in ev[0], ev   # 70.6 B x 2 bytes
    # quantized, still over a T4: the evidence names the method, not half precision
    ev = _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", "--quantization bitsandbytes", "14.56 GiB", "600.00 MiB")))
    assert ev and "as bnb-4bit (--quantization bitsandbytes)" in ev[0] and "half precision" not in ev[0], ev
    # weights offloaded to the CPU, experts split over data-parallel ranks, tensor/pipeline parallel: not all on this card
    for flags in ("--cpu-offload-gb 80", "--data-parallel-size 2 --enable-expert-parallel", "-tp 2", "-pp 2",
                  "--pipeline-parallel-size 2"):
        assert not _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", flags))), flags
    # data parallel alone replicates the model on each rank: the reading stands
    assert _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", "--data-parallel-size 2")))
    # a method kv cannot size: no reading rather than a half-precision one
    assert not _over(_ev(_vllm("meta-llama/Llama-3.1-70B-Instruct", "--quantization some_new_method")))


def test_a_quantized_checkpoint_named_by_its_repo_states_that_precision():
    ev = _over(_ev(_vllm("Qwen/Qwen2.5-72B-Instruct-AWQ", "--max-model-len 4096", "14.56 GiB", "600.00 MiB")))
    assert ev and "as awq (the checkpoint's name)" in ev[0] and "half precision" not in ev[0], ev
