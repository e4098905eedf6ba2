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
    "12": ("GPUGardenUnloadTextEncoders", "gg_unload_report", "left the device"),
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
