"""fix6: review rev6 B5. A separate drafter's layers in vLLM's pool take the target's --kv-cache-dtype; with a per-token-head
type (int8_per_token_head, fp8_per_token_head) each token also carries an fp32 scale per KV head, for K and for V.

By hand, a drafter with 8 KV heads of 128 on one GPU:
  fp8:                     8 x 2 x 128            = 2,048 B a token and layer
  int8/fp8_per_token_head: 8 x (2 x 128 + 2 x 4)  = 2,112 B (2,048 before the fix: 3% low)
  f16:                     8 x 2 x 128 x 2        = 4,096 B
"""
import pytest


@pytest.mark.parametrize("kv, want", [
    ("fp8", 2_048), ("int8_per_token_head", 2_112), ("fp8_per_token_head", 2_112), ("f16", 4_096)])
def test_draft_token_bytes_by_hand(kv, want):
    from gpu_garden.memory.llm.cache import draft_token_bytes
    assert draft_token_bytes({"kv_heads": 8, "head_dim": 128}, kv) == want


@pytest.mark.parametrize("kv, want", [("int8_per_token_head", 8), ("fp8", 0), ("q8_0", 0)])
def test_head_scale_bytes(kv, want):
    from gpu_garden.memory.llm.cache import head_scale_bytes
    assert head_scale_bytes(kv) == want
    assert head_scale_bytes(kv, "f16") == want // 2      # K's scale only where only K is per-token-head


def test_sglang_state_pool_refusal_says_older_releases_start_without_a_slot():
    # (rev6 B8) --max-mamba-cache-size 2 on Qwen3.8-27B: 2 // 3 = 0 running requests (test_kv_ellm72's case); the note
    # says an older release may start with no request slot instead of refusing
    from gpu_garden.memory.llm import kv as llm
    spec = llm.describe(model="Qwen/Qwen3.8-27B")
    out = llm.plan(spec, max_mamba_cache_size=2, runtime="sglang", ctx=32768, kv_dtype="bf16", weights_dtype="awq",
                   mem_fraction_static=0.9, vram=24 << 30)
    assert out["fits"] is False
    note = next(n for n in out["notes"] if "resulting max_num_reqs=0" in n)
    assert "older release may start instead, with no request slot" in note
