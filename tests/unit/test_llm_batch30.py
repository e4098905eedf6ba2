"""Batch 30 (read by ellm14 after its first sight: a regression set). Expected values are what the runtimes printed,
in the pages each test names, or hand arithmetic from the models' config.json fields (source named)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def test_ollama_qwen36_tags_name_the_27b_and_the_moe_by_its_total():
    # bric.pe.kr's Ollama 0.24 num_ctx sweep runs 'qwen3.6:27b' ("27.8B, Q4"); the library's default build is Q4_K_M
    s = llm.describe(model="qwen3.6:27b")
    assert (s.name, s.quant) == ("Qwen3.6-27B", "Q4_K_M")
    assert llm.describe(model="qwen3.6:35b").name == "Qwen3.6-35B-A3B"
    assert llm.describe(model="qwen3.6:27b-q8_0").quant == "Q8_0"
    with pytest.raises(UserError, match="name one"):
        llm.describe(model="qwen3.6")


def test_ollama_qwen36_27b_cache_at_8k():
    # Qwen3.6-27B config.json: 16 full-attention layers of 4 KV heads x 256 (f16 K and V), 48 gated-DeltaNet layers
    # of 16 key heads and 48 value heads x 128, conv kernel 4; Ollama keeps the conv and recurrent state in f32
    full = 16 * 2 * 4 * 256 * 2 * 8192
    state = 48 * (48 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 48 * 128) * 4)
    assert state == 156_893_184
    r = llm.plan(llm.describe(model="qwen3.6:27b"), "ollama", ctx=8192, runtime_version="0.24.0")
    assert r["kv_total"] == full + state


def _tksk(model, ctx, parallel):
    # TkskKurumi/llama-server-benchmarks (llama.cpp b7522, 4 x RTX 3080 20 GB): -c ctx -np parallel, -ctk/-ctv q4_0, -fa on
    return llm.plan(llm.describe(model=model), "llama.cpp", ctx=ctx, parallel=parallel, kv_dtype="q4_0",
                    flash_attn="on", weights_dtype="Q4_K_M", runtime_version="b7522")


def test_qwen3_vl_235b_cache_is_qwen3_235b_geometry():
    # Qwen3-VL-235B-A22B-Instruct config.json text_config: 94 layers, 4 KV heads x 128; q4_0 is 18 bytes a 32-value block
    per_cell = 94 * 2 * 4 * 128 * 18 // 32
    assert _tksk("Qwen/Qwen3-VL-235B-A22B-Instruct", 65536, 4)["kv_total"] == 65536 * per_cell == 3384 * MiB  # memory.log
    assert _tksk("Qwen/Qwen3-VL-235B-A22B-Instruct", 16384, 1)["kv_total"] == 846 * MiB  # memory-np=1.log: 225+234+225+162


def test_glm46_is_read_with_glm47s_config():
    # GLM-4.6 config.json: 92 layers, 8 KV heads x 128 (the MTP block keeps no cache in llama.cpp)
    assert llm.describe(model="zai-org/GLM-4.6").n_layers == 92
    assert _tksk("zai-org/GLM-4.6", 65536, 4)["kv_total"] == 65536 * 92 * 2 * 8 * 128 * 18 // 32 == 6624 * MiB
    # GLM-4.6V is GLM-4.5-Air's 106B decoder (46 layers, task ellm20), never GLM-4.6's
    assert llm.describe(model="zai-org/GLM-4.6V").n_layers == 46


def test_kimi_k26_is_k2_thinkings_decoder_with_an_fp8_latent_cache():
    # K2.5/K2.6 text_config: K2-Thinking's DeepseekV3 layout, 61 layers, MLA kv_lora_rank 512 + rope 64: vLLM's fp8
    # latent cache is 576 bytes a token a layer, the same on every tensor-parallel rank
    s = llm.describe(model="moonshotai/Kimi-K2.6")
    assert s.name == "Kimi-K2-Thinking" and any("MoonViT" in n for n in s.notes)
    r = llm.plan(s, "vllm", ctx=262144, kv_dtype="fp8", vram=94.97 * GiB, tensor_parallel_size=16,
                 gpu_memory_utilization=0.94, max_num_seqs=128, max_num_batched_tokens=8192)
    assert r["kv_detail"]["per_token"] == 61 * 576


def _pool(model, tp, kv, available, ctx):
    from gpu_garden.memory.llm import cache as C
    s = llm.vllm_per_rank(llm.describe(model=model), tp)
    return C.vllm_pool(s, available, kv, ctx, hybrid=True, max_batched=8192, state_blocks=2,
                       tokens_from_concurrency=True)


def test_qevos_refusal_is_one_block_of_1568_tokens():
    # qevos.ai, vLLM 0.21.0, Qwen3.6-27B-FP8 on one 48 GB card, fp8 cache, prefix caching: 262,144 refused "need 8.33
    # GiB, only 8.29 GiB", 261,856 starts. One fp8 page: 1568 tokens x 2 x 4 KV heads x 256 = 3,211,264 bytes a layer,
    # 16 layers a group; a request holds ceil(262144 / 1568) = 168 attention blocks + 3 DeltaNet groups x 2 state pages
    group_block = 16 * 1568 * 2 * 4 * 256
    assert _pool("Qwen/Qwen3.6-27B-FP8", 1, "fp8", 8.29 * GiB, 262144)["request_bytes"] == (168 + 6) * group_block
    assert round((168 + 6) * group_block / GiB, 2) == 8.33
    assert _pool("Qwen/Qwen3.6-27B-FP8", 1, "fp8", 8.29 * GiB, 262144)["concurrency"] < 1  # refused
    assert 261856 == 167 * 1568 and _pool("Qwen/Qwen3.6-27B-FP8", 1, "fp8", 8.29 * GiB, 261856)["concurrency"] >= 1


def test_recipes810_fp8_checkpoint_count_is_491_blocks_of_a_two_byte_cache():
    # vllm-project/recipes#810 table: Qwen3.8-27B-FP8 at TP 2, 262,144: 377,456 tokens. A 2-byte page at TP 2 is 784
    # tokens (2 KV heads x 256 x 2 bytes x 2); a request 335 + 3 x 2 blocks; 491 // 341 x ... = 491 / 341 x 262144
    page = 16 * 784 * 2 * 2 * 256 * 2
    assert 491 * 262144 // 341 == 377456
    assert _pool("Qwen/Qwen3.8-27B-FP8", 2, "bf16", 491 * page, 262144)["tokens"] == 377456
    assert _pool("Qwen/Qwen3.8-27B-FP8", 2, "fp8", 491 * page, 262144)["tokens"] != 377456  # fp8 pages hold twice


@pytest.mark.parametrize("name, why", [
    # zai-org/GLM-5.1 is built in since round 77 (test_kv_ellm55.py); a repo id kv does not read as it stays refused
    ("lukealonso/GLM-5.1-NVFP4-MTP", "Indexer"),
    ("deepseek-ai/DeepSeek-V3.2-Exp", "656 bytes")])  # DeepSeek-V4 is read since task dsv4 (test_kv_dsv4.py)
def test_sparse_and_compressed_deepseek_attention_is_refused_with_why(name, why):
    # vLLM FlashMLASparseBackend.get_kv_cache_shape: fp8_ds_mla is 656 bytes a token a layer, not the latent's 576
    with pytest.raises(UserError, match=why):
        llm.describe(model=name)


@pytest.mark.parametrize("model_type", ["glm_moe_dsa", "deepseek_v32"])  # deepseek_v4: test_kv_dsv4.py
def test_a_sparse_attention_config_is_refused_not_read_as_a_generic_decoder(model_type):
    from gpu_garden.memory.llm.spec import from_config
    cfg = {"model_type": model_type, "num_hidden_layers": 78, "hidden_size": 6144, "num_attention_heads": 64,
           "num_key_value_heads": 64, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "vocab_size": 154880}
    with pytest.raises(UserError, match="not modelled"):
        from_config(cfg)


def test_ollama_own_engine_weights_are_every_tensor_it_creates():
    # ollama/ollama#15641, Ollama 0.20.7, gemma4:31b-it-q8_0 over two V100s, 61/61 layers: "model weights" CUDA0
    # 15.4 GiB + CUDA1 16.0 GiB + CPU 1.5 GiB = 32.9 GiB (three prints to 0.1 GiB: within 0.15). Gemma 4 31B ties
    # its output to token_embd (262144 x 5376 in Q8_0, 34 bytes a 32-value block): the CPU input copy and the GPU
    # output copy are both counted, and the vision tensors of the same file
    r = llm.plan(llm.describe(model="gemma4:31b-it-q8_0"), "ollama", ctx=262144, num_gpus=2, flash_attn="off",
                 runtime_version="0.20.7")
    table = 262144 * 5376 * 34 // 32
    assert abs(r["ollama_weights_total"] / GiB - 32.9) <= 0.15
    assert r["ollama_weights_total"] - r["weights"] - r["projector"]["weights"] == table  # the GPU output copy
    # the estimate's memory.weights.total (blocks + output) before the own engine: no CPU table, no vision tensors
    old = llm.plan(llm.describe(model="gemma4:31b-it-q8_0"), "ollama", ctx=8192, runtime_version="0.11.0")
    assert old["ollama_weights_total"] == old["weights"]


def test_ollama_own_engine_turns_flash_attention_on_for_the_archs_it_lists():
    # ollama v0.24.0 llm/server.go: fa := envconfig.FlashAttention(f.FlashAttention()); fs/ggml GGML.FlashAttention
    # lists qwen35 (from v0.17.1). With flash attention the compute buffer holds no ctx x batch score matrix, so it
    # does not grow with num_ctx; with OLLAMA_FLASH_ATTENTION=0 (flash_attn off) it does
    def graph(ctx, **kw):
        r = llm.plan(llm.describe(model="qwen3.6:27b"), "ollama", ctx=ctx, runtime_version="0.24.0", **kw)
        return r["overhead"]["compute_buffer"]
    assert graph(8192) == graph(131072)
    assert graph(131072, flash_attn="off") > graph(8192, flash_attn="off") + 4 * GiB  # 24 heads x 512 x 120K x 4 B
    # gemma3 before its first listing (v0.12.6): not turned on by itself
    old = llm.plan(llm.describe(model="gemma3:12b"), "ollama", ctx=32768, runtime_version="0.12.5")
    new = llm.plan(llm.describe(model="gemma3:12b"), "ollama", ctx=32768, runtime_version="0.12.6")
    assert old["overhead"]["compute_buffer"] > new["overhead"]["compute_buffer"]
