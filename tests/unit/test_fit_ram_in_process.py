"""Inside ComfyUI the loader nodes have put the weights in host RAM before Fit to Card, its sampler wrapper or the
Estimate node read MemAvailable: judging the run's whole need against what is left counted those weights twice. The
run's models' CPU-resident weights are added back (nodes/fit_guard.py host_ram). Stand-in objects, no ComfyUI."""
import torch

from gpu_garden.memory.estimate import host_ram as H, verdict as V
from gpu_garden.memory.fit import plan as P
from gpu_garden.nodes import fit_guard as G

MiB = 2 ** 20
LINEAR = 1024 * 1024 * 4 + 1024 * 4  # nn.Linear(1024, 1024) in fp32: weight + bias = 4198400 B


class Patcher:  # ModelPatcher stand-in: .model and model_size()
    def __init__(self, model):
        self.model = model

    def model_size(self):
        return LINEAR


class Clip:  # CLIP / VAE stand-in: holds its patcher
    def __init__(self, patcher):
        self.patcher = patcher


def test_weights_already_in_ram_count_once(monkeypatch):
    monkeypatch.setattr(V, "host_available_ram", lambda: 2 * MiB)
    dm, te = Patcher(torch.nn.Linear(1024, 1024)), Patcher(torch.nn.Linear(1024, 1024))
    clone = Patcher(dm.model)  # a clone shares its model: counted once
    assert G.host_ram() == 2 * MiB
    assert G.host_ram(dm, clone) == 2 * MiB + LINEAR
    assert G.host_ram(dm, Clip(te), None) == 2 * MiB + 2 * LINEAR
    meta = Patcher(torch.nn.Linear(1024, 1024, device="meta"))  # not in RAM: nothing to add
    assert G.host_ram(meta) == 2 * MiB


def test_dynamic_vram_run_holding_its_weights_is_not_short(monkeypatch):
    """A 4198400 B diffusion model with Dynamic VRAM (its CPU copy stays) on a 1 GiB card; the loader holds it in RAM and
    2 MiB are left. Need 4198400 against 2 MiB: short, does NOT fit (the double count); against 2 MiB + 4198400 =
    6295552 it is 0.67 of it: fits."""
    monkeypatch.setattr(V, "host_available_ram", lambda: 2 * MiB)
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)
    dm = Patcher(torch.nn.Linear(1024, 1024))
    kw = dict(weights={"diffusion_model": LINEAR}, memory_required=64 * MiB, dynamic_vram=True)
    assert P.plan(1024 * MiB, host_ram=2 * MiB, **kw)["fits"] is False  # what the node judged before
    p = P.plan(1024 * MiB, host_ram=G.host_ram(dm), **kw)
    assert p["host_ram"]["available"] == 6295552 and p["host_ram"]["needed"] == LINEAR and p["fits"] is True


def test_the_node_passes_the_runs_models(monkeypatch):
    """fit_to_card.make_plan and the sampler wrapper read host RAM for the run's own objects."""
    seen = []
    monkeypatch.setattr(G, "budget_now", lambda source: (None, "test"))
    monkeypatch.setattr(G, "host_ram", lambda *objs: seen.append(objs) or 0)
    ctx = {"source": {"vram_gb": 0}}
    model = object()
    G.live_context(ctx, model)
    assert seen == [(model,)] and ctx["host_ram"] == 0


def test_weights_mmap_reads_what_comfy_utils_does(monkeypatch):
    """ComfyUI 0.8.0's comfy.utils has no load_safetensors (safe_open, then load_state_dict copies): off, whatever
    comfy-aimdo ships. A comfy.utils with it maps files when comfy.memory_management.aimdo_enabled: on; then the
    weights are page cache, counted in MemAvailable already, and host_ram adds nothing back."""
    import sys
    import types

    monkeypatch.setattr(V, "host_available_ram", lambda: 2 * MiB)
    monkeypatch.delitem(sys.modules, "comfy.utils", raising=False)
    assert G.weights_mmap() == "auto"
    monkeypatch.setitem(sys.modules, "comfy.utils", types.SimpleNamespace(load_torch_file=lambda *a: None))
    assert G.weights_mmap() == "off"
    dm = Patcher(torch.nn.Linear(1024, 1024))
    assert G.host_ram(dm) == 2 * MiB + LINEAR
    monkeypatch.setitem(sys.modules, "comfy.utils", types.SimpleNamespace(load_safetensors=lambda *a: None))
    monkeypatch.setitem(sys.modules, "comfy.memory_management", types.SimpleNamespace(aimdo_enabled=False))
    assert G.weights_mmap() == "off"
    monkeypatch.setitem(sys.modules, "comfy.memory_management", types.SimpleNamespace(aimdo_enabled=True))
    assert G.weights_mmap() == "on" and G.host_ram(dm) == 2 * MiB
