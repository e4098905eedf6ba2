"""Test-only: records every comfy.model_management.load_models_gpu call (which models, memory_required,
minimum_memory_required) so a host test can see the figures ComfyUI's loader received. GGTestLoadCalls
returns the calls made since it last ran, and clears them. Linked into the host by the test harness only."""
import functools

import comfy.model_management as mm

from .report_node import ReportAfter

CALLS = []


def _record(original):
    @functools.wraps(original)
    def load_models_gpu(models, memory_required=0, force_patch_weights=False, minimum_memory_required=None, force_full_load=False):
        CALLS.append({"models": [type(getattr(m, "model", m)).__name__ for m in models],
                      "memory_required": int(memory_required),
                      "minimum_memory_required": None if minimum_memory_required is None else int(minimum_memory_required)})
        return original(models, memory_required=memory_required, force_patch_weights=force_patch_weights,
                        minimum_memory_required=minimum_memory_required, force_full_load=force_full_load)

    load_models_gpu.gg_test_probe = True
    return load_models_gpu


if not getattr(mm.load_models_gpu, "gg_test_probe", False):
    mm.load_models_gpu = _record(mm.load_models_gpu)


class GGTestLoadCalls(ReportAfter):
    def run(self, anything):
        out = list(CALLS)
        CALLS.clear()
        return {"ui": {"load_calls": out}}


NODE_CLASS_MAPPINGS = {"GGTestLoadCalls": GGTestLoadCalls}
NODE_DISPLAY_NAME_MAPPINGS = {"GGTestLoadCalls": "GG Test: load_models_gpu calls"}


class GGTestFitBudget:
    """Test-only: the budget Fit to Card reads when a sampler or a decode runs (fit_guard.budget_now), set to
    `bytes` (0: the pack's own again), as another process taking memory would change it on a GPU. Between a Fit to
    Card node and its sampler (`latent` passed through) it changes the budget inside a prompt whose Fit to Card is
    cached: a prompt of its own would end ComfyUI's cache of the previous one."""
    CATEGORY = "GPU Garden/testing"
    RETURN_TYPES = ("LATENT",)
    FUNCTION = "run"
    OUTPUT_NODE = True

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"bytes": ("INT", {"default": 0, "min": 0, "max": 2 ** 50})},
                "optional": {"latent": ("LATENT",)}}

    @classmethod
    def IS_CHANGED(cls, **kwargs):
        return float("nan")

    def run(self, bytes, latent=None):
        import sys

        (guard,) = {m for k, m in list(sys.modules.items()) if k.endswith(".nodes.fit_guard") and hasattr(m, "budget_now")}
        own = getattr(guard, "gg_test_budget_now", None) or guard.budget_now
        guard.gg_test_budget_now = own
        guard.budget_now = (lambda source: (bytes, "test budget")) if bytes else own
        return {"ui": {"budget": [bytes]}, "result": (latent,)}


NODE_CLASS_MAPPINGS["GGTestFitBudget"] = GGTestFitBudget
NODE_DISPLAY_NAME_MAPPINGS["GGTestFitBudget"] = "GG Test: Fit to Card budget"
