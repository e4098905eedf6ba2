"""Device memory during sampling, with and without Unload Text Encoders (target: the drop equals the
encoder's size within 5 %).

    COMFYUI_DIR=/path/to/ComfyUI $COMFYUI_PYTHON benchmarks/gpu_unload.py [--family sdxl flux] [--size 1024]
    COMFYUI_DIR=... $COMFYUI_PYTHON benchmarks/gpu_unload.py --cpu-smoke      # the same flow on CPU, SD1.5

Self-contained: it writes sparse all-zero checkpoints from memory/layouts.py (real tensor layouts,
a few hundred KB on disk) into --workdir, imports ComfyUI in-process from COMFYUI_DIR, and per family
runs the same encode -> sample twice: "keep" (ComfyUI's default: the encoder stays on the GPU, which
is roomy enough to keep everything) and "unload" (nodes/unload.py takes it off before sampling).
"During sampling" is torch's peak allocated bytes from sampler start to end and the device's used
bytes (mem_get_info) at the first step. Without CUDA it prints why it skipped and exits 0.
"""
import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 0.05

# family -> how to build it from bundled layouts, latent channels, sampler cfg
FAMILIES = {
    "sd15": {"checkpoint": "sd15_v1-5-pruned-emaonly-fp16", "channels": 4, "cfg": 7.0},
    "sdxl": {"checkpoint": "sdxl_sd_xl_base_1.0", "channels": 4, "cfg": 7.0},
    "flux": {"unet": "flux_flux1-dev", "clips": ["te_t5xxl_fp16", "te_clip_l"], "clip_type": "FLUX", "channels": 16,
             "cfg": 1.0},
}


def load_pack():
    sys.path.insert(0, str(REPO / "tests"))
    from support.pack import load_pack as _load

    _load()
    from gpu_garden.memory import units
    from gpu_garden.memory.estimate import layouts

    return layouts, units


def import_comfy(comfy_dir: str, cpu: bool):
    sys.dont_write_bytecode = True  # never write into the ComfyUI checkout
    sys.path.insert(0, comfy_dir)
    import comfy.cli_args

    comfy.cli_args.args.cpu = cpu
    import comfy.model_management
    import comfy.sample
    import comfy.sd

    return comfy


def build(comfy, layouts, family: str, workdir: Path):
    spec = FAMILIES[family]
    path = lambda name: str(layouts.write_sparse(name, workdir / f"{name}.safetensors"))  # noqa: E731
    if "checkpoint" in spec:
        model, clip, _vae = comfy.sd.load_checkpoint_guess_config(path(spec["checkpoint"]), output_vae=False,
                                                                  output_clip=True)[:3]
    else:
        model = comfy.sd.load_diffusion_model(path(spec["unet"]))
        clip = comfy.sd.load_clip([path(n) for n in spec["clips"]],
                                  clip_type=getattr(comfy.sd.CLIPType, spec["clip_type"]))
    return model, clip


def reset(comfy):
    comfy.model_management.unload_all_models()
    gc.collect()
    comfy.model_management.soft_empty_cache(True)


def device_used(torch, device):
    if device.type != "cuda":
        return None
    free, total = torch.cuda.mem_get_info(device)
    return total - free


def run_variant(comfy, torch, model, clip, spec, size: int, steps: int, unload: bool, unload_clip):
    mm = comfy.model_management
    reset(comfy)
    device = mm.get_torch_device()
    positive = clip.encode_from_tokens_scheduled(clip.tokenize("a garden of GPUs " + str(time.time())))
    negative = clip.encode_from_tokens_scheduled(clip.tokenize(""))
    encoder_bytes = int(clip.patcher.loaded_size())
    report = unload_clip(clip, "offload") if unload else None

    latent = torch.zeros([1, spec["channels"], size // 8, size // 8])
    noise = comfy.sample.prepare_noise(latent, 0)
    seen = {}

    def callback(step, x0, x, total):
        if "encoder_on_device" not in seen:
            seen["encoder_on_device"] = int(clip.patcher.loaded_size()) if any(
                lm.model is not None and lm.model.is_clone(clip.patcher) for lm in mm.current_loaded_models) else 0
            seen["device_used"] = device_used(torch, device)
            seen["loaded"] = sum(int(lm.model_loaded_memory()) for lm in mm.current_loaded_models if lm.device == device)

    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    t = time.perf_counter()
    comfy.sample.sample(model, noise, steps, spec["cfg"], "euler", "normal", positive, negative, latent,
                        callback=callback, disable_pbar=True, seed=0)
    elapsed = time.perf_counter() - t
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    return {"variant": "unload" if unload else "keep", "encoder_bytes": encoder_bytes, "peak_allocated": peak,
            "seconds": elapsed, "report": report, **seen}


def metric(cpu: bool, dynamic: bool) -> str:
    # Dynamic VRAM (comfy-aimdo) maps weights outside torch's caching allocator: only the device sees them.
    return "loaded" if cpu else "device_used" if dynamic else "peak_allocated"


METRIC_LABEL = {"loaded": "ComfyUI-loaded", "device_used": "device-used", "peak_allocated": "peak allocated"}


def judge(keep: dict, unload: dict, key: str) -> tuple[str, float | None, int | None]:
    expected = keep["encoder_bytes"]
    measured = keep[key] - unload[key]
    if not expected:
        return "n/a (encoder never loaded)", None, measured
    err = abs(measured - expected) / expected
    return ("PASS" if err <= TOLERANCE else "FAIL"), err, measured


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", nargs="+", choices=sorted(FAMILIES), default=["sdxl", "flux"])
    ap.add_argument("--size", type=int, default=1024, help="image side in pixels (latent is size/8)")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--workdir", help="where the sparse checkpoints go (default: a temporary folder)")
    ap.add_argument("--cpu-smoke", action="store_true",
                    help="run the flow on the CPU with SD1.5 (checks the script; ComfyUI's loaded bytes stand in "
                         "for device memory)")
    args = ap.parse_args(argv)

    comfy_dir = os.environ.get("COMFYUI_DIR")
    if not comfy_dir or not (Path(comfy_dir) / "comfy" / "model_management.py").is_file():
        print("skipped: set COMFYUI_DIR to a ComfyUI checkout (and run with its Python)")
        return 0
    try:
        import torch
    except ImportError:
        print("skipped: torch is not importable from this Python; run with ComfyUI's interpreter")
        return 0
    cpu = args.cpu_smoke
    if not cpu and not torch.cuda.is_available():
        print("skipped: no CUDA device (this benchmark measures GPU memory; --cpu-smoke checks the flow on CPU)")
        return 0
    families = ["sd15"] if cpu else args.family
    size = 64 if cpu and args.size == 1024 else args.size

    layouts, units = load_pack()
    comfy = import_comfy(comfy_dir, cpu)
    from gpu_garden.nodes.unload import dynamic_vram_enabled, unload_clip

    key = metric(cpu, dynamic_vram_enabled())

    print(f"device: {comfy.model_management.get_torch_device_name(comfy.model_management.get_torch_device())}; "
          f"{size}x{size}, {args.steps} steps, euler")
    header = ("family", "variant", "encoder on device at step 1", "peak allocated", "device used at step 1",
              "ComfyUI loaded at step 1", "s")
    rows, verdicts, failed = [], [], False
    with tempfile.TemporaryDirectory(prefix="gg_unload_") as tmp:
        workdir = Path(args.workdir or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for family in families:
            model, clip = build(comfy, layouts, family, workdir)
            spec = FAMILIES[family]
            keep = run_variant(comfy, torch, model, clip, spec, size, args.steps, False, unload_clip)
            unl = run_variant(comfy, torch, model, clip, spec, size, args.steps, True, unload_clip)
            for r in (keep, unl):
                rows.append((family, r["variant"], units.fmt_bytes(r.get("encoder_on_device")),
                             units.fmt_bytes(r["peak_allocated"]), units.fmt_bytes(r.get("device_used")),
                             units.fmt_bytes(r.get("loaded")), f"{r['seconds']:.2f}"))
            verdict, err, measured = judge(keep, unl, key)
            failed |= verdict == "FAIL"
            verdicts.append(f"{family}: encoder {units.fmt_bytes(keep['encoder_bytes'])}, "
                            f"{METRIC_LABEL[key]} drop {units.fmt_bytes(measured)}"
                            + (f" ({err * 100:.2f} % off)" if err is not None else "")
                            + f" -> {verdict} (within {TOLERANCE * 100:.0f} %)"
                            + f"; node report: {unl['report']['summary']}")
            del model, clip
            reset(comfy)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in (header, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    for v in verdicts:
        print(v)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
