// @ts-check
// The outcome colours of the Footprint Estimate and its per-card-tier line ("8 GB: runs with at least 5.2 GiB offloaded ·
// 12 GB: fits · 16 GB: fits"), as `gpu-garden estimate --workflow` prints it: each tier's words are the server's
// (memory/estimate/verdict.label, carried as the tiers' label / vram_label in extra.gpu_garden.memory).
// Shared by the node's executed output (web/estimate.js) and the open graph's answer (lib/estimate_graph.js).
import { el, fmtBytes, TEXT_TONES } from "./format.js";

/** The outcomes as text (the badge, the tier chips, the warnings): readable on a light palette too (format.js textTone). */
export const OUTCOME_TEXT = {
  "fits": TEXT_TONES.ok,
  "tight": TEXT_TONES.warn,
  "does not fit": TEXT_TONES.bad,
  "runs with offload": TEXT_TONES.warn,
  "runs tiled": TEXT_TONES.warn,
  "fits with streaming": TEXT_TONES.warn,
  "incomplete": TEXT_TONES.muted,
  "no budget": TEXT_TONES.muted,
};

/**
 * @typedef {object} Tier one card tier of memory/estimate/workflow.tiers()
 * @property {number} gb
 * @property {string} outcome
 * @property {string} [verdict]
 * @property {number} [offloaded]
 * @property {number} [peak]
 * @property {string} [peak_phase]
 * @property {string | null} [decode]
 * @property {string} [label] the outcome in words (memory/estimate/verdict.label)
 * @property {string} [vram_outcome] the outcome on VRAM alone (any host RAM)
 * @property {string} [vram_label] vram_outcome in words
 * @property {number} [vram_offloaded]
 * @property {number | null} [ram_needed] what the run keeps in host RAM on this tier
 * @property {any} [host_ram] the host RAM the verdict assumed, where a tier carries it (bytes or {available|bytes, source})
 */

/** An outcome in a few words: the server's label (memory/estimate/verdict.label, the CLI's per-card-tier words);
 * tiers written before it carried one get the same words here. */
export function tierLabel(/** @type {Tier} */ t) {
  if (typeof t.label === "string") return t.label;
  return t.outcome === "runs with offload" ? `runs with at least ${fmtBytes(t.offloaded || 0, 1)} offloaded` : String(t.outcome);
}

/** Bytes from a host RAM field: a number, or an object's available / bytes. */
function ramBytes(v) {
  if (typeof v === "number") return v;
  if (v && typeof v === "object") return [v.available, v.bytes, v.host_ram].find((x) => typeof x === "number") ?? null;
  return null;
}

/**
 * The host RAM the tiers were judged with: the answer's host_ram_assumed (memory/estimate/workflow.host_ram_assumed:
 * {available, source}; available null: RAM not judged), else a tier's own host_ram, else the estimate's
 * host_ram.available (the tiers re-judge the estimate with its policy). {bytes, source} (bytes null: not judged) or null.
 * @param {Tier[]} tiers
 * @param {any} est
 */
export function tiersHostRam(tiers, est) {
  const assumed = est?.host_ram_assumed;
  if (assumed && typeof assumed === "object") return { bytes: ramBytes(assumed.available), source: assumed.source || null };
  const own = tiers.find((t) => t.host_ram !== undefined && t.host_ram !== null)?.host_ram;
  const bytes = ramBytes(own) ?? ramBytes(est?.host_ram);
  if (!bytes) return null;
  const source = (own && typeof own === "object" && own.source) || null;
  return { bytes, source };
}

/**
 * The per-card-tier line: every tier with its verdict ("12 GB: fits"). Null when the answer
 * has no tiers. `incomplete`: a graph not seen whole is not judged per tier (as the CLI).
 * @param {any} est an estimate carrying `tiers`
 * @param {{ incomplete?: boolean, testid?: string }} [options]
 */
export function tiersLine(est, { incomplete = false, testid = "gg-estimate-tiers" } = {}) {
  /** @type {Tier[]} */
  const tiers = Array.isArray(est?.tiers) ? est.tiers.filter((t) => t && typeof t.gb === "number") : [];
  if (!tiers.length) return null;
  const line = el("div", null, null, { overflowWrap: "anywhere" });
  line.dataset.testid = testid;
  const ram = tiersHostRam(tiers, est);
  const head = incomplete ? "per card tier: not judged (the estimate is incomplete)"
    : `per card tier${!ram ? "" : ram.bytes ? `, host RAM ${fmtBytes(ram.bytes, 1)}` : ", host RAM not judged"}: `;
  const lead = el("span", null, head, { opacity: ".85" });
  if (ram?.bytes) lead.title = `the offload and host-RAM verdicts assume ${fmtBytes(ram.bytes, 2)} of host RAM` + (ram.source ? ` (${ram.source})` : "");
  line.append(lead);
  if (incomplete) return line;
  tiers.forEach((t, i) => {
    const label = tierLabel(t);  // every tier its verdict: a bare "12 GB" read as not judged (web50 item 4)
    const chip = el("span", null, `${t.gb} GB: ${label}`,
      { color: OUTCOME_TEXT[t.outcome] || "inherit", whiteSpace: "nowrap" });
    chip.dataset.gb = String(t.gb);
    chip.dataset.outcome = String(t.outcome);
    chip.title = `${t.gb} GB card: ${label}` + (t.peak ? `; peak ${fmtBytes(t.peak, 2)} (${String(t.peak_phase || "").replace(/_/g, " ")})` : "")
      + (t.vram_outcome && t.vram_outcome !== t.outcome ? `; on VRAM alone: ${tierLabel({ ...t, outcome: t.vram_outcome, offloaded: t.vram_offloaded, label: t.vram_label })}` : "")
      + (t.ram_needed ? `; keeps ${fmtBytes(t.ram_needed, 1)} in host RAM` : "")
      + (t.decode ? `; ${t.decode}` : "");
    if (i) line.append(el("span", null, " · ", { opacity: ".6" }));
    line.append(chip);
  });
  return line;
}
