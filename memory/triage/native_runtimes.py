"""Out-of-memory messages of programs that check their own HIP or CUDA calls and print them in their own form: AMReX's GPU
checks (WarpX, Nyx, Castro) and the HIP runtime's AMD_LOG_LEVEL trace, which a HIP program of its own shows (round 53;
tests/unit/test_triage_tune95.py). parse.py lists them among its recognisers, before PyTorch's reading of a bare
hipErrorOutOfMemory."""
import re


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
FAISS_TEMP_MIN = 512 * 1024 * 1024
# Gunrock's GRError ("[file, line @ gpu N] message (CUDA error E: text)", gunrock/util/error_utils.cu), here an Array1D's device
# allocation ("<array name> cudaMalloc failed", gunrock/util/array_utils.cuh): a graph array or frontier buffer sized from the graph
# and the enactor's queue-sizing factors (gunrock/gunrock#194)
GUNROCK_ALLOC = re.compile(r"\[[^\]\n]{1,300}?, \d{1,6} @ gpu \d{1,3}\] ([^\n]{0,200}?\bcudaMalloc(?:Managed)? failed)\.? "
                           r"\(CUDA error 2: out of memory\)")


def catboost_pool(line):
    if "Out of memory. Requested" not in line:
        return None
    m = CATBOOST_POOL.search(line)
    if not m or ("NCudaLib" not in line and "memory_pool" not in line):
        return None
    mib = 1024 * 1024
    return {"kind": "catboost.pool", "device_kind": "cuda", "runtime": "catboost", "complete": True,
            "numbers": {"requested": int(round(float(m.group(1)) * mib)), "free": int(round(float(m.group(2)) * mib))}}


catboost_pool.needed = ("Out of memory. Requested",)


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
