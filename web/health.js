// @ts-check
// The pack's health in the GPU memory sidebar tab: GET /gpu_garden/health (nodes/health.py) lists each
// feature as installed / working / its last error. Green = installed and working; amber = installed but
// its last use failed (or it recovered from an error); red = not installed; grey "off" = installed and
// working but switched off by its setting (`enabled: false`, an automatic mode), with the server's note.
// Errors and notes are shown as text. Each row is named by the server's `title` (nodes/health.py TITLES, the one table
// of feature names), with the id as secondary detail; a feature without a title (a module that failed to load) shows
// its id alone.
import { api } from "../../scripts/api.js";
import { el, ensureStyles } from "./lib/format.js";
import { registerSidebarSection } from "./lib/sidebar.js";
import { autoPlanPart } from "./lib/fit_auto.js";

const ROUTE = "/gpu_garden/health";
const CSS = `
.gg-health summary{cursor:pointer;font-weight:600;font-size:12px}
.gg-health ul{list-style:none;margin:6px 0 0;padding:0}
.gg-health li{display:flex;flex-direction:column;padding:2px 0}
.gg-health li>span{display:flex;align-items:center;gap:6px;font-size:11.5px}
.gg-health .gg-health-id{font-family:ui-monospace,Menlo,monospace;font-size:10px;opacity:.55;padding-left:14px}
.gg-health i{display:inline-block;width:8px;height:8px;border-radius:50%;flex:none}
.gg-health li[data-state=ok] i{background:#3fb950}.gg-health li[data-state=warn] i{background:#d29922}
.gg-health li[data-state=down] i{background:#f85149}.gg-health li[data-state=off] i{background:#8b949e}
.gg-health .gg-health-err{font-size:10.5px;opacity:.75;padding-left:14px;overflow-wrap:anywhere}
.gg-health .gg-note{white-space:normal}
.gg-health .gg-health-off{font-family:inherit;font-size:10px;opacity:.7;border:1px solid currentColor;border-radius:3px;padding:0 3px}
`;

/** ok / off / warn / down for one feature entry. */
export function featureState(f) {
  if (!f || !f.installed) return "down";
  if (!f.working || f.last_error) return "warn";
  return f.enabled === false ? "off" : "ok";
}

/** Fill `box` from the health JSON. */
export function renderHealth(box, health) {
  const features = Object.entries(health.features || {}).sort(([a], [b]) => a.localeCompare(b));
  const counts = { ok: 0, off: 0, warn: 0, down: 0 };
  const list = el("ul");
  for (const [name, f] of features) {
    const state = featureState(f);
    counts[state] += 1;
    const li = el("li");
    li.dataset.state = state;
    li.dataset.feature = name;
    const row = el("span");
    const title = typeof f.title === "string" && f.title ? f.title : null;
    row.append(el("i"), el("span", "gg-health-name", title || name));
    row.title = `installed: ${!!f.installed}, working: ${!!f.working}` + (f.enabled === false ? ", off" : "");
    if (state === "off") row.append(el("span", "gg-health-off", "off"));
    li.append(row);
    if (title) li.append(el("div", "gg-health-id", name)); // the id, for logs and GET /gpu_garden/health
    if (f.last_error) li.append(el("div", "gg-health-err", f.last_error));
    if (state === "off" && f.note) li.append(el("div", "gg-health-err", f.note));
    if (name === "fit_guard.prepare_sampling") li.append(autoPlanPart()); // Fit to Card automatic mode's last plan
    list.append(li);
  }
  const details = el("details");
  details.open = counts.warn + counts.down > 0;
  const summary = counts.warn + counts.down
    ? `Health: ${counts.down} not installed, ${counts.warn} with errors, of ${features.length}`
    : counts.off ? `Health: ${counts.ok} working, ${counts.off} off by setting, of ${features.length}`
      : `Health: all ${features.length} features working`;
  details.append(el("summary", null, summary), list);
  const versions = `GPU Garden ${health.pack_version ?? "?"} · ComfyUI ${health.comfyui_version ?? "unknown"}`;
  box.replaceChildren(details, el("div", "gg-note", versions));
}

registerSidebarSection("health", (container) => {
  ensureStyles("gpu-garden-health-css", CSS);
  const box = el("div", "gg-health");
  box.dataset.testid = "gpu-garden-health";
  box.append(el("div", "gg-note", "Health: checking…"));
  container.append(box);
  let alive = true;
  api.fetchApi(ROUTE)
    .then(async (res) => {
      if (!res.ok) throw new Error(`${ROUTE} answered ${res.status}`);
      const health = await res.json();
      if (alive) renderHealth(box, health);
    })
    .catch((err) => {
      if (alive) box.replaceChildren(el("div", "gg-note", `Health: unavailable (${err?.message || err})`));
    });
  return () => { alive = false; };
}, { order: 20 });
