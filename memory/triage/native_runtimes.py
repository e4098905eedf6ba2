"""Out-of-memory messages of programs that check their own HIP or CUDA calls and print them in their own form: AMReX's GPU
checks (WarpX, Nyx, Castro) and the HIP runtime's AMD_LOG_LEVEL trace, which a HIP program of its own shows (round 53;
tests/unit/test_triage_tune95.py). parse.py lists them among its recognisers, before PyTorch's reading of a bare
hipErrorOutOfMemory."""
import re

from ..units import MiB


# AMReX (WarpX, Nyx, Castro, ...): its GPU checks abort with the file and line of the call (Src/Base/AMReX_GpuError.H:
# AMREX_HIP_SAFE_CALL "HIP error in file F line N <hipGetErrorString>", AMREX_CUDA_SAFE_CALL "CUDA error 2 in file F line N: out
# of memory", AMREX_GPU_SAFE_CALL "GPU error in file ..."), relayed by amrex::Abort ("amrex::Abort::<rank>::"). A shortage in
# its own arenas reads differently (AMReX_Arena.cpp: "Out of gpu memory. Free: N Asked: M"), so these are runtime calls outside
# the arenas; AMReX_GpuDevice.cpp is its device setup (hipSetDevice, properties, stream creation: line 402 at 22.09 is
# hipStreamCreate of the default stream in Device::initialize_gpu) (BLAST-WarpX/warpx#3398)
AMREX_GPU = re.compile(r"(amrex::Abort::\d{1,7}::\s?)?(HIP|CUDA|GPU) error(?: \d{1,4})? in file (\S{1,400}) line \d{1,7}:? "
                       r"(?:hipErrorOutOfMemory|out of memory|cudaErrorMemoryAllocation)")
# the HIP runtime's own trace (AMD_LOG_LEVEL >= 1, ROCclr/CLR: ":<level>:<file>.cpp :<line> : <usec> us: [<pid> : [<tid>] ]<text>"):
# the allocation it could not make, in hex bytes ("Can't allocate memory size - 0x02800000 bytes!"), and the API call that then
# returned hipErrorOutOfMemory ("hipHostRegister: Returned hipErrorOutOfMemory :") (ROCm/legacy-rocm-build#1483). The
# thread prefix is "<pid> : [<tid>] " before ROCm 6 and "[pid:<pid>  tid:0x<tid>] " from ROCm 6 (a Blender Cycles
# report's ROCm 6.0 trace: ":3:hip_memory.cpp :3965: 0305756402 us: [pid:3158  tid:0x7fbce550b680] hipDrvMemcpy2DUnaligned:
# Returned hipErrorOutOfMemory :")
HIP_TRACE = re.compile(r"^:\d:\w{1,40}\.cpp\s{0,40}:\s{0,4}\d{1,6}\s{0,4}: \d{1,20} us: "
                       r"(?:\d{1,10} : \[[0-9a-fx]{1,20}\] |\[pid:\d{1,10}\s{1,4}tid:0x[0-9a-f]{1,20}\] )?"
                       r"(?:Can't allocate memory size - 0x([0-9a-fA-F]{1,16}) bytes!|(hip\w{1,40}): Returned hipErrorOutOfMemory\b)")
# HIP calls that work on host memory (page-locking it, or allocating it page-locked): form hip_host, not the card's. The
# runtime's own line ("Can't allocate ...", form hip_alloc) comes first and leads the incident; the guide covers all three
HIP_HOST_CALLS = ("hipHostRegister", "hipHostMalloc", "hipHostAlloc", "hipMallocHost")


def amrex_gpu(line):
    if " error" not in line or " in file " not in line:
        return None
    m = AMREX_GPU.search(line)
    if not m or not (m.group(1) or "AMReX_" in m.group(3)):
        return None
    setup = m.group(3).replace("\\", "/").rsplit("/", 1)[-1] == "AMReX_GpuDevice.cpp"
    return {"kind": "cuda.driver", "device_kind": {"HIP": "rocm", "CUDA": "cuda"}.get(m.group(2)), "numbers": {},
            "runtime": "amrex", "complete": True, "form": "amrex_setup" if setup else "amrex_call"}


def hip_trace(line):
    if not line.startswith(":") or " us: " not in line:
        return None
    m = HIP_TRACE.match(line)
    if not m:
        return None
    host = m.group(2) in HIP_HOST_CALLS
    return {"kind": "cuda.driver", "device_kind": "rocm", "numbers": {"requested": int(m.group(1), 16)} if m.group(1) else {},
            "runtime": "hip", "complete": True, "form": "hip_alloc" if m.group(1) else "hip_host" if host else "hip_call"}


HIP_HOST_RETURNED = re.compile(r"\b(" + "|".join(HIP_HOST_CALLS) + r"): Returned hipErrorOutOfMemory\b")


def hip_host_call(x):
    """The HIP host-memory call (HIP_HOST_CALLS) the trace shows returning hipErrorOutOfMemory in this failure, where the run
    is a HIP program's own (env runtime hip), or None."""
    if x.env["runtime"] != "hip":
        return None
    return next((m.group(1) for t in x.texts or () if (m := HIP_HOST_RETURNED.search(t))), None)


# --- GPU data science outside the DL frameworks (round 57; tests/unit/test_triage_tune105.py) -------------------------------
# CatBoost's GPU trainer allocates everything from one pool it takes at start (gpu_ram_part of the card, 0.95 by default) and
# throws NCudaLib::TOutOfMemoryError from its stack-like pool when a block does not fit even after it defragments
# (catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h: "Error: Out of memory. Requested R MB; Free F MB", both
# figures in its MB of 1024 * 1024 bytes; the 0.7 releases print them without the unit, catboost/catboost#302)
CATBOOST_POOL = re.compile(r"Error: Out of memory\. Requested (\d{1,9}(?:\.\d{1,9})?)(?: MB)?; Free (\d{1,9}(?:\.\d{1,9})?)(?: MB)?")
# the same sentence quoted from "Requested" on (catboost/catboost#1081 quotes only "Requested 5696 MB; Free 3958.169335 MB", with
# the closing quote of the exception's what()): a line that is that sentence alone, its unit and its two figures as the pool
# prints them, is the pool's (round 59; a line with other words around it is not read)
CATBOOST_QUOTED = re.compile(r"^\W{0,3}Requested (\d{1,9}(?:\.\d{1,9})?) MB; Free (\d{1,9}(?:\.\d{1,9})?) MB\W{0,3}$")
# Faiss's GPU allocations (indexes' data, its scratch): before 1.4 an assertion ("Faiss assertion 'cudaMalloc(p, size) ==
# cudaSuccess' failed in ... allocMemorySpace ...; details: Failed to cudaMalloc N bytes"), in 1.5-1.6 a throw
# (gpu/utils/MemorySpace.cpp "failed to cudaMalloc %zu bytes (error %d %s)"; StandardGpuResources "... bytes on device %d (error
# %d %s)"), only error 2 (cudaErrorMemoryAllocation) being a shortage; from 1.7 StandardGpuResources's
# ("StandardGpuResources: alloc fail type T dev D space S stream P size N bytes (cudaMalloc error out of memory [2])")
# (facebookresearch/faiss gpu/utils/MemorySpace.cpp at 6880286 and 36ddba9; faiss/gpu/StandardGpuResources.cpp, GpuResources.cpp)
FAISS_ALLOC = re.compile(r"[Ff]ailed to cudaMalloc (\d{1,20}) bytes(?![^\n(]{0,24}\(error (?!2\b))"
                         r"|StandardGpuResources: alloc fail type (\w{1,40}) dev \d{1,3} space (\w{1,20}) stream \S{1,40} size (\d{1,20}) "
                         r"bytes \(cudaMalloc error out of memory")
# StandardGpuResources reserves scratch ("temporary") memory per device at its first use unless told otherwise: 512 MiB on a
# card of 4 GiB or less, 1 GiB up to 8 GiB, 1.5 GiB above (StandardGpuResources.cpp k4GiBTempMem, k8GiBTempMem, kMaxTempMem;
# noTempMemory() / setTempMemory() change it). The smallest of them bounds what is held aside on any card
FAISS_TEMP_MIN = 512 * MiB
# Gunrock's GRError ("[file, line @ gpu N] message (CUDA error E: text)", gunrock/util/error_utils.cu), here an Array1D's device
# allocation ("<array name> cudaMalloc failed", gunrock/util/array_utils.cuh): a graph array or frontier buffer sized from the graph
# and the enactor's queue-sizing factors (gunrock/gunrock#194)
GUNROCK_ALLOC = re.compile(r"\[[^\]\n]{1,300}?, \d{1,6} @ gpu \d{1,3}\] ([^\n]{0,200}?\bcudaMalloc(?:Managed)? failed)\.? "
                           r"\(CUDA error 2: out of memory\)")


def catboost_pool(line):
    if "Out of memory. Requested" in line:
        m = CATBOOST_POOL.search(line)
        if not m or ("NCudaLib" not in line and "memory_pool" not in line):
            return None
    elif "MB; Free " in line:
        m = CATBOOST_QUOTED.match(line.strip())
        if not m:
            return None
    else:
        return None
    return {"kind": "catboost.pool", "device_kind": "cuda", "runtime": "catboost", "complete": True,
            "numbers": {"requested": int(round(float(m.group(1)) * MiB)), "free": int(round(float(m.group(2)) * MiB))}}


catboost_pool.needed = ("Out of memory. Requested", "MB; Free ")

# The RAPIDS Accelerator for Apache Spark sizes its RMM pool at executor start from the card's TOTAL memory (GpuDeviceManager
# computeRmmInitSizes, 0.1 to 21.08: spark.rapids.memory.gpu.allocFraction x total, the maximum maxAllocFraction x total less
# the reserve) and warns before it allocates anything on the card: "Initial RMM allocation (X MB) is larger than free memory
# (F MB)"; the next line gives the pool and its maximum ("Initializing RMM ARENA initial size = X MB, max size = M MB on gpuId
# N") and the pool's allocation then fails. Its MB is MiB (toMB: bytes / 1024 / 1024) (NVIDIA/spark-rapids at 37327c8)
RAPIDS_RMM_INIT = re.compile(r"Initial RMM allocation \((\d{1,12}(?:\.\d{1,12})?) MB\) is larger than free memory "
                             r"\((\d{1,12}(?:\.\d{1,12})?) MB\)")
RAPIDS_RMM_MAX = re.compile(r"Initializing RMM\b[^\n]{0,60}? initial size = \d{1,12}(?:\.\d{1,12})? MB, max size = "
                            r"(\d{1,12}(?:\.\d{1,12})?) MB")


def rapids_rmm_init(line):
    if "larger than free memory" not in line:
        return None
    m = RAPIDS_RMM_INIT.search(line)
    if not m:
        return None
    pool, free = int(round(float(m.group(1)) * MiB)), int(round(float(m.group(2)) * MiB))
    if pool <= free:  # figures that contradict the sentence are not the plugin's warning: the generic reading takes the line
        return None
    return {"kind": "rapids.rmm_init", "device_kind": "cuda", "runtime": "rapids", "complete": True,
            "numbers": {"requested": pool, "free": free}}


rapids_rmm_init.needed = ("larger than free memory",)


def rapids_rmm_max(ev, text) -> bool:
    """The line under the plugin's warning: the pool's maximum (its limit)."""
    m = RAPIDS_RMM_MAX.search(text)
    if not m or "limit" in ev["numbers"]:
        return False
    ev["numbers"]["limit"] = int(round(float(m.group(1)) * MiB))
    return True


def faiss_alloc(line):
    if "cudaMalloc" not in line:
        return None
    m = FAISS_ALLOC.search(line)
    if not m:
        return None
    if m.group(1) and "faiss" not in line.lower():
        return None       # the bare words are any program's; Faiss's own forms name it (its assertion, faiss::gpu frames)
    temp = m.group(3) == "Temporary" or (m.group(2) or "").startswith("TemporaryMemory")
    return {"kind": "faiss.alloc", "device_kind": "cuda", "runtime": "faiss", "complete": True,
            "numbers": {"requested": int(m.group(1) or m.group(4))}, "form": "temp" if temp else "device"}


faiss_alloc.needed = ("cudaMalloc",)


def gunrock_alloc(line):
    if "@ gpu" not in line or "CUDA error 2" not in line:
        return None
    m = GUNROCK_ALLOC.search(line)
    if not m:
        return None
    return {"kind": "cuda.driver", "device_kind": "cuda", "numbers": {}, "runtime": "gunrock", "complete": True,
            "form": "runtime_call"}


gunrock_alloc.needed = ("@ gpu",)


# --- GPU simulation and clustering libraries (round 58; tests/unit/test_triage_tune107.py) --------------------------------
# GPU PhysX (Isaac Sim / Isaac Lab through Kit's omni.physx plugin, Isaac Gym, OmniIsaacGymEnvs) sizes its GPU buffers once,
# from the scene description (PxgDynamicsMemoryConfig, PxGpuDynamicsMemoryConfig from PhysX 5.2), and reports a buffer that
# overflowed with the capacity it needed, a COUNT of pairs, patches or contacts (a byte size only for the collision stack):
# "The application needs to increase PxgDynamicsMemoryConfig::<name> to <n> , otherwise, the simulation will miss
# interactions" (PxgAABBManager.cpp; Isaac Lab's docs quote "the application need to increase the ...::<name> parameter to
# <n>"), "PxGpuDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please increase its size to at least <n> in
# the scene desc! Contacts have been dropped.", "Patch buffer overflow detected, please increase its size to at least <n> in
# the scene desc!" (a count printed signed: past 2^31 it wraps negative), and the same sentence without the figure
# (isaac-sim/IsaacLab#1389, isaac-sim/OmniIsaacGymEnvs#3). Nothing is out of device memory: the buffer is full.
PHYSX_CAPACITY = re.compile(
    r"(?:needs? to increase (?:the )?|please increase )(?:Pxg|PxGpu)DynamicsMemoryConfig::(\w{1,60})(?: parameter)? to "
    r"(?:at least )?(-?\d{1,12})"
    r"|(?:(?:Pxg|PxGpu)DynamicsMemoryConfig::(\w{1,60})|\b(Patch|Contact|Force|GPU \w{1,40})) buffer overflow detected, "
    r"please increase its (?:size|capacity)(?: to at least (-?\d{1,12}))?")
# Isaac Lab's PhysxCfg field (and OmniIsaacGymEnvs' sim config key) for each PhysX name
PHYSX_SETTING = {"totalAggregatePairsCapacity": "gpu_total_aggregate_pairs_capacity",
                 "foundLostPairsCapacity": "gpu_found_lost_pairs_capacity",
                 "foundLostAggregatePairsCapacity": "gpu_found_lost_aggregate_pairs_capacity",
                 "collisionStackSize": "gpu_collision_stack_size", "Patch": "gpu_max_rigid_patch_count",
                 "Contact": "gpu_max_rigid_contact_count", "maxRigidPatchCount": "gpu_max_rigid_patch_count",
                 "maxRigidContactCount": "gpu_max_rigid_contact_count", "heapCapacity": "gpu_heap_capacity",
                 "tempBufferCapacity": "gpu_temp_buffer_capacity"}
# the program around PhysX, by its own mark on the line: Kit's plugin names itself ("[omni.physx.plugin]"), SAPIEN's logger
# prints its name ("[SAPIEN] [critical] ..."; ManiSkill's GPU simulation runs on SAPIEN) (round 59; mani-skill/ManiSkill#911)
PHYSX_HOSTS = (("omni.physx", "isaacsim"), ("[SAPIEN]", "sapien"))


def physx_setting(ev) -> str:
    """Where the named capacity is set, in the words of the program around PhysX: Isaac Lab's PhysxCfg field, or for SAPIEN
    ManiSkill's GPUMemoryConfig field (the same names without "gpu_"; ManiSkill hands them to SAPIEN's PhysX), or ""."""
    field = PHYSX_SETTING.get(ev["capacity"])
    if not field:
        return ""
    if ev.get("runtime") == "sapien":
        return f" (ManiSkill's GPUMemoryConfig.{field[4:]}, in the task's sim config)"
    return f" (Isaac Lab's PhysxCfg.{field})"


def physx_capacity(line):
    if "DynamicsMemoryConfig::" not in line and "overflow detected, please increase" not in line:
        return None
    m = PHYSX_CAPACITY.search(line)
    if not m:
        return None
    name = m.group(1) or m.group(3) or m.group(4)
    name = name[4:] if name.startswith("GPU ") else name
    figure = m.group(2) or m.group(5)
    ev = {"kind": "physx.capacity", "device_kind": "cuda", "numbers": {}, "complete": True,
          "runtime": next((rt for mark, rt in PHYSX_HOSTS if mark in line), "physx"), "capacity": name}
    if figure:
        n = int(figure)
        ev["capacity_needed"] = n + (1 << 32) if n < 0 else n      # a signed 32-bit count that wrapped
    return ev


physx_capacity.needed = ("DynamicsMemoryConfig::", "overflow detected, please increase")

# kmcuda (src-d/kmcuda, k-means and kNN on CUDA) checks each CUDA call (private.h CUCH: "<file>:<line> -> <cudaGetErrorString>")
# and says which buffer it could not allocate on the next line (CUMALLOC: "failed to allocate <n> bytes for <name>"); its
# Python binding then raises MemoryError("Failed to allocate memory on GPU") (python.cc set_cuda_malloc_error). The file is one
# of kmcuda's own sources (__FILE__, any build path before it) (src-d/kmcuda#21)
KMCUDA_CALL = re.compile(r"(?:^|[/\\\s])(?:kmcuda\.cc|kmeans\.cu|knn\.cu|transpose\.cu):\d{1,6} -> out of memory\s*$")
KMCUDA_PY = re.compile(r"(?:^|\s)MemoryError: Failed to allocate memory on GPU\s*$")
KMCUDA_BUFFER = re.compile(r"^\s*failed to allocate (\d{1,20}) bytes for (\S{1,80})\s*$")


def kmcuda_alloc(line):
    if " -> out of memory" not in line and "memory on GPU" not in line:
        return None
    call = KMCUDA_CALL.search(line)
    if not call and not KMCUDA_PY.search(line):
        return None
    return {"kind": "kmcuda.alloc", "device_kind": "cuda", "numbers": {}, "runtime": "kmcuda", "complete": True,
            "form": "call" if call else "python"}


kmcuda_alloc.needed = (" -> out of memory", "memory on GPU")


def kmcuda_buffer(ev, text) -> bool:
    """The line under kmcuda's failed CUDA call: the bytes and the buffer it could not allocate."""
    if ev.get("form") != "call" or "requested" in ev["numbers"]:
        return False
    m = KMCUDA_BUFFER.match(text)
    if not m:
        return False
    ev["numbers"]["requested"] = int(m.group(1))
    ev["buffer"] = m.group(2)
    return True

# cuDF's Java binding (the RAPIDS Accelerator for Apache Spark runs on it) rethrows a failed libcudf call as
# ai.rapids.cudf.CudfException with libcudf's text; a thrust algorithm's allocation under it reads "<algorithm> failed:
# cudaErrorMemoryAllocation: out of memory" (NVIDIA/cudf-spark#1533). RMM's allocator is the one that failed: runtime rapids
CUDF_JAVA = re.compile(r"\bai\.rapids\.cudf\.CudfException: [^\n]{0,200}?\bcudaErrorMemoryAllocation: out of memory")


def cudf_java(line):
    if "ai.rapids.cudf." not in line:
        return None
    if not CUDF_JAVA.search(line):
        return None
    return {"kind": "rmm.oom", "device_kind": "cuda", "numbers": {}, "runtime": "rapids", "complete": True, "form": "device"}


cudf_java.needed = ("ai.rapids.cudf.",)

# The RAPIDS Accelerator for Apache Spark's RMM event handler logs each device allocation RMM refused before it spills
# (DeviceMemoryEventHandler.onAllocFailure, NVIDIA/spark-rapids: "Device allocation of N bytes failed, device store has S
# bytes. Total RMM allocated is A bytes." until the 2024 spill-framework refactor, "Device allocation of N bytes failed.
# Device store spilled S bytes. ... Total RMM allocated is A bytes." since): RMM's pool, not the card, refused N; A is what
# the pool holds (NVIDIA/cudf-spark#4045)
SPARK_DEVICE_ALLOC = re.compile(r"\bDevice allocation of (\d{1,20}) bytes failed(?:, device store has (\d{1,20}) bytes\.|\. "
                                r"Device store spilled (\d{1,20}) bytes\.)[^\n]{0,40}? Total RMM allocated is (\d{1,20}) bytes")


def spark_device_alloc(line):
    if "Device allocation of " not in line:
        return None
    m = SPARK_DEVICE_ALLOC.search(line)
    if not m:
        return None
    return {"kind": "rmm.oom", "device_kind": "cuda", "runtime": "rapids", "complete": True, "form": "spark_spill",
            "numbers": {"requested": int(m.group(1)), "allocated": int(m.group(4))},
            "spillable": int(m.group(2) or m.group(3))}


spark_device_alloc.needed = ("Device allocation of ",)

# MLC LLM's engine checks its memory plan before it allocates anything (cpp/serve/config.cc, EstimateMemoryUsage...): "Insufficient
# GPU memory error: The available single GPU memory is A MB, which is less than the sum of model weight size (W MB) and temporary
# buffer size (T MB)." A is the card's memory times gpu_memory_utilization (default 0.85), W one shard's weights, T the
# prefill's working buffers (temporary buffer, KV auxiliary, model and logit-processor workspaces), set by the prefill chunk
# size; its MB is MiB (BytesToMegabytesString: bytes / 1024 / 1024) (mlc-ai/mlc-llm#3024)
MLC_INSUFFICIENT = re.compile(r"Insufficient GPU memory error: The available single GPU memory is (\d{1,12}(?:\.\d{1,6})?) MB, which "
                              r"is less than the sum of model weight size \((\d{1,12}(?:\.\d{1,6})?) MB\) and temporary buffer size "
                              r"\((\d{1,12}(?:\.\d{1,6})?) MB\)")


def mlc_insufficient(line):
    if "Insufficient GPU memory error" not in line:
        return None
    m = MLC_INSUFFICIENT.search(line)
    if not m:
        return None
    avail, weights, temp = (int(round(float(g) * MiB)) for g in m.groups())
    return {"kind": "mlc.insufficient", "device_kind": None, "runtime": "mlc-llm", "complete": True,
            "numbers": {"available": avail, "weights": weights, "temporary": temp}}


mlc_insufficient.needed = ("Insufficient GPU memory error",)

# ggml's CUDA backend built for HIP checks its virtual-memory calls with CU_CHECK, which vendors/hip.h defines as
# GGML_ABORT("HipVMM Failure: %s\n", hipGetErrorString(err)): the VMM pool (ggml_cuda_pool_vmm) that holds ggml's temporary
# compute buffers could not reserve or map memory through HIP's virtual memory management. The VMM pool became the default on
# ROCm with commit 5f0db95 (January 2025); on some ROCm installs every load then fails with "out of memory" whatever the model's size,
# and a build with -DGGML_CUDA_NO_VMM=ON (the legacy pool) loads the same models (ggml-org/llama.cpp#11405,
# YellowRoseCx/koboldcpp-rocm#105). The device is an AMD GPU: the message names HIP
HIP_VMM = re.compile(r"\bHipVMM Failure: (out of memory\b|[\w' -]{1,60})")


def hip_vmm(line):
    if "HipVMM Failure" not in line:
        return None
    m = HIP_VMM.search(line)
    if not m:
        return None
    err = m.group(1).strip()        # (hipGetErrorString's words; a pasted block may run on after them)
    return {"kind": "ggml.hip_vmm", "device_kind": "rocm", "numbers": {}, "runtime": "llama.cpp", "complete": True,
            "form": "oom" if err == "out of memory" else "fault", "error": err}


hip_vmm.needed = ("HipVMM Failure",)

# The JVM's own OutOfMemoryError for its heap (HotSpot: "Java heap space" when an object does not fit the heap, -Xmx; "GC
# overhead limit exceeded" when collections reclaim almost nothing): memory of the host process, capped by the heap's size,
# whatever the machine has free. A JVM deep-learning library (SKaiNET, DJL, Deeplearning4j) that builds a model's tensors on
# the heap fails this way on the CPU (SKaiNET-developers/SKaiNET#587). The program is named by its frames' packages
# (lines.RUNTIME_MARKERS); "java" otherwise (the JVM's one runtime id, as JavaCPP's cap is named). Other OutOfMemoryError
# texts (native memory, threads, a library's own) are not read here
JVM_HEAP = re.compile(r"\bjava\.lang\.OutOfMemoryError: (Java heap space|GC overhead limit exceeded)\b")


def jvm_heap(line):
    if "java.lang.OutOfMemoryError" not in line:
        return None
    m = JVM_HEAP.search(line)
    if not m:
        return None
    return {"kind": "jvm.heap", "device_kind": "cpu", "numbers": {}, "runtime": "java", "complete": True,
            "form": "heap" if m.group(1) == "Java heap space" else "gc_overhead"}


jvm_heap.needed = ("java.lang.OutOfMemoryError",)

# MediaTek's APUSys driver (the NPU's command memory on Genio/Dimensity boards, under the Neuron runtime and TFLite's Neuron
# delegate): "[apusys][error]memAlloc: alloc mem(...) fail(Cannot allocate memory)", then the command cannot be built
# ("APUSysEngine::BuildCmd() failed") and Neuron returns NEURON_BAD_STATE. The APU's memory is a fixed platform resource
# the command asked more of than it holds (genio-community.mediatek.com thread 629: a transformer on MDLA 3): the device is an
# NPU. The runtime is the one the log names (the Neuron delegate's "Neuron returned error" is TFLite's: lines.RUNTIME_MARKERS)
APUSYS_ALLOC = re.compile(r"\[apusys\]\[error\]\s?memAlloc: alloc mem\([^)\n]{0,80}\) fail\(Cannot allocate memory\)")


def apusys_alloc(line):
    if "[apusys]" not in line:
        return None
    if not APUSYS_ALLOC.search(line):
        return None
    return {"kind": "npu.apusys", "device_kind": "npu", "numbers": {}, "runtime": None, "complete": True}


apusys_alloc.needed = ("[apusys]",)

# (round 84) Huawei CANN's graph engine (its device allocator: "Call rtMalloc fail, purpose:%s, type = %u, size:%zu,
# device_id:%u", under "EL0004: Failed to allocate memory." and the runtime's "rtMalloc execute failed, reason=[driver error:out
# of memory]"): the Ascend NPU's driver refused one device allocation of size bytes. CANN runs torch_npu's operators, and
# MindSpore's: the runtime is the one the log's other lines name (read by parse._simple)
CANN_RTMALLOC = re.compile(r"\bCall rtMalloc fail, purpose: ?[^,\n]{0,80}, type = \d{1,4}, size: ?(\d{1,20}), device_id: ?(\d{1,4})")


# TensorFlow.js's WebGL backend (tfjs-backend-webgl, webgl_util.ts validateTextureSize): a tensor is stored in a texture, and
# one whose texture would be wider or taller than the browser's/GPU's MAX_TEXTURE_SIZE is refused before any memory is
# asked: "Requested texture size [6567x6567] greater than WebGL maximum on this browser / GPU [4096x4096]." A cap on one
# texture's sides (texels, not bytes), set by the platform, not a shortage of memory (round 64, tensorflow/tfjs#1686)
TFJS_TEXTURE = re.compile(r"Requested texture size \[(\d{1,9})x(\d{1,9})\] greater than WebGL maximum on this browser / GPU "
                          r"\[(\d{1,9})x(\d{1,9})\]")


def tfjs_texture(line):
    if "WebGL maximum" not in line:
        return None
    m = TFJS_TEXTURE.search(line)
    if not m:
        return None
    # the device is the browser's WebGL context (whatever GPU is under it): named so, not the CUDA default
    return {"kind": "tfjs.texture_size", "device_kind": "webgl", "numbers": {}, "runtime": "tfjs", "complete": True,
            "texture": (int(m.group(1)), int(m.group(2))), "max_texture": (int(m.group(3)), int(m.group(4)))}


tfjs_texture.needed = ("WebGL maximum",)

# PyTorch's DataLoader: a worker that died of SIGBUS (torch/utils/data/_utils/signal_handling.py: "DataLoader worker (pid N)
# is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your
# shared memory limit."; the worker's own handler: "ERROR: Unexpected bus error encountered in worker. This might be caused by
# insufficient shared memory (shm)."): workers hand batches to the main process through shared memory (/dev/shm, RAM-backed,
# 64 MB by default in a Docker container), and a page of it could not be backed (ultralytics/yolov3#1151): the host's
# (round 83) the same line quoted without its pid ("DataLoader worker killed by signal: Bus error"): PyTorch's words around it
DATALOADER_SHM = re.compile(r"DataLoader worker (?:\(pid:? ?\d{1,10}\) )?(?:is )?killed by signal: Bus error"
                            r"|Unexpected bus error encountered in worker\. This might be caused by insufficient shared memory")


def dataloader_shm(line):
    if "Bus error" not in line and "bus error" not in line:
        return None
    if not DATALOADER_SHM.search(line):
        return None
    return {"kind": "os.shm", "device_kind": "cpu", "numbers": {}, "runtime": "pytorch", "complete": True}


dataloader_shm.needed = ("Bus error", "bus error")

# (round 67) MNN's backends check each buffer they acquire in an op's constructor or resize and print the op's own name (its
# CUDA execution, e.g. source/backend/cuda/execution/LayerNormExecution.cu: MNN_ERROR("Out of memory when gamma is acquired in
# CudaLayerNorm.\n")): the buffer's name and the op's class, whose prefix is the backend (Cuda, CPU, Vulkan, Metal, OpenCL)
# (wangzhaode/mnn-llm#25: "Out of memory when gamma is acquired in CudaLayerNorm.", then "Can't run session because not resized")
MNN_ACQUIRE = re.compile(r"\bOut of memory when (\w{1,40}) is acquired in (Cuda|CPU|Vulkan|Metal|OpenCL)?(\w{1,60})")
MNN_DEVICE = {"Cuda": "cuda", "CPU": "cpu", "Vulkan": "vulkan", "Metal": "metal"}


def mnn_acquire(line):
    if "is acquired in" not in line:
        return None
    m = MNN_ACQUIRE.search(line)
    if not m:
        return None
    return {"kind": "mnn.acquire", "device_kind": MNN_DEVICE.get(m.group(2) or ""), "numbers": {}, "runtime": "mnn",
            "complete": True, "buffer": m.group(1), "op": (m.group(2) or "") + m.group(3)}


mnn_acquire.needed = ("is acquired in",)

# (round 67) V8's RangeError when an ArrayBuffer's backing store cannot be allocated (Chrome, Edge, Node, a browser worker:
# "Uncaught RangeError: Array buffer allocation failed", thrown by new ArrayBuffer / new Uint8Array): the page's or worker's
# own memory (a tab's heap cap, a few GB, or the machine's RAM), never the GPU's: a wasm model file read into one buffer
# (dmarcos/llama2.c-web#1), an upscaler's image buffers (xororz/web-realesrgan#7)
JS_ARRAY_BUFFER = re.compile(r"\bRangeError: Array buffer allocation failed\b|^\s*Array buffer allocation failed\s*$")


def js_array_buffer(line):
    if "Array buffer allocation failed" not in line:
        return None
    if not JS_ARRAY_BUFFER.search(line):
        return None
    # the JavaScript engine is what refused (a program on it whose own lines name it, llama2.c's worker, wins: env.MARKER_FIRST)
    return {"kind": "js.array_buffer", "device_kind": "cpu", "numbers": {}, "runtime": "javascript", "complete": True}


js_array_buffer.needed = ("Array buffer allocation failed",)

# the buffers of an MNN op that hold the layer's parameters (LayerNorm's gamma and beta, a convolution's or matmul's weight,
# filter and bias, a norm's scale, mean and variance): allocated once, while the model is set up, so they are the model's weights
MNN_PARAMS = ("gamma", "beta", "weight", "weights", "bias", "filter", "scale", "mean", "var", "variance", "kernel")


def mnn_parameter(x) -> bool:
    """MNN could not acquire one of an op's parameter buffers (MNN_PARAMS): the weights, not a working buffer."""
    return x.kind == "mnn.acquire" and x.ev.get("buffer", "").lower() in MNN_PARAMS

# (round 67) WebGPU's device loss as the browser reports it (Chrome/Dawn: "OperationError: Device lost during
# onSubmittedWorkDone (do not use this error for recovery ...)", GPUDevice.lost's "GPUDevice was lost"): the GPU process lost
# the device while work was queued. WebLLM's maintainers read it as too little GPU memory for the chosen model
# (mlc-ai/web-llm#387: a smaller model ran); a driver reset reads the same, so the cause stays a reading, not a fact. Dawn's
# backend is the OS's API (Vulkan on Linux and Android, Metal on macOS, D3D12 on Windows): engine maps the device kind by OS
# (review28) only WebGPU's own words: the promise the browser rejects (onSubmittedWorkDone, mapAsync) or Dawn's tail "(do not use
# this error for recovery"; any other word after "Device lost during" is a game's or an audio stack's own device ("Device lost
# during playback", D3D11's "Device lost during Present()"), not an in-browser model's GPU
WEBGPU_LOST = re.compile(r"\bDevice lost during (?:onSubmittedWorkDone|mapAsync)\b|\bDevice lost during \w{1,40} \(do not use this "
                         r"error for recovery|\bGPUDevice was lost\b")


def webgpu_lost(line):
    if "Device lost during" not in line and "GPUDevice was lost" not in line:
        return None
    if not WEBGPU_LOST.search(line):
        return None
    return {"kind": "webgpu.device_lost", "device_kind": "webgpu", "numbers": {}, "runtime": "webgpu", "complete": True}


webgpu_lost.needed = ("Device lost during", "GPUDevice was lost")

# (round 86) WebGPU's validation refusing one buffer over the adapter's per-buffer caps (Dawn, as Chrome and the runtimes
# that embed it print it): createBuffer's "Buffer size (N) exceeds the max buffer size limit (M)" (maxBufferSize) and a bind
# group's "Binding size (N) of [Buffer ...] is larger than the maximum storage buffer binding size (M)" (or uniform;
# maxStorageBufferBindingSize). A cap on one buffer or binding set by the adapter, not the device's memory running out (R5);
# the runtime is the one the log's other lines name (env.MARKER_FIRST), WebGPU itself when none does
WEBGPU_MAX_BUFFER = re.compile(r"\bBuffer size \((\d{1,20})\) exceeds the max buffer size limit \((\d{1,20})\)"
                               r"|\bBinding size \((\d{1,20})\) of \[[^\]\n]{0,200}\] is larger than the maximum (?:storage|uniform) "
                               r"buffer binding size \((\d{1,20})\)")

WEBGPU_DEVICE_BY_OS = {"linux": "vulkan", "darwin": "metal"}

# (round 74) Rockchip's NPU runtimes, RKNN (rknn-toolkit2's librknnrt, rknn-toolkit-lite) and RKLLM (rknn-llm's runtime, whose
# model loads go through the same RKNN layer and print its "E RKNN:" lines): the runtime's own refusals of NPU memory.
# "E RKNN: [time] failed to allocate handle, ret: -1, errno: 14, errstr: Bad address" is the RKNPU kernel driver refusing the
# buffer with the errno it returned (airockchip/rknn-llm#68: errno 14, EFAULT); "E/RKNN: failed to malloc npu memory!, size:
# 59187712, flags: 0x2" (Android's logcat) names the size asked (rockchip-linux/rknn-toolkit2#44); the Python toolkits raise
# "RKNN init failed. error code: RKNN_ERR_MALLOC_FAIL" (rockchip-linux/rknn-toolkit#400). The NPU has no memory of its own:
# it maps system RAM through its IOMMU, or a reserved region without one. The device is the NPU; the runtime is RKNN unless
# the log names RKLLM (lines.RUNTIME_MARKERS)
RKNN_ALLOC = re.compile(r"\bfailed to allocate handle, ret: -?\d{1,6}(?:, errno: (\d{1,4}), errstr: ([A-Za-z ]{1,40}))?"
                        r"|\bfailed to malloc npu memory!?,? size: (\d{1,20})|\bRKNN_ERR_MALLOC_FAIL\b")


def rknn_alloc(line):
    if "RKNN" not in line:
        return None
    m = RKNN_ALLOC.search(line)
    if not m:
        return None
    ev = {"kind": "npu.rknn", "device_kind": "npu", "numbers": {}, "runtime": "rknn", "complete": True,
          "form": "handle" if m.group(0).startswith("failed to allocate handle") else "malloc"}
    if m.group(1):
        ev.update(errno=int(m.group(1)), errstr=m.group(2).strip())
    if m.group(3):
        ev["numbers"]["requested"] = int(m.group(3))
    return ev


rknn_alloc.needed = ("RKNN",)


def rknn_errno_fault(x) -> bool:
    """The RKNPU driver refused the NPU buffer with an errno that is not ENOMEM (12): a fault of the driver or runtime
    (EFAULT, "Bad address": a runtime built for another driver version), not memory running out."""
    return x.kind == "npu.rknn" and x.ev.get("errno") not in (None, 12)

# (round 74) LMCache (the KV-cache offload layer under vLLM's LMCacheConnector, and SGLang's): its memory allocator found no
# free chunk in its own pool for one KV chunk (lmcache/v1/memory_management.py and the 0.2 experimental one: "Failed to
# allocate memory for tensor(torch.Size([2, 80, 256, 256]), torch.float16) because no memory is available"). The pool is
# LMCache's CPU tier, one buffer of max_local_cpu_size (pinned host memory) allocated at start, or a GDS backend's cuFile
# buffer: a fixed pool that is meant to evict old chunks, not the card and not the machine's free RAM (LMCache/LMCache#745,
# #1330). The device of the run is the card it serves from (the log's other lines); the runtime the one the log names
LMCACHE_ALLOC = re.compile(r"\bFailed to allocate memory for tensor\(torch\.Size\(\[[\d, ]{0,80}\]\), torch\.\w{1,20}\) because no "
                           r"memory is available\b")


def lmcache_alloc(line):
    if "because no memory is available" not in line:
        return None
    if not LMCACHE_ALLOC.search(line):
        return None
    return {"kind": "lmcache.pool", "device_kind": None, "numbers": {}, "runtime": None, "complete": True}


lmcache_alloc.needed = ("because no memory is available",)

# (round 74) PyTorch's CUDA check with "invalid argument" (cudaErrorInvalidValue): no shortage in its words. Read as a
# failure so that the call it came from can be named: under a source line that pins host memory itself (facts: pinned_src,
# torch.empty(..., pin_memory=True)), cudaHostAlloc refused the page-locked buffer (LMCache/LMCache#1063: a 5 GiB pinned
# buffer refused, 2 GiB allocated); elsewhere it is a call given a bad argument, not memory
CUDA_INVALID_ARG = re.compile(r"\bCUDA error: invalid argument\b")


def cuda_invalid_arg(line):
    if "invalid argument" not in line:
        return None
    if not CUDA_INVALID_ARG.search(line):
        return None
    return {"kind": "cuda.invalid_arg", "device_kind": "cuda", "numbers": {}, "runtime": "pytorch", "complete": True}


cuda_invalid_arg.needed = ("CUDA error: invalid argument",)
