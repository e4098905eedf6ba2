"""llama.cpp's routed experts kept in host memory: --n-cpu-moe N (the first N layers) and -ot / --override-tensor
PATTERN=CPU (the layers whose expert tensors the pattern names, as llama.cpp's loader matches tensor names)."""
import re

from ...errors import UserError
from ..weights import expert_layer_bytes


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

    def first(name):
        return next(((cpu, item) for p, cpu, item in pats if p.search(name)), None)

    hit = lambda name: (first(name) or (False,))[0]  # noqa: E731  (on the CPU by the first override that matches)
    emb = first("token_embd.weight")
    if emb and not emb[0]:
        raise UserError(f"--override-tensor {emb[1]}: moves the token table, which llama.cpp keeps in host memory, "
                        "to the device; not modelled")
    others = [n for n in ("token_embd.weight", "output.weight", "output_norm.weight") if hit(n)]
    layers = []
    for il in range(spec.n_layers):
        others += [f"blk.{il}.{t}.weight" for t in OT_OTHERS if hit(f"blk.{il}.{t}.weight")]
        exps = [hit(f"blk.{il}.{t}.weight") for t in OT_EXPERTS]
        if any(exps) and not all(exps):
            raise UserError(f"--override-tensor: layer {il}'s routed experts are matched only in part "
                            f"({', '.join(t for t, e in zip(OT_EXPERTS, exps) if e)}); kv moves whole layers' experts")
        if all(exps):
            layers.append(il)
    if others:
        raise UserError(f"--override-tensor: the pattern also matches {others[0]} (and {len(others) - 1} more): only "
                        "the routed experts (ffn_gate/up/down_exps) on the CPU are modelled")
    biases = bool(layers) and all(hit(f"blk.{il}.{t}.bias") for il in layers for t in OT_EXPERTS)
    return tuple(layers), biases


def cpu_expert_bytes(spec, s) -> list | None:
    """Each layer's routed-expert bytes kept in host memory by --n-cpu-moe N (the first N) or -ot (the layers its
    pattern names); None without either."""
    layers = s.get("cpu_moe_layers")
    if layers is None and not s.get("n_cpu_moe"):
        return None
    keep = set(layers) if layers is not None else set(range(s["n_cpu_moe"]))
    # --n-cpu-moe's pattern matches the biases too on mainline (not on ik_llama.cpp); -ot's where it names them
    biases = s["cpu_moe_biases"] if layers is not None else not s.get("ik")
    return [b if il in keep else 0 for il, b in enumerate(expert_layer_bytes(spec, s.get("weights_format"), biases))]
