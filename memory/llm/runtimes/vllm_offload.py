"""vLLM's --cpu-offload-gb N (EngineArgs.cpu_offload_gb): the decoder-layer weights it keeps in pinned host memory.

What vLLM does (read at vllm-project/vllm 00593fa7: vllm/model_executor/offloader/uva.py UVAOffloader, and
vllm/config/offload.py OffloadConfig; the same rule as maybe_offload_to_cpu in model_executor/models/utils.py, which
vllm#6496 added in July 2024):
- make_layers() hands every decoder layer of this GPU, in order, to the offloader (wrap_modules); the token table, the
  head and the final norm are not decoder layers and stay on the GPU.
- Within a layer the parameters are taken in registration order (named_parameters) and each is moved whole to pinned
  CPU memory while the running total is below cpu_offload_gb GiB ("we use per-parameter offloading": the check comes
  before each move, so the last one moved takes the total past the cap by up to one parameter).
- A moved parameter is a zero-copy UVA view of host memory: no GPU copy, so 'Model loading took' (the load's memory
  difference) drops by the moved bytes and the KV budget, util x total - weights - the rest, rises by as much.
- cpu_offload_gb is "per GPU": each tensor-parallel rank moves its own shards up to N GiB.

PARAMETER ORDER (one row a layer kind kv can lay out): vLLM's fused dense decoder layer (LlamaDecoderLayer,
Qwen2DecoderLayer: self_attn.qkv_proj.weight [+ .bias], self_attn.o_proj.weight, mlp.gate_up_proj.weight,
mlp.down_proj.weight, then the two RMSNorm weights). For any other layer (MoE, MLA, hybrid, quantized, a sharded rank)
kv takes the cap itself, which undercounts by at most one parameter, and says so.
"""
from ...errors import UserError
from ...units import GiB, fmt_bytes
from ..linear_quant import DENSE_BITS
from . import at_least

# vllm#6496 ("[core][model] yet another cpu offload implementation", merged July 2024): the first release with
# --cpu-offload-gb is taken as 0.5.3
CPU_OFFLOAD_FROM = (0, 5, 3)
CPU_OFFLOAD_MAX_GIB = 1 << 20  # a sanity bound on the option (1 PiB of host RAM), not vLLM's
# the newest release whose offload a measured row checks (batch 60: TheBuccaneer/vllm-offload-profiles on 0.17.1)
CPU_OFFLOAD_CHECKED = (0, 17, 1)

# later releases: the V2 model runner never installs the offloader (vllm#51396, open PR vllm#48468)
V2_RUNNER_NOTE = ("--cpu-offload-gb: later vLLM releases run some models on the V2 model runner, which never installs "
                  "the weight offloader (vllm#51396; fix proposed in vllm#48468): the flag is accepted and nothing "
                  "moves. The figures assume it works as in 0.17.1; if 'Model loading took' shows the full weights, "
                  "plan without --cpu-offload-gb")
# 0.8.x: "--cpu-offload-gb is not supported by the V1 Engine. Falling back to V0." (vllm#15871, an April 2025 log);
# the release whose V1 engine took the flag was not read
V0_FALLBACK_NOTE = ("--cpu-offload-gb on vLLM 0.8-0.10: April 2025 builds printed '--cpu-offload-gb is not supported by "
                    "the V1 Engine. Falling back to V0' (vllm#15871); the release whose V1 engine took it was not read: "
                    "if the log says so, give --vllm-engine v0")


def check(runtime, knobs) -> float | None:
    """--cpu-offload-gb: a number of GiB >= 0 on a vLLM that has it; returns the GiB (None or 0: no offload)."""
    gb = knobs.get("cpu_offload_gb")
    if gb is None:
        return None
    if isinstance(gb, bool) or not isinstance(gb, (int, float)) or gb != gb or not 0 <= gb <= CPU_OFFLOAD_MAX_GIB:
        raise UserError(f"--cpu-offload-gb is vLLM's GiB of weights a GPU keeps in host memory (0 to {CPU_OFFLOAD_MAX_GIB}), "
                        f"got {gb!r}")
    return float(gb)


def dense_sequence(spec, layer_bytes: int, bpw: float) -> list | None:
    """One decoder layer's parameter bytes in vLLM's registration order for a fused dense layer (the module
    docstring's PARAMETER ORDER), the norms last as the layer's remainder; None where kv cannot lay the layer out."""
    if (spec.n_experts or spec.mla or spec.linear_dims or len(set(spec.layer_params or ())) > 1 or spec.layer_kv_heads
            or spec.cross_attn_layers or spec.arch.startswith(("qwen3_next", "qwen3_5", "gemma", "nemotron_h"))
            or not spec.intermediate or not spec.n_layers):
        return None
    d, hd = spec.hidden, spec.head_dim_k
    qkv = d * (spec.n_heads + 2 * spec.n_kv_heads) * hd
    seq = [qkv * bpw]
    bias = (spec.n_heads + 2 * spec.n_kv_heads) * hd
    if spec.arch.startswith("qwen2"):  # Qwen2's qkv_proj carries a bias (params.count_params counts it)
        seq.append(bias * bpw)
    seq += [spec.n_heads * hd * d * bpw, 2 * spec.intermediate * d * bpw, spec.intermediate * d * bpw]
    rest = layer_bytes - sum(seq)
    if rest < 0 or rest > 0.01 * layer_bytes:  # kv's layer is not this layout (an extra projection): no sequence
        return None
    return seq + [rest]


def offloaded_bytes(spec, cap_gib: float, blocks: int, layers: int, exact_layout: bool) -> tuple:
    """(bytes moved to host memory, exact?): the decoder layers' parameters, in order, while the total is below
    the cap (uniform layers of blocks / layers bytes each)."""
    cap = cap_gib * GiB
    if cap <= 0 or blocks <= 0:
        return 0, True
    if cap >= blocks:
        return int(blocks), True
    per_layer = blocks / layers
    seq = dense_sequence(spec, per_layer, 2) if exact_layout else None
    if seq is None:
        return int(cap), False
    moved = 0.0
    for _ in range(layers):
        for p in seq:
            if moved >= cap:
                return int(moved), True
            moved += p
    return int(min(moved, blocks)), True


def apply(spec, runtime, tp, fmt, fp32, s, roles, knobs, notes) -> tuple:
    """The weights a GPU keeps with --cpu-offload-gb: (roles with the moved bytes out of the GPU total, bytes moved)."""
    gb = check(runtime, knobs)
    if not gb:
        return roles, 0
    version = s.get("version")
    if version is not None and not at_least(version, *CPU_OFFLOAD_FROM):
        raise UserError(f"--cpu-offload-gb arrived in vLLM {'.'.join(map(str, CPU_OFFLOAD_FROM))} (vllm#6496); vLLM {knobs.get('runtime_version')} "
                        "has no such option")
    if s.get("pp", 1) > 1:
        raise UserError("--cpu-offload-gb with --pipeline-parallel-size: which stage's layers move is not modelled")
    layers = spec.n_layers
    # a 16-bit load of a 16-bit checkpoint (DENSE_BITS: the project's one table of dense dtype names) is laid out
    sixteen = (not fp32 and not spec.quant and DENSE_BITS.get(str(fmt or spec.dtype).lower()) == 16
               and DENSE_BITS.get(str(spec.dtype).lower()) == 16)
    # roles are already one GPU's at tensor parallel (plan_weights.vllm_load_extras divides them by tp)
    moved, exact = offloaded_bytes(spec, gb, roles["blocks"], layers, sixteen and tp == 1)
    roles = dict(roles, total=roles["total"] - moved,
                 how=roles["how"] + f" - {fmt_bytes(moved)} of decoder-layer weights in host RAM (--cpu-offload-gb {gb:g})")
    notes.append(f"--cpu-offload-gb {gb:g}: {fmt_bytes(moved)} of the decoder layers' weights "
                 + ("(every layer) " if moved >= roles["blocks"] else "")
                 + "sit in pinned host RAM and stream over PCIe each forward pass (much slower decode); "
                 + ("parameter by parameter until the total reaches the cap, as vLLM moves them" if exact else
                    "taken as the cap: vLLM moves whole parameters until it reaches it, so up to one parameter more "
                    "(kv does not lay out this model's parameters) leaves the GPU")
                 + "; the token table and the head stay on the GPU")
    if version is not None and at_least(version, 0, 8) and not at_least(version, 0, 11):
        notes.append(V0_FALLBACK_NOTE)
    if version is None or not at_least(CPU_OFFLOAD_CHECKED, *version[:3]):
        notes.append(V2_RUNNER_NOTE)
    return roles, moved
