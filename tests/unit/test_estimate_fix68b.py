"""fix68b: the Dynamic VRAM / host-RAM / GGUF loader findings left by review rev67k (issue 15)."""
import pytest

from support.cli_run import estimate, flat

FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


def _judge(names, gb, **pol):
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec
    comps = [c for n in names for c in families.split_components(layouts.table(n), n)]
    policy = dict({"dynamic_vram": "on", "host_ram": 64 << 30, "weights_mmap": "off"}, **pol)
    return E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy=policy), spec.card_bytes(gb) if gb else None)


def _room(est, k):
    b = est["breakdown"][k]
    return est["budget"] - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]


# 1. --models resident with Dynamic VRAM on (rev67k R2, after fix67n): the Dynamic VRAM line streamed 4.43 GiB per step
# (the diffusion model less its room) but host RAM still read the legacy partial load of the whole resident row:
# "offloaded 13.68 GiB, streamed 4.43 GiB, pinned 13.68 GiB". What leaves the card is the streamed layers, each
# model's (the diffusion model per step, the text encoders in text encode); the text encoders and the VAE kept beside
# the sampler are evicted from the card to RAM, kept there for reload, not streamed.
@pytest.mark.parametrize("pol", [{"models": "resident"}, {"offload": "none"}])
def test_host_ram_reads_the_dynamic_vram_stream(pol):
    est = _judge(FLUX, 8, **pol)
    w = {r: sum(c["resident"] for c in est["components"] if c["role"] == r) for r in ("diffusion_model", "text_encoder", "vae")}
    dm_streams = w["diffusion_model"] - _room(est, "sample")
    te_streams = w["text_encoder"] - _room(est, "text_encode")
    assert dm_streams > 0 and te_streams > 0
    r = est["host_ram"]
    assert r["pinned"] == r["offloaded"] == dm_streams + te_streams  # old code: the row's 20.34 GiB less the room
    assert r["cpu_copy"] == w["diffusion_model"]  # the running model's CPU copy
    assert r["kept_for_reload"] == r["evicted"] == w["text_encoder"] + w["vae"]  # evicted from the card by Dynamic VRAM
    assert r["needed"] == sum(w.values()) + dm_streams + te_streams


def test_host_ram_line_names_what_streams(capsys):
    argv = (*FLUX, "--width", "1024", "--height", "1024", "--vram", "8", "--ram", "64", "--dynamic-vram", "on",
            "--weights-mmap", "off", "--models", "resident")
    import json
    j = json.loads(estimate(capsys, *argv, "--json")[1])
    from gpu_garden.memory.units import fmt_bytes
    by = j["dynamic_vram"]["streamed_by_phase"]
    text = flat(estimate(capsys, *argv)[1])
    line = text[text.index("host RAM:"):text.index("Dynamic VRAM (")]
    assert f"pinned copies of the streamed layers {fmt_bytes(by['sample'] + by['text_encode'])}" in line
    assert f"{fmt_bytes(by['sample'])} of the diffusion model (streamed each step)" in line
    assert f"{fmt_bytes(by['text_encode'])} of the text encoders (in text encode)" in line
    assert "evicted from the card by Dynamic VRAM" in line and "offloaded" not in line
