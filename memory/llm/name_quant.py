"""What a repo id says about its weights beyond the format (names.py reads the format from the suffix): Gemma 3's QAT
int4 groups, a GPTQ/AWQ width other than 4 bits, Unsloth's dynamic 4-bit layers kept in 16 bits, and Meta's FP8
releases that keep attention in bf16. Each sets the spec's quant fields and a note, where no config.json said
otherwise; names.py calls them on every spec it reads from a name."""
import re


# Gemma 3's quantization-aware-trained int4 weights are symmetric int4 in groups of 32 (gau-nernst/gemma3-int4,
# the converter behind gaunernst/gemma-3-*-it-int4-awq, -qat-autoawq and -qat-compressed-tensors); the AWQ/GPTQ/
# compressed-tensors conversions keep the 32-value groups (4.625 bits a weight as AWQ, not 4.16). A Gemma-3 repo id
# that names QAT, or gau-nernst's "-int4-awq" form, is read with those groups; a config.json states its own.
_QAT_INT4 = re.compile(r"(?:^|[-_.])qat(?:$|[-_.])|[-_.]int4[-_.](?:awq|gptq)$")
QAT_GROUP = 32


def unsloth_dynamic(name: str, spec) -> None:
    """Unsloth's "dynamic" 4-bit repos ('...-unsloth-bnb-4bit') leave a model-specific list of decoder sub-blocks in
    16 bits (llm_int8_skip_modules in their config.json); a name cannot say which, so the figure is a lower bound."""
    if "unsloth-bnb-4bit" in name.lower() and spec.quant in ("bnb-4bit", "nf4"):
        spec.notes.append("an Unsloth dynamic 4-bit checkpoint keeps some decoder layers in 16 bits (its config.json's "
                          "llm_int8_skip_modules): sized from the name, every decoder matmul is taken as 4-bit, a lower "
                          "bound (Unsloth's Qwen2.5-0.5B and Qwen3-4B-2507 loaded 21-38 % more in vLLM); give --config, or the "
                          "list its log prints (quant_skip), for the exact figure")


def qat_group(name: str, builtin: str, spec) -> None:
    low = name.strip().split("/")[-1].lower()
    if (builtin.startswith("Gemma-3-") and spec.quant in ("awq", "gptq", "int4", "w4a16") and spec.quant_group is None
            and _QAT_INT4.search(low)):
        spec.quant_group = QAT_GROUP
        spec.notes.append(f"{name!r}: Gemma 3's QAT int4 weights, quantized in groups of {QAT_GROUP} (4 + 20/32 bits "
                          "a weight as AWQ); a config.json with another group_size overrides this")


# a GPTQ/AWQ repo id that states a width other than the format's 4 bits ('-GPTQ-Int3', '-gptq-2bit', Qwen's
# '-GPTQ-Int8'): sized at that width with its group's scale and zero (linear_quant.linear_bits), as a config.json's
# `bits` is (quant_config._quant_bits); the widths each format is read at, one row a format (an 8-bit AWQ name keeps 4)
_NAME_BITS = re.compile(r"[-_.](?:int([238])|([238])[-_]?bits?)(?=$|[-_.])")
NAME_WIDTHS = {"gptq": (2, 3, 8), "awq": (2, 3)}


def name_bits(name: str, spec) -> None:
    m = _NAME_BITS.search(name.strip().split("/")[-1].lower())
    bits = int(m.group(1) or m.group(2)) if m else None
    if bits in NAME_WIDTHS.get(spec.quant, ()) and not spec.quant_bits:
        spec.quant_bits = bits
        spec.notes.append(f"{name!r}: {spec.quant.upper()} at {spec.quant_bits} bits, as the name says")


# Meta's own FP8 releases (meta-llama/Llama-3.1-405B-Instruct-FP8, fbgemm_fp8) quantize the feed-forward matmuls
# only, and not those of the first and last blocks: attention stays in bf16 (their config's modules_to_not_convert;
# vllm#6746: 57.75 GiB a GPU at TP 8, where every matmul in FP8 would be 47.7)
def meta_fp8(name: str, builtin: str, spec) -> None:
    if (spec.quant == "fp8" and builtin.startswith("Llama-3") and name.strip().lower().startswith("meta-llama/")
            and not spec.quant_skip):
        last = spec.n_layers - 1
        spec.quant_skip = tuple(f"model.layers.{i}.self_attn" for i in range(spec.n_layers)) + (
            "model.layers.0.mlp", f"model.layers.{last}.mlp")
        spec.notes.append(f"{name!r}: Meta's FP8 release keeps attention and the first and last blocks' MLP in bf16 "
                          "(fbgemm_fp8, modules_to_not_convert)")
