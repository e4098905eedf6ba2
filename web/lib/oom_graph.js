// @ts-check
// Where a report's node is in the open graph, and the VAE Decode -> VAE Decode (Tiled) swap with its
// undo. The graph surgery itself is graph_adapter.replaceNode (the one place with LiteGraph internals).
import { app } from "../../../scripts/app.js";
import { nodeById, replaceNode, rootGraph } from "./graph_adapter.js";

/** The node chain for an execution id ("12:5" = node 5 inside subgraph instance 12), outermost first. */
export function nodeChain(execId) {
  const chain = [];
  let graph = rootGraph();
  for (const part of String(execId).split(":")) {
    const node = nodeById(graph, part);
    if (!node) break;
    chain.push(node);
    graph = node.subgraph;
    if (!graph) break;
  }
  return chain;
}

/** The failing node if it is on the graph shown now, else the subgraph node that contains it. */
export function visibleNode(execId, expectedType = null) {
  const shown = app.canvas.graph;
  const chain = nodeChain(execId);
  const depth = String(execId).split(":").length;
  // Same id, other node (another workflow open now, or the graph changed since): not ours.
  if (expectedType && chain.length === depth && chain[depth - 1].type !== expectedType) return null;
  for (let i = chain.length - 1; i >= 0; i--) if (chain[i].graph === shown) return chain[i];
  return null;
}

/** Apply a report's swap_node action; returns what undoSwap needs. */
export function applySwap(action) {
  const node = visibleNode(action.node_id, action.from);
  if (!node || node.type !== action.from) throw new Error(`node #${action.node_id} is no longer a ${action.from}`);
  const before = node.serialize();
  const title = node.title !== node.constructor?.title ? node.title : null;
  const fresh = replaceNode(node, action.to, { widgets: action.widgets,
    keep: { title, mode: node.mode, color: node.color, bgcolor: node.bgcolor } });
  return { before, nodeId: fresh.id, action };
}

export function undoSwap(state) {
  const node = visibleNode(String(state.nodeId), state.action.to);
  if (!node || node.type !== state.action.to) throw new Error("the swapped node has changed since; use Ctrl+Z");
  replaceNode(node, state.before.type, { keep: state.before });
}
