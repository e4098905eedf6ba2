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
