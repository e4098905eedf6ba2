"""vLLM's estimate_max_model_len (kv_cache_utils): the longest --max-model-len `available` bytes hold under the hybrid
manager, which a start refusal prints ("the estimated maximum model length is N"; vllm_refusal.py), and the binary
search it runs (longest_fitting), which vllm_refusal.py and deepseek_v4.py use too. The pool's layout is cache.py's
(vllm_layout, vllm_request_blocks)."""
from . import deepseek_v4 as DSV4
from .cache import BLOCK, vllm_layout, vllm_request_blocks, with_draft_layers
from .spec import LLMSpec


def vllm_estimated_max_len(spec: LLMSpec, available: float, kv: str, ctx: int, *, mla_cache: str = "latent",
                           hybrid: bool = True, max_batched: int = 2048, state_blocks: int = 1, draft_layers: int = 0,
                           spec_tokens: int = 0, gdn_block: int = BLOCK, drafter: dict | None = None, **_) -> int | None:
    """A start refusal's "the estimated maximum model length is N" under the hybrid manager (vllm_layout; None
    without one): kv_cache_utils.estimate_max_model_len's binary search for the longest length up to max_model_len
    whose max_memory_usage_bytes, summed over every layer's own spec (not the groups' padded tensors), fits the
    available memory: a full layer cdiv(len, block) pages, a sliding one its window's (vllm_request_blocks), a
    state layer (MambaSpec) one page, two with prefix caching ("align"), one more per speculative token. It is not
    the pool's token count, which divides the blocks among the groups (Qwen3.6-35B-A3B at fp8, 0.47 GiB: 10 full
    and 30 DeltaNet layers of 2096-token pages, 17 x 2096 = 35,632 against a pool of 5 x 2096)."""
    if spec.dsv4:
        return DSV4.estimated_max_len(spec, available, ctx, max_batched, draft_layers, kind=mla_cache)
    spec = with_draft_layers(spec, draft_layers, spec_tokens)
    lay = vllm_layout(spec, kv, mla_cache, gdn_block, drafter) if hybrid else None
    if not lay:
        return None
    per_layer = dict(lay, groups=lay["counts"])  # vllm_request_blocks counts each layer once, not each group

    def fits(n: int) -> bool:
        pages = vllm_request_blocks(per_layer, n, max_batched, spec.sliding_window or n, state_blocks + spec_tokens)
        return pages * lay["page"] <= available

    return longest_fitting(fits, ctx)


def longest_fitting(fits, ctx: int) -> int:
    """vLLM's estimate_max_model_len search: the longest length in 1..ctx for which fits(n) holds (fits grows false
    with n); 0 when not even one token fits."""
    if not fits(1):
        return 0
    lo, hi = 1, ctx
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo
