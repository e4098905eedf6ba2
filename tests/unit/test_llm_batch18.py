"""Mechanisms tuned on batch 18 (benchmarks/data/llm_measured.json; the rows named here are regression rows now), each
read in Ollama's source. Llama 3.2 Vision (mllama) in Ollama's estimate: fs/ggml GraphSize case "mllama" prices a
cross-attention layer's cache for one image (1601 vision tokens x 4 tiles, fp32) instead of num_ctx cells, and
llm/memory.go projectorMemoryRequirements case "mllama" sizes the vision graph for 4 tiles of 560^2 pixels (v0.5.12).
Ollama's own runner (0.12, kvcache/causal.go Causal.Init) keeps window x sequences + batch cells for a sliding layer
and num_ctx x sequences for the others. Every expected value is a number Ollama printed in the thread named beside
it; each test also shows the figure the mechanism's absence gives."""
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _vision(ctx=2048):
    s = llm.describe(model="llama3.2-vision:11b")
    return s, llm.plan(s, "ollama", ctx=ctx, parallel=1, vram=21.6 * GiB, runtime_version="0.5.12")


def test_llama32_vision_tag_resolves_to_mllama_with_cross_attention_layers():
    s, _ = _vision()
    assert s.name == "Llama-3.2-11B-Vision" and s.n_layers == 40
    assert s.cross_attn_layers == (3, 8, 13, 18, 23, 28, 33, 38)
    assert any("Q4_K_M" in n for n in s.notes)


def test_ollama_prices_mllama_cross_layers_for_one_image():
    # ollama/ollama#9311 (0.5.12, llama3.2-vision at num_ctx 2048): memory.required.kv 656.2 MiB =
    # 32 x 2048 x 4 KiB (self-attention, f16) + 8 x 6404 x 8 KiB (cross-attention, fp32)
    _, r = _vision()
    assert abs(r["kv_total"] / MiB - 656.2) <= 0.05 + 1e-9
    # the cross layers do not grow with num_ctx
    _, r4 = _vision(4096)
    assert r4["kv_total"] - r["kv_total"] == 32 * 2048 * 4096
    # counted as self-attention layers the cache would be 320.0 MiB
    assert abs(r["kv_total"] / MiB - 320.0) > 300


def test_ollama_mllama_projector_graph():
    # ollama/ollama#9311: projector.graph 2.8 GiB (4 tiles x 1608 padded patches, 16 heads, fp32), projector.weights
    # 1.8 GiB; the generic one-image ViT graph would be 0.15 GiB
    _, r = _vision()
    assert round(r["projector"]["graph"] / GiB, 1) == 2.8
    assert abs(r["projector"]["weights"] / GiB - 1.8) / 1.8 < 0.10
    # memory.required.full 11.3 GiB, every layer on the 21.6 GiB GPU
    assert abs(r["ollama_required_full"] / GiB - 11.3) / 11.3 < 0.02 and r["fits_as_requested"]


def test_cross_layers_only_change_ollamas_estimate():
    s, _ = _vision()
    r = llm.plan(s, "llama.cpp", ctx=2048)
    assert r["kv_total"] == 40 * 2048 * 4096


def test_ollama_012_runner_sliding_cache_is_window_plus_batch():
    # ollama/ollama#12303 (0.12, gemma3:4b, CPU): kv cache 334.0 MiB = 5 global layers x 8192 cells + 29 sliding
    # layers x (1024 window + 512 batch) cells, 4 KiB a cell (kvcache/causal.go Init: maxSequences x swaMemorySize +
    # maxBatch); every layer at 8192 cells would be 1088.0 MiB
    s = llm.describe(model="gemma3:4b")
    r = llm.plan(s, "ollama", ctx=8192, parallel=1, runtime_version="0.12.2")
    assert abs(r["kv_total"] / MiB - 334.0) <= 0.05 + 1e-9
    assert r["kv_detail"]["sliding_cells"] == 1024 + 512


def test_bad_cross_attention_layers_are_a_clear_error():
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import spec as S
    cfg = {"model_type": "mllama", "text_config": {"vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
           "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "cross_attention_layers": [1, 9]}}
    with pytest.raises(UserError, match="cross_attention_layers"):
        S.from_config(cfg)
    cfg["text_config"]["cross_attention_layers"] = [1, 1]
    with pytest.raises(UserError, match="cross_attention_layers"):
        S.from_config(cfg)


# --- Gemma's graph in Ollama's estimate (fs/ggml GraphSize case "gemma", "gemma2", "gemma3") -------------------------

def test_ollama_gemma_graph_follows_graphsize():
    from gpu_garden.memory.llm.runtimes import ollama as O
    # ollama/ollama#9818 (0.6.2, gemma3:27b at num_ctx 1024): graph.full 522.5 MiB, graph.partial 1.6 GiB
    full, partial = O.gemma_graph(llm.describe(model="gemma3:27b"), 1024)
    assert abs(full / MiB - 522.5) < 0.5 and round(partial / GiB, 1) == 1.6
    # ollama/ollama#10765 (0.7.0, gemma3:4b at 4096): graph.full 517.0 MiB, graph.partial 1.0 GiB
    full, partial = O.gemma_graph(llm.describe(model="gemma3:4b"), 4096)
    assert abs(full / MiB - 517.0) < 0.5 and round(partial / GiB, 1) == 1.0


def test_ollama_gemma_partial_graph_does_not_follow_the_output_tensor():
    # ollama/ollama#11162 (0.9.2, gemma3:27b-it-fp16 over two 5090s, num_ctx 4096): memory.required.full 58.6 GiB; each
    # GPU is charged the partial graph, which GraphSize sizes without the weights' type (the graph full + an fp16
    # output tensor gave 61.75 GiB, +5.4 %)
    s = llm.describe(model="gemma3:27b-it-fp16")
    r = llm.plan(s, "ollama", ctx=4096, parallel=1, runtime_version="0.9.2", num_gpus=2)
    assert abs(r["ollama_required_full"] / GiB - 58.6) / 58.6 < 0.01


# --- ggml-cuda's row padding of a quantized cache in ik_llama.cpp's layout ----------------------------------------------

def test_ik_llama_quantized_k_cache_carries_one_padded_row_per_layer_on_cuda():
    # ikawrakow/ik_llama.cpp#370 (May 2025): Qwen3-235B-A22B, q8_0 cache at 16384 cells over two GPUs: CUDA0 KV buffer
    # 816.02 MiB (48 layers), CUDA1 782.02 MiB (46); KV self size 1598.00 MiB. K is head_dim x (heads x cells), so
    # ggml_backend_cuda_buffer_type_get_alloc_size adds (512 - 128) q8_0 values = 408 bytes to each layer's K, which
    # ggml-alloc.c alloc_tensor_range pads to the CUDA buffer type's 128-byte alignment: 512 (task ellm74; a one-GPU
    # start of the same file, #357, prints 3196.05 = 94 x 34 MiB + 94 x 512 B, where 408 would print 3196.04)
    s = llm.describe(model="Qwen3-235B-A22B")
    kw = dict(ctx=16384, kv_dtype="q8_0", flash_attn=True)
    r = llm.plan(s, "llama.cpp", runtime_version="ik_llama.cpp (May 2025)", **kw)
    per = r["kv_per_layer"]["device_buffer"]
    assert per - r["kv_per_layer"]["full"] == 512
    assert round(48 * per / MiB, 2) == 816.02 and round(46 * per / MiB, 2) == 782.02
    assert round(r["kv_total"] / MiB, 2) == 1598.00          # the total line counts the tensors without padding
    # mainline llama.cpp and an f16 cache: no padding modelled
    assert llm.plan(s, "llama.cpp", **kw)["kv_per_layer"]["device_buffer"] == r["kv_per_layer"]["full"]
    f16 = llm.plan(s, "llama.cpp", runtime_version="ik_llama.cpp", ctx=16384, flash_attn=True)
    assert f16["kv_per_layer"]["device_buffer"] == f16["kv_per_layer"]["full"]
