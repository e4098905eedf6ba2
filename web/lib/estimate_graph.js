// @ts-check
// "Estimate the open graph" on the Footprint Estimate node: posts the graph as it is now (the saved workflow's
// JSON, rootGraph().serialize()) to POST /gpu_garden/estimate/workflow (nodes/estimate_routes.py), which finds the
// loaders' files in ComfyUI's model folders, and shows its answer: outcome, peak, the per-card-tier line, and which
// files it could not find. The node's own width/height/frames/batch go along: the route uses them when the graph has
// no latent node, as the node does when no latent is connected. Judged on the device ComfyUI computes on (--cpu: host
// RAM), which the answer names. Nothing is queued or loaded. Async with a timeout; an error is shown as text.
import { api } from "../../../scripts/api.js";
import { el, exposeForTests, fmtBytes } from "./format.js";
import { rootGraph } from "./graph_adapter.js";
import { OUTCOME_TEXT, tiersLine } from "./estimate_tiers.js";
import { nodeSize } from "./node_size.js";
import { graphSizeText } from "./estimate_size.js";

export const ROUTE = "/gpu_garden/estimate/workflow";
export const TIMEOUT_MS = 30000;
const BUTTON = {
  font: "inherit", padding: "0 6px", borderRadius: "4px", cursor: "pointer", whiteSpace: "nowrap", flex: "none",
  border: "1px solid var(--border-color, #555)", background: "var(--comfy-menu-bg, #333)", color: "inherit",
};

/**
 * The route's answer, or {error} (its 400's text, a timeout, a network failure): never throws.
 * @param {object} body {workflow, vram_gb?, width?, height?, frames?, batch?}
 * @returns {Promise<any>}
 */
export async function postGraph(body, timeoutMs = TIMEOUT_MS) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const r = await api.fetchApi(ROUTE, { method: "POST", headers: { "Content-Type": "application/json" },
                                          body: JSON.stringify(body), signal: abort.signal });
    const text = await r.text();
    let out = null;
    try {
      out = JSON.parse(text);
    } catch {
      out = null;
    }
    if (!r.ok) return { error: (out && typeof out.error === "string" ? out.error : `HTTP ${r.status}: ${text}`).slice(0, 600) };
    if (!out || typeof out !== "object") return { error: `not a JSON answer: ${text.slice(0, 200)}` };
    return out;
  } catch (err) {
    if (abort.signal.aborted) return { error: `no answer in ${Math.round(timeoutMs / 1000)} s (the server may be busy); try again` };
    return { error: `request failed: ${err?.message || err}` };
  } finally {
    clearTimeout(timer);
  }
}

/** The node's vram_gb widget when set (> 0): the route judges against it; else it judges no card but the tiers. */
function nodeVram(node) {
  const w = (node?.widgets || []).find((x) => x.name === "vram_gb");
  const v = Number(w?.value);
  return Number.isFinite(v) && v > 0 ? v : null;
}

/** Where the answer was judged: ComfyUI on the CPU is judged on host RAM (no card) unless vram_gb plans for one. */
function deviceText(a) {
  if (a.device === "cpu") return a.budget ? " · a card of the node's vram_gb (GiB), with this CPU host's fp32 weights (a card would run 16-bit)" : " · on the CPU (ComfyUI --cpu): host RAM";
  return a.budget ? "" : " · no card set (the node's vram_gb is 0)";
}

/**
 * The files the route could not read, each with its why as the route gives it (missing_where[].why, the CLI's words):
 * "incomplete: a, b not found; c: a broken link (points to X, which does not exist)". An answer without missing_where
 * (names only) reads as not found.
 * @param {any} a the route's answer
 * @returns {string}
 */
export function missingText(a) {
  const where = Array.isArray(a.missing_where) && a.missing_where.length ? a.missing_where
    : (Array.isArray(a.missing) ? a.missing : []).map((name) => ({ name, why: "not found" }));
  const why = (m) => (m.why ? String(m.why) : "not found");
  const absent = where.filter((m) => why(m) === "not found").map((m) => m.name);
  const parts = absent.length ? [`${absent.join(", ")} not found`] : [];
  for (const m of where) if (why(m) !== "not found") parts.push(`${m.name}: ${why(m)}`);
  return `incomplete: ${parts.join("; ")}`;
}

/**
 * Draw `state` into `box`: null (nothing asked yet), {pending}, {error}, or the route's answer.
 * @param {HTMLElement} box
 * @param {any} state
 */
export function renderGraph(box, state) {
  box.replaceChildren();
  if (!state) return;
  if (state.pending) {
    box.append(el("div", null, "estimating the open graph…", { opacity: ".7" }));
    return;
  }
  if (state.error) {
    const err = el("div", null, `open graph: estimate failed: ${state.error}`, { color: OUTCOME_TEXT["does not fit"], overflowWrap: "anywhere" });
    err.dataset.testid = "gg-estimate-graph-error";
    box.append(err);
    return;
  }
  const a = state;
  const missing = Array.isArray(a.missing) ? a.missing : [];
  const status = missing.length ? "incomplete" : a.outcome?.status || a.verdict;
  const head = el("div", null, null, { display: "flex", gap: "8px", alignItems: "baseline" });
  const badge = el("span", null, String(status).toUpperCase(), { fontWeight: "700", color: OUTCOME_TEXT[status] || "inherit" });
  badge.dataset.testid = "gg-estimate-graph-verdict";
  const phase = a.peak_phase ? ` (${String(a.peak_phase).replace(/_/g, " ")})` : "";
  head.append(badge, el("span", null, `peak ${fmtBytes(a.peak, 2)}${phase}` + (a.budget ? ` of ${fmtBytes(a.budget, 2)}` : "")));
  box.append(head);
  if (missing.length) {
    const line = el("div", null, missingText(a), { color: OUTCOME_TEXT.tight, overflowWrap: "anywhere" });
    line.dataset.testid = "gg-estimate-graph-missing";
    box.append(line);
  } else if (a.outcome?.reason) {
    box.append(el("div", null, a.outcome.reason, { opacity: ".85", overflowWrap: "anywhere" }));
  }
  const size = graphSizeText(a);
  const fam = a.family_name ? `${a.family_name} (${a.family}${a.variant ? " " + a.variant : ""})` : a.family;  // as the node's own run names it
  const what = el("div", null, `${fam} · ${size} · batch ${a.batch}` + deviceText(a), { opacity: ".85" });
  what.dataset.testid = "gg-estimate-graph-size";
  box.append(what);
  if (a.unknown) {  // as the node's own face (estimate.js) and the CLI's [UNKNOWN family: generic figures] say it
    const unk = el("div", null, "unknown model family: generic figures", { color: OUTCOME_TEXT.tight });
    unk.dataset.testid = "gg-estimate-graph-unknown";
    box.append(unk);
  }
  const tiers = tiersLine(a, { incomplete: missing.length > 0, testid: "gg-estimate-graph-tiers" });
  if (tiers) box.append(tiers);
  if (Array.isArray(a.files) && a.files.length) {
    box.append(el("div", null, `files: ${a.files.join(", ")}`, { opacity: ".65", overflowWrap: "anywhere" }));
  }
  if (Array.isArray(a.assumptions) && a.assumptions.length) { // the device, dtypes and reserve it assumed (not the node's run)
    const details = el("details", null, undefined, { opacity: ".8" });
    details.dataset.testid = "gg-estimate-graph-assumptions";
    details.append(el("summary", null, "assumptions"));
    for (const line of a.assumptions) details.append(el("div", null, "· " + line, { paddingLeft: "6px" }));
    box.append(details);
  }
}

/**
 * The open-graph section of the node's face: a button and the answer under it. `changed` runs after each redraw
 * (the node resizes to its face).
 * @param {any} node
 * @param {() => void} changed
 * @returns {HTMLDivElement}
 */
export function graphSection(node, changed) {
  const section = el("div", null, null, { marginTop: "5px", paddingTop: "4px", borderTop: "1px solid rgba(127,127,127,.35)" });
  section.dataset.testid = "gg-estimate-graph";
  const row = el("div", null, null, { display: "flex", gap: "6px", alignItems: "center" });
  const button = el("button", null, "Estimate the open graph", BUTTON);
  button.type = "button";
  button.dataset.testid = "gg-estimate-graph-button";
  button.title = "estimate this workflow before running it: its loaders' files from ComfyUI's model folders, read without loading them";
  const when = el("span", null, "before it runs", { opacity: ".6" });
  row.append(button, when);
  const box = el("div");
  section.append(row, box);
  button.addEventListener("pointerdown", (e) => e.stopPropagation()); // the click is ours, not the canvas's
  button.addEventListener("click", async (e) => {
    e.stopPropagation();
    if (button.disabled) return;
    button.disabled = true;
    renderGraph(box, { pending: true });
    changed();
    let answer;
    try {
      const body = { workflow: rootGraph().serialize(), ...nodeSize(node) };
      const vram = nodeVram(node);
      if (vram) body["vram_gb"] = vram;
      answer = await postGraph(body);
    } catch (err) {  // the graph could not be serialized
      answer = { error: `could not read the open graph: ${err?.message || err}` };
    } finally {
      button.disabled = false;
    }
    when.textContent = `as of ${new Date().toLocaleTimeString([], { hour12: false })}`;
    renderGraph(box, answer);
    exposeForTests({ lastGraphEstimate: answer });
    changed();
  });
  return section;
}
