"""The regular expressions of other_runtimes.py's readers (runtimes other than PyTorch's allocators, ComfyUI, vLLM,
llama.cpp and Ollama), in their old order; parse.py lists the readers. Moved from other_runtimes.py (patterns unchanged)."""
import re

# the CUDA driver API and libraries that call it directly: JAX/XLA, CuPy, CTranslate2 (faster-whisper), TensorRT, NCCL, ONNX Runtime's
# CUDA provider (core/providers/cuda/cuda_call.cc: "CUDA failure 2: out of memory ; GPU=0 ; ...", hacksider/Deep-Live-Cam#584)
DRIVER_API = re.compile(r"\bCUDA_ERROR_OUT_OF_MEMORY\b|CUDA failed with error out of memory|Cuda Runtime \(out of memory\)"
                         r"|Cuda failure (?:\d+ )?'?out of memory|CUDA failure \d+: out of memory|Failed to CUDA calloc (\d{1,20}) bytes|\bcuMem\w* failed\b[^\n]{0,80}out of memory"
                         r"|Requested amount of GPU memory \((\d{1,20}) bytes\) could not be allocated|CUDA runtime error in [^\n]{0,200}?: out of memory")
# a CUDA runtime allocation call printed beside its out-of-memory error by a library with CUDA code of its own (dlib's
# gpu_data.cpp "Error while calling cudaMalloc(&data, ...) ... code: 2, reason: out of memory", davisking/dlib#252; cuTAGI's
# "out of memory cudaMalloc(&this->d_jcb, ...)", lhnguyen102/cuTAGI#71). cudaMallocHost and cudaHostAlloc allocate
# page-locked HOST memory (CUDA runtime API): their failing is system RAM, not the GPU (davisking/dlib#391)
# (none51) tiny-cuda-nn's CUDA_CHECK_THROW ("<file>:<line> cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed with error " +
# cudaGetErrorString, wrapped as "Could not allocate memory: ..." by GPUMemory::resize, include/tiny-cuda-nn/gpu_memory.h) with
# its error string cut at the line's end by a quoter ("... failed with error out of memor")
CUDA_CALL = re.compile(r"\b(cudaMalloc(?:Host|Managed|Pitch)?|cudaHostAlloc)\([^\n]{0,300}?\bout of memory\b"
                       r"|\bout of memory\W{0,4}(cudaMalloc(?:Host|Managed|Pitch)?|cudaHostAlloc)\("
                       r"|\b(cudaMalloc(?:Host|Managed|Pitch)?|cudaHostAlloc)\([^\n]{0,300}?\) failed with error out of mem(?:o(?:ry?)?)?\s*$")
# Caffe's CUDA_CHECK through glog: "syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory". In
# BVLC/caffe SyncedMemory::to_gpu cudaMallocs a blob's device copy (the net's data, parameters and their diffs), and
# CaffeMallocHost (syncedmem.hpp) cudaMallocHosts its page-locked host copy
CAFFE_CUDA = re.compile(r"\b(\w{1,60}\.(?:cpp|hpp|cu)):\d{1,6}\] Check failed: error == cudaSuccess \(2 vs\. 0\)\s{0,4}out of memory")
# (round 112) and a CPU_ONLY build's CaffeMallocHost (syncedmem.hpp): malloc() then "CHECK(*ptr) << "host allocation of size " <<
# size << " failed"": "Check failed: *ptr host allocation of size 3763200 failed", system RAM refused (a blob's CPU copy)
CAFFE_HOST = re.compile(r"\] Check failed: \*ptr host allocation of size (\d{1,20}) failed")
# (round 118) KenLM's util (util/scoped.cc, util/exception.cc): malloc, calloc or realloc returned nothing, MallocException's
# "Cannot allocate memory for N bytes in malloc" (strerror(ENOMEM), then "for N bytes in <function>"): system RAM refused
KENLM_MALLOC = re.compile(r"\bCannot allocate memory for (\d{1,20}) bytes in (?:malloc|calloc|realloc)\b")
# Enoki (Mitsuba 2, psdr-cuda): cuda_malloc() trims its own cache and retries cudaMalloc once before "cuda_malloc(): out of
# memory!"; Mitsuba 2's docs: the rendering or autodiff graph exhausted the GPU's memory (fewer samples, a lower resolution)
ENOKI_MALLOC = re.compile(r"\bcuda_malloc\(\): out of memory!")
# Intel Level Zero / Unified Runtime (PyTorch XPU, IPEX, llama.cpp SYCL): the driver refused a device or host allocation
# (the older PI names drop RESULT: "Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY)", ggml-org/llama.cpp#9476)
LEVEL_ZERO = re.compile(r"\b(?:UR|ZE|PI)_RESULT_ERROR_OUT_OF_(DEVICE|HOST)_MEMORY\b|\b(?:UR_RESULT|PI)_ERROR_OUT_OF_(RESOURCES)\b"
                        r"|\bPI_ERROR_OUT_OF_(DEVICE|HOST)_MEMORY\b")
# Ollama's scheduler (2025-10+): no placement of weights, KV cache and compute graph fits the devices
OLLAMA_LAYOUT = re.compile(r"memory layout cannot be allocated(?: with num_gpu = (\d{1,20}))?")
# ONNX Runtime's arena (onnxruntime/core/framework/bfc_arena.cc), any execution provider (CUDA, DirectML, CPU)
ONNX = re.compile(r"Failed to allocate memory for requested buffer of size (\d{1,20})")
# (round 88) the same arena at its memory limit (gpu_mem_limit, or a CPU arena's cap): BFCArena::Extend's own refusal, raised
# through AllocateRawInternal, "Available memory of N is smaller than requested bytes of M" (the limit less what the arena
# already holds, then the request rounded up), bytes both
ONNX_ARENA_LIMIT = re.compile(r"\bAvailable memory of (\d{1,20}) is smaller than requested bytes of (\d{1,20})")
# MLX's Metal allocator (mlx/backend/metal/allocator.cpp): one buffer over MTLDevice.maxBufferLength, or more live Metal
# buffers than the OS allows (a count, 499000 on current macOS, not bytes) (ml-explore/mlx#3327, ollama/ollama#17804); before
# 2024 its allocator's limit on all buffers together (mlx/allocator.cpp malloc_or_wait: ml-explore/mlx#63, ml-explore/mlx-examples#21);
# the per-buffer message is also quoted without its "[metal::malloc]" prefix (riccardomusmeci/mlx-llm#22: uncaught in libc++abi)
# (a quote may elide the middle after "[metal::malloc] Attempting to allocate N bytes ...": the limit unknown, group 2 None)
# (round 107) or end the quote there, without its cap clause (captainvera/vox's notes): group 5 too, the limit unknown
MLX_MALLOC = re.compile(r"(?:\[metal::malloc\] |^|(?<=\s))(?:Attempting to allocate (\d{1,20}) bytes which is greater than the maximum allowed buffer size"
                        r"(?: of (\d{1,20}) bytes)?|Resource limit \((\d{1,20})\) exceeded)|\[malloc_or_wait\] Unable to allocate (\d{1,20}) bytes"
                        r"|\[metal::malloc\] Attempting to allocate (\d{1,20}) bytes(?:\s?(?:\.{3}|…)|[ \t]{0,40}$)")
# TensorRT (engine build or deserialisation): "Error Code 2: OutOfMemory (Requested size was 69568823808 bytes.)"; TensorRT 7-8's
# safe runtime: "../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)" (microsoft/onnxruntime#10770)
TENSORRT = re.compile(r"Error Code 2: OutOfMemory(?: \((?:Requested size was (\d{1,20}) bytes\.|no further information)\))?"
                      r"|Cuda Error in allocate: 2 \(out of memory\)")
# (round 88) TensorRT's own name for a CUDA runtime error it met (its ErrorCode kCUDA_RUNTIME, printed "Error Code 1: Cuda Runtime
# (out of memory)" after the logger's "[TRT] [E]" and the allocator's source, quoted also bare): TensorRT's, whatever else
# the line keeps
TRT_CUDA_RUNTIME = re.compile(r"\bCuda Runtime \(out of memory\)")
# (round 88) Isaac Gym's own CUDA check (its carb.gym plugin: "[Error] [carb.gym.plugin] Gym cuda error: out of memory:
# ../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1721"): a CUDA call of the simulator's own, its GPU PhysX buffers
GYM_CUDA = re.compile(r"\bGym cuda error: out of memory\b")
# (round 90) spconv's and cumm's tensorview CUDA checks (tensorview.h TV_CHECK_CUDA_ERR after a kernel launch: "<file> <line>\ncuda
# execution failed with error 2", TV_CHECK_CUDA_ERR_V2 with cudaGetErrorString after it; cumm's TV_CUDART_RESULT_CHECK around a
# runtime call: "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 ..."): 2 is cudaErrorMemoryAllocation, and
# no call, size or card figure is printed. Another code (3, initialization error; 209, no kernel image) is not read
TENSORVIEW_CUDA = re.compile(r"\bcuda (?:execution failed with error 2(?!\d)(?: out of memory\b)?|failed with error 2 out of memory\b)")
# (round 91) a CUDA program's own cudaSafeCall check (the CUDA samples' cutil macro, copied into many codes) printing the runtime
# error's string, cudaGetErrorString(cudaErrorMemoryAllocation) = "out of memory": NVIDIA Parabricks' ("[PB Error][src/<file>.cu:
# <line>] cudaSafeCall() failed: out of memory, exiting."), InfiniTAM's ORcudaSafeCall ("<file>(<line>) : cudaSafeCall() Runtime
# API error : out of memory."): a runtime call of the program's own failed for device memory; no size or card figure
CUDA_SAFE_CALL = re.compile(r"\bcudaSafeCall\(\) (?:failed: |Runtime API error : )out of memory\b")
# (tri69) a CUDA program's own check printing the bare error code ("CUDA error: 2", printf of the cudaError_t with "%d"): 2 is
# cudaErrorMemoryAllocation in the runtime API (in the enum before and after CUDA 10.1's renumbering) and CUDA_ERROR_OUT_OF_MEMORY
# in the driver API, "The API call failed because it was unable to allocate enough memory"; a call of the program's own, no size
# or card figure. Only code 2 and only on a line of its own: another code is no memory error, and words after it are another
# format (ggml's "CUDA error 2 at F:L: out of memory", read by its own rows)
CUDA_BARE_CODE = re.compile(r"^\s*(?:[\w.\[\]-]{1,40}:\s+)?CUDA error:? 2\s*$")
# (tri70) the same check in a HIP program ("HIP error: 2"): hip_runtime_api.h's hipError_t has hipErrorOutOfMemory = 2 (its
# deprecated alias hipErrorMemoryAllocation = 2, as cudaErrorMemoryAllocation in CUDA's enum): a device allocation of the program's
# own refused, no size or card figure. Only code 2 and only on a line of its own, as CUDA_BARE_CODE (PyTorch's HIP check prints the
# code's string, "HIP error: out of memory", read by its own row)
HIP_BARE_CODE = re.compile(r"^\s*(?:[\w.\[\]-]{1,40}:\s+)?HIP error:? 2\s*$")
# (round 91) COLMAP's SIFT matcher (SiftGPU's SiftMatchGPU::Allocate, CUDA or OpenGL): "Not enough GPU memory to match N features.
# Reduce the maximum number of matches." (colmap feature/sift.cc; older builds print "ERROR: " before it). Its buffers are sized
# by max_num_matches (SiftMatching.max_num_matches), the figure it prints (a count, not bytes); a quote may keep the format's
# placeholder for it ("N", "%d")
COLMAP_SIFT_MATCH = re.compile(r"\bNot enough GPU memory to match (?:\d{1,12}|N|%d) features\b")
# (tri63) VTK's OpenGL error report (Rendering/OpenGL2/vtkOpenGLError.h: vtkPrintOpenGLErrors prints "<message> N OpenGL errors
# detected" and then " i : (code) text" per error, the text from vtkOpenGLStrError): code 1285 is GL_OUT_OF_MEMORY (0x0505, the
# OpenGL spec's "not enough memory left to execute the command"), printed "Out of memory". The driver refused the command for
# memory (a texture, a buffer); no size or card figure. Other GL codes (1280-1286) are no memory failure
VTK_GL_OOM = re.compile(r"^\s{0,8}\d{1,2} : \(1285\) Out of memory\s*$")
# (tri63) faceswap's trainer (scripts/train.py, plugins/train/trainer/_base.py, lib/model/... since 2019) catching TensorFlow's
# ResourceExhaustedError (PyTorch's OutOfMemoryError from 3.0) and raising FaceswapError("You do not have enough GPU memory
# available to train the selected model at the selected settings. You can try a number of things: ..."), which its logger
# prints line by line: the training step's device allocation failed; no figure
FACESWAP_TRAIN_OOM = re.compile(r"\bYou do not have enough GPU memory available to train the selected model\b")
# (round 92) NCCL's own check of a CUDA call (src/include/checks.h: CUDACHECK's WARN("Cuda failure '%s'"), CUCHECK's WARN("Cuda
# failure %d '%s'", err, errStr)) at out of memory: "NCCL WARN Cuda failure 2 'out of memory'", or the same text as PyTorch's
# ProcessGroupNCCL relays ncclGetLastError() under "ncclUnhandledCudaError: Call to CUDA function failed." and "Last error:",
# the line without NCCL's name. The quoted error string is NCCL's layout (DRIVER_API reads the rest of the family)
NCCL_CUDA_CHECK = re.compile(r"\bCuda failure (?:\d{1,4} )?'out of memory'")
# (round 92) PyCUDA's driver error ("<routine> failed: <cuGetErrorString>", pycuda/src/cpp/cuda.hpp's CUDAPP_CALL_GUARDED:
# "pycuda._driver.MemoryError: cuMemHostAlloc failed: out of memory"), any cuMem* call: a CUDA driver API program's own, no figures
PYCUDA_MEM = re.compile(r"\bcuMem\w{1,40} failed: out of memory\b")
# (round 92) ROCr (the ROCm runtime under HIP) failing a block of a memory region for its own suballocator (amd_memory_region.cpp:
# MemoryRegion::BlockAllocator::alloc throws hsa_exception when the region's Allocate fails; the runtime prints "HSA exception:
# <message>"): "HSA exception: MemoryRegion::BlockAllocator::alloc failed." A device allocation of the ROCm stack refused, no
# size and no caller named
ROCR_BLOCK_ALLOC = re.compile(r"\bHSA exception: MemoryRegion::BlockAllocator::alloc failed\b")
# (round 93) Theano's CUDA backend (theano/sandbox/cuda/cuda_ndarray.cu device_malloc, the old CudaNdarray backend) refusing a
# device buffer of the program's own: "Error allocating 2064384000 bytes of device memory (out of memory). Driver report 1774694400
# bytes free and 2146762752 bytes total" (its PyErr_Format: "Error allocating %llu bytes of device memory (%s). Driver report %llu
# bytes free and %llu bytes total "), exact bytes: the request, then cudaMemGetInfo's free and total when it printed them; with
# Theano's CNMeM pool on, the pool's status and no figures ("Error allocating 1258291200 bytes of device memory
# (CNMEM_STATUS_OUT_OF_MEMORY)."). Another error string (an illegal memory access) is not read
THEANO_ALLOC = re.compile(r"\bError allocating (\d{1,20}) bytes of device memory \((?:out of memory|CNMEM_STATUS_OUT_OF_MEMORY)\)\."
                          r"(?: Driver report (\d{1,20}) bytes free and (\d{1,20}) bytes total\b)?")
# (round 93) Render (a web-service host) restarting an instance over its plan's memory: "Ran out of memory (used over 512MB) while
# running your code" (the instance event on its dashboard and in its logs; a quote may cut it after the parenthesis): the service's
# host-RAM limit, the plan's size as Render prints it (512MB, 2GB), read as the limit a container's OOM kill met
RENDER_OOM = re.compile(r"\bRan out of memory \(used over (\d{1,6}(?:\.\d{1,3})? ?[KMGT]i?B)\)")
# (round 94) Kaldi's CUDA allocator (src/cudamatrix/cu-allocator.cc AllocateNewRegion) refusing a new region of its pool: its
# KALDI_ERR "Failed to allocate a memory region of N bytes.  Possibly this is due to sharing the GPU.  Try switching the GPUs to
# exclusive mode (nvidia-smi -c 3) and using the option --use-gpu=wait ...  Memory info: free:FM, used:UM, total:TM, free/total:R"
# (GetFreeGpuMemory's figures, cudaMemGetInfo's in MiB, "M"): the request in exact bytes, then the card's free and total
KALDI_ALLOC = re.compile(r"\bFailed to allocate a memory region of (\d{1,20}) bytes\."
                         r"(?:[^\n]{0,600}?\bMemory info: free:(\d{1,9})M, used:\d{1,9}M, total:(\d{1,9})M\b)?")
# (round 94) Marian's CUDA check (src/tensors/gpu/cuda_helpers.h CUDA_CHECK: ABORT("CUDA error {} '{}' - {}:{}: {}", rc,
# cudaGetErrorString(rc), file, line, #expr)) at error 2, cudaErrorMemoryAllocation: "Error: CUDA error 2 'out of memory' -
# /path/src/tensors/gpu/device.cu:32: cudaMalloc(&data_, size)"; the call the check wrapped (group 1), a cudaMalloc of its own
# tensors' workspace (Device::reserve) read as a program's own runtime call
MARIAN_CUDA = re.compile(r"\bCUDA error 2 'out of memory' - [^\n']{1,300}?:\d{1,6}: (\w{1,40})\(")
# (round 94) Darknet's CUDA check (src/cuda.c check_error: printf("CUDA Error: %s\n", cudaGetErrorString(status)); assert(0)):
# "CUDA Error: out of memory" ending its line (a shell's echoed command may be joined before it; a longer sentence with the same
# words and an exception's "SomeError: CUDA Error: ..." are not it); the program is named by its assertion line after it
# (runtime_markers: "darknet: ./src/cuda.c:36: check_error: Assertion `0' failed.")
DARKNET_CUDA = re.compile(r"(?:^|[^\S\n])(?<![A-Za-z]Error: )CUDA Error: out of memory\s*$")
# (round 94) JavaCPP's native-memory cap (org.bytedeco.javacpp.Pointer's deallocator thread, under Deeplearning4j/ND4J): the
# process's physical memory over Pointer.maxPhysicalBytes, thrown as java.lang.OutOfMemoryError: "Physical memory usage is too
# high (7590080512 > Pointer.maxPhysicalBytes)" (1.3.x: bytes), "Physical memory usage is too high: physicalBytes (7G) >
# maxPhysicalBytes (7G)" (1.4 on: Pointer.formatBytes, K/M/G/T by 1024): the process's resident memory, read as used
JAVACPP_PHYSICAL = re.compile(r"\bPhysical memory usage is too high(?: \((\d{1,20}) > Pointer\.maxPhysicalBytes\)"
                              r"|: physicalBytes \((\d{1,20}(?:\.\d{1,3})?[KMGT]?)\) > maxPhysicalBytes\b)")
# (round 94) Stable-Baselines3's replay buffer sizing its arrays against the host's available memory (common/buffers.py
# ReplayBuffer.__init__: warnings.warn(f"This system does not have apparently enough memory to store the complete replay buffer
# {total_memory_usage:.2f}GB > {mem_available:.2f}GB"), both divided by 1e9): the buffer's host RAM against psutil's available
REPLAY_BUFFER_RAM = re.compile(r"\benough memory to store the complete replay buffer (\d{1,6}(?:\.\d{1,3})?)GB > "
                               r"(\d{1,6}(?:\.\d{1,3})?)GB")
# (round 94) earlyoom (a user-space OOM killer on desktops and DGX Spark images) acting on the host's available memory: its
# "low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%" (SIGKILL limits past the second threshold) and the kill
# line "sending SIGTERM to process 2677144 uid 996 "llama-server": badness 1022, VmRSS 11791 MiB" (the victim's resident
# memory, MiB, group 1): host RAM ran out, as the kernel's OOM killer reads
EARLYOOM = re.compile(r"\blow memory! at or below SIG(?:TERM|KILL) limits\b"
                      r"|\bsending SIG(?:TERM|KILL) to process [^\n]{0,200}?: badness -?\d{1,6}, VmRSS (\d{1,9}) MiB")
# (round 95) llama.cpp's decode finding no room in its KV cache for the batch (src/llama-context.cpp decode: LLAMA_LOG_WARN
# "%s: failed to find a memory slot for batch of size %d", llama_decode returning 1; before the memory API: "failed to find KV
# cache slot for ubatch of size %d", and llama-server's "failed to find free space in the KV cache, retrying with smaller batch
# size"): the batch's tokens need cache cells the configured context (and its slots) no longer has; the batch size in tokens
LLAMA_KV_SLOT = re.compile(r"\bfailed to find (?:a memory slot|KV cache slot) for u?batch of size (\d{1,9})"
                           r"|\bfailed to find free space in the KV cache\b")
# transformers with bitsandbytes (quantizer_bnb_4bit/8bit.validate_environment): device_map="auto" put modules on the CPU
# or the disk because the quantized model does not fit the GPU
# (round 68: its first sentence alone, as a quote cuts it: "ValueError: Some modules are dispatched on the CPU or the disk...")
HF_DISPATCH = re.compile(r"Some modules are dispatched on the CPU or the disk(?:\. Make sure you have enough GPU RAM to fit the quantized model"
                         r"|(?:\.\.\.|\u2026|\.)?\s*$)")
# Ollama's scheduler (server.go): the part of the model that stays in system RAM does not fit RAM plus swap
OLLAMA_TOO_LARGE = re.compile(r'model request too large for system"? requested="?([\d.]+ ?[KMGT]i?B)"? available="?([\d.]+ ?[KMGT]i?B|\d+)')
# Hugging Face text-generation-inference's warmup (server/text_generation_server/models/flash_causal_lm.py)
# (before mid-2023 it sized the KV cache from --max-batch-total-tokens: "... handle 16000 total tokens with 2 prefill tokens")
# exllamav3's loader (exllamav3/loader: initial_split): the model's modules and the cache found no room in the GPUs'
# split (autosplit or gpu_split); tabbyAPI and text-generation-webui print it as is
EXL_SPLIT = re.compile(r"Insufficient VRAM in split for model and cache")
# SGLang at start (srt/utils.py get_available_gpu_memory): the tensor-parallel ranks' free memory differs by more than
# its tolerance, because another process holds memory on some of the GPUs
SGLANG_UNBALANCED = re.compile(r"The memory capacity is unbalanced\. Some GPUs may be occupied by other processes")
TGI_PREFILL = re.compile(r"Not enough memory to handle (?:(\d{1,20}) total tokens with )?(\d{1,20}) prefill tokens")
# C++'s operator new failing (std::bad_alloc): host memory in a native library (a tokenizer or model loader), or a size
# computed wrong (swisscom/ai-research-keyphrase-extraction#28, epfml/sent2vec#98)
# MSVC's std::bad_alloc says "bad allocation" (its what()), as a C# or Python wrapper relays it ("OnnxRuntimeGenAIException:
# 'bad allocation'", ONNX Runtime's "[ErrorCode:RuntimeException] bad allocation"): read only right after an exception's or
# error's name, where prose does not put it
# (round 91) ONNX Runtime's Python binding relays it in its status's layout ("[ONNXRuntimeError] : 1 : FAIL : bad allocation",
# onnxruntime_pybind_exceptions: "[ONNXRuntimeError] : <code> : <StatusCode name> : <message>"), the message after the code's name
BAD_ALLOC = re.compile(r"\bstd::bad_alloc\b|(?:Exception|Error|what\(\))[:\]]{1,2}\s{0,4}['\"]?bad allocation\b"
                       r"|\[ONNXRuntimeError\] : \d{1,2} : [A-Z_]{2,30} : bad allocation\b")
# Windows' E_OUTOFMEMORY as DirectML reports it (ONNX Runtime's DML provider, torch-directml): "8007000E Not enough memory
# resources are available to complete this operation." (huggingface/diffusers#552, microsoft/Olive#1079)
# (a bare E_OUTOFMEMORY counts only next to DirectML's name: WSL's and D3D's own E_OUTOFMEMORY are something else)
DML_HRESULT = re.compile(r"8007000E Not enough memory resources are available to complete this operation"
                         r"|(?:Dml|DirectML|directml)[^\n]{0,200}?\bE_OUTOFMEMORY\b")
# torch_npu (Ascend; torch_npu/csrc/core/npu/NPUCachingAllocator.cpp): PyTorch's <= 2.0 message for an NPU, with "N current
# active; " since torch_npu 2.1 and "N cached)" in place of "reserved in total by PyTorch" in the oldest builds
# (vllm-project/vllm-ascend#19, vllm-project/vllm-omni#1199)
_NSZ = r"(\d+(?:\.\d+)? (?:bytes|[KMGT]iB))"
# (a quote may shorten the bracket to its labelled figures: "(32.00 GiB total; 28.00 GiB already allocated; 741.02 MiB free)",
# without the device, "capacity" or what is reserved: the figures keep their labels and are read as such)
NPU = re.compile(r"NPU out of memory\. Tried to allocate " + _NSZ + r"(?: \((?:NPU (\d{1,20}); )?" + _NSZ + r" total(?: capacity)?; " + _NSZ
                 + r" already allocated; (?:" + _NSZ + r" current active; )?" + _NSZ + r" free(?:; (?:" + _NSZ + r" allowed; )?"
                 + _NSZ + r" (reserved in total by PyTorch|cached))?\))?")
# PaddlePaddle's allocators (paddle/phi/core/memory/allocation/cuda_allocator.cc and its CUDA VMM and malloc-async twins): sizes
# from string::HumanReadableSize, binary with decimal labels ("56.000000MB", "39.250000kB"); "N memory has been allocated" is the
# card's whole use (total - free, every process), absent before Paddle 2.0 (PaddlePaddle/PaddleSeg#1723, PaddlePaddle/Paddle#26892)
_PSZ = r"(\d+(?:\.\d+)?[kKMGTP]?B)"
PADDLE = re.compile(r"Out of memory error on (GPU|XPU|NPU|MLU) (\d{1,20})\. Cannot allocate " + _PSZ + r"(?: CUDA managed)? memory on \w+ \d+, "
                    r"(?:" + _PSZ + r" memory has been allocated(?: and available memory is only " + _PSZ + r")?"
                    r"|available memory is only " + _PSZ + r")")
# (round 88) PaddlePaddle's host allocators (paddle/phi/core/memory/allocation/cpu_allocator.cc, its pinned twins): posix_memalign
# refused, "ResourceExhaustedError: Fail to alloc memory of N size, error code is 12.": system RAM, the request in bytes
PADDLE_HOST = re.compile(r"\bFail to alloc memory of (\d{1,20}) size\b")
# (round 88) Paddle's own CUDA check (PADDLE_ENFORCE_GPU_SUCCESS: phi::errors::External, "(External) CUDA error(2), out of
# memory."): a CUDA runtime call refused under Paddle, no sizes
PADDLE_CUDA = re.compile(r"\(External\) CUDA error\(2\), out of memory\b")
# CuPy's memory pool (cupy/cuda/memory.pyx OutOfMemoryError): "Out of memory allocating 25,600,000 bytes (allocated so far:
# 3,635,267,072 bytes)." with ", limit set to: N bytes" under a pool limit; before CuPy 7 "out of memory to allocate N bytes
# (total M bytes)", M being what the pool would hold with it (cupy/cupy#2537, cupy/cupy#1912)
CUPY = re.compile(r"Out of memory allocating (\d[\d,]*) bytes(?: \(allocated so far: (\d[\d,]*) bytes(?:, limit set to: (\d[\d,]*) bytes)?\))?"
                  r"|out of memory to allocate (\d{1,20}) bytes \(total (\d{1,20}) bytes")
# RAPIDS RMM (cuDF, cuML, cupoch) and thrust report device memory as C++'s std::bad_alloc, which Python shows as MemoryError:
# the GPU ran out, not system RAM (NVIDIA/cudf#6773, NVIDIA/cudf#10517, neka-nat/cupoch#98; thrust under a PyTorch extension:
# VITA-Group/FSGS#70). Both build what() as std::bad_alloc::what() + ": " + the message (thrust/system/detail/bad_alloc.h,
# rmm::bad_alloc), so an MSVC build, whose std::bad_alloc::what() is "bad allocation", prints "bad allocation: cudaErrorMemoryAllocation:
# out of memory" (a Windows build of simple-knn: graphdeco-inria/gaussian-splatting#99)
# (round 73) RMM 23.x on (rmm/detail/error.hpp RMM_CUDA_TRY_ALLOC) names the size its cudaMalloc asked for: "out_of_memory: CUDA error
# (failed to allocate N bytes) at: <file>:<line>: cudaErrorMemoryAllocation out of memory" (scverse/rapids-singlecell#631, the
# message wrapped after "at: C" by R's reticulate); only rmm::out_of_memory (cudaErrorMemoryAllocation) carries the out_of_memory prefix
RMM = re.compile(r"(?:std::bad_alloc|\bbad allocation): (?:out_of_memory: )?(?:CUDA error at: ?[^\n]{0,300}?: cudaErrorMemoryAllocation out of memory"
                 r"|RMM failure at: ?[^\n]{0,300}?: (Maximum pool size exceeded)|(cudaErrorMemoryAllocation: out of memory))"
                 r"|(?:std::bad_alloc|\bbad allocation): out_of_memory: CUDA error \(failed to allocate (\d{1,20}) bytes\)")
# (round 73) XGBoost's device allocator (src/common/device_vector.cu ThrowOOMError, 2.1 on) wraps the thrust/RMM bad_alloc in its own
# message with the card's free memory and the request, each in HumanMemUnit (powers of 1024, labelled KB/MB/GB): "Memory allocation
# error on worker N: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n- Free memory: F\n- Requested memory: R" (a Dask
# worker prints the exception's repr, so the newlines stay as escaped "\\n" on one line: dmlc/xgboost#11684)
XGB_ALLOC = re.compile(r"Memory allocation error on worker -?\d{1,3}: ")
XGB_FIGURE = re.compile(r"- (Free|Requested) memory: (\d{1,15}(?:\.\d{1,12})?(?:[KMG]B|B))\b")
# OpenVINO's GPU plugin (intel_gpu/src/runtime/engine.cpp check_allocatable): one buffer over the device's per-allocation maximum
# (CL_DEVICE_MAX_MEM_ALLOC_SIZE, about 4 GiB on many Intel GPUs), whatever is free; the maximum is left out when the message is
# wrapped before it (openvinotoolkit/openvino#36386,
# openvinotoolkit/openvino.genai#2406)
OPENVINO = re.compile(r"\[GPU\] Exceeded max size of memory object allocation: [Rr]equested (\d{1,20}) bytes(?:,? but max alloc size supported "
                      r"by device is (\d{1,20}) bytes)?")
# LM Studio's model-loading guardrail (closed source; the wording as its users report it): its estimate of the model at the chosen
# settings (context length, GPU offload) is more than the system can hold (lmstudio-ai/lmstudio-bug-tracker#484, #1038, #1202)
LMSTUDIO = re.compile(r"Model loading (?:was stopped|aborted) due to insufficient system resources\.(?: Under the current settings, this model "
                      r"requires approximately (?:([\d.]+ ?[KMGT]i?B)|(NaN)\b))?|Not enough resources to load the model with the current settings")
# wgpu (WebGPU in Rust: Burn, Candle's wgpu backend, browsers' wasm builds): DeviceError::OutOfMemory prints "Not enough memory left."
# on its own line under "In Device::create_buffer", or inside NoDevice("...") (Gadersd/stable-diffusion-burn#5, ruffle-rs/ruffle#15375)
WGPU = re.compile(r"^\s*Not enough memory left\.?\s*$|\(\"Not enough memory left\.\"\)")
# Ollama's MLX runner and image generation (x/mlxrunner/client.go, x/imagegen, 2026): the model does not fit the first GPU's free
# memory after Ollama's overhead (ollama/ollama#17246)
_OSZ = r"(\d+(?:\.\d+)? [KMGT]?i?B)"
OLLAMA_FIT = re.compile(r"model requires " + _OSZ + r" but only " + _OSZ + r" are available \(after " + _OSZ + r" overhead\)")
# (round 106) Ollama's offload record (server.go's msg=offload, llm/memory.go's earlier msg="offload to cuda"): the compute
# graph's estimate, each GPU's available memory (a list, "[95.8 GiB]" or "[23.3 GiB 23.3 GiB]") and the library; each read apart
OLLAMA_GRAPH_FULL = re.compile(r'\bmemory\.graph\.full="' + _OSZ + '"')
OLLAMA_AVAILABLE = re.compile(r'\bmemory\.available="\[([^\]"]{1,400})\]"')
OLLAMA_LIBRARY = re.compile(r"\blibrary=(\w{1,16})")
OLLAMA_SIZES = re.compile(r"(?<![\d.])(\d{1,12}(?:\.\d{1,6})? [KMGT]?i?B)")     # (bounded: a run of digits is read linearly)
# llama.cpp's SYCL backend (ggml/src/ggml-sycl/ggml-sycl.cpp ggml_backend_sycl_buffer_type_alloc_buffer): a device (or USM host)
# buffer malloc_device refused (ggml-org/llama.cpp#28953, docs/backend/SYCL.md)
GGML_SYCL = re.compile(r"can't allocate (\d{1,20}) Bytes of memory on (device|host)")
# Apple Metal: a command buffer the GPU could not back with memory (llama.cpp's Metal backend, PyTorch MPS, MLX),
# and MPS's single-buffer size limit
# (round 83) MLX's own message ("[METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPU...)") quoted
# cut before Metal's code: MLX's prefix and Metal's description of the error, which is the out-of-memory one
METAL = re.compile(r"kIOGPUCommandBufferCallbackErrorOutOfMemory|\bInsufficient Memory \(0+8|command buffer \d+ failed with status 5\b"
                   r"|\[METAL\] Command buffer execution failed: Insufficient Memory\b")
# (round 102) a Metal program's own refusal of one buffer (MTLDevice newBufferWithLength: returned nil), in its log's words:
# "failed to create Metal buffer of size 12884901888" (bytes); the program is not named by it, so it names no runtime
METAL_CREATE = re.compile(r"\bfailed to create Metal buffer of size (\d{1,20})\b")
MPS_BUFFER = re.compile(r"Invalid buffer size: ([\d.]+ ?[KMGT]i?B)")
# (round 93) the heads of Windows' message for ERROR_COMMITMENT_LIMIT (1455) in a localized system (PAGING), one per language
PAGING_LOCALIZED = ("Die Auslagerungsdatei ist zu klein", "El archivo de paginación es demasiado pequeño",
                    "O arquivo de paginação é muito pequeno", "Le fichier de pagination est insuffisant",
                    "Il file di paging è troppo piccolo", "页面文件太小")
# the operating system refused host memory: Windows' commit limit (os error 1455), Linux's OOM killer
# (round 83) Windows' message for ERROR_COMMITMENT_LIMIT (FormatMessage of 1455: "The paging file is too small for this
# operation to complete.") quoted cut after "too small": its head, where a message starts (a line's start, after an
# exception's "OSError: ", a "[WinError 1455] " or Rust's message: "); the words inside a sentence are prose, not the line
PAGING = re.compile(r"paging file is too small for this operation to complete|WinError 1455|os error 1455"
                    r"|(?:^\s{0,8}|[:\]\"] ?)The paging file is too small\b"
                    # (round 93) the same message in a localized Windows (FormatMessage in the system's language), its head where a
                    # message starts as the English one's: German, Spanish, Brazilian Portuguese, French, Italian, Simplified
                    # Chinese ("Die Auslagerungsdatei ist zu klein, um diesen Vorgang durchzuführen.", "El archivo de paginación es
                    # demasiado pequeño para completar la operación.", "O arquivo de paginação é muito pequeno para que esta operação
                    # seja concluída.", "Le fichier de pagination est insuffisant pour terminer cette opération.", "Il file di paging
                    # è troppo piccolo per essere completata l'operazione.", "页面文件太小，无法完成操作。")
                    r"|(?:^\s{0,8}|[:\]\"] ?)(?:" + "|".join(PAGING_LOCALIZED) + r")"
                    # (round 89) PyTorch's shared-memory allocator on Windows (aten MapAllocator.cpp: "Couldn't open shared file
                    # mapping: <torch_...>, error code: <1455>", MapViewOfFile's "Couldn't map view of shared file <...>, error
                    # code: <1455>"), where a DataLoader worker hands a batch back: the mapping is charged against the commit
                    # limit, and 1455 is ERROR_COMMITMENT_LIMIT (another code is not read)
                    r"|\bCouldn't (?:open shared file mapping: |map view of shared file )<[^>\n]{0,260}>, error code: <1455>")
# (round 82) Windows' Resource-Exhaustion-Detector (event 2004, Microsoft-Windows-Resource-Exhaustion-Detector) when the commit
# charge nears the commit limit (RAM plus page file): "Windows successfully diagnosed a low virtual memory condition. The
# following programs consumed the most virtual memory: <image> (<pid>) consumed <n> bytes, ...". The first program it
# lists is the largest; its bytes are read as the process's (group 1)
LOW_VIRTUAL_MEMORY = re.compile(r"Windows successfully diagnosed a low virtual memory condition\."
                                r"(?: The following programs consumed the most virtual memory: [^\n()]{1,260}? \(\d{1,10}\) consumed (\d{1,20}) bytes)?")
# (round 72) WSL2's GPU paravirtualisation (the dxgkrnl driver, "misc dxg: dxgk:" in the kernel log) refusing to make an
# allocation resident, -12 (ENOMEM) below what nvidia-smi shows free (microsoft/WSL#41176), and what CUDA's virtual-memory
# calls return to PyTorch's expandable segments there: C10_CUDA_DRIVER_CHECK's "CUDA driver error: device not ready"
# (CUDA_ERROR_NOT_READY from cuMemCreate/cuMemMap, which never wait on work: syv-ai/qwen38-27b-rtx3090#2,
# noonghunna/club-3090#84, both fixed by expandable_segments:False)
WSL_RESIDENT = re.compile(r"\bdxgkio_make_resident: Ioctl failed: -12\b")
CUDA_NOT_READY = re.compile(r"\bCUDA driver error: device not ready\b")
# (round 72) HAMi-core (Project-HAMi's CUDA hook in a vGPU pod, src/allocator/allocator.c) refusing an allocation over the
# pod's device memory limit: "[HAMI-core ERROR (pid:1 thread=... allocator.c:53)]: Device 0 OOM <usage after> / <limit>", bytes
HAMI_OOM = re.compile(r"\bHAMI-core ERROR\b[^\n]{0,160}?\bDevice (\d{1,3}) OOM (\d{1,20}) / (\d{1,20})\b")
# A process ended by SIGKILL, in its parent's words: the shell's "Killed" (also right after a progress bar that left the cursor
# on its line: "0/2 [00:00<?, ?it/s]Killed"), Go's os/exec "signal: killed" (Ollama's runner, LocalAI's backends), CPython's
# subprocess "died with <Signals.SIGKILL: 9>", torchrun's "Signal 9 (SIGKILL) received by PID" / "exitcode: -9", an IDE's
# "interrupted by signal 9: SIGKILL", 128 + 9 = exit code 137 (docker, shells). Nothing else sends SIGKILL unasked: the kernel's
# OOM killer (or a container's memory limit) ended it. (round 75) The shell's "Killed" is glibc's strsignal(SIGKILL), which a
# zh_CN locale translates: "已杀死" on a line of its own (danijar/dreamerv3#203). The kernel's own line (mm/oom_kill.c,
# "<message>: Killed process <pid> (<comm>) total-vm:..."; "Kill process <pid> (<comm>) score ..." before 4.x) names the
# system-wide OOM killer "Out of memory" and a memory cgroup's limit (a container's, a Colab VM's) "Memory cgroup out of memory"
# (round 79); a write-up quoting it may drop the pid
KILLED = re.compile(r"^\s*Killed\s*$|^\s*已杀死\s*$|\bline \d+:\s+\d+\s+Killed\b|^\s*(?:\[\d+\](?:\s*[+-])?\s*)?\d+\s+[Kk]illed\s+\S|^\[\d+\](?:\s*[+-])?\s+Killed\b"
                     # (round 82) the kernel's line goes on with the victim's sizes ("Killed process <pid> (<comm>) total-vm:<n>kB,
                     # anon-rss:<n>kB, file-rss:..."): its anonymous resident memory, in KiB, is the process's own (group 1)
                     # (round 83) a quotation that keeps anon-rss and leaves total-vm out reads it the same
                     # (round 117) and one that names the victim bare, with no pid or parentheses ("Killed process llama-server,
                     # anon-rss:<n>kB")
                     r"|(?:Out of memory|Memory cgroup out of memory): Kill(?:ed)? process(?:(?:(?: \d{1,10})? \([^\n()]{1,64}\) (?:total-vm:\d{1,20}kB, )?| [\w.-]{1,64}, )anon-rss:(\d{1,20})kB)?"
                     r"|\boom-kill(?:er)?\b|invoked oom-killer|is killed by signal: Killed"
                     r"|\]\s{0,8}Killed\s*$|\bsignal: killed\b|<Signals\.SIGKILL: 9>|\bSignal 9 \(SIGKILL\)|signal 9: SIGKILL"
                     r"|\bexitcode: -9\b|\bexit(?:ed with)? code:? 137\b|\bexit status 137\b"
                     # (round 72) DeepSpeed's launcher (launcher/launch.py sigkill_handler): "[...] exits with return code = -9"
                     # (a child's negative return code is the signal that ended it; tdrussell/diffusion-pipe#149)
                     r"|\bexits with return code = -9\s*$"
                     # (round 85) text-generation-inference's launcher when a child it started (the weights' download and
                     # conversion, a shard) ends by a signal: "Download process was signaled to shutdown with signal 9"
                     r"|\bprocess was signaled to shutdown with signal 9\b"
                     # (round 80) Slurm's task/cgroup plugin after the kernel killed tasks of a step under its memory cgroup
                     # ("Detected <n> oom_kill event(s) in StepId=<job>.<step>. Some of the step tasks have been OOM Killed.",
                     # from 21.08 on; the older "Detected <n> oom-kill event(s) in step ..." is read by "oom-kill" above): the
                     # job's host-memory limit, quoted also cut after the step's id
                     r"|\bDetected \d{1,9} oom_kill events? in\b"
                     # (round 88) srun's report of a step's tasks ended by the job's memory cgroup ("srun: error: <node>: tasks 0-3:
                     # Out Of Memory", Slurm's capitalisation), and Ray's memory monitor killing workers for the node's RAM
                     # ("(raylet) ... 40 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed ...")
                     r"|\btasks? \d{1,6}(?:[-,]\d{1,6}){0,20}: Out Of Memory\b"
                     r"|\b\d{1,9} Workers \(tasks / actors\) killed due to memory pressure \(OOM\)"
                     # Android's low-memory killer (lmkd: "lowmemorykiller: Kill 'pkg' (pid), uid N, oom_score_adj N to free NkB rss";
                     # the kernel driver before it: "lowmemorykiller: Killing 'pkg' (pid), adj N," with "to free NkB" on the next line): the app's resident
                     # memory, in KiB
                     r"|\blowmemorykiller: Kill(?:ing)? '[^'\n]{1,200}' \(\d+\)(?:[^\n]{0,120}? to free (\d{1,20})kB)?"
                     # (round 94) systemd's unit notice after the kernel's OOM killer took one of its processes (src/core/unit.c
                     # unit_check_oom: "<unit>: A process of this unit has been killed by the OOM killer."); Celery's pool when a
                     # worker was SIGKILLed (billiard: "Worker exited prematurely: signal 9 (SIGKILL)", "Process 'ForkPoolWorker-2'
                     # pid:218 exited with 'signal 9 (SIGKILL)'"); Cloud Run's container event ("Container terminated on signal 9")
                     r"|\bA process of this unit has been killed by the OOM killer\b"
                     r"|\bWorker exited prematurely: signal 9 \(SIGKILL\)|\bexited with 'signal 9 \(SIGKILL\)'"
                     r"|\bContainer terminated on signal 9\b"
                     # (round 97) the kernel's line quoted with its pid and name elided ("Killed process ... python ... anon-rss:NkB",
                     # the "Out of memory: " prefix dropped): only mm/oom_kill.c prints "Killed process" before an anon-rss figure;
                     # its anonymous resident memory, in KiB (group 3)
                     r"|\bKilled process (?:\d{1,10}|\.{3}|…)[ (][^\n]{0,160}?\banon-rss:(\d{1,20})kB")
# The words a kill line holds (parse's gate for KILLED). The chunk scanner looks for the same words in a log's tail
# (scan_words.TAIL_WORDS), less the two that other words there already find ("Out of memory: Kill process" holds
# "ut of memory"; "lowmemorykiller: Kill" is an ERROR_WORD)
KILL_TAIL_WORDS = ("illed", "已杀死", "oom-kill", "SIGKILL", "exitcode: -9", "code 137", "code: 137", "status 137", "code = -9", "oom_kill event",
                   "with signal 9",     # (round 85) TGI's launcher
                   ": Out Of Memory",     # (round 88) Slurm srun's task line (Ray's memory monitor holds "illed")
                   "terminated on signal 9")     # (round 94) Cloud Run's container event
KILL_WORDS = KILL_TAIL_WORDS + ("Kill process", "lowmemorykiller")

# the OS refused host memory with ENOMEM: safetensors mapping a checkpoint shard (vLLM, transformers, ComfyUI), a DataLoader
# worker forking, Python's OSError: system RAM (or its overcommit limit)
ENOMEM = re.compile(r"unable to mmap (\d{1,20}) bytes from (?:file )?[^\n]{0,400}?: Cannot allocate memory|\[Errno 12\] Cannot allocate memory"
                    r"|Cannot allocate memory \(os error 12\)")
# Triton (torch.compile, SageAttention, FlashAttention-Triton): a kernel's shared memory per block above the GPU's limit
# (round 85) and Inductor's autotuner when no config of a kernel fits ("No valid triton configs. OutOfResources: out of
# resource: shared memory, Required: N, Hardware limit: M", torch/_inductor/runtime/triton_heuristics.py), quoted with the
# exception between elided: the same two numbers, Triton's (groups 3, 4)
TRITON_SMEM = re.compile(r"out of resource: shared memory, Required: (\d{1,20}), Hardware limit: (\d{1,20})"
                         # (round 91) newer builds name the kernel and drop the commas ("No valid triton configs. OutOfMemoryError: out of
                         # resource: triton_flex_attention Required: 294912 Hardware limit: 232448"): the same two numbers
                         r"|\bNo valid triton configs\b[^\n]{0,300}?\bRequired: (\d{1,20}),? Hardware limit: ?(\d{1,20})")
# MPS (MPSNDArray.mm): one array above 4 GiB, whatever memory is free
MPS_NDARRAY = re.compile(r"total bytes of NDArray > 2\*\*32")
# (round 86) MPSGraph (PyTorch's MPS backend compiles its ops into MPSGraph) refusing a tensor whose dimensions pass a signed
# 32-bit count: "MPSGraph does not support tensor dims larger than INT_MAX". A cap of the platform on one tensor, whatever
# memory is free (R5): a VAE decode's whole-frame self-attention at a large resolution, an SDPA at a long length
MPSGRAPH_INT_MAX = re.compile(r"\bMPSGraph does not support tensor dims larger than INT_MAX\b")
# (round 87) NCCL creating the shared-memory segment its SHM transport passes data through between ranks (src/misc/shmutils.cc:
# "Error while creating shared memory segment /dev/shm/nccl-XXXXXX (size N), error: No space left on device (28)"): /dev/shm is
# a tmpfs in host RAM (64 MB by default in a container), full; read from the segment's path on (a quote wraps the line after
# "segment"). Other errors (attaching to a segment, another errno) are not a shortage of it
NCCL_SHM = re.compile(r"(?:\bError while creating shared memory segment |^\s{0,8})/dev/shm/nccl-[\w.-]{1,40} \(size (\d{1,20})\), "
                      r"error: No space left on device\b")
# (round 89) Apache Arrow's memory pool refusing host memory (arrow/memory_pool.cc: Status::OutOfMemory("malloc of size ", n,
# " failed"), "realloc of size N failed"): pyarrow raises it as ArrowMemoryError (a MemoryError) with the message alone, Arrow's
# C++ status prints its code before it ("Out of memory: ..."). Record batches in system RAM (the default pool: jemalloc,
# mimalloc or the system allocator); its size the request
ARROW_ALLOC = re.compile(r"\b(?:ArrowMemoryError|Out of memory): (?:m|re)alloc of size (\d{1,20}) failed\b")
# (round 89) NVIDIA Triton Inference Server's Python backend growing the shared-memory pool its stub processes pass tensors
# through (python_backend src/shm_manager.cc: "Failed to increase the shared memory pool size for key '<region>' to N bytes. If
# you are running Triton inside docker, use '--shm-size' flag ...", older builds without "for key '...'"): the pool lives in
# /dev/shm, host RAM (a container's 64 MB default); N is the pool's size when the growth failed, the limit it met
TRITON_PB_SHM = re.compile(r"\bFailed to increase the shared memory pool size (?:for key '[^'\n]{1,200}' )?to (\d{1,20}) bytes\b")
# llama.cpp's Vulkan backend: one buffer above the device's per-allocation limit (maxMemoryAllocationSize, maxBufferSize);
# the driver refuses it whatever is free
VULKAN_LIMIT = re.compile(r"exceeds device (?:buffer size|memory allocation) limit")
# The Vulkan validation layer (VK_LAYER_KHRONOS_validation, layers/stateless/sl_buffer.cpp; the spec's
# VUID-VkBufferCreateInfo-size-06409): vkCreateBuffer asked for one buffer above VkPhysicalDeviceMaintenance4Properties::
# maxBufferSize, the cap the driver reports or a layer (the LunarG Vulkan Configurator) imposes, whatever is free; older
# releases print neither number (ggml-org/llama.cpp#11598)
# Metal's API validation layer (on under Xcode's debugger, the iOS and macOS apps that embed a runtime) refusing one buffer
# over the device's per-buffer maximum: "-[MTLDebugDevice newBufferWithBytesNoCopy:...]: failed assertion `Buffer Validation"
# then "newBufferWith*:length 0x86004000 must not exceed 2048 MB." (llama.cpp#6861); the length in hex or decimal bytes
METAL_VALIDATION = re.compile(r"newBufferWith\w*\*?:length (0x[0-9a-fA-F]{1,16}|\d{1,20}) must not exceed (\d{1,9}) MB")
VULKAN_MAX_BUFFER = re.compile(r"vkCreateBuffer(?:\(\))?: pCreateInfo->size (?:\((\d{1,20})\) )?is larger than the maximum allowed buffer size "
                               r"VkPhysicalDeviceMaintenance4Properties\.maxBufferSize(?: \((\d{1,20})\))?")
# Mesa's RADV (winsys/amdgpu/radv_amdgpu_cs.c) relaying the kernel's -ENOMEM from the command-submission ioctl (amdgpu_cs.c
# amdgpu_cs_parser_bos: the submission's buffers could not all be made resident); the kernel's own dmesg line has the same words
AMDGPU_CS = re.compile(r"(radv/)?amdgpu: Not enough memory for command submission")
# llama.cpp's CUDA check before 2023-06 ("CUDA error 2 at ggml-cuda.cu:359: out of memory"): no function named
GGML_CUDA_OLD = re.compile(r"CUDA error \d+ at \S{0,200}?ggml-cuda\.cu:\d+: out of memory")
# FlashInfer's AlignedAllocator (include/flashinfer/allocator.h) carves a plan's temporaries out of the fixed workspace buffer its
# caller allocated (vLLM: 256 MiB until VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE, vllm-project/vllm#25342; SGLang: per model,
# sgl-project/sglang#2102, PR 2879): "Buffer overflow when allocating memory for batch_prefill_tmp_v with size N and alignment 16,
# but only M bytes available in AlignedAllocator"; releases before 0.2 said "Failed to allocate memory for X with size N and
# alignment 16 in AlignedAllocator". The workspace is full, not the GPU
# (round 77) releases of mid-2024 (0.0.x-0.1.x, under vLLM 0.5's FlashInfer backend) raised it without sizes and with the class
# name misspelt: "Out of workspace memory in AlignedAlloactor" (flashinfer-ai/flashinfer#362)
FLASHINFER_WS = re.compile(r"(?:Buffer overflow when allocating|Failed to allocate) memory for (\w+) with size (\d{1,20}) and alignment \d+"
                           r"(?:, but only (\d{1,20}) bytes available)? in AlignedAllocator"
                           r"|Out of workspace memory in Aligned(?:Allocator|Alloactor)\b")
# vLLM's cumem allocator (csrc/cumem_allocator.cpp: the CUDAPluggableAllocator sleep mode uses): its CUDA_CHECK prints
# "CUDA Error: %s at %s:%d" with the driver's cuGetErrorString. "out of memory" is cuMemCreate short of device memory; any other
# string is one of the allocator's driver calls failing (vllm#35612: "invalid argument" from a query wrapped in the check)
# (quoted without its line number: "CUDA Error: out of memory at csrc/cumem_allocator.cpp")
VLLM_CUMEM = re.compile(r"CUDA Error: ?([^\n]{1,80}?) at (?:\S{0,300}[/\\])?cumem_allocator\.cpp(?::\d+|(?![\w.:]))")
# LMDeploy's TurboMind engine (src/turbomind/utils/allocator.h, its CUDA check): "[TM][ERROR] CUDA runtime error: out of memory
# .../turbomind/utils/allocator.h:223" (InternLM/lmdeploy#277)
TURBOMIND = re.compile(r"\[TM\]\[(?:ERROR|FATAL)\][^\n]{0,80}?CUDA runtime error: out of memory")
# ggml's CUDA check before 2023-06 as its one-line form is quoted ("CUDA error 2: out of memory", ollama/ollama#1465): the
# location left out
GGML_CUDA_CODE = re.compile(r"^\s*(?:[\w.\[\]-]{1,40}:\s+)?CUDA error 2: out of memory\s*$")
# Electron's render-process-gone with reason "oom" (Comfy Desktop's app log: "render-process-gone reason=oom"): the window's
# renderer (the frontend page, its JavaScript heap) ran out of memory, not the GPU nor the Python server
ELECTRON_OOM = re.compile(r"render-process-gone\b[^\n]{0,80}?\breason[=:]\s*'?\"?oom\b")
# oMLX (an MLX server) stops a prefill when the process's memory crosses its ceiling (its scheduler: "Prefill force-stopped at
# N tokens: memory 42.8GB exceeds ceiling 42.0GB", then "Memory limit exceeded during prefill"; jundot/omlx#1522)
_OMLX_SIZE = r"(\d{1,12}(?:\.\d{1,12})? ?[KMGT]i?B)"     # one number each ("1.2.3 GB" matches none: parse_size would raise)
OMLX_CEILING = re.compile(r"Prefill force-stopped at \d+ tokens: memory " + _OMLX_SIZE + " exceeds ceiling " + _OMLX_SIZE +
                          r"|Memory limit exceeded during prefill")
# oMLX's prefill memory guard refuses a prompt before running it: its own estimate of the prefill's KV cache and attention
# (KV+SDPA) on top of what the process holds would pass its ceiling ("Prefill would require ~N peak (current A + KV+SDPA K)
# but ceiling is C", "but the prefill ceiling is", "but limit is": older builds and the admin guard); a prediction, nothing
# was allocated. Its scheduler (_format_rejection_message, read from jundot/omlx's stored source, session 50) names which
# ceiling binds, "static", "dynamic", "metal_cap", several joined by "/", or "effective", and adds one advice per binding
# that prints the limit behind it: "(currently pinned at D)" (custom tier), "(currently caps Metal at M)" (the
# iogpu.wired_limit_mb sysctl), "(static cap is S but only R is reclaimable right now)" (other apps hold the RAM)
_OMLX_BINDING = r"(?:(?:static|dynamic|metal_cap|effective|prefill)(?:/(?:static|dynamic|metal_cap))* )?"
OMLX_PREFLIGHT = re.compile(r"Prefill would require ~?" + _OMLX_SIZE + r" peak \(current " + _OMLX_SIZE + r" \+ KV\+SDPA "
                            + _OMLX_SIZE + r"\) but (?:the )?(" + _OMLX_BINDING + r")(?:ceiling|limit) is " + _OMLX_SIZE
                            + r"(?:[^\n]{0,160}?(?:currently pinned at|currently caps Metal at|static cap is) " + _OMLX_SIZE
                            + r"(?: but only " + _OMLX_SIZE + r" is reclaimable)?)?")
# the same scheduler's second check (_preflight_safety_rejection), run when the estimate above passes: even the smallest
# prefill chunk cannot run, because the prompt's KV cache (estimated from the model's cache layout, no attention term) and
# one minimum chunk's transient at the full context, on top of what the process holds, pass a safety cap of a fraction of
# the abort ceiling: "Prefill context too large for available memory (preflight safety guard, kv_len=N, min_chunk=M):
# predicted peak would require ~E (current C + KV K + min-chunk transient T) but prefill safety cap is P (90% of effective
# ceiling B)" (jundot/omlx#2321)
OMLX_SAFETY = re.compile(r"Prefill context too large for available memory \(preflight safety guard, kv_len=(\d{1,9}), "
                         r"min_chunk=(\d{1,9})\): predicted peak would require ~?" + _OMLX_SIZE + r" \(current " + _OMLX_SIZE
                         + r" \+ KV " + _OMLX_SIZE + r" \+ min-chunk transient " + _OMLX_SIZE + r"\) but prefill safety cap is "
                         + _OMLX_SIZE + r"(?: \(\d{1,3}% of effective ceiling " + _OMLX_SIZE + r"\))?")
# oMLX's cluster mode checks each node before it starts any rank ("Model does not fit the current per-node memory limits; no
# ranks were started.", then per node "rank 1 (host) needs 63.6 GiB but can admit 59.1 GiB right now": jundot/omlx#3526): the
# node's limit follows the memory free on it at that moment, nothing of the model was allocated
OMLX_ADMIT = re.compile(r"\brank \d{1,4} (?:\([^()\n]{0,100}\) )?needs " + _OMLX_SIZE + r" but can admit " + _OMLX_SIZE
                        + r"|Model does not fit the current per-node memory limits")
# An MLX server's load pre-flight refuses a model before loading any of it, when its own load requirement (the weights, and
# in some servers a headroom for warmup buffers and a first KV cache) passes the memory it counts as free or allowed:
# mlx-serve ("Insufficient memory to load model: needs ~57.6 GB free (50.6 GB of weights plus headroom ...) but only 30.1 GB
# is available", its older wording "weights ~72.8 GB but only 78.3 GB free": ddalcu/mlx-serve#440, #210), MTPLX ("cannot
# load inside the available Metal memory budget; at least 83.3 GiB resident plus 16 GiB system headroom is required":
# youssofal/MTPLX#400), oMLX ("Model 'X' (218.08GB) exceeds max-model-memory (25.00GB)": jundot/omlx#378)
MLX_LOAD_PREFLIGHT = re.compile(
    r"Insufficient memory to load model: (?:needs ~?" + _OMLX_SIZE + r" free \(" + _OMLX_SIZE + r" of weights\b[^\n]{0,160}?\) "
    r"but only " + _OMLX_SIZE + r" is available|weights ~?" + _OMLX_SIZE + r" but only " + _OMLX_SIZE + r" free)"
    r"|cannot load inside the available Metal memory budget; at least " + _OMLX_SIZE + r" resident(?: plus " + _OMLX_SIZE
    + r" [\w ]{0,30}?headroom)? is required"
    r"|Model '[^'\n]{1,200}' \(" + _OMLX_SIZE + r"\) exceeds max-model-memory \(" + _OMLX_SIZE + r"\)")
# An application's own VRAM pre-flight check, which estimates a job's need before running it and refuses the job when the
# estimate is over what the card has free right now: ACE-Step 1.5 ("[generate_music] VRAM pre-flight: 3.37 GB free, ~5.42 GB
# needed (batch=2, duration=246s, mode=base).", ace-step/ACE-Step-1.5#747, fixed by #759). Nothing was allocated: the
# estimate refused. A line whose need is under the free figure is the check passing, not a failure (other_runtimes)
APP_VRAM_PREFLIGHT = re.compile(r"\bVRAM pre-?flight(?: check)?: " + _OMLX_SIZE + r" free, ~?" + _OMLX_SIZE + r" needed")
# IREE's runtime status (iree/base/status: a code name, then the HAL driver's error and its own words): a device buffer
# refused, "RESOURCE_EXHAUSTED; HIP driver error 'hipErrorOutOfMemory' (2): out of memory; failed to allocate buffer of
# length 34638106880" (iree-org/iree#20518); the driver named picks the device. Its Vulkan HAL prints "[symbol] VkResult"
# (hal/drivers/vulkan/util/libvulkan.c iree_status_from_vk_result: VK_ERROR_OUT_OF_DEVICE_MEMORY is RESOURCE_EXHAUSTED); with no
# driver named the memory is not known (a CPU HAL's buffer is the host's)
IREE_ALLOC = re.compile(r"\bRESOURCE_EXHAUSTED;(?: (HIP|CUDA) driver error '\w{1,60}' \(\d{1,6}\): out of memory;"
                        r"| (?:\[\w{1,60}\] )?(VK_ERROR_OUT_OF_DEVICE_MEMORY);)?[^\n]{0,160}?\bfailed to allocate buffer of length (\d{1,20})")
# vLLM.rs (xinfer: Rust, candle) admits a prompt only when its new tokens fit the KV cache's free tokens, else its server
# answers "Remaining N kvcache tokens, but your prompt requires M new tokens, please request later!" (guoqingbao/xinfer#278):
# nothing was allocated, the scheduler refused to admit the request
VLLMRS_KV = re.compile(r"\bRemaining (\d{1,12}) kvcache tokens, but your prompt requires (\d{1,12}) new tokens")
# ComfyUI-VideoHelperSuite's Load Video guard (videohelpersuite/load_video_nodes.py, since 2024-05): it caps the frames it
# decodes by the system RAM psutil reports free (available RAM + free swap - 128 MiB) and raises "Memory limit hit after
# loading N frames. Stopping execution." when the video has more, or, under a Meta Batch, "Meta Batch set to N frames but
# only M can fit in memory" before decoding (Kosinkadink/ComfyUI-VideoHelperSuite#236): host RAM, nothing on the GPU
VHS_RAM = re.compile(r"\bMemory limit hit after loading (\d{1,12}) frames|\bMeta Batch set to (\d{1,12}) frames but only (-?\d{1,12}) can fit in memory")
# SwarmUI's report when its ComfyUI backend died with system memory nearly full (src/Backends/...)
SWARM_RAM = re.compile(r"system memory usage exceeded ([\d.]+)% just before the backend process failed")
# OpenCL (pyopencl, tinygrad, clBLAS): the device could not back a buffer object
OPENCL = re.compile(r"\bMEM_OBJECT_ALLOCATION_FAILURE\b|\bCL_OUT_OF_RESOURCES\b")
# ggml's OpenCL backend (ggml-opencl.cpp CL_CHECK: "ggml_opencl: %s error %d at %s:%d", the call's text and its cl_int): -4
# CL_MEM_OBJECT_ALLOCATION_FAILURE and -5 CL_OUT_OF_RESOURCES are the device's memory, -6 CL_OUT_OF_HOST_MEMORY the host's
GGML_OPENCL = re.compile(r"\bggml_opencl: [^\n]{0,400}? error (-[456]) at ")
# ONNX Runtime's CPU execution provider: its nodes carry the NCHWc layout suffix, its arena is the CPU's
ONNX_CPU = re.compile(r"Name:'[^'\n]{0,200}_nchwc'|CPUExecutionProvider|\bCpuArena\b|device:CPU")

# PyTorch's messages lower-cased (as some trainers' logs and forum quotes show them): put back the capitals the
# patterns in error_patterns.py read
_LOWER_FIX = re.compile(r"\b(cuda|hip|xpu) out of memory\. tried|(?<=\d )([kmgt])ib\b|\((gpu|device) |\. (gpu) |by (pytorch)\b"
                        r"|\b(process) (?=\d)|\b(of the allocated memory)")

# ncnn's Vulkan allocators (src/allocator.cpp, gpu.cpp: NCNN_LOGE("vkAllocateMemory failed %d", ret)): the VkResult, -2
# VK_ERROR_OUT_OF_DEVICE_MEMORY or -1 VK_ERROR_OUT_OF_HOST_MEMORY. The ncnn upscalers (realesrgan-, waifu2x-, realcugan-ncnn-vulkan,
# chaiNNer's NCNN nodes) allocate each tile's blobs there, so the tile size (-t) sets the request
NCNN_VK = re.compile(r"(?:^|\]\s*|:\s*)vkAllocateMemory failed (-[12])\b")

# (fixV) NVIDIA Omniverse Kit (Isaac Sim, Isaac Lab): its Vulkan graphics plugin logs the driver's VkResult by its name without
# the VK_ prefix ("[Error] [carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY"). (fixY) The host form is the
# Vulkan spec's VK_ERROR_OUT_OF_HOST_MEMORY (-1, "a host memory allocation has failed") in the same words: system RAM
KIT_VK = re.compile(r"\bV[Kk]Result: ERROR_OUT_OF_(DEVICE|HOST)_MEMORY\b")

# libplacebo's Vulkan allocator (src/vulkan/malloc.c, FFmpeg's libplacebo filter, mpv, video2x): "Allocation of size  126M failed:
# VK_ERROR_OUT_OF_DEVICE_MEMORY!", then "Memory heaps supported by device:" and one "    0: flags 0x1 size 7956M" line per heap
# (print_size: binary units, K/M/G; flags bit 0 is VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
LIBPLACEBO = re.compile(r"Allocation of size\s{1,8}(\d{1,5}[KMG]?) failed: VK_ERROR_OUT_OF_(DEVICE|HOST)_MEMORY")
LIBPLACEBO_HEAP = re.compile(r"^\s*(?:heap )?\d+: flags 0x([0-9a-f]+) size\s{1,8}(\d{1,20}[KMG]?)\s*$")

# .NET's CLR (SwarmUI, other C# front-ends): System.OutOfMemoryException, raised when the managed heap cannot get memory, and
# when one object would pass a size limit whatever RAM is free (a StringBuilder past MaxCapacity, a string past ~2**30
# characters, an array or MemoryStream past 2 GB: the exception's documented conditions). The innermost frame (the line
# under it) names the object being grown
DOTNET = re.compile(r"\bSystem\.OutOfMemoryException\b")
DOTNET_OBJECT = re.compile(r"^\s*at System\.(?:Text\.StringBuilder|String|IO\.MemoryStream|Array|Collections\.Generic\.List`1)\.")

# ds4 (antirez's DeepSeek V4 server): "ds4: ROCm model arena alloc failed for tensor-span:128 (1792.00 MiB chunk): out of
# memory" while it maps the model's tensors into its arena (antirez/ds4#475), "ds4: ROCm tensor alloc failed: out of memory"
# for a session's own tensors (antirez/ds4#459); form "model" is the weights' arena. (round 121) The arena's refusal of one
# named tensor gives its size as the request ("ds4: ROCm model arena alloc failed for moe_gate (1152.00 MiB request): out of
# memory"), read as the chunk's is
DS4 = re.compile(r"ds4: (ROCm|CUDA|Metal) (model arena|tensor) alloc failed\b[^\n]{0,200}?: out of memory")
DS4_CHUNK = re.compile(r"\(([\d.]{1,12} [KMGT]iB) (?:chunk|request)\)")

# Tenstorrent's tt-metal allocator (TT_FATAL): "Out of Memory: Not enough space to allocate N B DRAM buffer across 12 banks,
# where each bank needs to store M B, but bank size is T B (allocated: A B, free: F B, largest free block: L B)"
# (tenstorrent/tt-forge#855); the numbers are one bank's, the request the whole buffer
TT_METAL = re.compile(r"Out of Memory: Not enough space to allocate (\d{1,20}) B (?:DRAM|L1)\w* buffer[^\n]{0,120}?bank size is (\d{1,20}) B "
                      r"\(allocated: (\d{1,20}) B, free: (\d{1,20}) B")
