"""The diffusion model's sampling activations: what one model call holds at its peak on a latent, under the estimate's
policy (runner, attention, mask, int8 matmuls, the manual-cast copy, an offloaded layer or swapped block in flight).
formula.estimate counts them at the estimated size; phase_peaks counts them again at each sampler's own latent where
a workflow's samplers run at different sizes (act65: a hires fix's base pass, ComfyUI running one sampler at a time),
so the figure at either size comes from this one piece of code."""
from . import ref_latents, spec, weights as W
from .phases import (dense_mask_bytes, diffusers_rope_peak, int8_matmul_peak, latent_geometry, naive_total,
                     sample_parts, wan_reference_peak)
from ..units import fmt_bytes


def latent(family, width, height, frames, batch, pol) -> dict:
    """The latent the diffusion model samples (phases.latent_geometry), its text tokens as the runner or the policy
    sets them (a diffusers FLUX.1 pads its T5 prompt to 512: spec.RUNNER_TEXT_TOKENS)."""
    lat = latent_geometry(family, width, height, frames, batch, audio_fps=pol.get("audio_fps"))
    txt = pol.get("text_tokens") or spec.RUNNER_TEXT_TOKENS.get(pol.get("runner"), {}).get(family)
    if txt and spec.family(family)["txt"]:
        lat["text_tokens"] = int(txt)
        lat["tokens"] = lat["image_tokens"] + lat["text_tokens"]
    refs, lat["ref_lines"] = ref_latents.tokens(family, pol.get("ref_images") or [], width, height)
    if refs:  # an edit model's reference latents: more image tokens in every model call (ref_latents.py, fix68g)
        lat.update(image_tokens=lat["image_tokens"] + refs, tokens=lat["tokens"] + refs, ref_tokens=refs)
    return lat


def activations(family, arch, lat, b_eff, pol, table, held=0, notes=None) -> dict:
    """{act, naive, how, mask} of one model call on b_eff samples of `lat`: act the sample phase's activations
    (with the n x n scores when attention is math, the dense mask, the runner's own peaks, the int8 accumulators or
    else the manual-cast copy of the largest weight, `held`: the offloaded layer or swapped block being run), naive
    the n x n scores' extra (phases.naive_total), mask the dense mask's bytes (in act). table: the diffusion model's
    tensors. A traced figure (policy sample_activations, exact mode) replaces act. notes: a list the assumption
    lines are added to (None: none kept)."""
    notes = [] if notes is None else notes
    bc, batch = pol["compute_bytes"], lat["shape"][0]
    act, naive, how = sample_parts(family, arch, lat, b_eff, bc, batch)
    mask = 0
    if pol.get("attention") == "math":  # the n x n scores held whole: the naive figure is the sample phase's
        act = naive_total(act, naive, arch)
    if pol.get("attention_mask") == "dense":  # the bool [B, N, N] mask and SDPA's compute-dtype copy (phases.DENSE_MASK_BOOL)
        mask = dense_mask_bytes(lat, b_eff, bc)
        act += mask
        notes.append(f"a dense [B, N, N] attention mask ({lat['tokens']} tokens) and SDPA's {bc}-byte copy of it "
                     f"are held while attention runs ({fmt_bytes(mask)})")
    if pol.get("runner") == "diffusers":
        act = max(act, diffusers_rope_peak(family, arch, lat, b_eff))
    elif pol.get("runner") == "wan":
        act = max(act, wan_reference_peak(family, arch, lat, b_eff))
    if pol.get("int8_matmul"):  # bitsandbytes LLM.int8: int32 accumulators, no 16-bit weight copy (phases.INT8_*)
        act = max(act, int8_matmul_peak(family, arch, lat, b_eff, bc, batch))
        notes.append("bitsandbytes 8-bit (LLM.int8) linears: each one holds an int8 copy of its input and an "
                     "int32 accumulator of its output while it runs")
    else:
        act += W.largest_cast(table)
    if pol.get("sample_activations") is not None:  # exact mode: the loaded model's traced step (nodes/estimate.py)
        act = int(pol["sample_activations"])
        notes.append(f"sample activations as traced from the loaded model (exact mode): {fmt_bytes(act)}")
    return {"act": act + held, "naive": naive, "how": how, "mask": mask}


def in_model(ctx, batch, single=False) -> int:
    """The batch in the model of a run on `batch` latent samples: the estimate's CFG factor (formula.estimate: cond and
    uncond batched, x2), as its own batch_in_model is built; single: a sampler at cfg 1, whose uncond ComfyUI skips
    (comfy/samplers.py:371; sampler_cfg.py): one conditioning."""
    return batch * (1 if single else ctx["sample_call"]["per_sample"])


def at(ctx, width, height, batch, single=False):
    """{act, naive, mask, how} of the estimate's diffusion model (ctx: its _ctx) sampling a latent of width x height
    and `batch` samples (a sampler's own: ComfyUI sizes each sampler's run on its own noise shape, batch included,
    comfy/sampler_helpers.py:121), the estimate's frames, CFG factor and policy; None where no figure of its own can be
    made: no diffusion model, or the activations were traced at the estimated size (exact mode: that trace is the only
    figure). single: a sampler at cfg 1 (in_model)."""
    s, pol = ctx.get("sample_call"), ctx["policy"]
    if not s or pol.get("sample_activations") is not None:
        return None
    key = (width, height, batch, single) + tuple(pol.get(k) for k in POLICY_KEYS)  # judged on every card tier: once a size
    if key not in s.setdefault("memo", {}):
        lat = latent(ctx["family"], width, height, ctx["frames"], batch, pol)
        s["memo"][key] = activations(ctx["family"], ctx["arch"], lat, in_model(ctx, batch, single), pol, s["table"],
                                     s["held"])
    return s["memo"][key]


# the policy's entries activations() and latent() read
POLICY_KEYS = ("compute_bytes", "attention", "attention_mask", "runner", "int8_matmul", "audio_fps", "text_tokens")
