// @ts-check
// The pack's own panels over the canvas (the OOM panel), so the memory meter (web/budget.js) keeps clear of them: a
// panel says where it is now (setOverlay, null once closed); the meter asks for the rectangles when it docks and is
// told when one moves. No DOM query: the panel hands its own element. No ComfyUI imports.

/** @type {Map<string, HTMLElement>} */
const panels = new Map();
/** @type {Set<() => void>} */
const listeners = new Set();

/** The panel `name` is `root` now (shown, moved), or gone (null). */
export function setOverlay(name, root) {
  if (root) panels.set(name, root);
  else panels.delete(name);
  for (const fn of listeners) fn();
}

/** Call `fn` whenever a panel opens, moves or closes. */
export function onOverlayChange(fn) {
  listeners.add(fn);
}

/** The rectangles of the panels on screen now. */
export function overlayRects() {
  return [...panels.values()].filter((e) => e.isConnected && e.getClientRects().length).map((e) => e.getBoundingClientRect());
}
