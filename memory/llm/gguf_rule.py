"""llama.cpp's quantizer rule for a MoE file's tensors, where the loader's printed counts are exactly what it gives.

llama-quantize types each tensor by a fixed rule of the file type, the tensor's name and its row (llama-quant.cpp
llama_tensor_get_type; ik_llama.cpp's copy in src/llama-quantize.cpp). For the Q2_K file type (LLAMA_FTYPE_MOSTLY_Q2_K)
it gives: output.weight Q6_K (Q8_0 when its row is no whole number of 256-blocks), and a tied file's token_embd (no
output.weight) the same; every ffn_down (dense, routed experts, shared experts) Q3_K; attn_output Q3_K (Q5_K when
n_expert == 8); attn_v.weight Q3_K (Q4_K at n_gqa >= 4; Q8_0 at n_expert == 8, as for every file type); attn_k.weight
Q8_0 when n_expert == 8; the rest, an untied token table with it, Q2_K; and a tensor whose row (ne0) is no whole number
of 256-blocks falls back (Q2_K / Q3_K -> IQ4_NL in the rule kv's weights.K_FALLBACK_TYPE reads; Q4_0 in the 2026
tree). The rule moved over the versions: the 2026 mainline tree
(read in TheTom/llama-cpp-turboquant at 69d8e4be, src/llama-quant.cpp tensor_get_category) bills attn_kv_b as attn_v,
the older one did not; ik's copy at 8337e4cd gives every name holding "attn_k" Q8_0 when n_expert >= 4. So kv does
not pick a version: it builds the file's census (the matmuls llama.cpp's tensor names give the model, with or without
the attn_k_b / attn_v_b pair the MLA converters add) under each reading and takes the one whose type counts equal the
printed ones, exactly; none equal, the counts stay refused (a custom mix: --custom-q, -ot recipes).

The Q4_K_M file type (LLAMA_FTYPE_MOSTLY_Q4_K_M, base Q4_K) in the same function: output.weight Q6_K (as above);
attn_v (and attn_kv_b where it reads as attn_v) Q6_K where use_more_bits(i_attention_wv, n_attention_wv), else Q4_K
(Q8_0 at n_expert == 8); every ffn_down (dense, routed, shared: layer_info reads the layer from the name when
n_expert > 1, n_ffn_down = n_layer) Q6_K where use_more_bits(i_layer, n_layer); attn_k Q8_0 and attn_output Q5_K at
n_expert == 8; the rest, an untied token table with it, Q4_K; the K fallback (Q4_K -> Q5_0, Q6_K -> Q8_0) as above.
use_more_bits(i, n) = i < n/8 || i >= 7*n/8 || (i - n/8) % 3 == 2 (integer division). The quantizer walks the
loader's weights_map, ordered by layer number (llama-model-loader.h weight_name_comparer), so the i-th attn_v is
the i-th in census order (layer i's only where every layer has one: placed() counts them). ik's copy gives a MoE
of n_expert >= 4 attn_v / attn_k* Q8_0 and attn_output Q5_K instead: a reading kv does not build (no row's counts
are it).

The IQ3_XXS file type (base IQ3_XXS; the 2026 tree's category reading, attn_k / attn_q the exact names): output Q5_K;
an untied token table IQ3_S; attn_v Q4_K at n_gqa >= 4, else IQ3_XXS with an imatrix (IQ3_S without); attn_k and attn_q
IQ2_S (DeepSeek's attn_q_a / attn_q_b are neither); ffn_down IQ3_XXS with an imatrix (without: Q4_K in the first n/8
layers, Q3_K after); attn_output IQ3_S (Q5_K at n_expert == 8); the rest IQ3_XXS; the I-quants falling back to IQ4_NL.
Whether the quantizer had an imatrix is not printed: kv tries both and keeps the exact match."""
from collections import Counter

from .weights import K_FALLBACK_TYPE, TYPE_BITS, moe_layer_flags

QK_K = 256
RULE_FTYPES = ("Q2_K", "Q4_K_M", "IQ3_XXS")
# the I-quants' fallback (tensor_type_fallback: IQ2_S / IQ3_XXS / IQ3_S -> IQ4_NL), beside the K-quants'
FALLBACK = {**K_FALLBACK_TYPE, "IQ2_S": "IQ4_NL", "IQ3_XXS": "IQ4_NL", "IQ3_S": "IQ4_NL"}


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama-quant.cpp's use_more_bits lambda (C integer division; i - n/8 >= 0 wherever the modulo is reached)."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def census(spec, kb_vb: bool) -> list:
    """[(name, layer, ne0, elements)]: the matmuls of a llama.cpp GGUF of spec (layer -1: token table, output)."""
    h, out = spec.hidden, [("token_embd", -1, spec.hidden, spec.hidden * spec.vocab)]
    if not spec.tied:
        out.append(("output", -1, h, h * spec.vocab))
    for i, moe in enumerate(moe_layer_flags(spec)):
        if spec.kv_lora_rank:  # MLA (llama-model.cpp LLM_ARCH_DEEPSEEK2)
            r, nope, rope, vh, nh = (spec.kv_lora_rank, spec.mla_qk_nope, spec.qk_rope_head_dim, spec.mla_v_head,
                                     spec.n_heads)
            q = nh * (nope + rope)
            if spec.mla_q_lora:
                out += [("attn_q_a", i, h, h * spec.mla_q_lora), ("attn_q_b", i, spec.mla_q_lora, spec.mla_q_lora * q)]
            else:
                out.append(("attn_q", i, h, h * q))
            out += [("attn_kv_a_mqa", i, h, h * (r + rope)), ("attn_kv_b", i, r, r * nh * (nope + vh))]
            if kb_vb:  # {qk_nope, kv_lora_rank, n_head} and {kv_lora_rank, v_head, n_head}
                out += [("attn_k_b", i, nope, nope * r * nh), ("attn_v_b", i, r, r * vh * nh)]
            out.append(("attn_output", i, nh * vh, nh * vh * h))
        else:
            q, kv = spec.n_heads * spec.head_dim_k, spec.n_kv_heads * spec.head_dim_k
            out += [("attn_q", i, h, h * q), ("attn_k", i, h, h * kv),
                    ("attn_v", i, h, h * spec.n_kv_heads * spec.head_dim_v), ("attn_output", i, q, q * h)]
        if moe:
            m, e = spec.moe_intermediate, spec.n_experts
            out += [("ffn_gate_exps", i, h, h * m * e), ("ffn_up_exps", i, h, h * m * e),
                    ("ffn_down_exps", i, m, m * h * e)]
            if spec.shared_intermediate:
                s = spec.shared_intermediate
                out += [("ffn_gate_shexp", i, h, h * s), ("ffn_up_shexp", i, h, h * s), ("ffn_down_shexp", i, s, s * h)]
        else:
            f = spec.intermediate
            out += [("ffn_gate", i, h, h * f), ("ffn_up", i, h, h * f), ("ffn_down", i, f, f * h)]
    return out


def rule_type(spec, ftype: str, name: str, ne0: int, kv_b_as_v: bool, layer: int = -1, imatrix: bool = True,
              wv=None) -> str:
    """llama_tensor_get_type for ftype (RULE_FTYPES) - see the module's docstring. wv: (i_attention_wv,
    n_attention_wv) of an attn_v-like tensor, its index among them in census order and their count (placed() counts
    them); None reads (layer, n_layers), the same where every layer has one."""
    assert ftype in RULE_FTYPES
    gqa = spec.n_heads // max(spec.n_kv_heads, 1)  # an MLA file converted as MQA (head_count_kv 1) reads 128
    # (rev9 S4) attn_v's use_more_bits takes the quantizer's attn_v counter (llama-quant.cpp at 69d8e4be line 535,
    # counted at 845 and stepped at 548), ffn_down's the layer (layer_info, lines 569-570)
    more_v = use_more_bits(*(wv or (layer, spec.n_layers)))
    more = use_more_bits(layer, spec.n_layers)
    q2, iq3 = ftype == "Q2_K", ftype == "IQ3_XXS"
    base = {"Q2_K": "Q2_K", "Q4_K_M": "Q4_K", "IQ3_XXS": "IQ3_XXS"}[ftype]
    # (rev9 S3) a tied file (no output.weight) types token_embd by the output's branch: llama-quant.cpp at 69d8e4be
    # line 439 `category == OUTPUT || (qs.has_tied_embeddings && category == TOKEN_EMBD)` (the older tree's
    # `!qs.has_output && name == token_embd`, ik's at 8337e4cd line 359, which gives a tied IQ3_XXS file IQ4_K: a
    # reading kv does not build); census() leaves a tied spec's output out
    if name == "output" or (name == "token_embd" and spec.tied):
        t = "Q8_0" if ne0 % QK_K else ("Q5_K" if iq3 else "Q6_K")
    elif name == "token_embd" and iq3:
        t = "IQ3_S"
    elif name == "attn_v" or (kv_b_as_v and name == "attn_kv_b"):
        if spec.n_experts == 8:  # the 8-expert bump, after the file type's own choice
            t = "Q8_0"
        elif q2:
            t = "Q4_K" if gqa >= 4 else "Q3_K"
        elif iq3:
            t = "Q4_K" if gqa >= 4 else ("IQ3_XXS" if imatrix else "IQ3_S")
        else:
            t = "Q6_K" if more_v else "Q4_K"
    elif name == "attn_k" and spec.n_experts == 8:
        t = "Q8_0"
    elif name in ("attn_k", "attn_q") and iq3:
        # (rev9 S5, checked) llama-quant.cpp at 69d8e4be lines 558-559 (ATTENTION_K) and 565-566 (ATTENTION_Q);
        # mainline's llama.cpp since a33e6a0d (#5721, 2024-02, which added IQ2_S)
        t = "IQ2_S"
    elif name.startswith("ffn_down"):
        if iq3:
            t = base if imatrix else ("Q4_K" if layer < spec.n_layers // 8 else "Q3_K")
        else:
            t = "Q3_K" if q2 else ("Q6_K" if more else "Q4_K")
    elif name == "attn_output":
        t = "Q5_K" if spec.n_experts == 8 else {"Q2_K": "Q3_K", "Q4_K_M": "Q4_K", "IQ3_XXS": "IQ3_S"}[ftype]
    else:
        t = base
    if ne0 % QK_K and t in FALLBACK:
        t = FALLBACK[t]
    return t


def placed(spec, ftype, counts: dict):
    """[(name, layer, type, bytes)] of the reading whose type counts equal counts (its 16/32-bit types left out),
    or None."""
    if ftype not in RULE_FTYPES:
        return None
    want = {t: n for t, n in counts.items() if t not in ("F32", "F16", "BF16")}
    for kb_vb in (False, True):
        if kb_vb and not spec.kv_lora_rank:
            continue
        for kv_b_as_v in (False, True):
            if kv_b_as_v and not spec.kv_lora_rank:
                continue
            cen = census(spec, kb_vb)
            v_at = [k for k, (n, *_) in enumerate(cen) if n == "attn_v" or (kv_b_as_v and n == "attn_kv_b")]
            wv = dict((k, (j, len(v_at))) for j, k in enumerate(v_at))  # (rev9 S4) the attn_v index in census order
            for imatrix in (True, False):  # only the I-quants' branches read it
                rows = [(n, i, rule_type(spec, ftype, n, ne0, kv_b_as_v, i, imatrix, wv.get(k)), el)
                        for k, (n, i, ne0, el) in enumerate(cen)]
                if dict(Counter(t for _, _, t, _ in rows)) == want:
                    return [(n, i, t, int(el * TYPE_BITS[t] / 8)) for n, i, t, el in rows]
    return None
