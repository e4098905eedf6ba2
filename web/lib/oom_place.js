// @ts-check
// Where the OOM panel goes: beside the failing node (right, else left), never over the frontend's own
// error UI (1.35: the modal; 1.58: the "Generation failed" card and the right side panel), never over an open
// sidebar, docked at the canvas's right edge (left of a shown minimap) when the node is not on screen or has no
// room beside it. Pure geometry over rectangles from graph_adapter.js.
import { canvasArea, frontendErrorRects, minimapRect, nodeClientRect } from "./graph_adapter.js";

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
  const vh = window.innerHeight;
  // the graph's visible part: an open sidebar covers the canvas's left (or right) side, and a panel there would
  // point into the sidebar (ux20's walk on 1.58)
  const area = canvasArea();
  const minLeft = area.left + MARGIN;
  const maxRight = area.right - MARGIN;
  const avoid = frontendErrorRects();
  let r = node ? nodeClientRect(node) : null;
  if (r && (r.right < area.left + 24 || r.left > area.right - 24 || r.bottom < 24 || r.top > vh - 24)) r = null; // not on screen
  if (r) {
    const want = Math.max(48, Math.min(r.top, vh - ph - MARGIN));
    const arrow = (top) => Math.max(8, Math.min(ph - 22, r.top + 8 - top));
    /** @type {Array<[string, number]>} */
    const sides = [["gg-right", r.right + GAP], ["gg-left", r.left - pw - GAP]];
    const fitting = sides.filter(([, left]) => left >= minLeft && left + pw <= maxRight);
    // beside the node means overlapping its rows: keep the top above the node's bottom
    for (const [side, left] of fitting) {
      const top = clearTop(left, want, pw, ph, avoid, Math.min(r.bottom - 24, vh - 40));
      if (top !== null) return { left, top, side, arrowY: arrow(top) };
    }
    // the frontend's error card takes that height: still beside the node, below the card
    for (const [side, left] of fitting) {
      const top = clearTop(left, want, pw, ph, avoid, vh - 80);
      if (top !== null) return { left, top, side, arrowY: arrow(top) };
    }
  }
  // docked: right edge of the canvas area, below whatever of the frontend's error UI is there; left of a right
  // side panel. Also when no side of the node has room: a panel over the node, or over a sidebar, hides it.
  let left = maxRight - pw - 8;
  const panelRight = avoid.filter((a) => a.right >= area.right - 4 && a.bottom - a.top > vh * 0.6);
  if (panelRight.length) left = Math.min(...panelRight.map((a) => a.left)) - pw - 16;
  left = Math.max(minLeft, left);
  const dockTop = (x) => clearTop(x, DOCK_TOP, pw, ph, avoid, Math.max(DOCK_TOP, vh - ph - MARGIN)) ?? DOCK_TOP;
  let top = dockTop(left);
  // the minimap in the canvas's bottom-right corner (walk52: the docked panel, up to 640 px tall, covered its left
  // part): left of it where the canvas has room, so both show
  const map = minimapRect();
  if (map && overlaps({ left, top, right: left + pw, bottom: top + ph }, map) && map.left - GAP - pw >= minLeft) {
    left = Math.min(left, map.left - GAP - pw);
    top = dockTop(left);
  }
  return { left, top, side: "gg-docked", arrowY: null };
}
