// The OOM panel: when a run this browser queued dies of out-of-memory, the server pushes one
// "gpu_garden.oom" report (nodes/oom_capture.py). The panel sits next to the failing node (it follows
// pans and zooms, classic and Nodes 2.0 modes alike), beside the frontend's own error card, and shows
// the cause, the memory numbers, the guide with copyable commands, and the fixes it can make.
// Everything that comes from the server is put in the page as text; guide markdown goes through
// oom_markdown.js, which builds DOM nodes and never parses HTML.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";
import { renderMarkdown } from "./oom_markdown.js";

const EVENT = "gpu_garden.oom";
const ROUTE = "/gpu_garden/oom/reports";

const CAUSES = {
  fragmentation: "Fragmentation: free VRAM is split into blocks too small for this request",
  "weights-exceed-vram": "The model's weights do not fit in VRAM",
  activations: "Activations for this size and batch need more VRAM than is free",
  "vae-decode": "VAE decode of the full image at once needs more VRAM than is free",
  "text-encoder": "A text encoder still holds VRAM the model needs",
  "other-process": "Another process holds VRAM this run needed",
  "kv-cache": "The KV cache does not fit",
  "host-ram": "System RAM ran out",
  leak: "Memory grows from run to run (a leak)",
  other: "Out of memory",
};

// ---------------------------------------------------------------------------------------------------
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = String(text);
  return e;
}

function button(label, cls, onClick, testid) {
  const b = el("button", `gg-oom-btn ${cls || ""}`.trim(), label);
  b.type = "button";
  if (testid) b.dataset.testid = testid;
  b.addEventListener("click", (e) => {
    e.stopPropagation();
    onClick(b);
  });
  return b;
}

export function fmtBytes(n) {
  if (n == null || !isFinite(n)) return "?";
  const u = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = Math.abs(n);
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${(Math.sign(n) * v).toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${u[i]}`;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Not a secure context (ComfyUI opened over plain http on a LAN address): the old way still works.
    const ta = el("textarea");
    ta.value = text;
    ta.style.cssText = "position:fixed;left:-9999px;top:0";
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok;
  }
}

function copyButton(text) {
  return button("Copy", "gg-oom-copy", async (b) => {
    const ok = await copyText(text);
    b.textContent = ok ? "Copied" : "Copy failed";
    setTimeout(() => (b.textContent = "Copy"), 1500);
  }, "gg-oom-copy");
}

// -- graph helpers -----------------------------------------------------------------------------------
const rootGraph = () => app.rootGraph ?? app.graph;

/** The node chain for an execution id ("12:5" = node 5 inside subgraph instance 12), outermost first. */
function nodeChain(execId) {
  const chain = [];
  let graph = rootGraph();
  for (const part of String(execId).split(":")) {
    const node = graph?.getNodeById?.(isNaN(+part) ? part : +part) ?? graph?.getNodeById?.(part);
    if (!node) break;
    chain.push(node);
    graph = node.subgraph;
  }
  return chain;
}

/** The failing node if it is on the graph shown now, else the subgraph node that contains it. */
function visibleNode(execId, expectedType = null) {
  const shown = app.canvas?.graph;
  const chain = nodeChain(execId);
  const depth = String(execId).split(":").length;
  // Same id, other node (another workflow open now, or the graph changed since): not ours.
  if (expectedType && chain.length === depth && chain[depth - 1].type !== expectedType) return null;
  for (let i = chain.length - 1; i >= 0; i--) if (chain[i].graph === shown) return chain[i];
  return null;
}

const activeWorkflow = () => app.extensionManager?.workflow?.activeWorkflow ?? null;

const vueNodesMode = () => !!(window.LiteGraph?.vueNodesMode || app.ui?.settings?.getSettingValue?.("Comfy.VueNodes.Enabled"));

/** The node's rectangle in client pixels: its Vue element in Nodes 2.0 mode, else pos/size through ds. */
function nodeClientRect(node) {
  if (vueNodesMode()) {
    const dom = document.querySelector(`.lg-node[data-node-id="${CSS.escape(String(node.id))}"]`);
    if (dom) {
      const r = dom.getBoundingClientRect();
      if (r.width > 0) return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    }
  }
  const canvas = app.canvas;
  const c = canvas.canvas.getBoundingClientRect();
  const { scale, offset } = canvas.ds;
  const titleH = window.LiteGraph?.NODE_TITLE_HEIGHT ?? 30;
  const collapsed = node.flags?.collapsed;
  const w = collapsed ? (node._collapsed_width || 120) : node.size[0];
  const h = collapsed ? 0 : node.size[1];
  const left = c.left + (node.pos[0] + offset[0]) * scale;
  const top = c.top + (node.pos[1] - titleH + offset[1]) * scale;
  return { left, top, right: left + w * scale, bottom: top + (h + titleH) * scale };
}

// -- node swap (VAE Decode -> VAE Decode (Tiled)) -----------------------------------------------------
function linksOf(node) {
  const graph = node.graph;
  const link = (id) => graph.links?.get?.(id) ?? graph.links?.[id];
  const inputs = (node.inputs || []).map((inp) => {
    const l = inp.link != null ? link(inp.link) : null;
    return l ? { name: inp.name, originId: l.origin_id, originSlot: l.origin_slot } : null;
  }).filter(Boolean);
  const outputs = [];
  (node.outputs || []).forEach((out, slot) => {
    for (const id of out.links || []) {
      const l = link(id);
      if (l) outputs.push({ slot, name: out.name, type: out.type, targetId: l.target_id, targetSlot: l.target_slot });
    }
  });
  return { inputs, outputs };
}

function replaceNode(old, type, { widgets = {}, keep = null } = {}) {
  const graph = old.graph;
  const LG = window.LiteGraph;
  const fresh = LG.createNode(type);
  if (!fresh) throw new Error(`node type ${type} is not registered`);
  const { inputs, outputs } = linksOf(old);
  const id = old.id;
  const pos = [old.pos[0], old.pos[1]];
  graph.remove(old);
  fresh.id = id;
  fresh.pos = pos;
  graph.add(fresh);
  if (keep) {
    if (keep.title) fresh.title = keep.title;
    for (const k of ["mode", "color", "bgcolor"]) if (keep[k] != null) fresh[k] = keep[k];
    if (keep.size) fresh.size = [...keep.size];
    (keep.widgets_values || []).forEach((v, i) => {
      if (fresh.widgets?.[i]) fresh.widgets[i].value = v;
    });
  }
  for (const [name, value] of Object.entries(widgets)) {
    const w = fresh.widgets?.find((x) => x.name === name);
    if (w) w.value = value;
  }
  for (const i of inputs) {
    const slot = fresh.inputs?.findIndex((x) => x.name === i.name) ?? -1;
    const origin = graph.getNodeById(i.originId);
    if (origin && slot >= 0) origin.connect(i.originSlot, fresh, slot);
  }
  for (const o of outputs) {
    let slot = fresh.outputs?.findIndex((x) => x.name === o.name) ?? -1;
    if (slot < 0) slot = fresh.outputs?.findIndex((x) => x.type === o.type) ?? -1;
    const target = graph.getNodeById(o.targetId);
    if (target && slot >= 0) fresh.connect(slot, target, o.targetSlot);
  }
  graph.setDirtyCanvas?.(true, true);
  app.canvas?.setDirty?.(true, true);
  app.extensionManager?.workflow?.activeWorkflow?.changeTracker?.checkState?.(); // Ctrl+Z undoes it too
  return fresh;
}

function applySwap(action) {
  const node = visibleNode(action.node_id, action.from);
  if (!node || node.type !== action.from) throw new Error(`node #${action.node_id} is no longer a ${action.from}`);
  const before = node.serialize();
  const fresh = replaceNode(node, action.to, { widgets: action.widgets, keep: { title: node.title !== node.constructor?.title ? node.title : null, mode: node.mode, color: node.color, bgcolor: node.bgcolor } });
  return { before, nodeId: fresh.id, action };
}

function undoSwap(state) {
  const node = visibleNode(String(state.nodeId), state.action.to);
  if (!node || node.type !== state.action.to) throw new Error("the swapped node has changed since; use Ctrl+Z");
  replaceNode(node, state.before.type, { keep: state.before });
}

// -- the panel ------------------------------------------------------------------------------------
const CSS_TEXT = `
.gg-oom-panel{position:fixed;z-index:1000;width:380px;max-height:min(72vh,640px);display:flex;flex-direction:column;
  background:#1d1f24;color:#e6e6e6;border:1px solid #3a3d45;border-left:3px solid #e5484d;border-radius:10px;
  box-shadow:0 12px 32px rgba(0,0,0,.45);font:13px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;pointer-events:auto}
.gg-oom-panel *{box-sizing:border-box}
.gg-oom-arrow{position:absolute;width:0;height:0;border:7px solid transparent}
.gg-oom-panel.gg-right .gg-oom-arrow{left:-17px;border-right:10px solid #e5484d}
.gg-oom-panel.gg-left .gg-oom-arrow{right:-17px;border-left:10px solid #3a3d45}
.gg-oom-panel.gg-docked .gg-oom-arrow{display:none}
.gg-oom-head{display:flex;align-items:center;gap:8px;padding:10px 12px 6px}
.gg-oom-badge{background:#e5484d;color:#fff;font-weight:700;font-size:11px;letter-spacing:.04em;border-radius:4px;padding:1px 6px}
.gg-oom-where{flex:1;min-width:0;color:#b8bcc6;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.gg-oom-icon{background:none;border:0;color:#9aa0ab;cursor:pointer;font-size:12px;padding:4px 6px;border-radius:4px;line-height:1}
.gg-oom-icon:hover{background:#2c2f36;color:#fff}
.gg-oom-body{overflow:auto;padding:0 12px 12px}
.gg-oom-cause{font-size:14px;font-weight:600;color:#fff;margin:2px 0 2px}
.gg-oom-evidence{color:#9aa0ab;font-size:12px;margin-bottom:8px}
.gg-oom-bar{margin:8px 0 4px}
.gg-oom-track{position:relative;height:12px;border-radius:6px;background:#2c2f36;overflow:hidden;display:flex}
.gg-oom-seg{height:100%}
.gg-oom-used{background:#6b7280}.gg-oom-resv{background:repeating-linear-gradient(45deg,#d97706 0 4px,#b45309 4px 8px)}
.gg-oom-free{background:#22a06b}.gg-oom-req{background:#4f8ff7}
.gg-oom-reqrow{position:relative;height:8px;margin-top:4px;border-radius:4px;background:#24262c;display:flex;align-items:center}
.gg-oom-reqrow .gg-oom-req{border-radius:4px}
.gg-oom-reqrow .gg-oom-clipped{background:linear-gradient(90deg,#4f8ff7 70%,#e5484d);border-radius:4px 0 0 4px}
.gg-oom-legend{display:flex;flex-wrap:wrap;gap:2px 14px;margin-top:6px;font-size:12px;color:#c9ccd3}
.gg-oom-legend span{white-space:nowrap}
.gg-oom-short{color:#ff8b8e;font-size:12px;margin-top:4px}
.gg-oom-legend span::before{content:"";display:inline-block;width:8px;height:8px;border-radius:2px;margin-right:6px;vertical-align:0}
.gg-oom-legend .l-req::before{background:#4f8ff7}.gg-oom-legend .l-free::before{background:#22a06b}
.gg-oom-legend .l-resv::before{background:#d97706}.gg-oom-legend .l-total::before{background:#6b7280}
.gg-oom-src{color:#7d8390;font-size:11px;margin-top:2px}
.gg-oom-section{margin-top:10px;border-top:1px solid #2c2f36;padding-top:8px}
.gg-oom-h{font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:#8d93a0;margin-bottom:4px}
.gg-oom-guide-title{font-weight:600;color:#fff;margin-bottom:4px}
.gg-oom-cmd{display:flex;flex-direction:column;gap:3px;margin:6px 0}
.gg-oom-cmd-label{color:#c9ccd3;font-size:12px}
.gg-oom-cmd-row{display:flex;gap:6px;align-items:flex-start}
.gg-oom-cmd code,.gg-oom-md pre{flex:1;min-width:0;display:block;background:#111317;border:1px solid #2c2f36;border-radius:6px;
  padding:5px 7px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;color:#e6e6e6;white-space:pre-wrap;word-break:break-all;margin:0}
.gg-oom-md{font-size:12.5px;color:#d3d6dc}.gg-oom-md p{margin:4px 0}.gg-oom-md ul,.gg-oom-md ol{margin:4px 0;padding-left:18px}
.gg-oom-md h4,.gg-oom-md h5,.gg-oom-md h6{margin:8px 0 2px;color:#fff;font-size:13px}
.gg-oom-md code{background:#111317;border-radius:4px;padding:0 3px;font:12px ui-monospace,Menlo,monospace}
.gg-oom-md pre{position:relative;margin:6px 0;padding-right:56px}.gg-oom-md pre code{background:none;padding:0}
.gg-oom-md pre .gg-oom-copy{position:absolute;right:4px;top:4px}
.gg-oom-md a{color:#7fb0ff}
.gg-oom-btn{background:#2c2f36;color:#e6e6e6;border:1px solid #3a3d45;border-radius:6px;padding:4px 10px;cursor:pointer;font:inherit;font-size:12px;white-space:nowrap}
.gg-oom-btn:hover{background:#363a42;border-color:#4a4e58}.gg-oom-btn:disabled{opacity:.6;cursor:default}
.gg-oom-btn.primary{background:#2563eb;border-color:#2563eb;color:#fff}.gg-oom-btn.primary:hover{background:#1d4ed8}
.gg-oom-copy{padding:2px 8px;font-size:11px}
.gg-oom-actions{display:flex;flex-wrap:wrap;gap:6px;margin-top:10px}
.gg-oom-status{color:#9aa0ab;font-size:12px;margin-top:6px;min-height:1em}
.gg-oom-panel details{margin-top:8px}.gg-oom-panel summary{cursor:pointer;color:#b8bcc6;font-size:12px}
.gg-oom-causes li{margin:3px 0}.gg-oom-conf{color:#8d93a0;font-size:11px;margin-left:4px}
.gg-oom-msg{white-space:pre-wrap;word-break:break-word;background:#111317;border-radius:6px;padding:6px;font:11.5px/1.4 ui-monospace,Menlo,monospace;color:#d3d6dc;max-height:160px;overflow:auto}
.gg-oom-meta{color:#7d8390;font-size:11px;margin-top:8px}
.gg-oom-hist{list-style:none;margin:0;padding:0}
.gg-oom-hist li{padding:6px 8px;border-radius:6px;cursor:pointer;border:1px solid transparent}
.gg-oom-hist li:hover{background:#2c2f36;border-color:#3a3d45}
.gg-oom-hist .t{color:#8d93a0;font-size:11px}
`;

function ensureStyle() {
  if (document.getElementById("gg-oom-style")) return;
  const s = el("style", null, CSS_TEXT);
  s.id = "gg-oom-style";
  document.head.append(s);
}

function causeLine(report) {
  const top = (report.causes || [])[0];
  const label = report.summary || CAUSES[report.cause] || (report.cause ? `Cause: ${report.cause}` : "Out of memory");
  const evidence = top?.evidence?.[0] || (report.cause ? "" : String(report.message || "").split("\n")[0]);
  return { label, evidence };
}

function memoryBar(n) {
  if (!n) return null;
  const { requested, free, total } = n;
  const resv = n.reserved_unallocated;
  if (requested == null && free == null && total == null) return null;
  const wrap = el("div", "gg-oom-bar");
  wrap.dataset.testid = "gg-oom-bar";
  const scale = total || Math.max(requested || 0, (free || 0) + (resv || 0)) || 1;
  const pct = (v) => `${Math.max(0, Math.min(100, (100 * v) / scale))}%`;
  const track = el("div", "gg-oom-track");
  const used = total != null ? Math.max(0, total - (free || 0) - (resv || 0)) : 0;
  const seg = (cls, v, title) => {
    if (!v) return;
    const s = el("div", `gg-oom-seg ${cls}`);
    s.style.width = pct(v);
    s.title = title;
    track.append(s);
  };
  seg("gg-oom-used", used, `in use ${fmtBytes(used)}`);
  seg("gg-oom-resv", resv, `reserved by PyTorch but unallocated ${fmtBytes(resv)}`);
  seg("gg-oom-free", free, `free ${fmtBytes(free)}`);
  wrap.append(track);
  if (requested != null) {
    // The request drawn from where the memory in use ends: what sticks out past the free part is the shortfall.
    const row = el("div", "gg-oom-reqrow");
    const r = el("div", "gg-oom-seg gg-oom-req");
    const room = scale - used;
    r.style.marginLeft = pct(used);
    r.style.width = pct(Math.min(requested, room));
    row.title = `requested ${fmtBytes(requested)}`;
    row.append(r);
    if (requested > room) r.classList.add("gg-oom-clipped");
    wrap.append(row);
    if (free != null && requested > free) {
      wrap.append(el("div", "gg-oom-short", `Short by ${fmtBytes(requested - free)} of free memory`));
    }
  }
  const legend = el("div", "gg-oom-legend");
  const item = (cls, label, v) => v != null && legend.append(el("span", cls, `${label} ${fmtBytes(v)}`));
  item("l-req", "Requested", requested);
  item("l-free", "Free", free);
  item("l-resv", "Reserved-unallocated", resv);
  item("l-total", "Total", total);
  wrap.append(legend);
  const probe = Object.entries(n.source || {}).filter(([, s]) => s === "probe").map(([k]) => k.replace("_", "-"));
  if (probe.length) wrap.append(el("div", "gg-oom-src", `${probe.join(", ")} measured by the probe at failure; the rest from the error`));
  return wrap;
}

function guideSection(guide) {
  if (!guide) return null;
  const sec = el("div", "gg-oom-section gg-oom-guide");
  sec.dataset.testid = "gg-oom-guide";
  sec.append(el("div", "gg-oom-h", "Fix"));
  if (guide.title) sec.append(el("div", "gg-oom-guide-title", guide.title));
  for (const c of guide.commands || []) {
    const box = el("div", "gg-oom-cmd");
    if (c.label) box.append(el("div", "gg-oom-cmd-label", c.label));
    const row = el("div", "gg-oom-cmd-row");
    row.append(el("code", null, c.text), copyButton(String(c.text)));
    box.append(row);
    sec.append(box);
  }
  if (guide.markdown) {
    const d = el("details");
    d.append(el("summary", null, "Why this happens, what each fix costs"));
    const md = el("div", "gg-oom-md");
    md.append(renderMarkdown(guide.markdown, { onCode: (pre, text) => pre.append(copyButton(text)) }));
    d.append(md);
    sec.append(d);
  }
  return sec;
}

function otherCauses(report) {
  const rest = (report.causes || []).slice(1);
  if (!rest.length) return null;
  const d = el("details", "gg-oom-causes");
  d.dataset.testid = "gg-oom-other-causes";
  d.append(el("summary", null, `Other possible causes (${rest.length})`));
  const ul = el("ul");
  for (const c of rest) {
    const li = el("li");
    li.append(el("strong", null, CAUSES[c.id] || c.id));
    if (c.confidence != null) li.append(el("span", "gg-oom-conf", `${Math.round(c.confidence * 100)}%`));
    if (c.evidence?.length) li.append(el("div", "gg-oom-evidence", c.evidence.join(" · ")));
    ul.append(li);
  }
  d.append(ul);
  return d;
}

async function freeVram() {
  const res = await api.fetchApi("/free", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ unload_models: true, free_memory: true }),
  });
  if (!res.ok) throw new Error(`/free answered ${res.status}`);
}

class OOMPanel {
  constructor() {
    this.root = null;
    this.report = null;
    this.swap = null;
    this.raf = 0;
  }

  /** live: the report just arrived for a run this browser queued, so it belongs to the open workflow. */
  open(report, { live = false } = {}) {
    ensureStyle();
    this.report = report;
    this.swap = null;
    this.workflow = live ? activeWorkflow() : null;
    if (!this.root) {
      this.root = el("div", "gg-oom-panel");
      this.root.dataset.testid = "gg-oom-panel";
      this.root.setAttribute("role", "dialog");
      this.root.setAttribute("aria-label", "Out of memory");
      // Keep pointer and wheel events here so the canvas underneath does not pan or zoom.
      for (const t of ["pointerdown", "mousedown", "wheel", "keydown"]) this.root.addEventListener(t, (e) => e.stopPropagation());
      document.body.append(this.root);
    }
    this.render();
    this.follow();
  }

  runStatus(text) {
    const st = this.report && this.root?.querySelector("[data-testid=gg-oom-status]");
    if (st) st.textContent = text;
  }

  close() {
    cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.root?.remove();
    this.root = null;
  }

  header(where) {
    const head = el("div", "gg-oom-head");
    head.append(el("span", "gg-oom-badge", "OOM"));
    const w = el("span", "gg-oom-where", where);
    w.dataset.testid = "gg-oom-where";
    head.append(w);
    const hist = button("", "gg-oom-icon", () => this.showHistory(), "gg-oom-history");
    hist.append(el("i", "pi pi-history"));
    hist.title = "Past out-of-memory reports";
    const x = button("", "gg-oom-icon", () => this.close(), "gg-oom-close");
    x.append(el("i", "pi pi-times"));
    x.title = "Close";
    head.append(hist, x);
    return head;
  }

  render() {
    const r = this.report;
    const root = this.root;
    root.replaceChildren();
    root.append(el("div", "gg-oom-arrow"));
    const node = r.node || {};
    const title = node.path?.length > 1 ? node.path.map((p) => p.title || `#${p.id}`).join(" › ") : node.title || node.type;
    root.append(this.header(`${title || "node"} #${node.id ?? "?"}`));
    const body = el("div", "gg-oom-body");
    root.append(body);

    const { label, evidence } = causeLine(r);
    const cause = el("div", "gg-oom-cause", label);
    cause.dataset.testid = "gg-oom-cause";
    body.append(cause);
    if (evidence) body.append(el("div", "gg-oom-evidence", evidence));
    const bar = memoryBar(r.numbers);
    if (bar) body.append(bar);

    const actions = el("div", "gg-oom-actions");
    const status = el("div", "gg-oom-status");
    status.dataset.testid = "gg-oom-status";
    const run = (b, label, fn) => async () => {
      b.disabled = true;
      status.textContent = `${label}…`;
      try {
        status.textContent = (await fn()) || `${label}: done`;
      } catch (e) {
        status.textContent = `${label} failed: ${e?.message || e}`;
      } finally {
        b.disabled = false;
      }
    };
    const free = button("Free VRAM", "", (b) => run(b, "Free VRAM", async () => {
      await freeVram();
      return "Models unloaded and caches freed";
    })(), "gg-oom-free");
    free.title = "Unload all models and free cached memory (ComfyUI /free)";
    const requeue = button("Free VRAM and re-queue", "primary", (b) => run(b, "Re-queue", async () => {
      await freeVram();
      await app.queuePrompt(0, 1);
      return "Freed and queued the open workflow again";
    })(), "gg-oom-requeue");
    requeue.title = "Frees memory, then queues the workflow that is open now";
    actions.append(free, requeue);
    for (const a of r.actions || []) {
      if (a.kind !== "swap_node") continue;
      const target = visibleNode(a.node_id, a.from);
      if (!target || target.type !== a.from) continue;
      const sizes = a.widgets?.tile_size ? ` (tiles ${a.widgets.tile_size}, overlap ${a.widgets.overlap})` : "";
      const apply = button(`Apply: ${a.to}${sizes}`, "", (b) => {
        try {
          if (!this.swap) {
            this.swap = applySwap(a);
            b.textContent = "Undo swap";
            b.dataset.testid = "gg-oom-undo";
            status.textContent = `Replaced ${a.from} with ${a.to}; links kept. Queue again to try it.`;
          } else {
            undoSwap(this.swap);
            this.swap = null;
            b.textContent = `Apply: ${a.to}${sizes}`;
            b.dataset.testid = "gg-oom-apply";
            status.textContent = `Restored ${a.from}.`;
          }
        } catch (e) {
          status.textContent = String(e?.message || e);
        }
      }, "gg-oom-apply");
      apply.title = `Replace node #${a.node_id} with ${a.to}, keeping its links (undo here or with Ctrl+Z)`;
      actions.append(apply);
    }
    body.append(actions, status);

    const g = guideSection(r.guide);
    if (g) body.append(g);
    const oc = otherCauses(r);
    if (oc) body.append(oc);

    const msg = el("details");
    msg.append(el("summary", null, `Error message (${String(r.exception_type || "").replace(/^builtins\./, "")})`));
    const pre = el("div", "gg-oom-msg", r.message);
    pre.dataset.testid = "gg-oom-message";
    msg.append(pre);
    body.append(msg);

    const meta = [];
    if (r.captured) meta.push(`memory captured ${r.captured}`);
    if (r.latent?.width) meta.push(`latent ${r.latent.width}×${r.latent.height}${r.latent.frames > 1 ? `×${r.latent.frames}f` : ""}, batch ${r.latent.batch}`);
    if (r.model_family) meta.push(r.model_family);
    const models = (r.loaded_models || []).map((m) => `${m.name} ${fmtBytes(m.bytes)}`);
    if (models.length) meta.push(`loaded: ${models.join(", ")}`);
    if (r.timestamp) meta.push(new Date(r.timestamp * 1000).toLocaleString());
    for (const n of r.notes || []) meta.push(n);
    body.append(el("div", "gg-oom-meta", meta.join(" · ")));
  }

  async showHistory() {
    ensureStyle();
    if (!this.root) this.open({ node: {}, causes: [], message: "" });
    const root = this.root;
    root.replaceChildren(el("div", "gg-oom-arrow"), this.header("Past out-of-memory reports"));
    const body = el("div", "gg-oom-body");
    root.append(body);
    this.report = null;
    let reports = [];
    try {
      const res = await api.fetchApi(`${ROUTE}?limit=50`);
      reports = (await res.json()).reports || [];
    } catch (e) {
      body.append(el("div", "gg-oom-status", `Could not read reports: ${e?.message || e}`));
      return;
    }
    if (!reports.length) body.append(el("div", "gg-oom-status", "No out-of-memory reports yet."));
    const ul = el("ul", "gg-oom-hist");
    ul.dataset.testid = "gg-oom-history-list";
    for (const r of reports) {
      const li = el("li");
      li.append(el("div", null, `${r.node?.title || r.node?.type || "node"} #${r.node?.id ?? "?"} — ${causeLine(r).label}`));
      li.append(el("div", "t", r.timestamp ? new Date(r.timestamp * 1000).toLocaleString() : ""));
      li.addEventListener("click", () => this.open(r));
      ul.append(li);
    }
    body.append(ul);
  }

  follow() {
    if (this.raf) return;
    const tick = () => {
      this.raf = 0;
      if (!this.root) return;
      this.place();
      this.raf = requestAnimationFrame(tick);
    };
    this.raf = requestAnimationFrame(tick);
  }

  place() {
    const root = this.root;
    const rep = this.report;
    const sameWorkflow = !this.workflow || this.workflow === activeWorkflow();
    const node = rep?.node?.id != null && sameWorkflow ? visibleNode(rep.node.id, rep.node.type) : null;
    const pw = root.offsetWidth || 380;
    const ph = root.offsetHeight || 300;
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    let left;
    let top;
    let side = "gg-docked";
    let arrowY = null;
    if (node && app.canvas?.ds) {
      const r = nodeClientRect(node);
      side = "gg-right";
      left = r.right + 14;
      if (left + pw > vw - 8 && r.left - pw - 14 >= 8) {
        left = r.left - pw - 14;
        side = "gg-left";
      }
      left = Math.max(8, Math.min(left, vw - pw - 8));
      top = Math.max(48, Math.min(r.top, vh - ph - 8));
      arrowY = Math.max(8, Math.min(ph - 22, r.top + 8 - top));
    } else {
      left = vw - pw - 16;
      top = 132; // below the action bar and the queue summary
    }
    const key = `${Math.round(left)},${Math.round(top)},${side},${arrowY}`;
    if (key === this._placed) return;
    this._placed = key;
    root.style.left = `${Math.round(left)}px`;
    root.style.top = `${Math.round(top)}px`;
    root.classList.remove("gg-right", "gg-left", "gg-docked");
    root.classList.add(side);
    const arrow = root.querySelector(".gg-oom-arrow");
    if (arrow && arrowY != null) arrow.style.top = `${Math.round(arrowY)}px`;
  }
}

const panel = new OOMPanel();

// After "Free VRAM and re-queue" (or any new run) the open panel says how the next run went.
api.addEventListener("execution_start", () => panel.runStatus("Running again…"));
api.addEventListener("execution_success", () => panel.runStatus("The last run finished without running out of memory."));

// Registered at module load, before any message can arrive (unknown types are dropped otherwise).
const SETTING = "GPUGarden.OOMPanel.Enabled";
const enabled = () => app.extensionManager?.setting?.get?.(SETTING) !== false;

api.addEventListener(EVENT, (e) => {
  try {
    if (enabled()) panel.open(e.detail, { live: true });
  } catch (err) {
    console.error("[GPU Garden] OOM panel:", err);
  }
});

app.registerExtension({
  name: "GPUGarden.OOMPanel",
  settings: [
    { id: SETTING, name: "Show the out-of-memory panel next to the failing node", type: "boolean", defaultValue: true,
      category: ["GPU Garden", "Out of memory", "Panel"],
      tooltip: "Reports are stored either way; reopen them from Extensions > GPU Garden > Out-of-memory reports." },
  ],
  commands: [
    { id: "GPUGarden.OOM.ShowReports", label: "Out-of-memory reports", icon: "pi pi-history",
      function: () => panel.showHistory() },
    { id: "GPUGarden.OOM.ShowLast", label: "Show last out-of-memory report", icon: "pi pi-exclamation-triangle",
      function: async () => {
        const res = await api.fetchApi(`${ROUTE}?limit=1`);
        const [last] = (await res.json()).reports || [];
        if (last) panel.open(last);
        else panel.showHistory();
      } },
  ],
  menuCommands: [{ path: ["Extensions", "GPU Garden"], commands: ["GPUGarden.OOM.ShowLast", "GPUGarden.OOM.ShowReports"] }],
  async setup() {
    window.__gpuGarden = Object.assign(window.__gpuGarden || {}, { oomPanel: panel });
  },
});
