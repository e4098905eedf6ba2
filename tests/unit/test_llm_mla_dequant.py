"""vLLM >= 0.8 keeps a 16-bit copy of a quantized kv_b_proj for MLA. MLACommonImpl.process_weights_after_loading
(vllm/v1/attention/backends/mla/common.py) takes W_UK_T / W_UV as views of get_and_maybe_dequant_weights(kv_b_proj):
the weight itself when it is 16-bit, a new tensor (the quant method applied to an identity matrix) when it is
quantized ("we just store fp16/bf16 copies"). The load profiler counts it in "Model loading took"."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V, vllm_mla as VM

GiB, MiB = 1 << 30, 1 << 20
AWQ = "TechxGenus/DeepSeek-V2-Lite-Chat-AWQ"
# DeepSeek-V2-Lite config.json: 27 layers, 16 heads, kv_lora_rank 512, qk_nope_head_dim 128, v_head_dim 128
COPY = 27 * 512 * 16 * (128 + 128) * 2   # 108 MiB


def test_quantized_kv_b_proj_copy_by_hand():
    s = llm.describe(model=AWQ)
    new = {"version": (0, 26, 0), "v1": True}
    assert VM.mla_dequant_bytes(s, new, "awq") == COPY == 108 * MiB
    assert VM.mla_dequant_bytes(V.per_rank(s, 2), new, "awq") == COPY // 2   # one GPU's heads at TP 2
    assert VM.mla_dequant_bytes(s, new, "bf16") == 0                         # views of the 16-bit weight
    # each layer dequantizes its own kv_b_proj: one layer left in 16 bits takes 1/27 off, a regex over all of them all
    assert VM.mla_dequant_bytes(s, new, "awq", ("model.layers.0.self_attn.kv_b_proj",)) == COPY // 27 * 26
    assert VM.mla_dequant_bytes(s, new, "awq", ("re:.*kv_b_proj$",)) == 0
    # 0.7.x V0 counts the copy with its absorbed matrices (mla_absorbed_bytes), not twice
    assert VM.mla_dequant_bytes(s, {"version": (0, 7, 2), "v1": False}, "awq") == 0
    assert VM.mla_dequant_bytes(llm.describe(model="Qwen/Qwen2.5-7B-Instruct-AWQ"), new, "awq") == 0


def test_kvcache_lab_awq_load_and_pool():
    # akiyax/kvcache-lab docs/mla-verification.md (vLLM 0.26.0, RTX 4080 15.99 GiB, 0.80, TRITON_MLA):
    # "Model loading took 8.63 GiB", 3.46 GiB of KV memory, 119,328 tokens
    s = llm.describe(model=AWQ)
    r = llm.plan(s, "vllm", ctx=32768, vram=15.99 * GiB, runtime_version="0.26.0", gpu_memory_utilization=0.8,
                 gpu_name="NVIDIA GeForce RTX 4080")
    assert "kv_b_proj" in r["weights_how"]
    without = r["weights"] - COPY
    assert r["weights"] / GiB == pytest.approx(8.63, rel=0.04)      # 8.31 (without the copy 8.20, -5.0 %)
    assert not without / GiB == pytest.approx(8.63, rel=0.04)
    assert r["kv_capacity_tokens"] == pytest.approx(119328, rel=0.015)  # -0.6 % (without: +2.5 %)
