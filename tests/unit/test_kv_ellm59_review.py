"""Review of kv rounds 80-81 (task kvfix): the points the targeted tests of ellm58/59/56 left uncaught, each with a
hand-computed expectation."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import gguf_types

GEMMA_MOE = "google/gemma-4-26B-A4B-it"  # tied, 30 MoE layers, vocab 262144 x hidden 2816


# a tied file has no output.weight: token_embd is the output (Q6_K, the single-count tensor) and the head reuses it,
# as gguf.py sets output_bytes = embed_bytes. 262144 x 2816 = 738,197,504 values x 6.5625 / 8 = 605,552,640 bytes
# (at the 'rest' type Q8_0 it would be x 8.5 / 8 = 784,334,848)
def test_tied_moe_output_head_is_the_single_count_type():
    spec = llm.describe(model=GEMMA_MOE)
    assert spec.tied
    g = gguf_types.given(spec, {"f32": 300, "q8_0": 200, "q4_K": 60, "q5_K": 30, "q6_K": 1})
    assert g.embed_bytes == g.output_bytes == 605_552_640
    assert "output Q6_K" in g.weights_source


# swa_slack: one batch (max_num_batched_tokens) before 0.26.0 and on V0, two batches from 0.26.0 exactly, pp + 1 at
# pp > 1 only from 0.30 (the V2 model runner the comment's source ties it to); 0.26-0.29 at pp 2 keep two
@pytest.mark.parametrize("version, v1, pp, batches", [
    ((0, 25, 1), True, 1, 1), ((0, 26, 0), True, 1, 2), ((0, 26), True, 1, 2), ((0, 29, 0), False, 1, 1),
    ((0, 29, 0), True, 2, 2), ((0, 26, 0), True, 2, 2), ((0, 30, 0), True, 2, 3), ((0, 30, 0), True, 4, 5),
    ((0, 30, 0), True, 1, 2),
])
def test_swa_slack_batches_in_flight(version, v1, pp, batches):
    from gpu_garden.memory.llm.runtimes.vllm import swa_slack
    assert swa_slack({"version": version, "v1": v1, "pp": pp, "max_batched": 2048}) == batches * 2048


# the boundary in a plan: Gemma-4-E2B on the T4 keeps (511 + 2 x 2048) / 32 + 1 = 145 blocks a sliding layer at 0.26.0
# exactly, (511 + 2048) / 32 + 1 = 81 at 0.25.1 (3 full layers x 1024 blocks, 32 KiB a block)
def test_in_flight_swa_from_0_26_0_exactly():
    from gpu_garden.memory.units import GiB
    def req(version):
        return llm.plan(llm.describe(model="google/gemma-4-E2B-it"), "vllm", ctx=16384, weights_dtype="w4a16",
                        runtime_version=version, vram=14.75 * GiB, gpu_name="Tesla T4", gpu_memory_utilization=0.9,
                        max_num_seqs=8)["kv_request_bytes"]
    assert req("0.26.0") == (3 * 1024 + 12 * 145) * 32768
    assert req("0.25.1") == (3 * 1024 + 12 * 81) * 32768


# --- the review's uncaught deliberate errors, each with a hand-computed figure ---

# need: E2B's 12 sliding layers at 0.29.0 hold cdiv(min(511 + 2 x 2048, 16384), 16) x 16 + 16 = 4624 cells (the
# slack, not one batch's 2576), 1 KV head x 256 x K and V x 2 bytes = 1024 bytes a cell
def test_need_sizes_sliding_layers_by_the_in_flight_batches():
    from gpu_garden.memory.units import GiB
    r = llm.plan(llm.describe(model="google/gemma-4-E2B-it"), "vllm", ctx=16384, weights_dtype="w4a16",
                 runtime_version="0.29.0", vram=14.75 * GiB, gpu_name="Tesla T4", gpu_memory_utilization=0.9,
                 max_num_seqs=8)
    assert r["kv_detail"]["sliding_cells"] == 4624
    assert r["kv_detail"]["sliding_layers"] == 12 * 4624 * 1024


# a separate drafter's sliding layers (club-3090#1085's DFlash2 on 0.27.1: 5 layers, 2048-token window, 4 KV heads a
# GPU x 128 x K and V in fp8 = 1024 bytes a token) hold cdiv(2047 + 2 x 8192, 16) x 16 + 16 = 18,448 cells each:
# 5 x 18,448 x 1024 = 94,453,760 bytes (one batch's slack would give 10,256 cells, 52,510,720)
def test_drafter_sliding_cells_take_the_in_flight_slack(tmp_path):
    import json
    from support.dflash_drafter import plan_1085, write_drafter
    r = plan_1085(speculative_config=json.dumps({"method": "dflash", "model": write_drafter(tmp_path),
                                                 "num_speculative_tokens": 7}))
    assert r["kv_detail"]["drafter_layers"] == 5 * 18448 * 1024 == 94_453_760


# the audio tower is the checkpoint's: with the weights given (--weights-gib 5) nothing is added to them but vLLM's
# per_layer_embeddings buffer (2048 x 35 x 256 x 2 = 35 MiB) and rotary tables (192 MiB)
def test_audio_tower_not_added_to_weights_given():
    from gpu_garden.memory.units import GiB
    r = llm.plan(llm.describe(model="google/gemma-4-E2B-it"), "vllm", ctx=16384, weights_dtype="fp16",
                 runtime_version="0.29.0", vram=14.75 * GiB, gpu_name="Tesla T4", gpu_memory_utilization=0.9,
                 max_num_seqs=8, weights_bytes=5 * GiB)
    assert r["weights"] == 5 * GiB + 35 * (1 << 20) + 192 * (1 << 20)
    assert not any("audio tower counted" in n for n in r["notes"])


# DeepSeek-V2-Lite: layer 0 dense, 26 MoE layers of 64 experts x 2048 x 1408 = 184,549,376 values a matrix; gate + up
# in q4_K (4.5 bits), down in q5_K (5.5): 184,549,376 x 14.5 / 8 = 334,495,744 bytes a MoE layer, 0 for layer 0
def test_expert_file_bytes_skip_dense_first_layers():
    g = gguf_types.given(llm.describe(model="deepseek-ai/DeepSeek-V2-Lite"),
                         {"f32": 100, "q8_0": 150, "q4_K": 52, "q5_K": 26, "q6_K": 1})
    assert g.expert_file_bytes == ((0, 0),) + ((334_495_744, 0),) * 26


def test_a_dense_model_is_refused_as_gguf_types_not_n_cpu_moe():
    with pytest.raises(UserError, match="--gguf-types places a MoE file's routed experts; .* has none"):
        gguf_types.given(llm.describe(model="Qwen/Qwen3-8B"), {"f32": 145, "q8_0": 252, "q6_K": 1})


def test_two_single_count_types_are_refused():
    with pytest.raises(UserError, match="at most one of its own"):
        gguf_types.given(llm.describe(model="Qwen/Qwen3.5-122B-A10B"),
                         {"f32": 361, "q8_0": 372, "q4_K": 96, "q5_K": 48, "q6_K": 1, "q5_0": 1})


# --- parse(): positive whole counts, each type once, clear messages; the loader's own lines accepted ---

@pytest.mark.parametrize("bad, says", [
    ({"q8_0": -3}, "positive whole number"), ({"q8_0": 3.7}, "positive whole number"),
    ({"q8_0": "many"}, "positive whole number"), ({"q8_0": 0}, "positive whole number"),
    ({"q8_0": True}, "positive whole number"), ("q8_0=x", "positive whole number"),
    ("q8_0=3,q4_K=2,", "trailing comma"), ("q8_0=3,q8_0=4", "given twice"), ({"q8_0": 3, "Q8_0": 4}, "given twice"),
    ("q9_9=3", "kv has no size for type q9_9"),
])
def test_parse_refuses_with_a_clear_message(bad, says):
    with pytest.raises(UserError, match=says):
        gguf_types.parse(bad)


def test_parse_takes_the_loaders_own_lines():
    pasted = ("llama_model_loader: - type  f32:  361 tensors\nllama_model_loader: - type q8_0:  373 tensors\n"
              "- type q4_K:   96 tensors\n- type q5_K: 48 tensors, - type q6_K: 1 tensors\n")
    assert gguf_types.parse(pasted) == {"F32": 361, "Q8_0": 373, "Q4_K": 96, "Q5_K": 48, "Q6_K": 1}


# Unsloth Dynamic files print IQ / TQ types: one bits table (weights.TYPE_BITS) knows them for --gguf-types too
def test_iq_and_tq_types_are_sized():
    from gpu_garden.memory.llm import unsloth, weights
    assert gguf_types.parse("iq2_xxs=96,iq3_xxs=48,iq1_s=1,tq1_0=2,mxfp4=4") == {
        "IQ2_XXS": 96, "IQ3_XXS": 48, "IQ1_S": 1, "TQ1_0": 2, "MXFP4": 4}
    assert all(weights.TYPE_BITS[t] == b for t, b in unsloth.BITS.items())
    assert weights.TYPE_BITS["IQ2_XXS"] == 2.0625 and weights.TYPE_BITS["TQ2_0"] == 2.0625


# a 16-bit type as the blocks' type is refused for being 16-bit, not with the shape message
def test_a_16_bit_rest_type_is_refused_as_16_bit():
    with pytest.raises(UserError, match="16-bit type printed"):
        gguf_types.given(llm.describe(model="Qwen/Qwen3.5-122B-A10B"),
                         {"f32": 361, "bf16": 373, "q4_K": 96, "q5_K": 48, "q6_K": 1})


# review point 8: with --gguf-types the printed types place every tensor; a --weights-dtype that names no GGUF file
# type (a checkpoint format such as fp8) contradicts them and is refused, where a GGUF type name (the file's own
# recipe, Q4_K_M) is kept as the file's name
def test_gguf_types_refuse_a_weights_dtype_that_is_no_gguf_type():
    spec = llm.describe(model="Qwen/Qwen3.5-122B-A10B")
    types = {"f32": 361, "q8_0": 373, "q4_K": 96, "q5_K": 48, "q6_K": 1}
    kw = dict(ctx=4096, parallel=1, runtime_version="b8829", gguf_types=types)
    for dtype in ("fp8", "awq", "bf16-checkpoint"):
        with pytest.raises(UserError, match="no GGUF file type"):
            llm.plan(spec, "llama.cpp", weights_dtype=dtype, **kw)
    assert abs(llm.plan(spec, "llama.cpp", weights_dtype="Q4_K_M", **kw)["weights"] / (1 << 30) - 71.27) < 0.02
    assert abs(llm.plan(spec, "llama.cpp", **kw)["weights"] / (1 << 30) - 71.27) < 0.02
