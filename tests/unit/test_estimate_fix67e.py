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
