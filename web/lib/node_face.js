// @ts-check
// The face of a GPU Garden result node (Footprint Estimate: web/estimate.js, Fit to Card: web/fit_to_card.js, Unload
// Text Encoders: web/unload.js):
// a monospace box on the node, added as a DOM widget that never serializes, and the registration that hooks
// the node type's onNodeCreated / onConfigure / onExecuted after the frontend's own. What each node draws
// and how it sizes itself stay in its own module; only the look and the wiring they share are here.
import { app } from "../../../scripts/app.js";
import { el } from "./format.js";
import { markFace, watchFace } from "./graph_adapter.js";

/** The look every face shares; a node adds its own layout keys (overflow, whiteSpace, position). */
const FACE_STYLE = {
  font: "11px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace", padding: "5px 7px",
  borderRadius: "6px", boxSizing: "border-box", background: "var(--comfy-input-bg, rgba(0,0,0,.25))",
  color: "var(--input-text, #ddd)",
};

/**
 * @typedef {object} FaceOptions
 * @property {string} name the DOM widget's name (and type)
 * @property {string} testid the face's data-testid
 * @property {number} width the node is widened to this when narrower
 * @property {(root: HTMLDivElement) => void} idle draws the face before the node has run
 * @property {() => number} getMinHeight the widget's least height (the node grows to it)
 * @property {() => number} [getMaxHeight]
 * @property {string | null} [cls] the face's class
 * @property {Partial<CSSStyleDeclaration>} [style] layout keys added to the shared look
 */

/**
 * Give `node` (in its onNodeCreated) its face: a div with the shared look plus `style`, as a DOM widget that
 * never serializes; `idle` draws it, then the node is widened to `width`. Returns the face's root.
 * @param {any} node
 * @param {FaceOptions} options
 * @returns {HTMLDivElement}
 */
export function addFace(node, { name, testid, width, idle, cls = null, style = null, ...heights }) {
  const root = el("div", cls, null, { ...FACE_STYLE, ...style });
  root.dataset.testid = testid;
  const widget = node.addDOMWidget(name, name, root, { serialize: false, hideOnZoom: false, ...heights });
  widget.serialize = false;
  idle(root);
  if (node.size && node.size[0] < width) node.setSize([width, node.size[1]]);
  (node.__ggFaces ||= []).push(root);
  keepOnScreen(node, root);
  return root;
}

/**
 * After the frontend has drawn a just-created node, make sure `root` (its face) is what is on screen: a node
 * re-created by Ctrl+Z / Ctrl+Y in Nodes 2.0 is not given its own face otherwise (graph_adapter.remountFace). A node
 * not drawn yet is watched (graph_adapter.watchFace: the canvas's DOM changing, no timer) until it is, or is removed.
 * @param {any} node
 * @param {HTMLElement} root
 */
export function keepOnScreen(node, root) {
  markFace(root);
  requestAnimationFrame(() => watchFace(node, root));
}

/** Every face of `node` on screen before it is drawn into (see keepOnScreen). @param {any} node */
function remountFaces(node) {
  for (const root of node.__ggFaces || []) watchFace(node, root);
}

/**
 * Run `fn(node, ...args)` after the prototype's own `method` (whatever the frontend or another extension put
 * there first), keeping its return value.
 * @param {any} proto
 * @param {string} method
 * @param {((node: any, ...args: any[]) => void) | undefined} fn
 */
function after(proto, method, fn) {
  if (!fn) return;
  const own = proto[method];
  proto[method] = function (...args) {
    const r = own?.apply(this, args);
    fn(this, ...args);
    return r;
  };
}

/** node.properties key of the height the pack grew the node to for a result (saved with the workflow, as Fit to
 *  Card keeps its Undo records): a node loaded at that height was ours to shrink; at any other the user set it. */
const GROWN_PROP = "gg_grown_to";

/**
 * Size `node` to `size` for what its face shows (a result, or the idle text). A height this changes is recorded
 * (GROWN_PROP) as the pack's, so a load or Ctrl+Z that brings it back without the result shrinks it again
 * (shrinkToIdleFace); a height it leaves as it was (the user's, taller than the face needs) stays unrecorded.
 * @param {any} node
 * @param {[number, number]} size
 */
export function setFaceSize(node, size) {
  const before = node.size?.[1];
  node.__ggSizing = true;  // our own resize: not the user's (forgetHandSet)
  try {
    node.setSize(size);
  } finally {
    node.__ggSizing = false;
  }
  const now = node.size?.[1];
  if (node.properties && typeof now === "number" && !(Math.abs(now - before) < 1)) node.properties[GROWN_PROP] = now;
}

/**
 * Size `node` for the newest result its face shows: `height` is what the face needs now, `width` the least width.
 * The one rule of every face node: a height the pack grew the node to (GROWN_PROP) follows the newest result, taller
 * or shorter; a height the user set by hand is kept unless the face needs more (then the new height is ours).
 * walk52 left-open 1: Unload Text Encoders kept max(size, needed), so a shorter report left an empty box.
 * @param {any} node
 * @param {number} height
 * @param {number} width
 */
export function followFace(node, height, width) {
  if (!node.size || !height) return;
  const grown = node.properties?.[GROWN_PROP];
  const ours = typeof grown === "number" && Math.abs(node.size[1] - grown) < 1;
  const keep = height < node.size[1] && !ours;  // the user's height, room to spare
  setFaceSize(node, [Math.max(node.size[0], width), keep ? node.size[1] : height]);
}

/**
 * The user resized `node` (onResize, where the frontend calls it for a drag of the corner): its height is theirs
 * now, so the record of the height we grew it to goes. Our own setSize (setFaceSize, shrinkToIdleFace) and a resize
 * to the recorded height (a load restoring it) leave the record.
 * @param {any} node
 * @param {number[]} [size]
 */
function forgetHandSet(node, size) {
  const grown = node.properties?.[GROWN_PROP];
  if (node.__ggSizing || typeof grown !== "number" || !size || Math.abs(size[1] - grown) < 1) return;
  delete node.properties[GROWN_PROP];
}

/**
 * A workflow loaded, or Ctrl+Z restored, the height a run grew `node` to, but not the run's face (faces never
 * serialize): the face is its idle text again, so the node shrinks to what its widgets need; the width is kept.
 * Nodes 2.0 stretches a face to fill its node (walk52: one idle line in a 231 px box). Only a height equal to the
 * one recorded when the pack grew the node (setFaceSize) shrinks: any other is the user's and is kept (fixU). A
 * workflow saved before the record existed has none, so it keeps its height: we cannot tell whose it was.
 * @param {any} node
 */
function shrinkToIdleFace(node) {
  const grown = node.properties?.[GROWN_PROP];
  const height = node.computeSize?.()[1];
  if (!height || typeof grown !== "number" || Math.abs(node.size?.[1] - grown) >= 1) return;
  delete node.properties[GROWN_PROP];
  if (node.size[1] <= height) return;
  node.__ggSizing = true;
  try {
    node.setSize([node.size[0], height]);
  } finally {
    node.__ggSizing = false;
  }
  node.setDirtyCanvas?.(true, true);
}

/**
 * @typedef {object} FaceNode
 * @property {string} extension the frontend extension's name
 * @property {string} node the node type (its V3 node_id)
 * @property {(node: any) => void} created after onNodeCreated: add the face (addFace)
 * @property {(node: any, output: any) => void} executed after onExecuted: draw what the node sent
 * @property {(node: any) => void} [configured] after onConfigure (a workflow loaded), once the node has shrunk to
 *   its idle face (shrinkToIdleFace)
 * @property {any[]} [settings] the extension's settings (ComfyUI's settings dialog)
 * @property {() => Promise<void> | void} [setup] the extension's setup hook
 */

/**
 * Register the frontend extension of one node type with a face.
 * @param {FaceNode} spec
 */
export function registerFaceNode({ extension, node, created, executed, configured, settings, setup }) {
  app.registerExtension({
    name: extension,
    ...(settings ? { settings } : {}),
    ...(setup ? { setup } : {}),
    async beforeRegisterNodeDef(nodeType, nodeData) {
      if (nodeData?.name !== node) return;
      after(nodeType.prototype, "onNodeCreated", created);
      after(nodeType.prototype, "onConfigure", (n) => {
        shrinkToIdleFace(n);
        configured?.(n);
      });
      after(nodeType.prototype, "onExecuted", (n, output) => {
        remountFaces(n);
        executed(n, output);
      });
      // feature-detected: a frontend that does not call onResize for a drag leaves the record, and the height the
      // user set differs from it anyway (shrinkToIdleFace compares)
      after(nodeType.prototype, "onResize", forgetHandSet);
    },
  });
}
