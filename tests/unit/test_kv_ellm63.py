"""Task ellm63 (kv-accuracy round 85, batches 88-89 after their first sight).

VLLM_MLA_DISABLE=1 (the `mla_disable` knob, --vllm-mla-disable). vLLM's ModelConfig.use_mla is
`is_deepseek_mla and not envs.VLLM_MLA_DISABLE` (vllm/config/model.py); with it off, deepseek_v2.py's decoder layer builds
DeepseekV2Attention instead of DeepseekV2MLAAttention, whose cache layer is Attention(num_local_heads, qk_head_dim,
num_kv_heads=num_local_heads) with qk_head_dim = qk_nope_head_dim + qk_rope_head_dim and V padded to that width
(`torch.nn.functional.pad(v, [0, qk_head_dim - v_head_dim])`), and the MLA impl that keeps a 16-bit copy of a quantized
kv_b_proj (process_weights_after_loading) is never built. Read in the August 2026 vLLM tree 1CatAI/1Cat-vLLM (ae13773a):
vllm/config/model.py use_mla, vllm/transformers_utils/model_arch_config_convertor.py get_head_size / is_deepseek_mla,
vllm/model_executor/models/deepseek_v2.py DeepseekV2Attention. The row: 99sono's Mistral-Small-4-119B NVFP4 on a DGX Spark
(vLLM 0.23.1rc1.dev531), whose compose file sets VLLM_MLA_DISABLE "1" and whose log prints the FLASHINFER (not an MLA)
backend: 21.35 GiB for 77,744 tokens, 294,9xx bytes a token. Expected bytes by hand below from the built-in's config
(36 layers, 32 heads, kv_lora_rank 256, qk_rope 64, qk_nope 64, v_head 128)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

MISTRAL4 = "mistralai/Mistral-Small-4-119B-2603"


def _mistral(**kw):
    return llm.plan(llm.describe(model=MISTRAL4), "vllm", ctx=40000, kv_dtype="fp8", weights_dtype="nvfp4",
                    runtime_version="0.23.1", gpu_name="NVIDIA GB10", vram=int(121.63 * GiB),
                    gpu_memory_utilization=0.75, max_num_seqs=3, max_num_batched_tokens=8192, enforce_eager=True, **kw)


def test_mla_disable_caches_every_head():
    # MLA (default): one latent of kv_lora_rank + qk_rope = 256 + 64 = 320 values a layer, fp8: 36 x 320 = 11,520 B
    assert _mistral()["kv_per_token"] == 11_520
    # VLLM_MLA_DISABLE=1: K and V of 32 heads x (64 + 64) = 128 each (V padded from 128 to 128), fp8:
    # 36 x 2 x 32 x 128 x 1 = 294,912 B a token
    assert _mistral(mla_disable=True)["kv_per_token"] == 294_912


def test_mla_disable_tokens_from_the_printed_memory():
    # the row's 21.35 GiB at 294,912 B a token in 16-token blocks: 21.35 x 2^30 = 22,924,387,942 B,
    # / (16 x 294,912 = 4,718,592) = 4858 blocks = 77,728 tokens (the log's 77,744 = 4859 blocks: its 21.35 is rounded,
    # 4859 x 4,718,592 = 22,927,638,528 B = 21.353 GiB); with the latent it would be 1,989,952
    res = _mistral(mla_disable=True, kv_cache_memory=int(21.35 * GiB))
    assert res["kv_capacity_tokens"] == 77_728


def test_mla_disable_builds_no_kv_b_proj_copy():
    # with MLA the NVFP4 checkpoint's kv_b_proj is kept once more in 16 bits (mla_dequant_bytes): kv_lora_rank x heads x
    # (qk_nope + v_head) x 2 B = 256 x 32 x (64 + 128) x 2 = 3,145,728 B a layer, x 36 = 113,246,208 B; without MLA none
    assert _mistral()["weights"] - _mistral(mla_disable=True)["weights"] == 113_246_208


def test_mla_disable_env_in_the_command_and_refused_elsewhere():
    assert _mistral(mla_disable=True)["command"].startswith("VLLM_MLA_DISABLE=1 vllm serve")
    assert "VLLM_MLA_DISABLE" not in _mistral()["command"]
    with pytest.raises(UserError):
        llm.plan(llm.describe(model=MISTRAL4), "llama.cpp", ctx=4096, mla_disable=True)


# ---------------------------------------------------------------- a hybrid refusal's estimated maximum length (vLLM)
# kv_cache_utils.estimate_max_model_len (the same tree): a binary search for the longest max_model_len whose
# max_memory_usage_bytes summed over every layer's own KVCacheSpec fits the available memory; FullAttentionSpec:
# cdiv(len, block_size) x page_size_bytes; MambaSpec: page x (2 + num_speculative_blocks) in mamba_cache_mode "align"
# (prefix caching), page x (1 + ...) without. It is a different figure from the pool's "GPU KV cache size".
QWEN36_MOE = "Qwen/Qwen3.6-35B-A3B"


def _qwen36_moe():
    return llm.describe(model=QWEN36_MOE)


def test_hybrid_estimated_max_len_by_hand():
    # Qwen3.6-35B-A3B at fp8: 10 full-attention layers of 2 KV heads x 256 x 2 (K, V) x 1 B = 1,024 B a token, and 30
    # gated-DeltaNet layers whose state page sets the block: 2096 tokens, page 2096 x 1,024 = 2,146,304 B (the rows'
    # "Setting attention block size to 2096 tokens"). 0.47 GiB = 504,658,247 B = 235.1 pages. With prefix caching each
    # DeltaNet layer holds 2 pages: 30 x 2 = 60, leaving 175.1 for 10 layers -> 17 blocks of 2096 = 35,632 tokens (the
    # refused row's "estimated maximum model length is 35632"); without, 30 pages: 205.1 / 10 -> 20 -> 41,920
    from gpu_garden.memory.llm.cache import vllm_layout
    lay = vllm_layout(_qwen36_moe(), "fp8")
    assert (lay["page"], lay["block"]["full"], lay["counts"]) == (2_146_304, 2096, {"full": 10, "linear": 30})
    avail = 0.47 * GiB
    assert llm.vllm_estimated_max_len(_qwen36_moe(), avail, "fp8", 98304, max_batched=32768, state_blocks=2) == 35_632
    assert llm.vllm_estimated_max_len(_qwen36_moe(), avail, "fp8", 98304, max_batched=32768, state_blocks=1) == 41_920
    # the refusal's own "1.06 GiB KV cache is needed" at 98,304: 10 x cdiv(98304, 2096) = 10 x 47 = 470 pages + 60 =
    # 530 x 2,146,304 = 1,137,541,120 B = 1.059 GiB: one page short of it the estimate is 98,303 at most
    assert llm.vllm_estimated_max_len(_qwen36_moe(), 1_137_541_120, "fp8", 98304, state_blocks=2) == 98_304
    assert llm.vllm_estimated_max_len(_qwen36_moe(), 1_137_541_119, "fp8", 98304, state_blocks=2) == 47 * 2096 - 2096


def test_hybrid_refusal_scored_against_the_estimate():
    # the batch-89 refusal: tokens from the printed 0.47 GiB were the pool's 5 x 2096 = 10,480 (23 blocks of 10
    # tensors over 4 groups) against the printed 35,632; the estimate is what vLLM prints there
    import json
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "benchmarks"))
    from llm_score import score
    rows = json.loads((repo / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
    row = next(r for r in rows if r["id"] == "vllm-99sono-qwen36-35b-a3b-redhatnvfp4-5090-96k-u090default-fp8kv-mns256-refused")
    out = score(row)
    assert out["tokens_from_printed"] == (35_632, 35_632) and out["tokens_from_printed_exact"]
