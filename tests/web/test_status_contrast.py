"""The status words of every node face read on the light and the dark palette: test_estimate_tiers checks the
Footprint Estimate's verdict and tier chips and test_oom_panel every text of the OOM panel at 4:1; this checks the
other faces the same way (ui49): Fit to Card's summary (fits: green, does not fit: red), the Unload report's summary
(memory freed: green) and the VRAM Budget's free figure (ok, amber, red) on the node and on the canvas meter, with
every other text of those faces. Each face is fed the payload its server sends (nothing is queued), and each text is
measured against what is behind it: the first opaque background up to the face, else the node's own body colour,
which the classic canvas paints under the face; a faded text (opacity) is measured as it is seen, blended with
it. Run once per frontend."""
import pytest

from web.conftest import open_comfy
from web.test_budget import GPU_SNAPSHOT, json_copy
from web.test_estimate_tiers import _rgb, contrast

GiB = 1 << 30

# Three GPU Garden nodes on an empty graph, laid out so none covers another.
GRAPH = """() => {
  app.graph.clear();
  const ds = app.canvas.ds;
  ds.offset = [0, 0]; ds.scale = 1;
  const ids = {};
  for (const [type, x, y] of [["GPUGardenFitToCard", 60, 80], ["GPUGardenUnloadTextEncoders", 60, 420],
                              ["GPUGardenVRAMBudget", 560, 80]]) {
    const n = LiteGraph.createNode(type);
    n.pos = [x, y];
    app.graph.add(n);
    ids[type] = n.id;
  }
  app.canvas.setDirty(true, true);
  return ids;
}"""

# Every text of a face that holds text itself: [text, its colour, what is behind it, its opacity]. Behind it: the
# first opaque background from the element up to the face's root (a colour with alpha under 1 is looked through), else
# `under` (the node's body colour, or the page's for a face that is not on a node).
FACE_TEXTS = """([sel, nodeId]) => {
  const opaque = (c) => !/^rgba\\(.*, 0(\\.\\d+)?\\)$|transparent|\\/ 0(\\.\\d+)?\\)$/.test(c);
  const css = (c) => { const p = document.createElement('i'); p.style.color = c; document.body.append(p);
                       const v = getComputedStyle(p).color; p.remove(); return v; };
  const node = nodeId === null ? null : (app.rootGraph ?? app.graph).getNodeById(nodeId);
  const under = css(node ? node.bgcolor || LiteGraph.NODE_DEFAULT_BGCOLOR : getComputedStyle(document.body).backgroundColor);
  const root = document.querySelector(sel);
  const out = [];
  for (const e of [root, ...root.querySelectorAll('*')]) {
    const own = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!own || !e.getClientRects().length) continue;
    let b = e, bg = null;
    for (; b; b = b === root ? null : b.parentElement) { const c = getComputedStyle(b).backgroundColor; if (opaque(c)) { bg = c; break; } }
    let op = 1;  // a faded text (opacity on it or on a parent up to the face) is seen blended with what is behind it
    for (let a = e; a; a = a === root ? null : a.parentElement) op *= parseFloat(getComputedStyle(a).opacity);
    out.push([own.slice(0, 50), getComputedStyle(e).color, bg || under, op]);
  }
  return out;
}"""

FIT = {"mode": "apply", "memory_required": 3 * 2 ** 20, "stock_memory_required": 19 * 2 ** 20, "cond_batch": 2, "steps": [],
       "offers": [], "budget": 8 * GiB, "budget_source": "8 GiB (set on the node)"}
FITS = dict(FIT, fits=True, summary="fits: predicted peak 5.10 GiB of 8.00 GiB")
# with what a plan that does not fit shows under its summary: a step taken, an offer with no widget for it in this graph
# (nothing is wired to the node) and an information row
DOES_NOT_FIT = dict(FIT, fits=False, summary="does not fit: predicted peak 9.40 GiB of 8.00 GiB; nothing applied",
                    steps=[{"label": "VAE decode two samples at a time"}],
                    offers=[{"id": "lower_resolution", "label": "lower resolution: about 640x640 instead of 776x768",
                             "saving": 2 ** 30, "kind": "offer", "value": [640, 640],
                             "apply": {"from": "latent", "through": "same",
                                       "targets": [{"widgets": {"width": 640, "height": 640}}]}},
                            {"id": "block_swap", "label": "block swap: 12 blocks", "saving": 2 ** 30, "kind": "offer",
                             "value": 12, "without_widget": "info",
                             "apply": {"from": "model", "through": "same", "targets": [{"widgets": {"blocks_to_swap": 12}}]}}])
UNLOAD = {"summary": "Unloaded text encoder (SD1 CLIP): freed 235.84 MiB on cuda:0", "freed_bytes": 247300000,
          "in_host_ram": False, "lines": ["Unloaded text encoder (SD1 CLIP): freed 235.84 MiB on cuda:0",
                                          "cuda:0 free 6.10 GiB -> 6.33 GiB"]}


def seen(fg: str, bg: str, opacity: float) -> str:
    """The colour a text of `opacity` shows over `bg` (the page blends in sRGB), as an rgb() string."""
    mix = (opacity * f + (1 - opacity) * b for f, b in zip(_rgb(fg), _rgb(bg)))
    return "rgb({}, {}, {})".format(*(round(255 * x, 2) for x in mix))


def snapshot(free_gib: float) -> dict:
    """GPU_SNAPSHOT's 24 GiB card with `free_gib` free: 12 is ok, 3.1 amber (under a quarter), 0.3 red."""
    snap = json_copy(GPU_SNAPSHOT)
    snap["devices"][0]["free"] = int(free_gib * GiB)
    return snap


@pytest.mark.parametrize("palette", ["light", "dark"])
def test_status_words_of_every_face_read_on_the_palette(browser, comfy_host, palette):
    page, console = open_comfy(browser, comfy_host, settings={"Comfy.ColorPalette": palette, "GPUGarden.Meter.Enabled": True})
    try:
        page.wait_for_function("() => window.app.extensions.some(e => e.name === 'GPUGarden.Budget')", timeout=30000)
        ids = page.evaluate(GRAPH)
        fit, unload, budget = ids["GPUGardenFitToCard"], ids["GPUGardenUnloadTextEncoders"], ids["GPUGardenVRAMBudget"]
        page.wait_for_selector("[data-testid=gpu-garden-budget] .gg-dev-free", timeout=20000)
        page.wait_for_selector("[data-testid=gpu-garden-meter] .gg-meter-dev", timeout=20000)
        texts = []
        for payload in (FITS, DOES_NOT_FIT):
            page.evaluate("([id, fit]) => app.graph.getNodeById(id).onExecuted({ gpu_garden_fit: [fit] })", [fit, payload])
            texts += [("fit",) + tuple(t) for t in page.evaluate(FACE_TEXTS, [f"[data-testid=gg-fit]", fit])]
        page.evaluate("([id, r]) => app.graph.getNodeById(id).onExecuted({ gpu_garden_unload: [r] })", [unload, UNLOAD])
        texts += [("unload",) + tuple(t) for t in page.evaluate(FACE_TEXTS, ["[data-testid=gg-unload-report]", unload])]
        page.evaluate("() => { window.__gpuGarden.budget.paused = true; }")
        levels = []
        for free in (12, 3.1, 0.3):
            page.evaluate("(snap) => window.__gpuGarden.budget.show(snap)", snapshot(free))
            texts += [("budget",) + tuple(t) for t in page.evaluate(FACE_TEXTS, ["[data-testid=gpu-garden-budget]", budget])]
            texts += [("meter",) + tuple(t) for t in page.evaluate(FACE_TEXTS, ["[data-testid=gpu-garden-meter]", None])]
            levels.append(page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=gpu-garden-budget] .gg-dev-free')).color"))
        # the status words are there, each in its own colour: fits / does not fit, freed, free at three levels
        summaries = [t for t in texts if t[0] == "fit" and t[1].startswith(("fits:", "does not fit:"))]
        assert [t[1].split(":")[0] for t in summaries] == ["fits", "does not fit"] and summaries[0][2] != summaries[1][2], summaries
        freed = next(t for t in texts if t[0] == "unload" and t[1].startswith("Unloaded"))
        body = next(t for t in texts if t[0] == "unload" and t[1].startswith("cuda:0 free"))
        assert freed[2] != body[2], (freed, body)  # green, not the face's text colour
        assert len(set(levels)) == 3, levels
        assert {t[0] for t in texts} == {"fit", "unload", "budget", "meter"}, texts
        low = [(face, t, fg, bg, op, round(contrast(seen(fg, bg, op), bg), 2)) for face, t, fg, bg, op in texts
               if contrast(seen(fg, bg, op), bg) < 4]
        assert low == [], (palette, low)
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


# Every text of the meter with what makes up its look: [text, its colour, the opacity inside the meter, the meter's
# background (alpha kept), the meter's own opacity, the body colour of the node under it].
METER_TEXTS = """(nodeId) => {
  const m = document.querySelector('[data-testid=gpu-garden-meter]');
  const css = (c) => { const p = document.createElement('i'); p.style.color = c; document.body.append(p);
                       const v = getComputedStyle(p).color; p.remove(); return v; };
  const node = (app.rootGraph ?? app.graph).getNodeById(nodeId);
  const under = css(node.bgcolor || LiteGraph.NODE_DEFAULT_BGCOLOR);
  const out = [];
  for (const e of m.querySelectorAll('*')) {
    const own = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!own || !e.getClientRects().length) continue;
    let op = 1;
    for (let a = e; a && a !== m; a = a.parentElement) op *= parseFloat(getComputedStyle(a).opacity);
    out.push([own.slice(0, 40), getComputedStyle(e).color, op, getComputedStyle(m).backgroundColor,
              parseFloat(getComputedStyle(m).opacity), under]);
  }
  return out;
}"""


def _rgba(css: str):
    """'rgb(1, 2, 3)', 'rgba(1, 2, 3, 0.4)' or 'color(srgb 0.1 0.2 0.3 / 0.4)' -> (r, g, b, a) in 0..1."""
    import re
    nums = [float(x) for x in re.findall(r"[\d.]+", css)]
    if css.startswith("color("):
        return tuple(nums[:3]) + ((nums[3],) if len(nums) > 3 else (1.0,))
    return tuple(x / 255 for x in nums[:3]) + ((nums[3],) if len(nums) > 3 else (1.0,))


def _over(top, alpha, bottom):
    """`top` at `alpha` over opaque `bottom` (both (r, g, b) in 0..1), as the page blends them in sRGB."""
    return tuple(alpha * t + (1 - alpha) * b for t, b in zip(top, bottom))


def _css(rgb) -> str:
    return "rgb({}, {}, {})".format(*(round(255 * x, 2) for x in rgb))


def test_the_faded_meter_over_a_node_reads_on_the_light_palette(browser, comfy_host):
    """walk52 left-open 2: with a node under every dock the meter fades (gg-meter-under) and lets clicks through to
    the node; on the light palette "RAM 16.4 / 23.5 GiB free" was faint over the node (the whole meter at 30 %
    opacity: its texts read 1.6:1 over the node's #F5F5F5). Each text of the faded meter reads at 4.5:1 or better
    against what is behind it, composited: its colour through the meter's background (its alpha) and the meter's
    opacity over the node's body. Breaks with budget.js's `.gg-meter-under{opacity:.3}` back."""
    page, console = open_comfy(browser, comfy_host, settings={"Comfy.ColorPalette": "light", "GPUGarden.Meter.Enabled": True})
    meter = "[data-testid=gpu-garden-meter]"
    try:
        page.wait_for_function("() => window.app.extensions.some(e => e.name === 'GPUGarden.Budget')", timeout=30000)
        ids = page.evaluate(GRAPH)
        node_id = ids["GPUGardenVRAMBudget"]
        page.wait_for_selector(f"{meter} .gg-meter-dev", timeout=20000)
        page.evaluate("() => { window.__gpuGarden.budget.paused = true; }")
        page.evaluate("(snap) => window.__gpuGarden.budget.show(snap)", snapshot(12))
        # a node under every dock (stretched over the canvas): the meter stays in the first and fades
        page.evaluate("""(id) => { const ds = app.canvas.ds, n = app.graph.getNodeById(id);
            ds.offset[0] = 10 / ds.scale - n.pos[0]; ds.offset[1] = 60 / ds.scale - n.pos[1]; n.size[0] = 6000; n.size[1] = 6000;
            app.canvas.setDirty(true, true); }""", node_id)
        page.mouse.up()
        page.wait_for_function(f"() => document.querySelector('{meter}').classList.contains('gg-meter-under')", timeout=5000)
        page.wait_for_timeout(400)  # the fade's transition ends
        texts = page.evaluate(METER_TEXTS, node_id)
        assert any("GiB free" in t[0] for t in texts), texts
        low = []
        for text, fg, op, bg, meter_op, under in texts:
            r, g, b, a = _rgba(bg)
            face = _over((r, g, b), a, _rgba(under)[:3])            # the meter's background over the node
            ink = _over(_rgba(fg)[:3], op * _rgba(fg)[3], face)      # the text on it
            seen_bg, seen_fg = _over(face, meter_op, _rgba(under)[:3]), _over(ink, meter_op, _rgba(under)[:3])
            ratio = contrast(_css(seen_fg), _css(seen_bg))
            if ratio < 4.5:
                low.append((text, fg, op, bg, meter_op, under, round(ratio, 2)))
        assert low == [], low
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()
        comfy_host.post("/settings/Comfy.ColorPalette", "dark")  # the server keeps it: the next file's tests expect dark
