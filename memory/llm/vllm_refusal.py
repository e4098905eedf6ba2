"""vLLM's start refusal when one request of --max-model-len needs more KV cache than the pool (plan_answer._vllm_kv_refusal
decides when; report._refusal_line prints it). V1 (kv_cache_utils.check_enough_kv_cache_memory) raises before it
prints a pool line: "To serve at least one request with the models's max seq len (ctx), (N GiB KV cache is needed,
which is larger than the available KV cache memory (M GiB). Based on the available memory, the estimated maximum
model length is E." (E: its binary search, capped at max_model_len, over the layers' max_memory_usage_bytes: the
pool's whole blocks for full attention, vllm_max_len.vllm_estimated_max_len under the hybrid manager; not printed where 0).
V0 logs "# GPU blocks: N" first (executor_base.initialize_cache), then raise_if_cache_size_invalid raises: "The
model's max seq len (ctx) is larger than the maximum number of tokens that can be stored in KV cache (blocks x 16)"."""
from dataclasses import replace

from .cache import BLOCK, vllm_kv_tokens, vllm_layout, vllm_pool, vllm_request_blocks, with_draft_layers
from .vllm_max_len import longest_fitting, vllm_estimated_max_len
from .runtimes import at_least
from .runtimes.vllm_pipeline import PP_WHOLE_MODEL_CHECK, stage_spec


def _estimate(spec, avail, pool_tokens, kv, ctx, pool) -> int | None:
    """E for `avail` bytes and the layers of `spec` (pool_tokens: those bytes' whole blocks, or None to count them)."""
    est = None
    if not spec.sliding_window or pool.get("hybrid"):
        est = vllm_estimated_max_len(spec, avail, kv, ctx, **pool)
        if est is None and not spec.sliding_window and not spec.linear_state:
            # full attention only: the largest length whose whole blocks fit the memory
            est = pool_tokens if pool_tokens is not None else vllm_kv_tokens(
                spec, avail, kv, pool.get("mla_cache", "latent"), hybrid=False,
                draft_layers=pool.get("draft_layers", 0))
    return min(est, ctx) if est else est  # the binary search never looks past max_model_len


def kv_refusal(spec, ctx, kv, s, ev) -> dict | None:
    """The refusal's figures for a plan that does not start with a pool (plan_answer._vllm_kv_refusal's guards passed)."""
    v = s["version"]
    if not s["v1"]:  # from vllm#13873 (0.8.0) max_seq_len = block_size x (num_gpu_blocks // pipeline stages)
        pp = s.get("pp", 1) if v is None or at_least(v, 0, 8) else 1
        tokens = ev["gpu_blocks"] // pp * 16
        return {"engine": "v0", "tokens": tokens} if tokens < ctx else None
    pool = dict(ev["kv"]["pool_args"])
    if ev["kv"].get("mamba_cache_all"):  # prefix caching's state paged per block, as evaluate marked the spec (rev11 D2:
        spec = replace(spec, mamba_cache_all=True)  # runtimes/vllm_hybrid.with_cache_mode, not called a second time)
    stages = ev.get("stage_checks")
    if stages and v is not None and at_least(v, *PP_WHOLE_MODEL_CHECK[0]) and not at_least(v, *PP_WHOLE_MODEL_CHECK[1]):
        # one check (vllm#29431 to #33698): the smallest worker's memory against the whole model's KV
        at = min(range(len(stages)), key=lambda i: stages[i]["pool"])
        avail = stages[at]["pool"]
        need, est = ev["whole_check_bytes"], _estimate(spec, avail, None, kv, ctx, pool)
    elif stages:  # every worker checked in turn: the first short of memory raises with its own memory and estimate
        at = next((i for i, st in enumerate(stages) if not st["starts"]),
                  min(range(len(stages)), key=lambda i: stages[i]["pool_tokens"]))
        st = stages[at]
        avail, need = st["pool"], st["need"]
        est = _estimate(stage_spec(spec, st["start"], st["end"]), avail, st["own_tokens"], kv, ctx, pool)
    else:
        # the hybrid manager's blocks of one request; before it (0.8.3-0.9.0) the start check's own bytes, a sliding
        # layer by its window (runtimes/vllm.py SWA_CHECKED), not the pool's full-length pages
        avail, need = ev["pool"], ev.get("kv_request_bytes") or ev.get("kv_check_bytes") or ev["kv"]["total"]
        est = _estimate(spec, avail, ev["pool_tokens"], kv, ctx, pool)
    if not stages and ev.get("kv_request_bytes"):  # the hybrid manager: need and estimate from one vLLM era
        if v is None or at_least(v, *PP_WHOLE_MODEL_CHECK[0]):
            est = _groups_estimate(spec, avail, kv, ctx, pool) or est
        else:
            per_layer = _per_layer_bytes(spec, kv, ctx, pool)
            need = per_layer if per_layer and per_layer > avail else need
    # what the build prints of the estimate (where > 0): vllm#16168 (0.8.4) added it as a bare second f-string, so
    # 0.8.4-0.9.0 print "Based on the available memory," without the figure; vllm#18966 (0.9.1) prints it
    printed = ("unknown" if v is None else "figure" if at_least(v, 0, 9, 1) else "blank" if at_least(v, 0, 8, 4)
               else "none")
    out = {"engine": "v1", "needed_bytes": int(need), "available_bytes": int(avail), "estimated_max_len": est or None,
           "estimate_printed": printed}
    if stages:  # the pipeline stage whose check raises (report.py names it beside its pool)
        out["stage"] = at
    return out


def _groups_estimate(spec, avail, kv, ctx, pool) -> int | None:
    """Since vllm#29431 (0.12) the hybrid manager's need and estimate both count whole groups, padding included
    (_max_memory_usage_bytes_from_groups, _estimate_max_model_len_from_groups): the longest length up to ctx whose
    request_bytes (cache.vllm_pool) fit `avail`. Before it both were per layer (vllm_max_len.vllm_estimated_max_len)."""
    def fits(n):
        g = vllm_pool(spec, avail, kv, n, **pool)
        return g is not None and g["request_bytes"] <= avail
    return longest_fitting(fits, ctx) or None


def _per_layer_bytes(spec, kv, ctx, pool) -> int | None:
    """Before vllm#29431 the check's need: every layer's own max_memory_usage_bytes summed (no group padding), as
    vllm_max_len.vllm_estimated_max_len counts them."""
    sp = with_draft_layers(spec, pool.get("draft_layers", 0), pool.get("spec_tokens", 0))
    lay = vllm_layout(sp, kv, pool.get("mla_cache", "latent"), pool.get("gdn_block", BLOCK), pool.get("drafter"))
    if not lay:
        return None
    pages = vllm_request_blocks(dict(lay, groups=lay["counts"]), ctx, pool.get("max_batched", 2048),
                                sp.sliding_window or ctx, pool.get("state_blocks", 1) + pool.get("spec_tokens", 0))
    return int(pages * lay["page"])
