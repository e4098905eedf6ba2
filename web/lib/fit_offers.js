// @ts-check
// Fit to Card's one-click offers: find the widget an offer would change (walking the graph from the Fit to Card
// node, as memory/fit/offers.py describes in each offer's `apply`), change it only on a click, and undo that
// exactly. Public frontend API only (node.inputs / outputs / widgets, widget.value, widget.callback); link and
// node lookups go through graph_adapter.js. Nothing here runs without a click.
import { app } from "../../../scripts/app.js";
import { allNodes, linkById, nodeAt, nodeById, nodePlace, sameNodeId, upstream } from "./graph_adapter.js";

const MAX_NODES = 64; // a walk never visits more nodes than this

/** The widget called `name` on `node`, or null. */
export function widgetNamed(node, name) {
  return (node?.widgets || []).find((w) => w.name === name) ?? null;
}

/** A list widget's options (combo), or null. */
function listOptions(w) {
  const v = w?.options?.values;
  if (Array.isArray(v)) return v;
  if (typeof v === "function") {
    try {
      const r = v(w);
      return Array.isArray(r) ? r : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** Can `w` take `value` (same kind; among a combo's options; within a number's min/max)? */
function accepts(w, value) {
  if (!w) return false;
  const opts = listOptions(w);
  if (opts) return opts.includes(value);
  if (typeof value === "number") {
    const { min, max } = w.options || {};
    return typeof w.value === "number" && !(min != null && value < min) && !(max != null && value > max);
  }
  return typeof w.value === typeof value;
}

function matches(node, target) {
  if (!node || (target.type && node.type !== target.type)) return false;
  return Object.entries(target.widgets || {}).every(([name, v]) => accepts(widgetNamed(node, name), v));
}

/** Nodes reached from the Fit to Card node as `apply` says: upstream from an input (through subgraphs:
 *  graph_adapter.upstream, so a loader inside one is reached), or the nodes its vae output feeds. */
function reached(node, apply) {
  const graph = node.graph;
  /** @type {any[]} */
  const out = [];
  const seen = new Set([node]);  // the node objects: ids repeat from one subgraph to the next
  /** @type {{node: any, type: string, outer: any[]}[]} */
  const queue = [];
  if (apply.from === "vae_out") {
    const slot = (node.outputs || []).findIndex((o) => o.type === "VAE");
    for (const id of node.outputs?.[slot]?.links || []) {
      const l = linkById(graph, id);
      const t = l && nodeById(graph, l.target_id);
      if (t) out.push(t);
    }
    return out;
  }
  const at = (node.inputs || []).findIndex((i) => i.name === apply.from);
  const first = at >= 0 ? upstream(node, at) : null;
  if (first) queue.push({ ...first, type: String(node.inputs[at].type) });
  while (queue.length && out.length < MAX_NODES) {
    const { node: n, type, outer } = /** @type {{node: any, type: string, outer: any[]}} */ (queue.shift());
    if (!n || seen.has(n)) continue;
    seen.add(n);
    out.push(n);
    for (const [slot, i] of (n.inputs || []).entries()) {
      if (apply.through === "same" && !(String(i.type) === type || i.type === "*")) continue;
      const up = upstream(n, slot, outer);
      if (up) queue.push({ ...up, type });
    }
  }
  return out;
}

/**
 * Where `offer` would apply in this graph: { node, widgets } (the first node reached that has every widget of one
 * of the offer's targets), or null (no such widget here, or the offer has no one-click form).
 */
export function findTarget(fitNode, offer) {
  const apply = offer?.apply;
  if (!apply || !fitNode?.graph) return null;
  const nodes = reached(fitNode, apply);
  for (const target of apply.targets || []) {
    const n = nodes.find((x) => matches(x, target));
    if (n) return { node: n, widgets: target.widgets };
  }
  return null;
}

/** The widget names an offer's targets set (e.g. blocks_to_swap). */
function targetNames(offer) {
  return new Set((offer?.apply?.targets || []).flatMap((t) => Object.keys(t.widgets || {})));
}

/**
 * Does `graph` hold a node with a widget or an input named as one of `offer`'s targets? An offer shown only as
 * information where no widget takes it (without_widget "info": the wrapper loaders' block-swap count) is shown
 * only then: a plain SD graph has no loader that takes a block-swap count. The server sees only the queued prompt,
 * and some loaders keep the widget client-side, so this is decided here. A node inside a subgraph counts (fixU:
 * graph_adapter.allNodes walks them). An offer with no targets: true.
 */
export function graphTakes(graph, offer) {
  const names = targetNames(offer);
  if (!names.size) return true;
  const named = (list) => (list || []).some((x) => names.has(x?.name));
  return allNodes(graph).some((n) => named(n.widgets) || named(n.inputs));
}

/**
 * Run `fn` as one change of the graph (LGraphCanvas.emitBeforeChange / emitAfterChange, as graph_adapter's
 * replaceNode does): one step in the frontend's undo history, and the frontend stores the open workflow then,
 * so a reload right after a click keeps it.
 */
function asOneChange(fn) {
  const canvas = app.canvas;
  const batch = typeof canvas?.emitBeforeChange === "function" && typeof canvas?.emitAfterChange === "function";
  if (batch) canvas.emitBeforeChange();
  try {
    return fn();
  } finally {
    if (batch) canvas.emitAfterChange();
  }
}

function setWidget(node, w, value) {
  w.value = value;
  w.callback?.(value, app.canvas, node);
  node.setDirtyCanvas?.(true, true);
}

/** node.properties key of the Undo records: serialised with the workflow, so Undo survives a reload and a save/load. */
export const APPLIED_PROP = "gg_fit_applied";

/** The Undo records kept on the Fit to Card node, by offer id ({} when none). */
export function appliedRecords(fitNode) {
  const r = fitNode?.properties?.[APPLIED_PROP];
  return r && typeof r === "object" ? r : {};
}

function keepRecords(fitNode, records) {
  fitNode.properties = fitNode.properties || {};
  if (Object.keys(records).length) fitNode.properties[APPLIED_PROP] = records;
  else delete fitNode.properties[APPLIED_PROP];
}

/**
 * Apply `offer` on a click: change its widgets, keep the record Undo needs on the Fit to Card node's properties
 * (the node, each widget's value before and after), and return it; null when there is nowhere to apply it.
 */
export function applyOffer(fitNode, offer) {
  const t = findTarget(fitNode, offer);
  if (!t) return null;
  const changes = Object.entries(t.widgets).map(([name, after]) => {
    const w = widgetNamed(t.node, name);
    return { name, before: w.value, after };
  });
  // a loader inside a subgraph: the record keeps its subgraph's id (nodePlace) and its title says where it is
  const where = t.node.graph !== fitNode.graph && t.node.graph?.name ? ` (in subgraph ${t.node.graph.name})` : "";
  const rec = { id: offer.id, label: offer.label, ...nodePlace(t.node, fitNode.graph),
                nodeTitle: (t.node.title || t.node.type) + where, changes };
  asOneChange(() => {
    for (const c of changes) setWidget(t.node, widgetNamed(t.node, c.name), c.after);
    keepRecords(fitNode, { ...appliedRecords(fitNode), [offer.id]: rec });
  });
  return rec;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Undo the record kept for `offerId` on `fitNode`: put back each value that still holds what the click set.
 * A value changed by hand since is left as the user set it (`byHand`, with its value now); a node or widget
 * that is gone is `missed`. The record is dropped either way.
 * @returns {{ record: any, restored: any[], byHand: any[], missed: any[] } | null}
 */
export function undoApplied(fitNode, offerId) {
  const records = appliedRecords(fitNode);
  const record = records[offerId];
  if (!record) return null;
  const node = nodeAt(fitNode.graph, record);
  const out = { record, restored: [], byHand: [], missed: [] };
  asOneChange(() => {
    for (const c of record.changes || []) {
      const w = node && sameNodeId(node.id, record.nodeId) ? widgetNamed(node, c.name) : null;
      if (!w) out.missed.push(c);
      else if (!same(w.value, c.after)) out.byHand.push({ ...c, now: w.value });
      else {
        setWidget(node, w, c.before);
        out.restored.push(c);
      }
    }
    const rest = { ...records };
    delete rest[offerId];
    keepRecords(fitNode, rest);
  });
  return out;
}

/** "Empty Latent Image: width 1024 → 896, height 1024 → 896" */
export function describeChange(record, reverse = false) {
  const parts = record.changes.map((c) => `${c.name} ${reverse ? c.after : c.before} → ${reverse ? c.before : c.after}`);
  return `${record.nodeTitle}: ${parts.join(", ")}`;
}
