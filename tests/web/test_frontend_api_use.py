"""How the pack reads the frontend, in real Chromium against the real --cpu ComfyUI, on 1.35.9 and 1.58.1: the OOM
panel follows its node without querying the page for the canvas area on every animation frame
(graph_adapter.canvasArea keeps the graph panel's element), and a node's input links are read through
LGraphNode.getInputLink, not input.link (1.58 deprecates it: "input.link is deprecated" in the console)."""
from support.comfy_host import sd15_prompt
from support.oom_panel import assert_beside, frame_node, load_api, vae_report
from web.conftest import open_comfy

# Count the page's selector queries for the canvas area (the graph panel, the side bars) from now on.
COUNT_AREA_QUERIES = """() => { const sels = ['.graph-canvas-panel', '.side-tool-bar-container', '.side-bar-panel'];
  window.__ggAreaQueries = 0;
  if (window.__ggCounting) return; window.__ggCounting = true;
  for (const name of ['querySelector', 'querySelectorAll']) {
    const own = Document.prototype[name];
    Document.prototype[name] = function (sel, ...rest) { if (sels.includes(sel)) window.__ggAreaQueries += 1; return own.call(this, sel, ...rest); };
  } }"""
FRAMES = "(n) => new Promise((done) => { let k = 0; const f = () => (++k >= n ? done(k) : requestAnimationFrame(f)); requestAnimationFrame(f); })"


def test_the_oom_panel_follows_without_a_query_per_frame(browser, comfy_host):
    page, console = open_comfy(browser, comfy_host, vue_nodes=False)
    try:
        load_api(page, sd15_prompt())
        frame_node(page, 8, x=420, y=220)
        page.evaluate("(r) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.oom', r)", vae_report("8"))
        page.locator("[data-testid=gg-oom-panel]").wait_for(state="visible")
        page.evaluate(FRAMES, 5)
        page.evaluate(COUNT_AREA_QUERIES)
        page.evaluate(FRAMES, 60)  # a second of frames: follow() places the panel on each
        assert page.evaluate("() => window.__ggAreaQueries") == 0
        assert_beside(page, "8")
        # the panel still follows its node while it is cached
        page.evaluate("() => { const ds = app.canvas.ds; ds.offset[0] -= 50; app.canvas.setDirty(true, true); }")
        page.evaluate(FRAMES, 10)
        assert_beside(page, "8")
        # a graph panel that left the document (a layout rebuilt) is looked up again, once. The count starts in the
        # same task as the replacement: a frame between two evaluate calls (a loaded machine) would place the panel,
        # re-query, and leave nothing to count. Wait for that re-query (a slow machine only makes it later; none at
        # all fails here), then count over a further second of frames: one query in all, not one per frame.
        page.evaluate(f"() => {{ const p = document.querySelector('.graph-canvas-panel'); ({COUNT_AREA_QUERIES})(); "
                      "p.replaceWith(p.cloneNode(true)); }")  # (the test's own query is made before the count starts)
        page.wait_for_function("() => window.__ggAreaQueries >= 1", timeout=60000)
        page.evaluate(FRAMES, 60)
        assert page.evaluate("() => window.__ggAreaQueries") == 1
        assert_beside(page, "8")
        assert [m for m in console if "frontend internals changed" in m["text"]] == []
    finally:
        page.context.close()


# Every read of a node's input links the pack makes (graph_adapter.inputLink, and through it the tiled swap's
# replaceNode, Fit to Card's offers; node_size's isInputConnected), with LiteGraph's deprecation warnings recorded
# while they run, with their stacks (1.58: every time, not once per page). 1.35 has no such warnings; the links must
# be right on both.
READ_LINKS = """async () => {
  const ga = await import('/extensions/comfyui-gpu-garden/lib/graph_adapter.js');
  const ns = await import('/extensions/comfyui-gpu-garden/lib/node_size.js');
  const LG = window.LiteGraph, g = app.rootGraph ?? app.graph, warned = [];
  const hook = (msg) => warned.push(`${msg}\n${new Error().stack}`);
  const repeat = LG.alwaysRepeatWarnings;
  if (Array.isArray(LG.onDeprecationWarning)) { LG.alwaysRepeatWarnings = true; LG.onDeprecationWarning.push(hook); }
  try {
    const node = (id) => ga.nodeById(g, id);
    const vae = node(8);
    const links = [0, 1].map((slot) => { const l = ga.inputLink(vae, slot); return l && String(l.origin_id); });
    const none = ga.inputLink(node(4), 0);
    const est = LG.createNode('GPUGardenFootprintEstimate');
    est.pos = [900, 500]; g.add(est);
    const size = ns.nodeSize(est);
    const tiled = ga.replaceNode(vae, 'VAEDecodeTiled', { widgets: { tile_size: 512 } });
    const tiledLinks = [0, 1].map((slot) => { const l = ga.inputLink(tiled, slot); return l && String(l.origin_id); });
    const { node: sg } = g.convertToSubgraph(new Set([tiled]));
    const sgLinks = (sg.inputs || []).map((inp, slot) => { const l = ga.inputLink(sg, slot); return l && String(l.origin_id); });
    return { links, none, size, sgLinks, tiledLinks, warned };
  } finally {
    if (Array.isArray(LG.onDeprecationWarning)) {
      LG.onDeprecationWarning.splice(LG.onDeprecationWarning.indexOf(hook), 1);
      LG.alwaysRepeatWarnings = repeat;
    }
  }
}"""


def test_input_links_are_read_without_the_deprecated_input_link(browser, comfy_host):
    page, console = open_comfy(browser, comfy_host, vue_nodes=False)
    try:
        load_api(page, sd15_prompt())  # 8 VAEDecode <- 3 KSampler (samples), 4 CheckpointLoaderSimple (vae)
        got = page.evaluate(READ_LINKS)
        assert got["links"] == ["3", "4"], got
        assert got["none"] is None, got  # the checkpoint loader has no input
        assert got["size"].get("width", 0) > 0 and got["size"].get("height", 0) > 0, got  # its size widgets, unlinked
        assert got["tiledLinks"] == ["3", "4"], got  # the tiled swap (replaceNode) kept both input links
        # a subgraph node's inputs: the links that feed it from outside (not the ones inside its subgraph)
        assert sorted(got["sgLinks"]) == ["3", "4"], got
        # (the frontend's own ComfyNode.configure reads input.link as a workflow loads: one warning per page that
        # is not the pack's, so the console as a whole cannot be the check; the calls above are)
        assert [w for w in got["warned"] if "input.link" in w] == [], got["warned"]
        assert [m for m in console if "frontend internals changed" in m["text"]] == []
    finally:
        page.context.close()
