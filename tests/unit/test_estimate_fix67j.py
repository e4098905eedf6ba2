"""fix67j: review rev67f's findings on fix67e's Dynamic VRAM (estimate side)."""
import pytest

from support.cli_run import estimate, flat
from gpu_garden.memory.estimate import host_ram


# F1. comfy-aimdo is ComfyUI's (main.py turns it on; CoreModelPatcher is the dynamic patcher): --runner diffusers / wan
# with --dynamic-vram on read "FITS WITH STREAMING ... streaming 2.15 GiB of the text encoders' weights" where the old
# code said DOES NOT FIT (rev67f repros/R_F3_non_comfyui_runner.txt). Off there, with a line.
@pytest.mark.parametrize("runner", ["diffusers", "wan"])
def test_dynamic_vram_off_outside_comfyui(capsys, monkeypatch, runner):
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--dynamic-vram", "on", "--runner", runner)
    text = flat(out)
    assert "STREAMING" not in text and "Dynamic VRAM (--dynamic-vram on)" not in text
    assert f"Dynamic VRAM off: comfy-aimdo runs inside ComfyUI only, not under --runner {runner}" in text
    monkeypatch.setattr(host_ram, "aimdo_detected", lambda: True)  # detected here: still off for that runner
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--runner", runner)
    text = flat(out)
    assert "STREAMING" not in text and "Dynamic VRAM (detected" not in text
    monkeypatch.setattr(host_ram, "aimdo_detected", lambda: False)  # not detected: no "where ComfyUI runs with it"
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--runner", runner)
    assert "Dynamic VRAM (assumed)" not in flat(out)
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "12", "--ram", "64", "--dynamic-vram", "on")
    assert "verdict: FITS WITH STREAMING" in out  # ComfyUI (the default runner): on
