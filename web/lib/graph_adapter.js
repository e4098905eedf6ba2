// @ts-check
// Every use of ComfyUI frontend / LiteGraph internals that has no public extension API, in one place.
// Each function has a fallback; when the preferred path fails it logs ONE console warning per kind
// (so a frontend upgrade that breaks something shows up once in the console, not as a silent no-op).
//
// What is here and why:
// - nodeClientRect: a node's rectangle on screen, for placing the OOM panel beside it. Classic canvas:
//   node.getBounding() (LiteGraph) through app.canvasPosToClientPos (public). Nodes 2.0: the node's DOM
//   element (`.lg-node[data-node-id]`, not an API; other elements carry node ids too) because the Vue
//   layout may differ from LiteGraph's size.
// - frontendErrorRects: where the frontend's own error UI is (1.35: the .p-dialog modal; 1.58: the
//   error overlay card and the right side panel), so the panel can sit beside it.
// - replaceNode: graph surgery for the VAE Decode -> VAE Decode (Tiled) swap (LiteGraph createNode,
//   graph.add/remove, connect), wrapped in canvas before/after-change so it is one undo step.
// - node ids: 1.35 uses numbers, 1.58 strings ("8"); compare them with sameNodeId().
// - remountFace: Nodes 2.0 mounts a DOM widget's element once per node component; after a graph reloaded in
//   place (undo, redo) the component is kept and shows the removed node's element. Ours is put in its place.
//   watchFace: a face that cannot be put on screen yet waits for the canvas container's DOM to change (one
//   MutationObserver for all such faces, on #graph-canvas-container), not for a timer; the faces' own redraws
//   (inside an element marked data-gg-face) are not such a change.
// - canvasArea: the graph's visible part, from the frontend's graph panel (.graph-canvas-panel), cached.
// - inputLink: a node input's link through LGraphNode.getInputLink (1.58 deprecates reading input.link).
// - allNodes: the nodes of a graph and of its subgraphs (node.subgraph, graph.subgraphs on 1.58), feature-detected.
//   upstream / nodePlace / nodeAt: a link followed into and out of a subgraph (subgraph.outputs[i].linkIds, the
//   subgraph's inputNode), and a node found again inside one by its subgraph's id (Fit to Card's Apply and Undo).
//   A walk that starts inside a subgraph leaves it through the instance the user entered (subgraph_path.js: the
//   canvas's subgraph-opened events; followEnteredSubgraphs starts listening).
// - canvasControlsRect / overNode: where the frontend's canvas controls are (the zoom button's bar, 1.35 and
//   1.58: [data-testid=zoom-controls-button], not an API) and which shown nodes a rectangle covers, so the
//   memory meter docks beside the one and stays out of the other's way.
// - minimapRect: where the frontend's minimap shows (.litegraph-minimap, not an API), so the docked OOM panel
//   keeps clear of it.
import { app } from "../../../scripts/app.js";
import { exposeForTests } from "./format.js";
import { enteredPath, followSubgraphEntries } from "./subgraph_path.js";

/** @type {Set<string>} */
const warned = new Set();

/** Log one console warning per kind. */
export function warnOnce(kind, ...detail) {
  if (warned.has(kind)) return;
  warned.add(kind);
  console.warn(`[GPU Garden] frontend internals changed (${kind}); using a fallback.`, ...detail);
}

/** The LiteGraph global (window.LiteGraph is set by the frontend in both versions). */
function liteGraph() {
  // @ts-ignore: set by the frontend
  const LG = window.LiteGraph;
  if (!LG) throw new Error("LiteGraph is not loaded");
  return LG;
}

/** Node ids: numbers on 1.35, strings on 1.58. */
export function sameNodeId(a, b) {
  return a != null && b != null && String(a) === String(b);
}

/** The root graph (app.rootGraph on current frontends, app.graph before). */
export function rootGraph() {
  return app.rootGraph ?? app.graph;
}

/**
 * Every node of `graph` and of the subgraphs in it, each once. Frontends with subgraphs (1.58: a subgraph node's
 * node.subgraph, and graph.subgraphs, the root's Map of every subgraph definition) are walked from the root graph, so
 * a node inside a subgraph counts wherever `graph` is; a frontend without them gives graph.nodes (feature-detected).
 * @param {any} graph
 * @returns {any[]}
 */
export function allNodes(graph) {
  /** @type {any[]} */
  const out = [];
  const seen = new Set();
  const walk = (g) => {
    if (!g || seen.has(g)) return;
    seen.add(g);
    for (const n of g.nodes || []) {
      out.push(n);
      if (n?.subgraph) walk(n.subgraph);
    }
  };
  const root = graph?.rootGraph ?? graph;
  walk(root);
  const defs = root?.subgraphs;
  if (defs && typeof defs.values === "function") for (const g of defs.values()) walk(g);
  return out;
}

/** The node for an id in `graph`, whichever type the frontend keys its ids by. */
export function nodeById(graph, id) {
  if (!graph || id == null) return null;
  const s = String(id);
  return graph.getNodeById(s) ?? (/^\d+$/.test(s) ? graph.getNodeById(Number(s)) : null) ?? null;
}

/** A link by id (graph.getLink is LiteGraph API on both versions; graph.links as Map or object before). */
export function linkById(graph, id) {
  if (id == null) return null;
  if (typeof graph.getLink === "function") return graph.getLink(id) ?? null;
  warnOnce("graph.getLink");
  const links = graph.links;
  return (links instanceof Map ? links.get(id) : links?.[id]) ?? null;
}

/**
 * The link that feeds input `slot` of `node`, or null. LGraphNode.getInputLink, on 1.35 and 1.58 alike (1.58 deprecates
 * reading input.link, with a console warning); taken from LGraphNode's prototype because a subgraph node overrides it
 * with the link inside its subgraph, not the one feeding it. A frontend without it: input.link (one warning).
 * @param {any} node
 * @param {number} slot
 */
export function inputLink(node, slot) {
  if (!node?.graph || !(slot >= 0 && slot < (node.inputs?.length ?? 0))) return null;
  // @ts-ignore: set by the frontend
  const get = window.LiteGraph?.LGraphNode?.prototype?.getInputLink;
  if (typeof get === "function") return get.call(node, slot) ?? null;
  warnOnce("LGraphNode.getInputLink");
  const id = node.inputs[slot]?.link;
  return id != null ? linkById(node.graph, id) : null;
}

/**
 * The node that feeds input `slot` of `node`, looking through subgraphs (1.58; feature-detected, so a frontend without
 * them gives the link's origin node): a subgraph node's output leads to the inner node feeding it (the subgraph's
 * outputs[i].linkIds), and an inner link from the subgraph's input node to what feeds that input of the subgraph node.
 * `outer` is the subgraph nodes entered on the way, innermost last; by default the instances the user entered to reach
 * node's graph (subgraph_path.enteredPath), so a walk inside a subgraph used twice leaves through the instance on
 * screen; where that is not known, through the first instance found (allNodes). Returns { node, outer } or null.
 * @param {any} node
 * @param {number} slot
 * @param {any[]} [outer]
 * @returns {{ node: any, outer: any[] } | null}
 */
export function upstream(node, slot, outer = enteredPath(node?.graph)) {
  const link = inputLink(node, slot);
  return link ? linkOrigin(node.graph, link, outer, 0) : null;
}

const MAX_DEPTH = 16; // subgraphs inside subgraphs followed at most this deep

function linkOrigin(graph, link, outer, depth) {
  if (depth > MAX_DEPTH) return null;
  const inputNode = graph?.inputNode;
  if (inputNode && inputNode.id != null && sameNodeId(link.origin_id, inputNode.id)) {
    const last = outer[outer.length - 1];
    const holder = last?.subgraph === graph ? last : allNodes(graph).find((n) => n?.subgraph === graph);
    const l = holder ? inputLink(holder, link.origin_slot) : null;
    return l ? linkOrigin(holder.graph, l, holder === last ? outer.slice(0, -1) : [], depth + 1) : null;
  }
  const n = nodeById(graph, link.origin_id);
  const ids = n?.subgraph?.outputs?.[link.origin_slot]?.linkIds;
  if (Array.isArray(ids) && ids.length) {
    const inner = linkById(n.subgraph, ids[0]);
    if (inner) return linkOrigin(n.subgraph, inner, [...outer, n], depth + 1);
  }
  return n ? { node: n, outer } : null;
}

/**
 * Where `node` sits, to find it again after a reload: its id, and the id of the subgraph holding it where that is
 * not `from` (the graph the finder starts from); see nodeAt.
 * @param {any} node
 * @param {any} from
 */
export function nodePlace(node, from) {
  const place = { nodeId: node.id };
  if (node.graph && node.graph !== from && node.graph.id != null) place.graphId = String(node.graph.id);
  return place;
}

/**
 * The node nodePlace described, from `from`: in `from` itself, or in the root graph or the subgraph definition whose
 * id it kept (graph.subgraphs, 1.58's Map of them by id). Null when it is gone.
 * @param {any} from
 * @param {{ nodeId: any, graphId?: string }} place
 */
export function nodeAt(from, place) {
  if (!place?.graphId) return nodeById(from, place?.nodeId);
  const root = from?.rootGraph ?? from;
  if (root && String(root.id) === place.graphId) return nodeById(root, place.nodeId);
  const defs = root?.subgraphs;
  const graph = defs && typeof defs.get === "function" ? defs.get(place.graphId) : null;
  return graph ? nodeById(graph, place.nodeId) : null;
}

/** Follow which subgraph instances the user enters (subgraph_path.js; setup calls it once the canvas exists). */
export function followEnteredSubgraphs() {
  if (!followSubgraphEntries(app.canvas)) warnOnce("the canvas element's subgraph-opened events");
}

/** Is the Nodes 2.0 (Vue) renderer on? */
export function vueNodesMode() {
  // @ts-ignore
  return !!window.LiteGraph?.vueNodesMode;
}

/** The canvas element (LGraphCanvas.canvas; app.canvasEl was an internal getter). */
export function canvasElement() {
  const el = app.canvas?.canvas;
  if (el instanceof HTMLCanvasElement) return el;
  warnOnce("app.canvas.canvas");
  return /** @type {HTMLCanvasElement | null} */ (document.getElementById("graph-canvas"));
}

/** @typedef {{ left: number, top: number, right: number, bottom: number }} ClientRect */

/** canvas coordinates -> client pixels. */
function toClient(x, y) {
  if (typeof app.canvasPosToClientPos === "function") {
    const [cx, cy] = app.canvasPosToClientPos([x, y]);
    return [cx, cy];
  }
  warnOnce("app.canvasPosToClientPos");
  const ds = app.canvas.ds;
  const c = app.canvas.canvas.getBoundingClientRect();
  return [c.left + (x + ds.offset[0]) * ds.scale, c.top + (y + ds.offset[1]) * ds.scale];
}

/**
 * A node's rectangle in client pixels (title bar included), or null when it cannot be told.
 * @returns {ClientRect | null}
 */
export function nodeClientRect(node) {
  if (vueNodesMode()) {
    const dom = document.querySelector(`.lg-node[data-node-id="${CSS.escape(String(node.id))}"]`);
    if (dom) {
      const r = dom.getBoundingClientRect();
      if (r.width > 0) return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    } else warnOnce("Nodes 2.0 node element .lg-node[data-node-id]");
  }
  return nodeLayoutRect(node);
}

/**
 * A node's client rectangle from the graph's own layout (position, size, the canvas's offset and scale), with no DOM
 * query: cheap enough to ask of every node on every meter sample. In Nodes 2.0 the element follows the same layout.
 * @param {any} node
 * @returns {ClientRect | null}
 */
function nodeLayoutRect(node) {
  let x, y, w, h;
  if (typeof node.getBounding === "function") {
    [x, y, w, h] = node.getBounding();
  } else {
    warnOnce("LGraphNode.getBounding");
    const titleH = liteGraph().NODE_TITLE_HEIGHT ?? 30;
    [x, y, w, h] = [node.pos[0], node.pos[1] - titleH, node.size[0], node.size[1] + titleH];
  }
  if (!(w > 0)) return null;
  const [left, top] = toClient(x, y);
  const [right, bottom] = toClient(x + w, y + h);
  return { left, top, right, bottom };
}

/**
 * Put a node face (a DOM widget's element, found by its data-testid) on screen where Nodes 2.0 left the old one.
 * Nodes 2.0 (1.58: WidgetDOM) mounts a node's DOM widget element only when the node's component mounts. A graph
 * reloaded in place (Ctrl+Z / Ctrl+Y: the change tracker's loadGraphData) re-creates every node under its old id,
 * the component is kept, and the new node's element is never mounted: the removed node's face stays on screen
 * and never changes again. This does what the component does on mount (its container's replaceChildren), in
 * the container where the stale face is. True when `element` is in the document after the call.
 * @param {any} node
 * @param {HTMLElement} element
 */
export function remountFace(node, element) {
  if (element.isConnected) return true;
  if (!vueNodesMode() || !node || node.graph !== (app.canvas?.graph ?? node.graph)) return false; // not on screen
  const dom = document.querySelector(`.lg-node[data-node-id="${CSS.escape(String(node.id))}"]`);
  if (!dom) return false; // not drawn (yet)
  const testid = element.dataset.testid;
  const stale = testid ? dom.querySelector(`[data-testid="${CSS.escape(testid)}"]`) : null;
  // none: the node is drawn without its widgets (zoomed out), which mount the current element when they come
  // back; not a changed frontend, so no warning
  if (!stale?.parentElement) return false;
  stale.parentElement.replaceChildren(element);
  return true;
}

// -- faces waiting to be put on screen ---------------------------------------------------------------------------
/** element -> its node: faces (Nodes 2.0) that remountFace could not put on screen yet. */
const waiting = new Map();
/** @type {{ observer: MutationObserver | null, target: Element | null, frame: number, timer: any }} */
const watch = { observer: null, target: null, frame: 0, timer: 0 };
const FALLBACK_MS = 1000;

/** The element whose subtree holds every node of the graph on screen (Nodes 2.0's .lg-node elements). */
function canvasContainer() {
  return document.getElementById("graph-canvas-container") ?? app.canvas?.canvas?.parentElement ?? null;
}

/** A node that left its graph (removed, or its graph reloaded in place by undo) will never be shown again. */
function nodeGone(node) {
  return !node?.graph || nodeById(node.graph, node.id) !== node;
}

/** The attribute every pack face carries (markFace), so the watcher can tell the faces' own redraws from the canvas's. */
const FACE_ATTR = "data-gg-face";

/** Mark `element` as one of the pack's node faces (node_face.keepOnScreen does, for every face). @param {HTMLElement} element */
export function markFace(element) {
  element.setAttribute(FACE_ATTR, "");
}

/** Whether a mutation's target is inside (or is) one of the pack's faces. @param {Node} target */
function ownFace(target) {
  const elem = target.nodeType === 1 ? /** @type {Element} */ (target) : target.parentElement;
  return !!elem?.closest(`[${FACE_ATTR}]`);
}

/** Try each waiting face once; stop watching when none is left. */
function checkWaiting() {
  watch.frame = 0;
  for (const [element, node] of [...waiting]) {
    if (element.isConnected || nodeGone(node) || remountFace(node, element)) waiting.delete(element);
  }
  if (!waiting.size) stopWatching();
}

function stopWatching() {
  watch.observer?.disconnect();
  watch.observer = null;
  watch.target = null;
  cancelAnimationFrame(watch.frame);
  watch.frame = 0;
  clearTimeout(watch.timer);
  watch.timer = 0;
}

/** Watch the canvas container for added elements (a node drawn, its widgets mounted); else, one timer as fallback. */
function startWatching() {
  const target = canvasContainer();
  if (watch.observer && watch.target === target && target?.isConnected) return;
  stopWatching();
  if (target && typeof MutationObserver === "function") {
    watch.target = target;
    watch.observer = new MutationObserver((records) => {
      // the pack's own faces redraw their insides on every budget push (replaceChildren): those records are no node
      // or widget being drawn, so they do not start a check (one query per push and waiting face, otherwise)
      if (watch.frame || !records.some((r) => r.addedNodes.length && !ownFace(r.target))) return;
      watch.frame = requestAnimationFrame(checkWaiting); // one check per frame, however many records
    });
    watch.observer.observe(target, { childList: true, subtree: true });
    return;
  }
  warnOnce("#graph-canvas-container (MutationObserver)");
  const tick = () => {
    checkWaiting();
    if (waiting.size) watch.timer = setTimeout(tick, FALLBACK_MS);
  };
  watch.timer = setTimeout(tick, FALLBACK_MS);
}

/** Stop waiting for the faces of `node` (its onRemoved). */
function forgetNode(node) {
  for (const [element, n] of [...waiting]) if (n === node) waiting.delete(element);
  if (!waiting.size) stopWatching();
}

/**
 * Keep `element` (a face of `node`) on screen: put it there now (remountFace), else wait for the canvas's DOM to
 * change and try again then. Cheap to call often: a face already on screen or already waiting costs no query. A node
 * removed from its graph stops the wait (no observer or timer is left for it). True when `element` is on screen.
 * Only Nodes 2.0 needs this; the classic canvas mounts its DOM widgets itself.
 * @param {any} node
 * @param {HTMLElement} element
 */
export function watchFace(node, element) {
  if (element.isConnected) return true;
  if (waiting.has(element)) return false;
  if (remountFace(node, element)) return true;
  if (!vueNodesMode() || nodeGone(node)) return false;
  if (!node.__ggFaceWatch) {
    node.__ggFaceWatch = true;
    const onRemoved = node.onRemoved;
    node.onRemoved = function (...args) {
      forgetNode(this);
      return onRemoved?.apply(this, args);
    };
  }
  waiting.set(element, node);
  startWatching();
  return false;
}

/** For tests: how many faces wait, and whether an observer or a timer is running for them. */
export function faceWatchStats() {
  return { waiting: waiting.size, observing: !!watch.observer, timer: !!watch.timer, frame: !!watch.frame };
}
exposeForTests({ faceWatch: { stats: faceWatchStats } });

// The frontend's minimap (1.35 and 1.58: a .litegraph-minimap box over the canvas's bottom-right corner; 1.58 also
// marks it data-testid=minimap-container). Not an API: a frontend without it, or with it closed, has no such box.
const MINIMAP = ".litegraph-minimap, [data-testid=minimap-container]";

/** @type {Element | null} the minimap's box, kept while it is in the document (minimapRect) */
let minimap = null;

/**
 * Where the frontend's minimap shows, as a client rectangle, or null where it is not shown (closed, hidden, or a
 * frontend without one). The box is found once and queried again only when it has left the document, so the OOM
 * panel asking each animation frame costs no query while the minimap stays.
 * @returns {{ left: number, top: number, right: number, bottom: number } | null}
 */
export function minimapRect() {
  if (!minimap?.isConnected) minimap = document.querySelector(MINIMAP);
  const r = minimap?.getBoundingClientRect();
  if (!r || !(r.width > 0 && r.height > 0) || getComputedStyle(/** @type {Element} */ (minimap)).visibility === "hidden") return null;
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
}

/** Selectors of the frontend's own error UI, per version (none of them is an API). */
const ERROR_UI = [
  "[data-testid=error-overlay]",          // 1.58: the "Generation failed" card under the action bar
  ".p-dialog",                            // 1.35: the execution error modal (and any other dialog)
  "[data-testid=properties-panel]",      // 1.58: the right side panel (Issues tab)
  ".comfy-modal",                         // legacy modal
];

// The frontend's side bars drawn over the canvas (the canvas element spans the whole window under them): the
// icon strip and the open tab's panel, on 1.35 and 1.58 alike, on whichever side the user put them. canvasArea's
// fallback where the frontend has no graph panel.
const SIDE_UI = [".side-tool-bar-container", ".side-bar-panel"];

/** @type {Element | null} the frontend's graph panel, kept while it is in the document (canvasArea) */
let graphPanel = null;

/**
 * The frontend's graph panel (.graph-canvas-panel, 1.35 and 1.58: the splitter's part beside the side bars), found once
 * and queried again only when it has left the document (a layout rebuilt), so a caller each animation frame costs no
 * query. Null where the frontend has none.
 */
function graphPanelElement() {
  if (!graphPanel?.isConnected) graphPanel = document.querySelector(".graph-canvas-panel");
  return graphPanel;
}

/**
 * The part of the window where the graph shows: the window less the side bars over the canvas (the icon strip, an
 * open tab's panel, on either side). Read from the graph panel's rectangle; without one, from the side bars found
 * one by one (one warning; none with quiet: the meter asks while the page is still mounting its panels).
 * @param {{quiet?: boolean}} [opts]
 */
export function canvasArea({ quiet = false } = {}) {
  const vw = window.innerWidth;
  const area = { left: 0, top: 0, right: vw, bottom: window.innerHeight };
  const r = graphPanelElement()?.getBoundingClientRect();
  if (r && r.width > 0) {
    area.left = Math.max(0, r.left);
    area.right = Math.min(vw, r.right);
    return area;
  }
  if (!quiet) warnOnce("the graph panel .graph-canvas-panel");
  for (const sel of SIDE_UI) {
    for (const e of document.querySelectorAll(sel)) {
      const s = e.getBoundingClientRect();
      if (!(s.width > 0 && s.height > window.innerHeight * 0.5)) continue;
      if (s.left + s.width / 2 < vw / 2) area.left = Math.max(area.left, s.right);
      else area.right = Math.min(area.right, s.left);
    }
  }
  return area;
}

/**
 * The frontend's canvas controls (zoom, fit view, minimap toggle: the bar in the canvas's bottom-right corner on
 * 1.35 and 1.58) in client pixels: the widest box around its zoom button that is still a bar (under half the
 * window wide and 120 px high, its bottom at the button's row). Null where none shows.
 * @returns {ClientRect | null}
 */
export function canvasControlsRect() {
  const button = document.querySelector("[data-testid=zoom-controls-button]");
  // no warning when it is missing: the controls are hidden by a setting (the canvas menu off) or not mounted yet on
  // 1.58, both ordinary; the meter then docks in the canvas's own corner
  if (!button) return null;
  let r = button.getBoundingClientRect();
  if (!(r.width > 0)) return null;
  for (let e = button.parentElement; e && e !== document.body; e = e.parentElement) {
    const p = e.getBoundingClientRect();
    if (!(p.width < window.innerWidth / 2 && p.bottom - r.bottom < 40 && p.height < 120)) break;
    r = p;
  }
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
}

/** Whether the client rectangle `box` meets any node of the graph on screen (by the graph's layout, no DOM query). */
export function overNode(box) {
  const graph = app.canvas?.graph ?? rootGraph();
  for (const node of graph?.nodes ?? graph?._nodes ?? []) {
    const r = nodeLayoutRect(node);  // never a DOM query per node per sample (test_faces_after_undo counts them)
    if (r && r.left < box.right && r.right > box.left && r.top < box.bottom && r.bottom > box.top) return true;
  }
  return false;
}

/** Client rectangles of the frontend's visible error UI, so the OOM panel can sit beside it. */
export function frontendErrorRects() {
  /** @type {ClientRect[]} */
  const out = [];
  for (const sel of ERROR_UI) {
    for (const e of document.querySelectorAll(sel)) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) out.push({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    }
  }
  return out;
}

/** The links of a node, by input name and by output slot, as plain data. */
function linksOf(node) {
  const graph = node.graph;
  const inputs = (node.inputs || []).map((inp, slot) => {
    const l = inputLink(node, slot);
    return l ? { name: inp.name, originId: l.origin_id, originSlot: l.origin_slot } : null;
  }).filter(Boolean);
  const outputs = [];
  (node.outputs || []).forEach((out, slot) => {
    for (const id of out.links || []) {
      const l = linkById(graph, id);
      if (l) outputs.push({ slot, name: out.name, type: out.type, targetId: l.target_id, targetSlot: l.target_slot });
    }
  });
  return { inputs, outputs };
}

/**
 * Replace `old` with a new node of `type` at the same place, keeping its links (by input name and output
 * name/type) and, where free, its id; widget values from `widgets` (by name) and `keep` (title, colours,
 * size, widgets_values by index). One undo step in the frontend's history.
 * @returns the new node
 */
export function replaceNode(old, type, { widgets = {}, keep = null } = {}) {
  const graph = old.graph;
  const fresh = liteGraph().createNode(type);
  if (!fresh) throw new Error(`node type ${type} is not registered`);
  const { inputs, outputs } = linksOf(old);
  const id = old.id;
  const pos = [old.pos[0], old.pos[1]];
  const canvas = app.canvas;
  const batch = typeof canvas?.emitBeforeChange === "function";
  if (batch) canvas.emitBeforeChange();
  else warnOnce("LGraphCanvas.emitBeforeChange (undo history)");
  try {
    graph.remove(old);
    fresh.id = id; // free again after remove(): LiteGraph keeps a preset id that is not taken
    fresh.pos = pos;
    graph.add(fresh);
    if (!sameNodeId(fresh.id, id)) warnOnce("graph.add kept no preset id", { wanted: id, got: fresh.id });
    if (keep) {
      if (keep.title) fresh.title = keep.title;
      for (const k of ["mode", "color", "bgcolor"]) if (keep[k] != null) fresh[k] = keep[k];
      if (keep.size) fresh.size = [...keep.size];
      (keep.widgets_values || []).forEach((v, i) => {
        if (fresh.widgets?.[i]) fresh.widgets[i].value = v;
      });
    }
    for (const [name, value] of Object.entries(widgets)) {
      const w = (fresh.widgets || []).find((x) => x.name === name);
      if (w) w.value = value;
    }
    for (const i of inputs) {
      const slot = (fresh.inputs || []).findIndex((x) => x.name === i.name);
      const origin = nodeById(graph, i.originId);
      if (origin && slot >= 0) origin.connect(i.originSlot, fresh, slot);
    }
    for (const o of outputs) {
      let slot = (fresh.outputs || []).findIndex((x) => x.name === o.name);
      if (slot < 0) slot = (fresh.outputs || []).findIndex((x) => x.type === o.type);
      const target = nodeById(graph, o.targetId);
      if (target && slot >= 0) fresh.connect(slot, target, o.targetSlot);
    }
  } finally {
    if (batch) canvas.emitAfterChange();
  }
  graph.setDirtyCanvas(true, true);
  return fresh;
}
