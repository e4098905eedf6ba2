"""The VRAM Budget node's live bar, the canvas meter and its settings, in real Chromium against a real
ComfyUI (--cpu, so the one device is host RAM)."""
import pytest
from support.comfy_host import sd15_prompt

from web.conftest import open_comfy

ADD_NODE = """([x, y]) => {
  const ds = app.canvas.ds;
  const at = (cx, cy) => [cx / ds.scale - ds.offset[0], cy / ds.scale - ds.offset[1]];
  const node = LiteGraph.createNode("GPUGardenVRAMBudget");
  node.pos = at(x, y);
  app.graph.add(node);
  app.canvas.setDirty(true, true);
  return node.id;
}"""

class srgb(tuple):
    """A computed colour ('rgb(r, g, b)' or a color-mix's 'color(srgb r g b)') on 0..255; equal to another colour
    within one step per channel (the page stores a mix in floats)."""
    def __new__(cls, css):
        import re
        nums = [float(x) for x in re.findall(r"[\d.]+", css)][:3]
        return super().__new__(cls, (x * 255 for x in nums) if css.startswith("color(") else nums)

    def __eq__(self, other):
        return len(self) == len(other) and all(abs(a - b) <= 1 for a, b in zip(self, other))

    __hash__ = tuple.__hash__


def half_with_text(hue, text="#dddddd"):
    """`hue` mixed 50/50 with the dark palette's node text colour."""
    a, b = (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in (hue, text))
    return tuple((x + y) / 2 for x, y in zip(a, b))


# A clean graph: Load Checkpoint -> VRAM Budget (MODEL passes through), for the screenshots.
WIRED_GRAPH = """() => {
  app.graph.clear();
  const ds = app.canvas.ds;
  ds.offset = [0, 0]; ds.scale = 1;
  const ckpt = LiteGraph.createNode("CheckpointLoaderSimple");
  ckpt.pos = [120, 180];
  app.graph.add(ckpt);
  const node = LiteGraph.createNode("GPUGardenVRAMBudget");
  node.pos = [480, 180];
  app.graph.add(node);
  ckpt.connect(0, node, 0);
  app.canvas.setDirty(true, true);
  return node.id;
}"""

NODE_BOX = """(id) => {
  const el = document.querySelector(`[data-node-id="${id}"]`);
  if (el) { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }
  const n = app.graph.getNodeById(id), ds = app.canvas.ds, c = app.canvas.canvas.getBoundingClientRect();
  const th = LiteGraph.NODE_TITLE_HEIGHT;
  return [(n.pos[0] + ds.offset[0]) * ds.scale + c.left, (n.pos[1] - th + ds.offset[1]) * ds.scale + c.top,
          n.size[0] * ds.scale, (n.size[1] + th) * ds.scale];
}"""


@pytest.fixture(scope="module")
def loaded_checkpoint(comfy_host):
    """A run first, so ComfyUI holds the checkpoint and the bar has model segments to show."""
    entry = comfy_host.run(sd15_prompt(seed=21))
    assert entry["status"]["status_str"] == "success", entry["status"]


def _open(browser, comfy_host, vue):
    page, console = open_comfy(browser, comfy_host, vue_nodes=vue,
                               settings={"GPUGarden.Meter.Enabled": True, "GPUGarden.Meter.IntervalMs": 1000,
                                         "Comfy.Minimap.Visible": False})
    page.wait_for_function("() => window.app.extensions.some(e => e.name === 'GPUGarden.Budget')", timeout=30000)
    return page, console


def _bar_state(page, sel):
    return page.evaluate("""(sel) => {
      const root = document.querySelector(sel);
      const spans = [...root.querySelectorAll('.gg-bar > span')];
      return {
        kinds: spans.map(s => s.dataset.kind),
        titles: spans.map(s => s.title),
        labels: spans.map(s => s.dataset.label),
        widths: spans.map(s => parseFloat(s.style.width)),
        live: root.querySelector('.gg-live')?.textContent,
        text: root.textContent,
        box: (() => { const r = root.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })(),
      };
    }""", sel)


@pytest.mark.parametrize("vue", [False, True], ids=["classic", "nodes2"])
def test_budget_node_shows_a_live_owner_split_bar(browser, comfy_host, loaded_checkpoint, output_dir, vue):
    page, console = _open(browser, comfy_host, vue)
    try:
        node_id = page.evaluate(WIRED_GRAPH)
        sel = "[data-testid=gpu-garden-budget]"
        page.wait_for_selector(sel, state="visible", timeout=20000)
        page.wait_for_function(f"() => document.querySelectorAll('{sel} .gg-bar > span').length >= 2", timeout=20000)
        first = _bar_state(page, sel)
        assert "free" in first["kinds"] and "model" in first["kinds"], first
        model_titles = [t for k, t in zip(first["kinds"], first["titles"]) if k == "model"]
        assert any("GiB" in t or "MiB" in t for t in model_titles), model_titles  # each model named on hover
        # each model by the label the server sends (as the unload face and the OOM panel name it), not its class name
        sent = comfy_host.get("/gpu_garden/budget")
        labels = {m["label"] for d in sent["devices"] for m in d["models"]}
        shown = {lab for k, lab in zip(first["kinds"], first["labels"]) if k == "model"}
        assert shown == labels and any(lab.startswith("text encoder (") for lab in shown), (shown, labels)
        assert not any("ClipModel" in t for t in model_titles), model_titles
        assert sum(first["widths"]) == pytest.approx(100, abs=1.0)
        assert "GiB free" in first["text"] and "RAM" in first["text"]
        # live: the timestamp moves without a run
        page.wait_for_function(f"(t) => document.querySelector('{sel} .gg-live').textContent !== t", arg=first["live"],
                               timeout=10000)
        # the widget is display only: nothing of it is saved in the workflow or sent in the prompt
        values = page.evaluate(f"() => app.graph.getNodeById({node_id}).serialize().widgets_values || []")
        assert values == [] or all(v in ("", None) for v in values), values
        prompt = page.evaluate("async () => (await app.graphToPrompt()).output")
        assert set(prompt[str(node_id)]["inputs"]) == {"value"}, prompt[str(node_id)]  # the link, no widget value
        page.wait_for_timeout(400)  # width transitions settle
        x, y, w, h = page.evaluate(NODE_BOX, node_id)
        assert w > 300 and h > 100
        name = "budget_node_vue.png" if vue else "budget_node.png"
        page.screenshot(path=str(output_dir / name), clip={"x": 80, "y": y - 40, "width": x + w + 40 - 80, "height": h + 80})
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


def test_node_records_the_snapshot_when_it_runs(browser, comfy_host, loaded_checkpoint):
    page, console = _open(browser, comfy_host, False)
    try:
        # the test checkpoint's graph, one step at 64x64: frontend 1.58's default graph is Z-Image Turbo at 1024x1024, and
        # once the host tests had written its files the run loaded a 6B model at full size on the CPU host (OOM-killed at
        # 24 GB, session 66); the shrink below found no EmptyLatentImage there
        page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'budget.json'); }", sd15_prompt())
        node_id = page.evaluate(ADD_NODE, [700, 300])
        page.wait_for_selector("[data-testid=gpu-garden-budget]", state="visible", timeout=20000)
        assert page.evaluate(SMALL_DEFAULT_GRAPH) == 3  # steps, width, height: the run stays one step at 64x64
        page.evaluate("() => app.queuePrompt(0, 1)")
        page.wait_for_function(
            "() => (document.querySelector('[data-testid=gpu-garden-budget] .gg-recorded')?.textContent || '').startsWith('at run')",
            timeout=120000)
        text = page.evaluate("() => document.querySelector('[data-testid=gpu-garden-budget] .gg-recorded').textContent")
        assert "GiB free" in text and "RAM" in text
        assert page.evaluate(f"() => !!app.graph.getNodeById({node_id})")
    finally:
        page.context.close()
        comfy_host.wait_idle()  # the host is shared: leave no run behind for the next test


# One step at 64x64 is enough here (sd15_prompt's already; the shrink checks the graph is that one).
SMALL_DEFAULT_GRAPH = """() => {
  let set = 0;
  for (const n of app.graph.nodes) {
    for (const w of n.widgets || []) {
      if (n.type === "KSampler" && w.name === "steps") { w.value = 1; set++; }
      if (n.type === "EmptyLatentImage" && (w.name === "width" || w.name === "height")) { w.value = 64; set++; }
    }
  }
  return set;
}"""


def test_meter_is_live_and_follows_its_settings(browser, comfy_host, loaded_checkpoint, output_dir):
    page, console = _open(browser, comfy_host, False)
    sel = "[data-testid=gpu-garden-meter]"
    try:
        page.wait_for_selector(sel, state="visible", timeout=20000)
        stamp = page.get_attribute(sel, "data-sampled-at")
        page.wait_for_function(f"(s) => document.querySelector('{sel}').dataset.sampledAt !== s", arg=stamp, timeout=10000)
        text = page.text_content(sel)
        assert "RAM" in text and "GiB free" in text
        box = page.locator(sel).bounding_box()
        page.wait_for_timeout(400)
        page.screenshot(path=str(output_dir / "budget_meter.png"),
                        clip={"x": max(0, box["x"] - 220), "y": box["y"] - 90, "width": box["width"] + 440, "height": box["height"] + 110})

        # click: the sidebar tab with the full breakdown (on an empty canvas: over a node the meter lets clicks through)
        page.evaluate("() => { app.graph.clear(); app.canvas.setDirty(true, true); }")
        page.wait_for_function(f"() => !document.querySelector('{sel}').classList.contains('gg-meter-under')", timeout=10000)
        page.click(sel)
        page.wait_for_selector(".gg-side .gg-bar", state="visible", timeout=10000)
        assert "GPU memory, by owner" in page.text_content(".gg-side")
        # the sidebar's model list names each model by its label too (format.js modelLabel)
        sent = comfy_host.get("/gpu_garden/budget")
        listed = page.evaluate("() => [...document.querySelectorAll('.gg-side .gg-dev ul li')].map(li => li.textContent)")
        for m in (m for d in sent["devices"] for m in d["models"]):
            assert any(t.startswith(m["label"] + ": ") for t in listed), (m, listed)
        assert not any("ClipModel" in t for t in listed), listed
        # the tab is built from registered sections (web/lib/sidebar.js): devices first, then the pack's health
        sections = page.evaluate("() => [...document.querySelectorAll('.gg-side [data-gg-section]')].map(e => e.dataset.ggSection)")
        assert sections[:2] == ["devices", "health"], sections
        health = comfy_host.get("/gpu_garden/health")
        page.wait_for_selector("[data-testid=gpu-garden-health] li[data-feature]", state="attached", timeout=10000)
        # the list is folded when nothing is red or amber (a healthy host): unfold it to read and show it
        if not page.evaluate("() => document.querySelector('[data-testid=gpu-garden-health] details').open"):
            summary = page.text_content("[data-testid=gpu-garden-health] summary")
            assert "working" in summary and "not installed" not in summary and "errors" not in summary, summary
            page.click("[data-testid=gpu-garden-health] summary")
        page.wait_for_selector("[data-testid=gpu-garden-health] li[data-feature]", state="visible", timeout=5000)
        shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-testid=gpu-garden-health] li')]
            .map(li => [li.dataset.feature, li.dataset.state]))""")
        assert set(shown) == set(health["features"]), (shown, health["features"])
        for name, f in health["features"].items():
            want = ("down" if not f["installed"] else "warn" if not f["working"] or f["last_error"]
                    else "off" if f.get("enabled") is False else "ok")
            assert shown[name] == want, (name, f, shown[name])
        # automatic modes are off by default: grey "off" with the server's note, never red or amber
        for name in ("auto_unload.prepare_sampling", "fit_guard.prepare_sampling"):
            assert shown[name] == "off", (name, health["features"][name])
            row = page.text_content(f"[data-testid=gpu-garden-health] li[data-feature='{name}']")
            assert "off" in row and "automatic mode off" in row, row
        assert "down" not in shown.values(), shown
        # each row reads as what the feature does; the internal id is secondary detail (ux20b)
        names = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-testid=gpu-garden-health] li')]
            .map(li => [li.dataset.feature, [li.querySelector('.gg-health-name').textContent, li.querySelector('.gg-health-id')?.textContent]]))""")
        for feature, (title, secondary) in names.items():
            assert "_" not in title and "." not in title and secondary == feature, (feature, title, secondary)
            assert title == health["features"][feature]["title"], (feature, title)  # the server's name (nodes/health.py)
        assert names["oom_capture.execute"][0] == "OOM capture: the failing node", names
        assert f"ComfyUI {health['comfyui_version'] or 'unknown'}" in page.text_content("[data-testid=gpu-garden-health]")
        page.screenshot(path=str(output_dir / "budget_sidebar.png"), clip={"x": 0, "y": 0, "width": 700, "height": 520})

        # off and on again
        page.evaluate("() => app.extensionManager.setting.set('GPUGarden.Meter.Enabled', false)")
        page.wait_for_selector(sel, state="hidden", timeout=5000)
        page.evaluate("() => app.extensionManager.setting.set('GPUGarden.Meter.Enabled', true)")
        page.wait_for_selector(sel, state="visible", timeout=5000)

        # refresh interval: applied on the page and sent to the server
        page.evaluate("() => app.extensionManager.setting.set('GPUGarden.Meter.IntervalMs', 250)")
        page.wait_for_function("() => window.__gpuGarden.budget.intervalMs === 250", timeout=5000)
        n0 = page.evaluate("() => window.__gpuGarden.budget.received")
        page.wait_for_timeout(2500)
        n1 = page.evaluate("() => window.__gpuGarden.budget.received")
        assert n1 - n0 >= 4, (n0, n1)  # about 10 at 250 ms, 2-3 at the 1 s default
        assert console.from_pack() == [], console.from_pack()
        assert console.unexpected() == [], console.unexpected()
    finally:
        page.evaluate("() => app.extensionManager.setting.set('GPUGarden.Meter.IntervalMs', 1000)")
        page.context.close()


GiB = 1 << 30
# A 24 GiB NVIDIA card mid-run, numbers as the probe reports them (same shape as tests/unit/test_probe.py).
GPU_SNAPSHOT = {
    "devices": [{
        "index": 0, "name": "NVIDIA GeForce RTX 4090", "backend": "cuda", "device": "cuda:0",
        "total": 24 * GiB, "free": int(3.1 * GiB), "torch_allocated": 17 * GiB, "torch_reserved": int(18.6 * GiB),
        "reserved_unallocated": int(1.6 * GiB), "this_process_other": int(0.6 * GiB), "other_processes": int(1.4 * GiB),
        "models": [{"name": "Flux (Flux)", "bytes": int(11.1 * GiB), "total_bytes": int(11.1 * GiB), "partial": False},
                   {"name": "T5XXL (text encoder)", "bytes": int(4.2 * GiB), "total_bytes": int(9.1 * GiB), "partial": True}],
        "notes": []}],
    "host_ram": {"total": 64 * GiB, "available": 40 * GiB}, "sampled_at": 1796030000.0, "notes": [],
}


def test_bar_splits_a_gpu_by_owner_and_turns_red_as_free_shrinks(browser, comfy_host, output_dir):
    page, console = _open(browser, comfy_host, False)
    try:
        node_id = page.evaluate(WIRED_GRAPH)
        sel = "[data-testid=gpu-garden-budget]"
        page.wait_for_selector(f"{sel} .gg-bar > span", timeout=20000)
        page.evaluate("(snap) => { const b = window.__gpuGarden.budget; b.paused = true; b.show(snap); }", GPU_SNAPSHOT)
        page.wait_for_timeout(500)  # width transitions
        st = _bar_state(page, sel)
        assert st["kinds"] == ["model", "model", "torch_other", "reserved_unallocated", "this_process_other",
                               "other_processes", "unattributed", "free"], st["kinds"]
        assert st["titles"][0] == "Flux (Flux): 11.10 GiB"
        assert st["titles"][1] == "T5XXL (text encoder): 4.20 GiB (partially loaded)"
        assert "GPU 0 · NVIDIA GeForce RTX 4090" in st["text"] and "3.1 / 24.0 GiB free" in st["text"]
        # every number in the legend carries its unit (ux20b: "free 21.97" left the reader to guess)
        legend = page.evaluate(f"() => [...document.querySelectorAll('{sel} .gg-legend > span')].map(s => s.textContent)")
        assert "2 models 15.30 GiB" in legend and "free 3.10 GiB" in legend, legend
        assert all(t.endswith(" GiB") for t in legend), legend
        warn = page.evaluate(f"() => getComputedStyle(document.querySelector('{sel} .gg-dev-free')).color")
        x, y, w, h = page.evaluate(NODE_BOX, node_id)
        page.screenshot(path=str(output_dir / "budget_node_gpu.png"), clip={"x": 80, "y": y - 40, "width": x + w + 40 - 80, "height": h + 80})

        low = json_copy(GPU_SNAPSHOT)
        low["devices"][0]["free"] = int(0.3 * GiB)
        low["devices"][0]["other_processes"] = int(4.2 * GiB)
        page.evaluate("(snap) => window.__gpuGarden.budget.show(snap)", low)
        red = page.evaluate(f"() => getComputedStyle(document.querySelector('{sel} .gg-dev-free')).color")
        # the words take a mid hue mixed half and half with the face's text (#ddd on the dark palette), so they read on
        # the light palette too (test_estimate_tiers checks the contrast): amber, then red
        assert (srgb(warn), srgb(red)) == (half_with_text("#d97706"), half_with_text("#dc2626")), (warn, red)
        ok = json_copy(GPU_SNAPSHOT)
        ok["devices"][0].update(free=12 * GiB, torch_allocated=6 * GiB, torch_reserved=int(6.5 * GiB),
                                reserved_unallocated=int(0.5 * GiB), models=[])
        page.evaluate("(snap) => window.__gpuGarden.budget.show(snap)", ok)
        green = page.evaluate(f"() => getComputedStyle(document.querySelector('{sel} .gg-dev-free')).color")
        assert srgb(green) == half_with_text("#16a34a"), green
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


def json_copy(obj):
    import json

    return json.loads(json.dumps(obj))


OVERLAP = """([a, b]) => {
  const r = (sel) => { const e = document.querySelector(sel); const x = e.getBoundingClientRect(); return [x.left, x.top, x.right, x.bottom]; };
  const [m, n] = [r(a), r(b)];
  return {meter: m, other: n, overlap: m[0] < n[2] && m[2] > n[0] && m[1] < n[3] && m[3] > n[1]};
}"""


def test_meter_leaves_node_faces_and_their_clicks_alone(browser, comfy_host, output_dir):
    """The meter docks beside the frontend's canvas controls: at the Footprint Estimate's default view (the one
    its screenshots use) it does not cover the node's "Estimate the open graph" button (it sat centred over it);
    panned under a node it lets the click through to the node."""
    from support.web import show_node
    page, console = _open(browser, comfy_host, False)
    meter, button = "[data-testid=gpu-garden-meter]", "[data-testid=gg-estimate-graph-button]"
    try:
        page.wait_for_selector(meter, state="visible", timeout=20000)
        node_id = page.evaluate("""() => { app.graph.clear(); const n = LiteGraph.createNode("GPUGardenFootprintEstimate");
            n.pos = [100, 100]; app.graph.add(n); return n.id; }""")
        page.wait_for_selector(button, state="visible", timeout=20000)
        # the estimate screenshots' view (test_estimate_node): the node 420, 120 in at 110 %, its face reaching the bottom
        show_node(page, node_id)
        # after a run the face is taller and its button sits about 30 px above the window's bottom, in the middle
        page.evaluate(f"""() => {{ const b = document.querySelector('{button}').getBoundingClientRect(), ds = app.canvas.ds;
            ds.offset[1] += (window.innerHeight - 30 - b.bottom) / ds.scale; app.canvas.setDirty(true, true); }}""")
        page.wait_for_timeout(300)
        page.evaluate("() => window.dispatchEvent(new Event('resize'))")
        page.wait_for_timeout(300)
        got = page.evaluate(OVERLAP, [meter, button])
        assert not got["overlap"], got
        controls = page.evaluate(OVERLAP, [meter, "[data-testid=zoom-controls-button]"])
        assert not controls["overlap"], controls
        page.screenshot(path=str(output_dir / "budget_meter_docked.png"))

        first = page.get_attribute(meter, "data-dock")  # the face reaches the bottom-right dock here: bottom-left
        assert first in ("bottom-right", "bottom-left"), first
        # a node panned under the meter: it moves to the other dock, free
        m = page.locator(meter).bounding_box()
        page.evaluate("""([id, x, y]) => { const ds = app.canvas.ds, n = app.graph.getNodeById(id);
            ds.offset[0] = x / ds.scale - n.pos[0] - 20; ds.offset[1] = y / ds.scale - n.pos[1] - 20; app.canvas.setDirty(true, true); }""",
                      [node_id, m["x"], m["y"]])
        page.mouse.move(m["x"] + 5, m["y"] + 5)
        page.mouse.up()  # pointerup: the meter checks what it covers
        page.wait_for_function(f"""(first) => {{ const e = document.querySelector('{meter}');
            return e.dataset.dock !== first && !e.classList.contains('gg-meter-under'); }}""", arg=first, timeout=5000)
        # a node under every dock (stretched over the canvas): the meter stays in the first, fades, and the click
        # reaches the node, not the meter
        page.evaluate("""(id) => { const ds = app.canvas.ds, n = app.graph.getNodeById(id);
            ds.offset[0] = 10 / ds.scale - n.pos[0]; ds.offset[1] = 60 / ds.scale - n.pos[1]; n.size[0] = 6000; n.size[1] = 6000;
            app.canvas.setDirty(true, true); }""", node_id)
        page.mouse.up()
        page.wait_for_function(f"""() => {{ const e = document.querySelector('{meter}');
            return e.dataset.dock === 'bottom-right' && e.classList.contains('gg-meter-under'); }}""", timeout=5000)
        m = page.locator(meter).bounding_box()
        page.mouse.click(m["x"] + m["width"] / 2, m["y"] + m["height"] / 2)
        page.wait_for_timeout(300)
        assert page.locator(".gg-side").count() == 0 or not page.locator(".gg-side").is_visible()
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


# client rectangles of the graph's nodes from its layout (pos, size, the title bar, the canvas's offset and scale),
# figured here and not by the pack's own overNode
NODES_UNDER = """(sel) => {
  const e = document.querySelector(sel), m = e.getBoundingClientRect(), c = app.canvas.canvas.getBoundingClientRect();
  const ds = app.canvas.ds, title = LiteGraph.NODE_TITLE_HEIGHT || 30;
  const under = app.graph.nodes.filter((n) => {
    const x = (n.pos[0] + ds.offset[0]) * ds.scale + c.left, y = (n.pos[1] - title + ds.offset[1]) * ds.scale + c.top;
    const r = [x, y, x + n.size[0] * ds.scale, y + (n.size[1] + title) * ds.scale];
    return m.left < r[2] && m.right > r[0] && m.top < r[3] && m.bottom > r[1];
  }).map((n) => n.type);
  return {under, faded: e.classList.contains('gg-meter-under'), opacity: getComputedStyle(e).opacity, dock: e.dataset.dock,
          meter: [m.left, m.top, m.right, m.bottom], inside: m.left >= 0 && m.top >= 0 && m.right <= innerWidth && m.bottom <= innerHeight};
}"""


def test_meter_is_readable_at_the_default_view(browser, comfy_host, output_dir):
    """web50: on 1.58.1's default graph a node reaches the meter's dock beside the canvas controls, so the meter
    started faded (30 % opacity, clicks passed through). At the default view, on the default graph and settings, it
    sits where no node is, unfaded, at 1400x900 and in a 1024x700 window."""
    page, console = open_comfy(browser, comfy_host)
    meter = "[data-testid=gpu-garden-meter]"
    try:
        page.wait_for_selector(meter, state="visible", timeout=20000)
        for w, h in ((1400, 900), (1024, 700)):
            page.set_viewport_size({"width": w, "height": h})
            page.wait_for_timeout(800)  # the resize places it; the fade's transition ends
            got = page.evaluate(NODES_UNDER, meter)
            assert got["under"] == [] and not got["faded"] and got["opacity"] == "1" and got["inside"], (w, h, got)
            controls = page.evaluate(OVERLAP, [meter, "[data-testid=zoom-controls-button]"])
            assert not controls["overlap"], (w, h, controls)
            page.screenshot(path=str(output_dir / f"budget_meter_default_view_{w}x{h}.png"))
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


def test_meter_and_oom_panel_never_cover_each_other(browser, comfy_host, output_dir):
    """fixW2 walk: the OOM panel (640 px tall, docked at the canvas's right edge) sat over the meter's left half at the
    bottom: the meter's docks avoided nodes, not the pack's own panel. With the panel open the meter docks clear of it
    (or yields, hidden, when both docks are under it); once the panel closes it goes back to its first dock."""
    from support.oom_panel import vae_report

    page, console = _open(browser, comfy_host, False)
    meter, panel = "[data-testid=gpu-garden-meter]", "[data-testid=gg-oom-panel]"
    try:
        page.wait_for_selector(meter, state="visible", timeout=20000)
        # the failing node low at the right, as in the walk: the panel opens on its left, down to the window's bottom
        node_id = page.evaluate("""() => { app.graph.clear(); const n = LiteGraph.createNode("VAEDecode"); n.pos = [0, 0];
            app.graph.add(n); const ds = app.canvas.ds, c = app.canvas.canvas.getBoundingClientRect(); ds.scale = 1;
            ds.offset[0] = innerWidth - 250 - c.left; ds.offset[1] = innerHeight - 180 - c.top; app.canvas.setDirty(true, true);
            window.dispatchEvent(new Event('resize')); return n.id; }""")
        page.wait_for_function(f"() => document.querySelector('{meter}').dataset.dock === 'bottom-right'", timeout=10000)
        before = page.locator(meter).bounding_box()
        report = vae_report(str(node_id))
        report["id"] = "meter-vs-panel"
        page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", report)
        page.locator(panel).wait_for(state="visible")
        page.wait_for_timeout(2500)  # a sample or two: the meter places itself again on each
        got = page.evaluate(OVERLAP, [meter, panel])
        hidden = page.evaluate(f"() => getComputedStyle(document.querySelector('{meter}')).visibility === 'hidden'")
        page.screenshot(path=str(output_dir / "budget_meter_beside_oom_panel.png"))
        box = page.locator(panel).bounding_box()  # the panel is where the meter was: the test sets up the walk's overlap
        assert box["x"] < before["x"] + before["width"] and before["x"] < box["x"] + box["width"] \
            and box["y"] < before["y"] + before["height"] and before["y"] < box["y"] + box["height"], (box, before)
        assert hidden or not got["overlap"], got
        page.click("[data-testid=gg-oom-close]")
        page.wait_for_function(f"""() => {{ const e = document.querySelector('{meter}');
            return e.dataset.dock === 'bottom-right' && getComputedStyle(e).visibility === 'visible'; }}""", timeout=10000)
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()
