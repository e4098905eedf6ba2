"""Task fix21c (review21b findings): each expected figure is computed here by hand, not by the code under test."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

# vLLM's ROCm sparse-MLA backend (rocm_aiter_mla_sparse.py, ROCMAiterMLASparseBackend at 007c8d81): the cache is
# (num_blocks, block_size, 576) in bf16, no fp8_ds_mla record. GLM-5: 78 layers, kv_lora_rank 512, rope 64; the
# indexer key (index_head_dim 128 fp8 + one fp32 scale) is 132 bytes
ROCM_LATENT = (512 + 64) * 2  # 1152
INDEXER_KEY = 128 + 4


def test_dsa_on_rocm_sizes_the_16_bit_latent_and_refuses_an_fp8_cache():
    s = llm.describe(model="zai-org/GLM-5-FP8")
    r = llm.plan(s, "vllm", ctx=131072, tensor_parallel_size=8, gpu_name="AMD Instinct MI300X")
    assert r["kv_per_token"] == 78 * (ROCM_LATENT + INDEXER_KEY)  # 100,152
    with pytest.raises(UserError, match="ROCm sparse-MLA backend"):
        llm.plan(s, "vllm", ctx=131072, tensor_parallel_size=8, gpu_name="AMD Instinct MI300X", kv_dtype="fp8")
    with pytest.raises(UserError, match="ROCm sparse-MLA backend"):
        llm.plan(s, "vllm", ctx=131072, tensor_parallel_size=8, runtime_version="0.16.0+rocm7.0", kv_dtype="fp8")
    # a CUDA card keeps FlashMLASparse's fp8_ds_mla record: 512 + 4 x 4 + 64 x 2 = 656
    h = llm.plan(s, "vllm", ctx=131072, tensor_parallel_size=8, gpu_name="NVIDIA H200", kv_dtype="fp8")
    assert h["kv_per_token"] == 78 * (656 + INDEXER_KEY)


def test_dsa_default_cache_says_the_fp8_default_of_some_releases():
    # vllm#25988 (2025-09-30) resolved "auto" to fp8_ds_mla; current vLLM keeps auto 16-bit. Which release changed it
    # is not known, so the plan says so where the cache type was left to the runtime
    s = llm.describe(model="zai-org/GLM-5-FP8")
    auto = llm.plan(s, "vllm", ctx=4096, tensor_parallel_size=8)
    assert any("vllm#25988" in n and "--kv-cache-dtype fp8" in n for n in auto["notes"])
    fp8 = llm.plan(s, "vllm", ctx=4096, tensor_parallel_size=8, kv_dtype="fp8")
    assert not any("vllm#25988" in n for n in fp8["notes"])


def test_sglang_gemma4_e4b_per_layer_table_whole_at_tp2_and_the_whole_table_rows_are_named():
    from gpu_garden.memory.llm.runtimes import sglang as SG
    # SGLang gemma4_causal.py (03826cd / 038c87d): embed_tokens and embed_tokens_per_layer are
    # Gemma4TextScaledWordEmbedding = Gemma3TextScaledWordEmbedding, an nn.Embedding: whole on each TP GPU.
    # Gemma-4-E4B: vocab 262144 x hidden 2560 and the per-layer table 262144 x (42 layers x 256), bf16
    s = llm.describe(model="google/gemma-4-E4B-it")
    main, per_layer = 262144 * 2560 * 2, 262144 * 42 * 256 * 2
    e1 = llm.plan(s, "sglang", ctx=4096, tensor_parallel_size=1)["weights_by_role"]["embedding"]
    e2 = llm.plan(s, "sglang", ctx=4096, tensor_parallel_size=2)["weights_by_role"]["embedding"]
    assert e2 == e1
    assert 0 <= e2 - (main + per_layer) < 64 << 20  # the rest is the per-layer projection (2560 x 10752 x 2 B)
    # exact model_types, one row each (gemma3n: gemma3n_causal.py's Gemma3nTextScaledWordEmbedding); a type whose
    # SGLang model was not read keeps VocabParallelEmbedding's split
    for arch in ("gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text"):
        assert SG.token_table_whole(arch), arch
    # gemma4_unified / gemma4_unified_text were read later (task ellm28, test_kv_ellm28): whole too
    for arch in ("gemma4_unified_vision", "gemma2", "llama"):
        assert not SG.token_table_whole(arch), arch


def test_sglang_keeps_mla_down_projections_whole_on_every_tp_gpu():
    # SGLang deepseek_v2.py: fused_qkv_a_proj_with_mqa = ReplicatedLinear(hidden, q_lora_rank + kv_lora_rank +
    # qk_rope_head_dim) "For tensor parallel attention". DeepSeek-V3 FP8: 61 layers x 7168 x (1536 + 512 + 64) x 1 byte,
    # of which each of 8 GPUs holds 7/8 more than its eighth
    s = llm.describe(model="deepseek-ai/DeepSeek-V3")
    one = llm.plan(s, "sglang", ctx=4096, tensor_parallel_size=1)["weights_by_role"]["blocks"]
    eight = llm.plan(s, "sglang", ctx=4096, tensor_parallel_size=8)["weights_by_role"]["blocks"]
    assert eight - one // 8 == 61 * 7168 * 2112 * 7 // 8  # 0.75 GiB
