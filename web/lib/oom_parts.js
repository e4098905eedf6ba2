// @ts-check
// The OOM panel's parts, built from a report as plain DOM (every server string goes in as text):
// the cause line, the "uncertain" pair of causes, the memory bar, the guide with copy buttons, and
// the other causes. No ComfyUI imports.
import { el, fmtBytes } from "./format.js";
import { renderMarkdown } from "../oom_markdown.js";

const fmtBytes2 = (n) => fmtBytes(n, 2);

export const CAUSES = {
  fragmentation: "Fragmentation: free VRAM is split into blocks too small for this request",
  "weights-exceed-vram": "The model's weights do not fit in VRAM",
  activations: "Activations for this size and batch need more VRAM than is free",
  "vae-decode": "VAE decode of the full image at once needs more VRAM than is free",
  "text-encoder": "A text encoder still holds VRAM the model needs",
  "other-process": "Another process holds VRAM this run needed",
  "kv-cache": "The KV cache does not fit",
  "host-ram": "System RAM ran out",
  leak: "Memory grows from run to run (a leak)",
  "graph-capture": "Capturing CUDA graphs needs more VRAM than is left",
  other: "Another kind of out-of-memory error",
};

/** A cause's name for this report: on a CPU device (ComfyUI --cpu, or an allocation in host RAM) the memory is RAM,
 *  not VRAM ("Another process holds RAM this run needed"). `other` means what its guide is written for on this
 *  reading (aud67b #12: a card titled only "Out of memory" beside "System RAM ran out"): the guide's title, e.g.
 *  "CUDA driver out of memory (no allocator numbers)", when triage chose one for it. */
export function causeName(id, report, fallback, guide) {
  if (id === "other" && guide?.title) return guide.title;
  const name = CAUSES[id];
  if (!name) return fallback || id;
  return ramWords(name, report);
}

/** The panel's own words ("Free VRAM") for this report's device: RAM on a CPU device. */
export function ramWords(text, report) {
  return report?.device_kind === "cpu" ? text.replace(/\bVRAM\b/g, "RAM") : text;
}

export function button(label, cls, onClick, testid) {
  const b = el("button", `gg-oom-btn ${cls || ""}`.trim(), label);
  b.type = "button";
  if (testid) b.dataset.testid = testid;
  b.addEventListener("click", (e) => {
    e.stopPropagation();
    onClick(b);
  });
  return b;
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

/**
 * The failing run's latent size in words: "latent 832×480, 81 frames (21 latent), batch 1". `frames` is latent
 * frames and `video_frames` what they decode to (null: unknown); a report stored before `video_frames` existed
 * keeps its old "×Nf".
 * @param {{width?: number, height?: number, frames?: number | null, video_frames?: number | null, batch?: number}} l
 */
export function latentText(l) {
  const out = [`latent ${l.width}×${l.height}`];
  if (!("video_frames" in l)) {
    if (l.frames > 1) out[0] += `×${l.frames}f`;
  } else if (l.video_frames > 1) {
    out.push(l.frames ? `${l.video_frames} frames (${l.frames} latent)` : `${l.video_frames} frames`);
  } else if (l.frames > 1) {
    out.push(`${l.frames} latent frames`);
  }
  out.push(`batch ${l.batch ?? 1}`);
  return out.join(", ");
}

export function causeLine(report) {
  const top = (report.causes || [])[0];
  const label = report.uncertain ? uncertainLabel(report)
    : causeName(report.cause, report, report.cause ? `Cause: ${report.cause}` : "Out of memory", report.guide);
  const evidence = top?.evidence?.[0] || (report.cause ? "" : String(report.message || "").split("\n")[0]);
  return { label, evidence };
}

export function memoryBar(n) {
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
  seg("gg-oom-used", used, `in use ${fmtBytes2(used)}`);
  seg("gg-oom-resv", resv, `reserved by PyTorch but unallocated ${fmtBytes2(resv)}`);
  seg("gg-oom-free", free, `free ${fmtBytes2(free)}`);
  wrap.append(track);
  if (requested != null) {
    // The request drawn from where the memory in use ends: what sticks out past the free part is the shortfall.
    const row = el("div", "gg-oom-reqrow");
    const r = el("div", "gg-oom-seg gg-oom-req");
    const room = scale - used;
    r.style.marginLeft = pct(used);
    r.style.width = pct(Math.min(requested, room));
    row.title = `requested ${fmtBytes2(requested)}`;
    row.append(r);
    if (requested > room) r.classList.add("gg-oom-clipped");
    wrap.append(row);
    if (free != null && requested > free) {
      wrap.append(el("div", "gg-oom-short", `Short by ${fmtBytes2(requested - free)} of free memory`));
    }
  }
  const legend = el("div", "gg-oom-legend");
  const item = (cls, label, v) => v != null && legend.append(el("span", cls, `${label} ${fmtBytes2(v)}`));
  item("l-req", "Requested", requested);
  item("l-free", "Free", free);
  item("l-resv", "Reserved-unallocated", resv);
  item("l-total", "Total", total);
  wrap.append(legend);
  const probe = Object.entries(n.source || {}).filter(([, s]) => s === "probe").map(([k]) => k.replace("_", "-"));
  if (probe.length) wrap.append(el("div", "gg-oom-src", `${probe.join(", ")} measured by the probe at failure; the rest from the error`));
  return wrap;
}

/**
 * The guide's commands in order, with every numbered fix that has no command (guide.fixes: memory/triage/guides.py
 * fixes) placed by its number among them ({label, text: null}), so "Fix 2" never shows without Fix 1; the fold-out
 * says how to do those. A report stored before `fixes` gives its commands alone.
 * @param {{commands?: Array<{label?: string, text: string}>, fixes?: Array<{label: string}>}} guide
 */
export function fixRows(guide) {
  const fixes = guide.fixes || [];
  const out = [];
  let next = 0;
  for (const c of guide.commands || []) {
    const at = fixes.findIndex((f, i) => i >= next && f.label === c.label);
    if (at >= 0) {
      for (; next < at; next++) out.push({ label: fixes[next].label, text: null });
      next = at + 1;
    }
    out.push({ label: c.label, text: c.text });
  }
  for (; next < fixes.length; next++) out.push({ label: fixes[next].label, text: null });
  return out;
}

export function guideSection(guide) {
  if (!guide) return null;
  const sec = el("div", "gg-oom-section gg-oom-guide");
  sec.dataset.testid = "gg-oom-guide";
  sec.append(el("div", "gg-oom-h", "Fix"));
  if (guide.title) sec.append(el("div", "gg-oom-guide-title", guide.title));
  for (const item of fixRows(guide)) {
    const box = el("div", "gg-oom-cmd");
    box.dataset.testid = "gg-oom-fix";
    if (item.label) box.append(el("div", "gg-oom-cmd-label", item.label));
    if (item.text == null) {
      box.classList.add("gg-oom-fix-only");
    } else {
      const row = el("div", "gg-oom-cmd-row");
      row.append(el("code", null, item.text), copyButton(String(item.text)));
      box.append(row);
    }
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

/** The causes not already shown (the first one, or the uncertain pair), folded. */
export function otherCauses(report) {
  const causes = report.causes || [];
  const shown = new Set(report.uncertain ? uncertainPair(report).map((c) => String(c.id)) : []);
  const rest = shown.size ? causes.filter((c) => !shown.has(String(c.id))) : causes.slice(1);
  if (!rest.length) return null;
  const d = el("details", "gg-oom-causes");
  d.dataset.testid = "gg-oom-other-causes";
  d.append(el("summary", null, `Other possible causes (${rest.length})`));
  const ul = el("ul");
  for (const c of rest) {
    const li = el("li");
    li.append(el("strong", null, causeName(c.id, report)));
    if (c.confidence != null) li.append(el("span", "gg-oom-conf", `${Math.round(c.confidence * 100)}%`));
    if (c.evidence?.length) li.append(el("div", "gg-oom-evidence", c.evidence.join(" · ")));
    ul.append(li);
  }
  d.append(ul);
  return d;
}

/** triage's rank.PAIR_RATIO (tests/unit/test_triage_pair.py keeps them equal): two uncertain causes fit about
 *  equally when the second's confidence is this share of the first's or more; under it the first is only the likelier.
 *  Only for a report without `pair` (one stored by an earlier build). */
export const PAIR_RATIO = 0.5;

/** Whether the uncertain result's top two fit about equally: the report's `pair` (triage's rank.pair, which
 *  nodes/oom_build.py forwards), else from their two confidences as rank.pair decides. */
export function isPair(alts, report) {
  if (typeof report?.pair === "boolean") return report.pair;
  if (alts.length < 2) return false;
  const [a, b] = alts.map((c) => Number(c.confidence));
  return a > 0 && b >= PAIR_RATIO * a;
}

/** An uncertain result names two causes that fit about equally, a likelier one with another also possible, or one
 *  cause whose sign alone is too weak (triage's rank.NOT_DETERMINED keeps a lone generic rule under the threshold). */
function uncertainLabel(report) {
  const alts = uncertainPair(report);
  if (alts.length >= 2) {
    if (isPair(alts, report)) return "Out of memory: two causes fit the evidence about equally";
    const [a, b] = alts.map((c) => causeName(c.id, report, undefined, c.guide));
    return `Out of memory, cause uncertain: ${a}? (${b} also possible)`;
  }
  const top = (report.causes || [])[0];
  const name = top ? causeName(top.id, report) : null;
  return name ? `Out of memory, cause uncertain (one weak sign): ${name}?` : "Out of memory: cause not determined";
}

/** The two causes an uncertain result names: its `alternatives`, else the top two of `causes`. */
function uncertainPair(report) {
  const alts = Array.isArray(report.alternatives) && report.alternatives.length ? report.alternatives : report.causes || [];
  return alts.slice(0, 2).map((c) => (typeof c === "string" ? { id: c } : c));
}

/** The triage result's top two causes when it says it cannot tell them apart (report.uncertain). */
export function uncertainty(report) {
  if (!report.uncertain) return null;
  const alts = uncertainPair(report);
  const box = el("div", "gg-oom-uncertainty");
  box.dataset.testid = "gg-oom-uncertain";
  const badge = el("span", "gg-oom-uncertain", "uncertain");
  badge.title = alts.length < 2 ? "One sign alone points at this cause: too weak to be sure"
    : isPair(alts, report) ? "The evidence fits more than one cause about equally; both are shown"
    : "The first cause is only more likely than the second, not certain; both are shown";
  box.append(badge);
  if (alts.length) {
    const grid = el("div", "gg-oom-alts");
    for (const c of alts) {
      const card = el("div", "gg-oom-alt");
      card.dataset.testid = "gg-oom-alt";
      card.dataset.cause = String(c.id);
      const name = causeName(c.id, report, c.label || c.id, c.guide);
      card.append(el("strong", null, name));
      if (c.confidence != null) card.append(el("span", "gg-oom-conf", `${Math.round(c.confidence * 100)}%`));
      if (c.evidence?.length) card.append(el("div", "gg-oom-evidence", c.evidence.join(" · ")));
      if (c.guide?.title && c.guide.title !== name) card.append(el("div", "gg-oom-evidence", `Fix: ${c.guide.title}`));
      grid.append(card);
    }
    box.append(grid);
  }
  return box;
}
