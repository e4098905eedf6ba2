"""Triage after batches 140-142, 144-146, 149 and 150 (round 67): MNN's "Out of memory when X is acquired in <Op>", V8's
"RangeError: Array buffer allocation failed", WebGPU's device loss (device kind by OS), TensorRT's builder skipping a tactic
for its workspace, and runtime markers for llama.cpp's converters, Core ML Tools, ONNX Runtime's C++ namespace and llama2.c's
browser ports. Paths, names, sizes and ops made up (modelled on wangzhaode/mnn-llm#25, dmarcos/llama2.c-web#1,
xororz/web-realesrgan#7, mlc-ai/web-llm#387, marcoslucianops/DeepStream-Yolo#366, ggml-org/llama.cpp#138,
apple/coremltools#126 and C0untFloyd/roop-unleashed#1065); expected values by hand."""
from gpu_garden.memory.triage import engine
from support.triage_event import top

# --- MNN's acquire check ------------------------------------------------------------------------------------------------
MNN_PARAM = ("Out of memory when weight is acquired in CudaConvolution.\n"
             "Out of memory when bias is acquired in CudaConvolution.\n"
             "Can't run session because not resized\n")
MNN_WORK = "Out of memory when workspace is acquired in VulkanSoftmax.\n"


def test_mnn_parameter_buffer_is_the_weights():
    """Before round 67 MNN's line was no failure at all; a layer's parameter buffer (weight, bias, gamma, ...) is the model's
    weights, on the device its op's class names (Cuda...: cuda)."""
    cause, causes, ev = top(MNN_PARAM)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], cause) == ("mnn.acquire", "mnn", "cuda", "weights-exceed-vram"), causes
    assert "CudaConvolution" in ev["causes"][0]["evidence"][0]


def test_mnn_working_buffer_is_activations():
    """A buffer that is no parameter is the op's working memory; the Vulkan op's class names the device."""
    cause, causes, ev = top(MNN_WORK)
    assert (ev["runtime"], ev["device_kind"], cause) == ("mnn", "vulkan", "activations"), causes


# --- V8's ArrayBuffer refusal -------------------------------------------------------------------------------------------
JS_BARE = "Uncaught (in promise) RangeError: Array buffer allocation failed\n    at new ArrayBuffer (<anonymous>)\n"
JS_WORKER = ("upscale-worker.js:88 Uncaught RangeError: Array buffer allocation failed\n"
             "    at new Uint8Array (<anonymous>)\n    at llama2c-runner.js:41:9\n")


def test_js_array_buffer_is_host_memory():
    """Before round 67: no failure. The JavaScript engine refused a buffer: host memory (the tab's or the machine's), on the
    CPU; with no program named, the runtime is the JavaScript engine, not PyTorch."""
    cause, causes, ev = top(JS_BARE)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], cause) == ("js.array_buffer", "javascript", "cpu", "host-ram"), causes


def test_js_array_buffer_under_a_named_program():
    """A program on the JavaScript engine whose own files the log names (llama2.c's browser port) is the runtime."""
    _, _, ev = top(JS_WORKER)
    assert ev["runtime"] == "llama2.c", ev["runtime"]


def test_a_range_error_of_another_kind_is_no_failure():
    """Only the allocation's own wording counts: another RangeError is no memory failure."""
    assert not engine.triage_text("Uncaught RangeError: Invalid array length\n    at new Array (<anonymous>)\n")["found"]


# --- WebGPU's device loss -----------------------------------------------------------------------------------------------
WEBGPU_LINUX = ("$ uname -a\nLinux box 6.6.10-arch1-1 #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n"
                "Error: OperationError: Device lost during onSubmittedWorkDone (do not use this error for recovery - it is NOT "
                "guaranteed to happen on device loss)\n")
WEBGPU_BARE = "Uncaught (in promise) Error: GPUDevice was lost\n"


def test_webgpu_device_loss_on_linux_is_vulkan_weights():
    """Before round 67: no failure. A WebGPU device loss reads as the model not fitting (runner-up: other, a driver reset),
    and Dawn's backend on Linux is Vulkan."""
    cause, causes, ev = top(WEBGPU_LINUX)
    assert (ev["kind"], ev["device_kind"], cause) == ("webgpu.device_lost", "vulkan", "weights-exceed-vram"), causes
    assert "other" in causes, causes


def test_webgpu_device_loss_without_an_os_stays_webgpu():
    """Nothing names the OS: the device is WebGPU's, not a CUDA default."""
    _, _, ev = top(WEBGPU_BARE)
    assert ev["device_kind"] == "webgpu", ev["device_kind"]


# --- TensorRT's builder workspace ---------------------------------------------------------------------------------------
TRT_TACTIC = ("ERROR: [TRT]: 2: [virtualMemoryBuffer.cpp::resizePhysical::161] Error Code 2: OutOfMemory (no further information)\n"
              "WARNING: [TRT]: Requested amount of GPU memory (2147483648 bytes) could not be allocated. There may not be enough "
              "free memory for allocation to succeed.\n"
              "WARNING: [TRT]: Skipping tactic 7 due to insufficient memory on requested size of 2147483648 detected for tactic "
              "0x0000000000000012.\n"
              "Try decreasing the workspace size with IBuilderConfig::setMemoryPoolLimit().\n")
TRT_PLAIN = "ERROR: [TRT]: 2: [virtualMemoryBuffer.cpp::resizePhysical::161] Error Code 2: OutOfMemory (no further information)\n"


def test_trt_tactic_skipped_for_workspace_is_other():
    """Before round 67: activations. The builder skipped a tactic whose workspace it could not get: the pool limit, a setting."""
    cause, causes, ev = top(TRT_TACTIC)
    assert (ev["runtime"], cause) == ("tensorrt", "other"), causes
    assert "setMemoryPoolLimit" in ev["causes"][0]["evidence"][0]


def test_trt_out_of_memory_without_a_skipped_tactic_stays_activations():
    cause, causes, _ = top(TRT_PLAIN)
    assert cause == "activations", causes


# --- runtime markers ----------------------------------------------------------------------------------------------------
CONVERT_KILLED = ("python3 convert-llama-hf-to-gguf.py models/13B/ 1\n{'dim': 5120, 'n_heads': 40, 'n_layers': 40}\n"
                  "Processing part 0\nKilled\n")
COREML = ('Traceback (most recent call last):\n  File "to_coreml.py", line 9, in <module>\n    class_labels="labels.txt")\n'
          '  File "/opt/py/lib/python3.8/site-packages/coremltools/converters/caffe/_caffe_converter.py", line 201, in convert\n'
          "    class_labels)\nMemoryError: std::bad_alloc\n")
ORT_CUBLAS = ("RuntimeError: /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:121 onnxruntime::CudaCall "
              "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:114 onnxruntime::CudaCall CUBLAS failure 3: "
              "CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=box ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/"
              "cuda_stream_handle.cc ; line=73 ; expr=cublasCreate(&cublas_handle_);\n")


def test_llama_cpp_converter_killed_is_llama_cpp():
    """Before round 67: pytorch. llama.cpp's converter script named in the command makes the kill llama.cpp's tool's."""
    cause, causes, ev = top(CONVERT_KILLED)
    assert (ev["runtime"], cause) == ("llama.cpp", "host-ram"), (ev["runtime"], causes)


def test_coremltools_frames_name_the_runtime():
    """Before round 67: pytorch."""
    _, _, ev = top(COREML)
    assert (ev["runtime"], ev["device_kind"]) == ("coremltools", "cpu"), ev["runtime"]


def test_onnxruntime_namespace_names_the_runtime():
    """Before round 67 cuBLAS's failure inside onnxruntime::CudaCall was read as PyTorch's."""
    _, _, ev = top(ORT_CUBLAS)
    assert (ev["runtime"], ev["device_kind"]) == ("onnxruntime", "cuda"), ev["runtime"]
