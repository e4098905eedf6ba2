"""Task ellm74 (kv-accuracy round 96, batch 100 after its first sight): ik_llama.cpp rows.

1. ik_llama.cpp's own GGUF tensor types (its ggml/include/ggml.h enum; ggml/src/ggml.c type_traits: blck_size QK_K =
   256, row_meta_size 0, type_size sizeof(block_...); ggml/src/ggml-common.h's static_asserts give the bytes):
     iq2_k 2 + 2 + 256/32 + 256/4 = 76 B / 256 = 2.375 bits       iq3_k 2 + 4 + 8 + 64 + 32 = 110 B = 3.4375 bits
     iq4_k 2 + 2 + 128 + 12 = 144 B = 4.5 bits                    iq5_k 2 + 2 + 128 + 32 + 12 = 176 B = 5.5 bits
     iq6_k 2 + 2 + 128 + 64 + 16 = 212 B = 6.625 bits
   The _R4 repacks interleave 4 rows (block_iqN_k_r4 == 4 x block_iqN_k) and their type_traits keep
   type_size = sizeof(block_iqN_k) a 256-value block: the same bits; q2_k_r4 / q3_k_r4 are sizeof(block_q2_K) = 84 B
   (2.625) / sizeof(block_q3_K) = 110 B (3.4375).
   DeepSeek-R1's 58 MoE layers: a layer's experts are 256 x 3 x 7168 x 2048 values, 3,758,096,384 a matrix kind:
     q2_k_r4 gate/up + q3_k_r4 down: 3,758,096,384 x (2 x 2.625 + 3.4375) / 8 = 469,762,048 x 8.6875 = 4,081,057,792 B
     iq2_k_r4 gate/up + iq3_k_r4 down: 469,762,048 x (2 x 2.375 + 3.4375) = 469,762,048 x 8.1875 = 3,846,176,768 B
   An ik file type named as --weights-dtype (LLAMA_FTYPE_MOSTLY_IQ2_K_R4, ik's include/llama.h) beside --gguf-types is
   its base tensor type, no longer refused.
2. The CUDA buffer's padded row (ggml_backend_cuda_buffer_type_get_alloc_size: a quantized tensor whose ne0 is no
   multiple of 512 gains (512 - ne0 % 512) values), which ggml-alloc.c alloc_tensor_range rounds up to the CUDA buffer
   type's 128-byte alignment:
     DeepSeek MLA latent (ik src/llama.cpp: ggml_new_tensor_2d(type, kv_lora_rank + n_rot, kv_size)), ne0 576:
       448 x 34/32 = 476 -> 512 B a q8_0 layer; 61 layers: 31,232 B = 0.0298 MiB; at 32768 cells the latent is
       61 x 576 x 32768 x 34/32 B = 1166.625 MiB: 1166.655 -> printed 'CUDA0 KV buffer size = 1166.65 MiB'
       (#258; 'KV self size = 1166.62 MiB'); at 65536: 2333.25 + 0.0298 = 2333.28 (#286).
     Qwen3-235B K (ne0 128): 384 x 34/32 = 408 -> 512 B (816.02 MiB on CUDA0 for 48 layers at 16384, #370:
       48 x 17 MiB + 24,576 B = 816.023).
   Before ik build 3561 (#208, 2025-02-19: git rev-list --count 1140b4568) K was 1-D: #103's build 3475 prints
   'CUDA0 KV buffer size = 82.00 MiB' with an iq4_nl K (no pad).
"""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf_types import given
from gpu_garden.memory.llm.runtimes import IK_K_2D_BUILD, ik_build
from gpu_garden.memory.llm.runtimes.llamacpp import kv_buffer_pad
from gpu_garden.memory.llm.weights import TYPE_BITS

MiB = 1 << 20


def test_hand_figures():
    assert (2 + 2 + 8 + 64) == 76 and 76 * 8 / 256 == 2.375
    assert (2 + 4 + 8 + 64 + 32) == 110 and 110 * 8 / 256 == 3.4375
    assert 256 * 7168 * 2048 == 3_758_096_384
    assert 3_758_096_384 // 8 * 8.6875 == 4_081_057_792 and 3_758_096_384 // 8 * 8.1875 == 3_846_176_768
    assert 448 * 34 // 32 == 476 and 61 * 512 == 31_232
    assert round(61 * 576 * 32768 * 34 / 32 / MiB, 3) == 1166.625
    assert round((61 * 576 * 32768 * 34 / 32 + 31_232) / MiB, 2) == 1166.65
    assert round((61 * 576 * 65536 * 34 / 32 + 31_232) / MiB, 2) == 2333.28
    assert round((48 * 17 * MiB + 48 * 512) / MiB, 2) == 816.02


@pytest.mark.parametrize("t,bits", [("IQ2_K", 2.375), ("IQ3_K", 3.4375), ("IQ4_K", 4.5), ("IQ5_K", 5.5),
                                    ("IQ6_K", 6.625), ("IQ2_K_R4", 2.375), ("IQ3_K_R4", 3.4375),
                                    ("IQ4_K_R4", 4.5), ("IQ5_K_R4", 5.5), ("Q2_K_R4", 2.625), ("Q3_K_R4", 3.4375)])
def test_ik_type_bits(t, bits):
    assert TYPE_BITS[t] == bits


def test_ik_types_place_deepseek_experts():
    spec = llm.describe(model="deepseek-ai/DeepSeek-R1")
    g = given(spec, {"f32": 361, "q8_0": 612, "q2_k_r4": 116, "q3_k_r4": 58})
    assert g.expert_file_bytes[3][0] == 4_081_057_792 and g.expert_file_bytes[0] == (0, 0)  # 3 dense layers first
    g = given(spec, {"f32": 361, "q8_0": 612, "iq2_k_r4": 116, "iq3_k_r4": 58})
    assert g.expert_file_bytes[3][0] == 3_846_176_768


def test_ik_types_not_unsloth_names():
    from gpu_garden.memory.llm import unsloth as UD
    assert "IQ3_K" not in UD.BITS and "IQ2_K_R4" not in UD.BITS and "Q4_K" in UD.BITS


def _plan(version="ik_llama.cpp 3597 (68a5b604)", weights_dtype="Q2_K_R4", ctx=32768, **kw):
    return llm.plan(llm.describe(model="deepseek-ai/DeepSeek-R1"), "llama.cpp", ctx=ctx, parallel=1, kv_dtype="q8_0",
                    weights_dtype=weights_dtype, vram=int(47.99 * 1024 * MiB), runtime_version=version, ngl=63,
                    flash_attn="on", override_tensor=["exps=CPU"],
                    gguf_types={"f32": 361, "q8_0": 612, "q2_k_r4": 116, "q3_k_r4": 58}, **kw)


def test_ik_file_type_with_gguf_types_accepted():
    r = _plan()
    assert r["kv_total"] == 61 * 576 * 32768 * 34 // 32
    assert r["kv_per_layer"]["device_buffer"] - r["kv_per_layer"]["full"] == 512
    with pytest.raises(UserError):  # a name that is no type at all stays refused
        _plan(weights_dtype="awq")


def test_mla_latent_pad_and_ik_build_gate():
    ds = llm.describe(model="deepseek-ai/DeepSeek-R1")
    assert ds.head_dim_k == 576
    assert kv_buffer_pad(ds, "q8_0", None, 32768, True) == 512
    assert kv_buffer_pad(ds, "f16", None, 32768, True) == 0
    assert kv_buffer_pad(ds, "q8_0", None, 32768, False) == 0
    q = llm.describe(model="Qwen/Qwen3-235B-A22B")
    assert kv_buffer_pad(q, "q8_0", None, 16384, True) == 512  # 408 B rounded to 128
    assert ik_build("ik_llama.cpp 3475 (ac156500)") == 3475 and ik_build("ik_llama.cpp (May 2025)") is None
    assert IK_K_2D_BUILD == 3561
    old = _plan(version="ik_llama.cpp 3475 (ac156500)")
    assert old["kv_per_layer"]["device_buffer"] == old["kv_per_layer"]["full"]


# --- bench_llm: a one-GPU row quoting the device's "KV buffer size" line is scored with the padded rows ---------------
def _score(row_id):
    import json

    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b.score({r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}[row_id])


@pytest.mark.parametrize("row_id,pred,printed", [
    ("llamacpp-ik258-deepseek-r1-q2kr4-a6000-32k-mla2-q8c-expscpu", 1166.655, 1166.65),  # 1166.625 + 0.0298
    ("llamacpp-ik286-deepseek-v3-0324-iq2kr4-a6000-64k-mla2-q8c", 2333.28, 2333.28),     # 2333.25 + 0.0298
    ("llamacpp-ik103-llama31-8b-q5ks-3090-1k-iq4nlk-nofa", 82.0, 82.0)])                 # build 3475: 1-D K, no pad
def test_buffer_line_rows(row_id, pred, printed):
    s = _score(row_id)
    assert s["kv"] == (pred, printed, "MiB") and s["kv_exact"]
