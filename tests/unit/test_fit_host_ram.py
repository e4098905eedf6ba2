"""Fit to Card judges host RAM by the estimate's one figure (memory/estimate/host_ram.ram_need), not by the offloaded
weights alone. Expected values are hand sums on round numbers (ComfyUI 0.8.0 load_models_gpu arithmetic as in
test_fit_plan.py; what stays in RAM as host_ram.host_ram's docstring reads it from ComfyUI and comfy-aimdo)."""
from gpu_garden.memory.estimate import formula as E, layouts, families
from gpu_garden.memory.estimate import host_ram as H, verdict as V
from gpu_garden.memory.fit import plan as P
from gpu_garden.memory.units import GiB

G = GiB


def test_dynamic_vram_counts_the_cpu_copy_when_nothing_spills(monkeypatch):
    # 80 GiB: 0.5 context + 10 TE + 20 DM + max(0.8 + 0.5, 2 + 0.5) = 33 GiB fits, so nothing is offloaded and the text
    # encoders stay on the GPU. Dynamic VRAM keeps every running weight on the CPU too: cpu_copy 30, the VAE kept for
    # reload 1, needed 31 GiB > 24 available. The old rule (offloaded 0 > 24?) said it fits. The CPU copy is anonymous
    # here whatever is installed (a mapped file would make it "slower", not short).
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)
    p = P.plan(80 * G, weights={"diffusion_model": 20 * G, "text_encoders": 10 * G, "vae": 1 * G}, memory_required=2 * G,
               context=G // 2, reserve=G // 2, host_ram=24 * G, dynamic_vram=True)
    assert p["weights_offloaded"] == 0
    r = p["host_ram"]
    assert (r["needed"], r["cpu_copy"], r["kept_for_reload"], r["pinned"]) == (31 * G, 30 * G, 1 * G, 0)
    assert p["host_ram_short"] is True and p["fits"] is False and "needs 31.00 GiB of 24.00 GiB" in p["summary"]


def test_partial_load_counts_the_models_kept_for_reload():
    # 12 GiB, DM 10, TE 2, VAE 1: the TE goes off the GPU (0.5 + 2 + 10 + 3.5 > 12), 8 GiB of the DM kept, 2 offloaded
    # (test_fit_plan's case). In RAM: the spill 2 + TE and VAE kept for reload 3 = 5 GiB > 4 available.
    p = P.plan(12 * G, weights={"diffusion_model": 10 * G, "text_encoders": 2 * G, "vae": 1 * G}, memory_required=3 * G,
               context=G // 2, reserve=G // 2, host_ram=4 * G)
    assert p["weights_offloaded"] == 2 * G and p["text_encoders_off"] is True
    assert (p["host_ram"]["needed"], p["host_ram"]["kept_for_reload"]) == (5 * G, 3 * G)
    assert p["host_ram_short"] is True and p["fits"] is False
    ok = P.plan(12 * G, weights={"diffusion_model": 10 * G, "text_encoders": 2 * G, "vae": 1 * G}, memory_required=3 * G,
                context=G // 2, reserve=G // 2, host_ram=8 * G)  # 5 <= 0.85 x 8
    assert ok["host_ram"]["verdict"] == "fits" and ok["host_ram_short"] is False


def _flux():
    out = []
    for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae"):
        out += families.split_components(layouts.table(n), n)
    return out


def test_fit_to_card_and_the_estimate_agree_on_host_ram(monkeypatch):
    """The same run, the same RAM: FLUX.1-dev on 80 GiB with Dynamic VRAM and 16 GiB of RAM. Nothing spills, so both
    need every weight (22.17 + 9.26 GiB) and both say it does not fit; they must not disagree whatever the case."""
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)  # anonymous CPU copies, whatever is installed here
    for ram in (16 * G, 64 * G):
        est = E.estimate(_flux(), 1024, 1024, cfg=False, policy={"dynamic_vram": "on", "budget": 80 * G, "host_ram": ram})
        by = {}
        for c in est["_ctx"]["components"]:
            by[c["role"]] = by.get(c["role"], 0) + c["resident"]
        p = P.plan(80 * G, weights={"diffusion_model": by["diffusion_model"], "text_encoders": by["text_encoder"],
                                    "vae": by["vae"]}, memory_required=2 * G, host_ram=ram, dynamic_vram=True)
        total = by["diffusion_model"] + by["text_encoder"] + by["vae"]
        assert est["host_ram"]["needed"] == p["host_ram"]["needed"] == total
        assert est["host_ram"]["verdict"] == p["host_ram"]["verdict"]
        assert p["host_ram_short"] is (ram == 16 * G)


# FLUX.1-dev files as loaded (bytes): DiT 23802816640, T5-XXL 9524621312, CLIP-L 246120960, ae 167639366
DIT, T5, CLIP_L, AE = 23802816640, 9524621312, 246120960, 167639366


def _both(ram, dyn, monkeypatch):
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)
    est = E.estimate(_flux(), 1024, 1024, cfg=False, policy={"dynamic_vram": dyn, "budget": 80 * G, "host_ram": ram})
    p = P.plan(80 * G, weights={"diffusion_model": DIT, "text_encoders": T5 + CLIP_L, "vae": AE}, memory_required=2 * G,
               context=est["fixed"]["cuda_context"], host_ram=ram, dynamic_vram=dyn == "on")
    return est, p


def test_ram_short_with_nothing_spilled_does_not_fit_in_both(monkeypatch):
    """Dynamic VRAM on 80 GiB with 16 GiB of RAM: nothing spills, but the CPU copy of every model stays: 23802816640 +
    9524621312 + 246120960 + 167639366 = 33741198278 B > 16 GiB, anonymous memory. The estimate's outcome said "fits"
    (exit 0) beside a host_ram "does not fit" and Fit to Card's "does NOT fit"; one predicate (host_ram.ram_short) now
    decides both: does not fit, exit 1."""
    est, p = _both(16 * G, "on", monkeypatch)
    assert est["host_ram"]["needed"] == p["host_ram"]["needed"] == 33741198278
    assert est["outcome"]["status"] == "does not fit" and V.exit_code(est) == 1 and p["fits"] is False
    assert est["outcome"]["reason"].startswith("host RAM is short: the run needs 31.42 GiB")
    est, p = _both(64 * G, "on", monkeypatch)  # 31.42 GiB <= 0.85 x 64
    assert est["outcome"]["status"] == "fits" and p["fits"] is True


def test_text_encoders_on_the_gpu_are_not_counted_in_ram_by_either(monkeypatch):
    """Dynamic VRAM off, 80 GiB, 8 GiB of RAM: the DiT (23802816640) and the encoders (9524621312 + 246120960) fit
    together with room to spare, so ComfyUI never unloads the encoders (free_memory unloads only when short) and Fit to
    Card keeps them on the GPU; only the VAE, 167639366 B, waits in RAM. The estimate counted the encoders as kept for
    reload (9938381638 B, 9.26 GiB > 8: does not fit) while the plan said 0.16 GiB, fits."""
    est, p = _both(8 * G, "off", monkeypatch)
    assert est["host_ram"]["needed"] == p["host_ram"]["needed"] == AE
    assert est["host_ram"]["kept_for_reload"] == p["host_ram"]["kept_for_reload"] == AE
    assert est["outcome"]["status"] == "fits" and p["fits"] is True and p["text_encoders_off"] is False


def test_the_plan_reads_the_estimate_policy_for_ram(monkeypatch):
    """plan(ram_policy=...) judges RAM with the estimate's policy keys: 12 GiB card, DiT 10, TE 2, VAE 1 (test_fit_plan's
    case: TE off, 2 GiB of the DiT spilled). With Dynamic VRAM: kept 3 + CPU copy 10 + pinned 2 = 15 GiB. On Windows the
    pins stop at 0.45 x 10 GiB of RAM = 4.5 GiB (no cut here: 2 < 4.5); --disable-pinned-memory: no pinned copy, 13 GiB;
    cache_models off: nothing kept for reload, 12 GiB; weights_mmap on: the CPU copy's 10 GiB and the 3 kept for reload
    file-backed (loaded the same way), hard 2 (the pins)."""
    monkeypatch.setattr(H, "aimdo_maps_files", lambda: False)
    kw = dict(weights={"diffusion_model": 10 * G, "text_encoders": 2 * G, "vae": 1 * G}, memory_required=3 * G,
              context=G // 2, reserve=G // 2, host_ram=10 * G, dynamic_vram=True)
    assert P.plan(12 * G, **kw)["host_ram"]["needed"] == 15 * G
    assert P.plan(12 * G, ram_policy={"pinned_memory": False}, **kw)["host_ram"]["needed"] == 13 * G
    assert P.plan(12 * G, ram_policy={"cache_models": False}, **kw)["host_ram"]["needed"] == 12 * G
    r = P.plan(12 * G, ram_policy={"weights_mmap": "on"}, **kw)["host_ram"]
    assert (r["file_backed"], r["hard_need"]) == (13 * G, 2 * G)
    small = dict(kw, host_ram=4 * G)  # pins capped: 0.95 x 4 = 3.8 GiB on Linux, 0.45 x 4 = 1.8 GiB on Windows
    assert P.plan(12 * G, ram_policy={"platform": "windows"}, **small)["host_ram"]["pinned"] == int(0.45 * 4 * G)
    assert P.plan(12 * G, **small)["host_ram"]["pinned"] == 2 * G
