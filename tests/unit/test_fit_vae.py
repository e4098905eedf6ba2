"""Automatic mode's VAE sizing (nodes/fit_vae.py) on a stand-in VAE: our figure only while the call runs,
ComfyUI's attribute back afterwards, tiles from the budget when one sample does not fit, ComfyUI's own call
when the setting is off, the VAE went through a node, or our own work fails."""
import pytest

from gpu_garden.memory.fit import plan as P
from gpu_garden.memory.units import MiB
from gpu_garden.nodes import fit_vae as V
from support.fit_stubs import VAE, Samples


@pytest.fixture
def wrapped(monkeypatch):
    monkeypatch.setitem(V._state, "installed", True)
    monkeypatch.setitem(V._state, "last", None)
    monkeypatch.setattr(V, "auto_vae_kind", lambda vae: "kl")
    state = {"on": True, "ctx": {"budget": None}}
    dec = V._wrap_decode(VAE.decode, lambda: state["on"], lambda: state["ctx"])
    enc = V._wrap_encode(VAE.encode, lambda: state["on"])
    return state, dec, enc


def test_our_figure_only_during_the_call(wrapped):
    state, dec, enc = wrapped
    v, s = VAE(), Samples((2, 4, 64, 64))
    assert dec(v, s) == "untiled"
    ours = P.with_margin(P.decode_bytes("kl", [1, 4, 64, 64], "fp32"))
    assert v.seen == [("decode", ours)] and ours != 111
    assert v.memory_used_decode((1, 4, 64, 64), "x") == 111  # ComfyUI's attribute is back
    assert V._state["last"]["memory_used_decode"] == ours and V._state["last"]["tiled"] is False
    assert enc(v, Samples((1, 3, 512, 768))) == "latent"  # the shape VAE.encode sizes (after its movedim)
    assert v.seen[-1] == ("encode", P.with_margin(P.encode_bytes("kl", (768, 512), "fp32")))
    assert v.memory_used_encode(None, None) == 222


def test_off_node_copy_or_failure_leave_comfyui_alone(wrapped, monkeypatch):
    state, dec, enc = wrapped
    state["on"] = False
    v = VAE()
    dec(v, Samples((1, 4, 64, 64)))
    assert v.seen == [("decode", 111)]
    state["on"] = True
    v = VAE()
    v.gpu_garden_fit = {"kind": "kl"}  # the node's sized copy sizes itself
    dec(v, Samples((1, 4, 64, 64)))
    assert v.seen == [("decode", 111)]

    def boom(vae):
        raise RuntimeError("ours failed")

    monkeypatch.setattr(V, "auto_vae_kind", boom)
    v = VAE()
    assert dec(v, Samples((1, 4, 64, 64))) == "untiled" and v.seen == [("decode", 111)]


def test_tiled_from_the_budget_when_one_sample_does_not_fit(wrapped, monkeypatch):
    # stub: 4096 bytes per latent pixel; a 1024 px image (128 x 128 latent) needs 64 MiB x 1.05 > 40 MiB of room:
    # the largest tile that fits is 768 px (96 x 96 latent: 36 MiB x 1.05), as in test_fit_plan.py
    state, dec, enc = wrapped
    monkeypatch.setattr(P, "decode_bytes", lambda kind, shape, dtype="bf16", device="cuda": 4096 * shape[-1] * shape[-2])
    state["ctx"] = {"budget": 40 * MiB, "reserve": 0, "context": 0}
    v = VAE()
    assert dec(v, Samples((1, 4, 128, 128))) == "tiled"
    assert v.seen == [("tiled", int(36 * MiB * 1.05), {"tile_x": 96, "tile_y": 96, "overlap": 12})]
    assert V._state["last"]["tiled"] is True


def test_a_vae_off_the_compute_device_is_sized_never_tiled_from_the_gpu_budget(wrapped, monkeypatch):
    """--cpu-vae: ComfyUI decodes on the CPU beside a GPU budget. One sample larger than the GPU's room must not
    send a CPU decode to tiles (tiles change the image and there is no VRAM to save); it is sized, untiled."""
    import torch

    from gpu_garden.nodes import host_models

    state, dec, enc = wrapped
    monkeypatch.setattr(P, "decode_bytes", lambda kind, shape, dtype="bf16", device="cuda": 4096 * shape[-1] * shape[-2])
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    state["ctx"] = {"budget": 40 * MiB, "reserve": 0, "context": 0}
    v = VAE()
    v.device = torch.device("cpu")
    assert dec(v, Samples((1, 4, 128, 128))) == "untiled"
    assert v.seen == [("decode", int(64 * MiB * 1.05))] and V._state["last"]["tiled"] is False
    v = VAE()
    v.device = torch.device("cuda", 0)  # on the budget's device: tiled as before
    assert dec(v, Samples((1, 4, 128, 128))) == "tiled"


def test_an_error_in_our_figure_falls_back_to_comfyuis(wrapped, monkeypatch):
    """ComfyUI calls memory_used_encode/decode inside a try that catches only OOM: our estimate raising on a shape
    it does not know must give ComfyUI's own figure, never fail the user's encode or decode (automatic mode and
    the node's VAE copy)."""
    state, dec, enc = wrapped

    def broken(*a, **k):
        raise ValueError("no such VAE layout")

    monkeypatch.setattr(P, "encode_bytes", broken)
    v = VAE()
    assert enc(v, Samples((1, 3, 512, 512))) == "latent" and v.seen == [("encode", 222)]
    copy = V.sized_vae(VAE(), "kl")
    assert copy.memory_used_encode((1, 3, 512, 512), "torch.float32") == 222
    monkeypatch.setattr(P, "decode_bytes", broken)
    assert copy.memory_used_decode((1, 4, 64, 64), "torch.float32") == 111
    v = VAE()
    assert dec(v, Samples((1, 4, 64, 64))) == "untiled" and v.seen == [("decode", 111)]
