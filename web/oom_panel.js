// @ts-check
// The OOM panel: when a run this browser queued dies of out-of-memory, the server pushes one
// "gpu_garden.oom" report (nodes/oom_capture.py). The panel sits next to the failing node (it follows
// pans and zooms, classic and Nodes 2.0 modes alike), beside the frontend's own error UI without
// covering it, and shows the cause (or, when triage is uncertain, the top two side by side), the memory
// numbers, the guide with copyable commands, and the fixes it can make.
// Parts: lib/oom_style.js (CSS), lib/oom_parts.js (the DOM pieces), lib/oom_graph.js (node lookup and
// the tiled swap), lib/oom_place.js (layout), lib/oom_history.js (stored reports). Everything that comes
// from the server is put in the page as text; guide markdown goes through oom_markdown.js.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";
import { el, exposeForTests, fmtBytes, modelLabel } from "./lib/format.js";
import { setOverlay } from "./lib/overlays.js";
import { getSetting } from "./lib/frontend.js";
import { applySwap, undoSwap, visibleNode } from "./lib/oom_graph.js";
import { fetchReports, renderHistory } from "./lib/oom_history.js";
import { button, causeLine, guideSection, latentText, memoryBar, otherCauses, ramWords, uncertainty } from "./lib/oom_parts.js";
import { placePanel } from "./lib/oom_place.js";
import { ensureStyle } from "./lib/oom_style.js";

const EVENT = "gpu_garden.oom";

const activeWorkflow = () => app.extensionManager?.workflow?.activeWorkflow ?? null;

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
      // Escape closes it once the user is in it (a click anywhere on it focuses it); Escape elsewhere stays the page's
      this.root.tabIndex = -1;
      this.root.addEventListener("keydown", (e) => {
        if (e.key === "Escape") this.close();
      });
      document.body.append(this.root);
    }
    this.render();
    this.follow();
  }

  runStatus(text) {
    const st = this.report && this.root ? this.root.querySelector("[data-testid=gg-oom-status]") : null;
    if (st) st.textContent = text;
  }

  close() {
    cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.root?.remove();
    this.root = null;
    this._placed = null;
    setOverlay("oom", null);
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
    const unsure = uncertainty(r);
    if (unsure) body.append(unsure);
    else if (evidence) body.append(el("div", "gg-oom-evidence", evidence));
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
    const freeLabel = ramWords("Free VRAM", r);  // ComfyUI's /free unloads models and empties caches, wherever they live
    const free = button(freeLabel, "", (b) => run(b, freeLabel, async () => {
      await freeVram();
      return "Models unloaded and caches freed";
    })(), "gg-oom-free");
    free.title = "Unload all models and free cached memory (ComfyUI /free)";
    const requeue = button(ramWords("Free VRAM and re-queue", r), "primary", (b) => run(b, "Re-queue", async () => {
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
    if (r.latent?.width) meta.push(latentText(r.latent));
    if (r.model_family) meta.push(r.model_family);
    const models = (r.loaded_models || []).map((m) => `${modelLabel(m)} ${fmtBytes(m.bytes, 2)}`);  // "VAE", not AutoencoderKL
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
    await renderHistory(body, (r) => this.open(r));
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
    const { left, top, side, arrowY } = placePanel(node, { width: root.offsetWidth || 380, height: root.offsetHeight || 300 });
    const key = `${Math.round(left)},${Math.round(top)},${side},${arrowY}`;
    if (key === this._placed) return;
    this._placed = key;
    root.style.left = `${Math.round(left)}px`;
    root.style.top = `${Math.round(top)}px`;
    root.classList.remove("gg-right", "gg-left", "gg-docked");
    root.classList.add(side);
    const arrow = root.querySelector(".gg-oom-arrow");
    if (arrow instanceof HTMLElement && arrowY != null) arrow.style.top = `${Math.round(arrowY)}px`;
    setOverlay("oom", root); // the memory meter docks clear of it
  }
}

const panel = new OOMPanel();

// After "Free VRAM and re-queue" (or any new run) the open panel says how the next run went.
api.addEventListener("execution_start", () => panel.runStatus("Running again…"));
api.addEventListener("execution_success", () => panel.runStatus("The last run finished without running out of memory."));

// Registered at module load, before any message can arrive (unknown types are dropped otherwise).
const SETTING = "GPUGarden.OOMPanel.Enabled";
const enabled = () => getSetting(SETTING, true) !== false;

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
        const [last] = await fetchReports(1);
        if (last) panel.open(last);
        else panel.showHistory();
      } },
  ],
  menuCommands: [{ path: ["Extensions", "GPU Garden"], commands: ["GPUGarden.OOM.ShowLast", "GPUGarden.OOM.ShowReports"] }],
  async setup() {
    exposeForTests({ oomPanel: panel });
  },
});
