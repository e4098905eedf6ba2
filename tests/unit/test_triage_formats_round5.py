"""Messages batch 20 showed triage not recognising at all (tuned on it): XLA on TPU, MLX's Metal allocator, SGLang's
memory pool, TensorRT-LLM's executor table, PyTorch's CPU allocator without its prefix. Each log is modelled on a
named public thread (numbers as reported, paths and prose rewritten); each test fails when its pattern or row goes."""
import pytest

from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.parse import recognise
from gpu_garden.memory.units import GiB
from support.triage_event import last_event as _ev

# google-deepmind/gemma#85 form, pytorch/xla#1735 (reserve), LargeWorldModel/LWM#60 and sokrypton/ColabFold#62 (compile)
XLA_RESERVE = ("RuntimeError: Resource exhausted: From /job:tpu_worker/replica:0/task:0:\n"
               "Attempting to reserve 3.95G at the bottom of memory. That was not possible. There are 1.92G free, 0B reserved, "
               "and 1.92G reservable.; \nHBM capacity 8.00G:\n")
XLA_COMPILE = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
               "memory space hbm. Used 21.95G of 15.48G hbm.\n Exceeded hbm capacity by 6.47G.\n")
XLA_COLAB = ("UnfilteredStackTrace: RuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 9.08G of 7.48G hbm. "
             "Exceeded hbm capacity by 1.60G.\n")
# lmstudio-ai/lmstudio-bug-tracker#2240 (MLX engine, prompt cache over Metal's per-buffer maximum)
MLX_BUFFER = ("  File \"/app/site-packages/mlx_engine/model_kit/batched_vision/batch_generator.py\", line 825, in prompt_step\n"
              "    mx.eval([c.state for c in self.prompt_cache])\n"
              "RuntimeError: [metal::malloc] Attempting to allocate 48736917632 bytes which is greater than the maximum allowed "
              "buffer size of 30150672384 bytes.\n")
# ml-explore/mlx#3849 (a count of live Metal buffers, not bytes)
MLX_COUNT = "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n"
# sgl-project/sglang#4330 (speculative decoding on an L40S: 0.84 leaves no KV pool after the weights)
SGLANG_POOL = ("  File \"/opt/sglang/python/sglang/srt/model_executor/model_runner.py\", line 703, in init_memory_pool\n"
               "    raise RuntimeError(\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n")
SGLANG_POOL_VALUE = ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                     "Current value: mem_fraction_static=0.84\n")
# sgl-project/sglang#7353 (prefill with a large page size; mem_cache/common.py's message)
SGLANG_PREFILL = ("[2025-06-18 18:11:03] Prefill out of memory. Try to lower your batch size.\n"
                  "Try to allocate 8192 tokens.\n")
# sgl-project/sglang-jax#113 (decode, the batch too large for the pool), and the default page size's plain form
SGLANG_DECODE = ("RuntimeError: Decode out of memory. Try to lower your batch size.\nTry to allocate 127 tokens.\n"
                 "Available tokens: 5248 (available_size=5248 + evictable_size=0)\n")
# NVIDIA/TensorRT-LLM#4497 (the executor's table: component, total, free before it)
TRTLLM = """RuntimeError: Executor creation failed with an error which might indicate insufficient GPU memory.

The following component could not be created: Additional executor resources (temporary for KV cache size estimation)
Total GPU memory (GiB): 95.09
Free GPU memory before component creation attempt (GiB): 0.32

Previously created components and free GPU memory before/after creation (GiB):
Model: 93.99 / 10.60
Sampler: 10.60 / 6.38
Initial KV cache (temporary for KV cache size estimation): 6.38 / 0.32
"""
# the cut form of RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2696, the size of lllyasviel/Fooocus#237
CPU_CUT = "RuntimeError: not enough memory: you tried to allocate 26214400 bytes.\n"


@pytest.mark.parametrize("text, numbers, runtime", [
    (XLA_RESERVE, {"requested": round(3.95 * GiB), "free": round(1.92 * GiB)}, None),     # XRT: TensorFlow's or PyTorch/XLA's
    (XLA_COMPILE, {"required": round(21.95 * GiB), "total": round(15.48 * GiB)}, "jax"),
    (XLA_COLAB, {"required": round(9.08 * GiB), "total": round(7.48 * GiB)}, "jax"),
])
def test_xla_tpu_sizes_are_binary_and_read(text, numbers, runtime):
    """XLA prints tsl's HumanReadableNumBytes: "3.95G" is 3.95 GiB (a decimal reading is 7 % off). The compile form is
    the program's whole plan against the chip's HBM, not one buffer."""
    res, ev = _ev(text)
    assert ev["numbers"] == numbers
    assert ev["device_kind"] == "tpu" and res["cause"] == "activations"
    assert runtime is None or ev["runtime"] == runtime


def test_xla_tpu_scratchpad_is_a_kernel_tile_not_the_chip():
    """A Pallas kernel's vmem (megabytes per core): its block sizes, not the device's memory (jax-ml/jax Pallas reports)."""
    res, ev = _ev("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem. "
                  "Used 16.08M of 16.00M vmem. Exceeded vmem capacity by 80.0K.\n")
    assert ev["numbers"] == {"scratch_required": round(16.08 * 1024 ** 2), "scratch_limit": 16 * 1024 ** 2}
    assert res["cause"] == "other" and "vmem" in ev["causes"][0]["evidence"][0]


def test_xla_tpu_under_pytorch_xla_is_pytorch():
    text = '  File "/usr/lib/python3/site-packages/torch_xla/core/xla_model.py", line 336, in optimizer_step\n' + XLA_COLAB
    assert _ev(text)[1]["runtime"] == "pytorch"


def test_mlx_buffer_over_the_metal_maximum():
    res, ev = _ev(MLX_BUFFER)
    assert ev["numbers"] == {"requested": 48736917632, "max_allowed": 30150672384}
    assert (ev["runtime"], ev["device_kind"], res["cause"]) == ("mlx", "metal", "activations")


def test_mlx_wrapped_size_is_a_bug_not_a_shortage():
    res, _ = _ev(MLX_BUFFER.replace("48736917632", "18446744069414600704"))
    assert res["cause"] == "other"


def test_mlx_resource_limit_is_a_count():
    # a count of live buffers, not bytes: arrays kept alive (leak, docs/triage-causes.md R7), the platform's limit second
    res, ev = _ev(MLX_COUNT)
    assert ev["numbers"] == {"buffer_count_limit": 499000}
    assert res["cause"] == "leak" and ev["runtime"] == "mlx"
    assert [c["id"] for c in ev["causes"][:2]] == ["leak", "other"]


def test_mlx_inside_ollama_is_ollama():
    text = ("Error: 500 Internal Server Error: mlx runner failed: panic: mlx: [metal::malloc] Attempting to allocate 40000000000 "
            "bytes which is greater than the maximum allowed buffer size of 30150672384 bytes. at /build/ollama/mlx-c/transforms.cpp:73\n")
    assert _ev(text)[1]["runtime"] == "ollama"


@pytest.mark.parametrize("text, numbers", [(SGLANG_POOL, {}), (SGLANG_POOL_VALUE, {"mem_fraction_static_ratio": 0.84})])
def test_sglang_pool_after_the_weights(text, numbers):
    res, ev = _ev(text)
    assert ev["numbers"] == numbers
    assert ev["runtime"] == "sglang" and res["cause"] == "weights-exceed-vram"


def test_sglang_prefill_is_the_kv_pool():
    res, ev = _ev(SGLANG_PREFILL)
    assert ev["runtime"] == "sglang" and res["cause"] == "kv-cache"
    assert ev["numbers"] == {"requested_tokens": 8192}
    assert "prefill batch (8192 tokens)" in ev["causes"][0]["evidence"][0]


@pytest.mark.parametrize("component, cause", [
    ("Additional executor resources (temporary for KV cache size estimation)", "activations"),
    ("Model", "weights-exceed-vram"),
    ("KV cache", "kv-cache"),
    ("Sampler", "activations"),
])
def test_trtllm_component_decides(component, cause):
    text = TRTLLM.replace("Additional executor resources (temporary for KV cache size estimation)\nTotal",
                          component + "\nTotal")
    res, ev = _ev(text)
    assert ev["numbers"] == {"total": round(95.09 * GiB), "free": round(0.32 * GiB)}
    assert ev["runtime"] == "tensorrt-llm" and res["cause"] == cause


def test_trtllm_is_one_failure_not_one_per_table_line():
    res, _ = _ev(TRTLLM)
    assert len(res["events"]) == 1


def test_cpu_allocator_without_its_prefix():
    ev = recognise(CPU_CUT.strip())
    assert ev and ev["kind"] == "torch.cpu" and ev["numbers"] == {"requested": 26214400}
    assert engine.triage_text(CPU_CUT)["cause"] == "host-ram"


@pytest.mark.parametrize("line", [
    "There is not enough memory: the disk is full",               # no "you tried to allocate"
    "Windows: not enough memory resources are available",
])
def test_cpu_cut_form_needs_the_allocators_words(line):
    ev = recognise(line)
    assert ev is None or ev["kind"] != "torch.cpu"


# tensorflow/tensorflow#36751 (a failure) and #43546 (the same words as a performance note)
BFC = ("2020-02-14 10:11:12.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:309] Allocator (GPU_0_bfc) ran out of "
       "memory trying to allocate 32.0KiB (rounded to 32768).  Current allocation summary follows.\n")
BFC_NOTE = ("2020-09-24 21:35:23.363348: W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of "
            "memory trying to allocate 1.02GiB with freed_by_count=0. The caller indicates that this is not a failure, but may "
            "mean that there could be performance gains if more memory were available.\n")
# NVIDIA/TensorRT-LLM#346 (engine build) and guidance-ai/llgtrt#7 (engine deserialisation)
TRT_BUILD = "[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n"
TRT_LOAD = "[TensorRT-LLM][ERROR] [deserialize.cpp::load::572] Error Code 2: OutOfMemory (Requested size was 69568823808 bytes.)\n"
# meta-llama/llama-cookbook#333 (a 12 GB card, bitsandbytes 8-bit)
HF_DISPATCH = ("ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized "
               "model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, you need to "
               "set `load_in_8bit_fp32_cpu_offload=True` and pass a custom `device_map` to `from_pretrained`.\n")
# ollama/ollama#8734 (available as raw bytes) and #12692 (quoted)
OLLAMA_RAW = ('time=2025-01-31T20:48:19.587Z level=WARN source=server.go:136 msg="model request too large for system" '
              'requested="391.0 GiB" available=393216983040 total="1690.2 GiB" free="358.4 GiB" swap="7.8 GiB"\n')
OLLAMA_QUOTED = ('time=2025-10-19T15:17:57.097+08:00 level=WARN source=server.go:540 msg="model request too large for system" '
                 'requested="5.5 GiB" available="3.4 GiB" total="6.0 GiB" free="3.4 GiB" swap="0 B"\n')
# huggingface/text-generation-inference#755 (warmup) and #710 (the older total-tokens form)
TGI = ('Error: Warmup(Generation("Not enough memory to handle 4096 prefill tokens. You need to decrease '
       '`--max-batch-prefill-tokens`"))\n')
TGI_TOTAL = ("Error: Warmup(Generation(\"Not enough memory to handle 16000 total tokens with 2 prefill tokens. You need to "
             "decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`\"))\n")


def test_tensorflow_bfc_failure_and_not_its_performance_note():
    res, ev = _ev(BFC)
    assert ev["numbers"] == {"requested": 32768}
    assert (ev["runtime"], ev["device_kind"], res["cause"]) == ("tensorflow", "cuda", "activations")
    assert not engine.triage_text(BFC_NOTE)["found"]


@pytest.mark.parametrize("text, cause, numbers", [
    (TRT_BUILD, "activations", {}),
    (TRT_LOAD, "weights-exceed-vram", {"requested": 69568823808}),
])
def test_tensorrt_out_of_memory(text, cause, numbers):
    res, ev = _ev(text)
    assert ev["numbers"] == numbers and res["cause"] == cause


def test_bitsandbytes_dispatch_is_the_weights():
    res, ev = _ev(HF_DISPATCH)
    assert res["cause"] == "weights-exceed-vram" and ev["runtime"] == "pytorch"


@pytest.mark.parametrize("text, required, available", [
    (OLLAMA_RAW, round(391.0 * GiB), 393216983040),
    (OLLAMA_QUOTED, round(5.5 * GiB), round(3.4 * GiB)),
])
def test_ollama_request_too_large_for_system(text, required, available):
    res, ev = _ev(text)
    assert ev["numbers"] == {"required": required, "available": available}
    assert (ev["runtime"], res["cause"]) == ("ollama", "host-ram")


@pytest.mark.parametrize("text, numbers, cause", [
    (TGI, {"prefill_tokens": 4096}, "activations"),
    (TGI_TOTAL, {"prefill_tokens": 2, "total_tokens": 16000}, "kv-cache"),
])
def test_tgi_warmup(text, numbers, cause):
    res, ev = _ev(text)
    assert ev["numbers"] == numbers
    assert (ev["runtime"], res["cause"]) == ("tgi", cause)


def test_vllm_estimate_on_the_next_line_is_read():
    """vLLM's max-len message wrapped before its estimate (kaito-project/kaito's report form, batch 20)."""
    text = ("ValueError: To serve at least one request with the models's max seq len (1048576), (22.5 GiB KV cache is needed, "
            "which is larger than the available KV cache memory (17.39 GiB).\n"
            "Based on the available memory, the estimated maximum model length is 810208.\n")
    res, ev = _ev(text)
    assert ev["numbers"]["estimated_max_len_tokens"] == 810208 and res["cause"] == "kv-cache"


# NVIDIA/nccl#1235 (the older form, with the calloc size) and the 2.19+ form with the CUDA error number
NCCL_OLD = ("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
            "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n")
NCCL_NEW = "node01:1234:1300 [0] include/alloc.h:320 (ncclCuMemAlloc) NCCL WARN Cuda failure 2 'out of memory'\n"
# swisscom/ai-research-keyphrase-extraction#28 (a model loaded into 8 GB of RAM)
BAD_ALLOC = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted\n"
# huggingface/diffusers#552 (ONNX Runtime's DirectML provider, E_OUTOFMEMORY)
DML_ORT = ("2022-10-18 13:56:21.2822368 [E:onnxruntime:, sequential_executor.cc:369 onnxruntime::SequentialExecutor::Execute] "
           "Non-zero status code returned while running MemcpyToHost node. Status Message: "
           "D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\MLOperatorAuthorImpl.cpp(1978): "
           "Exception(3) tid(4304) 8007000E Not enough memory resources are available to complete this operation.\n")
# Rust's io::Error for ENOMEM (safetensors, candle)
RUST_ENOMEM = "Error while deserializing header: Cannot allocate memory (os error 12)\n"
# AUTOMATIC1111/stable-diffusion-webui#6100 (the CPU allocator's words without "DefaultCPUAllocator: ")
A1111_CPU = "RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. not enough memory: you tried to allocate 6553600 bytes.\n"


@pytest.mark.parametrize("text, numbers", [(NCCL_OLD, {"requested": 6291456}), (NCCL_NEW, {})])
def test_nccl_out_of_memory(text, numbers):
    res, ev = _ev(text)
    assert ev["kind"] == "cuda.driver" and ev["numbers"] == numbers
    assert "NCCL" in ev["causes"][0]["evidence"][0]


@pytest.mark.parametrize("text, kind, cause, runtime", [
    (BAD_ALLOC, "cpp.bad_alloc", "host-ram", "pytorch"),
    (DML_ORT, "torch.directml", "activations", "onnxruntime"),
    (RUST_ENOMEM, "os.enomem", "host-ram", "pytorch"),
    (A1111_CPU, "torch.cpu", "host-ram", "pytorch"),
])
def test_more_messages(text, kind, cause, runtime):
    res, ev = _ev(text)
    assert (ev["kind"], res["cause"], ev["runtime"]) == (kind, cause, runtime)


# sgl-project/sglang#11581's numbers (decode, the pool drained: 4 tokens asked, 3 there)
SGLANG_DECODE_SHORT = ("RuntimeError: Decode out of memory. Try to lower your batch size.\nTry to allocate 4 tokens.\n"
                       "Available tokens: 3 (available_size=3 + evictable_size=0)\n")


@pytest.mark.parametrize("text, stage, tokens, available", [
    (SGLANG_DECODE, "decode", 127, 5248),
    (SGLANG_DECODE.replace("Decode out of memory", "Out of memory"), "next", 127, 5248),
    (SGLANG_DECODE.replace(".\nTry to allocate", ". Try to allocate"), "decode", 127, 5248),     # one line, as threads quote it
    (SGLANG_DECODE_SHORT, "decode", 4, 3),
])
def test_sglang_kv_pool_forms(text, stage, tokens, available):
    """The tokens asked for and the tokens the pool counted (free plus evictable) are read in every form. A pool short of the
    request is the KV cache (the running requests fill it); one whose own count covers the request refused for its page
    accounting (sglang-jax#113's 127 of 5248, as sglang#4602's 148 of 2048 that PR 4913 fixed): other, the KV pool the
    runner-up (test_triage_tune83.py)."""
    res, ev = _ev(text)
    assert (ev["kind"], ev["numbers"]) == ("sglang.kv_pool", {"requested_tokens": tokens, "available_tokens": available})
    causes = [c["id"] for c in ev["causes"]]
    assert causes[:2] == (["kv-cache"] if available < tokens else ["other", "kv-cache"]), ev["causes"]
    kv = next(c for c in ev["causes"] if c["id"] == "kv-cache")
    assert f"the {stage} batch ({tokens} tokens)" in kv["evidence"][0]


def test_other_programs_decode_out_of_memory_is_not_sglang():
    """Cambricon's video decoder says "Decode out of memory, force stop": no SGLang pool there."""
    res = engine.triage_text("RuntimeError: Decode out of memory, force stop\n")
    assert not res["found"] or res["events"][-1]["runtime"] != "sglang"


# TensorRT-LLM raises its table from PyTorch's OOM: PyTorch's message (the numbers) comes first
TORCH_FIRST = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 95.09 GiB of "
               "which 860.16 MiB is free. Including non-PyTorch memory, this process has 94.23 GiB memory in use. Of the allocated "
               "memory 91.80 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n\n"
               "The above exception was the direct cause of the following exception:\n\n")


@pytest.mark.parametrize("component, cause", [
    ("Model", "weights-exceed-vram"),
    ("KV cache", "kv-cache"),
    ("Initial KV Cache (temporary for KV cache size estimation)", "kv-cache"),   # the capitalised spelling of later releases
    ("Additional executor resources", "activations"),
])
def test_trtllm_component_decides_behind_pytorchs_message(component, cause):
    text = TORCH_FIRST + TRTLLM.replace("Additional executor resources (temporary for KV cache size estimation)\nTotal",
                                        component + "\nTotal")
    res, ev = _ev(text)
    assert ev["kind"] == "torch.cuda" and ev["runtime"] == "tensorrt-llm"
    assert res["cause"] == cause


def test_trtllm_table_in_a_one_line_repr():
    text = ("RuntimeError('Executor creation failed due to insufficient GPU memory.\\n\\nThe following component could not be "
            "created: KV cache\\nTotal GPU memory (GiB): 79.10\\nFree GPU memory before component creation attempt (GiB): 1.02')\n")
    res, ev = _ev(text)
    assert ev["numbers"] == {"total": round(79.10 * GiB), "free": round(1.02 * GiB)} and res["cause"] == "kv-cache"


def test_tgi_total_tokens_behind_pytorchs_message():
    res, _ = _ev(TORCH_FIRST + TGI_TOTAL)
    assert res["cause"] == "kv-cache"


@pytest.mark.parametrize("line", [
    "Error code: Wsl/Service/CreateInstance/CreateVm/HCS/E_OUTOFMEMORY\n",
    "D3D12 ERROR: ID3D12Device::CreateCommittedResource: failed with E_OUTOFMEMORY\n",
])
def test_e_outofmemory_is_directml_only_next_to_directml(line):
    res = engine.triage_text(line)
    assert not res["found"] or res["events"][-1]["kind"] != "torch.directml"


def test_tensorflow_host_allocator_is_system_ram():
    res, ev = _ev("2023-01-05 10:00:00.000000: W tensorflow/tsl/framework/bfc_allocator.cc:479] Allocator (gpu_host_bfc) ran "
                  "out of memory trying to allocate 2.00GiB (rounded to 2147483648)requested by op IteratorGetNext\n")
    assert ev["device_kind"] == "cpu" and res["cause"] == "host-ram"


def test_a_tensorrt_engine_inside_comfyui_is_comfyui():
    text = ('  File "/srv/ComfyUI/execution.py", line 323, in execute\n'
            '  File "/srv/ComfyUI/custom_nodes/ComfyUI_TensorRT/tensorrt_convert.py", line 80, in convert\n'
            + TRT_BUILD)
    assert _ev(text)[1]["runtime"] == "comfyui"


# ymcui/Chinese-LLaMA-Alpaca#526 (2023 llama.cpp: the graph context's fixed pool; the answer: a smaller -b)
GGML_POOL = "ggml_new_tensor_impl: not enough space in the context's memory pool (needed 819402384, available 805306368)\n"
# ggml-org/llama.cpp#6379 (2024: the context's own objects, a size the program computed)
GGML_OBJECT = "ggml_new_object: not enough space in the context's memory pool (needed 3539648, available 3539280)\n"
# ollama/ollama#6515 (ggml's CUDA check printing cuBLAS's status string)
GGML_CUBLAS = ("Error: llama runner process has terminated: CUDA error: the resource allocation failed\n"
               "  current device: 0, in function cublas_handle at /build/ollama/llm/llama.cpp/ggml/src/ggml-cuda/common.cuh:644\n"
               "  cublasCreate_v2(&cublas_handles[device])\n"
               "/build/ollama/llm/llama.cpp/ggml/src/ggml-cuda.cu:101: CUDA error\n")


@pytest.mark.parametrize("text, numbers, cause", [
    (GGML_POOL, {"requested": 819402384, "available": 805306368}, "activations"),
    (GGML_OBJECT, {"requested": 3539648, "available": 3539280}, "other"),
])
def test_ggml_context_pool(text, numbers, cause):
    res, ev = _ev(text)
    assert (ev["kind"], ev["numbers"], ev["runtime"], res["cause"]) == ("ggml.ctx_pool", numbers, "llama.cpp", cause)


def test_ggml_cuda_check_with_cublas_status_string():
    res, ev = _ev(GGML_CUBLAS)
    assert ev["kind"] == "cublas.alloc" and ev["runtime"] == "ollama"
