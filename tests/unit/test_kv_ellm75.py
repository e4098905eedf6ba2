"""Task ellm75 (kv-accuracy round 97, batch 101 after its first sight): ik_llama.cpp rows.

1. ik_llama.cpp's types with a per-row scale (ik's ggml/src/ggml.c type_traits: row_meta_size > 0; ggml_row_size =
   row_meta_size + type_size x ne0 / blck_size), bytes from ggml/src/ggml-common.h's static_asserts, QK_K = 256:
     iq4_ks  scales[256/32] + qs[256/2]              = 8 + 128 = 136 B / 256 = 4.25 bits, 4 B a row
     iq4_kss qs[256/8] uint32                         = 128 B = 4.0 bits, 4 B a row
     iq5_ks  8 + 128 + 32                             = 168 B = 5.25 bits, 4 B a row
     iq2_ks  2 + 256/64 + 256/4 = 2 + 4 + 64          = 70 B = 2.1875 bits, 2 B a row
     iq3_ks  2 + 4 + 64 + 32                          = 102 B = 3.1875 bits, 2 B a row
     iq2_kl  2 + 4 + 64 + 16                          = 86 B = 2.6875 bits, 2 B a row
     iq1_kt 56 (1.75), iq2_kt 68 (2.125), iq3_kt 100 (3.125), iq4_kt 128 (4.0), 4 B a row each
     iq1_m_r4: 32-value blocks, type_size sizeof(block_iq1_m_r4)/4 = 28/4 = 7 B = 1.75 bits, 2 B a row
     q6_0: QK6_0 = 32, 2 + 8 + 16 = 26 B = 6.5 bits, no row meta
   A 256 x 7168 iq4_ks tensor (ne0 = 7168: 28 blocks a row): 256 x (4 + 28 x 136) = 256 x 3812 = 975,872 B
   (blocks alone 256 x 3808 = 974,848). ik's ggml.h enum: IQ4_KS 144, IQ4_KSS 146, IQ1_M_R4 229, Q6_0 133.
2. A MoE file whose loader prints one quantized type (mainline b5271's Qwen3-235B-A22B-128K Q6_K: f32 471, q6_K 660)
   holds every matmul in it: the experts' 3 x 94 = 282 tensors merge with the 4 attention matmuls x 94 + token_embd +
   output = 378, so no count parts them, and there is nothing to part. A layer's routed experts:
   128 x 3 x 4096 x 1536 = 2,415,919,104 values x 210/256 B = 1,981,808,640 B.
3. llama-quantize's Q2_K rule (llama-quant.cpp llama_tensor_get_type; gguf_rule.py) on DeepSeek-R1 with the
   attn_k_b / attn_v_b pair (gghfez's DeepSeek-R1-11446-Q2_K, PR #235/#237: f32 361, q2_K 544, q3_K 180, q6_K 1,
   iq4_nl 61): ffn_down Q3_K (3 dense + 58 routed + 58 shared = 119) and attn_output Q3_K (n_expert 256 != 8: 61) =
   180; attn_k_b {128, 512, 128} has ne0 = 128, no whole 256-block: Q2_K falls back to IQ4_NL, 61; output Q6_K, 1;
   the rest Q2_K: 61 x (attn_q_a, attn_q_b, attn_kv_a_mqa, attn_kv_b, attn_v_b) = 305 + dense gate/up 6 + routed
   gate/up 116 + shared gate/up 116 + token_embd 1 = 544. A MoE layer's experts: 256 x 7168 x 2048 = 3,758,096,384
   values a matrix; gate + up at 84/256 B: 2,466,250,752, down at 110/256: 1,614,807,040; 4,081,057,792 B.
   The file prints 'model size = 227.689 GiB'; kv's tensors plus the F32 routers (58 x 7168 x 256 x 4 B) 227.685.
4. -ot with a device's buffer type on one device holding every layer (#450: exps=CPU, attn=CUDA0, exp=CUDA0,
   blk.*.ffn_norm.weight=CUDA0, ...): llama-model-loader.cpp gives a tensor the buffer type of the first override
   whose pattern matches, so the experts (exps=CPU first) go to the host - DeepSeek-V3's 58 MoE layers 3..60 - and
   every other block tensor stays on CUDA0, where the layer split puts it anyway. Two devices, a partial -ngl, or
   the token table (kept in host memory) moved to the device stay refused.
"""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate.headers import GGML_TYPE_IDS, tensor_bytes
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf_types import given, parse
from gpu_garden.memory.llm.weights import TYPE_BITS

GiB = 1 << 30


def test_hand_figures():
    assert 8 + 128 == 136 and 136 * 8 / 256 == 4.25 and 32 * 4 == 128
    assert 2 + 4 + 64 == 70 and 2 + 4 + 64 + 32 == 102 and 2 + 4 + 64 + 16 == 86 and 28 // 4 == 7
    assert 256 * (4 + 28 * 136) == 975_872 and 256 * 28 * 136 == 974_848
    assert 94 * 3 == 282 and 94 * 4 + 2 + 282 == 660
    assert 128 * 3 * 4096 * 1536 == 2_415_919_104 and 2_415_919_104 * 210 // 256 == 1_981_808_640


@pytest.mark.parametrize("t,bits", [("IQ4_KS", 4.25), ("IQ4_KSS", 4.0), ("IQ5_KS", 5.25), ("IQ2_KS", 2.1875),
                                    ("IQ3_KS", 3.1875), ("IQ2_KL", 2.6875), ("IQ1_KT", 1.75), ("IQ2_KT", 2.125),
                                    ("IQ3_KT", 3.125), ("IQ4_KT", 4.0), ("IQ4_KS_R4", 4.25), ("IQ1_M_R4", 1.75),
                                    ("IQ1_S_R4", 1.5), ("Q6_0", 6.5)])
def test_ik_row_scale_type_bits(t, bits):
    assert TYPE_BITS[t] == bits


def test_ik_row_meta_bytes_and_ids():
    assert tensor_bytes("IQ4_KS", (256, 7168)) == 975_872
    assert tensor_bytes("IQ4_K", (256, 7168)) == 256 * 28 * 144  # no row meta
    assert GGML_TYPE_IDS[144] == "IQ4_KS" and GGML_TYPE_IDS[146] == "IQ4_KSS" and GGML_TYPE_IDS[229] == "IQ1_M_R4"
    assert GGML_TYPE_IDS[133] == "Q6_0"
    assert parse({"iq4_ks": 20, "iq1_m_r4": 26}) == {"IQ4_KS": 20, "IQ1_M_R4": 26}


def test_one_quantized_type_places_every_matmul():
    spec = llm.describe(model="Qwen/Qwen3-235B-A22B")
    g = given(spec, {"f32": 471, "q6_K": 660})
    assert g.expert_file_bytes[0][0] == 1_981_808_640
    router = 94 * 4096 * 128
    assert g.weights_bytes == pytest.approx((spec.params - router) * 210 / 256 + router * 4, abs=4)
    assert abs(g.weights_bytes / GiB - 179.75) < 0.01  # the print: 'file size = 179.75 GiB (6.57 BPW)'
    with pytest.raises(UserError, match="not Qwen3-235B-A22B's 660 matmuls"):
        given(spec, {"f32": 471, "q6_K": 200})
    # rev9 S2: enough for the experts (3 x 94 + 2 = 284) is not enough: 94 layers x (4 attention + 3 expert) matmuls
    # + token table + output = 660; 400 means other matmuls printed another type
    with pytest.raises(UserError, match="not Qwen3-235B-A22B's 660 matmuls"):
        given(spec, {"f32": 471, "q6_K": 400})


def test_ik_file_type_iq4_kss_read_beside_counts():
    # #239: --weights-dtype IQ4_KSS is now an ik type read as its base; the counts (q8_0 306, q6_K 1, iq4_kss 479:
    # experts and attention both iq4_kss) still do not part, so the refusal names the counts, not the file type
    with pytest.raises(UserError, match="routed experts print two types"):
        llm.plan(llm.describe(model="deepseek-ai/DeepSeek-R1"), "llama.cpp", ctx=8192, parallel=1, kv_dtype="f16",
                 weights_dtype="IQ4_KSS", vram=24 * GiB, runtime_version="ik_llama.cpp 3597 (68a5b604)", ngl=100,
                 gguf_types={"f32": 361, "q8_0": 306, "q6_K": 1, "iq4_kss": 479})


def test_q2k_rule_places_deepseek_r1_with_kb_vb():
    assert 3 + 58 + 58 + 61 == 180 and 305 + 6 + 116 + 116 + 1 == 544
    assert 256 * 7168 * 2048 == 3_758_096_384
    assert 2 * 3_758_096_384 * 84 // 256 == 2_466_250_752 and 3_758_096_384 * 110 // 256 == 1_614_807_040
    spec = llm.describe(model="deepseek-ai/DeepSeek-R1")
    counts = {"f32": 361, "q2_K": 544, "q3_K": 180, "q6_K": 1, "iq4_nl": 61}
    g = given(spec, counts, "Q2_K")
    assert g.expert_file_bytes[3] == (4_081_057_792, 0) and g.expert_file_bytes[0] == (0, 0)
    assert g.output_bytes == 7168 * 129280 * 210 // 256 and g.embed_bytes == 7168 * 129280 * 84 // 256
    assert abs(g.weights_bytes / GiB - 227.689) < 0.01
    with pytest.raises(UserError, match="routed experts print two types"):  # no file type: no rule
        given(spec, counts)
    with pytest.raises(UserError, match="routed experts print two types"):  # one tensor off the rule: a custom mix
        given(spec, {"f32": 361, "q2_K": 545, "q3_K": 179, "q6_K": 1, "iq4_nl": 61}, "Q2_K")
    with pytest.raises(UserError, match="routed experts print two types"):  # another file type's rule is not read
        given(spec, counts, "Q4_K_M")


def test_ot_device_buffer_on_one_device():
    from gpu_garden.memory.llm.runtimes.llamacpp_offload import override_cpu_layers
    spec = llm.describe(model="deepseek-ai/DeepSeek-V3-0324")
    ot = ["exps=CPU", "attn=CUDA0", "exp=CUDA0", r"blk.*.ffn_norm.weight=CUDA0", r"blk.*.ffn_gate_inp.weight=CUDA0"]
    # every layer's names match (the 3 dense ones hold no experts: cpu_expert_bytes gives them 0)
    assert override_cpu_layers(spec, ot, True) == (tuple(range(61)), True)  # exps also matches .bias names
    assert override_cpu_layers(spec, ["exps=CUDA0", "exps=CPU"], True) == ((), False)  # the first override decides
    with pytest.raises(UserError, match="only the CPU buffer type"):
        override_cpu_layers(spec, ot)
    with pytest.raises(UserError, match="token table"):
        override_cpu_layers(spec, ["exps=CPU", "token_embd=CUDA0"], True)
    kw = dict(ctx=32768, parallel=1, kv_dtype="q8_0", weights_dtype="IQ4_K_R4", vram=48 * GiB, ngl=99,
              runtime_version="ik_llama.cpp 3726 (4ed8b37c)", override_tensor=ot, flash_attn="on",
              gguf_types={"f32": 361, "q8_0": 612, "iq4_k_r4": 116, "iq5_k_r4": 58})
    r = llm.plan(spec, "llama.cpp", **kw)
    assert r["kv_total"] == 61 * 576 * 32768 * 34 // 32
    with pytest.raises(UserError, match="only the CPU buffer type"):
        llm.plan(spec, "llama.cpp", **{**kw, "num_gpus": 2})
    with pytest.raises(UserError, match="only the CPU buffer type"):
        llm.plan(spec, "llama.cpp", **{**kw, "ngl": 40})
