"""Fit to Card: makes the run fit the card by giving ComfyUI's own loader our figures, cheapest changes first.

Put it between the loaders and the sampler. It returns the same objects: a clone of the MODEL whose samplers
load it with our activation estimate as memory_required (nodes/fit_guard.py), a copy of the VAE sized (and,
when one sample does not fit, tiled) from our estimate, the CLIP and LATENT unchanged. Changes that would alter
the image (fp8/GGUF weights, lower resolution, fewer frames, a block-swap count) are only offered, on the face
and in the ui output. Mode "advise" changes nothing and only reports the plan. A model our estimate does not
cover (audio, 3D, an unknown family) keeps ComfyUI's own memory_required, as automatic mode does."""
import functools
import logging

from comfy_api.latest import io

from ..memory.estimate import spec
from ..memory.fit import offers as fit_offers
from ..memory.fit import plan as fit_plan
from ..memory.units import fmt_bytes
from . import fit_guard, host_models
from .fit_vae import device_type as vae_device  # the CUDA conv workspace counts on CUDA only
from .estimate import comfy_reserve, compute_device_kind, prompt_files

log = logging.getLogger("gpu_garden")

CATEGORY = "GPU Garden"
Budget = io.Custom("GPU_GARDEN_BUDGET")
MODES = ("apply", "advise")


def _hidden_unique_id() -> list:
    """The node's id and the queued prompt (its loaders' file names: host RAM's file-backed test per file)."""
    return [h for h in (getattr(io.Hidden, "unique_id", None), getattr(io.Hidden, "prompt", None)) if h is not None]


def host_ram(*objs):
    """Available host RAM plus what the run's models `objs` hold in it already (fit_guard.host_ram)."""
    return fit_guard.host_ram(*objs)


def size_of(obj) -> int:
    p = getattr(obj, "patcher", None)
    try:
        return int(p.model_size()) if p is not None else 0
    except Exception:
        return 0


def make_plan(model, vae=None, clip=None, latent=None, budget=None, vram_gb=0.0, prompt=None, node=None) -> tuple[dict, dict]:
    """(plan, context for the guard) for these objects on the budget of this moment. The plan is what the face shows;
    the figures ComfyUI receives are computed again from the live budget when the sampler and the decode run
    (ctx["source"]: vram_gb, else the live budget of the devices a wired VRAM Budget measured). prompt, node: the queued
    prompt and this node's id, for the file names of the loaders feeding it (ctx["files"], read again when sampling)."""
    facts = fit_guard.model_facts(model)
    family = facts["family"]
    where = getattr(model, "load_device", None)  # the sampler's GPU (a MultiGPU loader may put it on the second)
    source = {"vram_gb": vram_gb, "device": where, "budget": budget}
    b, label = fit_guard.budget_now(source)
    reserve = comfy_reserve()
    device = compute_device_kind()
    ctx = {"origin": "node", "facts": facts, "budget": b, "source": source,
           "reserve": reserve if reserve is not None else spec.comfy_reserve(),
           "context": spec.CUDA_CONTEXT if device in ("cuda", "rocm") else 0, "host_ram": host_ram(model, clip, vae), "clip": clip, "cfg": None,
           "files": prompt_files(prompt, node)}
    shape = list(latent["samples"].shape) if latent is not None and getattr(latent.get("samples"), "shape", None) is not None else None
    if not fit_guard.calibrated(family, shape):
        return kept_plan(model, vae, facts, shape, label, ctx)
    cond_batch = 2 if spec.family(family)["cfg"] else 1  # until the sampler runs: the family's usual workflow
    stock = fit_guard.stock_required(model, shape, 1) if shape else None
    decode = None
    kind = None
    if vae is not None:
        kind = fit_guard.vae_kind(vae, family)
        if shape and fit_guard.fit_vae.on_compute_device(vae, where):  # --cpu-vae: sized, never tiled from the GPU's room
            decode = {"kind": kind, "latent_shape": shape, "dtype": str(getattr(vae, "vae_dtype", "bf16")),
                      "device": vae_device(vae)}
    run_shape = fit_guard.windowed_shape(getattr(model, "model_options", None), shape) if shape else None
    req = fit_guard.required_for(facts, run_shape, cond_batch, b, ctx["reserve"], ctx["context"]) if shape else 0
    inputs = fit_offers.sample_inputs(family, shape, run_shape, lambda s: fit_guard.required_for(
        facts, s, cond_batch, b, ctx["reserve"], ctx["context"]))
    pixels, windows = inputs["pixels"], inputs["windows"]
    p = fit_plan.plan(b, weights={"diffusion_model": facts["bytes"], "text_encoders": size_of(clip), "vae": size_of(vae)},
                      memory_required=req, decode=decode, context=ctx["context"], reserve=ctx["reserve"],
                      host_ram=ctx["host_ram"], dynamic_vram=fit_guard.dynamic_vram(), blocks=facts["blocks"], pixels=pixels,
                      stock_memory_required=stock, min_weight_ratio=fit_guard.min_weight_ratio(), windows=windows,
                      weight_bits=facts.get("weight_bits"), ram_policy={"platform": host_models.platform_name(),
                                                                          "weights_mmap": fit_guard.weights_mmap()},
                      files=ctx["files"])
    p.update(family=family, budget_source=label, cond_batch=cond_batch, latent_shape=shape, vae_kind=kind,
             sized_at_sampling=shape is None,  # what stock estimate_memory would pass: 2B, and B for placement
             stock_memory_required=fit_guard.stock_required(model, shape, 2) if shape else None,
             stock_minimum_memory_required=stock)
    if shape is None:
        p["summary"] = "no latent connected: the figure is computed when the sampler starts; " + p["summary"]
    if vae is not None and not fit_guard.fit_vae.on_compute_device(vae, where):
        p["summary"] += f"; the VAE runs on {getattr(vae, 'device', 'another device')} (not the budget's device): sized there, not tiled"
    return p, ctx


def kept_plan(model, vae, facts, shape, label, ctx) -> tuple[dict, dict]:
    """A model our estimate does not cover (audio, 3D, unrecognised): the sampler keeps ComfyUI's own figure, as in
    automatic mode; a VAE of a kind we know from its own weights is still sized."""
    kind = fit_guard.fit_vae.auto_vae_kind(vae) if vae is not None else None
    stock = fit_guard.stock_required(model, shape, 2) if shape else None
    summary = fit_guard.UNCALIBRATED + (f" (memory_required {fmt_bytes(stock)})" if stock else "")
    p = {"kept": "comfyui", "consulted": False, "memory_required": None, "minimum_memory_required": None,
         "stock_memory_required": stock, "stock_minimum_memory_required": fit_guard.stock_required(model, shape, 1) if shape else None,
         "budget": ctx["budget"], "budget_source": label, "family": facts["family"], "latent_shape": shape, "vae_kind": kind, "decode": None,
         "steps": [], "offers": [], "fits": None, "predicted_peak": None, "summary": summary}
    return p, dict(ctx, kept=True)


# fit/plan.py's no-budget summary says what apply hands ComfyUI; advise hands it nothing: (apply's words, advise's)
ADVISE_WORDS = (("ComfyUI gets our activation figure", "apply would give ComfyUI our activation figure"),
                ("nothing else changes", "nothing else would change"))


def advised(p: dict) -> dict:
    """advise hands ComfyUI nothing (execute returns the model as it came): the no-budget summary, which says what
    apply hands it ("ComfyUI gets our activation figure"), says what apply would hand it instead. Only those words
    change: make_plan's "no latent connected" before them and its VAE note after them stay."""
    if p.get("budget") is None and not p.get("kept"):
        summary = p.get("summary") or ""
        for said, advice in ADVISE_WORDS:
            summary = summary.replace(said, advice)
        return dict(p, summary=summary)
    return p


def face(p: dict, mode: str) -> str:
    head = ("Advice only (nothing changed): " if mode == "advise" else "") + p["summary"]
    lines = [head]
    if p.get("latent_shape") and p.get("memory_required"):
        stock = p.get("stock_memory_required")
        to = "apply would give ComfyUI's loader" if mode == "advise" else "for ComfyUI's loader"
        lines.append(f"memory_required {to}: {fmt_bytes(p['memory_required'])} "
                     f"({fit_guard.prompts_per_step(p['cond_batch'])}; ComfyUI's own figure {fmt_bytes(stock)})")
    for o in p["offers"]:
        lines.append(f"{'info' if o.get('without_widget') == 'info' else 'offer (not applied)'}: {o['label']}")
    return "\n".join(lines)


class GPUGardenFitToCard(io.ComfyNode):
    @classmethod
    def define_schema(cls):
        return io.Schema(
            node_id="GPUGardenFitToCard",
            display_name="Fit to Card",
            category=CATEGORY,
            description=("Makes this run fit the GPU: ComfyUI's loader gets our estimate of the sampler's activation "
                         "memory (so it keeps only the weights that leave room for it), the VAE's decode is sized from "
                         "our estimate (tiled from the budget when one image does not fit), text encoders leave the GPU "
                         "when needed. Nothing that changes the image is applied: fp8/GGUF weights, a lower resolution, "
                         "fewer frames and block-swap counts are only offered."),
            inputs=[
                io.Model.Input("model"),
                io.Vae.Input("vae", optional=True, tooltip="its decode and encode are sized from our estimate"),
                io.Clip.Input("clip", optional=True, tooltip="its text encoders leave the GPU before sampling when the plan needs it"),
                io.Latent.Input("latent", optional=True, tooltip="the latent the sampler will run; without it the figure is computed when sampling starts"),
                Budget.Input("budget", optional=True, tooltip="from the VRAM Budget node. The card is the model's device either "
                             "way, its budget read when the sampler and the decode run; VRAM Budget runs on every queue, so "
                             "wiring it re-runs this node and everything after it"),
                io.Float.Input("vram_gb", default=0.0, min=0.0, max=1024.0, step=0.5,
                               tooltip="plan for this many GiB; 0: the live budget, read when the sampler and the decode run"),
                io.Combo.Input("mode", options=list(MODES), default="apply",
                               tooltip="apply: hand ComfyUI our figures and apply the changes that keep the image identical; "
                                       "advise: only show the plan"),
            ],
            outputs=[io.Model.Output(display_name="model"), io.Vae.Output(display_name="vae"),
                     io.Clip.Output(display_name="clip"), io.Latent.Output(display_name="latent")],
            hidden=_hidden_unique_id(),
            is_output_node=True,
        )

    @classmethod
    def execute(cls, model, vae=None, clip=None, latent=None, budget=None, vram_gb=0.0, mode="apply") -> io.NodeOutput:
        hidden = getattr(cls, "hidden", None)
        p, ctx = make_plan(model, vae, clip, latent, budget, vram_gb, prompt=getattr(hidden, "prompt", None),
                           node=getattr(hidden, "unique_id", None))
        ctx["node"] = getattr(hidden, "unique_id", None)
        applied = []
        model_out, vae_out = model, vae
        if mode == "apply" and ctx.get("kept"):  # ComfyUI's own memory_required; only a VAE we know is sized
            if p["vae_kind"]:
                vae_out = fit_guard.sized_vae(vae, p["vae_kind"], functools.partial(fit_guard.vae_context, ctx))
                applied.append("vae_sizing")
        elif mode == "apply":
            model_out = fit_guard.attach(model, ctx)
            applied.append("memory_required")
            if vae is not None:
                d = p.get("decode") or {}
                vae_out = fit_guard.sized_vae(vae, p["vae_kind"], functools.partial(fit_guard.vae_context, ctx))
                applied.append("vae_tiled" if d.get("tiled") and d.get("args") else "vae_sizing")  # as planned now
        if mode == "advise":
            p = advised(p)
        ui = {k: v for k, v in p.items() if k not in ("weights",)}
        ui.update(mode=mode, applied=applied, face=face(p, mode),
                  vae_memory_used_decode=(p["decode"] or {}).get("per_sample") if p.get("decode") else None)
        if p.get("decode") and p["decode"].get("tiled") and p["decode"].get("bytes"):
            ui["vae_memory_used_decode"] = p["decode"]["bytes"]
        log.info("[GPU Garden] Fit to Card%s: %s", f" (node {ctx['node']})" if ctx["node"] else "", ui["face"].replace("\n", "; "))
        return io.NodeOutput(model_out, vae_out, clip, latent, ui={"gpu_garden_fit": [ui], "text": [ui["face"]]})


NODES = [GPUGardenFitToCard]
