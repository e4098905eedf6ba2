"""Automatic mode (no --dynamic-vram, comfy-aimdo not found here, as for the CLI outside ComfyUI's environment): host RAM
is judged with Dynamic VRAM off, as detected, and beside it, labelled as an assumption, with Dynamic VRAM on (ComfyUI's
default where comfy-aimdo is installed) by the same ram_need / ram_short. Expected values are hand sums of FLUX.1-dev's
files as loaded (bytes): DiT 23802816640, T5-XXL 9524621312, CLIP-L 246120960, ae 167639366; on 12 GiB a partial
load leaves 12217434911 B of the DiT off the GPU (test_estimate_host_ram_mmap's CLI case)."""
import json

import pytest

from gpu_garden.memory.estimate import families, formula as E, host_ram as H, layouts, verdict as V
from gpu_garden.memory.units import GiB

G = GiB
DIT, T5, CLIP_L, AE, SPILL = 23802816640, 9524621312, 246120960, 167639366, 12217434911
KEPT = T5 + CLIP_L + AE  # 9938381638: the encoders and the VAE wait in RAM while the DiT samples


@pytest.fixture
def no_aimdo(monkeypatch):
    monkeypatch.setattr(H, "aimdo_detected", lambda: False)
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)


def _flux():
    out = []
    for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae"):
        out += families.split_components(layouts.table(n), n)
    return out


def _est(ram, **pol):
    return E.judge(E.estimate(_flux(), 1024, 1024, cfg=False, policy=dict(pol, host_ram=ram * G)), 12 * G)


def test_auto_without_aimdo_judges_both(no_aimdo):
    """42 GiB of RAM on 12 GiB: off, the spill and the models kept: 12217434911 + 9938381638 = 22155816549 B, fits.
    On: + the DiT's whole CPU copy, the spill pinned as a second copy: 9938381638 + 23802816640 + 12217434911 =
    45958633189 B > 42 GiB (45097156608): short. The verdict stays as detected (runs with offload, exit 0)."""
    est = _est(42)
    r = est["host_ram"]
    assert (r["needed"], r["verdict"]) == (SPILL + KEPT, "fits") == (22155816549, "fits")
    a = r["assumed_dynamic_vram"]
    assert (a["needed"], a["cpu_copy"], a["pinned"], a["kept_for_reload"]) == (45958633189, DIT, SPILL, KEPT)
    assert a["short"] is True and a["verdict"].startswith("does not fit")
    line = [x for x in est["assumptions"] if x.startswith(H.ASSUMED_DYNAMIC)]
    assert len(line) == 1 and "keep 42.80 GiB in RAM" in line[0] and "of 42.00 GiB: host RAM short" in line[0]
    assert est["outcome"]["status"] == "runs with offload" and V.exit_code(est) == 0
    assert est["dynamic_vram"]["source"] == "comfy-aimdo not detected"
    E.judge(est, 12 * G)  # judged again (tiers, the node): one line, not two
    assert sum(x.startswith(H.ASSUMED_DYNAMIC) for x in est["assumptions"]) == 1


def test_auto_assumption_that_fits(no_aimdo):
    a = _est(64)["host_ram"]["assumed_dynamic_vram"]  # 45958633189 <= 0.85 x 64 GiB = 58411555225
    assert (a["needed"], a["short"], a["verdict"]) == (45958633189, False, "fits")


@pytest.mark.parametrize("mode", ["on", "off"])
def test_no_assumption_when_stated(no_aimdo, mode):
    est = _est(42, dynamic_vram=mode)
    assert "assumed_dynamic_vram" not in est["host_ram"]
    assert not any(x.startswith(H.ASSUMED_DYNAMIC) for x in est["assumptions"])
    assert est["host_ram"]["needed"] == (45958633189 if mode == "on" else 22155816549)


def test_no_assumption_when_detected(monkeypatch):
    monkeypatch.setattr(H, "aimdo_detected", lambda: True)
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)
    est = _est(42)
    assert "assumed_dynamic_vram" not in est["host_ram"] and est["host_ram"]["needed"] == 45958633189


def test_cli_auto_reports_the_assumption(no_aimdo, tmp_path, capsys):
    from support.cli_run import estimate
    files = [str(layouts.write_sparse(n, tmp_path / f"{n}.safetensors"))
             for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]
    rc, out, _ = estimate(capsys, *files, "--width", "1024", "--height", "1024", "--vram", "12", "--ram", "42", "--json")
    j = json.loads(out)
    assert rc == 0 and j["host_ram"]["needed"] == 22155816549
    assert j["host_ram"]["assumed_dynamic_vram"]["needed"] == 45958633189 and j["host_ram"]["assumed_dynamic_vram"]["short"]
    rc, out, _ = estimate(capsys, *files, "--width", "1024", "--height", "1024", "--vram", "12", "--ram", "42")
    assert "Dynamic VRAM (assumed): comfy-aimdo was not found here" in out
