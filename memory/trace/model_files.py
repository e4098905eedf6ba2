"""Where `trace --checkpoint NAME` finds its file, and its checks that run before ComfyUI is imported (which takes
seconds): a path that is there, else the name in the --comfyui checkout's models/ folders, as ComfyUI's own loaders
look it up (folder_paths.folder_names_and_paths in ComfyUI 0.8: "diffusion_models" is models/unet and
models/diffusion_models, "text_encoders" is models/text_encoders and models/clip). Folders named in ComfyUI's
extra_model_paths.yaml or --base-directory are not read: such a file is given by its path.
"""
import json
import struct
from pathlib import Path

from ..errors import UserError

# phase -> models/ folders in the order they are searched: the phase's own loader's first (CheckpointLoaderSimple,
# UNETLoader; VAELoader; CLIPLoader), then a whole checkpoint, which holds every part
PHASE_FOLDERS = {
    "sample": ("checkpoints", "unet", "diffusion_models"),
    "decode": ("vae", "checkpoints"),
    "encode": ("vae", "checkpoints"),
    "text": ("text_encoders", "clip", "checkpoints"),
}
SUFFIXES = (".safetensors", ".sft")


def find_checkpoint(comfyui_dir, name, phase="sample") -> str:
    """The file `name` stands for: the path itself when it is a file, else comfyui_dir/models/FOLDER/name for the
    phase's folders (a relative name only; a subfolder such as SDXL/base.safetensors as ComfyUI lists it). Its
    safetensors header is read once here, so a missing, misnamed or broken file is refused before the import."""
    given = Path(name).expanduser()
    if given.is_dir():
        raise UserError(f"{name}: a folder, not a model file (give its .safetensors file)")
    folders = PHASE_FOLDERS.get(phase, PHASE_FOLDERS["sample"])
    models = Path(comfyui_dir).expanduser() / "models"
    path = given if given.is_file() or given.is_absolute() else \
        next((models / f / given for f in folders if (models / f / given).is_file()), None)
    if path is None or not path.is_file():
        where = "" if given.is_absolute() else (f" here, nor in ComfyUI's folders for --phase {phase}: "
                                                + ", ".join(str(models / f) for f in folders) + " (a file elsewhere: its path)")
        raise UserError(f"{name}: no such file{where}")
    read_header(path)
    return str(path)


def read_header(path) -> dict:
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    if p.suffix not in SUFFIXES:
        raise UserError(f"{path}: only .safetensors headers can be traced")
    with open(p, "rb") as f:
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
        if not 0 < n <= 100 * 1024 * 1024:
            raise UserError(f"{path}: not a safetensors file (header length {n})")
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, ValueError):
            header = None
        if not isinstance(header, dict):
            raise UserError(f"{path}: not a safetensors file (its header is not a JSON object)")
        return header
