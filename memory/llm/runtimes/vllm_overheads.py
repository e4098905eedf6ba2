"""vLLM's version-dependent overheads beside the weights, the KV pool and the activation peak: the memory outside
PyTorch its profile run leaves (non_torch: cuBLAS/NCCL workspaces, NCCL's NVLS buffers with tensor parallelism on an
NVSwitch Hopper/Blackwell system) and its CUDA graphs (graph_memory by the largest captured batch, and the minimal KV
cache V1 allocates to measure them, graph_profile_*). Split from vllm.py, which keeps the reservation arithmetic
(evaluate: where each term sits, inside or outside --gpu-memory-utilization)."""
import re

from ...units import GiB, MiB
from ..cache import BLOCK, XPU_GDN_BLOCK, vllm_layout
from . import at_least
from .vllm_loader import HOPPER

NON_TORCH_V06 = int(0.35 * GiB)
NON_TORCH = int(0.06 * GiB)
# with tensor parallelism each worker also holds its NCCL communicator's buffers (allocated outside PyTorch, so
# profiled as non-torch memory): a V0 worker of vllm#13061 (TP 2 on two 4090s, 0.7.2) prints
# "non_torch_memory takes 0.25GiB", vllm#14447's TP 16 workers on 3090s (0.8.3) 0.20GiB; dennislee22's TP 2 / TP 4
# A100 runs (0.10.1) leave 0.21 / 0.32 GiB less KV memory than 0.06 would
NON_TORCH_TP = int(0.25 * GiB)
# Hopper cards leave more: a single-GPU H100 profile prints 0.13-0.14 GiB of non-torch memory in 0.11 (llm-d's H100
# rows) and 0.16 in a 0.7.2 V0 log (vllm#13109); in 0.19.0 every single-GPU H100 run of llm-d-planner's sweep prints
# "non-torch forward increase memory" 0.24-0.27 GiB (25 runs; its pipeline stage 0, without the head and the
# sampler, 0.07: the increase belongs to the last stage)
NON_TORCH_HOPPER = int(0.14 * GiB)
NON_TORCH_HOPPER_019 = int(0.25 * GiB)
NON_TORCH_HOPPER_FROM = (0, 19)  # first seen in 0.19: no log read from 0.12-0.18 shows it (a gate by observation)
# Tensor parallelism on an NVSwitch system of Hopper or Blackwell GPUs (H100/H200/H800/H20 SXM, B200): NCCL sets up
# NVLink SHARP (NVLS) multicast buffers on every GPU ("NCCL INFO NVLS comm ... nvlsTotalSize 2415919104",
# vllm-project/vllm#9699 on H200s; NVIDIA's own launchers set NCCL_NVLS_ENABLE=0 "for memory saving"). vLLM 0.19.0
# on H100 80GB HBM3 prints 2.06-2.11 GiB of non-torch forward memory at TP 2 and 2.13-2.21 at TP 4 (llm-d-planner,
# 10 runs, 7B to 72B: it does not grow with the model); vllm#21348 (0.9.2, TP 4 on H100s) left 2.2 GiB less KV
# memory than the 0.25 above gives. A100s (no NVLS) and PCIe / NVL cards (no NVSwitch) keep NON_TORCH_TP.
NON_TORCH_NVLS = int(2.1 * GiB)
NVLS_GPU = re.compile(r"\b(h100|h200|h800|h20|gh200|b100|b200|gb200|b300|gb300)\b", re.I)
NO_NVSWITCH = re.compile(r"pcie|\bnvl\b", re.I)
# The card's name cannot tell the board: an H100/H200 SXM sits on an NVSwitch board in 8-GPU HGX/DGX systems (the
# name-based default), but a 4-GPU HGX board links its GPUs directly (no NVSwitch, no NVLS), and NCCL_NVLS_ENABLE=0
# turns the buffers off. The `nccl_nvls` knob ("on" / "off") says which; None keeps the name-based default.
NVLS_SETTINGS = {"on": True, "off": False, "auto": None}
CUDA_GRAPHS = 512 * MiB       # at the default capture list; "Graph capturing finished ... took 0.3-1 GiB"; 0 eager
# CUDA graph memory by the largest batch captured (graph_memory). What the capture holds is not derived from the
# model: the figures the rows print spread 0.04-2.24 GiB with no relation to the layers or the width that holds
# across them (Qwen3-8B: 2.24 GiB in 0.9.2, 0.84 in an October 2025 V1, vLLM 0.21's own estimate 0.52; Qwen2.5-7B
# at TP 2 on 0.10.1.1: 0.65 on A100 80GB, 1.00 on A100 40GB; Qwen3-0.6B 0.10), while vLLM's estimate at the default
# capture list stays at 0.48-0.52 GiB for 3.8B to 8B models (the figure that enters the pool from 0.21). Only the
# capture list is taken from the source, by engine and version:
#   V0 (worker/model_runner via VllmConfig): [1, 2, 4, 8, 16, ...] up to the first size >= max_num_seqs (up to 8192);
#      graphs grow with it past 256: Unsloth's V0 runs of one model print 0.35 / 0.40 / 0.55 / 0.60 GiB at 160 /
#      192 / 288 / 320 sequences. Before 0.6 the list stopped at 256 (model_runner.py _BATCH_SIZES_TO_CAPTURE =
#      [1, 2, 4] + [8 * i for i in range(1, 33)] in the 0.4.3 and 0.5.5 sdists; range(1, 1025) with
#      _get_max_graph_batch_size(max_num_seqs) in 0.6.0, 0.6.3 and 0.6.4): V0_CAPTURE_GROWS
#   V1 0.8-0.9: [1, 2, 4] + multiples of 8 up to 512 whatever max_num_seqs (0.9.2 cuda_graph_sizes default [512])
#   V1 from 0.10: up to min(2 x max_num_seqs x (1 + speculative tokens), 512) (scheduler cuda_graph_sizes default,
#      then compilation max_cudagraph_capture_size); both V1 lists cut at max_num_batched_tokens
# V1's first capture holds memory whatever the batch (0.21's profile_cudagraph_memory: the first capture of each mode
# in full, then one per-graph figure for the rest): vLLM's estimate prints 0.13 / 0.14 GiB at 32 sequences
# (Gemma-4-26B-A4B, 0.25.1), 0.08 and 0.39 GiB for Qwen3.6-27B at few sequences; GRAPH_BASE is the low end
CAPTURE_MAX = 256             # V0: the default 256 sequences give CUDA_GRAPHS
V0_CAPTURE_GROWS = (0, 6)     # V0 captures past CAPTURE_MAX sequences from 0.6.0 (0.5.5 last read with 256)
CAPTURE_BY_SEQS = (0, 10)
GRAPH_BASE = 80 * MiB
# Intel XPU captures no graphs by default: platforms/xpu.py asserts cudagraph_mode NONE in 0.10.1 and 0.11.0; 0.17.1
# captures them when torch >= 2.11 (supports_xpu_graph); 0.19.1 and 0.21.0 only with VLLM_XPU_ENABLE_XPU_GRAPH=1
# (off by default). 0.12-0.16 and 0.18 not read: taken as their neighbours
XPU_GRAPHS = ((0, 17), (0, 19))
# Before it sizes the pool, V1 measures its CUDA graphs (gpu_worker determine_available_memory ->
# gpu_model_runner.profile_cudagraph_memory, whenever graphs are on; VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS only
# decides whether the estimate is subtracted). To capture them it first allocates a minimal KV cache
# (_init_minimal_kv_cache_for_profiling: num_gpu_blocks_override = min_blocks, every tensor of the real layout) in
# whatever memory the weights left, outside --gpu-memory-utilization. min_blocks was the largest capture size
# (max_cudagraph_capture_size = min(max_num_seqs x (1 + speculative tokens) x 2, 512)); later
# min(max_num_reqs, that) ("at least one block per sequence is required to capture the graphs"). A hybrid model's
# block is a whole state page (Qwen3.8-27B: 3 MiB x 16 tensors), so 256 blocks take 12 GiB: the recipes' 1x5090
# NVFP4 run dies allocating 784 MiB (256 x 3.0625 MiB, one tensor) at 0.80 and 0.93 alike; Qwen3.5-9B on an L4
# (0.18.0) "Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512", then 1.03 GiB (512 x 2.06 MiB) asked.
# Gates by observation: 0.18.0 prints the first form, 0.26.1rc1 the second; earlier and in between not read.
GRAPH_PROFILE_CACHE = (0, 18)
GRAPH_PROFILE_PER_SEQ = (0, 26)
CAPTURE_SIZE_MAX = 512


def nvls_assumed(gpu_name) -> bool:
    """True when the card's name is one NCCL's NVLS buffers are assumed for (an NVSwitch-class SXM card)."""
    name = str(gpu_name or "")
    return bool(NVLS_GPU.search(name) and not NO_NVSWITCH.search(name))


def non_torch(version, tp: int, gpu_name=None, last_stage: bool = True, nvls=None) -> int:
    """Memory outside PyTorch the profile run leaves (cuBLAS/NCCL workspaces), by version, card and parallelism;
    `nvls` True/False says whether NCCL sets up its NVLS buffers (None: from the card's name)."""
    if not at_least(version, 0, 7):
        return NON_TORCH_V06
    name = str(gpu_name or "")
    if tp > 1:
        return NON_TORCH_NVLS if (nvls_assumed(name) if nvls is None else nvls) else NON_TORCH_TP
    if HOPPER.search(name) and last_stage:
        return NON_TORCH_HOPPER_019 if at_least(version, *NON_TORCH_HOPPER_FROM) else NON_TORCH_HOPPER
    return NON_TORCH


def capture_size(s) -> int:
    """The largest batch (tokens) this engine and version capture a CUDA graph for (see CAPTURE_BY_SEQS)."""
    seqs = max(int(s["max_seqs"]), 1)
    if not s["v1"]:
        top = 8192 if at_least(s["version"], *V0_CAPTURE_GROWS) else CAPTURE_MAX
        return next(x for x in (1, 2, 4) if x >= seqs) if seqs <= 4 else min(-(-seqs // 8) * 8, top)
    top = CAPTURE_SIZE_MAX
    if at_least(s["version"], *CAPTURE_BY_SEQS):
        top = min(2 * seqs * (1 + s.get("spec_tokens", 0)), CAPTURE_SIZE_MAX)
    return max(min(top, s.get("max_batched") or top), 1)


def graph_memory(s) -> int:
    """CUDA graph memory: 512 MiB at vLLM's default capture list (the 0.3-1 GiB logs print), scaled by the largest
    captured batch; V1 keeps GRAPH_BASE at any batch, V0 falls to a floor of 32 MiB for one sequence."""
    v = s["version"]
    if s["enforce_eager"] or (s.get("xpu") and not (at_least(v, *XPU_GRAPHS[0]) and not at_least(v, *XPU_GRAPHS[1]))):
        return 0
    if s.get("graph_given") is not None:  # the figure vLLM printed (--cuda-graph-gib): its estimate or its capture
        return int(s["graph_given"])
    size = capture_size(s)
    if not s["v1"]:
        return int(max(32 * MiB, CUDA_GRAPHS * size / CAPTURE_MAX))
    return int(GRAPH_BASE + (CUDA_GRAPHS - GRAPH_BASE) * size / CAPTURE_SIZE_MAX)


# vLLM's custom all-reduce serves at most two PCIe-only GPUs (its custom_all_reduce.py logs "Custom allreduce is
# disabled because it's not supported on more than two PCIe-only GPUs"); past that the CUDA graphs capture NCCL's
# all-reduce, which takes more graph memory (vllm#2192, the custom all-reduce's PR, measured less memory with it and gave
# as the likely reason "NCCL's internal buffer is captured in the graph"), by driver and topology: 3.8 GiB against 1.1 a
# GPU on L4 / A10G under CUDA 12.2-12.3 and 12.4 drivers (vllm#5517). Not derived from the model, so not estimated: the plan says so unless the figure is given
# (--cuda-graph-gib) or the card's name says NVLink (an SXM / NVSwitch / NVLink board). On ROCm the same check asks
# whether every pair is one XGMI hop apart (vLLM's RocmPlatform.is_fully_connected): the Instinct MI300-series OAM boards
# (MI300X, MI300A, MI308X, MI325X, MI350X, MI355X) link each GPU to every other, so the custom all-reduce stays on there
CUSTOM_ALLREDUCE_PCIE_MAX = 2
NVLINK_BOARD = re.compile(r"sxm|nvlink|\b[dh]gx\b|\bmi3\d\d", re.I)


def nccl_graphs_unsized(s) -> bool:
    """CUDA graphs captured over more GPUs than the custom all-reduce serves without NVLink (XGMI on ROCm), their size not
    given."""
    return (graph_memory(s) > 0 and s.get("graph_given") is None and s.get("tp", 1) > CUSTOM_ALLREDUCE_PCIE_MAX
            and not nvls_assumed(s.get("gpu_name")) and not NVLINK_BOARD.search(str(s.get("gpu_name") or "")))


def graph_profile_blocks(s) -> int:
    """Blocks of the minimal KV cache V1 allocates to measure its CUDA graphs (0: no graphs, or a version before)."""
    if s["enforce_eager"] or not s["v1"] or not at_least(s["version"], *GRAPH_PROFILE_CACHE):
        return 0
    capture = min(s["max_seqs"] * (1 + s.get("spec_tokens", 0)) * 2, CAPTURE_SIZE_MAX)
    return min(s["max_seqs"], capture) if at_least(s["version"], *GRAPH_PROFILE_PER_SEQ) else capture


def graph_profile_seqs(s, fit: int) -> int:
    """The most sequences (up to s["max_seqs"]) whose profiling cache takes at most `fit` blocks; 0: not one."""
    lo, hi = 0, s["max_seqs"]
    while lo < hi:  # graph_profile_blocks grows with max_seqs
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if graph_profile_blocks(dict(s, max_seqs=mid)) <= fit else (lo, mid - 1)
    return lo


def graph_profile_bytes(kv_spec, kv, layout, s, per_token: int) -> int:
    """Bytes of that cache: the blocks x every tensor's page (a hybrid layout), else blocks x 16 tokens."""
    blocks = graph_profile_blocks(s)
    lay = vllm_layout(kv_spec, kv, layout, XPU_GDN_BLOCK if s.get("xpu") else BLOCK) if blocks else None
    return blocks * (lay["size"] * lay["page"] if lay else BLOCK * per_token)


# Which start the pool is: a later one, whose torch.compile graphs come from the cache. V1 compiles the model on its
# first forward, which is the profile run inside memory_profiling (vLLM 0.20.2 gpu_worker.determine_available_memory;
# its --kv-cache-memory branch: "still need a profile run which compiles the model for max_num_batched_tokens").
# CompilerManager.compile (compilation/backends.py) loads each graph from VLLM_CACHE_ROOT/torch_compile_cache/<hash>
# ("Directly load the compiled graph(s) ... from the cache") and compiles only on a miss ("Compiling a graph for
# compile range ... takes"), in the same process (env_override.py: TORCHINDUCTOR_COMPILE_THREADS=1); Inductor's and
# Triton's caches sit in that folder (compiler_interface.py initialize_cache), Triton's autotuning results too
# (env_override.py: TRITON_CACHE_AUTOTUNING=1). So on a first start what compiling and autotuning hold counts as
# activation peak (allocated_bytes.all.peak) and as non-torch memory (mem_get_info's used - torch reserved), and the
# pool is smaller. --enforce-eager turns torch.compile off (config/vllm.py: "Enforce eager set, disabling
# torch.compile and CUDAGraphs"); VLLM_DISABLE_COMPILE_CACHE=1 makes every start a first one. No source line sizes the
# difference; the pairs of starts read (first, later, of one command on one card): Qwen2.5-7B on a 3090, 5.82 / 6.28
# GiB (rows ...-coldcompile / ...-warmcache); glyd's 0.30.0 rows, 0.79-1.63 GiB by their token counts; gpt-oss-20b on
# an RTX PRO 4000 Blackwell, 285,284 / 399,082 tokens (1.39 GiB) on 0.28.0 and 264,060 / 379,778 (1.41) on 0.29.0;
# Qwen3-32B-AWQ's cold and warm boots 2.55 GiB (docs/kv-accuracy.md round 73). V0 is not noted (its compile not read).
COLD_COMPILE_NOTE = ("the KV pool is a later start's: a first start of this configuration compiles the model "
                     "(torch.compile, Triton's autotuning) inside vLLM's memory profile and leaves less for the cache "
                     "(0.5-2.6 GiB in the runs read); later starts load it from ~/.cache/vllm/torch_compile_cache "
                     "(VLLM_CACHE_ROOT): keep that folder across container restarts")


def compiles_in_profile(s) -> bool:
    """V1 with torch.compile on (no --enforce-eager): its first start compiles inside the memory profile."""
    return s["v1"] and not s["enforce_eager"]
