"""The Unload Text Encoders node shows its measured report on its face in real Chromium, in the classic
canvas and in Nodes 2.0 (Vue) mode; the report widget never serializes."""
import json
import uuid

from support.comfy_host import sd15_prompt
from web.conftest import open_comfy
from support.web import show_node

NODE = "GPUGardenUnloadTextEncoders"
SETTING = "GPUGarden.AutoUnloadTextEncoders"


def workflow() -> dict:
    p = sd15_prompt("a garden " + uuid.uuid4().hex[:8], seed=21)
    p["20"] = {"class_type": NODE, "inputs": {"positive": ["6", 0], "negative": ["7", 0], "clip": ["4", 1],
                                              "mode": "offload"}}
    p["3"]["inputs"].update(positive=["20", 0], negative=["20", 1])
    return p


def run_and_wait_for_report(page):
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'unload.json'); }", workflow())
    page.evaluate("async () => { await window.app.queuePrompt(0, 1); }")  # open_comfy waited for the client id
    page.wait_for_function(
        f"""() => {{
            const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
            const el = n && n.__ggUnloadReport;
            return el && el.querySelector('.gg-unload-summary') && el.isConnected;
        }}""", timeout=240000)  # a real run on CPU; the first one in a session loads the checkpoint
    return page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")




def test_report_on_node_face_classic(comfy_page, comfy_host, output_dir):
    page, console = comfy_page
    assert page.evaluate(f"() => window.app.extensionManager.setting.get({json.dumps(SETTING)})") is False
    node_id = run_and_wait_for_report(page)
    text = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggUnloadReport.innerText", node_id)
    assert "text encoder (SD1 CLIP) is no longer in ComfyUI's list of loaded models" in text and "no memory is freed" in text
    assert "SD1ClipModel" not in text, text  # the class is the report's identity, not what a user reads (ux20b)
    # a number and its unit never part at a wrap ("-> 0" / "B" on the CPU line, ux21): joined by a no-break space; the
    # arrow is the pack's own and nothing is 0 MiB, not "0 B" (web50 item 10)
    raw = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggUnloadReport.textContent", node_id)
    assert "→ 0\u00a0MiB" in raw and " MiB" not in raw and "->" not in raw, raw
    # ... and is not coloured as freed memory (it was green, the colour of memory given back: ux20's first hour)
    colors = page.evaluate("""(id) => { const face = window.app.graph.getNodeById(id).__ggUnloadReport;
        return [getComputedStyle(face.querySelector('.gg-unload-summary')).color, getComputedStyle(face).color]; }""", node_id)
    assert colors[0] == colors[1], colors
    # the whole report shows without scrolling (the CPU summary wraps to four rows; the face kept room for two)
    fit = page.evaluate("""(id) => { const face = window.app.graph.getNodeById(id).__ggUnloadReport;
        return [face.scrollHeight, face.clientHeight]; }""", node_id)
    assert fit[0] <= fit[1] + 1, fit

    # Display-only: the widget is not in the saved workflow nor in the prompt sent to the server.
    saved = page.evaluate("(id) => window.app.graph.serialize().nodes.find(n => String(n.id) === String(id)).widgets_values", node_id)
    assert saved == ["offload"]
    prompt = page.evaluate("async () => (await window.app.graphToPrompt()).output")
    ours = next(v for v in prompt.values() if v["class_type"] == NODE)
    assert set(ours["inputs"]) == {"positive", "negative", "clip", "mode"}

    comfy_host.wait_idle()
    show_node(page, node_id, top=180)
    page.screenshot(path=str(output_dir / "unload_node.png"))
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_report_on_node_face_vue_nodes(browser, comfy_host, output_dir):
    page, console = open_comfy(browser, comfy_host, vue_nodes=True)
    try:
        node_id = run_and_wait_for_report(page)
        report = page.locator("[data-testid='gg-unload-report']").first
        report.wait_for(state="visible", timeout=30000)
        assert "is no longer in ComfyUI's list of loaded models" in report.inner_text()  # --cpu (web50 item 10)
        comfy_host.wait_idle()
        show_node(page, node_id, top=180)
        box = report.bounding_box()
        page.screenshot(path=str(output_dir / "unload_node_vue.png"),
                        clip={"x": max(0, box["x"] - 60), "y": max(0, box["y"] - 160),
                              "width": box["width"] + 120, "height": box["height"] + 200})
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


# a report long enough to grow the node (the CPU summary wraps; six rows)
LONG_REPORT = {"summary": "text encoder (SD1 CLIP) is no longer in ComfyUI's list of loaded models; it stays in host RAM, "
                          "so no memory is freed", "freed_bytes": 0, "in_host_ram": True,
               "lines": ["text encoder (SD1 CLIP) is no longer in ComfyUI's list of loaded models"]
               + [f"cpu line {k}: 235.84 MiB -> 0 MiB, kept in host RAM for the next prompt" for k in range(5)]}
# save the open graph and load it again (what a reload or Ctrl+Z does: graph.configure), then read the node
RELOAD = f"""async (name) => {{
    const g = window.app.rootGraph ?? window.app.graph;
    await window.app.loadGraphData(g.serialize(), false, false, name);
    const n = (window.app.rootGraph ?? window.app.graph).nodes.find(n => n.type === {json.dumps(NODE)});
    return [n.size[0], n.size[1], n.computeSize()[1], n.__ggUnloadReport.innerText];
}}"""
OURS = f"(window.app.rootGraph ?? window.app.graph).nodes.find(n => n.type === {json.dumps(NODE)})"


def test_a_loaded_node_with_an_idle_face_shrinks_to_it(comfy_page):
    """fixW2 walk: after Ctrl+Z or a reload the face is the idle text again (it never serializes), but the node kept
    the height it grew to for the report: an empty box about 150 px tall under two lines. A workflow saved at the
    height a report grew it to now loads at the face's own height (the report: onExecuted with the server's payload)."""
    page, console = comfy_page
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'unload.json'); }", workflow())
    grown = page.evaluate(f"""(r) => {{ const n = {OURS}; const idle = n.size[1];
        n.setSize([400, n.size[1]]); n.onExecuted({{ gpu_garden_unload: [r] }}); return [idle, n.size[1]]; }}""", LONG_REPORT)
    assert grown[1] > grown[0] + 40, grown  # the report grew it
    width, height, needed, text = page.evaluate(RELOAD, "unload-tall")
    assert text.startswith("Runs after encoding"), text
    assert width == 400 and height == needed and height < grown[1], (width, height, needed, grown)  # the width is kept
    assert console.from_pack() == [], console.from_pack()


def test_a_hand_set_height_is_kept_on_reload(comfy_page):
    """fixU: the shrink on load (fixW3) also took away a height the user set by hand, larger than the idle face needs.
    One rule for every face node now (faceU: node_face.js records the height a result grew the node to).
    Only the height a report grew the node to is ours to take back; a hand-set one is kept, before a run and after."""
    page, console = comfy_page
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'unload.json'); }", workflow())
    page.evaluate(f"() => {{ {OURS}.setSize([400, 420]); }}")  # as the user's drag of the corner leaves it
    width, height, needed, text = page.evaluate(RELOAD, "unload-hand")
    assert text.startswith("Runs after encoding"), text
    assert (width, height) == (400, 420) and needed < 420, (width, height, needed)
    # a report grows it, then the user makes it taller still: that height is the user's too
    grown = page.evaluate(f"""(r) => {{ const n = {OURS}; n.setSize([400, 100]); n.onExecuted({{ gpu_garden_unload: [r] }});
        const g = n.size[1]; n.setSize([400, g + 60]); return g; }}""", LONG_REPORT)
    width, height, needed, text = page.evaluate(RELOAD, "unload-hand-after")
    assert height == grown + 60 and needed < height, (height, grown, needed)
    assert console.from_pack() == [], console.from_pack()


# a report of two rows: an encoder on the GPU whose memory is given back
SHORT_REPORT = {"summary": "text encoder (SD1 CLIP) offloaded: 235.84 MiB freed", "freed_bytes": 247291904,
                "in_host_ram": False, "lines": ["text encoder (SD1 CLIP) offloaded"]}
# the node's height after the report r arrives (onExecuted with the server's payload), and what its face needs then
REPORT = f"""(r) => {{ const n = {OURS}; n.onExecuted({{ gpu_garden_unload: [r] }}); return [n.size[1], n.computeSize()[1]]; }}"""


def test_a_grown_node_follows_a_shorter_report_and_a_hand_set_height_is_kept(comfy_page):
    """walk52 left-open 1: executed() kept max(size, needed), so a shorter report in the same session left the node
    at the longer one's height (run 2: 3½ lines in a 133 px face). The height a report grew the node to follows the
    newest report, shorter too; a height the user set by hand is kept (node_face.followFace, every face node's rule).
    Breaks with unload.js's max(node.size[1], height) back (the shorter report's height stays the long one's)."""
    page, console = comfy_page
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'unload.json'); }", workflow())
    idle = page.evaluate(f"() => {{ const n = {OURS}; n.setSize([400, n.size[1]]); return n.size[1]; }}")
    long_h, long_need = page.evaluate(REPORT, LONG_REPORT)
    assert long_h == long_need and long_h > idle + 40, (idle, long_h, long_need)  # the long report grew it
    short_h, short_need = page.evaluate(REPORT, SHORT_REPORT)
    assert short_h == short_need and short_h < long_h - 40, (long_h, short_h, short_need)  # and the short one shrank it
    again_h, _ = page.evaluate(REPORT, LONG_REPORT)
    assert again_h == long_h, (again_h, long_h)  # grows again for the long one
    # the user makes it taller by hand: a shorter report keeps that height
    hand = page.evaluate(f"() => {{ const n = {OURS}; n.setSize([400, {long_h} + 80]); return n.size[1]; }}")
    kept_h, kept_need = page.evaluate(REPORT, SHORT_REPORT)
    assert kept_h == hand and kept_need < hand, (hand, kept_h, kept_need)
    assert console.from_pack() == [], console.from_pack()
