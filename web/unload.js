// @ts-check
// Unload Text Encoders: the node shows its measured report on its face (a DOM widget that never
// serializes), and the setting GPUGarden.AutoUnloadTextEncoders turns on the automatic mode. The server
// reads that setting from ComfyUI's own settings store; POST /gpu_garden/auto_unload only tells it
// which user's settings to follow (matters under --multi-user).
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";
import { el, exposeForTests } from "./lib/format.js";
import { clientId, toast } from "./lib/frontend.js";

const NODE = "GPUGardenUnloadTextEncoders";
const SETTING = "GPUGarden.AutoUnloadTextEncoders";
const LINE_HEIGHT = 15;
const MAX_HEIGHT = 260;
const IDLE_TEXT = "Runs after encoding, before the sampler: the memory it frees, measured, shows here.";

function render(face, report) {
  face.replaceChildren();
  if (!report) {
    face.append(el("div", "gg-unload-idle", IDLE_TEXT));
    return;
  }
  face.append(el("div", "gg-unload-summary", report.summary, {
    fontWeight: "600", color: report.freed_bytes > 0 ? "var(--p-green-400, #4ade80)" : "inherit" }));
  for (const text of (report.lines || []).slice(1)) face.append(el("div", null, text));
}

// Lines long enough to wrap at the node's width take two rows.
function wrapped(face) {
  let extra = 0;
  for (const child of face.children) extra += child.textContent.length > 52 ? 1 : 0;
  return extra;
}

// The server maps this page's client id to its user, so automatic unload follows whoever queued the prompt.
function followUser() {
  const id = clientId();
  if (!id) return; // sent again on "status" once the socket has named this page
  api.fetchApi("/gpu_garden/auto_unload", { method: "POST", body: JSON.stringify({ client_id: id }) })
    .catch((err) => console.warn("[GPU Garden] could not tell the server which settings to follow", err));
}

function announce(report) {
  if (!report) return;
  exposeForTests({ lastAutoUnload: report });
  toast("info", "GPU Garden: text encoders unloaded", report.summary, 5000);
}

app.registerExtension({
  name: "GPUGarden.UnloadTextEncoders",
  settings: [
    {
      id: SETTING,
      name: "Unload text encoders before every sampler (no node needed)",
      category: ["GPU Garden", "Text encoders", "Automatic unload"],
      type: "boolean",
      defaultValue: false,
      tooltip: "Before any sampler loads its model, text encoders on the same device are offloaded to RAM. " +
               "A changed prompt reloads them; an unchanged one reuses ComfyUI's cached conditioning.",
      onChange: () => followUser(),
    },
  ],
  async setup() {
    api.addEventListener("gpu_garden.auto_unload", (e) => announce(e.detail?.report));
    let told = null;
    const tell = () => { if (clientId() && clientId() !== told) { told = clientId(); followUser(); } };
    api.addEventListener("status", tell);
    api.addEventListener("reconnected", () => { told = null; tell(); });
    tell();
  },
  async beforeRegisterNodeDef(nodeType, nodeData) {
    if (nodeData?.name !== NODE) return;
    const onNodeCreated = nodeType.prototype.onNodeCreated;
    nodeType.prototype.onNodeCreated = function () {
      const r = onNodeCreated?.apply(this, arguments);
      const face = el("div", "gg-unload-report", null, {
        font: "11px/1.35 ui-monospace, SFMono-Regular, Menlo, monospace", whiteSpace: "pre-wrap",
        overflowY: "auto", padding: "4px 6px", borderRadius: "6px", boxSizing: "border-box",
        background: "var(--comfy-input-bg, rgba(0,0,0,.25))", color: "var(--input-text, #ddd)",
      });
      face.dataset.testid = "gg-unload-report";
      const widget = this.addDOMWidget("gg_unload_report", "gg_unload_report", face, {
        serialize: false, hideOnZoom: false,
        getMinHeight: () => Math.min(MAX_HEIGHT, 14 + LINE_HEIGHT * Math.max(2, face.childElementCount + wrapped(face))),
        getMaxHeight: () => MAX_HEIGHT,
      });
      widget.serialize = false;
      this.__ggUnloadReport = face;
      render(face, null);
      if (this.size && this.size[0] < 360) this.setSize([360, this.size[1]]);
      return r;
    };
    const onExecuted = nodeType.prototype.onExecuted;
    nodeType.prototype.onExecuted = function (output) {
      onExecuted?.apply(this, arguments);
      const report = output?.gpu_garden_unload?.[0];
      if (report && this.__ggUnloadReport) {
        render(this.__ggUnloadReport, report);
        const height = this.computeSize()[1];
        this.setSize([Math.max(this.size[0], 360), Math.max(this.size[1], height)]);
        this.setDirtyCanvas(true, true);
      }
    };
  },
});
