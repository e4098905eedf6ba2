// @ts-check
// Where the OOM panel goes: beside the failing node (right, else left), never over the frontend's own
// error UI (1.35: the modal; 1.58: the "Generation failed" card and the right side panel), docked at the
// right edge when the node is not on screen. Pure geometry over rectangles from graph_adapter.js.
import { frontendErrorRects, nodeClientRect } from "./graph_adapter.js";

const GAP = 14;
const MARGIN = 8;
const DOCK_TOP = 132; // below the action bar and the queue summary

/** @typedef {{ left: number, top: number, right: number, bottom: number }} Rect */

const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** The first top >= `top` where a box of `w`x`h` at `left` clears every rect in `avoid` (or null). */
function clearTop(left, top, w, h, avoid, maxTop) {
  for (let guard = 0; guard < 8; guard++) {
    const box = { left, top, right: left + w, bottom: top + h };
    const hit = avoid.find((r) => overlaps(box, r));
    if (!hit) return top;
    top = hit.bottom + MARGIN;
    if (top > maxTop) return null;
  }
  return null;
}

/**
 * @param {any} node the node to sit beside, or null (docked)
 * @param {{ width: number, height: number }} panel
 * @returns {{ left: number, top: number, side: string, arrowY: number | null }}
 */
export function placePanel(node, panel) {
  const pw = panel.width;
  const ph = panel.height;
  const vw = window.innerWidth;
  const vh = window.innerHeight;
  const avoid = frontendErrorRects();
  const r = node ? nodeClientRect(node) : null;
  if (r) {
    const want = Math.max(48, Math.min(r.top, vh - ph - MARGIN));
    /** @type {Array<[string, number]>} */
    const sides = [["gg-right", r.right + GAP], ["gg-left", r.left - pw - GAP]];
    const fits = (left) => left >= MARGIN && left + pw <= vw - MARGIN;
    const ordered = fits(sides[0][1]) || !fits(sides[1][1]) ? sides : [sides[1], sides[0]];
    for (const [side, rawLeft] of ordered) {
      const left = Math.max(MARGIN, Math.min(rawLeft, vw - pw - MARGIN));
      // beside the node means overlapping its rows: keep the top above the node's bottom
      const top = clearTop(left, want, pw, ph, avoid, Math.min(r.bottom - 24, vh - 40));
      if (top !== null) return { left, top, side, arrowY: Math.max(8, Math.min(ph - 22, r.top + 8 - top)) };
    }
    const [side, rawLeft] = ordered[0];
    const left = Math.max(MARGIN, Math.min(rawLeft, vw - pw - MARGIN));
    return { left, top: want, side, arrowY: Math.max(8, Math.min(ph - 22, r.top + 8 - want)) };
  }
  // docked: right edge, below whatever of the frontend's error UI is there; left of a right side panel
  let left = vw - pw - 16;
  const panelRight = avoid.filter((a) => a.right >= vw - 4 && a.bottom - a.top > vh * 0.6);
  if (panelRight.length) left = Math.min(...panelRight.map((a) => a.left)) - pw - 16;
  left = Math.max(MARGIN, left);
  const top = clearTop(left, DOCK_TOP, pw, ph, avoid, Math.max(DOCK_TOP, vh - ph - MARGIN)) ?? DOCK_TOP;
  return { left, top, side: "gg-docked", arrowY: null };
}
