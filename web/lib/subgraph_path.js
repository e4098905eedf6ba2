// @ts-check
// Which subgraph instances the user went through to reach the graph on screen, root first. The canvas shows a
// subgraph's definition (app.canvas.graph), which every instance of that subgraph shares, so a walk that leaves the
// shown graph upward (graph_adapter.upstream) must be told which instance it is in. Neither frontend keeps that:
// 1.35.9's and 1.58.1's subgraph navigation store holds subgraph ids, and the route hash a subgraph id. What both
// give is LiteGraph's canvas events on the canvas element (LGraphCanvasEventMap, dispatched by LGraphCanvas):
// "subgraph-opened" (openSubgraph: detail { subgraph, closingGraph, fromNode }, fromNode the instance entered, on a
// double click in either renderer) and "litegraph:set-graph" (setGraph: detail { newGraph, oldGraph }; the
// breadcrumb and Escape go back up through it). A subgraph shown by other means (the browser's back button, a
// link to it) has no instance: the path is then not known and enteredPath gives [] (the caller's fallback).
import { app } from "../../../scripts/app.js";

/** @type {any[] | null} the instances entered, root first; null: not known */
let entered = [];
/** @type {any[] | null} the path before the last graph change (a "subgraph-opened" follows that change) */
let before = [];
/** @type {EventTarget | null} the canvas element listened on */
let followed = null;

/** Is `graph` a root graph (LGraph.rootGraph is the graph itself there; a Subgraph's is its root)? */
function isRoot(graph) {
  return !graph?.rootGraph || graph.rootGraph === graph;
}

/** A new graph on screen: the root (nothing entered) or one already on the path (a step back up), else not known. */
function onShown(graph) {
  if (!graph) return;
  before = entered;
  if (isRoot(graph)) entered = [];
  else {
    const i = entered ? entered.findLastIndex((n) => n?.subgraph === graph) : -1;
    entered = i >= 0 ? entered.slice(0, i + 1) : null;
  }
}

/** `fromNode` (a subgraph instance on the graph that was shown) opened: it goes on the path that led to its graph. */
function onOpened(fromNode) {
  const from = fromNode?.graph;
  if (!from || !fromNode.subgraph) return;
  if (isRoot(from)) {
    entered = [fromNode];
    return;
  }
  const base = [entered, before].find((path) => path?.length && path[path.length - 1].subgraph === from);
  entered = base ? [...base, fromNode] : null;
}

/**
 * Listen to the canvas's subgraph events (once per canvas element). False where the canvas has no element to
 * listen on (the caller warns: graph_adapter.followEnteredSubgraphs).
 * @param {any} [canvas] LGraphCanvas (app.canvas)
 */
export function followSubgraphEntries(canvas = app.canvas) {
  /** @type {EventTarget | undefined} */
  const target = canvas?.canvas;
  if (!target || typeof target.addEventListener !== "function") return false;
  if (followed === target) return true;
  followed = target;
  entered = isRoot(canvas.graph) ? [] : null;
  before = entered;
  target.addEventListener("litegraph:set-graph", (e) => onShown(/** @type {CustomEvent} */ (e).detail?.newGraph));
  target.addEventListener("subgraph-opened", (e) => onOpened(/** @type {CustomEvent} */ (e).detail?.fromNode));
  return true;
}

/** Is `node` still a node of its graph (not removed, nor its graph reloaded since)? */
function inGraph(node) {
  return !!node?.graph && (node.graph.nodes || []).includes(node);
}

/**
 * The instances entered on the way to `graph`, root first, ending with the one holding `graph`: what
 * graph_adapter.upstream starts a walk inside `graph` with. [] where that is not known: `graph` is not on the path
 * to the graph on screen, the path does not lead to the graph on screen, or one of its instances is gone.
 * @param {any} graph
 * @returns {any[]}
 */
export function enteredPath(graph) {
  const shown = app.canvas?.graph;
  if (!entered || !entered.length || !graph || entered[entered.length - 1].subgraph !== shown) return [];
  const i = entered.findLastIndex((n) => n.subgraph === graph);
  const path = i >= 0 ? entered.slice(0, i + 1) : [];
  return path.every(inGraph) ? path : [];
}
