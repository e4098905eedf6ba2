"""Task kv54: NVIDIA's Llama-Nemotron NAS (nemotron-nas, DeciLM block_configs: each layer's own KV heads, or none, and
FFN width) and Nemotron 3 Super's latent MoE (nemotron_h moe_latent_size), read from a config.json, a GGUF and the
built-ins. Every expected figure below is worked by hand in the comments, not by the code under test."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf import from_gguf_metadata
from gpu_garden.memory.llm.spec import FFN, FULL, MAMBA, from_config

MiB = 1 << 20


def _attn(group=None, no_op=False, linear=False):
    return {"n_heads_in_group": group, "no_op": no_op, "replace_with_linear": linear, "window_length": None,
            "num_sink_tokens": None, "sparsify": None}


def _ffn(mult=None, no_op=False, linear=False):
    return {"ffn_mult": mult, "no_op": no_op, "replace_with_linear": linear, "sparsify": None}


# three layers, hidden 1024, 16 heads x 64 (head_dim = 1024 / 16), vocab 1000, untied:
#   layer 0: full attention (n_heads_in_group 1: 16 KV heads), ffn_mult 1.5 -> int(2 x 1.5 x 1024 / 3) = 1024
#   layer 1: n_heads_in_group 8 (2 KV heads), ffn_mult 1.0 -> int(2048 / 3) = 682, up to a multiple of 256: 768
#   layer 2: attention no_op, ffn_mult 2.0 -> int(4096 / 3) = 1365 -> 1536
NAS_3 = {"model_type": "nemotron-nas", "architectures": ["DeciLMForCausalLM"], "num_hidden_layers": 3,
         "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": None, "intermediate_size": None,
         "vocab_size": 1000, "max_position_embeddings": 4096, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
         "block_configs": [{"attention": _attn(1), "ffn": _ffn(1.5)}, {"attention": _attn(8), "ffn": _ffn(1.0)},
                           {"attention": _attn(no_op=True), "ffn": _ffn(2.0)}]}


def test_nas_layers_cache_their_own_kv_heads_and_a_no_op_layer_none():
    s = from_config(NAS_3, "config.json")
    assert s.layer_kinds == [FULL, FULL, FFN] and s.attn_layers == 2 and not s.generic
    # K + V elements a token: layer 0 16 x (64 + 64) = 2048, layer 1 2 x 128 = 256, layer 2 none
    assert s.layer_kv_elems == [2048, 256, 0]
    assert s.kv_elems_by_kind()[FULL] == 2048 + 256 == 2304


def test_nas_cache_in_llamacpp_is_the_sum_of_the_attention_layers():
    # f16 cache at 4096 cells: (2048 + 256) elements x 2 bytes x 4096 = 18,874,368 bytes = 18 MiB
    r = llm.plan(from_config(NAS_3, "config.json"), "llama.cpp", ctx=4096, weights_dtype="Q8_0")
    assert r["kv_total"] == 2304 * 2 * 4096 == 18 * MiB


def test_nas_params_follow_each_layer_by_hand():
    # attention, layer 0: q 1024 x 1024, k and v 1024 x 1024 each, o 1024 x 1024 = 4,194,304; its norm 1024
    # attention, layer 1: q 1,048,576 + k, v 2 x 1024 x 128 = 262,144 + o 1,048,576 = 2,359,296; its norm 1024
    # mlp (gate, up, down): layer 0 3 x 1024 x 1024 = 3,145,728, layer 1 3 x 1024 x 768 = 2,359,296,
    # layer 2 3 x 1024 x 1536 = 4,718,592; a norm each 1024; layer 2 has no input norm (no attention)
    # embed and head 2 x 1000 x 1024 = 2,048,000, final norm 1024
    s = from_config(NAS_3, "config.json")
    layers = [4_194_304 + 1024 + 3_145_728 + 1024, 2_359_296 + 1024 + 2_359_296 + 1024, 4_718_592 + 1024]
    assert s.layer_params == layers == [7_342_080, 4_720_640, 4_719_616]
    assert s.params == sum(layers) + 2_048_000 + 1024 == 18_831_360
    assert s.linear_params == 4_194_304 + 3_145_728 + 2_359_296 + 2_359_296 + 4_718_592 == 16_777_216
    assert s.intermediate == 1536


def test_nas_linear_attention_and_dummy_blocks():
    # layer 1 attention replaced by a linear 1024 x 1024 (no cache); layer 2 both no_op (Ultra's dummy blocks: nothing)
    cfg = dict(NAS_3, block_configs=[{"attention": _attn(4), "ffn": _ffn(1.5)},
                                     {"attention": _attn(linear=True), "ffn": _ffn(linear=True)},
                                     {"attention": _attn(no_op=True), "ffn": _ffn(no_op=True)}])
    s = from_config(cfg, "config.json")
    assert s.layer_kinds == [FULL, FFN, FFN] and s.n_kv_heads == 4 and s.layer_kv_elems is None
    # layer 1: two 1024 x 1024 matmuls and their two norms; layer 2: 0
    assert s.layer_params[1:] == [2 * 1024 * 1024 + 2 * 1024, 0]


@pytest.mark.parametrize("blocks, reason", [
    (None, "block_configs"),
    ([{"attention": _attn(3), "ffn": _ffn(1.0)}] * 3, "n_heads_in_group"),   # 16 heads are not in groups of 3
    ([dict(attention=dict(_attn(8), window_length=2048), ffn=_ffn(1.0))] * 3, "window_length"),
    ([{"attention": _attn(no_op=True), "ffn": _ffn(1.0)}] * 3, "no layer attention"),
])
def test_nas_configs_kv_cannot_size_are_refused(blocks, reason):
    with pytest.raises(UserError, match=reason):
        from_config(dict(NAS_3, block_configs=blocks), "config.json")


def test_deci_gguf_layers_without_kv_heads_keep_no_cache_nor_state():
    # llama.cpp's deci arch: head_count_kv per layer, 0 for a block without attention (head_count 0) or a linear one
    meta = {"general.architecture": "deci", "deci.block_count": 3, "deci.embedding_length": 1024,
            "deci.attention.head_count": [16, 16, 0], "deci.attention.head_count_kv": [16, 2, 0],
            "deci.feed_forward_length": [1024, 768, 1536], "tokenizer.ggml.vocab_len": 1000}
    s = from_gguf_metadata(meta)
    assert s.layer_kinds == [FULL, FULL, FFN] and s.recurrent_state_per_seq == 0
    assert s.layer_kv_elems == [2048, 256, 0]


# Nemotron-H with latent experts: hidden 512, pattern "M*E" (Mamba-2, attention, MoE), 8 experts of 256 at latent 128,
# one shared expert of 384; attention 8 heads x 64, 2 KV heads; Mamba-2 8 heads x 64 (inner 512), 2 groups, d_state 16,
# conv 4; vocab 1000, untied
LATENT = {"model_type": "nemotron_h", "num_hidden_layers": 3, "hidden_size": 512, "hybrid_override_pattern": "M*E",
          "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000,
          "mamba_num_heads": 8, "mamba_head_dim": 64, "n_groups": 2, "ssm_state_size": 16, "conv_kernel": 4,
          "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 256, "n_shared_experts": 1,
          "moe_shared_expert_intermediate_size": 384, "moe_latent_size": 128, "tie_word_embeddings": False}


def test_latent_moe_experts_are_sized_at_the_latent_width():
    # MoE layer: routed 8 x (up 128 x 256 + down 256 x 128) = 524,288; fc1_latent_proj 512 x 128 and fc2 128 x 512 =
    # 131,072; shared up + down 2 x 512 x 384 = 393,216; router 8 x 512 + its correction bias 8 = 4104; norm 512
    s = from_config(LATENT, "config.json")
    assert s.layer_kinds == [MAMBA, FULL, FFN]
    assert s.expert_params == 8 * 2 * 128 * 256 == 524_288
    assert s.layer_params[2] == 524_288 + 131_072 + 393_216 + 4104 + 512 == 1_053_192
    # without the latent the same layer's experts are at hidden 512: 8 x 2 x 512 x 256 = 2,097,152, no projections
    plain = from_config(dict(LATENT, moe_latent_size=None), "config.json")
    assert plain.layer_params[2] == 2_097_152 + 393_216 + 4104 + 512


def test_latent_moe_cache_is_the_attention_layer_alone():
    # one attention layer: 2 KV heads x 64 x 2 (K, V) x 2 bytes = 512 bytes a token; 4096 cells: 2 MiB; plus the Mamba-2
    # layer's f32 state for one sequence: conv (4 - 1) x (512 + 2 x 2 x 16) = 1728 and ssm 16 x 512 = 8192 values,
    # 9920 x 4 = 39,680 bytes; the MoE layer adds nothing
    r = llm.plan(from_config(LATENT, "config.json"), "llama.cpp", ctx=4096, weights_dtype="Q8_0")
    assert r["kv_total"] == 2 * 64 * 2 * 2 * 4096 + 39_680 == 2 * MiB + 39_680


def test_latent_wider_than_the_hidden_size_is_refused():
    with pytest.raises(UserError, match="moe_latent_size"):
        from_config(dict(LATENT, moe_latent_size=1024), "config.json")


# the built-ins, from NVIDIA/NeMo's verbatim copies of their config.json: the Super-49B has 80 blocks, 31 of them
# attention no_op, 49 with n_heads_in_group 8 (64 / 8 = 8 KV heads x 128); the Ultra-253B 162 blocks, 98 no_op, 64 with
# n_heads_in_group 16 (128 / 16 = 8 KV heads x 128)
def test_super_49b_builtin_cache_is_what_llamacpp_printed():
    # llama.cpp b5894 (ggml-org/llama.cpp#14752): 'size = 784.00 MiB (4096 cells, 80 layers, 1 seqs)' f16:
    # 49 x 8 x 128 x 2 x 2 bytes x 4096 = 822,083,584 = 784 MiB
    s = llm.describe(model="nvidia/Llama-3_3-Nemotron-Super-49B-v1")
    assert s.name == "Llama-3_3-Nemotron-Super-49B" and s.attn_layers == 49 and s.n_layers == 80
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q6_K")
    assert r["kv_total"] == 49 * 8 * 128 * 2 * 2 * 4096 == 784 * MiB


def test_ultra_253b_builtin_params_and_cache():
    # ik_llama.cpp PR 377's load: '253.401 B' parameters; K (q8_0) 816.00 MiB at 12288 cells = 64 layers x 8 x 128 x
    # 12288 x 34 / 32 bytes
    s = llm.describe(model="nvidia/Llama-3_1-Nemotron-Ultra-253B-v1")
    assert s.attn_layers == 64 and round(s.params / 1e9, 3) == 253.401
    assert 64 * 8 * 128 * 12288 * 34 // 32 == 816 * MiB


def test_nas_block_configs_are_parsed_once(monkeypatch):
    # kv55: spec.from_config and params.count_params each called read_blocks on the same config (parsed twice a run);
    # from_config's blocks now ride on the spec and the parameter count reads them
    from gpu_garden.memory.llm import nemotron_nas
    calls, real = [], nemotron_nas.read_blocks
    monkeypatch.setattr(nemotron_nas, "read_blocks", lambda *a: calls.append(a) or real(*a))
    s = from_config(NAS_3, "config.json")
    assert len(calls) == 1
    assert s.nas_blocks == [("attn", 16, "mlp", 1024), ("attn", 2, "mlp", 768), (None, 0, "mlp", 1536)]
    assert s.params == 18_831_360  # as test_nas_params_follow_each_layer_by_hand works it
