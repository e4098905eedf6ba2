"""Fit to Card's one-click offers in real Chromium (classic canvas): after the node runs, nothing in the graph has
changed; clicking an offer's Apply changes the widgets it names on the node that feeds the Fit to Card node,
and Undo puts the exact previous values back. Runs on the bundled frontend and on the one COMFYUI_FRONTEND_ROOT
names (1.58.1 in the brief)."""
import json
import time

import pytest

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


def run_and_wait(page, before_queue=None):
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'fit.json'); }", workflow())
    if before_queue:
        page.evaluate(before_queue)
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
    page.wait_for_timeout(300)
    page.screenshot(path=str(output_dir / "fit_offers.png"))
    # the whole face inside the node: lines wrapped twice or more overran the estimate of one wrap per line (fixW2's
    # walk: the budget line sat below the node's bottom edge)
    fit = page.evaluate("""(id) => { const root = window.app.graph.getNodeById(id).__ggFit;
        const r = root.getBoundingClientRect(), last = root.lastElementChild.getBoundingClientRect();
        return {scroll: root.scrollHeight, client: root.clientHeight, bottom: r.bottom, lastBottom: last.bottom}; }""", node_id)
    assert fit["lastBottom"] <= fit["bottom"] + 1 and fit["scroll"] <= fit["client"] + 1, fit

    # a checkpoint loader has no weight_dtype widget: the fp8 offer says so and has no button
    fp8 = page.locator("[data-testid='gg-fit-offer-row-fp8_weights']").inner_text()
    assert "no widget for it in this graph" in fp8
    assert page.locator("[data-testid='gg-fit-offer-fp8_weights']").count() == 0
    assert page.locator("[data-testid='gg-fit-offer-gguf_weights']").count() == 0  # no one-click form at all
    # nor a block-swap count: the plan has one (the model offloads), but no node of this plain SD graph takes a
    # blocks_to_swap widget or input, so the face does not show it at all (web50 item 6)
    assert "block_swap" in offers
    assert page.locator("[data-testid='gg-fit-offer-row-block_swap']").count() == 0
    assert "blocks_to_swap" not in page.locator("[data-testid=gg-fit]").inner_text()

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


def fit_node_js(body: str) -> str:
    return f"() => {{ const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}); {body} }}"


def test_undo_survives_a_save_and_load_and_never_clobbers_a_hand_edit(comfy_page):
    page, console = comfy_page
    run_and_wait(page)
    offers = {o["id"]: o for o in page.evaluate("() => window.__gpuGarden.lastFit")["offers"]}
    w, h = offers["lower_resolution"]["value"]
    click(page, "gg-fit-offer-lower_resolution")
    click(page, "gg-fit-offer-smaller_batch")
    # the Undo records are in the node's properties, so they go with the workflow
    saved = page.evaluate("() => JSON.parse(JSON.stringify(window.app.graph.serialize()))")
    fit = next(n for n in saved["nodes"] if n["type"] == NODE)
    rec = fit["properties"]["gg_fit_applied"]["lower_resolution"]
    assert [(c["name"], c["before"], c["after"]) for c in rec["changes"]] == [("width", WIDTH, w), ("height", HEIGHT, h)]
    # load it back (what a reload and opening a saved workflow do): the face has Undo again, before any run
    page.evaluate("async () => { window.app.graph.clear(); }")
    assert page.locator("[data-testid='gg-fit-undo-lower_resolution']").count() == 0
    page.evaluate("async (wf) => { await window.app.loadGraphData(wf); }", saved)
    page.locator("[data-testid='gg-fit-undo-lower_resolution']").wait_for(state="attached", timeout=10000)
    assert latent_widgets(page)["width"] == w
    # the user changes the width by hand; Undo puts back only the height and says it left the width
    page.evaluate("""() => { const n = window.app.graph.nodes.find(n => n.type === 'EmptyLatentImage');
                             const wd = n.widgets.find(x => x.name === 'width'); wd.value = 640; wd.callback?.(640); }""")
    click(page, "gg-fit-undo-lower_resolution")
    now = latent_widgets(page)
    assert (now["width"], now["height"]) == (640, HEIGHT)
    undo = page.evaluate("() => window.__gpuGarden.lastFitUndo")
    assert [c["name"] for c in undo["byHand"]] == ["width"] and [c["name"] for c in undo["restored"]] == ["height"]
    assert f"width was changed by hand since (now 640; the offer set {w}): left as you set it" in undo["message"]
    # the record is gone from the properties; the other one stays until its own Undo
    left = page.evaluate(fit_node_js("return Object.keys(n.properties.gg_fit_applied || {});"))
    assert left == ["smaller_batch"]
    click(page, "gg-fit-undo-smaller_batch")
    assert latent_widgets(page)["batch_size"] == BATCH
    assert page.evaluate(fit_node_js("return n.properties.gg_fit_applied ?? null;")) is None
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_block_swap_button_only_where_a_widget_takes_it(comfy_page):
    """A loader with a blocks_to_swap widget upstream (a stand-in: the widget added to the checkpoint loader, never
    sent to the server) gets the Apply button; Undo puts its value back."""
    page, console = comfy_page
    run_and_wait(page, """() => { const n = window.app.graph.nodes.find(n => n.type === 'CheckpointLoaderSimple');
        n.addWidget('number', 'blocks_to_swap', 0, () => {}, { min: 0, max: 40, step: 10, precision: 0, serialize: false }); }""")
    offer = {o["id"]: o for o in page.evaluate("() => window.__gpuGarden.lastFit")["offers"]}["block_swap"]
    assert offer["value"] > 0
    row = page.locator("[data-testid='gg-fit-offer-row-block_swap']").inner_text()
    assert row.startswith("offer (not applied): for wrapper loaders"), row
    click(page, "gg-fit-offer-block_swap")
    get = """() => window.app.graph.nodes.find(n => n.type === 'CheckpointLoaderSimple').widgets
                   .find(w => w.name === 'blocks_to_swap').value"""
    assert page.evaluate(get) == offer["value"]
    click(page, "gg-fit-undo-block_swap")
    assert page.evaluate(get) == 0
    assert console.from_pack() == [], console.from_pack()


def test_automatic_mode_plan_and_offers_in_the_sidebar(comfy_page, comfy_host):
    """Automatic mode has no node: its last plan's offers show, as text, under fit_guard in the Health section.
    GET /gpu_garden/fit answers a recorded automatic plan here (the CPU host's budget fits everything)."""
    page, console = comfy_page
    real = comfy_host.get("/gpu_garden/fit")
    assert "last_auto" in real
    last = {"origin": "auto", "latent_shape": [2, 4, 96, 97], "memory_required": 3 * 1024 ** 3,
            "stock_memory_required": 2 * 1024 ** 3, "summary": "kept 1.20 GiB of weights on the GPU, offloaded 2.00 GiB",
            "steps": [{"id": "weights_on_gpu", "label": "kept 1.20 GiB of weights on the GPU, offloaded 2.00 GiB"}],
            "offers": [{"id": "smaller_batch", "label": "smaller batch: 1 instead of 2", "kind": "offer"},
                       {"id": "block_swap", "label": "for wrapper loaders that take a block-swap count (WanVideoWrapper "
                                                     "style): blocks_to_swap = 5 of 12", "without_widget": "info",
                        "apply": {"from": "model", "through": "any", "targets": [{"widgets": {"blocks_to_swap": 5}}]}}]}
    # a loader that takes a block-swap count (the stand-in: a client-side widget on the default graph's first node; its
    # loaders differ between frontends); without one the count is not shown (checked below)
    page.evaluate("""() => { window.app.graph.nodes[0]
        .addWidget('number', 'blocks_to_swap', 0, () => {}, { min: 0, max: 40, step: 1, precision: 0, serialize: false }); }""")
    page.route("**/gpu_garden/fit", lambda route: route.fulfill(json=dict(real, enabled=True, last_auto=last)))
    # the meter opens the sidebar; dispatched, not clicked: on 1.58's default graph a node reaches the meter's corner, so
    # it starts faded and lets pointer clicks through to the node (web/budget.js gg-meter-under; test_budget checks that)
    page.locator("[data-testid=gpu-garden-meter]").dispatch_event("click")
    page.wait_for_selector("[data-testid=gg-fit-auto-summary]", state="attached", timeout=10000)
    text = page.text_content("[data-testid=gpu-garden-health] li[data-feature='fit_guard.prepare_sampling']")
    assert "Fit to Card (automatic), last sampler (latent 2×4×96×97): kept 1.20 GiB" in text
    assert "offer (not applied): smaller batch: 1 instead of 2" in text
    assert "info: for wrapper loaders that take a block-swap count" in text
    assert page.locator("[data-testid=gg-fit-auto] button").count() == 0  # text only
    # the open graph without a node that takes the count (a plain SD graph): the same plan shows no block-swap row
    plain = page.evaluate("""async (status) => {
        const m = await import('/extensions/comfyui-gpu-garden/lib/fit_auto.js');
        const ck = window.app.graph.nodes[0];
        ck.widgets.splice(ck.widgets.findIndex(w => w.name === 'blocks_to_swap'), 1);
        const box = document.createElement('div');
        m.renderAutoPlan(box, status);
        return box.textContent; }""", dict(real, enabled=True, last_auto=last))
    assert "offer (not applied): smaller batch: 1 instead of 2" in plain and "blocks_to_swap" not in plain, plain
    assert console.from_pack() == [], console.from_pack()


BLOCK_SWAP_INFO = {"id": "block_swap", "label": "for wrapper loaders that take a block-swap count (WanVideoWrapper style): "
                   "blocks_to_swap = 5 of 12", "without_widget": "info",
                   "apply": {"from": "model", "through": "any", "targets": [{"widgets": {"blocks_to_swap": 5}}]}}


def test_block_swap_count_shows_for_a_loader_inside_a_subgraph(comfy_page, comfy_host):
    """fixU: the block-swap count is shown only where a node takes one (graphTakes), and a wrapper loader inside a
    subgraph (frontend subgraphs: node.subgraph, graph.subgraphs) was not seen, so the plan dropped the count. The
    stand-in loader: the open graph's first node, converted to a subgraph, with a blocks_to_swap widget inside."""
    page, console = comfy_page
    if not page.evaluate("() => typeof (window.app.rootGraph ?? window.app.graph).convertToSubgraph === 'function'"):
        pytest.skip("this frontend has no subgraphs")
    status = dict(comfy_host.get("/gpu_garden/fit"), enabled=True, last_auto={
        "origin": "auto", "latent_shape": [1, 4, 64, 64], "memory_required": 3 * 1024 ** 3,
        "stock_memory_required": 2 * 1024 ** 3, "summary": "kept 1.20 GiB of weights on the GPU", "steps": [],
        "offers": [BLOCK_SWAP_INFO]})
    seen = page.evaluate("""async ([status, offer]) => {
        const offers = await import('/extensions/comfyui-gpu-garden/lib/fit_offers.js');
        const auto = await import('/extensions/comfyui-gpu-garden/lib/fit_auto.js');
        const g = window.app.rootGraph ?? window.app.graph;
        const plan = () => { const box = document.createElement('div'); auto.renderAutoPlan(box, status); return box.textContent; };
        const { node } = g.convertToSubgraph(new Set([g.nodes[0]]));
        const inner = node.subgraph.nodes[0];
        const before = [offers.graphTakes(g, offer), plan()];
        inner.addWidget('number', 'blocks_to_swap', 0, () => {}, { min: 0, max: 40, step: 1, precision: 0, serialize: false });
        return { before, after: [offers.graphTakes(g, offer), plan(), offers.graphTakes(node.subgraph, offer)],
                 top: g.nodes.some(n => (n.widgets || []).some(w => w.name === 'blocks_to_swap')) };
    }""", [status, BLOCK_SWAP_INFO])
    assert seen["top"] is False  # the widget is only inside the subgraph
    assert seen["before"][0] is False and "blocks_to_swap" not in seen["before"][1], seen
    assert seen["after"][0] is True and seen["after"][2] is True, seen  # from the root graph and from inside the subgraph
    assert "info: for wrapper loaders that take a block-swap count (WanVideoWrapper style): blocks_to_swap = 5 of 12" \
        in seen["after"][1], seen
    assert console.from_pack() == [], console.from_pack()


FIT = f"(window.app.rootGraph ?? window.app.graph).nodes.find(n => n.type === {json.dumps(NODE)})"
# the loader inside the subgraph: the first node of the first subgraph definition (graph.subgraphs, 1.58)
INNER = "[...(window.app.rootGraph ?? window.app.graph).subgraphs.values()][0].nodes.find(n => n.type === 'CheckpointLoaderSimple')"
ADD_COUNT = "(v) => { " + INNER + ".addWidget('number', 'blocks_to_swap', v, () => {}, { min: 0, max: 40, step: 1, precision: 0, serialize: false }); }"
INNER_COUNT = "() => " + INNER + ".widgets.find(w => w.name === 'blocks_to_swap').value"


def test_apply_reaches_a_loader_inside_a_subgraph_and_undo_finds_it_after_a_reload(comfy_page, comfy_host):
    """webY (walk52's subgraph item): with the loader inside a subgraph, the block-swap count showed as info and Apply
    was not offered: the walk upstream from the Fit to Card node stopped at the subgraph node. Now it follows the
    subgraph's output to the loader inside (graph_adapter.upstream), Apply sets its widget, the applied row names the
    subgraph, and the Undo record keeps the subgraph's id, so Undo finds the loader after a reload too.
    Breaks with fit_offers.reached back on inputLink + nodeById (no Apply button: the row reads 'info: ...')."""
    page, console = comfy_page
    if not page.evaluate("() => typeof (window.app.rootGraph ?? window.app.graph).convertToSubgraph === 'function'"):
        pytest.skip("this frontend has no subgraphs")
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'fit.json'); }", workflow())
    fit_id = page.evaluate(f"""() => {{ const g = window.app.rootGraph ?? window.app.graph;
        g.convertToSubgraph(new Set([g.nodes.find(n => n.type === 'CheckpointLoaderSimple')])); return {FIT}.id; }}""")
    page.evaluate(ADD_COUNT, 0)  # the stand-in wrapper loader: a checkpoint loader with a block-swap count
    plan = {"mode": "apply", "summary": "kept 1.20 GiB of weights on the GPU, offloaded 2.00 GiB", "fits": True,
            "steps": [], "offers": [BLOCK_SWAP_INFO]}
    page.evaluate(f"(fit) => {{ {FIT}.onExecuted({{ gpu_garden_fit: [fit] }}); }}", plan)
    show_node(page, fit_id, top=140, scale=1.0)
    row = page.locator("[data-testid='gg-fit-offer-row-block_swap']")
    assert row.inner_text().startswith("offer (not applied): for wrapper loaders"), row.inner_text()
    click(page, "gg-fit-offer-block_swap")
    assert page.evaluate(INNER_COUNT) == 5
    rec = page.evaluate(f"() => {FIT}.properties.gg_fit_applied.block_swap")
    assert rec["graphId"] and rec["changes"] == [{"name": "blocks_to_swap", "before": 0, "after": 5}], rec
    assert "(in subgraph " in row.inner_text() and "blocks_to_swap 0 → 5" in row.inner_text(), row.inner_text()
    # saved and loaded again (the count's widget is client-side here, so the stand-in loader gets it back at 5)
    page.evaluate("async () => { const g = window.app.rootGraph ?? window.app.graph;"
                  " await window.app.loadGraphData(g.serialize(), false, false, 'fit-subgraph'); }")
    page.evaluate(ADD_COUNT, 5)
    show_node(page, fit_id, top=140, scale=1.0)
    click(page, "gg-fit-undo-block_swap")
    undo = page.evaluate("() => window.__gpuGarden.lastFitUndo")
    assert [c["name"] for c in undo["restored"]] == ["blocks_to_swap"] and not undo["missed"], undo
    assert page.evaluate(INNER_COUNT) == 0
    assert console.from_pack() == [], console.from_pack()


# One subgraph used twice: the Fit to Card node inside it, each instance fed by its own checkpoint loader (the
# stand-in wrapper loaders: a blocks_to_swap widget added client-side, 0 on both). The second instance and loader
# are made in the page (LiteGraph.createNode of the subgraph's id, as convertToSubgraph makes the first).
TWO_INSTANCES = """() => {
    const g = window.app.rootGraph ?? window.app.graph, LG = window.LiteGraph;
    const fit = g.nodes.find(n => n.type === %s);
    g.convertToSubgraph(new Set([fit]));
    const first = g.nodes.find(n => n.subgraph), loader1 = g.nodes.find(n => n.type === 'CheckpointLoaderSimple');
    const latent = g.nodes.find(n => n.type === 'EmptyLatentImage');
    const loader2 = LG.createNode('CheckpointLoaderSimple');
    loader2.pos = [loader1.pos[0], loader1.pos[1] + 400];
    g.add(loader2);
    loader2.widgets[0].value = loader1.widgets[0].value;
    const second = LG.createNode(first.subgraph.id);
    second.pos = [first.pos[0], first.pos[1] + 400];
    g.add(second);
    second.inputs.forEach((input, i) => {
        const from = input.type === 'LATENT' ? latent : loader2;
        from.connect(from.outputs.findIndex(o => o.type === input.type), second, i);
    });
    for (const l of [loader1, loader2])
        l.addWidget('number', 'blocks_to_swap', 0, () => {}, { min: 0, max: 40, step: 1, precision: 0, serialize: false });
    return { first: first.id, second: second.id, loader1: loader1.id, loader2: loader2.id,
             same: first.subgraph === second.subgraph, fed: second.inputs.every(i => i.link != null) };
}""" % json.dumps(NODE)
# open a subgraph instance as a double click does (LGraphCanvas.openSubgraph with the instance) and put the Fit to
# Card node inside on screen; returns its id
OPEN_INSTANCE = f"""(id) => {{ const g = window.app.rootGraph ?? window.app.graph, c = window.app.canvas;
    const inst = g.getNodeById(id);
    c.openSubgraph(inst.subgraph, inst);
    const n = c.graph.nodes.find(n => n.type === {json.dumps(NODE)});
    c.ds.scale = 1; c.ds.offset[0] = -n.pos[0] + 420; c.ds.offset[1] = -n.pos[1] + 140; c.setDirty(true, true);
    return n.id; }}"""
COUNTS = """(ids) => ids.map(id => (window.app.rootGraph ?? window.app.graph).getNodeById(id)
    .widgets.find(w => w.name === 'blocks_to_swap').value)"""


def test_apply_in_the_second_instance_of_a_subgraph_changes_the_second_loader(comfy_page):
    """webZ: with one subgraph used twice, the walk up from the Fit to Card node inside it left through the FIRST
    instance, whichever one the user had opened: Apply in the second instance changed the first instance's loader.
    It now leaves through the instance the user entered (the canvas's subgraph-opened event: subgraph_path.js).
    Breaks with graph_adapter.upstream's default outer back on [] (loader 1 gets 5, loader 2 stays 0)."""
    page, console = comfy_page
    if not page.evaluate("() => typeof (window.app.rootGraph ?? window.app.graph).convertToSubgraph === 'function'"):
        pytest.skip("this frontend has no subgraphs")
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'fit.json'); }", workflow())
    made = page.evaluate(TWO_INSTANCES)
    assert made["same"] and made["fed"], made
    loaders = [made["loader1"], made["loader2"]]
    # the second instance opened, the Fit to Card node inside on screen
    fit_id = page.evaluate(OPEN_INSTANCE, made["second"])
    plan = {"mode": "apply", "summary": "kept 1.20 GiB of weights on the GPU, offloaded 2.00 GiB", "fits": True,
            "steps": [], "offers": [BLOCK_SWAP_INFO]}
    page.evaluate(f"([id, fit]) => {{ window.app.canvas.graph.getNodeById(id).onExecuted({{ gpu_garden_fit: [fit] }}); }}",
                  [fit_id, plan])
    page.wait_for_timeout(600)
    click(page, "gg-fit-offer-block_swap")
    assert page.evaluate(COUNTS, loaders) == [0, 5]
    click(page, "gg-fit-undo-block_swap")
    assert page.evaluate(COUNTS, loaders) == [0, 0]
    # and from the first instance, its own loader
    page.evaluate("() => { const c = window.app.canvas; c.setGraph(c.graph.rootGraph); }")
    assert page.evaluate(OPEN_INSTANCE, made["first"]) == fit_id
    page.wait_for_timeout(600)
    click(page, "gg-fit-offer-block_swap")
    assert page.evaluate(COUNTS, loaders) == [5, 0]
    assert console.from_pack() == [], console.from_pack()


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


def test_undo_survives_a_page_reload(comfy_page):
    """A real reload: the frontend restores the open workflow from its own storage, with the node's properties."""
    page, console = comfy_page
    run_and_wait(page)
    w, h = {o["id"]: o for o in page.evaluate("() => window.__gpuGarden.lastFit")["offers"]}["lower_resolution"]["value"]
    click(page, "gg-fit-offer-lower_resolution")
    page.wait_for_timeout(1000)  # the frontend stores the open workflow after each change
    page.reload(wait_until="domcontentloaded")
    page.wait_for_function("() => window.app && window.app.graph && window.app.graph.nodes.some(n => n.type === 'EmptyLatentImage')",
                           timeout=60000)
    page.locator("[data-testid='gg-fit-undo-lower_resolution']").wait_for(state="attached", timeout=10000)
    assert (latent_widgets(page)["width"], latent_widgets(page)["height"]) == (w, h)
    click(page, "gg-fit-undo-lower_resolution")
    assert (latent_widgets(page)["width"], latent_widgets(page)["height"]) == (WIDTH, HEIGHT)
    assert console.from_pack() == [], console.from_pack()


def test_automatic_mode_has_an_entry_in_the_settings_dialog(comfy_page, comfy_host):
    """Automatic mode was a setting with no entry in the Settings dialog (the README said to POST it; ux20's walk).
    It is registered through the frontend's settings API, and what the dialog's store writes is the value the
    server reads: GET /gpu_garden/fit turns enabled when the page sets it, and off again."""
    page, console = comfy_page
    name = "Fit to Card before every sampler (no node needed)"
    entry = page.evaluate("""() => { const s = app.ui.settings.settingsLookup['GPUGarden.FitToCard'];
        return s ? [s.name, s.type, s.defaultValue, s.category] : null; }""")
    assert entry == [name, "boolean", False, ["GPU Garden", "Fit to Card", "Automatic mode"]], entry
    page.evaluate("() => app.extensionManager.command.execute('Comfy.ShowSettingsDialog')")
    dialog = page.get_by_role("dialog").first  # 1.35: a PrimeVue .p-dialog; 1.58: its own settings dialog
    dialog.wait_for(state="visible", timeout=10000)
    dialog.get_by_text("GPU Garden", exact=True).first.click()
    dialog.get_by_text(name, exact=True).first.wait_for(state="visible", timeout=10000)
    page.keyboard.press("Escape")
    assert comfy_host.get("/gpu_garden/fit")["enabled"] is False
    try:
        page.evaluate("() => app.extensionManager.setting.set('GPUGarden.FitToCard', true)")
        deadline = time.time() + 10
        while not comfy_host.get("/gpu_garden/fit")["enabled"] and time.time() < deadline:
            time.sleep(0.2)
        assert comfy_host.get("/gpu_garden/fit")["enabled"] is True
    finally:
        page.evaluate("() => app.extensionManager.setting.set('GPUGarden.FitToCard', false)")
    deadline = time.time() + 10
    while comfy_host.get("/gpu_garden/fit")["enabled"] and time.time() < deadline:
        time.sleep(0.2)
    assert comfy_host.get("/gpu_garden/fit")["enabled"] is False
    assert console.from_pack() == [], console.from_pack()


def test_the_face_writes_one_precision_and_plain_words(comfy_page):
    """ui48's walk: the face said "activation figure (4.28 MiB)" then "memory_required to ComfyUI: 4 MiB" for the same
    figure, and "(predicted: 2 conditioning(s))". One precision (the server's), and the batch in words."""
    page, _ = comfy_page
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'fit.json'); }", workflow())
    mib = 1024 ** 2
    fit = {"mode": "apply", "summary": "no budget: ComfyUI gets our activation figure (4.28 MiB) as memory_required",
           "memory_required": round(4.28 * mib), "stock_memory_required": 19 * mib, "cond_batch": 2,
           "steps": [], "offers": [], "fits": None}
    text = page.evaluate(f"""(fit) => {{
        const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
        n.onExecuted({{ gpu_garden_fit: [fit] }});
        return n.__ggFit.innerText;
    }}""", fit)
    assert "memory estimate given to ComfyUI (memory_required): 4.28 MiB (predicted for 2 prompts run together each step)" in text, text
    assert "ComfyUI's own: 19.00 MiB" in text and "conditioning" not in text, text
    supplied = dict(fit, node=None, cond_batch=1)
    text = page.evaluate(f"""(rec) => {{
        const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
        window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.fit', {{ ...rec, node: n.id }});
        return n.__ggFit.innerText;
    }}""", supplied)
    assert "(as the sampler runs it: one prompt per step)" in text, text


def test_advise_says_what_apply_would_do(comfy_page):
    """web50 item 5: in advise mode the face showed the steps with the apply mode's ticks and a "memory_required to
    ComfyUI" line, as if it had acted; advise hands ComfyUI nothing (nodes/fit_to_card.py)."""
    page, _ = comfy_page
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'fit.json'); }", workflow())
    mib = 1024 ** 2
    fit = {"mode": "advise", "summary": "text encoders off the GPU, kept 316.80 MiB of weights: does NOT fit",
           "memory_required": round(1.45 * 1024 * mib), "stock_memory_required": 5590 * mib, "cond_batch": 2,
           "steps": [{"label": "text encoders off the GPU during sampling"}, {"label": "decode in 512 px tiles"}],
           "offers": [], "fits": False}
    text = page.evaluate(f"""(fit) => {{
        const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
        n.onExecuted({{ gpu_garden_fit: [fit] }});
        return n.__ggFit.innerText;
    }}""", fit)
    assert text.startswith("advice only, nothing changed"), text
    assert "apply would: text encoders off the GPU during sampling" in text and "apply would: decode in 512 px tiles" in text, text
    assert "✓" not in text and "memory_required" not in text and "to ComfyUI" not in text, text
