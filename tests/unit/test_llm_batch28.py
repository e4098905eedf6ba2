"""Batch 28 (read by ellm11). Expected values are what the runtimes printed, in the threads each test names, or the
config.json fields of the descriptions (source named)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _talos(ctx, **knobs):
    # mitchross/talos-argocd-proxmox 17011c78 my-apps/ai/vllm/deployment.yaml: vLLM 0.27.1, one RTX 3090 (23.56 GiB),
    # Qwen3.8-27B W4A16 AutoRound + INT8 g128 lm_head, --language-model-only, fp8 KV, 0.972, 3 seqs, 2048 batched
    return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=ctx, kv_dtype="fp8", weights_dtype="auto_round",
                    vram=23.56 * GiB, gpu_memory_utilization=0.972, gpu_name="NVIDIA GeForce RTX 3090",
                    max_num_seqs=3, max_num_batched_tokens=2048, runtime_version="0.27.1", vllm_sampler="flashinfer",
                    **knobs)


def test_qwen38_27b_fp8_pool_is_135_blocks_at_both_printed_contexts():
    # PR 2011 printed 198,529 tokens at --max-model-len 150000 and the doc 200,826 at 180000 ('identical KV bytes'):
    # with fp8 the 16 attention layers' 2048 bytes a token get a 1568-token block (the 48 DeltaNet layers' 3.06 MiB
    # float32 state page, unified), groups of 16 layers, and a request needs ctx / 1568 blocks + 2 state pages in each of
    # the 3 DeltaNet groups (prefix caching): 135 blocks give int(135 / 102 x 150000) and int(135 / 121 x 180000)
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    pool = 135 * 16 * 1568 * 2048
    args = dict(state_blocks=2, tokens_from_concurrency=True, max_batched=2048)
    assert llm.vllm_kv_tokens(s, pool, "fp8", ctx=150000, **args) == 198529
    assert llm.vllm_kv_tokens(s, pool, "fp8", ctx=180000, **args) == 200826


def test_int8_lm_head_is_8_bits_and_an_fp16_scale_per_128():
    # syv-ai/qwen38-27b-rtx3090 prepare/quant_lm_head.py: lm_head int8, groups of 128, fp16 scales; config.json vocab
    # 248320 x hidden 5120
    r = _talos(150000, lm_head_dtype="int8")
    assert r["weights_by_role"]["output"] == 248320 * 5120 + 248320 * 5120 // 128 * 2
    assert r["weights_by_role"]["embedding"] == 248320 * 5120 * 2      # embed_tokens stays bf16
    with pytest.raises(UserError):
        _talos(150000, lm_head_dtype="int3")
    with pytest.raises(UserError):  # a tied head has no lm_head of its own
        llm.plan(llm.describe(model="Qwen/Qwen3-0.6B"), "vllm", ctx=4096, lm_head_dtype="int8")


def test_lm_head_dtype_is_refused_outside_vllm(capsys):
    # an Ollama / llama.cpp model is a GGUF whose output tensor keeps its own type: Qwen3.8-27B's Ollama head stays
    # Q6_K (210 bytes a block of 256, ggml-common.h block_q6_K) = 994.63 MiB, not an int8 g128 head
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    assert llm.plan(s, "ollama", ctx=4096)["weights_by_role"]["output"] == 248320 * 5120 // 256 * 210
    for runtime in ("ollama", "llama.cpp", "sglang"):
        with pytest.raises(UserError, match="vLLM only"):
            llm.plan(s, runtime, ctx=4096, lm_head_dtype="int8")
    from gpu_garden.memory import cli
    assert cli.main(["kv", "--model", "Qwen/Qwen3.8-27B", "--runtime", "ollama", "--lm-head-dtype", "int8"]) == 2
    assert "vLLM only" in capsys.readouterr().err


def test_language_model_only_drops_the_tower_and_its_profile():
    # PR 2011's run (--language-model-only) started at 150000 with 198,529 tokens; without the flag the tower's weights
    # and its one-image profile stay. The whole tower in 16 bits is Unsloth's mmproj-F16.gguf of this model:
    # 927,607,488 bytes (noonghunna/club-3090 4a29ab57 scripts/lib/profiles/models/qwen3.8-27b.yml), its norms kept in
    # F32 and a GGUF header included, so vLLM's bf16 tower is at most that: counted once, not twice and not dropped.
    # (The plan's tower is 9 % under it: the generic tower formula leaves out most of the 2x2 patch merger.)
    # syv-ai's warm start of this checkpoint profiles 1.09 GiB of activations with the flag (docs/gotchas.md 16): the
    # plan's peak may not exceed that
    on, off = _talos(150000, language_model_only=True, lm_head_dtype="int8"), _talos(150000, lm_head_dtype="int8")
    assert 0.85 * 927607488 < off["weights"] - on["weights"] <= 927607488
    assert on["overhead"]["activation_profile"] < 1.09 * GiB < off["overhead"]["activation_profile"]
    assert on["fits_as_requested"]
    with pytest.raises(UserError):
        llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "ollama", ctx=4096, language_model_only=True)


def test_gemma4_26b_a4b_parameters_and_global_cache_as_printed():
    # llama-bench 'gemma4 26B.A4B BF16 | 25.23 B' (kyuz0/amd-strix-halo-toolboxes b9187): every layer keeps its dense MLP
    # (2112) next to 128 experts of 704; ollama#15388's layout at 32768 tokens: 5 global layers of 134217728 bytes
    # (2 KV heads x 512, K and V, f16)
    s = llm.describe(model="google/gemma-4-26B-A4B-it")
    assert round(s.params / 1e9, 2) == 25.23
    assert s.n_experts_per_tok == 8                                     # config top_k_experts
    r = llm.plan(llm.describe(model="gemma4:26b"), "ollama", ctx=32768)
    assert r["kv_per_layer"]["full"] == 134217728
    assert r["kv_detail"]["full_layers"] == 5 * 134217728


def test_gemma4_per_layer_embedding_models_are_described():
    # refused until task ellm22 (per-layer table and shared KV layers: test_llm_ellm22.py)
    assert llm.describe(model="gemma4:e4b").name == "Gemma-4-E4B"


def test_qwen35_2b_cache_as_vllm_0171_printed_it():
    # liquidinvestigations/hoover4 781bdffc ai_services/README.md, vLLM 0.17.1, bf16 cache: 'Available KV cache memory:
    # 5.95 GiB', 'GPU KV cache size: 129,472 tokens', 'Maximum concurrency for 262,144 tokens per request: 1.97x'
    s = llm.describe(model="Qwen/Qwen3.5-2B")
    assert llm.vllm_kv_tokens(s, 5.95 * GiB, "f16", ctx=262144, state_blocks=1, max_batched=2048) == 129472
    conc = llm.vllm_kv_tokens(s, 5.95 * GiB, "f16", ctx=262144, state_blocks=1, tokens_from_concurrency=True) / 262144
    assert round(conc, 2) == 1.97


def test_qwen35_27b_is_the_27b_qwen35_geometry():
    # THUDM/slime scripts/models/qwen3.5-27B.sh: 64 layers, 24 heads, 4 query groups x 256, hidden 5120, ffn 17408,
    # vocab 248320, untied
    s = llm.describe(model="Qwen/Qwen3.5-27B")
    assert (s.n_layers, s.n_heads, s.n_kv_heads, s.head_dim_k, s.hidden, s.intermediate, s.vocab, s.tied) == \
        (64, 24, 4, 256, 5120, 17408, 248320, False)
    assert s.layer_kinds.count("full") == 16


def _alexgs74(model, **kw):
    # AlexGS74/glm47-nvfp4-sm120 docs: vLLM on 4x RTX PRO 6000 Blackwell (94.97 GiB), tensor parallel 4
    return llm.plan(llm.describe(model=model), "vllm", ctx=kw.pop("ctx", 202752), vram=94.97 * GiB,
                    tensor_parallel_size=4, runtime_version=kw.pop("version", "0.16.0"), **kw)


def test_glm47_nvfp4_weights_and_fp8_cache_per_gpu_as_printed():
    # vllm-sm120-nvfp4-working-state.md: 'Model loading took 47.11 GiB' a GPU (Salyut1/GLM-4.7-NVFP4), and 'Available KV
    # cache memory: 31.99 GiB' for 'GPU KV cache size: 729,248 tokens': 47,104 bytes a token = 92 layers x 2 KV heads x
    # 128 x (K, V) in fp8
    r = _alexgs74("zai-org/GLM-4.7", weights_dtype="nvfp4", kv_dtype="fp8", gpu_memory_utilization=0.8)
    assert abs(r["weights"] / GiB / 47.11 - 1) <= 0.02
    assert r["kv_per_token"] == 47104
    assert llm.vllm_kv_tokens(llm.vllm_per_rank(llm.describe(model="zai-org/GLM-4.7"), 4), 31.99 * GiB, "fp8",
                              hybrid=True) // 1000 == 729248 // 1000


def test_minimax_m25_is_m27s_config_and_fp8_weights_per_gpu_as_printed():
    # minimax-m25-recipes.md, official FP8 checkpoint at TP 4: 'Model loading took 53.75 GiB'
    r = _alexgs74("MiniMaxAI/MiniMax-M2.5", weights_dtype="fp8", ctx=196608, version=None)
    assert abs(r["weights"] / GiB / 53.75 - 1) <= 0.02


def test_qwen15_7b_gptq_is_a_full_head_cache_and_vllm_03_refuses_32k_on_a_3090():
    # QwenLM/Qwen3#16: vLLM 0.3.0, Qwen1.5-7B-Chat-GPTQ-Int4 on an RTX 3090: 'max seq len (32768) is larger than the
    # maximum number of tokens that can be stored in KV cache (24320)'; config.json: 32 layers x 32 KV heads x 128
    s = llm.describe(model="Qwen/Qwen1.5-7B-Chat-GPTQ-Int4")
    assert s.quant == "gptq"
    r = llm.plan(s, "vllm", ctx=32768, vram=23.58 * GiB, gpu_name="NVIDIA GeForce RTX 3090", runtime_version="0.3.0",
                 vllm_engine="v0")
    assert r["kv_per_token"] == 32 * 32 * 128 * 2 * 2
    assert not r["fits_as_requested"] and abs(r["kv_capacity_tokens"] / 24320 - 1) <= 0.08


def test_nemotron_h_sizes_without_a_description_are_refused_and_a_config_needs_its_pattern(tmp_path):
    with pytest.raises(UserError, match="Nemotron"):
        llm.describe(model="nvidia/NVIDIA-Nemotron-3-Super-120B-A12B")
    # a config of model_type nemotron_h (llama-bench names Nemotron 3 Super's GGUF nemotron_h_moe) without its
    # hybrid_override_pattern: which layers are Mamba-2, attention or MoE is never guessed
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "nemotron_h", "num_hidden_layers": 88, "hidden_size": 4096, '
                   '"num_attention_heads": 32, "num_key_value_heads": 2, "vocab_size": 131072}')
    with pytest.raises(UserError, match="hybrid_override_pattern must be a string of 88 characters"):
        llm.describe(config=str(cfg))


@pytest.mark.parametrize("name", [
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvidia/NVIDIA-Nemotron-Nano-12B-v2", "nvidia/NVIDIA-Nemotron-Nano-9B-v2-Base",
    "nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-FP8", "nvidia/Nemotron-H-8B-Base-8K", "nvidia/Nemotron-H-47B-Reasoning-128K",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B", "nemotron-3-nano:30b"])
def test_nemotron_hybrid_names_are_refused_as_nemotron_h(name):
    # Nemotron Nano v2 is nemotron_h as Nemotron-H and Nemotron 3 are (NVIDIA's Model Optimizer pruning doc prunes
    # Nano-12B-v2 to Nano-9B-v2, 62 hybrid layers); the hybrid family's refusal, not an unknown-model guess
    with pytest.raises(UserError, match=r"\(NVIDIA Nemotron-H / Nemotron 3\)"):
        llm.describe(model=name)


@pytest.mark.parametrize("name", [
    "nvidia/nemotron-3-8b-base-4k", "nvidia/Nemotron-3-8B-Chat-4k-SteerLM", "nvidia/Nemotron-4-340B-Instruct",
    "nvidia/Nemotron-Mini-4B-Instruct", "nvidia/Llama-3.1-Nemotron-Nano-8B-v1", "nemotron:70b"])
def test_dense_nemotrons_are_not_called_hybrids(name):
    # NVIDIA's 2023 Nemotron-3 8B is a dense decoder (transformers tests/models/nemotron tests NemotronConfig on
    # nvidia/nemotron-3-8b-base-4k-hf); Nemotron-4, Mini and the Llama-3.1 fine-tunes are dense too
    with pytest.raises(UserError) as e:
        llm.describe(model=name)
    assert "Nemotron-H" not in str(e.value) and "unknown model" in str(e.value)


def test_a_nemotron_h_config_without_its_pattern_is_refused_before_its_geometry_is_read(tmp_path):
    # a config.json of model_type nemotron_h without num_attention_heads or its pattern: the pattern is asked for first
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "nemotron_h", "num_hidden_layers": 56, "hidden_size": 4480}')
    with pytest.raises(UserError, match="hybrid_override_pattern"):
        llm.describe(config=str(cfg))


def test_qwen35_2b_geometry_as_megatron_arguments_state_it_and_its_tower_counted():
    # williammtan/miles ff3c17c7 scripts/models/qwen3.5-2B.sh: --num-attention-heads 8 --num-query-groups 2
    # --kv-channels 256 --num-layers 24 --hidden-size 2048 --ffn-hidden-size 6144 --vocab-size 248320, no
    # --untie-embeddings-and-output-weights (tied)
    s = llm.describe(model="Qwen/Qwen3.5-2B")
    assert (s.n_heads, s.n_kv_heads, s.head_dim_k, s.n_layers, s.hidden, s.intermediate, s.vocab, s.tied) == (
        8, 2, 256, 24, 2048, 6144, 248320, True)
    # hoover4 781bdffc: a 24-layer vision tower that vLLM loads; described since task vis36 (a 2B merge's vision_config,
    # test_kv_vis36), so the plan counts it and names the flag that skips it
    r = llm.plan(s, "vllm", ctx=262144, vram=23.56 * GiB, gpu_memory_utilization=0.5, runtime_version="0.17.1")
    assert any(n.startswith("vision tower counted with the weights") and "--language-model-only skips it" in n
               for n in r["notes"])


def test_minimax_m2_is_read_as_the_minimax_m2_config():
    # ModelCloud/GPTQModel 3d145115 gptqmodel/hf_minimax_m2/configuration_minimax_m2.py (its port of MiniMaxAI/MiniMax-M2's
    # config): 62 layers, hidden 3072, 48 heads, 8 KV heads x 128, 256 experts of 1536, top 8, vocab 200064, rotary_dim 64
    s = llm.describe(model="MiniMaxAI/MiniMax-M2")
    assert (s.n_layers, s.hidden, s.n_heads, s.n_kv_heads, s.head_dim_k, s.n_experts, s.n_experts_per_tok, s.vocab) == (
        62, 3072, 48, 8, 128, 256, 8, 200064)
    assert "MiniMax-M2.7" in s.notes[0]
    # an expert-pruned REAP checkpoint names its own size: not read as the full model
    with pytest.raises(UserError, match="unknown model"):
        llm.describe(model="cerebras/MiniMax-M2-REAP-172B-A10B")


def test_gemma4_sliding_layers_keep_ollamas_4096_cells_and_a_batch():
    # ollama#15388 (0.20, num_ctx 32768, one slot): CUDA0.Cache 25 x 37748736 bytes for the sliding layers = 4608 cells
    # of 8 heads x 256 x 2 (K,V) x 2 bytes; Ollama's gemma4 model asks kvcache.NewSWAMemCache(window, 4096) and
    # causal.go Init keeps 4096 + the 512 batch, or the whole num_ctx when 4096 is not smaller
    r = llm.plan(llm.describe(model="gemma4:26b"), "ollama", ctx=32768)
    assert r["kv_detail"]["sliding_layers"] == 25 * 37748736
    small = llm.plan(llm.describe(model="gemma4:26b"), "ollama", ctx=2048)
    assert small["kv_detail"]["sliding_cells"] == 2048

