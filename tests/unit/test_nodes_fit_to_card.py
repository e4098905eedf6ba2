"""The Fit to Card node's plan (nodes/fit_to_card.py make_plan) on stand-in objects, without ComfyUI."""
from pathlib import Path

import pytest

from gpu_garden.memory.units import GiB, MiB
from support.fit_stubs import fresh_fit_to_card
from support.fit_stubs import Samples as Tensor  # a latent's samples: only the shape is read

STUBS = Path(__file__).parent / "stubs"
FACTS = {"family": "sdxl", "arch": None, "dtype": "torch.float16", "cast_bytes": 0, "bytes": 5 * GiB, "largest": 0,
         "blocks": None, "config": "SDXL"}


class Model:
    class model:  # noqa: N801 - ModelPatcher.model stand-in
        @staticmethod
        def memory_required(shape, cond_shapes={}):
            return 1 * GiB

    model_options = {}


class VAE:
    vae_dtype = "torch.bfloat16"

    def __init__(self, device):
        self.device = device


@pytest.fixture
def fit(monkeypatch):
    mod = fresh_fit_to_card(monkeypatch, STUBS)
    monkeypatch.setattr(mod.fit_guard, "model_facts", lambda model: dict(FACTS))
    monkeypatch.setattr(mod.fit_guard, "vae_kind", lambda vae, family: "kl")
    monkeypatch.setattr(mod.fit_plan, "decode_bytes", lambda kind, shape, dtype="bf16", device="cuda": 4096 * shape[-1] * shape[-2])
    monkeypatch.setattr(mod, "host_ram", lambda *objs: None)
    return mod


def test_a_vae_on_the_cpu_is_not_tiled_from_the_gpus_room(fit, monkeypatch):
    """--cpu-vae beside a 6 GiB card: a 4096 px decode (1 GiB per sample with the stub) that does not fit the GPU's
    room after the weights must not be tiled on the CPU; on the GPU it is."""
    import torch

    from gpu_garden.nodes import host_models

    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    latent = {"samples": Tensor([1, 4, 512, 512])}
    p, _ = fit.make_plan(Model(), VAE(torch.device("cuda", 0)), None, latent, None, vram_gb=1.0)
    assert p["decode"]["tiled"] is True
    p, _ = fit.make_plan(Model(), VAE(torch.device("cpu")), None, latent, None, vram_gb=1.0)
    assert p["decode"] is None and "not tiled" in p["summary"]


def test_model_facts_reads_the_stored_bits_per_weight(monkeypatch):
    """fp8 weights with their F32 scales read ~8 bits per weight, bf16 16: what the fp8/GGUF offers start from."""
    import torch

    monkeypatch.syspath_prepend(str(STUBS))
    from gpu_garden.nodes import fit_guard as G

    monkeypatch.setitem(G._state, "facts", {})

    class T:
        def __init__(self, dtype, shape):
            self.dtype, self.shape = dtype, shape

    class Base:
        def __init__(self, sd):
            self.diffusion_model = type("DM", (), {"state_dict": lambda _self: sd})()

        def get_dtype(self):
            return torch.bfloat16

    class Patcher:
        def __init__(self, sd):
            self.model = Base(sd)

        def model_size(self):
            return 1

    fp8 = {f"blocks.{i}.w": T(torch.float8_e4m3fn, (1024, 1024)) for i in range(4)}
    fp8.update({f"blocks.{i}.scale": T(torch.float32, (1,)) for i in range(4)})
    bf16 = {f"blocks.{i}.w": T(torch.bfloat16, (1024, 1024)) for i in range(4)}
    assert 8.0 <= G.model_facts(Patcher(fp8))["weight_bits"] < 8.1
    assert G.model_facts(Patcher(bf16))["weight_bits"] == 16


def test_a_model_on_the_second_gpu_is_planned_against_that_gpu(fit, monkeypatch):
    """A MultiGPU loader puts the diffusion model on cuda:1 (8 GiB) while ComfyUI computes on cuda:0 (24 GiB): the
    node's plan and automatic mode judge the sampler against cuda:1."""
    import torch

    from gpu_garden.nodes import budget_routes, host_models

    gpus = [{"index": i, "name": f"GPU{i}", "backend": "cuda", "device": f"cuda:{i}", "total": t * GiB, "other_processes": 0}
            for i, t in ((0, 24), (1, 8))]
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    monkeypatch.setattr(budget_routes, "current_snapshot", lambda: {"devices": [dict(d) for d in gpus]})
    m = Model()
    m.load_device = torch.device("cuda", 1)
    assert fit.fit_guard.auto_context(m)["budget"] == 8 * GiB
    p, ctx = fit.make_plan(m, None, None, {"samples": Tensor([1, 4, 128, 128])})
    assert ctx["budget"] == p["budget"] == 8 * GiB and p["budget_source"].startswith("device 1")
    m.load_device = torch.device("cuda", 0)
    assert fit.make_plan(m, None, None, {"samples": Tensor([1, 4, 128, 128])})[0]["budget"] == 24 * GiB


def test_automatic_fit_reads_the_push_loops_snapshot_not_nvml_while_it_is_fresh(fit, monkeypatch):
    """Fit to Card's automatic mode asks for a budget at every sampler start and VAE decode, on ComfyUI's
    worker: with a page open it takes the push loop's snapshot of the last FRESH_S seconds; older, a new one."""
    import asyncio

    import torch

    from gpu_garden.nodes import budget_routes as br, host_models

    probes = []

    def probe_snapshot(models=None):
        probes.append(1)
        return {"devices": [{"index": 0, "name": "GPU", "backend": "cuda", "device": "cuda:0", "total": 24 * GiB,
                             "other_processes": len(probes) * GiB}], "notes": []}

    monkeypatch.setattr(br.probe, "snapshot", probe_snapshot)
    monkeypatch.setattr(br, "loaded_models", lambda: [])
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    monkeypatch.setitem(br._state, "last", None)
    clock = {"t": 100.0}
    monkeypatch.setattr(br.time, "monotonic", lambda: clock["t"])
    async def push_sample():
        return await br._sample(asyncio.get_running_loop())

    asyncio.run(push_sample())
    assert len(probes) == 1
    clock["t"] += br.FRESH_S - 0.1
    assert fit.fit_guard.auto_context(None)["budget"] == 23 * GiB and len(probes) == 1  # the pushed one
    clock["t"] += 0.2
    assert fit.fit_guard.auto_context(None)["budget"] == 22 * GiB and len(probes) == 2  # too old: read again


def test_host_ram_is_read_for_the_runs_own_models(fit, monkeypatch):
    """The loaders' weights already in RAM count as the run's (fit_guard.host_ram): make_plan passes its model, CLIP
    and VAE, and the plan judges against that figure."""
    import torch

    seen = []
    monkeypatch.setattr(fit, "host_ram", lambda *objs: seen.append(objs) or 64 * GiB)
    model, vae, clip = Model(), VAE(torch.device("cpu")), object()
    p, ctx = fit.make_plan(model, vae, clip, {"samples": Tensor([1, 4, 128, 128])}, None, vram_gb=8.0)
    assert seen == [(model, clip, vae)] and ctx["host_ram"] == 64 * GiB and p["host_ram"]["available"] == 64 * GiB
