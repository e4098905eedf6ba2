"""How much of a model ComfyUI 0.8.0's load_models_gpu keeps on the device, and the free memory it leaves: one copy,
read by the estimate (cfg_batch, vae_resident) and by fit/plan (which imports the estimate, so it lives here).

comfy/model_management.py:621-707 load_models_gpu: minimum_memory_required = max(minimum_inference_memory(),
memory_required + extra_reserved_memory()) (:625-630); a model loads partially with lowvram_model_memory =
max(0, free - minimum_memory_required, min(free * MIN_WEIGHT_MEMORY_RATIO, free - minimum_inference_memory())) (:695).
MIN_WEIGHT_MEMORY_RATIO (:313-315) is 0.4 unless is_nvidia() (a CUDA build of torch on a GPU: 0.0); it only acts in
that branch, taken in LOW_VRAM / NORMAL_VRAM states with lowvram_available (:691), so on ROCm and XPU; MPS runs SHARED
and a CPU run DISABLED (:412-416), and DirectML turns lowvram_available off (:103): there models load whole."""
from .spec import MIN_INFERENCE

MIN_WEIGHT_RATIO = 0.0  # MIN_WEIGHT_MEMORY_RATIO on NVIDIA (model_management.py:315)
OTHER_GPU_RATIO = 0.4  # model_management.py:313, any GPU torch.version.cuda is not set for (ROCm's HIP, Intel's XPU)
RATIO_DEVICES = ("rocm", "xpu")  # the estimate's --device values on which load_models_gpu partially loads with 0.4
# the --device values whose VRAM state skips the partial-load branch (:691 LOW_VRAM / NORMAL_VRAM only): MPS runs SHARED
# (:415-416) and a CPU run DISABLED (:686-687), so lowvram_model_memory stays 0 and model_load(0) loads whole (:500-503)
WHOLE_DEVICES = ("mps", "cpu")
WHOLE = None  # the ratio given for those: comfy_weights_kept keeps the whole model


def weight_ratio(device) -> float | None:
    """MIN_WEIGHT_MEMORY_RATIO as ComfyUI reads it on the estimate's --device (None: cuda); WHOLE where load_models_gpu
    never loads partially (WHOLE_DEVICES)."""
    if device in WHOLE_DEVICES:
        return WHOLE
    return OTHER_GPU_RATIO if device in RATIO_DEVICES else MIN_WEIGHT_RATIO


def comfy_minimum(required, reserve) -> int:
    """load_models_gpu's minimum_memory_required once it has added its reserve: max(minimum_inference_memory(),
    minimum_memory_required + extra_reserved_memory()). A small batch still gets 0.8 GiB + reserve."""
    return int(max(MIN_INFERENCE + reserve, required + reserve))


def comfy_weights_kept(dm, free, required, reserve, ratio=MIN_WEIGHT_RATIO) -> int:
    """Bytes of a model (dm bytes) load_models_gpu keeps on the device with `free` bytes free before it loads, as
    ComfyUI 0.8.0 computes its lowvram_model_memory: max(0, free - minimum, min(free * MIN_WEIGHT_MEMORY_RATIO,
    free - minimum_inference_memory())) with minimum = comfy_minimum(required, reserve); ratio WHOLE (MPS, CPU: no
    partial-load branch, :691): all of it."""
    if ratio is WHOLE:
        return int(dm)
    return int(min(dm, max(0, free - comfy_minimum(required, reserve), partial_floor(free, reserve, ratio))))


def partial_floor(free, reserve, ratio=MIN_WEIGHT_RATIO) -> int:
    """The least a partial load keeps whatever memory_required asks: min(free x MIN_WEIGHT_MEMORY_RATIO, free -
    minimum_inference_memory()) (:695), never under 0; 0 where the model loads whole (ratio WHOLE)."""
    if ratio is WHOLE:
        return 0
    return int(max(0, min(free * ratio, free - MIN_INFERENCE - reserve)))


def unload_until(models, free, ask) -> dict:
    """free_memory(ask) (model_management.py:584-619) on the loaded `models`, [(name, bytes loaded, model size)] most
    recently loaded first (current_loaded_models' order): it takes them sorted by (-offloaded memory, refcount, size,
    index), so a partly offloaded model first, then the smaller, the refcount taken as equal (not knowable here); it
    stops once the free memory is over `ask` (:603) and unloads a model only as far as needed (model_unload with
    memory_to_free: partially_unload, :526-531). Returns {name: bytes still loaded}."""
    left = {n: int(b) for n, b, _ in models}
    order = sorted(range(len(models)), key=lambda i: (-(models[i][2] - models[i][1]), models[i][2], i))
    for i in order:
        if free > ask:
            break
        name, need = models[i][0], ask - free
        gone = min(need, left[name])
        left[name] -= gone
        free += gone
    return left


def sample_load(room, te, weights, batched, one, reserve, ratio=MIN_WEIGHT_RATIO) -> tuple[int, int]:
    """(text-encoder bytes, sampling weights) on the device once the sampler's models have loaded, on a card with
    `room` bytes free after the CUDA context, the text encoders (te bytes) loaded by the text encode before it: one
    sampler, sample_loads's figures."""
    return sample_loads(room, te, [weights], batched, one, reserve, ratio)[:2]


def sample_loads(room, te, dms, batched, one, reserve, ratio=MIN_WEIGHT_RATIO, vae=None) -> tuple[int, int, int]:
    """(text-encoder bytes, the last diffusion model's bytes, the earlier diffusion models' bytes) on the device while
    the last sampler runs, `dms` the diffusion models' bytes in the order their samplers load them (Wan 2.2's high- then
    low-noise expert), on a card with `room` bytes free after the CUDA context, the text encoders (te bytes) loaded by
    the text encode before them.
    CLIPTextEncode: load_model_gpu(clip patcher) (comfy/sd.py:302-304), memory_required 0, so they keep
    comfy_weights_kept(te, room, 0). Each sampler's prepare_sampling (comfy/sampler_helpers.py:131-135) then calls
    load_models_gpu with memory_required = memory_required(2 x batch) (estimate_memory: always the batched pair) and
    minimum_memory_required = memory_required(batch): free_memory(1.1 x weights + max(minimum_inference_memory(),
    batched + reserve)) (model_management.py:626,671-673) unloads what is loaded (the text encoders, an earlier
    sampler's model: unload_until's order) only as far as that, then the weights load (comfy_weights_kept with the
    one-cond minimum). The earlier samplers' models stay loaded as far as the later loads leave them (rev67e F1: a
    second expert's load unloads the text encoders first, the smaller). vae: (its weights, its encode's memory_required)
    where an image-to-video node VAE-encodes the start image between the text encode and sampling (i2v_nodes.py):
    VAE.encode's load_models_gpu (comfy/sd.py:869-870) unloads the text encoders as far as it asks, the VAE loads whole,
    and stays among what the samplers' loads unload (its bytes left: loaded_at_sample)."""
    return summed(loaded_at_sample(room, te, dms, batched, one, reserve, ratio, vae))


def summed(loaded) -> tuple[int, int, int]:
    """(text encoders, the last diffusion model, the earlier ones) of loaded_at_sample's list."""
    return (sum(b for n, b, _ in loaded if n == "te"), loaded[0][1] if loaded and isinstance(loaded[0][0], int) else 0,
            sum(b for n, b, _ in loaded[1:] if n not in ("te", "vae")))


def loaded_at_sample(room, te, dms, batched, one, reserve, ratio=MIN_WEIGHT_RATIO, vae=None) -> list:
    """[(name, bytes loaded, size)] most recent first while the last sampler runs: sample_loads's arithmetic; names
    "te", "vae" and the samplers' indexes."""
    loaded = [("te", comfy_weights_kept(te, room, 0, reserve, ratio), te)] if te > 0 else []  # most recent first
    if vae and vae[0] > 0:
        left = unload_until(loaded, room - sum(b for _, b, _ in loaded), int(1.1 * vae[0]) + comfy_minimum(vae[1], reserve))
        loaded = [(n, left[n], size) for n, _, size in loaded]
        loaded.insert(0, ("vae", max(0, min(int(vae[0]), room - sum(left.values()))), int(vae[0])))
    kept = 0
    for i, w in enumerate(dms):
        left = unload_until(loaded, room - sum(b for _, b, _ in loaded), int(1.1 * w) + comfy_minimum(batched, reserve))
        loaded = [(n, left[n], size) for n, _, size in loaded]
        kept = comfy_weights_kept(w, room - sum(left.values()), one, reserve, ratio)
        loaded.insert(0, (i, kept, w))
    return loaded
