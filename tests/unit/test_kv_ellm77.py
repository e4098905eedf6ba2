"""Task ellm77 (kv-accuracy round 99, batch 103 after its first sight): llama-quantize's Q4_K_M rule.

1. llama-quant.cpp llama_tensor_get_type (TheTom/llama-cpp-turboquant 69d8e4be; ik's src/llama-quantize.cpp the same
   for these branches but its MoE attn_v / attn_k / attn_output lines) for LLAMA_FTYPE_MOSTLY_Q4_K_M, default type
   Q4_K: attn_v Q6_K where use_more_bits(i_attention_wv, n_attention_wv); every ffn_down (the layer read from the
   name at n_expert > 1, n_ffn_down = n_layer) Q6_K where use_more_bits(i_layer, n_layer); output Q6_K; the rest Q4_K.
   use_more_bits(i, n) = i < n/8 || i >= 7*n/8 || (i - n/8) % 3 == 2.
     n = 94 (Qwen3-235B-A22B): n/8 = 11, 7*94/8 = 658/8 = 82. i < 11: 11 layers; i >= 82: 82..93, 12 layers;
       11 <= i < 82 with (i - 11) % 3 == 2: i - 11 in 2, 5, ..., 68: (68 - 2)/3 + 1 = 23 layers. 11 + 12 + 23 = 46.
       Q6_K: 46 attn_v + 46 ffn_down_exps + output = 93. Matmuls: token_embd + output + 94 x (q, k, v, o, gate_exps,
       up_exps, down_exps) = 2 + 658 = 660; Q4_K 660 - 93 = 567. The loader printed f32 471, q4_K 567, q6_K 93 (ik530).
     n = 48 (Qwen3-30B-A3B): n/8 = 6, 7*48/8 = 42. 6 + 6 (42..47) + (i - 6 in 2..35 step 3: 12) = 24.
       Q6_K 24 + 24 + 1 = 49; matmuls 2 + 48 x 7 = 338; Q4_K 338 - 49 = 289 (ik514 mainline b5622: f32 241, q4_K 289,
       q6_K 49).
   Qwen3-30B-A3B's routed experts (128 x 2048 x 768 = 201,326,592 values a matrix): Q4_K 144 B / 256 values ->
   113,246,208 B; Q6_K 210 B / 256 -> 165,150,720 B. Layer 0 (more bits): 2 x 113,246,208 + 165,150,720 =
   391,643,136; layer 6 ((6 - 6) % 3 = 0): 3 x 113,246,208 = 339,738,624; layer 8 ((8 - 6) % 3 = 2): 391,643,136.
   The token table 2048 x 151936 at Q4_K: 311,164,928 x 144/256 = 175,030,272 B; the output at Q6_K: x 210/256 =
   255,252,480 B. The file prints 'file size = 17.28 GiB' (kv: 17.276, the F32 norms left out).
2. The 8-expert bump (both trees: after the file type's own choice, `if (n_expert == 8) new_type = GGML_TYPE_Q8_0`
   for attn_v) applies to Q2_K as to Q4_K_M: Mixtral-8x7B's attn_v is Q8_0 in either file type.
"""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import gguf_rule as R
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf_types import given

GiB = 1 << 30


def test_hand_figures():
    assert 94 // 8 == 11 and 7 * 94 // 8 == 82 and (68 - 2) // 3 + 1 == 23 and 11 + 12 + 23 == 46
    assert 46 + 46 + 1 == 93 and 2 + 94 * 7 == 660 and 660 - 93 == 567
    assert 48 // 8 == 6 and 7 * 48 // 8 == 42 and 6 + 6 + 12 == 24 and 2 + 48 * 7 - 49 == 289
    assert 128 * 2048 * 768 == 201_326_592 and 201_326_592 * 144 // 256 == 113_246_208
    assert 201_326_592 * 210 // 256 == 165_150_720 and 2 * 113_246_208 + 165_150_720 == 391_643_136
    assert 2048 * 151936 * 144 // 256 == 175_030_272 and 2048 * 151936 * 210 // 256 == 255_252_480


def test_use_more_bits():
    assert sum(R.use_more_bits(i, 94) for i in range(94)) == 46
    assert sum(R.use_more_bits(i, 48) for i in range(48)) == 24
    assert [i for i in range(11, 20) if R.use_more_bits(i, 94)] == [13, 16, 19]


def test_q4km_rule_places_qwen3_30b_a3b():
    spec = llm.describe(model="Qwen/Qwen3-30B-A3B")
    g = given(spec, {"f32": 241, "q4_K": 289, "q6_K": 49}, "Q4_K_M")
    assert g.expert_file_bytes[0] == (391_643_136, 0) and g.expert_file_bytes[6] == (339_738_624, 0)
    assert g.expert_file_bytes[8] == (391_643_136, 0) and g.expert_file_bytes[47] == (391_643_136, 0)
    assert g.embed_bytes == 175_030_272 and g.output_bytes == 255_252_480
    assert abs(g.weights_bytes / GiB - 17.28) < 0.005
    with pytest.raises(UserError, match="routed experts print two types"):  # one tensor off the rule
        given(spec, {"f32": 241, "q4_K": 290, "q6_K": 48}, "Q4_K_M")


def test_q4km_rule_places_qwen3_235b():
    spec = llm.describe(model="Qwen/Qwen3-235B-A22B")
    g = given(spec, {"f32": 471, "q4_K": 567, "q6_K": 93}, "Q4_K_M")
    assert abs(g.weights_bytes / GiB - 132.386) < 0.01  # 'model size = 132.386 GiB (4.837 BPW)'
    types = {(n, i): R.rule_type(spec, "Q4_K_M", n, ne0, False, i) for n, i, ne0, _ in R.census(spec, False)}
    assert types["attn_v", 12] == "Q4_K" and types["attn_v", 13] == "Q6_K" and types["attn_v", 93] == "Q6_K"
    assert types["ffn_down_exps", 10] == "Q6_K" and types["ffn_down_exps", 11] == "Q4_K"
    assert types["attn_output", 0] == "Q4_K" and types["output", -1] == "Q6_K" and types["token_embd", -1] == "Q4_K"


def test_eight_expert_attn_v_bump():
    spec = llm.describe(model="mistralai/Mixtral-8x7B-Instruct-v0.1")
    assert spec.n_experts == 8
    assert R.rule_type(spec, "Q2_K", "attn_v", 4096, False) == "Q8_0"  # was Q4_K (n_gqa 4) before
    assert R.rule_type(spec, "Q4_K_M", "attn_v", 4096, False, 5) == "Q8_0"
    assert R.rule_type(spec, "Q4_K_M", "attn_output", 4096, False, 5) == "Q5_K"


def test_deepseek_v25_builtin():
    # DeepSeek-V2's config.json (DeepSeek-V2.5 / -1210 share it): 60 layers, hidden 5120, 160 experts of 1536 + 2
    # shared, MLA 512 + 64. llama.cpp printed '235,741 B' params for bartowski's V2.5-1210 GGUF (ik386 / ik400).
    # -mla 3 f16 latent at 32768 cells: 60 x 576 x 32768 x 2 = 2,264,924,160 B = 2160 MiB (ik386 printed 2160,00)
    assert 60 * 576 * 32768 * 2 == 2_264_924_160 == 2160 * (1 << 20)
    spec = llm.describe(model="deepseek-ai/DeepSeek-V2.5-1210")
    assert spec.name == "DeepSeek-V2.5" and spec.n_layers == 60 and spec.n_experts == 160
    assert round(spec.params / 1e6) == 235_741
    assert llm.describe(model="deepseek-v2").name == "DeepSeek-V2-Lite"  # Ollama's default 16b tag, unchanged


def test_iq3xxs_rule_places_deepseek_v25():
    # llama-quant.cpp's IQ3_XXS branches on DeepSeek-V2.5 (60 layers, layer 0 dense; no attn_v, attn_k or attn_q:
    # q_lora attn_q_a / attn_q_b): output Q5_K 1; token_embd IQ3_S + 60 attn_output IQ3_S = 61; every other matmul
    # IQ3_XXS with an imatrix (ffn_down too): 2 + 60 x 5 + 3 + 59 x 6 = 659 matmuls, 659 - 1 - 61 = 597
    # (bartowski's V2.5-1210 IQ3_XXS, ik400: f32 300, q5_K 1, iq3_xxs 597, iq3_s 61).
    # A MoE layer's experts: 160 x 5120 x 1536 = 1,258,291,200 values a matrix x 98/256 B = 481,689,600; x 3 =
    # 1,445,068,800. The token table 102400 x 5120 = 524,288,000 x 110/256 (IQ3_S) = 225,280,000; the output x 176/256
    # (Q5_K) = 360,448,000. Without an imatrix ffn_down is Q4_K in layers 0..6 (60/8 = 7: the dense one + 6 x 2 routed
    # and shared = 13) and Q3_K after (53 x 2 = 106): iq3_xxs 597 - 119 = 478
    assert 963_379_200 + 1_258_291_200 * 144 // 256 == 1_671_168_000 == 963_379_200 + 707_788_800
    assert 963_379_200 + 1_258_291_200 * 110 // 256 == 1_504_051_200
    assert 2 + 60 * 5 + 3 + 59 * 6 == 659 and 659 - 62 == 597 and 1 + 6 * 2 == 13 and 53 * 2 == 106
    assert 160 * 5120 * 1536 * 98 // 256 == 481_689_600 and 524_288_000 * 110 // 256 == 225_280_000
    spec = llm.describe(model="deepseek-ai/DeepSeek-V2.5-1210")
    g = given(spec, {"f32": 300, "q5_K": 1, "iq3_xxs": 597, "iq3_s": 61}, "IQ3_XXS")
    assert g.expert_file_bytes[0] == (0, 0) and g.expert_file_bytes[1] == (1_445_068_800, 0)
    assert g.embed_bytes == 225_280_000 and g.output_bytes == 360_448_000
    assert abs(g.weights_bytes / GiB - 84.604) < 0.01  # 'model size = 84,604 GiB'
    no_imatrix = given(spec, {"f32": 300, "q5_K": 1, "iq3_xxs": 478, "iq3_s": 61, "q4_K": 13, "q3_K": 106}, "IQ3_XXS")
    # layer 1: gate + up 2 x 481,689,600 + down Q4_K 1,258,291,200 x 144/256 = 707,788,800 -> 1,671,168,000;
    # layer 7: down Q3_K x 110/256 = 540,672,000 -> 1,504,051,200
    assert no_imatrix.expert_file_bytes[1][0] == 1_671_168_000 and no_imatrix.expert_file_bytes[7][0] == 1_504_051_200


def test_kimi_k2_instruct_builtin():
    # moonshotai/Kimi-K2-Instruct's config.json as third-party copies give it: Kimi-K2-Thinking's geometry (61 layers,
    # 1 dense, 64 heads, MLA 512 + 64, 384 experts of 2048 + 1 shared, vocab 163840) with 131072 positions (yarn 32 x
    # 4096: ik616 prints freq_scale = 0.03125 = 1/32) and fp8 weights; the 0905 release 262144 (yarn 64 x 4096)
    assert 32 * 4096 == 131072 and 1 / 32 == 0.03125 and 64 * 4096 == 262144
    k = llm.describe(model="moonshotai/Kimi-K2-Instruct")
    t = llm.describe(model="moonshotai/Kimi-K2-Thinking")
    assert k.name == "Kimi-K2-Instruct" and k.max_ctx == 131072 and k.quant == "fp8"
    for f in ("n_layers", "hidden", "n_heads", "kv_lora_rank", "qk_rope_head_dim", "n_experts", "moe_intermediate",
              "vocab", "params"):
        assert getattr(k, f) == getattr(t, f), f
    assert llm.describe(model="moonshotai/Kimi-K2-Instruct-0905").max_ctx == 262144
