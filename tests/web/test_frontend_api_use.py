"""How the pack reads the frontend, in real Chromium against the real --cpu ComfyUI, on 1.35.9 and 1.58.1: the OOM
panel follows its node without querying the page for the canvas area on every animation frame
(graph_adapter.canvasArea keeps the graph panel's element)."""
from support.comfy_host import sd15_prompt
from web.conftest import open_comfy
from web.test_oom_panel import assert_beside, frame_node, load_api, vae_report

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
        # a graph panel that left the document (a layout rebuilt) is looked up again, once
        page.evaluate("() => { const p = document.querySelector('.graph-canvas-panel'); p.replaceWith(p.cloneNode(true)); }")
        page.evaluate(COUNT_AREA_QUERIES)
        page.evaluate(FRAMES, 60)
        assert page.evaluate("() => window.__ggAreaQueries") == 1
        assert_beside(page, "8")
        assert [m for m in console if "frontend internals changed" in m["text"]] == []
    finally:
        page.context.close()
