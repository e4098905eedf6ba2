"""Mechanisms tuned on batch 17 (benchmarks/data/llm_measured.json; those rows are regression rows now), each read in
the runtime's source. vLLM: V0's CacheEngine pads an MLA cache entry to 256 bytes (cache_engine.py _align_cache,
align_to_256bytes); 0.7.x's V0 MLA keeps absorbed W_Q_UK / W_UV_O copies next to the raw weights
(MLACommonImpl.process_weights_after_loading, VLLM_MLA_PERFORM_MATRIX_ABSORPTION); before 0.7.1 vLLM had no MLA
and cached K and V per head at the query-key head size; before 0.5.4 V0 profiled a whole max_model_len prompt
(chunked prefill for long contexts came with vllm-project/vllm#6666). Every expected value is a number the runtime
printed in the thread named beside it; each test also shows the figure the mechanism's absence gives."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V, vllm_mla as VM

GiB, MiB = 1 << 30, 1 << 20
DSC = "TechxGenus/DeepSeek-Coder-V2-Lite-Instruct-AWQ"


# --- V0 pads each MLA cache entry to 256 bytes ----------------------------------------------------------------------

def test_vllm_v0_pads_mla_entries_to_256_bytes():
    # vllm-project/vllm#13109 (0.7.2, V0, Triton MLA): 59.75 GiB of KV memory, 116023 blocks = 1,856,368 tokens:
    # 34,560 bytes a token = 27 layers x 1280 (576 fp16 values padded from 1152 to 1280 bytes)
    s = llm.describe(model=DSC)
    r = llm.plan(s, "vllm", ctx=163840, runtime_version="0.7.2", vllm_engine="v0", vllm_entrypoint="llm")
    assert r["kv_detail"]["layout"] == "latent-256b"
    assert r["kv_per_token"] == 27 * 1280
    lo = llm.vllm_kv_tokens(s, 59.745 * GiB, "f16", "latent-256b")
    hi = llm.vllm_kv_tokens(s, 59.755 * GiB, "f16", "latent-256b")
    assert lo <= 1856368 <= hi
    # the unpadded latent would hold 11 % more tokens than vLLM printed
    assert llm.vllm_kv_tokens(s, 59.75 * GiB, "f16") > 1.1 * 1856368


def test_vllm_v1_mla_cache_is_not_padded():
    s = llm.describe(model=DSC)
    r = llm.plan(s, "vllm", ctx=32768, runtime_version="0.9.2")
    assert r["kv_detail"]["layout"] == "latent" and r["kv_per_token"] == 27 * 1152


# --- 0.7.x V0 keeps absorbed MLA matrices next to the raw weights ---------------------------------------------------

def test_vllm_07_v0_mla_weights_include_absorbed_matrices():
    # vllm#13109: "model weights take 10.45GiB" for the AWQ DeepSeek-Coder-V2-Lite (its 4-bit checkpoint alone is
    # about 8.2 GiB; W_Q_UK and W_UV_O add 2 x 2048 x 16 x 512 fp16 values a layer, the dequantized kv_b_proj more)
    s = llm.describe(model=DSC)
    r = llm.plan(s, "vllm", ctx=163840, vram=79.22 * GiB, runtime_version="0.7.2", vllm_engine="v0",
                 vllm_entrypoint="llm", gpu_memory_utilization=0.9)
    assert r["weights"] / GiB == pytest.approx(10.45, rel=0.05)
    assert r["kv_capacity_tokens"] == pytest.approx(1856368, rel=0.02)
    # 0.8 dropped the absorbed copies: the checkpoint alone, 20 % below what 0.7.2 printed
    later = llm.plan(s, "vllm", ctx=163840, runtime_version="0.8.0", vllm_engine="v0")
    assert later["weights"] / GiB < 0.85 * 10.45
    assert VM.mla_absorbed_bytes(V.per_rank(s, 1), {"version": (0, 7, 2), "v1": True}, "awq") == 0


# --- before 0.7.1: no MLA, K and V per head at qk_head_dim ------------------------------------------------------------

def test_vllm_before_mla_caches_k_and_v_per_head():
    # vllm-project/vllm#6156 (0.5.1, two L40s, TP 2): DeepSeek-Coder-V2-Lite refused at max_model_len 163840 with a
    # 63,040-token cache. Per GPU a token takes 27 layers x (8 heads x 192) x 2 (K, V padded to 192) x 2 bytes
    s = llm.describe(model="deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct")
    r = llm.plan(s, "vllm", ctx=163840, vram=44.42 * GiB, runtime_version="0.5.1", tensor_parallel_size=2,
                 weights_dtype="fp16", gpu_name="NVIDIA L40")
    assert r["kv_detail"]["layout"] == "heads"
    assert r["kv_per_token"] == 27 * 2 * 8 * 192 * 2
    assert not r["fits_as_requested"]
    # the latent (576 values a layer, not split by TP) is 5.3 times smaller and held 830k tokens: a false "fits"
    assert r["kv_per_token"] > 5 * 27 * 576 * 2


def test_vllm_v0_profiles_whole_prompt_before_0_5_4():
    # before vllm-project/vllm#6666 (first in 0.5.4) V0 did not turn chunked prefill on above 32K: the profile run
    # took one prompt of max_model_len (vllm#6156's 163840 tokens), after it 2048
    assert V.settings((0, 5, 1), 44 * GiB, 163840, {})["max_batched"] == 163840
    assert V.settings((0, 6, 4), 44 * GiB, 163840, {})["max_batched"] == 2048
    assert V.settings((0, 5, 1), 44 * GiB, 8192, {})["max_batched"] == 8192


# --- ik_llama.cpp keeps no sliding-window cache ---------------------------------------------------------------------

def test_ik_llama_keeps_sliding_layers_at_full_context():
    # ikawrakow/ik_llama.cpp#822: gpt-oss-20b, CUDA0 KV buffer 6144.00 MiB = 24 layers x 131072 cells x 1024 x 2 bytes;
    # llama.cpp keeps its 12 sliding layers at the window and allocated about half (the reporter's 3.3 against 5 GB)
    s = llm.describe(model="gpt-oss-20b")
    fork = llm.plan(s, "llama.cpp", ctx=131072, runtime_version="ik_llama.cpp")
    assert fork["kv_total"] / MiB == pytest.approx(6144.0, abs=0.005)
    mainline = llm.plan(s, "llama.cpp", ctx=131072, runtime_version="b6500")
    assert mainline["kv_total"] / MiB < 0.6 * 6144.0


# --- Meta's FP8 release quantizes the feed-forward matmuls only --------------------------------------------------

def test_meta_fp8_release_keeps_attention_in_bf16():
    # vllm-project/vllm#6746 (0.5.3, 8x H100, TP 8): "Loading model weights took 57.7520 GB" a GPU
    s = llm.describe(model="meta-llama/Meta-Llama-3.1-405B-Instruct-FP8")
    r = llm.plan(s, "vllm", ctx=8192, runtime_version="0.5.3", tensor_parallel_size=8)
    assert r["weights"] / GiB == pytest.approx(57.752, rel=0.03)
    # every decoder matmul in FP8 would give 47.7 GiB: 17 % low
    other = llm.describe(model="neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8")
    assert llm.plan(other, "vllm", ctx=8192, tensor_parallel_size=8)["weights"] / GiB < 0.85 * 57.752


def test_qwq_32b_is_described():
    # didier-durand/llms-in-clouds docs/sglang.md: QwQ-32B's 64 layers x 8 KV heads x 128 (SGLang's 1.42 GB K half at
    # 46611 tokens over 4 GPUs); its config.json
    s = llm.describe(model="Qwen/QwQ-32B")
    assert (s.n_layers, s.n_kv_heads, s.head_dim_k) == (64, 8, 128)


# --- SGLang: one static pool, (mem_fraction_static x free memory - weights) / bytes a token ----------------------

def test_sglang_pool_follows_profile_max_num_token():
    # didier-durand/llms-in-clouds docs/sglang.md (SGLang 0.4.3.post4, QwQ-32B at TP 4 on four L4s): 21.63 GB free
    # after torch.distributed, 15.54 GB of weights, mem_fraction_static 0.85 -> "#tokens: 46611, K size: 1.42 GB";
    # rest = 6.09 - 21.63 x 0.15 = 2.85 GiB over 64 KiB a token (64 layers x 2 KV heads x 128 x 2 x 2 bytes)
    from gpu_garden.memory.llm.runtimes import sglang as SG
    s = V.per_rank(llm.describe(model="Qwen/QwQ-32B"), 4)
    assert SG.cell_bytes(s, "f16") == 64 * 2 * 128 * 2 * 2
    vram = (21.63 * GiB) + SG.CUDA_CONTEXT + SG.NCCL           # the card whose free memory was 21.63 GB
    ev = SG.evaluate(s, 131072, "f16", 15.54 * GiB, vram, 4, 0.85)
    assert ev["tokens"] == pytest.approx(46611, rel=0.002)
    assert SG.cell_bytes(s, "f16") / 2 * 46611 / GiB == pytest.approx(1.42, abs=0.005)
    assert ev["fits"] and not ev["whole"]                        # it started; a request is capped at the pool
    # the pool is what the static share leaves after the weights, not the share itself: 0.85 x 21.63 / 64 KiB = 301k
    assert ev["tokens"] < 0.2 * (0.85 * 21.63 * GiB / SG.cell_bytes(s, "f16"))
    assert SG.default_mfs(4) == 0.85 and SG.default_mfs(1) == 0.88


def test_sglang_refuses_when_weights_fill_the_share():
    # the weights alone above mem_fraction_static x free memory: "Not enough memory" (SGLang exits)
    s = llm.describe(model="Qwen/QwQ-32B")
    r = llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, mem_fraction_static=0.5)
    assert not r["fits_as_requested"]
    assert any("Not enough memory" in n for n in r["notes"])


# --- Ollama's graph estimate for the architectures GraphSize does not name -----------------------------------------

def test_ollama_graph_fallback_for_unlisted_architectures():
    # ollama/ollama#10615 (0.6.8): mistral-small3.1:24b (mistral3) at num_ctx 131072 prints graph.full = graph.partial
    # = 13.3 GiB = GQA 32 / 8 x 20 GiB of cache / 6 (llm/memory.go when GraphSize returns nothing)
    s = llm.describe(model="mistral-small3.1:24b")
    r = llm.plan(s, "ollama", ctx=131072, runtime_version="0.6.8")
    assert r["overhead"]["compute_buffer"] / GiB == pytest.approx(13.3, abs=0.05)
    # llama.cpp's own compute buffer (what 0.12's measured engine allocates) is 8.3 GiB
    assert llm.plan(s, "ollama", ctx=131072)["overhead"]["compute_buffer"] < 0.7 * 13.3 * GiB


def test_ollama_qwen25vl_projector_graph():
    # ollama/ollama#10801 (0.7.0, 3.3 GiB free): qwen2.5vl:7b places no layer; required.full 4.3 GiB is the weights
    # and the cache alone. GraphSize's qwen25vl vision case (max_pixels 28 x 28 x 1280, 5120 patches, 16 heads) is
    # 1.6 GiB; with the generic 896-pixel tower's 1.0 GiB two layers would have fitted
    s = llm.describe(model="qwen2.5vl:7b")
    r = llm.plan(s, "ollama", ctx=4096, vram=3.3 * GiB, runtime_version="0.7.0")
    assert r["projector"]["graph"] / GiB == pytest.approx(1.62, abs=0.02)
    assert r["gpu_layers_used"] in (0, None) and not r["fits_as_requested"]
    assert r["ollama_required_full"] / GiB == pytest.approx(4.3, abs=0.05)


# --- Ollama's memory.required.full over several GPUs --------------------------------------------------------------

def test_ollama_required_full_over_several_gpus():
    # llm/memory.go: each GPU holds the minimum reserve, a layer as buffer and the partial graph; the layers and the
    # output are counted once wherever they go. ollama/ollama#10740 (0.6.8, three 3090s: the row re-attributed from
    # 0.7.0, whose buffer is the largest tensor group, test_llm_ollama_buffer.py): qwen3:32b q6_K at 32768,
    # required.full 67.3 GiB; ollama/ollama#11982 (0.11.5, three GPUs): gpt-oss:120b at 75000, 109.9 GiB
    s = llm.describe(model="qwen3:32b-q6_K")
    three = llm.plan(s, "ollama", ctx=32768, runtime_version="0.6.8", num_gpus=3)
    assert three["ollama_required_full"] / GiB == pytest.approx(67.3, abs=0.05)
    one = llm.plan(s, "ollama", ctx=32768, runtime_version="0.6.8")
    assert one["ollama_required_full"] / GiB < 45                    # one GPU's figure: 23 GiB short of the log
    g = llm.describe(model="gpt-oss:120b")
    r = llm.plan(g, "ollama", ctx=75000, runtime_version="0.11.5", flash_attn=True, num_gpus=3)
    assert r["ollama_required_full"] / GiB == pytest.approx(109.9, rel=0.005)


# --- Ollama walks blocks of different sizes as llm/memory.go does ---------------------------------------------------

def test_ollama_places_deepseeks_small_dense_blocks_first_before_0_7():
    # ollama/ollama#8667 (0.5.11, 6.9 GiB free): deepseek-r1:671b, layers.offload=3, required.partial 3.4 GiB: the
    # forward walk puts the three dense blocks (about 0.5 GiB each with their cache) on the GPU; the average block
    # (6.4 GiB) would place none. From 0.7 the walk runs backward from the large MoE blocks: none fit
    s = llm.describe(model="deepseek-r1:671b")
    r = llm.plan(s, "ollama", ctx=2048, vram=6.9 * GiB, runtime_version="0.5.11")
    assert r["gpu_layers_used"] == 3
    assert r["total"] / GiB == pytest.approx(3.4, abs=0.4)     # the three blocks + buffer + reserve + partial graph
    # the blocks left off are priced at the last block's size, a Q6_K-ffn_down block of Q4_K_M's last eighth:
    # required.full 415.7 GiB as printed; the average block gives 7 % less
    assert r["ollama_required_full"] / GiB == pytest.approx(415.7, rel=0.01)
    assert llm.plan(s, "ollama", ctx=2048, vram=6.9 * GiB, runtime_version="0.7.0")["gpu_layers_used"] in (0, None)


# --- descriptions added with batch 17: their model cards' parameter counts -------------------------------------------

@pytest.mark.parametrize("name, billions", [
    ("Llama-2-7B", 6.74), ("Llama-2-13B", 13.02), ("Llama-2-70B", 68.98), ("Llama-3.2-1B", 1.24),
    ("Qwen2.5-1.5B", 1.54), ("Qwen2.5-3B", 3.09), ("Qwen3-1.7B", 1.7), ("Mistral-Small-24B", 23.6),
    ("Mixtral-8x22B", 141), ("Gemma-2-2B", 2.61), ("Llama-3.1-405B", 405), ("QwQ-32B", 32.5)])
def test_added_descriptions_match_their_model_cards(name, billions):
    assert llm.describe(model=name).params / 1e9 == pytest.approx(billions, rel=0.015)


def test_added_names_resolve():
    assert llm.describe(model="deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B").name == "Qwen2.5-1.5B"
    assert llm.describe(model="llama2:13b").quant == "Q4_0"             # an early library: Q4_0 default builds
    assert llm.describe(model="mistral-small:24b").name == "Mistral-Small-24B"


# --- Ollama 0.6's mistral3 builds: the output tensor at the base type --------------------------------------------

def test_ollama_mistral3_output_keeps_the_base_type():
    # ollama/ollama#10615 (0.6.8): mistral-small3.1:24b memory.weights.nonrepeating 360.0 MiB = 131072 x 5120 in Q4_K;
    # Ollama's patched llama.cpp quantizer had no "output" in mistral3's tensor map (patch 0021), so the Q6_K rule for
    # the output never fired (Q6_K would be 525.0 MiB). Other libraries keep their Q6_K output
    s = llm.describe(model="mistral-small3.1:24b")
    assert llm.plan(s, "ollama", ctx=4096)["weights_by_role"]["output"] / MiB == pytest.approx(360.0, abs=0.05)
    g = llm.describe(model="qwen2.5:14b")
    assert llm.plan(g, "ollama", ctx=2048)["weights_by_role"]["output"] / MiB == pytest.approx(609.1, abs=0.1)  # ollama#9245
