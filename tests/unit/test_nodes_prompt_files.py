"""The queued prompt's file names reach the Footprint Estimate and Fit to Card nodes (hidden prompt and unique_id): a
.ckpt loader upstream of the node makes its DiT anonymous memory (torch.load), the same .ckpt on another branch of the
prompt does not. FLUX.1-dev's DiT, 23802816640 B, on 80 GiB with Dynamic VRAM and mapped files and 16 GiB of RAM:
as a .safetensors its CPU copy is file pages (fits, slower), as a .ckpt it is a hard need over 16 GiB (does not fit)."""
import types
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import families, layouts
from gpu_garden.memory.units import GiB
from support.fit_stubs import Samples, fresh_node

STUBS = Path(__file__).parent / "stubs"
DIT = 23802816640


def prompt(dit: str, node: str, other=False) -> dict:
    """API format: UNETLoader -> LoRA -> the node; other: an SD1.5 .ckpt pass on a branch of its own."""
    p = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": dit, "weight_dtype": "default"}},
         "2": {"class_type": "DualCLIPLoader", "inputs": {"clip_name1": "t5xxl_fp16.safetensors", "clip_name2": "clip_l.safetensors",
                                                         "type": "flux"}},
         "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
         "4": {"class_type": "LoraLoaderModelOnly", "inputs": {"model": ["1", 0], "lora_name": "a.safetensors", "strength_model": 1.0}},
         "9": {"class_type": node, "inputs": {"model": ["4", 0], "clip": ["2", 0], "vae": ["3", 0]}}}
    if other:
        p["20"] = {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "v1-5-pruned-emaonly.ckpt"}}
        p["21"] = {"class_type": "KSampler", "inputs": {"model": ["20", 0], "cfg": 7.0}}
    return p


CASES = [("flux1-dev.ckpt", False, False), ("flux1-dev.safetensors", True, True)]  # (DiT file, other branch, fits)


class Base:
    model_config = None

    def memory_required(self, shape, cond_shapes={}):
        return 1 << 30


@pytest.fixture
def estimate(monkeypatch):
    node = fresh_node(monkeypatch, STUBS, "estimate")
    from gpu_garden.nodes import fit_guard

    comps = []
    for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae"):
        comps += families.split_components(layouts.table(n), n)
    pol = {"cast_fp32": False, "compute_bytes": 2, "device": "cuda", "platform": "linux", "reserve": None, "dynamic_vram": "on"}
    monkeypatch.setattr(node, "model_components", lambda model, clip, vae: ([dict(c) for c in comps], dict(pol)))
    monkeypatch.setattr(fit_guard, "host_ram", lambda *objs: 16 * GiB)
    monkeypatch.setattr(fit_guard, "weights_mmap", lambda: "on")
    monkeypatch.setattr(node.estimate_measured, "lookup", lambda *a, **k: None)
    return node


@pytest.mark.parametrize("dit,other,fits", CASES)
def test_the_estimate_node_reads_the_files_feeding_it(estimate, monkeypatch, dit, other, fits):
    """when_it_does_not_fit=stop stops the .ckpt run; the .safetensors run with a .ckpt on another branch goes on."""
    node = estimate.GPUGardenFootprintEstimate
    monkeypatch.setattr(node, "hidden", types.SimpleNamespace(prompt=prompt(dit, "GPUGardenFootprintEstimate", other),
                                                              unique_id="9"), raising=False)
    model, latent = types.SimpleNamespace(model=Base(), load_device=None), {"samples": Samples([1, 16, 128, 128])}
    if not fits:
        with pytest.raises(estimate.FootprintDoesNotFit):
            node.execute(model, latent=latent, clip=object(), vae=object(), vram_gb=80.0, when_it_does_not_fit="stop")
        return
    out = node.execute(model, latent=latent, clip=object(), vae=object(), vram_gb=80.0, when_it_does_not_fit="stop")
    ui = out.ui["gpu_garden_estimate"][0]
    assert ui["outcome"]["status"] == "fits" and ui["host_ram"]["hard_need"] == 0, (ui["outcome"], ui.get("host_ram"))


@pytest.fixture
def fit(monkeypatch):
    mod = fresh_node(monkeypatch, STUBS, "fit_to_card")
    facts = {"family": "flux", "arch": None, "dtype": "torch.bfloat16", "cast_bytes": 0, "bytes": DIT, "largest": 0,
             "blocks": None, "config": "Flux"}
    monkeypatch.setattr(mod.fit_guard, "model_facts", lambda model: dict(facts))
    monkeypatch.setattr(mod.fit_guard, "dynamic_vram", lambda: True)
    monkeypatch.setattr(mod.fit_guard, "weights_mmap", lambda: "on")
    monkeypatch.setattr(mod.fit_guard, "_publish", lambda record: None)
    monkeypatch.setattr(mod, "host_ram", lambda *objs: 16 * GiB)
    return mod


@pytest.mark.parametrize("dit,other,fits", CASES)
def test_fit_to_card_reads_the_files_feeding_it(fit, monkeypatch, dit, other, fits):
    """The node's plan (its face) and the ctx its sampler wrapper plans from again both carry the node's own files."""
    node = fit.GPUGardenFitToCard
    p = prompt(dit, "GPUGardenFitToCard", other)
    monkeypatch.setattr(node, "hidden", types.SimpleNamespace(prompt=p, unique_id="9"), raising=False)
    seen = {}
    monkeypatch.setattr(fit.fit_guard, "attach", lambda model, ctx: seen.setdefault("ctx", ctx) and model)
    model = types.SimpleNamespace(model=Base(), load_device=None, model_options={})
    out = node.execute(model, latent={"samples": Samples([1, 16, 128, 128])}, vram_gb=80.0, mode="apply")
    ui = out.ui["gpu_garden_fit"][0]
    assert (ui["fits"], ui["host_ram_short"], ui["host_ram"]["hard_need"]) == (fits, not fits, 0 if fits else DIT)
    assert seen["ctx"]["files"]["diffusion_model"] == [dit]
