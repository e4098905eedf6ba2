"""Fit to Card in advise mode with no budget (ux58, walked on ComfyUI --cpu): the face read "advice only, nothing
changed · no budget: ComfyUI gets our activation figure (68.48 MiB) as memory_required; nothing else changes", and the
text output "memory_required for ComfyUI's loader: ...". Advise returns the model as it came, so ComfyUI gets
nothing: both say what apply would give."""
import torch

from gpu_garden.nodes import host_models
from test_nodes_fit_to_card import Model, Tensor, fit  # noqa: F401 - the fixture


def run(fit, monkeypatch, mode):
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cpu"))  # --cpu: no budget
    out = fit.GPUGardenFitToCard.execute(Model(), None, None, {"samples": Tensor([1, 4, 32, 32])}, None, 0.0, mode)
    return out.ui["gpu_garden_fit"][0]


def test_advise_without_a_budget_does_not_say_comfyui_gets_the_figure(fit, monkeypatch):
    ui = run(fit, monkeypatch, "advise")
    assert ui["applied"] == []
    assert "ComfyUI gets" not in ui["summary"] and "ComfyUI gets" not in ui["face"], ui["face"]
    assert ui["summary"].startswith("no budget: apply would give ComfyUI our activation figure ("), ui["summary"]
    assert "memory_required for ComfyUI's loader" not in ui["face"]
    assert "memory_required apply would give ComfyUI's loader: " in ui["face"], ui["face"]
