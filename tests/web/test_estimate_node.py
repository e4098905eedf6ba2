"""The Footprint Estimate node shows the verdict, the per-phase bars and ComfyUI's own figure on its face in
real Chromium (classic canvas and Nodes 2.0); its display widget never serializes."""
import json
import time
import uuid

from support.comfy_host import sd15_prompt
from web.conftest import open_comfy

NODE = "GPUGardenFootprintEstimate"


def workflow(vram_gb=8.0) -> dict:
    p = sd15_prompt("a garden " + uuid.uuid4().hex[:8], seed=31)
    p["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "latent": ["5", 0], "clip": ["4", 1], "vae": ["4", 2],
                                              "width": 1024, "height": 1024, "frames": 1, "batch": 1, "cfg": "auto",
                                              "vram_gb": vram_gb, "when_it_does_not_fit": "warn"}}
    p["3"]["inputs"]["latent_image"] = ["20", 0]
    return p


def run_and_wait(page, wf):
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'estimate.json'); }", wf)
    page.evaluate("async () => { await window.app.queuePrompt(0, 1); }")
    page.wait_for_function(
        f"""() => {{
            const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
            const el = n && n.__ggEstimate;
            return el && el.querySelector('[data-testid=gg-estimate-verdict]') && el.isConnected;
        }}""", timeout=240000)
    return page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")


def wait_idle(comfy_host, timeout=240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        q = comfy_host.get("/queue")
        if not q["queue_running"] and not q["queue_pending"]:
            return
        time.sleep(0.5)
    raise TimeoutError("queue did not drain")


def show_node(page, node_id):
    page.evaluate("""(id) => {
        const c = window.app.canvas, n = window.app.graph.getNodeById(id);
        c.ds.scale = 1.1;
        c.ds.offset[0] = -n.pos[0] + 420; c.ds.offset[1] = -n.pos[1] + 120;
        c.setDirty(true, true);
    }""", node_id)
    page.wait_for_timeout(600)


def test_verdict_on_node_face(comfy_page, comfy_host, output_dir):
    page, console = comfy_page
    node_id = run_and_wait(page, workflow(8.0))
    root = "window.app.graph.getNodeById(id).__ggEstimate"
    verdict = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-verdict]').textContent", node_id)
    text = page.evaluate(f"(id) => {root}.innerText", node_id)
    assert verdict in ("FITS", "TIGHT")
    assert "Stable Diffusion 1.x (sd1)" in text and "ComfyUI's own memory_required" in text
    phases = page.evaluate(f"(id) => [...{root}.querySelectorAll('[data-phase]')].map(e => e.dataset.phase)", node_id)
    assert phases == ["text_encode", "sample", "sample_naive_attention", "vae_decode", "vae_decode_tiled"]

    # display only: not in the saved workflow's widget values nor in the prompt
    saved = page.evaluate("(id) => window.app.graph.serialize().nodes.find(n => n.id === id).widgets_values", node_id)
    assert saved == [1024, 1024, 1, 1, "auto", 8, "warn"]
    prompt = page.evaluate("async () => (await window.app.graphToPrompt()).output")
    ours = next(v for v in prompt.values() if v["class_type"] == NODE)
    assert "gg_estimate" not in ours["inputs"]

    wait_idle(comfy_host)
    show_node(page, node_id)
    page.screenshot(path=str(output_dir / "estimate_node.png"))
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_does_not_fit_shows_knobs_vue_nodes(browser, comfy_host, output_dir):
    page, console = open_comfy(browser, comfy_host, vue_nodes=True)
    try:
        node_id = run_and_wait(page, workflow(0.5))
        face = page.locator("[data-testid='gg-estimate']").first
        face.wait_for(state="visible", timeout=30000)
        text = face.inner_text()
        assert "DOES NOT FIT" in text and "what would help" in text
        wait_idle(comfy_host)
        show_node(page, node_id)
        box = face.bounding_box()
        page.screenshot(path=str(output_dir / "estimate_node_vue.png"),
                        clip={"x": max(0, box["x"] - 60), "y": max(0, box["y"] - 200),
                              "width": box["width"] + 120, "height": box["height"] + 240})
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()
