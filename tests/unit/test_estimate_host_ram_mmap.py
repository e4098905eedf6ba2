"""Host RAM with Dynamic VRAM when the running model's CPU copy is the model file's mapped pages (comfy-aimdo
ModelMMAP: mmap(PROT_READ, MAP_PRIVATE), bounce() = madvise(MADV_DONTNEED)): the kernel drops those pages and reads
them again, so RAM short of them is slower, not fatal. Models kept for reload loaded the same way are mapped too;
pinned copies, a partial load's spill and a file torch.load reads (.ckpt / .pt: anonymous) stay a hard need. Expected
values are hand sums."""
import json
import sys

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, host_ram as H, layouts
from gpu_garden.memory.fit import plan as P
from gpu_garden.memory.units import GiB

G = GiB


def test_file_backed_copy_short_is_slower_not_fatal():
    # 30 GiB running (CPU copy, file pages), 2 GiB kept for reload from a .ckpt (anonymous): needed 32, hard 2
    r = H.ram_need(32 * G, 30 * G, 0, dynamic=True, available=24 * G, file_backed=(30 * G, 0))
    assert (r["needed"], r["file_backed"], r["hard_need"]) == (32 * G, 30 * G, 2 * G)
    assert r["verdict"].startswith("slower, re-reading weights from disk")
    assert H.ram_need(32 * G, 30 * G, 0, dynamic=True, available=1 * G, file_backed=(30 * G, 0))["verdict"].startswith("does not fit")
    both = H.ram_need(32 * G, 30 * G, 0, dynamic=True, available=24 * G, file_backed=True)  # the kept model mapped too
    assert (both["file_backed"], both["hard_need"]) == (32 * G, 0)
    anon = H.ram_need(32 * G, 30 * G, 0, dynamic=True, available=24 * G, file_backed=False)  # load_state_dict's copy
    assert (anon["file_backed"], anon["hard_need"]) == (0, 32 * G) and anon["verdict"].startswith("does not fit")


def test_pinned_streamed_layers_stay_a_hard_need():
    # 12 GiB streamed (pinned copies, under the 0.95 x 12.9 cap) + 20 GiB CPU copy (file pages) + 1 kept (anonymous):
    # needed 33, hard 13 > 12.9 available; the kept model mapped too: hard 12, slower
    r = H.ram_need(21 * G, 20 * G, 12 * G, dynamic=True, available=int(12.9 * G), file_backed=(20 * G, 0))
    assert (r["needed"], r["pinned"], r["hard_need"]) == (33 * G, 12 * G, 13 * G)
    assert r["verdict"].startswith("does not fit")
    r = H.ram_need(21 * G, 20 * G, 12 * G, dynamic=True, available=int(12.9 * G), file_backed=True)
    assert (r["file_backed"], r["hard_need"]) == (21 * G, 12 * G) and r["verdict"].startswith("slower")


def test_without_dynamic_vram_nothing_is_file_backed():
    r = H.ram_need(13 * G, 10 * G, 2 * G, dynamic=False, available=4 * G, file_backed=True)
    assert (r["needed"], r["file_backed"]) == (5 * G, 0) and r["verdict"].startswith("does not fit")


def _flux():
    out = []
    for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae"):
        out += families.split_components(layouts.table(n), n)
    return out


def test_estimate_flux_dynamic_vram_on_80gib_with_16gib_ram():
    """FLUX.1-dev on 80 GiB: nothing streams, the encoders stay beside the DiT. With --weights-mmap on every CPU copy is
    file pages (the layouts have no .ckpt / .pt name): 23802816640 + 9524621312 + 246120960 + 167639366 = 33741198278
    file-backed, no hard need: slower, and the run goes on. The DiT from a .ckpt (torch.load, anonymous): its
    23802816640 B are a hard need, over 16 GiB: does not fit."""
    pol = {"dynamic_vram": "on", "budget": 80 * G, "host_ram": 16 * G}
    on = E.estimate(_flux(), 1024, 1024, cfg=False, policy=dict(pol, weights_mmap="on"))["host_ram"]
    off = E.estimate(_flux(), 1024, 1024, cfg=False, policy=dict(pol, weights_mmap="off"))["host_ram"]
    assert on["needed"] == off["needed"] == 33741198278 and off["file_backed"] == 0
    assert (on["file_backed"], on["hard_need"]) == (33741198278, 0)
    assert on["verdict"].startswith("slower") and off["verdict"].startswith("does not fit")
    ckpt = [dict(c, source="flux1-dev.ckpt") if c["role"] == "diffusion_model" else c for c in _flux()]
    r = E.estimate(ckpt, 1024, 1024, cfg=False, policy=dict(pol, weights_mmap="on"))["host_ram"]
    assert (r["file_backed"], r["hard_need"]) == (33741198278 - 23802816640, 23802816640)
    assert r["verdict"].startswith("does not fit")
    with pytest.raises(UserError, match="weights_mmap must be auto, on or off"):
        E.estimate(_flux(), 1024, 1024, cfg=False, policy=dict(pol, weights_mmap="maybe"))


def test_aimdo_maps_files_is_a_file_check(tmp_path, monkeypatch):
    pkg = tmp_path / "comfy_aimdo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('never imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "comfy_aimdo", raising=False)
    assert H.aimdo_maps_files() is False
    (pkg / "model_mmap.py").write_text("")
    assert H.aimdo_maps_files() is True
    # Fit to Card reads the same figure: with comfy-aimdo's model_mmap the CPU copy is file-backed there too
    p = P.plan(80 * G, weights={"diffusion_model": 20 * G, "text_encoders": 10 * G, "vae": 1 * G}, memory_required=2 * G,
               host_ram=24 * G, dynamic_vram=True)
    assert p["host_ram"]["file_backed"] == 31 * G and p["host_ram_short"] is False  # CPU copy 30 + VAE kept 1


@pytest.fixture(scope="module")
def flux_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("flux")
    return [str(layouts.write_sparse(n, d / f"{n}.safetensors"))
            for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]


def test_cli_weights_mmap(flux_files, capsys):
    """test_estimate_fixups3's FLUX.1-dev case on 12 GiB with Dynamic VRAM and --ram 42: needed 9938381638 kept +
    23802816640 CPU copy + 12217434911 pinned = 45958633189 > 42 GiB (45097156608). With --weights-mmap on the CPU copy
    is file pages, and so are the encoders and the VAE kept for reload (.safetensors, loaded the same way): file-backed
    23802816640 + 9938381638 = 33741198278, hard need the pinned 12217434911, which fits in 42 GiB: the run streams,
    slower."""
    from support.cli_run import estimate
    argv = ("estimate", *flux_files, "--width", "1024", "--height", "1024", "--vram", "12", "--dynamic-vram", "on",
            "--ram", "42", "--json")
    rc, out, _ = estimate(capsys, *argv[1:], "--weights-mmap", "off")
    assert rc == 1 and json.loads(out)["host_ram"]["verdict"].startswith("does not fit")
    rc, out, _ = estimate(capsys, *argv[1:], "--weights-mmap", "on")
    j = json.loads(out)
    assert (j["host_ram"]["needed"], j["host_ram"]["file_backed"], j["host_ram"]["hard_need"]) == (45958633189, 33741198278,
                                                                                                 12217434911)
    assert rc == 0 and j["host_ram"]["verdict"].startswith("slower") and j["outcome"]["status"] == "fits with streaming"
