"""The Fit to Card node and its sampler wrapper on stand-in objects, without ComfyUI: a model our estimate does not
cover keeps ComfyUI's own memory_required, as automatic mode does."""
import importlib
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.units import GiB

STUBS = Path(__file__).parent / "stubs"
STOCK = 40 * 2 ** 20  # ComfyUI's own figure for a small audio latent: tens of MB
AUDIO = {"family": "unknown", "arch": None, "dtype": "torch.float16", "cast_bytes": 0, "bytes": 2 * GiB, "largest": 0,
         "blocks": None, "config": "StableAudio"}


class Tensor:
    def __init__(self, shape):
        self.shape = shape


class Base:
    def memory_required(self, input_shape, cond_shapes={}):
        return STOCK


class Model:
    def __init__(self):
        self.model, self.model_options, self.load_device = Base(), {}, None

    def clone(self):
        raise AssertionError("a model our estimate does not cover is passed through, not cloned")


@pytest.fixture
def fit(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k in ("gpu_garden.nodes.fit_to_card", "gpu_garden.nodes.estimate")]:
        monkeypatch.delitem(sys.modules, k)
    mod = importlib.import_module("gpu_garden.nodes.fit_to_card")
    monkeypatch.setattr(mod, "host_ram", lambda: None)
    monkeypatch.setattr(mod.fit_guard, "_publish", lambda record: None)
    return mod


def test_an_unknown_family_keeps_comfyuis_figure_on_the_node(fit, monkeypatch):
    """Stable Audio's latent [1, 64, 1024]: the node hands ComfyUI nothing of ours and says so."""
    monkeypatch.setattr(fit.fit_guard, "model_facts", lambda model: dict(AUDIO))
    m = Model()
    out = fit.GPUGardenFitToCard.execute(m, latent={"samples": Tensor([1, 64, 1024])}, vram_gb=8.0)
    ui = out.ui["gpu_garden_fit"][0]
    assert out.values[0] is m and ui["applied"] == []
    assert ui["memory_required"] is None and ui["consulted"] is False and ui["kept"] == "comfyui"
    assert ui["stock_memory_required"] == STOCK
    assert ui["face"].startswith("unknown family: ComfyUI's own estimate kept") and out.ui["text"] == [ui["face"]]
    # a known family on a latent that is not an image or a video one: the same
    monkeypatch.setattr(fit.fit_guard, "model_facts", lambda model: dict(AUDIO, family="sd1"))
    out = fit.GPUGardenFitToCard.execute(m, latent={"samples": Tensor([1, 64, 1024])}, vram_gb=8.0)
    assert out.values[0] is m and out.ui["gpu_garden_fit"][0]["memory_required"] is None


def test_the_wrapper_keeps_comfyuis_figure_for_a_shape_it_does_not_cover(fit):
    """No latent on the node: the sampler's shape decides at sampling time, as automatic mode decides."""
    G = fit.fit_guard
    seen = {}

    def prepare(model, noise_shape, conds, model_options=None, force_full_load=False):
        seen["req"] = model.model.memory_required([noise_shape[0] * 2] + list(noise_shape[1:]))
        return "loaded"

    ctx = {"facts": dict(AUDIO, family="sd1"), "budget": None, "cfg": 7.0}
    assert G.guarded(ctx, prepare, Model(), [1, 64, 1024], {"positive": [{}], "negative": [{}]}) == "loaded"
    assert seen["req"] == STOCK
    assert ctx["supplied"]["consulted"] is False and ctx["supplied"]["summary"] == G.UNCALIBRATED
    ctx = {"facts": dict(AUDIO), "budget": None, "cfg": 7.0}
    G.guarded(ctx, prepare, Model(), [1, 4, 64, 64], {"positive": [{}], "negative": [{}]})
    assert seen["req"] == STOCK and ctx["supplied"]["memory_required"] is None
