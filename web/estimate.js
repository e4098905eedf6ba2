// @ts-check
// Footprint Estimate: the verdict, the per-phase peaks as bars against the budget, ComfyUI's own figure,
// the verdict per card tier and the knobs that would make it fit, on the node's face; under it, a button that
// estimates the open graph before it runs (lib/estimate_graph.js). A DOM widget that never serializes; every
// string goes in through textContent.
import { el, exposeForTests, fmtBytes } from "./lib/format.js";
import { addFace, followFace, registerFaceNode } from "./lib/node_face.js";
import { OUTCOME_TEXT, tiersLine } from "./lib/estimate_tiers.js";
import { graphSection } from "./lib/estimate_graph.js";
import { sizeText } from "./lib/estimate_size.js";

const NODE = "GPUGardenFootprintEstimate";
const WIDTH = 430;
const MAX_HEIGHT = 1200; // a safety cap: the face grows to its content below it
const LINE = 16; // px per line of the 11px/1.4 face, for sizing before it is laid out
const IDLE_TEXT = "Runs before the sampler: the estimated peak of each phase and the verdict show here.";
const IDLE_HEIGHT = 14 + LINE * 4; // the idle text (two lines at WIDTH) and the open graph's button, before layout
const OVER_BUDGET_FILL = "var(--p-red-400, #f87171)";  // a phase bar past the budget (bars keep plain colours)
// the knobs' heading per outcome (as the CLI's); none when it fits already or the graph was not seen whole
const KNOBS_HEADING = { "runs with offload": "to run without offload:" };
const NO_KNOBS = new Set(["fits", "incomplete"]);
/** @type {Array<[string, string, boolean]>} */
const PHASES = [
  ["text_encode", "text encode", false],
  ["vae_encode", "VAE encode", false],
  ["sample", "sample", false],
  ["sample_naive_attention", "  naive attention", true],
  ["latent_upscale", "latent upscale", false],
  ["vae_decode", "VAE decode", false],
  ["vae_decode_tiled", "  tiled decode", true],
  ["pixel_upscale", "pixel upscale", false],  // ImageUpscaleWithModel (memory/estimate/pixel_upscale.py)
  ["audio_decode", "audio decode", false],
];

const gib = (n) => fmtBytes(n, 2);
// the ◂ after a phase's name (web50: explained nowhere on the face)
const PEAK_MARK_TITLE = "◂ the phase with the highest peak: the peak and the verdict at the top are this phase's";

function bar(value, scale, budget, muted) {
  const wrap = el("div", null, null, { position: "relative", height: "9px", flex: "1", margin: "0 6px",
    background: "rgba(127,127,127,.18)", borderRadius: "3px", overflow: "hidden" });
  const over = budget && value > budget;
  const fill = el("div", null, null, { height: "100%", width: `${Math.min(100, (100 * value) / scale)}%`,
    background: over ? OVER_BUDGET_FILL : "var(--p-primary-400, #60a5fa)", opacity: muted ? ".45" : "1" });
  wrap.append(fill);
  if (budget) {
    wrap.append(el("div", null, null, { position: "absolute", top: "0", bottom: "0", width: "2px",
      left: `${Math.min(99.5, (100 * budget) / scale)}%`, background: "var(--input-text, #ddd)" }));
  }
  return wrap;
}

export function render(root, est) {
  root.replaceChildren();
  if (!est) {
    root.append(el("div", null, IDLE_TEXT, { opacity: ".7" }));
    return;
  }
  // what ComfyUI does about the peak (outcome: runs with offload, ...), the verdict where an older answer has none
  const status = est.outcome?.status || est.verdict;
  const verdict = el("div", null, null, { display: "flex", gap: "8px", alignItems: "baseline", marginBottom: "3px" });
  const badge = el("span", null, String(status).toUpperCase(), { fontWeight: "700", color: OUTCOME_TEXT[status] || "inherit" });
  badge.dataset.testid = "gg-estimate-verdict";
  const traced = est.exact?.verdict_from_trace && est.peak_phase === "sample" ? " (sample step traced)" : "";
  verdict.append(badge, el("span", null, (est.budget ? `peak ${gib(est.peak)} of ${gib(est.budget)}` : `peak ${gib(est.peak)}`) + traced));
  root.append(verdict);
  if (est.outcome?.reason) {
    const why = el("div", null, est.outcome.reason, { opacity: ".85", overflowWrap: "anywhere" });
    why.dataset.testid = "gg-estimate-outcome";
    root.append(why);
  }
  const size = sizeText(est);  // lib/estimate_size.js: where the size came from; LTX-2's two stages
  const fam = `${est.family_name} (${est.family}${est.variant ? " " + est.variant : ""})`;
  const sizeLine = el("div", null, `${fam} · ${size} · batch ${est.batch} · CFG ${est.cfg ? "on" : "off"}`, { opacity: ".85" });
  sizeLine.dataset.testid = "gg-estimate-size";
  root.append(sizeLine);
  if (est.unknown) root.append(el("div", null, "unknown model family: generic figures", { color: OUTCOME_TEXT.tight }));
  // a VAE that cannot decode this latent: ComfyUI would fail at VAE Decode after sampling (families.vae_mismatch)
  if (est.vae_error) {
    const err = el("div", null, est.vae_error, { color: OUTCOME_TEXT["does not fit"], overflowWrap: "anywhere" });
    err.dataset.testid = "gg-estimate-vae-error";
    root.append(err);
  }
  root.append(el("div", null, est.budget ? `budget: ${est.budget_source || "?"}` : (est.budget_source || "no budget"), { opacity: ".7", marginBottom: "4px" }));

  const phases = PHASES.filter(([k]) => est.phases[k] !== undefined);
  const scale = Math.max(est.budget || 0, ...phases.filter(([, , m]) => !m).map(([k]) => est.phases[k])) * 1.05;
  for (const [key, label, muted] of phases) {
    const v = est.phases[key];
    const row = el("div", null, null, { display: "flex", alignItems: "center", opacity: muted ? ".75" : "1" });
    row.dataset.phase = key;
    // a decode ComfyUI retries tiled: the row holds the retry's figure (verdict.py as_run), and says so
    const name = key === "vae_decode" ? (est.tiled_retry?.[key] ? "VAE tiled retry" : "VAE untiled") : label;
    const nameCell = el("span", null, name + (key === est.peak_phase ? " ◂" : ""), { width: "118px", whiteSpace: "pre" });
    if (key === est.peak_phase) {
      nameCell.title = PEAK_MARK_TITLE;
      nameCell.dataset.testid = "gg-estimate-peak-phase";
    }
    row.append(nameCell,
               bar(Math.min(v, scale), scale, est.budget, muted), el("span", null, gib(v), { width: "74px", textAlign: "right" }));
    root.append(row);
  }
  // a VAE phase over the budget that ComfyUI retries tiled: the peak above and its row count the retry (tiled); the
  // untiled figure is only in this line
  for (const [key, t] of Object.entries(est.tiled_retry || {})) {
    const label = (PHASES.find(([k]) => k === key) || [key, key])[1].trim();
    const line = el("div", null, `${label} runs tiled after ComfyUI's out-of-memory fallback: ${gib(t.tiled)} (untiled ${gib(t.untiled)})`,
                    { opacity: ".85" });
    line.dataset.testid = "gg-estimate-retry";
    root.append(line);
  }
  if (est.measured) renderMeasured(root, est.measured);
  const act = est.breakdown?.sample?.activations;
  if (est.comfyui_memory_required !== null && est.comfyui_memory_required !== undefined) {
    root.append(el("div", null, `ComfyUI's memory estimate (memory_required): ${gib(est.comfyui_memory_required)} (ours: ${gib(act)} activations)`,
                   { marginTop: "4px", opacity: ".85" }));
  }
  // a CPU run is judged on host RAM and sizes no card (min_vram_gb null): "none up to 141 GB" would be false there
  if (!est.on_cpu) root.append(el("div", null, `smallest common card: ${est.min_vram_gb ? est.min_vram_gb + " GB" : "none up to 141 GB"}`));
  const tiers = tiersLine(est); // as extra.gpu_garden.memory carries them (gpu-garden estimate --workflow --write)
  if (tiers) root.append(tiers);
  // partial offload is what ComfyUI does already when it runs with offload: the outcome, not a knob; and no offer on
  // a run that fits, tight or tiled included: offered only where it does not fit, or on no budget (as the CLI, report.py)
  const runs = est.budget != null && status !== "does not fit" && status !== "incomplete";
  const knobs = (est.knobs || []).filter((k) => !(runs && k.id === "partial_offload"));
  if (knobs.length && !NO_KNOBS.has(status)) {
    const heading = KNOBS_HEADING[status] || (est.budget ? "what would help:" : "what would lower it:");
    const head = el("div", null, heading, { marginTop: "4px", fontWeight: "600" });
    head.dataset.testid = "gg-estimate-knobs";
    root.append(head);
    for (const k of knobs) {
      const fits = est.budget ? (k.fits ? "  ✓ fits" : "") : "";
      root.append(el("div", null, `−${gib(k.saving)}  ${k.label}${fits}`, { paddingLeft: "6px" }));
    }
  }
  if (est.exact) renderExact(root, est, scale);
  const details = el("details", null, undefined, { marginTop: "4px", opacity: ".8" });
  details.append(el("summary", null, "assumptions"));
  for (const a of est.assumptions || []) details.append(el("div", null, "· " + a, { paddingLeft: "6px" }));
  root.append(details);
}

function pct(x) {
  const p = Math.round(100 * x);
  return `${p > 0 ? "+" : p < 0 ? "−" : "±"}${Math.abs(p)} %`;
}

const MEASURED_WHAT = {
  peak_torch: ["torch max_memory_allocated", "formula weights + activations (peak_torch terms: no CUDA context, no reserve)"],
  peak_device: ["driver allocated memory", "formula weights + activations + allocator margin + context (peak_device terms)"],
  rss: ["process peak RSS", "the recorder's RSS readings while the sampler ran (/proc/self/statm on Linux, psutil elsewhere): the whole process, not a phase"],
  peak_torch_dynamic_vram: ["torch max_memory_allocated under Dynamic VRAM (weights not included)",
    "formula activations only: Dynamic VRAM keeps the weights in VRAM pages outside PyTorch's allocator"],
};

/** Measured beats modelled: the peak a recorded run of the same models, size and dtypes reached here. */
function renderMeasured(root, m) {
  const [what, formulaWhat] = MEASURED_WHAT[m.compare_to] || [m.compare_to, "formula"];
  const row = el("div", null, null, { display: "flex", alignItems: "center" });
  row.dataset.testid = "gg-estimate-measured";
  const peak = el("span", null, gib(m.peak), { width: "74px", textAlign: "right", fontWeight: "600" });
  peak.dataset.testid = "gg-estimate-measured-peak";
  row.append(el("span", null, `  ${m.phase || "sample"}, measured here`, { width: "118px", whiteSpace: "pre", flex: "1" }), peak);
  root.append(row);
  // no percentage where the server sends none: a CPU host's RSS is the whole process (note says so), not the phase
  const diff = m.diff_pct === null || m.diff_pct === undefined ? (m.note ? `: ${m.note}` : "")
    : ` · formula ${gib(m.formula)} (${m.diff_pct > 0 ? "+" : m.diff_pct < 0 ? "−" : "±"}${Math.abs(m.diff_pct)} % measured vs formula)`;
  const line = el("div", null, `  ${m.node} on ${m.device}, ${what}${diff}`, { opacity: ".8", whiteSpace: "pre-wrap", overflowWrap: "anywhere" });
  line.title = `${formulaWhat}. Run ${m.run} at ${m.when}; highest of ${m.runs} matching run(s) (same model files, latent size, dtypes)`;
  root.append(line);
}

/** Exact mode: the loaded model's traced sample step, labelled, beside the formula's figures. */
function renderExact(root, est, scale) {
  const ex = est.exact;
  const box = el("div", null, null, { marginTop: "5px", paddingTop: "4px", borderTop: "1px solid rgba(127,127,127,.35)" });
  box.dataset.testid = "gg-estimate-exact";
  root.append(box);
  if (!ex.ok) {
    const why = el("div", null, `exact: unavailable, formula shown — ${ex.reason}`, { color: OUTCOME_TEXT.tight, overflowWrap: "anywhere" });
    why.dataset.testid = "gg-estimate-exact-fallback";
    box.append(why);
    return;
  }
  box.append(el("div", null, `exact: loaded model traced on meta tensors in ${ex.seconds.toFixed(1)} s`, { fontWeight: "600" }));
  const row = el("div", null, null, { display: "flex", alignItems: "center" });
  row.dataset.exact = "sample";
  const peak = el("span", null, gib(ex.peak), { width: "74px", textAlign: "right" });
  peak.dataset.testid = "gg-estimate-exact-peak";
  row.append(el("span", null, "sample, traced", { width: "118px", whiteSpace: "pre" }),
             bar(Math.min(ex.peak, scale), scale, est.budget, false), peak);
  box.append(row);
  box.append(el("div", null, `= weights ${gib(ex.weights)} (${ex.dtype}${ex.manual_cast ? " → " + ex.manual_cast : ""}) + activations ${gib(ex.activations_peak)}`));
  const module = (ex.at.module || "").replace(/^diffusion_model\./, "");
  box.append(el("div", null, `at ${ex.at.op} in ${module}`, { opacity: ".85", overflowWrap: "anywhere" }));
  const a = ex.attention;
  const kernels = Object.entries(a.peak || {}).map(([k, v]) => `${k} ${gib(v)}`).join(", ");
  const attn = el("div", null, `attention: ${a.host} → traced ${a.traced}${kernels ? ` (${kernels})` : ""}`, { overflowWrap: "anywhere" });
  attn.title = a.why || "";
  attn.dataset.testid = "gg-estimate-exact-attention";
  box.append(attn);
  for (const c of ex.vs_formula || []) {
    const line = el("div", null, `formula, ${c.kernel}: ${gib(c.formula)} (${pct(c.error)} vs traced)`, { opacity: ".85" });
    line.title = "the formula's weights + activations against the traced peak for the same attention kernel";
    box.append(line);
  }
  // the server judges the sample phase on the traced activations when the trace ran (nodes/estimate.py exact mode)
  const basis = ex.verdict_from_trace
    ? "the sample row, peak and verdict above use these traced activations with the formula's fixed costs"
    : "the verdict above is the formula's";
  const note = el("div", null, `model only: no CUDA context or ComfyUI reserve; ${basis}`, { opacity: ".65" });
  note.dataset.testid = "gg-estimate-exact-basis";
  box.append(note);
}

/** Size the node to the whole face (like the VRAM Budget node): measure the laid-out content (layout px, not
 *  the canvas zoom). Grows the node when the face needs more; shrinks it back only while its height is the one we
 *  last grew it to (node_face.followFace, the rule of every face node; not a hand-set one). A face the frontend hides (its node off-screen) lays nothing out: it is measured
 *  when it shows again (a ResizeObserver in created), not sized from a 0 px measure (the walk: three lines and a scroll bar). */
function fitToContent(node, root, state) {
  if (!root.getClientRects().length) {
    state.pending = true;
    return;
  }
  state.pending = false;
  const last = root.lastElementChild;
  const measured = last ? last.offsetTop + last.offsetHeight + 7 : 0; // + the bottom padding and border
  const lines = (root.innerText || "").split("\n").length;
  state.fitted = Math.min(MAX_HEIGHT, measured > 7 ? measured : 14 + LINE * lines);
  followFace(node, node.computeSize()[1], WIDTH);
  node.setDirtyCanvas(true, true);
}

registerFaceNode({
  extension: "GPUGarden.FootprintEstimate",
  node: NODE,
  created(node) {
    const fit = { fitted: IDLE_HEIGHT };
    const body = el("div"); // this run's estimate (render)
    const refit = () => {
      fitToContent(node, node.__ggEstimate, fit);
      requestAnimationFrame(() => fitToContent(node, node.__ggEstimate, fit)); // once laid out at the node's width
    };
    const root = addFace(node, {
      name: "gg_estimate", testid: "gg-estimate", cls: "gg-estimate", width: WIDTH,
      idle: (face) => {
        render(body, null);
        face.append(body, graphSection(node, refit));
      },
      style: { overflowY: "auto", position: "relative" }, // the children's offsetTop is measured from here (fitToContent)
      getMinHeight: () => Math.max(40, fit.fitted + 10), // + the widget margin
      getMaxHeight: () => MAX_HEIGHT,
    });
    node.__ggEstimate = root;
    node.__ggEstimateBody = body;
    node.__ggEstimateFit = fit;
    // opening "assumptions" adds lines: grow with it
    root.addEventListener("toggle", () => fitToContent(node, root, fit), true);
    // shown again after a fit it missed while hidden: measure it now
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(() => {
        if (fit.pending && root.getClientRects().length) fitToContent(node, root, fit);
      }).observe(root);
    }
  },
  executed(node, output) {
    const est = output?.gpu_garden_estimate?.[0];
    if (est && node.__ggEstimate) {
      render(node.__ggEstimateBody, est);
      exposeForTests({ lastEstimate: est });
      fitToContent(node, node.__ggEstimate, node.__ggEstimateFit);
      // once more after the frame lays the new content out at the node's width (wrapped lines)
      requestAnimationFrame(() => fitToContent(node, node.__ggEstimate, node.__ggEstimateFit));
    }
  },
});
