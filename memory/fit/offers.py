"""The result-changing options Fit to Card only offers, each with the figure that would fit and where to apply it.

An offer is {"id", "label", "saving" (bytes), "kind": "offer", "value", "apply"}. Nothing here is ever applied
by the server: the web extension (web/lib/fit_offers.js) shows a button, and only a click changes the graph's
widgets, with an Undo that restores the previous values exactly. `apply` says where that widget is:

    {"from": "latent" | "model" (a Fit to Card input: walk upstream from it) | "vae_out" (nodes its vae output feeds),
     "through": "same" (follow links of the same type only: reroutes, LoRA loaders) | "any" (every input),
     "targets": [{"type": optional node class, "widgets": {widget name: new value}}, ...]}

The first node reached that has every widget of a target (and, for a list widget, the new value among its
options) is changed. apply None: no widget can do it (a GGUF file must be downloaded); the label says how.
"without_widget": "info" (the block-swap count): where the graph has no such widget the figure is shown as
information, with no button (ComfyUI's own loaders take no block-swap count).

Sampling chunking (ComfyUI 0.8.0): only context windows (comfy/context_windows.py, nodes ContextWindowsManual /
WanContextWindowsManual) split sampling, over frames; they change the result, so they are an offer, with the
memory_required of the window that fits (computed by the caller through the estimate). Decode chunking that
keeps the image (ComfyUI's own batch loop) is a plan step; a temporal split of a video decode changes it at the
seams (decode_tiled_3d blends overlapping windows), so it is an offer for a VAE Decode (Tiled) node."""
import math

from ..estimate import spec
from ..units import fmt_bytes

GGUF_Q4_BITS = 4.5  # Q4_K bits per weight
FP8_BITS = 8
FP8_DTYPE = "fp8_e4m3fn"  # UNETLoader's weight_dtype option


def offer(oid, label, saving, value=None, apply=None, **extra) -> dict:
    return dict({"id": oid, "label": label, "saving": int(max(0, saving)), "kind": "offer", "value": value,
                 "apply": apply}, **extra)


def sample_inputs(family: str, shape, run_shape, required) -> dict:
    """The offers' view of a latent, the same for the node (before sampling) and automatic mode (in the sampler):
    {"pixels": {"width", "height", "frames", "batch"}, "windows": context-window options or None}. shape: the
    latent; run_shape: what one sampler call runs (shape unless context windows are set); required(shape): the
    memory_required of a latent of that shape."""
    if not shape:
        return {"pixels": None, "windows": None}
    shape = [int(x) for x in shape]
    sp = spec.family(family)
    frames = ((shape[2] - 1) * sp["t"] + 1) if len(shape) == 5 and sp["t"] else 1
    pixels = {"width": shape[-1] * sp["s"], "height": shape[-2] * sp["s"], "frames": frames, "batch": shape[0]}
    windows = None
    if list(run_shape or shape) == shape and len(shape) == 5 and sp["t"] and shape[2] > 2:
        windows = {"t": sp["t"], "latent_frames": shape[2],
                   "options": [{"latent": n, "memory_required": required(shape[:2] + [n] + shape[3:])}
                               for n in range(shape[2] - 1, 1, -1)]}
    return {"pixels": pixels, "windows": windows}


def _latent(widgets: dict) -> dict:
    return {"from": "latent", "through": "same", "targets": [{"widgets": widgets}]}


def build(*, req, dm, offloaded, ram_short, sample_fits, decode_fits, blocks=None, pixels=None, target_required=None,
          fits_with=None, windows=None, decode=None, temporal=None, weight_bits=None) -> list:
    """req: our memory_required; dm: diffusion weights; offloaded: weights ComfyUI will stream from RAM.
    target_required: the memory_required at which the sample phase would fit (None: unknown). fits_with(r): does
    the sample phase fit with memory_required r. windows: {"t", "latent_frames", "options": [{"latent", "memory_required"}]}
    (context windows, longest first). decode: the plan's decode dict; temporal: decode_tile(..., temporal=True).
    weight_bits: the diffusion model's stored bits per weight (None: 16): an fp8 model is not offered fp8, a Q4
    GGUF not Q4, and each saving is from the bits it has now."""
    offers = []
    if offloaded > 0 and blocks and blocks.get("count") and blocks.get("bytes"):
        n = min(int(blocks["count"]), math.ceil(offloaded / int(blocks["bytes"])))
        offers.append(offer("block_swap", f"for wrapper loaders that take a block-swap count (WanVideoWrapper style): "
                            f"blocks_to_swap = {n} of {blocks['count']}", n * int(blocks["bytes"]), n,
                            {"from": "model", "through": "any", "targets": [{"widgets": {"blocks_to_swap": n}}]},
                            without_widget="info"))
    bits = float(weight_bits) if weight_bits else 16.0
    if (ram_short or offloaded > 0) and bits > FP8_BITS + 0.5:
        offers.append(offer("fp8_weights", f"fp8 weights for the diffusion model (weight_dtype {FP8_DTYPE}; changes the result slightly)",
                            dm - int(dm * FP8_BITS / bits), "fp8",
                            {"from": "model", "through": "same", "targets": [{"widgets": {"weight_dtype": FP8_DTYPE}}]}))
    if (ram_short or offloaded > 0) and bits > GGUF_Q4_BITS + 0.5:
        offers.append(offer("gguf_weights", "GGUF Q4_K weights for the diffusion model (changes the result): load a Q4_K "
                            "file of this model with a GGUF loader (city96/ComfyUI-GGUF)", dm - int(dm * GGUF_Q4_BITS / bits), "q4_k"))
    if not sample_fits and windows and fits_with:
        for o in windows.get("options", ()):
            if o["latent"] < windows["latent_frames"] and fits_with(o["memory_required"]):
                pix = (o["latent"] - 1) * windows["t"] + 1
                offers.append(offer(
                    "context_windows", f"context windows of {pix} frames ({o['latent']} latent) over "
                    f"{(windows['latent_frames'] - 1) * windows['t'] + 1}: memory_required {fmt_bytes(o['memory_required'])} "
                    f"instead of {fmt_bytes(req)} (changes the result)", req - o["memory_required"], pix,
                    {"from": "model", "through": "same",
                     "targets": [{"type": "WanContextWindowsManual", "widgets": {"context_length": pix}},
                                 {"type": "ContextWindowsManual", "widgets": {"context_length": o["latent"]}}]},
                    memory_required=o["memory_required"]))
                break
    if not sample_fits and pixels and target_required is not None and req:
        scale = max(0.0, target_required / req)
        if pixels.get("batch", 1) > 1:
            b = int(pixels["batch"] * scale + 1e-6)
            if b >= 1:
                offers.append(offer("smaller_batch", f"smaller batch: {b} instead of {pixels['batch']}",
                                    req - req * b // pixels["batch"], b, _latent({"batch_size": b})))
        if pixels.get("frames", 1) > 1:
            f = max(1, int((pixels["frames"] - 1) * scale + 1e-6) // 4 * 4 + 1)
            offers.append(offer("fewer_frames", f"fewer frames: about {f} instead of {pixels['frames']}",
                                req - int(req * (f - 1) / (pixels["frames"] - 1)), f, _latent({"length": f})))
        s = math.sqrt(scale)
        w, h = int(pixels["width"] * s + 1e-6) // 64 * 64, int(pixels["height"] * s + 1e-6) // 64 * 64
        if w >= 64 and h >= 64:
            offers.append(offer("lower_resolution", f"lower resolution: about {w}x{h} instead of {pixels['width']}x{pixels['height']}",
                                req - int(req * w * h / (pixels["width"] * pixels["height"])), [w, h],
                                _latent({"width": w, "height": h})))
    if not decode_fits and decode and decode.get("tile_px") is None:
        if temporal:
            px, fr = temporal["tile_px"], temporal["frames"]
            offers.append(offer(
                "decode_temporal", f"decode in {px} px x {fr} frame tiles with VAE Decode (Tiled) (seams in time change the video)",
                decode["per_sample"] - temporal["bytes"], {"tile_size": px, "temporal_size": fr},
                {"from": "vae_out", "through": "any", "targets": [{"type": "VAEDecodeTiled", "widgets": {
                    "tile_size": px, "overlap": 64 if px >= 256 else 32, "temporal_size": fr, "temporal_overlap": 8 if fr >= 16 else 4}}]},
                bytes=temporal["bytes"]))
        elif pixels:
            offers.append(offer("lower_resolution_decode", "the decode does not fit even in 128 px tiles: a lower resolution", 0))
    return offers
