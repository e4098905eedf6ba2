"""Kv-accuracy round 105: a GGUF with Qwen3.5-9B's (qwen35) or Qwen3.5-122B-A10B's (qwen35moe) tensor shapes and no
data (a sparse file of zeros: llama.cpp's reserve reads shapes only), for reserve.cpp to print the compute buffer and,
built against ggml-alloc.c with GGML_ALLOCATOR_DEBUG, the tensors live at each new peak.

    python benchmarks/llamacpp_reserve/mk_gguf.py 9b /tmp/q9b.gguf          # 32 layers, ~14 GB apparent, sparse
    python benchmarks/llamacpp_reserve/mk_gguf.py 122b /tmp/q122.gguf 8     # 8 layers (two full-attention ones)

A vocabulary of 1024 tokens stands in for 248,320: the logits are not at the no-flash-attention peak.
"""
import sys

import numpy as np

from gguf import GGUFWriter, GGMLQuantizationType as Q
kind, out = sys.argv[1], sys.argv[2]
L = int(sys.argv[3]) if len(sys.argv) > 3 else None
if kind == "9b":
    arch, d, L0, H, KV, hd, ff = "qwen35", 4096, 32, 16, 4, 256, 12288
    lk, lv = 16, 32
else:
    arch, d, L0, H, KV, hd, ff = "qwen35moe", 3072, 48, 32, 2, 256, 0
    lk, lv = 16, 64
    E, Eu, fe, fs = 256, 8, 1024, 1024
L = L or L0
V = 1024
w = GGUFWriter(out, arch)
w.add_context_length(262144); w.add_embedding_length(d); w.add_block_count(L)
if ff: w.add_feed_forward_length(ff)
w.add_head_count(H); w.add_head_count_kv(KV); w.add_key_length(hd); w.add_value_length(hd)
w.add_layer_norm_rms_eps(1e-6); w.add_rope_dimension_count(64); w.add_rope_freq_base(1e7)
w.add_rope_dimension_sections([11, 11, 10, 0])
w.add_ssm_conv_kernel(4); w.add_ssm_state_size(128); w.add_ssm_group_count(lk); w.add_ssm_time_step_rank(lv)
w.add_ssm_inner_size(lv * 128); w.add_uint32(f"{arch}.full_attention_interval", 4)
if kind != "9b":
    w.add_expert_count(E); w.add_expert_used_count(Eu); w.add_expert_feed_forward_length(fe)
    w.add_expert_shared_feed_forward_length(fs)
w.add_tokenizer_model("llama")
w.add_token_list([f"t{i}" for i in range(V)]); w.add_token_scores([0.0] * V); w.add_token_types([1] * V)
w.add_bos_token_id(1); w.add_eos_token_id(2)
tensors = []
def t(name, shape, typ=Q.F16):  # shape in ggml order (ne0, ne1, ...)
    tensors.append((name, shape, typ))
t("token_embd.weight", (d, V)); t("output_norm.weight", (d,), Q.F32); t("output.weight", (d, V))
kd, vd = 128 * lk, 128 * lv
for i in range(L):
    b = f"blk.{i}."
    t(b + "attn_norm.weight", (d,), Q.F32); t(b + "post_attention_norm.weight", (d,), Q.F32)
    if (i + 1) % 4 == 0:
        t(b + "attn_q.weight", (d, hd * H * 2)); t(b + "attn_k.weight", (d, hd * KV)); t(b + "attn_v.weight", (d, hd * KV))
        t(b + "attn_output.weight", (hd * H, d)); t(b + "attn_q_norm.weight", (hd,), Q.F32); t(b + "attn_k_norm.weight", (hd,), Q.F32)
    else:
        t(b + "attn_qkv.weight", (d, 2 * kd + vd)); t(b + "attn_gate.weight", (d, vd))
        t(b + "ssm_conv1d.weight", (4, 2 * kd + vd), Q.F32); t(b + "ssm_dt.bias", (lv,), Q.F32); t(b + "ssm_a", (lv,), Q.F32)
        t(b + "ssm_beta.weight", (d, lv)); t(b + "ssm_alpha.weight", (d, lv)); t(b + "ssm_norm.weight", (128,), Q.F32)
        t(b + "ssm_out.weight", (vd, d))
    if kind == "9b":
        t(b + "ffn_gate.weight", (d, ff)); t(b + "ffn_up.weight", (d, ff)); t(b + "ffn_down.weight", (ff, d))
    else:
        t(b + "ffn_gate_inp.weight", (d, E), Q.F32)
        t(b + "ffn_gate_exps.weight", (d, fe, E)); t(b + "ffn_up_exps.weight", (d, fe, E)); t(b + "ffn_down_exps.weight", (fe, d, E))
        t(b + "ffn_gate_inp_shexp.weight", (d,), Q.F32)
        t(b + "ffn_gate_shexp.weight", (d, fs)); t(b + "ffn_up_shexp.weight", (d, fs)); t(b + "ffn_down_shexp.weight", (fs, d))
total = 0
for name, shape, typ in tensors:
    n = int(np.prod(shape)) * (4 if typ == Q.F32 else 2)
    # gguf-py takes the shape in numpy order (reversed)
    w.add_tensor_info(name, tuple(reversed(shape)), np.float32 if typ == Q.F32 else np.float16, n, raw_dtype=typ)
    total += (n + 31) // 32 * 32
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_ti_data_to_file()
w.fout[0].flush() if isinstance(w.fout, list) else w.fout.flush()
f = (w.fout[0] if isinstance(w.fout, list) else w.fout)
pos = f.tell(); pos = (pos + 31) // 32 * 32
f.truncate(pos + total); f.close()
print(out, pos + total)
