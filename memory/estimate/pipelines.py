"""A graph with two pipelines: the main model's and a preprocessor's with its own VAE (a Lotus depth model and the SD
VAE beside FLUX.1, SD3.5, Qwen-Image or LTX-2: flux_depth_lora_example, sd3.5_large_depth,
image_qwen_image_instantx_controlnet and video_ltx2_depth_to_video in comfyui-workflow-templates 0.7.67; wf65). The
VAE whose latent channels are not the diffusion model's decodes the other pipeline's latent; where another VAE does
match, that one is the model's and the other is left out with an assumption line, not refused as a VAE that cannot
decode the model's latent (families.check_vae_channels still refuses a graph whose only VAE does not match).
A checkpoint's own VAE does not count as the matching one: a VAELoader beside a checkpoint is most often the VAE the
user decodes with instead of the checkpoint's, and one of another latent is the classic mistake the estimate refuses
(tests/host/test_estimate_node.py); so sd3.5_large_depth (a checkpoint and the Lotus SD VAE) stays refused."""
from . import families


def other_vaes(comps):
    """(comps without the VAEs of another pipeline, [assumption lines]): only where a VAE that matches stays."""
    vaes = [c for c in comps if c["role"] == "vae"]
    if len(vaes) < 2:
        return comps, []
    rest = [c for c in comps if c["role"] != "vae"]
    dm = {c.get("source") for c in comps if c["role"] == "diffusion_model"}
    match = [c for c in vaes if families.vae_mismatch(rest + [c]) is None]
    ok = [c for c in match if c.get("source") not in dm]  # a VAE of its own, not a checkpoint's
    if not ok or len(match) == len(vaes):  # every VAE matches: all stay (ComfyUI loads a checkpoint's VAE too; rev62 F3)
        return comps, []
    drop = [c for c in vaes if c not in match]
    notes = [f"{c.get('source') or 'a VAE'}: a VAE of another latent than the diffusion model's, beside its own "
             f"({', '.join(str(k.get('source') or 'VAE') for k in ok)}): another pipeline's (a depth or other "
             "preprocessor model's), not counted" for c in drop]
    return [c for c in comps if not any(c is d for d in drop)], notes
