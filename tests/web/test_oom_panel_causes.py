"""The OOM panel's causes in real Chromium against the real --cpu ComfyUI: an uncertain triage (two causes side by
side, a likelier first cause, one weak sign), one spelling per figure with every numbered fix, and a CPU OOM told in
host RAM with no NVML card (the panel's other tests: test_oom_panel.py)."""
from support.comfy_host import sd15_prompt
from support.oom_panel import activations_report, frame_node, load_api, vae_report
from support.oom_panel import page  # noqa: F401 (the fixture, in both render modes)


def test_uncertain_triage_shows_the_top_two_causes_side_by_side(page, output_dir):
    """Synthetic report: triage says `uncertain` and names two `alternatives` (memory/triage/engine.py); the
    panel labels it and shows both side by side, the rest stay folded under the other causes."""
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    report = vae_report("8")
    report.update(cause="weights-exceed-vram", uncertain=True, summary=None, actions=[], causes=[
        {"id": "weights-exceed-vram", "confidence": 0.46, "evidence": ["PyTorch holds 22.9 of 24 GiB"]},
        {"id": "activations", "confidence": 0.41, "evidence": ["a 512 MiB request failed"]},
        {"id": "fragmentation", "confidence": 0.13, "evidence": ["0.40 GiB reserved but unallocated"]}])
    report["alternatives"] = [dict(c, guide={"id": g, "title": t}) for c, (g, t) in
                              zip(report["causes"][:2], [("w", "Load the weights in fewer bytes"), ("a", "Smaller batch")])]
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.wait_for_timeout(200)
    assert page.locator("[data-testid=gg-oom-uncertain]").is_visible()
    assert page.locator(".gg-oom-uncertain").inner_text().strip() == "uncertain"
    assert "two causes" in page.locator("[data-testid=gg-oom-cause]").inner_text()  # no single cause claimed
    # 0.41 is over half of 0.46 (triage's rank.PAIR_RATIO, oom_parts.js PAIR_RATIO): a pair
    assert "about equally" in page.locator(".gg-oom-uncertain").get_attribute("title")
    cards = page.locator("[data-testid=gg-oom-alt]")
    assert [cards.nth(i).get_attribute("data-cause") for i in range(cards.count())] == ["weights-exceed-vram", "activations"]
    a, b = cards.nth(0).bounding_box(), cards.nth(1).bounding_box()
    assert abs(a["y"] - b["y"]) < 2 and a["x"] + a["width"] <= b["x"], (a, b)  # side by side, first on the left
    assert "Load the weights in fewer bytes" in cards.nth(0).inner_text() and "46%" in cards.nth(0).inner_text()
    others = page.locator("[data-testid=gg-oom-other-causes]")
    assert "(1)" in others.inner_text()  # only the cause not already shown
    if not page.vue_nodes:
        page.screenshot(path=str(output_dir / "oom_panel_uncertain.png"))


def test_uncertain_with_a_likelier_first_cause_does_not_claim_a_pair(page):
    """Uncertain, the second cause at a third of the first (0.21 of 0.63: under rank.PAIR_RATIO): the panel names the
    first as the likelier and the second as also possible, never "fit about equally"; both cards are still shown."""
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    report = vae_report("8")
    report.update(cause="weights-exceed-vram", uncertain=True, summary=None, actions=[], causes=[
        {"id": "weights-exceed-vram", "confidence": 0.63, "evidence": ["PyTorch holds 11.8 of 12 GiB"]},
        {"id": "activations", "confidence": 0.21, "evidence": ["a 64 MiB request failed"]}])
    report["alternatives"] = [dict(c, guide={"id": g, "title": t}) for c, (g, t) in
                              zip(report["causes"][:2], [("w", "Load the weights in fewer bytes"), ("a", "Smaller batch")])]
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.wait_for_timeout(200)
    line = page.locator("[data-testid=gg-oom-cause]").inner_text()
    assert "two causes" not in line and "cause uncertain" in line and "weights do not fit in VRAM?" in line, line
    assert "also possible" in line and "Activations for this size" in line, line
    title = page.locator(".gg-oom-uncertain").get_attribute("title")
    assert "only more likely" in title and "about equally" not in title, title
    cards = page.locator("[data-testid=gg-oom-alt]")
    assert [cards.nth(i).get_attribute("data-cause") for i in range(cards.count())] == ["weights-exceed-vram", "activations"]


def test_uncertain_with_one_weak_cause_says_so(page):
    """Triage's rank.NOT_DETERMINED leaves a lone generic rule under the threshold: `uncertain` with one cause and
    one alternative (with its guide, as memory/triage/engine.py sends it). The panel must not claim two causes; it
    names the one weak sign and shows it alone."""
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    report = vae_report("8")
    weak = {"id": "activations", "confidence": 0.57, "evidence": ["cudaMallocAsync refused an allocation"]}
    report.update(cause="activations", uncertain=True, summary=None, actions=[], causes=[weak],
                  alternatives=[dict(weak, guide={"id": "pytorch-activations", "title": "Smaller batch"})])
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.wait_for_timeout(200)
    line = page.locator("[data-testid=gg-oom-cause]").inner_text()
    assert "two causes" not in line and "one weak sign" in line and "Activations for this size" in line, line
    assert page.locator("[data-testid=gg-oom-uncertain]").is_visible()
    cards = page.locator("[data-testid=gg-oom-alt]")
    assert [cards.nth(i).get_attribute("data-cause") for i in range(cards.count())] == ["activations"]
    assert "one sign alone" in page.locator(".gg-oom-uncertain").get_attribute("title").lower()


def test_one_spelling_per_figure_and_every_fix(comfy_page):
    """ui48's walk: the evidence said "312.00 MiB free" and the legend "Free 312 MiB" (fmtBytes rounded MiB); the guide's
    Fix 2 and Fix 4 showed alone (Fix 1 and 3 have no command). Now the legend writes the server's spelling and every
    numbered fix is listed, in order, commands under theirs."""
    page, _ = comfy_page
    load_api(page, sd15_prompt())
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", activations_report())
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    evidence = page.locator(".gg-oom-evidence").first.inner_text()
    legend = page.locator(".gg-oom-legend").inner_text()
    assert "312.00 MiB free" in evidence and "Free 312.00 MiB" in legend, (evidence, legend)
    assert "Requested 1.50 GiB" in legend and "Total 8.00 GiB" in legend, legend
    rows = page.locator("[data-testid=gg-oom-guide] [data-testid=gg-oom-fix]")
    labels = [rows.nth(i).locator(".gg-oom-cmd-label").inner_text() for i in range(rows.count())]
    assert labels == ["Fix 1 - make the step smaller", "Fix 2 - leave ComfyUI more room for activations",
                      "Fix 3 - smaller weights leave more room", "Fix 4 - text encoders on the CPU"], labels
    assert [rows.nth(i).locator("code").count() for i in range(rows.count())] == [0, 1, 0, 1]


def test_a_cpu_oom_says_ram_and_names_no_nvml_card(page):
    """fixW2 walk, ComfyUI --cpu: the panel read "Another process holds VRAM this run needed: at the failure other
    processes held 10.71 GiB of the 23.54 GiB card (NVML)". There is no card here: the host's snapshot of a CPU
    device is host RAM. The causes and guides come from the real triage of that message and snapshot (the walk's figures),
    read as the server reads it (nodes/oom_build: ComfyUI's log lines around the message, the host's backend)."""
    from gpu_garden.memory.triage import engine
    from gpu_garden.nodes.oom_build import log_excerpt
    from support.cpu_oom import CPU_OOM, CPU_SNAP

    text = log_excerpt("RuntimeError", CPU_OOM.split(": ", 1)[1].strip())
    ev = engine.triage_text(text, {"snapshot": CPU_SNAP, "platform": "linux", "backend": "cpu"})["events"][-1]
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    report = vae_report("8")
    report.update(cause=ev["causes"][0]["id"], causes=ev["causes"], uncertain=ev["uncertain"], alternatives=ev["alternatives"],
                  guide=ev["guide"], runtime=ev["runtime"],
                  device_kind="cpu", exception_type="RuntimeError", message=CPU_OOM, summary=None, actions=[],
                  numbers={"requested": 40000000000000, "free": CPU_SNAP["devices"][0]["free"], "total": CPU_SNAP["devices"][0]["total"]})
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    panel = page.locator("[data-testid=gg-oom-panel]")
    panel.wait_for(state="visible")
    page.wait_for_timeout(200)
    text = panel.text_content()
    assert "Another process holds RAM this run needed" in text, text
    assert "other processes held 10.71 GiB of the 23.54 GiB of host RAM" in text, text
    assert "holds VRAM" not in text and "NVML" not in text and "GiB card" not in text, text
    # the panel's buttons say RAM too: "Free VRAM" on a machine without a card sent users looking for one
    assert page.locator("[data-testid=gg-oom-free]").text_content() == "Free RAM"
    assert page.locator("[data-testid=gg-oom-requeue]").text_content() == "Free RAM and re-queue"
    # (fixU) the runner-up's guide is the host-RAM one: "Another program holds the GPU's memory (ComfyUI)" was offered
    # for RAM on a machine without a card
    alts = page.locator("[data-testid=gg-oom-alt]").all_text_contents()
    other = next(a for a in alts if "Another process holds RAM" in a)
    assert "Fix: Other programs hold the system RAM (ComfyUI)" in other, alts
    assert "GPU's memory" not in text, text
    guide = page.locator("[data-testid=gg-oom-guide]").text_content()
    assert "Out of memory in system RAM: general checklist" in guide and "nvidia-smi" not in guide, guide


def test_other_card_is_named_by_its_guide_not_out_of_memory(page):
    """(fix67c, aud67b #12) aud67b's real-browser report: host-ram 35 % beside `other` 25 % whose guide is the CUDA driver
    one; the second card was titled "Out of memory". It now carries the guide's title, once (no repeated "Fix:" line)."""
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    report = vae_report("8")
    driver = "CUDA driver out of memory (no allocator numbers)"
    report.update(cause="host-ram", uncertain=True, pair=True, summary=None, actions=[], causes=[
        {"id": "host-ram", "confidence": 0.35, "evidence": ["ComfyUI pins host RAM for offloaded weights"]},
        {"id": "other", "confidence": 0.25, "evidence": ["driver-level CUDA error without allocator numbers"]}])
    report["alternatives"] = [dict(c, guide={"id": g, "title": t}) for c, (g, t) in zip(
        report["causes"], [("comfyui-pinned-memory", "Pinned (page-locked) system RAM ran out"), ("cuda-driver-oom", driver)])]
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.wait_for_timeout(200)
    cards = page.locator("[data-testid=gg-oom-alt]")
    assert cards.count() == 2
    second = cards.nth(1)
    assert second.locator("strong").inner_text().strip() == driver
    assert "Out of memory" not in second.inner_text() and "Fix: " not in second.inner_text(), second.inner_text()
    assert cards.nth(0).locator("strong").inner_text().strip() == "System RAM ran out"
