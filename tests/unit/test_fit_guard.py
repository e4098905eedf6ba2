"""Fit to Card's ComfyUI adapter (nodes/fit_guard.py) on stand-in objects: the memory_required answer exists
only during the wrapped call, the VAE copy is sized/tiled while the original is untouched."""
import sys
import types

import pytest

from gpu_garden.memory.fit import plan as P
from gpu_garden.nodes import fit_guard as G


class Base:
    def memory_required(self, input_shape, cond_shapes={}):
        return 111  # "stock"


class Model:
    def __init__(self):
        self.model = Base()
        self.load_device = "cpu"


FACTS = {"family": "sd1", "arch": None, "dtype": "torch.float16", "cast_bytes": 0, "bytes": 10, "blocks": None}


def test_loader_sees_our_figure_only_inside_the_call(monkeypatch):
    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 1000 * n)
    monkeypatch.setattr(G, "_publish", lambda record: None)
    m = Model()
    seen = {}

    def prepare(model, noise_shape, conds, model_options=None, force_full_load=False):
        # what comfy.sampler_helpers.estimate_memory asks: 2B and B
        seen["req"] = model.model.memory_required([noise_shape[0] * 2] + list(noise_shape[1:]))
        seen["min"] = model.model.memory_required(list(noise_shape))
        return "loaded"

    ctx = {"facts": FACTS, "budget": None, "cfg": 7.0}
    conds = {"positive": [{}], "negative": [{}]}
    assert G.guarded(ctx, prepare, m, [1, 4, 8, 8], conds) == "loaded"
    assert seen == {"req": 2100, "min": 2100}  # 2 conds x 1000, +5 %
    assert ctx["supplied"]["memory_required"] == 2100 and ctx["supplied"]["stock_memory_required"] == 111
    assert ctx["supplied"]["consulted"] is True
    assert m.model.memory_required([2, 4, 8, 8]) == 111  # restored: the class method again
    assert "memory_required" not in m.model.__dict__

    ctx["cfg"] = 1.0  # cfg 1: ComfyUI skips the uncond
    G.guarded(ctx, prepare, m, [1, 4, 8, 8], conds)
    assert seen["req"] == 1050

    G.guarded(ctx, lambda *a, **k: None, m, [1, 4, 8, 8], conds)  # a host that never asks
    assert ctx["supplied"]["consulted"] is False


def test_answer_removed_when_the_call_raises(monkeypatch):
    monkeypatch.setattr(G, "_publish", lambda record: None)
    m = Model()

    def boom(*a, **k):
        raise RuntimeError("oom")

    with pytest.raises(RuntimeError):
        G.guarded({"facts": FACTS, "budget": None}, boom, m, [1, 4, 8, 8], {"positive": [{}]})
    assert "memory_required" not in m.model.__dict__


class VAE:
    latent_dim = 2

    def __init__(self):
        self.calls = []

    def decode(self, samples_in, vae_options={}):
        return "untiled"

    def decode_tiled(self, samples, **kw):
        self.calls.append(kw)
        return "tiled"

    def memory_used_decode(self, shape, dtype):
        return 5


class Samples:
    ndim = 4
    shape = (1, 4, 128, 128)


def test_vae_copy_sized_and_tiled_original_untouched():
    v = VAE()
    args = P.tile_args("kl", 768)
    s = G.sized_vae(v, "kl", args)
    assert s is not v and v.decode(Samples()) == "untiled" and v.memory_used_decode((1, 4, 128, 128), "bf16") == 5
    assert s.decode(Samples()) == "tiled"
    assert s.calls == [{"tile_x": 96, "tile_y": 96, "overlap": 12}]
    # the tiled copy sizes its load from one 96x96-latent tile
    assert s.memory_used_decode((1, 4, 128, 128), "torch.bfloat16") == P.with_margin(P.decode_bytes("kl", [1, 4, 96, 96], "bf16"))
    u = G.sized_vae(v, "kl")
    assert u.decode(Samples()) == "untiled"
    assert u.memory_used_decode((3, 4, 128, 128), "torch.float32") == P.with_margin(P.decode_bytes("kl", [1, 4, 128, 128], "fp32"))
    assert u.memory_used_encode((1, 3, 1024, 1024), "torch.float32") == P.with_margin(P.encode_bytes("kl", (1024, 1024), "fp32"))


def test_offloading_adds_room_for_two_copies_of_the_largest_weight(monkeypatch):
    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 1000 * n)
    facts = dict(FACTS, bytes=10_000, largest=100)
    assert G.required_for(facts, [1, 4, 8, 8], 2) == 2100  # no budget: activations + 5 %
    assert G.required_for(facts, [1, 4, 8, 8], 2, budget=1_000_000) == 2100  # everything fits: no copies
    assert G.required_for(facts, [1, 4, 8, 8], 2, budget=12_000) == 2310  # (2000 + 2 x 100) x 1.05


def test_a_failure_of_ours_falls_back_to_comfyuis_figure(monkeypatch):
    """Our estimate raising must never fail the user's sampling: ComfyUI's own figure is used, health says why."""
    monkeypatch.setattr(G, "_publish", lambda record: None)

    def broken(*a, **k):
        raise ValueError("estimate broke")

    monkeypatch.setattr(G, "required_for", broken)
    m = Model()
    seen = {}

    def prepare(model, noise_shape, conds, model_options=None, force_full_load=False):
        seen["req"] = model.model.memory_required(list(noise_shape))
        return "loaded"

    assert G.guarded({"facts": FACTS, "budget": None}, prepare, m, [1, 4, 8, 8], {"positive": [{}]}) == "loaded"
    assert seen["req"] == 111  # stock
    assert G.FEATURE.working is False and "estimate broke" in (G.FEATURE.last_error or "")


def test_context_windows_count_one_window_of_frames(monkeypatch):
    # comfy/context_windows.py's handler: dim 2, context_length 5 latent frames -> the sampler runs 5 of 21 at a time
    class Handler:
        dim, context_length = 2, 5

    assert G.windowed_shape({"context_handler": Handler()}, (1, 16, 21, 60, 104)) == [1, 16, 5, 60, 104]
    assert G.windowed_shape({}, (1, 16, 21, 60, 104)) == [1, 16, 21, 60, 104]
    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 1000 * s[2])
    monkeypatch.setattr(G, "_publish", lambda record: None)
    seen = {}

    def prepare(model, noise_shape, conds, model_options=None, force_full_load=False):
        seen["req"] = model.model.memory_required(list(noise_shape))
        return "loaded"

    ctx = {"facts": FACTS, "budget": None, "cfg": None}
    G.guarded(ctx, prepare, Model(), [1, 16, 21, 60, 104], {"positive": [{}]}, model_options={"context_handler": Handler()})
    assert seen["req"] == 5250  # 5 frames x 1000, +5 %


def test_a_host_whose_prepare_sampling_has_no_force_full_load_keeps_sampling(monkeypatch):
    """ComfyUI before PR 11390 (December 2025; V3 nodes exist since mid-2025): prepare_sampling(model, noise_shape,
    conds, model_options=None) has no force_full_load. Our wrappers are installed at start whatever the setting:
    they must hand ComfyUI exactly the arguments its sampler gave, or every KSampler fails with a TypeError."""
    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 1000 * n)
    monkeypatch.setattr(G, "_publish", lambda record: None)
    seen = []

    def old_prepare(model, noise_shape, conds, model_options=None):  # the older host's signature
        seen.append(model.model.memory_required(list(noise_shape)))
        return "loaded"

    monkeypatch.setitem(G._state, "installed", True)
    monkeypatch.setattr(G, "has_node_wrapper", lambda model: False)
    for on in (False, True):  # automatic mode off (the default), then on
        monkeypatch.setattr(G, "enabled", lambda on=on: on)
        monkeypatch.setattr(G, "model_facts", lambda model: dict(FACTS))
        monkeypatch.setattr(G, "auto_context", lambda model: {"origin": "auto", "budget": None, "reserve": 0, "cfg": None,
                                                             "context": 0})
        wrapped = G._wrap(old_prepare)
        assert wrapped(Model(), [1, 4, 8, 8], {"positive": [{}]}, {"transformer_options": {}}) == "loaded"
        assert wrapped(Model(), [1, 4, 8, 8], {"positive": [{}]}, model_options={}) == "loaded"
    assert seen == [111, 111, 1050, 1050]  # stock while off, ours while on
    # the node's PREPARE_SAMPLING wrapper gets ComfyUI's executor, called the same way
    ctx = {"facts": FACTS, "budget": None, "cfg": None}
    assert G._prepare_wrapper(ctx, old_prepare, Model(), [1, 4, 8, 8], {"positive": [{}]}, {}) == "loaded"


def test_model_facts_blocks_are_the_longest_numbered_list(monkeypatch):
    """A FLUX-like model: 2 double blocks of 3x64x64 and 3 single blocks of 64x64 fp16. A wrapper's block swap moves
    one list (the longest), so the offer counts 3 blocks of 8 KiB, not 5 blocks across both lists."""
    import torch

    net = torch.nn.Module()
    for name, n, k in (("double_blocks", 2, 3), ("single_blocks", 3, 1)):
        lst = torch.nn.ModuleList()
        for _ in range(n):
            blk = torch.nn.Module()
            for j in range(k):
                blk.register_buffer(f"w{j}", torch.zeros(64, 64, dtype=torch.float16))
            lst.append(blk)
        setattr(net, name, lst)

    class B:
        diffusion_model = net

    class M:
        model = B()

        def model_size(self):
            return 0

    # nodes/estimate.py imports comfy_api; its table_of is what matters here
    stub = types.SimpleNamespace(table_of=lambda m: {k: ("F16", tuple(t.shape)) for k, t in m.state_dict().items()})
    monkeypatch.setitem(sys.modules, G.__name__.rsplit(".", 1)[0] + ".estimate", stub)
    facts = G.model_facts(M())
    assert facts["blocks"] == {"count": 3, "bytes": 64 * 64 * 2}


def test_a_model_we_do_not_cover_runs_comfyuis_call_once_even_when_it_raises(monkeypatch):
    """Stable Audio's [1, 64, 1024] keeps ComfyUI's figure: an OOM (or interrupt) inside ComfyUI's prepare_sampling
    is the user's, raised once, not caught as ours and the model loaded a second time."""
    monkeypatch.setattr(G, "_publish", lambda record: None)
    calls = []

    def boom(*a, **k):
        calls.append(1)
        raise RuntimeError("oom")

    with pytest.raises(RuntimeError, match="oom"):
        G.guarded({"facts": dict(FACTS, family="unknown"), "budget": None}, boom, Model(), [1, 64, 1024], {"positive": [{}]})
    assert len(calls) == 1
    ctx = {"facts": FACTS, "budget": None}
    assert G.guarded(ctx, lambda *a, **k: "loaded", Model(), [1, 64, 1024], {"positive": [{}]}) == "loaded"
    assert ctx["supplied"]["kept"] == "comfyui" and ctx["supplied"]["memory_required"] is None


def test_the_check_at_sampling_reads_the_nodes_file_names(monkeypatch):
    """The node's plan and the one made again when the sampler starts judge host RAM on the same files (ctx["files"],
    from the queued prompt): FLUX.1-dev's DiT, 23802816640 B, on 80 GiB with Dynamic VRAM and mapped files, 16 GiB RAM.
    A .safetensors is file pages (fits, slower); the same DiT as a .ckpt is read by torch.load: short, does not fit.
    Without the files the sampling-time plan said fits where the node's face said host RAM short."""
    monkeypatch.setattr(G, "_publish", lambda record: None)
    monkeypatch.setattr(G, "dynamic_vram", lambda: True)
    monkeypatch.setattr(G, "weights_mmap", lambda: "on")
    monkeypatch.setattr(G, "_encoders_on_device", lambda model: False)
    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 2 << 30)
    facts = dict(FACTS, family="flux", bytes=23802816640)
    fits = {}
    for name in ("flux1-dev.safetensors", "flux1-dev.ckpt"):
        ctx = {"facts": facts, "budget": 80 << 30, "host_ram": 16 << 30, "cfg": 1.0,
               "files": {"diffusion_model": [name]}}
        G.guarded(ctx, lambda *a, **k: "loaded", Model(), [1, 16, 128, 128], {"positive": [{}]})
        fits[name] = ctx["supplied"]["fits"]
    assert fits == {"flux1-dev.safetensors": True, "flux1-dev.ckpt": False}


def test_the_log_line_names_the_prompts_as_the_faces_do(monkeypatch, caplog):
    """ui49: the log said "(ours, 2 conditioning(s) batched; ...)" where both faces say "2 prompts run together each
    step" (ui48 changed the faces only): one wording, nodes/fit_guard.prompts_per_step, in all three."""
    import logging
    import pathlib
    import re

    monkeypatch.setattr(P, "activation_bytes", lambda f, s, d="bf16", n=1, a=None, t=None: 1000 * n)
    monkeypatch.setattr(G, "_publish", lambda record: None)
    prepare = lambda model, noise_shape, conds, model_options=None, force_full_load=False: "loaded"  # noqa: E731
    conds = {"positive": [{}], "negative": [{}]}
    with caplog.at_level(logging.INFO, logger="gpu_garden"):
        G.guarded({"facts": FACTS, "budget": None, "cfg": 7.0}, prepare, Model(), [1, 4, 8, 8], conds)
        G.guarded({"facts": FACTS, "budget": None, "cfg": 1.0}, prepare, Model(), [1, 4, 8, 8], conds)
    lines = [r.getMessage() for r in caplog.records if "Fit to Card: ComfyUI's loader gets" in r.getMessage()]
    assert len(lines) == 2, lines
    assert "(ours, 2 prompts run together each step; stock 111)" in lines[0], lines[0]
    assert "(ours, one prompt per step; stock 111)" in lines[1], lines[1]
    assert not any("conditioning" in line for line in lines), lines
    # the page's face (web/fit_to_card.js, not importable outside the page) words it the same way
    js = (pathlib.Path(G.__file__).resolve().parents[1] / "web" / "fit_to_card.js").read_text()
    m = re.search(r'const promptsPerStep = \(n\) => \(n === 1 \? "([^"]+)" : `\$\{n\}([^`]+)`\);', js)
    assert m and (m.group(1), "2" + m.group(2)) == (G.prompts_per_step(1), G.prompts_per_step(2)), m
