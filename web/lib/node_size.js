// @ts-check
// The Footprint Estimate node's own size (width/height/frames/batch widgets), as the workflow route takes it when the
// graph has no latent node. No ComfyUI imports.

/** A node input of this name that a link feeds: the node would use the linked value, not its widget's. Asked through
 *  LGraphNode.isInputConnected where the node has it (1.35 and 1.58; 1.58 deprecates reading input.link). */
function linked(node, name) {
  const slot = (node?.inputs || []).findIndex((i) => (i?.widget?.name ?? i?.name) === name);
  if (slot < 0) return false;
  if (typeof node.isInputConnected === "function") return !!node.isInputConnected(slot);
  return node.inputs[slot]?.link != null; // plain data (a serialized node)
}

/**
 * The node's size widgets that hold a whole number and are not fed by a link (a linked widget keeps its last value,
 * which the node would not use): the route's fallback size, or {} without both width and height.
 * @param {any} node
 */
export function nodeSize(node) {
  const out = {};
  for (const name of ["width", "height", "frames", "batch"]) {
    if (linked(node, name)) continue;
    const v = Number((node?.widgets || []).find((x) => x.name === name)?.value);
    if (Number.isInteger(v) && v > 0) out[name] = v;
  }
  return "width" in out && "height" in out ? out : {};
}
