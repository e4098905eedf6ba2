"""The OOM panel in real Chromium against the real --cpu ComfyUI, in both node render modes: a queued
run that dies in GGTestRaiseOOM brings up the panel next to the failing node, beside the frontend's own
error card; it copies commands, frees VRAM through /free, swaps VAE Decode for the tiled node and back,
and never turns server text into markup."""
import json

import pytest

from support.comfy_host import sd15_prompt
from web.conftest import open_comfy

XSS = "<img src=x onerror=window.__pwned=1>"
MODES = [pytest.param(False, id="classic"), pytest.param(True, id="nodes2")]


def oom_workflow(kind="cuda_caching", extra=""):
    return {
        "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
        "10": {"class_type": "GGTestRaiseOOM", "inputs": {"samples": ["5", 0], "kind": kind, "extra": extra}},
        "11": {"class_type": "SaveLatent", "inputs": {"samples": ["10", 0], "filename_prefix": "gg_oom/latent"}},
    }


# A report as nodes/oom_capture.py sends it, with a triage result modelled on the contract of
# memory/triage.py, so the panel's own behaviour is tested whatever the core concludes.
def vae_report(node_id="8"):
    return {
        "id": "synthetic", "version": 1, "timestamp": 1796030000.0, "prompt_id": "p-synthetic",
        "node": {"id": node_id, "type": "VAEDecode", "title": "VAE Decode", "path": [{"id": node_id}]},
        "exception_type": "torch.OutOfMemoryError",
        "message": "CUDA out of memory. Tried to allocate 4.50 GiB. GPU 0 has a total capacity of 11.99 GiB of which "
                   "1.20 GiB is free. " + XSS,
        "cause": "vae-decode",
        "causes": [{"id": "vae-decode", "confidence": 0.8, "evidence": ["VAEDecode asked for 4.50 GiB with 1.20 GiB free"]},
                   {"id": "activations", "confidence": 0.15, "evidence": ["2048×2048 latent"]},
                   {"id": "fragmentation", "confidence": 0.05, "evidence": ["0.40 GiB reserved but unallocated"]}],
        "guide": {"id": "vae-decode-comfyui", "title": "Decode in tiles",
                  "markdown": "## Why\nThe VAE decodes the **whole** image at once; *tiles* cap the peak.\n\n"
                              "- Swap `VAE Decode` for VAE Decode (Tiled)\n- Or launch with:\n\n"
                              "```bash\npython main.py --reserve-vram 1.0\n```\n\n"
                              "See [the docs](https://docs.comfy.org/) and [bad](javascript:window.__pwned2=1).\n\n"
                              "<script>window.__pwned3=1</script><img src=x onerror=window.__pwned4=1>",
                  "commands": [{"label": "Launch flag", "text": "python main.py --reserve-vram 1.0"},
                               {"label": "Allocator", "text": "PYTORCH_ALLOC_CONF=expandable_segments:True"}]},
        "numbers": {"requested": 4831838208, "free": 1288490188, "reserved_unallocated": 429496729,
                    "total": 12874416128, "source": {"requested": "log", "free": "log", "total": "log"}},
        "actions": [{"kind": "swap_node", "node_id": node_id, "from": "VAEDecode", "to": "VAEDecodeTiled",
                     "widgets": {"tile_size": 512, "overlap": 64, "temporal_size": 64, "temporal_overlap": 8}}],
        "latent": {"width": 2048, "height": 2048, "frames": 1, "batch": 1}, "model_family": "sdxl",
        "loaded_models": [{"name": "SDXL (SDXL)", "label": "SDXL (SDXL)", "bytes": 5135149760},
                          {"name": "AutoencoderKL", "label": "VAE", "bytes": 319 * 1024 ** 2}],
        "captured": "before ComfyUI unloaded models",
        "notes": [],
    }


@pytest.fixture(params=MODES)
def page(request, browser, comfy_host):
    pg, console = open_comfy(browser, comfy_host, vue_nodes=request.param)
    pg.vue_nodes = request.param
    pg.console = console
    yield pg
    pg.context.close()
    assert console.from_pack() == [], console.from_pack()


def load_api(page, prompt):
    """Load an API-format prompt, lay it out left to right and load that as a workflow, so the Nodes 2.0
    layout (initialised when a graph loads, not when positions change later) has the same positions."""
    page.evaluate("""async (wf) => { await app.loadApiJson(wf, 'oom.json');
      let x = 40;
      for (const id of Object.keys(wf)) { const n = (app.rootGraph ?? app.graph).getNodeById(id);
        n.pos = [x, 120 + (id % 2) * 30]; x += n.size[0] + 70; }
      await app.loadGraphData((app.rootGraph ?? app.graph).serialize(), false, false, 'oom');
      app.canvas.setDirty(true, true); }""", prompt)
    page.wait_for_timeout(300)


JS_NODE_RECT = """(id) => {
  const node = (app.rootGraph ?? app.graph).getNodeById(id);
  if (window.LiteGraph.vueNodesMode) {
    const r = document.querySelector(`.lg-node[data-node-id="${id}"]`).getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  }
  const c = app.canvas.canvas.getBoundingClientRect(), ds = app.canvas.ds, th = LiteGraph.NODE_TITLE_HEIGHT;
  const left = c.left + (node.pos[0] + ds.offset[0]) * ds.scale, top = c.top + (node.pos[1] - th + ds.offset[1]) * ds.scale;
  return {left, right: left + node.size[0] * ds.scale, top, bottom: top + (node.size[1] + th) * ds.scale};
}"""


def frame_node(page, node_id, x=420, y=260):
    """Pan so the node's top-left sits at client (x, y): a stable, readable view for checks and screenshots."""
    page.evaluate("""([id, x, y]) => { const n = (app.rootGraph ?? app.graph).getNodeById(id), ds = app.canvas.ds;
      const c = app.canvas.canvas.getBoundingClientRect();
      ds.offset[0] = (x - c.left) / ds.scale - n.pos[0]; ds.offset[1] = (y - c.top) / ds.scale - n.pos[1];
      app.canvas.setDirty(true, true); }""", [node_id, x, y])
    page.wait_for_timeout(300)


# The frontend's own error UI for a failed run: 1.35 opens a modal (.p-dialog); 1.58 shows the
# "Generation failed" card (data-testid=error-overlay) and marks the node in its right side panel.
FRONTEND_ERROR_UI = ".p-dialog, [data-testid=error-overlay]"


def assert_not_covering(page, selector=FRONTEND_ERROR_UI):
    """The panel shares no pixel with any visible part of the frontend's error UI."""
    ours = panel_box(page)
    for box in page.evaluate("""(sel) => [...document.querySelectorAll(sel)].map(e => e.getBoundingClientRect())
        .filter(r => r.width > 0 && r.height > 0).map(r => ({x: r.x, y: r.y, width: r.width, height: r.height}))""", selector):
        apart = (ours["x"] + ours["width"] <= box["x"] or box["x"] + box["width"] <= ours["x"]
                 or ours["y"] + ours["height"] <= box["y"] or box["y"] + box["height"] <= ours["y"])
        assert apart, ("the OOM panel covers the frontend's error UI", ours, box)


def panel_box(page):
    return page.locator("[data-testid=gg-oom-panel]").bounding_box()


def assert_beside(page, node_id):
    node = page.evaluate(JS_NODE_RECT, node_id)
    box = panel_box(page)
    right_of = abs(box["x"] - (node["right"] + 14)) <= 2
    left_of = abs(box["x"] + box["width"] - (node["left"] - 14)) <= 2
    assert right_of or left_of, (node, box)
    assert box["y"] < node["bottom"] and box["y"] + box["height"] > node["top"], (node, box)


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


SIDEBAR_RECT = """() => { const r = document.querySelector('.side-bar-panel').getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }"""
PANEL_SIDE = """() => ['gg-right', 'gg-left', 'gg-docked'].find(c =>
  document.querySelector('[data-testid=gg-oom-panel]').classList.contains(c))"""


def test_panel_stays_beside_the_node_when_the_sidebar_opens(page, output_dir):
    """ux20's walk on 1.58: the panel was up beside a node near the canvas's left edge; opening the sidebar covered
    that part of the canvas, and the panel went below the node with its arrow pointing into the sidebar. The panel
    never covers the sidebar: beside the node when the node shows, its arrow on the node's side; docked at the
    right when the sidebar hides the node."""
    load_api(page, oom_workflow("cuda_caching"))
    frame_node(page, 10, x=90, y=110)
    page.evaluate("() => app.queuePrompt(0, 1)")  # a real OOM: on 1.58 the "Generation failed" card comes too
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible", timeout=90000)
    page.locator(FRONTEND_ERROR_UI).first.wait_for(state="visible", timeout=10000)
    if page.locator(".p-dialog").count():  # 1.35: its modal covers everything; closed, as a user does
        page.keyboard.press("Escape")
        page.locator(".p-dialog").first.wait_for(state="hidden", timeout=10000)
    page.wait_for_timeout(300)
    assert_beside(page, "10")
    page.evaluate("() => app.extensionManager.command.execute('Workspace.ToggleSidebarTab.gpu-garden-memory')")
    page.wait_for_selector(".gg-side", state="visible", timeout=10000)
    page.wait_for_timeout(500)
    side_bar = page.evaluate(SIDEBAR_RECT)
    node = page.evaluate(JS_NODE_RECT, "10")
    assert node["right"] <= side_bar["right"] + 1, (node, side_bar)  # the sidebar hides the node: docked
    box = panel_box(page)
    assert box["x"] >= side_bar["right"], ("the panel covers the sidebar", side_bar, box)
    assert page.evaluate(PANEL_SIDE) == "gg-docked"
    assert_not_covering(page)
    # the node just right of the sidebar, as in the walk: beside it again, arrow towards it, the sidebar clear
    frame_node(page, 10, x=side_bar["right"] + 10, y=90)
    page.wait_for_timeout(300)
    box = panel_box(page)
    node = page.evaluate(JS_NODE_RECT, "10")
    page.screenshot(path=str(output_dir / f"oom_panel_sidebar{'_nodes2' if page.vue_nodes else ''}.png"))
    assert box["x"] >= side_bar["right"], ("the panel covers the sidebar", side_bar, box)
    assert page.evaluate(PANEL_SIDE) == "gg-right" and abs(box["x"] - (node["right"] + 14)) <= 2, (box, node)
    assert_not_covering(page)


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


def activations_report():
    """The ui48 walk's report: sampling short of memory on an 8 GiB card, with the real comfyui-activations guide."""
    from gpu_garden.memory.triage import guides

    report = vae_report("3")
    report.update(cause="activations", actions=[], node={"id": "3", "type": "KSampler", "title": "KSampler"},
                  causes=[{"id": "activations", "confidence": 0.8,
                           "evidence": ["1.50 GiB requested with 312.00 MiB free of 8.00 GiB"]}],
                  numbers={"requested": 3 << 29, "free": 312 << 20, "reserved_unallocated": 1181116006, "total": 8 << 30})
    report["guide"] = guides.render(guides.load_all()["comfyui-activations"], {"reserve_vram_gb": "1.8"})
    return report


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


# Each text of the panel with its colour and the first opaque background behind it (a colour with alpha under 1 is
# looked through). Only elements that hold text themselves.
PANEL_TEXTS = """() => {
    const opaque = (c) => !/^rgba\\(.*, 0(\\.\\d+)?\\)$|transparent|\\/ 0(\\.\\d+)?\\)$/.test(c);
    const out = [];
    for (const e of document.querySelectorAll('[data-testid=gg-oom-panel] *')) {
        const own = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
        if (!own || !e.getClientRects().length) continue;
        let b = e, bg = getComputedStyle(b).backgroundColor;
        while (b && !opaque(bg)) { b = b.parentElement; bg = b ? getComputedStyle(b).backgroundColor : 'rgb(0, 0, 0)'; }
        out.push([own.slice(0, 40), getComputedStyle(e).color, bg]);
    }
    return out;
}"""


def test_panel_follows_the_light_and_the_dark_palette(browser, comfy_host, output_dir):
    """ui48's walk: the panel was dark (#1d1f24) on every palette. It takes the palette's own surfaces now: light on
    the light palette, and every text in it reads at 4:1 or better against what is behind it on both."""
    from web.test_estimate_tiers import _rgb, contrast

    for palette in ("light", "dark"):
        page, console = open_comfy(browser, comfy_host, settings={"Comfy.ColorPalette": palette})
        try:
            load_api(page, sd15_prompt())
            report = activations_report()
            report.update(uncertain=True, causes=report["causes"] + [
                {"id": "fragmentation", "confidence": 0.7, "evidence": ["1.10 GiB reserved but unallocated"]}])
            page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
            page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
            page.evaluate("() => document.querySelectorAll('[data-testid=gg-oom-panel] details').forEach(d => d.open = true)")
            page.wait_for_timeout(200)
            page.locator("[data-testid=gg-oom-panel]").screenshot(path=str(output_dir / f"oom_panel_{palette}.png"))
            bg = page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=gg-oom-panel]')).backgroundColor")
            assert (sum(_rgb(bg)) / 3 > 0.6) == (palette == "light"), (palette, bg)
            texts = page.evaluate(PANEL_TEXTS)
            assert len(texts) > 20, texts
            low = [(t, fg, b, round(contrast(fg, b), 2)) for t, fg, b in texts if contrast(fg, b) < 4]
            assert low == [], (palette, low)
            assert console.from_pack() == [], console.from_pack()
        finally:
            page.context.close()


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


def test_escape_closes_the_panel_once_the_user_is_in_it(comfy_page):
    """walk52: the panel is a dialog (role=dialog) with a close button, but Escape did nothing. Escape now closes it
    when focus is in it (a click anywhere on it, or a button); Escape on the canvas (closing the node search, say)
    leaves it open."""
    page, console = comfy_page
    load_api(page, sd15_prompt())
    frame_node(page, 8, x=360, y=200)
    panel = page.locator("[data-testid=gg-oom-panel]")

    def show():
        page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", vae_report("8"))
        panel.wait_for(state="visible")

    show()
    page.mouse.click(150, 700)  # the canvas has focus
    page.keyboard.press("Escape")
    page.wait_for_timeout(200)
    assert panel.count() == 1, "Escape on the canvas closed the panel"
    page.locator("[data-testid=gg-oom-cause]").click()  # plain text in the panel
    page.keyboard.press("Escape")
    panel.wait_for(state="detached", timeout=2000)
    show()
    page.locator("[data-testid=gg-oom-free]").focus()
    page.keyboard.press("Escape")
    panel.wait_for(state="detached", timeout=2000)
    assert console.from_pack() == [], console.from_pack()


MINIMAP_RECT = """() => { const e = document.querySelector('.litegraph-minimap, [data-testid=minimap-container]');
  const r = e && e.getBoundingClientRect();
  return r && r.width > 0 ? {x: r.x, y: r.y, width: r.width, height: r.height} : null; }"""


def apart(a, b):
    return a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or a["y"] + a["height"] <= b["y"] \
        or b["y"] + b["height"] <= a["y"]


def test_the_docked_panel_keeps_clear_of_the_minimap(page):
    """walk52 left-open 4: with the failing node off-screen the panel docks at the canvas's right edge, and at up to
    640 px tall it covered the minimap's left part. Docked, it now sits left of a shown minimap (graph_adapter.minimapRect);
    with the minimap closed it docks at the right edge as before. Breaks with oom_place.js's minimap step removed
    (the panel's box and the minimap's overlap)."""
    page.evaluate("() => app.extensionManager.setting.set('Comfy.Minimap.Visible', true)")
    load_api(page, sd15_prompt())
    page.wait_for_timeout(300)
    minimap = page.evaluate(MINIMAP_RECT)
    if minimap is None:
        pytest.skip("this frontend shows no minimap")
    # node 3 is the KSampler here, not the report's VAEDecode: the panel docks (as for a node off-screen)
    page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", vae_report("3"))
    page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
    page.evaluate("() => document.querySelectorAll('[data-testid=gg-oom-panel] details').forEach(d => d.open = true)")
    page.wait_for_timeout(300)  # placed again each frame at its full height
    box = panel_box(page)
    assert page.evaluate(PANEL_SIDE) == "gg-docked"
    assert box["y"] + box["height"] > minimap["y"], (box, minimap)  # tall enough to reach the minimap's rows
    assert apart(box, minimap), ("the docked panel covers the minimap", box, minimap)
    assert minimap["x"] - (box["x"] + box["width"]) <= 30, (box, minimap)  # beside it, not thrown across the canvas
    page.evaluate("() => app.extensionManager.setting.set('Comfy.Minimap.Visible', false)")
    page.wait_for_timeout(500)
    assert page.evaluate(MINIMAP_RECT) is None
    closed = panel_box(page)
    assert closed["x"] > box["x"] + 100, (closed, box)  # the right edge again
