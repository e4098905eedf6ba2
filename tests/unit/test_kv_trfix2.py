"""trfix2 (session 39, review rev1 of kv round 83): the per-layer inputs of Gemma 4 and Gemma 3n (an f32 [width, n_tokens,
n_layer] tensor built before layer 0, a slice read per layer: gemma4-iswa.cpp and gemma3n-iswa.cpp at
TheTom/llama-cpp-turboquant 69d8e4be) are live beside every layer's attention, not only its feed-forward (B3); the PP
refusal's smallest-stage score only for the vLLM versions whose check is min(available_memory) (B4); the AEON release
note (K15). Expected bytes by hand in the comments."""
import copy

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf import from_gguf_metadata
from gpu_garden.memory.llm.runtimes import llamacpp as LC
from gpu_garden.memory.units import GiB


def _cb(model, ctx, ubatch, flash):
    return llm.plan(llm.describe(model=model), "llama.cpp", ctx=ctx, parallel=1, ubatch=ubatch, flash_attn=flash, ngl=99,
                    runtime_version="b9849", vram=24 * GiB, gpu_name="NVIDIA GeForce RTX 3090", weights_dtype="Q4_0"
                    )["overhead"]["compute_buffer"]


def test_e4b_per_layer_inputs_beside_the_attention_scores_without_flash():
    # Gemma-4-E4B (hidden 2560, 8 heads, 42 layers x 256 per-layer inputs = 10,752), -c 8192 -ub 2048, no flash attention:
    # the scores 4 x 2048 x (1 + 4 x 2560 + 8192 x (1 + 8)) = 8192 x 83,969 = 687,874,048 (the figure before), with the
    # per-layer inputs 8192 x (83,969 + 10,752) = 8192 x 94,721 = 775,954,432 B (+ 88,080,384 = 42 x 256 x 2048 x 4)
    assert _cb("google/gemma-4-E4B-it", 8192, 2048, False) == 775_954_432


def test_e4b_per_layer_inputs_beside_the_flash_mask():
    # flash attention at -c 131072: the mask over the full layers' 131072 cells and the window's 512 + 2048 = 2560, x 2048
    # rows = 273,678,336 elements; its f32 copy and f16 cast 6 x that = 1,642,070,016 (the figure before), + the per-layer
    # inputs 88,080,384 = 1,730,150,400 B (the feed-forward peak 360,710,144 + 2 x 273,678,336 = 908,066,816 is smaller)
    assert _cb("google/gemma-4-E4B-it", 131072, 2048, True) == 1_730_150_400


def _gemma3n():
    # a Gemma 3n E4B GGUF's fields (hidden 2048, 35 layers, 16384 wide MLP, 8 heads, per-layer width 256)
    meta = {"general.architecture": "gemma3n", "gemma3n.block_count": 35, "gemma3n.embedding_length": 2048,
            "gemma3n.attention.head_count": 8, "gemma3n.attention.head_count_kv": 2,
            "gemma3n.attention.key_length": 256, "gemma3n.attention.value_length": 256,
            "gemma3n.attention.sliding_window": 512,
            "gemma3n.attention.sliding_window_pattern": [(i + 1) % 5 != 0 for i in range(35)],
            "gemma3n.attention.shared_kv_layers": 15, "gemma3n.embedding_length_per_layer_input": 256,
            "gemma3n.context_length": 32768, "gemma3n.feed_forward_length": 16384, "tokenizer.ggml.vocab_len": 262144}
    return from_gguf_metadata(meta)


def test_gemma3n_builds_the_same_per_layer_inputs():
    # (rev1 K2: decided) gemma3n-iswa.cpp's project_per_layer_inputs: ggml_cont of [n_embd_altup = 256, n_tokens, n_layer]
    # f32, sliced per layer: 35 x 256 = 8,960 values a token; the GEGLU live set 3 x 16384 + 2048 = 51,200 -> 60,160
    g = _gemma3n()
    assert (g.ple_width, LC.per_layer_inputs(g), LC.ffn_live_values(g)) == (256, 8_960, 60_160)
    # without flash, no logits on this GPU: 4 x 2048 x (1 + 4 x 2048 + 8192 x 9 + 8,960) = 8192 x 90,881 = 744,497,152
    assert LC.compute_buffer(g, 8192, 2048, False, logits=False) == 744_497_152


def test_per_layer_inputs_only_for_the_graphs_that_build_them():
    # a width on another arch's spec (no such graph) adds nothing: the scores 8192 x (1 + 8192 + 73,728) = 671,096,832
    g = copy.copy(_gemma3n())
    g.arch = "gemma3"
    assert LC.per_layer_inputs(g) == 0
    assert LC.compute_buffer(g, 8192, 2048, False, logits=False) == 671_096_832


# ---------------------------------------------------------------- the PP refusal's smallest stage (B4, K16)
def _score_pp_refusal(version=None, drop=None):
    import json
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "benchmarks"))
    from llm_score import score
    rows = json.loads((repo / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
    row = next(r for r in rows if r["id"] == "vllm-32105-glm47-fp8-pp8-8xa100-202k-u0925-refused")
    measured = {k: v for k, v in row["measured"].items() if k != drop}
    return score(dict(row, measured=measured, version=version or row["version"]))["kv_available_gib"]


def test_pp_min_check_versions():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from llm_score import pp_min_check
    # vllm_pipeline.PP_WHOLE_MODEL_CHECK: 0.12 up to 0.16 (PR #33698, February 2026); a nightly by its date
    assert [pp_min_check(v) for v in ("0.11.2", "0.12.0", "0.15.1", "0.16.0", "0.19.0")] == [False, True, True, False, False]
    assert pp_min_check("nightly 58996f3 (January 2026)") and not pp_min_check("nightly abc1234 (March 2026)")
    assert not pp_min_check("nightly") and not pp_min_check(None)


def test_pp_refusal_smallest_stage_only_where_the_check_took_it():
    # vllm#32105's January 2026 nightly: the heaviest stage's 28.545 GiB against the printed 28.57 (round 83); 28.530
    # since task kv53 (its MoE forward at least the held expert workspace: a nightly without a release reads as current)
    assert _score_pp_refusal() == (28.53, 28.57)
    # K16: a row without vLLM's "estimated maximum model length" is no refusal of that check: rank 0's memory (40.856)
    assert _score_pp_refusal(drop="estimated_max_len")[0] > 40
    # B4: 0.19.0 checks each worker against its own layers: rank 0's memory again (not the smallest stage's)
    assert _score_pp_refusal(version="0.19.0")[0] > 40


def test_aeon_release_note_is_kept():
    # K15: the release (checkpoints.RELEASES) says why its DeltaNet matmuls count in bf16, in the spec's notes
    s = llm.describe(model="AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-Multimodal-NVFP4-MTP")
    assert any("keeps every GatedDeltaNet layer's projections and conv1d in bf16" in n for n in s.notes)
