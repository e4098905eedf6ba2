"""Bits per weight of the checkpoint (non-GGUF) quantization formats, AWQ, GPTQ, AutoRound, compressed-tensors, fp8,
int8, bitsandbytes, MXFP4/NVFP4, by group size, symmetry and width, and the decoder modules a quantization_config
leaves unquantized (its skip/ignore lists). weights.py sizes a checkpoint with them and re-exports every name here."""
import re
from fnmatch import fnmatchcase

from ..errors import UserError
from .spec import LINEAR, LLMSpec

DENSE_BITS = {"fp32": 32, "f32": 32, "bf16": 16, "fp16": 16, "f16": 16}

# AWQ/GPTQ 4-bit: 4 bits + an fp16 scale and a 4-bit zero per group of 128 = 4.16 bits; w4a16 (compressed-tensors,
# symmetric): 4 bits + an fp16 scale per group of 128 = 4.125
LINEAR_BITS = {"fp8": 8.0, "int8": 8.0, "w8a8": 8.0, "bnb-4bit": 4.13, "nf4": 4.13, "mxfp4": 4.25, "nvfp4": 4.5,
               "experts_int8": 8.0}
# vLLM's --quantization experts_int8 (ExpertsInt8Config, quantization/experts_int8.py): an online method for a 16-bit
# checkpoint that quantizes the routed experts (FusedMoE) alone at load, int8 with a float32 scale per output row
# (w13_scale: experts x 2 x moe_intermediate, w2_scale: experts x hidden); every LinearBase stays unquantized
# (UnquantizedLinearMethod), so do the embeddings and the head. A dense model keeps all of it in 16 bits.


def experts_int8_bits(spec: LLMSpec) -> float:
    """Bits a routed-expert weight takes under experts_int8: 8 + one fp32 scale per output row of gate, up (rows of
    hidden values) and down (rows of moe_intermediate values): 32 x (2 I + d) / (3 d I)."""
    d, i = spec.hidden, spec.moe_intermediate
    return 8 + 32 * (2 * i + d) / (3 * d * i) if d and i else 8.0
DEFAULT_GROUP = 128
# bits per group a 4-bit group quantization stores besides the weights: an fp16 scale and a packed 4-bit zero point
# (AWQ, GPTQ, int4), or the scale alone (symmetric w4a16; a config that states its symmetry: linear_bits). A
# checkpoint's quantization_config names its group size
# (group_size / q_group_size); 32-value groups cost 4.625 bits a weight instead of 4.16.
# Intel's AutoRound (auto_round) exports its int4 weights in GPTQ's packing (packing_format "auto_round:auto_gptq":
# int32-packed 4-bit values, an fp16 scale and a packed 4-bit zero per group, the zero stored even when sym) with
# its config's group_size (128 by default), so it is sized as GPTQ.
# W4A8 (compressed-tensors' CompressedTensorsW4A8Int: int4 weights, int8 activations quantized per token at run time,
# which hold no weight memory): symmetric only (its kernel config sets zero_points=False) with a 16-bit scale per
# group, the checkpoint's int8-held values packed to 4 bits after loading (XPUW4A8IntLinearKernel._pack_int4_weight,
# the int8 copy freed): the weights of w4a16
GROUP_OVERHEAD_BITS = {"awq": 20, "gptq": 20, "int4": 20, "w4a16": 16, "auto_round": 20, "w4a8": 16}
# other spellings of a format: vLLM's --quantization auto-round, quant_method "intel/auto-round" of older exports
FORMAT_ALIASES = {"auto-round": "auto_round", "autoround": "auto_round", "intel/auto-round": "auto_round"}
LINEAR_BITS.update({fmt: 4 + bits / DEFAULT_GROUP for fmt, bits in GROUP_OVERHEAD_BITS.items()})   # the usual 128 groups


# What vLLM keeps of a zero point once a group checkpoint is loaded ("Model loading took" is read after
# process_weights_after_loading). compressed-tensors WNA16 create_weights adds weight_zero_point only when the
# scheme is not symmetric. GPTQ-Marlin takes sym checkpoints only (TYPE_MAP (4, True) -> uint4b8, (8, True) ->
# uint8b128, zero_points=False) and MarlinLinearKernel swaps the checkpoint's qzeros for an empty tensor; a GPTQ config
# without `sym`, or with sym false, is not Marlin-compatible (is_gptq_marlin_compatible) and GPTQLinearMethod keeps
# qzeros. AWQ and AWQ-Marlin always keep qzeros (zero_points=True). Per group: an fp16 scale (16 bits), + a zero packed
# at the weights' width (qzeros: int32 words of 32 / bits zeros; ZERO_BITS at the usual 4).
SCALE_BITS, ZERO_BITS = 16, 4
SYM_DROPS_ZERO = ("gptq", "int4", "w4a16", "w4a8")
MARLIN_WIDTHS = (4, 8)      # the widths GPTQ-Marlin's TYPE_MAP takes (symmetric); 2 and 3 bits keep their zeros


def linear_bits(fmt: str, group: int | None = None, sym: bool | None = None, bits: int | None = None) -> float:
    """Bits per decoder-matmul weight of a group format, one formula for every width b (None: 4): b + (an fp16 scale +
    a zero at b bits, where the format keeps one) / group. A format of GROUP_OVERHEAD_BITS above the scale stores a
    zero; in SYM_DROPS_ZERO, a stated symmetry decides at a Marlin width (None: the format's usual layout;
    compressed-tensors without `symmetric` reads as symmetric in spec). 2- or 3-bit GPTQ/AWQ: no Marlin kernel reads
    them, so the zeros stay. 8-bit GPTQ in groups of 128: 8 + (16 + 8) / 128 = 8.1875 (8.125 symmetric)."""
    if fmt not in GROUP_OVERHEAD_BITS:
        return LINEAR_BITS[fmt]
    g = group if group and group > 0 else DEFAULT_GROUP
    b = bits or 4
    zero = GROUP_OVERHEAD_BITS[fmt] > SCALE_BITS
    if fmt in SYM_DROPS_ZERO and sym is not None and b in MARLIN_WIDTHS:
        zero = not sym
    return b + (SCALE_BITS + (b if zero else 0)) / g


# A checkpoint's quantization_config can leave modules in 16 bits: bitsandbytes' llm_int8_skip_modules (Unsloth's
# "dynamic" 4-bit checkpoints list a model-specific set of decoder sub-blocks there: 'model.layers.0.mlp',
# 'model.layers.3.self_attn', ...; unsloth-zoo matches an entry against every dotted prefix of a module name), AWQ's
# modules_to_not_convert, compressed-tensors' ignore. Entries naming the head, the vision tower or the projector
# change nothing here (those are counted in 16 bits already); decoder entries move their matmuls to 16 bits.
_LAYER_TAIL = re.compile(r"(?:^|\.)(layers\.\d+(?:\.|$))")
# the dotted parts an entry may put before "layers.N" and still name the decoder's layer (_decoder_tail); (fixV) an omni
# model's thinker (Qwen2.5-Omni, Qwen3-Omni: thinker.model.layers.N, the decoder spec.py plans; its talker's layers are
# another decoder's and stay a run no decoder name holds)
_DECODER_ROOT = {"", "*", "model", "language_model", "text_model", "backbone", "transformer", "thinker"}
_ATTN_PROJ = ("q_proj", "k_proj", "v_proj", "o_proj")
_MLP_PROJ = ("gate_proj", "up_proj", "down_proj")
# a gated-DeltaNet layer's matmuls as transformers' Qwen3.5 names them (vLLM fuses qkv+z and b+a on load)
_LIN_PROJ = ("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "conv1d", "out_proj")


def _decoder_tail(entry: str, m) -> str | None:
    """The entry from its "layers.N" on (m: _LAYER_TAIL's match) when what stands before is a language model's root
    (_DECODER_ROOT: model., language_model., ...); None when it names no layer index or another module's own layers
    ((rev51) a wildcard, (fixT) a plain entry: vision_tower.encoder.layers.3 is not decoder layer 3)."""
    return entry[m.start(1):] if m and set(entry[:m.start(1)].split(".")) <= _DECODER_ROOT else None


def _shared(name: str) -> str:
    """A MoE block's shared experts under one spelling (DeepSeek's mlp.shared_experts, Qwen MoE's mlp.shared_expert)."""
    return name.replace("shared_experts.", "shared_expert.")


def skip_matcher(entries):
    """A test: does one of a quantization_config's skip/ignore entries leave this module (model.layers.3.self_attn.q_proj)
    unquantized? `re:` entries are regexes matched from the name's start (vLLM's compressed-tensors
    should_ignore_layer: _is_equal_or_regex_match, re.match); other entries name the module or a dotted parent of it
    from a language model's root (model., language_model.model.: bitsandbytes' and unsloth's prefix rule), or, without
    a layer index or under another module's layers (vision_tower.encoder.layers.3), a run of its dotted parts
    ('kv_b_proj', 'self_attn.o_proj': vLLM's AWQ and bitsandbytes skip those in every layer).
    Entries with a shell wildcard are ModelOpt's (modelopt.py is_layer_excluded: fnmatch, 'model.layers.*.self_attn*',
    'model.language_model.layers.3.mlp*', '*mtp*'): matched from the layer index on where they name one under a
    language model's root (language_model.), else against the whole name.
    (fixV) `only:` entries are GPTQ's modules_in_block_to_quantize (quant_config._quant_skip): the block's modules that ARE
    quantized; where any is given, a decoder module none of them names (itself or a dotted parent, from its layer index
    on; shared_experts and shared_expert alike) is left in 16 bits."""
    tails, runs, pats, globs, only = set(), set(), [], [], set()
    for e in entries or ():
        e = str(e).strip()
        if e.startswith("only:"):
            m = _LAYER_TAIL.search(e[5:])
            only.add(_shared(e[5:][m.end(1):] if m else e[5:]))
        elif e.startswith("re:"):
            try:
                pats.append(re.compile(e[3:]))
            except re.error as err:
                raise UserError(f"quantization ignore entry {e!r} is not a valid regex: {err}") from None
        elif any(c in e for c in "*?["):  # a ModelOpt wildcard: from the layer index on when it names one (_glob)
            globs.append(_decoder_tail(e, _LAYER_TAIL.search(e.replace("*", "0"))) or e)
        elif (m := _LAYER_TAIL.search(e)) and (tail := _decoder_tail(e, m)):
            tails.add(tail)
        elif e:
            runs.add(e)     # (fixT) and a vision tower's or MTP head's own layers.N: a run no decoder name holds

    def skipped(module: str) -> bool:
        parts = module.split(".")
        i = parts.index("layers") if "layers" in parts else len(parts)
        tail = parts[i:]
        if only and len(tail) > 2 and not any(_shared(".".join(tail[2:k])) in only for k in range(3, len(tail) + 1)):
            return True
        if any(".".join(tail[:k]) in tails for k in range(2, len(tail) + 1)):
            return True
        if runs and any(".".join(parts[a:b]) in runs for a in range(len(parts)) for b in range(a + 1, len(parts) + 1)):
            return True
        if any(p.match(module) for p in pats):
            return True
        return any(fnmatchcase(".".join(tail) if g.startswith("layers.") else module, g) for g in globs)
    return skipped


def _proj_params(spec: LLMSpec, proj: str, layer: int = 0) -> int:
    d, hd, h, kv = spec.hidden, spec.head_dim_k, spec.n_heads, spec.n_kv_heads
    if spec.layer_kv_heads and spec.layer_kv_elems:  # a layer's own head shape (Gemma 4's global layers)
        kv = spec.layer_kv_heads[layer]
        hd = spec.layer_kv_elems[layer] // (2 * kv)
    if proj in _LIN_PROJ:
        if not spec.linear_dims:
            return 0
        kh, kd, vh, vd, conv = spec.linear_dims
        return {"in_proj_qkv": d * (2 * kh * kd + vh * vd), "in_proj_z": d * vh * vd, "in_proj_b": d * vh,
                "in_proj_a": d * vh, "conv1d": (2 * kh * kd + vh * vd) * conv, "out_proj": vh * vd * d}[proj]
    v = 0 if layer in spec.no_v_proj_layers else d * kv * hd
    return {"q_proj": d * h * hd, "k_proj": d * kv * hd, "v_proj": v, "o_proj": h * hd * d,
            "gate_proj": d * spec.intermediate, "up_proj": d * spec.intermediate,
            "down_proj": spec.intermediate * d}.get(proj, 0)


# MLA attention (DeepSeek-V2/V3, Kimi-K2) as transformers and vLLM name it: queries through q_a/q_b (q_proj without
# q_lora_rank), the latent through kv_a_proj_with_mqa, its up-projection kv_b_proj, then o_proj
_MLA_PROJ = ("q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")


def _mla_params(spec: LLMSpec, proj: str) -> int:
    d, h, qr, r = spec.hidden, spec.n_heads, spec.mla_q_lora, spec.kv_lora_rank
    qk = spec.mla_qk_nope + spec.qk_rope_head_dim
    return {"q_proj": 0 if qr else d * h * qk, "q_a_proj": d * qr, "q_b_proj": qr * h * qk,
            "kv_a_proj_with_mqa": d * (r + spec.qk_rope_head_dim), "kv_b_proj": r * h * (spec.mla_qk_nope + spec.mla_v_head),
            "o_proj": h * spec.mla_v_head * d}[proj]


def skipped_linear_params(spec: LLMSpec, experts_only: bool = False) -> int:
    """Decoder matmul parameters the checkpoint keeps in 16 bits: attention (dense, MLA, gated-DeltaNet), a dense
    block's MLP, a MoE block's shared experts (mlp.shared_experts / mlp.shared_expert) and its routed experts (an
    entry that matches expert 0 is taken for all). experts_only: the routed experts alone (what MXFP4 quantizes).
    The router (mlp.gate) and lm_head are 16-bit in the plan already."""
    if not spec.quant_skip:
        return 0
    skipped = skip_matcher(spec.quant_skip)
    d, n = spec.hidden, 0
    for layer, kind in enumerate(spec.layer_kinds[:spec.n_layers]):
        pre = f"model.layers.{layer}."
        moe = bool(spec.n_experts) and (spec.moe_layers[layer] if layer < len(spec.moe_layers) else True)
        if moe:
            n += sum(spec.n_experts * d * spec.moe_intermediate for p in _MLP_PROJ if skipped(pre + "mlp.experts.0." + p))
        if experts_only:
            continue
        if kind == LINEAR:
            named = [(f"linear_attn.{p}", _proj_params(spec, p, layer)) for p in _LIN_PROJ]
        elif spec.mla:
            named = [(f"self_attn.{p}", _mla_params(spec, p)) for p in _MLA_PROJ]
        else:
            named = [(f"self_attn.{p}", _proj_params(spec, p, layer)) for p in _ATTN_PROJ]
        if not moe:
            named += [(f"mlp.{p}", _proj_params(spec, p, layer)) for p in _MLP_PROJ]
        n += sum(k for name, k in named if k and skipped(pre + name))
        if moe and spec.shared_intermediate:  # DeepSeek/Kimi name them shared_experts, Qwen MoE shared_expert
            n += sum(d * spec.shared_intermediate for p in _MLP_PROJ
                     if skipped(f"{pre}mlp.shared_experts.{p}") or skipped(f"{pre}mlp.shared_expert.{p}"))
    return n
