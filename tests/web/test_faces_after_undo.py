"""The pack's node faces after Ctrl+Z in Nodes 2.0 (Vue) mode, in real Chromium against the real --cpu ComfyUI.

Undo reloads the graph in place: every node is re-created under its old id. Nodes 2.0 keeps each node's component
and the DOM widget element it mounted, so without web/lib/graph_adapter.remountFace the removed node's face stays
on screen and never changes again (the VRAM Budget bar stops, a run's estimate, unload report and plan never show).
Found walking the first hour on 1.58.1 (ux20). The classic canvas is the control: it remounts by itself."""
import pytest

from support.comfy_host import CHECKPOINT
from web.conftest import open_comfy

MODES = [pytest.param(False, id="classic"), pytest.param(True, id="nodes2")]
# node id -> (node type, its face widget's name, a word the face shows after a run)
FACES = {
    "10": ("GPUGardenVRAMBudget", "gpu_garden_budget", "at run"),
    "11": ("GPUGardenFootprintEstimate", "gg_estimate", "peak"),
    "12": ("GPUGardenUnloadTextEncoders", "gg_unload_report", "ComfyUI's list of loaded models"),  # --cpu's words
    "13": ("GPUGardenFitToCard", "gg_fit", "memory_required"),
}


def workflow() -> dict:
    """Every node of the pack, fed by the test checkpoint; nothing samples, so a run takes seconds."""
    return {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": CHECKPOINT}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a garden after undo", "clip": ["4", 1]}},
        "10": {"class_type": "GPUGardenVRAMBudget", "inputs": {"value": ["4", 0]}},
        "11": {"class_type": "GPUGardenFootprintEstimate", "inputs": {
            "model": ["4", 0], "clip": ["4", 1], "vae": ["4", 2], "budget": ["10", 2], "width": 64, "height": 64,
            "frames": 1, "batch": 1, "cfg": "auto", "vram_gb": 0.0, "when_it_does_not_fit": "warn", "mode": "formula"}},
        "12": {"class_type": "GPUGardenUnloadTextEncoders", "inputs": {"positive": ["6", 0], "clip": ["4", 1], "mode": "offload"}},
        "13": {"class_type": "GPUGardenFitToCard", "inputs": {"model": ["4", 0], "vae": ["4", 2], "clip": ["4", 1],
                                                            "budget": ["10", 2], "vram_gb": 0.0, "mode": "apply"}},
    }


JS_FIT_VIEW = """() => { const nodes = (app.rootGraph ?? app.graph).nodes, ds = app.canvas.ds, th = 40;
  const x0 = Math.min(...nodes.map(n => n.pos[0])), y0 = Math.min(...nodes.map(n => n.pos[1])) - th;
  const x1 = Math.max(...nodes.map(n => n.pos[0] + n.size[0])), y1 = Math.max(...nodes.map(n => n.pos[1] + n.size[1]));
  ds.scale = Math.min(1, 1150 / (x1 - x0), 700 / (y1 - y0));
  ds.offset[0] = 80 / ds.scale - x0; ds.offset[1] = 80 / ds.scale - y0; app.canvas.setDirty(true, true); }"""

# For each face: is the node's own face element the one on screen (in classic mode: in the document at all)?
JS_FACES = """(faces) => Object.fromEntries(Object.entries(faces).map(([id, [, name]]) => {
  const node = (app.rootGraph ?? app.graph).getNodeById(id) ?? (app.rootGraph ?? app.graph).getNodeById(Number(id));
  const own = node.widgets.find(w => w.name === name).element;
  const dom = document.querySelector(`[data-node-id="${id}"]`);
  const shown = dom ? [...dom.querySelectorAll('[data-testid]')].filter(e => e.dataset.testid === own.dataset.testid) : [own];
  return [id, {own_on_screen: own.isConnected && shown.length === 1 && shown[0] === own, text: own.innerText}];
}))"""


@pytest.mark.parametrize("vue", MODES)
def test_faces_stay_live_after_undo(browser, comfy_host, vue):
    page, console = open_comfy(browser, comfy_host, vue_nodes=vue)
    mode = "nodes2" if vue else "classic"
    try:
        page.evaluate("async (wf) => { await app.loadApiJson(wf, 'undo.json'); }", workflow())
        page.evaluate(JS_FIT_VIEW)  # the frontend mounts a DOM widget only while its node is in view
        page.wait_for_function(f"(faces) => Object.values(({JS_FACES})(faces)).every(f => f.own_on_screen)", arg=FACES,
                               timeout=20000)
        # an edit (node 4 moved, as a drag ends: the change tracker records the state), then undo (Ctrl+Z),
        # which reloads the graph in place
        page.evaluate("""() => { const n = (app.rootGraph ?? app.graph).getNodeById(4) ?? (app.rootGraph ?? app.graph).getNodeById('4');
            n.__ggOld = true; n.pos = [n.pos[0] + 60, n.pos[1] + 40];
            app.extensionManager.workflow.activeWorkflow.changeTracker.checkState(); }""")
        page.evaluate("() => app.extensionManager.workflow.activeWorkflow.changeTracker.undo()")  # what Ctrl+Z runs
        page.wait_for_function("() => { const n = (app.rootGraph ?? app.graph).getNodeById(4) ?? (app.rootGraph ?? app.graph).getNodeById('4');"
                               " return n && !n.__ggOld; }", timeout=10000)  # node 4 is a new object: reloaded
        page.wait_for_timeout(800)
        after_undo = page.evaluate(JS_FACES, FACES)
        assert all(f["own_on_screen"] for f in after_undo.values()), (
            mode, "a face on screen is not its node's", {k: f["own_on_screen"] for k, f in after_undo.items()})

        # a run after the undo shows on the faces the user sees
        page.evaluate("() => app.queuePrompt(0, 1)")
        page.wait_for_function(f"""(faces) => {{ const now = ({JS_FACES})(faces);
            return Object.entries(faces).every(([id, [, , word]]) => now[id].text.includes(word)); }}""", arg=FACES, timeout=180000)
        after_run = page.evaluate(JS_FACES, FACES)
        assert all(f["own_on_screen"] for f in after_run.values()), (mode, {k: f["own_on_screen"] for k, f in after_run.items()})
        assert console.from_pack() == [], console.from_pack()
        comfy_host.wait_idle()
    finally:
        page.context.close()


# Count document.querySelector calls that look for a node's element (remountFace's query) from now on.
COUNT_NODE_QUERIES = """() => { window.__ggNodeQueries = 0;
  if (window.__ggCountingNodes) return; window.__ggCountingNodes = true;
  const own = Document.prototype.querySelector;
  Document.prototype.querySelector = function (sel, ...rest) {
    if (String(sel).startsWith('.lg-node[data-node-id=')) window.__ggNodeQueries += 1;
    return own.call(this, sel, ...rest); }; }"""
BUDGET = """() => { const g = app.rootGraph ?? app.graph; const n = g.getNodeById(10) ?? g.getNodeById('10');
  return n; }"""


def test_an_unmounted_face_waits_for_the_dom_not_a_timer(browser, comfy_host):
    """A VRAM Budget face that is off screen in Nodes 2.0 is not looked for on every push (it was: two DOM queries a
    second per face); it waits for the canvas container's DOM to change (graph_adapter.watchFace), is put back when
    its place shows again, and a removed node leaves no observer or timer behind."""
    page, console = open_comfy(browser, comfy_host, vue_nodes=True, settings={"GPUGarden.Meter.IntervalMs": 250})
    try:
        wf = {"4": workflow()["4"], "10": workflow()["10"]}
        page.evaluate("async (wf) => { await app.loadApiJson(wf, 'watch.json'); }", wf)
        page.evaluate(JS_FIT_VIEW)
        faces = {"10": FACES["10"]}
        page.wait_for_function(f"(faces) => Object.values(({JS_FACES})(faces)).every(f => f.own_on_screen)", arg=faces,
                               timeout=20000)
        page.wait_for_function("() => window.__gpuGarden.budget.intervalMs === 250", timeout=5000)
        # the face leaves the screen, as when the frontend unmounts a node's widgets
        page.evaluate(f"""() => {{ const root = ({BUDGET})().widgets.find(w => w.name === 'gpu_garden_budget').element;
            window.__ggSlot = root.parentElement; root.remove(); }}""")
        page.evaluate(COUNT_NODE_QUERIES)
        n0 = page.evaluate("() => window.__gpuGarden.budget.received")
        page.wait_for_timeout(2500)
        pushes = page.evaluate("() => window.__gpuGarden.budget.received") - n0
        assert pushes >= 4, pushes  # about 10 pushes at 250 ms
        queries = page.evaluate("() => window.__ggNodeQueries")
        assert queries <= 1, (queries, pushes)  # one try when it starts waiting, none per push
        assert page.evaluate("() => window.__gpuGarden.faceWatch.stats()") == {
            "waiting": 1, "observing": True, "timer": False, "frame": False}
        # its place shows again with the old face in it (as after an undo): put back at the next DOM change
        page.evaluate(f"""() => {{ const root = ({BUDGET})().widgets.find(w => w.name === 'gpu_garden_budget').element;
            window.__ggSlot.append(root.cloneNode(true)); }}""")
        page.wait_for_function(f"(faces) => Object.values(({JS_FACES})(faces)).every(f => f.own_on_screen)", arg=faces,
                               timeout=5000)
        assert page.evaluate("() => window.__gpuGarden.faceWatch.stats()") == {
            "waiting": 0, "observing": False, "timer": False, "frame": False}
        # off screen again, then the node is removed: nothing keeps watching for it
        page.evaluate(f"""() => ({BUDGET})().widgets.find(w => w.name === 'gpu_garden_budget').element.remove()""")
        page.wait_for_function("() => window.__gpuGarden.faceWatch.stats().waiting === 1", timeout=5000)
        page.evaluate(f"() => {{ const n = ({BUDGET})(); n.graph.remove(n); }}")
        assert page.evaluate("() => window.__gpuGarden.faceWatch.stats()") == {
            "waiting": 0, "observing": False, "timer": False, "frame": False}
        page.wait_for_timeout(600)
        assert page.evaluate("() => window.__gpuGarden.faceWatch.stats()")["waiting"] == 0
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


def test_a_second_face_on_screen_does_not_cost_the_waiting_one_a_query_per_push(browser, comfy_host):
    """review21 finding 12: with two VRAM Budget nodes, one off screen and one on screen, the on-screen face redraws its
    name, bar and legend on every push (replaceChildren inside the canvas container). Those are the pack's own nodes,
    not the canvas drawing one: the waiting face is not looked for on each push (before: one query per push)."""
    page, console = open_comfy(browser, comfy_host, vue_nodes=True, settings={"GPUGarden.Meter.IntervalMs": 250})
    try:
        wf = {"4": workflow()["4"], "10": workflow()["10"], "14": workflow()["10"]}
        page.evaluate("async (wf) => { await app.loadApiJson(wf, 'watch2.json'); }", wf)
        page.evaluate(JS_FIT_VIEW)
        faces = {"10": FACES["10"], "14": FACES["10"]}
        page.wait_for_function(f"(faces) => Object.values(({JS_FACES})(faces)).every(f => f.own_on_screen)", arg=faces,
                               timeout=20000)
        page.wait_for_function("() => window.__gpuGarden.budget.intervalMs === 250", timeout=5000)
        page.evaluate(f"""() => ({BUDGET})().widgets.find(w => w.name === 'gpu_garden_budget').element.remove()""")
        page.wait_for_function("() => window.__gpuGarden.faceWatch.stats().waiting === 1", timeout=5000)
        page.evaluate(COUNT_NODE_QUERIES)
        n0 = page.evaluate("() => window.__gpuGarden.budget.received")
        page.wait_for_timeout(2500)
        pushes = page.evaluate("() => window.__gpuGarden.budget.received") - n0
        assert pushes >= 4, pushes  # about 10 pushes at 250 ms
        assert page.evaluate(f"(faces) => ({JS_FACES})(faces)['14'].own_on_screen", faces)  # the other face is live
        queries = page.evaluate("() => window.__ggNodeQueries")
        assert queries <= 1, (queries, pushes)
        assert page.evaluate("() => window.__gpuGarden.faceWatch.stats()")["waiting"] == 1
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


# Fit to Card's result as the server sends it (nodes/fit_to_card.py; test_fit_to_card.py's advise case): many lines
MIB = 1024 ** 2
FIT_RESULT = {"mode": "advise", "summary": "text encoders off the GPU, kept 316.80 MiB of weights: does NOT fit",
              "memory_required": round(1.45 * 1024 * MIB), "stock_memory_required": 5590 * MIB, "cond_batch": 2,
              "steps": [{"label": f"step {k}: text encoders off the GPU during sampling, decode in 512 px tiles"}
                        for k in range(12)], "offers": [], "fits": False}
FIT = "((app.rootGraph ?? app.graph).getNodeById(13) ?? (app.rootGraph ?? app.graph).getNodeById('13'))"
# save the open graph and load it again: what a reload or Ctrl+Z does (graph.configure), the faces idle again
JS_RELOAD = "async () => { await app.loadGraphData((app.rootGraph ?? app.graph).serialize(), false, false, 'reload'); }"
# the node's size against what its widgets need, and how much of its face the idle text leaves empty
JS_IDLE_FACE = f"""() => {{ const n = {FIT};
  const face = n.widgets.find(w => w.element && w.element.dataset.testid).element, last = face.lastElementChild;
  const dom = window.LiteGraph.vueNodesMode ? document.querySelector(`.lg-node[data-node-id="${{n.id}}"]`) : null;
  return {{size: [...n.size].map(Math.round), needed: Math.round(n.computeSize()[1]), text: face.innerText,
          face: face.clientHeight, empty: face.clientHeight - (last.offsetTop + last.offsetHeight),
          below: dom ? Math.round(dom.getBoundingClientRect().bottom - face.getBoundingClientRect().bottom) : null}}; }}"""
# the result arrives (onExecuted with the server's payload), and the frame after it fits the node to the face
JS_RESULT = f"async (r) => {{ {FIT}.onExecuted({{ gpu_garden_fit: [r] }}); await new Promise(requestAnimationFrame);" \
            f" await new Promise(requestAnimationFrame); return [...{FIT}.size].map(Math.round); }}"


def fit_workflow() -> dict:
    return {k: v for k, v in workflow().items() if k in ("4", "10", "13")}


@pytest.mark.parametrize("vue", MODES)
def test_a_grown_node_loaded_with_its_idle_face_shrinks_to_it(browser, comfy_host, vue):
    """walk52: after Ctrl+Z or a reload in Nodes 2.0 the Footprint Estimate and Fit to Card faces are their idle text
    again (faces never serialize) but the nodes kept the height a run grew them to, and Nodes 2.0 stretches the face
    to fill it: Fit to Card showed one line in a 231 px box, the estimate three lines in 458 px. A height a result
    grew the node to (recorded by node_face.setFaceSize) now shrinks back, in both renderers; the width is kept."""
    page, console = open_comfy(browser, comfy_host, vue_nodes=vue)
    try:
        if vue and not page.evaluate("() => !!window.LiteGraph.vueNodesMode"):
            print(f"frontend {comfy_host.frontend}: Comfy.VueNodes.Enabled does not turn Nodes 2.0 on here; skipped")
            pytest.skip(f"no Nodes 2.0 renderer on frontend {comfy_host.frontend}")
        page.evaluate("async (wf) => { await app.loadApiJson(wf, 'grown.json'); }", fit_workflow())
        page.evaluate(JS_FIT_VIEW)  # the frontend lays a DOM widget out only while its node is in view
        page.evaluate(f"() => {{ {FIT}.setSize([440, {FIT}.size[1]]); }}")
        grown = page.evaluate(JS_RESULT, FIT_RESULT)
        page.evaluate(JS_RELOAD)
        page.evaluate(JS_FIT_VIEW)
        page.wait_for_function(f"() => ({JS_IDLE_FACE})().face > 0", timeout=20000)
        page.wait_for_timeout(500)
        f = page.evaluate(JS_IDLE_FACE)
        assert grown[1] > f["needed"] + 40, ("the result did not grow the node", grown, f)  # else the test is vacuous
        assert f["text"].startswith("Runs before the sampler"), f  # idle: the result is gone
        assert f["empty"] < 40, ("the face is an empty box under its idle text", f)
        if vue:  # the node ends at its face (and the pack's badge row under it: about 30 px)
            assert f["below"] < 60, ("the node runs on below its face", f)
        else:  # 1.35's Nodes 2.0 preview sizes nodes from its own layout, so these hold on the canvas only
            assert f["size"][0] == grown[0] == 440, (f, grown)  # the width is kept
            assert abs(f["size"][1] - f["needed"]) <= 1, ("the node kept its grown height", f, grown)
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


@pytest.mark.parametrize("vue", MODES)
def test_a_hand_set_face_height_is_kept_on_reload(browser, comfy_host, vue):
    """faceU: a height the user gave Fit to Card by hand, taller than its idle face needs, survives a reload (as
    Ctrl+Z restores it): only a height the pack grew the node to for a result is taken back. Also after a result: the
    user makes the grown node taller still, and that height is theirs."""
    page, console = open_comfy(browser, comfy_host, vue_nodes=vue)
    size_now = f"() => {{ const n = {FIT}; return [[...n.size].map(Math.round), n.computeSize()[1]]; }}"
    # 1.58's Nodes 2.0 may lay a node out taller than set (its header and slots): there, not shrunk is the claim
    kept = (lambda size, hand: size[1] >= hand[1]) if vue else (lambda size, hand: size == hand)
    try:
        if vue and not page.evaluate("() => !!window.LiteGraph.vueNodesMode"):
            pytest.skip(f"no Nodes 2.0 renderer on frontend {comfy_host.frontend}")
        if vue and comfy_host.frontend == "bundled":
            # 1.35.9's Nodes 2.0 preview lays nodes out itself: a 440x420 node came back 528x564 in one run and
            # 504x403 in another, a 440x715 one 420x285, whatever setSize said; no size claim holds there
            print("frontend bundled (1.35.9): its Nodes 2.0 preview sizes nodes from its own layout; skipped")
            pytest.skip("1.35.9's Nodes 2.0 preview ignores a node's set size across a reload")
        page.evaluate("async (wf) => { await app.loadApiJson(wf, 'hand.json'); }", fit_workflow())
        page.evaluate(JS_FIT_VIEW)
        page.evaluate(f"() => {{ {FIT}.setSize([440, 420]); }}")  # as the user's drag of the corner leaves it
        page.evaluate(JS_RELOAD)
        size, needed = page.evaluate(size_now)
        assert kept(size, [440, 420]) and needed < 420, (size, needed)
        page.evaluate(f"() => {{ {FIT}.setSize([440, 100]); }}")
        grown = page.evaluate(JS_RESULT, FIT_RESULT)
        assert grown[1] > 100 + 40, grown  # the result grew it
        page.evaluate(f"(h) => {{ {FIT}.setSize([440, h]); }}", grown[1] + 60)  # the user, taller still
        page.evaluate(JS_RELOAD)
        size, needed = page.evaluate(size_now)
        assert kept(size, [440, grown[1] + 60]) and needed < size[1], (size, grown, needed)
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()
