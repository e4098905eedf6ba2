"""(fix67a, aud67b #2) The vllm-graph-capture guide's figures from the log: how far to lower --gpu-memory-utilization, the
--max-num-seqs for fewer capture sizes, and vLLM's own VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS hint.

vLLM gives the KV cache gpu_memory_utilization x total less what the weights and the profiled peak hold (gpu_worker.py
determine_available_memory), so one hundredth off the utilization takes total/100 off the cache and leaves it to the
graph capture, which runs after the cache was allocated (gpu_model_runner.py capture_model). The drop:
- at least the failed request (the capture went on after it, so a smaller drop would not even cover it): the utilization
  less the request, in exact figures, rounded down to a hundredth: vllm-project/vllm#57475's 136 MiB of 22.36 GiB at 0.98
  is 0.974, so 0.97 (which the thread reports boots); at 0.955 it is 0.949, so 0.94;
- at most what the cache can lose and still hold one request at the log's max_model_len: its bytes a token are
  "Available KV cache memory" over "GPU KV cache size: N tokens" (kv_cache_utils.py); 2.97 GiB for 150,745 tokens leaves
  124000 tokens 0.53 GiB to spare: the utilization less that, rounded up, is 0.96. A larger drop than that fails the
  cache check instead (kv_cache_utils.check_enough_kv_cache_memory): then no utilization fits, and the guide says so (--enforce-eager, fewer
  capture sizes).
Without the card's total the guide keeps its generic figure, never at or above the log's own utilization.

VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (vllm/envs.py): 1 makes the start-up profile measure the graphs' memory and take
it out of the KV cache's budget, so the capture has room; on by default from 0.20.0 (memory/llm/runtimes/vllm.py
GRAPHS_IN_BUDGET, read in vLLM's source archives; (fix67g, rev67b F7) the message's own "default since v0.21.0" is the
plan, printed by 0.20.x too). 0 gives the cache that memory back and counts no graphs: more cache, less room for the
capture."""
import math

from ..llm.runtimes.vllm import GRAPHS_IN_BUDGET
from ..units import fmt_bytes

GENERIC = 85            # the guide's generic utilization (hundredths) where the log does not size the drop
SIZES = (1, 2, 4, 8, 16, 32, 64)      # the guide's capture sizes for Fix 3
HINT = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"
# (0, 20): "0.20.0", the guide's {{capture_graphs_since}} (guides.FALLBACK: every render, whatever the log)
GRAPHS_SINCE = ".".join(map(str, GRAPHS_IN_BUDGET)) + ".0"


def _maxlen(f):
    own = (f.get("vllm_own") or {}).get("max_model_len")
    return int(own) if own else f.get("vllm_maxlen")


def params(inc, f, n) -> dict:
    """The guide's capture_* parameters (empty outside vLLM)."""
    if not f.get("vllm"):
        return {}
    p = {}
    util = f.get("vllm_util")
    total, req = n.get("total"), n.get("requested")
    if util is not None and total and req:
        # (fix67g, rev67b F5) in the log's exact figures: the highest hundredth at or below util less the request, and the
        # lowest at or above util less what the cache spares (0.955 less 136 MiB of 22.36 GiB is 0.9491: 0.94, not 0.95)
        new = math.floor((util - req / total) * 100 + 1e-9)
        p.update(capture_sized=True, capture_had=f"{util:g}", capture_req=fmt_bytes(req), capture_total=fmt_bytes(total))
        kv, tokens, maxlen = f.get("vllm_kv_mem"), f.get("vllm_kv_tokens"), _maxlen(f)
        floor = None
        if kv and tokens and maxlen and tokens > 0:
            spare = kv * (1 - maxlen / tokens)
            floor = math.ceil((util - max(spare, 0) / total) * 100 - 1e-9)
            p.update(capture_kv=fmt_bytes(kv), capture_tokens=f"{tokens:,}", capture_maxlen=str(maxlen),
                     capture_spare=fmt_bytes(max(spare, 0)))
        if new < 1 or (floor is not None and new < floor):
            p.update(capture_no_drop=True, capture_drop=f"{math.ceil(req / total * 100 - 1e-9) / 100:.2f}")
        else:
            p.update(capture_util=f"{new / 100:.2f}", capture_drop=f"{round(util - new / 100, 6):g}")
            if floor is not None:
                p.update(capture_floor=f"{floor / 100:.2f}")
    elif util is not None and round(util * 100) <= GENERIC:
        p["capture_util"] = f"{(round(util * 100) - 5) / 100:.2f}"      # the generic figure would raise it
    seqs = (f.get("vllm_own") or {}).get("max_num_seqs")
    if seqs and int(seqs) < SIZES[-1]:
        sizes = [s for s in SIZES if s <= int(seqs)]
        p.update(capture_seqs=str(int(seqs)), capture_sizes="[" + ", ".join(map(str, sizes)) + "]", capture_seqs_own=True)
    if f.get("vllm_cg_hint") or any(HINT in t for t in inc.texts):
        p["capture_env_hint"] = True
    return p

