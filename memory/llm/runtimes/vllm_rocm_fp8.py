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
not pad."""
from ..linear_quant import skip_matcher
from ..spec import FULL, LINEAR, SLIDING
from . import at_least

ROCM_FP8_PADDING_FROM = (0, 8, 0)   # vllm#13231, 2025-02-22 (v0.7.3 was cut on 02-20)
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


def padding_bytes(spec, fmt, tp: int, rocm: bool, version) -> int | None:
    """Bytes vLLM's ROCm FP8 padding adds to one GPU's weights (0 where it does not apply; None: FP8 on ROCm, but the
    model's layers are not enumerated)."""
    if fmt != "fp8" or not rocm or (version is not None and not at_least(version, *ROCM_FP8_PADDING_FROM)):
        return 0
    if spec.fp8_channel:  # process_fp8_weight_channel_strategy: no padding
        return 0
    mods = linears(spec, max(tp, 1))
    if mods is None:
        return None
    skipped = skip_matcher(spec.quant_skip)
    return sum(ROW_PAD * rows for names, rows, width in mods
               if width % ROW_ALIGN == 0 and not all(skipped(n) for n in names))
