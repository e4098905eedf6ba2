"""llama.cpp's routed experts kept in host memory: --n-cpu-moe N (the first N layers) and -ot / --override-tensor
PATTERN=CPU (the layers whose expert tensors the pattern names, as llama.cpp's loader matches tensor names)."""
import re

from ...errors import UserError
from ..gguf import gguf_arch
from ..spec import FULL, LINEAR
from ..weights import expert_layer_bytes, moe_layer_flags


# -ot / --override-tensor PATTERN=BUFT[,PATTERN=BUFT..] (common/arg.cpp: the value split at each ',' and each part at
# its '='); llama-model-loader.cpp create_tensor gives a tensor the buffer type of the first override whose pattern
# std::regex_search finds in its name. Modelled: CPU for the routed experts of whole layers (blk.N.ffn_gate/up/down_exps
# .weight, --n-cpu-moe's own tensors, whichever blocks the pattern names); a pattern that also reaches another tensor
# (attention, shared experts, the router, the token table or the output), or another buffer type, is refused
OT_EXPERTS = ("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")
OT_OTHERS = ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "attn_gate", "attn_q_norm",
             "attn_k_norm", "post_attention_norm", "ffn_norm", "ffn_gate_inp", "ffn_gate_shexp", "ffn_up_shexp",
             "ffn_down_shexp", "ffn_gate_inp_shexp", "ffn_gate", "ffn_up", "ffn_down", "ssm_in", "ssm_out", "ssm_conv1d",
             "ssm_a", "ssm_dt", "ssm_alpha", "ssm_beta", "ssm_norm", "nextn.eh_proj")


# A device's buffer type (attn=CUDA0) is modelled where it changes nothing: one device holding every layer (and the
# output), where the layer split already puts each block tensor there; the token table, which llama.cpp keeps in host
# memory (its input layer), is refused, and so is any device buffer type on a run with several devices or a partial -ngl
_ONE_DEVICE = re.compile(r"(CUDA|ROCM|VULKAN|SYCL)0")


def override_cpu_layers(spec, ot, device_noop: bool = False) -> tuple:
    """The layers whose routed experts an -ot value keeps on the CPU, as llama.cpp's loader matches tensor names (the
    first override whose pattern matches decides), and whether their biases (gpt-oss's ffn_*_exps.bias, counted from a
    GGUF's tensor table) go with them. device_noop: one device holds every layer (see _ONE_DEVICE)."""
    first = _overrides(ot, device_noop)
    hit = lambda name: (first(name) or (False,))[0]  # noqa: E731  (on the CPU by the first override that matches)
    emb = first("token_embd.weight")
    if emb and not emb[0]:
        raise UserError(f"--override-tensor {emb[1]}: moves the token table, which llama.cpp keeps in host memory, "
                        "to the device; not modelled")
    others = [n for n in ("token_embd.weight", "output.weight", "output_norm.weight") if hit(n)]
    attn = attn_tensors(spec)
    layers = []
    for il in range(spec.n_layers):
        # (batch 105, after first sight) a layer's attn_* tensors are placed where kv has read them (attn_tensors:
        # every attn_* tensor the layer has; a name of OT_OTHERS it lacks is no tensor of it)
        others += [f"blk.{il}.{t}.weight" for t in OT_OTHERS
                   if hit(f"blk.{il}.{t}.weight") and (attn is None or not t.startswith("attn_"))]
        exps = [hit(f"blk.{il}.{t}.weight") for t in OT_EXPERTS]
        if any(exps) and not all(exps):
            raise UserError(f"--override-tensor: layer {il}'s routed experts are matched only in part "
                            f"({', '.join(t for t, e in zip(OT_EXPERTS, exps) if e)}); kv moves whole layers' experts")
        if all(exps):
            layers.append(il)
    if others:
        raise UserError(f"--override-tensor: the pattern also matches {others[0]} (and {len(others) - 1} more): only "
                        "the routed experts (ffn_gate/up/down_exps) on the CPU are modelled"
                        + ("" if attn is None else ", and a layer's attn_* tensors"))
    biases = bool(layers) and all(hit(f"blk.{il}.{t}.bias") for il in layers for t in OT_EXPERTS)
    return tuple(layers), biases


def _overrides(ot, device_noop: bool):
    """llama.cpp's -ot value read as its loader reads it: the first override whose pattern matches a name decides."""
    parts = [ot] if isinstance(ot, str) else list(ot or ())
    pats = []
    for part in parts:
        for item in str(part).split(","):
            pat, eq, buft = item.partition("=")
            if not eq or not pat:
                raise UserError(f"--override-tensor takes PATTERN=CPU (llama.cpp's -ot), got {item!r}")
            cpu = buft.strip().upper() == "CPU"
            if not cpu and not (device_noop and _ONE_DEVICE.fullmatch(buft.strip().upper())):
                raise UserError(f"--override-tensor {item}: only the CPU buffer type is modelled (a device's buffer "
                                "type moves weights between cards, which the layer split here does not place)")
            try:
                pats.append((re.compile(pat), cpu, item))
            except re.error as exc:
                raise UserError(f"--override-tensor {item}: not a regular expression ({exc})") from exc

    return lambda name: next(((cpu, item) for p, cpu, item in pats if p.search(name)), None)


# (batch 105, after first sight) a pattern that also names a layer's attention tensors (miminashi's second pattern,
# blk\.N\.attn_.*\.weight=CPU) keeps them in host memory as it does the experts. Read for qwen35moe / qwen35 in
# llama-model.cpp (TheTom/llama-cpp-turboquant at 69d8e4be, case LLM_ARCH_QWEN35MOE, line 7519): every layer attn_norm
# {n_embd}; an attention layer attn_q {n_embd, head_dim x heads x 2} (the output gate), attn_k / attn_v {n_embd,
# head_dim x kv heads}, attn_output {head_dim x heads, n_embd}, attn_q_norm / attn_k_norm {head_dim}; a gated-DeltaNet
# layer attn_qkv {n_embd, 2 x key_dim + value_dim} and attn_gate {n_embd, value_dim} (its ssm_* tensors are no attn_
# names). The norms stay F32 (llama-quantize quantizes matrices only); the matrices take the bits the file's matmuls
# beside the experts, the token table, the head and the routers hold on average (exact where one type holds them all,
# as --gguf-types places them). Other architectures' attention tensors are not estimated: refused as before.
# (rev11 S4) A --gguf FILE spec of any arch carries each layer's attn_* tensors and their exact bytes from its tensor
# table (gguf.py, attn_file_bytes): read whatever the arch; ATTN_ARCHS gates the type-average estimate (--gguf-types) only
ATTN_ARCHS = ("qwen35", "qwen35moe")  # GGUF names, read through gguf_arch (rev20 S1)


def attn_tensors(spec) -> list | None:
    """Per layer: {attn_* tensor name: (values, is a matrix)} as llama.cpp creates them; None where not read. A GGUF's
    spec, any arch: its own table, spec.attn_file_bytes (per layer ((full tensor name, bytes), ..): cpu_attn_bytes sums
    it; override_cpu_layers only asks whether it is read) (rev11 D3: no dict keyed by a name's third part, which folded
    a layer's .weight and .bias into one key)."""
    if spec.attn_file_bytes:
        return spec.attn_file_bytes
    if gguf_arch(spec) not in ATTN_ARCHS:
        return None
    if spec.mla or spec.layer_kv_heads or not spec.linear_dims:
        return None
    d, hd, kh, kd, vh, vd = spec.hidden, spec.head_dim_k, *spec.linear_dims[:4]
    full = {"attn_q": (d * hd * spec.n_heads * 2, True), "attn_k": (d * hd * spec.n_kv_heads, True),
            "attn_v": (d * hd * spec.n_kv_heads, True), "attn_output": (hd * spec.n_heads * d, True),
            "attn_q_norm": (hd, False), "attn_k_norm": (hd, False)}
    linear = {"attn_qkv": (d * (2 * kh * kd + vh * vd), True), "attn_gate": (d * vh * vd, True)}
    return [{"attn_norm": (d, False), **(full if k == FULL else linear if k == LINEAR else {})}
            for k in spec.layer_kinds]


def cpu_attn_bytes(spec, ot, device_noop: bool = False) -> tuple:
    """Each layer's attn_* bytes an -ot value keeps on the CPU (all zero where it names none)."""
    attn = attn_tensors(spec)
    if attn is None:
        return (0,) * spec.n_layers
    hit = (lambda f: lambda n: (f(n) or (False,))[0])(_overrides(ot, device_noop))
    if spec.attn_file_bytes:  # exact: the bytes of each tensor the pattern names, from the file's table
        return tuple(sum(b for n, b in layer if hit(n)) for layer in spec.attn_file_bytes)
    per = [[(v, m) for t, (v, m) in ts.items() if hit(f"blk.{il}.{t}.weight")] for il, ts in enumerate(attn)]
    if not any(per):
        return (0,) * spec.n_layers
    if not (spec.weights_bytes and spec.embed_bytes is not None and spec.expert_file_bytes):
        raise UserError("--override-tensor keeps attention tensors on the CPU: their bytes are read from the file's "
                        "tensor types; give --gguf FILE or --gguf-types")
    emb = spec.vocab * spec.hidden
    router = sum(moe_layer_flags(spec)) * spec.hidden * spec.n_experts
    rest = (spec.weights_bytes - sum(w + b for w, b in spec.expert_file_bytes) - spec.embed_bytes
            - (0 if spec.tied else spec.output_bytes or 0) - 4 * router)
    bits = 8 * rest / (spec.params - spec.expert_params - emb * (1 if spec.tied else 2) - router)
    return tuple(int(sum(v * bits / 8 if m else 4 * v for v, m in ts)) for ts in per)


def cpu_expert_bytes(spec, s) -> list | None:
    """Each layer's routed-expert bytes kept in host memory by --n-cpu-moe N (the first N) or -ot (the layers its
    pattern names); None without either."""
    layers = s.get("cpu_moe_layers")
    if layers is None and not s.get("n_cpu_moe"):
        return None
    keep = set(layers) if layers is not None else set(range(s["n_cpu_moe"]))
    # --n-cpu-moe's pattern matches the biases too on mainline (not on ik_llama.cpp); -ot's where it names them
    biases = s["cpu_moe_biases"] if layers is not None else not s.get("ik")
    attn = s.get("cpu_attn_bytes") or (0,) * spec.n_layers  # -ot's attention tensors (cpu_attn_bytes), layer by layer
    exps = expert_layer_bytes(spec, s.get("weights_format"), biases) if spec.n_experts or keep else [0] * spec.n_layers
    return [(b if il in keep else 0) + attn[il] for il, b in enumerate(exps)]  # a dense qwen35: its attention alone
