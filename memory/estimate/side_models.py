"""The models a workflow's loaders load beside the diffusion model, text encoders and VAE, counted in the phase where
ComfyUI 0.8.0 holds their weights on the device (wf66). A file found under the models folder is sized from its header
(headers.read_tensors) in the dtype ComfyUI loads it in; one named and not found is missing, as a missing VAE is:
the estimate is incomplete and --write refuses it (ComfyUI refuses the prompt: value_not_in_list, execution.py:938-955).

- ControlNetLoader / DiffControlNetLoader (nodes.py:805, 822; folder_paths "controlnet": controlnet/ and t2i_adapter/):
  comfy/controlnet.py builds the model in unet_dtype(model_params=-1, weight_dtype=the file's) (controlnet_config
  l.421-439, load_controlnet_state_dict l.709-716): a 16-bit or fp8 file stays as stored, fp32 becomes 16-bit on a GPU
  (weights.resident_bytes, as the diffusion model's). The sampler loads it with the diffusion model
  (comfy/sampler_helpers.py:69-91, 132-138: get_additional_models -> load_models_gpu([model] + models)): sample phase,
  the ControlNets of one sampler at a time where several samplers run (control_feeds.py, one_sampler below).
  Each step its forward runs before the diffusion model's (ControlNet.get_control, l.219-279) and returns one tensor per
  controlnet_blocks entry, [batch in the model, image tokens, width] in the compute dtype (a DiT ControlNet: mmdit.py:74-79,
  qwen_image/controlnet.py:66-77; the repeats share one tensor, control_merge scales each once, l.155-194), held while
  the diffusion model runs: added to the sample phase's activations. Its own forward is over by then: not added (the
  diffusion model's block peak is the larger). A ControlNet without controlnet_blocks (an SD U-Net's zero convs): its
  residuals are not counted, and an assumption line says so.
- ModelPatchLoader (comfy_extras/nodes_model_patch.py:222-259): built in the file's own dtype (comfy.utils.weight_dtype:
  the dtype of the most elements), no cast; applied inside the diffusion model's forward (model_patcher.py:529-551
  model_patches_models -> loaded with it): sample phase, in the runs of the samplers whose model carries it (est65:
  control_feeds.feeds). Its per-block work is transient inside a block: not added.
- CLIPVisionLoader (nodes.py:1002; comfy/clip_vision.py): a file component, counted with the encoders
  (families._classify_whole: role text_encoder, kind clip-vision*), as image_encoder.py's CLIP-H: the conditioning
  (text_encode) phase; listed here per phase.
- AudioEncoderLoader (comfy/audio_encoders/audio_encoders.py:10-44): text_encoder_dtype, fp16 on a GPU and on a CPU
  (model_management.py:900-915); loaded for its encode (load_model_gpu): the conditioning (text_encode) phase. Its
  activations depend on the audio's length, which the graph does not set: not counted, an assumption line says so.
- StyleModelLoader (comfy/sd.py:969-987): StyleModel keeps the model where load_state_dict left it, on the CPU in fp32,
  and StyleModelApply runs it there on the CLIP vision output: no VRAM; named with its host RAM (fp32 bytes)."""
import math
import re

from .headers import dtype_bytes, read_tensors
from .image_size import scaled
from . import image_encoder, weights as W
from .model_files import Unusable, find_file
from .phases import latent_geometry
from .spec import FRAGMENTATION
from ..errors import UserError
from ..units import fmt_bytes

# loader -> (its file widget, models folders as folder_paths has them, the phase it is on the device in, how ComfyUI
# sizes it: unet (unet_dtype), stored (the file's own dtype), f16 (text_encoder_dtype), component (a file component),
# cpu (no VRAM))
SIDE = {
    "ControlNetLoader": ("control_net_name", ("controlnet", "t2i_adapter"), "sample", "unet"),
    "DiffControlNetLoader": ("control_net_name", ("controlnet", "t2i_adapter"), "sample", "unet"),
    "ModelPatchLoader": ("name", ("model_patches",), "sample", "stored"),
    "CLIPVisionLoader": ("clip_name", ("clip_vision",), "text_encode", "component"),
    "AudioEncoderLoader": ("audio_encoder_name", ("audio_encoders",), "text_encode", "f16"),
    "StyleModelLoader": ("style_model_name", ("style_models",), None, "cpu"),
}
CONTROLNETS = ("ControlNetLoader", "DiffControlNetLoader")
MODEL_PATCHES = ("ModelPatchLoader",)
PER_SAMPLER = CONTROLNETS + MODEL_PATCHES  # loaded for the samplers that reach them only (control_feeds.feeds)
# a DiT ControlNet's residual linears: controlnet_blocks.N (its double/joint blocks'), and a FLUX.1 ControlNet's
# controlnet_single_blocks.N too (comfy/ldm/flux/controlnet.py:152-181 returns both: "input" and "output"), Mistoline's
# spelled single_controlnet_blocks.N (comfy/controlnet.py:609 renames it), its blocks a .linear inside (l.42-49)
RESIDUAL = re.compile(r"^(?:control_model\.)?(?:controlnet_blocks|controlnet_single_blocks|single_controlnet_blocks)"
                      r"\.(\d+)\.(?:linear\.)?weight$")


def residual_width(table) -> int:
    """The elements per token of the control residuals a DiT ControlNet's forward returns: the out width of each
    controlnet_blocks.N (and FLUX.1's controlnet_single_blocks.N) linear, summed (0: no such blocks). The single
    blocks' residuals are the image tokens' only (flux/controlnet.py:178, img[:, txt.shape[1]:]), as the others."""
    return sum(s[0] for k, (_, s) in table.items() if RESIDUAL.match(k) and len(s) == 2)


def owner_of(path, loader) -> str:
    """How a side model is named in the estimate: its file's name and its loader, 'cn.safetensors (ControlNetLoader)'
    (the path ComfyUI resolves keeps the name's last part: folder_paths.get_full_path joins it to the folder)."""
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]} ({loader})"


def weights_on_device(table, how, device="cuda") -> int:
    """Bytes the model's weights take once ComfyUI loads it (see the module's list); cpu: none on the device."""
    if how == "cpu":
        return 0
    if how == "f16":
        return W.at_dtype_bytes(table, 2)
    if how == "stored":
        mix = {}
        for dt, s in table.values():
            if W.is_float(dt):
                mix[dt] = mix.get(dt, 0) + math.prod(s)
        return W.at_dtype_bytes(table, int(dtype_bytes(max(mix, key=mix.get)))) if mix else W.resident_bytes(table, False)
    if device == "cpu":  # unet_dtype on a CPU: fp32 (an fp8 file stays fp8: twice its params are over the RAM it allows)
        return sum(W.resident_bytes({k: v}, False) if str(v[0]).startswith("F8") else W.at_dtype_bytes({k: v}, 4)
                   if W.is_float(v[0]) else W.resident_bytes({k: v}, False) for k, v in table.items())
    return W.resident_bytes(table, True)


def find(found, models_dir, resolve=None):
    """([(path, loader, widget)] of the side loaders' files found, [(loader, widgets)] of those naming no file (they
    keep their named line), [(name, loader, widget, folders, why)] of the files named and not found: missing, as a
    VAE's (rev63 #2: ComfyUI refuses the prompt, value_not_in_list, execution.py:938-955). found: [(loader, widgets)]
    of the SIDE loaders the graph runs."""
    got, left, missing = [], [], []
    for t, w in found:
        name, folders = SIDE[t][0], SIDE[t][1]
        p, why = None, None
        if isinstance(w.get(name), str) and w[name]:
            try:
                p = resolve(folders, w[name]) if resolve else find_file(models_dir, folders, w[name]) if models_dir else None
            except Unusable as exc:
                p, why = None, str(exc)
            if not p and (models_dir or resolve):
                missing.append((w[name], t, name, folders, why))
                continue
        if p:
            got.append((str(p), t, name))
        else:
            left.append((t, w))
    return got, left, missing


def components(files):
    """The CLIP vision files among find()'s, to be read as text encoder components: those whose keys are a CLIP vision
    tower's (image_encoder.is_clip_vision; read() names any other)."""
    out = []
    for f in files:
        if SIDE[f[1]][3] == "component":
            try:
                ok = image_encoder.is_clip_vision(read_tensors(f[0]))
            except (UserError, OSError):
                ok = False
            out += [f] if ok else []
    return out


def read(files, policy=None):
    """(side models: [{owner, loader, phase, weights, residual_width, host_ram}], assumption lines) of the files find()
    gave, each file read once. A file whose header is not read keeps a line naming it."""
    pol, out, notes = policy or {}, [], []
    for p, t, _ in dict.fromkeys(files):
        owner = owner_of(p, t)
        try:
            table = read_tensors(p)
        except (UserError, OSError) as exc:
            notes.append(f"not counted: {owner}: its header is not read ({exc})")
            continue
        phase, how = SIDE[t][2], SIDE[t][3]
        if how == "component" and not image_encoder.is_clip_vision(table):  # components() left it out
            notes.append(f"not counted: {owner}: its keys are not a CLIP vision tower's (vision_model.encoder.layers.*)")
            continue
        dev = pol.get("device", "cuda")
        m = {"owner": owner, "loader": t, "phase": phase, "how": how, "residual_width": 0,
             "weights": W.resident_bytes(table, pol.get("cast_fp32", True)) if how == "component" else weights_on_device(table, how, dev)}
        if how == "cpu":
            m["host_ram"] = W.at_dtype_bytes(table, 4)
            notes.append(f"{owner}: ComfyUI runs the style model on the CPU in fp32 ({fmt_bytes(m['host_ram'])} of host "
                         "RAM): no VRAM")
        elif t in ("ControlNetLoader", "DiffControlNetLoader"):
            m["residual_width"] = residual_width(table)
            notes.append(f"{owner}: loaded with the diffusion model for sampling ({fmt_bytes(m['weights'])})"
                         + (f"; its {sum(1 for k in table if RESIDUAL.match(k))} control residuals (width "
                            f"{m['residual_width']} a token in all) are held while the diffusion model runs each step"
                            if m["residual_width"] else "; its control residuals are not counted (no controlnet_blocks)"))
        elif t == "ModelPatchLoader":
            notes.append(f"{owner}: applied inside the diffusion model's forward, loaded with it for sampling "
                         f"({fmt_bytes(m['weights'])}); its work inside each block is not counted")
        elif t == "AudioEncoderLoader":
            notes.append(f"{owner}: loaded in fp16 for its encode, counted in the conditioning (text_encode) phase "
                         f"({fmt_bytes(m['weights'])}); its activations (the audio's length) are not counted")
        out.append(m)
    return out, notes


def added(side, phase, keep=False):
    """[(model, bytes of weights added)] of the side models on the device in `phase`: their own phase's, or every
    phase's when every model stays resident (keep). A CLIP vision file is a component already (0 added)."""
    return [(m, 0 if m["how"] == "component" else m["weights"]) for m in side or ()
            if m["phase"] and (m["phase"] == phase or keep)]


def sampler_sizes(sizes, family, width, height, frames, batch, image_tokens):
    """[(width, height, image tokens, batch, single) of each sampler's own latent where its tokens or its batch differ
    from the estimate's, or its cfg is 1 (single: sizes["single"], sampler_cfg.single: no uncond in its run) (fewer or more: a hires fix's base pass, a branch of another size or batch), else None (that sampler's
    run is the estimated size's, or its latent is not followed)] in control_feeds.latents() order, or None. sizes:
    {"of": (w, h, batch) the graph's estimated size, "samplers": [(w, h, batch) or None]} (workflow.py sets it where
    the size is the graph's: not typed, a still image); each sampler's size and batch scale with the estimate's
    (width, height, batch: a re-estimate at a lower resolution or at batch 1 scales every pass, each at least 1) and
    its tokens are the family's latent geometry's."""
    if not sizes or frames != 1 or not all(sizes.get("of") or ()):
        return None
    out, one = [], sizes.get("single") or ()
    for i, s in enumerate(sizes.get("samplers") or ()):
        w, h, b = scaled(s, sizes["of"], (width, height, batch)) if s else (None, None, None)
        n = latent_geometry(family, w, h)["image_tokens"] if s else None
        single = i < len(one) and one[i]  # cfg 1: one conditioning in the model (sampler_cfg.py), a run of its own
        out.append((w, h, n, b, single) if n is not None and (n != image_tokens or b != batch or single) else None)
    return out


def phase_figures(side, phase, keep, latent, compute_bytes, samplers=None, tokens=None, dm_acts=None):
    """(weights added, activations added, {owner: {weights, activations}}, the index of the sampler counted or None)
    of `phase` (sample_naive_attention is the sample phase's). latent: the estimate's latent dict (image_tokens,
    batch_in_model). samplers: [[owner of each ControlNet one sampler runs with]] one per sampler
    (control_feeds.owner_sets), or None: every ControlNet in one. tokens: [(image tokens, batch in the model) of each
    sampler's run, None: the estimate's] (sampler_sizes, sample_acts.in_model), or None. dm_acts: [the diffusion model's activations in this phase at each
    sampler's own latent] (sample_acts.at), or None: the same for every sampler."""
    base = "sample" if phase.startswith("sample") else phase
    got = added(side, base, keep)
    owners, wsum, asum = {}, 0, 0

    def acts_at(n, in_model, of=None):
        return {m["owner"]: m["residual_width"] * n * in_model * compute_bytes
                if base == "sample" else 0 for m, _ in got if of is None or m["owner"] in of}
    acts = acts_at(latent["image_tokens"], latent["batch_in_model"])
    own = [acts_at(*n, set(s)) if n else {} for s, n in zip(samplers, tokens)] \
        if samplers and tokens and len(tokens) == len(samplers) else None
    dm = dm_acts if samplers and dm_acts and len(dm_acts) == len(samplers) else None
    run = one_sampler(got, samplers, keep, acts, own, dm) if base == "sample" else None
    at = None
    if run is not None:
        run, acts, at = run
    for m, wb in got:
        if run is not None and m["owner"] not in run:
            if not keep:
                continue
            a = 0  # resident (keep), its residuals not in this sampler's forward
        else:
            a = acts[m["owner"]]
        owners[m["owner"]] = {"weights": m["weights"], "activations": int(a)}
        wsum, asum = wsum + wb, asum + a
    return int(wsum), int(asum), owners, at


def one_sampler(got, samplers, keep, acts, own=None, dm=None):
    """(the owners of the side models counted in the sample phase, {owner: its residual bytes}, the sampler's index):
    the one sampler whose run holds the most (the diffusion model's activations at its own latent, dm, + its
    ControlNets' weights + their residuals, activations with their allocator margin; the weights left out of the
    comparison when every model stays resident, keep: all of them are counted anyway), or None (all of them) when there
    is no split to make (one sampler; no ControlNet and no size of its own). Each set's residuals are at its own
    sampler's latent (own: [{owner: residual bytes at that sampler's tokens and batch}] for a sampler whose run is not
    the estimated size's, rev64 #3, fix65: a hires fix's base-pass ControlNet at the base pass's tokens, a branch's at
    its own batch), else at the estimate's (acts); dm: [the diffusion model's activations at each sampler's latent]
    (act65, fix65: a smaller or larger run's own, not the estimated size's),
    None: the same for every sampler. ComfyUI runs one sampler at a time (comfy/sample.py:57-60 sample ->
    samplers.py:983-998 outer_sample: sampler_helpers.prepare_sampling, l.125-138, loads this sampler's models for its
    own noise shape, cleanup_models, l.143, after it), each with the
    ControlNets its own conditioning carries (control_feeds.py), so the residuals and activations of two samplers are
    never held at once. Their weights: the next sampler's load_models_gpu (comfy/model_management.py:621-705) frees
    memory for its own models (free_memory l.584-619, its keep_loaded empty): the other sampler's ControlNet stays
    loaded while there is room and is unloaded first under pressure, so the peak needs only the running sampler's (an
    estimate of what fits, not of what a roomy card happens to keep). A ControlNet no sampler reaches is in every set;
    a model patch is in the sets of the samplers whose model carries it (est65: ComfyUI loads it with that model only,
    control_feeds.feeds), one no sampler reaches in every set, as a ControlNet."""
    cn = [m for m, _ in got if m["loader"] in PER_SAMPLER]
    if not samplers or len(samplers) < 2 or not (cn or dm):
        return None
    named = {o for s in samplers for o in s}
    free = {m["owner"] for m in cn if m["owner"] not in named}
    sets = [(set(s) | free, dict(acts, **(own[i] if own else {})), i) for i, s in enumerate(samplers)]

    def size(x):
        return (dm[x[2]] * (1 + FRAGMENTATION) if dm else 0) + sum(
            (0 if keep else m["weights"]) + x[1][m["owner"]] * (1 + FRAGMENTATION) for m in cn if m["owner"] in x[0])

    best, at, i = max(sets, key=size)
    return best | {m["owner"] for m, _ in got if m["loader"] not in PER_SAMPLER}, at, i
