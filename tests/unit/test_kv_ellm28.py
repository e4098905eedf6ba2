"""Task ellm28 (kv-accuracy round 53, batch 60): each expected figure is computed here by hand, not by the code under
test.

1. SGLang keeps Gemma 4 12B's token table whole on every tensor-parallel GPU. models/gemma4_unified.py
   (sgl-project/sglang 06e7e7d) builds Gemma4UnifiedForConditionalGeneration's language model (text_config type
   gemma4_unified_text) as gemma4_causal.py's Gemma4TextModel, whose embed_tokens is Gemma4TextScaledWordEmbedding =
   Gemma3TextScaledWordEmbedding, a plain nn.Embedding, and ties lm_head to that module at PP 1. Breaking it:
   gemma4_unified* out of runtimes/sglang.py WHOLE_TOKEN_TABLE (the table is split over the GPUs again).
"""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import sglang as SG

# Gemma-4-12B (config.json as memory/llm/models/Gemma-4-12B.json copies it): vocab 262144 x hidden 3840, bf16, tied
TABLE = 262144 * 3840 * 2  # 2,013,265,920 bytes = 1.875 GiB


def test_gemma4_unified_token_table_whole_on_each_tp_gpu():
    for arch in ("gemma4_unified", "gemma4_unified_text"):
        assert SG.token_table_whole(arch), arch
    s = llm.describe(model="google/gemma-4-12B-it")
    one = llm.plan(s, "sglang", ctx=4096, tensor_parallel_size=1)
    two = llm.plan(s, "sglang", ctx=4096, tensor_parallel_size=2)
    assert two["weights_by_role"]["embedding"] == TABLE
    # each GPU: half of everything else, the whole table once (the tied head is that table, no second copy)
    assert two["weights"] == (one["weights"] - TABLE) // 2 + TABLE

