"""gpu_fit_to_card.py --decode-peaks and --decode-need: each family's untiled VAE decode on the GPU, its peak above
the loaded weights on the uncapped card, and the smallest room it runs in (bisected), beside our figure and
ComfyUI's memory_used_decode."""
import gc

from gpu_fit_plan import FAMILIES, latent_shape
from gpu_fit_runs import load_vae


def loaded_vaes(comfy, torch, layouts, families, workdir):
    """(family, size, latent shape, vae, kind) for each family's VAE and size, with only that VAE loaded, fully, on
    an otherwise empty GPU; each VAE is dropped after its sizes."""
    from gpu_garden.nodes import fit_guard

    mm = comfy.model_management
    dev = mm.get_torch_device()
    for family in families:
        spec = FAMILIES[family]
        vae = load_vae(comfy, str(layouts.write_sparse(spec["vae"], workdir / f"{spec['vae']}.safetensors")))
        kind = fit_guard.vae_kind(vae, family)
        for size in spec["sizes"]:
            mm.unload_all_models()
            gc.collect()
            torch.cuda.empty_cache()
            mm.load_models_gpu([vae.patcher], force_full_load=True)
            torch.cuda.synchronize(dev)
            yield family, size, latent_shape(family, *size), vae, kind
        del vae
        mm.unload_all_models()


def decode_peaks(comfy, torch, layouts, units, families, workdir) -> list:
    """--decode-peaks: each family's untiled VAE decode on the uncapped GPU, one sample: the allocator's peak
    above the loaded weights, beside our per-sample figure (with margin) and ComfyUI's memory_used_decode."""
    from gpu_garden.memory.fit import plan as fit_plan

    mm = comfy.model_management
    dev = mm.get_torch_device()
    rows = []
    for family, size, shape, vae, kind in loaded_vaes(comfy, torch, layouts, families, workdir):
        base = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        lat = torch.zeros(shape)
        with torch.inference_mode():   # as ComfyUI's executor runs VAE Decode
            vae.decode(lat)
        torch.cuda.synchronize(dev)
        measured = torch.cuda.max_memory_allocated(dev) - base
        ours = fit_plan.with_margin(fit_plan.decode_bytes(kind, [1] + shape[1:], str(vae.vae_dtype)))
        comfy_fig = int(vae.memory_used_decode(lat.shape, vae.vae_dtype))
        rows.append({"family": family, "size": list(size), "kind": kind, "dtype": str(vae.vae_dtype), "measured": int(measured),
                     "ours": int(ours), "comfyui": comfy_fig, "ours_error": round(ours / measured - 1, 3),
                     "comfyui_error": round(comfy_fig / measured - 1, 3)})
        r = rows[-1]
        print(f"{family:6} {'x'.join(map(str, size)):12} {kind:8} measured {units.fmt_bytes(measured):>10}  ours "
              f"{units.fmt_bytes(ours):>10} ({r['ours_error']:+.0%})  ComfyUI {units.fmt_bytes(comfy_fig):>10} "
              f"({r['comfyui_error']:+.0%})", flush=True)
    return rows


def decode_need(comfy, torch, layouts, units, families, workdir, steps=7, ballast=None) -> list:
    """--decode-need: the smallest room above the loaded VAE weights in which the untiled decode of one sample
    runs (first_stage_model.decode, no tiled fallback), found by bisection with the allocator capped
    (set_per_process_memory_fraction) or, with a ballast, the rest of the card held outside PyTorch; an uncapped
    peak is elastic (the allocator and cuDNN take what is free)."""
    from gpu_garden.memory.fit import plan as fit_plan

    mm = comfy.model_management
    dev = mm.get_torch_device()
    total = torch.cuda.get_device_properties(dev).total_memory
    rows = []
    for family, size, shape, vae, kind in loaded_vaes(comfy, torch, layouts, families, workdir):
        base = torch.cuda.memory_reserved(dev)
        ours = fit_plan.decode_room(kind, [1] + shape[1:], str(vae.vae_dtype))  # the room Fit to Card sizes with
        comfy_fig = int(vae.memory_used_decode(shape, vae.vae_dtype))

        def runs(room):
            torch.cuda.empty_cache()
            if ballast is not None:  # free memory down to `room` above what PyTorch keeps (the loaded weights)
                torch.cuda.synchronize(dev)
                ballast.hold(max(0, torch.cuda.mem_get_info(dev)[0] - (room - (torch.cuda.memory_reserved(dev) - base))))
            else:
                torch.cuda.set_per_process_memory_fraction(min(1.0, (base + room) / total), dev)
            try:
                with torch.no_grad():
                    vae.first_stage_model.decode(torch.zeros(shape, dtype=vae.vae_dtype, device=dev))
                torch.cuda.synchronize(dev)
                return True
            except torch.cuda.OutOfMemoryError:
                return False
            finally:
                gc.collect()
                torch.cuda.empty_cache()
                if ballast is not None:
                    ballast.hold(0)
                else:
                    torch.cuda.set_per_process_memory_fraction(1.0, dev)

        lo, hi = 0, max(ours, comfy_fig)
        while not runs(hi) and hi < total - base:
            lo, hi = hi, min(total - base, hi * 2)
        for _ in range(steps):
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if runs(mid) else (mid, hi)
        rows.append({"family": family, "size": list(size), "kind": kind, "dtype": str(vae.vae_dtype), "need_at_most": int(hi),
                     "need_above": int(lo), "ours": int(ours), "comfyui": comfy_fig, "ours_error": round(ours / hi - 1, 3),
                     "comfyui_error": round(comfy_fig / hi - 1, 3)})
        r = rows[-1]
        print(f"{family:6} {'x'.join(map(str, size)):12} {kind:8} {r['dtype']:15} runs in {units.fmt_bytes(hi):>10} "
              f"(not in {units.fmt_bytes(lo)})  ours {units.fmt_bytes(ours):>10} ({r['ours_error']:+.0%})  ComfyUI "
              f"{units.fmt_bytes(comfy_fig):>10} ({r['comfyui_error']:+.0%})", flush=True)
    return rows
