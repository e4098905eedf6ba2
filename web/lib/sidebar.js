// @ts-check
// Sections of GPU Garden's "GPU memory" sidebar tab. Any feature file adds its own part of the tab:
//
//   import { registerSidebarSection } from "./lib/sidebar.js";
//   registerSidebarSection("recorder", (container) => { ...fill container...; return () => {/* cleanup */}; },
//                          { order: 60 });
//
// render(container) runs each time the tab is opened, with a fresh, empty <section> element; it may
// return a cleanup function, called when the tab closes. Sections are shown by `order` (devices 0,
// health 20, default 100), then by registration. A section that throws is replaced by a one-line
// error and logged once; the others still render. No ComfyUI imports: the tab itself is registered
// by web/sidebar_tab.js, which calls mountSections()/unmountSections().

/** The tab's id (its toggle command is Workspace.ToggleSidebarTab.<id>). */
export const SIDEBAR_TAB_ID = "gpu-garden-memory";

/** @typedef {(container: HTMLElement) => (void | (() => void))} SectionRender */
/** @typedef {{ id: string, render: SectionRender, order: number, seq: number }} Section */

/** @type {Section[]} */
const sections = [];
/** @type {{ container: HTMLElement, cleanups: Array<() => void> } | null} */
let mounted = null;
let seq = 0;

/**
 * Add a section to the GPU memory sidebar tab (shown the next time the tab renders, or now if open).
 * @param {string} id unique, e.g. "recorder"
 * @param {SectionRender} render
 * @param {{ order?: number }} [opts]
 */
export function registerSidebarSection(id, render, { order = 100 } = {}) {
  if (typeof id !== "string" || !id) throw new Error("registerSidebarSection: id must be a non-empty string");
  if (typeof render !== "function") throw new Error(`registerSidebarSection(${id}): render must be a function`);
  if (sections.some((s) => s.id === id)) throw new Error(`registerSidebarSection: "${id}" is already registered`);
  sections.push({ id, render, order, seq: seq++ });
  sections.sort((a, b) => a.order - b.order || a.seq - b.seq);
  if (mounted) mountSections(mounted.container);
}

/** The registered section ids, in display order (for tests and debugging). */
export function sidebarSectionIds() {
  return sections.map((s) => s.id);
}

/** Render every section into `container` (called by the tab's render). */
export function mountSections(container) {
  unmountSections();
  /** @type {Array<() => void>} */
  const cleanups = [];
  const parts = sections.map((s) => {
    const box = document.createElement("section");
    box.className = "gg-side-section";
    box.dataset.ggSection = s.id;
    try {
      const cleanup = s.render(box);
      if (typeof cleanup === "function") cleanups.push(cleanup);
    } catch (err) {
      console.error(`[GPU Garden] sidebar section "${s.id}" failed`, err);
      box.replaceChildren(document.createTextNode(`${s.id}: could not render (see the browser console)`));
    }
    return box;
  });
  container.replaceChildren(...parts);
  mounted = { container, cleanups };
}

/** Run the sections' cleanups (called by the tab's destroy). */
export function unmountSections() {
  if (!mounted) return;
  for (const fn of mounted.cleanups) {
    try {
      fn();
    } catch (err) {
      console.error("[GPU Garden] sidebar section cleanup failed", err);
    }
  }
  mounted = null;
}
