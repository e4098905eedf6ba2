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
