"""Triage after batches 172, 173, 174 and 175 (round 73): NCCL's own device allocation failing ("Cuda failure 2 'out of
memory'"), RMM's pool reaching its maximum inside a RAPIDS operation, RMM's cudaMalloc refusal with its size, XGBoost's
device allocator with its free and requested figures, and a vLLM traceback cut inside the start-up memory profiling.
Hosts, pids, paths, sizes and timestamps made up (modelled on EleutherAI/lm-evaluation-harness#2458, rapidsai/cugraph#2769,
scverse/rapids-singlecell#631, dmlc/xgboost#11684, OpenBMB/MiniCPM-V#392); expected values by hand."""
from gpu_garden.memory.triage import engine
from support.triage_event import top

GiB = 1 << 30

# --- NCCL's cudaMalloc outside the framework's pool -----------------------------------------------------------------------
NCCL_ALONE = "node7:41822:41990 [3] include/alloc.h:125 NCCL WARN Cuda failure 2 'out of memory'\n"


def test_nccl_alloc_failure_reads_as_the_jobs_working_memory():
    """Before round 73 the NCCL row named other while its remedy was a smaller batch. NCCL's buffers are allocated outside
    the framework's pool, lazily at the first collective: the job's own cached batches left it no room (activations)."""
    cause, causes, ev = top(NCCL_ALONE)
    assert (ev["runtime"], ev["device_kind"], cause) == ("pytorch", "cuda", "activations"), causes
    assert "NCCL could not allocate" in ev["causes"][0]["evidence"][0]


# --- RMM: the pool's maximum reached inside an operation, and its cudaMalloc refusal with the size --------------------------
RMM_POOL_IN_OP = (
    "Traceback (most recent call last):\n"
    "  File \"/srv/jobs/build_graph.py\", line 14, in <module>\n"
    "    G.from_dask_cudf_edgelist(edges, source=\"src\", destination=\"dst\")\n"
    "  File \"/opt/rapids/lib/python3.10/site-packages/cugraph/structure/graph_classes.py\", line 309, in from_dask_cudf_edgelist\n"
    "    self._Impl._simpleDistributedGraphImpl__from_edgelist(\n"
    "  File \"/opt/rapids/lib/python3.10/site-packages/cugraph/structure/number_map.py\", line 512, in renumber\n"
    "    renumber_map = NumberMap(...)\n"
    "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/rapids/include/rmm/mr/device/pool_memory_resource.hpp:196: "
    "Maximum pool size exceeded\n")
RMM_POOL_AT_SETUP = (
    "distributed.utils - ERROR - std::bad_alloc: out_of_memory: RMM failure at:/opt/rapids/include/rmm/mr/device/"
    "pool_memory_resource.hpp:196: Maximum pool size exceeded\n"
    "Traceback (most recent call last):\n"
    "  File \"/opt/rapids/lib/python3.10/site-packages/distributed/worker.py\", line 3102, in plugin_add\n"
    "    result = plugin.setup(worker=self)\n"
    "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/rapids/include/rmm/mr/device/pool_memory_resource.hpp:196: "
    "Maximum pool size exceeded\n")
RMM_SIZED = ("MemoryError: std::bad_alloc: out_of_memory: CUDA error (failed to allocate 51539607552 bytes) at: "
             "/opt/rapids/include/rmm/mr/device/cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory\n")


def test_rmm_pool_limit_inside_a_rapids_operation_is_its_working_set():
    """Before round 73 every "Maximum pool size exceeded" read as other (the pool's maximum). With a cuGraph frame on the
    stack, that operation's buffers filled the pool: activations leads, the pool-maximum reading stays second."""
    cause, causes, ev = top(RMM_POOL_IN_OP)
    assert (ev["runtime"], ev["device_kind"], cause) == ("rapids", "cuda", "activations"), causes
    assert causes.get("other", 0) > 0, causes
    assert "renumber()" in ev["causes"][0]["evidence"][0]


def test_rmm_pool_limit_at_worker_setup_stays_the_pool_maximum():
    """No cuDF/cuGraph/cuML frame (a Dask worker's plugin creating the pool): the pool's maximum, other, as before."""
    cause, causes, ev = top(RMM_POOL_AT_SETUP)
    assert (ev["runtime"], cause) == ("rapids", "other"), causes


def test_rmm_cuda_error_names_its_size_and_is_the_gpu():
    """Before round 73 RMM's "CUDA error (failed to allocate N bytes)" form read as a host MemoryError (host-ram, cpu)."""
    cause, causes, ev = top(RMM_SIZED)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("rmm.oom", "rapids", "cuda"), ev
    assert ev["numbers"]["requested"] == 51539607552
    assert cause == "activations", causes


def test_rmm_cuda_error_wrapped_by_reticulate():
    """R's reticulate wraps the message after "at: C": the size is read from the first line all the same."""
    text = ("Error in py_call_impl(callable, call_args$unnamed, call_args$named) :\n"
            "  MemoryError: std::bad_alloc: out_of_memory: CUDA error (failed to allocate 21474836480 bytes) at: C\n"
            "CudaErrorMemoryAllocation out of memory\n")
    cause, causes, ev = top(text)
    assert (ev["runtime"], ev["device_kind"], ev["numbers"].get("requested")) == ("rapids", "cuda", 20 * GiB), ev


# --- XGBoost's device allocator -------------------------------------------------------------------------------------------
XGB_ESCAPED = ("Exception: \"XGBoostError('[09:02:41] /workspace/src/common/device_vector.cu:23: Memory allocation error on "
               "worker 1: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\\\\n- Free memory: 10.5GB\\\\n- Requested "
               "memory: 12.25GB\\\\n\\\\nStack trace:\\\\n  [bt] (0) /opt/env/lib/libxgboost.so(+0x2a6e7c) [0x7f00aa6e7c]')\"\n")
XGB_LINES = ("xgboost.core.XGBoostError: [09:02:41] /workspace/src/common/device_vector.cu:23: Memory allocation error on "
             "worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n"
             "- Free memory: 812.5MB\n"
             "- Requested memory: 2GB\n")


def test_xgboost_alloc_escaped_in_one_line():
    """Before round 73 XGBoost's message read as thrust's (PyTorch, a driver error: other). Its own figures are read (GB of
    1024 MB), the runtime is xgboost, and a request over what is free is the training run's buffers: activations."""
    cause, causes, ev = top(XGB_ESCAPED)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("xgboost.alloc", "xgboost", "cuda"), ev
    assert ev["numbers"] == {"free": int(10.5 * GiB), "requested": int(12.25 * GiB)}, ev["numbers"]
    assert cause == "activations", causes
    assert "max_cached_hist_node" in ev["causes"][0]["evidence"][0]
    assert ev["guide"]["id"] == "xgboost"


def test_xgboost_alloc_figures_on_their_own_lines():
    cause, causes, ev = top(XGB_LINES)
    assert ev["numbers"] == {"free": int(812.5 * (1 << 20)), "requested": 2 * GiB}, ev["numbers"]
    assert cause == "activations", causes


def test_thrust_bad_alloc_without_xgboost_stays_pytorch():
    """thrust's bare message (a PyTorch extension's rasterizer) is not XGBoost's."""
    res = engine.triage_text("RuntimeError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n")
    assert res["events"][-1]["runtime"] == "pytorch", res["events"][-1]


# --- vLLM: a traceback cut inside the start-up profiling ------------------------------------------------------------------
def _vllm_trace(last_frames):
    return ("Traceback (most recent call last):\n"
            "  File \"/opt/vllm/lib/python3.11/site-packages/vllm/engine/llm_engine.py\", line 276, in __init__\n"
            "    self._initialize_kv_caches()\n" + last_frames)


VLLM_CUT_SOURCE = _vllm_trace(
    "  File \"/opt/vllm/lib/python3.11/site-packages/vllm/engine/llm_engine.py\", line 375, in _initialize_kv_caches\n"
    "    self.model_executor.determine_num_available_blocks())\n")
VLLM_CUT_FRAME = _vllm_trace(
    "  File \"/opt/vllm/lib/python3.11/site-packages/vllm/worker/worker.py\", line 229, in determine_num_available_blocks\n"
    "    self.model_runner.profile_run()\n"
    "  File \"/opt/vllm/lib/python3.11/site-packages/vllm/worker/model_runner.py\", line 1302, in profile_run\n"
    "    self.execute_model(model_input, kv_caches, intermediate_tensors)\n")
VLLM_CUT_ELSEWHERE = _vllm_trace(
    "  File \"/opt/vllm/lib/python3.11/site-packages/vllm/engine/llm_engine.py\", line 380, in _initialize_kv_caches\n"
    "    self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)\n")


def test_vllm_traceback_cut_in_profiling_is_the_profile_run():
    """Before round 73 a paste ending in these frames (no exception line) was "no failure found". The profile run over
    dummy inputs at max_num_seqs is that step's peak: activations, vLLM, cuda, with the profile-run guide."""
    for text in (VLLM_CUT_SOURCE, VLLM_CUT_FRAME):
        cause, causes, ev = top(text)
        assert (ev["kind"], ev["runtime"], ev["device_kind"], cause) == ("vllm.profile_cut", "vllm", "cuda", "activations"), causes
        assert ev["guide"]["id"] == "vllm-profile-run"
        assert "--max-num-seqs" in ev["causes"][0]["evidence"][0]


def test_vllm_traceback_cut_elsewhere_is_no_failure():
    """A cut traceback whose last call is not the profiling (here the KV cache's own allocation) is not guessed at."""
    assert not engine.triage_text(VLLM_CUT_ELSEWHERE)["found"]


def test_vllm_profile_frames_with_an_exception_keep_the_exception():
    """With its exception line the log is read from that line, as before (no profile_cut event beside it)."""
    text = VLLM_CUT_FRAME + ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.52 GiB. GPU 0 has a total "
                             "capacity of 47.50 GiB of which 1.20 GiB is free.\n")
    res = engine.triage_text(text)
    assert res["found"] and res["cause"] is not None
    assert all(e["kind"] != "vllm.profile_cut" for e in res["events"]), res["events"]
