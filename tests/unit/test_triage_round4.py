"""Rules added after batches 17-18 (tuned on them): each mechanism on a small log of its own."""
import pytest

from gpu_garden.memory.triage import engine

RICH_PREFIXED = """SUBPROCESS: │ C:\\tool\\modules\\offload_utils.py:105 in weights_to_device                │
SUBPROCESS: │ > 105 │   │   │   module.weight.data = module.weight.data.to(device, non_bl │
SUBPROCESS: RuntimeError: CUDA error: out of memory
"""
MODULE_INIT = """Traceback (most recent call last):
  File "/srv/app/models/big_transformer.py", line 40, in __init__
    self.proj = nn.Linear(dim_in, dim_out)
  File "/usr/lib/python3.12/site-packages/torch/nn/modules/linear.py", line 109, in __init__
    torch.empty((out_features, in_features), **factory_kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 72.00 MiB. GPU 0 has a total capacity of 44.52 GiB of which 43.88 MiB is free.
"""
MOVING_TE = """step 0 prepared
Moving text encoder 3 to cuda from cpu
CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacity of 31.48 GiB of which 33.31 MiB is free. Including non-PyTorch memory, this process has 31.12 GiB memory in use. Of the allocated memory 30.71 GiB is allocated by PyTorch, and 119.97 MiB is reserved by PyTorch but unallocated.
"""
VIDEO_VAE_PATH = """Traceback (most recent call last):
  File "/srv/nodes/pack/src/models/video_vae_v2/modules/cache.py", line 65, in send_recv
    buf = torch.tile(t, reps)
torch.OutOfMemoryError: Allocation on device 
"""
OLLAMA_KV = """llama_kv_cache_unified: kv_size = 262144, type_k = 'f16', type_v = 'f16', n_layer = 40
llama_kv_cache_unified:      CUDA0 KV buffer size = 20480.00 MiB
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory
"""
OLLAMA_BACKEND = "Error: llama runner process has terminated: error loading model: unable to allocate backend buffer\n"
LOAD_FAILED = """torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 72.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 32.75 MiB is free. Including non-PyTorch memory, this process has 23.58 GiB memory in use. Of the allocated memory 16.93 GiB is allocated by PyTorch, and 87.06 MiB is reserved by PyTorch but unallocated.
[12-01 10:00:00] Error while loading customized transformer, falling back to native version
"""
ASYNC_ONLY = """torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)
Currently allocated     : 6.10 GiB
Requested               : 1.00 GiB
Device limit            : 8.00 GiB
Free (according to CUDA): 0 bytes
"""


@pytest.mark.parametrize("text, cause", [
    (RICH_PREFIXED, "weights-exceed-vram"),       # rich frames behind a relay prefix; `weight.data.to(` moves a weight
    (MODULE_INIT, "weights-exceed-vram"),         # a layer built on the device allocates its weights
    (MOVING_TE, "text-encoder"),                  # "Moving text encoder N to cuda" names the part being placed
    (VIDEO_VAE_PATH, "vae-decode"),               # a folder named for a VAE
    (OLLAMA_KV, "kv-cache"),                      # KV buffers outweigh the weights: the context is the knob
    (OLLAMA_BACKEND, "host-ram"),                 # Ollama's bare load failure with no GPU allocation failing
    (LOAD_FAILED, "weights-exceed-vram"),         # the program says its load failed
])
def test_cause(text, cause):
    res = engine.triage_text(text)
    assert res["found"] and res["cause"] == cause, res.get("events", [{}])[-1].get("causes")


@pytest.mark.parametrize("text, runtime", [
    ("$ sglang serve --model-path m --port 30010\n" + LOAD_FAILED, "sglang"),
    ("[12:44:34] src/storage/./pooled_storage_manager.h:84: cudaMalloc failed: out of memory\n", "mxnet"),
    ("libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: "
     "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n", "mlx"),
    (ASYNC_ONLY, "comfyui"),                      # cudaMallocAsync's report: ComfyUI's default allocator
    (MODULE_INIT.replace("/srv/app/models/", "/usr/lib/python3.12/dist-packages/vllm_omni/diffusion/"), "vllm"),
])
def test_runtime(text, runtime):
    res = engine.triage_text(text)
    assert res["found"] and res["events"][-1]["runtime"] == runtime


def test_mxnet_alloc_is_not_read_as_a_llamacpp_load():
    res = engine.triage_text("[12:44:34] src/storage/./pooled_storage_manager.h:84: cudaMalloc failed: out of memory\n")
    assert res["cause"] != "weights-exceed-vram"


def test_llamacpp_lines_inside_comfyui_keep_the_ggml_reading():
    text = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 27846.97 MiB on device 0: cudaMalloc failed: out of memory\n"
            "llama_model_load: error loading model: unable to allocate backend buffer\n")
    res = engine.triage_text(text, context={"runtime": "comfyui"})
    assert res["cause"] == "weights-exceed-vram"


def test_a_network_card_named_mlx5_is_not_mlx():
    res = engine.triage_text("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                             "2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is free.\n")
    assert res["events"][-1]["runtime"] == "pytorch"
