"""What of the diffusion model ComfyUI 0.8.0 leaves loaded when VAE Decode runs, and so the free memory its batch is
sized on (aud66a F2: the estimate sized the batch as if every other model were unloaded, 3 of 4 SDXL samples at once
on 16 GB where ComfyUI decodes 2 with the U-Net still on the card).

comfy/sd.py:793-800 VAE.decode: memory_used = memory_used_decode(shape) (one sample), load_models_gpu([vae],
memory_required=memory_used), then batch_number = int(get_free_memory() / memory_used). load_models_gpu
(model_management.py:621-707): extra_mem = max(minimum_inference_memory() (0.8 GiB + reserve, :581-582), memory_used +
reserve) (:626), then free_memory(vae weights x 1.1 + extra_mem) (:671-673), which unloads the other models, the
least-used first, only while the free memory is not over that (:597-603), and a model only as far as it must
(model_unload(memory_to_free) unloads part of it, :526-531); minimum_memory_required is extra_mem here, already free
(:675-679). So where the card has room the diffusion model stays whole beside the VAE and the batch is sized on what
is left; else it is unloaded down to about that need. The text encoders the text encode left loaded and the sampler's
load did not unload (te_loaded.py, est67) are on the card too: free_memory takes a partly offloaded model first, then
the smaller (comfy_load.unload_until); a ControlNet or other side model is left out."""
from . import comfy_load
from .comfy_load import comfy_minimum
SRC = "comfy/sd.py:793-800, comfy/model_management.py:597-603,626,671-673"


def applies(pol: dict, keep: bool, budget, mode: str, under: int = 0) -> bool:
    """ComfyUI's VAE Decode on a card: the runner's own model swap (not --models resident, which keeps every model
    already, nor an --offload / block swap / keep-on-device policy: under, what the estimate holds under the decode
    already), VAE Decode or VAE Decode (Tiled), a budget to size on. The tiled node loads the VAE as VAE Decode does:
    VAE.decode_tiled asks load_models_gpu for memory_used_decode(samples.shape) (comfy/sd.py:829-832, "#TODO: calculate
    mem required for tile"), one sample's untiled figure, not its tile's (fix68d: the estimate took every other model
    as unloaded there)."""
    return budget is not None and not keep and not under and mode in ("auto", "tiled") and pol.get("runner", "comfyui") == "comfyui" \
        and pol.get("device", "cuda") != "cpu" and pol.get("offload") in (None, "model") and pol.get("block_swap") is None


def left(budget: int, context: int, reserve: int, on_device: int, vae_weights: int, loaded: list,
         per_sample: int) -> dict:
    """{name: bytes still loaded} of the models `loaded` on the card after sampling, [(name, bytes loaded, size)] most
    recent first (the diffusion model, then the text encoders: te_loaded.py), once the VAE has loaded. on_device: what the
    decode phase holds besides them (the VAE's weights, and what the estimate keeps on the device in every phase);
    per_sample: ComfyUI's memory_used_decode for one sample."""
    room = budget - context - on_device + vae_weights  # free before the VAE loads, those models aside
    held, out = [], {}
    for name, b, size in loaded:  # what fits the card of each (a first cap; load_models_gpu kept no more)
        out[name] = max(0, min(int(b), room - sum(out.values())))
        held.append((name, out[name], size))
    need = int(1.1 * vae_weights) + comfy_minimum(per_sample, reserve)  # free_memory's ask, :626,671-673
    return comfy_load.unload_until(held, room - sum(out.values()), need)


def line(dm: int, te: int) -> str:
    """The report's words for what stays loaded beside the VAE ('' where nothing does)."""
    from ..units import fmt_bytes

    parts = [f"{fmt_bytes(b)} of the {what}" for b, what in ((dm, "diffusion model"), (te, "text encoders")) if b]
    if not parts:
        return ""
    return (f" with {' and '.join(parts)} still loaded beside it (ComfyUI unloads {'it' if len(parts) == 1 else 'them'} "
            "only as far as the decode needs the room: peak_device, what nvidia-smi shows, counts it, the peak does not; "
            "vae_resident.py)")
