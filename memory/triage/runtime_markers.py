"""The runtimes a log line names (RUNTIME_MARKERS), the bare names that are only a weak hint (NAMED_RUNTIMES, with the
frames one may come with: NAMED_FRAMES), and
the gate words of both (RUNTIME_WORDS, which the scanner's anchors include). Moved from lines.py (rows unchanged)."""

# The runtimes a line names (runtime id, the words that gate the line, the pattern: one group each in runtime_marker).
# Word boundaries keep "mlx5" (a network card in NCCL's lines) from reading as MLX.
RUNTIME_MARKERS = (
    # SGLang's own start-up lines name it too (model_runner.py's "Load weight begin. avail mem=77.24 GB", "KV Cache allocated.
    # #tokens: N", and the launcher's "Received sigquit from a child process" when a worker dies)
    ("sglang", ("sglang", "avail mem=", "KV Cache allocated. #tokens", "sigquit from a child", "Capture cuda graph failed",
                "Scheduler hit an exception", "max_total_num_tokens=", "/sgl-workspace/"),
     r"\bsglang\b|\bavail mem=\d|KV Cache allocated\. #tokens: \d|Received sigquit from a child process|"
     # and its capture's own exception (cuda_graph_runner.py: raise Exception(f"Capture cuda graph failed: {e}..."))
     r"\bCapture cuda graph failed: |"
     # more of its own words (srt/managers/scheduler.py: "Scheduler hit an exception: <traceback>", the scheduler's
     # "max_total_num_tokens=N, chunked_prefill_size=..." line) and its images' working folder (docker/Dockerfile:
     # WORKDIR /sgl-workspace, where its frames' paths start)
     r"Scheduler hit an exception|\bmax_total_num_tokens=\d|/sgl-workspace/"),
    ("mxnet", ("mxnet", "pooled_storage"), r"\bmxnet\b|pooled_storage_manager"),
    # MLX and MLC LLM: their own evidence only (fix27, as round 66 did for LMDeploy): Metal's messages as MLX raises them,
    # the modules' paths ("site-packages/mlx_engine/...", "mlx_vlm/models/...", "mlx.core", "C:\\mlc-chat\\dist",
    # "mlc-llm/tvm/src/..."), their CLIs ("mflux-generate-fill", "mlc_chat_cli", "mlc_llm gen_config"). A passing
    # mention ("mlx-community/..." as a model's repo, a pip list) is the weak fact runtime_named (NAMED_RUNTIMES)
    ("mlx", ("mlx", "mflux", "[METAL]", "metal::malloc"),
     r"\[METAL\] Command buffer|metal::malloc|\bmlx(?:_lm|_vlm|_engine|_whisper|_audio)?(?:[\\/]|\.[a-z_])"
     r"|\bmflux(?:[\\/]|\.[a-z_]|-[a-z])"),
    # (round 87) and its checkpoint conversion's timing line (the examples' convert_checkpoint.py: "Total time of reading and
    # converting: N s"; NVIDIA NIM's engine build, build_utils.py: "Total time of reading and converting rank0 checkpoint: N s"),
    # printed before the engine build whose TensorRT ([TRT]) errors follow
    ("tensorrt-llm", ("tensorrt_llm", "TensorRT-LLM", "trtllm", "Total time of reading and converting"),
     r"\btensorrt_llm\b|TensorRT-LLM|\btrtllm|\bTotal time of reading and converting(?: rank\d{1,4} checkpoint)?:"),
    ("mlc-llm", ("mlc_chat", "mlc-chat", "mlc_llm", "mlc-llm"),
     r"\bmlc_chat_cli\b|\bmlc[_-](?:chat|llm)(?:[\\/]|\.[a-z_])"
     r"|\bmlc_llm (?:chat|serve|compile|gen_config|convert_weight|bench|package)\b"),
    # LMDeploy: its own evidence only (round 66; the bare word was round 61's): its CLI ("lmdeploy serve api_server ..."), its
    # logger's prefix ("2026-04-28 11:01:38,266 - lmdeploy - WARNING - turbomind.py:246 - ..."), its modules' paths
    # ("/lmdeploy/src/turbomind/...", "lmdeploy.turbomind") and TurboMind's own log prefix ("[TM][ERROR] ..."). A passing
    # mention (a pip list, "import lmdeploy failed") is the weak fact runtime_named, read only where nothing else names a runtime
    ("lmdeploy", ("lmdeploy", "[TM]["),
     r"\blmdeploy (?:serve|chat|convert|lite|list|check_env|calibrate)\b| - lmdeploy - |\blmdeploy[\\/]|\blmdeploy\.[a-z_]"
     r"|\[TM\]\[[A-Z]"),
    # text-generation-inference: its launcher's and its server's module names head its lines and frames
    ("tgi", ("text_generation_",), r"\btext_generation_(?:launcher|server|router|client)\b"),
    # TensorRT's own logger prefixes its lines "[TensorRT] VERBOSE:" (the Python API's default logger)
    # (TensorRT 8+'s Python logger: "[06/01/2025-10:00:00] [TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: ...")
    ("tensorrt", ("[TensorRT]", "[TRT] ["), r"\[TensorRT\] [A-Z]|\[TRT\] \[[VIWEF]\]"),
    # C++/CUDA libraries whose errors carry their own source path: tiny-cuda-nn (instant-ngp), dlib's DNN, cuTAGI
    ("tiny-cuda-nn", ("tiny-cuda-nn",), r"\btiny-cuda-nn[\\/]"),
    ("dlib", ("dlib",), r"\bdlib[\\/](?:dnn|cuda)[\\/]"),
    ("cutagi", ("cuTAGI",), r"\bcuTAGI[\\/]src[\\/]"),
    # (round 81) InfiniTAM (victorprad/InfiniTAM): its CUDA checks print the file of the failed call (ORUtils/CUDADefines.h
    # ORcudaSafeCall: "<file>(<line>) : cudaSafeCall() Runtime API error : <cudaGetErrorString>."), and its sources sit under
    # its own two libraries' folders, ORUtils/ (MemoryBlock.h's allocations) and ITMLib/ (the engines, the scene, the mesh)
    ("infinitam", ("ORUtils", "ITMLib"), r"\b(?:ORUtils|ITMLib)[\\/]"),
    # (round 94) Darknet (pjreddie/darknet, AlexeyAB's fork): its CUDA check asserts after printing the error ("darknet:
    # ./src/cuda.c:36: check_error: Assertion `0' failed.", glibc's assert naming the program, its source file and function;
    # the fork's "dark_cuda.c")
    ("darknet", ("check_error: Assertion", "dark_cuda.c"),
     r"\bdarknet: \S{0,200}?\bcuda\.c:\d{1,6}: check_error: Assertion\b|\bsrc[\\/]dark_cuda\.c\b"),
    # (round 82) Lua Torch (torch7): its packages are Lua rocks, installed under <prefix>/share/lua/5.1/<rock>/ (torch, nn,
    # cutorch, cunn, cudnn, optim, image, nngraph), and Lua prints an error with its source's place ("/home/user/torch/install/
    # share/lua/5.1/nn/THNN.lua:109: ..."): TH's or THC's failure under it is Lua Torch's, not PyTorch's
    ("torch7", ("lua/5.", "lua\\5."), r"[\\/]share[\\/]lua[\\/]5\.\d[\\/](?:torch|nn|cutorch|cunn|cudnn|optim|image|nngraph)[\\/]"),
    # (round 77) the Point Cloud Library's console lines name the class and method that print them ("[pcl::VoxelGrid::
    # applyFilter] Leaf size is too small ...", "[pcl::PCDReader::read] ..."): a C++ program on PCL, not PyTorch, owns the
    # std::bad_alloc that follows
    ("pcl", ("[pcl::",), r"\[pcl::\w{1,60}(?:::\w{1,60}){0,3}\]"),
    # ONNX Runtime's own words: its Python error ("[ONNXRuntimeError] : 1 : FAIL : ..."), GenAI's exception class
    # ("OnnxRuntimeGenAIException"), its logger's prefix ("E:onnxruntime:Default, ...", which relays the TensorRT
    # execution provider's TensorRT messages: the marker wins over TensorRT's own message)
    # (round 67) and its C++ namespace in the status it raises ("... cuda_call.cc:121 onnxruntime::CudaCall ... CUBLAS failure 3",
    # "onnxruntime::BFCArena::AllocateRawInternal"): a cuBLAS or arena failure under onnxruntime-gpu is ONNX Runtime's
    ("onnxruntime", ("ONNXRuntimeError", "OnnxRuntime", ":onnxruntime:", "onnxruntime::"),
     r"\[ONNXRuntimeError\]|\bOnnxRuntime(?:GenAI)?Exception\b|\b[EWF]:onnxruntime:|\bonnxruntime::[A-Z]\w"),
    ("tinygrad", ("tinygrad",), r"\btinygrad\b"),
    # TensorFlow's StatusGroup summary of errors gathered from many ops (StatusGroup::as_summary_status in
    # tensorflow/core/lib/core/status.cc, later tsl: "Combined status information from N operations:", then "Status code:
    # Resource exhausted [9x]" per code, TensorFlow's error_name): the summary TensorFlow's multi-op runs (TPUEstimator's
    # TPU cores) print; JAX's errors quote PJRT's status ("RESOURCE_EXHAUSTED: ..."). Above an XLA:TPU compile failure it
    # makes the run TensorFlow's (round 64, tensorflow/tpu#385)
    ("tensorflow", ("Status code: Resource exhausted",), r"^\s{0,8}Status code: Resource exhausted \[\d{1,6}x\]"),
    # (round 83) TensorFlow's convolution kernels when cuDNN could not start (tensorflow/core/kernels/conv_ops*: "Failed to get
    # convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log
    # message was printed above."): TensorFlow's own words, below the stream executor's "could not create cudnn handle:
    # CUDNN_STATUS_ALLOC_FAILED", which JAX's build of the stream executor prints too
    ("tensorflow", ("Failed to get convolution algorithm",),
     r"\bFailed to get convolution algorithm\. This is probably because cuDNN failed to initialize"),
    # (round 91) TensorFlow's own hint under a graph-mode OOM (tensorflow/core: "Hint: If you want to see a list of allocated tensors
    # when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info."): RunOptions is a
    # tf.compat.v1 Session's; above an XLA:TPU compile failure it makes the run TensorFlow's, as the status summary above does
    ("tensorflow", ("report_tensor_allocations_upon_oom",), r"\badd report_tensor_allocations_upon_oom to RunOptions\b"),
    # (round 94) TensorFlow's error from a tf.function's graph (tensorflow/python/eager/execute.py quick_execute: the op's status raised
    # with "Graph execution error:" and "Detected at node <name> defined at ..."): TensorFlow's own words, above an XLA autotuner's
    # "RESOURCE_EXHAUSTED: Out of memory while trying to allocate" (PJRT's words, which JAX's errors quote alike)
    ("tensorflow", ("Graph execution error:",), r"(?:^|Error: )Graph execution error:"),
    # (round 95) JAX's backend start-up (jax/_src/xla_bridge.py backends(): RuntimeError(f"Unable to initialize backend
    # '{platform}': {err} (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this
    # backend.)")): a stream executor's CUDA_ERROR_OUT_OF_MEMORY under it is JAX's run
    ("jax", ("Unable to initialize backend '",), r"\bUnable to initialize backend '\w{1,20}':"),
    # vLLM.rs (xinfer, Rust on candle): its tracing lines carry its crate's module path ("vllm_rs::core::scheduler:")
    ("vllm-rs", ("vllm_rs::",), r"\bvllm_rs::"),
    # mistral.rs (Rust on candle and cudarc): its panics and frames name its crates ("panicked at mistralrs-core/src/...",
    # "mistralrs-server/src/main.rs", "mistralrs_core::"); its cudarc DriverError is otherwise read as Candle's
    ("mistral.rs", ("mistralrs",), r"\bmistralrs[-_](?:core|server|pyo3|quant|vision|paged_attn)\b"),
    # its log lines carry their source file: "[INFO ] stable-diffusion.cpp:4512 - ...", "[ERROR] ggml_extend.hpp:70 - ..."
    ("stable-diffusion.cpp", ("stable-diffusion.cpp:", "ggml_extend.hpp:"), r"\bstable-diffusion\.cpp:\d|\bggml_extend\.hpp:\d"),
    # whisper.cpp's own functions name its lines ("whisper_init_from_file_with_params_no_state:", "whisper_model_load:",
    # "whisper_backend_init:", "whisper_init_state:"): a ggml program that is not llama.cpp
    # (fixV) and its KV cache's allocator, quoted bare ("whisper_kv_cache_init() failed for self-attention cache")
    ("whisper.cpp", ("whisper_init", "whisper_model_load", "whisper_backend_init", "whisper_kv_cache_init"),
     r"\bwhisper_(?:init_from_file|init_state|init_with_params|model_load|backend_init)\w{0,40}:|\bwhisper_kv_cache_init\b"),
    # (round 107) and its programs by their own names (examples/cli, examples/server: "whisper-cli -m ggml-tiny.bin -f a.wav",
    # "whisper-server"), run by hand or from an app's bundled copy: a ggml Metal/CUDA failure under them is whisper.cpp's
    ("whisper.cpp", ("whisper-cli", "whisper-server"), r"(?<![\w.-])whisper-(?:cli|server)(?![\w-])"),
    # (fixY) and a Rust program on it (whisper-rs) by the binary cargo builds or runs ("cargo build -p server --features
    # macos-metal --bin transcription_benchmark_whisper", batch-560): a ggml Metal/CUDA failure under it is whisper.cpp's, not
    # llama.cpp's (the default for ggml's kinds). Only cargo's --bin names: a path ("whisper-src\ggml\src", batch-76) is not one
    ("whisper.cpp", ("--bin",), r"(?<![\w-])--bin[ =][\w.-]{0,80}?[Ww]hisper"),
    # (round 63) SKaiNET (Kotlin/JVM deep learning): its classes' package, in a JVM stack trace's frames ("at sk.ainet.lang...")
    ("skainet", ("sk.ainet.",), r"\bsk\.ainet\.(?:lang|io|backend|apps|core)\b"),
    # (round 79) EXLA (Elixir Nx's XLA backend): Elixir prints a stack frame as "(<application> <version>) <file>:<line>:
    # <Module.fun/arity>", so a frame of the exla application ("(exla 0.10.0) EXLA.NIF.binary_to_device_mem(...)",
    # "(exla 0.9.2) lib/exla/backend.ex:..."): XLA's refusal above it is EXLA's, not JAX's or TensorFlow's
    ("exla", ("(exla ",), r"\(exla \d{1,4}\.\d{1,4}\.\d{1,4}[\w.+-]{0,24}\) "),
    # (round 63) TensorFlow Lite: its own names, and its Neuron delegate's check (MediaTek NeuroPilot: "Neuron returned error
    # NEURON_BAD_STATE at line N while ...", the NNAPI delegate's RETURN_TFLITE_ERROR_IF_NN_ERROR wording)
    # (round 86) and LiteRT-LM's (LiteRT is TensorFlow Lite renamed): its Kotlin/Java package and classes
    # ("com.google.ai.edge.litertlm.LiteRtLmJniException")
    ("tflite", ("tflite", "TfLite", "TFLite", "Neuron returned error", "litertlm", "LiteRtLm"),
     r"\btflite\b|\bTfLite\w|\bTFLite\b|\bNeuron returned error [A-Z_]{1,40} at line \d|\bai\.edge\.litertlm\b|\bLiteRtLm[A-Z]\w"),
    # (round 65) llama.cpp's --mlock on Windows (src/llama-mmap.cpp llama_mlock::raw_lock, LLAMA_LOG_WARN): "warning: failed to
    # VirtualLock 17825792-byte buffer (after previously locking 1407303680 bytes): The paging file is too small ...": the
    # paging-file refusal that follows is llama.cpp's (llama-cpp-python, koboldcpp), not PyTorch's
    ("llama.cpp", ("VirtualLock",), r"\bfailed to VirtualLock \d{1,20}-byte buffer \(after previously locking \d{1,20} bytes\)"),
    # (round 67) llama.cpp's converter scripts (convert-pth-to-ggml.py, convert-baichuan-hf-to-gguf.py, convert_hf_to_gguf.py) and
    # its gguf-py package's paths: a conversion killed or refused is llama.cpp's tool's, though it runs on PyTorch and numpy
    # (ggml-org/llama.cpp#138, #3433)
    ("llama.cpp", ("to-ggml", "to-gguf", "to_ggml", "to_gguf", "gguf-py"),
     r"\bconvert[-_][\w-]{0,40}?to[-_]gg(?:uf|ml)\.py\b|\bgguf-py[\\/]gguf[\\/]"),
    # (round 67) Core ML Tools: its package's paths in a traceback (coremltools/converters/caffe/_caffe_converter.py, an egg's
    # "coremltools-0.8-py2.7.egg/coremltools/..."): its converters' C++ core raises MemoryError: std::bad_alloc (apple/coremltools#126)
    ("coremltools", ("coremltools",), r"\bcoremltools[\\/](?:converters|models|proto|optimize|_deps)\b"),
    # (round 67) llama2.c's browser/WASI ports: their worker scripts and wasm files ("llama2c-worker.js:25", dmarcos/llama2.c-web#1)
    ("llama2.c", ("llama2c",), r"\bllama2c[-_.][\w.-]{0,30}?\.(?:m?js|wasm)\b"),
    # (round 70) llama.cpp's loader before GGUF (llama_file_loader, 2023) opened a model file with "llama.cpp: loading model
    # from <path>": its own words, at the start of a line (ggml-org/llama.cpp#1538: a std::bad_alloc after it is llama.cpp's)
    ("llama.cpp", ("llama.cpp: loading model from",), r"^\s{0,8}llama\.cpp: loading model from \S"),
    # (round 74) RKLLM (Rockchip's LLM runtime on its NPU): its own start-up lines ("rkllm init start", "rkllm-runtime version:
    # 1.0.1, rknpu driver version: 0.9.6, platform: RK3588") and its model files (.rkllm); its loads print RKNN's "E RKNN:" lines
    ("rkllm", ("rkllm",), r"\brkllm(?: init start\b|-runtime version: )|\.rkllm\b"),
    # (round 74) LMCache's own lines ("LMCache DEBUG: ...", "(memory_management.py:444:lmcache.experimental.memory_management)")
    # and its package's paths: LMCache runs under vLLM's LMCacheConnector (its docs' and examples' host; SGLang's marker, when
    # the log names SGLang first, keeps SGLang)
    ("vllm", ("lmcache", "LMCache"), r"\bLMCache (?:DEBUG|INFO|WARNING|ERROR)\b|\blmcache\.(?:v1|experimental|integration)\b"
     r"|[\\/]lmcache[\\/](?:v1|experimental|integration)[\\/]"),
    # (round 88) Clockwork (a multi-tenant DNN inference server on a modified TVM): its own sources' paths in the check that
    # failed ("  what():  [20:58:09] /home/u/clockwork/src/clockwork/cache.cpp:237: Check failed: e == cudaSuccess ...", TVM's
    # CUDA_CALL under it)
    ("clockwork", ("src/clockwork/", "src\\clockwork\\"), r"\bsrc[\\/]clockwork[\\/][\w/\\.-]{1,120}?\.(?:cpp|cc|h):\d"),
    # (round 89) NVIDIA Triton Inference Server's Python backend: its own names, the shared-memory regions its stubs map
    # ("triton_python_backend_shm_region_6", its default shm-region-prefix-name) and its stub process
    # ("triton_python_backend_stub"); not OpenAI's Triton compiler ("triton.runtime", "import triton")
    ("triton-server", ("triton_python_backend",), r"\btriton_python_backend_(?:shm_region_?\d|stub\b)"),
    # (round 101) vLLM's own C++ allocator (csrc/cumem_allocator.cpp, the CUDAPluggableAllocator its sleep mode uses): its
    # CUDA_CHECK's "CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:119" names vLLM's source, so the
    # PyTorch message after it (the pool's tensors are PyTorch's) is raised inside vLLM
    ("vllm", ("cumem_allocator",), r"\bcumem_allocator\.cpp(?::\d|\b)"),
    # (round 106) vLLM's own source file named relative to its package, "vllm/" left off, as a quoted frame gives it ("at
    # model_executor/layers/utils.py:98  default_unquantized_gemm"): a path that opens at model_executor/ (SGLang's is
    # srt/model_executor/, under its own folder; a full vllm/model_executor/ path is a Python frame, read by env)
    ("vllm", ("model_executor/",), r"(?:^|[\s\"'(])model_executor/(?:layers|models|model_loader)/\w{1,80}\.py\b"),
    # (round 110) MLX's Metal device (mlx/backend/metal/device.cpp) failing to build a kernel's pipeline, the kernel's name after
    # it ("[metal::Device] Unable to load kernel steel_attention_..."): MLX's own words, as metal::malloc's are
    ("mlx", ("[metal::Device]",), r"\[metal::Device\] Unable to (?:load|build) "),
    # (round 115) the host's OOM killer naming its victim by llama.cpp's own server or CLI binary: the kernel's line (mm/oom_kill.c
    # "Killed process <pid> (<comm>) ...", "Kill process" before 4.x) and earlyoom's ('sending SIGTERM to process <pid> uid <uid>
    # "<comm>"'): the process killed was llama.cpp's (ik_llama.cpp's llama-server too); Ollama's runner has its own name.
    # (round 117; rev8 D3: one row) the kernel's line as a write-up quotes it, the victim named bare with no pid or
    # parentheses ("Out of memory: Killed process llama-server, anon-rss:<n>kB"); (round 118) or in parentheses with no pid
    # ("Out of memory: Killed process (llama-server) anon-rss 6.7GB")
    ("llama.cpp", ("(llama-server)", "(llama-cli)", '"llama-server"', '"llama-cli"', "process llama-server,", "process llama-cli,"),
     r"\bKill(?:ed)? process (?:(?:\d{1,10} )?\(llama-(?:server|cli)\)|llama-(?:server|cli), anon-rss:\d)|\bsending SIG(?:TERM|KILL) to process \d{1,10} uid \d{1,10} \"llama-(?:server|cli)\""),
)

# the runtimes whose marker above needs their own lines, as a bare word (runtime, pattern): the weak fact runtime_named
NAMED_RUNTIMES = (
    ("lmdeploy", r"\blmdeploy\b"),
    ("mlx", r"\bmlx\b|\bmflux\b"),
    ("mlc-llm", r"\bmlc[_-]chat\b|\bmlc_llm\b|\bmlc-llm\b"),
    # (fix33, review28 item 7) llama.cpp's GGUF loader's own lines, prefixed with its functions' names (src/llama-model-loader.cpp:
    # "llama_model_loader: loaded meta data with 33 key-value pairs and 579 tensors from <path> (version GGUF V3 (latest))",
    # "llama_model_loader: - kv   0: general.architecture str = llama", "llama_model_loader: - type q6_K: 338 tensors"; the
    # 2023-2024 builds' "llm_load_print_meta: ..." and "llm_load_tensors: ..."; later print_info: and load_tensors:, too plain to
    # gate on, follow the loader's own lines). They say llama.cpp loaded a model, not that it failed: llama-cpp-python prints
    # them inside a ComfyUI node or a PyTorch script too, so they are this weak fact (no ComfyUI lines, no Python frames),
    # not a marker: a bare std::bad_alloc after them is llama.cpp's, a torch OutOfMemoryError in a ComfyUI log stays ComfyUI's
    ("llama.cpp", r"\bllama_model_loader: (?:loaded meta data with \d|- (?:kv|type) {1,8}\w)|\bllm_load_(?:print_meta|tensors): \w"),
    # (fix34) llama-cpp-python's own exceptions (llama_cpp/_internals.py: LlamaModel's 'raise ValueError(f"Failed to load model
    # from file: {path_model}")', LlamaContext's 'raise ValueError("Failed to create llama_context")'): llama.cpp under its
    # Python binding. Its traceback has frames, so the weak fact is read there only with the binding's own frames
    # (NAMED_FRAMES: llama_cpp/llama.py, llama_cpp/_internals.py) and no ComfyUI's: a node that calls llama-cpp-python keeps
    # ComfyUI (env.guess_runtime reads ComfyUI's frames and lines first)
    ("llama.cpp", r"\bValueError: Failed to (?:create llama_context\b|load model from file: \S)"),
)

# (fix34) runtimes whose marker rows above are only a weak hint in a ComfyUI log (its lines, its error block, its frames): a
# custom node calls them in-process (llama-cpp-python prints llama.cpp's "llama.cpp: loading model from", its --mlock
# VirtualLock warning; a GGUF node runs the converter scripts), so there the failure stays ComfyUI's, as fix33's loader lines
# (NAMED_RUNTIMES) do; outside ComfyUI the rows name llama.cpp as before
MARKERS_UNDER_COMFYUI = ("llama.cpp",)

# (review31) libraries whose marker rows above are their console lines, which a Python program prints beside its own run
# (a PyTorch script filtering its clouds through a PCL binding prints "[pcl::VoxelGrid::applyFilter] Leaf size is too
# small ..."): they name the runtime only where the failure is not PyTorch's own message (its kinds "torch.*")
MARKERS_NOT_OVER_TORCH = ("pcl",)

# the frames a named runtime's weak fact may come with (runtime, pattern on a frame's path): its own package's files; a
# named runtime without a row here is read only from a log with no frames
NAMED_FRAMES = (
    ("llama.cpp", r"\bllama_cpp[\\/](?:llama|_internals)\.py$"),
)

# (review30) runtimes whose own message, cut to its first words, is words any Python program may raise (SGLang's
# "RuntimeError: Not enough memory", error_patterns.SGLANG_POOL_CUT): the cut form names the runtime only alone or with one of
# its own frames (runtime, pattern on a frame's path); under other frames only (env.guess_runtime) it is that program's
CUT_FRAMES = (
    ("sglang", r"[\\/]sglang[\\/]"),
)

RUNTIME_WORDS = tuple(w for _, words, _ in RUNTIME_MARKERS for w in words)
