"""LTX-2's latent upscale step between the two sampling stages, as ComfyUI 0.8.0 runs it (comfy_extras/nodes_lt_upsampler.py
LTXVLatentUpsampler, the model from LatentUpscaleModelLoader, comfy_extras/nodes_hunyuan.py:173-214).

- the model: LatentUpsampler.from_config(the file's metadata "config") cast to vae_dtype(allowed [bf16, fp32]): the same
  call and list the LTX video VAE's dtype comes from (sd.py working_dtypes), so it runs in the VAE's dtype. Lightricks'
  ltx-2-spatial-upscaler-x2-1.0 (layouts upscale_ltx-2-spatial-upscaler-x2-1.0): 128 latent channels, 1024 wide, 4
  ResBlocks before and after a 2x spatial resampler, 3-D convolutions: 73 tensors, 497,867,929 values (LAYOUT).
- the node: free_memory(module size + latent numel x 3000) (comfy_request), then the module moved to the device whole
  (.to(device), outside the model manager), the latent cast to its dtype, un_normalized with the VAE's statistics, upscaled
  at once (no tiling), the module moved back to the CPU, then normalized. The stage-1 diffusion model stays loaded until
  free_memory unloads what that request needs: like every phase here, the phase counts its own model.
- activations: traced on meta with gpu_garden's tracer on ComfyUI's class (tests/host/test_trace_ltx64.py; bf16 and fp32,
  batch 1 to 3, 1 to 61 latent frames, odd and even sizes): exactly PER_VOXEL values per latent voxel (B x F x H x W of
  the input latent) in the model's dtype. The peak is post_upsample_res_blocks.0's last SiLU: its input (the block's
  residual, its norm2 output and their sum) and output, four tensors of 1024 channels at twice the width and height
  (4 x 1024 x 4 = 16,384 values a voxel), beside the un-normalized input latent (128). ComfyUI's own request,
  3000 bytes per latent element, is 11.6x that in bf16: it frees more than the step holds.
- the config (ups65): LatentUpscaleModelLoader builds the model from the file's safetensors __metadata__ "config" (json.loads,
  unconditionally: a file without it does not load in 0.8.0). A file given (a workflow's LatentUpscaleModelLoader, the CLI's
  --upscale FILE, the node's file choice) is read for it: its channels, blocks and spatial factor are the step's figures
  (header_config). The law above holds for any 3-D spatial x2 config (4 x mid x 4 + in, traced at mid 1024 rational and mid
  512 plain: tests/host/test_trace_ltx64.py); another config (temporal, x1.5, 2-D) is not modelled and the rebuilt config
  stands in, as it does for a file whose header carries none; an assumption line says which."""
import json

from . import layouts
from .weights import at_dtype_bytes
from ..units import fmt_bytes

SCALE = 2                       # the x2 upscaler's spatial factor (config spatial_scale 2.0)
LAYOUT = "upscale_ltx-2-spatial-upscaler-x2-1.0"  # Lightricks' x2 upscaler at its config (hand count in the test)
COMFY_PER_ELEMENT = 3000        # nodes_lt_upsampler.py: memory_required += math.prod(latents.shape) * 3000.0
# LatentUpsampler.from_config's defaults for a key the config leaves out (comfy/ldm/lightricks/latent_upsampler.py)
FROM_CONFIG = {"in_channels": 4, "mid_channels": 128, "num_blocks_per_stage": 4, "dims": 2, "spatial_upsample": True,
               "temporal_upsample": False, "spatial_scale": 2.0, "rational_resampler": False}
RATIONAL = {0.75: (3, 4), 1.5: (3, 2), 2.0: (2, 1), 4.0: (4, 1)}  # latent_upsampler.py _rational_for_scale


def header_config(meta):
    """The LatentUpsampler config a file's __metadata__ carries ({key: value}, from_config's defaults filled in), or None:
    no "config" entry, or not a JSON object."""
    raw = (meta or {}).get("config") if isinstance(meta, dict) else None
    try:
        cfg = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return {k: cfg.get(k, d) for k, d in FROM_CONFIG.items()} if isinstance(cfg, dict) else None


def rebuilt_config() -> dict:
    """The config rebuilt from public sources for Lightricks' x2 upscaler (the bundled LAYOUT's __metadata__, ltx64)."""
    return header_config(layouts.load(LAYOUT)["__metadata__"])


def not_modelled(cfg):
    """Why this config is not the 3-D spatial x2 upsampler the step's law was traced for; None when it is. The rational
    resampler at 2.0 is x2 (num 2, den 1); without it the spatial upsampler is always x2 (Conv2d to 4 x mid, shuffle 2)."""
    if cfg["temporal_upsample"] or not cfg["spatial_upsample"]:
        return "it upsamples in time" if cfg["temporal_upsample"] else "it does not upsample in space"
    if cfg["rational_resampler"] and RATIONAL.get(float(cfg["spatial_scale"])) != (SCALE, 1):
        return f"spatial scale {cfg['spatial_scale']:g}, not 2"
    if cfg["dims"] != 3:
        return f"{cfg['dims']}-D, not 3-D"
    return None


def per_voxel(cfg) -> int:
    """Values live at the peak per input latent voxel for a 3-D spatial x2 config: post_upsample_res_blocks.0's last SiLU,
    four tensors of mid channels at twice the width and height, beside the un-normalized input latent (in channels)."""
    return 4 * int(cfg["mid_channels"]) * SCALE * SCALE + int(cfg["in_channels"])


PER_VOXEL = 4 * 1024 * SCALE * SCALE + 128  # the rebuilt config's (16,512; per_voxel(rebuilt_config()), hand count here)


def activation_bytes(shape, dtype_bytes: int, per=PER_VOXEL) -> int:
    """Bytes live at the peak of LatentUpsampler's forward for an input latent [B, C, F, H, W]."""
    b, _, f, h, w = shape
    return int(b) * int(f) * int(h) * int(w) * int(per) * int(dtype_bytes)


def comfy_request(shape, module_bytes: int) -> int:
    """What LTXVLatentUpsampler asks free_memory for: the module's size plus 3000 bytes per latent element."""
    n = 1
    for d in shape:
        n *= int(d)
    return int(module_bytes) + n * COMFY_PER_ELEMENT


def stage1_shape(shape) -> list:
    """The latent the upsampler takes, for the stage-2 latent [B, C, F, 2H, 2W] the estimate samples and decodes."""
    b, c, f, h, w = shape
    return [b, c, f, h // SCALE, w // SCALE]


def stage_two(w: int, h: int, s: int) -> tuple:
    """The pixel size stage 2 samples and decodes for a stage-1 size w x h of a family with s pixels a latent pixel."""
    return SCALE * (w // s) * s, SCALE * (h // s) * s


def phase_inputs(lat_shape, dtype_bytes: int, up, assumptions) -> dict:
    """{"weights", "bytes", "comfy_request", "latent"} of the upscale phase for the stage-2 latent lat_shape. up: the
    upscaler (from_file, from_module, bundled; {"values": None} for a graph whose file was not found: the bundled LAYOUT's
    figures, which an assumption line names)."""
    shape, values, cfg = stage1_shape(lat_shape), up.get("values"), up.get("config")
    name = up.get("name") or "the upscale model"
    why = not_modelled(cfg) if cfg else None
    if cfg and not why:
        where = up.get("config_from") or "the file's metadata"
        assumptions.append(f"latent upscale model {name}: its config ({where}) gives {cfg['in_channels']} latent "
                           f"channels, {cfg['mid_channels']} wide, {cfg['num_blocks_per_stage']} ResBlocks a stage, x{SCALE}")
    elif values:
        assumptions.append(f"latent upscale model {name}: " + (f"its config is not modelled ({why}): the step is counted "
                           "with" if why else "its header carries no config metadata (ComfyUI 0.8.0's loader needs one): "
                           "assumed") + " the config rebuilt for Lightricks' ltx-2-spatial-upscaler-x2-1.0 (128 latent "
                           f"channels, 1024 wide, x{SCALE}); its weights are the file's")
        cfg = None
    weights = int(values or layouts.load(LAYOUT)["parameters"]) * int(dtype_bytes)
    per = per_voxel(cfg) if cfg else PER_VOXEL
    out = {"weights": weights, "bytes": activation_bytes(shape, dtype_bytes, per), "latent": shape,
           "comfy_request": comfy_request(shape, weights)}
    if not values:
        assumptions.append((f"{up['bundled']}: " if up.get("bundled") else "no latent upscale model file given: ")
                           + "the upscale step counts Lightricks' ltx-2-spatial-upscaler-x2-1.0 "
                           f"({fmt_bytes(weights)} in the VAE's dtype), its bundled layout at the config rebuilt from public "
                           "sources")
    assumptions.append(f"latent upscale (LTXVLatentUpsampler): the stage-1 latent {shape} to twice its width and height, "
                       f"its own phase; ComfyUI frees {fmt_bytes(out['comfy_request'])} for it first (module size + "
                       f"{COMFY_PER_ELEMENT} bytes per latent element)")
    return out


def file_values(table) -> int:
    """The float values of an upscale model file's tensors (its weights at one byte a value)."""
    return at_dtype_bytes(table, 1)


def two_stage(up, comps, w, h, pol, notes, what, given):
    """LTX-2's two stages with the upscaler `up` (latent_upscale.py), asked for by `what` (the graph's node, --upscale, the
    node's input): `given` (w x h) is stage 1's size; pol takes the upscaler and (w2, h2), stage 2's, is returned. Another
    family's diffusion model (or none): a note, (w, h)."""
    from .spec import family
    dm = next((c for c in comps if c["role"] == "diffusion_model"), None)
    if not dm or dm.get("family") != "ltx-2":
        if what != "LTXVLatentUpsampler":  # a graph's node on another model: estimated as before, without a word
            notes.append(f"{what}: LTX-2's two-stage upscale step; the diffusion model is "
                         f"{dm.get('family') if dm else 'not given'}: one stage estimated")
        return w, h
    w2, h2 = stage_two(w, h, family("ltx-2")["s"])
    pol["latent_upscale"] = dict(up)
    notes.append(f"{what}: two stages; {given} ({w}x{h}) is the first's, the second samples "
                 f"and the VAE decodes the upsampled latent ({w2}x{h2}), the size estimated")
    return w2, h2


def bundled(source: str) -> dict:
    """Lightricks' x2 upscaler from the bundled LAYOUT, asked for by `source` (--upscale auto, the node's choice)."""
    return {"values": None, "config": None, "name": None, "bundled": source}


def from_file(path):
    """The upscaler a safetensors file holds: {"values", "config" (its header's, or None), "name"}; None when the file is not
    LTX-2's latent upsampler (its key missing) or not a safetensors file."""
    import os

    from .families import LTX2_UPSCALER_KEY
    from .headers import read_safetensors_header, tensor_table
    from ..errors import UserError
    try:
        header = read_safetensors_header(path)
    except (UserError, OSError):  # not a safetensors file: the published configuration stands in
        return None
    table = tensor_table(header)
    if LTX2_UPSCALER_KEY not in table:
        return None
    return {"values": file_values(table), "config": header_config(header.get("__metadata__")),
            "name": os.path.basename(str(path))}


def from_module(module, name="the wired LATENT_UPSCALE_MODEL"):
    """The upscaler a loaded LatentUpsampler (LatentUpscaleModelLoader's output) is: its parameters and buffers as
    values, its config() as the config; None for another kind (HunyuanVideo 1.5's SR model)."""
    if not callable(getattr(module, "config", None)) or not hasattr(module, "state_dict"):
        return None
    from .families import LTX2_UPSCALER_KEY
    try:
        cfg = header_config({"config": json.dumps(module.config())})
        sd = module.state_dict()
        values = sum(int(t.numel()) for t in sd.values())
    except Exception:  # an object that only looks like one
        return None
    return {"values": values, "config": cfg, "name": name, "config_from": "as loaded"} if cfg and LTX2_UPSCALER_KEY in sd \
        else None
