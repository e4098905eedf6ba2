"""Triage's rule rows for *host-ram*: system memory, not the GPU (rows, not code: the row format is in rules.py's
docstring). rules.py puts them at their place among the cause sections."""
from ..units import fmt_bytes
from .driver_predicates import nvml_na
from .predicates import ABSURD_HOST, aimdo_file_read, aimdo_reader_only, bare_driver, kind, kv_sized, unified_host_held, unified_pool, wddm_refused
from . import comfy_pin
from .native_runtimes import hip_host_call
from .rule_row import Rule

# what the host-ram row of an OOM killer's event says, by the event's form (None: the kernel's own OOM killer); a hosting
# platform's limit ("platform_limit") names its figure in the row itself
OOM_KILLER_SAYS = {
    # (round 94) earlyoom's notice or kill line
    "earlyoom": "earlyoom found the host's available memory (and swap) at or below its limits and ended a process: system "
                "RAM, not GPU memory (on a unified-memory machine the GPU's allocations count in it)",
    # (tri84) Ray's memory monitor (ray_oom.RAY_OOM)
    "ray_monitor": "Ray's memory monitor killed a task or actor when the node's memory passed its threshold "
                   "(RAY_memory_usage_threshold, 0.95 by default): the node's system RAM (worker heaps, the object store), "
                   "not GPU memory; fewer tasks or actors per node, less held in host memory per worker, or a node with more RAM",
    None: "the operating system's OOM killer ended the process: system RAM (and swap) ran out, not GPU memory",
}


R = Rule
HOST_RAM = [
    # --- host-ram: system memory, not the GPU ----------------------------------------------------------
    R("host-ram", 8.0, lambda x: x.kind == "torch.cpu" and (x.n.get("requested") or 0) < ABSURD_HOST,
      lambda x: "the CPU allocator could not get " + (f"{fmt_bytes(x.n['requested'])} of " if x.n.get("requested") else "") + "system RAM"),
    # (fixZ) vLLM's CPU worker (error_patterns.VLLM_CPU_NODE): the NUMA node's RAM, in any of its three checks; the rows
    # below and rules_process's other-process rows read which part of it was short
    R("host-ram", 3.0, kind("vllm.cpu_node"),
      lambda x: f"vLLM's CPU worker found {fmt_bytes(x.n['available'])} of the node's {fmt_bytes(x.n['total'])} RAM available, "
                "less than it asks for: system RAM, not a GPU"),
    # (fixZ) --kv-cache-memory-bytes asks for a KV cache larger than the RAM available after the weights loaded
    R("host-ram", 4.0, lambda x: x.kind == "vllm.cpu_node" and x.ev.get("form") == "kv_explicit",
      lambda x: f"the KV cache asked for (--kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE: "
                + (fmt_bytes(x.n["kv_needed"]) if x.n.get("kv_needed") else "its size") + ") is more than the "
                f"{fmt_bytes(x.n['available'])} of RAM available after the model loaded; a smaller KV cache or a smaller model"),
    # (fixZ) the worker's own RSS already passed its share (format_gib printed the KV cache's size as zero or negative): the
    # model itself does not fit --gpu-memory-utilization of the node's RAM; other processes are not the cause
    R("host-ram", 4.0, lambda x: x.kind == "vllm.cpu_node" and x.ev.get("form") == "kv_auto" and "kv_needed" not in x.n,
      lambda x: f"vLLM's CPU worker already holds {fmt_bytes(x.n['this_process'])}, more than its "
                f"{fmt_bytes(x.n['requested'])} share of the node's RAM (--gpu-memory-utilization): nothing is left for the KV "
                "cache; a larger share or a smaller model"),
    R("host-ram", 2.0, kind("cpp.bad_alloc"),
      "a native library could not get memory from the system (std::bad_alloc): most often RAM while a model or tokenizer is "
      "loaded; a size computed wrong reads the same"),
    # (round 67) V8 could not allocate an ArrayBuffer (native_runtimes.JS_ARRAY_BUFFER): the page's or worker's memory, not the GPU's
    R("host-ram", 3.0, kind("js.array_buffer"),
      "the JavaScript engine could not allocate an ArrayBuffer (RangeError: Array buffer allocation failed): the page's or "
      "worker's own memory (a browser tab's heap cap of a few GB, or the machine's RAM), not the GPU's; a smaller model file "
      "or image, the work split into parts, or a browser, machine or build with more memory"),
    # (round 89) Arrow's memory pool (form "arrow": pyarrow's ArrowMemoryError, a MemoryError) named as such
    R("host-ram", 8.0, kind("python.memory_error"), lambda x: (
        "Arrow's memory pool could not get system RAM (ArrowMemoryError: Parquet/Arrow record batches)" if x.ev.get("form") == "arrow"
        else "Python could not get system RAM (MemoryError)") + (f" for {fmt_bytes(x.n['requested'])}" if x.n.get("requested") else "")),
    R("host-ram", 4.0, kind("ollama.system_memory"), lambda x: "Ollama: model needs " + (
        f"{fmt_bytes(x.n['required'])}, {fmt_bytes(x.n['available'])} available" if "required" in x.n
        else "more system memory than is available")),
    # (rev8 S2) Unsloth Studio's host-RAM guard as its source means it (other_runtimes.studio_host_guard): a discrete GPU's
    # spill of the weights that miss free VRAM (required) over the RAM it leaves usable (limit), or on a unified-memory APU
    # (form "apu") the weights over the RAM available; an integrated GPU the log names reads other (rules_other)
    R("host-ram", 3.0, lambda x: x.kind == "app.host_offload_guard" and (x.ev.get("form") == "apu" or not x.f.get("igpu_named")),
      lambda x: "the application's own guard refused the load before the server started: "
                + ((f"the weights ({fmt_bytes(x.n['required'])}) " if x.n.get("required") else "the weights ")
                   + (f"are more than the {fmt_bytes(x.n['available'])} of memory available" if x.n.get("available") else
                      "do not fit the memory available") + " on this unified-memory APU, whose weights load into system RAM"
                   if x.ev.get("form") == "apu" else
                   (f"{fmt_bytes(x.n['required'])} of the weights miss free VRAM" if x.n.get("required") else
                    "the weights that miss free VRAM")
                   + (f", more than the {fmt_bytes(x.n['limit'])} of system RAM it leaves usable" if x.n.get("limit") else
                      ", more than the system RAM it leaves usable")
                   + " (its estimate counts the weights only, so the load would need more): memory-mapped, they would page "
                     "until the OS kills the app")
                + ". Use a smaller or more quantized GGUF, or free memory"
                + ("" if x.ev.get("form") == "apu" else "; its bypass (UNSLOTH_ALLOW_HOST_OFFLOAD=1) loads it anyway at that risk")),
    R("host-ram", 4.0, kind("ggml.host"), lambda x: "ggml could not allocate " + (
        "a context's host memory (ggml_init's malloc returned NULL): system RAM, or on Windows the commit limit (RAM plus "
        "page file), for what the program reserves for its contexts" if x.ev.get("form") == "context"
        else f"{fmt_bytes(x.n['requested'])} of host memory" if x.n.get("requested") else "pinned (page-locked) host memory")),
    R("host-ram", 4.0, lambda x: x.kind == "vulkan.alloc" and x.ev.get("form") == "host",
      "Vulkan refused a host-memory allocation (vkAllocateMemory -1, VK_ERROR_OUT_OF_HOST_MEMORY): system RAM, not the GPU"),
    # (fixY) Omniverse Kit's renderer logging the same VkResult by its name ("VkResult: ERROR_OUT_OF_HOST_MEMORY"): the driver's
    # host-side allocation for the renderer (staging copies, the stage's assets while they load) found no system RAM
    R("host-ram", 4.0, lambda x: x.kind == "kit.vulkan" and x.ev.get("form") == "host",
      "Omniverse Kit's Vulkan renderer (carb.graphics-vulkan) was refused host memory (VkResult ERROR_OUT_OF_HOST_MEMORY, "
      "Vulkan's -1): system RAM, not the GPU; the stage's assets and the simulation's host buffers share it"),
    # mmgp (Wan2GP's offloader) printed that its models' pinning did not fit the RAM it may page-lock (perc_reserved_mem_max),
    # and a CUDA call then failed without the caching allocator's numbers: page-locked host memory ran short, not the card
    # (deepbeepmeep/Wan2GP, round 61: a profile that pins fewer models ran)
    # (round 66: only once pinning itself hit the limit, "Unable to pin more tensors ... maximum reservable memory has been
    # reached"; "Switching to partial pinning" alone is Wan2GP's plan, printed as information)
    R("host-ram", 2.0, lambda x: x.kind == "cuda.driver" and "limit" in x.f["mmgp_pin"],
      lambda x: "mmgp (Wan2GP's offloader) could not pin all its models to page-locked RAM"
      + (f" ({fmt_bytes(x.f['mmgp_pin']['required'])} needed, {fmt_bytes(x.f['mmgp_pin']['available'])} reservable)"
         if "required" in x.f["mmgp_pin"] else "")
      + " and a CUDA call then failed without allocator numbers: page-locked host memory ran short; a memory profile that "
        "pins fewer models (profile 4), fewer models loaded at once, or more RAM"),
    # .NET's managed heap could not grow: system RAM (or a 32-bit process's address space)
    R("host-ram", 1.5, kind("dotnet.oom"),
      ".NET could not allocate managed memory (System.OutOfMemoryException): system RAM, or a 32-bit process's address space"),
    R("host-ram", 4.0, lambda x: x.branch == "ggml" and "ollama.system_memory" in x.kinds, "Ollama: not enough system memory"),
    # (tri64) not a host buffer of the KV cache's shape (predicates.kv_sized): the cache in system RAM is kv-cache (R14)
    R("host-ram", 3.5, lambda x: x.branch == "ggml" and x.host_buffer and not kv_sized(x),
      "host (CPU) buffer allocation failed: {host_buffer}"),
    # Ollama puts on the GPU only the layers its estimate says fit and loads the rest into system RAM: a model load that
    # fails with no GPU allocation failing is that host-side buffer
    R("host-ram", 4.5, lambda x: x.env["runtime"] == "ollama" and x.ggml_stage == "model-load-failed" and "backend buffer" in x.text
      and not any(k in x.kinds for k in ("ggml.malloc", "ggml.vulkan", "ggml.buffer", "cuda.driver")),
      "Ollama loads what does not fit its GPU estimate into system RAM; the model failed to load with no GPU allocation failing: "
      "RAM (and swap) is too small for the part of the model kept on the CPU"),
    # oMLX's cluster admission: a node admits only what is free on it right now; MLX keeps the model in unified memory (Apple
    # silicon, GB10), which is the host's RAM: what programs and the page cache hold there shrinks the node's limit
    R("host-ram", 3.0, kind("mlx.admission"), lambda x: "the cluster refused to start: a node admits only the memory free on it "
      "right now" + (f" ({fmt_bytes(x.n['available'])}, against the {fmt_bytes(x.n['required'])} its rank needs)" if "required" in x.n else "")
      + "; MLX keeps the model in unified memory, the host's RAM, so programs and the page cache holding it shrink what the "
      "node admits: free host memory on that node (close programs; sync and drop the page cache), then start again"),
    # on a log that shows Windows or WSL, Windows' driver model (WDDM) backs device memory with the system commit: a request
    # refused with the card's free figure several times over it is RAM plus page file used up (above the driver-refused row, other 4.5)
    R("host-ram", 5.0, wddm_refused,
      lambda x: f"the card had {fmt_bytes(x.free)} free for a {fmt_bytes(x.req)} request on a log that shows "
      + ("WSL (NVML gives no per-process figure, as under WDDM: the message's 17179869184.00 GiB is its not-available "
         "value)" if nvml_na(x) else "Windows or WSL")
      + ", whose driver model (WDDM) backs device memory with the system commit: RAM plus page file ran out, not VRAM; "
      + ("raise WSL's memory (memory= in .wslconfig) and restart WSL, enlarge the page file"
         if nvml_na(x) or x.env["wsl"] else "enlarge the page file (system-managed)")
      + ", close programs holding RAM, or keep less of the model in RAM (offload)"),
    # VideoHelperSuite's Load Video stops itself when the decoded frames would pass the RAM psutil reports free (available RAM
    # plus free swap): frames are decoded into system RAM as float32 before any node puts them on the GPU
    R("host-ram", 8.0, kind("comfy.vhs_ram"), lambda x: (
        f"VideoHelperSuite's Load Video stopped after decoding {x.ev['frames']} frames" if x.ev.get("form") == "frames"
        else f"VideoHelperSuite's Meta Batch asks for {x.ev['frames']} frames a batch and only {x.ev['fit']} fit")
      + ": its guard sizes the frames against the system RAM (and swap) free, where decoded frames are kept as float32 "
        "before any GPU work: load fewer frames at once (frame_load_cap, select_every_nth, a smaller custom_width/custom_height), or a Meta Batch"),
    # ((tri66) not where aimdo's own log says its file read failed: predicates.aimdo_file_read, read under other)
    R("host-ram", 5.0, lambda x: x.kind == "comfy.pinned_host" and not aimdo_reader_only(x) and not aimdo_file_read(x),
      lambda x: "a pinned (page-locked) host buffer failed: " + x.text[:120]),
    # comfy-aimdo's reader failing with nothing else said: its one shortage path is a 64 MiB pinned staging window
    R("host-ram", 1.5, aimdo_reader_only,
      "comfy-aimdo's file reader stages each slice in a 64 MiB pinned host buffer: if that allocation failed, system RAM"),
    R("host-ram", 5.0, lambda x: x.kind == "xla.oom" and x.ev.get("form") == "bfc" and x.ev.get("device_kind") == "cpu",
      "TensorFlow's host allocator ran out: system RAM (its pinned buffers for transfers, or the CPU's own), not the GPU"),
    R("host-ram", 5.0, lambda x: x.kind == "cuda.driver" and x.ev.get("form") == "stream_executor_host",
      lambda x: f"the stream executor could not page-lock {fmt_bytes(x.req)} of host RAM for transfers (pinned memory): system RAM, "
                "or the pinned-memory limit (WSL, containers, Jetson), not the GPU"),
    R("host-ram", 5.0, lambda x: x.kind == "cuda.driver" and x.ev.get("form") == "runtime_host",
      "cudaMallocHost / cudaHostAlloc failed: they allocate page-locked (pinned) HOST memory for transfers, so system RAM "
      "(or its pinned-memory limit) ran out, not the GPU; load less data at once, a smaller mini-batch, or more RAM"),
    # the HIP runtime's trace names a host-memory call (hipHostRegister, hipHostMalloc) that returned hipErrorOutOfMemory: it
    # works on page-locked system RAM, not the card; a hint (a small registration is read under other, rules_other.py)
    R("host-ram", 1.2, hip_host_call,
      lambda x: f"the HIP runtime refused {hip_host_call(x)}, which works on page-locked (pinned) host memory: the pinned limit "
                "(a share of system RAM) or RAM itself, not the card"),
    # (round 74) PyTorch's CUDA "invalid argument" raised under a source line that pins host memory itself (torch.empty(...,
    # pin_memory=True)): cudaHostAlloc refused the page-locked buffer, as big pinned buffers are (LMCache's CPU tier at 5 GiB,
    # fine at 2 GiB): the pinned limit or RAM, not the card
    R("host-ram", 5.0, lambda x: x.kind == "cuda.invalid_arg" and x.f["pinned_src"],
      lambda x: f"CUDA refused the call under \"{x.f['pinned_src']}\" with invalid argument: that call allocates page-locked "
                "(pinned) host memory, so the pinned buffer was refused (too large for the pinned limit or RAM), not VRAM; "
                "ask for a smaller pinned buffer (e.g. LMCache's max_local_cpu_size) or raise the locked-memory limit"),
    # (fix67b) ComfyUI's pin_memory() on the failing stack: the failing call page-locks host RAM (cudaHostRegister, comfy_pin.py),
    # as direct as the page-locking calls above
    R("host-ram", 7.0, lambda x: x.kind == "cuda.driver" and comfy_pin.pinned(x.frames),
      lambda x: f"the CUDA out-of-memory came from {comfy_pin.pinned(x.frames)}, within ComfyUI's pinned-memory limit (45 % of RAM on "
                "Windows, 95 % elsewhere): page-locked system RAM ran out, not VRAM; --disable-pinned-memory, or more free RAM"),
    R("host-ram", 3.0, lambda x: x.kind == "cuda.driver" and x.pinned_host,
      "a driver-level CUDA out-of-memory with pinned host transfers in play ({pinned_host}): page-locked system RAM ran out, not VRAM"),
    # ComfyUI pins host memory for offloaded weights by default: a driver-level CUDA OOM without allocator numbers
    # (PyTorch's allocator would have printed them for VRAM) is most often page-locked RAM; a hint, not a verdict
    R("host-ram", 1.4, lambda x: bare_driver(x) and x.env["runtime"] == "pytorch",
      "PyTorch's CUDA check failed with no allocator numbers: the caching allocator reports a VRAM shortage itself, so a CUDA "
      "call outside it failed, most often pinned (page-locked) host memory (DataLoader pin_memory, non_blocking copies; WSL "
      "limits it), else the context of a card another program holds"),
    R("host-ram", 1.4, lambda x: bare_driver(x) and x.comfy,
      "ComfyUI, a driver-level CUDA out-of-memory and no allocator numbers: ComfyUI pins (page-locks) host RAM for offloaded "
      "weights, and that RAM running out is reported this way (try --disable-pinned-memory)"),
    # a unified-memory device (GB10: the CPU's RAM is the GPU's, cards.UNIFIED): most of the pool held outside this process.
    # NVML names no process there, so the message cannot tell the host's memory (page cache, a from_pretrained() copy
    # before .to("cuda")) from a second server or container: both are read, other-process's row (3.0) within
    # rank.PAIR_RATIO of this one, and shown side by side. Host first: the corpus's one PyTorch message from a GB10 with
    # memory outside the process (unseen batch 70) was a host copy; its other-process cases on a GB10 are vLLM's and
    # SGLang's own checks, which this row does not read
    R("host-ram", 3.5, unified_host_held,
      lambda x: f"{fmt_bytes(x.total)} is the unified pool of an {unified_pool(x)}: system RAM and the GPU share it, and "
                f"{fmt_bytes(x.others)} of it is held outside this process; on this device no process's share is reported, so "
                "it is either host memory (page cache, a host-side copy of the weights: load straight to the device with "
                "device_map, drop the page cache) or a second program on the GPU (another server or container: stop it)"),
    # the operating system refused memory: Windows' commit limit (RAM + page file), Linux's OOM killer
    R("host-ram", 8.0, kind("os.paging_file"),
      lambda x: "Windows diagnosed a low virtual memory condition (the Resource-Exhaustion-Detector's event): the commit charge "
                "reached the commit limit, RAM plus page file" + (f"; the largest program held {fmt_bytes(x.n['this_process'])}"
                                                                 if x.n.get("this_process") else "")
      if x.ev.get("form") == "low_virtual_memory" else
      "Windows could not commit more memory (os error 1455, the paging file is too small): RAM plus page file ran out, typically while a model file was mapped"),
    R("host-ram", 6.0, lambda x: x.kind == "xpu.driver" and x.ev.get("host"), "Intel Level Zero could not allocate host (system) memory"),
    R("host-ram", 8.0, kind("os.enomem"), lambda x: (
        f"mapping {fmt_bytes(x.n['requested'])} of a checkpoint file into memory failed" if x.n.get("requested") else "the OS refused memory")
      + " (ENOMEM, Cannot allocate memory): system RAM or the OS's overcommit/mapping limit, not VRAM"),
    R("host-ram", 8.0, kind("os.system_memory"),
      "SwarmUI: system memory was {n[ram_used_pct_ratio]}% used just before the backend died: host RAM (and page file) ran out"),
    R("host-ram", 6.0, lambda x: x.kind == "onnx.alloc" and x.ev.get("device_kind") == "cpu",
      "ONNX Runtime's CPU execution provider could not allocate {req:b} from its arena: system RAM"),
    # llama.cpp built with cuBLAS before mid-2023 kept the model's host copy in pinned memory (cudaMallocHost); with no layer
    # on the GPU the CUDA allocation that failed is page-locked system RAM (WSL caps it: llama.cpp#1594 falls back to pageable)
    R("host-ram", 3.0, lambda x: x.ev.get("form") == "ggml_old" and x.env["runtime"] == "llama.cpp" and not (x.f["ggml_offloaded"] or (0, 0))[0],
      "llama.cpp's CUDA check failed before any layer was offloaded to the GPU: pinned (page-locked) host memory for the model, not VRAM"),
    # amdgpu refused a graphics/Vulkan submission with ENOMEM: its buffers could not be made resident, which fails when GTT
    # (the system RAM the GPU maps; amdgpu.gttsize, about half of RAM by default) is full: host-visible buffers (offloaded
    # weights, a UMA APU's whole model), not VRAM, which the kernel would evict to GTT
    R("host-ram", 4.0, kind("amdgpu.cs_enomem"),
      "amdgpu could not make this submission's buffers resident (ENOMEM): GTT, the system RAM the GPU maps (about half of "
      "RAM by default, amdgpu.gttsize), is full of host-visible buffers (offloaded weights, or a unified-memory APU's model); "
      "offload less to host memory, a smaller model, or raise the GTT limit"),
    R("host-ram", 8.0, kind("os.oom_killer"),
      # (round 93) a hosting platform's own event over the plan's memory (Render's "Ran out of memory (used over 512MB)")
      lambda x: f"the hosting platform stopped the service when it used over its plan's {fmt_bytes(x.n['limit'])} of memory: host "
                "RAM, not GPU memory; a larger plan, or a smaller footprint (lighter libraries, models loaded lazily or served elsewhere)"
      if x.ev.get("form") == "platform_limit" and x.n.get("limit") else
      OOM_KILLER_SAYS.get(x.ev.get("form"), OOM_KILLER_SAYS[None])),
    # (tri75) a Jupyter kernel that died while a cell ran (host_readers.KERNEL_DIED): a Python error, a device's out of memory
    # among them, would have come back as the cell's error; a kernel ended from outside is the host's OOM killer in an OOM report
    R("host-ram", 8.0, kind("jupyter.kernel_died"),
      "the notebook's kernel died while a cell ran, with no Python error (a device out-of-memory error would have come back "
      "as the cell's error): the process was ended from outside, by the host's OOM killer or the container's memory limit "
      "(Kaggle's and Colab's sessions have a fixed RAM): system RAM, not GPU memory; smaller host-side frames (narrower "
      "dtypes, columns added one at a time, chunks, del and gc.collect() between steps) or a session with more RAM"),
    # (tri76) data-loading workers found dead (host_readers.WORKERS_DEAD) where none printed a Python exception: ended by a signal
    R("host-ram", 8.0, lambda x: x.kind == "batchgen.workers_dead" and not x.f["bg_worker_exception"],
      "the data-loading worker processes died without printing a Python error (a worker's own exception would be printed "
      "above the message): they were ended by a signal, the host's OOM killer or SIGBUS from a full /dev/shm (Docker's default "
      "is 64 MiB): system RAM, not GPU memory; fewer workers (nnUNet_n_proc_DA), a larger --shm-size, or more RAM"),
    # (round 63) a DataLoader worker died of SIGBUS: the shared memory (/dev/shm, RAM-backed) that carries its batches to the
    # main process could not be backed
    R("host-ram", 8.0, kind("os.shm"),
      "a DataLoader worker died of a bus error: the shared memory (/dev/shm) its batches pass through ran out (a container's "
      "64 MB default, or system RAM): raise it (docker --shm-size or --ipc=host), or fewer workers (num_workers=0 to see "
      "the real error)"),
    # (round 87) NCCL could not create the segment its SHM transport uses between ranks (other_patterns.NCCL_SHM): /dev/shm,
    # RAM-backed, had no space left for it
    R("host-ram", 8.0, kind("nccl.shm"),
      "NCCL could not create its shared-memory segment of {req:b} in /dev/shm (no space left on device): /dev/shm is host "
      "RAM (a container's 64 MB default), full or held by segments a killed run left behind (/dev/shm/nccl-*); give it more "
      "(docker --shm-size, --ipc=host, a memory-backed emptyDir in Kubernetes), remove stale nccl-* segments, or "
      "NCCL_SHM_DISABLE=1"),
    # (round 89) Triton Inference Server's Python backend could not grow the shared-memory pool its stub processes pass tensors
    # through (other_patterns.TRITON_PB_SHM): /dev/shm, RAM-backed, at its size
    R("host-ram", 8.0, kind("tritonserver.shm_pool"),
      "Triton's Python backend could not grow its shared-memory pool past {n[limit]:b}: the pool lives in /dev/shm, host RAM "
      "(a container's 64 MB default), not the GPU; give the container more (docker --shm-size=1g, --ipc=host, a memory-backed "
      "emptyDir in Kubernetes), or send smaller tensors through the Python backend"),
    # (round 94) JavaCPP's cap on the process's physical memory (Pointer.maxPhysicalBytes, under DL4J/ND4J) and Stable-Baselines3's
    # replay buffer sized over the host's available memory: host RAM, each in its own words
    R("host-ram", 8.0, kind("javacpp.physical"),
      lambda x: "JavaCPP refused more native memory: the process's physical memory"
      + (f" ({fmt_bytes(x.n['used'])})" if x.n.get("used") else "") + " passed Pointer.maxPhysicalBytes (by default the heap's "
        "-Xmx plus -Dorg.bytedeco.javacpp.maxbytes): host RAM, not the GPU; raise -Dorg.bytedeco.javacpp.maxphysicalbytes (and "
        "-Xmx), or hold fewer arrays (a smaller vector file, a subset loaded)"),
    R("host-ram", 8.0, kind("sb3.replay_buffer"),
      "Stable-Baselines3's replay buffer needs {n[required]:b} of host RAM and the system has {n[available]:b} available: a "
      "smaller buffer_size, optimize_memory_usage=True, or a smaller observation (grayscale, downsampled frames)"),
    # (round 63) the JVM's heap (-Xmx) refused an object, or collections reclaimed almost nothing: the host process's heap
    R("host-ram", 8.0, kind("jvm.heap"),
      lambda x: "the JVM's heap is full (java.lang.OutOfMemoryError: " + (
          "Java heap space" if x.ev.get("form") == "heap" else "GC overhead limit exceeded")
      + "): host memory capped by the heap's size (-Xmx), not the GPU; a larger -Xmx, or fewer copies of the model's tensors "
        "on the heap at once (what the frames were building)"),
    # (round 112) a host-side allocation failed in a log that shows the process's own address-space cap (/proc limits "Max address
    # space", set by ulimit -v or setrlimit): the cap, not RAM or the card, refused it (CUDA's unified addressing counts the card's
    # memory and the driver's reservations against it too); the fix is the cap raised or removed where the program is started
    R("host-ram", 4.0, lambda x: bool(x.f.get("as_limit")) and (bool(x.host_buffer) or x.ev.get("device_kind") == "cpu"),
      lambda x: f"a host allocation failed under the process's address-space limit (Max address space {fmt_bytes(x.f['as_limit'])}: "
      "ulimit -v or setrlimit RLIMIT_AS), which every mapping counts against, GPU mappings included: raise or remove the limit "
      "where the program is launched (ulimit -v unlimited, or a larger value)"),
]
