"""fix67j: review rev67f's findings on fix67e's Dynamic VRAM (estimate side)."""
import pytest

from support.cli_run import estimate, flat, run
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


def _judge(names, gb, **pol):
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec
    comps = [c for n in names for c in families.split_components(layouts.table(n), n)]
    policy = dict({"dynamic_vram": "on", "host_ram": 128 << 30}, **pol)
    return E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy=policy), spec.card_bytes(gb) if gb else None)


FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


# F2. The VAE loads through CoreModelPatcher too (comfy/sd.py VAE.__init__ at 033046cc: CoreModelPatcher unless the VAE
# sets disable_offload): Wan 2.2 5B at --vram 2.75 read "DOES NOT FIT" (VAE decode 2.79 GiB, not streamed) beside
# "Dynamic VRAM: fits, streaming 8.31 GiB" (rev67f repros/R_F3_vae_not_streamed.txt). One verdict now.
def test_vae_phase_streams_and_one_verdict(capsys):
    rc, out, err = estimate(capsys, "wan22", "--vram", "2.75", "--ram", "128", "--dynamic-vram", "on")
    text = flat(out)
    assert "verdict: FITS WITH STREAMING in 2.75 GiB" in text and "DOES NOT FIT" not in text and rc == 0
    assert "of the VAE's weights in VAE decode (once per decode)" in text
    est = run(["estimate", "wan22", "--vram", "2.75", "--ram", "128", "--dynamic-vram", "on", "--json"], capsys)[1]
    d, b = est["dynamic_vram"], est["breakdown"]["vae_decode"]
    room = int(2.75 * (1 << 30)) - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]
    assert d["streamed_by_phase"]["vae_decode"] == b["weights"] - room > 0
    assert est["verdict"] == est["outcome"]["status"] == "fits with streaming"


# F2, --text-encoders resident: the decode's row holds the text encoders and the VAE; the decode runs the VAE alone, so
# what streams there is at most the VAE's bytes (was 2.65 GiB "of the VAE's weights" for a 0.16 GiB VAE), and the main
# verdict and the Dynamic VRAM line agree.
def test_resident_text_encoders_one_verdict():
    est = _judge(FLUX, 8, text_encoders="resident", host_ram=64 << 30)
    d = est["dynamic_vram"]
    vae = next(c["resident"] for c in est["components"] if c["role"] == "vae")
    assert d["streamed_by_phase"].get("vae_decode", 0) <= vae
    assert d["verdict"].startswith("fits") and est["verdict"] == est["outcome"]["status"] == "fits with streaming"


# F2. A phase whose model Dynamic VRAM does not stream (pixel upscale, latent upscale, audio decode) over the budget:
# the Dynamic VRAM line says does not fit, as the main verdict does.
def test_phase_not_streamed_over_budget_does_not_fit():
    from gpu_garden.memory.estimate import host_ram as H
    est = _judge(FLUX, 12, host_ram=64 << 30)
    assert est["dynamic_vram"]["verdict"].startswith("fits")
    est["phases"]["pixel_upscale"] = est["budget"] + (1 << 30)
    d = H.dynamic_vram(est, est["budget"])
    assert d["verdict"] == "does not fit: pixel upscale over the budget, and Dynamic VRAM does not stream its model"


# F3. --models resident: the text-encode row's weights hold the diffusion model too (20.34 GiB), and the line read
# "streaming 13.40 GiB of the text encoders' weights" where they total 9.10 GiB (rev67f repros/R_F3_resident_te_stream.txt).
# The text encode runs the text encoders alone: what streams is their bytes less the room the phase leaves.
@pytest.mark.parametrize("pol", [{"models": "resident"}, {"offload": "none"}])
def test_text_encode_streams_only_the_text_encoders(pol):
    est = _judge(FLUX, 8, host_ram=64 << 30, **pol)
    te = sum(c["resident"] for c in est["components"] if c["role"] == "text_encoder")
    b = est["breakdown"]["text_encode"]
    assert b["weights"] > te + (8 << 30)  # the row counts the diffusion model beside them
    room = est["budget"] - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]
    assert est["dynamic_vram"]["streamed_by_phase"]["text_encode"] == te - room < te


# F4. ComfyUI-GGUF loads a .gguf model through GGUFModelPatcher(ModelPatcher), not the dynamic patcher (city96/ComfyUI-GGUF
# nodes.py; Comfy-Org/ComfyUI#13953; city96/ComfyUI-GGUF#427 open): a Q4_K FLUX GGUF on 4 GiB read "FITS WITH STREAMING"
# (rev67f repros/R_F3_gguf_streams.txt). It loads partially, as without Dynamic VRAM, and a line says why.
def test_gguf_diffusion_model_loads_partially_not_streamed(capsys, tmp_path):
    pytest.importorskip("gguf")
    from support.gguf_files import sparse_gguf_from_layout
    path, _ = sparse_gguf_from_layout(tmp_path / "flux1-dev-Q8_0.gguf")
    rc, out, err = estimate(capsys, str(path), "--vram", "8", "--ram", "64", "--dynamic-vram", "on")
    text = flat(out)
    assert "STREAMING" not in text and "verdict: RUNS WITH OFFLOAD in 8.00 GiB" in text
    assert "ComfyUI loads the diffusion model partially" in text
    assert "Dynamic VRAM (--dynamic-vram on): loads partially: the GGUF diffusion model" in text
    assert ("Dynamic VRAM: the GGUF diffusion model loads through ComfyUI-GGUF's GGUFModelPatcher, not the dynamic "
            "patcher") in text
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "8", "--ram", "64", "--dynamic-vram", "on")
    assert "verdict: FITS WITH STREAMING" in out  # the safetensors model streams


# F8. --weights-dtype fp32 --vae-dtype fp32 keeps every 32-bit weight (DM F32, VAE F32), yet the assumptions said
# "32-bit float weights are cast to 16-bit on load" (rev67f repros/R_F4_cast_assumption.txt): the diffusion model kept
# in fp32 (keep_fp32) counted as cast.
def test_no_cast_line_when_nothing_is_cast(capsys):
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "80", "--weights-dtype", "fp32", "--vae-dtype", "fp32")
    assert "flux1-dev" in out and "32-bit float weights are cast to 16-bit" not in flat(out)
    rc, out, err = estimate(capsys, "flux1-dev", "--vram", "80", "--weights-dtype", "fp32")  # the VAE still is
    assert "32-bit float weights are cast to 16-bit" in flat(out)
