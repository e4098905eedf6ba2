"""webZ: a walk upstream that starts inside a subgraph used twice left through the FIRST instance of it, whichever
the user had opened (graph_adapter.upstream took allNodes(...).find(n => n.subgraph === graph)), so Fit to Card's
Apply in the second instance changed the first instance's loader. The walk now starts from the instances the user
entered (subgraph_path.js, fed by the canvas's "subgraph-opened" / "litegraph:set-graph" events).

graph_adapter.js imports the frontend's app, so web/ is laid out as ComfyUI serves it (extensions/<pack>/ beside a
stub scripts/app.js, as test_web_types does) and run in Node.js with hand-built graphs: LiteGraph's shapes only
(nodes with inputs[].link, getLink, a subgraph's inputNode, a subgraph node's .subgraph), no frontend code."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"

# Root: loader A -> instance O1 of P, loader B -> instance O2 of P; P: its input -> instance I of S; S: its input ->
# the Fit to Card node. Also in the root, two instances (T1 from A, T2 from B) of S directly: one subgraph used twice.
SCRIPT = r"""
globalThis.window = globalThis;
const { app } = await import(process.env.GG_ROOT + "/scripts/app.js");
const ga = await import(process.env.GG_ROOT + "/extensions/pack/lib/graph_adapter.js");

function graph(id, root) {
  const g = { id, nodes: [], links: new Map(), subgraphs: new Map() };
  g.rootGraph = root ?? g;
  g.getNodeById = (i) => g.nodes.find((n) => String(n.id) === String(i)) ?? null;
  g.getLink = (i) => g.links.get(i) ?? null;
  return g;
}
let linkId = 100;
function node(g, id, extra = {}) {
  const n = { id, graph: g, inputs: [], outputs: [{ name: "MODEL", type: "MODEL", links: [] }], ...extra };
  g.nodes.push(n);
  return n;
}
function link(g, fromId, toNode) {
  const id = ++linkId;
  g.links.set(id, { id, origin_id: fromId, origin_slot: 0, target_id: toNode.id, target_slot: 0 });
  toNode.inputs.push({ name: "model", type: "MODEL", link: id });
}
window.LiteGraph = { LGraphNode: { prototype: { getInputLink(slot) {
  return this.graph.getLink(this.inputs[slot].link); } } } };

const R = graph("root");
const P = graph("P", R), S = graph("S", R);
P.inputNode = { id: -10 }; S.inputNode = { id: -10 };
R.subgraphs.set("P", P); R.subgraphs.set("S", S);
const A = node(R, 1, { title: "A" }), B = node(R, 2, { title: "B" });
const O1 = node(R, 3, { subgraph: P }), O2 = node(R, 4, { subgraph: P });
const T1 = node(R, 5, { subgraph: S }), T2 = node(R, 6, { subgraph: S });
link(R, 1, O1); link(R, 2, O2); link(R, 1, T1); link(R, 2, T2);
const I = node(P, 1, { subgraph: S }); link(P, -10, I);
const fit = node(S, 1, { title: "fit" }); link(S, -10, fit);

const canvas = new EventTarget();
app.canvas = { canvas, graph: R };
const setGraph = (g) => { app.canvas.graph = g;
  canvas.dispatchEvent(new CustomEvent("litegraph:set-graph", { detail: { newGraph: g } })); };
const open = (inst) => { setGraph(inst.subgraph);
  canvas.dispatchEvent(new CustomEvent("subgraph-opened", { detail: { subgraph: inst.subgraph, fromNode: inst } })); };
const walk = () => ga.upstream(fit, 0)?.node?.title ?? null;

ga.followEnteredSubgraphs();
const out = {};
open(T2); out.second = walk();
setGraph(R); open(T1); out.first = walk();
setGraph(R); open(O2); open(I); out.nested_second = walk();
setGraph(P); open(I); out.nested_back_up = walk();            // the breadcrumb up to P, then I again
setGraph(R); open(O1); open(I); out.nested_first = walk();
setGraph(R); setGraph(S); out.unknown = walk();               // S shown with no instance (a link to it)
setGraph(R); open(T2); R.nodes.splice(R.nodes.indexOf(T2), 1); out.removed = walk();
console.log(JSON.stringify(out));
"""


def run_walks(tmp_path, web_dir=WEB):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "app.js").write_text("export const app = {};\n")
    (tmp_path / "extensions").mkdir()
    shutil.copytree(web_dir, tmp_path / "extensions" / "pack")
    (tmp_path / "walks.mjs").write_text(SCRIPT)
    done = subprocess.run([node, str(tmp_path / "walks.mjs")], capture_output=True, text=True, timeout=60,
                          env={"GG_ROOT": tmp_path.as_uri(), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_walk_leaves_through_the_instance_the_user_entered(tmp_path):
    walks = run_walks(tmp_path)
    # one subgraph used twice in the root: each instance reaches its own loader (the old walk: "A" both times)
    assert walks["second"] == "B" and walks["first"] == "A", walks
    # nested: S inside P, P used twice; the user in O2 -> I reaches B, also after stepping up to P and back into I
    assert walks["nested_second"] == "B" and walks["nested_back_up"] == "B" and walks["nested_first"] == "A", walks


def test_an_instance_not_known_falls_back_to_the_first(tmp_path):
    """S shown without an instance opened (a link, the browser's back button), or the instance opened since removed:
    the walk leaves through the first instance found, as before (a loader is still reached)."""
    walks = run_walks(tmp_path)
    assert walks["unknown"] == "A" and walks["removed"] == "A", walks
