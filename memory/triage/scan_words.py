"""The words the chunk scanner and the recognisers look for: ERROR_KEYS, ERROR_WORDS and their covers (IDLE_ANCHORS,
RECOGNISE_WORDS, TAIL_WORDS), the scanner's ANCHORS / OPEN_ANCHORS / HEAD_ANCHORS and the window's WINDOW_KEYS.
Moved from lines.py; later rounds' words are one table, _ADDED_WORDS (a word's place in these tuples does not matter:
they are read by `in` tests and by the earliest match of any). Error lines themselves are recognised in `parse.py`."""
import re

from .fact_patterns import FACT_KEYS, OLLAMA_SERVER_SAYS
from .other_patterns import KILL_TAIL_WORDS, PAGING_LOCALIZED
from .runtime_markers import RUNTIME_WORDS

# Words every error line contains at least one of (the recognisers are tried only then).
ERROR_KEYS = ("emory", "llocat", " error -4 at ", " error -5 at ", " error -6 at ", "ALLOC", "MEMORY", "buffer maximum", "Fault failed", "reservation failed", "HostBuffer", "max seq len", "Mamba cache", "runner process", "llama-server", "ASSERT",
              "OOMed", "cuDNN", "NOT_ENOUGH", "Got an OOM", "Requested", "Device limit", "according to CUDA", "PyTorch limit",
              "Invalid buffer size", "paging file", "1455", "Kill", "kill", "KILL", "已杀死", "exitcode: -9", "code 137", "code: 137", "status 137", "OUT_OF_", "VBAR", "VRAM grow", "Host OOM", "hostbuf_",
              "exceeds device", "with status 5", "Virtual Address", "NDArray", "Resource limit", "OutOfMemory", "GPU RAM", "too large for system", "calloc", "os error 12", "bad_alloc",
              "8007000E", "E_OUTOFMEMORY", "insufficient system resources", "Not enough resources to load",
              "are available (after", "Insufficient VRAM in split", "render-process-gone", "exceeds ceiling", "Memory limit exceeded",
              "Prefill would require", "API FAILED", "resource limitations", "allowed buffer size", "space in the buffer", "NvMapMem",
              "but can admit", "kvcache tokens", "overflow detected, please increase", "by rematerialization;")

# Narrower: every line an error recogniser matches contains one of these words (tests/unit/test_triage_corpus.py
# checks it on every line of the corpus). ADDING A RECOGNISER MEANS ADDING ITS WORD (to _ADDED_WORDS below) when none fits.
# After the log's head, while no failure is open, the scanner looks only for these (one C-speed pass each),
# so a log dense with "memory", tracebacks or INFO lines costs no Python per line; recognise() skips its
# regexes on a line without one.
ERROR_WORDS = ("out of memory", "out-of-memory", "Allocation on device", "not enough memory", "allocate memory", "MemoryError",
               "KV cache is needed", "max seq len", "cache blocks", "on startup is less", "less than desired", "runner process", "process has terminated",
               "Error in memory profiling", "to allocate", "allocation of size", "OutOfDeviceMemory", "OUT_OF_DEVICE_MEMORY",
               "insufficient memory", "system memory", "Allocation failed", "Fault failed", "reservation failed",
               "memory compile error", "larger than buffer maximum", "HostBuffer", "HostAlloc failed", "allocate tensor", "ASSERT FAILED", "_ALLOC_FAILED",
               "NOT_ENOUGH_WORKSPACE", "valid cuDNN", "ErrorMemoryAllocation", "ErrorOutOfMemory", "Got an OOM",
               "_OUT_OF_MEMORY", "Out of memory", "OOM when allocating", "could not be allocated", "Invalid buffer size",
               "paging file", "error 1455", "Error 1455", "Killed", "killed", "已杀死", "oom-kill", "SIGKILL", "exitcode: -9", "code 137",
               "code: 137", "status 137",
               "cannot be allocated", "OUT_OF_HOST_MEMORY", "OutOfHostMemory", "OUT_OF_RESOURCES",
               "VBAR OOM", "VRAM grow failed", "Host OOM", "hostbuf_file_reader_read failed", "device copy failed", "Out of Memory during",
               "VBAR allocation failed", "Virtual Address space", "exceeds device", "unable to mmap", "failed with status 5",
               "MEM_OBJECT_ALLOCATION_FAILURE", "out of resource: shared memory", "total bytes of NDArray", "Errno 12",
               "insufficient GPU memory", "Please try to increase --mem", "That was not possible. There are", "Resource limit (",
               "Error Code 2: OutOfMemory", "enough GPU RAM to fit", "too large for system", "Not enough memory to handle",
               "Cuda failure 2 'out of memory'", "resource allocation failed", "context's memory pool", "scratch memory", "mem_buffer != NULL", "vkAllocateMemory failed", "OutOfMemoryException", "Failed to CUDA calloc", "os error 12", "std::bad_alloc", "bad allocation", "lowmemorykiller: Kill", "8007000E", "E_OUTOFMEMORY",
               "memory object allocation", "allocate pinned host memory", "ailed to cudaMalloc ",
               "DynamicsMemoryConfig::", "overflow detected, please increase", "by rematerialization;",
               "insufficient system resources", "Not enough resources to load", "Not enough memory left",
               "are available (after", "Bytes of memory on",
               "Failed to allocate request for", "malloc_or_wait] Unable to allocate",
               "Insufficient VRAM in split", "memory capacity is unbalanced", "memory for command submission",
               "in AlignedAllocator", "in AlignedAlloactor", "cumem_allocator", "render-process-gone", "exceeds ceiling", "Memory limit exceeded", "Memory limit hit after loading", "can fit in memory",
               "Prefill would require", "CUDA API FAILED", "failed to load, this may be due to resource",
               "ModelMMAP allocation failed", "OOMed: switched to slice", "maximum allowed buffer size",
               "space in the buffer", "NvMapMem", "but can admit", "per-node memory limits",
               "kvcache tokens, but your prompt", "aclrtMalloc failed",
               " error -4 at ", " error -5 at ", " error -6 at ", "KV cache memory: -",
               "Insufficient memory to load model", "available Metal memory budget", "exceeds max-model-memory",
               "not enough Metal memory for KV cache", "memory guard refused")
# Words later rounds added, one row each: the lists a word joins, then the word (or words). K = ERROR_KEYS (a line is
# tried only with one of them), W = ERROR_WORDS (the scanner's anchors and recognise()'s cover). A new recogniser whose
# line holds none of the words above adds its row here, once.
_ADDED_WORDS = (
    ("KW", "Available memory on node"),     # vLLM's CPU worker: the NUMA node's RAM at start-up or KV allocation (fixZ)
    # CatBoost's pool sentence quoted without its lead-in (native_runtimes.CATBOOST_QUOTED, round 59)
    ("W", "MB; Free ", "larger than free memory"),
    # MLC LLM's memory plan and Spark RAPIDS' RMM event handler (native_runtimes, round 61)
    ("W", "Insufficient GPU memory error", "bytes failed, device store has", "bytes failed. Device store spilled"),
    # ggml's HIP VMM pool's abort (any HIP error after it) and a DataLoader worker's own bus-error line (native_runtimes, round 63)
    ("KW", "HipVMM Failure"),
    ("W", "Unexpected bus error encountered in worker"),
    ("W", "WebGL maximum"),     # TensorFlow.js's WebGL texture-size cap (round 64)
    ("W", "preflight safety guard"),     # oMLX's prefill safety cap (other_patterns.OMLX_SAFETY, tri50)
    ("W", "Array buffer allocation failed"),     # V8's ArrayBuffer refusal (round 67; MNN's "Out of memory when" is covered)
    ("KW", "Device lost during", "GPUDevice was lost"),     # WebGPU's device loss (round 67): no memory word in it
    # transformers' bitsandbytes refusal cut after its first sentence ("Some modules are dispatched on the CPU or the disk...",
    # other_patterns.HF_DISPATCH, round 68): none of the words above is in it
    ("K", "dispatched on the CPU"),
    ("W", "dispatched on the CPU or the disk"),
    ("KW", "must not exceed"),     # Metal validation's per-buffer cap (round 69)
    # an application's own VRAM pre-flight refusal (other_runtimes.app_vram_preflight, round 71): no memory word in it
    ("KW", "VRAM pre-flight", "VRAM preflight"),
    # DeepSpeed's launcher reporting a child ended by SIGKILL ("exits with return code = -9", other_patterns.KILLED, round 72)
    ("KW", "code = -9"),
    # WSL2's residency refusal, the CUDA VMM call's "device not ready", HAMi-core's vGPU limit and SGLang's cut RuntimeError (round 72)
    ("K", "dxgkio_make_resident", "device not ready", "HAMI-core"),
    ("W", "dxgkio_make_resident: Ioctl failed", "CUDA driver error: device not ready", "HAMI-core ERROR"),
    ("KW", "RuntimeError: Not enough memory"),
    # Rockchip's NPU runtimes (RKNN, RKLLM), LMCache's pool and PyTorch's CUDA "invalid argument" (native_runtimes, round 74)
    ("KW", "failed to allocate handle", "failed to malloc npu memory", "RKNN_ERR_MALLOC_FAIL", "because no memory is available",
     "CUDA error: invalid argument"),
    # Slurm's task/cgroup plugin reporting the step's tasks killed under its memory limit ("Detected <n> oom_kill events in
    # StepId=...", other_patterns.KILLED, round 80)
    ("KW", "oom_kill event"),
    ("W", "low virtual memory condition"),     # Windows' Resource-Exhaustion-Detector event (other_patterns, round 82)
    # (round 83) MLX's Metal message cut before Metal's code (other_patterns.METAL) and the CPU backend's ggml line cut after
    # "failed" (servers.GGML_BUFFER_CUT): no word above is in either
    ("W", "Command buffer execution failed: Insufficient Memory"),
    ("KW", "cpu_buffer_type_alloc_buffer: failed"),
    # CANN's graph engine refusing an Ascend NPU allocation ("Call rtMalloc fail, purpose: ..., size:N", native_runtimes.CANN_RTMALLOC, round 84)
    ("KW", "rtMalloc fail"),
    # Inductor's autotuner finding no Triton config that fits ("No valid triton configs ... Required: N, Hardware limit: M",
    # other_patterns.TRITON_SMEM, round 85) quoted without Triton's "out of resource"
    ("KW", "No valid triton configs"),
    # text-generation-inference's launcher reporting a child ended by SIGKILL ("... process was signaled to shutdown with signal 9",
    # other_patterns.KILLED, round 85; the scanner finds it among the kill words, other_patterns.KILL_TAIL_WORDS)
    ("KW", "with signal 9"),
    # XLA's rematerialization warning quoted without its byte counts and "by rematerialization" ("Can't reduce memory use below
    # N; only reduced to M", xla_runtimes.XLA_REMAT, round 85)
    ("W", "reduce memory use below"),
    # WebGPU's validation refusing one buffer over the adapter's caps ("Buffer size (N) exceeds the max buffer size limit (M)",
    # "Binding size (N) of [...] is larger than the maximum storage buffer binding size (M)", native_runtimes.WEBGPU_MAX_BUFFER,
    # round 86): no memory word in either
    ("KW", "max buffer size limit", "buffer binding size"),
    # MPSGraph's cap on a tensor's dimensions ("MPSGraph does not support tensor dims larger than INT_MAX",
    # other_patterns.MPSGRAPH_INT_MAX, round 86): no memory word in it
    ("KW", "larger than INT_MAX"),
    # jaxlib's exception with its status code alone ("XlaRuntimeError: RESOURCE_EXHAUSTED", "JaxRuntimeError: ...",
    # xla_runtimes.XLA, round 87) and NCCL's shared-memory segment in /dev/shm refused ("... /dev/shm/nccl-XXXXXX (size N),
    # error: No space left on device (28)", other_patterns.NCCL_SHM, round 87): no memory word in either
    ("KW", "RuntimeError: RESOURCE_EXHAUSTED", "/dev/shm/nccl-"),
    # ONNX Runtime's arena at its limit ("Available memory of N is smaller than requested bytes of M", other_patterns.ONNX_ARENA_LIMIT,
    # round 88)
    ("W", "smaller than requested bytes"),
    # PaddlePaddle's host allocator ("Fail to alloc memory of N size, error code is 12.", other_patterns.PADDLE_HOST, round 88)
    ("W", "Fail to alloc memory of"),
    # Slurm srun's task line ("srun: error: <node>: tasks 0-3: Out Of Memory", other_patterns.KILLED, round 88; the scanner finds it
    # among the kill words, other_patterns.KILL_TAIL_WORDS)
    ("W", ": Out Of Memory"),
    # PyTorch's Windows shared-memory allocator refused by the commit limit ("Couldn't open shared file mapping: <...>, error code:
    # <1455>", other_patterns.PAGING, round 89; no memory word) and Triton's Python backend growing its shared-memory pool ("Failed
    # to increase the shared memory pool size for key '...' to N bytes", other_patterns.TRITON_PB_SHM, round 89)
    ("W", "error code: <1455>", "shared memory pool size"),
    # spconv's tensorview CUDA check at cudaErrorMemoryAllocation ("cuda execution failed with error 2", other_patterns.TENSORVIEW_CUDA,
    # round 90; no memory word; cumm's "cuda failed with error 2 out of memory" holds one)
    ("KW", "cuda execution failed with error 2"),
    # a CUDA program's own cudaSafeCall check ("cudaSafeCall() failed: out of memory", other_patterns.CUDA_SAFE_CALL, round 91), COLMAP's
    # SIFT matcher ("Not enough GPU memory to match N features", other_patterns.COLMAP_SIFT_MATCH, round 91) and TensorFlow's eager op
    # error on its own line ("failed to allocate memory [Op:Cast]", xla_runtimes.XLA, round 91)
    ("KW", "cudaSafeCall() failed", "GPU memory to match", "memory [Op:"),
    # the TPU compiler's refusal of one buffer ("Allocation (size=N) would exceed memory (size=M)", xla_runtimes.XLA_TPU_EXCEED, round 92)
    # and ROCr's block allocator ("HSA exception: MemoryRegion::BlockAllocator::alloc failed.", other_patterns.ROCR_BLOCK_ALLOC, round 92):
    # no memory word in the second
    ("KW", "would exceed memory (size=", "BlockAllocator::alloc failed"),
    # Windows' commit-limit message in a localized system ("Die Auslagerungsdatei ist zu klein", "页面文件太小", ...,
    # other_patterns.PAGING_LOCALIZED, round 93): no memory word and no code in them
    ("KW", *PAGING_LOCALIZED),
    # Kaldi's allocator ("Failed to allocate a memory region of N bytes.", other_patterns.KALDI_ALLOC), JavaCPP's cap ("Physical memory
    # usage is too high", JAVACPP_PHYSICAL), Stable-Baselines3's replay buffer ("... to store the complete replay buffer 14.10GB >
    # 12.06GB", REPLAY_BUFFER_RAM), earlyoom's notice and kill line ("low memory! at or below SIGTERM limits", "... VmRSS N MiB",
    # EARLYOOM), systemd's OOM-killer unit notice, Celery's and Cloud Run's SIGKILL lines (KILLED), round 94
    ("KW", "memory region of", "Physical memory usage is too high", "complete replay buffer", "at or below SIG", "VmRSS",
     "killed by the OOM killer", "exited prematurely: signal 9", "terminated on signal 9"),
    # llama.cpp's decode with no room in its KV cache ("failed to find a memory slot for batch of size N", LLAMA_KV_SLOT) and
    # MPS's figures quoted without the message's words ("MPS allocated: N, ... max allowed: M", error_patterns.MPS_OPEN), round 95
    ("KW", "failed to find a memory slot", "failed to find KV cache slot", "failed to find free space in the KV cache", "MPS allocated: "),
    # PyTorch's message quoted from its second sentence ("GPU 0 has a total capacity of T of which F is free.", RX.TORCH_CAP_OPEN), round 97
    ("KW", "has a total capacity of "),
    # its <= 2.0 bracket quoted alone, opening a line ("GPU 0; 15.72 GiB total capacity; 1.49 GiB already allocated; 832.00 KiB
    # free", RX.TORCH_BRACKET_OPEN), round 98
    ("KW", "total capacity; "),
    # a Metal program's refusal of one buffer ("failed to create Metal buffer of size N", other_patterns.METAL_CREATE), round 102
    ("KW", "failed to create Metal buffer"),
    # Ollama's offload record (msg=offload, earlier msg="offload to cuda"), read where its compute graph's estimate is over the
    # GPU's available memory (other_runtimes.ollama_graph_over), round 106: no error word in it
    ("W", "msg=offload", 'msg="offload to '),
    # Metal's threadgroup-memory limit on a kernel ("Threadgroup memory size (N) exceeds the maximum threadgroup memory allowed
    # (M)", kernel_limits.METAL_THREADGROUP), round 110: no memory word on the first line when a quote wraps it
    ("KW", "exceeds the maximum threadgroup"),
    # XLA's status quoted with its words between the code and the exact bytes elided ("RESOURCE_EXHAUSTED ... N bytes",
    # xla_runtimes.XLA), round 115: no memory word in it
    ("KW", "RESOURCE_EXHAUSTED ...", "RESOURCE_EXHAUSTED: ...", "RESOURCE_EXHAUSTED \u2026", "RESOURCE_EXHAUSTED: \u2026"),
    # vLLM's start-up check quoted as its head alone ("Free memory on device xpu:0 (5.0/31.89 GiB)", error_patterns.VLLM_STARTUP_HEAD),
    # round 116: none of the words above is in it
    ("W", "Free memory on device "),
    # Unsloth Studio's host-offload guard ("... does not fit in GPU memory and would run from system RAM", other_runtimes.
    # studio_host_guard), round 117: none of the words above is in it
    ("W", "would run from system RAM"),
    # the TPU's compile failure named by tpu-inference or quoted from its figures ("CompileTimeHbmOom: Used N of M hbm", "Used N of
    # M hbm. Exceeded hbm capacity by K"), and its runtime's buffer refusal ("RuntimeBufferAllocationFailure", xla_runtimes.
    # xla_tpu_hbm), round 118: none of the words above is in them
    ("KW", "CompileTimeHbmOom", "Exceeded hbm capacity", "RuntimeBufferAllocationFailure"),
    # XLA's FFT thunk: cuFFT's plan not created with its scratch allocator (xla_runtimes.xla_fft_plan), round 118: no memory word
    ("KW", "FFT batched plan with scratch"),
    # and its unified-memory APU form ("This model needs about N GB but only about A GB of memory is available. On a
    # unified-memory APU ..."), rev8 S2
    ("W", "unified-memory APU"),
    # (none51) PyTorch's message quoted as its sentences alone, no "out of memory" in them ("Process N has M memory in use.",
    # "Of the allocated memory A is allocated by PyTorch", torch_sentences.SENTENCES)
    ("W", "memory in use", "Of the allocated memory "),
    # (fixV) whisper.cpp's state init naming the KV cache that failed ("whisper_kv_cache_init() failed for self-attention
    # cache", error_patterns.GGML_KV_INIT): no memory word in it
    ("KW", "kv_cache_init() failed for"),
    # (tri63) faceswap's training OOM message ("You do not have enough GPU memory available to train ...", other_patterns.FACESWAP_TRAIN_OOM)
    ("W", "enough GPU memory available to train"),
    # (tri69) a CUDA program's own check printing the bare code ("CUDA error: 2", other_patterns.CUDA_BARE_CODE): no memory word
    ("KW", "CUDA error: 2", "CUDA error 2"),
    # (tri70) the same check in a HIP program ("HIP error: 2", other_patterns.HIP_BARE_CODE, hipErrorOutOfMemory): no memory word
    ("KW", "HIP error: 2", "HIP error 2"),
    # (tri70) a launcher's mirror of vLLM's start-up check ("[preflight] ERROR: GPU 0 has F GiB free, but this config needs ~D
    # GiB/card", error_patterns.VLLM_LAUNCHER_GATE): no memory word in it
    ("KW", "this config needs ~"),
    # (tri75) a Jupyter kernel that died while a cell ran (nbclient's "Kernel died while waiting for execute reply." and its
    # DeadKernelError, the Notebook's "The kernel appears to have died", host_readers.KERNEL_DIED): no memory word in them
    ("KW", "DeadKernelError", "Kernel died while waiting", "kernel appears to have died"),
    # (tri76) data-loading workers found dead (batchgenerators, nnU-Net: host_readers.WORKERS_DEAD): no memory word in it
    ("KW", "background workers are no longer alive"),
    ("KW", "ray.exceptions.OutOfMemoryError", "due to the node running low on memory"),     # (tri84) Ray's memory monitor
    # (tri82) faulthandler's native abort ("Fatal Python error: Aborted", native_abort.NATIVE_ABORT): no memory word in it
    ("KW", "Fatal Python error: Aborted"),
)
ERROR_KEYS += tuple(w for lists, *words in _ADDED_WORDS if "K" in lists for w in words)
ERROR_WORDS += tuple(w for lists, *words in _ADDED_WORDS if "W" in lists for w in words)
# what else a quiet stretch of log must not skip: a run's end (successes, the models that ran fine) and
# ComfyUI's exception banner (the runtime, and where the traceback begins)
# Each needle is one C-speed pass over the chunk, and a long needle skips further than a short one: words sharing a
# long specific piece are looked for by that piece (tests/unit/test_triage_corpus.py checks every ERROR_WORDS entry
# holds one of IDLE_ANCHORS or TAIL_WORDS).
_IDLE_COVER = ("ut of memory", "llocat", "OUT_OF_", "OutOf", "rror 1455")
# The OOM killer's "Killed" ends a log: short words, looked for in the head, while a failure is open and in the
# log's last chunk, not in every quiet chunk of a long log
TAIL_WORDS = KILL_TAIL_WORDS
ERROR_COVER = _IDLE_COVER + TAIL_WORDS + tuple(w for w in ERROR_WORDS if not any(c in w for c in _IDLE_COVER + TAIL_WORDS))
# words that only come inside a ComfyUI failure, whose "!!! Exception" banner the idle scan finds (comfy-aimdo's
# errors), or in a retry that recovered (Forge's tiled VAE): no pass of their own
IDLE_SKIP = ("VBAR OOM", "VRAM grow failed", "Host OOM", "hostbuf_file_reader_read failed", "device copy failed", "Out of Memory during",
             # and lines that hold another error word the idle scan looks for ("MemoryError", "OutOf", "allocate memory")
             "VBAR allocation failed", "Virtual Address space", "exceeds device", "unable to mmap", "Errno 12",
             # and a warning of a retry that went on (ComfyUI's slice attention): read in the head or while a failure is open
             "OOMed: switched to slice",
             # and quotes that elide a message's middle (vLLM's "Free memory ... less than desired"): short pastes, read in the head
             "less than desired")
IDLE_ANCHORS = tuple(w.encode() for w in ERROR_COVER if w not in TAIL_WORDS + IDLE_SKIP) + (b"Prompt executed", b"!!! Exception")
# recognise()'s last substring test: the same idea without "llocat" ("allocated" is on every line of an allocator's
# report, and a megabyte message of them must not reach the regexes)
_WORD_COVER = ("ut of memory", "OUT_OF_", "OutOf", "rror 1455", "be allocated") + TAIL_WORDS
RECOGNISE_WORDS = _WORD_COVER + tuple(w for w in ERROR_WORDS if not any(c in w for c in _WORD_COVER))
TAIL_ANCHORS = IDLE_ANCHORS + tuple(w.encode() for w in TAIL_WORDS)

# The chunk scanner looks at the whole log for these (each is one C-speed pass), and for the first HEAD
# bytes (startup: device, allocator, platform, flags) at HEAD_ANCHORS too. The context of each failure
# (model being loaded, sampling progress, llama.cpp buffers, vLLM budget) is read from the bytes just before it.
ANCHORS = (b"emory", b"llocat", b"render-process-gone", b"Insufficient VRAM in split", b"insufficient system resources", b"Not enough resources to load", b"are available (after", b"Resource limit", b"GPU RAM", b"too large for system", b"calloc", b"bad_alloc", b"MEMORY", b"MEM_OBJECT", b"NDArray", b"with status 5", b"exceeds device", b"Virtual Address", b"Invalid buffer size", b"paging file", b"OUT_OF_", b"_STATUS_", b"Fault failed", b"API FAILED", b"reservation failed", b"VRAM grow", b"HostBuffer", b"max seq len", b"runner process", b"process has terminated", b"buffer maximum", b"allowed buffer size", b"space in the buffer", b"Prefill would require", b"ASSERT", b"NvMapMem", b"but can admit", b"kvcache tokens, but", b"overflow detected, please increase", b"by rematerialization;", b"Mamba cache blocks", b" error -4 at ", b" error -5 at ", b" error -6 at ",
           b"cuDNN", b"OOM", b"Prompt executed", b"Exception", b'File "', b"Traceback")
# a runtime's error context printed on its own line above the root error (anyhow's "Caused by:" chain: stage_said)
ANCHORS += (b"pass failed", b"prefill failed", b"forward failed", b"cache alloc")
ANCHORS += (b"session alloc", b" table upload")    # (round 114: stage_said's new words, as "cache alloc")
# CatBoost's pool sentence quoted from "Requested" on (round 59): neither "emory" nor "llocat" is in it
ANCHORS += (b"MB; Free ",)
# (rev53) whisper.cpp's and 2023 llama.cpp's "kv_cache_init() failed for self-attention cache" (error_patterns.GGML_KV_INIT):
# neither "emory" nor "llocat" is in it, so the head and an open failure's window look for it by name
ANCHORS += (b"kv_cache_init() failed",)
ANCHORS += (b"HipVMM Failure",)
ANCHORS += (b"Device lost during", b"GPUDevice was lost")      # WebGPU's device loss (round 67)
ANCHORS += (b"dispatched on the CPU",)    # (round 68: the bitsandbytes refusal cut after its first sentence)
ANCHORS += (b"WebGL maximum",)      # TensorFlow.js's texture-size cap (round 64): neither "emory" nor "llocat" is in it
ANCHORS += (b"dxgkio_make_resident", b"device not ready", b"HAMI-core", b"RuntimeError: Not enough memory")   # (round 72)
ANCHORS += (b"DriverError(CUDA_ERROR_",)    # (round 72) cudarc's error beside a failure names a Rust program on it (facts: cudarc)
ANCHORS += (b"must not exceed",)   # Metal validation's per-buffer cap (round 69): neither "emory" nor "llocat" is in it
ANCHORS += (b"RKNN_ERR_MALLOC_FAIL", b"CUDA error: invalid argument")   # (round 74): neither "emory" nor "llocat" is in them
ANCHORS += (b"VRAM pre-flight", b"VRAM preflight")   # an application's VRAM pre-flight refusal (round 71): no memory word
ANCHORS += (b"cpu_buffer_type_alloc_buffer: failed",)   # (round 83) the CPU backend's ggml line cut after "failed": no memory word
ANCHORS += (b"No valid triton configs",)   # (round 85) Inductor's autotuner quoted without Triton's "out of resource: shared memory"
ANCHORS += (b"max buffer size limit", b"buffer binding size")   # (round 86) WebGPU's per-buffer caps: no memory word
ANCHORS += (b"larger than INT_MAX",)   # (round 86) MPSGraph's dims cap: no memory word
ANCHORS += (b"RuntimeError: RESOURCE_EXHAUSTED", b"/dev/shm/nccl-")   # (round 87) jaxlib's bare status, NCCL's shm segment: no memory word
ANCHORS += (b"error code: <1455>",)   # (round 89) PyTorch's Windows shared file mapping at the commit limit: no memory word
ANCHORS += (b"cuda execution failed with error 2",)   # (round 90) spconv's tensorview CUDA check: no memory word
ANCHORS += (b"CUDA error: 2", b"CUDA error 2")   # (tri69) a CUDA program's own check printing the bare code: no memory word
ANCHORS += (b"HIP error: 2", b"HIP error 2")   # (tri70) a HIP program's own check printing the bare code (hipErrorOutOfMemory)
ANCHORS += (b"this config needs ~",)   # (tri70) a launcher's mirror of vLLM's start-up check (VLLM_LAUNCHER_GATE): no memory word
ANCHORS += (b"DeadKernelError", b"Kernel died while waiting", b"kernel appears to have died")   # (tri75) a Jupyter kernel that died (host_readers.KERNEL_DIED): no memory word
ANCHORS += (b"background workers are no longer alive",)   # (tri76) data-loading workers found dead (host_readers.WORKERS_DEAD)
ANCHORS += (b"Fatal Python error: Aborted",)   # (tri82) faulthandler's native abort (native_abort.NATIVE_ABORT)
# (round 93) Windows' commit limit in Rust's io::Error form after a localized message ("... (os error 1455)") and the localized
# message's heads (other_patterns.PAGING_LOCALIZED) by a piece each: no English word in them
ANCHORS += (b"os error 1455", b"o de pagina", b"fichier de pagination", b"file di paging", b"Auslagerungsdatei", "页面文件太小".encode())
ANCHORS += (b"RESOURCE_EXHAUSTED ...", b"RESOURCE_EXHAUSTED: ...", "RESOURCE_EXHAUSTED \u2026".encode(), "RESOURCE_EXHAUSTED: \u2026".encode())   # (round 115) XLA's status, its words elided: no memory word
# (round 94) earlyoom's notice and kill line (other_patterns.EARLYOOM): no memory word in the kill line, and the notice's "low memory!"
# is none of the anchors' words
ANCHORS += (b"at or below SIGTERM", b"at or below SIGKILL", b"VmRSS ")
ANCHORS += (b"has a total capacity of ",)   # (round 97) PyTorch's second sentence opening a quote (RX.TORCH_CAP_OPEN): no memory word
ANCHORS += (b"failed to create Metal buffer",)   # (round 102) a Metal program's buffer refusal (other_patterns.METAL_CREATE): no memory word
ANCHORS += (b"Failed to clone() tensor",)   # (round 105) FSDP's clone warning's head (facts "fsdp_clone"), wrapped from its error: no memory word
ANCHORS += (b"CompileTimeHbmOom", b"Exceeded hbm capacity", b"RuntimeBufferAllocationFailure", b"FFT batched plan with scratch")   # (round 118) the TPU's refusals (xla_tpu_hbm), cuFFT's plan (xla_fft_plan): no memory word
# notebook and rich tracebacks (frames and the marked source line): read in the log's head and while a failure is open
TRACE_ANCHORS = (b"File /", b"File ~", b".py in ", "│ ".encode(), b"--> ", "❱".encode())
# while a failure is open after the head, the scanner reads these (a traceback before it was read back already)
OPEN_ANCHORS = ANCHORS + (b"Processing interrupted", b"InterruptProcessingException", b"VRAM Total:", b"VRAM Free:", b"Enabled pinned memory", b"Failed to initialize NVML", b"ECC", b"fallen off the bus", b"Xid", b"Found device", b"Error occurred", b"Node Type", b"Error Report", b"Device: ", b"Total VRAM", b"Set vram state", b"pytorch version", b"Platform:", b" --",
                          b"expandable_segments", b"backend:", b"OLLAMA_", b"ollama", b"sha256-", b"rocm", b"ROCm", b"hipMalloc", b"Limit:", b"InUse:", b"Windows", b"WinError", b"WSL", b"macOS",
                          b"Darwin", b"hostbuf_", b"gpu_memory_utilization", b"max_model_len", b"max_seq_len", b"using device",
                          b"dynamic VRAM", b"compiler graph breaks", b"buffer size", b"n_ctx", b"kv_size", b"offloaded", b"Model loading took", b"KV cache", b" -ub ",
                          b"Capturing", b"PluggableAllocator", b"MemPool", b"aimdo", b"cumem", b"CuMem", b"Non-blocking", b"release mmap", b"AcceleratorError", b"page-lock", b"PAGEABLE", b"non_blocking=True", b"capture_end", b"capture_model", b"torch.cuda.graph",
                          b"Graph capturing", b"in function", b"GGML_ASSERT", b"Added request", b"poch ", b"loss.backward", b"{'loss': ", b"Loader", b"Sampler",
                          b"Decode", b"Encode", b"MiB free", b"memory.required.full", b"ComfyUI Version", b"vllm", b"VLLM::", b"EngineCore", b"rror while loading", b"ailed to load", b"evicting a model") \
    + tuple(w.encode() for w in OLLAMA_SERVER_SAYS) + tuple(w.encode() for w in RUNTIME_WORDS)
# mmgp's partial-pinning line (facts "mmgp_pin", round 61): neither "emory" nor "llocat" is in it
OPEN_ANCHORS += (b"pinned models is",)
# (round 67) Linux named as such (uname -a, a platform line: facts "linux"), as Windows, macOS and Darwin are above: what maps
# WebGPU's device to Vulkan
OPEN_ANCHORS += (b"Linux",)
# (round 68) ggml's CUDA check names its source file on a line of its own ("ggml-cuda.cu:110", or
# ".../ggml-cuda.cu:2360: CUDA error"): the fact ggml_marker, read while a failure is open and from the window
OPEN_ANCHORS += (b"ggml-cuda.cu:",)
# (fix66d) a wrapper's block swap and its non-blocking moves (facts "block_swap"): read while open, in the head and the window
OPEN_ANCHORS += tuple(k.encode() for k in FACT_KEYS["block_swap"])
# (round 70) llama.cpp's pre-GGUF loader's header lines ("llama_model_load_internal: format = ggjt v2"): the fact ggml_header,
# which tells a failure while the file's header was read from one after it
OPEN_ANCHORS += (b"llama_model_load_internal: ",)
# (fix34) llama-cpp-python's own exception after llama.cpp's failure ("ValueError: Failed to create llama_context"; its
# "Failed to load model from file" is read by "ailed to load" above): the weak fact runtime_named (runtime_markers)
OPEN_ANCHORS += (b"Failed to create llama_context",)
# (review28) lines that say the run went on, one a row: a server up and serving (uvicorn's line under vLLM, TGI and others;
# SGLang's own), a ComfyUI prompt done. Read while a failure is open: one after a warning whose runtime retries by itself
# (RECOVERED_WARNINGS) and nothing else means the retry worked, and the warning is no failure
RUN_WENT_ON = (b"Application startup complete", b"The server is fired up", b"Prompt executed")
# the event kinds that are a warning of a retry the runtime makes itself, and only that: PyTorch's caching allocator's
# cudaMalloc warning (round 68; it frees its cache and tries again, an OutOfMemoryError follows only if that fails too)
RECOVERED_WARNINGS = ("torch.alloc_warn",)
OPEN_ANCHORS += tuple(w for w in RUN_WENT_ON if w not in OPEN_ANCHORS)
# (round 74) fact rknpu_no_iommu (the RKNPU driver's boot line without its IOMMU): in the head too
OPEN_ANCHORS += (b"iommu is disabled",)
# (round 102) vLLM's own raises that name no memory word (facts "vllm_marker"): its V1 front end's "Engine core initialization
# failed" after a worker died in start-up, its V0 runner's "Error in model execution (input dumped to ...)" wrapper
VLLM_OWN_RAISES = (b"Engine core initialization failed", b"Error in model execution")
OPEN_ANCHORS += VLLM_OWN_RAISES
# (tri72) vLLM V1's worker failure sent back over its RPC queue (facts "vllm_worker_rpc"): no memory word on the worker's line
VLLM_WORKER_RPC = (b"Worker failed with error", b"WorkerProc hit an exception")
OPEN_ANCHORS += VLLM_WORKER_RPC
# (tri78) nvidia-smi's GPU table row, its Memory-Usage column "9MiB /  2048MiB" (facts "cuda_query_total"): no memory word
OPEN_ANCHORS += (b"MiB /",)
# (tri79) nvidia-smi's process table's column header (facts "smi_procs"): before driver 450 it has no memory word ("Usage")
OPEN_ANCHORS += (b"Process name",)
# the head (startup lines, and a whole short log) is read with the traceback forms and the launched script too
# what should_fit.py reads (the runtime's version, the model, the GGUF's type and size, flash attention): start-up lines,
# in the head and the window, found by its facts' own gate keys; a bare word there (" run ", kept short for the gate's
# sake) is anchored as the command writes it
_LOAD_FACTS = ("runtime_version", "llm_model", "gguf_meta", "ollama_total", "vllm_transformers", "ggml_fa", "vllm_tp", "vllm_wflags", "vllm_own", "vllm_launch", "vllm_args_list", "vllm_serve_end")
_COMMAND = {" serve ": "vllm serve", " run ": "ollama run", " pull ": "ollama pull"}
LOAD_KEYS = tuple(_COMMAND.get(k, k).encode() for name in _LOAD_FACTS for k in FACT_KEYS[name])
HEAD_ANCHORS = OPEN_ANCHORS + TRACE_ANCHORS + (b"train", b"step#:") + tuple(w.encode() for w in TAIL_WORDS) + LOAD_KEYS
# (the frontend dialog's node line, ggml's "in function" and GGML_ASSERT come with the error itself: the
# open failure reads them, the window need not)
WINDOW_KEYS = (b" -m ", b"Failed to initialize NVML", b"ECC", b"fallen off the bus", b"Xid", b"buffer size", b"KV cache", b"Capturing", b"Graph capturing", b" graph begin", b"Added request", b"Avg prompt throughput", b"poch ", b"train", b"{'loss': ", b"step#:", b"Non-blocking", b"release mmap", b"AcceleratorError", b"page-lock", b"PAGEABLE", b"non_blocking=True", b"capture_end",
               b"capture_model", b"torch.cuda.graph", b"MiB free", b"memory.required.full", b"n_ctx", b"kv_size", b"offloaded", b"using device",
               b"Model loading took", b"model weights", b"Loading model weights", b"Device: ", b"Total VRAM", b"Set vram state", b"pytorch version", b"Platform:", b" --", b" -ub ",
               b"OLLAMA_", b"rocm", b"ROCm", b"Windows", b"WinError", b"gpu_memory_utilization", b"max_model_len", b"max_seq_len",
               b"dynamic VRAM", b"llama-server", b"llama-cli", b"vllm", b"VLLM::", b"EngineCore", b"ollama", b"Error occurred when executing",
               b"Node Type", b"Exception in node", b"Error Report") + tuple(w.encode() for w in OLLAMA_SERVER_SAYS + RUNTIME_WORDS) + LOAD_KEYS
WINDOW_KEYS += (b"VLLM_ROCM_",)           # (vLLM's ROCm-only switches on its command line, facts "vllm_rocm_on": none51)
WINDOW_KEYS += (b"Processing interrupted", b"InterruptProcessingException", b"VRAM Total:", b"VRAM Free:", b"Enabled pinned memory")  # (aud67b #8, #10)
WINDOW_KEYS += tuple(k.encode() for k in FACT_KEYS["block_swap"])     # (fix66d) block_swap.py
WINDOW_KEYS += (b"Processed prompts",)     # (fix67g) LLM.generate's progress bar: vllm_serving, generation past the capture
_COMFY_DEVICE = tuple(k.encode() for k in FACT_KEYS["comfy_device"])     # (rev67d F1) comfy_devices.py
OPEN_ANCHORS, HEAD_ANCHORS, WINDOW_KEYS = OPEN_ANCHORS + _COMFY_DEVICE, HEAD_ANCHORS + _COMFY_DEVICE, WINDOW_KEYS + _COMFY_DEVICE
OPEN_ANCHORS, HEAD_ANCHORS, WINDOW_KEYS = OPEN_ANCHORS + (b"got prompt",), HEAD_ANCHORS + (b"got prompt",), WINDOW_KEYS + (b"got prompt",)  # rev67d F4
# (fixT) the lines that name an NVIDIA card beside them (facts "cuda_device"; ComfyUI's "Device: " is read already)
# (fixV) and nvidia-smi's table: its header, and a GPU row's name after the index's spaces
CUDA_DEVICE_KEYS = (b"detected platform cuda", b": NVIDIA", b"NVIDIA-SMI", b"  NVIDIA ", b"  GeForce ", b"  Tesla ", b"  Quadro ", b"  TITAN ")
WINDOW_KEYS += CUDA_DEVICE_KEYS
# (fixV) ggml's Vulkan device and host-buffer names (facts "ggml_vk_names"), its Vulkan backend's lines and stable-diffusion.cpp's
# runner's ("[DEBUG  ] ggml_runner.cpp:929  - clip executing segment"; facts "ggml"), in the head and the failure's window
GGML_VK_KEYS = (b"Vulkan0", b"Vulkan1", b"Vulkan_Host", b"ggml_vulkan: ", b"ggml_runner.cpp:")
WINDOW_KEYS += GGML_VK_KEYS
WINDOW_KEYS += (b"ggml-cuda.cu:",)         # (ggml's CUDA check's source line, as OPEN_ANCHORS: round 68)
WINDOW_KEYS += (b"pinned models is",)     # (mmgp's partial-pinning line, as OPEN_ANCHORS)
WINDOW_KEYS += (b"Prompt Cache: ",)       # (mlx_lm.server's prompt-cache line, facts "mlx_prompt_cache": round 63)
WINDOW_KEYS += (b"llama_model_load_internal: ",)   # (llama.cpp's pre-GGUF header lines, facts "ggml_header": round 70)
WINDOW_KEYS += (b"iommu is disabled",)   # (fact rknpu_no_iommu: round 74)
WINDOW_KEYS += VLLM_OWN_RAISES          # (vLLM's own raises, as OPEN_ANCHORS: round 102)
WINDOW_KEYS += VLLM_WORKER_RPC          # (vLLM V1's worker failure over its RPC queue, as OPEN_ANCHORS: tri72)
WINDOW_KEYS += (b"% CPU/GPU",)           # (`ollama ps`'s PROCESSOR column, facts "ollama_marker": round 107)
OPEN_ANCHORS += (b"% CPU/GPU",)


# A training run's progress words: once a line has shown the run trains (facts "training_log", which stays set), the
# window and an open failure stop looking for them, so a log with "epoch" or "train" on every line is read at the speed
# of any other (a line holding another fact is still found by that fact's own word)
TRAINING_KEYS = (b"poch ", b"train", b"{'loss': ", b"step#:", b"loss.backward")
WINDOW_KEYS_TRAINED = tuple(k for k in WINDOW_KEYS if k not in TRAINING_KEYS)
OPEN_ANCHORS_TRAINED = tuple(k for k in OPEN_ANCHORS if k not in TRAINING_KEYS)


DECODE_RE = re.compile(rb"(?i)\b(?:tiled )?vae\b[^\n]{0,40}\bdecod|decoding \d+ latents?|decode_first_stage")
# (round 112) /proc/<pid>/limits' "Max address space" row (facts "as_limit"), pasted before or after the failure: no memory word
HEAD_ANCHORS += (b"Max address space",)
# (rev14 B1) llama.cpp's tensor load starting ("load_tensors: loading model tensors", facts "ggml_load_start"): no other anchor word
HEAD_ANCHORS += (b"loading model tensors",)
OPEN_ANCHORS += (b"Max address space",)
WINDOW_KEYS += (b"Max address space",)
# (round 114) nvidia-smi's compute-apps CSV (facts "smi_apps"): its header, printed after a failure by the harness that ran
# the program; (rev6 S1) its rows ("1909368, /path/to/server, 14786 MiB") are read from the header (facts._smi_apps), not
# anchored by " MiB", which made every such line of the head and of an open incident a scanned line
HEAD_ANCHORS += (b"used_gpu_memory [MiB]",)
OPEN_ANCHORS += (b"used_gpu_memory [MiB]",)
# (round 114) ggml-cuda's flash-attention launch in a backtrace after a CUDA error (facts "ggml_fattn"): no other anchor word
HEAD_ANCHORS += (b"launch_fattn", b"flash_attn_ext")
OPEN_ANCHORS += (b"launch_fattn", b"flash_attn_ext")
# (round 118) a program's own sweep line saying a batch size ran (facts "batch_ran"), in the head or the window before a failure
HEAD_ANCHORS += (b"atch size ", b"atch_size")
WINDOW_KEYS += (b"atch size ", b"atch_size")
# (tri65) a training loop's per-step allocated-memory line (facts "step_mem"), read in the head's stream with its line
HEAD_ANCHORS += (b"mem_allocated", b"memory_allocated")
HEAD_ANCHORS += tuple(k.encode() for k in FACT_KEYS["wrapper_run"])     # (fix67b) a wrapper's runs (wrapper_runs.py)
HEAD_ANCHORS += tuple(k.encode() for k in FACT_KEYS["bfc_after_error"] + FACT_KEYS["bfc_went_on"])     # (fix67h, fix67o) an error after BFC's tries, a step line (bfc_backpedal.py)
# (tri68) Kaldi's allocator report before its refusal (facts "kaldi_held"), in the head's stream or the window before a failure
HEAD_ANCHORS += (b"total-held",)
WINDOW_KEYS += (b"total-held",)
# (rev8 S2) an integrated GPU or unified memory named (facts "igpu_named": llama.cpp's Vulkan "| uma: 1 |", the words, an AMD
# APU's Radeon NNNM): Unsloth Studio's host-RAM guard then reads other
HEAD_ANCHORS += (b"uma: 1", b"ntegrated GPU", b"ntegrated graphics", b"ntegrated Graphics", b"iGPU", b"unified memory", b"Radeon")
OPEN_ANCHORS += (b"uma: 1", b"ntegrated GPU", b"ntegrated graphics", b"ntegrated Graphics", b"iGPU", b"unified memory", b"Radeon")
# (fix66c) the error report's "Embedded Python" line and ComfyUI Desktop's or the portable build's paths (facts "comfy_install")
HEAD_ANCHORS += (b"Embedded Python", b"python_embeded", b"comfyui-electron", b"ComfyUI_windows_portable")     # (fix66f) the last
OPEN_ANCHORS += (b"Embedded Python", b"python_embeded", b"comfyui-electron", b"ComfyUI_windows_portable")
# (fix66c) vLLM's max_num_batched_tokens in force and its V0 engine (facts "vllm_batched", vllm_command.py)
HEAD_ANCHORS += (b"max_num_batched_tokens=", b"--max-num-batched-tokens", b"V0 LLM engine")
WINDOW_KEYS += (b"max_num_batched_tokens=", b"--max-num-batched-tokens", b"V0 LLM engine")
# (fixT) a VLLM_ROCM_* switch and a line naming an NVIDIA card (facts "vllm_rocm_on", "cuda_device"), in the head too
HEAD_ANCHORS += (b"VLLM_ROCM_",) + CUDA_DEVICE_KEYS
HEAD_ANCHORS += GGML_VK_KEYS     # (fixV)
OPEN_ANCHORS += CUDA_DEVICE_KEYS
# (aud68c #4, #5, #8) the small modules' facts (extra_facts.py), in the head's stream and the window before a failure
from .extra_facts import ROWS as _EXTRA_FACTS      # noqa: E402
HEAD_ANCHORS += tuple(k.encode() for _, words, _ in _EXTRA_FACTS for k in words)
WINDOW_KEYS += tuple(k.encode() for _, words, _ in _EXTRA_FACTS for k in words)
