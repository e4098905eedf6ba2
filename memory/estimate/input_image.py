"""The size of an image a LoadImage node loads, read from the file's header (Pillow, lazily; no pixel is decoded), so
an img2img or edit graph is estimated at the size ComfyUI will encode instead of a stand-in (the node's size, the
family's native size, or a square of the area a scale node gives). ComfyUI 0.8.0, nodes.py:1661-1707 LoadImage.load_image
(LoadImageOutput:1774 is the same loader): Image.open, then for each frame of ImageSequence.Iterator ImageOps.exif_transpose
(an EXIF orientation of 5-8 swaps width and height); frames whose size differs from the first are skipped, an MPO file
gives its first frame only; the frames kept are the image batch.

Inside ComfyUI the file is where folder_paths.get_annotated_filepath puts it ("name [output]" in the output folder, else
the input folder); on the command line, in the input folder given (--input-dir) or found beside --models-dir."""
import os
from pathlib import Path

LOADERS = ("LoadImage", "LoadImageOutput")  # their image widget first (nodes.py:1654, 1779)
ANNOTATIONS = {"[output]": "output", "[input]": "input", "[temp]": "temp"}  # folder_paths.annotated_filepath
SWAPS = (5, 6, 7, 8)  # EXIF orientations ImageOps.exif_transpose turns by 90 degrees (transposes)
EXIF_ORIENTATION = 0x0112
MAX_FRAMES = 10000  # more frames are not counted one by one (a stand-in batch is said)


class NotRead(Exception):
    """The image's size (or, for pixel_upscale.scale_reader, an upscale model's scale) could not be read; the message
    says why."""


def split_annotation(name: str) -> tuple[str, str | None]:
    """("sub/file.png", "output") for "sub/file.png [output]"; the folder None when the name carries none (the input
    folder then, as ComfyUI falls back to it)."""
    for tag, folder in ANNOTATIONS.items():
        if name.endswith(tag):
            return name[:-len(tag)].rstrip(" "), folder
    return name, None


def pixel_size(path) -> tuple[int, int, int, str]:
    """(width, height, frames, how) of the image file at path as LoadImage returns it; raises NotRead."""
    try:
        from PIL import Image
    except ImportError:
        raise NotRead("Pillow is not installed (pip install pillow): the loaded image's size is not read") from None
    name = Path(path).name
    try:
        with Image.open(path) as img:  # reads the header only; the pixels are decoded on first access, never here
            w, h = img.size
            try:
                orient = img.getexif().get(EXIF_ORIENTATION)
            except Exception:  # a broken EXIF block: Pillow's exif_transpose would not turn it either
                orient = None
            frames = 1 if img.format == "MPO" else getattr(img, "n_frames", 1)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise NotRead(f"{name}: not an image Pillow can read ({type(exc).__name__})") from None
    if orient in SWAPS:
        w, h = h, w
    if not isinstance(frames, int) or frames < 1:
        frames = 1
    how = f"{name}, {w}x{h}" + (" (EXIF-rotated)" if orient in SWAPS else "")
    if frames > 1:  # the frames of another size than the first are skipped by ComfyUI: the count is at most this
        how += f", {min(frames, MAX_FRAMES)} frames, assumed all of the first frame's size"
    return w, h, min(frames, MAX_FRAMES), how


def folder_reader(input_dir, output_dir=None, temp_dir=None):
    """size(name) -> (w, h, frames, how) for the command line: a name under the given folders (the input folder when the
    name carries no annotation), never a path outside them."""
    roots = {"input": input_dir, "output": output_dir, "temp": temp_dir}

    def size(name):
        rel, folder = split_annotation(name)
        root = roots.get(folder or "input")
        if not root:
            raise NotRead(f"{name}: no {folder or 'input'} folder given")
        base = os.path.realpath(root)
        p = os.path.realpath(os.path.join(base, rel))
        if os.path.commonpath([base, p]) != base:
            raise NotRead(f"{name}: outside the {folder or 'input'} folder")
        if not os.path.isfile(p):
            raise NotRead(f"{name}: not in {root}")
        return pixel_size(p)

    return size


def beside_models(models_dir):
    """ComfyUI's input folder beside its models folder (ComfyUI/input next to ComfyUI/models), or None."""
    if not models_dir:
        return None
    d = Path(models_dir).resolve().parent / "input"
    return d if d.is_dir() else None
