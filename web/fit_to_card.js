// @ts-check
// Fit to Card: what the node did (applied), the memory_required it handed ComfyUI's loader beside ComfyUI's
// own figure, and the result-changing options it only offers. A DOM widget that never serializes; every
// string goes in through textContent. The sampler's own figure (sent as "gpu_garden.fit" when sampling
// starts) replaces the node's prediction on the face.
import { app } from "../../scripts/app.js";
import { api } from "../../scripts/api.js";
import { el, exposeForTests, fmtBytes } from "./lib/format.js";
import { nodeById, rootGraph } from "./lib/graph_adapter.js";

const NODE = "GPUGardenFitToCard";
const WIDTH = 420;
const LINE = 16;
const IDLE_TEXT = "Runs before the sampler: what it changed and the predicted peak show here.";
const GREEN = "var(--p-green-400, #4ade80)";
const RED = "var(--p-red-400, #f87171)";

export function render(root, fit, supplied) {
  root.replaceChildren();
  if (!fit) {
    root.append(el("div", null, IDLE_TEXT, { opacity: ".7" }));
    return 1;
  }
  const lines = [];
  const head = el("div", null, (fit.mode === "advise" ? "advice only · " : "") + fit.summary,
    { fontWeight: "600", color: fit.fits === false ? RED : fit.fits ? GREEN : "inherit" });
  head.dataset.testid = "gg-fit-summary";
  lines.push(head);
  const req = supplied?.memory_required ?? fit.memory_required;
  if (req) {
    const src = supplied ? `sampler: ${supplied.cond_batch} conditioning(s) batched` : `predicted: ${fit.cond_batch} conditioning(s)`;
    lines.push(el("div", null, `memory_required to ComfyUI: ${fmtBytes(req, 2)} (${src}); ComfyUI's own: ${fmtBytes(supplied?.stock_memory_required ?? fit.stock_memory_required, 2)}`));
  }
  for (const s of fit.steps || []) lines.push(el("div", null, `✓ ${s.label}`, { opacity: ".9" }));
  for (const o of fit.offers || []) lines.push(el("div", null, `offer (not applied): ${o.label}`, { opacity: ".75" }));
  if (fit.budget_source) lines.push(el("div", null, `budget: ${fit.budget_source}`, { opacity: ".6" }));
  root.append(...lines);
  return lines.length;
}

function show(node, fit, supplied) {
  if (!node.__ggFit) return;
  node.__ggFitData = fit || node.__ggFitData;
  const n = render(node.__ggFit, node.__ggFitData, supplied);
  node.__ggFitLines = n;
  exposeForTests({ lastFit: node.__ggFitData, lastFitSupplied: supplied || null });
  node.setSize?.([Math.max(WIDTH, node.size?.[0] || 0), node.computeSize?.()[1] ?? node.size?.[1]]);
  node.setDirtyCanvas?.(true, true);
}

api.addEventListener("gpu_garden.fit", (ev) => {
  const rec = ev?.detail;
  if (!rec || rec.node == null) return;
  const node = nodeById(rootGraph(), rec.node);
  if (node && node.type === NODE) show(node, null, rec);
});

app.registerExtension({
  name: "GPUGarden.FitToCard",
  async beforeRegisterNodeDef(nodeType, nodeData) {
    if (nodeData?.name !== NODE) return;
    const onNodeCreated = nodeType.prototype.onNodeCreated;
    nodeType.prototype.onNodeCreated = function () {
      const r = onNodeCreated?.apply(this, arguments);
      const root = el("div", null, null, {
        font: "11px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace", padding: "5px 7px", whiteSpace: "pre-wrap",
        borderRadius: "6px", boxSizing: "border-box", background: "var(--comfy-input-bg, rgba(0,0,0,.25))",
        color: "var(--input-text, #ddd)",
      });
      root.dataset.testid = "gg-fit";
      this.__ggFit = root;
      this.__ggFitLines = 1;
      const widget = this.addDOMWidget("gg_fit", "gg_fit", root, {
        serialize: false, hideOnZoom: false,
        getMinHeight: () => Math.max(40, (this.__ggFitLines || 1) * LINE * 2 + 10), // long lines wrap once
      });
      widget.serialize = false;
      render(root, null);
      if (this.size && this.size[0] < WIDTH) this.setSize([WIDTH, this.size[1]]);
      return r;
    };
    const onExecuted = nodeType.prototype.onExecuted;
    nodeType.prototype.onExecuted = function (output) {
      onExecuted?.apply(this, arguments);
      const fit = output?.gpu_garden_fit?.[0];
      if (fit) show(this, fit, null);
    };
  },
});
