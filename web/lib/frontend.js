// @ts-check
// The public extension API of the ComfyUI frontend, as GPU Garden uses it, with the fallbacks that keep
// 1.35 (bundled with ComfyUI 0.8.0) and 1.58 working: settings, sidebar tab, toasts, commands, and the
// websocket client id. Everything here goes through app.extensionManager or api; LiteGraph and DOM
// internals live in graph_adapter.js. A missing API logs one warning (warnOnce) instead of a silent no-op.
import { app } from "../../../scripts/app.js";
import { api } from "../../../scripts/api.js";
import { warnOnce } from "./graph_adapter.js";

/** app.extensionManager, or throws: every supported frontend has it once setup() runs. */
function manager() {
  const m = app.extensionManager;
  if (!m) throw new Error("app.extensionManager is not available yet (called before setup?)");
  return m;
}

/** A setting's value (extensionManager.setting.get); `fallback` when unset or before setup. */
export function getSetting(id, fallback) {
  const s = app.extensionManager?.setting;
  if (!s || typeof s.get !== "function") {
    warnOnce("extensionManager.setting");
    return fallback;
  }
  const v = s.get(id);
  return v === undefined || v === null ? fallback : v;
}

/** Set a setting (extensionManager.setting.set; persisted by the frontend). */
export async function setSetting(id, value) {
  return manager().setting.set(id, value);
}

/** Register a custom sidebar tab: extensionManager.sidebarTab.registerSidebarTab (1.35 and 1.58), else the
 *  deprecated top-level registerSidebarTab. */
export function registerSidebarTab(tab) {
  const m = manager();
  if (typeof m.sidebarTab?.registerSidebarTab === "function") return m.sidebarTab.registerSidebarTab(tab);
  warnOnce("extensionManager.sidebarTab");
  return m.registerSidebarTab(tab);
}

/** Open a sidebar tab, or close it when it is open and `toggle` is set. */
export function showSidebarTab(id, { toggle = false } = {}) {
  const store = manager().sidebarTab;
  if (typeof store?.toggleSidebarTab === "function") {
    if (toggle || store.activeSidebarTabId !== id) store.toggleSidebarTab(id);
    return;
  }
  warnOnce("extensionManager.sidebarTab.toggleSidebarTab");
  return runCommand(`Workspace.ToggleSidebarTab.${id}`);
}

/** Run a registered command by id. */
export function runCommand(id) {
  return manager().command.execute(id);
}

/** A toast through extensionManager.toast.add (the call both versions share); always with a lifetime. */
export function toast(severity, summary, detail, life = 5000) {
  try {
    manager().toast.add({ severity, summary, detail, life });
  } catch (err) {
    warnOnce("extensionManager.toast", err);
    console.info(`[GPU Garden] ${summary}: ${detail}`);
  }
}

/** This page's websocket client id, once the server has sent it (null before). */
export function clientId() {
  return api.clientId || null;
}
