"""Footprint Estimate: per-phase peak memory of this workflow's models at this latent size, judged against
the live budget, shown on the node's face (web/estimate.js); passes the latent through, and can stop the
run before sampling when the estimate does not fit.

It reads what ComfyUI has loaded (real parameter dtypes and shapes, the latent's real shape) instead of
re-reading files; the numbers come from memory/estimate.py. ComfyUI's own `memory_required` for the same
latent is shown beside ours, labelled. Mode "exact" also traces one sampling step of the loaded model at this
latent on meta tensors (estimate_exact.py), shows the traced peak beside the formula, and when the trace ran
judges the sample phase on the traced activations (the verdict, peak and stop). When the flight
recorder holds a matching run, the peak measured here is shown beside the formula (estimate_measured.py)."""
import logging

from comfy_api.latest import io

from ..memory.estimate import formula as est_core
from ..memory.estimate import verdict as est_verdict
from ..memory.estimate import families
from ..memory.estimate import latent_upscale as est_upscale
from ..memory.estimate.headers import torch_dtype_name
from ..memory.estimate.report import PIN_DEVICES, TEXT_TOKENS_MAX
from ..memory.units import GiB, fmt_bytes
from . import estimate_exact, estimate_measured, host_models

log = logging.getLogger("gpu_garden")

CATEGORY = "GPU Garden"
Budget = io.Custom("GPU_GARDEN_BUDGET")
CFG_MODES = ("auto", "on", "off", "batched", "separate")  # on: ComfyUI chooses (cfg_batch); batched/separate force
WEIGHT_DTYPES = ("as loaded", "fp32", "bf16", "fp16", "fp8", "gguf")
VAE_DTYPES = ("as loaded", "bf16", "fp16", "fp32")
ON_OVER = ("warn", "stop")
MODES = ("formula", "exact")
UPSCALE_CHOICES = ("off", "auto")  # then the latent upscale model files ComfyUI lists (upscale_options)
# the size widgets' ranges (used when no latent is connected); the workflow route checks its body against the same
SIZE_RANGES = {"width": (64, 16384), "height": (64, 16384), "frames": (1, 10000), "batch": (1, 4096)}


class FootprintDoesNotFit(Exception):
    """Raised by the node in "stop" mode; its message is what the user reads in ComfyUI's error dialog. ComfyUI names
    the error by module and class (execution.full_type_name), and it loads the pack under the folder's full path:
    without this the dialog read "/home/USER/ComfyUI/custom_nodes/comfyui-gpu-garden.nodes.estimate.FootprintDoesNotFit"."""
    __module__ = "gpu_garden"


# -- loaded objects -> tensor tables ------------------------------------------------------------------
def table_of(module) -> dict:
    """{name: (dtype, shape)} of a module's state dict as loaded: ComfyUI-GGUF tensors report their
    quantization type and logical shape; everything else its torch dtype."""
    out = {}
    for name, t in module.state_dict().items():
        qtype = getattr(t, "tensor_type", None)
        qshape = getattr(t, "tensor_shape", None)
        if qtype is not None and qshape is not None and getattr(qtype, "name", None):
            out[name] = (qtype.name, tuple(int(d) for d in qshape))
        else:
            out[name] = (torch_dtype_name(t.dtype), tuple(int(d) for d in t.shape))
    return out


def _itemsize(dtype, default=2) -> int:
    try:
        return int(dtype.itemsize)
    except Exception:
        return default


def model_components(model, clip=None, vae=None) -> tuple[list, dict]:
    """(components, policy) from MODEL / CLIP / VAE objects."""
    base = model.model
    comps = [{"table": table_of(base.diffusion_model), "role": "diffusion_model", "source": model_title(model)}]
    cast = getattr(base, "manual_cast_dtype", None)
    dtype = cast or (base.get_dtype() if hasattr(base, "get_dtype") else None)
    policy = {"cast_fp32": False, "compute_bytes": _itemsize(dtype), **host_policy()}
    if clip is not None:
        cond = getattr(clip, "cond_stage_model", None)
        if cond is not None:
            for c in families.split_by_head(table_of(cond), "text_encoder"):
                c["source"] = f"CLIP {c['source']}".strip()
                comps.append(c)
    if vae is not None:
        fsm = getattr(vae, "first_stage_model", None)
        if fsm is not None:
            comps.append({"table": table_of(fsm), "role": "vae", "source": "VAE"})
            policy["vae_bytes"] = _itemsize(getattr(vae, "vae_dtype", None))
    return comps, policy


def host_policy() -> dict:
    """How this ComfyUI runs what it estimates, for the node's run and the open graph's route (estimate_routes) alike:
    its compute device (--cpu: cpu, so fp32 weights judged on host RAM, as the CLI's --device cpu), platform, reserve
    and Dynamic VRAM, and whether it pins memory (--disable-pinned-memory: no pinned copies, host_ram.ram_options),
    and whether its text encoders load on the compute device (te_on_device: te_loaded.on_device)."""
    dev = compute_device_kind()
    return {"device": dev, "platform": _platform(), "reserve": comfy_reserve(),
            "dynamic_vram": dynamic_vram_mode(), "pinned_memory": pinned_memory(dev),
            "te_on_device": host_models.text_encoders_on_device()}


def pinned_memory(device=None) -> bool:
    """False where ComfyUI runs with --disable-pinned-memory (0.8.0 cli_args.py:165; model_management.py:1119 then
    pins nothing) or on a device other than NVIDIA's or AMD's (1120: mps, xpu, cpu pin nothing, report.PIN_DEVICES);
    True where it does or the flag cannot be read."""
    if (device or compute_device_kind()) not in PIN_DEVICES:
        return False
    try:
        from comfy.cli_args import args

        return not getattr(args, "disable_pinned_memory", False)
    except Exception:
        return True


def comfy_reserve():
    """ComfyUI's live reserve (model_management.extra_reserved_memory(): --reserve-vram, or its platform
    default); None (the estimate's own default for the platform) when it cannot be read."""
    try:
        import comfy.model_management as mm

        return int(mm.extra_reserved_memory())
    except Exception:
        return None


def dynamic_vram_mode() -> str:
    """"on"/"off": whether ComfyUI runs Dynamic VRAM now (host_models.dynamic_vram: comfy-aimdo initialised, not
    merely requested); "auto" (detect comfy-aimdo) where the host's flag is unknown."""
    on = host_models.dynamic_vram()
    return "auto" if on is None else "on" if on else "off"


def compute_device_kind() -> str:
    return host_models.compute_backend() or "cuda"  # one device lookup for all of nodes/ (host_models.py)


_platform = host_models.platform_name


def model_title(model) -> str:
    cfg = getattr(model.model, "model_config", None)
    return f"MODEL ({type(cfg).__name__})" if cfg is not None else "MODEL"


def latent_size(samples_shape, family: str) -> tuple[int, int, int, int]:
    """(width, height, frames, batch) in pixels from a latent tensor's shape."""
    spec = est_core.FAMILY.get(family, est_core.FAMILY["unknown"])
    s, t = spec["s"], spec["t"]
    shape = list(samples_shape)
    batch, h, w = shape[0], shape[-2], shape[-1]
    frames = ((shape[2] - 1) * t + 1) if len(shape) == 5 and t else 1
    return w * s, h * s, frames, batch


def empty_latent(model, family, width, height, frames, batch):
    import torch

    spec = est_core.FAMILY.get(family, est_core.FAMILY["unknown"])
    ch = getattr(getattr(model.model, "latent_format", None), "latent_channels", spec["ch"])
    s, t = spec["s"], spec["t"]
    shape = [batch, ch, (frames - 1) // t + 1, height // s, width // s] if t else [batch, ch, height // s, width // s]
    return {"samples": torch.zeros(shape)}


def upscale_options() -> list:
    """The latent_upscale input's choices: off, auto, and the files in ComfyUI's latent_upscale_models folder."""
    try:
        import folder_paths

        files = list(folder_paths.get_filename_list("latent_upscale_models"))
    except Exception:  # no ComfyUI here (unit tests), or a ComfyUI without the folder
        files = []
    return list(UPSCALE_CHOICES) + [f for f in files if f not in UPSCALE_CHOICES]


def upscaler(choice, module, notes):
    """The upscaler LTX-2's two stages count (memory/estimate/latent_upscale.py), or None (one stage): the wired
    upscale_model (its config and weights as loaded), else the choice: auto (Lightricks' x2, bundled layout) or a file
    in latent_upscale_models (its header), as the CLI's --upscale FILE|auto."""
    if module is not None:
        up = est_upscale.from_module(module, "the wired upscale_model")
        if up is None:
            notes.append("the wired upscale_model is not LTX-2's latent upsampler (LatentUpsampler): one stage estimated")
        return up
    if not choice or choice == "off":
        return None
    if choice == "auto":
        return est_upscale.bundled("latent_upscale auto, no upscale_model wired")
    try:
        import folder_paths

        path = folder_paths.get_full_path("latent_upscale_models", choice)
    except Exception:
        path = None
    up = est_upscale.from_file(path) if path else None
    if up is None:
        notes.append(f"latent_upscale {choice}: " + ("not found in latent_upscale_models" if not path else
                     "not LTX-2's latent upscale model") + ": Lightricks' x2 from the bundled layout stands in")
        return {"values": None}
    return up


def stage_two_shape(shape, two_stage: bool) -> list:
    """The latent stage 2 samples: the stage-1 latent at twice its width and height (est_upscale.SCALE), else as is."""
    if not two_stage:
        return list(shape)
    return list(shape[:-2]) + [int(shape[-2]) * est_upscale.SCALE, int(shape[-1]) * est_upscale.SCALE]


def _upscale_model_input() -> list:
    """The upscale_model socket where this ComfyUI has the LATENT_UPSCALE_MODEL type (io.LatentUpscaleModel, 0.8.0);
    an older one gets the node without it (latent_upscale auto/a file still counts the step), not a node that fails."""
    kind = getattr(io, "LatentUpscaleModel", None)
    if kind is None:
        return []
    return [kind.Input("upscale_model", optional=True, tooltip="LTX-2's latent upscale model (Load Latent Upscale "
                       "Model): wired, the estimate counts two stages with it")]


def comfy_memory_required(model, latent_shape, b_eff):
    """ComfyUI's own heuristic for this latent, as its sampler asks for it (batch x2 with CFG)."""
    try:
        shape = [b_eff] + list(latent_shape[1:])
        return int(model.model.memory_required(shape))
    except Exception as exc:
        log.debug("[GPU Garden] memory_required failed: %s", exc)
        return None


def live_budget(budget, vram_gb, device=None):
    """(bytes, label) this run is judged against: vram_gb when set, else `device` (a torch.device: the model's
    load device; default the device ComfyUI computes on), read from the budget input or a recent snapshot. A
    model on the CPU (--cpu) has no VRAM budget even when the machine has a GPU (the snapshot still lists it);
    another device in the snapshot (a second GPU, an NVIDIA card beside an XPU) is not used."""
    if vram_gb and vram_gb > 0:
        return int(vram_gb * GiB), f"{vram_gb:g} GiB (the node's vram_gb, read as GiB)"
    from . import host_models

    if device is None or not hasattr(device, "type"):
        device = host_models.compute_device()
    if getattr(device, "type", None) == "cpu":
        return None, "ComfyUI runs on the CPU here: no GPU budget (set vram_gb to plan for a card)"
    snap = budget
    if snap is None:
        try:
            from .budget_routes import recent_snapshot

            snap = recent_snapshot()  # the push loop's, when fresh: no NVML read on the worker
        except Exception:
            try:
                from ..memory.budget import probe

                snap = probe.snapshot()
            except Exception as exc:
                return None, f"no budget: device probe failed ({type(exc).__name__})"
    snap = snap if isinstance(snap, dict) else {}
    if device is not None:
        from ..memory.budget.probe import _device_key

        listed = [d for d in snap.get("devices", ()) if isinstance(d, dict) and d.get("device")]
        mine = [d for d in listed if _device_key(d.get("device")) == _device_key(str(device))]
        if mine:
            snap = dict(snap, devices=mine)
        elif listed:  # DirectML, or an XPU the probe could not read: another card here is not the budget
            return None, f"no budget: the probe does not measure {device} (ComfyUI's device); set vram_gb to plan"
    b, label = est_core.budget_from_snapshot(snap, getattr(device, "index", None))
    return b, label if b else "no budget (no GPU found)"


def for_ui(est: dict, budget_label: str, comfy_total) -> dict:
    pub = est_core.public(est)
    keep = ("family", "variant", "family_name", "unknown", "width", "height", "frames", "batch", "cfg", "latent", "phases",
            "breakdown", "fixed", "peak", "peak_phase", "comfyui_memory_required", "comfyui_factor", "assumptions",
            "verdict", "budget", "headroom", "min_vram_gb", "weights", "all_resident",
            "peak_torch", "peak_device", "peak_untiled", "tiled_retry", "vae", "host_ram", "dynamic_vram", "outcome",
            "verdict_caveat")
    out = {k: pub.get(k) for k in keep}
    out["components"] = [{k: c[k] for k in ("source", "role", "kind", "bytes", "resident", "dtypes")} for c in pub["components"]]
    out["knobs"] = pub["knobs"][:5]
    out["budget_source"] = budget_label
    out["comfyui_total"] = comfy_total
    # ComfyUI computing on the CPU with no card asked for: judged on host RAM, no card size (as the CLI's --device cpu)
    out["on_cpu"] = est_verdict.on_cpu(est.get("policy") or {}) and not est["budget"]
    out["summary"] = summary(est, budget_label)
    try:
        from ..memory.estimate import workflow as est_workflow

        out["tiers"] = est_workflow.tiers(est)  # the verdict on each common card tier, as in extra.gpu_garden.memory
        out["host_ram_assumed"] = est_workflow.host_ram_assumed(est)  # the RAM those verdicts assumed
    except Exception as exc:  # never lose the estimate for a side figure
        log.debug("[GPU Garden] tiers failed: %s", exc)
    return out


def summary(est: dict, budget_label: str = "") -> str:
    line = _summary(est, budget_label)
    return f"{line} ({est['verdict_caveat']})" if est.get("verdict_caveat") else line


def _summary(est: dict, budget_label: str = "") -> str:
    peak = f"peak {fmt_bytes(est['peak'])} ({est['peak_phase'].replace('_', ' ')})"
    o = est.get("outcome") or {"status": est["verdict"]}
    if est["budget"] and o["status"] == "runs with offload":  # over the budget, but ComfyUI loads the model partially
        return f"RUNS WITH OFFLOAD: {peak} over {fmt_bytes(est['budget'])}, at least {fmt_bytes(o['offloaded'])} of weights stay in RAM (slower)"
    if est["budget"]:
        return f"{o['status'].upper()}: {peak} of {fmt_bytes(est['budget'])}"
    return f"{peak}; {budget_label or 'no budget'}"


def est_verdict_exit(est: dict) -> bool:
    """True when ComfyUI could not run it on the budget (outcome does not fit), as the CLI's exit 1."""
    return (est.get("outcome") or {}).get("status", est["verdict"]) == "does not fit"


def stop_message(est: dict) -> str:
    usable = [k for k in est["knobs"] if not k.get("host_ram_short")]
    fit = [k for k in usable if k.get("fits")]  # only these fit the budget alone (the face's "✓ fits")
    named = "; ".join(f"{k['label']} (-{fmt_bytes(k['saving'])})" for k in (fit or usable)[:3])
    why = (est.get("outcome") or {}).get("reason")  # what ComfyUI would do about it (RAM short, more than it can offload)
    return (f"GPU Garden Footprint Estimate stopped the run before sampling: {est['family_name']} at "
            f"{est['width']}x{est['height']}" + (f"x{est['frames']}" if est["frames"] > 1 else "")
            + f" needs about {fmt_bytes(est['peak'])} at its peak ({est['peak_phase'].replace('_', ' ')}), "
            f"the budget is {fmt_bytes(est['budget'])}" + (f": {why}" if why else "") + ". "
            + (f"What would fit: {named}. " if fit else f"No single change fits it; the largest savings: {named}. " if named else "")
            + "Set 'when it does not fit' to warn to run anyway.")


def prompt_files(prompt, node) -> dict:
    """{role: [file names]} the loaders feeding node `node`'s model, clip and vae in the queued prompt
    (workflow.files_feeding): host RAM's file-backed test per file, as --workflow has it; a loader on another branch
    does not count. {} when the prompt or the node's id is missing or the prompt is not a graph (the policy decides)."""
    if not isinstance(prompt, dict) or node is None:
        return {}
    from ..memory.estimate import workflow as est_workflow

    try:
        return est_workflow.files_feeding(prompt, node)
    except Exception:  # an odd graph: as the policy says
        return {}


def _hidden_prompt() -> list:
    """The queued prompt (the flight recorder's file names) and the node's id (the loaders feeding it)."""
    return [h for h in (getattr(io.Hidden, "prompt", None), getattr(io.Hidden, "unique_id", None)) if h is not None]


class GPUGardenFootprintEstimate(io.ComfyNode):
    @classmethod
    def define_schema(cls):
        return io.Schema(
            node_id="GPUGardenFootprintEstimate",
            display_name="Footprint Estimate",
            category=CATEGORY,
            description=("Estimates the peak GPU memory of text encoding, sampling and VAE decode for these models at "
                         "this latent size, from the loaded weights, and judges it against the budget. Passes the "
                         "latent through: put it between the latent and the sampler. Mode exact also traces the loaded "
                         "model's sampling step on meta tensors and shows that peak beside the formula."),
            inputs=[
                io.Model.Input("model"),
                io.Latent.Input("latent", optional=True,
                                tooltip="passed through; without it, an empty latent of width x height x frames x batch is made"),
                io.Clip.Input("clip", optional=True, tooltip="adds the text-encode phase"),
                io.Vae.Input("vae", optional=True, tooltip="the decoder's real weights; without it the family's usual VAE is assumed"),
                Budget.Input("budget", optional=True, tooltip="from the VRAM Budget node; without it, this machine's compute device now"),
                io.Int.Input("width", default=1024, min=SIZE_RANGES["width"][0], max=SIZE_RANGES["width"][1], step=8, tooltip="used when no latent is connected"),
                io.Int.Input("height", default=1024, min=SIZE_RANGES["height"][0], max=SIZE_RANGES["height"][1], step=8, tooltip="used when no latent is connected"),
                io.Int.Input("frames", default=1, min=SIZE_RANGES["frames"][0], max=SIZE_RANGES["frames"][1], tooltip="video models; used when no latent is connected"),
                io.Int.Input("batch", default=1, min=SIZE_RANGES["batch"][0], max=SIZE_RANGES["batch"][1], tooltip="used when no latent is connected"),
                io.Combo.Input("cfg", options=list(CFG_MODES), default="auto",
                               tooltip="on: CFG on, cond and uncond batched (x2) where ComfyUI's memory check lets it, else one "
                                       "at a time; batched / separate force one; off: cfg 1. auto: as the family's usual "
                                       "workflow (FLUX.1 and HunyuanVideo run at cfg 1)"),
                io.Combo.Input("weights_dtype", options=list(WEIGHT_DTYPES), default="as loaded", optional=True,
                               tooltip="plan for the diffusion model in another dtype (fp8, GGUF Q8_0, ...) instead of the loaded one"),
                io.Combo.Input("vae_dtype", options=list(VAE_DTYPES), default="as loaded", optional=True,
                               tooltip="plan for the VAE in another dtype (fp32 = --fp32-vae) instead of the one ComfyUI picked"),
                io.Int.Input("vae_tile", default=0, min=0, max=4096, step=32, optional=True,
                             tooltip="the VAE tile size in pixels you decode with (VAE Decode (Tiled)'s tile_size, 64-4096): the decode "
                                     "is judged tiled; 0: VAE Decode as ComfyUI runs it (tiled only after an out-of-memory)"),
                io.Int.Input("text_tokens", default=0, min=0, max=TEXT_TOKENS_MAX, optional=True,
                             tooltip="text tokens the model attends to jointly (FLUX, SD3, ...); 0: the family's usual count"),
                io.Float.Input("vram_gb", default=0.0, min=0.0, max=1024.0, step=0.5,
                               tooltip="judge against this many GiB instead (plan for another card); 0: the budget input or this machine"),
                io.Combo.Input("when_it_does_not_fit", options=list(ON_OVER), default="warn",
                               tooltip="stop: end the run here with the estimate and what would fit, before anything is sampled"),
                io.Combo.Input("mode", options=list(MODES), default="formula",
                               tooltip="exact: also trace one sampling step of the loaded model at this latent on meta "
                                       "tensors (no memory used, seconds on a CPU) and show its peak beside the formula"),
                # last: a saved workflow's widgets_values are positional, and the widgets before keep their places
                io.Combo.Input("latent_upscale", options=upscale_options(), default="off", optional=True,
                               tooltip="LTX-2's two stages (LTXVLatentUpsampler between two samplers): this latent is stage "
                                       "1's, stage 2 samples and decodes twice its width and height, and the upscale step is a "
                                       "phase of its own. auto: the wired upscale_model, else Lightricks' x2 from the bundled "
                                       "layout; a file: that latent upscale model's header; off: one stage, unless an "
                                       "upscale_model is wired (it counts the two stages)"),
            ] + _upscale_model_input(),
            outputs=[io.Latent.Output(display_name="latent"), io.String.Output(display_name="report")],
            hidden=_hidden_prompt(),  # the prompt's model file names, as the flight recorder records them
            is_output_node=True,
        )

    @classmethod
    def validate_inputs(cls, latent_upscale="off"):
        """ComfyUI checks a combo's value against this machine's list before anything runs (execution.py 898-945, skipped
        for an input named here): a shared workflow whose latent_upscale names a file this machine lacks would be refused
        whole, sampler and all. upscaler() answers that itself (not found: the bundled x2 stands in, said on the face)."""
        return True if isinstance(latent_upscale, str) else f"latent_upscale must be off, auto or a file name, not {latent_upscale!r}"

    @classmethod
    def execute(cls, model, latent=None, clip=None, vae=None, budget=None, width=1024, height=1024, frames=1, batch=1,
                cfg="auto", vram_gb=0.0, when_it_does_not_fit="warn", mode="formula", weights_dtype="as loaded",
                vae_dtype="as loaded", text_tokens=0, vae_tile=0, latent_upscale="off", upscale_model=None) -> io.NodeOutput:
        comps, policy = model_components(model, clip, vae)
        family = families.detect_family(comps[0]["table"])["family"]
        config = type(getattr(model.model, "model_config", None)).__name__
        if family == "unknown" and families.family_for_config(config):
            family = policy["family"] = families.family_for_config(config)
        # a VAE that cannot decode this latent (families.vae_mismatch, the CLI's exit 2): on the face and in the report;
        # stop mode ends the run here, before the sampling ComfyUI would do before failing at VAE Decode
        vae_error = families.vae_mismatch(comps, family) if vae is not None else None
        if vae_error and when_it_does_not_fit == "stop":
            raise FootprintDoesNotFit(f"GPU Garden Footprint Estimate stopped the run before sampling: {vae_error}")
        if weights_dtype and weights_dtype != "as loaded":
            policy["weights_dtype"] = weights_dtype
        if vae_dtype and vae_dtype != "as loaded":
            policy["vae_dtype"], policy["vae_bytes"] = vae_dtype, None
        if text_tokens:
            policy["text_tokens"] = int(text_tokens)
        if vae_tile:
            policy["tile"] = {"tile": int(vae_tile)}
        try:
            from .fit_guard import host_ram, weights_mmap

            policy["host_ram"] = host_ram(model, clip, vae)  # the loaders' weights in RAM count as the run's
            policy["weights_mmap"] = weights_mmap()  # what comfy.utils does, not only what comfy-aimdo ships
        except Exception:
            pass
        hidden = getattr(cls, "hidden", None)
        policy["files"] = prompt_files(getattr(hidden, "prompt", None), getattr(hidden, "unique_id", None))
        latent_shape = None
        if latent is not None and getattr(latent.get("samples"), "shape", None) is not None:
            latent_shape = list(latent["samples"].shape)
            width, height, frames, batch = latent_size(latent_shape, family)
        size_from = "latent" if latent_shape else "widgets"  # the face says which (its widgets keep their own values)
        use_cfg = {"auto": None, "on": True, "off": False, "batched": True, "separate": False}.get(cfg)
        policy["cond_uncond"] = cfg if cfg in ("batched", "separate") else None  # forced; else ComfyUI's rule (cfg_batch)
        b, label = live_budget(budget, vram_gb, getattr(model, "load_device", None))  # the sampler's GPU
        policy["budget"] = b
        staged, stage1 = [], (width, height)  # LTX-2's two stages: this size is stage 1's, stage 2's is estimated
        up = upscaler(latent_upscale, upscale_model, staged)
        if up:
            width, height = est_upscale.two_stage(up, [{"role": "diffusion_model", "family": family}], width, height, policy,
                                                  staged, "Footprint Estimate's latent_upscale",
                                                  "the connected latent" if latent_shape else "width x height")
        est = est_core.estimate(comps, width, height, frames, batch, cfg=use_cfg, policy=policy)
        est["assumptions"][:0] = staged
        est_core.judge(est, b)
        if latent is None:
            latent = empty_latent(model, family, *stage1, frames, batch)
            latent_shape = list(latent["samples"].shape)
        sampled = stage_two_shape(latent_shape, (width, height) != stage1)  # the latent the estimated sampler takes
        ex, formula_est = None, est
        if mode == "exact":  # the loaded model's step traced; when the trace ran, the verdict and peak rest on it
            ex = estimate_exact.exact(model, sampled, est["latent"]["batch_in_model"])
            ex["vs_formula"] = estimate_exact.compare(ex, est)  # against the formula's own activations
            if ex.get("ok"):
                est = est_core.estimate(comps, width, height, frames, batch, cfg=use_cfg,
                                        policy=dict(policy, sample_activations=ex["activations_peak"]))
                est["assumptions"][:0] = staged
                est_core.judge(est, b)
                ex["verdict_from_trace"] = True
        comfy = comfy_memory_required(model, sampled, est["latent"]["batch_in_model"])
        est["comfyui_memory_required"] = comfy if comfy is not None else est["comfyui_memory_required"]
        comfy_total = (est["breakdown"]["sample"]["weights"] + comfy) if comfy is not None else None
        text = (f"error: {vae_error}\n" if vae_error else "") + est_core.format_text(est, label)
        log.info("[GPU Garden] Footprint Estimate: %s", summary(est, label))
        if est_verdict_exit(est) and when_it_does_not_fit == "stop":  # not when ComfyUI would offload: that runs
            raise FootprintDoesNotFit(stop_message(est))
        ui = for_ui(est, label, comfy_total)
        ui["size_from"] = size_from
        two = (width, height) != stage1  # LTX-2's two stages: the face names the stage-1 size (web/lib/estimate_size.js)
        ui["stage1"] = {"width": stage1[0], "height": stage1[1]} if two else None
        ui["vae_error"] = vae_error
        if ex is not None:
            ui["exact"] = ex
            text += "\n" + estimate_exact.format_text(ex, formula_est)  # formula vs traced: the formula's figures
            log.info("[GPU Garden] Footprint Estimate exact: %s", estimate_exact.headline(ex))
        size = {"width": est["width"], "height": est["height"], "frames": est["frames"], "batch": est["batch"]}
        measured = estimate_measured.lookup(getattr(getattr(cls, "hidden", None), "prompt", None), size, model, clip, vae, est)
        if measured is not None:
            ui["measured"] = measured
            try:
                text += "\n" + estimate_measured.format_text(measured)
            except Exception as exc:  # a side line never fails the node
                log.debug("[GPU Garden] measured here: %s", exc)
        return io.NodeOutput(latent, text, ui={"gpu_garden_estimate": [ui]})


NODES = [GPUGardenFootprintEstimate]
