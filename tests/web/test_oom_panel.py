"""The OOM panel in real Chromium against the real --cpu ComfyUI, in both node render modes: a queued
run that dies in GGTestRaiseOOM brings up the panel next to the failing node, beside the frontend's own
error card; it copies commands, frees VRAM through /free, swaps VAE Decode for the tiled node and back,
and never turns server text into markup. The panel's uncertain and CPU causes are in test_oom_panel_causes.py,
its place beside the sidebar and the minimap, its palette and Escape in test_oom_panel_workspace.py; the fixture
and helpers in support/oom_panel.py."""
import json

import pytest

from support.comfy_host import sd15_prompt
from support.oom_panel import (FRONTEND_ERROR_UI, XSS, assert_beside, assert_not_covering, frame_node, load_api,
                               oom_workflow, panel_box, vae_report)
from support.oom_panel import page  # noqa: F401 (the fixture, in both render modes)
from web.conftest import open_comfy


def test_queued_oom_shows_panel_next_to_failing_node(page, output_dir, comfy_host):
    load_api(page, oom_workflow("cuda_caching", extra=" " + XSS))
    frame_node(page, 10)
    page.evaluate("() => { window.__errors = []; window.comfyAPI.api.api.addEventListener('execution_error', e => window.__errors.push(e.detail)); }")
    page.evaluate("() => app.queuePrompt(0, 1)")
    panel = page.locator("[data-testid=gg-oom-panel]")
    panel.wait_for(state="visible", timeout=90000)
    page.wait_for_function("() => window.__errors.length === 1", timeout=10000)  # the frontend's own error still came
    error_ui = page.locator(FRONTEND_ERROR_UI)
    error_ui.first.wait_for(state="visible", timeout=10000)  # ... and its own error UI is shown, beside ours
    page.wait_for_timeout(300)
    page.screenshot(path=str(output_dir / f"oom_panel_with_error_dialog{'_nodes2' if page.vue_nodes else ''}.png"))
    if page.locator(".p-dialog").count():  # 1.35: a modal over everything, ours included; close it
        page.keyboard.press("Escape")
        page.locator(".p-dialog").first.wait_for(state="hidden", timeout=10000)
    else:  # 1.58: the card stays up; the panel must not cover it
        assert_not_covering(page)
    page.wait_for_timeout(300)

    assert page.locator("[data-testid=gg-oom-where]").inner_text().endswith("#10")
    report = page.evaluate("() => window.__gpuGarden.oomPanel.report")
    assert report["node"]["id"] == "10" and report["cause"]
    assert page.locator("[data-testid=gg-oom-cause]").inner_text().strip()
    assert report["guide"]["title"] in page.locator("[data-testid=gg-oom-guide]").inner_text()
    assert page.locator("[data-testid=gg-oom-bar]").is_visible()
    assert_beside(page, "10")
    assert_not_covering(page)
    suffix = "_nodes2" if page.vue_nodes else ""
    page.screenshot(path=str(output_dir / f"oom_panel{suffix}.png"))

    # A copy button puts its command on the clipboard.
    page.locator("[data-testid=gg-oom-guide] [data-testid=gg-oom-copy]").first.click()
    page.wait_for_timeout(100)
    assert page.evaluate("() => navigator.clipboard.readText()") == report["guide"]["commands"][0]["text"]

    # Server text stays text: the payload is visible literally and never became an element.
    msg = page.locator("[data-testid=gg-oom-message]")
    assert XSS in msg.evaluate("e => e.textContent")
    assert panel.locator("img").count() == 0
    assert page.evaluate("() => window.__pwned") is None

    # It follows the node when the canvas pans and zooms.
    before = panel_box(page)
    page.evaluate("() => { const ds = app.canvas.ds; ds.offset[0] -= 60; ds.offset[1] += 40; app.canvas.setDirty(true, true); }")
    page.wait_for_timeout(250)
    moved = panel_box(page)
    assert moved["y"] != before["y"] or moved["x"] != before["x"]
    assert_beside(page, "10")
    page.evaluate("() => { const ds = app.canvas.ds; ds.changeScale(ds.scale * 0.8, [300, 300]); app.canvas.setDirty(true, true); }")
    page.wait_for_timeout(250)
    assert_beside(page, "10")


    # Free VRAM calls ComfyUI's /free.
    with page.expect_request(lambda r: r.url.endswith("/free") and r.method == "POST") as req:
        page.locator("[data-testid=gg-oom-free]").click()
    assert json.loads(req.value.post_data) == {"unload_models": True, "free_memory": True}
    page.wait_for_function("() => document.querySelector('[data-testid=gg-oom-status]').textContent.includes('unloaded')")

    # Free VRAM and re-queue: /free first, then the open workflow is queued again.
    with page.expect_request(lambda r: r.url.endswith("/prompt") and r.method == "POST") as queued:
        with page.expect_request(lambda r: r.url.endswith("/free") and r.method == "POST"):
            page.locator("[data-testid=gg-oom-requeue]").click()
    assert "10" in json.loads(queued.value.post_data)["prompt"]
    page.wait_for_function("(id) => window.__gpuGarden.oomPanel.report.prompt_id !== id", arg=report["prompt_id"],
                           timeout=60000)  # it ran out of memory again: the panel shows the new report
    page.keyboard.press("Escape")

    # The stored history reopens it.
    page.locator("[data-testid=gg-oom-close]").click()
    assert panel.count() == 0
    page.evaluate("() => app.extensionManager.command.execute('GPUGarden.OOM.ShowReports')")
    items = page.locator("[data-testid=gg-oom-history-list] li")
    items.first.wait_for(timeout=10000)
    assert "#10" in items.first.inner_text()
    if not page.vue_nodes:
        page.screenshot(path=str(output_dir / "oom_panel_history.png"))
    items.first.click()
    assert page.locator("[data-testid=gg-oom-where]").inner_text().endswith("#10")


def test_guide_copy_swap_and_undo(page, output_dir):
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", vae_report("8"))
    panel = page.locator("[data-testid=gg-oom-panel]")
    panel.wait_for(state="visible")
    page.wait_for_timeout(200)
    assert_beside(page, "8")
    assert "VAE decode" in page.locator("[data-testid=gg-oom-cause]").inner_text()
    assert "Decode in tiles" in page.locator("[data-testid=gg-oom-guide]").inner_text()
    assert page.locator("[data-testid=gg-oom-bar]").is_visible()
    others = page.locator("[data-testid=gg-oom-other-causes]")
    assert others.evaluate("e => e.open") is False and "(2)" in others.inner_text()
    assert page.locator("[data-testid=gg-oom-uncertain]").count() == 0  # a confident answer: one cause
    # the footer names the models as a user knows them: "VAE", not ComfyUI's class AutoencoderKL (ux20b)
    meta = page.locator("[data-testid=gg-oom-panel] .gg-oom-meta").inner_text()
    assert "loaded: SDXL (SDXL) 4.78 GiB, VAE 319" in meta and "AutoencoderKL" not in meta, meta

    # Copy puts the command on the clipboard.
    page.locator("[data-testid=gg-oom-guide] [data-testid=gg-oom-copy]").first.click()
    page.wait_for_timeout(100)
    assert page.evaluate("() => navigator.clipboard.readText()") == "python main.py --reserve-vram 1.0"

    # The guide's markdown is rendered from a whitelist; HTML and javascript: links stay inert text.
    page.locator("[data-testid=gg-oom-guide] summary").click()
    md = page.locator(".gg-oom-md")
    assert md.locator("h5").inner_text() == "Why" and md.locator("strong").inner_text() == "whole"
    assert md.locator("pre code").inner_text().strip() == "python main.py --reserve-vram 1.0"
    assert md.locator("a").count() == 1 and md.locator("a").get_attribute("href") == "https://docs.comfy.org/"
    assert md.locator("script, img, iframe").count() == 0 and "<script>" in md.inner_text()
    assert page.evaluate("() => [window.__pwned, window.__pwned2, window.__pwned3, window.__pwned4]") == [None] * 4
    suffix = "_nodes2" if page.vue_nodes else ""
    page.screenshot(path=str(output_dir / f"oom_panel_vae_swap{suffix}.png"))

    # Apply swaps VAEDecode for VAEDecodeTiled in place, links kept; Undo restores it.
    def node_state():
        return page.evaluate("""() => { const g = app.rootGraph ?? app.graph, n = g.getNodeById(8);
          const link = id => g.getLink(id);
          const id = (x) => x == null ? null : String(x);  // numbers on 1.35, strings on 1.58
          return {type: n.type, ins: n.inputs.map(i => i.link != null ? [i.name, id(link(i.link).origin_id)] : [i.name, null]),
                  outs: n.outputs.flatMap(o => (o.links || []).map(l => id(link(l).target_id))),
                  widgets: Object.fromEntries((n.widgets || []).map(w => [w.name, w.value]))}; }""")
    original = node_state()
    assert original["type"] == "VAEDecode"
    page.locator("[data-testid=gg-oom-apply]").click()
    swapped = node_state()
    assert swapped["type"] == "VAEDecodeTiled"
    assert {k: v for k, v in swapped["ins"] if v is not None} == {"samples": "3", "vae": "4"} and swapped["outs"] == ["9"]
    assert swapped["widgets"]["tile_size"] == 512 and swapped["widgets"]["overlap"] == 64
    page.locator("[data-testid=gg-oom-undo]").click()
    assert node_state() == original
    # ... and the frontend's own undo history saw the swap.
    assert page.evaluate("() => app.extensionManager.workflow.activeWorkflow.changeTracker.undoQueue.length") >= 1


def test_adapter_falls_back_and_warns_once(browser, comfy_host):
    """A frontend without app.canvasPosToClientPos (the public conversion the adapter prefers): the panel is
    still placed beside the node through the fallback, and the console gets one warning, not one per frame."""
    page, console = open_comfy(browser, comfy_host, vue_nodes=False)
    try:
        page.vue_nodes = False
        load_api(page, sd15_prompt())
        frame_node(page, 8, x=360, y=200)
        page.evaluate("() => { Object.defineProperty(app, 'canvasPosToClientPos', {value: undefined, configurable: true}); }")
        page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", vae_report("8"))
        page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
        page.wait_for_timeout(200)
        assert_beside(page, "8")
        page.evaluate("() => { const ds = app.canvas.ds; ds.offset[0] -= 40; app.canvas.setDirty(true, true); }")
        page.wait_for_timeout(300)
        assert_beside(page, "8")
        warnings = [m for m in console if m["type"] == "warning" and "frontend internals changed" in m["text"]]
        assert len(warnings) == 1 and "app.canvasPosToClientPos" in warnings[0]["text"], warnings
        assert console.unexpected() == [], console.unexpected()
    finally:
        page.context.close()


def test_subgraph_node_and_foreign_graph(page):
    """A node inside a subgraph: while the root graph is shown the panel points at the subgraph node.
    A report whose node id now belongs to another type (another workflow is open) docks instead."""
    load_api(page, sd15_prompt())
    sg_id = page.evaluate("""() => { const g = app.rootGraph ?? app.graph, n = g.getNodeById(8);
      const { node } = g.convertToSubgraph(new Set([n])); app.canvas.setDirty(true, true);
      const inner = node.subgraph.nodes.find(x => x.type === 'VAEDecode');
      return [String(node.id), String(inner.id)]; }""")
    frame_node(page, int(sg_id[0]), x=360, y=200)
    report = vae_report(f"{sg_id[0]}:{sg_id[1]}")
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.wait_for_timeout(200)
    assert_beside(page, sg_id[0])
    assert page.locator("[data-testid=gg-oom-apply]").count() == 0  # swap only where the node itself is shown

    foreign = vae_report("3")  # node 3 is the KSampler here, not a VAEDecode
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", foreign)
    page.wait_for_timeout(200)
    assert "gg-docked" in page.locator("[data-testid=gg-oom-panel]").get_attribute("class")


def test_real_triage_of_a_vae_decode_oom_for_the_readme(page, output_dir):
    """The README's picture: what the triage core itself answers for a VAE Decode OOM (no hand-written guide)."""
    from gpu_garden.memory.triage.engine import triage_text
    from gpu_garden.nodes import oom_report

    if page.vue_nodes:
        pytest.skip("one picture is enough")
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    report = vae_report("8")
    report["message"] = report["message"].replace(XSS, "").strip()
    tri = triage_text("!!! Exception during processing !!! " + report["message"],
                      {"node_type": "VAEDecode", "platform": "linux", "backend": "cuda", "cuda_malloc_async": True,
                       "latent": report["latent"], "model_family": "sdxl"})
    event = tri["events"][-1]
    report.update(cause=tri["cause"], causes=event["causes"], guide=event["guide"])
    report["actions"] = oom_report.swap_actions(report["node"], report["cause"], report["guide"])
    assert report["cause"] == "vae-decode" and report["guide"]["commands"]
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.wait_for_timeout(300)
    assert "expandable_segments" not in page.locator("[data-testid=gg-oom-guide]").inner_text()  # cudaMallocAsync ignores it
    page.screenshot(path=str(output_dir / "oom_panel_vae_triaged.png"))
