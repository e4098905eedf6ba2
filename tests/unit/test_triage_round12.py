"""Triage round 12: out-of-memory messages of runtimes the engine did not recognise at all, written from the runtimes'
own strings (ComfyUI comfy/sd.py, ncnn's Vulkan allocator, ggml.c's fixed pools and ggml_init, .NET's CLR), each with
the cause its semantics imply and near misses that must stay unrecognised or keep their old reading."""
import pytest

from gpu_garden.memory.triage import engine as triage
from support.triage_event import fired, top as _top


# --- ComfyUI's tiled-VAE fallback (comfy/sd.py VAE.decode / encode) ----------------------------------------------

@pytest.mark.parametrize("line", [
    "Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.",      # sd.py as printed
    "Warning: Ran out of memory when regular decoding, retrying with tiled VAE decoding.",          # quoted with VAE dropped
    "Warning: Ran out of memory when regular VAE encoding, retrying with tiled VAE encoding.",
])
def test_comfyui_tiled_vae_fallback_is_the_vae(line):
    cause, _, ev = _top(line)
    assert (cause, ev["kind"], ev["runtime"], ev["recoverable"]) == ("vae-decode", "comfy.vae_tiled_fallback", "comfyui", True)


def test_regular_sampling_words_are_not_the_vae_fallback():
    assert not triage.triage_text("Ran out of memory when regular decoding finished").get("found")


# --- ncnn's Vulkan allocator (src/allocator.cpp: NCNN_LOGE("vkAllocateMemory failed %d", ret)) ----------------------

NCNN_HEAD = ("[0 AMD Radeon RX 550 Series]  queueC=1[2]  queueG=0[1]  queueT=2[1]\n"
             "[0 AMD Radeon RX 550 Series]  fp16-p/s/a=1/1/1  int8-p/s/a=1/1/1\n")


def test_ncnn_device_memory_is_the_tiles_working_memory():
    cause, c, ev = _top(NCNN_HEAD + "vkAllocateMemory failed -2\n")      # -2: VK_ERROR_OUT_OF_DEVICE_MEMORY
    assert (cause, ev["runtime"], ev["device_kind"], ev["guide"]["id"]) == ("activations", "ncnn", "vulkan", "ncnn-vulkan")
    assert c == {"activations": round(2.0 / 2.75, 2)}
    assert "-t 200" in "\n".join(x["text"] for x in ev["guide"]["commands"])


def test_ncnn_host_memory_is_system_ram():
    cause, _, ev = _top("vkAllocateMemory failed -1\n")                   # -1: VK_ERROR_OUT_OF_HOST_MEMORY
    assert (cause, ev["runtime"]) == ("host-ram", "ncnn")


@pytest.mark.parametrize("line", ["vkAllocateMemory failed -3", "vkAllocateMemory failed -13", "vkQueueSubmit failed -4"])
def test_other_vulkan_results_are_not_out_of_memory(line):
    # -3 VK_ERROR_INITIALIZATION_FAILED, -13 VK_ERROR_UNKNOWN, a device lost on submit: not a memory shortage
    assert not triage.triage_text(line + "\n")["found"]


# --- ggml.c's fixed pools (2023) and ggml_init's host buffer ---------------------------------------------------------

@pytest.mark.parametrize("line,form,numbers,points", [
    ("ggml_new_tensor_impl: not enough space in the scratch memory", "scratch", {}, 4.0),
    ("ggml_new_tensor_impl: not enough space in the scratch memory pool (needed 877775360, available 536870912)", "scratch",
     {"requested": 877775360, "available": 536870912}, 4.1),
    ("ggml_new_tensor_impl: not enough space in the context's memory pool", "cut", {}, 4.0),
])
def test_ggml_fixed_pool_is_the_programs_sizing(line, form, numbers, points):
    cause, c, ev = _top(line + "\n")
    assert (cause, ev["runtime"], ev["device_kind"], ev["form"], ev["numbers"]) == ("other", "llama.cpp", "cpu", form, numbers)
    # the fixed-pool row alone (4.0; 4.1 where the numbers are shown), beside "not determined" 0.75
    assert ev["guide"]["id"] == "ggml-fixed-pool" and c == {"other": round(points / (points + 0.75), 2)}


def test_ggml_context_pool_with_numbers_keeps_the_batch_reading():
    cause, _, ev = _top("ggml_new_tensor_impl: not enough space in the context's memory pool (needed 35007776, available 12582912)\n")
    assert (cause, ev["form"]) == ("activations", "tensor_impl")


def test_ggml_init_assert_is_host_memory():
    cause, c, ev = _top("load_backend: loaded CPU backend\nD:/a/app/ggml/src/ggml.c:1685: GGML_ASSERT(ctx->mem_buffer != NULL) failed\n")
    assert (cause, ev["kind"], ev["form"], ev["device_kind"], ev["runtime"]) == ("host-ram", "ggml.host", "context", "cpu", "llama.cpp")
    assert c == {"host-ram": round(4.0 / 4.75, 2)} and "malloc returned NULL" in ev["causes"][0]["evidence"][0]


def test_other_ggml_asserts_are_not_out_of_memory():
    assert not triage.triage_text("ggml.c:4120: GGML_ASSERT(ctx->mem_buffer_owned) failed\n")["found"]
    assert not triage.triage_text("ggml.c:2210: GGML_ASSERT(ggml_can_mul_mat(a, b)) failed\n")["found"]


# --- .NET (System.OutOfMemoryException) ------------------------------------------------------------------------------

DOTNET = ("Unhandled exception. System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n"
          "{frame}\n   at App.Main(String[] args)\n")


def test_dotnet_object_size_limit_is_not_ram():
    cause, c, ev = _top(DOTNET.format(frame="   at System.Text.StringBuilder.ToString()"))
    assert (cause, ev["runtime"], ev["device_kind"], ev["guide"]["id"]) == ("other", "dotnet", "cpu", "dotnet")
    assert c == {"other": round(4.0 / 6.25, 2), "host-ram": round(1.5 / 6.25, 2)}       # object limit 4.0 against the heap 1.5


@pytest.mark.parametrize("frame", ["   at App.Images.Decode(Stream s)", ""])
def test_dotnet_elsewhere_is_the_heap(frame):
    # only the innermost frame counts: a string built further out is not the object that failed
    cause, c, _ = _top(DOTNET.format(frame=frame).replace("App.Main", "System.String.Concat" if frame else "App.Main"))
    assert cause == "host-ram" and c == {"host-ram": round(1.5 / 2.25, 2)}


# --- a KV cache extended in a decoding step (transformers' cache_utils.DynamicCache.update, a model's own k_cache) ------

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 23.55 GiB of "
       "which 20.81 MiB is free. Including non-PyTorch memory, this process has 23.52 GiB memory in use. Of the allocated memory "
       "22.95 GiB is allocated by PyTorch, and 40.00 MiB is reserved by PyTorch but unallocated.\n")
DECODE = ("Traceback (most recent call last):\n"
          '  File "/app/run.py", line 40, in <module>\n'
          "    out = generate(model, ids, max_new_tokens=4096)\n"
          '  File "/app/lib/python3.11/site-packages/transformers/cache_utils.py", line 447, in update\n'
          "    self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)\n")


def test_kv_cache_extended_while_decoding():
    cause, c, _ = _top(DECODE + OOM)
    # kv-cache 3.0 (the source line) against the plain-PyTorch catch-all activations 1.5; no slack, nothing outside
    assert cause == "kv-cache" and c == {"kv-cache": round(3.0 / 5.25, 2), "activations": round(1.5 / 5.25, 2)}


def test_kv_cache_line_in_training_is_the_batch():
    train = DECODE.replace("out = generate(model, ids, max_new_tokens=4096)", "loss.backward()")
    cause, c, _ = _top(train + OOM)
    assert cause == "activations" and "kv-cache" not in c


# --- a library's own cudaMalloc (its CUDA code, not PyTorch's allocator) -----------------------------------------------

def test_own_cudamalloc_is_the_programs_working_memory():
    log = ("Uncaught exception: Could not allocate memory: include/lib/gpu_memory.h:112 cudaMalloc(&rawptr, n_bytes) failed "
           "with error out of memory\n")
    cause, c, ev = _top(log)
    # activations 1.5 (own cudaMalloc, no training) against the driver rows other 1.0 and other-process 0.9
    assert (cause, ev["form"]) == ("activations", "runtime_call")
    assert c == {"activations": round(1.5 / 4.15, 2), "other-process": round(0.9 / 4.15, 2), "other": round(1.0 / 4.15, 2)}


# --- libplacebo's Vulkan allocator (src/vulkan/malloc.c; FFmpeg's libplacebo filter prefixes its lines) ---------------

PLACEBO = ("[libplacebo @ 0x55d0c0a3e1c0] Allocation of size  256M failed: VK_ERROR_OUT_OF_DEVICE_MEMORY!\n"
           "[libplacebo @ 0x55d0c0a3e1c0] Memory heaps supported by device:\n"
           "[libplacebo @ 0x55d0c0a3e1c0]     0: flags 0x0 size   31G\n"
           "[libplacebo @ 0x55d0c0a3e1c0]     1: flags 0x1 size 8176M\n")


def test_libplacebo_is_its_own_runtime_with_the_device_heap():
    cause, c, ev = _top(PLACEBO)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("libplacebo.alloc", "libplacebo", "vulkan")
    assert ev["numbers"] == {"requested": 256 << 20, "total": 8176 << 20}     # the device-local heap, not the host one
    # (alt1) the row alone, with rules_runner_up's 0.45 points for activations beside it: 1.0 / (1.0 + 0.45 + 0.75)
    assert cause == "other" and fired(ev) == {"other": round(1.0 / 2.2, 2)} and "7.98 GiB device heap" in ev["causes"][0]["evidence"][0]


def test_ggml_vulkan_out_of_device_memory_stays_ggml():
    res = triage.triage_text("ggml_vulkan: Device memory allocation of size 3303014400 failed.\n"
                             "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert res["events"][-1]["kind"] == "ggml.vulkan" and res["events"][-1]["runtime"] == "llama.cpp"


# --- PyTorch's caching-allocator message quoted from "Tried to allocate" (its "CUDA/HIP out of memory." cut off) ---------

def test_torch_message_without_its_first_words_keeps_its_numbers():
    cut = ("Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.99 GiB of which 9.80 GiB is free. Of the allocated "
           "memory 11.20 GiB is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated.\n")
    cause, c, ev = _top(cut)
    assert ev["kind"] == "torch.cuda" and ev["numbers"]["requested"] == 1.5 * 2 ** 30 and ev["numbers"]["free"] == round(9.8 * 2 ** 30)
    # 9.80 GiB free >= 4 x the 1.50 GiB asked: numbers no shortage produces (other 4.5), a 2.10 GiB slack >= the request
    # (fragmentation 3.2 is the slack row's first match), the plain-PyTorch catch-all activations 1.5
    assert cause == "other"
    old = "Tried to allocate 70.00 MiB (GPU 0; 16.00 GiB total capacity; 15.04 GiB already allocated; 12.00 MiB free; 15.20 GiB reserved in total by PyTorch)\n"
    assert _top(old)[2]["numbers"]["allocated"] == round(15.04 * 2 ** 30)


def test_a_bare_tried_to_allocate_is_not_a_message():
    assert not triage.triage_text("Tried to allocate 1.00 GiB for the cache, ok\n")["found"]
