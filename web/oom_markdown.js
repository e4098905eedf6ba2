// @ts-check
// A small markdown renderer for triage guides that builds DOM nodes directly: every piece of source
// text lands in a text node, so nothing in a guide (or anything a server sends) can become markup.
// Supported: headings, paragraphs, lists, inline code, fenced code blocks, bold, italic, and links
// whose target is http(s). Anything else (raw HTML, images, other URL schemes) is shown as text.
import { el } from "./lib/format.js";

const INLINE = /(`+)([\s\S]*?)\1|\*\*([^*]+?)\*\*|(?<!\w)__([^_]+?)__(?!\w)|\*([^*\s][^*]*?)\*|(?<!\w)_([^_\s][^_]*?)_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)/g;
const SAFE_URL = /^https?:\/\/[^\s<>"']+$/i;


export function renderInline(text, parent, depth = 0) {
  if (depth > 4) {
    parent.append(document.createTextNode(text));
    return parent;
  }
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    if (m[1]) parent.append(el("code", null, m[2].trim() || m[2]));
    else if (m[3] || m[4]) renderInline(m[3] || m[4], parent.appendChild(el("strong")), depth + 1);
    else if (m[5] || m[6]) renderInline(m[5] || m[6], parent.appendChild(el("em")), depth + 1);
    else if (m[7]) {
      if (SAFE_URL.test(m[8])) {
        const a = el("a");
        a.href = m[8];
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        renderInline(m[7], a, depth + 1);
        parent.append(a);
      } else {
        renderInline(m[7], parent, depth + 1); // unsafe target: keep the words, drop the link
      }
    }
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
  return parent;
}

function stripFrontMatter(md) {
  if (!md.startsWith("---\n")) return md;
  const end = md.indexOf("\n---", 4);
  return end === -1 ? md : md.slice(md.indexOf("\n", end + 1) + 1);
}

const LIST_ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;

/**
 * markdown -> DocumentFragment. onCode(preElement, codeText) lets the caller add e.g. a copy button.
 * @param {unknown} md
 * @param {{ onCode?: (pre: HTMLElement, text: string) => void }} [opts]
 */
export function renderMarkdown(md, { onCode } = {}) {
  const frag = document.createDocumentFragment();
  const lines = stripFrontMatter(String(md ?? "").replace(/\r\n?/g, "\n")).split("\n");
  let para = null;
  /** @type {{ ordered: boolean, node: HTMLElement, last: HTMLElement | null } | null} */
  let list = null;
  const endPara = () => {
    if (para) renderInline(para.join(" "), frag.appendChild(el("p")));
    para = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)\s*$/);
    if (fence) {
      endPara();
      list = null;
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      const pre = el("pre");
      const code = el("code", null, body.join("\n"));
      if (fence[2]) code.dataset.lang = fence[2];
      pre.append(code);
      frag.append(pre);
      onCode?.(pre, body.join("\n"));
      continue;
    }
    const heading = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      endPara();
      list = null;
      const level = Math.min(6, heading[1].length + 3);
      renderInline(heading[2], frag.appendChild(el(/** @type {"h4" | "h5" | "h6"} */ (`h${level}`))));
      continue;
    }
    const item = line.match(LIST_ITEM);
    if (item) {
      endPara();
      const ordered = /\d/.test(item[2]);
      if (!list || list.ordered !== ordered) {
        list = { ordered, node: frag.appendChild(el(ordered ? "ol" : "ul")), last: null };
      }
      list.last = renderInline(item[3], list.node.appendChild(el("li")));
      continue;
    }
    if (!line.trim()) {
      endPara();
      list = null;
      continue;
    }
    if (list && /^\s{2,}\S/.test(line)) {
      list.last.append(document.createTextNode(" "));
      renderInline(line.trim(), list.last);
      continue;
    }
    list = null;
    (para ??= []).push(line.trim());
  }
  endPara();
  return frag;
}
