"""Load a ComfyUI checkout given by the user and trace one step of its real model class for a family.

Why this lives in memory/ although memory/ never imports comfy: it is a host-agnostic "load this checkout"
helper. It imports ComfyUI only inside trace_family(), only from the directory the user names with
`--comfyui DIR` (put on sys.path), and forces `--cpu` so ComfyUI never touches a GPU. Nothing here runs when
the pack is loaded by ComfyUI or when any other memory/ module is imported.

Models are built exactly as ComfyUI builds them from a checkpoint: a state dict of meta tensors made from a
header (a bundled layout of the family's standard file, or --checkpoint FILE's safetensors header) goes through
comfy.model_detection and the model config's get_model(), on the meta device. No weights are read. What each family
is given (conditioning, text encoders, class layouts) is in comfy_recipes.py.
"""
import contextlib
import json
import logging
import math
import os
import sys
from pathlib import Path

from ..errors import UserError
from ..estimate.layouts import ALIASES, FAMILY_FILES
from .comfy_recipes import (CLASS_LAYOUTS, FAMILIES, FILE_ONLY_CONFIGS, TEXT_ENCODERS, TRACEABLE_CONFIGS,
                            VAE_CLASS_LAYOUTS)
from .model_files import find_checkpoint, read_header


PHASES = ("sample", "decode", "encode", "text")
_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64", "I32": "int32",
           "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool", "F8_E4M3": "float8_e4m3fn",
           "F8_E5M2": "float8_e5m2"}


def family_names():
    return sorted(FAMILIES)


def exact_family_names():
    """The families the node's exact mode traces from a loaded model (detected_family without file_trace)."""
    from ..estimate.families import CONFIG_FAMILY
    return sorted({CONFIG_FAMILY[c] for c in TRACEABLE_CONFIGS})


_IMPORTED_BY_US = False


def import_comfy(comfyui_dir):
    """Import ComfyUI from this checkout, CPU-only, with PyTorch (SDPA) attention so the tracer sees every
    attention call. Inside a running ComfyUI the already imported comfy is used as it is."""
    global _IMPORTED_BY_US
    d = Path(comfyui_dir).expanduser().resolve()
    if "comfy.model_management" not in sys.modules:
        _IMPORTED_BY_US = True
        if not (d / "comfy" / "model_detection.py").is_file():
            raise UserError(f"{comfyui_dir} is not a ComfyUI checkout (no comfy/model_detection.py)")
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
        argv = sys.argv
        sys.argv = [argv[0] if argv else "gpu-garden", "--cpu", "--use-pytorch-cross-attention", "--disable-xformers"]
        logging.disable(logging.WARNING)   # ComfyUI's import-time notices (missing optional packages) are noise here
        try:
            import comfy.options
            comfy.options.enable_args_parsing()
            import comfy.cli_args  # noqa: F401  parses the argv above
            import comfy.model_management  # noqa: F401
            import comfy.model_detection  # noqa: F401
            import comfy.sd  # noqa: F401
        except ImportError as exc:
            raise UserError(f"cannot import ComfyUI from {d}: {exc} (run with ComfyUI's Python)") from exc
        finally:
            sys.argv = argv
            logging.disable(logging.NOTSET)
    import comfy.model_detection
    import comfy.sd
    return comfy


def meta_state_dict(tensors: dict):
    """{name: {"dtype": "F16", "shape": [...]}} -> {name: meta tensor}."""
    import torch
    out = {}
    for name, t in tensors.items():
        if name == "__metadata__":
            continue
        dt = getattr(torch, _DTYPES.get(t["dtype"], "float32"), torch.float32)
        out[name] = torch.empty(t["shape"], dtype=dt, device="meta")
    return out


def _layout_tensors(name):
    """A bundled layout's tensors, with its file metadata (if any) under "__metadata__" as a header holds it."""
    from ..estimate import layouts
    lay = layouts.load(name)
    return dict(lay["tensors"], __metadata__=lay["__metadata__"]) if lay.get("__metadata__") else lay["tensors"]


def host_dtypes(weight_dtype, supported):
    """(weight dtype, manual cast dtype) ComfyUI picks on a current NVIDIA GPU (fp16 and bf16 supported):
    model_management.unet_dtype / unet_manual_cast."""
    import torch
    halves = [d for d in supported if d in (torch.float16, torch.bfloat16)]
    if weight_dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        return weight_dtype, (halves[0] if halves else torch.float32)
    if weight_dtype == torch.float16 and torch.float16 in supported:
        return torch.float16, None
    return (halves[0] if halves else torch.float32), None


_KERNELS = {  # ComfyUI attention function -> (memory behaviour, closest traced kernel)
    "attention_pytorch": ("SDPA: flash / memory-efficient on CUDA, O(n) extra", "flash"),
    "attention_xformers": ("xformers memory-efficient, O(n) extra", "flash"),
    "attention_flash": ("flash-attn, O(n) extra", "flash"),
    "attention_sage": ("SageAttention, O(n) extra", "flash"),
    "attention_split": ("scores in slices sized to free memory: between flash and math", "math"),
    "attention_sub_quad": ("sub-quadratic chunks sized to free memory: between flash and math", "math"),
    "attention_basic": ("plain matmul + softmax: the n^2 scores held whole", "math"),
}


def host_attention():
    """Which attention ComfyUI would use. In a ComfyUI we imported ourselves (forced --cpu) it is what a default
    NVIDIA host picks (model_management: torch >= 2 on NVIDIA turns on PyTorch attention unless xformers is
    installed or --use-split/quad-cross-attention is given); inside a running ComfyUI it is the real choice."""
    if _IMPORTED_BY_US:
        return {"function": "attention_pytorch", "kernel": "flash",
                "why": "default on NVIDIA with torch>=2 (xformers, if installed, is also O(n)); "
                       "--use-split-cross-attention / sub-quadratic chunk the n^2 scores to fit free memory"}
    try:
        from comfy.ldm.modules import attention
        name = getattr(attention.optimized_attention, "__name__", str(attention.optimized_attention))
    except Exception:
        return None
    why, kernel = _KERNELS.get(name, ("unknown attention function", "flash"))
    return {"function": name, "kernel": kernel, "why": why}


def _tensors_for(family, checkpoint, phase):
    spec = FAMILIES[family]
    if checkpoint:
        return read_header(checkpoint)
    if phase == "sample":
        return _layout_tensors(spec["layout"])
    if not spec["vae"]:
        raise UserError(f"no bundled VAE for {family}; pass --checkpoint with the VAE file")
    return _layout_tensors(spec["vae"])


def detected_family(model_config, file_trace=False):
    from ..estimate.families import CONFIG_FAMILY
    name = type(model_config).__name__
    known = TRACEABLE_CONFIGS + (FILE_ONLY_CONFIGS if file_trace else ())
    return CONFIG_FAMILY.get(name) if name in known else None


def class_layout(comfyui_dir, family) -> dict:
    """The tensor layout of a family's standard diffusion-model file as ComfyUI's own class builds it on the meta
    device (comfy_recipes.CLASS_LAYOUTS: the model config comfy/model_detection.py gives that file): {"tensors": {name: {dtype,
    shape}}, ...}, keys as the file holds them (no prefix). Not read from a downloaded header."""
    import torch
    family = ALIASES.get(family, family)
    if family not in CLASS_LAYOUTS:
        raise UserError(f"no class layout recipe for {family}; known: {', '.join(sorted(CLASS_LAYOUTS))}")
    c = CLASS_LAYOUTS[family]
    comfy = import_comfy(comfyui_dir)
    from comfy import model_detection
    mcfg = model_detection.model_config_from_unet_config(dict(c["unet_config"]))
    if mcfg is None:
        raise UserError(f"this ComfyUI has no model config for {c['unet_config']}")
    dt = getattr(torch, _DTYPES[c["dtype"]])
    mcfg.set_inference_dtype(dt, None)
    with torch.device("meta"):
        model = mcfg.get_model({}, "", device=torch.device("meta"))
    sd = model.diffusion_model.state_dict()
    tensors = {k: {"dtype": c["dtype"], "shape": list(v.shape)} for k, v in sd.items()}
    n = sum(math.prod(t["shape"]) for t in tensors.values())
    return {"file": c["file"], "source_note": f"{c['source']}: keys and shapes of ComfyUI's "
            f"{type(model.diffusion_model).__module__}.{type(model.diffusion_model).__name__} built on the meta device "
            f"with the unet_config comfy/model_detection.py gives this file ({c['unet_config']}); not read from a "
            "downloaded header", "dtype_note": f"all {c['dtype']} (the file's name says so)", "__metadata__": {},
            "family": c.get("family", family), "components": ["diffusion_model"], "comfy_model_config": type(mcfg).__name__,
            "parameters": n, "comfyui_version": getattr(__import__("comfyui_version"), "__version__", None)
            if (Path(comfyui_dir) / "comfyui_version.py").is_file() else None, "tensors": tensors}


def vae_class_layout(comfyui_dir, family) -> dict:
    """The tensor layout of a family's standard VAE file as the class comfy/sd.py picks for it builds it on the meta
    device (comfy_recipes.VAE_CLASS_LAYOUTS); keys as that class names them. Not read from a downloaded header."""
    import importlib
    import torch
    family = ALIASES.get(family, family)
    if family not in VAE_CLASS_LAYOUTS:
        raise UserError(f"no VAE class layout recipe for {family}; known: {', '.join(sorted(VAE_CLASS_LAYOUTS))}")
    c = VAE_CLASS_LAYOUTS[family]
    import_comfy(comfyui_dir)
    mod, _, name = c["class"].rpartition(".")
    cls = getattr(importlib.import_module(mod), name)
    with torch.device("meta"):
        model = cls(**json.loads(json.dumps(c["kwargs"])))
    tensors = {k: {"dtype": c["dtype"], "shape": list(v.shape)} for k, v in model.state_dict().items()
               if v.dtype.is_floating_point}
    n = sum(math.prod(t["shape"]) for t in tensors.values())
    return {"file": c["file"], "source_note": f"{c['source']}: keys and shapes of ComfyUI's {c['class']} built on the "
            f"meta device with the config comfy/sd.py VAE.__init__ gives this file ({c['kwargs']}); not read from a "
            "downloaded header", "dtype_note": f"all {c['dtype']}", "vae_of": c.get("family", family),
            # a config the class takes from the file's metadata goes where ComfyUI reads it (sd.py:473-475: "config"."vae")
            "__metadata__": {"config": json.dumps({"vae": c["kwargs"]["config"]})} if c["kwargs"].get("config") else {},
            "components": ["vae"], "parameters": n,
            "comfyui_version": getattr(__import__("comfyui_version"), "__version__", None)
            if (Path(comfyui_dir) / "comfyui_version.py").is_file() else None, "tensors": tensors}


def build_diffusion(comfy, sd, dtype=None):
    import torch
    from comfy import model_detection
    prefix = model_detection.unet_prefix_from_state_dict(sd)
    if not any(k.startswith(prefix) for k in sd):
        prefix = ""        # a diffusion-model-only file (load_diffusion_model_state_dict)
    cfg = model_detection.model_config_from_unet(sd, prefix)
    if cfg is None:
        raise UserError("ComfyUI does not recognise this diffusion model")
    weight_dtype = next((v.dtype for k, v in sd.items() if k.startswith(prefix) and v.dtype.is_floating_point
                         and v.ndim > 1), torch.float16)
    if dtype is not None:
        weight, cast = getattr(torch, dtype), None
    else:
        weight, cast = host_dtypes(weight_dtype, cfg.supported_inference_dtypes)
    cfg.set_inference_dtype(weight, cast)
    with torch.device("meta"):
        model = cfg.get_model(sd, prefix, device=torch.device("meta"))
    model.eval()
    return model, cfg, weight, cast


def build_vae(comfy, sd, dtype=None, metadata=None):
    """comfy.sd.VAE from the state dict, with the file's metadata as load_state_dict_guess_config and VAELoader hand it
    (LTX-Video's VideoVAE takes its config from metadata "config": LTX-2's video VAE)."""
    import torch
    vae_sd = {k[len("first_stage_model."):]: v for k, v in sd.items() if k.startswith("first_stage_model.")} or \
        {k[len("vae."):]: v for k, v in sd.items() if k.startswith("vae.")} or sd
    with torch.device("meta"):
        vae = comfy.sd.VAE(sd=vae_sd, metadata=metadata or None)
    dt = getattr(torch, dtype) if dtype else vae.working_dtypes[0]
    vae.first_stage_model.to(dt)
    vae.first_stage_model.eval()
    return vae, dt


def build_text_case(comfy, family, checkpoint=None, dtype=None) -> dict:
    """One prompt through the family's text encoders as ComfyUI builds them (load_text_encoder_state_dicts, fp16
    weights computed in float32 like ComfyUI's TE patcher), padded to the tokenizers' minimum lengths."""
    import torch
    import comfy.model_management as mm
    import comfy.sd
    if family not in TEXT_ENCODERS:
        raise UserError(f"no bundled text encoder layout for {family}; phase text traces "
                        f"{', '.join(sorted(TEXT_ENCODERS))}")
    names, clip_type = TEXT_ENCODERS[family]
    sds = [meta_state_dict(read_header(checkpoint))] if checkpoint else \
        [meta_state_dict(_layout_tensors(n)) for n in names]
    meta, cpu = torch.device("meta"), torch.device("cpu")
    dt = getattr(torch, dtype) if dtype else torch.float16
    if clip_type == "WAN":
        # the UMT5 tokenizer ships inside the model file (spiece_model), which a header has no data for:
        # build the encoder class directly and feed 512 tokens (the tokenizer's minimum length)
        import comfy.text_encoders.wan as wan
        with torch.device("meta"):
            model = wan.te()(device=meta, dtype=dt, model_options={})
        tokens = {"umt5xxl": [[(1, 1.0)] + [(0, 1.0)] * 511]}
    else:
        opts = {"load_device": cpu, "offload_device": cpu, "initial_device": meta, "dtype": dt}
        logging.disable(logging.WARNING)           # "clip missing: text_projection" for files without one
        try:
            with torch.device("meta"):
                clip = comfy.sd.load_text_encoder_state_dicts(
                    state_dicts=sds, clip_type=getattr(comfy.sd.CLIPType, clip_type), model_options=opts)
        finally:
            logging.disable(logging.NOTSET)
        model = clip.cond_stage_model
        tokens = clip.tokenize("a photo of a garden")
    model.reset_clip_options()
    model.set_clip_options({"execution_device": meta})

    def call(tok):
        saved = mm.intermediate_device
        mm.intermediate_device = lambda: meta      # TE outputs stay on the traced device
        try:
            return model.encode_token_weights(tok)
        finally:
            mm.intermediate_device = saved
    lengths = {k: sum(len(chunk) for chunk in v) for k, v in tokens.items() if isinstance(v, list)}
    info = {"family": family, "phase": "text", "class": type(model).__name__, "config": clip_type,
            "dtype": str(dt).replace("torch.", ""), "manual_cast": "float32", "latent": [],
            "cfg": False, "note": "one prompt, tokens " + ", ".join(f"{k} {n}" for k, n in lengths.items()),
            "width": None, "height": None, "frames": 1, "batch": 1,
            "checkpoint": os.path.basename(checkpoint) if checkpoint else None}
    return {"owner": model, "weights": model, "call": call, "args": (tokens,), "kwargs": {}, "info": info}


def trace_base_model(model, latent, sigma=None, conds=None, attention="flash", offload=None) -> dict:
    """Exact peak of one apply_model call of a model ComfyUI already has (comfy.model_base.BaseModel, e.g.
    patcher.model inside a running ComfyUI, for the Footprint node's exact mode). `latent` and every value of
    `conds` ({"c_crossattn": ..., "y": ..., "guidance": ...}, as apply_model takes them) are tensors or shapes
    (batch first, cond+uncond already batched). Weights are swapped for meta twins, nothing is read or copied;
    offload="cpu" streams the parameters still on the CPU (a partially loaded model)."""
    import torch
    from .tracer import trace

    def meta(t, dtype=torch.float32):
        return torch.empty(tuple(t.shape) if isinstance(t, torch.Tensor) else tuple(t),
                           dtype=t.dtype if isinstance(t, torch.Tensor) else dtype, device="meta")
    x = meta(latent)
    kw = {k: meta(v) for k, v in (conds or {}).items()}
    kw["transformer_options"] = {"optimized_attention_override": _through_sdpa}
    s = meta(sigma) if sigma is not None else torch.empty((x.shape[0],), device="meta")
    r = trace(model, x, s, kwargs=kw, call=model.apply_model, attention=attention, offload=offload)
    r["host_attention"] = host_attention()
    return r


def _through_sdpa(func, *args, **kwargs):
    from comfy.ldm.modules import attention
    return attention.attention_pytorch(*args, **kwargs)


def latent_scale(family):
    """(spatial, temporal) compression of a family's latent: the estimate's one table (estimate.spec.FAMILY s, t);
    temporal None for image models."""
    from ..estimate import spec as est_spec
    if family not in est_spec.FAMILY:
        raise UserError(f"no latent geometry for {family} in estimate.spec.FAMILY")
    g = est_spec.FAMILY[family]
    return g["s"], g["t"]


def _latent_frames(frames, t):
    return max(1, (frames - 1) // t + 1) if t else 1


def trace_family(comfyui_dir, family, width, height, frames=1, batch=1, attention="flash", phase="sample",
                 checkpoint=None, cfg=None, dtype=None, offload=None) -> dict:
    family = ALIASES.get(family, family)
    family = FAMILY_FILES.get(family, {}).get("family", family)  # a FAMILY_FILES entry naming its family (hunyuan-video-1.5)
    if family not in FAMILIES:
        raise UserError(f"unknown family {family!r}; known: {', '.join(family_names())}")
    if width <= 0 or height <= 0 or frames <= 0 or batch <= 0:
        raise UserError("width, height, frames and batch must be positive")
    if phase not in PHASES:
        raise UserError(f"phase must be one of {', '.join(PHASES)}, not {phase!r}")
    if frames > 1 and not FAMILIES[family].get("video"):
        video = ", ".join(sorted(f for f, v in FAMILIES.items() if v.get("video")))
        raise UserError(f"--frames is for video families ({video}); {family} makes images (use --batch)")
    if checkpoint:  # a bare name from the checkout's models/ folders; a missing file refused before the slow import
        checkpoint = find_checkpoint(comfyui_dir, checkpoint, phase)
    with contextlib.redirect_stdout(sys.stderr):     # keep stdout clean for --json
        r = _trace_family(comfyui_dir, family, width, height, frames, batch, attention, phase, checkpoint, cfg, dtype,
                          offload)
    # the latent is width // s x height // s (build_case), as estimate says with the same words (ux57)
    from ..estimate.spec import latent_rounding_note
    rounded = latent_rounding_note(width, height, latent_scale(family)[0]) if phase in ("sample", "decode") else None
    r["notes"] = [rounded] if rounded else []
    return r


def _trace_family(comfyui_dir, family, width, height, frames, batch, attention, phase, checkpoint, cfg, dtype,
                  offload):
    from .tracer import trace
    case = build_case(comfyui_dir, family, width, height, frames, batch, phase, checkpoint, cfg, dtype)
    r = trace(case["weights"], *case["args"], kwargs=case["kwargs"], call=case["call"], attention=attention,
              offload=offload)
    r["model"] = case["info"]
    if offload:
        r["model"]["note"] += "; lowvram: weights streamed per layer"
    r["host_attention"] = host_attention()
    return r


def build_case(comfyui_dir, family, width, height, frames=1, batch=1, phase="sample", checkpoint=None, cfg=None,
               dtype=None) -> dict:
    """ComfyUI's model for the family on the meta device and the inputs of one step: {"owner": the module to
    move when running it for real, "weights": the module whose parameters are resident, "call", "args",
    "kwargs", "info"}. benchmarks/gpu_trace_vs_cuda.py runs the same case on CUDA."""
    family = ALIASES.get(family, family)
    spec = FAMILIES[family]
    comfy = import_comfy(comfyui_dir)
    if phase == "text":
        return build_text_case(comfy, family, checkpoint, dtype)
    import torch
    tensors = _tensors_for(family, checkpoint, phase)
    sd = meta_state_dict(tensors)
    meta = torch.device("meta")
    if phase == "sample":
        model, mcfg, weight, cast = build_diffusion(comfy, sd, dtype)
        detected = detected_family(mcfg, file_trace=True)
        if detected != family:
            what = f"family {detected}" if detected else "a model class trace has no conditioning recipe for"
            raise UserError(f"ComfyUI detects this model as {type(mcfg).__name__} ({what}), not --family {family}")
        use_cfg = spec["cfg"] if cfg is None else bool(cfg)
        # cond and uncond batched together, as calc_cond_batch does when it fits and their conds concatenate; a
        # family whose context is a CONDRegular of the prompt's own length runs them as separate passes (cfg_separate)
        separate = use_cfg and cfg is None and spec.get("cfg_separate")
        b = batch * (2 if use_cfg and not separate else 1)
        ch = mcfg.latent_format.latent_channels
        ds, dt_ = latent_scale(family)
        # a latent format with 3 latent dimensions (Wan 2.1's, which Qwen-Image uses) gets [B, C, T, H, W]: the
        # sampler unsqueezes an image latent (comfy/sample.py fix_empty_latent_channels)
        five = spec.get("video") or getattr(mcfg.latent_format, "latent_dimensions", 2) == 3
        shape = (b, ch, _latent_frames(frames, dt_), height // ds, width // ds) if five else \
            (b, ch, height // ds, width // ds)
        x = torch.empty(shape, dtype=torch.float32, device=meta)
        kw = {}
        if spec.get("audio"):  # LTX-2: video and audio latents packed as the sampler packs them (utils.pack_latents)
            from ..estimate.spec import audio_tokens
            a_shape = (b, spec["audio"][0], audio_tokens(family, frames), spec["audio"][1])
            kw["latent_shapes"] = [torch.Size(shape), torch.Size(a_shape)]
            x = torch.empty((b, 1, math.prod(shape[1:]) + math.prod(a_shape[1:])), dtype=torch.float32, device=meta)
        sigma = torch.empty((b,), dtype=torch.float32, device=meta)
        ctx_len, ctx_dim = spec["context"]
        kw["c_crossattn"] = torch.empty((b, ctx_len, ctx_dim), dtype=torch.float32, device=meta)
        if spec.get("y"):
            kw["y"] = torch.empty((b, spec["y"]), dtype=torch.float32, device=meta)
        if spec.get("guidance"):
            kw["guidance"] = torch.empty((b,), dtype=torch.float32, device=meta)
        if spec.get("num_tokens"):          # Lumina 2 / Z-Image: model_base.Lumina2.extra_conds (no attention mask)
            kw["num_tokens"] = ctx_len
        if spec.get("mask"):                # the text encoder's token mask, int64 as sd1_clip returns it
            kw["attention_mask"] = torch.empty((b, ctx_len), dtype=torch.int64, device=meta)
        if spec.get("frame_rate"):
            kw["frame_rate"] = spec["frame_rate"]
        if spec.get("concat"):              # model_base concat_cond's channels, cat to the latent in _apply_model
            kw["c_concat"] = torch.empty((b, spec["concat"]) + shape[2:], dtype=torch.float32, device=meta)
        # attention through PyTorch SDPA whatever the host picked (xformers, split and sub-quadratic do not run on
        # meta tensors); the tracer then models flash and math, and host_attention() says what the host uses
        kw["transformer_options"] = {"optimized_attention_override": _through_sdpa}
        info = {"family": family, "phase": phase, "class": type(model.diffusion_model).__name__,
                "config": type(mcfg).__name__, "dtype": str(weight).replace("torch.", ""),
                "manual_cast": str(cast).replace("torch.", "") if cast else None,
                "latent": list(shape), "cfg": use_cfg,
                "note": "cond and uncond as separate passes (their contexts differ in length), one traced" if separate
                else "cond+uncond batched" if use_cfg else "single pass (cfg 1)",
                "context": [ctx_len, ctx_dim]}
        case = {"owner": model, "weights": model, "call": model.apply_model, "args": (x, sigma), "kwargs": kw}
    else:
        vae, dt = build_vae(comfy, sd, dtype, tensors.get("__metadata__"))
        video = vae.latent_dim == 3
        if phase == "decode":
            ch = vae.latent_channels
            ds, dt_ = latent_scale(family)
            vae_ds = vae.upscale_ratio[-1] if isinstance(vae.upscale_ratio, tuple) else vae.upscale_ratio
            if vae_ds != ds:
                raise UserError(f"this VAE upscales {vae_ds}x, a {family} latent is {ds}x smaller than its image")
            shape = (batch, ch, _latent_frames(frames, dt_ or 4), height // ds, width // ds) if video else \
                (batch, ch, height // ds, width // ds)
            fn = vae.first_stage_model.decode
        else:
            shape = (batch, 3, frames, height, width) if video else (batch, 3, height, width)
            fn = vae.first_stage_model.encode
        x = torch.empty(shape, dtype=dt, device=meta)
        info = {"family": family, "phase": phase, "class": type(vae.first_stage_model).__name__,
                "config": "VAE", "dtype": str(dt).replace("torch.", ""), "manual_cast": None,
                "latent": list(shape), "cfg": False, "note": "one untiled pass"}
        case = {"owner": vae.first_stage_model, "weights": vae.first_stage_model, "call": fn, "args": (x,),
                "kwargs": {}}
    info.update(width=width, height=height, frames=frames, batch=batch,
                checkpoint=os.path.basename(checkpoint) if checkpoint else None)
    case["info"] = info
    return case
