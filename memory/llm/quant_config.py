"""A checkpoint's quantization_config read into kv's terms: the format name (awq, gptq, int8, fp8, ...), the group
size, the symmetry and a 2- or 3-bit width. spec.from_config and the vLLM drafter reader (runtimes/vllm_drafter.py)
read a config through these; linear_quant.linear_bits turns them into bits per weight."""


def _quant_group(q: dict) -> int | None:
    """Group size of a 4-bit group quantization as its quantization_config states it (AWQ/GPTQ `group_size` or
    AutoAWQ's `q_group_size`, compressed-tensors' config_groups.*.weights.group_size); None when not stated or
    per-channel (-1)."""
    g = q.get("group_size", q.get("q_group_size"))
    if g is None:
        for grp in (q.get("config_groups") or {}).values():
            g = ((grp or {}).get("weights") or {}).get("group_size")
            if g is not None:
                break
    try:
        g = int(g)
    except (TypeError, ValueError):
        return None
    return g if 0 < g <= 1 << 16 else None


def _quant_sym(q: dict) -> bool | None:
    """Whether a 4-bit group quantization is symmetric (scale only, no zero point): GPTQ's `sym`,
    compressed-tensors' config_groups.*.weights.symmetric (its QuantizationArgs default: True); AWQ's zero_point
    is the inverse. None when the config does not say."""
    if isinstance(q.get("sym"), bool):
        return q["sym"]
    if isinstance(q.get("zero_point"), bool):
        return not q["zero_point"]
    if str(q.get("quant_method") or "").lower() == "compressed-tensors":
        for grp in (q.get("config_groups") or {}).values():
            w = (grp or {}).get("weights") or {}
            if w.get("num_bits") == 4:
                return bool(w.get("symmetric", True))
    return None


def _quant_bits(q: dict) -> int | None:
    """A GPTQ/AWQ quantization_config's `bits` (`w_bit`, `weight_bits`) when 2 or 3, or GPTQ's 8, sized at that width
    with its group's scale and zero (linear_quant.linear_bits; 4 is the format's own, an 8-bit AWQ is int8); else None."""
    method = str(q.get("quant_method") or q.get("quant_type") or "").lower()
    bits = q.get("bits") or q.get("w_bit") or q.get("weight_bits")
    if bits == 8 and "gptq" in method:
        return 8
    return bits if bits in (2, 3) and ("gptq" in method or "awq" in method or method == "marlin") else None


def _quant_name(q: dict) -> str | None:
    method = str(q.get("quant_method") or q.get("quant_type") or "").lower()
    bits = q.get("bits") or q.get("w_bit") or q.get("weight_bits")
    if method in ("awq", "gptq", "marlin", "gptq_marlin", "awq_marlin", "compressed-tensors"):
        if method == "compressed-tensors":
            groups = q.get("config_groups") or {}
            for g in groups.values():
                w = (g or {}).get("weights") or {}
                if w.get("type") == "float" and w.get("num_bits") == 8:
                    return "fp8"
                if w.get("num_bits") == 8:
                    return "int8"
                if w.get("num_bits") == 4:
                    return "int4"
            return "int4"
        return ("awq" if "awq" in method else "gptq") if (bits or 4) == 4 or _quant_bits(q) else "int8"
    if method in ("auto-round", "auto_round", "autoround", "intel/auto-round"):  # AutoRound: GPTQ's packing (weights.py)
        return {4: "auto_round", 8: "int8"}.get(int(bits or 4), f"auto_round int{bits} (not modelled)")
    if method == "modelopt" and _modelopt_algo(q) == "NVFP4":  # nvidia's NVFP4 config.json
        return "nvfp4"
    if method in ("fp8", "fbgemm_fp8", "modelopt"):
        return "fp8"
    if method in ("bitsandbytes",):
        return "bnb-4bit" if q.get("load_in_4bit") else "int8"
    if method == "mxfp4":
        return "mxfp4"
    return method or None


def _modelopt_algo(q: dict) -> str:
    """A ModelOpt config's quant_algo: config.json's quantization_config states it at the top, the legacy
    hf_quant_config.json under "quantization" (vLLM modelopt.py ModelOptQuantConfigBase.from_config reads both)."""
    nested = q.get("quantization") if isinstance(q.get("quantization"), dict) else {}
    return str(q.get("quant_algo") or nested.get("quant_algo") or "").upper()


# The key each scheme's config lists the modules it leaves unquantized under, as its loader reads it: bitsandbytes
# llm_int8_skip_modules; AWQ, MXFP4 (gpt-oss) and transformers' FP8 configs modules_to_not_convert; compressed-tensors
# and ModelOpt's config.json "ignore"; ModelOpt's legacy hf_quant_config.json "quantization": {"exclude_modules"}
# (vLLM modelopt.py at 00155cde: shell wildcards, matched with fnmatch); vLLM's own Fp8Config "ignored_layers" (fp8.py
# at 0071b24b from_config); GPTQ's per-module "dynamic" rules, whose "-:" keys are regexes of modules left out of
# quantized init (utils/gptq_utils.py at 02239f5e get_dynamic_override: re.match), read here as "re:" entries.
SKIP_KEYS = ("llm_int8_skip_modules", "modules_to_not_convert", "ignore", "ignored_layers")


def _quant_skip(q: dict) -> tuple:
    """The modules a quantization_config leaves in 16 bits, as linear_quant.skip_matcher reads them (at most 4096)."""
    lists = [q.get(k) for k in SKIP_KEYS]
    nested = q.get("quantization")
    if isinstance(nested, dict):
        lists.append(nested.get("exclude_modules"))
    dynamic = q.get("dynamic")
    if isinstance(dynamic, dict):
        lists.append(["re:" + k[2:] for k in dynamic if isinstance(k, str) and k.startswith("-:")])
    # (fixV) GPTQ's modules_in_block_to_quantize (transformers' GPTQConfig, AutoGPTQ/GPTQModel): the block's modules that
    # ARE quantized, a list of lists ([["self_attn.k_proj", "self_attn.v_proj", "self_attn.q_proj"], ["self_attn.o_proj"],
    # ...]); the others stay 16-bit. Read as "only:" entries (linear_quant.skip_matcher)
    inside = q.get("modules_in_block_to_quantize")
    if isinstance(inside, (list, tuple)):
        lists.append(["only:" + m for g in inside for m in (g if isinstance(g, (list, tuple)) else [g]) if isinstance(m, str)])
    out = [str(m) for lst in lists if isinstance(lst, (list, tuple)) for m in lst if isinstance(m, str)]
    return tuple(dict.fromkeys(out))[:4096]


def _fp8_channel(q: dict) -> bool:
    """A compressed-tensors FP8 checkpoint whose weights are scaled per output channel (config_groups.*.weights.strategy
    "channel": llm-compressor's FP8_DYNAMIC preset), which vLLM loads through process_fp8_weight_channel_strategy."""
    return any(((g or {}).get("weights") or {}).get("strategy") == "channel"
               for g in (q.get("config_groups") or {}).values() if isinstance(g, dict))
