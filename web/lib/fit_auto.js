// @ts-check
// Fit to Card's automatic mode in the GPU memory sidebar tab. Automatic mode (setting GPUGarden.FitToCard) guards
// every sampler without a node, so nothing on the canvas shows what it planned: this part, under the
// fit_guard feature of the Health section (web/health.js), shows the last plan it made (GET /gpu_garden/fit,
// `last_auto`: nodes/fit_guard.py) with the same offers a Fit to Card node would show. Text only: with no node
// there is no graph position to apply an offer from; a Fit to Card node gives the buttons.
import { api } from "../../../scripts/api.js";
import { el, fmtBytes } from "./format.js";
import { graphTakes } from "./fit_offers.js";
import { rootGraph } from "./graph_adapter.js";

const ROUTE = "/gpu_garden/fit";

/** Fill `box` from GET /gpu_garden/fit's JSON; returns the number of lines. */
export function renderAutoPlan(box, status) {
  const last = status?.last_auto;
  const lines = [];
  if (!last) {
    if (status?.enabled) lines.push(el("div", null, "Fit to Card (automatic): no sampler has run since ComfyUI started."));
  } else {
    const shape = Array.isArray(last.latent_shape) ? ` (latent ${last.latent_shape.join("×")})` : "";
    const head = el("div", null, `Fit to Card (automatic), last sampler${shape}: ${last.summary || "no budget: our figure only"}`,
      { fontWeight: "600" });
    head.dataset.testid = "gg-fit-auto-summary";
    lines.push(head);
    lines.push(el("div", null, `memory_required to ComfyUI: ${fmtBytes(last.memory_required, 2)}; ComfyUI's own: ${fmtBytes(last.stock_memory_required, 2)}`));
    for (const s of last.steps || []) lines.push(el("div", null, `✓ ${s.label}`));
    // the block-swap count only where a node of the open graph takes one (lib/fit_offers.js graphTakes)
    const offers = (last.offers || []).filter((o) => o.without_widget !== "info" || graphTakes(rootGraph(), o));
    for (const o of offers) {
      const row = el("div", null, `${o.without_widget === "info" ? "info" : "offer (not applied)"}: ${o.label}`);
      row.dataset.testid = `gg-fit-auto-offer-${o.id}`;
      lines.push(row);
    }
    if (offers.length) {
      lines.push(el("div", null, "Automatic mode applies none of these; a Fit to Card node before the sampler offers them with Apply and Undo.",
        { opacity: ".7" }));
    }
  }
  box.replaceChildren(...lines);
  return lines.length;
}

/** An element that fills itself with automatic mode's last plan (empty while there is nothing to say). */
export function autoPlanPart() {
  const box = el("div", "gg-health-err gg-fit-auto");
  box.dataset.testid = "gg-fit-auto";
  api.fetchApi(ROUTE)
    .then(async (res) => {
      if (!res.ok) throw new Error(`${ROUTE} answered ${res.status}`);
      renderAutoPlan(box, await res.json());
    })
    .catch((err) => box.replaceChildren(el("div", null, `Fit to Card (automatic): unavailable (${err?.message || err})`)));
  return box;
}
