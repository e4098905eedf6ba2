"""The OOM panel's web tests (tests/web/test_oom_panel*.py): the `page` fixture in both node render modes, the
workflow that dies in GGTestRaiseOOM, the synthetic reports dispatched to the panel, and the helpers that lay a
prompt out, frame a node and check where the panel sits. A test module takes the fixture by importing it."""
import pytest

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
