"""Task ellm31 (session 24, round 54b, batch 61): Qwen3-VL-8B-Instruct built in, the 0.20.2rc1 nightly's CUDA-graph
estimate inside the share (vLLM TP2 with expert parallel, Qwen3-30B-A3B on A100-PCIE-40GB) and data_parallel_size
refused with what is not modelled. Every expected figure is derived by hand from a config.json or a printed log line."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _vision_params():
    # Qwen3-VL's tower from config.json vision_config (27 x 1152, MLP 4304, patch 16 x 16 x 2 frames, merge 2 -> 4608,
    # out 4096, 3 deepstack mergers, 2304 position embeddings), every linear with a bias, LayerNorms with weight + bias
    d, f, m, out = 1152, 4304, 4608, 4096
    block = (d * 3 * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d) + 4 * d
    merger = 2 * d + (m * m + m) + (m * out + out)
    deepstack = 2 * m + (m * m + m) + (m * out + out)
    return 27 * block + merger + 3 * deepstack + (d * 3 * 2 * 16 * 16 + d) + 2304 * d


def test_qwen3_vl_8b_is_qwen3_8b_decoder_with_262k_positions_and_a_4096_wide_tower():
    s = llm.describe(model="Qwen/Qwen3-VL-8B-Instruct")
    assert s.name == "Qwen3-VL-8B" and s.n_layers == 36 and s.n_kv_heads == 8 and s.head_dim_k == 128
    assert s.max_ctx == 262144 and s.vision["out_hidden_size"] == 4096
    # text: 2 x 151936 x 4096 (untied) + 36 x (q/o 4096^2 x 2, k/v 4096 x 1024 x 2, MLP 3 x 4096 x 12288, 2 norms of
    # 4096 + q/k norms of 128) + the final norm
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 12288 + 2 * 4096 + 2 * 128
    assert s.params == 2 * 151936 * 4096 + 36 * layer + 4096 == 8_190_735_360
    # the checkpoint's own count (the report that embeds the config.json: 8,767,123,696 parameters in 750 tensors)
    assert s.params + _vision_params() == 8_767_123_696


def test_qwen3_vl_8b_sglang_weights_and_k_size_as_printed():
    s = llm.describe(model="Qwen/Qwen3-VL-8B-Instruct")
    r = llm.plan(s, "sglang", ctx=262144, vram=139.81 * GiB, mem_fraction_static=0.8388, gpu_name="NVIDIA H200")
    # bf16: every parameter of the checkpoint, tower included, 2 bytes (SGLang prints 'mem usage=16.52 GB')
    assert r["weights"] == 2 * 8_767_123_696
    # 'KV Cache is allocated. #tokens: 729090, K size: 50.06 GB': 36 layers x 8 KV heads x 128 x 2 bytes a token for K
    assert r["kv_per_token"] == 2 * 36 * 8 * 128 * 2
    assert round(729090 * r["kv_per_token"] / 2 / GiB, 2) == 50.06
