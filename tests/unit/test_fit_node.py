"""The Fit to Card node and its sampler wrapper on stand-in objects, without ComfyUI: a model our estimate does not
cover keeps ComfyUI's own memory_required, as automatic mode does; the budget is read when the sampler and the
decode run, not when the node ran; each user reads their own last plans."""
from pathlib import Path

import pytest

from gpu_garden.memory.units import GiB
from gpu_garden.nodes import fit_guard as _G
from support.fit_stubs import VAE, Samples, fresh_fit_to_card
from support.fit_stubs import Samples as Tensor  # a latent's samples: only the shape is read

STUBS = Path(__file__).parent / "stubs"
PUBLISH = _G._publish
STOCK = 40 * 2 ** 20  # ComfyUI's own figure for a small audio latent: tens of MB
AUDIO = {"family": "unknown", "arch": None, "dtype": "torch.float16", "cast_bytes": 0, "bytes": 2 * GiB, "largest": 0,
         "blocks": None, "config": "StableAudio"}


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
    mod = fresh_fit_to_card(monkeypatch, STUBS)
    monkeypatch.setattr(mod, "host_ram", lambda *objs: None)
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


def test_the_vae_copy_plans_each_decode_from_the_budget_of_that_moment(fit):
    """ComfyUI caches the node's outputs: the copy's tile must follow the budget when the decode runs, not the one
    the node saw. 512 px (64 x 64 latent, fp32 SD VAE) decodes whole on 8 GiB, in tiles on 1.25 GiB, whole again on 8."""
    from gpu_garden.memory.fit import plan as P

    V = fit.fit_guard.fit_vae
    budget = {"now": 8 * GiB}
    ctx = {"budget": None, "reserve": 400 * 2 ** 20, "context": 0, "device": None}
    copy = V.sized_vae(VAE(), "kl", lambda: dict(ctx, budget=budget["now"]))
    s = Samples((1, 4, 64, 64))
    assert copy.decode(s) == "untiled"
    per = P.with_margin(P.decode_bytes("kl", [1, 4, 64, 64], "fp32"))
    assert copy.seen[-1] == ("decode", per)
    budget["now"] = int(1.25 * GiB)
    assert copy.decode(s) == "tiled"
    tile = P.decode_tile("kl", [1, 4, 64, 64], "fp32", budget["now"] - 400 * 2 ** 20)
    assert 128 <= tile["tile_px"] < 512 and copy.seen[-1][:2] == ("tiled", tile["bytes"]) and copy.seen[-1][2]["tile_x"] == tile["tile_px"] // 8
    assert V._state["last"]["tiled"] is True and V._state["last"]["budget"] == budget["now"]
    budget["now"] = 8 * GiB
    assert copy.decode(s) == "untiled" and copy.seen[-1] == ("decode", per)


def test_the_sampler_gets_the_figure_of_the_budget_when_it_starts(fit, monkeypatch):
    """The node's clone plans at prepare_sampling from fit_guard.budget_now, not from the budget it ran with."""
    from gpu_garden.memory.fit import plan as P

    G = fit.fit_guard
    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 100 * 2 ** 20 * n)
    monkeypatch.setattr(G, "min_weight_ratio", lambda: 0.0)
    monkeypatch.setattr(G, "_encoders_on_device", lambda model: 0)
    facts = dict(AUDIO, family="sd1", bytes=4 * GiB, largest=2 ** 20)
    budget = {"now": 24 * GiB}
    monkeypatch.setattr(G, "budget_now", lambda source: (budget["now"], "test"))
    ctx = {"facts": facts, "source": {"vram_gb": 0}, "budget": 24 * GiB, "reserve": 0, "context": 0, "cfg": 7.0}
    conds = {"positive": [{}], "negative": [{}]}
    G.guarded(ctx, lambda *a, **k: None, Model(), [1, 4, 64, 64], conds)
    assert ctx["supplied"]["budget"] == 24 * GiB and ctx["supplied"]["steps"] == []
    budget["now"] = 3 * GiB
    G.guarded(ctx, lambda *a, **k: None, Model(), [1, 4, 64, 64], conds)
    rec = ctx["supplied"]
    assert rec["budget"] == 3 * GiB and rec["memory_required"] == P.with_margin(200 * 2 ** 20 + 2 * 2 ** 20)  # + two copies
    assert [s["id"] for s in rec["steps"]] == ["weights_on_gpu"]


def test_a_wired_budget_reads_the_model_devices_bytes_now(fit, monkeypatch):
    """With a VRAM Budget snapshot wired in, the bytes are the model device's, read now (another process took 3 GiB
    since the node ran), not the wired snapshot's."""
    import torch

    from gpu_garden.nodes import budget_routes

    def dev(i, total, other):
        return {"index": i, "name": f"GPU{i}", "backend": "cuda", "device": f"cuda:{i}", "total": total * GiB,
                "other_processes": other * GiB}

    wired = {"devices": [dev(1, 8, 0)]}
    monkeypatch.setattr(budget_routes, "recent_snapshot", lambda: {"devices": [dev(0, 24, 0), dev(1, 8, 3)]})
    assert fit.fit_guard.budget_now({"budget": wired, "vram_gb": 0, "device": torch.device("cuda", 1)})[0] == 5 * GiB
    assert fit.fit_guard.budget_now({"budget": wired, "vram_gb": 2.0, "device": torch.device("cuda", 1)})[0] == 2 * GiB


def test_each_user_reads_the_plans_of_their_own_prompts(fit, monkeypatch):
    """GET /gpu_garden/fit (status) answers the asking user's last plans, not the last of whoever ran."""
    G = fit.fit_guard
    monkeypatch.setattr(G, "_publish", PUBLISH)  # the real one (the fixture stubs it)
    monkeypatch.setattr(G.fit_vae, "_users", {})
    monkeypatch.setattr(G, "enabled", lambda user=None: False)
    running = {"user": "alice"}
    monkeypatch.setattr(G.fit_vae, "running_user", lambda: running["user"])
    G._publish({"origin": "node", "budget": 12})
    running["user"] = "bob"
    G._publish({"origin": "auto", "budget": 6})
    assert G.status("alice")["last"] == {"origin": "node", "budget": 12} and G.status("alice")["last_auto"] is None
    assert G.status("bob")["last"] == G.status("bob")["last_auto"] == {"origin": "auto", "budget": 6}
    assert G.status("carol")["last"] is None and G.status()["user"] == "bob"


def test_a_wired_vram_budget_does_not_pick_the_card(fit, monkeypatch):
    """VRAM Budget's output is the whole snapshot (every device it measured): wired or not, the budget is the model's
    device's, read now; the tooltip must not promise a card choice the input does not make."""
    import torch

    from gpu_garden.nodes import budget_routes

    def dev(i, total, other):
        return {"index": i, "name": f"GPU{i}", "backend": "cuda", "device": f"cuda:{i}", "total": total * GiB,
                "other_processes": other * GiB}

    snap = {"devices": [dev(0, 24, 0), dev(1, 8, 0)]}  # what VRAM Budget outputs on a two-GPU machine
    monkeypatch.setattr(budget_routes, "recent_snapshot", lambda: snap)
    on0 = {"vram_gb": 0, "device": torch.device("cuda", 0)}
    assert fit.fit_guard.budget_now(dict(on0, budget=snap))[0] == fit.fit_guard.budget_now(dict(on0, budget=None))[0] == 24 * GiB
    port = next(i for i in fit.GPUGardenFitToCard.define_schema().inputs if i.args and i.args[0] == "budget")
    assert "picks the card" not in port.kwargs["tooltip"] and "model's device either way" in port.kwargs["tooltip"]


def test_the_text_face_names_the_prompts_in_words(fit):
    """ui48: "(2 conditioning(s) batched)" read as jargon; the node's text output words it as the page's face does."""
    p = {"summary": "s", "latent_shape": [1, 4, 8, 8], "memory_required": 4 << 20, "stock_memory_required": 19 << 20,
         "cond_batch": 2, "offers": []}
    assert fit.face(p, "apply") == "s\nmemory_required for ComfyUI's loader: 4.00 MiB (2 prompts run together each step; " \
                                   "ComfyUI's own figure 19.00 MiB)"
    assert "(one prompt per step;" in fit.face(dict(p, cond_batch=1), "apply")
