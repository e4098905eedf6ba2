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


def _qwen3_30b_tp2(version, **kw):
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    return llm.plan(s, "vllm", ctx=8192, vram=39.49 * GiB, gpu_memory_utilization=0.9, tensor_parallel_size=2,
                    runtime_version=version, gpu_name="NVIDIA A100-PCIE-40GB", **kw)


def test_the_0_20_2rc1_nightly_takes_its_graph_estimate_out_of_the_share():
    # yecohn/moe-bench logs/qwen3-30b-a3b-vllm-tools.log (vLLM 0.20.2rc1.dev50+g48954de23.d20260519, TP 2 + expert
    # parallel, 0.9 of an A100-PCIE-40GB): 'Estimated CUDA graph memory: 1.90 GiB total', then 'Available KV cache
    # memory: 4.35 GiB' and 'CUDA graph memory profiling is enabled (default since v0.21.0)'. Given that estimate the
    # pool must come out of the share with it, as 0.21 does; outside the share the pool would be 1.90 GiB larger
    nightly = "0.20.2rc1.dev50+g48954de23.d20260519"
    r = _qwen3_30b_tp2(nightly, cuda_graph_memory=1.90 * GiB)
    assert abs(r["kv_capacity_bytes"] / GiB / 4.35 - 1) <= 0.03
    assert r["kv_capacity_bytes"] == _qwen3_30b_tp2("0.21.0", cuda_graph_memory=1.90 * GiB)["kv_capacity_bytes"]
    # 'GPU KV cache size: 95,040 tokens': 48 layers x 2 KV heads (one GPU's of 4) x 128 x 2 x 2 bytes a token
    assert r["kv_per_token"] == 48 * 2 * 128 * 2 * 2
    assert abs(r["kv_capacity_tokens"] / 95040 - 1) <= 0.03


@pytest.mark.parametrize("version", ["0.20.2", "0.20.1", "0.20.0", "0.20.1rc1.dev16", "0.20.2rc1"])
def test_every_0_20_build_takes_the_graphs_out_of_the_share(version):
    # round 64 (task ellm42) replaced this round's gate by observation with vLLM's source: vllm#38284 turned the
    # estimate on by default in 0.20.0 (PyPI's vllm-0.20.0.tar.gz: envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    # default "1"), so every 0.20 release and every nightly after it sizes the pool as 0.21 does
    with_graphs = _qwen3_30b_tp2(version, cuda_graph_memory=1.90 * GiB)
    assert with_graphs["kv_capacity_bytes"] == _qwen3_30b_tp2("0.21.0", cuda_graph_memory=1.90 * GiB)["kv_capacity_bytes"]
    assert with_graphs["kv_capacity_bytes"] < _qwen3_30b_tp2(version)["kv_capacity_bytes"]


@pytest.mark.parametrize("version", ["0.19.1", "0.19.0", "0.19.2rc1.dev134"])
def test_a_0_19_build_keeps_the_graphs_outside(version):
    # vllm-0.19.1.tar.gz reads "0" (the estimate off by default); a 0.19.2rc1 nightly may or may not carry the change
    # (the merge was not placed among them) and keeps the older form: a given estimate changes the total, not the pool
    with_graphs = _qwen3_30b_tp2(version, cuda_graph_memory=1.90 * GiB)
    assert with_graphs["kv_capacity_bytes"] == _qwen3_30b_tp2(version)["kv_capacity_bytes"]


def test_sglang_data_parallel_without_dp_attention_is_refused():
    # SGLang's --dp without --enable-dp-attention runs independent replicas, not read (round 55 models DP attention
    # and vLLM's DP: tests/unit/test_kv_ellm32.py)
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    with pytest.raises(UserError, match="data_parallel_size 2 on SGLang without --enable-dp-attention"):
        llm.plan(s, "sglang", ctx=8192, vram=39.49 * GiB, tensor_parallel_size=2, data_parallel_size=2)


def test_data_parallel_of_one_changes_nothing_and_bad_values_are_named():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    base = llm.plan(s, "vllm", ctx=8192, vram=39.49 * GiB, tensor_parallel_size=2)
    one = llm.plan(s, "vllm", ctx=8192, vram=39.49 * GiB, tensor_parallel_size=2, data_parallel_size=1)
    assert one["kv_capacity_tokens"] == base["kv_capacity_tokens"] and one["weights"] == base["weights"]
    with pytest.raises(UserError, match="llama.cpp has no data parallelism"):
        llm.plan(s, "llama.cpp", ctx=8192, data_parallel_size=2)
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(UserError, match="whole number of ranks"):
            llm.plan(s, "vllm", ctx=8192, data_parallel_size=bad)
