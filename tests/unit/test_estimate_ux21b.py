"""A first-hour walk (ux21b): on a CPU run the Footprint Estimate face and the CLI printed "peak 3.86 GiB" and then
"CPU run: the running phase 3.47 GiB": the peak held ComfyUI's VRAM reserve, the running phase did not. ui49: ComfyUI
keeps no reserve on a CPU device (comfy/model_management.py 0.8.0: the reserve enters load_models_gpu's extra_mem and
minimum_memory_required, used by free_memory only for a device that is not the CPU and by the partial load, which a
CPU load device skips), so no phase of a CPU run counts it: the peak is the running phase, and the text encode phase
of SD1.5 is its encoder's weights and activations, not 400 MiB more."""
import re

from gpu_garden.memory.estimate import families, formula, layouts, verdict
from gpu_garden.memory.units import GiB, MiB, fmt_bytes

UNIT = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB}
RESERVE = 400 * MiB  # ComfyUI 0.8.0's EXTRA_RESERVED_VRAM on Linux


def _sd15(**policy):
    comps = families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "v1-5-pruned-emaonly-fp16.safetensors")
    budget = policy.get("budget")
    est = formula.judge(formula.estimate(comps, 512, 512, cfg=None, policy=dict({"dynamic_vram": "off"}, **policy)), budget)
    if not budget:
        est["host_ram"]["available"] = 64 * GiB  # a machine's figure, as the node and the CLI read it
        verdict.cpu_run(est)
    return est


def _bytes(text):
    n, u = text.split()
    return float(n) * UNIT[u]


def test_a_cpu_run_counts_no_reserve_and_its_peak_is_the_running_phase():
    est = _sd15(device="cpu")
    assert est["fixed"] == {"cuda_context": 0, "comfyui_reserve": 0}
    te = est["breakdown"]["text_encode"]
    # SD1.5's CLIP-L in 16 bits on a CPU (123060480 parameters x 2 + 77 int64 position ids), its activations and margin
    assert te["weights"] == 123060480 * 2 + 77 * 8 and te["fixed"] == 0
    assert est["phases"]["text_encode"] == te["weights"] + te["activations"] + te["allocator_margin"]
    reason = est["outcome"]["reason"]
    m = re.match(r"CPU run: the running phase ([\d.]+ \w+) and the models kept for reload [\d.]+ \w+ in host RAM, "
                 r"64.00 GiB available$", reason)
    assert m, reason
    assert m.group(1) == fmt_bytes(est["peak"])  # the same figure the face's verdict line prints
    assert est["host_ram"]["running"] == est["peak"]
    assert any("ComfyUI's reserve 0 B (none on a CPU device)" in a for a in est["assumptions"]), est["assumptions"]


def test_a_card_keeps_the_reserve_in_every_phase():
    # a GPU run, and a card planned on a --cpu host (the node's vram_gb there): ComfyUI keeps its reserve on a card
    for policy in ({"device": "cuda", "budget": 8 * GiB}, {"device": "cpu", "budget": 8 * GiB}):
        est = _sd15(**policy)
        assert est["fixed"]["comfyui_reserve"] == RESERVE, policy
        assert all(b["fixed"] >= RESERVE for b in est["breakdown"].values()), policy
    cpu, card = _sd15(device="cpu"), _sd15(device="cpu", budget=8 * GiB)
    assert card["phases"]["text_encode"] - cpu["phases"]["text_encode"] == RESERVE


def test_a_cpu_estimates_card_tiers_keep_the_cards_reserve():
    # rev24 B1: workflow.tiers judges a CPU estimate (reserve 0 in host RAM) on each card tier; a card keeps ComfyUI's
    # reserve, so every phase of every tier is 400 MiB (Linux; --reserve-vram 1.5: 1536 MiB) over the same estimate
    # judged on that tier with no reserve at all (reserve 0 given), and the same as the card planned with vram_gb there
    from gpu_garden.memory.estimate import spec, workflow
    for given, reserve in ((None, RESERVE), (int(1.5 * GiB), 1536 * MiB)):
        cpu = _sd15(device="cpu", reserve=given)
        assert cpu["fixed"]["comfyui_reserve"] == 0, given  # its own run, in host RAM, keeps none
        bare = {t["gb"]: t for t in workflow.tiers(_sd15(device="cpu", reserve=0))}
        for t in workflow.tiers(cpu):
            assert t["peak"] - bare[t["gb"]]["peak"] == reserve, (given, t["gb"], t["peak"], bare[t["gb"]]["peak"])
            card = _sd15(device="cpu", reserve=given, budget=spec.card_bytes(t["gb"]))
            assert (t["peak"], t["verdict"]) == (card["peak"], card["verdict"]), (given, t["gb"])
