"""The estimate as text and JSON, and `gpu-garden estimate` (files, or a whole workflow with --workflow)."""
import argparse
import json
import os

from . import families, formula, host_ram, latent_upscale, spec
from .. import term
from ..cli_args import OnOff, add_json  # --x / --no-x, refused together; --json
from ..errors import UserError
from ..units import GiB, fmt_bytes, gib_arg, gpu_size_problem

RETRY_ROW = "  tiled retry"  # the row under a phase ComfyUI retries tiled after an out-of-memory: what the peak counts
PHASE_LABELS = {"text_encode": "text encode", "vae_encode": "VAE encode (I2V)", "sample": "sample", "sample_naive_attention": "  naive attention *",
                "vae_decode": "VAE decode", "vae_decode_tiled": "  tiled (node)", "audio_decode": "audio decode",
                "latent_upscale": "latent upscale", "pixel_upscale": "pixel upscale"}
ROLE_LABELS = {"diffusion_model": "diffusion model", "text_encoder": "text encoder", "vae": "VAE", "other": "other"}


def add_cli_arguments(s: argparse.ArgumentParser):
    """The `gpu-garden estimate` options (memory/cli.py calls this)."""
    s.add_argument("files", nargs="*", metavar="FILE", help="checkpoint, diffusion model, text encoder or VAE files (.safetensors, .gguf), "
                   "or a name for the bundled header layouts, before a download: a family (sdxl, flux1, wan22, qwen-image, ...), "
                   "a Hub repo id (black-forest-labs/FLUX.1-dev, ...) or a file (flux1-dev, wan2.2-ti2v-5b, t5xxl, ae, ...): "
                   "its model, text encoders and VAE unless given (all names: --layouts)")
    s.add_argument("--layouts", action="store_true", help="list the names FILE takes for bundled layouts (families, "
                   "their Hub repos, files) and exit")
    s.add_argument("--workflow", metavar="WF.json", help="a ComfyUI workflow (UI or API format): estimate every phase at the sizes set in the graph")
    s.add_argument("--upscale", metavar="FILE|auto", help="LTX-2's two stages (LTXVLatentUpsampler between them): the "
                   "size given is stage 1's, stage 2 samples and decodes twice its width and height, and the upscale step is "
                   "a phase of its own. FILE: the latent upscale model (its header's config and weights); auto: Lightricks' "
                   "ltx-2-spatial-upscaler-x2-1.0 from the bundled layout. With --workflow the graph's node says it")
    s.add_argument("--models-dir", metavar="DIR", action="append",
                   help="ComfyUI's models folder, where the workflow's files are found; repeat it to search several in "
                        "order; an extra_model_paths.yaml in it (or in the ComfyUI folder above it) is read as ComfyUI does")
    s.add_argument("--input-dir", metavar="DIR", help="with --workflow: ComfyUI's input folder, where a LoadImage node's "
                   "image is found to read its size (default: the input folder beside --models-dir, if there is one)")
    s.add_argument("--write", metavar="OUT.json", help="with --workflow: write the workflow with extra.gpu_garden.memory (per card tier) to OUT.json")
    s.add_argument("--width", type=int, metavar="PX", help="image or video width in pixels (with --height; default: the "
                   "diffusion model family's native size, or the workflow's latent node)")
    s.add_argument("--height", type=int, metavar="PX", help="height in pixels (with --width)")
    s.add_argument("--frames", type=int, help="video length (default: 1, or the graph's / the family's native length)")
    s.add_argument("--batch", type=int, help="default: 1, or the graph's")
    s.add_argument("--vram", type=gib_arg, metavar="GIB", help="budget to judge against (default: this machine's first device)")
    s.add_argument("--gpu-name", "--gpu", metavar="NAME", help="judge on this card's total as torch reports it, as kv "
                   "takes it (\"RTX 4090\": 23.55 GiB; memory/llm/cards.py); --vram wins over it; --gpu is the same option")
    s.add_argument("--cfg", action=OnOff, default=None,
                   help="cond+uncond batched in one call (--no-cfg: separate passes or cfg 1; default: as the family's usual workflow)")
    s.add_argument("--cond-uncond", choices=["batched", "separate"],
                   help="batched: cond and uncond in one model call (= --cfg); separate: one pass each, as Wan's own runner does (= --no-cfg)")
    s.add_argument("--models", choices=["swap", "resident"], default="swap",
                   help="swap: each phase needs only its own model (ComfyUI when memory is short; default); resident: all stay loaded")
    s.add_argument("--text-encoders", choices=["unload", "resident", "cpu", "stream"], default="unload",
                   help="during sampling: unloaded (default), kept on the GPU, or run on the CPU; stream: run on the GPU a block "
                        "at a time from RAM, the token embedding and one block buffer staying on it (LightX2V's Wan T5 with cpu_offload)")
    s.add_argument("--offload", choices=["none", "model", "sequential", "encoders"],
                   help="none: every model stays on the GPU (diffusers pipe.to('cuda'), ComfyUI --highvram); model: one model at a "
                        "time (diffusers enable_model_cpu_offload, ComfyUI's swap); sequential: weights stay in RAM and stream a "
                        "layer at a time (enable_sequential_cpu_offload, group offload leaf_level, ComfyUI --novram; with --runner diffusers "
                        "it is enable_sequential_cpu_offload, whose accelerate hooks empty the CUDA cache at every layer); encoders: only the "
                        "diffusion model and the text encoders take turns, the VAE stays on the GPU and decodes beside the diffusion model "
                        "(vLLM-Omni --enable-cpu-offload). "
                        "Overrides --models/--text-encoders")
    s.add_argument("--block-swap", type=int, metavar="N",
                   help="N of the diffusion model's blocks kept off the device and moved on one at a time as they run "
                        "(ComfyUI-WanVideoWrapper's blocks_to_swap)")
    s.add_argument("--weights-dtype", type=str.lower,  # FP8 and Q8_0 as file names spell them
                   choices=["fp32", "bf16", "fp16", "fp8", "bnb-int8", "bnb-nf4", "gguf", "q8_0", "q6_k", "q5_k", "q4_k", "q4_0"],
                   help="the diffusion model's weights as loaded (default: as stored; gguf = Q8_0; bnb-int8 / bnb-nf4: "
                        "bitsandbytes load_in_8bit / load_in_4bit nf4, which swaps the Linear layers only; 8-bit linears hold "
                        "int32 accumulators while they run, 4-bit ones a 16-bit copy of their weight)")
    s.add_argument("--vae-dtype", type=str.lower, choices=["auto", "bf16", "fp16", "fp32"], default="auto",
                   help="auto: as ComfyUI picks (bf16 where the GPU has it, else fp32 for SD/FLUX VAEs); fp32 = --fp32-vae")
    s.add_argument("--gpu-halves", choices=["bf16,fp16", "fp16", "none"], default="bf16,fp16", metavar="bf16,fp16|fp16|none",
                   help="half dtypes the GPU supports (Turing: fp16; Pascal and older: none) - decides the VAE dtype")
    s.add_argument("--text-tokens", type=int, help="text tokens the model attends to jointly (default: as the runner pads the prompt: FLUX.1 256 in ComfyUI, "
                        "512 in diffusers' FluxPipeline; 0: the default)")
    s.add_argument("--ref-images", type=int, metavar="N", help="reference images an edit model (FLUX.1 Kontext, FLUX.2, "
                   "Qwen-Image-Edit) adds to its image tokens, each at the output size (a workflow's are read from it)")
    s.add_argument("--vae-decode", choices=["auto", "untiled", "tiled"], default="auto",
                   help="auto: VAE Decode as ComfyUI runs it (batch from free memory, tiled retry after an OOM); tiled: VAE "
                        "Decode (Tiled), or with --runner diffusers its enable_tiling")
    s.add_argument("--vae-tile", type=int, metavar="PX",
                   help="the VAE tile size in output pixels: VAE Decode (Tiled)'s tile_size, or with --runner diffusers "
                        "vae.tile_sample_min_size / enable_tiling(tile_sample_min_height=...) (default: the node's 512 px; "
                        "diffusers: the VAE config's sample_size)")
    s.add_argument("--vae-slicing", action="store_true",
                   help="diffusers' enable_vae_slicing: the pipeline decodes one sample at a time (with --runner diffusers)")
    s.add_argument("--runner", choices=["comfyui", "diffusers", "wan"], default="comfyui",
                   help="whose model code runs: diffusers (its VAE decoders peak higher than ComfyUI's), wan (Wan's own "
                        "generate.py or DiffSynth-Studio: fp32 residual stream and float64 RoPE in the DiT)")
    s.add_argument("--attention", choices=["flash", "math"], default="flash",
                   help="flash: a fused attention kernel (SDPA, xformers, sage; default); math: the n x n attention scores "
                        "held whole (ComfyUI's attention_basic, SDPA's math backend, diffusers on torch 1.x)")
    s.add_argument("--reserve-vram", type=gib_arg, metavar="GIB", help="ComfyUI's --reserve-vram (default: its 0.4 GiB; Windows 0.6-0.7)")
    s.add_argument("--platform", choices=["linux", "windows", "darwin"], default="linux",
                   help="the OS ComfyUI runs on (default linux): windows raises ComfyUI's own VRAM reserve from 400 MiB "
                        "to 600 MiB (700 MiB on cards over 15 GiB) and caps the pinned host memory; darwin makes the "
                        "device mps")
    s.add_argument("--device", choices=["cuda", "rocm", "mps", "xpu", "cpu"], default=None,
                   help="the GPU's kind: cuda (default; darwin: mps) counts the CUDA context and cuDNN's convolution "
                        "workspace in VAE decode; the others count neither")
    s.add_argument("--text-encoder-device", choices=["gpu", "cpu"], default=None,
                   help="where ComfyUI runs the text encode (its text_encoder_device()): cpu on a GTX 16xx, --lowvram or "
                        "--novram; default: what it picks for --device (gpu; cpu with --gpu-halves none on linux, and on mps)")
    s.add_argument("--gpu-arch", choices=["pascal"], default=None,
                   help="the GPU's generation where a figure differs by it: pascal (GTX 10xx, Tesla P100/P40) changes "
                        "diffusers' VAE decode (--runner diffusers); default: Ampere and newer, where it was fitted")
    s.add_argument("--ram", type=gib_arg, metavar="GIB", help="available host RAM for the RAM verdict (default: this machine's)")
    s.add_argument("--no-model-cache", action="store_true",
                   help="models are not kept in RAM for a fast reload (as ComfyUI's --cache-ram GIB does once available "
                        "RAM falls under GIB: its cache drops them, comfy_execution/caching.py RAMPressureCache)")
    s.add_argument("--disable-pinned-memory", action="store_true",
                   help="as ComfyUI's flag: no pinned copy of the streamed or offloaded weights (model_management.py:1119)")
    s.add_argument("--dynamic-vram", choices=["auto", "on", "off"], default="auto",
                   help="ComfyUI's Dynamic VRAM (comfy-aimdo): auto detects it")
    s.add_argument("--weights-mmap", choices=["auto", "on", "off"], default="auto",
                   help="with Dynamic VRAM, the CPU weights are the model file's mapped pages (comfy-aimdo's ModelMMAP): "
                        "RAM short of them is slower (re-read from disk), not fatal; auto detects comfy-aimdo's model_mmap")
    s.add_argument("--i2v", action=OnOff, default=None,
                   help="Wan 2.1 image-to-video: counts the CLIP-H image encoder (clip_vision_h, fp16) when no image "
                        "encoder file is given (default: on for an I2V model file, whose img_emb tells it)")
    add_json(s, "the estimate as one JSON object (--layouts: its text list)")
    s.epilog = ("exit status: 0 it runs on the budget (fits, tight, with weights offloaded to RAM or streamed, or with the "
                "VAE decode tiled after ComfyUI's out-of-memory retry), 1 it does not fit even so, or the estimate is "
                "incomplete (workflow files not found), 2 usage or input error")
    s.set_defaults(estimate_parser=s)


TEXT_TOKENS_MAX = 8192  # the most text tokens --text-tokens and the Footprint Estimate node's text_tokens input take
RAM_MAX_GIB = 1 << 20  # 1 PiB of host RAM: anything above is a typo, not a machine


def _usage_error(args, msg):
    p = getattr(args, "estimate_parser", None)
    if p is not None:
        p.error(msg)  # one line, exit 2
    raise UserError(msg)


def check_args(args):
    """Refuse what the estimate would otherwise take silently: numbers out of range, a switch that needs another,
    two that contradict each other. One line, exit 2."""
    g = lambda k: getattr(args, k, None)  # noqa: E731
    if g("text_tokens") is not None and not 0 <= g("text_tokens") <= TEXT_TOKENS_MAX:
        _usage_error(args, f"--text-tokens needs 0 (the encoder's own count) to {TEXT_TOKENS_MAX} tokens, got {args.text_tokens}")
    if g("ref_images") is not None and not 0 <= g("ref_images") <= 16:  # fix68g: ref_latents.py
        _usage_error(args, f"--ref-images needs 0 to 16 reference images, got {args.ref_images}")
    if g("batch") is not None and g("batch") < 1:  # (fixX, rev52 K) it said "(got 1024x1024, 1 frames, batch 0)"
        _usage_error(args, f"--batch needs a whole number of 1 or more (images at once), got {args.batch}")
    if g("ram") is not None and not 0 < g("ram") <= RAM_MAX_GIB:
        _usage_error(args, f"--ram needs a positive number of GiB up to {RAM_MAX_GIB} (leave it out for this machine's "
                           f"available RAM), got {args.ram}")
    if g("vram") is not None and gpu_size_problem(g("vram") * GiB):  # kv's check: --vram 100000 was judged "FITS"
        _usage_error(args, gpu_size_problem(g("vram") * GiB))
    if g("reserve_vram") is not None and not g("reserve_vram") >= 0:
        _usage_error(args, f"--reserve-vram needs 0 or more GiB, got {args.reserve_vram}")
    if g("reserve_vram") is not None and g("vram") is not None and g("reserve_vram") >= g("vram"):
        _usage_error(args, f"--reserve-vram {args.reserve_vram:g} leaves nothing of --vram {args.vram:g} GiB: give less")
    if g("device") == "cpu" and g("vram") is not None:  # ComfyUI --cpu: no card; the verdict is host RAM's (--ram)
        _usage_error(args, "--device cpu runs in host RAM: give --ram GIB (or nothing: this machine's), not --vram")
    device = g("device") or ("mps" if g("platform") == "darwin" else "cuda")
    if g("dynamic_vram") == "on" and device in ("mps", "xpu"):  # host_ram.AIMDO_DEVICES: comfy-aimdo's builds
        _usage_error(args, f"--dynamic-vram on: comfy-aimdo (ComfyUI's Dynamic VRAM) has CUDA and ROCm builds only, "
                           f"not {device}: leave the flag out (or give off) for --device {device}")
    if g("write") and not g("workflow"):
        _usage_error(args, "--write adds extra.gpu_garden.memory to a workflow: give --workflow WF.json too")
    if g("input_dir") and not g("workflow"):
        _usage_error(args, "--input-dir is where a workflow's LoadImage images are: give --workflow WF.json too")
    if g("upscale") and g("workflow"):
        _usage_error(args, "--upscale is for model files: with --workflow the graph's LTXVLatentUpsampler and "
                           "LatentUpscaleModelLoader say it")
    if g("workflow") and g("files"):
        _usage_error(args, "--workflow reads the model files from the graph (under --models-dir): give the workflow or "
                           f"model files, not both (got {', '.join(map(str, args.files))})")
    cu, cfg = g("cond_uncond"), g("cfg")
    if cu and cfg is not None and cfg != (cu == "batched"):
        _usage_error(args, f"--{'cfg' if cfg else 'no-cfg'} contradicts --cond-uncond {cu} (--cond-uncond batched is --cfg, "
                           "separate is --no-cfg): give one")


def cfg_from_args(args):
    cu = getattr(args, "cond_uncond", None)
    return {"batched": True, "separate": False}[cu] if cu else getattr(args, "cfg", None)


# ComfyUI 0.8.0 pins host memory only on NVIDIA and AMD (model_management.py:1119-1125: is_nvidia() or is_amd(), else
# MAX_PINNED_MEMORY stays -1): no pinned copies on mps, xpu or the CPU (rev67h F12)
PIN_DEVICES = ("cuda", "rocm")


def policy_from_args(args) -> dict:
    g = lambda k, d=None: getattr(args, k, d)  # noqa: E731
    halves = {"bf16,fp16": ("bf16", "fp16"), "fp16": ("fp16",), "none": ()}[g("gpu_halves", "bf16,fp16") or "bf16,fp16"]
    pol = {"cond_uncond": g("cond_uncond"), "models": g("models", "swap"), "text_encoders": g("text_encoders", "unload"), "weights_dtype": g("weights_dtype"),
           "vae_dtype": g("vae_dtype", "auto") or "auto", "gpu_halves": halves, "text_tokens": g("text_tokens"),
           "vae_decode": g("vae_decode", "auto") or "auto", "platform": g("platform", "linux") or "linux",
           "dynamic_vram": g("dynamic_vram", "auto") or "auto", "cache_models": not g("no_model_cache", False),
           "pinned_memory": not g("disable_pinned_memory", False)
           and (g("device") or ("mps" if g("platform") == "darwin" else "cuda")) in PIN_DEVICES,
           "weights_mmap": g("weights_mmap", "auto") or "auto",
           "runner": g("runner", "comfyui") or "comfyui", "offload": g("offload"), "vae_slicing": bool(g("vae_slicing", False)),
           "block_swap": g("block_swap"), "i2v": g("i2v"), "attention": g("attention", "flash") or "flash",
           "device": g("device") or ("mps" if g("platform") == "darwin" else "cuda"), "gpu_arch": g("gpu_arch"),
           "te_on_device": {"gpu": True, "cpu": False}.get(g("text_encoder_device"))}
    if g("reserve_vram") is not None:
        pol["reserve"] = int(args.reserve_vram * GiB)
    if g("vae_tile") is not None:
        pol["tile"] = {"tile": args.vae_tile}
    if g("ref_images") is not None:  # each at the output size (ref_latents.tokens); a typed 0 wins over a workflow's
        pol["ref_images"] = [(None, None, "--ref-images")] * args.ref_images
    return pol


def format_text(est: dict, budget_label: str = "") -> str:
    from . import verdict
    g = lambda n: "—" if n is None else f"{n / GiB:6.2f}"  # noqa: E731
    fam = est["family"] + (f" {est['variant']}" if est.get("variant") else "")
    size = f"{est['width']}x{est['height']}" + (f"x{est['frames']}f" if est["frames"] > 1 else "")
    if (est.get("workflow") or {}).get("size_assumed"):  # no size in the graph or flags: say so where the size is
        size += f" ({est['workflow']['size_assumed']})"
    if (est.get("workflow") or {}).get("size_uncertain"):  # a node the estimate does not size (latent_custom.py)
        size += " (uncertain: " + ", ".join(u["node"] for u in est["workflow"]["size_uncertain"]) + ")"
    lines = _missing_lines(est) + [f"{est['family_name']} ({fam}) at {size}, batch {est['batch']}, "
             f"CFG {'batched' if est['cfg'] else 'on, separate passes' if est.get('cfg_separate') else 'off / separate passes'}"
             + ("   [UNKNOWN family: generic figures]" if est["unknown"] else ""), ""]
    held = "in RAM" if verdict.on_cpu(est["policy"]) else "in VRAM"  # --device cpu: ComfyUI holds the weights in host RAM
    kw = max([16] + [len(str(c["kind"] or "-")) for c in est["components"]])  # "unused buffers (not loaded)" was cut at 16
    lines.append(f"{'component':38} {'role':15} {'kind':{kw}} {'GiB':>7} {held:>8}  dtypes")
    for c in est["components"]:
        dts = ", ".join(f"{k}" for k in list(c["dtypes"])[:3])
        lines.append(f"{(c['source'] or '-')[:38]:38} {('image encoder' if str(c['kind'] or '').startswith('clip-vision') else ROLE_LABELS[c['role']]):15} {str(c['kind'] or '-'):{kw}} "
                     f"{g(c['bytes']):>7} {g(c['resident']):>8}  {dts}")
    lat = est["latent"]
    audio = lat["tokens"] - lat["image_tokens"] - lat["text_tokens"]  # LTX-2's audio stream (phases._with_audio)
    lines += ["", *term.wrap_lines([f"latent {lat['shape']}: {lat['image_tokens']} image tokens + {lat['text_tokens']} joint "
                                    f"text tokens" + (f" + {audio} audio tokens" if audio > 0 else "") +
                                    f", batch {lat['batch_in_model']} in the model"]), ""]
    lines.append(f"{'phase (GiB)':22} {'weights':>8} {'activ.':>8} {'margin':>7} {'fixed':>7} {'total':>8}")
    two = est.get("_retry_rows") or {}  # a phase ComfyUI retries tiled: its untiled try, then the retry (fix66a)
    for k, v in est["phases"].items():
        rows = [(k, two[k]["untiled"], ""), (RETRY_ROW, two[k]["tiled"], "  <- peak")] if k in two else \
            [(k, est["breakdown"][k], "  <- peak")]
        for name, bd, peak in rows:
            mark = peak if k == est["peak_phase"] else ""
            total = bd["weights"] + bd["activations"] + bd["allocator_margin"] + bd["fixed"] if k in two else v
            lines.append(f"{PHASE_LABELS.get(name, name):22} {g(bd['weights']):>8} {g(bd['activations']):>8} "
                         f"{g(bd['allocator_margin']):>7} {g(bd['fixed']):>7} {g(total):>8}{mark}")
    notes_at = len(lines)  # the notes under the phase table: prose, wrapped
    if "sample_naive_attention" in est["phases"]:
        lines.append("* naive attention: only without SDPA / xformers (ComfyUI's attention_basic); not counted in the peak"
                     if est["policy"].get("attention") != "math" else "* naive attention: --attention math, the sample row's figure")
    v = est.get("vae")
    if v:
        lines.append(f"VAE decode: {v['how']}; {v['dtype']}; per sample {fmt_bytes(v['per_sample'])}, "
                     f"batch {v['batch']} of {v['batch_of']}"
                     + (f"; tiled fallback {fmt_bytes(v['fallback_bytes'])}{_tiles(est)}" if v["fallback_bytes"] is not None else ""))
    if est.get("comfyui_memory_required") is not None:
        lines.append(f"ComfyUI's own memory_required (factor {est['comfyui_factor']:.4g}): {fmt_bytes(est['comfyui_memory_required'])} "
                     f"for sampling activations (ours: {fmt_bytes(est['breakdown']['sample']['activations'])})")
    lines[notes_at:] = term.wrap_lines(lines[notes_at:])
    lines.append("")
    o = est.get("outcome") or {}
    cpu = verdict.on_cpu(est["policy"]) and not est["budget"]
    peak = (f"peak {fmt_bytes(est['peak'])} in {PHASE_LABELS[est['peak_phase']].strip()} "
            + ("(--device cpu: in host RAM, no card)" if cpu else
               f"(torch max_memory_allocated ~ {fmt_bytes(est['peak_torch'])}{_in(est, 'peak_torch')}, {_smi(est)}"
               f"{_in(est, 'peak_device')})")
            + "".join(f"; {verdict.RETRY_LABELS[k]} counted tiled, as ComfyUI runs it after its out-of-memory fallback "
                      f"(untiled {fmt_bytes(t['untiled'])})" for k, t in (est.get("tiled_retry") or {}).items())
            + ("" if cpu else f"; smallest common card: {str(est['min_vram_gb']) + ' GB' if est['min_vram_gb'] else 'none up to 141 GB'}")
            + (" (for the files found)" if o.get("status") == "incomplete" else ""))
    lines += term.wrap_lines([peak])  # prose, as the notes above: wrapped (term.py)
    verdict_at = len(lines)  # the verdict, host RAM and Dynamic VRAM lines: prose too, wrapped below
    if cpu and o.get("status") != "incomplete":
        lines.append(f"verdict: {o['status'].upper()} in host RAM" + (f", headroom {fmt_bytes(est['headroom'])}"
                     if est.get("headroom") is not None else "") + f" ({o['reason']})")
    elif o.get("status") == "incomplete":
        lines.append(f"verdict: INCOMPLETE: {o['reason']} (listed at the top); the figures leave out what is missing")
    elif est["budget"] and o.get("status") in ("runs with offload", "runs tiled", "fits with streaming"):  # over the budget, yet it runs
        lines.append(f"verdict: {o['status'].upper()} in {fmt_bytes(est['budget'])}" + (f" ({budget_label})" if budget_label else "")
                     + f": {o['reason']}; " + (f"untiled it would need {fmt_bytes(est['peak_untiled'])}" if o["status"] == "runs tiled"
                                                else f"all on the GPU it would need {fmt_bytes(est['peak'])}"))
    elif est["budget"] and (est.get("dynamic_vram") or {}).get("host_ram_short_by") and est.get("host_ram") \
            and str(o.get("reason", "")).startswith("Dynamic VRAM fits in VRAM"):  # (fixX, rev52 I) RAM is what is short
        d, r = est["dynamic_vram"], est["host_ram"]
        lines.append(f"verdict: {est['verdict'].upper()} in host RAM ({fmt_bytes(r['available'])} available), short by "
                     f"{fmt_bytes(d['host_ram_short_by'])}: the run needs {fmt_bytes(r['needed'])} of it (the running "
                     f"model's CPU copy {fmt_bytes(r['cpu_copy'])}, pinned copies of the streamed layers "
                     f"{fmt_bytes(r['pinned'])}, kept for reload {fmt_bytes(r['kept_for_reload'])}); in VRAM it fits: "
                     f"{fmt_bytes(est['budget'])}" + (f" ({budget_label})" if budget_label else "")
                     + f" with Dynamic VRAM streaming {fmt_bytes(d['streamed_per_step'])} of weights from RAM each step")
    elif est["budget"] and o.get("status") == "does not fit" and est["verdict"] != "does not fit":  # host RAM decides
        lines.append(f"verdict: DOES NOT FIT: {o['reason']}; in VRAM alone {est['verdict'].upper()} in "
                     f"{fmt_bytes(est['budget'])}" + (f" ({budget_label})" if budget_label else "")
                     + f", headroom {fmt_bytes(est['headroom'])}")
    elif est["budget"]:
        lines.append(f"verdict: {est['verdict'].upper()} in {fmt_bytes(est['budget'])}" + (f" ({budget_label})" if budget_label else "")
                     + f", headroom {fmt_bytes(est['headroom'])}" + (f" ({o['reason']})" if o.get("reason") else ""))
    else:
        why = (budget_label or "").removeprefix("no budget: ").removeprefix("pass --vram GIB")
        lines.append(f"verdict: no budget ({why + '; ' if why else ''}pass --vram GIB to judge against a card)")
    r = est.get("host_ram") or {}
    if r:
        lines.append(f"host RAM: needs {fmt_bytes(r['needed'])} ({host_ram.ram_parts(r)})"
                     + (f" of {fmt_bytes(r['available'])} available: {r['verdict']}" if r.get("available") else ""))
        if r.get("kept_for_reload") and verdict.ram_short(r):  # ComfyUI's knob for it (cli_args.py:115)
            lines.append("  ComfyUI's --cache-ram GIB drops the models kept for reload when available RAM falls under "
                         "GIB (comfy_execution/caching.py:386 RAMPressureCache.poll); --no-model-cache judges that run")
    d = est.get("dynamic_vram") or {}
    if d.get("verdict"):
        lines.append(f"Dynamic VRAM ({d['source']}): {d['verdict']}")
    lines[verdict_at:] = term.wrap_lines(lines[verdict_at:])
    status = o.get("status")
    # partial offload: the verdict itself when it runs with offload; no offer on a run that fits (fix68g, aud68a 6),
    # tight or tiled included (rev68g #3): offered only where it does not fit, or on no budget
    runs = est["budget"] is not None and status not in ("does not fit", "incomplete")
    shown = [k for k in est["knobs"] if not (runs and k["id"] == "partial_offload")]
    if shown and status != "incomplete":  # no advice on a graph we could not see whole
        lines.append({"fits": "to save more (it fits already; saving, then what to change):",
                      "runs with offload": "to run without offload (saving, then what to change):"}.get(
                         status, "knobs (saving, then what to change):"))
        for k in shown:
            over = est["budget"] is not None and k["peak_after"] > est["budget"]  # short of RAM may be short of VRAM too
            fits = "" if est["budget"] is None else ("  fits" if k.get("fits") else "  still over, host RAM short"
                                                     if over and k.get("host_ram_short") else "  host RAM short"
                                                     if k.get("host_ram_short") else "  still over")
            moved = f"; then {PHASE_LABELS[k['peak_moves_to']]} is the peak" if k.get("peak_moves_to") else ""
            own = k.get("phase_saving") or {}
            if moved and own.get("bytes", 0) > k["saving"]:  # the peak stops at a phase the knob leaves: its own saving
                moved = f"; {fmt_bytes(own['bytes'])} less in {PHASE_LABELS[own['phase']]}{moved}"
            ram = k.get("host_ram") or {}
            short = (f"host RAM then needs {fmt_bytes(ram['hard_need'])}, {fmt_bytes(ram['available'])} available"
                     if k.get("host_ram_short") and ram.get("available") else "")
            note = "; ".join(x for x in (k.get("note"), short, moved[2:]) if x)
            lines.append(f"  {'saves ' + fmt_bytes(k['saving']):>16}  {k['label']}{fits}" + (f" ({note})" if note else ""))
    lines.append("assumptions:")
    lines += term.wrap_lines([f"  - {a}" for a in est["assumptions"]])
    return "\n".join(lines)


def _tiles(est: dict) -> str:
    """Why the fallback and the tiled (node) row differ: ComfyUI's out-of-memory retry and VAE Decode (Tiled) tile
    otherwise (spec.TILE_FALLBACK_*, TILE_NODE)."""
    if (est["policy"].get("runner") or "comfyui") != "comfyui":
        return ""
    kind = next((c["kind"] for c in est["components"] if c["role"] == "vae"), None)
    video = spec.VAE[spec.vae_kind_for(kind, est["family"])]["t"] is not None
    node = dict(spec.TILE_NODE, **(est["policy"].get("tile") or {}))
    retry = (f"{spec.TILE_FALLBACK_VIDEO_PX} px tiles, every frame at once" if video else
             f"{spec.TILE_FALLBACK_IMAGE_LATENT}-latent-px tiles in three passes")
    return (f" (ComfyUI's retry after an out-of-memory: {retry}; the tiled (node) row is VAE Decode (Tiled): "
            f"{node['tile']} px tiles" + (f", {node['frames']} frames at a time)" if video else ")"))


def _in(est: dict, key: str) -> str:
    """' in <phase>' where peak_torch / peak_device is reached in another phase than the peak (what left loaded beside
    a phase counts there, not in its row: rev67e F7), else ''."""
    ph = est.get(key + "_phase")
    return f" in {PHASE_LABELS.get(ph, ph).strip()}" if ph and ph != est.get("peak_phase") else ""


def _smi(est: dict) -> str:
    """What nvidia-smi would show, at most the card: past its total the caching allocator frees its cache and retries
    before it raises, so a figure above the card (the fitted cached slack) is one nvidia-smi cannot print."""
    card = est["budget"] or (spec.card_bytes(est["min_vram_gb"]) if est.get("min_vram_gb") else None)
    if not card or est["peak_device"] <= card:
        return f"nvidia-smi ~ {fmt_bytes(est['peak_device'])}"
    return (f"nvidia-smi ~ {fmt_bytes(card)}, the whole card: the {fmt_bytes(est['peak_device'])} figured is more "
            "than it holds")


def _missing_lines(est: dict) -> list:
    """The workflow's model files that were not found, first: the figures below leave them out."""
    wf = est.get("workflow") or {}
    miss = wf.get("missing_where") or []
    if not miss:
        return []
    where = ", ".join(wf.get("searched") or ()) or wf.get("models_dir") or "ComfyUI's model folders"  # rev67h F9
    out = [f"INCOMPLETE: {len(miss)} model file{'s' if len(miss) > 1 else ''} named by the workflow not found under {where}:"]
    out += [f"  {m['name']}: {m['why']}  ({m['loader']})" if m.get("why", "not found") != "not found" else
            f"  {m['name']}  ({m['loader']}; looked in {', '.join(f + '/' for f in m['folders'])})" for m in miss]
    if not any(c["role"] == "diffusion_model" for c in est["components"]):
        out.append("  no diffusion model among the files found: the sampling phase, the largest, is left out")
    return out + [""]


def _budget(args):
    if getattr(args, "device", None) == "cpu":
        return None, "--device cpu: host RAM"  # no card to probe (verdict.cpu_run judges the run on RAM)
    if args.vram is not None:
        if not args.vram > 0:
            raise UserError(f"--vram needs a positive number of GiB, got {args.vram}")
        return int(args.vram * GiB), "--vram"
    if getattr(args, "gpu_name", None):
        from ..llm.cards import ambiguous_card, visible_gib  # light: tables
        if ambiguous_card(args.gpu_name):  # as kv --gpu-name: an A100 is 40 or 80 GB
            raise UserError(f"--gpu-name {args.gpu_name!r} names cards of different memory: "
                            + ", ".join(f"{n!r} ({g:.2f} GiB)" for n, g in ambiguous_card(args.gpu_name))
                            + ": give one of them, or --vram GIB")
        gib = visible_gib(args.gpu_name)
        if gib is None:  # (fixX) as kv (docs/kv.md): a note and no verdict, not this machine's card nor an error
            return None, f"--gpu-name {args.gpu_name!r}: no total known for this card (memory/llm/cards.py)"
        return int(gib * GiB), f"{args.gpu_name}: {gib:.2f} GiB as torch reports it"
    try:
        from ..budget import probe
    except ImportError:
        return None, "no budget: pass --vram GIB"
    try:
        return formula.budget_from_snapshot(probe.snapshot())
    except Exception as exc:  # a broken driver must not stop an estimate
        return None, f"no budget: device probe failed ({type(exc).__name__})"


def components(files) -> tuple:
    """(components, assumptions) of the FILE arguments: a file that exists is read; another name may be bundled layouts
    (layouts.resolve): a family, or a diffusion model's layout, brings its model and, unless another argument gives
    one, its usual text encoders and VAE (layouts.FAMILY_FILES); a text encoder's or VAE's layout comes alone."""
    from . import layouts
    comps, notes, families_named = [], [], []
    for f in files:
        hit = None if os.path.exists(f) else layouts.resolve(str(f))
        if hit is None:
            if not os.path.exists(f) and (os.sep not in str(f) and "/" not in str(f) or _hub_like(str(f))):
                raise UserError(f"{f}: no such file, and no bundled layout has that name (closest: "
                                f"{', '.join(layouts.closest(f))}; all: {layouts.LIST_COMMAND})")
            comps.extend(formula.from_files([f]))
            continue
        kind, name = hit
        fam = name if kind == "family" else next((k for k, v in layouts.FAMILY_FILES.items() if v["model"] == name), None)
        lay = layouts.FAMILY_FILES[fam]["model"] if fam else name
        comps.extend(families.split_components(layouts.table(lay), f"{lay} (bundled)"))
        repo = layouts.hub_repo(str(f)) if kind == "family" else None
        notes.append(f"{f}: sized from the bundled layout of {lay}"
                     + (f" (the model of the Hub repo {repo}; nothing downloaded)" if repo else ", not a file"))
        if fam:
            families_named.append(fam)
    for fam in families_named:  # the family's usual text encoders and VAE, where no argument gave one
        ff, roles = layouts.FAMILY_FILES[fam], {c["role"] for c in comps}
        extra = ([] if "text_encoder" in roles else list(ff["te"])) + ([] if "vae" in roles else [ff["vae"]])
        for lay in extra:
            comps.extend(families.split_components(layouts.table(lay), f"{lay} (bundled)"))
        if extra:
            notes.append(f"{fam}'s usual files added from bundled layouts: {', '.join(extra)}")
        if ff.get("te_missing") and "text_encoder" not in roles:
            notes.append(f"{fam}'s text encoder ({ff['te_missing']}) has no bundled layout: the text encode phase leaves "
                         "it out (give its file to count it)")
    return comps, notes


def _hub_like(name: str) -> bool:
    """OWNER/NAME with no model extension: a Hub repo id, not a path to a file."""
    from .host_ram import MODEL_FILE_EXT
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and os.path.splitext(name)[1].lower() not in MODEL_FILE_EXT


def upscaler_arg(args) -> dict:
    """--upscale's upscaler: auto, the bundled layout; else a file (latent_upscale.from_file), refused (exit 2) when it is
    missing or not LTX-2's latent upsampler."""
    if args.upscale == "auto":
        return latent_upscale.bundled("--upscale auto")
    if not os.path.isfile(args.upscale):
        _usage_error(args, f"--upscale {args.upscale}: no such file (give the latent upscale model, or auto for Lightricks' "
                           "x2 from the bundled layout)")
    up = latent_upscale.from_file(args.upscale)
    if not up:
        _usage_error(args, f"--upscale {args.upscale}: not LTX-2's latent upscale model (a safetensors file with "
                           f"{families.LTX2_UPSCALER_KEY}, as LatentUpscaleModelLoader takes it)")
    return up


def native_size(args, comps):
    """((width, height, frames), note): as given, or the diffusion model family's native size (spec.NATIVE_SIZE)."""
    if args.width is not None:
        return (args.width, args.height, 1 if args.frames is None else args.frames), None
    fam = next((c.get("family") for c in comps if c["role"] == "diffusion_model"), None)
    llm = next((c["source"] for c in comps if c.get("kind") in families.LLM_KINDS), None) if not fam else None
    if llm:  # an LLM given alone: a diffusion model's text encoder (Qwen-Image's, Z-Image's), or a model to serve
        path = next((str(p) for p in args.files if os.path.basename(str(p)) == llm), llm)
        _usage_error(args, f"--width and --height are needed: no diffusion model among the files; {llm} is an LLM: "
                     f"for the memory to serve it, gpu-garden kv --{'gguf' if llm.lower().endswith('.gguf') else 'model'} "
                     f"{path}; as a text encoder, give its diffusion model beside it")
    if fam not in spec.NATIVE_SIZE:
        _usage_error(args, "--width and --height are needed: " + (f"no native size known for family {fam}" if fam else
                                                                  "no diffusion model among the files"))
    w, h, f = spec.NATIVE_SIZE[fam]
    name, video = spec.family(fam)["name"], spec.family(fam)["t"] is not None
    if args.frames is None:
        return (w, h, f), (f"size not given: {w}x{h}" + (f", {f} frames" if f > 1 else "") + f", the native size of "
                           f"{name} (--width/--height/--frames for another)")
    # a typed --frames (1 too) is the user's, not the family's; an image family ignores it (formula's own note)
    return (w, h, args.frames), (f"size not given: {w}x{h}, the native size of {name} (--width/--height for another)"
                                 + (f"; {args.frames} frame{'s' if args.frames > 1 else ''} from --frames" if video else ""))


def run_cli(args) -> int:
    from . import verdict
    check_args(args)
    if getattr(args, "workflow", None):
        from . import workflow_cli
        return workflow_cli.run_cli(args)
    if getattr(args, "layouts", False):
        from . import layouts
        print(layouts.listing())
        return 0
    if not args.files:
        _usage_error(args, "give model files, or --workflow WF.json --models-dir DIR")
    if (args.width is None) != (args.height is None):
        _usage_error(args, "--width and --height go together (or give neither: the family's native size)")
    policy = policy_from_args(args)
    budget, label = _budget(args)
    ram = getattr(args, "ram", None)
    policy["host_ram"] = int(ram * GiB) if ram else verdict.host_available_ram()
    policy["budget"] = budget
    comps, named = components(args.files)
    families.check_vae_channels(comps)
    (w, h, f), note = native_size(args, comps)
    staged, w1, h1 = [], w, h  # the size given: stage 1's with --upscale, the one ComfyUI's latent node rounds
    if getattr(args, "upscale", None):  # LTX-2's two stages: the size given is stage 1's (latent_upscale.two_stage)
        w, h = latent_upscale.two_stage(upscaler_arg(args), comps, w, h, policy, staged, "--upscale",
                                        "--width/--height" if args.width is not None else "the native size")
    est = formula.estimate(comps, w, h, f, 1 if args.batch is None else args.batch, cfg=cfg_from_args(args), policy=policy)
    if note:
        est["assumptions"].insert(0, note)
    rounded = spec.latent_rounding_note(w1, h1, spec.family(est["family"])["s"])  # stage 2's is a multiple (rev62 F11)
    if rounded:
        est["assumptions"].insert(0, rounded)
    est["assumptions"][:0] = named + staged
    formula.judge(est, budget)
    if args.json:
        out = formula.public(est)
        out["budget_source"] = label
        print(json.dumps(out, indent=2, default=str))
    else:
        print(format_text(est, label))
    return verdict.exit_code(est)


def demo_section(as_json: bool = False):
    """A FLUX.1-dev + T5-XXL + CLIP-L + ae workflow at 1024x1024, estimated from the bundled layouts, judged on a 24 GB card."""
    from . import layouts

    comps = []
    for name, file in (("flux_flux1-dev", "flux1-dev.safetensors"), ("te_t5xxl_fp16", "t5xxl_fp16.safetensors"),
                       ("te_clip_l", "clip_l.safetensors"), ("vae_flux_ae", "ae.safetensors")):
        comps.extend(families.split_components(layouts.table(name), file))
    est = formula.judge(formula.estimate(comps, 1024, 1024, cfg=None, policy={"dynamic_vram": "off"}), spec.card_bytes(24))
    return formula.public(est) if as_json else format_text(est, "a 24 GB card")

