"""The OOM panel among the rest of the workspace in real Chromium against the real --cpu ComfyUI: beside its node
or docked when the sidebar opens, clear of the minimap, on the light and the dark palette, and closed by Escape
once the user is in it (the panel's other tests: test_oom_panel.py)."""
import pytest

from support.comfy_host import sd15_prompt
from support.oom_panel import (FRONTEND_ERROR_UI, JS_NODE_RECT, activations_report, assert_beside,
                               assert_not_covering, frame_node, load_api, oom_workflow, panel_box, vae_report)
from support.oom_panel import page  # noqa: F401 (the fixture, in both render modes)
from web.conftest import open_comfy


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
