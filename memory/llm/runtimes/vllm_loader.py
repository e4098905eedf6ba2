"""What vLLM's model loader allocates beyond the checkpoint's tensors, inside "Model loading took": bitsandbytes
storage (double-quant scales dequantized, a vision tower quantized on load), LoRA slots (--enable-lora), the
padding of MXFP4 experts for the kernel that runs them, an MTP drafter's module and a quantized lm_head."""
import re

from ...errors import UserError
from ...units import fmt_bytes
from . import RUNTIME_NAMES, at_least

# bitsandbytes 4-bit in vLLM: a double-quantized checkpoint's block scales (8-bit absmax per 64 weights plus an fp32
# scale per 256 blocks, ~4.13 bits a weight in all) are dequantized to fp32 at load ("When BNB employs Double
# Quantization, we perform the dequantization of these constants during weight loading ... at the cost of increased
# memory usage", bitsandbytes_loader._dequantize_dq): 4 + 32/64 = 4.5 bits a weight. Unsloth's loader turns that off
# (unsloth-zoo replaces _dequantize_dq with a no-op), so the runs it starts keep weights.LINEAR_BITS' 4.13.
BNB_DEQUANT_BITS = 4 + 32 / 64
# A bf16 checkpoint quantized on load (bitsandbytes_loader._unquantized_generator) quantizes every LinearBase built
# with the quant config, the vision tower's too (qwen2_5_vl.py _maybe_ignore_quant_config drops it for GPTQ only),
# unless llm_int8_skip_modules names it: vLLM's BitsAndBytesConfig defaults that list to []. is_layer_skipped_bnb keeps a
# layer when an entry equals one part of its path or a prefix of it, so "visual" or "model.visual" keeps the whole tower
# and "visual.blocks.0.mlp" only that block's MLP: the entry must end at the tower's name.
TOWER_SKIP = re.compile(r"(?:^|\.)(visual|vision_tower|vision_model|vision_encoder)$")
# --enable-lora: the LoRA manager replaces each linear layer by one holding max_loras slots of A (rank x input) and B
# (output x rank) per slice, allocated at load in the model's dtype (lora/layers BaseLinearLayerWithLoRA
# .create_lora_weights), inside "Model loading took" (V0 model_runner.load_model / V1 gpu_model_runner.load_model
# build the LoRA manager in the DeviceMemoryProfiler block). A multimodal model's tower gets none
# (_filter_unsupported_mm_module). Unsloth's fast_inference always passes enable_lora=True, max_loras=1 and its
# from_pretrained max_lora_rank, 64 unless given (unsloth/models/loader.py, unsloth_zoo load_vllm).
UNSLOTH_LORA_RANK = 64
# vLLM's LoRAConfig: max_lora_rank 16 unless given, one of MaxLoRARanks (config/lora.py)
LORA_RANK_DEFAULT = 16
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
# The weight widths a runtime loads of a linear-quantization method that refuses others, one row a (runtime, method).
# vLLM's AWQ: AWQConfig's __init__ raises "Currently, only 4-bit weight quantization is supported for AWQ, but got
# {bits} bits." (vllm/model_executor/layers/quantization/awq.py, the `if self.weight_bits != 4` check); a config
# AWQ-Marlin does not take (is_awq_marlin_compatible: its bits not in TYPE_MAP) is loaded through AWQConfig, so a
# 2/3-bit AWQ never loads. SGLang's AWQ is the same class (python/sglang/srt/layers/quantization/awq.py at
# sgl-project/sglang 0149944f: AWQConfig raises the same message; AWQMarlinConfig.TYPE_MAP 4 and 8, and
# is_awq_marlin_compatible False for other bits, so a 2/3-bit config falls to AWQConfig) (review25).
QUANT_WIDTHS = {("vllm", "awq"): ((4,), "AWQConfig: 'Currently, only 4-bit weight quantization is supported for AWQ'"),
                ("sglang", "awq"): ((4,), "its AWQConfig: 'Currently, only 4-bit weight quantization is supported "
                                          "for AWQ'")}


def check_quant_width(fmt, bits, what: str, runtime: str = "vllm") -> None:
    """Refuse, as the runtime does at load, a checkpoint whose quantization width its (runtime, method) row does not
    list (bits None: 4, the format's own)."""
    row = QUANT_WIDTHS.get((runtime, str(fmt or "").lower()))
    if row and (bits or 4) not in row[0]:
        raise UserError(f"{what}: {bits}-bit {str(fmt).upper()} does not load in {RUNTIME_NAMES[runtime]}, which takes "
                        f"{'/'.join(map(str, row[0]))}-bit {str(fmt).upper()} weights only ({row[1]}); give a "
                        f"{row[0][0]}-bit {str(fmt).upper()} build, or size this checkpoint for another runtime")


def lora_rank(knobs) -> int:
    """--max-lora-rank as the run sets it: Unsloth's 64, vLLM's 16 when only --max-loras turns LoRA on; 0 without LoRA."""
    r = knobs.get("max_lora_rank")
    if r is None and str(knobs.get("vllm_entrypoint") or "").lower() == "unsloth":
        return UNSLOTH_LORA_RANK
    if r is None and knobs.get("max_loras") is not None:
        return LORA_RANK_DEFAULT
    return r or 0


def lora_slot_bytes(spec, rank: int, max_loras: int = 1, dtype_bytes: int = 2) -> int:
    """LoRA slots: per layer and projection rank x (input + output). Given one tensor-parallel rank's spec (per_rank)
    this is that GPU's share: column-parallel B and row-parallel A are split, the other side is whole. Attention and
    dense MLP projections only (MoE experts and MLA projections are not counted: a note says so)."""
    d, I = spec.hidden, spec.intermediate
    hd, h, kv = spec.head_dim_k, spec.n_heads, spec.n_kv_heads
    io = {"q_proj": (d, h * hd), "k_proj": (d, kv * hd), "v_proj": (d, kv * hd), "o_proj": (h * hd, d),
          "gate_proj": (d, I), "up_proj": (d, I), "down_proj": (I, d)}
    mods = (() if spec.mla else ("q_proj", "k_proj", "v_proj", "o_proj")) + (
        () if spec.n_experts else ("gate_proj", "up_proj", "down_proj"))
    return int(rank * sum(sum(io[m]) for m in mods) * spec.n_layers * max_loras * dtype_bytes)


def bnb_tower(proj, quant_skip, bits: float):
    """Bytes of a vision tower vLLM quantizes with bitsandbytes on load (its linear layers at `bits`, the rest in 16
    bits), or None when the skip list keeps the tower in 16 bits."""
    if not proj or not proj.get("linear") or any(TOWER_SKIP.search(str(m).strip()) for m in quant_skip or ()):
        return None
    return int(proj["linear"] * bits / 8 + (proj["params"] - proj["linear"]) * 2)


# MXFP4 MoE experts (gpt-oss) are allocated padded for the kernel that runs them (quantization/mxfp4.py,
# Mxfp4MoEMethod.create_weights). Marlin, the universal fallback and what a card without native FP4 runs ("Your GPU
# does not have native support for FP4 computation ... Weight-only FP4 compression will be used leveraging the
# Marlin kernel"): the intermediate size per tensor-parallel partition to a multiple of 128, the hidden size to 256
# ("n % 256 == 0 and k % 128 == 0"); the TRT-LLM kernels of SM100 (B200, GB200): both to 256. gpt-oss's 2880 x 2880
# experts become 2944 x 3072 on one GPU (+9 %), 768 x 3072 per GPU of four. On a Hopper card (SM90) with the
# triton_kernels package vLLM picks its Triton backend ("Using Triton backend"; get_mxfp4_backend): create_weights
# rounds the intermediate size to 64 only (2880 stays), and the Hopper swizzled layout the weights are converted to
# holds the other side at a multiple of 256: vLLM 0.14.1 on an H100 printed 64.38 GiB (vllm#33155) where Marlin's
# layout is 65.90 and no padding 60.69; 2880 x 3072 gives 64.47 (the 256 is read from that total, not from the
# swizzle's source). 0.14 is the first version seen on that path; the 0.10.1 and 0.11 H100 logs (vllm#23278,
# vllm#27508: installs without triton_kernels) fit Marlin's layout.
# Marlin's MXFP4 path (vllm-project/vllm#22428, August 2025, first in 0.10.1) is what pads on Ampere and Ada; the gpt-oss
# launch build before it (0.10.1+gptoss, vllm#22290's Ampere recipe) allocated the experts as the checkpoint stores
# them: gpt-oss-20b on an RTX 3090 printed 'Model loading took 12.8848 GiB' (vllm#22331), 12.82 unpadded, 13.67 as
# Marlin pads it (+6.1 %). The launch build on Hopper or Blackwell was not read.
MXFP4_PAD = {"marlin": (128, 256), "trtllm": (256, 256), "triton": (64, 256), "launch": (1, 1)}
MARLIN_MXFP4 = (0, 10, 1)
NATIVE_FP4 = re.compile(r"\b(b100|b200|gb200|b300|gb300)\b", re.I)
HOPPER = re.compile(r"\b(h100|h200|h800|h20|gh200)\b", re.I)
TRITON_MXFP4 = (0, 14)


def mxfp4_expert_padding(spec, tp: int, gpu_name, version=None) -> tuple:
    """(extra bytes over the whole model, kernel name) of vLLM's padded MXFP4 expert matrices."""
    name = str(gpu_name or "")
    kernel = ("trtllm" if NATIVE_FP4.search(name) else
              "triton" if HOPPER.search(name) and at_least(version, *TRITON_MXFP4) else
              "launch" if not HOPPER.search(name) and not at_least(version, *MARLIN_MXFP4) else "marlin")
    a_i, a_h = MXFP4_PAD[kernel]
    inter = -(-spec.moe_intermediate // tp)
    pad_i = -(-inter // a_i) * a_i
    pad_h = -(-spec.hidden // a_h) * a_h
    factor = pad_i * pad_h / (inter * spec.hidden)
    return int(spec.expert_params * 4.25 / 8 * (factor - 1)), kernel


# FP8 weights on a CUDA card without FP8 arithmetic (compute capability 7.5 to 8.8: Turing, Ampere) run through vLLM's
# weight-only Marlin kernel ("Your GPU does not have native support for FP8 computation ... leveraging the Marlin
# kernel"; kernels/linear/scaled_mm/marlin.py MarlinFP8ScaledMMLinearKernel.is_supported: >= 7.5, and < 8.9 unless
# VLLM_TEST_FORCE_FP8_MARLIN; the MoE oracle's MARLIN experts likewise). For a block-scaled checkpoint (fp8.py's
# weight_block_size 128 x 128: Qwen's, DeepSeek's, MiniMax's own FP8 releases) process_weights_after_loading turns
# each linear's block scales, (K / 128) x (N / 128) fp32, into group scales of one value per 128 inputs per output
# row in the model dtype (quantization/utils/marlin_utils_fp8.py prepare_fp8_layer_for_marlin and
# prepare_fp8_moe_layer_for_marlin: "block-wise quantization -> group-wise quantization ... repeat_interleave(block_n)",
# then marlin_permute_scales; scales .to(layer.orig_dtype)), read in the vLLM 0.20.2 sdist: K x N / 128 values of 2
# bytes, 1/64 of the FP8 weights' bytes, kept inside "Model loading took". Channel-wise (-FP8-dynamic) and per-tensor
# scales become one value a row (negligible); compressed-tensors block checkpoints reached Marlin only with
# vllm#52966 (2026-08-19), not counted. A gate by reading: 0.20.2 (earlier releases not read).
MARLIN_FP8_BLOCK = (0, 20)
MARLIN_FP8_CC = ((7, 5), (8, 9))       # [from, below): Turing and Ampere
FP8_BLOCK_K = 128


def marlin_fp8_card(gpu_name) -> bool:
    """A CUDA card vLLM runs FP8 weights on through Marlin: compute capability 7.5 to below 8.9 (MARLIN_FP8_CC; Turing,
    Ampere) by cards.COMPUTE_CAPABILITY; Ada, Hopper, Blackwell have FP8 arithmetic, Volta and older no Marlin. A card
    the table lacks is not taken for one."""
    from ..cards import compute_capability
    cc = compute_capability(gpu_name)
    return cc is not None and MARLIN_FP8_CC[0] <= cc < MARLIN_FP8_CC[1]


def marlin_fp8_block_scales(spec, fmt, tp: int, gpu_name, version, rocm: bool = False) -> int:
    """Bytes a GPU's group scales take where vLLM runs a block-scaled FP8 checkpoint through Marlin (MARLIN_FP8_BLOCK):
    the quantized matmul parameters (spec: the whole model) / tp / 64; 0 where that path is not taken, and where the
    quantization_config names no weight_block_size (per-tensor or per-channel scales: a value a row, negligible)."""
    from ..weights import skipped_linear_params
    from .vllm_rocm_fp8 import fp8_checkpoint
    if (fmt != "fp8" or rocm or not marlin_fp8_card(gpu_name) or not at_least(version, *MARLIN_FP8_BLOCK)
            or not fp8_checkpoint(spec) or spec.fp8_channel or spec.fp8_ct or spec.fp8_block is False):
        return 0
    q = max((spec.linear_params or spec.params or 0) - skipped_linear_params(spec), 0)
    return int(q * 2 / FP8_BLOCK_K / max(tp, 1))


# MLA under tensor parallelism: the down-projections are whole on every GPU (vllm/model_executor/models/deepseek_v2.py
# DeepseekV2MLAAttention: fused_qkv_a_proj = MergedColumnParallelLinear(hidden, [q_lora_rank, kv_lora_rank +
# qk_rope_head_dim], ..., disable_tp=True), or kv_a_proj_with_mqa = ReplicatedLinear without a q_lora_rank), and so is
# DeepSeek sparse attention's Lightning Indexer (class Indexer: "no tensor parallel, just replicated": wq_b and wk
# ReplicatedLinear with the model's quant_config, weights_proj ReplicatedLinear with quant_config=None). The rest of
# the layer (q_b_proj, kv_b_proj, o_proj, the MLP) is split.
def mla_replicated_params(spec) -> tuple:
    """(quantized matmul, 16-bit) parameters of one MLA model that vLLM and SGLang keep whole on every tensor-parallel GPU."""
    if not spec.mla:
        return 0, 0
    d, q = spec.hidden, spec.mla_q_lora
    quant = d * (q + spec.kv_lora_rank + spec.qk_rope_head_dim)
    plain = 0
    if spec.index_head_dim:
        quant += q * spec.index_n_heads * spec.index_head_dim + d * spec.index_head_dim
        plain += d * spec.index_n_heads
    n = spec.attn_layers
    return quant * n, plain * n


# An AutoRound checkpoint's MTP module in vLLM: qwen3_5_mtp.py builds its decoder layers (and fc, but for ModelOpt
# NVFP4) with the model's quant config, and INC's config_parser quantizes a layer whose name starts with an entry of
# block_name_to_quantize unless extra_config names it (mtp.fc bf16 in Lorbus's build). Whether the module is among the
# blocks is the checkpoint's choice: its config (spec.mtp_quant) or the build checkpoints.MTP_QUANTIZED names; a
# ModelOpt / compressed-tensors NVFP4 export keeps it bf16 (natfii's 0.8 GiB, adrienbrault/qwen3.6-27b-rtx5090
# docs/DESIGN.md), so only AutoRound takes this path.
MTP_QUANT_FORMATS = frozenset(("auto_round",))


def mtp_drafter(spec, tokens, tp, nbytes, roles, s, notes, fmt=None) -> dict:
    """vLLM's --speculative-config {"method": "mtp", "num_speculative_tokens": N} for a model with its own MTP module
    (Qwen 3.5+, config mtp_num_hidden_layers): the module's weights on every GPU (its token table and head are the
    model's; its matmuls taken in 16 bits, but for an AutoRound checkpoint whose block_name_to_quantize takes the
    module: its layers' matmuls at the format's bits, mtp_bits) and its full-attention layers in the model's
    KV pool (cache.with_draft_layers), and for each speculative token a state page more a request and a wider DeltaNet
    conv state (cache.vllm_pool spec_tokens; MambaSpec num_speculative_blocks, gated_delta_net_state_shape). club-3090's
    two runs at 3 tokens print tokens and concurrency that are whole blocks only so: 424 and 1211 blocks of 1600
    tokens, 179 a request."""
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= 16:
        raise UserError(f"mtp_tokens must be a whole number 1-16 (num_speculative_tokens), got {tokens!r}")
    if not spec.mtp_layers:
        # a separate drafter (Gemma 4's -assistant checkpoints, EAGLE / DFlash heads) is a model of its own: vLLM loads
        # its weights beside the target's and its attention layers take pages of the same KV pool; --speculative-config
        # reads a DFlash or Llama EAGLE / EAGLE-3 head's config.json (runtimes/vllm_drafter.py); --mtp-tokens is refused rather than sized as the
        # target alone
        raise UserError(f"{spec.name}: no multi-token-prediction module in its description (mtp_num_hidden_layers): "
                        "--mtp-tokens sizes a target's own MTP layers (--speculative-config method mtp). A separate "
                        "drafter named by --speculative-config \"model\" is read from its config.json: give "
                        "--speculative-config '{\"method\":\"dflash\",\"model\":\"DIR\",\"num_speculative_tokens\":N}' "
                        "(method dflash, eagle or eagle3; a -assistant checkpoint is not modelled), or leave --mtp-tokens "
                        "out to size the target alone (the drafter's memory not counted)")
    bits = mtp_bits(spec, fmt)
    quant = spec.mtp_linear if bits else 0
    extra = int(quant * bits / 8 + (spec.mtp_params - quant) * nbytes) // tp
    if spec.dsv4:  # DeepSeek-V4's MTP layer as its checkpoint stores it (deepseek_v4.checkpoint_bytes)
        extra, bits = spec.dsv4["mtp_bytes"] // tp, 0
    s.update(draft_layers=spec.mtp_layers, spec_tokens=tokens)
    how = (f"its layers' matmuls at {bits:.2f} bits ({fmt}), fc and norms 16-bit" if bits else
           "as its checkpoint stores it" if spec.dsv4 else "16-bit")
    from ..checkpoints import mtp_build
    build = mtp_build(spec, fmt) if bits else None
    if build:
        how += f"; {fmt} weights taken as the published build {build}, whose block_name_to_quantize takes the module"
    notes.append(f"MTP drafter ({tokens} speculative tokens): {fmt_bytes(extra)} of its module on each GPU ({how}), "
                 f"its {spec.mtp_layers} attention layer{'s' if spec.mtp_layers > 1 else ''} in the KV pool")
    return dict(roles, total=roles["total"] + extra, how=roles["how"] + f" + {fmt_bytes(extra)} of MTP drafter")


def mtp_bits(spec, fmt) -> float:
    """Bits a weight of the MTP layers' matmuls takes in vLLM: the format's (the blocks' own) for MTP_QUANT_FORMATS
    where the config's block_name_to_quantize names the module (spec.mtp_quant) or, without one, the build
    checkpoints.MTP_QUANTIZED takes a base model in that format as; 0: 16-bit."""
    from ..checkpoints import mtp_build
    if fmt not in MTP_QUANT_FORMATS or not spec.mtp_linear or not (spec.mtp_quant or mtp_build(spec, fmt)):
        return 0.0
    from ..linear_quant import GROUP_OVERHEAD_BITS, linear_bits
    own = (spec.quant_sym, spec.quant_bits) if fmt == spec.quant else (None, None)
    return linear_bits(fmt, spec.quant_group if fmt in GROUP_OVERHEAD_BITS else None, *own)


# a checkpoint whose quantization_config also targets lm_head (compressed-tensors pack-quantized, symmetric: the
# integer weights and an fp16 scale per group of 128, as syv-ai/qwen38-27b-rtx3090 prepare/quant_lm_head.py writes an
# INT8 g128 head; vLLM's ParallelLMHead takes the quant method of a targeted head): bits a head weight takes
HEAD_BITS = {"int8": 8 + 16 / 128, "int4": 4 + 16 / 128}


def quantized_head(spec, dtype, roles, notes) -> dict:
    """roles with the untied output layer at HEAD_BITS[dtype] instead of the format's 16 bits."""
    bits = HEAD_BITS.get(str(dtype).lower())
    if bits is None:
        raise UserError(f"lm_head_dtype must be one of {', '.join(HEAD_BITS)} (a head quantized in groups of 128), "
                        f"got {dtype!r}")
    if spec.tied:
        raise UserError(f"{spec.name} ties its output to the token table: no separate lm_head to quantize")
    out = int(spec.vocab * spec.hidden * bits / 8)
    notes.append(f"lm_head quantized ({dtype}, groups of 128): {fmt_bytes(out)} instead of {fmt_bytes(roles['output'])}")
    return dict(roles, output=out, total=roles["total"] - roles["output"] + out,
                how=roles["how"] + f"; lm_head {dtype} g128")
