"""The model files a workflow's loader nodes name: which loaders (LOADERS: estimated; CHECKED: looked for, not
estimated), the widgets and models sub-folders they read (ComfyUI 0.8.0's nodes and ComfyUI-GGUF), the estimate roles a
file holds, and the lookup under --models-dir (find_file) as ComfyUI's folder_paths does it. No ComfyUI import."""
import os
from pathlib import Path

from ..errors import UserError

# loader class -> [(widget/input name, models sub-folders)], in UI widget order; extra widgets after them
LOADERS = {
    "CheckpointLoaderSimple": [("ckpt_name", ("checkpoints",))],
    "CheckpointLoader": [("config_name", ()), ("ckpt_name", ("checkpoints",))],
    "UNETLoader": [("unet_name", ("diffusion_models", "unet")), ("weight_dtype", ())],
    "UnetLoaderGGUF": [("unet_name", ("unet", "diffusion_models"))],
    "CLIPLoader": [("clip_name", ("text_encoders", "clip")), ("type", ()), ("device", ())],
    "CLIPLoaderGGUF": [("clip_name", ("text_encoders", "clip")), ("type", ())],
    "DualCLIPLoader": [("clip_name1", ("text_encoders", "clip")), ("clip_name2", ("text_encoders", "clip")), ("type", ()), ("device", ())],
    "DualCLIPLoaderGGUF": [("clip_name1", ("text_encoders", "clip")), ("clip_name2", ("text_encoders", "clip")), ("type", ())],
    "TripleCLIPLoader": [("clip_name1", ("text_encoders", "clip")), ("clip_name2", ("text_encoders", "clip")),
                         ("clip_name3", ("text_encoders", "clip"))],
    "QuadrupleCLIPLoader": [(f"clip_name{i}", ("text_encoders", "clip")) for i in range(1, 5)],
    # city96/ComfyUI-GGUF nodes.py (76908c11): UnetLoaderGGUFAdvanced's dtype widgets after unet_name; Triple- and
    # QuadrupleCLIPLoaderGGUF take clip_name1..3 / 1..4 and no type widget (unlike the core loaders' device)
    "UnetLoaderGGUFAdvanced": [("unet_name", ("unet", "diffusion_models")), ("dequant_dtype", ()), ("patch_dtype", ()),
                               ("patch_on_device", ())],
    "TripleCLIPLoaderGGUF": [(f"clip_name{i}", ("text_encoders", "clip")) for i in range(1, 4)],
    "QuadrupleCLIPLoaderGGUF": [(f"clip_name{i}", ("text_encoders", "clip")) for i in range(1, 5)],
    # a ComfyUI-GGUF fork's (MiniMax H3, Q8_CR; its nodes.py found by the search corpus without a repository name):
    # UnetLoaderGGUFDynamicVRAM(UnetLoaderGGUF) and the *CLIPLoaderGGUFDynamicVRAM subclasses keep their parents'
    # widgets and load through GGUFModelPatcherDynamic(comfy.model_patcher.ModelPatcherDynamic) (GGUF_PATCHER: False)
    "UnetLoaderGGUFDynamicVRAM": [("unet_name", ("unet", "diffusion_models"))],
    "CLIPLoaderGGUFDynamicVRAM": [("clip_name", ("text_encoders", "clip")), ("type", ())],
    "DualCLIPLoaderGGUFDynamicVRAM": [("clip_name1", ("text_encoders", "clip")), ("clip_name2", ("text_encoders", "clip")),
                                      ("type", ())],
    "TripleCLIPLoaderGGUFDynamicVRAM": [(f"clip_name{i}", ("text_encoders", "clip")) for i in range(1, 4)],
    "QuadrupleCLIPLoaderGGUFDynamicVRAM": [(f"clip_name{i}", ("text_encoders", "clip")) for i in range(1, 5)],
    "VAELoader": [("vae_name", ("vae",))],
    # LTX-2 (0.8.0 comfy_extras/nodes_lt_audio.py): Gemma 3 12B ("text_encoders": folder_paths.py:28, text_encoders/ and
    # clip/) plus the connectors in the checkpoint (l.180-188, 194-201); the audio VAE from the checkpoint (l.17-21, 28-31)
    "LTXAVTextEncoderLoader": [("text_encoder", ("text_encoders", "clip")), ("ckpt_name", ("checkpoints",))],
    "LTXVAudioVAELoader": [("ckpt_name", ("checkpoints",))],
    # comfy_extras/nodes_video_model.py:10 (MODEL, CLIP_VISION, VAE of one checkpoint): followed for Hunyuan3D 2.x
    # (hunyuan3d.py); a file of any other model (SVD) is named as NOT_FOLLOWED's row says (hunyuan3d.image_only)
    "ImageOnlyCheckpointLoader": [("ckpt_name", ("checkpoints",))],
}
# loader -> whether its model is ComfyUI-GGUF's GGUFModelPatcher (a ModelPatcher: the legacy partial load under Dynamic
# VRAM, whatever the file: city96/ComfyUI-GGUF nodes.py load_patcher / load_unet) or the fork's GGUFModelPatcherDynamic
# (streams as ComfyUI's own patcher; the loader raises where Dynamic VRAM is off: its _require_dynamic_vram). Read by
# workflow.components into each component's gguf_patcher (dynamic_stream.gguf_phases); a loader not here: its file's
# suffix decides (.gguf: GGUFModelPatcher)
GGUF_PATCHER = {**{t: True for t in ("UnetLoaderGGUF", "UnetLoaderGGUFAdvanced", "CLIPLoaderGGUF", "DualCLIPLoaderGGUF",
                                     "TripleCLIPLoaderGGUF", "QuadrupleCLIPLoaderGGUF")},
                **{t: False for t in ("UnetLoaderGGUFDynamicVRAM", "CLIPLoaderGGUFDynamicVRAM", "DualCLIPLoaderGGUFDynamicVRAM",
                                      "TripleCLIPLoaderGGUFDynamicVRAM", "QuadrupleCLIPLoaderGGUFDynamicVRAM")}}
# (loader, widget) -> the estimate roles it takes from its file, where that is not the folder's (FOLDER_ROLES): the LTX-2
# checkpoint's text part (families.LTX2_TEXT_KEYS) and its audio VAE (role "other", families.LTX2_AUDIO_KIND). A file
# several loaders name is read once, each part counted once (components): ComfyUI builds each model from it once, and two
# loader nodes of one class and the same widgets share one cached output (comfy_execution/caching.py:115-125)
LOADER_ROLES = {("LTXAVTextEncoderLoader", "ckpt_name"): ("text_encoder",), ("LTXVAudioVAELoader", "ckpt_name"): ("other",),
                ("CLIPVisionLoader", "clip_name"): ("text_encoder",)}  # wf66: never a diffusion model (side_models.py)
# loaders whose files are looked for (a missing one stops the run) but not estimated: a LoRA is merged into the weights;
# the latent upscale model (0.8.0 comfy_extras/nodes_hunyuan.py:173-186: model_name from latent_upscale_models/,
# folder_paths.py:41; LTX-2's and HunyuanVideo 1.5's two-stage workflows) runs in its own upscale node: LTX-2's
# LTXVLatentUpsampler is a phase of its own (latent_upscale.py, ltx64), its file's weights read there
CHECKED = {
    "LoraLoaderModelOnly": [("lora_name", ("loras",))],
    "LoraLoader": [("lora_name", ("loras",))],
    "LatentUpscaleModelLoader": [("model_name", ("latent_upscale_models",))],
}
_LORA = ("LoRA files found, not counted (merged into the weights they patch)", "a LoRA is merged into the weights it patches")
# CHECKED loader -> (the note on the files found, why one not found leaves the estimate whole)
NOT_COUNTED = {"LoraLoaderModelOnly": _LORA, "LoraLoader": _LORA, "LatentUpscaleModelLoader": (
    "latent upscale model files found, counted only in LTX-2's latent upscale phase (a graph with LTXVLatentUpsampler)",
    "a latent upscale model runs in its own upscale step, which the estimate counts only for LTX-2's LTXVLatentUpsampler, "
    "at Lightricks' x2 upscaler when its file is not found")}
# a loader's models folder -> the estimate roles its file holds (a checkpoint holds all three)
FOLDER_ROLES = {"checkpoints": ("diffusion_model", "text_encoder", "vae"), "diffusion_models": ("diffusion_model",),
                "unet": ("diffusion_model",), "text_encoders": ("text_encoder",), "clip": ("text_encoder",), "vae": ("vae",)}


def find_file(models_dir, folders, name):
    """The name is always taken relative to its folder, as ComfyUI's folder_paths.get_full_path does: a shared
    workflow naming '/etc/x' or '../../x' must not make the CLI open files outside --models-dir. A path it may not
    read is passed over as get_full_path's os.path.isfile does (Path.is_file raises PermissionError), then named by
    unusable() when no folder has the file."""
    rel = os.path.relpath(os.path.join("/", name), "/")
    denied = False
    for sub in folders:
        p = Path(models_dir) / sub / rel
        try:
            if p.is_file():
                if os.access(p, os.R_OK):
                    return p
                denied = True
        except PermissionError:
            denied = True
    unusable([Path(models_dir) / sub for sub in folders], name, denied)
    return None


class Unusable(UserError):
    """A loader's file ComfyUI cannot use, though its name is there: read() reports that one file (its text is the
    missing file's why), the rest is estimated."""


class BrokenLink(Unusable):
    """A loader's file name that is a symlink to nothing: ComfyUI lists it in the loader's dropdown and
    folder_paths.get_full_path skips it (os.path.isfile is False). Its text: 'a broken link (points to X, which does not
    exist)', the target's file name only (no folder of the user's)."""


class NotReadable(Unusable):
    """A loader's file, or a folder on its way, this process may not read: get_full_path's os.path.isfile is False
    for it (stat denied), or the file is there and open would be denied."""


NOT_READABLE = "not readable (permission denied)"


def unusable(bases, name, denied=False):
    """Raise BrokenLink when `name`, read as find_file and get_full_path read it, is a dangling symlink under one of the
    folders `bases`, NotReadable when its stat there is denied (or `denied`: the caller found it unreadable); else
    nothing."""
    rel = os.path.relpath(os.path.join("/", name), "/")
    for base in bases:
        link = os.path.join(base, rel)
        if os.path.islink(link) and not os.path.exists(link):
            try:
                to = f"points to {os.path.basename(os.readlink(link).rstrip(os.sep))}, which does not exist"
            except OSError:
                to = "its target does not exist"
            raise BrokenLink(f"a broken link ({to})")
        try:
            os.stat(link)
        except PermissionError:
            denied = True
        except OSError:
            pass
    if denied:
        raise NotReadable(NOT_READABLE)


def subfolders():
    return {f for table in (LOADERS, CHECKED) for specs in table.values() for _, folders in specs for f in folders}


def has_model_folders(d) -> bool:
    """Whether folder d has any of the model sub-folders the loaders read (checkpoints/, vae/, ...)."""
    return any(os.path.isdir(Path(d) / s) for s in subfolders())  # False where stat is denied, as in ComfyUI


# loaders whose model is not a diffusion model, text encoder or VAE: each one a graph runs is named in the assumptions
# with its file, so the total is not read as the whole graph's (wf65: 25 of the real templates load a CLIP vision
# encoder, a ControlNet, a model patch, an audio encoder or a style model beside the models counted). Those of
# side_models.SIDE are sized in their phase where their file is found (wf66); the named line stays for a file not found.
# ComfyUI 0.8.0: loader -> (its file widget, the first in UI order; its models folder; what it loads), file:line
NOT_FOLLOWED = {
    "CLIPVisionLoader": ("clip_name", "clip_vision", "a CLIP vision encoder"),                         # nodes.py:1002
    "ControlNetLoader": ("control_net_name", "controlnet", "a ControlNet"),                            # nodes.py:805
    "DiffControlNetLoader": ("control_net_name", "controlnet", "a ControlNet"),                        # nodes.py:822
    "StyleModelLoader": ("style_model_name", "style_models", "a style model"),                         # nodes.py:1038
    "unCLIPCheckpointLoader": ("ckpt_name", "checkpoints", "an unCLIP checkpoint"),                    # nodes.py:615
    "GLIGENLoader": ("gligen_name", "gligen", "a GLIGEN model"),                                       # nodes.py:1135
    "ImageOnlyCheckpointLoader": ("ckpt_name", "checkpoints",
                                  "an image-conditioned checkpoint the estimate does not size (SVD): Hunyuan3D's only"),
    # sized in its own phase where its file is found and an ImageUpscaleWithModel runs (pixel_upscale.py, ups63)
    "UpscaleModelLoader": ("model_name", "upscale_models", "a pixel upscale model"),                   # nodes_upscale_model.py:18
    "HypernetworkLoader": ("hypernetwork_name", "hypernetworks", "a hypernetwork"),                    # nodes_hypernetwork.py:100
    "ModelPatchLoader": ("name", "model_patches", "a model patch"),                                    # nodes_model_patch.py:222
    "AudioEncoderLoader": ("audio_encoder_name", "audio_encoders", "an audio encoder"),                # nodes_audio_encoder.py:8
    "PhotoMakerLoader": ("photomaker_model_name", "photomaker", "a PhotoMaker model"),                 # nodes_photomaker.py:121
    "DiffusersLoader": ("model_path", "diffusers", "a diffusers-format model folder (the estimate reads single files)"),  # nodes.py:588
}  # ImageOnlyCheckpointLoader: comfy_extras/nodes_video_model.py:10
NOT_FOLLOWED_NAMES = {t: (r[0],) for t, r in NOT_FOLLOWED.items()}  # the widget workflow.nodes() reads of each


def not_followed(found) -> list[str]:
    """The assumption lines for [(node type, widgets)] of the loaders the graph runs that the estimate does not size
    (NOT_FOLLOWED), and of any other node named like a loader (a custom node's): none where there is none."""
    known = [f"{w.get(NOT_FOLLOWED[t][0]) if isinstance(w.get(NOT_FOLLOWED[t][0]), str) else '(no file)'} "
             f"({t}: {NOT_FOLLOWED[t][2]})" for t, w in found if t in NOT_FOLLOWED]
    other = sorted({t for t, _ in found if t not in NOT_FOLLOWED})
    return ([f"not counted, loaded beside the models estimated: {', '.join(dict.fromkeys(known))}"] if known else []) + \
        ([f"not counted: {', '.join(other)}, a loader the estimate does not know (a custom node's?)"] if other else [])
