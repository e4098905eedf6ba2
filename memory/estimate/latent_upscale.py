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
  3000 bytes per latent element, is 11.6x that in bf16: it frees more than the step holds."""
from . import layouts
from .weights import at_dtype_bytes
from ..units import fmt_bytes

SCALE = 2                       # the x2 upscaler's spatial factor (config spatial_scale 2.0)
PER_VOXEL = 4 * 1024 * SCALE * SCALE + 128  # values live at the peak per input latent voxel (16,512)
LAYOUT = "upscale_ltx-2-spatial-upscaler-x2-1.0"  # Lightricks' x2 upscaler at its config (hand count in the test)
COMFY_PER_ELEMENT = 3000        # nodes_lt_upsampler.py: memory_required += math.prod(latents.shape) * 3000.0


def activation_bytes(shape, dtype_bytes: int) -> int:
    """Bytes live at the peak of LatentUpsampler's forward for an input latent [B, C, F, H, W]."""
    b, _, f, h, w = shape
    return int(b) * int(f) * int(h) * int(w) * PER_VOXEL * int(dtype_bytes)


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


def phase_inputs(lat_shape, dtype_bytes: int, values, assumptions) -> dict:
    """{"weights", "bytes", "comfy_request", "latent"} of the upscale phase for the stage-2 latent lat_shape; values: the
    upscale model file's float values (None: not given, the bundled LAYOUT's, which an assumption line names)."""
    shape = stage1_shape(lat_shape)
    weights = int(values or layouts.load(LAYOUT)["parameters"]) * int(dtype_bytes)
    out = {"weights": weights, "bytes": activation_bytes(shape, dtype_bytes), "latent": shape,
           "comfy_request": comfy_request(shape, weights)}
    if not values:
        assumptions.append("no latent upscale model file given: the upscale step counts Lightricks' "
                           f"ltx-2-spatial-upscaler-x2-1.0 ({fmt_bytes(weights)} in the VAE's dtype)")
    assumptions.append(f"latent upscale (LTXVLatentUpsampler): the stage-1 latent {shape} to twice its width and height, "
                       f"its own phase; ComfyUI frees {fmt_bytes(out['comfy_request'])} for it first (module size + "
                       f"{COMFY_PER_ELEMENT} bytes per latent element)")
    return out


def file_values(table) -> int:
    """The float values of an upscale model file's tensors (its weights at one byte a value)."""
    return at_dtype_bytes(table, 1)
