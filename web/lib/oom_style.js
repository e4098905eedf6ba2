// @ts-check
// The OOM panel's stylesheet (one <style> element, added on first open). Its surfaces and text take the ComfyUI
// palette's CSS variables (--comfy-menu-bg, --fg-color, --descrip-text, --comfy-input-bg, --input-text,
// --border-color: set by the 1.3x and 1.5x frontends alike), so it follows light and dark palettes and a change
// without a reload; the fallbacks are the dark palette's. Status colours are format.js text tones.
import { ensureStyles, textTone, TEXT_TONES } from "./format.js";

const BG = "var(--comfy-menu-bg, #1d1f24)";
const FG = "var(--fg-color, #e6e6e6)";
const DIM = "var(--descrip-text, #9aa0ab)";
const FIELD = "var(--comfy-input-bg, #111317)";
const FIELD_FG = "var(--input-text, #e6e6e6)";
const LINE = "var(--border-color, #3a3d45)";
const RAISED = `color-mix(in srgb, ${FG} 8%, ${BG})`;    // a card or hover a step off the panel, opaque
const TRACK = `color-mix(in srgb, ${FG} 14%, ${BG})`;

export const CSS_TEXT = `
.gg-oom-panel{position:fixed;z-index:1000;width:380px;max-height:min(72vh,640px);display:flex;flex-direction:column;
  background:${BG};color:${FG};border:1px solid ${LINE};border-left:3px solid #e5484d;border-radius:10px;
  box-shadow:0 12px 32px rgba(0,0,0,.45);font:13px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;pointer-events:auto}
.gg-oom-panel *{box-sizing:border-box}.gg-oom-panel:focus{outline:none}
.gg-oom-arrow{position:absolute;width:0;height:0;border:7px solid transparent}
.gg-oom-panel.gg-right .gg-oom-arrow{left:-17px;border-right:10px solid #e5484d}
.gg-oom-panel.gg-left .gg-oom-arrow{right:-17px;border-left:10px solid ${LINE}}
.gg-oom-panel.gg-docked .gg-oom-arrow{display:none}
.gg-oom-head{display:flex;align-items:center;gap:8px;padding:10px 12px 6px}
.gg-oom-badge{background:#dc2626;color:#fff;font-weight:700;font-size:11px;letter-spacing:.04em;border-radius:4px;padding:1px 6px}
.gg-oom-where{flex:1;min-width:0;color:${DIM};white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.gg-oom-icon{background:none;border:0;color:${DIM};cursor:pointer;font-size:12px;padding:4px 6px;border-radius:4px;line-height:1}
.gg-oom-icon:hover{background:${RAISED};color:${FG}}
.gg-oom-body{overflow:auto;padding:0 12px 12px}
.gg-oom-cause{font-size:14px;font-weight:600;color:${FG};margin:2px 0 2px}
.gg-oom-evidence{color:${DIM};font-size:12px;margin-bottom:8px}
.gg-oom-bar{margin:8px 0 4px}
.gg-oom-track{position:relative;height:12px;border-radius:6px;background:${TRACK};overflow:hidden;display:flex}
.gg-oom-seg{height:100%}
.gg-oom-used{background:#6b7280}.gg-oom-resv{background:repeating-linear-gradient(45deg,#d97706 0 4px,#b45309 4px 8px)}
.gg-oom-free{background:#22a06b}.gg-oom-req{background:#4f8ff7}
.gg-oom-reqrow{position:relative;height:8px;margin-top:4px;border-radius:4px;background:${TRACK};display:flex;align-items:center}
.gg-oom-reqrow .gg-oom-req{border-radius:4px}
.gg-oom-reqrow .gg-oom-clipped{background:linear-gradient(90deg,#4f8ff7 70%,#e5484d);border-radius:4px 0 0 4px}
.gg-oom-legend{display:flex;flex-wrap:wrap;gap:2px 14px;margin-top:6px;font-size:12px;color:${FG}}
.gg-oom-legend span{white-space:nowrap}
.gg-oom-short{color:${TEXT_TONES.bad};font-size:12px;margin-top:4px}
.gg-oom-legend span::before{content:"";display:inline-block;width:8px;height:8px;border-radius:2px;margin-right:6px;vertical-align:0}
.gg-oom-legend .l-req::before{background:#4f8ff7}.gg-oom-legend .l-free::before{background:#22a06b}
.gg-oom-legend .l-resv::before{background:#d97706}.gg-oom-legend .l-total::before{background:#6b7280}
.gg-oom-src{color:${DIM};font-size:11px;margin-top:2px}
.gg-oom-section{margin-top:10px;border-top:1px solid ${LINE};padding-top:8px}
.gg-oom-h{font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:${DIM};margin-bottom:4px}
.gg-oom-guide-title{font-weight:600;color:${FG};margin-bottom:4px}
.gg-oom-cmd{display:flex;flex-direction:column;gap:3px;margin:6px 0}
.gg-oom-cmd-label{color:${FG};font-size:12px}
.gg-oom-cmd-row{display:flex;gap:6px;align-items:flex-start}
.gg-oom-cmd code,.gg-oom-md pre{flex:1;min-width:0;display:block;background:${FIELD};border:1px solid ${LINE};border-radius:6px;
  padding:5px 7px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;color:${FIELD_FG};white-space:pre-wrap;word-break:break-all;margin:0}
.gg-oom-md{font-size:12.5px;color:${FG}}.gg-oom-md p{margin:4px 0}.gg-oom-md ul,.gg-oom-md ol{margin:4px 0;padding-left:18px}
.gg-oom-md h4,.gg-oom-md h5,.gg-oom-md h6{margin:8px 0 2px;color:${FG};font-size:13px}
.gg-oom-md code{background:${FIELD};color:${FIELD_FG};border-radius:4px;padding:0 3px;font:12px ui-monospace,Menlo,monospace}
.gg-oom-md pre{position:relative;margin:6px 0;padding-right:56px}.gg-oom-md pre code{background:none;padding:0}
.gg-oom-md pre .gg-oom-copy{position:absolute;right:4px;top:4px}
.gg-oom-md a{color:${textTone("#2563eb")}}
.gg-oom-btn{background:${FIELD};color:${FIELD_FG};border:1px solid ${LINE};border-radius:6px;padding:4px 10px;cursor:pointer;font:inherit;font-size:12px;white-space:nowrap}
.gg-oom-btn:hover{background:${RAISED};border-color:${DIM}}.gg-oom-btn:disabled{opacity:.6;cursor:default}
.gg-oom-btn.primary{background:#2563eb;border-color:#2563eb;color:#fff}.gg-oom-btn.primary:hover{background:#1d4ed8}
.gg-oom-copy{padding:2px 8px;font-size:11px}
.gg-oom-actions{display:flex;flex-wrap:wrap;gap:6px;margin-top:10px}
.gg-oom-status{color:${DIM};font-size:12px;margin-top:6px;min-height:1em}
.gg-oom-panel details{margin-top:8px}.gg-oom-panel summary{cursor:pointer;color:${DIM};font-size:12px}
.gg-oom-causes li{margin:3px 0}.gg-oom-conf{color:${DIM};font-size:11px;margin-left:4px}
.gg-oom-msg{white-space:pre-wrap;word-break:break-word;background:${FIELD};border-radius:6px;padding:6px;font:11.5px/1.4 ui-monospace,Menlo,monospace;color:${FIELD_FG};max-height:160px;overflow:auto}
.gg-oom-meta{color:${DIM};font-size:11px;margin-top:8px}
.gg-oom-hist{list-style:none;margin:0;padding:0}
.gg-oom-hist li{padding:6px 8px;border-radius:6px;cursor:pointer;border:1px solid transparent}
.gg-oom-hist li:hover{background:${RAISED};border-color:${LINE}}
.gg-oom-hist .t{color:${DIM};font-size:11px}
.gg-oom-uncertain{display:inline-block;background:color-mix(in srgb, #d97706 16%, ${BG});color:${TEXT_TONES.warn};border:1px solid color-mix(in srgb, #d97706 50%, ${BG});border-radius:4px;font-size:11px;font-weight:600;padding:0 6px;margin:2px 0 4px}
.gg-oom-alts{display:grid;grid-template-columns:1fr 1fr;gap:8px;margin:4px 0 8px}
.gg-oom-alt{background:${RAISED};border:1px solid ${LINE};border-radius:6px;padding:6px 8px;min-width:0}
.gg-oom-alt strong{display:block;color:${FG};font-size:12.5px}
.gg-oom-alt .gg-oom-evidence{margin:2px 0 0}
`;

export function ensureStyle() {
  ensureStyles("gg-oom-style", CSS_TEXT);
}
