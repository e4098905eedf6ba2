"""Task ellm28: LLM batch 41 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize("bare, base_bytes_per_value, top_bytes_per_value", [
    ("Q4_K_XL", 144 / 256, 34 / 32),   # Q4_K .. Q8_0 (ggml-common.h block_q4_K 144 B / 256, block_q8_0 34 B / 32)
    ("q6_k_xl", 210 / 256, 34 / 32),   # Q6_K .. Q8_0 (a bare Q3_K_XL is bartowski's unless the name says unsloth: fix17)
    ("Q8_K_XL", 34 / 32, 2.0),         # Q8_0 .. BF16
])
def test_bare_k_xl_name_is_unsloth_dynamic(bare, base_bytes_per_value, top_bytes_per_value):
    # urika/llama-defender llama-server.log (b9090): Qwen3.5-9B-UD-Q4_K_XL.gguf, a user's "Q4_K_XL" (the -hf tag
    # form). llama-quantize's QUANT_OPTIONS (tools/quantize/quantize.cpp) has no *_XL type, so it is Unsloth's name
    s = llm.describe(model="Qwen/Qwen3.5-9B")
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype=bare)
    assert r["weights_range"] == [int(s.params * base_bytes_per_value), int(s.params * top_bytes_per_value)]
    assert r["weights_range"] == llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="UD-" + bare)["weights_range"]


def test_other_names_are_not_taken_for_unsloth():
    s = llm.describe(model="Qwen/Qwen3.5-9B")
    assert "weights_range" not in llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q4_K_M")
    with pytest.raises(UserError, match="Q4_K_XXL"):
        llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q4_K_XXL")


def test_llava_15_7b_is_built_in():
    # llava-hf/llava-1.5-7b-hf config.json: text_config vocab_size 32064 and max_position_embeddings 4096, the rest
    # LlamaConfig's defaults (4096 hidden, 11008 MLP, 32 layers, 32 heads = 32 KV heads); untied embeddings.
    # 2 x 32064 x 4096 + 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 4096
    s = llm.describe(model="ybelkada/llava-1.5-7b-hf-awq")  # mrpid12org/imageworks nohup.out, vLLM 0.10.2
    assert s.params == 262_668_288 + 32 * 202_383_360 + 4096 == 6_738_939_904
    assert s.quant == "awq" and s.max_ctx == 4096
    r = llm.plan(s, "vllm", ctx=4096, runtime_version="0.10.2")
    assert r["kv_per_token"] == 2 * 32 * 32 * 128 * 2 == 524_288
    # the CLIP ViT-L/14-336 tower as vLLM builds it (vision_feature_layer -2: 23 of 24 layers; q k v o and fc1 fc2
    # with biases, two norms a layer, the bias-free patch conv, class and 577 position embeddings, pre-layernorm)
    # and the two-layer projector: 311,888,896 values, 623,777,792 B in 16 bits
    tower = (23 * (4 * 1024 ** 2 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 4 * 1024) + 3 * 14 * 14 * 1024 + 1024
             + 577 * 1024 + 2 * 1024 + 1024 * 4096 + 4096 + 4096 * 4096 + 4096)
    assert tower == 311_888_896
    tower_note = next(n for n in r["notes"] if n.startswith("vision tower counted with the weights"))
    counted = float(tower_note.split("(")[1].split(" MiB")[0]) * MiB
    assert abs(counted / (tower * 2) - 1) < 0.02


def test_llava_free_memory_refusal():
    # the row's refusal: 'Free memory on device (13.58/15.99 GiB) on startup is less than desired GPU memory
    # utilization (0.85, 13.59 GiB)'; 0.85 x 15.99 = 13.59 GiB asked
    s = llm.describe(model="ybelkada/llava-1.5-7b-hf-awq")
    kw = dict(ctx=4096, runtime_version="0.10.2", vram=15.99 * GiB, gpu_memory_utilization=0.85,
              gpu_name="NVIDIA GeForce RTX 4080")
    assert llm.plan(s, "vllm", **kw)["fits_as_requested"]
    assert not llm.plan(s, "vllm", free_memory=int(13.58 * GiB), **kw)["fits_as_requested"]


def test_llamacpp_free_reading_already_lacks_the_context():
    # Kelsidavis/rusteze llama_test.log (b7780, RTX 5080, another process on it): 'projected to use 9339 MiB of device
    # memory vs. 9718 MiB of free device memory', -ngl 99 set by the user: it loaded and served. llama.cpp reads that
    # free memory with its CUDA context in place (ggml_backend_cuda_device_get_memory), so the row's 9718 MiB is a
    # card of 9718 + 384 MiB as kv counts a card. By hand: Q8_0 7165.44 MiB printed (kv 7173.46), KV 28 layers x 4
    # heads x 128 x 2 x 2 B x 32768 = 1792 MiB, compute 304, margin 256: 9525.5 <= 9718; with the context 9909.5 > 9718
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    row = {"id": "t", "runtime": "llama.cpp", "version": "b7780", "vram_gib": 9718 / 1024,
           "vram_reading": "llamacpp_free", "inferred": {"vram_gib": "the fit step's free device memory, 9718 MiB"},
           "input": {"model": "Qwen/Qwen2.5-Coder-7B-Instruct", "weights_dtype": "Q8_0", "ctx": 32768, "parallel": 1,
                     "kv_dtype": "f16", "flash_attn": "on", "ubatch": 512, "ngl": 99}}
    _, res = b._plan(row)
    assert res["vram"] == (9718 + 384) * MiB
    assert res["kv_total"] == 28 * 4 * 128 * 2 * 2 * 32768 == 1792 * MiB
    assert res["fits_as_requested"]
    # a card's total (no free reading named) keeps the context: the same load does not fit 9718 MiB
    card = {k: v for k, v in row.items() if k != "vram_reading"}
    assert b._plan(card)[1]["vram"] == 9718 * MiB and not b._plan(card)[1]["fits_as_requested"]


def test_vllm_v1_start_check_sizes_sliding_layers_by_their_window_before_the_hybrid_manager():
    # Kiloma-Advanced-Solutions/PLG_AI vllm.log: vLLM 0.8.4 (V1), Gemma 3 12B QAT AWQ, TP 2 on two 4090s,
    # max_model_len 131072: 'GPU KV cache size: 69,920 tokens', 'Maximum concurrency for 131,072 tokens per request:
    # 0.53x', and it served. 0.8.4 get_kv_cache_config checks the model's own specs before unify_hybrid_kv_cache_specs
    # makes every layer full for the pool. One rank (4 of 8 KV heads x 256, K and V, 2 B): 4096 B a token a layer;
    # 8 full layers x 131072 + 40 sliding x (cdiv(1023 + 2048, 16) + 1) x 16 = 4,800,905,216 B asked by the check,
    # 48 x 131072 x 4096 = 25,769,803,776 B for every layer in full (more than a 24 GB card)
    s = llm.describe(model="google/gemma-3-12b-it")
    check = 8 * 131072 * 4096 + 40 * ((1023 + 2048 + 15) // 16 + 1) * 16 * 4096
    assert check == 4_800_905_216
    kw = dict(ctx=131072, weights_dtype="awq", vram=23.55 * GiB, gpu_memory_utilization=0.9, tensor_parallel_size=2,
              gpu_name="NVIDIA GeForce RTX 4090")
    r = llm.plan(s, "vllm", runtime_version="0.8.4", **kw)
    assert r["fits_as_requested"] and r["concurrency"] < 1
    assert check <= r["kv_capacity_bytes"] < 48 * 131072 * 4096
    # the hybrid manager's need (0.10) is the same sum, now for the pool too
    assert llm.plan(s, "vllm", runtime_version="0.10.0", **kw)["kv_total"] == check
    # 0.8.0: no SlidingWindowSpec, every layer's bytes_for_tokens(max_model_len): refused
    assert not llm.plan(s, "vllm", runtime_version="0.8.0", **kw)["fits_as_requested"]


def test_metal_maps_a_gemma4_gguf_from_its_first_tensor_to_its_last():
    # coin1860/kb-agent llama_server.log: Gemma-4-E2B Q4_K_M (2.88 GiB) on an Apple M4, 36/36 layers: MTL0_Mapped
    # 2947.73 MiB, CPU_Mapped 216.00 (token_embd). convert_hf_to_gguf writes Gemma 4's rope_freqs (a layer-0 tensor)
    # first, and Metal maps its context's first-to-last range (get_mapping_range): the whole file, host tables inside.
    # By hand (tied; E2B: vocab 262144, hidden 1536, 35 layers x 256 per-layer width): the CUDA plan's GPU part holds
    # the tied output, token_embd at Q6_K (210 B a 256): 262144 x 1536 x 210 / 256 = 330,301,440 B; the host part is
    # that table + the per-layer table at Q4_K (144 B a 256): 262144 x 8960 -> 1,321,205,760, + its projection
    # 1536 x 8960 -> 7,741,440 and norm 256 -> 144 = 1,659,248,784 B
    s = llm.describe(model="google/gemma-4-E2B-it")
    kw = dict(ctx=32768, weights_dtype="Q4_K_M", kv_dtype="q8_0", flash_attn="on", ubatch=1024)
    metal = llm.plan(s, "llama.cpp", gpu_name="Apple M4", **kw)
    cuda = llm.plan(s, "llama.cpp", gpu_name="NVIDIA GeForce RTX 4090", **kw)
    assert cuda["host_weights"] == 330_301_440 + 1_321_205_760 + 7_741_440 + 144 == 1_659_248_784
    assert metal["gpu_weights"] == cuda["gpu_weights"] - 330_301_440 + 1_659_248_784 == metal["weights"]
    assert any("Metal maps the file" in n for n in metal["notes"]) and not any("Metal maps" in n for n in cuda["notes"])
    # a partial offload maps from a later layer: not the whole file; an Ollama blob's order is not read
    part = llm.plan(s, "llama.cpp", gpu_name="Apple M4", ngl=20, **kw)
    assert part["gpu_weights"] == llm.plan(s, "llama.cpp", gpu_name="NVIDIA GeForce RTX 4090", ngl=20, **kw)["gpu_weights"]
    blob = llm.describe(model="gemma4:e2b")
    assert (llm.plan(blob, "llama.cpp", gpu_name="Apple M4", **kw)["gpu_weights"]
            == llm.plan(blob, "llama.cpp", **kw)["gpu_weights"])
