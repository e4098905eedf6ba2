// @ts-check
// The "GPU memory" sidebar tab. Its content is the sections other files register with
// registerSidebarSection() (web/lib/sidebar.js): the devices by owner (budget.js), the pack's health
// (health.js), and any feature's own part.
import { app } from "../../scripts/app.js";
import { el, ensureStyles } from "./lib/format.js";
import { registerSidebarTab } from "./lib/frontend.js";
import { mountSections, SIDEBAR_TAB_ID, unmountSections } from "./lib/sidebar.js";

const CSS = `
.gg-side{padding:12px;display:flex;flex-direction:column;gap:14px;font:12px/1.4 var(--comfy-font, Inter, system-ui, sans-serif);color:var(--fg-color, #ddd)}
.gg-side h3{margin:0;font-size:13px}
.gg-side h4{margin:0 0 4px;font-size:12px}
.gg-side ul{margin:4px 0 0;padding-left:16px}
.gg-side li{font-size:11px}
.gg-side-section:empty{display:none}
`;

app.registerExtension({
  name: "GPUGarden.SidebarTab",
  async setup() {
    registerSidebarTab({
      id: SIDEBAR_TAB_ID,
      icon: "pi pi-chart-bar",
      title: "GPU memory",
      tooltip: "GPU Garden: memory by owner",
      type: "custom",
      render(container) {
        ensureStyles("gpu-garden-sidebar-css", CSS);
        const root = el("div", "gg-side");
        root.dataset.testid = "gpu-garden-sidebar";
        container.replaceChildren(root);
        mountSections(root);
      },
      destroy() {
        unmountSections();
      },
    });
  },
});
