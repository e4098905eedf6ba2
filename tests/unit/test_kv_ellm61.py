"""Task ellm61 (kv-accuracy round 83, batch 86 after its first sight): Gemma 4's per-layer inputs are live through
llama.cpp's compute graph. src/models/gemma4-iswa.cpp (TheTom/llama-cpp-turboquant 69d8e4be, b9079):
project_per_layer_inputs ends in ggml_cont(ggml_permute(...)), an f32 [n_embd_per_layer, n_tokens, n_layer] tensor, and
every layer reads its slice through ggml_view_2d_slice; ggml-alloc.c frees a view's source only once its last view's
consumers are done (n_views), so the whole tensor is live through every full-ubatch layer's feed-forward (and its
attention: test_kv_trfix2). Expected
bytes by hand below from the models' config.json fields."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf import from_gguf_metadata
from gpu_garden.memory.llm.runtimes import llamacpp as LC
from gpu_garden.memory.units import GiB
from test_llm_llmfix20 import _e4b_gguf_meta


def _cb(model, ctx, ubatch, **kw):
    return llm.plan(llm.describe(model=model), "llama.cpp", ctx=ctx, parallel=1, ubatch=ubatch, flash_attn=True,
                    ngl=99, runtime_version="b9849", vram=24 * GiB, gpu_name="NVIDIA GeForce RTX 3090", **kw
                    )["overhead"]["compute_buffer"]


def test_e4b_per_layer_inputs_beside_the_feed_forward():
    # Gemma-4-E4B (text_config: hidden 2560, intermediate 10240, 42 layers, hidden_size_per_layer_input 256, vocab
    # 262144), -c 8192 -ub 2048, b9849 (one row of logits: 4 x (2048 x 2560 + 262144) = 22,020,096, smaller):
    # GEGLU live set 3 x 10240 + 2560 = 33,280 values a token, the per-layer inputs 42 x 256 = 10,752 more: 44,032;
    # 4 x 2048 x 44,032 = 360,710,144 B; the f16 mask over the full layers' 8192 cells and the window's 512 + 2048 =
    # 2560: 2 x (8192 + 2560) x 2048 = 44,040,192 B -> 404,750,336 B = 386 MiB (302 MiB before: 4 x 2048 x 33,280 +
    # the mask = 316,669,952 B). The batch-86 row prints 530.07 MiB on Vulkan: still a lower bound
    assert _cb("google/gemma-4-E4B-it", 8192, 2048, weights_dtype="Q4_0") == 404_750_336


def test_e2b_per_layer_inputs_and_double_wide_mlp():
    # Gemma-4-E2B (hidden 1536, intermediate 6144, 35 layers of which the last 20 KV-shared, use_double_wide_mlp: those
    # layers' MLP is 2 x 6144 = 12288 wide, and the GGUF's feed_forward_length array gives llama.cpp that n_ff(il);
    # per-layer input 256): 3 x 12288 + 1536 = 38,400 + 35 x 256 = 8,960 -> 47,360; 4 x 2048 x 47,360 = 387,973,120
    # + the mask 2 x (8192 + 2560) x 2048 = 44,040,192 -> 432,013,312 B = 412 MiB (198 MiB before the round: 6144
    # wide, no per-layer inputs; 268 with the per-layer inputs alone; the UHD 620 row prints 554.07)
    s = llm.describe(model="google/gemma-4-E2B-it")
    assert (s.intermediate, s.ffn_widest) == (6144, 12288)
    assert LC.ffn_live_values(s) == 47_360
    assert _cb("google/gemma-4-E2B-it", 8192, 2048, weights_dtype="Q4_0") == 432_013_312


def test_models_without_per_layer_inputs_unchanged():
    # Gemma-4-12B has no per-layer table (ple_width 0): 3 x 15360 + 3840 = 49,920; 4 x 2048 x 49,920 = 408,944,640
    # + its mask 2 x (8192 + 1024 + 2048) x 2048 = 46,137,344 -> 455,081,984 B = 434 MiB, as before the round
    assert llm.describe(model="google/gemma-4-12B-it").ple_width == 0
    assert _cb("google/gemma-4-12B-it", 8192, 2048, weights_dtype="Q4_0") == 455_081_984


def test_gguf_reads_the_per_layer_width():
    # a Gemma 4 GGUF's gemma4.embedding_length_per_layer_input sets the same width (42 x 256 values a token)
    s = from_gguf_metadata(_e4b_gguf_meta())  # the E4B keys Ollama's converter writes (test_llm_llmfix20)
    assert s.ple_width == 256
    # ffn_live_values: 3 x 10240 + 2560 + 42 x 256 = 44,032
    assert LC.ffn_live_values(s) == 44_032


# ---------------------------------------------------------------- AEON-7's Multimodal-NVFP4-MTP (vLLM, batch 86)
AEON = "AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-Multimodal-NVFP4-MTP"


def test_aeon_release_keeps_every_deltanet_matmul_in_bf16():
    # the release's README (AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-DFlash): "GDN linear-attention preserved BF16"
    # (in_proj_qkv, in_proj_z, in_proj_a/b, out_proj and conv1d). Qwen3.6-27B: hidden 5120, 48 gated-DeltaNet layers of
    # 16 key heads x 128 and 48 value heads x 128, conv kernel 4. A layer: in_proj_qkv 5120 x (2 x 2048 + 6144) =
    # 52,428,800; in_proj_z 5120 x 6144 = 31,457,280; in_proj_b and in_proj_a 5120 x 48 = 245,760 each; conv1d 10240 x
    # 4 = 40,960; out_proj 6144 x 5120 = 31,457,280: 115,875,840; x 48 = 5,562,040,320 values in 16 bits
    from gpu_garden.memory.llm.linear_quant import skipped_linear_params
    s = llm.describe(model=AEON)
    assert (s.name, s.quant) == ("Qwen3.6-27B", "nvfp4")
    assert skipped_linear_params(s) == 5_562_040_320


def test_aeon_weights_per_rank_at_tp4():
    # at tensor parallel 4 a rank holds 5,562,040,320 / 4 = 1,390,510,080 of them: 2 bytes each (2,781,020,160) instead
    # of NVFP4's 4.5 bits (782,161,920): 1,998,858,240 B more a rank than the base model sized as nvfp4 (the batch-86
    # 5060 Ti row: 4.817 -> 6.679 GiB against the printed 6.89)
    kw = dict(ctx=196608, tensor_parallel_size=4, kv_dtype="fp8", gpu_memory_utilization=0.92, max_num_seqs=10,
              max_num_batched_tokens=4096, mtp_tokens=3, vram=int(15.93 * GiB), runtime_version="0.20.2")
    aeon = llm.plan(llm.describe(model=AEON), "vllm", **kw)["weights"]
    base = llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", weights_dtype="nvfp4", **kw)["weights"]
    assert aeon - base == 1_998_858_240


# ---------------------------------------------------------------- vLLM pipeline stages hold their own layers
def test_pp_stage_holds_its_own_layers_weights():
    # vLLM's make_layers builds PPMissingLayer outside a stage's [start_layer, end_layer): each stage's blocks are its
    # own layers'. GLM-5.1 (78 layers, the first 3 dense: 400,898,816 values each, then 75 MoE of 9,877,404,416) at
    # PP 2 (39 + 39): stage 0 holds 3 x 400,898,816 + 36 x 9,877,404,416 = 356,789,255,424 of 742,008,027,648 values,
    # stage 1 39 x 9,877,404,416 = 385,218,772,224. Embedding and head are the same size (237,895,680 B a rank at TP 8),
    # so stage 1 holds blocks x (385,218,772,224 - 356,789,255,424) / 742,008,027,648 B more than stage 0 (0 before,
    # when each stage took blocks x 39 / 78)
    r = llm.plan(llm.describe(model="zai-org/GLM-5.1"), "vllm", ctx=202752, weights_dtype="fp8", kv_dtype="fp8",
                 tensor_parallel_size=8, pipeline_parallel_size=2, gpu_memory_utilization=0.95, max_num_seqs=2,
                 enforce_eager=True, vram=int(79.19 * GiB), runtime_version="0.19.0")
    blocks = r["weights_by_role"]["blocks"]
    assert blocks == 94_807_426_176
    s0, s1 = r["pp_stages"]
    # 94,807,426,176 x 28,429,516,800 // 742,008,027,648 = 3,632,479,993
    assert s1["stage_weights"] - s0["stage_weights"] == blocks * 28_429_516_800 // 742_008_027_648 == 3_632_479_993


def _row(rid):
    import json
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "benchmarks"))
    sys.path.insert(0, str(repo / "tests"))
    from llm_score import score
    rows = json.loads((repo / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
    return score(next(r for r in rows if r["id"] == rid))


def test_pp_refusal_prints_the_smallest_stage_memory():
    # vLLM 0.12-0.16's get_kv_cache_configs (vllm_pipeline.PP_WHOLE_MODEL_CHECK; later builds check each worker's own
    # memory, llm_score.pp_min_check) checks the start with "_check_enough_kv_cache_memory(min(available_memory), ...)":
    # vllm#32105's refusal (a January 2026 nightly, inside that window) (GLM-4.7 FP8, PP 8 on A100 80 GB) prints 28.57 GiB, the heaviest stage's (12 MoE layers of
    # 92; stage 0 holds the 3 dense ones). kv's heaviest stage: 28.545 GiB; stage 0's would be 40.86 (31.97 before
    # this round's stage weights)
    s = _row("vllm-32105-glm47-fp8-pp8-8xa100-202k-u0925-refused")
    ours, printed = s["kv_available_gib"]
    assert printed == 28.57 and abs(ours - printed) < 0.05


def test_gemma4_moe_shared_mlp_output_beside_the_routed_experts():
    # gemma4-iswa.cpp: a MoE layer's shared MLP (cur_mlp) is built first and added to the routed output last, so its
    # output (n_embd a token) is live through the routed branch. Gemma-4-26B-A4B (hidden 2816, 8 of 128 experts of
    # 704: routed 5632): at the down projection 5632 + 8 x 2816 + 2816 + 2816 = 33,792 (30,976 before);
    # 4 x 2048 x 33,792 = 276,824,064 + the f16 mask 2 x (8192 + 1024 + 2048) x 2048 = 46,137,344 -> 322,961,408 B
    # = 308 MiB (286 before; the batch-86 row prints 428.07)
    assert _cb("google/gemma-4-26B-A4B-it", 8192, 2048, weights_dtype="Q4_0") == 322_961_408
