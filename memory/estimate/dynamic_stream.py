"""What Dynamic VRAM streams, phase by phase (aud67a F3). With comfy-aimdo, ComfyUI's CoreModelPatcher is
ModelPatcherDynamic (main.py: comfy.model_patcher.CoreModelPatcher = ModelPatcherDynamic once comfy_aimdo.control
init_device succeeds), and CLIP.__init__ builds the text encoders' patcher from CoreModelPatcher unless the encoder
disables it (comfy/sd.py CLIP.__init__: `ModelPatcher if te_disable_dynamic else CoreModelPatcher`, Comfy-Org/ComfyUI
033046cc): the text encoders stream as the diffusion model does, so a text encode over the budget streams too rather
than loading partially. So does the VAE: VAE.__init__ takes CoreModelPatcher unless the VAE sets disable_offload (comfy/sd.py
at 033046cc: `mp = comfy.model_patcher.CoreModelPatcher; if self.disable_offload: mp = ...ModelPatcher`; only audio
VAEs and the pixel-space one set it), so a VAE decode or encode over the budget (its tiled retry too) streams its weights.
A phase outside STREAMING (latent upscale, pixel upscale, audio decode) over the budget does not fit (rev67f F2). Each streaming phase is sized on its own: its weights less the room its activations, margin and
the fixed costs leave. The sampler's figure is per step (its time cost); the text encoders' runs once per prompt."""
from ..units import MiB, fmt_bytes

STREAMING = ("sample", "text_encode", "vae_decode", "vae_encode")  # the phases whose model loads through CoreModelPatcher
ROOM_FLOOR = 256 * MiB  # less room than this for the streamed layers: does not fit even streaming
WHAT = {"text_encode": "of the text encoders' weights in text encode (once per prompt)",
        "vae_decode": "of the VAE's weights in VAE decode (once per decode)",
        "vae_encode": "of the VAE's weights in VAE encode (once per encode)"}
LABEL = {"latent_upscale": "latent upscale", "pixel_upscale": "pixel upscale", "audio_decode": "audio decode"}


# a phase's own model (formula's _ctx w). The sampler runs the diffusion model: what --models resident / --offload none
# keeps beside it (the text encoders, the VAE) Dynamic VRAM evicts, it does not stream it each step (rev67k R2: 13.68 GiB
# per step where the fp8 diffusion model is 11.09 GiB)
OWN = {"sample": "dm", "text_encode": "te", "vae_decode": "vae", "vae_encode": "vae"}


# the side models (side_models.SIDE) the sampler loads with the diffusion model (ComfyUI 0.8.0 comfy/sampler_helpers.py:69-91
# get_additional_models, l.125-138 prepare_sampling: load_models_gpu([model] + models)) whose patcher is CoreModelPatcher,
# so ModelPatcherDynamic where comfy-aimdo runs: a ControlNet (Comfy-Org/ComfyUI 03b1ca67 comfy/controlnet.py
# ControlNet.__init__: control_model_wrapped = CoreModelPatcher(...); 0.8.0's l.206 is a plain ModelPatcher, before
# Dynamic VRAM) and a model patch (08f68f09 comfy_extras/nodes_model_patch.py ModelPatchLoader: CoreModelPatcher). They
# run in the phase beside its own model: counted with it, streamed as it is (rev67k: a ControlNet was left out).
SIDE_STREAMS = ("ControlNetLoader", "DiffControlNetLoader", "ModelPatchLoader")


def side_weights(est: dict, k: str) -> int:
    """Bytes of phase k's side models (its row's side_models) that Dynamic VRAM streams (SIDE_STREAMS): those whose
    own phase is k (side_models.SIDE; a ControlNet's is the sampler's). Under --models resident every row counts every
    side model kept beside it (side_models.added, keep): not run there, evicted rather than streamed (rev68b F2)."""
    base = "sample" if k.startswith("sample") else k
    loader = {m.get("owner"): m.get("loader") for m in est.get("policy", {}).get("side_models") or () if m.get("phase") == base}
    return sum(int(v.get("weights") or 0) for o, v in (est["breakdown"][k].get("side_models") or {}).items()
               if loader.get(o) in SIDE_STREAMS)


def weights(est: dict, k: str) -> int:
    """Phase k's weights that stream: the row's, at most its own model's (OWN) and the side models loaded and run with
    it (side_weights: the sampler's ControlNets). The other models a row counts (the diffusion model kept beside the
    text encode or the decode: --models resident, --offload none) are not run there: Dynamic VRAM evicts their weights
    rather than streaming them (rev67f F3: "13.40 GiB of the text encoders' weights" where they total 9.10 GiB)."""
    w = est["breakdown"][k]["weights"]
    own = ((est.get("_ctx") or {}).get("w") or {}).get(OWN.get(k))
    return min(w, own + side_weights(est, k)) if own is not None else w


def pinned_by_model(d: dict) -> dict:
    """{model (OWN's dm / te / vae): bytes of its layers that stream} from dynamic_vram's streamed_by_phase, the one
    figure of what leaves the card under Dynamic VRAM, read by its line and host RAM's (rev67k R2: host RAM said
    13.68 GiB offloaded and pinned where 4.43 GiB streamed). Each streamed layer keeps its pinned buffer on its module
    (comfy/pinned_memory.py pin_memory: module._pin, freed by unpin_memory under RAM pressure only), so each model's
    pins stay while the next model runs: summed over the models, the most of a model's phases (VAE decode and encode)."""
    out = {}
    for k, n in (d.get("streamed_by_phase") or {}).items():
        m = OWN.get(k, k)
        out[m] = max(out.get(m, 0), int(n))
    return out


# ComfyUI-GGUF loads a .gguf diffusion model or text encoder through GGUFModelPatcher(comfy.model_patcher.ModelPatcher)
# (city96/ComfyUI-GGUF nodes.py), not the dynamic patcher: such a model keeps the legacy partial load under Dynamic VRAM
# (Comfy-Org/ComfyUI#13953; city96/ComfyUI-GGUF#427, Dynamic VRAM support, still open) (rev67f F4)
GGUF_ROLES = {"sample": ("diffusion_model", "diffusion model"), "text_encode": ("text_encoder", "text encoders")}


def gguf_phases(est: dict) -> list:
    """The phases (GGUF_ROLES) whose model is a .gguf file, or a text encoder a *CLIPLoaderGGUF node loads (its
    load_patcher wraps the patcher in GGUFModelPatcher whatever the file: city96/ComfyUI-GGUF nodes.py; rev67k R5):
    sized as a partial load, not streamed."""
    comps = (est.get("_ctx") or {}).get("components") or est.get("components") or ()  # _ctx's carry gguf_patcher
    roles = {c["role"] for c in comps if c.get("gguf_patcher") or c.get("gguf_patcher") is None
             and str(c.get("source") or "").lower().endswith(".gguf")}  # False: a *GGUFDynamicVRAM loader's (model_files)
    return [k for k, (role, _) in GGUF_ROLES.items() if role in roles]


def needs_dynamic_note(est: dict) -> str | None:
    """The assumption where a *GGUFDynamicVRAM loader's model (gguf_patcher False: model_files.GGUF_PATCHER) is figured
    with Dynamic VRAM off: that loader raises then (the fork's _require_dynamic_vram), so ComfyUI never runs it."""
    comps = (est.get("_ctx") or {}).get("components") or est.get("components") or ()
    if any(c.get("gguf_patcher") is False for c in comps):
        return ("Dynamic VRAM off: a GGUF loader for Dynamic VRAM (UnetLoaderGGUFDynamicVRAM or a *CLIPLoaderGGUFDynamicVRAM, a "
                "ComfyUI-GGUF fork's) stops with an error without it; figured as loaded, --dynamic-vram on for the run it makes")
    return None


def gguf_note(ks: list) -> str:
    names = " and ".join(f"the GGUF {GGUF_ROLES[k][1]}" for k in ks)
    one = len(ks) == 1 and not GGUF_ROLES[ks[0]][1].endswith("s")  # "text encoders" takes "load" (rev67k R1)
    return (f"Dynamic VRAM: {names} load{'s' if one else ''} through ComfyUI-GGUF's GGUFModelPatcher, not the dynamic patcher (its Dynamic "
            "VRAM support, city96/ComfyUI-GGUF#427, is not merged): sized as a partial load, not streamed")


def room(est: dict, k: str, budget) -> int:
    """The budget less phase k's fixed costs, activations and margin: what its weights may hold on the GPU."""
    b = est["breakdown"][k]
    return int(budget - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"])


def by_phase(est: dict, budget) -> tuple[dict, list]:
    """({phase: bytes streamed}, [phases whose activations alone leave under ROOM_FLOOR]). The sampler's bytes always
    (0 when it fits: the figure per step); another phase only when its run figure is over the budget."""
    tr = est.get("tiled_retry") or {}
    out, short, gguf = {}, [], gguf_phases(est)
    for k in STREAMING:
        if k not in est["breakdown"] or k in gguf:
            continue
        total = tr[k]["tiled"] if k in tr else est["phases"].get(k, 0)
        if k != "sample" and total <= budget:
            continue
        r = room(est, k, budget)
        out[k] = max(0, int(weights(est, k) - max(0, r)))
        if r <= ROOM_FLOOR:
            short.append(k)
    return out, short


def over(est: dict, budget) -> set:
    """The phases over the budget as ComfyUI runs them (verdict.run_phases: a VAE phase at its tiled retry)."""
    from .verdict import run_phases
    return {k for k, v in run_phases(est).items() if v > budget}


def not_streamed(est: dict, budget) -> list:
    """The phases over the budget (as ComfyUI runs them: verdict.run_phases) whose model Dynamic VRAM does not stream
    (a GGUF model's phase: partial_words)."""
    return [k for k in over(est, budget) if k not in STREAMING and k not in GGUF_ROLES]


def partial_words(ks: list) -> str:
    """The Dynamic VRAM line when a GGUF model's phase is over the budget: ComfyUI loads it partially (verdict's
    outcome says how much stays in RAM)."""
    return ("loads partially: " + " and ".join(f"the GGUF {GGUF_ROLES[k][1]}" for k in ks)
            + " (ComfyUI-GGUF's patcher is not Dynamic VRAM's)")


def not_streamed_words(ks: list) -> str:
    return (f"does not fit: {' and '.join(LABEL.get(k, k.replace('_', ' ')) for k in ks)} over the budget, and Dynamic "
            "VRAM does not stream its model")


def sample_words(d: dict) -> str:
    """'; streaming 19.38 GiB of weights per step, slower by about 0.83 s per step' beside a GGUF text encoder's partial
    load: the safetensors diffusion model still streams (rev67k R1: the line named only the partial load)."""
    s = d.get("streamed_per_step") or 0
    return (f"; streaming {fmt_bytes(s)} of the diffusion model's weights per step, slower by about "
            f"{d['added_seconds_per_step']} s per step" if s else "")


def others_words(by: dict) -> str:
    """'; text encode streams 4.43 GiB of the text encoders' weights ...' for the phases other than sampling."""
    return "".join(f"; streaming {fmt_bytes(n)} {WHAT[k]}" for k, n in by.items() if k != "sample" and n)


def reason(d: dict, evicted=0) -> str:
    """The outcome's reason for a run that fits with streaming (verdict._vram_outcome). evicted: host_ram's, the models
    a row keeps beside its own (--models resident) that Dynamic VRAM evicts from the card (OWN): where nothing streams,
    what lets a peak over the budget run (rev68b F4)."""
    s = d.get("streamed_per_step") or 0
    by = d.get("streamed_by_phase") or {}
    if s:
        head = f"{fmt_bytes(s)} of weights stream in from RAM each step, about {d['added_seconds_per_step']} s slower per step"
    elif evicted and not any(by.values()):
        head = (f"Dynamic VRAM evicts the models kept beside the running one from the card ({fmt_bytes(evicted)}) as each "
                "phase needs the room, rather than streaming them")
    else:
        head = "sampling streams nothing"
    return head + others_words(by)
