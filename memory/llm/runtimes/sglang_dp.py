"""SGLang's --dp N with --enable-dp-attention: what one GPU holds (round 55).

What SGLang does (read in sgl-project/sglang: layers/dp_attention.py compute_dp_attention_world_info, models/qwen3_moe.py
Qwen3MoeAttention and Qwen3MoeForCausalLM at 008af3a6, models/qwen2_moe.py Qwen2MoeModel at 0115497d, whose model
Qwen3MoeModel is):
- The attention tensor-parallel group is tp // dp GPUs (attn_tp_size = tp_size // dp_size); each DP rank is one such
  group with its own scheduler and KV pool.
- Qwen3MoeAttention builds qkv_proj and o_proj over attn_tp_size and keeps total_num_kv_heads // attn_tp_size KV heads
  (at least 1) a GPU: the cache a token is the model's over the attention group, not over tp.
- Qwen2MoeModel's embed_tokens is a VocabParallelEmbedding with enable_tp=not enable_dp_attention: whole on each GPU.
- The head is a ParallelLMHead with use_attn_tp_group=enable_dp_lm_head: split over all tp GPUs unless
  --enable-dp-lm-head (not modelled; no input: its default, off, is taken).
- The routed experts stay split over all tp GPUs (the MoE block is not given the attention group; batch 61's TP 4 DP 4
  load of 15.96 GB a GPU is the experts at 1/4 with attention and the token table whole).

NOT MODELLED (refused): --dp without --enable-dp-attention (independent replicas, whose layout was not read), other
architectures (only qwen3_moe's files were read; a dense model's MLP under DP attention was not), the norms and the
router (whole on each GPU: counted at 1/tp, a few MB), and a format whose expert bytes kv cannot separate.
"""
from ...errors import UserError
from ...units import fmt_bytes
from ..linear_quant import DENSE_BITS, LINEAR_BITS
from . import vllm as V
from .vllm_dp import UNSPLIT_FORMATS, expert_bytes

# the architectures whose SGLang model files were read for DP attention: (arch, the files)
READ_ARCHS = {"qwen3_moe": "models/qwen3_moe.py and models/qwen2_moe.py"}


def check(spec, fmt, knobs) -> None:
    """Refuse what SGLang's data parallelism here does not model; nothing to do without it."""
    dp = knobs.get("data_parallel_size") or 1
    if dp == 1:
        if knobs.get("dp_attention"):
            raise UserError("--enable-dp-attention needs --data-parallel-size (SGLang's --dp) above 1")
        return
    tp = knobs.get("tensor_parallel_size") or 1
    if not knobs.get("dp_attention"):
        raise UserError(f"data_parallel_size {dp} on SGLang without --enable-dp-attention: {dp} independent replicas, "
                        f"whose layout was not read; plan one replica without --dp, or give --enable-dp-attention")
    if tp % dp:
        raise UserError(f"--enable-dp-attention splits the {tp} tensor-parallel GPUs into {dp} attention groups: "
                        f"--tensor-parallel-size must be a multiple of --data-parallel-size")
    if spec.arch not in READ_ARCHS:
        raise UserError(f"data_parallel_size {dp} with --enable-dp-attention on {spec.name} ({spec.arch}): SGLang's "
                        f"model file for it was not read for DP attention (read: {', '.join(READ_ARCHS)})")
    fmt = fmt or str(spec.dtype).lower()
    if spec.weights_bytes or fmt in UNSPLIT_FORMATS or not (fmt in DENSE_BITS or fmt in LINEAR_BITS):
        raise UserError(f"data_parallel_size {dp} on a MoE model in {fmt or 'this file'}: kv separates the routed "
                        f"experts' bytes only for 16/32-bit and linear-quantized checkpoints")


def apply(full, weights_dtype, tp, dp, roles, notes, knobs=None, fmt=None) -> tuple:
    """(roles, spec) for one GPU under DP attention: attention over tp // dp GPUs, the token table whole, the head
    and the routed experts over tp; the spec's KV heads over the attention group. `full` is the whole model; an AWQ
    MoE on a card where SGLang builds the routed experts in 16 bits (plan_weights.by_role) keeps them so here."""
    from ..weights import weights_by_role
    from .sglang import awq_experts_dense
    attn_tp = tp // dp
    dense = fmt == "awq" and awq_experts_dense((knobs or {}).get("gpu_name"))
    whole = weights_by_role(full, weights_dtype, dense_experts=dense)
    experts = expert_bytes(full, weights_dtype, dense_experts=dense)
    rest = whole["blocks"] - experts  # attention, norms, router: the attention group's share
    blocks = experts // tp + rest // attn_tp
    emb = whole["embedding"]
    total = roles["total"] - roles["blocks"] - roles["embedding"] + blocks + emb
    notes[:] = [n for n in notes if not n.startswith(f"tensor parallel {tp}: every figure")]  # its KV heads are tp's
    notes.append(f"DP attention over {dp} ranks (SGLang --dp {dp} --enable-dp-attention): attention split over "
                 f"{attn_tp} GPU{'s' if attn_tp > 1 else ''} ({fmt_bytes(rest // attn_tp)} a GPU), the token table whole "
                 f"({fmt_bytes(emb)}), the head and the routed experts over all {tp}; the KV pool and the tokens are one "
                 f"DP rank's ({max(1, full.n_kv_heads // attn_tp)} KV heads a GPU); --vram is one GPU's")
    roles = dict(roles, embedding=emb, blocks=blocks, total=total,
                 how=roles["how"] + f"; DP attention {dp}: attention / {attn_tp}, token table whole")
    return roles, V.per_rank(full, attn_tp)
