// Flight recorder in the canvas: after a run, a badge on each node with its peak memory and time; in the
// "GPU memory" sidebar tab, a "Runs" section with a timeline of the run per device (a span per node),
// "Compare with the previous run", and "Copy memory report" (markdown or JSON, redacted unless the
// setting asks for the full report); a warning toast when the server's watchdog sees a node hang.
//
// Data: the websocket event "gpu_garden.recorder.run" (the finished run, sent to the page that queued
// it), GET /gpu_garden/runs, /gpu_garden/runs/{id}/compare, /gpu_garden/runs/{id}/report.md|json;
// "gpu_garden.recorder.watchdog" for the toast. Server text is always set as text, never as markup.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";
import { el, fmtBytes } from "./lib/format.js";
import { registerSidebarSection } from "./lib/sidebar.js";
import { axisShare, memoryAxis } from "./lib/timeline_axis.js";
import { renderMarkdown } from "./oom_markdown.js";

const EVENT_RUN = "gpu_garden.recorder.run";
const EVENT_WATCHDOG = "gpu_garden.recorder.watchdog";
const SET_ENABLED = "GPUGarden.Recorder.Enabled";
const SET_FULL = "GPUGarden.Recorder.FullReport";
const SET_BADGES = "GPUGarden.Recorder.Badges";
const DEVICE_COLORS = ["#4f8cff", "#2bb3a3", "#a371f7", "#d29922"];

const state = { runs: [], selected: null, compare: null, warnings: [], views: new Set(), badged: new Map(), copied: null };
window.__gpuGarden = Object.assign(window.__gpuGarden || {}, { recorder: state });

// Registered at import: the socket is open before setup() and drops events nobody listens for yet.
api.addEventListener(EVENT_RUN, (e) => acceptRun(e.detail, true));
api.addEventListener(EVENT_WATCHDOG, (e) => onWatchdog(e.detail));

const SVG = "http://www.w3.org/2000/svg";
const svg = (tag, attrs) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
};

function setting(id, fallback) {
  try {
    const v = app.extensionManager?.setting?.get(id);
    return v === undefined || v === null ? fallback : v;
  } catch {
    return fallback;
  }
}

const fmtS = (s) => (s >= 10 ? `${s.toFixed(0)} s` : s >= 1 ? `${s.toFixed(1)} s` : `${Math.round(s * 1000)} ms`);

/** The node's peak on its run's compute device (the GPU), else host RAM. */
export function nodePeak(run, node) {
  const dev = (run.devices || []).find((d) => d.device !== "cpu")?.device;
  const peak = node.peak || {};
  if (dev && peak[dev] !== undefined) return { device: dev, bytes: peak[dev] };
  return { device: "cpu", bytes: peak.cpu };
}

// -- badges ---------------------------------------------------------------------------------------
function graphNode(id) {
  const g = app.rootGraph ?? app.graph;
  if (!g || id === undefined || id === null || String(id).includes(":")) return null;
  return g.getNodeById(Number(id)) ?? g.getNodeById(id);
}

const vueNodesMode = () => !!window.LiteGraph?.vueNodesMode;

function clearBadges() {
  for (const [node, fn] of state.badged) {
    const i = node.badges?.indexOf(fn) ?? -1;
    if (i >= 0) node.badges.splice(i, 1);
  }
  state.badged.clear();
  document.querySelectorAll(".gg-rec-badge").forEach((e) => e.remove());
}

/** Nodes 2.0 (Vue) mode reads node.badges only when a node re-renders, so the same text also goes on the
 *  node's element as a small label (classic mode draws node.badges on the canvas at once). */
function showDomBadges(tries = 10) {
  if (!vueNodesMode()) return;
  let missing = 0;
  for (const [node, fn] of state.badged) {
    const host = document.querySelector(`.lg-node[data-node-id="${CSS.escape(String(node.id))}"]`);
    if (!host) {
      missing += 1;
      continue;
    }
    let b = host.querySelector(":scope > .gg-rec-badge");
    if (!b) {
      b = el("div", "gg-rec-badge");
      b.dataset.testid = "gpu-garden-badge";
      host.append(b);
    }
    b.textContent = fn.ggRecorder;
  }
  if (missing && tries > 0) setTimeout(() => showDomBadges(tries - 1), 300);
}

function showBadges(run) {
  clearBadges();
  if (!setting(SET_BADGES, true)) return;
  const Badge = window.LGraphBadge;
  if (!Badge) return;
  for (const n of run.nodes || []) {
    const node = graphNode(n.display_id ?? n.id);
    if (!node || state.badged.has(node)) continue;
    // the page may show another workflow now (a tab switched while the run went on): same id, other node
    if (n.type && (n.display_id ?? n.id) === n.id && (node.comfyClass ?? node.type) !== n.type) continue;
    const { device, bytes } = nodePeak(run, n);
    // what the figure is: on CPU the whole process's peak RSS while the node ran; on a GPU the allocator's peak of
    // every tensor on the device (resident models included), neither the node's own share
    const what = device === "cpu" ? "process RAM peak" : `${device} peak, all tensors`;
    const text = `${what} ${fmtBytes(bytes)} · ${fmtS(n.duration_s)}`;
    const fn = () => new Badge({ text, fgColor: "#ffffff", bgColor: "#2f5cb8" });
    fn.ggRecorder = text;
    node.badges = node.badges || [];
    node.badges.push(fn);
    state.badged.set(node, fn);
  }
  app.canvas?.setDirty?.(true, true);
  ensureCss();
  showDomBadges();
}

// -- data -----------------------------------------------------------------------------------------
function acceptRun(run, live) {
  if (!run || !Array.isArray(run.nodes)) return;
  state.runs = [run, ...state.runs.filter((r) => r.prompt_id !== run.prompt_id)].slice(0, 50);
  state.selected = run.prompt_id;
  state.compare = null;
  if (live) showBadges(run);
  renderAll();
}

async function loadRuns() {
  try {
    const r = await api.fetchApi("/gpu_garden/runs?limit=20");
    if (!r.ok) return;
    const { runs } = await r.json();
    const known = new Set(runs.map((x) => x.prompt_id));
    state.runs = [...runs, ...state.runs.filter((x) => !known.has(x.prompt_id))]
      .sort((a, b) => (b.started || 0) - (a.started || 0)).slice(0, 50);
    if (!state.selected && state.runs.length) state.selected = state.runs[0].prompt_id;
    renderAll();
  } catch (err) {
    console.warn("[GPU Garden] recorded runs unavailable", err);
  }
}

const selectedRun = () => state.runs.find((r) => r.prompt_id === state.selected) || state.runs[0] || null;

async function loadCompare(run) {
  const r = await api.fetchApi(`/gpu_garden/runs/${encodeURIComponent(run.prompt_id)}/compare`);
  state.compare = r.ok ? await r.json() : { summary: `compare failed (${r.status})`, nodes: [] };
  renderAll();
}

async function copyReport(run, kind) {
  const detail = setting(SET_FULL, false) ? "full" : "redacted";
  const r = await api.fetchApi(`/gpu_garden/runs/${encodeURIComponent(run.prompt_id)}/report.${kind}?detail=${detail}`);
  if (!r.ok) {  // e.g. 404: the run is not in the store (another server, or pruned); never copy the error as a report
    const why = (await r.text().catch(() => "")).slice(0, 300);
    state.copied = null;
    app.extensionManager?.toast?.add?.({ severity: "error", summary: "Memory report not copied",
      detail: `HTTP ${r.status}: ${why}`, life: 6000 });
    return;
  }
  const text = kind === "json" ? JSON.stringify(await r.json(), null, 2) : await r.text();
  state.copied = { kind, text };
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = el("textarea");
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
  app.extensionManager?.toast?.add?.({ severity: "success", summary: "Memory report copied",
    detail: `${kind === "md" ? "Markdown" : "JSON"}, ${detail}: paste it into the issue.`, life: 3000 });
}

function onWatchdog(ev) {
  if (!ev || !ev.node) return;
  state.warnings = [ev, ...state.warnings].slice(0, 10);
  const devs = (ev.snapshot?.devices || []).map((d) => `${d.device || d.backend}: ${fmtBytes(d.free)} free of ${fmtBytes(d.total)}`);
  const detail = `${ev.message}\n${devs.join("; ")}\n${ev.guide?.title || ""}: see Runs in the GPU memory tab.`;
  app.extensionManager?.toast?.add?.({ severity: "warn", summary: "GPU Garden: a node may be hung", detail, life: 30000 });
  renderAll();
}

// -- the sidebar section --------------------------------------------------------------------------
const STYLE = `
.gg-rec-badge{position:absolute;bottom:100%;right:6px;margin-bottom:3px;padding:1px 7px;border-radius:9px;background:#2f5cb8;color:#fff;
  font:10px/1.5 var(--comfy-font, Inter, system-ui, sans-serif);white-space:nowrap;pointer-events:none;z-index:1}
.gg-rec{display:flex;flex-direction:column;gap:8px;font-size:11px}
.gg-rec-head{display:flex;gap:6px;align-items:center;flex-wrap:wrap}
.gg-rec select{max-width:100%;font-size:11px;background:var(--comfy-input-bg,#222);color:inherit;border:1px solid var(--border-color,#4e4e4e);border-radius:4px}
.gg-rec button{font-size:11px;padding:2px 8px;border-radius:4px;border:1px solid var(--border-color,#4e4e4e);background:var(--comfy-input-bg,#222);color:inherit;cursor:pointer}
.gg-rec svg{width:100%;background:rgba(127,127,127,.06);border-radius:4px}
.gg-rec-dev{font-weight:600;margin-top:4px}
.gg-rec-list{margin:2px 0 0;padding-left:16px}
.gg-rec-warn{border-left:3px solid #d29922;padding:4px 8px;background:rgba(210,153,34,.08)}
.gg-rec-warn h4{margin:6px 0 2px}
.gg-rec-warn pre{white-space:pre-wrap;margin:4px 0}
.gg-rec-note{opacity:.65}
`;

function timeline(run) {
  const box = el("div");
  box.dataset.testid = "gpu-garden-timeline";
  const total = Math.max(run.duration_s || 0, ...run.nodes.map((n) => (n.t0_s || 0) + (n.duration_s || 0)), 1e-3);
  const devices = [...new Set(run.nodes.flatMap((n) => Object.keys(n.peak || {})))];
  devices.forEach((dev, di) => {
    const info = (run.devices || []).find((d) => d.device === dev);
    const peaks = run.nodes.map((n) => n.peak?.[dev]).filter((v) => typeof v === "number");
    // used memory at the node boundaries (total - free), where the device's total is known: [time, bytes]
    const used = info?.total ? run.nodes.flatMap((n) => [[n.t0_s || 0, n.free_before?.[dev]], [(n.t0_s || 0) + (n.duration_s || 0), n.free_after?.[dev]]])
      .filter(([, f]) => typeof f === "number").sort((a, b) => a[0] - b[0]).map(([t, f]) => [t, info.total - f]) : [];
    // from zero, or from a round figure below the lowest peak and used figure when all sit near the top (a CPU run's RSS
    // drew one solid block), said under the chart and by a dashed base line (lib/timeline_axis.js); exact figures in
    // each bar's tooltip
    const axis = memoryAxis(peaks, used.map(([, u]) => u));
    const max = Math.max(...peaks, 0);
    const scale = (v) => axisShare(v, axis);
    // the server names the host's row itself ("host RAM (process RSS)"): said once, not after a label of ours
    const label = dev === "cpu" ? info?.name || "host RAM (process)" : `${dev}${info?.name ? ` · ${info.name}` : ""}`;
    box.append(el("div", "gg-rec-dev", `${label} — highest ${fmtBytes(max)}`));
    const W = 300, H = 70;
    const s = svg("svg", { viewBox: `0 0 ${W} ${H + 12}`, role: "img" });
    s.dataset.device = dev;
    s.dataset.floor = String(axis.floor);
    for (const n of run.nodes) {
      const v = n.peak?.[dev];
      if (v === undefined) continue;
      const x = ((n.t0_s || 0) / total) * W;
      const w = Math.max(1.5, ((n.duration_s || 0) / total) * W);
      const h = Math.max(2, scale(v) * H);
      const r = svg("rect", { x, y: H - h, width: w, height: h, fill: DEVICE_COLORS[di % DEVICE_COLORS.length],
        opacity: 0.8, stroke: "var(--comfy-menu-bg, #202020)", "stroke-width": 0.6 });
      r.dataset.ggNode = n.id; // not data-node-id: that names the Nodes 2.0 node elements (graph_adapter.js)
      const t = svg("title");
      t.textContent = `${n.type} #${n.id}: peak ${fmtBytes(v)}, ${fmtS(n.duration_s)}`;
      r.append(t);
      s.append(r);
    }
    if (used.length > 1) { // the used-memory line, on the same axis (which spans its values)
      const pts = used.map(([t, u]) => `${((t / total) * W).toFixed(1)},${(H - scale(u) * H).toFixed(1)}`);
      s.append(svg("polyline", { points: pts.join(" "), fill: "none", stroke: "#f0f6fc", "stroke-width": 1, opacity: 0.6 }));
    }
    if (axis.floor) s.append(svg("line", { x1: 0, y1: H, x2: W, y2: H, stroke: "currentColor", "stroke-width": 1,
      "stroke-dasharray": "3 2", opacity: 0.6 })); // a cut axis: the bars stand on axis.floor, not on zero
    const words = svg("text", { x: 0, y: H + 10, fill: "currentColor", "font-size": 8, opacity: 0.6 });
    words.textContent = `time 0 → ${fmtS(total)} · ${axis.label}`;
    s.append(words);
    box.append(s);
  });
  return box;
}

function compareView(c) {
  const box = el("div");
  box.dataset.testid = "gpu-garden-compare";
  box.append(el("div", null, c.summary || ""));
  const list = el("ul", "gg-rec-list");
  for (const n of c.nodes || []) {
    const txt = n.what === "time" ? `${n.type} #${n.id}: time ${fmtS(n.before)} → ${fmtS(n.after)}`
      : `${n.type} #${n.id}: peak on ${n.device} ${fmtBytes(n.before)} → ${fmtBytes(n.after)}`;
    list.append(el("li", null, txt));
  }
  // the server words the changes once (memory/recorder/compare.py: models_words, change_words with the version and
  // allocator lines), for this list and the exported report alike
  for (const w of [...(c.models_words || []), ...(c.change_words || [])]) list.append(el("li", null, w));
  box.append(list);
  return box;
}


function renderSection(root) {
  const run = selectedRun();
  const parts = [el("h3", null, "Runs (flight recorder)")];
  for (const w of state.warnings.slice(0, 1)) {
    // a run that went on to succeed was slow, not hung: say so in one line and drop the hang guide
    const done = state.runs.find((r) => r.prompt_id === w.prompt_id && r.status === "success");
    const warn = el("div", done ? "gg-rec-note" : "gg-rec-warn");
    warn.dataset.testid = "gpu-garden-watchdog";
    warn.dataset.resolved = done ? "true" : "false";
    if (done) {
      warn.append(el("div", null, `Resolved: ${w.node?.type} #${w.node?.id} looked hung after ${fmtS(w.elapsed_s || 0)}`
        + ` with no progress, but its run finished (success in ${fmtS(done.duration_s || 0)}): it was slow, not hung.`));
    } else {
      warn.append(el("div", null, w.message), el("h4", null, w.guide?.title || ""), renderMarkdown(w.guide?.markdown || ""));
    }
    parts.push(warn);
  }
  if (!run) {
    parts.push(el("div", "gg-rec-note", setting(SET_ENABLED, true) ? "No run recorded yet: queue a workflow." : "Recording is off (Settings → GPU Garden)."));
    root.replaceChildren(...parts);
    return;
  }
  const head = el("div", "gg-rec-head");
  const pick = el("select");
  pick.dataset.testid = "gpu-garden-run-select";
  for (const r of state.runs) {
    const o = el("option", null, `${new Date((r.started || 0) * 1000).toLocaleTimeString([], { hour12: false })} · ${r.status} · ${fmtS(r.duration_s || 0)}`);
    o.value = r.prompt_id;
    o.selected = r.prompt_id === run.prompt_id;
    pick.append(o);
  }
  pick.onchange = () => { state.selected = pick.value; state.compare = null; renderAll(); };
  const cmp = el("button", null, "Compare with the previous run");
  cmp.dataset.testid = "gpu-garden-compare-button";
  cmp.onclick = () => loadCompare(run);
  const md = el("button", null, "Copy memory report");
  md.dataset.testid = "gpu-garden-copy-report";
  md.onclick = () => copyReport(run, "md");
  const js = el("button", null, "JSON");
  js.title = "Copy the memory report as JSON";
  js.onclick = () => copyReport(run, "json");
  head.append(pick, cmp, md, js);
  parts.push(head, el("div", "gg-rec-note", `${run.nodes.length} node(s) ran, ${(run.cached || []).length} cached`), timeline(run));
  if (state.compare && state.compare.current === run.prompt_id) parts.push(compareView(state.compare));
  root.replaceChildren(...parts);
}

function renderAll() {
  for (const v of state.views) {
    try {
      v();
    } catch (err) {
      console.error("[GPU Garden] runs view failed", err);
    }
  }
}

function ensureCss() {
  if (document.getElementById("gpu-garden-recorder-css")) return;
  const style = el("style", null, STYLE);
  style.id = "gpu-garden-recorder-css";
  document.head.append(style);
}

registerSidebarSection("recorder", (container) => {
  ensureCss();
  const root = el("div", "gg-rec");
  root.dataset.testid = "gpu-garden-runs";
  container.append(root);
  const view = () => root.isConnected && renderSection(root);
  state.views.add(view);
  renderSection(root);
  loadRuns();
  return () => state.views.delete(view);
}, { order: 60 });

function postSettings(body) {
  api.fetchApi("/gpu_garden/recorder/settings", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) }).catch(() => {});
}

app.registerExtension({
  name: "GPUGarden.Recorder",
  settings: [
    { id: SET_ENABLED, category: ["GPU Garden", "Flight recorder", "Record"], name: "Record every run (time and peak memory per node)",
      tooltip: "The last 200 runs are kept in ComfyUI's user folder (gpu_garden/runs.jsonl). Off: nothing is recorded. One switch for the whole server: with --multi-user, the last change wins.",
      type: "boolean", defaultValue: true, onChange: (v) => postSettings({ enabled: v !== false }) },
    { id: SET_FULL, category: ["GPU Garden", "Flight recorder", "Full report"], name: "Memory report: include paths and user names",
      tooltip: "Off (default): the copied report has no absolute paths, user names or file names other than models.",
      type: "boolean", defaultValue: false, onChange: (v) => postSettings({ report_detail: v ? "full" : "redacted" }) },
    { id: SET_BADGES, category: ["GPU Garden", "Flight recorder", "Badges"], name: "Show each node's peak memory after a run",
      type: "boolean", defaultValue: true, onChange: (v) => { if (!v) clearBadges(); } },
  ],
  async setup() {
    loadRuns();
  },
});
