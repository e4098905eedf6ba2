"""Task ellm73 (kv-accuracy round 95, batch 99 after its first sight).

vLLM's per-token-head KV caches (--kv-cache-dtype int8_per_token_head / fp8_per_token_head; vllm#38378, main of
2026-04-02, read in mystous/vllm_hybrid's tree of upstream main 579602aa): vllm/v1/kv_cache_interface.py
AttentionSpec.page_size_bytes adds 2 x block_size x num_kv_heads x 4 (an fp32 scale per token, head and K/V) to the
page of one byte a value; TRITON_ATTN's get_kv_cache_shape pads each head to head_size + 4. So a token of one
attention layer takes 2 x heads x (head_size + 4) bytes.

By hand:
  Qwen2.5-7B (28 layers, 4 KV heads of 128): fp8 28 x 4 x 2 x 128 = 28,672 B a token; per-token-head
      28 x 4 x 2 x (128 + 4) = 29,568 B.
  Qwen3.8-27B (16 full-attention layers of 4 KV heads x 256; 48 gated-DeltaNet layers whose state page sets the
      attention block), with the MTP drafter's 3 speculative tokens widening the conv state (cache.with_draft_layers):
      conv 10,240 x (3 + 3) = 61,440 values x 2 B = 122,880 B, recurrent 786,432 x 4 B = 3,145,728 B: a state page
      of 3,268,608 B. The attention block is 16 x cdiv(state page, 16 x bytes a token):
        fp8 (2,048 B a token):            16 x cdiv(3,268,608, 32,768) = 16 x 100 = 1600 tokens, page 3,276,800
        per-token-head (2,080 B a token): 16 x cdiv(3,268,608, 33,280) = 16 x  99 = 1584 tokens, page 3,294,720
      malaiwah/qwen38-27b-exl3's kv-dtype sweep on an RTX 5090 prints attention block size 1600 for fp8 and 1584 for
      both per-token-head types (batch 99 rows ...-fp8-seqs1-mtp3, ...-int8pth-..., ...-fp8pth-...): without the
      scales the per-token-head page would be fp8's and the block 1600. Those rows stay refused for their EXL3
      weights; int4_per_token_head is no upstream type (the EXL3 build's own, its source not read) and stays unknown.
"""
import pytest

FP8_7B = 28 * 4 * 2 * 128
PTH_7B = 28 * 4 * 2 * (128 + 4)
STATE_PAGE = 10_240 * 6 * 2 + 786_432 * 4


def test_hand_figures():
    assert FP8_7B == 28_672 and PTH_7B == 29_568
    assert STATE_PAGE == 3_268_608
    assert 4 * 2 * 256 == 2_048 and 4 * 2 * (256 + 4) == 2_080
    assert 16 * -(-STATE_PAGE // (16 * 2_048)) == 1_600 and 1_600 * 2_048 == 3_276_800
    assert 16 * -(-STATE_PAGE // (16 * 2_080)) == 1_584 and 1_584 * 2_080 == 3_294_720


@pytest.mark.parametrize("kv", ["int8_per_token_head", "fp8_per_token_head"])
def test_per_token_head_bytes(kv):
    from gpu_garden.memory.llm.cache import kv_cache, norm_kv
    from gpu_garden.memory.llm.names import load_builtin
    spec = load_builtin("Qwen/Qwen2.5-7B-Instruct")
    assert kv_cache(spec, 4096, 1, norm_kv("fp8", "vllm", spec), "vllm")["per_token"] == FP8_7B
    assert kv_cache(spec, 4096, 1, norm_kv(kv, "vllm", spec), "vllm")["per_token"] == PTH_7B


@pytest.mark.parametrize("kv,block,page", [("fp8", 1_600, 3_276_800), ("int8_per_token_head", 1_584, 3_294_720),
                                           ("fp8_per_token_head", 1_584, 3_294_720)])
def test_hybrid_block_as_printed(kv, block, page):
    from gpu_garden.memory.llm.cache import norm_kv, vllm_layout, with_draft_layers
    from gpu_garden.memory.llm.names import load_builtin
    spec = with_draft_layers(load_builtin("Qwen/Qwen3.8-27B"), 1, 3)
    assert spec.linear_state[0] * spec.linear_state[1] + spec.linear_state[2] * spec.linear_state[3] == STATE_PAGE
    lay = vllm_layout(spec, norm_kv(kv, "vllm", spec))
    assert lay["block"]["full"] == block and lay["page"] == page


def test_refusals():
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.cache import norm_kv
    from gpu_garden.memory.llm.names import load_builtin
    spec = load_builtin("Qwen/Qwen2.5-7B-Instruct")
    with pytest.raises(UserError, match="unknown KV cache type"):
        norm_kv("int4_per_token_head", "vllm", spec)
    with pytest.raises(UserError, match="llama.cpp has no"):
        norm_kv("int8_per_token_head", "llama.cpp", spec)
    with pytest.raises(UserError, match="MLA"):
        norm_kv("fp8_per_token_head", "vllm", load_builtin("deepseek-ai/DeepSeek-V2-Lite"))
