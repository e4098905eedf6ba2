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
