"""fix10k: review rev9's S3-S6 and D6-D8 on kv's GGUF reader and rules, with hand-built headers and values worked out
by hand from llama.cpp's / ik_llama.cpp's source (each test says where).

S6. Type id 36 is ik's / MS BitNet's I2_S only in a header that is ik's (another id from ik's range, 97 up) or BitNet's
    (general.architecture bitnet*); else "ambiguous type id 36": a 2024 mainline IQ4_NL_4_4 is not sized as I2_S."""
import struct

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import headers


def _gguf(path, tensors, arch=None):
    """A GGUF v3 header by hand: general.architecture (when given), tensor infos (name, type id, dims fastest first,
    bytes), data at 32."""
    kv = b""
    if arch is not None:
        key = b"general.architecture"
        kv = struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, len(arch)) + arch.encode()
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1 if arch is not None else 0) + kv
    off = 0
    for name, qt, dims, nbytes in tensors:
        head += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        head += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", qt, off)
        off += nbytes
    head += b"\0" * (-len(head) % 32)
    path.write_bytes(head + b"\0" * off)
    return path


# i2_s 128 x 4: 512 values / 4 + 32 = 160 bytes (ik's ggml_nbytes "hack for I2_S"); as IQ4_NL_4_4 (18 bytes a 32) the
# same tensor would be 16 blocks x 18 = 288 bytes, so the data region below holds both readings
I2S = ("blk.0.attn_q.weight", 36, (128, 4), 288)


def test_id_36_alone_is_not_read_as_i2_s(tmp_path):
    # no other ik id (F32 0 and Q4_K 12 are both forks'), architecture llama: not read as I2_S. (rev10 S2, fix11) the
    # offsets decide: the next tensor 288 bytes on holds IQ4_NL_4_4's 288, not I2_S's 160 (+ under 32 of padding)
    p = _gguf(tmp_path / "m.gguf", [I2S, ("output_norm.weight", 0, (128,), 512),
                                    ("token_embd.weight", 12, (256, 2), 288)], arch="llama")
    table = headers.read_tensors(p)
    assert table["blk.0.attn_q.weight"] == ("IQ4_NL_4_4", (4, 128)) and headers.table_bytes(table) == 288 + 512 + 288
    # no metadata at all, the one tensor to the file's end (288 bytes): the same
    assert headers.read_tensors(_gguf(tmp_path / "n.gguf", [I2S])) == {"blk.0.attn_q.weight": ("IQ4_NL_4_4", (4, 128))}


@pytest.mark.parametrize("arch", ["bitnet", "bitnet-25", "bitnet-b1.58"])   # ik's llama-arch.cpp names
def test_id_36_in_a_bitnet_header_is_i2_s(tmp_path, arch):
    table = headers.read_tensors(_gguf(tmp_path / "b.gguf", [I2S], arch=arch))
    assert table == {"blk.0.attn_q.weight": ("I2_S", (4, 128))}
    assert headers.table_bytes(table) == 160


def test_id_36_beside_another_ik_id_is_i2_s(tmp_path):
    # ik's IQ4_K (139) 256 x 1: one block of 144 bytes; arch llama
    p = _gguf(tmp_path / "ik.gguf", [I2S, ("blk.0.ffn_up.weight", 139, (256, 1), 144)], arch="llama")
    table = headers.read_tensors(p)
    assert table["blk.0.attn_q.weight"] == ("I2_S", (4, 128)) and headers.table_bytes(table) == 160 + 144


# S3: a tied file (no output.weight) types token_embd by the output's branch (llama-quant.cpp at 69d8e4be line 439:
# `category == OUTPUT || (qs.has_tied_embeddings && category == TOKEN_EMBD)`; has_tied_embeddings is true until an
# output.weight is seen, line 849). Qwen3-30B-A3B made tied (48 layers, 128 experts, 32 q heads / 4 kv heads of 128,
# hidden 2048, vocab 151936): 337 matmuls (token_embd + 48 x 7; no output).
#   Q4_K_M: Q6_K = 24 attn_v + 24 ffn_down_exps (use_more_bits over 48: test_kv_ellm77) + token_embd = 49; Q4_K 337 - 49
#     = 288 (the base-type reading gave Q6_K 48, Q4_K 289). The table at Q6_K: 2048 x 151936 x 210 / 256 = 255,252,480 B
#     (at Q4_K it was 175,030,272).
#   IQ3_XXS with an imatrix: token_embd Q5_K (line 452's IQ3_XXS branch) 1; attn_output IQ3_S 48 (n_expert 128, line
#     624); attn_q, attn_k IQ2_S 96 (lines 558-559, 565-566); attn_v Q4_K 48 (n_gqa 32 / 4 = 8 >= 4, line 519); every
#     routed expert IQ3_XXS 3 x 48 = 144: 1 + 48 + 96 + 48 + 144 = 337. The table at Q5_K: 311,164,928 x 176 / 256 =
#     213,925,888 B.
def _tied_qwen3_30b():
    from dataclasses import replace

    from gpu_garden.memory.llm import kv as llm
    spec = llm.describe(model="Qwen/Qwen3-30B-A3B")
    assert not spec.tied and spec.n_layers == 48 and spec.n_heads // spec.n_kv_heads == 8 and spec.hidden == 2048
    return replace(spec, tied=True)


def test_tied_token_table_takes_the_output_branch():
    from gpu_garden.memory.llm import gguf_rule as R
    from gpu_garden.memory.llm.gguf_types import given
    assert 2 + 48 * 7 - 1 == 337 and 24 + 24 + 1 == 49 and 337 - 49 == 288 and 1 + 48 + 96 + 48 + 144 == 337
    assert 2048 * 151936 == 311_164_928 and 311_164_928 * 210 // 256 == 255_252_480
    assert 311_164_928 * 176 // 256 == 213_925_888
    spec = _tied_qwen3_30b()
    assert R.rule_type(spec, "Q2_K", "token_embd", 2048, False) == "Q6_K"
    assert R.rule_type(spec, "Q4_K_M", "token_embd", 2048, False) == "Q6_K"
    assert R.rule_type(spec, "IQ3_XXS", "token_embd", 2048, False) == "Q5_K"
    g = given(spec, {"f32": 241, "q4_K": 288, "q6_K": 49}, "Q4_K_M")
    assert g.embed_bytes == g.output_bytes == 255_252_480
    g = given(spec, {"f32": 241, "q5_K": 1, "iq3_s": 48, "iq2_s": 96, "q4_K": 48, "iq3_xxs": 144}, "IQ3_XXS")
    assert g.embed_bytes == 213_925_888


# S5 (checked, kept): LLAMA_FTYPE_MOSTLY_IQ3_XXS gives attn_k and attn_q IQ2_S - llama-quant.cpp at 69d8e4be lines
# 558-559 (ATTENTION_K, after the n_expert == 8 Q8_0 and IQ3_XS's IQ3_XXS) and 565-566 (ATTENTION_Q); in mainline since
# a33e6a0d (#5721). Not attn_v (line 519: Q4_K at n_gqa 8), nor attn_q_a / attn_q_b (category OTHER: the base type).
def test_iq3_xxs_attn_q_k_branch():
    from gpu_garden.memory.llm import gguf_rule as R
    spec = _tied_qwen3_30b()
    names = ("attn_q", "attn_k", "attn_v", "attn_q_a", "attn_q_b")
    got = [R.rule_type(spec, "IQ3_XXS", n, 2048, False, 3) for n in names]
    assert got == ["IQ2_S", "IQ2_S", "Q4_K", "IQ3_XXS", "IQ3_XXS"]
    assert R.rule_type(spec, "Q4_K_M", "attn_q", 2048, False, 3) == "Q4_K"   # the IQ3_XXS file type only


# S4: Q4_K_M's attn_v takes use_more_bits(i_attention_wv, n_attention_wv) (llama-quant.cpp at 69d8e4be line 535; the
# counter counts attn_v-like tensors, line 845, and steps at 548), ffn_down use_more_bits(i_layer, n_layer). They differ
# where some layers have no attn_v: Qwen3-30B-A3B (untied, 48 layers) with layers 0-7 stripped of attention (a census
# as a hybrid's would be) has 40 attn_v, for layers 8..47.
#   By index j = 0..39 over n = 40: 40/8 = 5, 7*40/8 = 35; j < 5: 5; j >= 35: 5; (j - 5) % 3 == 2 for j in 5..34:
#     j - 5 in 2, 5, ..., 29: 10. Q6_K attn_v 20.
#   By layer over 48 (what it was): layers 42..47: 6; (layer - 6) % 3 == 2 for layers 8..41: layer - 6 in 2, ..., 35:
#     12. Q6_K 18.
#   Matmuls 338 - 8 x 4 = 306; Q6_K 20 + 24 ffn_down_exps + output 1 = 45; Q4_K 306 - 45 = 261.
def test_q4km_attn_v_counter_is_the_attn_v_index(monkeypatch):
    from gpu_garden.memory.llm import gguf_rule as R
    from gpu_garden.memory.llm import kv as llm
    assert 5 + 5 + 10 == 20 and 6 + 12 == 18 and 338 - 32 == 306 and 20 + 24 + 1 == 45 and 306 - 45 == 261
    assert sum(R.use_more_bits(j, 40) for j in range(40)) == 20
    assert sum(R.use_more_bits(i, 48) for i in range(8, 48)) == 18
    spec = llm.describe(model="Qwen/Qwen3-30B-A3B")
    whole = R.census
    attn = ("attn_q", "attn_k", "attn_v", "attn_output")
    monkeypatch.setattr(R, "census", lambda s, kb_vb: [r for r in whole(s, kb_vb) if not (r[0] in attn and r[1] < 8)])
    rows = R.placed(spec, "Q4_K_M", {"F32": 241, "Q4_K": 261, "Q6_K": 45})
    assert rows is not None
    v = {i: t for n, i, t, _ in rows if n == "attn_v"}
    # layer 8 is j 0 (Q6_K), 13 j 5 ((5 - 5) % 3 = 0: Q4_K), 15 j 7 ((7 - 5) % 3 = 2: Q6_K), 43 j 35 (Q6_K), 42 j 34
    # ((34 - 5) % 3 = 2: Q6_K), 41 j 33 ((33 - 5) % 3 = 1: Q4_K)
    assert (v[8], v[13], v[15], v[43], v[42], v[41]) == ("Q6_K", "Q4_K", "Q6_K", "Q6_K", "Q6_K", "Q4_K")
    assert R.placed(spec, "Q4_K_M", {"Q4_K": 263, "Q6_K": 43}) is None   # the by-layer reading's counts


# D6: the Red Hat Qwen3.6-35B-A3B NVFP4 row names _deltanet_all itself (defined above the table, no forward-reference
# lambda), built from _deltanet_inputs' parts plus out_proj, layer by layer. Qwen3.6-35B-A3B: 40 layers, full attention
# every 4th (layers 3, 7, ..., 39), so 30 gated-DeltaNet layers: 30 x 6 = 180 names, 30 x 5 = 150 without out_proj.
def test_deltanet_all_is_the_table_entry():
    from gpu_garden.memory.llm import checkpoints as C
    from gpu_garden.memory.llm import kv as llm
    row = next(r for r in C.CHECKPOINTS if r[0] == "Qwen3.6-35B-A3B")
    assert row[3] is C._deltanet_all
    spec = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert spec.n_layers == 40 and 40 - 40 // 4 == 30
    names, inputs = C._deltanet_all(spec), C._deltanet_inputs(spec)
    assert len(names) == 180 and len(inputs) == 150 and set(inputs) < set(names)
    p = "model.language_model.layers.0.linear_attn."
    parts = ("conv1d", "in_proj_a", "in_proj_b", "in_proj_qkv", "in_proj_z", "out_proj")
    assert names[:6] == tuple(p + x for x in parts)
    assert "model.language_model.layers.3.linear_attn.out_proj" not in names


# D7 (checked, no change): -ngl's "all layers" spellings reach plan.py's one-device check already resolved (plan_checks
# read_knobs -> llamacpp.resolve_ngl). llama.cpp's common/arg.cpp at 69d8e4be (line 2343) reads auto as -1 and all as
# -2; llama-model.cpp line 8079 takes any negative as n_layer + 1, and line 3031 puts layer il on the GPU from
# i_gpu_start = n_layer + 1 - ngl: on Qwen3.5-122B-A10B (48 layers, no nextn block) ngl 49 holds every layer and the
# output, 48 leaves layer 0 on the CPU. So a device buffer type (=CUDA0) on one GPU is accepted at -1, auto, -2, all,
# 999 and 49 (b8829 is a --fit build: -1 is its default placement) and refused at 48.
@pytest.mark.parametrize("ngl", [None, -1, "auto", -2, "all", 999, 49, 48])
def test_all_layers_spellings_keep_the_one_device_buffer_type(ngl):
    from gpu_garden.memory.llm import kv as llm
    spec = llm.describe(model="Qwen/Qwen3.5-122B-A10B")
    assert spec.n_layers == 48 and not spec.gguf_nextn_blocks and 48 + 1 - 49 == 0 and 48 + 1 - 48 == 1
    ot = [r"blk\.(4[0-7])\.ffn_.*_exps\.weight=CUDA0,blk\..*\.ffn_.*_exps\.weight=CPU"]
    kw = dict(ctx=32768, parallel=1, kv_dtype="f16", weights_dtype="Q4_K_M", vram=80 << 30, runtime_version="b8829",
              flash_attn="on", ngl=ngl, override_tensor=ot)
    if ngl == 48:
        with pytest.raises(UserError, match="only the CPU buffer type is modelled"):
            llm.plan(spec, "llama.cpp", **kw)
    else:   # blocks 0-39's experts on the CPU (the first match decides: 40-47 stay on the device)
        assert llm.plan(spec, "llama.cpp", **kw)["n_cpu_moe"] == 40
