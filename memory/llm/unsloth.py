"""Unsloth Dynamic GGUFs (UD-Q4_K_XL, UD-Q8_K_XL, UD-IQ2_XXS, ...): weights the name alone does not give.

Unsloth documents Dynamic 2.0 as adjusting "the quantization type of every possible layer", with a scheme chosen
per model (docs.unsloth.ai/basics/unsloth-dynamic-2.0-ggufs): no tensor set is fixed by the name, so without the
file the weights are a range. Lower end: every tensor at the file type's base type (what general.file_type and
llama-bench's label name). Upper end: every tensor at the highest type those files raise tensors to, Q8_0 below
8 bits (Unsloth's Qwen3.5 GGUF benchmarks keep the sensitive tensors at up to Q8_0) and BF16 for UD-Q8_K_XL, whose
raised tensors stay 16-bit (Qwen3.6-27B-UD-Q8_K_XL is 33.31 GiB where Q8_0 throughout is 27 GiB). The KV cache and
the runtime's buffers do not depend on the weights' types. The file (--gguf) or its size (--weights-gib) is exact."""
import re
from dataclasses import replace

from ..errors import UserError
from ..units import fmt_bytes
from .weights import IK_TYPES, TYPE_BITS, mxfp4_checkpoint

# "UD-Q4_K_XL" as Unsloth's files are named, or "Q4_K_XL" as a -hf / hf.co tag and its model cards write it. No
# llama.cpp file type ends in _XL (llama-quant.cpp / quantize.cpp QUANT_OPTIONS), but bartowski's GGUFs carry a
# "Q3_K_XL" too (Q3_K_L with Q8_0 embed and output: weights.BARTOWSKI_L): a bare Q3_K_XL is Unsloth's only where the
# model's name says unsloth; the other bare _XL names are Unsloth's alone
BARTOWSKI_XL = ("Q3_K_XL",)
NAME = re.compile(r"ud[-_](?P<t>[a-z0-9_]+)|(?P<t_xl>q[2-8]_k_xl)", re.I)
# ggml bits per weight of one block: weights.TYPE_BITS, less the types no Unsloth Dynamic file is named by (F32,
# F16, MXFP4) and ik_llama.cpp's own (weights.IK_TYPES: no Unsloth file holds them)
BITS = {t: b for t, b in TYPE_BITS.items() if t not in ("F32", "F16", "MXFP4") and t not in IK_TYPES}
# file type -> its base (default) tensor type, llama-quant.cpp's default_type (Q3_K_S/M/L -> Q3_K, ...); Unsloth's
# _XL K-quants likewise, Q8_K_XL's base Q8_0
BASE = {"IQ2_M": "IQ2_S", "IQ3_M": "IQ3_S", "IQ3_XS": "IQ3_S", "Q8_K_XL": "Q8_0"}
_K_SIZE = re.compile(r"(Q[2-6]_K)_(?:S|M|L|XL)")


def base_type(dtype, unsloth: bool = False) -> str | None:
    """The base tensor type of an Unsloth Dynamic file type, None for any other name. unsloth: the model's name says
    unsloth; otherwise a bare Q3_K_XL is bartowski's file (None: weights.BARTOWSKI_L sizes it)."""
    m = NAME.fullmatch(str(dtype or "").strip())
    if not m:
        return None
    if m.group("t_xl") and not unsloth and m.group("t_xl").upper() in BARTOWSKI_XL:
        return None  # bartowski's layout, one size
    t = (m.group("t") or m.group("t_xl")).upper()
    k = _K_SIZE.fullmatch(t)
    t = BASE.get(t) or (k.group(1) if k else t)
    if t not in BITS:
        raise UserError(f"{dtype}: not an Unsloth Dynamic type kv knows (UD- followed by a GGUF type: "
                        f"{', '.join(sorted(set(BITS) - {'BF16'}) + sorted(BASE))}, Q2_K_XL .. Q6_K_XL)")
    return t


def bounds(spec, base: str) -> tuple:
    """(lower, upper, upper type) weight bytes of the whole file."""
    if not spec.params:
        raise UserError(f"{spec.name}: parameter count unknown, cannot bound its Unsloth Dynamic weights")
    top = "BF16" if BITS[base] >= BITS["Q8_0"] else "Q8_0"
    kept = _mxfp4_experts(spec)  # gpt-oss: every GGUF keeps the experts MXFP4 (weights.mxfp4_checkpoint)
    rest, fixed = spec.params - kept, kept * TYPE_BITS["MXFP4"] / 8
    return int(fixed + rest * BITS[base] / 8), int(fixed + rest * BITS[top] / 8), top


def _mxfp4_experts(spec) -> int:
    """The expert parameters a gpt-oss GGUF keeps in MXFP4 whatever its file type (0 for any other model): unsloth's
    gpt-oss-120b UD-Q4_K_XL is listed at about 58.7 GiB, where Q4_K throughout would be 61.18 GiB."""
    return int(spec.expert_params or 0) if mxfp4_checkpoint(spec) else 0

# a weights figure the user gives (--weights-gib, --weights-size): outside it is a typo, not a model
WEIGHTS_RANGE = (64 << 20, 1 << 50)
WEIGHTS_RANGE_TEXT = "64 MiB to 1 PiB"


def given(spec, size: int, dtype=None):
    """The spec with the user's figure (a file's size as the Hub lists it) as its weights."""
    if spec.weights_bytes and (spec.gguf_sized or not spec.weights_source):  # a GGUF's table, or bytes of no source
        raise UserError("the weights are read from the file already: give --gguf FILE or --weights-gib, not both")
    if spec.weights_bytes:  # a built-in DeepSeek-V4, a config.json beside its safetensors: no file size to give
        raise UserError(f"--weights-gib / --weights-size: {spec.name}'s weights are sized already, from "
                        f"{spec.weights_source.split(' (')[0]}: drop the flag")
    if not WEIGHTS_RANGE[0] <= size <= WEIGHTS_RANGE[1]:
        raise UserError(f"--weights-gib {size / (1 << 30):g} GiB is not a plausible weights size ({WEIGHTS_RANGE_TEXT})")
    what = f"the {dtype} file's size" if dtype else "the size"
    return replace(spec, weights_bytes=int(size), embed_bytes=None, output_bytes=None,
                   weights_source=f"as given: {what} you gave (--weights-gib / --weights-size), taken as the weights")


def plan_range(plan, spec, dtype, base, **kw) -> dict:
    """Plan at both ends of the range; the verdict stands only where both ends agree."""
    lo_b, hi_b, top = bounds(spec, base)
    lo = plan(replace(spec, weights_bytes=lo_b, embed_bytes=None, output_bytes=None,
                      weights_source=f"{base} throughout"), **kw)
    hi = plan(replace(spec, weights_bytes=hi_b, embed_bytes=None, output_bytes=None,
                      weights_source=f"{top} throughout"), **kw)
    out = dict(hi, weights_dtype=dtype, weights_range=[lo["weights"], hi["weights"]])
    kept = ", experts MXFP4" if _mxfp4_experts(spec) else ""
    out["weights_how"] = (f"between {fmt_bytes(lo['weights'])} ({base} throughout{kept}) and "
                          f"{fmt_bytes(hi['weights'])} ({top} throughout{kept}): Unsloth picks per model which tensors "
                          "go up")
    out["notes"] = [n for n in hi["notes"]] + [
        f"{dtype}: an Unsloth Dynamic GGUF; the name does not say which tensors are raised above {base}, so the "
        "weights are a range and the figures above take its upper end; the KV cache and compute buffers do not "
        "depend on it. Give --gguf FILE (exact) or --weights-gib N (the file's size as the Hub lists it)"]
    for k in ("fits", "fits_as_requested"):
        out[k] = lo[k] if lo[k] == hi[k] else None
    if lo["vram"] is not None and None in (out["fits"], out["fits_as_requested"]):
        how = "as asked" if out["fits_as_requested"] is None else "with the flags below"
        if how != "as asked":  # only the low end fits with changed flags: print those (the upper end has none that fit)
            out.update(flags=lo["flags"], command=lo["command"], chosen=lo.get("chosen"))
        out["depends"] = (f"fits {how} at {fmt_bytes(lo['weights'])} of weights, not at {fmt_bytes(hi['weights'])}: "
                          "depends on the file: give --gguf or --weights-gib")
    return out
