"""fix67e: audit aud67a's Dynamic VRAM and dtype findings on `gpu-garden estimate`.
F9: comfy-aimdo (Dynamic VRAM) ships a CUDA and a ROCm build only (comfy_aimdo/control.py detect_vendor / init's
{"cuda": "aimdo", "rocm": "aimdo_rocm"}): --dynamic-vram on with --device mps / xpu (or --platform darwin) is refused,
and comfy-aimdo detected on this machine does not turn it on for such a device."""
import pytest

from support.cli_run import estimate, flat
from gpu_garden.memory.estimate import host_ram


@pytest.mark.parametrize("dev", [["--device", "mps"], ["--device", "xpu"], ["--platform", "darwin"]])
def test_dynamic_vram_on_refused_off_cuda_rocm(capsys, dev):
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", *dev, "--dynamic-vram", "on")
    assert rc == 2 and out == ""  # before: "FITS WITH STREAMING in 12.00 GiB: 10.94 GiB of weights stream"
    assert "--dynamic-vram on: comfy-aimdo (ComfyUI's Dynamic VRAM) has CUDA and ROCm builds only" in err


def test_dynamic_vram_on_still_taken_on_rocm(capsys):
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--device", "rocm", "--dynamic-vram", "on")
    assert "verdict: FITS WITH STREAMING" in out


def test_detected_aimdo_not_used_on_mps(capsys, monkeypatch):
    monkeypatch.setattr(host_ram, "aimdo_detected", lambda: True)  # the live host has comfy-aimdo (a CUDA box)
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--device", "xpu")
    text = flat(out)
    assert "STREAMING" not in text and "Dynamic VRAM (detected" not in text
    assert "Dynamic VRAM off: comfy-aimdo has CUDA and ROCm builds only (comfy_aimdo/control.py), no xpu one" in text
    assert "Dynamic VRAM (assumed)" not in text  # no "where ComfyUI runs with it" on a device it cannot
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--device", "cuda")
    assert "FITS WITH STREAMING" in out  # the same detection on a CUDA device: on


# F4. --weights-dtype fp32 turned the VAE's row to its F32 bytes (0.31 GiB in VRAM) while the VAE decode phase counted
# 0.16 GiB in bf16: formula set cast_fp32 off for every component. --weights-dtype is the diffusion model's; the VAE
# runs in ComfyUI's VAE dtype (comfy/sd.py:677-679 VAE.__init__: model_management.vae_dtype, first_stage_model.to(it);
# --fp32-vae, model_management.py:935-950), the text encoders in theirs
def test_weights_dtype_fp32_leaves_the_vae_and_text_encoders_alone():
    from gpu_garden.memory.estimate import families, formula as E, layouts

    def comps():
        return [c for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")
                for c in families.split_components(layouts.table(n), n)]

    def rows(est):
        return {c["role"] + c["source"]: c["resident"] for c in est["components"]}

    base = E.estimate(comps(), 1024, 1024, cfg=False, policy={"host_ram": 64 << 30})
    fp32 = E.estimate(comps(), 1024, 1024, cfg=False, policy={"weights_dtype": "fp32", "host_ram": 64 << 30})
    vae = next(c for c in fp32["components"] if c["role"] == "vae")
    assert vae["bytes"] == 2 * vae["resident"]  # ae.safetensors is all F32; ComfyUI's VAE dtype here is bf16
    assert fp32["breakdown"]["vae_decode"]["weights"] == vae["resident"]  # the row and the phase: one figure
    changed = {k for k in rows(base) if rows(base)[k] != rows(fp32)[k]}
    assert changed == {c["role"] + c["source"] for c in fp32["components"] if c["role"] == "diffusion_model"}
    f32vae = E.estimate(comps(), 1024, 1024, cfg=False, policy={"vae_dtype": "fp32"})  # --vae-dtype fp32: the row too
    vae = next(c for c in f32vae["components"] if c["role"] == "vae")
    assert vae["resident"] == vae["bytes"] == f32vae["breakdown"]["vae_decode"]["weights"]


# F3. With Dynamic VRAM the text encoders stream as the diffusion model does (comfy/sd.py CLIP.__init__ builds their
# patcher from CoreModelPatcher, which main.py makes ModelPatcherDynamic with comfy-aimdo): FLUX dev + T5 fp16 on 8 GB
# said "RUNS WITH OFFLOAD ... loads the text encoders and diffusion model partially" beside "Dynamic VRAM: fits,
# streaming", and its 8 GB tier offload where the 12 GB tier streamed. One verdict now, and the tiers follow it.
def test_dynamic_vram_streams_text_encode_too():
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec, workflow
    comps = [c for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")
             for c in families.split_components(layouts.table(n), n)]
    budget = spec.card_bytes(8)
    est = E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy={"dynamic_vram": "on", "host_ram": 64 << 30}), budget)
    te = est["breakdown"]["text_encode"]
    assert est["phases"]["text_encode"] > budget  # T5 fp16's 9 GiB: text encode is over 8 GB too
    room = budget - sum(est["fixed"].values()) - te["activations"] - te["allocator_margin"]
    assert est["verdict"] == est["outcome"]["status"] == "fits with streaming"  # before: runs with offload
    d = est["dynamic_vram"]
    assert d["streamed_by_phase"]["text_encode"] == te["weights"] - room
    assert "of the text encoders' weights in text encode (once per prompt)" in d["verdict"]
    assert "partially" not in est["outcome"]["reason"]
    labels = {t["gb"]: t["label"] for t in workflow.tiers(est)}
    assert labels[8] == labels[12] == "fits with streaming"  # before: 8 GB offload, 12 GB streaming
