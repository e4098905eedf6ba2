// @ts-check
// VRAM Budget: a live stacked bar per device on the node's face (a DOM widget that never serializes,
// so it shows in classic and Nodes 2.0 modes), a compact meter over the canvas for graphs without the
// node, and a "GPU memory" sidebar tab with the full breakdown.
//
// Data: the server pushes the websocket event "gpu_garden.budget" (a probe snapshot) about once a
// second while a page is connected. Refresh rate: the setting GPUGarden.Meter.IntervalMs is sent to
// POST /gpu_garden/budget/interval (the server pushes at the fastest rate any open page asked for) and
// this page also renders at most once per interval.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";
import { createBar, deviceLabel, el, ensureStyles, exposeForTests, fmtBytes, fmtGiB, fmtTime, freeLevel, LEVEL_TEXT, modelLabel } from "./lib/format.js";
import { clientId, getSetting, showSidebarTab } from "./lib/frontend.js";
import { canvasArea, canvasControlsRect, canvasElement, overNode, watchFace } from "./lib/graph_adapter.js";
import { keepOnScreen } from "./lib/node_face.js";
import { onOverlayChange, overlayRects } from "./lib/overlays.js";
import { registerSidebarSection, SIDEBAR_TAB_ID } from "./lib/sidebar.js";

const NODE = "GPUGardenVRAMBudget";
const EVENT = "gpu_garden.budget";
const SET_ENABLED = "GPUGarden.Meter.Enabled";
const SET_INTERVAL = "GPUGarden.Meter.IntervalMs";

const state = { latest: null, views: new Set(), lastRender: 0, timer: null, intervalMs: 1000, received: 0, paused: false };
// Debug/test handle: `paused` ignores pushes; show(snapshot) renders one now (e.g. a saved snapshot).
state.show = (snap) => {
  state.latest = snap;
  renderAll();
};
exposeForTests({ budget: state });

// Registered when this module is imported: ComfyUI opens its websocket (api.init) after importing the
// extensions but before their setup() hooks run, and drops custom events nobody listens for yet.
api.addEventListener(EVENT, (e) => {
  state.received += 1;
  accept(e.detail);
});

function accept(snap) {
  if (!snap || !Array.isArray(snap.devices) || state.paused) return;
  state.latest = snap;
  const wait = state.intervalMs - (performance.now() - state.lastRender);
  if (wait <= 20) return renderAll();
  if (!state.timer) state.timer = setTimeout(renderAll, wait);
}

function renderAll() {
  clearTimeout(state.timer);
  state.timer = null;
  state.lastRender = performance.now();
  for (const view of state.views) {
    try {
      view.update(state.latest);
    } catch (err) {
      console.error("[GPU Garden] budget view failed", err);
    }
  }
}

async function fetchNow() {
  try {
    const r = await api.fetchApi("/gpu_garden/budget");
    if (r.ok) accept(await r.json());
  } catch (err) {
    console.warn("[GPU Garden] budget unavailable", err);
  }
}

function applyInterval(ms) {
  ms = Math.max(250, Math.min(60000, Number(ms) || 1000));
  state.intervalMs = ms;
  const id = clientId();
  state.intervalPending = !id; // sent again once the socket has told us our id
  api.fetchApi("/gpu_garden/budget/interval", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_id: id ?? "", ms }),
  }).catch((err) => console.warn("[GPU Garden] could not send the meter interval", err));
}

const CSS = `
.gg-budget{box-sizing:border-box;width:100%;padding:4px 2px 2px;font:11px/1.35 var(--comfy-font, Inter, system-ui, sans-serif);
  color:var(--input-text, #ddd);display:flex;flex-direction:column;gap:8px;overflow:hidden}
.gg-dev-head{display:flex;justify-content:space-between;align-items:baseline;gap:8px;margin-bottom:4px}
.gg-dev-name{font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;min-width:0}
.gg-dev-name small{font-weight:400;opacity:.6;margin-left:4px}
.gg-dev-free{font-weight:700;font-variant-numeric:tabular-nums;white-space:nowrap}
.gg-dev-free small{font-weight:400}
.gg-budget-foot{display:flex;justify-content:space-between;gap:8px;font-size:10px;opacity:.65;white-space:nowrap}
.gg-budget-foot .gg-live::before{content:"";display:inline-block;width:6px;height:6px;border-radius:50%;background:#3fb950;margin-right:4px;vertical-align:1px}
.gg-budget-foot .gg-live.gg-stale::before{background:#6e7681}
.gg-note{font-size:10px;opacity:.6;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.gg-budget-empty{opacity:.6;font-style:italic}
.gg-meter{position:fixed;z-index:900;display:flex;gap:14px;align-items:center;padding:5px 12px;border-radius:8px;cursor:pointer;
  background:var(--comfy-menu-bg, #202020);border:1px solid var(--border-color, #4e4e4e);color:var(--fg-color, #ddd);
  font:11px/1.3 var(--comfy-font, Inter, system-ui, sans-serif);box-shadow:0 2px 8px rgba(0,0,0,.35);user-select:none;transition:opacity .15s}
.gg-meter.gg-meter-under{pointer-events:none;background:color-mix(in srgb, var(--comfy-menu-bg, #202020) 45%, transparent);
  border-color:transparent;box-shadow:none}
.gg-meter.gg-meter-under .gg-bar{opacity:.35}
.gg-meter.gg-meter-yield{visibility:hidden}
.gg-meter[hidden]{display:none}
.gg-meter-dev{display:flex;align-items:center;gap:7px;white-space:nowrap}
.gg-meter-dev .gg-bar{width:120px;height:9px}
.gg-meter-dev b{font-variant-numeric:tabular-nums}
.gg-meter-dev span{opacity:.75}
`;

/** One device: name, free headline, stacked bar with legend, notes. */
function deviceView({ notes = false } = {}) {
  const root = /** @type {any} */ (el("div", "gg-dev"));
  const head = el("div", "gg-dev-head");
  const name = el("div", "gg-dev-name");
  const free = el("div", "gg-dev-free");
  head.append(name, free);
  const bar = createBar({ legend: true });
  const models = el("ul");
  const noteBox = el("div");
  root.append(head, bar);
  if (notes) root.append(models, noteBox);
  root.update = (dev) => {
    const cpu = dev.backend === "cpu";
    const small = el("small", null, cpu ? (dev.notes || []).some((n) => n.startsWith("no GPU")) ? "no GPU" : "" : dev.backend);
    name.replaceChildren(document.createTextNode(cpu ? "Host RAM" : `${deviceLabel(dev)} · ${dev.name}`), small);
    name.title = `${dev.name} (${dev.device || dev.backend})`;
    free.style.color = LEVEL_TEXT[freeLevel(dev)];
    free.replaceChildren(document.createTextNode(`${fmtGiB(dev.free, 1)} `),
      el("small", null, `/ ${fmtGiB(dev.total, 1)} GiB free`));
    bar.update(dev);
    if (notes) {
      models.replaceChildren(...(dev.models || []).map((m) =>
        el("li", null, `${modelLabel(m)}: ${fmtBytes(m.bytes, 2)}${m.partial ? " (partially loaded)" : ""}`)));
      noteBox.replaceChildren(...(dev.notes || []).map((n) => el("div", "gg-note", n, { whiteSpace: "normal" })));
    }
  };
  return root;
}

/** A list of device views that follows the snapshot's device list. */
function devicesView(container, opts) {
  const views = [];
  return (snap) => {
    const devs = snap.devices;
    while (views.length < devs.length) {
      const v = deviceView(opts);
      views.push(v);
      container.append(v);
    }
    while (views.length > devs.length) views.pop().remove();
    devs.forEach((d, i) => views[i].update(d));
  };
}

// -- the node -------------------------------------------------------------------------------------
function nodeHeight(nDevices) {
  return 30 + 78 * Math.max(1, nDevices);
}

function attachToNode(node) {
  ensureStyles("gpu-garden-budget-css", CSS);
  const root = el("div", "gg-budget");
  root.dataset.testid = "gpu-garden-budget";
  const list = el("div");
  list.style.cssText = "display:flex;flex-direction:column;gap:10px";
  const empty = el("div", "gg-budget-empty", "waiting for the first reading…");
  const foot = el("div", "gg-budget-foot");
  const live = el("span", "gg-live", "live —");
  const recorded = el("span", "gg-recorded", "not run yet");
  foot.append(live, recorded);
  root.append(empty, list, foot);
  const fill = devicesView(list);
  let nDevices = 0;

  // natural height of the content (the legend wraps on narrow nodes); the widget grows the node to fit
  const contentHeight = () => [...root.children].reduce((h, c) => h + /** @type {HTMLElement} */ (c).offsetHeight, 0) + 8 * (root.children.length - 1) + 6;
  let fitted = 0;
  const widget = node.addDOMWidget("gpu_garden_budget", "gpu_garden_budget", root, {
    serialize: false,
    hideOnZoom: false,
    getValue: () => "",
    setValue: () => {},
    getMinHeight: () => Math.max(nodeHeight(nDevices), fitted + 20), // + the widget margins
  });
  widget.serialize = false;

  const view = {
    update(snap) {
      if (!snap) return;
      if (!root.isConnected) watchFace(node, root); // a node re-created by Ctrl+Z in Nodes 2.0: waits for the DOM, no polling
      empty.remove();
      fill(snap);
      live.textContent = `live ${fmtTime(snap.sampled_at)}`;
      live.classList.toggle("gg-stale", Date.now() / 1000 - snap.sampled_at > Math.max(5, (3 * state.intervalMs) / 1000));
      nDevices = snap.devices.length;
      const need = contentHeight();
      if (root.isConnected && need > 0 && need !== fitted) {
        fitted = need;
        const size = node.computeSize();
        if (size[1] > node.size[1]) node.setSize([node.size[0], size[1]]);
      }
      node.setDirtyCanvas(true, false);
    },
  };
  state.views.add(view);
  node.__ggBudget = { view, root, recorded };

  const onRemoved = node.onRemoved;
  node.onRemoved = function () {
    state.views.delete(view);
    return onRemoved?.apply(this, arguments);
  };
  if (node.size[0] < 360) node.setSize([360, node.size[1]]);
  keepOnScreen(node, root);
  if (state.latest) view.update(state.latest);
  else fetchNow();
}

function showRecorded(node, snap) {
  const ui = node.__ggBudget;
  if (!ui || !snap) return;
  watchFace(node, ui.root);
  const parts = snap.devices.map((d) => `${deviceLabel(d)} ${fmtGiB(d.free, 1)} GiB free`);
  ui.recorded.textContent = `at run ${fmtTime(snap.sampled_at)}: ${parts.join(", ")}`;
  ui.recorded.title = "what this node recorded when it last ran (its budget output)";
}

// -- the meter over the canvas --------------------------------------------------------------------
const INFO_CLEAR = 130; // px from the canvas's left edge: the canvas info text (T: I: N: V: FPS) sits in that corner
function createMeter() {
  ensureStyles("gpu-garden-budget-css", CSS);
  const meter = el("div", "gg-meter");
  meter.dataset.testid = "gpu-garden-meter";
  meter.title = "GPU Garden: memory by owner (click for details)";
  document.body.append(meter);
  const items = [];

  // Docked in the first free one of two docks (by the graph's layout: overNode, no DOM query per node): the canvas's
  // bottom-right corner just left of the frontend's own canvas controls (zoom, fit, minimap toggle: 1.35 and 1.58
  // alike), then its bottom-left corner past the canvas info text (on 1.58.1's default graph a node reaches the
  // first). Over a node in both (the user panned one there), it stays in the first, fades and lets the click
  // through to the node (gg-meter-under): its background and bar fade so the node shows through, its text does not
  // (walk52: the whole meter at 30 % read 1.6:1 over a light-palette node; now 4.5:1 or better).
  const place = () => {
    const canvas = canvasElement();
    if (!canvas) return;
    const r = canvas.getBoundingClientRect();
    if (!r.width) return;
    const controls = canvasControlsRect();
    const right = controls && controls.left > r.left + r.width / 2 ? controls.left - 10 : r.right - 12;
    const bottom = Math.min(controls ? controls.bottom : r.bottom - 12, window.innerHeight - 8);
    const w = meter.offsetWidth, h = meter.offsetHeight;
    const box = (d) => ({ left: d.left, top: d.top, right: d.left + w, bottom: d.top + h });
    const first = { name: "bottom-right", left: Math.max(8, right - w), top: bottom - h };
    const left = { name: "bottom-left", left: Math.max(8, r.left + INFO_CLEAR, canvasArea({ quiet: true }).left + 12), top: first.top };
    // the pack's own panels (the OOM panel): a dock under one is not used at all; with both under one the meter
    // yields (hidden) until the panel moves or closes, so neither covers the other's figures (fixW2 walk)
    const panels = overlayRects();
    const clear = (d) => !panels.some((p) => d.left < p.right && p.left < d.left + w && d.top < p.bottom && p.top < d.top + h);
    const docks = [first, ...(left.left + w <= right ? [left] : [])].filter(clear);  // left: past a side panel, short of the controls
    const free = docks.find((d) => !overNode(box(d))) || null;
    const dock = free || docks[0];
    meter.classList.toggle("gg-meter-yield", !dock);
    meter.dataset.dock = dock ? dock.name : "none";
    if (!dock) return;
    meter.style.left = `${dock.left}px`;
    meter.style.top = `${dock.top}px`;
    meter.classList.toggle("gg-meter-under", !free);
  };
  let queued = false;
  const placeSoon = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; if (!meter.hidden) place(); });
  };
  window.addEventListener("resize", place);
  onOverlayChange(placeSoon);
  // panning, zooming and dragging move nodes under the meter
  for (const type of ["pointerup", "wheel"]) window.addEventListener(type, placeSoon, { passive: true });
  meter.addEventListener("click", () => showSidebarTab(SIDEBAR_TAB_ID, { toggle: true }));

  const view = {
    update(snap) {
      if (meter.hidden || !snap) return;
      while (items.length < snap.devices.length) {
        const row = /** @type {any} */ (el("div", "gg-meter-dev"));
        const label = el("span");
        const bar = createBar({ legend: false });
        const free = el("b");
        row.append(label, bar, free);
        row.update = (d) => {
          label.textContent = deviceLabel(d);
          bar.update(d);
          free.textContent = `${fmtGiB(d.free, 1)} / ${fmtGiB(d.total, 1)} GiB free`;
          free.style.color = LEVEL_TEXT[freeLevel(d)];
          row.title = `${d.name}: ${fmtBytes(d.free, 2)} free of ${fmtBytes(d.total, 2)}`;
        };
        items.push(row);
        meter.append(row);
      }
      while (items.length > snap.devices.length) items.pop().remove();
      snap.devices.forEach((d, i) => items[i].update(d));
      meter.dataset.sampledAt = String(snap.sampled_at);
      place();
    },
  };
  return {
    view,
    setEnabled(on) {
      meter.hidden = !on;
      if (on) {
        state.views.add(view);
        if (state.latest) view.update(state.latest);
      } else state.views.delete(view);
    },
  };
}

// -- the sidebar tab's device section (the tab itself: sidebar_tab.js) ---------------------------
registerSidebarSection("devices", (container) => {
  ensureStyles("gpu-garden-budget-css", CSS);
  const title = el("h3", null, "GPU memory, by owner");
  const list = el("div", null, null, { display: "flex", flexDirection: "column", gap: "16px" });
  const foot = el("div", "gg-note");
  container.append(title, list, foot);
  const fill = devicesView(list, { notes: true });
  const view = {
    update(snap) {
      if (!container.isConnected) return;
      fill(snap);
      const ram = snap.host_ram || {};
      foot.textContent = `host RAM ${fmtBytes(ram.available)} available of ${fmtBytes(ram.total)} · ${fmtTime(snap.sampled_at)}`;
    },
  };
  state.views.add(view);
  if (state.latest) view.update(state.latest);
  return () => state.views.delete(view);
}, { order: 0 });

let meter = null;

app.registerExtension({
  name: "GPUGarden.Budget",
  settings: [
    {
      id: SET_ENABLED,
      category: ["GPU Garden", "Memory meter", "Show"],
      name: "Show the memory meter over the canvas",
      tooltip: "A compact bar per GPU in the canvas's bottom-right corner, beside the zoom controls, for graphs without a VRAM Budget node. Click it for details.",
      type: "boolean",
      defaultValue: true,
      onChange: (v) => meter?.setEnabled(v !== false),
    },
    {
      id: SET_INTERVAL,
      category: ["GPU Garden", "Memory meter", "Refresh"],
      name: "Memory refresh interval (ms)",
      tooltip: "How often the meter and VRAM Budget nodes update (250 ms to 60 s). Sent to the server, which samples only while a page is open.",
      type: "number",
      attrs: { min: 250, max: 60000, step: 250 },
      defaultValue: 1000,
      onChange: (v) => applyInterval(v),
    },
  ],
  async setup() {
    meter = createMeter();
    meter.setEnabled(getSetting(SET_ENABLED, true) !== false);
    applyInterval(getSetting(SET_INTERVAL, 1000));
    // the socket may reconnect under a new server; ask again for our rate
    api.addEventListener("reconnected", () => applyInterval(state.intervalMs));
    api.addEventListener("status", () => {
      if (state.intervalPending && clientId()) applyInterval(state.intervalMs);
    });
    fetchNow();
  },
  async beforeRegisterNodeDef(nodeType, nodeData) {
    if (nodeData?.name !== NODE) return;
    const onNodeCreated = nodeType.prototype.onNodeCreated;
    nodeType.prototype.onNodeCreated = function () {
      const r = onNodeCreated?.apply(this, arguments);
      attachToNode(this);
      return r;
    };
    const onExecuted = nodeType.prototype.onExecuted;
    nodeType.prototype.onExecuted = function (output) {
      onExecuted?.apply(this, arguments);
      const snap = output?.gpu_garden_budget?.[0];
      if (snap) {
        showRecorded(this, snap);
        accept(snap);
      }
    };
  },
});
