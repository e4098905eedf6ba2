"""Task fix5: review rev5's B1, B2 and D1-D3 (memory/llm only).

B1: vLLM's CUTLASS NVFP4 experts (--moe-backend cutlass) are sized for every spelling of NVFP4 weights kv reads: "nvfp4",
vLLM's --quantization name "modelopt_fp4" (flags.VLLM_QUANTIZATION maps it to nvfp4) and nvidia's config.json form
{"quant_method": "modelopt", "quant_algo": "NVFP4"}, which was read as FP8. A --moe-backend that changes nothing kv
sizes is said so in a note. Gemma-4-26B-A4B (K 2816, N 704, topk 8), by hand as test_kv_ellm71:
  CutlassExpertsFp4: (8 x (3 x 2816 + 2816 + 704) + 7 x 2816) x 2 + 8 x 9 x (2816 + 704) / 16 = 246,752 B a token
  Triton term: (8 x (3 x 704 + 2816) + 5 x 2816) x 2 = 107,008 B a token
B2: --moe-backend takes only vLLM's names (vllm/config/kernel.py MoEBackend at 1CatAI/1Cat-vLLM ae13773a), read as
vLLM reads them (lower case, "-" as "_").
"""
import pytest

CUTLASS = 246_752
TRITON = 107_008
TRITON_HELD = 118_272  # 0.19+: the expert workspace + 5 hidden-size tensors (task kv53, test_kv_ellm71)


def _kv():
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.llm import kv as K
    return K


def _gemma():
    from gpu_garden.memory.llm.names import load_builtin
    return load_builtin("google/gemma-4-26B-A4B-it")


PLAN = dict(ctx=256_000, vram=int(31.36 * 2**30), max_num_batched_tokens=16_384, max_num_seqs=2,
            runtime_version="0.19.2", kv_dtype="fp8", gpu_memory_utilization=0.85)


def test_hand_figures():
    assert (8 * (3 * 2816 + max(2 * 704, 2816) + 704) + 7 * 2816) * 2 + 8 * 9 * (2816 + 704) // 16 == CUTLASS
    assert (8 * (3 * 704 + 2816) + 5 * 2816) * 2 == TRITON
    assert 8 * (2816 + 2816) * 2 + 5 * 2816 * 2 == TRITON_HELD


# --- B1 ---------------------------------------------------------------------------------------------------------------
def test_modelopt_nvfp4_config_is_nvfp4():
    from gpu_garden.memory.llm.quant_config import _quant_name
    assert _quant_name({"quant_method": "modelopt", "quant_algo": "NVFP4"}) == "nvfp4"
    assert _quant_name({"quant_method": "modelopt", "quant_algo": "nvfp4"}) == "nvfp4"
    assert _quant_name({"quant_method": "modelopt", "quant_algo": "FP8"}) == "fp8"


@pytest.mark.parametrize("fmt", ["nvfp4", "NVFP4", "modelopt_fp4"])
def test_every_nvfp4_spelling_takes_the_cutlass_term(fmt):
    from gpu_garden.memory.llm.runtimes.vllm_activation import activation
    kw = dict(version=(0, 19, 2), v1=True, max_model_len=256_000, weights_format=fmt)
    assert activation(_gemma(), 16_384, 2, moe_backend="cutlass", **kw) == 16_384 * CUTLASS
    assert activation(_gemma(), 16_384, 2, **kw) == 16_384 * TRITON_HELD


def test_cutlass_gate():
    from gpu_garden.memory.llm.names import load_builtin
    from gpu_garden.memory.llm.runtimes.vllm_activation import cutlass_fp4
    assert cutlass_fp4(_gemma(), "modelopt_fp4", "cutlass") and cutlass_fp4(_gemma(), "nvfp4", "cutlass")
    assert not cutlass_fp4(_gemma(), "awq", "cutlass") and not cutlass_fp4(_gemma(), "nvfp4", "triton")
    assert not cutlass_fp4(load_builtin("meta-llama/Llama-3.1-8B-Instruct"), "nvfp4", "cutlass")  # not a MoE model


def test_no_effect_is_a_note():
    K = _kv()
    sized = K.plan(_gemma(), "vllm", moe_backend="cutlass", weights_dtype="nvfp4", **PLAN)
    assert not any("has no effect" in n for n in sized["notes"])
    assert any(f["name"] == "--moe-backend" and "sizes the profile forward" in f["reason"] for f in sized["flags"])
    other = K.plan(_gemma(), "vllm", moe_backend="cutlass", weights_dtype="awq", **PLAN)
    assert any(n.startswith("--moe-backend cutlass: kept in the command but has no effect") for n in other["notes"])
    f = next(f for f in other["flags"] if f["name"] == "--moe-backend")
    assert "sizes the profile forward" not in f["reason"] and "not modelled" in f["reason"]
    assert other["command"].endswith(" --moe-backend cutlass")


# --- B2 ---------------------------------------------------------------------------------------------------------------
def test_unknown_moe_backend_is_refused():
    from gpu_garden.memory.errors import UserError
    K = _kv()
    with pytest.raises(UserError, match=r"--moe-backend 'CUTLAS' is not one of vLLM's: auto, triton, .*cutlass"):
        K.plan(_gemma(), "vllm", moe_backend="CUTLAS", weights_dtype="nvfp4", **PLAN)


def test_moe_backend_read_as_vllm_reads_it():
    K = _kv()
    p = K.plan(_gemma(), "vllm", moe_backend="Flashinfer-Cutlass", weights_dtype="nvfp4", **PLAN)
    assert p["command"].endswith(" --moe-backend flashinfer_cutlass")
    assert p["overhead"]["activation_profile"] != 16_384 * CUTLASS  # FlashInfer's experts: not the CUTLASS term
    c = K.plan(_gemma(), "vllm", moe_backend="Cutlass", weights_dtype="nvfp4", **PLAN)
    assert c["command"].endswith(" --moe-backend cutlass") and c["overhead"]["activation_profile"] == 16_384 * CUTLASS


# --- D2 ---------------------------------------------------------------------------------------------------------------
def test_kv_rs_line_names_the_log():
    K = _kv()
    from gpu_garden.memory.llm.report import format_plan
    s = K.describe(model="Qwen3.8-27B")
    kw = dict(ctx=262144, vram=288 * 2**30, weights_dtype="Q8_0")
    ol = format_plan(K.plan(s, runtime="ollama", runtime_version="0.32.14", **kw))
    assert "(Ollama's llama-server log prints each)" in ol and "llama.cpp's log" not in ol
    lc = format_plan(K.plan(s, runtime="llama.cpp", **kw))
    assert "(llama.cpp's log prints each)" in lc
