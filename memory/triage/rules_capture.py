"""Triage's rule rows for *graph-capture* that PyTorch's own message decides (rows, not code: the row format is in
rules.py's docstring). rules.py puts them after the rows where the log shows the capture.

(tri71) What "X allocated in private pools (e.g., CUDA Graphs)" counts. CUDACachingAllocator.cpp's out-of-memory branch
sums, over every private pool (`graph_pools`: a CUDA graph's capture pool, or a torch.cuda.MemPool a program set up), the
sizes of the blocks in that pool's `large_blocks` and `small_blocks` BlockPools. A BlockPool's `blocks` set holds its FREE
blocks (free_block puts a block back with insert_into_blocks; a request takes one out). So the figure is memory reserved in
private pools' segments and not in use: the caching allocator gives it only to its pool's owner (a graph's capture or
replay, the MemPool's context), never to an ordinary request. The message counts it under "allocated by PyTorch" and takes
it out of "reserved by PyTorch but unallocated". A figure of at least the request, with the ordinary cache's slack under
the request, says the request failed for lack of memory that a private pool held idle. A log that names a program's own
pool (a pluggable allocator, a MemPool, vLLM's sleep-mode cumem allocator, comfy-aimdo) is rules_other's own-pool row;
otherwise the pool is what PyTorch's message names, a CUDA graph's (docs/triage-causes.md, graph-capture: CUDA-graph capture
memory outside the runtime's budget)."""
from ..units import MiB, fmt_bytes
from .frame_predicates import capture_frame, kv_cache_sized
from .predicates import own_pool, slack_fits, torch
from .rule_row import Rule

R = Rule
POOL_FLOOR = 64 * MiB      # as slack_fits: a pool's idle memory under this is a graph's leftovers, not what ran out


def graph_pools_held(x):
    """PyTorch's private pools hold, idle, at least the request that failed; the log names no program pool of its own and
    shows no capture (the rows above read those); the ordinary cache's slack would not have served it (fragmentation's)."""
    pools = x.n.get("private_pools")
    return (torch(x) and pools is not None and bool(x.req) and pools >= x.req and pools >= POOL_FLOOR
            and not own_pool(x) and not x.graph_capture and not slack_fits(x))


def capture_fix(x) -> str:
    """The way to capture fewer graphs, or none, in the runtime the log shows (both named where it shows neither): vLLM's
    capture sizes or eager mode; ComfyUI's Comfy Compiler (comfy-aimdo, on with Dynamic VRAM, captures CUDA graphs: its
    off switch, guides/comfyui-compiler.md) or a compile node (guides/graph-capture.md, Fix 2)."""
    vllm = "vLLM: a shorter cudagraph capture list, or --enforce-eager"
    comfy = "ComfyUI: --disable-comfy-compiler turns the Comfy Compiler's graphs off, or bypass the compile node"
    return comfy if x.comfy else vllm if x.env["runtime"] == "vllm" else f"{vllm}; {comfy}"


CAPTURE_POOLS = [
    R("graph-capture", 2.0, graph_pools_held,
      lambda x: f"{fmt_bytes(x.n['private_pools'])} sits idle in PyTorch's private pools (CUDA graphs' capture pools): "
                f"memory reserved for the captured graphs that the caching allocator cannot give to the {fmt_bytes(x.req)} "
                f"request; capture fewer or smaller graphs, or none ({capture_fix(x)}), or leave room for them outside the "
                "runtime's memory share"),
]


# (fix67a, aud67b #5) the traceback runs through the capture itself (vLLM's capture_model, torch.cuda.graph's capture_end)
# after vLLM printed its KV cache's size: the budget was handed out, and what ran out is the capture's own memory. Strong on
# its own (vllm-project/vllm#19186, #11251, #57475: all 52-60 % before, the message alone reading as activations or a
# driver refusal); the row above (the log shows a capture) adds its points too.
CAPTURE_AFTER_KV = [
    R("graph-capture", 6.0, lambda x: not x.f["vllm_serving"] and x.kind in ("torch.cuda", "torch.hip", "cuda.driver", "torch.oom_type")
      and capture_frame(x) and kv_cache_sized(x),
      lambda x: f"the traceback runs through the CUDA graph capture ({capture_frame(x)}()) after vLLM had sized its KV cache: "
                "the cache had its share, and the graphs' memory comes on top of it"),
]
