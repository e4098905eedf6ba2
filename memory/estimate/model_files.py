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
    "VAELoader": [("vae_name", ("vae",))],
    # LTX-2 (0.8.0 comfy_extras/nodes_lt_audio.py): Gemma 3 12B ("text_encoders": folder_paths.py:28, text_encoders/ and
    # clip/) plus the connectors in the checkpoint (l.180-188, 194-201); the audio VAE from the checkpoint (l.17-21, 28-31)
    "LTXAVTextEncoderLoader": [("text_encoder", ("text_encoders", "clip")), ("ckpt_name", ("checkpoints",))],
    "LTXVAudioVAELoader": [("ckpt_name", ("checkpoints",))],
}
# (loader, widget) -> the estimate roles it takes from its file, where that is not the folder's (FOLDER_ROLES): the LTX-2
# checkpoint's text part (families.LTX2_TEXT_KEYS) and its audio VAE (role "other", families.LTX2_AUDIO_KIND). A file
# several loaders name is read once, each part counted once (components): ComfyUI builds each model from it once, and two
# loader nodes of one class and the same widgets share one cached output (comfy_execution/caching.py:115-125)
LOADER_ROLES = {("LTXAVTextEncoderLoader", "ckpt_name"): ("text_encoder",), ("LTXVAudioVAELoader", "ckpt_name"): ("other",)}
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
