// @ts-check
// Fit to Card: what the node did (applied), the memory_required it handed ComfyUI's loader beside ComfyUI's
// own figure, and the result-changing options it only offers. A DOM widget that never serializes; every
// string goes in through textContent. The sampler's own figure (sent as "gpu_garden.fit" when sampling
// starts) replaces the node's prediction on the face. Each offer the graph has a widget for gets an Apply
// button (lib/fit_offers.js); a click changes those widgets and an Undo button puts the previous values back.
// The Undo records live in the node's properties (serialised with the workflow): Undo survives a reload and a
// save/load, and never overwrites a value changed by hand since (it says so). Nothing is applied without a click.
import { api } from "../../scripts/api.js";
import { el, exposeForTests, fmtBytes, TEXT_TONES } from "./lib/format.js";
import { addFace, followFace, registerFaceNode } from "./lib/node_face.js";
import { nodeById, rootGraph } from "./lib/graph_adapter.js";
import { appliedRecords, applyOffer, describeChange, findTarget, graphTakes, undoApplied } from "./lib/fit_offers.js";
import { toast } from "./lib/frontend.js";

const NODE = "GPUGardenFitToCard";
const WIDTH = 420;
const LINE = 16;
const IDLE_TEXT = "Runs before the sampler: what it changed and the predicted peak show here.";
const OK_TEXT = TEXT_TONES.ok;
const BAD_TEXT = TEXT_TONES.bad;

const BUTTON = {
  font: "inherit", marginLeft: "6px", padding: "0 6px", borderRadius: "4px", cursor: "pointer",
  border: "1px solid var(--border-color, #555)", background: "var(--comfy-menu-bg, #333)", color: "inherit",
};

function button(text, testid, onClick) {
  const b = el("button", null, text, BUTTON);
  b.type = "button";
  b.dataset.testid = testid;
  b.addEventListener("pointerdown", (e) => e.stopPropagation()); // the click is ours, not the canvas's
  b.addEventListener("click", (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

/** What an Undo did, for its toast: what it put back, and what it left because you changed it by hand since. */
export function undoMessage(u) {
  const parts = [];
  if (u.restored.length) parts.push(describeChange({ ...u.record, changes: u.restored }, true));
  for (const c of u.byHand) parts.push(`${c.name} was changed by hand since (now ${c.now}; the offer set ${c.after}): left as you set it`);
  if (u.missed.length) parts.push(`could not restore ${u.missed.map((c) => c.name).join(", ")}: the node or widget is gone`);
  return parts.join("; ");
}

/**
 * One offer's row: its label, and Apply (a widget for it exists here) or Undo (applied by a click; the record is
 * kept in the node's properties, so it survives a reload). An offer marked without_widget "info" (the block-swap
 * count) is shown as information where no widget upstream takes it but some node of the graph does, and not at
 * all where no node does (null: a plain SD graph has no loader that takes a block-swap count).
 */
function offerRow(node, offer, rerender) {
  const row = el("div", null, null, { opacity: ".85" });
  row.dataset.testid = `gg-fit-offer-row-${offer.id}`;
  const applied = appliedRecords(node)[offer.id];
  if (applied) {
    row.append(el("span", null, `applied by you: ${describeChange(applied)}`));
    row.append(button("Undo", `gg-fit-undo-${offer.id}`, () => {
      const u = undoApplied(node, offer.id);
      if (!u) return;
      const msg = undoMessage(u);
      exposeForTests({ lastFitUndo: { id: offer.id, message: msg, restored: u.restored, byHand: u.byHand, missed: u.missed } });
      toast(u.byHand.length || u.missed.length ? "warn" : "info", "Fit to Card: undone", msg);
      rerender();
    }));
    return row;
  }
  const target = node ? findTarget(node, offer) : null;
  const info = !target && offer.without_widget === "info";
  if (info && !graphTakes(node?.graph, offer)) return null; // no node here takes it (a plain SD graph)
  row.append(el("span", null, `${info ? "info" : "offer (not applied)"}: ${offer.label}`));
  if (target) {
    row.append(button("Apply", `gg-fit-offer-${offer.id}`, () => {
      const rec = applyOffer(node, offer);
      if (!rec) return;
      toast("info", "Fit to Card: applied (Undo on the node); queue again to run it", describeChange(rec));
      rerender();
    }));
  } else if (offer.apply && !info) {
    row.append(el("span", null, " (no widget for it in this graph)", { opacity: ".8" })); // x the row's .85: 4:1 on light
  }
  return row;
}

/** Rows for records kept on the node whose offer is not in `offers` (applied, no longer offered, or after a reload). */
function appliedRows(node, offers, rerender) {
  return Object.entries(appliedRecords(node))
    .filter(([id]) => !offers.some((o) => o.id === id))
    .map(([id, rec]) => offerRow(node, { id, label: rec.label }, rerender));
}

/** The sampler's conditioning batch (memory/fit/plan.py planned_cond_batch) in words: the prompt and the negative prompt
 *  are two, run together in one model call; at cfg 1 ComfyUI skips the negative. The server's log line and text face
 *  use the same words (nodes/fit_guard.py prompts_per_step; tests/unit/test_fit_guard.py pins the two equal). */
const promptsPerStep = (n) => (n === 1 ? "one prompt per step" : `${n} prompts run together each step`);

export function render(root, fit, supplied, node = null) {
  root.replaceChildren();
  const rerender = () => node && show(node, null, supplied);
  if (!fit) {
    const rows = appliedRows(node, [], rerender);
    root.append(el("div", null, IDLE_TEXT, { opacity: ".7" }), ...rows);
    return 1 + rows.length;
  }
  const lines = [];
  const advise = fit.mode === "advise";  // advise hands ComfyUI nothing (nodes/fit_to_card.py): say what apply WOULD do
  const head = el("div", null, (advise ? "advice only, nothing changed · " : "") + fit.summary,
    { fontWeight: "600", color: fit.fits === false ? BAD_TEXT : fit.fits ? OK_TEXT : "inherit" });
  head.dataset.testid = "gg-fit-summary";
  lines.push(head);
  const req = supplied?.memory_required ?? fit.memory_required;
  if (req && !advise) {
    const src = supplied ? `as the sampler runs it: ${promptsPerStep(supplied.cond_batch)}` : `predicted for ${promptsPerStep(fit.cond_batch)}`;
    lines.push(el("div", null, `memory estimate given to ComfyUI (memory_required): ${fmtBytes(req, 2)} (${src}); ComfyUI's own: ${fmtBytes(supplied?.stock_memory_required ?? fit.stock_memory_required, 2)}`));
  }
  for (const s of fit.steps || []) lines.push(el("div", null, `${advise ? "apply would: " : "✓ "}${s.label}`, { opacity: ".9" }));
  const offers = fit.offers || [];
  for (const o of offers) {
    const row = offerRow(node, o, rerender);
    if (row) lines.push(row);
  }
  lines.push(...appliedRows(node, offers, rerender));
  // faded, but at 4:1 or better on the light palette's face too (.6 read 3.5:1: tests/web/test_status_contrast.py)
  if (fit.budget_source) lines.push(el("div", null, fit.budget ? `budget: ${fit.budget_source}` : fit.budget_source, { opacity: ".7" }));
  root.append(...lines);
  return lines.length;
}

function show(node, fit, supplied) {
  if (!node.__ggFit) return;
  node.__ggFitData = fit || node.__ggFitData;
  if (fit) node.__ggFitSupplied = null; // a new plan: the sampler's figure comes again when it starts
  if (supplied) node.__ggFitSupplied = supplied;
  const n = render(node.__ggFit, node.__ggFitData, node.__ggFitSupplied || null, node);
  node.__ggFitLines = n;
  node.__ggFitHeight = 0; // measured again once laid out (fitFace)
  exposeForTests({ lastFit: node.__ggFitData, lastFitSupplied: node.__ggFitSupplied || null });
  fitFace(node);
  requestAnimationFrame(() => fitFace(node)); // once laid out at the node's width: lines wrapped twice or more
}

/** Grow the node to the face: its laid-out content where the frontend shows it (a line wrapped twice or more overran
 *  the estimate of one wrap per line: the walk's budget line sat below the node), else that estimate. */
function fitFace(node) {
  const root = node.__ggFit;
  if (root?.getClientRects().length) {
    const last = root.lastElementChild;
    if (last) node.__ggFitHeight = last.offsetTop + last.offsetHeight + 12; // + the bottom padding and widget margin
  }
  // a height we grew it to follows the plan (shorter too); a hand-set one is kept (followFace)
  if (node.setSize && node.computeSize) followFace(node, node.computeSize()[1], WIDTH);
  node.setDirtyCanvas?.(true, true);
}

api.addEventListener("gpu_garden.fit", (ev) => {
  const rec = ev?.detail;
  if (!rec || rec.node == null) return;
  const node = nodeById(rootGraph(), rec.node);
  if (node && node.type === NODE) show(node, null, rec);
});

registerFaceNode({
  extension: "GPUGarden.FitToCard",
  node: NODE,
  // Automatic mode: the server reads this setting from ComfyUI's settings store (nodes/fit_guard.py SETTING_ID),
  // as it reads Auto-unload's; the dialog writes the same value POST /settings/GPUGarden.FitToCard does.
  settings: [
    {
      id: "GPUGarden.FitToCard",
      name: "Fit to Card before every sampler (no node needed)",
      category: ["GPU Garden", "Fit to Card", "Automatic mode"],
      type: "boolean",
      defaultValue: false,
      tooltip: "Every sampler whose model did not go through a Fit to Card node asks ComfyUI for the memory our " +
               "estimate says it needs, and each VAE decode is sized the same way. Offers (smaller batch, lower " +
               "resolution) are listed in the GPU memory sidebar tab, never applied.",
    },
  ],
  created(node) {
    node.__ggFitLines = 1;
    node.__ggFit = addFace(node, {
      name: "gg_fit", testid: "gg-fit", width: WIDTH, idle: (face) => render(face, null),
      style: { whiteSpace: "pre-wrap", position: "relative" }, // children's offsetTop from the face (fitFace)
      // measured once laid out (fitFace); until then, each line wrapping once
      getMinHeight: () => Math.max(40, node.__ggFitHeight || (node.__ggFitLines || 1) * LINE * 2 + 10),
    });
  },
  configured(node) {
    if (Object.keys(appliedRecords(node)).length) show(node, null, null); // Undo records from the saved workflow
  },
  executed(node, output) {
    const fit = output?.gpu_garden_fit?.[0];
    if (fit) show(node, fit, null);
  },
});
