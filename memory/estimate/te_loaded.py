"""The text encoders ComfyUI 0.8.0 leaves loaded after the text encode (rev66d #4, est67): what is left of them at
sampling narrows the free memory cond and uncond are batched on (cfg_batch), and at the decode the free memory the VAE
batch is sized on (vae_resident).

CLIPTextEncode loads the CLIP on text_encoder_device(), the GPU in NORMAL_VRAM / HIGH_VRAM where fp16 works
(model_management.py:875-884), and nothing unloads it after: the sampler's load_models_gpu unloads it only as far as
the diffusion model and its memory_required need (comfy_load.sample_load), the VAE's as far as one sample needs
(comfy_load.unload_until). A first run on an empty card is modelled (a queue run again starts with the U-Net loaded).
Like the diffusion model kept at the decode, what stays is shown, not counted in a phase's row or the verdict:
ComfyUI unloads it as far as its own figures ask, so it is not what the run needs."""
from . import comfy_load, dual_cfg

DEVICES = ("cuda", "rocm", "xpu")  # MPS runs SHARED, whose text_encoder_device() is the CPU (:884); a CPU run has none


def applies(pol: dict, keep: bool) -> bool:
    """ComfyUI's model swap with the text encoders loaded on the GPU and unloaded by the next loads (the estimate's
    text_encoders "unload"; resident ones are counted already, cpu and stream ones are not there)."""
    return swaps(pol, keep) and pol.get("text_encoders", "unload") == "unload" and on_device(pol)


def swaps(pol: dict, keep: bool) -> bool:
    """ComfyUI's own model swap on a GPU (load_models_gpu unloading as far as a load asks), not a resident, offload,
    block-swap or keep-on-device policy the estimate holds otherwise."""
    return not keep and pol.get("runner", "comfyui") == "comfyui" and pol.get("device", "cuda") in DEVICES \
        and pol.get("offload") in (None, "model") and pol.get("block_swap") is None and not pol.get("keep_on_device")


def on_device(pol: dict) -> bool:
    """Whether ComfyUI's text_encoder_device() is the GPU (model_management.py:875-884): the node passes the live
    answer (policy te_on_device); else from the card as the estimate knows it. On CUDA it is the CPU where
    should_use_fp16(prioritize_performance=False) is False (:1357-1425): compute capability under 6, and Pascal (6.x,
    gpu_halves none) except a GeForce 10 / Quadro P card on Windows (:1397-1403, "weird linux behavior"); a GTX 16xx
    (fp16 only, like RTX 20xx) is not told apart. --gpu-arch pascal (policy gpu_arch) says Pascal as --gpu-halves none
    does: should_use_fp16 is False for every Pascal card off Windows (:1403-1409; :1416 for the others). ROCm (:1390
    torch.version.hip) and XPU keep it on the GPU."""
    live = pol.get("te_on_device")
    if live is not None:
        return bool(live)
    no_fp16 = tuple(pol.get("gpu_halves", ("bf16", "fp16"))) == () or pol.get("gpu_arch") == "pascal"  # rev68d F5
    return not (pol.get("device", "cuda") in (None, "cuda") and no_fp16 and pol.get("platform", "linux") != "windows")


def loaded(est: dict) -> int:
    """Bytes of text encoders on the GPU after the text encode (0 where they are not left there)."""
    ctx = est.get("_ctx")
    if not ctx or not ctx.get("has_te") or not applies(ctx["policy"], ctx.get("keep", False)):
        return 0
    return int(ctx["w"].get("te", 0))


def at_sample(est: dict, budget: int, weights: int) -> tuple[int, int, int]:
    """(text-encoder bytes, sampling weights, the earlier samplers' diffusion models' bytes) on the device while the
    (last) sampler runs on `budget` bytes: load_models_gpu's arithmetic (comfy_load.sample_loads) once per sampler's
    load, the other diffusion models first (Wan 2.2's high-noise expert; the one sampled with loads last), with
    ComfyUI's memory_required for the batched pair (estimate_memory doubles the batch whatever the cfg:
    comfy/sampler_helpers.py:121-122) and for one cond."""
    return comfy_load.summed(_loaded(est, budget, weights))


def vae_at_sample(est: dict, budget: int, weights: int) -> int:
    """Bytes of the VAE still loaded while the (last) sampler runs: an image-to-video node's start-image encode loaded
    it after the text encode (i2v_nodes.py, fix68d); 0 where no node encodes or the models do not swap."""
    return sum(b for n, b, _ in _loaded(est, budget, weights) if n == "vae")


def at_encode(est: dict, budget) -> int:
    """Bytes of the text encoders still loaded while the start image's VAE encode runs (i2v_nodes.py): what the VAE's
    load left of them, loaded_at_sample's arithmetic up to that load (rev68d F6); 0 without an encode or a budget."""
    ctx = est.get("_ctx") or {}
    if budget is None or not ctx.get("i2v_encode") or not swaps(ctx["policy"], ctx.get("keep", False)):
        return 0
    return sum(b for n, b, _ in _loaded(est, budget, None) if n == "te")


def _loaded(est, budget, weights) -> list:
    """loaded_at_sample's list; weights None: up to the VAE encode's load, before any sampler's."""
    fixed, ctx = est["fixed"], est.get("_ctx") or {}
    one = int(est["comfyui_memory_required"] or 0) // dual_cfg.of(est)  # one cond of the batched 2 (3: dual_cfg.py)
    swap = bool(ctx) and swaps(ctx["policy"], ctx.get("keep", False))
    before = ctx["w"].get("dm_before", []) if swap else []
    dms = [*before, weights] if weights is not None else []
    return comfy_load.loaded_at_sample(budget - fixed.get("cuda_context", 0), loaded(est), dms, 2 * one,
                                       one, fixed.get("comfyui_reserve", 0), comfy_load.weight_ratio(est["policy"].get("device")),
                                       vae=_encode_load(ctx) if swap else None)


def _encode_load(ctx) -> tuple | None:
    """(VAE weights, the encode's memory_required) of the start image's encode (ctx i2v_encode), None without one. The
    memory_required is ComfyUI's memory_used_encode (comfy/sd.py:869); the estimate's own encode activations stand in
    for it (ComfyUI's per-VAE encode figures are not tabled)."""
    if not ctx.get("i2v_encode") or not ctx["w"].get("vae"):
        return None
    from . import vae as vae_mod

    pol = ctx["policy"]
    return int(ctx["w"]["vae"]), vae_mod.vae_encode_bytes(ctx["vae_kind"], ctx["i2v_encode"], ctx["vae_dtype"],
                                                          device=pol.get("device", "cuda"))
