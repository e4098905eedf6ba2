// @ts-check
// GPU Garden shared display helpers: el() (the one DOM helper), fmtBytes() (the one byte formatter),
// and the owner-split stacked memory bar. Pure DOM, no ComfyUI imports, so any feature can
// `import { ... } from "./lib/format.js"` (ComfyUI imports every .js under web/ as an extension too;
// this module only defines things).

/**
 * The one element helper: el("div", "cls", "text", { color: "red" }). Text always goes in as a text
 * node (never parsed as HTML); cls, text and style are optional (null to skip).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string | null} [cls]
 * @param {unknown} [text]
 * @param {Partial<CSSStyleDeclaration> | null} [style]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, cls = null, text = null, style = null) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== null && text !== undefined) e.textContent = String(text);
  if (style) Object.assign(e.style, style);
  return e;
}

/** Merge `props` into window.__gpuGarden: the page's debug/test handle (budget state, OOM panel, ...). */
export function exposeForTests(props) {
  const w = /** @type {any} */ (window);
  w.__gpuGarden = Object.assign(w.__gpuGarden || {}, props);
}

export const GiB = 1024 ** 3;
export const MiB = 1024 ** 2;

/**
 * The one byte formatter: "12.3 GiB", "312.0 MiB", "5.0 KiB" (`digits` after the point in every unit but bytes),
 * "12 B"; "—" for null/undefined/NaN (not measured). With digits 2 it writes what the server's memory/units.py
 * fmt_bytes writes ("312.00 MiB"), so a figure in server text and the same figure formatted here read alike.
 * @param {number | null | undefined} n
 */
export function fmtBytes(n, digits = 1) {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  const a = Math.abs(n);
  const unit = a >= 1024 * GiB ? ["TiB", 1024 * GiB] : a >= GiB ? ["GiB", GiB] : a >= MiB ? ["MiB", MiB] : a >= 1024 ? ["KiB", 1024] : null;
  return unit ? `${(n / unit[1]).toFixed(digits)} ${unit[0]}` : `${n} B`;
}

/**
 * Server text for a face that wraps ("235.84 MiB -> 0 B"): a number and its byte unit joined by a no-break space, so a
 * line never breaks between "0" and "B".
 * @param {string} text
 */
export function keepUnits(text) {
  return String(text).replace(/(\d) (B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)(?![\w])/g, "$1\u00a0$2");
}

/** Bare GiB number for dense rows: "12.34".
 * @param {number | null | undefined} n */
export function fmtGiB(n, digits = 2) {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return (n / GiB).toFixed(digits);
}

export function fmtTime(epochSeconds) {
  if (!epochSeconds) return "—";
  return new Date(epochSeconds * 1000).toLocaleTimeString([], { hour12: false });
}

// Segment colours; free memory takes its colour from how little of it is left.
export const COLORS = {
  models: ["#4f8cff", "#7aa7ff", "#3a6fd8", "#9dbdff", "#2f5cb8"],
  torch_other: "#a371f7",
  reserved_unallocated: "#d2a8ff",
  this_process_other: "#2bb3a3",
  other_processes: "#8b949e",
  unattributed: "#57606a",
};
export const LEVEL_COLORS = { ok: "#3fb950", warn: "#d29922", low: "#f85149", unknown: "#6e7681" };

/**
 * A status colour for TEXT: a mid hue mixed half and half with the text colour around it (currentColor), so the word
 * reads on every palette. A bright hue alone (#4ade80) is near the light palette's grey node face (#C9C9C9) and
 * unreadable there; mixed with that palette's dark text it darkens, with a dark palette's light text it brightens, and
 * it follows a palette change without a reload. Bars and dots keep the plain hues above.
 * @param {string} hue
 */
export const textTone = (hue) => `color-mix(in srgb, ${hue} 50%, currentColor)`;
export const TEXT_TONES = { ok: textTone("#16a34a"), warn: textTone("#d97706"), bad: textTone("#dc2626"), muted: textTone("#6b7280") };
export const LEVEL_TEXT = { ok: TEXT_TONES.ok, warn: TEXT_TONES.warn, low: TEXT_TONES.bad, unknown: TEXT_TONES.muted };

/** ok / warn / low by the share (and amount) of memory still free. */
export function freeLevel(dev) {
  if (!dev || dev.total == null || dev.free == null || dev.total <= 0) return "unknown";
  const share = dev.free / dev.total;
  if (share < 0.1 || dev.free < 512 * MiB) return "low";
  if (share < 0.25) return "warn";
  return "ok";
}

export function deviceLabel(dev) {
  if (dev.backend === "cpu") return "RAM";
  const kind = { cuda: "GPU", rocm: "GPU", mps: "GPU", xpu: "XPU" }[dev.backend] || dev.backend.toUpperCase();
  return `${kind} ${dev.index}`;
}

/**
 * The one name a user reads for a loaded model, on the bar, in the sidebar and in the OOM panel: the server's label
 * (nodes/host_models.model_label: "text encoder (SD1 CLIP)", "VAE"; the unload report's lines use the same), else its
 * class name ("SD1ClipModel") from a snapshot or report made before labels.
 * @param {{ label?: string | null, name?: string | null } | null | undefined} m
 */
export function modelLabel(m) {
  return String(m?.label || m?.name || "model");
}

/** The bar's parts in drawing order, bytes each; numbers the backend cannot measure are left out. */
export function segments(dev) {
  const out = [];
  const models = dev.models || [];
  let modelBytes = 0;
  models.forEach((m, i) => {
    modelBytes += m.bytes || 0;
    const partial = m.partial ? " (partially loaded)" : "";
    const label = modelLabel(m);
    out.push({ key: `model:${i}`, kind: "model", label, bytes: m.bytes || 0,
      color: COLORS.models[i % COLORS.models.length], title: `${label}: ${fmtBytes(m.bytes, 2)}${partial}` });
  });
  const add = (key, label, short, bytes, hint) => {
    if (bytes == null) return;
    out.push({ key, kind: key, label, short, bytes: Math.max(0, bytes), color: COLORS[key],
      title: `${label}: ${fmtBytes(Math.max(0, bytes), 2)}${hint ? ` (${hint})` : ""}` });
  };
  const cpu = dev.backend === "cpu";
  if (dev.torch_allocated != null) add("torch_other", "other PyTorch memory", "PyTorch other", dev.torch_allocated - modelBytes,
    "tensors outside the loaded models: activations, latents, caches");
  add("reserved_unallocated", "reserved by PyTorch, unallocated", "reserved", dev.reserved_unallocated,
    "held by PyTorch's caching allocator, not in use: fragmentation or cache");
  add("this_process_other", cpu ? "this process, outside the models" : "this process, outside PyTorch",
    cpu ? "this process" : "non-PyTorch", dev.this_process_other,
    cpu ? "resident memory of ComfyUI besides the models" : "CUDA context, cuBLAS/cuDNN workspaces, other libraries");
  add("other_processes", "other processes", "other apps", dev.other_processes);
  if (dev.total != null && dev.free != null) {
    const used = dev.total - dev.free;
    const counted = out.reduce((s, p) => s + p.bytes, 0);
    const rest = used - counted;
    if (rest > dev.total * 0.005) {
      add("unattributed", "used, owner not measured", "unattributed", rest,
        "driver reserve, or owners this backend cannot tell apart");
    }
    const level = freeLevel(dev);
    out.push({ key: "free", kind: "free", label: "free", short: "free", bytes: Math.max(0, dev.free), color: LEVEL_COLORS[level],
      title: `free: ${fmtBytes(dev.free, 2)} of ${fmtBytes(dev.total, 2)}` });
  }
  return out;
}

const STYLE_ID = "gpu-garden-format-css";
const CSS = `
.gg-bar{position:relative;display:flex;width:100%;height:14px;border-radius:4px;overflow:hidden;
  background:rgba(127,127,127,.18);box-shadow:inset 0 0 0 1px rgba(127,127,127,.25)}
.gg-bar>span{height:100%;min-width:0;transition:width .35s ease,background-color .35s ease;flex:none}
.gg-bar>span+span{box-shadow:inset 1px 0 0 rgba(0,0,0,.35)}
.gg-bar>span[data-kind=free]{opacity:.32}
.gg-bar>span[data-kind=unattributed]{background-image:repeating-linear-gradient(135deg,rgba(255,255,255,.12) 0 3px,transparent 3px 6px)}
.gg-bar>span[data-kind=reserved_unallocated]{background-image:repeating-linear-gradient(135deg,rgba(0,0,0,.18) 0 3px,transparent 3px 6px)}
.gg-legend{display:flex;flex-wrap:wrap;gap:2px 10px;margin-top:4px;font-size:10.5px;line-height:14px;opacity:.9}
.gg-legend>span{white-space:nowrap;display:inline-flex;align-items:center;gap:4px}
.gg-legend i{display:inline-block;width:8px;height:8px;border-radius:2px;flex:none}
.gg-legend b{font-weight:600;font-variant-numeric:tabular-nums}
`;

export function ensureStyles(extraId, extraCss) {
  if (!document.getElementById(STYLE_ID)) {
    const s = el("style", null, CSS);
    s.id = STYLE_ID;
    document.head.append(s);
  }
  if (extraId && !document.getElementById(extraId)) {
    const s = el("style", null, extraCss);
    s.id = extraId;
    document.head.append(s);
  }
}

/** A stacked bar element; call .update(dev) on each snapshot (reuses its children, no rebuild). */
export function createBar({ legend = true } = {}) {
  ensureStyles();
  const root = /** @type {HTMLDivElement & { update: (dev: any) => void }} */ (el("div"));
  const bar = el("div", "gg-bar");
  bar.setAttribute("role", "img");
  root.append(bar);
  let leg = null;
  if (legend) {
    leg = el("div", "gg-legend");
    root.append(leg);
  }
  const parts = new Map();
  root.update = (dev) => {
    const segs = segments(dev);
    const sum = segs.reduce((s, p) => s + p.bytes, 0);
    const scale = Math.max(dev.total || 0, sum) || 1;
    const seen = new Set();
    segs.forEach((p, i) => {
      seen.add(p.key);
      let part = parts.get(p.key);
      if (!part) {
        part = el("span");
        part.dataset.kind = p.kind;
        parts.set(p.key, part);
      }
      if (bar.children[i] !== part) bar.insertBefore(part, bar.children[i] || null);
      part.dataset.label = p.label;
      part.title = p.title;
      part.style.width = `${(100 * p.bytes) / scale}%`;
      part.style.backgroundColor = p.color;
    });
    for (const [key, part] of parts) {
      if (!seen.has(key)) {
        part.remove();
        parts.delete(key);
      }
    }
    bar.setAttribute("aria-label", segs.map((p) => p.title).join("; "));
    if (leg) {
      /** @type {Array<[string, string, number, string]>} */
      const items = [];
      const modelBytes = segs.filter((p) => p.kind === "model").reduce((s, p) => s + p.bytes, 0);
      const nModels = segs.filter((p) => p.kind === "model").length;
      if (nModels) items.push([COLORS.models[0], nModels === 1 ? "model" : `${nModels} models`, modelBytes, segs.find((p) => p.kind === "model").title]);
      for (const p of segs) {
        if (p.kind === "model" || (p.kind !== "free" && p.bytes < (dev.total || 0) * 0.002)) continue;
        items.push([p.color, p.short || p.label, p.bytes, p.title]);
      }
      leg.replaceChildren(...items.map(([color, label, bytes, title]) => {
        const s = el("span");
        s.title = title;
        s.append(el("i", null, null, { backgroundColor: color }), document.createTextNode(label + " "), el("b", null, `${fmtGiB(bytes)} GiB`));  // every number a user reads carries its unit
        return s;
      }));
    }
  };
  return root;
}
