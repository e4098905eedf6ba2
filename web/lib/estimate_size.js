// @ts-check
// The Footprint Estimate's size line: the size estimated, where it came from, and for LTX-2's two stages (the node's
// latent_upscale / upscale_model inputs, memory/estimate/latent_upscale.py) the stage-1 size it was upscaled from.

/**
 * @param {{width: number, height: number, frames: number, size_from?: string,
 *          stage1?: {width: number, height: number} | null}} est
 * @returns {string}
 */
export function sizeText(est) {
  const frames = est.frames > 1 ? `×${est.frames}f` : "";
  const dims = `${est.width}×${est.height}${frames}`;
  if (est.stage1) {  // the connected latent (or the widgets) is stage 1's; stage 2 samples and decodes dims
    const from = est.size_from === "latent" ? "the connected latent" : "width × height";
    return `two stages: ${from} ${est.stage1.width}×${est.stage1.height}${frames} upscaled to ${dims} (latent upscale)`;
  }
  // a connected latent's size is used, not the width/height widgets (ux21b: they showed 1024 beside a 512×512 run)
  return est.size_from === "latent" ? `size from the connected latent: ${dims} (width/height widgets not used)` : dims;
}

/**
 * The open graph's size line (the workflow route's answer): where the size came from, and for LTX-2's two stages the
 * stage-1 size it was upscaled from (the label says where that one came from: the node's size, an assumption).
 * @param {{width: number, height: number, frames: number, size_from?: string, size_assumed?: string | null,
 *          size_uncertain?: {node: string, type: string}[], stage1?: {width: number, height: number} | null}} a
 * @returns {string}
 */
export function graphSizeText(a) {
  const frames = a.frames > 1 ? `×${a.frames}f` : "";
  const from = (a.size_from === "body" ? " (the node's size: no latent node)" : a.size_from === "assumed" ? ` (${a.size_assumed})` : "")
    + (a.size_uncertain?.length ? ` (uncertain: ${a.size_uncertain.map((u) => u.node).join(", ")})` : ""); // latent_custom.py
  if (a.stage1) return `two stages: ${a.stage1.width}×${a.stage1.height}${frames}${from} upscaled to ${a.width}×${a.height}${frames} (latent upscale)`;
  return `${a.width}×${a.height}${frames}${from}`;
}
