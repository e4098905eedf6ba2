// @ts-check
// Unload Text Encoders: the node shows its measured report on its face (a DOM widget that never
// serializes), and the setting GPUGarden.AutoUnloadTextEncoders turns on the automatic mode. The server
// reads that setting from ComfyUI's own settings store; POST /gpu_garden/auto_unload only tells it
// which user's settings to follow (matters under --multi-user).
import { api } from "../../scripts/api.js";
import { el, exposeForTests, keepUnits, TEXT_TONES } from "./lib/format.js";
import { clientId, toast } from "./lib/frontend.js";
import { addFace, followFace, registerFaceNode } from "./lib/node_face.js";

const NODE = "GPUGardenUnloadTextEncoders";
const SETTING = "GPUGarden.AutoUnloadTextEncoders";
const LINE_HEIGHT = 15;
const MAX_HEIGHT = 260;
const WIDTH = 360;
const IDLE_TEXT = "Runs after encoding, before the sampler: the memory it frees, measured, shows here.";

function render(face, report) {
  face.replaceChildren();
  if (!report) {
    face.append(el("div", "gg-unload-idle", IDLE_TEXT));
    return;
  }
  // green only for memory someone gets back: an encoder on the CPU leaves ComfyUI's list and stays in host RAM
  const freed = report.freed_bytes > 0 && !report.in_host_ram;
  face.append(el("div", "gg-unload-summary", keepUnits(report.summary), {
    fontWeight: "600", color: freed ? TEXT_TONES.ok : "inherit" }));
  for (const text of (report.lines || []).slice(1)) face.append(el("div", null, keepUnits(text)));
}

// Lines long enough to wrap at the node's width take two rows.
function wrapped(face) {
  let extra = 0;
  for (const child of face.children) extra += child.textContent.length > 52 ? 1 : 0;
  return extra;
}

// The server maps this page's client id to its user, so automatic unload follows whoever queued the prompt.
function followUser() {
  const id = clientId();
  if (!id) return; // sent again on "status" once the socket has named this page
  api.fetchApi("/gpu_garden/auto_unload", { method: "POST", body: JSON.stringify({ client_id: id }) })
    .catch((err) => console.warn("[GPU Garden] could not tell the server which settings to follow", err));
}

function announce(report) {
  if (!report) return;
  exposeForTests({ lastAutoUnload: report });
  toast("info", "GPU Garden: text encoders unloaded", report.summary, 5000);
}

registerFaceNode({
  extension: "GPUGarden.UnloadTextEncoders",
  node: NODE,
  settings: [
    {
      id: SETTING,
      name: "Unload text encoders before every sampler (no node needed)",
      category: ["GPU Garden", "Text encoders", "Automatic unload"],
      type: "boolean",
      defaultValue: false,
      tooltip: "Before any sampler loads its model, text encoders on the same device are offloaded to RAM. " +
               "A changed prompt reloads them; an unchanged one reuses ComfyUI's cached conditioning.",
      onChange: () => followUser(),
    },
  ],
  async setup() {
    api.addEventListener("gpu_garden.auto_unload", (e) => announce(e.detail?.report));
    let told = null;
    const tell = () => { if (clientId() && clientId() !== told) { told = clientId(); followUser(); } };
    api.addEventListener("status", tell);
    api.addEventListener("reconnected", () => { told = null; tell(); });
    tell();
  },
  created(node) {
    /** @type {HTMLDivElement | null} */
    let face = null;  // the frontend may ask for the height while the widget is being added
    face = addFace(node, {
      name: "gg_unload_report", testid: "gg-unload-report", width: WIDTH, cls: "gg-unload-report",
      style: { whiteSpace: "pre-wrap", overflowY: "auto", position: "relative" }, // offsetTop is measured from here
      idle: (root) => render(root, null),
      getMinHeight: () => Math.min(MAX_HEIGHT, node.__ggUnloadFitted
        || 14 + LINE_HEIGHT * Math.max(2, face ? face.childElementCount + wrapped(face) : 0)),
      getMaxHeight: () => MAX_HEIGHT,
    });
    node.__ggUnloadReport = face;
  },
  configured(node) {
    // the report is gone (the face never serializes); node_face.js has shrunk the node if a report grew it (fixW2 walk:
    // an empty box 150 px tall) and kept a height the user set (fixU)
    node.__ggUnloadFitted = 0;
  },
  executed(node, output) {
    const report = output?.gpu_garden_unload?.[0];
    if (!report || !node.__ggUnloadReport) return;
    const face = node.__ggUnloadReport;
    render(face, report);
    // the rows as laid out at the node's width (a long summary wraps to several), + the padding and widget margin
    const last = /** @type {HTMLElement | null} */ (face.lastElementChild);
    node.__ggUnloadFitted = face.isConnected && last ? last.offsetTop + last.offsetHeight + 7 + 10 : 0;
    // a height we grew it to follows this report (a shorter one shrinks it); a hand-set one is kept (followFace)
    followFace(node, node.computeSize()[1], WIDTH);
    node.setDirtyCanvas(true, true);
  },
});
