"""Which runtime a log names (env.guess_runtime and the runtime markers in lines.py). Lines written from each runtime's own
formats (sizes, paths and names made up), not copies of corpus cases; each pair holds the same failure with and without
the line that names the runtime, so a marker that stops reading its line fails the test."""
import pytest

from support.triage_event import last_event

TORCH = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.57 GiB "
         "of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.46 GiB memory in use.\n")
CUDA_ERR = "RuntimeError: CUDA error: out of memory\n"
# lines that name nothing between the runtime's line and the failure (a short paste is read whole; a log is read by anchors)
QUIET = "".join(f"worker {i}: heartbeat ok\n" for i in range(60))


def _runtime(text):
    return last_event(text)[1]["runtime"]


@pytest.mark.parametrize("lead, runtime", [
    # vLLM: its start-up lines (gpu_worker.py, kv_cache_utils.py), its offline API, its engine process, its workers' names
    ("Model loading took 6.20 GiB memory and 4.1 seconds\n", "vllm"),
    ("Available KV cache memory: 11.02 GiB\n", "vllm"),
    ("GPU KV cache size: 90,112 tokens\n", "vllm"),
    ("llm = LLM(model='org/small-model', max_model_len=2048)\n", "vllm"),
    ("EngineCore failed to start.\n", "vllm"),
    # SGLang: model_runner.py's memory lines and the launcher's note when a child dies
    ("Load weight begin. avail mem=21.40 GB\n", "sglang"),
    ("KV Cache allocated. #tokens: 120000, K 4.10 GB, V 4.10 GB\n", "sglang"),
    ("[2025-01-02 03:04:05] Received sigquit from a child process. It usually means the child failed.\n", "sglang"),
    # text-generation-inference: its launcher's log and its server's frames
    ("2024-01-02T03:04:05.000000Z ERROR text_generation_launcher: Shard 0 failed to start\n", "tgi"),
    ('  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/flash_causal_lm.py", line 90, in warmup\n', "tgi"),
])
def test_a_servers_own_line_names_it(lead, runtime):
    assert _runtime(lead + TORCH) == runtime
    assert _runtime(lead + QUIET + TORCH) == runtime
    assert _runtime(QUIET + TORCH) == "pytorch"


def test_a_vllm_worker_killed_by_the_kernel_is_vllm():
    kill = "VLLM::Worker_TP invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE), order=0\n"
    assert _runtime(kill) == "vllm"
    assert _runtime(kill.replace("VLLM::Worker_TP", "python3")) == "pytorch"


@pytest.mark.parametrize("line, runtime", [
    # TensorRT's Python logger, then the kernel's kill of the builder
    ("[TensorRT] VERBOSE: Building engine: 12 layers\nKilled\n", "tensorrt"),
    # C++/CUDA libraries whose error names their own source file
    ("Uncaught exception: /src/ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/gpu_memory.h:120 "
     "cudaMalloc(&rawptr, n_bytes) failed with error out of memory\n", "tiny-cuda-nn"),
    ("Error while calling cudaMalloc(&data, n*sizeof(float)) in file /opt/dlib/dlib/cuda/gpu_data.cpp:200. code: 2, "
     "reason: out of memory\n", "dlib"),
    ("CUDA Runtime Error at: /opt/cuTAGI/src/net_prop.cu:40\nout of memory cudaMalloc(&d_x, n * sizeof(float))\n", "cutagi"),
    # MLC's older chat CLI (mlc-chat) on Vulkan
    ("Use lib /opt/mlc-chat/dist/lib/model-q4f16_vulkan.so\nCheck failed: (__e == VK_SUCCESS) is false: Vulkan Error, "
     "code=-2: VK_ERROR_OUT_OF_DEVICE_MEMORY\n", "mlc-llm"),
])
def test_a_librarys_own_line_names_it(line, runtime):
    assert _runtime(line) == runtime


def test_library_markers_want_the_library_path_not_the_word():
    """A log that only mentions dlib (a package being installed) is not dlib's own error."""
    assert _runtime("Collecting dlib==19.24\n" + CUDA_ERR) == "pytorch"


@pytest.mark.parametrize("lead", [
    # ComfyUI's frames as a traceback relative to its folder prints them
    'Traceback (most recent call last):\n  File "comfy/model_management.py", line 600, in load_models_gpu\n',
    # its old execution.py banner and the frontend's node line above the message
    "Error occurred when executing KSampler:\n\n",
])
def test_comfyui_named_by_its_frames_and_node_lines(lead):
    assert _runtime(lead + TORCH) == "comfyui"
    assert _runtime(QUIET + lead + TORCH) == "comfyui"


def test_a_bare_camelcase_node_line_names_comfyui_only_beside_comfyuis_own_lines():
    # review18a #8: "DataLoader" (or a ComfyUI node type the error dialog prints) alone above the message is any program's word
    assert _runtime("DataLoader\n" + TORCH) == "pytorch"
    assert _runtime("CheckpointLoaderSimple\n" + TORCH) == "pytorch"
    # beside a ComfyUI frame or its executor's line, the log is ComfyUI's
    frame = 'Traceback (most recent call last):\n  File "comfy/sd.py", line 600, in load_checkpoint_guess_config\n'
    assert _runtime("CheckpointLoaderSimple\n" + frame + TORCH) == "comfyui"
    assert _runtime("!!! Exception during processing !!! CUDA error: out of memory\nCheckpointLoaderSimple\n" + TORCH) == "comfyui"


def test_a_folder_that_ends_in_comfy_is_not_comfyui():
    assert _runtime('Traceback (most recent call last):\n  File "/srv/mycomfy/run.py", line 3, in main\n' + TORCH) == "pytorch"


GGML_CUBLAS = ("CUDA error: the resource allocation failed\n  current device: 0, in function cublas_handle at "
               "{root}/ggml-cuda/common.cuh:500\n  cublasCreate_v2(&cublas_handles[device])\n")
GGML_POOL = "ggml_new_object: not enough space in the context's memory pool (needed 2000000, available 1999000)\n"


CGO = "GGML_ASSERT(obj_new) failed\nSIGABRT: abort\nPC=0x7f0000 m=5 sigcode=18446744073709551610\nsignal arrived during cgo execution\n"


@pytest.mark.parametrize("text", [
    # Ollama's source tree vendored llama.cpp under llm/llama.cpp/ (the location ggml's CUDA error prints): its own tree
    GGML_CUBLAS.format(root="/go/src/github.com/ollama/ollama/llm/llama.cpp"),
    # ggml aborting inside a Go program with an Ollama line beside it
    "time=2024-06-01T10:00:00.000Z level=INFO source=server.go:320 msg=\"starting llama server\" cmd=\"/usr/local/lib/ollama/runners/cuda_v12/ollama_llama_server\"\n"
    + GGML_POOL + CGO,
])
def test_ggml_inside_ollama_is_ollama(text):
    assert _runtime(text) == "ollama"


@pytest.mark.parametrize("text", [
    GGML_CUBLAS.format(root="/home/me/llama.cpp"),
    GGML_POOL + "GGML_ASSERT(obj_new) failed\nAborted (core dumped)\n",
    # review18a #2: a user who cloned llama.cpp into ~/llm/, and ggml inside some Go program (cgo) with nothing of Ollama
    GGML_CUBLAS.format(root="/home/me/llm/llama.cpp"),
    GGML_POOL + CGO,
])
def test_ggml_without_ollamas_signs_stays_llama_cpp(text):
    assert _runtime(text) == "llama.cpp"


@pytest.mark.parametrize("line", [
    "[ONNXRuntimeError] : 1 : FAIL : Load model from /models/face.onnx failed:std::bad_alloc\n",
    "Unhandled exception. OnnxRuntimeGenAIException: 'bad allocation'\n",
    # TensorRT's message as ONNX Runtime's TensorRT execution provider logs it
    "2023-01-02 03:04:05.6 [E:onnxruntime:Default, tensorrt_execution_provider.h:60 log] [2023-01-02 03:04:05 ERROR] "
    "../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)\n",
])
def test_onnx_runtimes_own_error_names_it(line):
    assert _runtime(line) == "onnxruntime"


def test_a_bad_alloc_that_names_no_onnx_runtime_is_not_it():
    assert _runtime("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n") != "onnxruntime"
    assert _runtime("../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)\n") == "tensorrt"


FORGE_ASYNC = ('  File "{root}/modules/upscaler.py", line 60, in upscale\n    img = self.do_upscale(img)\n'
               "torch.OutOfMemoryError: Allocation on device\n")


def test_cuda_malloc_async_through_the_webui_folder_is_not_comfyui():
    """cudaMallocAsync's message is ComfyUI's default allocator's, but Forge runs it too: its folder names the web UI."""
    assert _runtime(FORGE_ASYNC.format(root="D:/apps/sd-webui-forge-neo")) == "pytorch"
    assert _runtime(FORGE_ASYNC.format(root="D:/apps/img-tools")) == "comfyui"


def test_cuda_malloc_async_after_forges_loader_is_not_comfyui():
    """Forge's model loader ("[Memory Management] Target: ...") before the same message, without a traceback."""
    load = "[Memory Management] Target: KModel, Free GPU: 9000.00 MB, Model Require: 6000.00 MB, Inference Require: 1024.00 MB\n"
    assert _runtime(load + "torch.OutOfMemoryError: Allocation on device\n") == "pytorch"
    assert _runtime("torch.OutOfMemoryError: Allocation on device\n") == "comfyui"
