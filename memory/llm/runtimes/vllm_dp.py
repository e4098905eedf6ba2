"""vLLM's --data-parallel-size N: what one GPU of a data-parallel deployment holds.

What vLLM does (read in the July 2026 vLLM tree dg1kjd/vllm-v100-sxm2-qwen3.5-397b vendors, and in upstream
vllm-project/vllm's model_executor/layers/fused_moe/config.py at 002d6073):
- v1/engine/core.py run_engine_core: each DP rank is its own engine process (EngineCore_DP<r>). For a model that is not
  MoE "Non-MoE DP ranks are completely independent, so treat like DP=1": data_parallel_size is set back to 1 and the
  engine is a plain tensor-parallel one, so every per-GPU figure is plain tensor parallelism's.
- For a MoE model (DPEngineCoreProc) FusedMoEParallelConfig.make flattens the tensor-parallel size across the DP ranks
  (flatten_tp_across_dp_and_pcp: tp x dp): without --enable-expert-parallel each routed expert's matmuls are split
  over all tp x dp GPUs; with it each GPU owns tp x dp's share of whole experts (ep_size = the flattened size). Either
  way a GPU holds 1/(tp x dp) of the routed experts, while attention, the token table, the head, the norms and the
  router stay split over the tensor-parallel group only.
- Each engine profiles and sizes its own pool: EngineCore._initialize_kv_caches calls its own executor's
  determine_available_memory (its TP group's workers) and get_kv_cache_configs on those; nothing there reduces the
  size over the DP ranks. So 'Available KV cache memory', 'GPU KV cache size' and 'Maximum concurrency' are one
  engine's, printed once by each (batch 61: EngineCore_DP0 and _DP1 both print 332,480 tokens, 8.12x).

NOT MODELLED (refused or noted): the MoE layer's profile run under DP (its dispatch gathers the DP ranks' tokens; kv's
activation peak stays plain tensor parallelism's), the DP padding of CUDA graphs, a pipeline-parallel, offloaded,
drafted or GGUF / MXFP4 / bitsandbytes / skip-list MoE under DP (their expert layouts were not laid out here).
Refused for any model: DP on the V0 engine (before 0.8, VLLM_USE_V1=0, 0.8-0.9's fallback below sm 8.0), where
data_parallel_size is not served (vllm#18702: "can be only used with v1 engine").
SGLang's --dp with --enable-dp-attention is runtimes/sglang_dp.py's.
"""
from dataclasses import replace

from ...errors import UserError
from ...units import fmt_bytes
from ..linear_quant import DENSE_BITS, LINEAR_BITS
from . import parse_version
from . import vllm as V

# the formats whose routed-expert bytes kv can separate (weights.weights_by_role's dense and linear paths); the rest
# keep an expert layout of their own (MXFP4 padding, bitsandbytes scales)
UNSPLIT_FORMATS = ("mxfp4", "bnb-4bit", "nf4")
# settings whose weights or pool under DP were not read: (knob, what)
NOT_WITH_DP = (
    ("pipeline_parallel_size", "pipeline parallelism"),
    ("cpu_offload_gb", "--cpu-offload-gb"),
    ("mtp_tokens", "an MTP drafter"),
    ("speculative_config", "a separate drafter"),
    ("quant_skip", "--quant-skip"),
    ("quant_group", "--quant-group"),
)


def size(knobs) -> int:
    """The data-parallel size asked (1 when not given)."""
    return knobs.get("data_parallel_size") or 1


def check(spec, fmt, knobs) -> None:
    """Refuse a DP MoE request whose expert share kv has not laid out (a dense model needs nothing: DP=1 per engine)."""
    dp = size(knobs)
    if dp == 1:
        return
    v1, why = V.engine(parse_version(knobs.get("runtime_version")), knobs)
    if not v1:  # vllm#18702 (0.8.3): data_parallel_size is the V1 engine's only
        raise UserError(f"data_parallel_size {dp}: vLLM's --data-parallel-size runs on the V1 engine only, and this "
                        f"plan runs V0 ({why or 'the default before 0.8'}); plan one engine without it, or a release "
                        f"that runs V1")
    if not spec.n_experts:
        return
    for k, what in NOT_WITH_DP:
        v = knobs.get(k)
        if v is not None and v is not False and not (k == "pipeline_parallel_size" and v == 1):
            raise UserError(f"data_parallel_size {dp} with {what} on a MoE model: how vLLM splits that under data "
                            f"parallelism was not read; plan one engine without it")
    fmt = fmt or str(spec.dtype).lower()  # no format named: the checkpoint's own dtype
    if spec.weights_bytes or fmt in UNSPLIT_FORMATS or not (fmt in DENSE_BITS or fmt in LINEAR_BITS):
        raise UserError(f"data_parallel_size {dp} on a MoE model in {fmt or 'this file'}: kv separates the routed experts' bytes only "
                        f"for 16/32-bit and linear-quantized checkpoints (fp8, int8, awq, gptq, nvfp4, ...); this "
                        f"format's expert layout was not laid out")


def expert_bytes(spec, weights_dtype, dense_experts=False) -> int:
    """The whole model's routed-expert bytes: its weights with and without the expert parameters (dense_experts: the
    experts built unquantized, as weights_by_role's flag)."""
    from ..weights import weights_by_role
    e = spec.expert_params or 0
    lin = spec.linear_params - e if spec.linear_params else None
    rest = replace(spec, params=spec.params - e, expert_params=0, linear_params=lin, n_experts=0)
    return (weights_by_role(spec, weights_dtype, dense_experts=dense_experts)["total"]
            - weights_by_role(rest, weights_dtype)["total"])


def apply(spec, weights_dtype, tp, dp, roles, notes) -> dict:
    """roles (one GPU's, at 1/tp) with the routed experts split over tp x dp GPUs; notes say what the figures are."""
    if dp == 1:
        return roles
    if not spec.n_experts:
        notes.append(f"data parallel {dp}: a model that is not MoE runs {dp} independent engines, each as without it "
                     f"(vLLM sets data_parallel_size back to 1 in each): every figure is one engine's, on "
                     f"{'its ' + str(tp) + ' GPUs' if tp > 1 else 'its GPU'}")
        return roles
    experts = expert_bytes(spec, weights_dtype)
    less = experts // tp - experts // (tp * dp)
    notes.append(f"data parallel {dp}: the routed experts ({fmt_bytes(experts)}) are split over all {tp * dp} GPUs "
                 f"(vLLM flattens tensor parallelism across the DP ranks, or shards whole experts with "
                 f"--enable-expert-parallel: the same share), {fmt_bytes(experts // (tp * dp))} a GPU; attention, the "
                 f"token table and the head stay split over {tp}. Each of the {dp} engines profiles and sizes its own "
                 f"pool: the tokens and the concurrency are one engine's (the log prints each engine's); the MoE "
                 f"profile run under DP is taken as tensor parallelism's (not read)")
    return dict(roles, blocks=roles["blocks"] - less, total=roles["total"] - less,
                how=roles["how"] + f", routed experts / {tp * dp} GPUs (data parallel {dp})")
