// @ts-check
// The stored out-of-memory reports (GET /gpu_garden/oom/reports), listed newest first.
import { api } from "../../../scripts/api.js";
import { el } from "./format.js";
import { causeLine } from "./oom_parts.js";

export const ROUTE = "/gpu_garden/oom/reports";

/** Up to `limit` stored reports, newest first; throws with the status when the route fails. */
export async function fetchReports(limit = 50) {
  const res = await api.fetchApi(`${ROUTE}?limit=${limit}`);
  if (!res.ok) throw new Error(`${ROUTE} answered ${res.status}`);
  return (await res.json()).reports || [];
}

/** Fill `body` with the list; `onPick(report)` when one is clicked. */
export async function renderHistory(body, onPick) {
  let reports;
  try {
    reports = await fetchReports(50);
  } catch (e) {
    body.append(el("div", "gg-oom-status", `Could not read reports: ${e?.message || e}`));
    return;
  }
  if (!reports.length) body.append(el("div", "gg-oom-status", "No out-of-memory reports yet."));
  const ul = el("ul", "gg-oom-hist");
  ul.dataset.testid = "gg-oom-history-list";
  for (const r of reports) {
    const li = el("li");
    li.append(el("div", null, `${r.node?.title || r.node?.type || "node"} #${r.node?.id ?? "?"} — ${causeLine(r).label}`));
    li.append(el("div", "t", r.timestamp ? new Date(r.timestamp * 1000).toLocaleString() : ""));
    li.addEventListener("click", () => onPick(r));
    ul.append(li);
  }
  body.append(ul);
}
