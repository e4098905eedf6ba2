"""The context lines of a log as patterns: FACTS (device, allocator, phase, buffer sizes, launch flags: what `facts.py`
applies to a failure), in the order facts() reports them, and FACT_KEYS, the words that gate each. Moved from
lines.py (rows and order unchanged); fact_gate.py picks the facts a line can match."""
import re

from .comfy_launch import INSTALL_KEYS, INSTALL_RE
from .vllm_command import BATCHED_KEYS, BATCHED_RE
from .vllm_short_q import GATE as SHORT_Q_GATE, SHORT as SHORT_Q
from . import block_swap as BLOCK_SWAP
from . import vllm_dtype as VLLM_DTYPE
from . import vllm_own_flags as VLLM_OWN
from . import vllm_launch as VLLM_LAUNCH
from . import vllm_args_list as VLLM_ARGS
from .runtime_markers import NAMED_RUNTIMES, RUNTIME_MARKERS, RUNTIME_WORDS
from .runtime_around import FACT as AROUND_FACT, FACT_WORDS as AROUND_WORDS
from .tiny_shared import FACT as TINY_FACT, FACT_WORDS as TINY_WORDS
from .wrapper_runs import FACT as RUNS_FACT, FACT_WORDS as RUNS_WORDS
from . import extra_facts
from .bfc_backpedal import FACT as AFTER_FACT, FACT_WORDS as AFTER_WORDS, WENT_ON, WENT_ON_WORDS
from .comfy_devices import FACT as DEVICES_FACT, FACT_WORDS as DEVICES_WORDS
from .aimdo_abort import FACTS as AIMDO_FACTS

# Python prints `, line N`; pasted tracebacks (and rewrites of them) often drop it, the frame stays a frame
FRAME_RE = re.compile(r'File "([^"]+)"(?:, ?line ?\d+)?, in (\S+)')

# --- facts ---------------------------------------------------------------------------------------

_OLLAMA_SIZE = r"(\d{1,12}(?:\.\d{1,12})? [KMGT]iB)"
# one entry of Ollama's per-GPU list: HumanBytes2 prints "0 B" under 1 KiB (a GPU with nothing free)
OLLAMA_GPU_SIZE = r"(\d{1,12}(?:\.\d{1,12})? (?:[KMGT]iB|B))"
# Ollama's "offload to" line (llm/memory.go MemoryEstimate.LogValue): each GPU's free memory, the list slog prints
# ("[3.3 GiB]", "[3.3 GiB 3.3 GiB]" on two GPUs, "[3.3 GiB,3.3 GiB]" in older builds; up to 16 read, in the order of the
# runner's CUDA0, CUDA1, ...). Sizes are bounded (a 400-digit number would overflow the float) and read one field each
OLLAMA_AVAILABLE = re.compile(r'\bmemory\.available="\[' + OLLAMA_GPU_SIZE + r'(?:[ ,]{1,2}\d{1,12}(?:\.\d{1,12})? (?:[KMGT]iB|B)){0,15}[\],\s]')

# Sentences only Ollama's server writes, each naming the log Ollama's (facts "ollama_marker", its gate words and the scanner's
# anchors read this one table):
#  - server/routes.go, a runner that failed mid-request: "an error was encountered while running the model: <the runner's
#    error>", as its API's 500 and the CLI's "Error: 500 ..." print it (round 72);
#  - server/sched.go expireRunnersForRuntimeOOM, after a runner's out-of-memory error (llm.IsOutOfMemory): "runtime OOM
#    detected; expiring loaded models to clear memory before next request", a slog warning (2026-05 on, when its runners
#    became llama-server; round 79). It fires whenever any model is loaded, the failing one included: it names Ollama, it
#    does not say another model held the card
OLLAMA_SERVER_SAYS = ("an error was encountered while running the model",
                      "runtime OOM detected; expiring loaded models")
# (round 107) `ollama ps`'s PROCESSOR column when a model is split between CPU and GPU (cmd/cmd.go, "%d%%/%d%% CPU/GPU"):
# Ollama's own words for its own listing, the two shares and the pair named after them
OLLAMA_PS = re.compile(r"(?<![\d%/])\d{1,3}%/\d{1,3}% CPU/GPU\b")

# (tri67) group 1: --quantization X, the engine config's quantization=X, a Python call's quantization="X" (LLM(...),
# EngineArgs(...): the user's method, as the flag is); group "short": vLLM's -q X, whose value vllm_short_q reads (only
# after a vLLM entry point in its own command: pip's `install -q -U vllm` is quiet and upgrade)
VLLM_WEIGHT_FLAGS = re.compile(r"(?:--quantization[ =]|\bquantization=[\"']?)([\w-]{1,40})|"
                               r"(?:--cpu-offload-gb[ =]|\bcpu_offload_gb=)(\d{1,6}(?:\.\d{1,4})?)|"
                               r"(?:--data-parallel-size[ =]|\bdata_parallel_size=|\s-dp[ =])(\d{1,4})|"
                               r"(--enable-expert-parallel\b|\benable_expert_parallel=True)|" + SHORT_Q)
# (fixT) a VLLM_ROCM_* switch set on as a shell sets it (facts "vllm_rocm_on"): what may stand before it on its line
_SHELL_HEAD = (r"^[ \t]{0,8}(?:\([\w.-]{1,40}\)[ \t]{1,4})?(?:[^\s$#>%]{0,80}[$#>%][ \t]{0,4})?"
               r"(?:(?:export|env|ENV|set|sudo(?:[ \t]{1,4}-E)?)[ \t]{1,4})?(?:[A-Za-z_]\w{0,60}=\S{0,200}[ \t]{1,4}){0,16}")
VLLM_ROCM_ON = re.compile(r"(?:" + _SHELL_HEAD + r"|(?<!\S)(?:-e|--env)[ =])VLLM_ROCM_[A-Z][A-Z0-9_]{1,60}=([\"']?)(?:1|[Tt]rue|TRUE)\1"
                          r"(?=[ \t;&|\\]|$)")
FACTS = [
    # ComfyUI startup and execution (comfy/model_management.py, main.py, server.py, model_patcher.py)
    # ((round 100) not a program's own settings line, its fields split by bars: "Device: cuda | Batch Size: 64 | Epochs: 50")
    ("device", re.compile(r"Device: (cuda|xpu|mps|cpu|privateuseone)(?::\d+)?\s+(?![ \t]{0,8}\|)(.*?)(?: : (native|cudaMallocAsync))?\s*$")),
    ("total_vram", re.compile(r"Total VRAM (\d{1,20}) MB, total RAM (\d{1,20}) MB")),
    # ComfyUI-nunchaku's DiT loaders print the card they load onto, its total_memory in MiB (nodes/models/flux.py: "GPU 0 (NVIDIA
    # GeForce RTX 3060) Memory: 11906.8125 MiB"), before their CPU-offload line (round 59)
    ("nunchaku_gpu", re.compile(r"^GPU (\d{1,3}) \([^()\n]{1,80}\) Memory: (\d{1,9}(?:\.\d{1,9})?) MiB\s*$")),
    # mmgp (Wan2GP's offloader, src/mmgp/offload.py) pins models to page-locked RAM up to perc_reserved_mem_max of the RAM: "Switching to
    # partial pinning since full requirements for pinned models is X MB while estimated available reservable RAM is Y MB", and,
    # when pinning a block threw, "Unable to pin more tensors for this model as the maximum reservable memory has been reached
    # (Z)"; its MB is MiB (ONE_MB = 1048576) (round 61)
    ("mmgp_pin", re.compile(r"full requirements for pinned models is (\d{1,12}(?:\.\d{1,6})?) MB while estimated available "
                            r"reservable RAM is (-?\d{1,12}(?:\.\d{1,6})?) MB|Unable to pin more tensors for [^\n]{1,200}? as the "
                            r"maximum reservable memory has been reached \((\d{1,12}(?:\.\d{1,6})?)\)")),
    # ComfyUI's VRAM state (model_management.py: LOW_VRAM by --lowvram, and in older ComfyUI also by itself on a card of 4 GB or less; NO_VRAM by --novram)
    ("vram_state", re.compile(r"Set vram state to: (\w+)")),
    # ComfyUI's "pytorch version: 2.5.1+rocm6.2"; torch.utils.collect_env's "PyTorch version: 2.12.0+rocm7.0"
    ("torch_version", re.compile(r"(?:pytorch|PyTorch) version: (\d\S*)")),
    # ComfyUI's conv3d workaround for PyTorch 2.9 with cuDNN 9.10+ (comfy/ops.py, PR 10373)
    ("conv3d_workaround", re.compile(r"working around nvidia conv3d memory bug")),
    # a program that caught its GPU out-of-memory error and carries on with its arrays in system RAM: nnU-Net v2's predictor
    # (nnunetv2/inference/predict_from_raw_data.py) prints this before retrying on the CPU (round 64, MIC-DKFZ/nnUNet#2912)
    ("cpu_fallback", re.compile(r"Prediction on device was unsuccessful, probably due to a lack of memory\. Moving results arrays to CPU")),
    # (round 63) mlx_lm.server's prompt-cache statistics (server.py _log_cache_stats: "Prompt Cache: N sequences, X GB", bytes
    # / 1e9): the KV caches of earlier prompts it keeps in unified memory
    ("mlx_prompt_cache", re.compile(r"\bPrompt Cache: (\d{1,9}) sequences, (\d{1,9}(?:\.\d{1,4})?) GB\b")),
    # (round 63) YOLOX's training command with -o/--occupy (tools/train.py, yolox.tools.train): before the model is built it
    # allocates one block of 0.9 x the card's total minus nvidia-smi's used figure (yolox/utils/metric.py occupy_mem)
    ("yolox_occupy", re.compile(r"(?<![A-Za-z])[Yy][Oo][Ll][Oo][Xx](?![A-Za-z])[^\n]{0,400}?\s(?:-o|--occupy)(?=\s|$)"
                                          r"|\s(?:-o|--occupy)\s[^\n]{0,400}?(?<![A-Za-z])[Yy][Oo][Ll][Oo][Xx](?![A-Za-z])")),
    ("platform", re.compile(r"\*\* Platform: (\w+)")),
    # NVML could not start (nvidia-smi, or a library's NVML query): the process cannot reach the GPU's driver at all; the
    # reason follows ("Unknown Error": a container whose device access systemd reapplied without the GPU, NVIDIA/nvidia-docker#1730;
    # "Driver/library version mismatch": a driver updated without reloading its kernel module)
    ("nvml_init", re.compile(r"Failed to initialize NVML: ([A-Za-z][A-Za-z/ ]{0,60})")),
    # the GPU's own hardware fault, reported by CUDA (cudaErrorECCUncorrectable: "uncorrectable ECC error encountered") or
    # by the kernel driver ("GPU has fallen off the bus"; NVRM Xid events of NVIDIA's Xid catalogue that mean the card or its
    # memory failed: 48 double-bit ECC, 62 internal micro-controller halt, 64 ECC page retirement / row remapping failure,
    # 74 NVLink, 79 off the bus, 94/95 contained/uncontained ECC, 119/120 GSP, 154 recovery action: reset or reboot
    # required). Not 63 (a retirement or remapping recorded: an error already handled), 92 (a high rate of corrected
    # single-bit errors), 93 (an InfoROM wear warning), nor 13/31/43 (an application's exception or fault)
    # (aud67b #8) ComfyUI's figures: the error report's Devices section (bytes; not "Torch VRAM ..."), its pinned-RAM cap
    # (comfy/model_management.py:1125 of the host ComfyUI: MAX_PINNED_MEMORY in MiB); read by comfy_numbers.py
    ("comfy_report_vram", re.compile(r"^\s{0,8}- \*\*VRAM (Total|Free):\*\* (\d{1,16})\s*$")),
    ("comfy_pinned_max", re.compile(r"\bEnabled pinned memory (\d{1,12}(?:\.\d{1,4})?)\b")),
    # (aud67b #10; rev67d F4) ComfyUI's interrupt and its "got prompt": aimdo_abort.FACTS
    ("gpu_fault", re.compile(r"(uncorrectable ECC error|ECCUncorrectable|GPU has fallen off the bus|"
                             r"NVRM: Xid \([^)\n]{1,40}\): (?:48|6[24]|74|79|9[45]|119|120|154)\b)")),
    ("requested_load", re.compile(r"Requested to load (\w+)")),
    # TensorFlow 1.x's device creation (core/common_runtime/gpu/gpu_device.cc): the card's total and free memory on lines of
    # their own ("Total memory: 7.92GiB", "Free memory: 7.80GiB"); the stream executor sizes its region from them
    ("tf_device_mem", re.compile(r"^\s*(Total|Free) memory: (\d{1,12}(?:\.\d{1,12})?[KMGT]iB)\s*$")),
    # ...one block per card, each after "Found device N with properties:" (the stream executor's failure names no card)
    ("tf_found_device", re.compile(r"Found device (\d{1,3}) with properties")),
    # (round 111) the CUDA samples' deviceQuery, a card a block: "  Total amount of global memory:   2047 MBytes (2146762752 bytes)",
    # the card's total in bytes (group 1)
    # (tri78) and nvidia-smi's GPU table, a card a row: its Memory-Usage column "|   9MiB /  2048MiB |", used then the card's
    # total in MiB (group 2)
    ("cuda_query_total", re.compile(r"Total amount of global memory:\s{1,40}\d{1,9} MBytes \((\d{1,20}) bytes\)"
                                    r"|\|\s{0,12}\d{1,7}MiB\s{0,4}/\s{0,12}(\d{1,7})MiB\s{0,12}\|")),
    # (round 114) nvidia-smi's compute-apps query in CSV (--query-compute-apps=pid,process_name,used_memory --format=csv): its
    # header line "pid, process_name, used_gpu_memory [MiB]", then one line a process, "1909368, /path/to/server, 14786 MiB"
    # (a paste re-joined after a wrap may hold a row and the next line on one line: not anchored at the line's end)
    ("smi_apps", re.compile(r"(?P<head>\bpid, process_name, used_gpu_memory \[MiB\])|(?:^|\s)(?P<pid>\d{1,10}), (?P<name>[^,\n]{1,300}), (?P<mib>\d{1,9}) MiB(?:\s|$)")),
    # (tri79) nvidia-smi's default table of the processes on each card: its column header ("GPU  GI  CI  PID  Type  Process name
    # GPU Memory"); the rows under it are read from the header (smi_procs.read_table)
    ("smi_procs", re.compile(r"\bPID\s{1,16}Type\s{1,8}Process name\b")),
    # TensorFlow's BFC allocator dumps its stats after a failure (bfc_allocator.cc DumpMemoryLog, "Stats:"): the region's
    # limit and the bytes in use, on lines of their own ("Limit:        7593787392", "InUse:        7589175808")
    # (a pasted log re-joined after a wrap may hold "Stats: Limit: N" on one line)
    ("bfc_stats", re.compile(r"(?:^|\s)(Limit|InUse):\s{1,40}(\d{1,20})\s*$")),
    # ...each block after its own allocator's failure: the stats belong to the nearest failure before them
    ("bfc_fail", re.compile(r"[Rr]an out of memory trying to allocate")),
    ("dynamic_vram", re.compile(r"prepared for dynamic VRAM loading")),
    # the Comfy Compiler's summary after a run (comfy/model_prefetch.py; ", rogues" from ComfyUI 0.35)
    ("compiler_stats", re.compile(r"Comfy model compiler graph breaks: (\d{1,20})(?:, rogues: (\d{1,20}))?")),
    ("prompt_done", re.compile(r"Prompt executed in")),
    ("exception_block", re.compile(r"!!! Exception during processing !!!")),
    ("comfy_report", re.compile(r"ComfyUI Error Report|Node Type:\*\*|\*\*ComfyUI Version:\*\*")),
    ("node_type", re.compile(r"Error occurred when executing (\w+)|Node Type:\**\s*(\w+)|Exception in node (\w+)|"
                             r"^\s*([A-Z]\w*(?:Loader|Encode|Decode|Sampler|Upscale)\w*)(?:\s+Allocation on device)?\s*$"
                             # (round 95) ComfyUI's execution_error message (execution.py: node_id, node_type, executed,
                             # exception_message, exception_type), its fields printed as JSON or as 'node_type: "KSampler"'
                             r"|\bnode_type\"?\s{0,2}:\s{0,2}\"(\w+)\"")),
    ("args", re.compile(r"(--disable-cuda-malloc|--cuda-malloc|--lowvram|--novram|--highvram|--gpu-only|--reserve-vram[ =][\d.]+|"
                        r"--disable-smart-memory|--cache-none|--disable-dynamic-vram|--disable-comfy-compiler|--disable-cuda-graphs|expandable_segments:True|backend:cudaMallocAsync)")),
    ("frame", FRAME_RE),
    # the same frame as IPython/Jupyter (8: "File /p/x.py:968, in Cls.func(...)"; 7: "/p/x.py in func(...)") and rich
    # (A1111, SD.Next: "│ /p/x.py:130 in main │") print it; group 1 the path, group 2 the function
    ("frame_ipy", re.compile(r"^\s*File ([/~][^\n\"]{0,300}?\.py):\d+, in (?:\w+\.)*([\w<>]+)\(")),
    ("frame_ipy7", re.compile(r"^\s*(\S{1,300}?\.py|<ipython-input-[\w-]+>) in ([\w<>]+)\(")),
    # (a wrapper that relays a child process's output may prefix each line: "SUBPROCESS: │ /p/x.py:105 in f │")
    ("frame_rich", re.compile(r"^(?:[\w.\[\]-]{1,40}:\s+)?\s*[│¦] (\S{1,300}?\.py):\d+ in ([\w<>]+)(?:\s|$)")),
    # the line a notebook or rich traceback marks as the one running ("--> 968 return ...", "❱ 130 │   main()")
    # (rich without Unicode arrows marks it "│ > 105 │ ...")
    ("source_arrow", re.compile(r"^(?:[\w.\[\]-]{1,40}:\s+)?\s*(?:(?:[│¦|]\s*)?(?:-+>|❱)|[│¦]\s*>)\s*\d+\s*(?:[│¦|]\s*)*(\S.{0,240})")),
    ("progress_done", re.compile(r"100%\|[^|]*\|\s*(\d{1,20})/\1 ")),
    ("progress", re.compile(r"\b\d{1,3}%\|")),
    ("decode_phase", re.compile(r"(?i)\b(?:tiled )?vae\b[^\n]{0,40}\bdecod|decoding \d+ latents?|decode_first_stage")),
    # vLLM (vllm/v1/worker/gpu_worker.py, kv_cache_utils.py)
    ("vllm_kv_mem", re.compile(r"Available KV cache memory: (-?[\d.]+) GiB")),
    ("vllm_kv_tokens", re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
    ("vllm_model_mem", re.compile(r"(?:Model loading took|Loading model weights took|model weights take) ([\d.]+) ?Gi?B")),
    ("vllm_kv_mem_v0", re.compile(r"the rest of the memory reserved for KV Cache is (-?[\d.]+) ?GiB")),
    # a training run: its progress lines, its loss, or the training script it launched (train.py, finetune_lora.py, train_network.py)
    # (ultralytics: its CLI's train mode, "yolo [task] train ...", and AutoBatch, which only its trainer runs: utils/autobatch.py;
    # dlib's dnn_trainer: "step#: 0     learning rate: 0.1", davisking/dlib#252 and #391)
    ("training_log", re.compile(r"\bEpoch \d+\b|\bepoch \d+\b|\btrain(?:ing)?_loss\b|loss\.backward\(|(?:train|finetune|fine_tune)\w{0,40}\.py\b|"
                                r"\byolo (?:(?:detect|segment|classify|pose|obb) )?train\b|AutoBatch: |\bstep#: *\d+ +learning rate: |"
                                # HF Trainer's own log dict ({'loss': 1.23, 'grad_norm': ..., 'learning_rate': ..., 'epoch': 0.03})
                                r"\{'loss': [\d.]")),
    # (fix67g, rev67b F2) or LLM.generate's progress bar ("Processed prompts: 3%|..."): offline generation, past the capture
    ("vllm_serving", re.compile(r"Added request|Received request|POST /v1/|Avg prompt throughput|Processed prompts")),
    # (tri72) vLLM V1's multiprocess executor: a worker's failure sent back over its RPC queue (collective_rpc's "Worker failed
    # with error '...'", the worker's own "WorkerProc hit an exception."); a worker serves that queue only after its __init__ loaded the weights
    ("vllm_worker_rpc", re.compile(r"Worker failed with error '|WorkerProc hit an exception")),
    # the engine's config line and LLM(gpu_memory_utilization=0.4), or the flag as vLLM's argparse takes it
    # ("--gpu-memory-utilization 0.4", "=0.4"; FlexibleArgumentParser also reads "--gpu_memory_utilization")
    # (round 117) or vLLM's "non-default args: {..., 'gpu_memory_utilization': 0.95, ...}" (the key quoted in the dict's repr)
    # (rev8 D4) the key quoted by Python's repr or by JSON ('gpu_memory_utilization': / "gpu_memory_utilization":)
    # (fixB B1) or vLLM 0.6.5-0.7's profiling line (worker.py determine_num_available_blocks): "the current vLLM instance can use
    # total_gpu_memory (8.00GiB) x gpu_memory_utilization (0.70) = 5.60GiB", the share in brackets (group 2; bounded and
    # unambiguous, since the closing bracket after it would make "\d*\.?\d+" backtrack quadratically on a run of digits)
    ("vllm_util", re.compile(r"gpu_memory_utilization(?:['\x22]?[=:]\s*(\d*\.?\d+)| \((\d{1,3}(?:\.\d{1,6})?)\))"
                             r"|--gpu[-_]memory[-_]utilization(?:=|\s+)(\d*\.?\d+)")),
    # (fixB B1) the card's total as vLLM measured it before sizing its share: 0.6.5-0.7's "can use total_gpu_memory (8.00GiB) x
    # ..." and 0.6.4's "Memory profiling results: total_gpu_memory=8.00GiB initial_memory_usage=..." (worker.py)
    ("vllm_total", re.compile(r"\btotal_gpu_memory(?: \(|=)(\d{1,9}(?:\.\d{1,6})?) ?GiB\b")),
    # the KV cache's dtype: vLLM's engine config line ("kv_cache_dtype=fp8, ", config/vllm.py __str__) or its flag
    ("vllm_kv_dtype", re.compile(r"\bkv_cache_dtype=(\w+)|--kv-cache-dtype[ =](\w+)")),
    # the weights' dtype: the engine config's "dtype=torch.float32, ", an LLM(...) call's dtype= or the --dtype flag
    # (vllm_dtype.py: linear in the line)
    ("vllm_dtype", VLLM_DTYPE.FACT),
    # ((round 97) or the flag as vLLM's argparse takes it: "--max-model-len 16384", "=16384")
    # (round 117) or the non-default args dict's "'max_model_len': 8192"
    ("vllm_maxlen", re.compile(r"max_model_len['\x22]?[=:]\s*(\d{1,20})|max_seq_len=(\d{1,20})|--max[-_]model[-_]len(?:=|\s+)(\d{1,20})\b")),
    ("graph_capture", re.compile(r"Capturing (?:cudagraphs|CUDA graphs?|the model for CUDA graphs|CUDA graph shapes)|"
                                 r"cudagraph capture|CUDA graph capture|torch\.cuda\.graph|capture_end\(|capture_model\(|Graph capturing finished|"
                                 r"try setting VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS|"
                                 # SGLang (model_runner.py, eagle_worker.py): "Capture cuda graph begin", "Capture draft cuda graph
                                 # begin", "Capture target prefill CUDA graph begin"), and its capture's failure ("Capture cuda graph
                                 # failed: CUDA out of memory."): the error the capture raised
                                 r"\bCapture (?:\w{1,20} ){0,3}(?:cuda|CUDA) graph (?:begin|failed)")),
    # a memory pool of a program's own allocator behind PyTorch's private pools (not a CUDA graph's): a pluggable allocator
    # (torch.cuda.memory.CUDAPluggableAllocator), a torch.cuda.MemPool, comfy-aimdo (ComfyUI's Dynamic VRAM; 0.1 hooked PyTorch
    # through MemPool + pluggable allocator), vLLM's sleep-mode cumem allocator
    ("own_pool", re.compile(r"PluggableAllocator|\bMemPool\b|\bcomfy[-_]aimdo\b|\baimdo\b|\bcumem[ _]allocator\b|CuMemAllocator")),
    # (round 111) comfy-aimdo's own C logger ("aimdo: control.c:276:INFO:comfy-aimdo inited for GPU: ...", "aimdo:
    # src/model-vbar.c:N:ERROR:..."): the file and line, then the level. Only ComfyUI loads comfy-aimdo (its Dynamic VRAM), so
    # the line names ComfyUI as the runtime, as its frames do
    ("aimdo_log", re.compile(r"\baimdo: [\w./\\:-]{0,120}?\.[ch]:\d{1,6}:(?:DEBUG|INFO|WARN(?:ING)?|ERROR):")),
    ("block_swap", BLOCK_SWAP.FACT),      # (fix66d) a wrapper's block swap and its non-blocking transfers (block_swap.py)
    ("pinned_host", re.compile(r"Non-blocking memory transfer: True|Attempting to release mmap|pin_memory\(|c10::AcceleratorError"
                                r"|could not page-lock|PAGEABLE|non_blocking=True|cudaHostRegister")),
    # (and vLLM's offline API, "LLM(model=...)", and its worker processes' names, "VLLM::Worker_TP", in the kernel's lines)
    ("vllm_marker", re.compile(r"\bvllm\b|\bLLM\(model=|\bVLLM::|\bvllm_omni\b|Initializing an LLM engine \(v|VllmWorker|RayWorkerVllm|EngineCore|vLLM|^(?:\(\w+ pid=\d+\) )?INFO \d\d-\d\d \d\d:\d\d:\d\d \w+\.py:\d+\]|^(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[\w./]+\.py:\d+\]"
                                 # (round 100) vLLM's model runner's own refusal (vllm/v1/worker/gpu_model_runner.py, load_model)
                                 r"|\bFailed to load model - not enough GPU memory\b"
                                 # (round 102) and two more of its own raises: the V1 front end's when its engine-core process
                                 # dies in start-up (vllm/v1/engine/core_client.py: "Engine core initialization failed. See root
                                 # cause above."), the V0 model runner's wrapper of a failed step (vllm/worker/model_runner_base.py:
                                 # "Error in model execution (input dumped to /tmp/err_execute_model_input_<time>.pkl): <err>")
                                 r"|\bEngine core initialization failed\b|\bError in model execution \(input dumped to\b")),
    # a program saying its load failed ("Error while loading customized transformer, falling back", "Failed to load model")
    ("load_failed", re.compile(r"(?i)\berror (?:while |when )?loading (?:the )?(?:customi[sz]ed |quanti[sz]ed )?(?:model|transformer|unet|dit|weights|checkpoint)\b|"
                               r"\bfailed to load (?:the )?(?:model|transformer|unet|dit|weights|checkpoint)\b")),
    # runtimes with no message of their own that triage reads apart (RUNTIME_MARKERS): named so the guide and report say which
    ("runtime_marker", re.compile("|".join(f"({rx})" for _, _, rx in RUNTIME_MARKERS))),
    # llama.cpp load order: model buffers, then KV buffers, then compute buffers
    ("ggml_model_buf", re.compile(r"(?<!\S)(\S+) (?:model )?buffer size\s*=\s*([\d.]+) MiB")),
    ("ggml_kv_buf", re.compile(r"(?<!\S)(\S+) KV buffer size\s*=\s*([\d.]+) MiB")),
    ("ggml_compute_buf", re.compile(r"(?<!\S)(\S+) compute buffer size\s*=\s*([\d.]+) MiB")),
    # stable-diffusion.cpp's GGMLRunner names the model part whose graph it sizes (get_desc(): "vae", "clip", "t5", "unet",
    # "flux", "wan", ...): "vae compute buffer size: 14978.25 MB(VRAM)" (ggml_extend.hpp, core/ggml_runner.cpp)
    # and the part whose buffer it could not allocate: "vae: failed to allocate the compute buffer" (a later line wins)
    ("sdcpp_compute", re.compile(r"(?<![\w.-])([\w.-]{1,40})(?: compute buffer size: (\d[\d.]{0,20}) MB\((?:VRAM|RAM)\)"
                                 r"|: failed to allocate the compute buffer)")),
    # ggml's CUDA/HIP pool before its out-of-memory check (ggml-cuda.cu, GGML_CUDA_NAME " pool[%d]: alloc of %.2f MiB failed")
    ("ggml_pool_fail", re.compile(r"(?:CUDA|ROCm|MUSA) pool\[\d+\]: alloc of ([\d.]+) MiB failed")),
    ("ggml_n_ctx", re.compile(r"\b(?:n_ctx|kv_size)\s*=\s*(\d{1,20})")),     # kv_size: the unified cache's cells (context x slots)
    ("ggml_args", re.compile(r"(?:^|\s)(-ub|--ubatch-size|-c|--ctx-size|-b|--batch-size|-ngl|--n-gpu-layers|-np|--parallel)[ =](\d{1,20})")),
    # speculative decoding with the model's MTP head (common/arg.cpp --spec-type, a comma-separated list), and the flag that
    # keeps its draft sampling off the GPU (llama.cpp PR #23287 turned it on by default: a compute buffer per sequence)
    ("ggml_spec_mtp", re.compile(r"--spec-type[ =](?:[\w-]{1,40},){0,8}draft-mtp\b")),
    ("ggml_spec_cpu_sampling", re.compile(r"--no-spec-draft-backend-sampling\b")),
    # flash attention: the command line's -fa / --flash-attn [on|off|auto] (a bare flag: on, as builds before b6200 read
    # it) or llama_context's "flash_attn = 1" / "= auto"
    ("ggml_fa", re.compile(r"(?:^|\s)(?:-fa|--flash-attn)(?:[ =](on|off|auto)\b|(?=\s|$))|\bflash_attn\s+=\s+(\w+)")),
    # the cache's sequences (slots): llama_context prints "n_seq_max     = 20" and "n_ctx_per_seq = 32768", or warns
    # "n_ctx_per_seq (32768) < n_ctx_train (131072)" (src/llama-context.cpp)
    ("ggml_slots", re.compile(r"\bn_seq_max\s*=\s*(\d{1,20})|\bn_ctx_per_seq\s*(?:=\s*|\()(\d{1,20})")),
    ("ggml_offloaded", re.compile(r"offloaded (\d{1,20})/(\d{1,20}) layers to GPU")),
    # the loader's device line (llama_model_load_from_file_impl / llama_prepare_model_devices): "using device ROCm0 (AMD Radeon
    # (TM) Pro VII) (0000:03:00.0) - 10874 MiB free"; (round 109) the name may hold its own parentheses, "(TM)", "Intel(R)
    # Arc(TM)", one level deep; at most 200 parts (a character, or one parenthesised group), which keeps a 1 MB line at a
    # millisecond (unbounded, its backtracking stack took 0.26 s here and 1.1 s on CI); an empty name "()" still reads
    ("ggml_device_free", re.compile(r"using device (\S+) \(((?:[^()]|\([^()]*\)){0,200})\) (?:\([^)]*\) )?- (\d{1,20}) MiB free")),
    ("ggml_list_free", re.compile(r"^\s*([A-Za-z]+\d+): (?:.*\((\d{1,20}) MiB, |using device \S+ - ()?)(\d{1,20}) MiB free\)?\s*$")),
    # Ollama's "offload to" line: what the model needs in all, and on the same line each GPU's free memory (OLLAMA_AVAILABLE)
    ("ollama_full", re.compile(r'\bmemory\.required\.full="' + _OLLAMA_SIZE + '"')),
    # the same "offload to" line (llm/memory.go MemoryEstimate.log): layers placed on the GPU of the model's, and the KV
    # cache of the whole context (2 x NumCtx x layers x (head_k + head_v) x heads_kv at 16 bits; NumCtx is num_ctx x
    # OLLAMA_NUM_PARALLEL)
    ("ollama_layers", re.compile(r"\blayers\.model=(\d{1,5}) layers\.offload=(\d{1,5})\b")),
    # the layer count asked for (num_gpu, the runner's --n-gpu-layers): -1 lets the estimate choose, any other is the user's
    ("ollama_requested", re.compile(r"\blayers\.requested=(-?\d{1,5})\b")),
    ("ollama_kv", re.compile(r'\bmemory\.required\.kv="' + _OLLAMA_SIZE + '"')),
    # (round 106) a frame of vLLM's model layers quoted relative to its package ("at model_executor/layers/utils.py:98
    # default_unquantized_gemm"; a Python frame's 'File ".../model_executor/layers/linear.py", line 9, in forward' is read
    # as a frame): the layer's function, group 1
    ("vllm_layer_at", re.compile(r"(?:^|[\s\"'(])model_executor/layers/[\w/]{1,120}\.py(?::\d{1,6})?[\s,]{1,4}(?:in\s{1,4})?(\w{1,80})")),
    # what should_fit.py asks the LLM calculator about: the runtime's version (vLLM's server and engine lines, Ollama's
    # "Listening on ... (version X)" and "ollama version is X", llama.cpp's "build: N (hash)", ComfyUI's start-up line and
    # error report), the model it loads (vLLM's engine config, "Starting to load model X...", LLM(model=...), `vllm serve X`,
    # `ollama run X`, the GGUF's general.name) and the GGUF's file type, parameters and size as llama.cpp prints them
    ("runtime_version", re.compile(r"vLLM API server version v?(\d[\w.+-]{0,40})|LLM engine \(v(\d[\w.+-]{0,40})\)|"
                                   r"Listening on .{0,80}\(version (\d[\w.+-]{0,40})\)|ollama version is (\d[\w.+-]{0,40})|"
                                   r"\bbuild(?:: | = )(\d{1,6}) \(|ComfyUI [Vv]ersion:\**\s*v?(\d[\w.+-]{0,40})")),
    ("llm_model", re.compile(r"\bmodel='([^'\s]{1,200})'|Starting to load model (\S{1,200}?)\.\.\.|\bLLM\(model=[\"']([^\"'\s]{1,200})[\"']|"
                             r"\bvllm serve ([^\s-]\S{0,199})|\bollama (?:run|pull) ([^\s-]\S{0,199})|"
                             r"\bgeneral\.name\s+(?:str\s+)?=\s+(\S.{0,119})|"
                             # vLLM's --model flag naming a Hugging Face repo id, owner/name (the OpenAI server image's command
                             # line; should_fit reads it for vLLM only): not a path (a runner's --model /path/blob)
                             r"--model[= ](\w[\w.-]{0,99}/[\w.-]{1,100})(?![\w./-])")),
    # vLLM's tensor (or pipeline) parallelism: the weights split over that many cards
    ("vllm_tp", re.compile(r"(?:tensor|pipeline)[-_]parallel[-_]size[=:]?\s{0,4}(\d{1,4})|\s-[tp]p[ =](\d{1,4})")),
    # what else changes the weights one card holds: the quantization method (the command's --quantization / -q, the
    # engine config's quantization=), weights offloaded to the CPU, data parallelism with expert parallelism (the experts
    # split over the ranks). Several on one line: facts.py reads every match (VLLM_WEIGHT_FLAGS)
    ("vllm_wflags", VLLM_WEIGHT_FLAGS),
    ("gguf_meta", re.compile(r"\b(?:file type|model ftype)\s+=\s+(\S.{0,39})|\bmodel params\s+=\s+(\d{1,12}(?:\.\d{1,12})?) ([KMBT])\b|"
                             r"\bmodel size\s+=\s+(\d{1,12}(?:\.\d{1,12})? [KMGT]i?B)")),
    # vLLM running a model through the Transformers backend: not vLLM's own implementation, which the calculator describes
    ("vllm_transformers", re.compile(r"falling back to Transformers implementation")),
    # Ollama's "inference compute" line: the card's total as Ollama saw it
    ("ollama_total", re.compile(r'inference compute.*?\btotal="(\d{1,12}(?:\.\d{1,12})? [KMGT]iB)"')),
    # (round 121) Ollama's GPU discovery record of each compute device it will use (discover/types.go: slog "inference compute"
    # with id= then library=; "id=cpu library=cpu" in builds since 0.12, "id=0 library=cpu" before): the device's id and library,
    # quoted or cut to its id as a guide quotes it ("inference compute id=cpu"); the line is Ollama's own
    ("ollama_compute", re.compile(r'\binference compute"? id=(\S{1,80}?)(?=\s|$)(?: library=(\w{1,20}))?')),     # (rev14 D4) \s: a \r kept
    ("ggml_marker", re.compile(r"\bggml_|ggml-cuda\.cu:|\bllama_|\bllm_load|llama-server|load_tensors:|GGML_ASSERT|"
                                # llama.cpp's command line ("./main -m model.gguf" before b3000 renamed it llama-cli)
                                r"(?<![\w.-])(?:main|llama-cli)(?:\.exe)? -m \S{1,300}?\.gguf\b")),
    # (the location after the function is cut in some quotes: "current device: 0, in function X" ends the line)
    ("ggml_cuda_fn", re.compile(r"current device: \d+, in function (\w+)(?: at \S*ggml-cuda|\s*$)")),
    # (round 114) ggml-cuda's flash-attention kernel launch in a backtrace after a CUDA error: its template frame as printed
    # ("launch_fattn<256,4,8>", "ggml_cuda_flash_attn_ext_tile_case<256,256>") or mangled in a glibc backtrace ("_Z12launch_fattn...")
    ("ggml_fattn", re.compile(r"launch_fattn|ggml_cuda_flash_attn_ext")),
    # ggml's SYCL check names the function whose SYCL call threw (ggml-sycl.cpp, common.hpp: "in function
    # ggml_backend_sycl_buffer_set_tensor at .../ggml-sycl.cpp:432", then "SYCL error"): the SYCL backend, an Intel GPU
    # a runtime whose marker needs its own lines only named (a pin "lmdeploy==0.2.0" in an environment line, a pip list,
    # "mlx-community/..." as a model's repo): env.guess_runtime's last resort (NAMED_RUNTIMES, one group a row)
    ("runtime_named", re.compile("|".join(f"({rx})" for _, rx in NAMED_RUNTIMES))),
    # (round 110) newer builds name the function without ggml's prefix ("in function alloc at .../ggml-sycl/ggml-sycl.cpp:1861",
    # a pool's method; a C++ qualified name too): the file is what says SYCL
    ("ggml_sycl_fn", re.compile(r"^\s*in function ((?:\w{1,80}::){0,4}\w{1,80}) at \S{0,300}ggml-sycl")),
    # a CUDA memory query that failed for lack of memory (Warp names the function it was in): a query allocates nothing, it
    # fails so only when this process's context could not be created on a card that is already full
    ("mem_query_oom", re.compile(r"out of memory.{0,40}\bin function (wp_cuda_device_get_memory_info)\b|"
                                 r"\b(cu(?:da)?MemGetInfo)\b.{0,80}out of memory")),
    # (round 72) cudarc's DriverError in its Debug form ("DriverError(CUDA_ERROR_UNKNOWN, \"...\")"): a Rust program on cudarc
    # (Candle, text-embeddings-inference; mistral.rs and vLLM.rs have markers of their own) printed it
    ("cudarc", re.compile(r"\bDriverError\(CUDA_ERROR_[A-Z_]{1,40}\b")),
    # the stage a runtime's own error context names around a bare driver error (Rust programs on cudarc wrap DriverError in
    # anyhow/thiserror contexts: "cache alloc failed: DriverError(...)", "Caused by: 0: paged prefill forward pass failed");
    # text-embeddings-inference's backends/src/lib.rs maps a failed CandleBackend::new (which loads the weights onto the
    # device; its warm-up comes later, "Backend warmup failed") to "Could not start Candle backend: {err}"
    # (round 114: a session's allocation, "spec session alloc failed (DriverError(...))", is its KV/state cache's; uploading the
    # token-embedding table, "embed table upload: DriverError(...)", places weights)
    ("stage_said", re.compile(r"\b(?:kv[ _-]?)?(?P<kv>cache alloc(?:ation)? failed|session alloc(?:ation)? failed)"
                              r"|\b(?P<act>(?:prefill|forward)(?: forward)?(?: pass)? failed)"
                              r"|\b(?P<load>[Cc]ould not (?:start|create) (?:the )?(?:\w{1,40} )?backend|embed(?:ding)? table upload:)")),
    # TensorRT-LLM's KV-cache sizing (cpp/tensorrt_llm/batch_manager: the device's total and the free memory cudaMemGetInfo
    # reports once the engine and its runtime buffers are resident, before any KV block): what the engine left the cache
    ("trt_kv_sizing", re.compile(r"Memory usage when calculating max tokens in paged kv cache: total: (\d{1,5}(?:\.\d{1,4})?) GiB, "
                                 r"available: (-?\d{1,5}(?:\.\d{1,4})?) GiB")),
    # ggml-vulkan's pinned (host-visible) buffer refused as out of DEVICE memory: a host allocation the driver should not count
    # against the card (ggml goes on with pageable memory; the warning alone is no failure, parse.GGML_PINNED_WARN)
    ("vk_pinned_device", re.compile(r"ggml_vulkan: [Ff]ailed to allocate pinned memory.{0,80}?ErrorOutOfDeviceMemory")),
    # (fixV) ggml's names for its Vulkan devices and their host buffers ("Vulkan0 model buffer size", "on Vulkan_Host", "to
    # Vulkan1"): a ggml program (llama.cpp, stable-diffusion.cpp) whatever its other lines say; env.guess_runtime weighs it
    ("ggml_vk_names", re.compile(r"\bVulkan(?:\d{1,2}|_Host)\b")),
    # (round 74) the RKNPU kernel driver's boot line when the board's firmware runs the NPU without its IOMMU
    # ("RKNPU fde40000.npu: RKNPU: rknpu iommu is disabled, using non-iommu mode"): the NPU then gets only memory reserved
    # for it (CMA or a reserved region), not system RAM (rockchip-linux/rknn-toolkit2#44)
    ("rknpu_no_iommu", re.compile(r"\brknpu iommu is disabled\b")),
    # (tri76) batchgenerators' worker printing its own Python exception before the parent finds it dead (host_readers.WORKERS_DEAD)
    ("bg_worker_exception", re.compile(r"\bException in (?:background )?worker \d{1,4}\b")),
    # (tri82) ComfyUI's model management logging (comfy/model_patcher.py:794 "loaded partially; N MB usable, ...",
    # comfy/model_management.py:681 "N models unloaded."): a ComfyUI process, read only by native_abort.comfy_log
    ("comfy_mm", re.compile(r"\bloaded partially; \d[\d.]* MB usable\b|^\s*\d{1,4} models unloaded\.\s*$")),
    # (round 74) a traceback's source line that asks PyTorch for page-locked host memory itself (torch.empty(...,
    # pin_memory=True), tensor.pin_memory()): the failing call of a CUDA error raised under it
    ("pinned_src", re.compile(r"\bpin_memory=True\)|\.pin_memory\(\)")),
    # (tri66) comfy-aimdo's reader naming its file read as what failed (src/hostbuf.c hostbuf_read_file_slice: "file read failed",
    # after xfer_file_read returned false; the Windows reader's "xfer_file_read_at: GetOverlappedResult failed error=N"): the
    # host buffer was already allocated (hostbuf_extend) and the read into it failed, an I/O call, not an allocation
    ("aimdo_file_read", re.compile(r"\bhostbuf_read_file_slice: file read failed\b|\bxfer_file_read\w{0,20}: \w{1,40} failed error=\d{1,10}")),
    # Ollama: its name, its settings, its log format, its model store (blobs/sha256-...), and its server relaying the runner's end.
    # Its source tree (llama.cpp vendored under ollama/llm/llama.cpp/ until 2024, in ggml's CUDA error locations) names it by
    # \bollama\b; a bare llm/llama.cpp/ is any clone of llama.cpp into a folder llm/, and Go's "signal arrived during cgo
    # execution" any Go program embedding ggml: neither names Ollama alone
    # (and its server's own sentences, OLLAMA_SERVER_SAYS)
    # (round 107) and `ollama ps`'s PROCESSOR column for a model split between the two (cmd/cmd.go: "%d%%/%d%% CPU/GPU",
    # "59%/41% CPU/GPU"): OLLAMA_PS
    ("ollama_marker", re.compile(r"\bollama\b|OLLAMA_|msg=\"|\bblobs[\\/]sha256-|\bllama runner process\b|" + OLLAMA_PS.pattern + "|"
                                 + "|".join(re.escape(w) for w in OLLAMA_SERVER_SAYS))),
    # Ollama's scheduler (server.go) after a load its runner could not place: "model requires more gpu memory than is
    # currently available, evicting a model to make space": another loaded model holds the memory it needs
    ("ollama_evict", re.compile(r"evicting a model to make space")),
    # a load attempt starting (Ollama's server starting a runner or sending it a load request; llama.cpp's loader reading a
    # model's metadata or tensors): an eviction after one of these answers that load, not a failure before it
    ("ggml_load_start", re.compile(r'msg="?starting (?:runner|llama server)|msg="?load request|llama_model_loader: loaded meta data|'
                                   r"load_tensors: loading model tensors")),
    # (round 70) llama.cpp's loader before GGUF: "llama.cpp: loading model from <path>" as it opens the file (group 1), then
    # what it read from the file's header ("llama_model_load_internal: format = ggjt v2", n_vocab, ...; group 2). A failure
    # after the first and before any of the second came while the header was being read (facts "ggml_header")
    ("ggml_header", re.compile(r"^\s{0,8}(llama\.cpp: loading model from) \S|(\bllama_model_load_internal: )")),
    ("ollama_env", re.compile(r"OLLAMA_(NUM_PARALLEL|MAX_LOADED_MODELS|KV_CACHE_TYPE|FLASH_ATTENTION|CONTEXT_LENGTH):(\S*)")),
    # ((round 102) and PyTorch's ROCm build's own allocator source in its warnings, the hipified c10/hip/HIPCachingAllocator.cpp:
    # "[W727 06:25:44.59 HIPCachingAllocator.cpp:3934] memory allocation failed with OOM on device 0 while trying to allocate N
    # bytes": a ROCm card, though the error that follows keeps CUDA's words)
    ("rocm", re.compile(r"\+rocm|ROCm|\bHIP\b|hipMalloc|gfx\d{3,4}|\bHIPCachingAllocator\.cpp\b")),
    # ((none51, fixT) vLLM's ROCm-only switches, vllm/envs.py VLLM_ROCM_USE_AITER and the VLLM_ROCM_* around it, set on
    # (1/true) on a command line or an env line: a shell prompt, export/env/ENV/set/sudo, other NAME=VALUE settings or
    # docker's -e/--env before it. Not "=0"/"False", not a logged dump of envs.py's defaults (some of which are True), and
    # env.infer reads it only where no CUDA device line below says the card is NVIDIA's
    ("vllm_rocm_on", VLLM_ROCM_ON),
    # (fixT) a line naming an NVIDIA card: ComfyUI's "Device: cuda:0 NVIDIA ...", vLLM's "Automatically detected platform
    # cuda.", nvidia-smi -L's and collect_env's "GPU 0: NVIDIA ..."; ROCm's PyTorch names its card cuda:0 too, but AMD's
    # (fixV) and nvidia-smi's table pasted: its header ("| NVIDIA-SMI 550.54.15   Driver Version: ...") and a GPU row ("|   0
    # NVIDIA GeForce RTX 4090   On  | ...", before 2021 "|   0  GeForce GTX 1080    Off  |"); rocm-smi's own tables name neither
    ("cuda_device", re.compile(r"\bDevice: cuda:\d{1,3} (?:NVIDIA|GeForce|Tesla|Quadro|TITAN)\b|\bdetected platform cuda\b|"
                               r"\bGPU \d{1,3}: NVIDIA\b|\bNVIDIA-SMI \d{1,4}\.\d|"
                               r"(?<![^\s|])\|[ \t]{1,8}\d{1,2}[ \t]{1,8}(?:NVIDIA|GeForce|Tesla|Quadro|TITAN)[ \t]")),
    # the OS a log shows: a drive-letter path (C:\..., also as a repr's C:\\...), the portable ComfyUI, an .exe, Python's
    # WinError; Linux's paths (Debian/Ubuntu's dist-packages, the CUDA toolkit's /usr/local/cuda, a home or root directory, a
    # container's /workspace; not /opt or /usr/local alone, where macOS keeps Homebrew and conda too)
    ("windows", re.compile(r"\b[A-Za-z]:\\\\?[\w.$~-]|ComfyUI_windows_portable|\bWindows\b|\.exe\b|WDDM|\bWinError\b")),
    # (fix68a, rev67g) /Users/ only at a path's start: WSL's /mnt/c/Users/... (a Windows drive mounted) and C:/Users/ are
    # no Mac; /mnt/<drive>/ is WSL's mount of a Windows drive: Linux
    ("darwin", re.compile(r"(?<![\w.:/~-])/Users/\w|macOS|Darwin|\bMPS\b|Apple M\d")),
    ("linux", re.compile(r"/home/\w|/usr/lib|/opt/conda|/workspace/|\bLinux\b|/root/|/dist-packages/|/usr/local/cuda|(?<![\w.~-])/mnt/[a-z]/")),
    ("wsl", re.compile(r"\bWSL\b|microsoft-standard|\bdxgkio_\w|\bmisc dxg: dxgk\b|(?<![\w.~-])/mnt/[a-z]/")),     # (round 72: WSL's dxgkrnl)
    # (round 67) TensorRT's builder skipping a tactic whose workspace it could not allocate ("Skipping tactic 3 due to insufficient
    # memory on requested size of 4294967296 detected for tactic 0x...", then "Try decreasing the workspace size with
    # IBuilderConfig::setMemoryPoolLimit()."; TensorRT 7-8.3 said setMaxWorkspaceSize()): the request is the configured workspace
    # pool, not the engine (marcoslucianops/DeepStream-Yolo#366)
    ("trt_tactic_skip", re.compile(r"Skipping tactic \S{1,40} due to insufficient memory|Try decreasing the workspace size with "
                                   r"IBuilderConfig::set(?:MemoryPoolLimit|MaxWorkspaceSize)\(\)")),
    # (round 105) FSDP's full state_dict hook warns when it cannot clone a gathered parameter ("Failed to clone() tensor with
    # name <fqn>. This may mean that this state_dict entry could point to invalid memory regions ... Error: <the exception>"):
    # a full state_dict taken on the GPU gathers every unsharded parameter there (torch/distributed/fsdp)
    ("fsdp_clone", re.compile(r"Failed to clone\(\) tensor with name ")),
    # (round 112) Linux's /proc/<pid>/limits row for RLIMIT_AS ("Max address space  8192000000  8192000000  bytes": soft, hard,
    # unit), a finite cap that ulimit -v (KiB) or setrlimit set: every mapping of the process counts against it (CUDA's unified
    # addressing maps the card's memory too), so an allocation fails with RAM and VRAM free ("unlimited" is no cap)
    # (rev8 S2) an integrated GPU or unified memory named: llama.cpp's Vulkan device line ("| uma: 1 |"), the words, or an AMD
    # APU's Radeon NNNM (Studio's own APU message says "unified-memory APU", hyphenated: not this); (rev9 D4) not llama.cpp
    # Metal's "has unified memory    = false" (an Intel Mac's discrete GPU)
    ("igpu_named", re.compile(r"\buma: 1\b|\b[Ii]ntegrated (?:GPU|[Gg]raphics)\b|\biGPU\b|\bunified memory\b(?![ \t]{0,16}= ?(?:false|0)\b)|\bRadeon(?:\(TM\))? \d{3,4}[MS]\b")),
    ("vllm_batched", BATCHED_RE),     # (fix66c) max_num_batched_tokens in force, the V0 engine (vllm_command)
    ("comfy_install", INSTALL_RE),     # (fix66c) the install a ComfyUI log shows (comfy_launch.INSTALL_SIGNS)
    ("as_limit", re.compile(r"\bMax address space[ \t]{1,60}(\d{1,20})[ \t]{1,60}(?:\d{1,20}|unlimited)[ \t]{1,60}bytes\b")),
    # (round 113) MONAI Label's heuristic planner (monailabel/utils/others/planner.py) logs the free GPU memory it measured,
    # per card, in MB (nvidia-smi's MiB): "Available GPU memory: {0: 2100} in MB"; one card's figure only
    ("monai_gpu_free", re.compile(r"\bAvailable GPU memory: \{\d{1,3}: (\d{1,9})\} in MB\b")),
    # (round 118) tpu-inference's memory statistics line ("Memory statistics | total_hbm_limit_gb=15.75GiB | ..."): the chip's HBM
    ("tpu_hbm_limit", re.compile(r"\btotal_hbm_limit_gb=(\d{1,6}(?:\.\d{1,6})?) ?GiB\b")),
    # (round 118) a program's own sweep line saying a batch size ran ("batch size 8 successful.", "batch_size=16 passed"): the
    # model and a batch that size fitted in this run (group 1, the size; kept by line); (rev9 S1) not "fits", an estimate that
    # did not run ("batch size 16 fits" in a planner's output)
    ("batch_ran", re.compile(r"\b[Bb]atch[ _]size[ =:]{0,3}(\d{1,6})\b[ \t]{0,3}(?:was |is )?(?:successful|succeeded|passed|worked)\b")),
    # (tri65) a training loop's own per-step line with the allocated memory ("Epoch: [0] [  19/6250] mem_allocated: 5268 MB
    # mem_reserved: ...", a trainer printing paddle's or torch's memory_allocated()): a step counter and the figure on one line
    ("step_mem", re.compile(r"(?:\[ {0,8}\d{1,9}/\d{1,9}\]|\b(?:[Ee]poch|[Ii]ter(?:ation)?|[Ss]tep)\b).{0,200}?"
                            r"\bmem(?:ory)?_allocated[:=] ?(\d{1,9}(?:\.\d{1,6})?) ?([MG]i?B)\b")),
    # (tri68) Kaldi's allocator report (cudamatrix/cu-allocator.cc PrintMemoryUsage, logged just before AllocateNewRegion's
    # KALDI_ERR): "Memory usage: A/H bytes currently allocated/total-held; ... device memory info: free:FM, used:UM, total:TM"; H is
    # the regions this process's allocator holds, U the card's total less free (cuMemGetInfo, MiB): groups H, U, T
    ("kaldi_held", re.compile(r"\bMemory usage: \d{1,20}/(\d{1,20}) bytes currently allocated/total-held;[^\n]{0,600}?"
                              r"\bdevice memory info: free:\d{1,9}M, used:(\d{1,9})M, total:(\d{1,9})M\b")),
    # (rev5 B4) TensorFlow's own words: its C++ sources' paths in its log lines ("tensorflow/core/common_runtime/bfc_allocator.cc",
    # "tensorflow/compiler/xla/...", "tensorflow/stream_executor/..."), its Python package in a frame or a module name
    # ("site-packages/tensorflow/python/...", "tensorflow.python.framework.errors_impl"); and JAX's ("jax/_src/...",
    # "jaxlib", "XlaRuntimeError", PJRT's client): which of the two an XLA status without either on its line belongs to
    # (rev6 B3) not under "org_tensorflow/": jaxlib before ~0.4.14 vendored XLA and TSL as external/org_tensorflow/tensorflow/
    # compiler/xla/..., so those paths are JAX's build logging, not TensorFlow's own words
    ("tf_own", re.compile(r"(?<!org_tensorflow[/\\])\btensorflow[/\\](?:core|compiler|stream_executor|python|tsl|cc)[/\\]"
                          r"|\btensorflow\.python\b")),
    ("jax_own", re.compile(r"\bjax(?:lib)?[/\\.]|\bjaxlib\b|\b(?:Xla|Jax)RuntimeError\b|\bpjrt_")),
]

# Each fact is tried only when its line contains one of these words (a substring test costs ~50 ns, a regex ~1 us).
FACT_KEYS = {
    "device": ("Device: ",), "total_vram": ("Total VRAM",), "nunchaku_gpu": (") Memory: ",), "mmgp_pin": ("pinned models is", "Unable to pin more tensors"), "vram_state": ("Set vram state",), "torch_version": ("pytorch version", "PyTorch version"), "platform": ("Platform:",),
    "trt_tactic_skip": ("Skipping tactic", "decreasing the workspace size"), "fsdp_clone": ("Failed to clone()",), "monai_gpu_free": ("Available GPU memory: {",), "tf_own": ("tensorflow",), "jax_own": ("jax", "RuntimeError", "pjrt_"),
    "conv3d_workaround": ("conv3d memory bug",), "cpu_fallback": ("Moving results arrays to CPU",), "yolox_occupy": ("yolox", "YOLOX"), "mlx_prompt_cache": ("Prompt Cache: ",), "nvml_init": ("Failed to initialize NVML",), "gpu_fault": ("ECC", "fallen off the bus", "Xid"), "comfy_report_vram": ("VRAM Total:", "VRAM Free:"), "comfy_pinned_max": ("Enabled pinned memory",),
    "requested_load": ("Requested to load",), "tf_device_mem": ("Total memory: ", "Free memory: "), "tf_found_device": ("Found device",), "bfc_stats": ("Limit:", "InUse:"), "bfc_fail": ("out of memory trying",),
    "dynamic_vram": ("dynamic VRAM",), "compiler_stats": ("compiler graph breaks",), "prompt_done": ("Prompt executed",),
    "exception_block": ("!!! Exception",), "comfy_report": ("Error Report", "Node Type", "ComfyUI Version"),
    "node_type": ("Error occurred when executing", "Node Type", "Exception in node", "Loader", "Encode", "Decode", "Sampler", "Upscale", "node_type"),
    "args": ("--", "expandable_segments", "backend:"), "frame": ('File "',), "frame_ipy": ("File /", "File ~"), "frame_ipy7": (".py in ", "> in "), "frame_rich": ("│ ", "¦ "),
    "source_arrow": ("--> ", "---> ", "❱", "│ > "), "progress_done": ("100%|",), "progress": ("%|",),
    "decode_phase": ("VAE", "vae", "Vae", "decoding", "decode_first_stage"),
    "vllm_kv_mem": ("Available KV cache",), "vllm_kv_tokens": ("KV cache size",),
    "vllm_model_mem": ("Model loading took", "Loading model weights took", "model weights take"),
    "vllm_kv_mem_v0": ("reserved for KV Cache",),
    "graph_capture": ("Capturing", "capture", "graph", "Graph capturing", "ESTIMATE_CUDAGRAPHS"), "own_pool": ("PluggableAllocator", "MemPool", "aimdo", "cumem", "CuMem"), "block_swap": BLOCK_SWAP.KEYS, "pinned_host": ("Non-blocking", "release mmap", "pin_memory", "AcceleratorError", "page-lock", "PAGEABLE", "non_blocking=True", "cudaHostRegister"), "vllm_util": ("gpu_memory_utilization", "--gpu-memory-utilization"), "vllm_total": ("total_gpu_memory",), "vllm_serving": ("Added request", "Received request", "POST /v1/", "Avg prompt throughput", "Processed prompts"), "vllm_worker_rpc": ("Worker failed with error", "WorkerProc hit an exception"), "training_log": ("poch ", "_loss", "{'loss': ", "loss.backward", "train", "finetune", "fine_tune", "AutoBatch: ", "step#:"), "vllm_maxlen": ("max_model_len", "max_seq_len", "--max-model-len"), "vllm_kv_dtype": ("kv_cache_dtype=", "--kv-cache-dtype"), "vllm_dtype": VLLM_DTYPE.KEYS,
    "vllm_marker": ("vllm", "Vllm", "VLLM::", "LLM(model=", "EngineCore", "vLLM", "Initializing an LLM engine", "INFO ", "ERROR ", "WARNING ", "DEBUG ", "not enough GPU memory",
                    "Engine core initialization failed", "Error in model execution"),
    "load_failed": ("rror while loading", "rror when loading", "rror loading", "ailed to load"),
    "runtime_marker": RUNTIME_WORDS,
    "ggml_model_buf": ("buffer size",), "ggml_kv_buf": ("KV buffer size",), "ggml_compute_buf": ("compute buffer size",), "sdcpp_compute": ("compute buffer size:", "failed to allocate the compute buffer"), "ggml_pool_fail": ("pool[",),
    "ggml_n_ctx": ("n_ctx", "kv_size"), "ggml_slots": ("n_seq_max", "n_ctx_per_seq"), "ggml_fa": (" -fa", "--flash-attn", "flash_attn "), "ggml_args": (" -", "--"), "ggml_spec_mtp": ("--spec-type",), "ggml_spec_cpu_sampling": ("--no-spec-draft",), "ggml_offloaded": ("offloaded",), "ggml_device_free": ("using device",), "ggml_list_free": ("MiB free",), "ollama_full": ("memory.required.full",), "ollama_layers": ("layers.offload",), "ollama_requested": ("layers.requested",), "ollama_kv": ("memory.required.kv",), "vllm_layer_at": ("model_executor/layers/",),
    # (the gate finds keys without overlap, longest first: a key that extends another's start ("vllm serve" of "vllm") would
    # hide that one from its line, so these keys start after such words)
    "runtime_version": ("server version", "Initializing an LLM engine", "LLM engine (v", "(version ", " version is ", "build: ", "build = ",
                        "ComfyUI Version", "ComfyUI version"),
    "llm_model": ("model='", "Starting to load model", "LLM(model=", " serve ", " run ", " pull ", "general.name", "-model"),
    "vllm_tp": ("parallel_size", "parallel-size", "-tp ", "-pp ", "-tp=", "-pp="),
    "vllm_wflags": ("quantization", *SHORT_Q_GATE, "cpu-offload-gb", "cpu_offload_gb", "data-parallel-size", "data_parallel_size",
                    " -dp ", " -dp=", "expert-parallel", "expert_parallel"),
    "gguf_meta": ("file type", "model ftype", "model params", "model size"), "ollama_total": ("inference compute",), "ollama_compute": ("inference compute",), "vllm_transformers": ("falling back to Transformers",),
    "ggml_marker": ("ggml_", "ggml-cuda.cu:", "llama_", "llm_load", "llama-server", "load_tensors:", "GGML_ASSERT", " -m "),
    "ggml_fattn": ("launch_fattn", "flash_attn_ext"),     # (round 114)
    "ggml_cuda_fn": ("in function",), "ggml_sycl_fn": ("ggml-sycl",), "runtime_named": ("lmdeploy", "mlx", "mflux", "mlc", "llama_model_loader: ", "llm_load_print_meta: ", "llm_load_tensors: ", "ValueError: Failed to "), "mem_query_oom": ("get_memory_info", "MemGetInfo"),
    "stage_said": ("cache alloc", "pass failed", "prefill failed", "forward failed", "ould not start", "ould not create",
                   "session alloc", " table upload"),
    "trt_kv_sizing": ("calculating max tokens in paged kv cache",),
    "vk_pinned_device": ("allocate pinned memory",), "ggml_vk_names": ("Vulkan",),
    "rknpu_no_iommu": ("iommu is disabled",), "bg_worker_exception": ("Exception in ",), "pinned_src": ("pin_memory",), "aimdo_file_read": ("file read failed", "xfer_file_read"),
    "ollama_marker": ("ollama", "OLLAMA_", 'msg="', "sha256-", "llama runner process", "% CPU/GPU") + OLLAMA_SERVER_SAYS, "ollama_env": ("OLLAMA_",), "ollama_evict": ("evicting a model",),
    "ggml_header": ("llama.cpp: loading model from", "llama_model_load_internal: "),
    "ggml_load_start": ("starting runner", "starting llama server", "load request", "loaded meta data", "loading model tensors"),
    "rocm": ("rocm", "ROCm", "HIP", "hipMalloc", "gfx"),
    "vllm_rocm_on": ("VLLM_ROCM_",), "cuda_device": ("Device: cuda", "detected platform cuda", ": NVIDIA", "NVIDIA-SMI", "  NVIDIA ", "  GeForce ", "  Tesla ", "  Quadro ", "  TITAN "),     # (fixT)
    "windows": (":\\", "Windows", ".exe", "WDDM", "windows_portable", "WinError"),
    "darwin": ("/Users/", "macOS", "Darwin", "MPS", "Apple M"),
    "linux": ("/home/", "/usr/lib", "/opt/conda", "/workspace/", "Linux", "/root/", "/dist-packages/", "/usr/local/cuda", "/mnt/"),
    "wsl": ("WSL", "microsoft-standard", "dxgkio_", "misc dxg", "/mnt/"),
    "cudarc": ("DriverError(CUDA_ERROR_",),
    "aimdo_log": ("aimdo: ",), "comfy_mm": ("MB usable", "models unloaded"),     # (tri82)
    "cuda_query_total": ("Total amount of global memory", "MiB /", "MiB/"),     # (tri78) nvidia-smi's table too
    "smi_procs": ("Process name",),     # (tri79)
    "smi_apps": ("used_gpu_memory [MiB]",),     # (round 114); (rev6 S1) the rows are read from the header (facts._smi_apps)
    "as_limit": ("Max address space",),     # (round 112)
    "tpu_hbm_limit": ("total_hbm_limit_gb=",),     # (round 118)
    "batch_ran": ("atch size", "atch_size"),     # (round 118)
    "step_mem": ("mem_allocated", "memory_allocated"),     # (tri65)
    "kaldi_held": ("total-held",),     # (tri68)
    "comfy_install": INSTALL_KEYS, "vllm_batched": BATCHED_KEYS,     # (fix66c)
    "igpu_named": ("uma: 1", "ntegrated ", "iGPU", "unified memory", "Radeon"),     # (rev8 S2)
}
FACTS.append(AROUND_FACT)     # (rt66) the program around a library's failure: its own lines (runtime_around.AROUND)
FACT_KEYS[AROUND_FACT[0]] = AROUND_WORDS
FACTS.append(TINY_FACT)     # (review rev66a #4) a DataLoader worker's failure re-raised (tiny_shared.FACT)
FACT_KEYS[TINY_FACT[0]] = TINY_WORDS
FACTS.append(("vllm_own", VLLM_OWN.OWN_LINE))     # (fix67a) the log's own vLLM command (vllm_own_flags.py)
FACT_KEYS["vllm_own"] = VLLM_OWN.KEYS
FACTS.append(RUNS_FACT)     # (fix67b) a wrapper's per-run lines (wrapper_runs.FACT)
FACT_KEYS[RUNS_FACT[0]] = RUNS_WORDS
for _fact, _words, _ in extra_facts.ROWS:     # (aud68c #4, #8) small modules' facts (extra_facts.py)
    FACTS.append(_fact)
    FACT_KEYS[_fact[0]] = _words
FACTS.append(AFTER_FACT)     # (fix67h) an error line after BFC's backing off (bfc_backpedal.FACT)
FACT_KEYS[AFTER_FACT[0]] = AFTER_WORDS
FACTS.append(WENT_ON)     # (fix67o) a run's step line, by line (bfc_backpedal.WENT_ON)
FACT_KEYS[WENT_ON[0]] = WENT_ON_WORDS
FACTS.append(DEVICES_FACT)     # (rev67d F1) which card ComfyUI's figures are for (comfy_devices.FACT)
FACT_KEYS[DEVICES_FACT[0]] = DEVICES_WORDS
FACTS.append(VLLM_LAUNCH.FACT)     # (fix68a) a Python launch: a vLLM run's start with no flags (vllm_launch.py)
FACT_KEYS["vllm_launch"] = VLLM_LAUNCH.KEYS
FACTS.append(VLLM_ARGS.FACT)     # (fix68a) -q X in a Kubernetes/Compose args list after a vLLM entry point (vllm_args_list.py)
FACT_KEYS["vllm_args_list"] = VLLM_ARGS.KEYS
FACTS.append(VLLM_LAUNCH.END)     # (fix68h) a foreground vLLM server's end: a later Python line is a new run
FACT_KEYS[VLLM_LAUNCH.END[0]] = VLLM_LAUNCH.END_KEYS
FACTS.insert(0, VLLM_LAUNCH.START)     # (fix68a) first on its line: a run's start read back from the window
FACT_KEYS["vllm_run_start"] = VLLM_LAUNCH.START_KEYS
for _name, _rx, _words in AIMDO_FACTS:     # (rev67d F4) the interrupt and "got prompt", by line (aimdo_abort.py)
    FACTS.append((_name, _rx))
    FACT_KEYS[_name] = _words
_FACTS_GATED = [(name, FACT_KEYS[name], rx) for name, rx in FACTS]
