"""fix67d: audit aud67a's workflow-estimate findings (issue 15), each checked against ComfyUI 0.8.0's source.

F7: a scaled fp8 file's "scaled_fp8" marker tensor (comfy/utils.py:1217-1234: read for its dtype, then dropped) made a
phantom "diffusion model unknown 0.00 GiB" component when its prefix differed from the weights'.
F11: the open-graph route on a --cpu host judged its card tiers as on a GPU but took min_vram_gb from the fp32 figures."""
from gpu_garden.memory.estimate import families, layouts


def _fp8_flux(marker: str) -> dict:
    t = {k: ("F8_E4M3", s) if len(s) == 2 and "blocks" in k else (d, s)
         for k, (d, s) in layouts.table("flux_flux1-dev").items()}
    t[marker] = ("F8_E4M3", (0,))
    return t


def test_scaled_fp8_marker_is_no_component():
    """aud67a mkfp8.py: unprefixed FLUX weights beside a checkpoint-prefixed marker. Old code: two diffusion model
    rows, the second kind None with 0 bytes."""
    for marker in ("model.diffusion_model.scaled_fp8", "scaled_fp8"):
        parts = families.split_components(_fp8_flux(marker), "flux1-dev-fp8-scaled.safetensors")
        assert [(c["role"], c.get("family")) for c in parts] == [("diffusion_model", "flux1")], marker
        assert all(marker not in c["table"] for c in parts)


def test_prefixed_checkpoint_marker_dropped_too():
    """A whole checkpoint (every key model.diffusion_model.*) keeps one diffusion model row without the marker."""
    t = {"model.diffusion_model." + k: v for k, v in _fp8_flux("scaled_fp8").items()}
    parts = families.split_components(t, "ckpt.safetensors")
    dm = [c for c in parts if c["role"] == "diffusion_model"]
    assert len(dm) == 1 and dm[0].get("family") == "flux1" and "scaled_fp8" not in dm[0]["table"]


def test_route_min_vram_on_a_cpu_host_is_the_tiers_card(monkeypatch, tmp_path):
    """aud67a F11: SDXL base at 1024x1024 through the route on a --cpu host with vram_gb 12. The tiers are judged as
    on a GPU (fp16 U-Net, 4.78 GiB: 8 GB fits) but min_vram_gb came from the host's fp32 figures (9.56 GiB of
    weights): 12. Now the smallest card is the tiers' one, as on a CUDA host. Old code: cpu 12, cuda 8."""
    import importlib
    from pathlib import Path

    from gpu_garden.memory.estimate import verdict
    from gpu_garden.memory.units import GiB
    from support.fit_stubs import fresh_node

    routes = fresh_node(monkeypatch, Path(__file__).parent / "stubs", "estimate_routes")
    paths = {"sdxl.safetensors": str(layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "sdxl.safetensors"))}
    monkeypatch.setattr(routes, "resolve", lambda folders, name: paths.get(name))
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 64 * GiB)
    node = importlib.import_module("gpu_garden.nodes.estimate")
    monkeypatch.setattr(node, "dynamic_vram_mode", lambda: "off")
    graph = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
             "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    got = {}
    for dev in ("cpu", "cuda"):
        monkeypatch.setattr(node, "compute_device_kind", lambda d=dev: d)
        out = routes.estimate_graph({"workflow": graph, "vram_gb": 12})
        got[dev] = (out["min_vram_gb"], dict((t["gb"], t["label"]) for t in out["tiers"])[8])
    assert got == {"cpu": (8, "fits"), "cuda": (8, "fits")}
