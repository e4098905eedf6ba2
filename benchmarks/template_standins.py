"""Stand-in model files for benchmarks/workflow_templates.py in the named file's size class and dtype (fix68g, audit
aud68a finding 4: every Wan 2.2 14B template was estimated with the 1.3B layout, every fp8 file as bf16).

- size class: a Wan 14B diffusion model (Wan 2.2 A14B is Wan 2.1 14B's architecture) is built tensor by tensor as
  bench_estimate's synth:wan2.1-t2v-14B-blocks / i2v (estimate_synth_layouts.wan14b_blocks, 14.29 / 16.39 B
  parameters); a file whose class has no stand-in here (SD3.5 Large from the Medium checkpoint, a VACE 14B without its
  VACE blocks) is written from the layout as before but its row's peak is null, "stand-in differs";
- dtype: a name with "fp8" gets ComfyUI's fp8 layout (as ComfyUI's scaled files): every
  2-D weight of 1 Mi elements or more that is no embedding in F8_E4M3, with an F32 scale_weight scalar beside it and
  the scaled_fp8 marker where the name says "scaled"; the rest as the layout stores it."""
import math

from estimate_synth_layouts import wan14b_blocks

FP8_MIN = 2 ** 20  # elements: the block matrices, not the norms, biases or small projections
NOT_FP8 = ("embed", "shared", "pos_", "norm")


def _fp8(tensors, scaled):
    out = {}
    for k, (d, sh) in tensors.items():
        if len(sh) == 2 and k.endswith(".weight") and math.prod(sh) >= FP8_MIN and not any(w in k for w in NOT_FP8):
            out[k] = ("F8_E4M3", tuple(sh))
            if scaled:
                out[k[:-len("weight")] + "scale_weight"] = ("F32", ())
        else:
            out[k] = (d, tuple(sh))
    if scaled:
        out["scaled_fp8"] = ("F8_E4M3", (0,))
    return out


def standin(name, directory, lay, how, layouts, model_dirs):
    """(layout dict for layouts.write_sparse, how, differs) of the file `name` the layout `lay` stands in for:
    differs is None, or why the stand-in is not of the file's size class (its row's peak is then null)."""
    low = name.lower().replace("-", "_")
    tensors, differs = dict(layouts.table(lay)), None
    if directory in model_dirs and "14b" in low and lay.startswith("wan_"):
        if "vace" in low:
            differs = "a VACE 14B file: no stand-in with its VACE blocks"
        else:
            tensors = wan14b_blocks(i2v="i2v" in low)
            how = f"Wan 2.1 {'i2v' if 'i2v' in low else 't2v'} 14B built tensor by tensor (bench_estimate's synth layout)"
    if directory in model_dirs and "large" in low and lay == "sd3_sd3.5_medium":
        differs = "SD3.5 Large: no stand-in of its size (the Medium checkpoint's layout)"
    if "fp8" in low:
        tensors = _fp8(tensors, "scaled" in low or "mixed" in low)
        how += "; fp8 (F8_E4M3" + (" + scale_weight" if "scaled" in low or "mixed" in low else "") + ") as the name says"
    return {"tensors": {k: {"dtype": d, "shape": list(sh)} for k, (d, sh) in tensors.items()}}, how, differs
