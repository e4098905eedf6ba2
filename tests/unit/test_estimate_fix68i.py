"""fix68i: review rev68b's findings on fix68b (Dynamic VRAM / host RAM, issue 15)."""
import pytest

from gpu_garden.memory.estimate import host_ram as H

FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


@pytest.fixture
def no_aimdo(monkeypatch):
    monkeypatch.setattr(H, "aimdo_detected", lambda: False)
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)


def _judge(names, gb, budget=None, **pol):
    """names' estimate at 1024 x 1024 judged on a gb GB card, or on `budget` bytes."""
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec
    comps = [c for n in names for c in families.split_components(layouts.table(n), n)]
    policy = dict({"host_ram": 64 << 30, "weights_mmap": "off"}, **pol)
    return E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy=policy), budget or (spec.card_bytes(gb) if gb else None))


def _room(est, k):
    b = est["breakdown"][k]
    return est["budget"] - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]


# 1. (rev68b F1) Automatic mode, comfy-aimdo not found here: the "Dynamic VRAM (assumed)" figure was ram_need with the
# legacy partial-load spill (the sampler's), not what --dynamic-vram on gives (fix68b: each model's streamed layers,
# pinned; the text encoders stream too on 8 GB). FLUX.1-dev bf16 + T5 fp16 on 8 GB: both modes' figures must agree.
def test_assumed_dynamic_is_the_on_figure(no_aimdo):
    auto, on = _judge(FLUX, 8), _judge(FLUX, 8, dynamic_vram="on")
    assert auto["dynamic_vram"]["enabled"] is False and on["dynamic_vram"]["enabled"] is True
    r, a = on["host_ram"], auto["host_ram"]["assumed_dynamic_vram"]
    w = {x: sum(c["resident"] for c in on["components"] if c["role"] == x) for x in ("diffusion_model", "text_encoder")}
    dm_streams = w["diffusion_model"] - _room(on, "sample")
    te_streams = w["text_encoder"] - _room(on, "text_encode")
    assert dm_streams > 0 and te_streams > 0
    assert r["pinned"] == dm_streams + te_streams  # the on figure, by hand from the rows' room
    assert a["pinned"] == r["pinned"]  # old code: dm_streams alone (the sampler's spill)
    for k in ("needed", "kept_for_reload", "cpu_copy", "hard_need", "verdict"):
        assert a[k] == r[k], k


# 2. (rev68b F2) --models resident: every phase's row counts the ControlNet kept beside it (side_models.added, keep), and
# side_weights counted it in whichever row it was asked about, so text encode and VAE decode streamed the ControlNet's
# bytes too. It runs with the sampler alone (its phase, side_models.SIDE: comfy/sampler_helpers.py get_additional_models);
# Dynamic VRAM evicts it from the card in the other phases.
CN = 1600 << 20  # a ControlNet's weights on the device (side_models.find's entry, as a workflow's ControlNetLoader gives)
CN_SIDE = [{"owner": "cn.safetensors (ControlNetLoader)", "loader": "ControlNetLoader", "phase": "sample", "how": "unet",
            "residual_width": 0, "weights": CN}]


@pytest.mark.parametrize("k, role", [("text_encode", "text_encoder"), ("vae_decode", "vae")])
def test_a_resident_controlnet_streams_in_sampling_only(k, role):
    from gpu_garden.memory.estimate import dynamic_stream as DS
    est = _judge(FLUX, 8, models="resident", dynamic_vram="on", side_models=CN_SIDE)  # the rows as judged on a small card
    own = sum(c["resident"] for c in est["components"] if c["role"] == role)
    b = est["breakdown"][k]
    assert b["side_models"]["cn.safetensors (ControlNetLoader)"]["weights"] == CN  # the resident row counts it
    assert b["weights"] > own + CN
    assert DS.side_weights(est, "sample") == CN and DS.side_weights(est, k) == 0  # old code: CN in k too
    # a budget where half the phase's own model fits beside its activations as judged (the VAE's batch is sized on the
    # card: the same on 8 GB and on this budget)
    budget = sum(est["fixed"].values()) + b["activations"] + b["allocator_margin"] + own // 2
    est = _judge(FLUX, None, budget, models="resident", dynamic_vram="on", side_models=CN_SIDE)
    assert est["budget"] == budget
    assert est["dynamic_vram"]["streamed_by_phase"][k] == own - own // 2  # old code: + CN


# 3. (rev68b F3) The per-model pinned figures (streamed_pinned) beside a pinned total that --disable-pinned-memory or the
# pin cap (ram_need: 95 % of RAM) lowered: "pinned copies of the streamed layers 0 B (4.43 GiB of the diffusion
# model ...)". The breakdown only where it sums to the total; else what streams and why it is not all pinned.
@pytest.mark.parametrize("pol, words", [({"pinned_memory": False}, "not pinned: read from the CPU copy"),
                                        ({"host_ram": 6 << 30}, "pinned copies capped at ")])
def test_pinned_breakdown_only_where_it_sums(pol, words):
    from gpu_garden.memory.units import fmt_bytes
    r = _judge(FLUX, 8, dynamic_vram="on", **pol)["host_ram"]
    streamed = sum(r["streamed_pinned"].values())
    assert r["pinned"] < streamed and len(r["streamed_pinned"]) == 2  # the diffusion model and the text encoders
    text = H.ram_parts(r)
    assert "of the diffusion model" not in text and "pinned copies of the streamed layers" not in text  # old code: both
    assert f"streamed layers {fmt_bytes(streamed)} ({words}" in text
    if r["pinned"]:
        assert f"capped at {fmt_bytes(r['pinned'])}" in text and r["pinned"] == int((6 << 30) * 0.95)


def test_pinned_breakdown_where_it_sums():
    from gpu_garden.memory.units import fmt_bytes
    r = _judge(FLUX, 8, dynamic_vram="on")["host_ram"]
    pins = r["streamed_pinned"]
    assert r["pinned"] == sum(pins.values())
    assert (f"pinned copies of the streamed layers {fmt_bytes(r['pinned'])} ({fmt_bytes(pins['dm'])} of the diffusion model"
            in H.ram_parts(r))


# 4. (rev68b F4) --models resident, Dynamic VRAM on, a card the resident rows fit within 10 %: the verdict said "FITS WITH
# STREAMING ...: sampling streams nothing" where the Dynamic VRAM line says "fits without streaming". Nothing streams:
# tight, as the peak says. Where the resident rows are over the budget and nothing streams, Dynamic VRAM evicts the
# models kept beside the running one (host_ram.evicted): it runs, and the reason says so, not "streams nothing".
def test_nothing_streams_within_the_budget_is_tight():
    est = _judge(FLUX, 36, models="resident", dynamic_vram="on")
    d = est["dynamic_vram"]
    assert est["budget"] * 0.9 < est["peak"] <= est["budget"]
    assert d["vram_verdict"] == "fits without streaming" and not d["streamed_per_step"] and not d["streamed_by_phase"]
    assert est["verdict"] == est["outcome"]["status"] == "tight"  # old code: fits with streaming, 'sampling streams nothing'


def test_nothing_streams_over_the_budget_names_the_eviction():
    from gpu_garden.memory.units import fmt_bytes
    est = _judge(FLUX, 28, models="resident", dynamic_vram="on")
    d, r, o = est["dynamic_vram"], est["host_ram"], est["outcome"]
    assert est["peak"] > est["budget"] and d["vram_verdict"] == "fits without streaming" and not d["streamed_by_phase"]
    assert o["status"] == "fits with streaming" and "streams nothing" not in o["reason"]  # old code: 'sampling streams nothing'
    w = {x: sum(c["resident"] for c in est["components"] if c["role"] == x) for x in ("text_encoder", "vae")}
    assert r["evicted"] == w["text_encoder"] + w["vae"]
    assert f"evicts the models kept beside the running one from the card ({fmt_bytes(r['evicted'])})" in o["reason"]
