"""The sampler nodes of ComfyUI 0.8.0 the estimate knows, one row each: the one table the others derive from
(control_feeds.SAMPLERS: the inputs its ControlNets come through; links.SAMPLED: the latent it samples, the same size
out; reach.NON_OUTPUT: never an output node; workflow.SAMPLERS: where a UI-format workflow saves its cfg).

KSampler (nodes.py:1529), KSamplerAdvanced (nodes.py:1557), SamplerCustom (comfy_extras/nodes_custom_sampler.py:730),
SamplerCustomAdvanced (l.926: its guider, a CFGGuider / BasicGuider, holds the model, the positive and negative; its cfg
is the guider's, not its own widget)."""
from typing import NamedTuple


class Sampler(NamedTuple):
    latent: str             # its latent input: the latent it samples, returned at the same size
    conditioning: tuple     # the inputs that carry its conditioning (and so its ControlNets)
    cfg_widget: int | None  # the index of cfg in a UI-format workflow's widgets_values (after seed's control widget)
    model: tuple = ("model",)  # the inputs its MODEL comes through (and so its model patches: control_feeds.py)


SAMPLERS = {"KSampler": Sampler("latent_image", ("positive", "negative"), 3),
            "KSamplerAdvanced": Sampler("latent_image", ("positive", "negative"), 4),
            "SamplerCustom": Sampler("latent_image", ("positive", "negative"), 3),
            "SamplerCustomAdvanced": Sampler("latent_image", ("guider",), None, ("guider",))}

# the guiders SamplerCustomAdvanced samples with (comfy_extras/nodes_custom_sampler.py): CFGGuider (l.801-821) sets the
# cfg of its cfg widget, its only one (UI index 0); BasicGuider (l.776-795) sets only the positive and keeps
# CFGGuider's cfg 1.0: ComfyUI skips the uncond at cfg 1 (comfy/samplers.py:371). rev66d R5: a CFGGuider at 3.5 was
# read as CFG off (only the samplers' own cfg widgets were read)
GUIDERS = {"CFGGuider": 0}  # {node: its cfg widget's UI index}
FIXED_CFG = {"BasicGuider": 1.0}  # {node: the cfg it samples with, no widget}
