"""(fix66c) --gpu-memory-utilization for a vLLM start-up that left the KV cache no memory, worked out from the log's own
figures as `gpu-garden kv` works it out (runtimes/vllm.py util_for: the smallest share, two decimals, that holds what
vLLM keeps inside it plus one request's cache, capped at MAX_UTIL), not a flat step up from the failed share.

vLLM prints the share (total_gpu_memory x gpu_memory_utilization) and what it leaves the cache after the weights, the
non-torch memory and the activation peak ("the rest of the memory reserved for KV Cache is -1.05GiB", "Available KV cache
memory: -0.5 GiB"), so those three together are the share less that rest, whichever of them the log itemises."""
from ..errors import UserError
from ..units import fmt_bytes
from . import spec as llm_spec
from .cache import kv_cache
from .runtimes.vllm import MAX_UTIL, util_for


def one_request_kv(model, max_len, kv_dtype) -> int:
    """Bytes of one max_model_len request's cache for a model kv knows by name; 0 when it does not know it."""
    if not model or not max_len:
        return 0
    try:
        spec = llm_spec.load_builtin(str(model).split("/")[-1])
        return int(kv_cache(spec, int(max_len), 1, "fp8" if str(kv_dtype or "").startswith("fp8") else "f16", "vllm")["total"])
    except (UserError, ValueError, KeyError, TypeError):
        return 0


def share_needed(n) -> dict | None:
    """{"held", "kv", "util"} from the log's numbers (total, gpu_memory_utilization, kv_available <= 0; log_model and
    max_model_len for one request's cache): util None when no share up to MAX_UTIL holds them. None without the figures."""
    total, util, rest = n.get("total"), n.get("gpu_memory_utilization"), n.get("kv_available")
    if not total or not util or rest is None:
        return None
    held = util * total - rest          # weights + non-torch + activation peak
    kv = one_request_kv(n.get("log_model"), n.get("max_model_len"), n.get("kv_cache_dtype"))
    ev = {"util_needed": (held + kv) / total + (0 if kv else 0.01),     # no model kv knows: a little cache "overhead": {"cuda_context": 0, "cuda_graphs": 0},
          "graphs_inside": True, "context_inside": True}
    return {"held": held, "kv": kv, "util": util_for(ev, total), "total": total}


def reason(need, had_util, had) -> tuple:
    """(value or None, reason) for the suggestion list."""
    held, total = fmt_bytes(need["held"]), fmt_bytes(need["total"])
    what = (f"weights, non-torch memory and the activation peak take {held} (the {had_util:g} share{had} less the cache's "
            f"{fmt_bytes(had_util * need['total'] - need['held'])})")
    plus = f" and one request's cache {fmt_bytes(need['kv'])}" if need["kv"] else ""
    if need["util"] is None:
        return None, (f"{what}{plus}: more than {MAX_UTIL:g} of {total}, so no utilization fits them; smaller or "
                      "quantized weights, a lower activation peak or more GPUs")
    return f"{need['util']:.2f}", f"{what}{plus} of {total}: the smallest share that holds them" + \
        ("" if need["kv"] else " (and a little cache)")
