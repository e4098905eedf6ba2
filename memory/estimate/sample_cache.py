"""What PyTorch's caching allocator keeps reserved beyond what a sampling step allocates: each block frees and
reallocates temporaries of changing sizes, so the native allocator (c10/cuda/CUDACachingAllocator.cpp) ends a
forward holding segments it no longer uses. Cached, not live: PyTorch frees cached blocks and retries before it
reports an out-of-memory error, so this goes into peak_device (max_memory_reserved, nvidia-smi) and not into the
peak the verdict uses, as the Wan decode's cached slack (vae.WAN_DECODE_CACHED) does.

SAMPLE_CACHED: the tracer's caching-allocator model of ComfyUI 0.8.0's real forward (memory/trace/allocator.py on
meta tensors, torch 2.x CPU build): the forward's own excess, (reserved_peak - allocated_peak) less what the weights'
packing into segments already left reserved after loading (allocator.replay forward_excess), over the traced
activations, pooled over the FIT sample traces of benchmarks/bench_estimate.py (`gpu-garden trace --comfyui DIR
--family F --width W --height H [--frames N] --json`, its allocator.forward_excess / activations):
  sd1    512x512 and 1024x1024 (13,766,144 + 63,507,968 over 137,227,536 + 546,762,000 B), math 512x512 (3,280,384 /
         1,137,569,040)
  sdxl   1024x1024 (161,857,024 / 333,020,432)
  sd3    512x512 and 1024x1024 (42,664,960 + 195,904,512 over 202,291,216 + 752,007,184)
  flux1  1024x1024 (422,178,816 / 388,893,194), math (862,056,448 / 2,180,385,290)
  wan21  832x480x33 (379,571,200 / 1,322,317,840)   wan22  1280x704x41 (501,406,720 / 1,538,289,680)
(flash attention; the second figure: --attention math). Read from the trace, never fitted to a measured row; the
held-out traces of the benchmark check them (bench_estimate.sample_cached_rows). Families without a trace keep the
flat margin (spec.FRAGMENTATION) alone.
"""
from .spec import FRAGMENTATION

# family -> (flash, math): reserved beyond allocated over the sampling activations
SAMPLE_CACHED = {
    "sd1": (0.113, 0.003),
    "sdxl": (0.486, None),
    "sd3": (0.250, None),
    "flux1": (1.086, 0.395),
    "wan21": (0.287, None),
    "wan22": (0.326, None),
}


def applies(policy: dict, ctx: dict) -> bool:
    """PyTorch's caching allocator holds the device memory: CUDA, and ROCm (HIP builds use the same allocator); not a
    CPU, MPS or XPU run, and not under accelerate's sequential offload, which empties the cache at every layer move
    (formula: empty_cache)."""
    return policy.get("device", "cuda") in ("cuda", "rocm") and not ctx.get("empty_cache")


def ratio(family: str, naive: bool = False):
    """The traced excess over activations of a sampling forward, or None where no trace gives one."""
    r = SAMPLE_CACHED.get(family)
    return None if r is None else r[1 if naive else 0]


def cached_slack_bytes(family: str, activations: int, naive: bool = False) -> int:
    """Reserved beyond the flat margin of one sampling forward with `activations` bytes: (ratio - margin) x
    activations, never below 0 (the margin stays the floor the verdict uses); 0 for a family not traced."""
    r = ratio(family, naive)
    return 0 if r is None else int(max(0.0, r - FRAGMENTATION) * max(0, int(activations)))
