"""What a user reads for a loaded model (ux20b): the Unload face said "SD1ClipModel left the device" and the OOM
panel's footer "loaded: AutoencoderKL"; they now say "text encoder (SD1 CLIP)" and "VAE". The class name stays the
report's identity (left_device, model_name: what recorded runs match on)."""
import types

from gpu_garden.memory.unload import report as unload_report
from gpu_garden.memory.units import MiB
from gpu_garden.nodes import host_models


def _patcher(cls_name, module, is_clip=False, config=None):
    cls = type(cls_name, (), {"__module__": module})
    model = cls()
    if config is not None:
        model.model_config = type(config, (), {})()
    return types.SimpleNamespace(model=model, is_clip=is_clip)


def test_labels_name_the_kind_a_user_knows():
    clip = _patcher("SD1ClipModel", "comfy.sd1_clip", is_clip=True)
    assert host_models.model_label(clip) == "text encoder (SD1 CLIP)"
    assert host_models.model_name(clip) == "SD1ClipModel"  # the identity is unchanged
    te = _patcher("WanT5Model", "comfy.text_encoders.wan", is_clip=True)  # not in the table: its class, still named
    assert host_models.model_label(te) == "text encoder (WanT5Model)"
    for cls, module in (("AutoencoderKL", "comfy.ldm.models.autoencoder"), ("WanVAE", "comfy.ldm.wan.vae"),
                        ("CausalVideoAutoencoder", "comfy.ldm.lightricks.vae.causal_video_autoencoder")):
        assert host_models.model_label(_patcher(cls, module)) == "VAE", cls
    unet = _patcher("BaseModel", "comfy.model_base", config="SD15")
    assert host_models.model_label(unet) == host_models.model_name(unet) == "SD15 (BaseModel)"
    # a diffusion model whose module merely contains "ae" letters is no VAE
    assert host_models.model_label(_patcher("Flux", "comfy.model_base", config="Flux")) == "Flux (Flux)"


def test_unload_report_reads_labels_and_keeps_class_names_as_identity():
    clip = {"key": "1", "name": "SD1ClipModel", "label": "text encoder (SD1 CLIP)", "device": "cpu", "bytes": 235 * MiB,
            "total_bytes": 235 * MiB, "is_text_encoder": True}
    vae = {"key": "3", "name": "AutoencoderKL", "label": "VAE", "device": "cpu", "bytes": 160 * MiB,
           "total_bytes": 160 * MiB, "is_text_encoder": False}
    dev = {"torch_allocated": None, "torch_reserved": None, "free": None, "total": None}
    r = unload_report.build({"models": [clip, vae], "devices": {"cpu": dev}, "host_available": None},
                            {"models": [vae], "devices": {"cpu": dev}, "host_available": None}, targets={"1"})
    assert r["left_device"] == ["SD1ClipModel"]
    assert r["summary"].startswith("text encoder (SD1 CLIP) is no longer in ComfyUI's list of loaded models (235.00 MiB on "
                                    "the CPU, mode offload)"), r["summary"]
    assert "SD1ClipModel" not in r["summary"]
    text = unload_report.text(r)
    assert "- text encoder (SD1 CLIP) on cpu: 235.00 MiB → 0 MiB" in text and "kept: VAE (160.00 MiB on cpu)" in text, text


def test_cli_budget_table_names_models_by_the_same_label_as_the_web():
    """`gpu-garden budget`'s text table printed "model SD1ClipModel" where the bar, the sidebar and the Unload face read
    "text encoder (SD1 CLIP)"; it now reads the host's label, and a snapshot without one still shows the class name."""
    from gpu_garden.memory.budget import probe
    from gpu_garden.memory.budget.common import Host

    class NoGpu:
        name = "none"

        def devices(self):
            return [], []

    models = [{"name": "SD1ClipModel", "label": "text encoder (SD1 CLIP)", "device": "cpu", "bytes": 235 * MiB},
              {"name": "AutoencoderKL", "label": "VAE", "device": "cpu", "bytes": 160 * MiB},
              {"name": "SD15 (BaseModel)", "device": "cpu", "bytes": 1640 * MiB}]  # no label: its name
    text = probe.format_table(probe.snapshot(models, backends=[NoGpu()], host=Host()))
    assert "model text encoder (SD1 CLIP): 235.00 MiB" in text
    assert "model VAE: 160.00 MiB" in text
    assert "model SD15 (BaseModel): 1.60 GiB" in text
    assert "SD1ClipModel" not in text and "AutoencoderKL" not in text
