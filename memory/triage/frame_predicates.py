"""Predicates on the traceback's frames: where the failing code stood (a RAPIDS operation, a process pool's worker, a call
that only frees memory or waits for the device) says whose request failed. Re-exported by predicates.py, where rules
import them."""


# the innermost frame releases memory: torch.cuda.empty_cache() returns PyTorch's cached blocks to the driver (cudaFree)
RELEASE_FRAMES = ("empty_cache",)


# (round 73) the RAPIDS libraries whose operations allocate their working buffers through RMM (cuDF and dask_cudf's columns,
# cuGraph's renumbering and edge lists, cuML's estimators, cuSpatial), by the path of a traceback frame
RAPIDS_OP_PATHS = ("/cudf/", "/dask_cudf/", "/cugraph/", "/cuml/", "/cuspatial/")


def rapids_op_frame(x):
    """RMM refused while a RAPIDS library's operation was on the stack (not while a pool was being created or sized)."""
    return x.kind == "rmm.oom" and any(seg in "/" + p.replace("\\", "/") for p, _ in x.frames for seg in RAPIDS_OP_PATHS)


# (round 93) a traceback frame of a process pool's worker loop: concurrent.futures' ProcessPoolExecutor (process.py's _process_worker)
# or multiprocessing's Pool (pool.py's worker): the failing code ran in one of several worker processes
POOL_WORKER_FRAMES = (("concurrent/futures/process.py", "_process_worker"), ("multiprocessing/pool.py", "worker"))
# the runtimes that map most of a GPU's memory for their process at its first GPU op (TensorFlow's default, allow_growth off;
# JAX's preallocation, 75 %): several of their processes on one card leave the later ones what the first left
PREALLOCATING = ("tensorflow", "jax")


def pool_worker_prealloc(x):
    """An XLA-family refusal (TensorFlow, JAX) raised in a process pool's worker: the pool's other workers, each a process of a
    runtime that maps most of the card for itself, hold the memory."""
    return x.kind == "xla.oom" and x.env["runtime"] in PREALLOCATING and any(
        p.replace("\\", "/").endswith(path) and func == name for p, func in x.frames for path, name in POOL_WORKER_FRAMES)


def release_frame(x):
    """A driver-level CUDA out-of-memory raised where PyTorch frees memory: no request of its own failed there."""
    return x.kind == "cuda.driver" and bool(x.frames) and x.frames[-1][1] in RELEASE_FRAMES


# the innermost frame waits for a stream, an event or the device (torch.cuda Stream/Event.synchronize, torch.cuda.synchronize):
# a wait allocates nothing, so a CUDA error raised there is an earlier asynchronous call's, reported late
SYNC_FRAMES = ("synchronize",)


def async_named(x):
    """The log (or the host) names PyTorch's cudaMallocAsync backend: its message's kind, ComfyUI's "Device: ... :
    cudaMallocAsync" line, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, or the panel's own flag; not ComfyUI's default
    guessed where nothing says it."""
    return ("torch.cuda_async" in (x.kinds or ()) or x.f["allocator"] == "cudaMallocAsync"
            or "backend:cudaMallocAsync" in x.f["args"] or bool(x.ctx.get("cuda_malloc_async")))


def sync_frame(x):
    """A driver-level CUDA out-of-memory raised where PyTorch only waits for queued work: no request of its own failed there.
    Not under cudaMallocAsync: its allocations are stream-ordered (cudaMallocAsync is queued on the stream like a kernel), so a
    real shortage surfaces at the next synchronize, and the wait is where the request's failure shows."""
    return x.kind == "cuda.driver" and bool(x.frames) and x.frames[-1][1] in SYNC_FRAMES and not async_named(x)


# (fix67a, aud67b #5) the frames of a CUDA graph's capture: vLLM's runners' capture_model (v1 gpu_model_runner.py, V0
# model_runner.py) and PyTorch's torch.cuda.graph context (torch/cuda/graphs.py: capture_begin, capture_end)
CAPTURE_FUNCS = ("capture_model", "_capture_cudagraphs", "capture_begin", "capture_end")
# (fix67g, rev67b F2) torch.cuda.graph's own context methods (torch/cuda/graphs.py class graph: __enter__ calls
# capture_begin, __exit__ capture_end); that file's CUDAGraph.replay() runs a graph already captured: no capture
GRAPH_CONTEXT = ("__enter__", "__exit__")


def capture_frame(x):
    """A frame of the traceback is a CUDA graph's capture: a capture function, or torch.cuda.graph's __enter__/__exit__."""
    return next((func for p, func in x.frames if func in CAPTURE_FUNCS
                 or (func in GRAPH_CONTEXT and p.replace("\\", "/").endswith("torch/cuda/graphs.py"))), None)


def kv_cache_sized(x):
    """vLLM printed its KV cache's size ("Available KV cache memory", V0's "reserved for KV Cache", "GPU KV cache size")
    before the failure and after its run's `vllm serve` line ((fix67g, rev67b F1) vllm_run.sized_before: a retry's cache
    after a capture inside the profile is not this run's)."""
    from .vllm_run import sized_before
    return sized_before(x.f, x.line)
