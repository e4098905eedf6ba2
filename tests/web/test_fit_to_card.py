"""Fit to Card's one-click offers in real Chromium (classic canvas): after the node runs, nothing in the graph has
changed; clicking an offer's Apply changes the widgets it names on the node that feeds the Fit to Card node,
and Undo puts the exact previous values back. Runs on the bundled frontend and on the one COMFYUI_FRONTEND_ROOT
names (1.58.1 in the brief)."""
import json

from support.comfy_host import sd15_prompt
from support.web import show_node

NODE = "GPUGardenFitToCard"
# Checkpoint -> empty latent -> Fit to Card (an output node: nothing is sampled). 776 x 768, batch 2 on a 1.5 GiB
# plan does not fit the sample phase on the CPU host, so the plan offers a lower resolution and a smaller batch.
# 776 is not a multiple of 64: Undo must put back exactly that, not a rounded value.
WIDTH, HEIGHT, BATCH = 776, 768, 2


def workflow() -> dict:
    p = sd15_prompt("a garden")
    p["5"]["inputs"].update(width=WIDTH, height=HEIGHT, batch_size=BATCH)
    p["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "vae": ["4", 2], "clip": ["4", 1], "latent": ["5", 0],
                                              "vram_gb": 1.5, "mode": "advise"}}
    return {k: p[k] for k in ("4", "5", "20")}


def latent_widgets(page) -> dict:
    return page.evaluate("""() => {
        const n = window.app.graph.nodes.find(n => n.type === 'EmptyLatentImage');
        return Object.fromEntries(n.widgets.map(w => [w.name, w.value]));
    }""")


def run_and_wait(page):
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'fit.json'); }", workflow())
    page.evaluate("async () => { await window.app.queuePrompt(0, 1); }")
    page.wait_for_function(
        f"""() => {{
            const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
            return n && n.__ggFit && n.__ggFit.querySelector('[data-testid=gg-fit-summary]') && n.__ggFit.isConnected;
        }}""", timeout=240000)
    return page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")


def click(page, testid):
    loc = page.locator(f"[data-testid='{testid}']")
    loc.wait_for(state="visible", timeout=10000)
    loc.click()
    page.wait_for_timeout(200)


def test_apply_an_offer_then_undo_restores_the_exact_values(comfy_page, comfy_host, output_dir):
    page, console = comfy_page
    node_id = run_and_wait(page)
    fit = page.evaluate("() => window.__gpuGarden.lastFit")
    offers = {o["id"]: o for o in fit["offers"]}
    assert fit["fits"] is False and {"lower_resolution", "smaller_batch"} <= set(offers), fit["offers"]
    # nothing was applied by running the node
    before = latent_widgets(page)
    assert (before["width"], before["height"], before["batch_size"]) == (WIDTH, HEIGHT, BATCH)
    comfy_host.wait_idle()
    show_node(page, node_id, top=140, scale=1.0)
    page.screenshot(path=str(output_dir / "fit_offers.png"))

    # a checkpoint loader has no weight_dtype widget: the fp8 offer says so and has no button
    fp8 = page.locator("[data-testid='gg-fit-offer-row-fp8_weights']").inner_text()
    assert "no widget for it in this graph" in fp8
    assert page.locator("[data-testid='gg-fit-offer-fp8_weights']").count() == 0
    assert page.locator("[data-testid='gg-fit-offer-gguf_weights']").count() == 0  # no one-click form at all

    w, h = offers["lower_resolution"]["value"]
    assert (w, h) != (WIDTH, HEIGHT)
    click(page, "gg-fit-offer-lower_resolution")
    after = latent_widgets(page)
    assert (after["width"], after["height"], after["batch_size"]) == (w, h, BATCH)
    row = page.locator("[data-testid='gg-fit-offer-row-lower_resolution']").inner_text()
    assert f"width {WIDTH} → {w}" in row and f"height {HEIGHT} → {h}" in row
    # the change is in what the next queue sends
    prompt = page.evaluate("async () => (await window.app.graphToPrompt()).output")
    latent = next(v for v in prompt.values() if v["class_type"] == "EmptyLatentImage")["inputs"]
    assert (latent["width"], latent["height"]) == (w, h)

    click(page, "gg-fit-offer-smaller_batch")
    assert latent_widgets(page)["batch_size"] == offers["smaller_batch"]["value"] < BATCH

    click(page, "gg-fit-undo-lower_resolution")
    undone = latent_widgets(page)
    assert (undone["width"], undone["height"]) == (WIDTH, HEIGHT)  # exactly, 776 included
    assert undone["batch_size"] == offers["smaller_batch"]["value"]  # the other change stays until its own Undo
    assert page.locator("[data-testid='gg-fit-offer-lower_resolution']").count() == 1  # offered again
    click(page, "gg-fit-undo-smaller_batch")
    assert latent_widgets(page) == before
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_apply_and_undo_in_nodes_2_vue(browser, comfy_host):
    """The same click and Undo with the Nodes 2.0 (Vue) renderer; on the bundled 1.35 frontend it is an early
    preview, so this runs on frontends from 1.5x on."""
    import pytest

    from web.conftest import open_comfy

    if comfy_host.frontend == "bundled":
        pytest.skip("Nodes 2.0 is checked on the newer frontend (COMFYUI_FRONTEND_ROOT)")
    page, console = open_comfy(browser, comfy_host, vue_nodes=True)
    try:
        run_and_wait(page)
        offers = {o["id"]: o for o in page.evaluate("() => window.__gpuGarden.lastFit")["offers"]}
        before = latent_widgets(page)
        w, h = offers["lower_resolution"]["value"]
        click(page, "gg-fit-offer-lower_resolution")
        after = latent_widgets(page)
        assert (after["width"], after["height"]) == (w, h)
        click(page, "gg-fit-undo-lower_resolution")
        assert latent_widgets(page) == before
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()
