"""Out-of-memory messages triage did not recognise before round 6: torch_npu (Ascend), PaddlePaddle, CuPy's pool, vLLM's
sampler warm-up, ONNX Runtime's CUDA provider. Each log is modelled on a named public thread (numbers as reported, paths
and prose rewritten); each test fails when its pattern or its row goes."""
import pytest

from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.parse import recognise
from gpu_garden.memory.units import GiB, KiB, MiB
from support.triage_event import last_event as _ev

# vllm-project/vllm-ascend#19 (torch_npu 2.x: "current active"; 50 GiB of the NPU held outside this process's allocator)
NPU = ('  File "/opt/venv/lib/python3.10/site-packages/vllm_ascend/worker/model_runner.py", line 1402, in profile_run\n'
       "RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 0; 60.97 GiB total capacity; 10.24 GiB already "
       "allocated; 10.24 GiB current active; 19.52 MiB free; 10.65 GiB reserved in total by PyTorch) If reserved memory is >> "
       "allocated memory try setting max_split_size_mb to avoid fragmentation.\n")
# the oldest torch_npu form ("... free; N cached)"), as PyTorch <= 1.4 printed it
NPU_CACHED = ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 1; 31.21 GiB total capacity; 28.00 GiB already "
              "allocated; 1.00 GiB free; 512.00 MiB cached)\n")
# PaddlePaddle/PaddleSeg#1723 (PaddleOCR's detection training on an 8 GB card)
PADDLE = ("$ python3 tools/train.py -c configs/det/det_mv3_db.yml\n"
          "ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 400.000244MB memory on GPU 0, 7.288696GB "
          "memory has been allocated and available memory is only 155.187500MB.\n\n"
          "Please check whether there is any other process using GPU 0.\n"
          "1. If yes, please stop them, or start PaddlePaddle on another GPU.\n"
          "2. If no, please decrease the batch size of your model.\n")
# PaddlePaddle/Paddle#26892 (before Paddle 2.0: no "has been allocated" part)
PADDLE_OLD = ("Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only "
              "416.625000MB.\n")
# cupy/cupy#2537 (Chainer's training loop on CuPy 7)
CUPY = ("Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).\n"
        "Traceback (most recent call last):\n"
        '  File "/home/u/env/lib/python3.5/site-packages/chainer/training/trainer.py", line 343, in run\n'
        "    update()\n"
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).\n")
# cupy/cupy#1912 (before CuPy 7: "total" is what the pool would hold with this allocation)
CUPY_OLD = "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)\n"
# vllm-project/vllm#14452 (8 workers, 1024 dummy requests) with llm-d/llm-d#787's order: graphs captured, then the sampler
VLLM_SAMPLER = ("(VllmWorker rank=0 pid=10672) INFO 03-16 06:12:20 [gpu_model_runner.py:1562] Graph capturing finished in 21 secs, "
                "took 0.47 GiB\n"
                "(VllmWorker rank=0 pid=10672) ERROR 03-16 06:12:38 [multiproc_executor.py:375]   File "
                '"/srv/vllm/vllm/v1/worker/gpu_model_runner.py", line 1292, in _dummy_sampler_run\n'
                "(VllmWorker rank=0 pid=10672) ERROR 03-16 06:12:38 [multiproc_executor.py:375] RuntimeError: CUDA out of memory "
                "occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or "
                "`gpu_memory_utilization` when initializing the engine.\n")
# vLLM raises it from PyTorch's own message: that message comes first, with its numbers
TORCH_FIRST = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1024.00 MiB. GPU 0 has a total capacity of 79.19 GiB "
               "of which 601.00 MiB is free. Including non-PyTorch memory, this process has 78.58 GiB memory in use. Of the "
               "allocated memory 75.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n\n"
               "The above exception was the direct cause of the following exception:\n\n")
# hacksider/Deep-Live-Cam#584 (ONNX Runtime's CUDA provider, creating a stream)
ORT_CUDA = ("[ONNXRuntimeError] : 1 : FAIL : C:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:121 "
            "onnxruntime::CudaCall C:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:114 onnxruntime::CudaCall "
            "CUDA failure 2: out of memory ; GPU=0 ; hostname=PC ; file=C:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\"
            "cuda_stream_handle.cc ; line=175 ; expr=cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);\n")


def test_npu_reads_as_pytorch_with_its_numbers():
    res, ev = _ev(NPU)
    assert (ev["kind"], ev["device_kind"], ev["runtime"], ev["device_index"]) == ("torch.npu", "npu", "pytorch", 0)
    assert ev["numbers"] == {"requested": 22 * MiB, "total": round(60.97 * GiB), "allocated": round(10.24 * GiB),
                             "free": round(19.52 * MiB), "reserved": round(10.65 * GiB),
                             "reserved_unallocated": round(10.65 * GiB) - round(10.24 * GiB)}
    # 60.97 GiB card, 10.65 GiB reserved by this allocator, 19.52 MiB free: the rest is held outside it
    assert res["cause"] == "other-process"
    assert ev["platform"]["backend"] == "npu" and ev["platform"]["expandable_segments"] is False


def test_npu_oldest_form_reads_cached_as_the_unused_part():
    res, ev = _ev(NPU_CACHED)
    assert ev["numbers"] == {"requested": 2 * GiB, "total": round(31.21 * GiB), "allocated": 28 * GiB, "free": 1 * GiB,
                             "reserved_unallocated": 512 * MiB, "reserved": 28 * GiB + 512 * MiB}
    assert ev["device_index"] == 1 and res["cause"] == "activations"


def test_npu_message_cut_after_its_size():
    ev = recognise("torch_npu.memory: NPU out of memory. Tried to allocate 524.00 MiB")
    assert ev["kind"] == "torch.npu" and ev["numbers"] == {"requested": 524 * MiB} and not ev["complete"]


@pytest.mark.parametrize("text, numbers", [
    (PADDLE, {"requested": round(400.000244 * MiB), "device_used": round(7.288696 * GiB), "free": round(155.1875 * MiB),
              "total": round(7.288696 * GiB) + round(155.1875 * MiB)}),
    (PADDLE_OLD, {"requested": round(1.53125 * GiB), "free": round(416.625 * MiB)}),
])
def test_paddle_sizes_are_binary_and_read(text, numbers):
    """string::HumanReadableSize divides by 1024 and labels "MB": 400.000244MB is 400 MiB."""
    res, ev = _ev(text)
    assert ev["numbers"] == numbers
    assert (ev["kind"], ev["runtime"], ev["device_kind"], ev["device_index"]) == ("paddle.oom", "paddle", "cuda", 0)
    assert res["cause"] == "activations"
    assert ev["guide"]["id"] == "paddlepaddle"


def test_paddle_kilobytes():
    ev = recognise("Out of memory error on GPU 7. Cannot allocate 39.250000kB memory on GPU 7, 0.000000B memory has been "
                   "allocated and available memory is only 0.000000B.")
    assert ev["numbers"]["requested"] == round(39.25 * KiB) and ev["numbers"]["free"] == 0


@pytest.mark.parametrize("text, numbers", [
    (CUPY, {"requested": 25600000, "allocated": 3635267072}),
    (CUPY_OLD, {"requested": 1073741824, "allocated": 12373894656 - 1073741824}),
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 2,048 bytes (allocated so far: 1,024 bytes, limit set to: "
     "3,000 bytes).\n", {"requested": 2048, "allocated": 1024, "limit": 3000}),
])
def test_cupy_pool(text, numbers):
    res, ev = _ev(text)
    assert ev["numbers"] == numbers
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("cupy.oom", "cupy", "cuda")
    assert res["cause"] == "activations" and ev["guide"]["id"] == "cupy"


def test_xla_keeps_its_own_allocating_form():
    assert recognise("RESOURCE_EXHAUSTED: Out of memory allocating 8589934592 bytes.")["kind"] == "xla.oom"


@pytest.mark.parametrize("prefix", ["", TORCH_FIRST])
def test_vllm_sampler_warmup_is_max_num_seqs(prefix):
    res, ev = _ev(prefix + VLLM_SAMPLER)
    # (after PyTorch's message it was raised from, that message's sizes come with it: engine.EXPLAINED_WITHIN)
    torch = {"requested": 1024 << 20, "free": 601 << 20} if prefix else {}
    assert ev["kind"] == "vllm.warmup" and {k: ev["numbers"].get(k) for k in ("dummy_requests_count", *torch)} == \
        {"dummy_requests_count": 1024, **torch} and (prefix or len(ev["numbers"]) == 1)
    assert ev["runtime"] == "vllm" and res["cause"] == "activations"
    assert "sampler warm-up with 1024 dummy requests" in ev["causes"][0]["evidence"][0]
    assert ev["guide"]["id"] == "vllm-activations"


def test_vllm_pooler_warmup():
    # vllm/v1/worker/gpu_model_runner.py _dummy_pooler_run (f"({task=})")
    ev = recognise("RuntimeError: CUDA out of memory occurred when warming up pooler (task='embed') with 256 dummy requests. "
                   "Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")
    assert ev["kind"] == "vllm.warmup" and ev["numbers"] == {"dummy_requests_count": 256}


def test_onnxruntime_cuda_provider_failure():
    res, ev = _ev(ORT_CUDA)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("cuda.driver", "onnxruntime", "cuda")
    assert res["cause"] == "other-process"


# NVIDIA/cudf#6773 (two notebook kernels using cuDF), NVIDIA/cudf#10517 (the out_of_memory: prefix), neka-nat/cupoch#98 (the
# pool's own maximum); VITA-Group/FSGS#70 (thrust inside a PyTorch extension)
RMM_DEVICE = ("---> 86         index_col=index_col,\n\ncudf/_lib/csv.pyx in cudf._lib.csv.read_csv()\n\n"
              "MemoryError: std::bad_alloc: CUDA error at: ../include/rmm/mr/device/cuda_memory_resource.hpp:68: "
              "cudaErrorMemoryAllocation out of memory\n")
RMM_PREFIX = ("MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/envs/rapids-22.02/include/rmm/mr/device/"
              "cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation out of memory\n")
RMM_POOL = ('  File "bench/basic.py", line 5, in <module>\n    cph.initialize_allocator(cph.PoolAllocation, 1000000000)\n'
            "MemoryError: std::bad_alloc: RMM failure at:/src/cupoch/third_party/rmm/include/rmm/mr/device/pool_memory_resource.hpp:179: "
            "Maximum pool size exceeded\n")
THRUST = ('  File "/home/u/FSGS/scene/gaussian_model.py", line 177, in create_from_pcd\n'
          "MemoryError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n")


@pytest.mark.parametrize("text, form, cause", [(RMM_DEVICE, "device", "activations"), (RMM_PREFIX, "device", "activations"),
                                               (RMM_POOL, "pool_limit", "other")])
def test_rmm_bad_alloc_is_the_gpu_not_host_ram(text, form, cause):
    res, ev = _ev(text)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == ("rmm.oom", "rapids", "cuda", form)
    assert ev["numbers"] == {}
    assert res["cause"] == cause and ev["guide"]["id"] == "rapids"


def test_thrust_bad_alloc_is_the_gpu():
    res, ev = _ev(THRUST)
    assert (ev["kind"], ev["device_kind"], ev["runtime"]) == ("cuda.driver", "cuda", "pytorch")
    assert res["cause"] != "host-ram"


# openvinotoolkit/openvino#36386 (22 pages in one VLM request; the reporter's paste wraps the message) and
# openvinotoolkit/openvino.genai#2406 (a size computed wrong after long multi-turn chats with prefix caching)
OV_PAGES = ("[GPU] Exceeded max size of memory object allocation: requested 28666553344 bytes,\n"
            "but max alloc size supported by device is 4294959104 bytes.\n"
            "Please try to reduce batch size, use lower precision, or set\n"
            "ov::intel_gpu::hint::enable_large_allocations config property to true.\n")
OV_BOGUS = ("Exception from src\\inference\\src\\cpp\\infer_request.cpp:223:\n"
            "Check '!exceed_allocatable_mem_size' failed at src\\plugins\\intel_gpu\\src\\runtime\\ocl\\ocl_engine.cpp:115:\n"
            "[GPU] Exceeded max size of memory object allocation: requested 2305843008391495680 bytes, but max alloc size supported "
            "by device is 4294959104 bytes.Please try to reduce batch size or use lower precision.\n")


@pytest.mark.parametrize("text, numbers, cause", [
    # the reporter's wrapped paste is read whole since round 18 (memory/triage/paste.py): the device maximum too
    (OV_PAGES, {"requested": 28666553344, "max_allowed": 4294959104}, "activations"),
    (OV_BOGUS, {"requested": 2305843008391495680, "max_allowed": 4294959104}, "other"),
    (OV_PAGES.replace("bytes,\nbut", "bytes, but"), {"requested": 28666553344, "max_allowed": 4294959104}, "activations"),
])
def test_openvino_buffer_over_the_device_maximum(text, numbers, cause):
    res, ev = _ev(text)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("openvino.buffer_limit", "openvino", "xpu")
    assert ev["numbers"] == numbers and res["cause"] == cause
    assert ev["guide"]["id"] == "openvino"


# tensorflow/tensorflow#12237 (a 2 GB Quadro P400) and gaycodegal/craiyon-low-vram-easy#1 (JAX's build: pinned host buffers)
TF_DEVICE = ("2017-08-12 08:25:14.794414: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Creating TensorFlow device (/gpu:0)\n"
             "2017-08-12 08:25:16.508376: E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate 1.51G (1617277696 "
             "bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n")
JAX_HOST = ("2022-07-03 15:46:53.245176: E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to "
            "alloc 782758144 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
            "2022-07-03 15:46:53.245221: W external/org_tensorflow/tensorflow/core/common_runtime/device/device_host_allocator.h:46] "
            "could not allocate pinned host memory of size: 782758144\n")


def test_stream_executor_device_allocation_has_its_size_and_runtime():
    res, ev = _ev(TF_DEVICE)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("cuda.driver", "tensorflow", "cuda")
    assert ev["numbers"] == {"requested": 1617277696}
    assert res["cause"] != "host-ram"


def test_stream_executor_pinned_host_is_system_ram():
    res, ev = _ev(JAX_HOST)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("cuda.driver", "jax", "cpu")
    assert ev["numbers"] == {"requested": 782758144}
    assert res["cause"] == "host-ram"
    ev2 = recognise("W tensorflow/core/common_runtime/gpu/gpu_host_allocator.h:44] could not allocate pinned host memory of size: 8589934592")
    assert ev2["numbers"] == {"requested": 8589934592} and ev2["runtime"] == "tensorflow"


# lmstudio-ai/lmstudio-bug-tracker#1202 (the estimate), #1038 (an estimate that failed: NaN), #484 (the older wording)
LMS_ESTIMATE = ("Error: Model loading was stopped due to insufficient system resources. Under the current settings, this model "
                "requires approximately 273.25 GB of memory, and continuing to load it would likely overload your system and cause "
                "it to freeze. If you think this is incorrect, you can adjust the model loading guardrails in settings.\n")
LMS_NAN = ("Error: Model loading was stopped due to insufficient system resources. Under the current settings, this model requires "
           "approximately NaN undefined of memory, and continuing to load it would likely overload your system and cause it to freeze.\n")
LMS_ABORTED = ("[2025-03-07 01:45:37.078] [error] [LMSInternal][Client=LM Studio][Endpoint=loadModel] Error in channel handler: Error: "
               "Model loading aborted due to insufficient system resources. Overloading the system will likely cause it to freeze.\n")
# Gadersd/stable-diffusion-burn#5 (Burn on wgpu's Vulkan backend)
WGPU = ("thread 'main' panicked at 'wgpu error: Validation Error\n\nCaused by:\n    In Device::create_buffer\n"
        "      note: label = `Buffer Src`\n    Not enough memory left\n\n', /home/u/src/wgpu/wgpu/src/backend/direct.rs:3095:5\n")


def test_lmstudio_guardrail_estimate():
    # the thread's estimate was itself wrong (a 7 GB model); the line alone cannot tell, so the reading is a weak one
    res, ev = _ev(LMS_ESTIMATE)
    assert (ev["kind"], ev["runtime"]) == ("lmstudio.guardrail", "llama.cpp")   # LM Studio runs llama.cpp (env.ENGINE_OF)
    assert ev["numbers"] == {"required": round(273.25 * GiB)}
    assert res["cause"] == "weights-exceed-vram" and ev["guide"]["id"] == "lmstudio"
    assert "273.25 GiB" in ev["causes"][0]["evidence"][0]


def test_lmstudio_guardrail_without_an_estimate_is_a_bug_of_the_estimate():
    res, ev = _ev(LMS_NAN)
    assert ev["kind"] == "lmstudio.guardrail" and ev["numbers"] == {} and res["cause"] == "other"
    assert "could not estimate" in ev["causes"][0]["evidence"][0]


def test_lmstudio_older_wording_and_2026_wording():
    res, ev = _ev(LMS_ABORTED)
    assert (ev["kind"], ev["runtime"], res["cause"]) == ("lmstudio.guardrail", "llama.cpp", "weights-exceed-vram")
    assert recognise("Not enough resources to load the model with the current settings")["kind"] == "lmstudio.guardrail"


def test_wgpu_out_of_memory():
    res, ev = _ev(WGPU)
    assert (ev["kind"], ev["runtime"], ev["numbers"]) == ("wgpu.oom", "wgpu", {})
    assert res["cause"] == "activations" and ev["guide"]["id"] == "wgpu"
    assert recognise('Error: NoDevice("Not enough memory left.")')["kind"] == "wgpu.oom"
    assert recognise("The queue has not enough memory left in it for this job") is None


# ollama/ollama#17246 (0.32, the MLX runner on a Mac)
OLLAMA_FIT = ("ollama run qwen3.6:35b-a3b-coding-nvfp4\n"
              "Error: 500 Internal Server Error: model requires 20.4 GiB but only 11.3 GiB are available (after 512.0 MiB overhead)\n")


def test_ollama_mlx_fit_check():
    res, ev = _ev(OLLAMA_FIT)
    assert (ev["kind"], ev["runtime"]) == ("ollama.fit", "ollama")
    assert ev["numbers"] == {"required": round(20.4 * GiB), "available": round(11.3 * GiB), "overhead": 512 * MiB}
    assert res["cause"] == "weights-exceed-vram" and "the weights do not fit" in ev["causes"][0]["evidence"][0]


# ggml-org/llama.cpp#28953 (an Arc Pro B70 refusing 2303168640 bytes) and ggml-org/llama.cpp#9476 (PI's host-memory code)
SYCL_DEVICE = ("ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 2303168640 Bytes of memory on device\n"
               "llama_model_load: error loading model: unable to allocate SYCL0 buffer\n")
SYCL_PI_HOST = "Native API failed. Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY) -6 (PI_ERROR_OUT_OF_HOST_MEMORY) -999 (UNKNOWN PI error)\n"


def test_llamacpp_sycl_buffer():
    res, ev = _ev(SYCL_DEVICE)
    assert ev["runtime"] == "llama.cpp" and ev["device_kind"] == "xpu"
    assert ev["numbers"] == {"requested": 2303168640} and res["cause"] == "weights-exceed-vram"
    host = recognise("ggml_backend_sycl_host_buffer_type_alloc_buffer: can't allocate 1048576 Bytes of memory on host")
    assert (host["kind"], host["device_kind"], host["numbers"]) == ("ggml.host", "cpu", {"requested": 1048576})


def test_sycl_pi_host_memory_code():
    res, ev = _ev(SYCL_PI_HOST)
    assert ev["kind"] == "xpu.driver" and res["cause"] == "host-ram"
    assert recognise("Native API returns: -2 (PI_ERROR_OUT_OF_DEVICE_MEMORY)")["device_kind"] == "xpu"


# kingoflolz/mesh-transformer-jax#66 (XLA's stream-executor allocator under JAX) and ml-explore/mlx-examples#21 (MLX's allocator limit
# on an 8 GB Mac, before 2024)
XLA_REQUEST = ("2021-07-21 16:15:16.513776: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client.cc:1981] "
               "Execution of replica 0 failed: Resource exhausted: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0\n"
               "RuntimeError: Resource exhausted: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0\n")
MLX_MALLOC_OR_WAIT = ("100%|##########| 50/50 [01:10<00:00,  1.41s/it]\nlibc++abi: terminating due to uncaught exception of type "
                      "std::runtime_error: [malloc_or_wait] Unable to allocate 134217728 bytes.\nzsh: abort      python txt2image.py\n")


def test_xla_failed_to_allocate_request():
    res, ev = _ev(XLA_REQUEST)
    assert (ev["kind"], ev["runtime"], ev["numbers"]) == ("xla.oom", "jax", {"requested": 33554432})
    assert res["cause"] == "activations"


def test_mlx_malloc_or_wait():
    res, ev = _ev(MLX_MALLOC_OR_WAIT)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"]) == ("mlx.malloc", "mlx", "metal", {"requested": 134217728})
    assert res["cause"] == "activations" and ev["guide"]["id"] == "mlx"


# ROCm/tensorflow-upstream#82 (TensorFlow on ROCm: another process had taken the card)
TF_ROCM = ("2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G (7889485824 bytes) "
           "from device: hipError_t(1002)\n")


def test_stream_executor_on_rocm():
    res, ev = _ev(TF_ROCM)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"]) == ("cuda.driver", "tensorflow", "rocm", {"requested": 7889485824})
    assert res["cause"] == "other-process"


# huggingface/candle#2046 (cudarc's DriverError, a Mistral 7B over two GPUs)
CANDLE = "loaded the model in 5.12s\nError: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\n"


def test_candle_driver_error_names_its_runtime():
    res, ev = _ev(CANDLE)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("cuda.driver", "candle", "cuda")
    # a bare driver error names no holder (round 15: other first, another process second); the thread never showed one
    assert [c["id"] for c in ev["causes"][:2]] == ["other", "other-process"]
