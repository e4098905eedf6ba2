"""Task kv56: poolside's Laguna (LagunaForCausalLM) read from a config.json given with --config, as vLLM's laguna.py
builds it (vllm-project/vllm 9c1e4029): query heads by layer, K and V of num_key_value_heads x head_dim in every layer,
the output gate and the sliding layers' sinks as weights, MoE layers from mlp_only_layers / decoder_sparse_step.
LAG below is a small made-up config in Laguna's keys, not Laguna-S-2.1's (whose config.json was not read). Every
expected figure is worked by hand in the comments, not by the code under test."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import FULL, SLIDING, from_config

# four layers, hidden 256, 2 KV heads x 64, query heads 4, 8, 8, 4; layers 1 and 2 sliding (window 128), 0 and 3 full;
# layer 0 dense (mlp_only_layers), 1-3 MoE: 8 experts of 128, a shared expert of 64; per-head gate, sinks on; untied
LAG = {"model_type": "laguna", "architectures": ["LagunaForCausalLM"], "num_hidden_layers": 4, "hidden_size": 256,
       "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000,
       "num_attention_heads_per_layer": [4, 8, 8, 4],
       "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
       "sliding_window": 128, "gating": "per-head", "swa_attention_sink_enabled": True,
       "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "shared_expert_intermediate_size": 64,
       "intermediate_size": 512, "mlp_only_layers": [0], "decoder_sparse_step": 1, "qkv_bias": False,
       "attention_bias": False, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "max_position_embeddings": 4096}


def test_laguna_every_layer_caches_the_same_kv_heads():
    # K + V a token and layer: 2 KV heads x (64 + 64) = 256 elements, whatever the layer's query heads (4 or 8)
    s = from_config(LAG, "config.json")
    assert s.layer_kinds == [FULL, SLIDING, SLIDING, FULL] and s.sliding_window == 128 and not s.generic
    assert (s.n_kv_heads, s.head_dim_k, s.layer_kv_elems) == (2, 64, None)
    assert s.kv_elems_by_kind() == {FULL: 2 * 256, SLIDING: 2 * 256}


def test_laguna_params_by_hand():
    # layer 0 (full, 4 heads, dense): qkv 256 x (4 + 2 x 2) x 64 = 131,072, o 4 x 64 x 256 = 65,536, gate 256 x 4 = 1024;
    #   q_norm + k_norm 2 x 64 = 128; mlp 3 x 256 x 512 = 393,216; two norms 512: 591,488
    # layer 1 (sliding, 8 heads, MoE): qkv 256 x (8 + 4) x 64 = 196,608, o 8 x 64 x 256 = 131,072, gate 256 x 8 = 2048;
    #   norms 128; sinks 8; routed 8 x 3 x 256 x 128 = 786,432; shared 3 x 256 x 64 = 49,152; router 8 x 256 = 2048 and
    #   e_score_correction_bias 8; two norms 512: 1,168,016; layer 2 the same
    # layer 3 (full, 4 heads, MoE): 131,072 + 65,536 + 1024 + 128 + 786,432 + 49,152 + 2056 + 512 = 1,035,912
    # token table and lm_head 2 x 1000 x 256 = 512,000, final norm 256
    s = from_config(LAG, "config.json")
    assert s.layer_params == [591_488, 1_168_016, 1_168_016, 1_035_912]
    assert s.params == 591_488 + 2 * 1_168_016 + 1_035_912 + 512_000 + 256 == 4_475_688
    # matmuls: attention 197,632 + 2 x 329,728 + 197,632 = 1,054,720; dense 393,216; MoE 3 x (786,432 + 49,152)
    assert s.linear_params == 1_054_720 + 393_216 + 3 * 835_584 == 3_954_688
    assert s.expert_params == 3 * 786_432 == 2_359_296
    assert s.moe_layers == (False, True, True, True) and s.shared_intermediate == 64


@pytest.mark.parametrize("change, layer_deltas", [
    # per-element gate: g_proj hidden -> heads x head_dim: layer 0 256 x 4 x 64 - 1024 = 64,512 more; layers 1, 2
    # 256 x 8 x 64 - 2048 = 129,024 more
    ({"gating": "per-element"}, [64_512, 129_024, 129_024, 64_512]),
    ({"gating": False}, [-1024, -2048, -2048, -1024]),             # no g_proj
    ({"swa_attention_sink_enabled": False}, [0, -8, -8, 0]),       # no sink on the sliding layers
    # decoder_sparse_step 2: MoE where (i + 1) % 2 == 0 and i not in [0]: layers 1 and 3; layer 2 dense:
    # 3 x 256 x 512 - (786,432 + 49,152 + 2056) = 393,216 - 837,640 = -444,424
    ({"decoder_sparse_step": 2}, [0, 0, -444_424, 0]),
    # (rev54) qkv_proj's bias: (heads + 2 KV heads) x head_dim, (4 + 4) x 64 = 512 on layers 0, 3, (8 + 4) x 64 = 768 on 1, 2
    ({"qkv_bias": True}, [512, 768, 768, 512]),
    ({"attention_bias": True}, [256, 256, 256, 256]),              # o_proj's bias: hidden 256 a layer
])
def test_laguna_gate_sink_and_moe_variants(change, layer_deltas):
    base = from_config(LAG, "config.json").layer_params
    got = from_config(dict(LAG, **change), "config.json").layer_params
    assert [g - b for g, b in zip(got, base)] == layer_deltas



def test_laguna_tied_embeddings_drop_the_head():
    # (rev54) tie_word_embeddings: the lm_head is the token table, 1000 x 256 = 256,000 fewer, no layer changes
    base, tied = from_config(LAG, "config.json"), from_config(dict(LAG, tie_word_embeddings=True), "config.json")
    assert tied.layer_params == base.layer_params and base.params - tied.params == 256_000


def test_laguna_vllm_pool_holds_the_sliding_layers_window():
    # bf16: 256 elements x 2 bytes = 512 bytes a token and layer. Full layers: 2 x 512 x 4096 = 4,194,304. Sliding
    # (SlidingWindowSpec): cdiv(128 - 1 + 2048, 16) + 1 = 137 blocks of 16 = 2192 tokens: 2 x 512 x 2192 = 2,244,608
    r = llm.plan(from_config(LAG, "config.json"), "vllm", ctx=4096, vram=24 << 30, weights_dtype="bf16",
                 runtime_version="0.25.1", max_num_batched_tokens=2048)
    assert r["kv_detail"]["sliding_cells"] == 2192
    assert r["kv_total"] == 4_194_304 + 2_244_608 == 6_438_912


def test_laguna_sglang_keeps_a_sliding_window_pool():
    # SGLang's hybrid SWA pools at --swa-full-tokens-ratio 0.8 (a generic decoder's sliding layers would be sized in
    # full): a token costs the full layers 2 x 512 = 1024 bytes and 0.8 of the sliding layers' 1024, 1843.2 bytes;
    # a 4096-token request int(1843.2 x 4096) = int(7,549,747.2) bytes, int(0.8 x 4096) = 3276 sliding-pool tokens
    r = llm.plan(from_config(LAG, "config.json"), "sglang", ctx=4096, vram=24 << 30, weights_dtype="bf16")
    assert r["kv_detail"]["sliding_cells"] == 3276
    assert r["kv_total"] == 7_549_747


@pytest.mark.parametrize("change, reason", [
    ({"num_attention_heads_per_layer": [4, 8, 8]}, "one entry for each"),
    ({"num_attention_heads_per_layer": [4, 8, 5, 4]}, "multiple of num_key_value_heads"),
    ({"mlp_layer_types": ["sparse", "sparse", "sparse", "sparse"]}, "disagree"),
    ({"decoder_sparse_step": 0}, "decoder_sparse_step"),
])
def test_laguna_configs_kv_cannot_read_are_refused(change, reason):
    with pytest.raises(UserError, match=reason):
        from_config(dict(LAG, **change), "config.json")


def test_laguna_s21_by_name_asks_for_its_config():
    # no built-in (no copy of its config.json was read): the name error points to --config instead of refusing outright
    with pytest.raises(UserError, match="num_attention_heads_per_layer") as e:
        llm.describe(model="poolside/Laguna-S-2.1")
    assert "--config" in str(e.value) and "refused the same way" not in str(e.value)
