"""vLLM's FP8 weight padding on ROCm (inside "Model loading took"): fp8_utils.py _maybe_pad_fp8_weight, read in
1CatAI/1Cat-vLLM ae13773a (upstream vllm#13231, 2025-02-22, first in v0.8.0 as Fp8LinearMethod.add_padding_to_weight):

    if (envs.VLLM_ROCM_FP8_PADDING and current_platform.is_rocm() and weight.stride(-1) == 1
            and (weight.stride(-2) * weight.element_size()) % 512 == 0):
        num_pad = 256 // weight.element_size()
        weight = F.pad(weight, (0, num_pad), "constant", 0)[..., :-num_pad]

VLLM_ROCM_FP8_PADDING defaults to 1 (envs.py). The weight is [rows, input width] of one GPU's shard, one byte a value:
a row of a multiple of 512 bytes gets 256 more, and the slice keeps the padded storage. process_fp8_weight_block_strategy
(fp8.py's block checkpoints, compressed-tensors' block strategy through BlockScaledMMLinearKernel) and
process_fp8_weight_tensor_strategy (per-tensor) call it; process_fp8_weight_channel_strategy (compressed-tensors
channel-wise, llm-compressor's FP8_DYNAMIC preset: the -FP8-dynamic checkpoints) does not, nor does any MoE method
(the routed experts: Fp8MoEMethod has no call). Every other linear layer built with the quant config pads: attention
(QKVParallelLinear: H / tp query heads, Qwen 3.5+'s doubled by the output gate, max(1, KV / tp) KV heads; o_proj with
H x head_dim / tp inputs), MLA's projections (deepseek_v2.py: fused_qkv_a_proj and wq_b replicated, q_b_proj /
kv_b_proj column-split, o_proj row-split; the indexer's wk_weights_proj has quant_config=None), gated DeltaNet
(in_proj_qkvz column-split, out_proj row-split; a block checkpoint keeps in_proj_b / in_proj_a unquantized, as
validate_fp8_block_shape refuses their 48-row slices, and their few rows are not counted), the MLP and a MoE
layer's shared expert. The router and lm_head are not FP8. Modules a checkpoint leaves unquantized (quant_skip) do
not pad.

Only an FP8 checkpoint pads. vLLM's online FP8 (--quantization fp8 on a 16-bit checkpoint: Fp8OnlineLinearMethod,
Fp8OnlineMoEMethod; in vllm#13231 the `not is_checkpoint_fp8_serialized` branch returned before add_padding_to_weight)
quantizes with ops.scaled_fp8_quant and never pads, so kv pads only a spec whose checkpoint is FP8 (spec.quant "fp8":
its quantization_config, an FP8 repo name) or a built-in whose vendor releases only FP8 weights (FP8_RELEASED).
compressed-tensors FP8 (llm-compressor's -FP8 per-tensor and block checkpoints) pads only from CT_FP8_PADDING_FROM:
vllm#13231 put the padding in fp8.py's Fp8LinearMethod alone, and CompressedTensorsW8A8Fp8 first called
process_fp8_weight_tensor_strategy in vllm#21404 (below)."""
from ..linear_quant import skip_matcher
from ..spec import FULL, LINEAR, SLIDING
from . import at_least

ROCM_FP8_PADDING_FROM = (0, 8, 0)   # vllm#13231, 2025-02-22 (v0.7.3 was cut on 02-20)
# vllm#21404 "Refactor dense FP8 tensor/channel/block utils and add CT FP8 block", fbd6523ac, 2025-09-18 (read in the
# 1CatAI/1Cat-vLLM mirror's upstream history, which carries no upstream tags: compressed_tensors_w8a8_fp8.py at
# fbd6523ac^ has no "pad"). v0.10.2 was released on 2025-09-13, before it, from its own release branch; main went on
# preparing 0.11.0 after it (f9e714813, 2025-10-01: "Finish documented v0.11.0 deprecation"), so 0.11.0 (2025-10-02)
# is the first release whose compressed-tensors FP8 linears pad
CT_FP8_PADDING_FROM = (0, 11, 0)
# model types whose vendor releases its weights only as an FP8 checkpoint, which kv's built-in config.json leaves
# without its quantization_config (MiniMaxAI/MiniMax-M2, M2.1, M2.5, M2.7: quant_method fp8, 128 x 128 blocks), read
# as an FP8 checkpoint under --weights-dtype fp8 (a 16-bit re-upload quantized online would not pad: not told apart)
FP8_RELEASED = ("minimax_m2",)
ROW_PAD = 256                       # bytes added to every padded row (256 // element_size, fp8: 1 byte)
ROW_ALIGN = 512                     # a row pads when its bytes are a multiple of this


def _attn(spec, tp, gate):
    d, h, kv, hk, hv = spec.hidden, spec.n_heads, spec.n_kv_heads, spec.head_dim_k, spec.head_dim_v or spec.head_dim_k
    kvp = max(1, kv // tp)
    q = ("q_proj", "k_proj", "v_proj")
    return [(q, h // tp * gate * hk + kvp * (hk + hv), d), (("o_proj",), d, h * hv // tp)]


def _mla(spec, tp, layer):
    d, h, qr, r, rope = spec.hidden, spec.n_heads, spec.mla_q_lora, spec.kv_lora_rank, spec.qk_rope_head_dim
    qk, v = spec.mla_qk_nope + rope, spec.mla_v_head
    out = ([(("q_a_proj", "kv_a_proj_with_mqa"), qr + r + rope, d), (("q_b_proj",), h * qk // tp, qr)] if qr else
           [(("q_proj",), h * qk // tp, d), (("kv_a_proj_with_mqa",), r + rope, d)])
    out += [(("kv_b_proj",), h * (spec.mla_qk_nope + v) // tp, r), (("o_proj",), d, h * v // tp)]
    if spec.index_head_dim and qr and (not spec.indexer_layers or layer in spec.indexer_layers):
        out.append((("indexer.wq_b",), spec.index_n_heads * spec.index_head_dim, qr))
    return out


def linears(spec, tp: int) -> list | None:
    """Every FP8-capable linear of one GPU as (module path, rows, input width); None for a layer kind not enumerated
    (Mamba, Gemma 4's shared or per-layer-shaped layers)."""
    if spec.layer_kv_heads or spec.ple_params or any(k not in (FULL, SLIDING, LINEAR) for k in spec.layer_kinds):
        return None
    d = spec.hidden
    gate = 2 if spec.arch.startswith(("qwen3_next", "qwen3_5")) else 1  # params.py: the q_proj output gate
    out = []
    for i, kind in enumerate(spec.layer_kinds[:spec.n_layers]):
        pre = f"model.layers.{i}."
        if kind == LINEAR:
            if not spec.linear_dims:
                return None
            kh, kd, vh, vd, _ = spec.linear_dims
            mods = [(("linear_attn.in_proj_qkv", "linear_attn.in_proj_z"), (2 * kh * kd + 2 * vh * vd) // tp, d),
                    (("linear_attn.out_proj",), d, vh * vd // tp)]
        elif spec.mla:
            mods = [(tuple("self_attn." + n for n in names), rows, w) for names, rows, w in _mla(spec, tp, i)]
        else:
            mods = [(tuple("self_attn." + n for n in names), rows, w) for names, rows, w in _attn(spec, tp, gate)]
        moe = bool(spec.n_experts) and (spec.moe_layers[i] if i < len(spec.moe_layers) else True)
        ff, mlp = (spec.shared_intermediate, ("mlp.shared_experts.", "mlp.shared_expert.")) if moe else (
            spec.intermediate, ("mlp.",))
        if ff:
            mods += [(tuple(p + n for p in mlp for n in ("gate_proj", "up_proj")), 2 * ff // tp, d),
                     (tuple(p + "down_proj" for p in mlp), d, ff // tp)]
        out += [(tuple(pre + n for n in names), rows, w) for names, rows, w in mods]
    return out


def fp8_checkpoint(spec) -> bool:
    """Are the FP8 weights the checkpoint's own (not vLLM's online --quantization fp8 of a 16-bit checkpoint)?"""
    return spec.quant == "fp8" or (spec.quant is None and spec.arch in FP8_RELEASED)


def layer_padding(spec, fmt, tp: int, rocm: bool, version) -> list | int | None:
    """Bytes vLLM's ROCm FP8 padding adds to one GPU's weights, layer by layer (a list, one entry a layer); 0 where it
    does not apply; None: FP8 on ROCm, but the model's layers are not enumerated."""
    if fmt != "fp8" or not rocm or (version is not None and not at_least(version, *ROCM_FP8_PADDING_FROM)):
        return 0
    if not fp8_checkpoint(spec):  # online FP8 (Fp8OnlineLinearMethod): quantized after loading, never padded
        return 0
    if spec.fp8_ct and version is not None and not at_least(version, *CT_FP8_PADDING_FROM):
        return 0  # compressed-tensors before vllm#21404: CompressedTensorsW8A8Fp8 does not pad
    if spec.fp8_channel:  # process_fp8_weight_channel_strategy: no padding
        return 0
    mods = linears(spec, max(tp, 1))
    if mods is None:
        return None
    skipped = skip_matcher(spec.quant_skip)
    out = [0] * spec.n_layers
    for names, rows, width in mods:
        if width % ROW_ALIGN == 0 and not all(skipped(n) for n in names):
            out[int(names[0].split(".")[2])] += ROW_PAD * rows  # "model.layers.{i}.": the layer it belongs to
    return out


def padding_bytes(spec, fmt, tp: int, rocm: bool, version) -> int | None:
    """Bytes vLLM's ROCm FP8 padding adds to one GPU's weights (0 where it does not apply; None: FP8 on ROCm, but the
    model's layers are not enumerated)."""
    pad = layer_padding(spec, fmt, tp, rocm, version)
    return sum(pad) if isinstance(pad, list) else pad


def unpadded_note(spec, fmt, rocm: bool, version) -> str | None:
    """Why an FP8 model on ROCm gets no row padding (said, since a name or a flag decides up to a GiB); None where
    there is nothing to say."""
    if fmt != "fp8" or not rocm or (version is not None and not at_least(version, *ROCM_FP8_PADDING_FROM)):
        return None
    if not fp8_checkpoint(spec):
        return ("FP8 weights taken as vLLM's online --quantization fp8 of a 16-bit checkpoint (no FP8 quantization_config "
                "or FP8 repo name given): vLLM on ROCm does not pad those (Fp8OnlineLinearMethod); an FP8 checkpoint's "
                "linears would keep 256 B more a row (VLLM_ROCM_FP8_PADDING)")
    if spec.fp8_ct and version is not None and not at_least(version, *CT_FP8_PADDING_FROM):
        return ("compressed-tensors FP8 before vLLM 0.11 (vllm#21404): its linears are not padded on ROCm")
    if spec.fp8_channel:
        return ("channel-wise FP8 (a compressed-tensors 'channel' strategy, or read from an '-FP8-dynamic' name): vLLM on "
                "ROCm does not pad it (process_fp8_weight_channel_strategy)")
    return None
