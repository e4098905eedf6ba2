"""The pixel upscale step (ups63): ImageUpscaleWithModel fed by an UpscaleModelLoader, as ComfyUI 0.8.0 runs it
(comfy_extras/nodes_upscale_model.py), a phase of its own ("pixel_upscale") after the VAE decode.

- the model: load_torch_file(safe_load=True) (.safetensors, or .pth/.pt through torch.load(weights_only=True)), then
  spandrel's ModelLoader().load_from_state_dict: the architecture's class is built in fp32 and load_state_dict copies the
  file's tensors into it, so an fp16 file runs in fp32 too (benchmarks/results/pixel_upscale_tile.json: loaded_dtype);
  its weights are the file's values at 4 bytes (module_size, which free_memory is asked for).
- the node (l.66-96): memory_required = module_size + 512*512*3 * 4 * max(scale, 1) * 384 + the input image's bytes;
  free_memory(memory_required) unloads models until that much is free (it never refuses: a card with less room unloads
  everything and goes on); then the model and the whole input image (B x 3 x H x W, fp32) go to the device and
  tiled_scale (comfy/utils.py:977-1085) runs the model on one tile at a time, min(512, side) a side, its output moved to
  the CPU (output_device="cpu"); an out-of-memory error halves the tile, down to 128, then it raises.
- the phase: the model's weights, the input image and one tile's activation peak, traced on spandrel's real class with
  gpu_garden's tracer (benchmarks/pixel_upscale_tile.py; linear in the tile's area): TILE_BYTES_PER_PIXEL. ComfyUI's
  memory_required is reported beside it (comfyui_request), not counted: docs/estimate.md says why. An architecture not
  measured: its weights and the image only, and an assumption line says the tile is not counted.
- the file: read_file, from the header alone (.safetensors) or the torch zip's entries (.pth: torch_file.py)."""
import math
import os
import re

from . import torch_file, upscale_archs
from .headers import read_tensors
from .image_size import DECODED, FROM_DECODE, UPSCALE, UPSCALE_MODEL, scaled
from .input_image import NotRead
from .weights import at_dtype_bytes
from ..errors import UserError
from ..units import fmt_bytes

# ComfyUI 0.8.0's constants, one table: name -> (value, where)
COMFY = {"tile": (512, "comfy_extras/nodes_upscale_model.py:77"), "overlap": (32, "nodes_upscale_model.py:78"),
         "per_scale": (384.0, "nodes_upscale_model.py:70 (512*512*3 x element_size x max(scale, 1) x 384)"),
         "min_tile": (128, "nodes_upscale_model.py:89-91 (tile //= 2; below 128 it raises)"),
         "image_bytes": (4, "the IMAGE is fp32 (VAEDecode's output), element_size 4"),
         "model_bytes": (4, "spandrel builds the class in fp32; load_state_dict casts the file into it")}
TILE, OVERLAP, PER_SCALE, MIN_TILE = (COMFY[k][0] for k in ("tile", "overlap", "per_scale", "min_tile"))
FP32 = COMFY["model_bytes"][0]
# activation bytes per input pixel of one tile (fp32), traced: benchmarks/results/pixel_upscale_tile.json (its
# bytes_per_pixel per config; tests/unit/test_estimate_ups63.py checks this table against it).
# (architecture, features, scale, unshuffled input) -> bytes; Compact's peak is in its body at 1x: any scale
TILE_BYTES_PER_PIXEL = {("ESRGAN", 64, 4, False): 8204, ("ESRGAN", 64, 2, False): 2316, ("ESRGAN", 64, 2, True): 2072,
                        ("Compact", 64, None, False): 524}
NODES = ("UpscaleModelLoader", "ImageUpscaleWithModel")
FOLDERS = ("upscale_models",)
KEY = UPSCALE[2]  # where image_size.attach leaves the node's image (w, h, batch, how), or "decode" (a VAE decode's)
_UPCONV = re.compile(r"^(?:upconv|conv_up)(\d)\.weight$")


def unwrap(sd: dict) -> dict:
    """The state dict as load_torch_file returns it (comfy/utils.py:91-98: "state_dict", or a dict's one entry), and
    spandrel's params_ema / UpscaleModelLoader's "module." prefix taken off."""
    if isinstance(sd.get("state_dict"), dict):
        sd = sd["state_dict"]
    elif len(sd) == 1 and isinstance(next(iter(sd.values())), dict):
        sd = next(iter(sd.values()))
    if isinstance(sd.get("params_ema"), dict):
        sd = sd["params_ema"]
    return {k[7:] if k.startswith("module.") else k: v for k, v in sd.items() if not isinstance(v, dict)}


def detect(table) -> dict | None:
    """{arch, scale, features, unshuffle} by spandrel's rules (architectures/ESRGAN/__init__.py _get_scale, load;
    Compact/__init__.py load), or None for another architecture. table: {key: (dtype, shape)}."""
    shape = lambda k: table[k][1]  # noqa: E731
    if "model.0.weight" in table and "model.1.sub.0.RDB1.conv1.0.weight" in table:  # ESRGAN's old keys
        n = upscale_archs.seq_len(table, "model")
        log2, first, last = (n - 5) // 3, shape("model.0.weight"), shape(f"model.{n - 1}.weight")
    elif "conv_first.weight" in table and "conv_last.weight" in table and any(
            k in table for k in ("body.0.rdb1.conv1.weight", "RRDB_trunk.0.RDB1.conv1.weight")):  # Real-ESRGAN / BSRGAN
        ups = [int(m.group(1)) for k in table for m in [_UPCONV.match(k)] if m]
        log2, first, last = max(ups, default=0), shape("conv_first.weight"), shape("conv_last.weight")
    elif "body.0.weight" in table and "body.1.weight" in table:  # SRVGGNetCompact
        top = upscale_archs.seq_len(table, "body") - 1
        scale = upscale_archs.square_scale(shape(f"body.{top}.bias")[0], shape("body.0.weight")[1])
        return {"arch": "Compact", "scale": scale, "features": shape("body.0.weight")[0],
                "unshuffle": False} if scale else None
    else:
        return upscale_archs.detect(table)  # SPAN, SwinIR, HAT, DAT (arch64), and 8 more (arch65)
    scale, in_nc, out_nc = 2 ** max(log2, 0), first[1], last[0]
    shuffle = int(math.isqrt(in_nc // out_nc)) if in_nc in (out_nc * 4, out_nc * 16) else 0
    return {"arch": "ESRGAN", "scale": scale // shuffle if shuffle else scale, "features": first[0],
            "unshuffle": bool(shuffle)}


def per_pixel(arch, side=TILE) -> int | None:
    """Traced activation bytes per input pixel of a tile for this architecture (side: that of the square of the tile's
    area, tile_side; arch65's Real-CUGAN and RGT have a figure per traced tile), None where not measured."""
    if not arch:
        return None
    if "key" in arch:
        return upscale_archs.per_pixel(arch, side)
    key = (arch["arch"], arch["features"], None if arch["arch"] == "Compact" else arch["scale"], arch["unshuffle"])
    return TILE_BYTES_PER_PIXEL.get(key)


def read_file(path) -> dict:
    """{"name", "weights" (bytes as ComfyUI holds it), "arch" (detect(), None: unknown), "why" (a line when the
    architecture is not read)}. UserError for a file that is not a model (a clear line, never a stall)."""
    name = os.path.basename(str(path))
    if str(path).lower().endswith((".safetensors", ".sft")):
        table, why = read_tensors(path), None
    else:
        table, stored, why = torch_file.read(path)
        if table is None:
            return {"name": name, "weights": stored, "arch": None, "why": why}
    table = unwrap(table)
    try:
        arch = detect(table)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError):  # a partial or malformed layout
        arch = None
    return {"name": name, "weights": at_dtype_bytes(table, FP32), "arch": arch,
            "why": why or (None if arch else "its keys are none of ESRGAN's (RRDBNet), SRVGGNetCompact's, SPAN's, SwinIR's, "
                                      "HAT's, DAT's, PLKSR's, OmniSR's, Swin2SR's, DRCT's, ATD's, RGT's, Real-CUGAN's or "
                                      "SAFMN's")}


def comfy_request(weights, scale, image) -> int:
    """ImageUpscaleWithModel's memory_required (nodes_upscale_model.py:69-71) for an image (w, h, batch)."""
    w, h, b = image
    px = COMFY["image_bytes"][0]
    return int(weights + TILE * TILE * 3 * px * max(scale or 1, 1.0) * PER_SCALE + b * h * w * 3 * px)


MAX_SIDE, MAX_BATCH = 1 << 20, 1 << 16     # far past any image a graph makes (nodes.MAX_RESOLUTION 16384, x4 twice)


def _short(x) -> str:
    """A number for an error line: a hand-edited 10**400 said as a size, not 400 digits."""
    return str(x) if abs(x) < 10 ** 12 else f"{float(x):.3g}" if abs(x) < 1e300 else "over 1e300"


def tile_area(w, h, tile=TILE) -> int:
    """Pixels of tiled_scale's largest tile on a w x h image: min(tile, side) a side (a side within the tile runs whole)."""
    return min(tile, w) * min(tile, h)


def tile_side(w, h, tile=TILE) -> float:
    """The side of a square of that tile's area: what a figure that follows the tile's area is read at (RGT's grows with
    it; a 512x256 tile is not a 512 one: review rev65d #3, 1.88x the trace when read at its longer side)."""
    return math.sqrt(tile_area(w, h, tile))


def phase_inputs(model, image, how, assumptions) -> dict:
    """{"weights", "bytes" (input image + one tile's activations), "image", "tile", "comfy_request", "scale", "out",
    "retry": {tile: bytes} of the smaller tiles ComfyUI retries with} of the step; model: read_file()'s; image: (w, h,
    batch) of the image the node receives, how: where that size comes from."""
    w, h, b = image
    if not (1 <= min(w, h) and max(w, h) <= MAX_SIDE and 1 <= b <= MAX_BATCH):  # a hand-edited graph (rev65e: a width of
        # 10**400 overflowed a float; rev65f #4: a negative side, a 0 one; ComfyUI's nodes take sides and batches from 1)
        raise UserError(f"the image at the upscale step ({_short(w)} x {_short(h)}, batch {_short(b)}) is outside what "
                        f"ComfyUI's nodes accept (sides 1 to {MAX_SIDE}, batch 1 to {MAX_BATCH})")
    arch, img = model["arch"], b * h * w * 3 * COMFY["image_bytes"][0]
    scale = arch["scale"] if arch else None
    per = per_pixel(arch, tile_side(w, h))
    tile = per * tile_area(w, h) if per else 0
    retry = {t: img + per_pixel(arch, tile_side(w, h, t)) * tile_area(w, h, t) for t in (TILE // 2, MIN_TILE)} \
        if per and tile_area(w, h) > tile_area(w, h, MIN_TILE) else {}
    out = {"weights": int(model["weights"]), "image": img, "tile": tile, "bytes": img + tile, "scale": scale,
           "comfy_request": comfy_request(model["weights"], scale or 1, image), "retry": retry,
           "out": [w * scale, h * scale, b] if scale else None, "name": model["name"]}
    what = (f"{arch['arch']} x{scale}, {arch['features']} features" + (", unshuffled input" if arch["unshuffle"] else "")
            + (f", {arch['variant']}" if arch.get("variant") else "")) if arch else "architecture not read"
    assumptions.append(
        f"pixel upscale (ImageUpscaleWithModel): {model['name']} ({what}; {fmt_bytes(out['weights'])} in fp32) on a "
        f"{w}x{h}" + (f" x{b}" if b > 1 else "") + f" image ({how})" + (f" to {w * scale}x{h * scale}" if scale else "")
        + f": its own phase, the image on the device ({fmt_bytes(img)}) and one {min(TILE, w)}x{min(TILE, h)} tile "
        + (f"({fmt_bytes(tile)}, traced: {per} bytes a pixel)" if per else "(not counted: the architecture's tile is not "
           f"measured{'; ' + model['why'] if model.get('why') else ''})")
        + f"; ComfyUI frees {fmt_bytes(out['comfy_request'])} for it first (its memory_required), not counted")
    return out


def _image(x, size, frames, batch, typed_size=False, typed_batch=False):
    """(w, h, batch, how) of the image one ImageUpscaleWithModel receives (x: its widgets): the size the graph sets for
    it (image_size.attach; a VAE decode's, followed to its latent node: the hires fix's first pass, whatever size its
    second pass is estimated at), else the decode of the estimated latent (size: w x h), said as assumed unless its
    source is a VAE decode. typed_size: --width/--height typed: a decode's image is the typed one; typed_batch:
    --batch/--frames typed: a decode's image has the typed batch (rev64 #4). An image the graph makes from a decode (an
    upscale chain's later step: image_size.FROM_DECODE) scales with it: as the typed size (batch) is to that decode's
    (image_size.scaled, the rule a re-estimate scales each sampler's latent by; est65)."""
    got = x.get(KEY)
    if isinstance(got, tuple) and len(got) == 4:
        root = x.get(FROM_DECODE)
        if got[3] != DECODED:
            if not root or not (typed_size or typed_batch):
                return got
            sides = scaled(got[:2], root[:2], size) if typed_size else got[:2]
            # the decode's batch moves with a typed size too (every sampler then runs at the estimate's batch, and the
            # decode's own image takes it below: rev65f #1)
            b = scaled(got[2:3], root[2:3], (frames * batch,))[0] if typed_batch or typed_size else got[2]
            return (*sides, b, f"{got[3]}: {got[0]}x{got[1]}" + (f" x{got[2]}" if got[2] > 1 else "")
                    + f" from a {root[0]}x{root[1]}" + (f" x{root[2]}" if root[2] > 1 else "") + " decode, scaled with the "
                    "typed " + " and ".join(k for k, on in (("size", typed_size), ("batch", typed_batch)) if on))
        if not typed_size:
            return got[:2] + ((frames * batch if typed_batch else got[2]), got[3])
    decoded = got == "decode" or isinstance(got, tuple) and got[3] == DECODED
    return (size[0], size[1], frames * batch, DECODED if decoded else
            f"assumed: {DECODED}; its image's source is not read")


def step(models, found, size, frames, batch, typed_size=False, typed_batch=False):
    """(model, (w, h, batch), how, notes) of the pixel upscale step counted: each ImageUpscaleWithModel (found: the
    nodes' widgets) with the model its own UpscaleModelLoader names (image_size.UPSCALE_MODEL; the largest found where
    the link is not read) on its own image; the step that needs the most (weights + image + tile, phase_inputs) is
    counted (rev64 #1, #2: not the heaviest file on the largest image, a pair no node runs). models: {name: read_file()},
    find()'s."""
    biggest = max(models.values(), key=lambda m: m["weights"])
    named = [x for x in found or () if x.get(UPSCALE_MODEL) is None or x[UPSCALE_MODEL] in models]
    pairs = []
    for x in named or (found or [{}])[:1]:  # a node whose model is named but not read ("not counted") is left out (rev64b #3)
        m = models.get(x.get(UPSCALE_MODEL), biggest)
        *img, how = _image(x, size, frames, batch, typed_size, typed_batch)
        need = phase_inputs(m, img, how, [])
        pairs.append((need["weights"] + need["bytes"], m, tuple(img), how))
    _, m, img, how = max(pairs, key=lambda p: p[0])
    notes = [f"{len(pairs)} pixel upscale steps: the one that needs the most, {m['name']} on a {img[0]}x{img[1]} image, "
             "is counted (ComfyUI runs them one at a time)"] if len(pairs) > 1 else []
    return m, img, how, notes


def held(models) -> dict:
    """{name: fp32 bytes} of every upscale model the graph loads, each file once: its UpscaleModelLoader's output (the
    spandrel model, moved back to the CPU after each step: nodes_upscale_model.py:93) stays in ComfyUI's output cache in
    RAM, and two loaders naming the same file share one cache entry (comfy_execution/caching.py:108-116: a node's key
    is its class and inputs). models: find()'s {name as the loader names it: read_file()}."""
    return {name: int(m["weights"]) for name, m in models.items()}


def held_line(held) -> list:
    """The assumption line where more than one upscale model is loaded (host RAM counts them all), else none."""
    return [f"{len(held)} upscale models loaded ({', '.join(held)}): each stays in host RAM in ComfyUI's output cache, "
            f"{fmt_bytes(sum(held.values()))} in all, counted there"] if len(held) > 1 else []


def locate(name, models_dir, resolve, find_file, unusable_exc):
    """(path or None, why or None) of the upscale model `name` in upscale_models/ (inside ComfyUI: resolve, its
    folder_paths)."""
    if not isinstance(name, str) or not name:
        return None, None
    try:
        return (resolve(FOLDERS, name) if resolve else find_file(models_dir, FOLDERS, name) if models_dir else None), None
    except unusable_exc as exc:  # a broken link: that file is reported
        return None, str(exc)


def scale_reader(models_dir, resolve, find_file, unusable_exc, cache):
    """scale(name) -> the upscale factor of the model UpscaleModelLoader names (read_file's detect()), for links.image
    (links.view's read_upscale: links never reads a file); raises input_image.NotRead with the reason where the file is
    not found or its architecture not read. cache: {path: read_file()} shared with find()."""
    def scale(name):
        p, why = locate(name, models_dir, resolve, find_file, unusable_exc)
        if not p:
            raise NotRead(why or ("no models folder given" if not (models_dir or resolve) else
                                  f"not found under the models folder (looked in {FOLDERS[0]}/)"))
        try:
            m = _read_cached(p, cache)
        except (UserError, OSError) as exc:
            raise NotRead(str(exc).removeprefix(str(p) + ": ")) from None
        if not m["arch"]:
            raise NotRead(f"its scale is not read: {m['why']}")
        return m["arch"]["scale"]

    return scale


def _read_cached(p, cache):
    if str(p) not in cache:
        try:
            cache[str(p)] = read_file(p)
        except (UserError, OSError) as exc:
            cache[str(p)] = exc
    if isinstance(cache[str(p)], Exception):
        raise cache[str(p)]
    return cache[str(p)]


def find(loaders, runs, models_dir, resolve, find_file, unusable_exc, cache=None):
    """({model_name as the loader names it: the upscale model read} for the phase, [(loader, widgets)] left to the named line, [(name, loader,
    widget, folders, why)] named and not found, notes). loaders: the UpscaleModelLoader widgets; runs: whether an
    ImageUpscaleWithModel runs (else nothing is read, as for any node that does not run). A file named and not found is
    missing, as a side model's (side_models.find; ComfyUI refuses the prompt: get_full_path_or_raise,
    nodes_upscale_model.py:35, and value_not_in_list before it). step() pairs each node with its model."""
    if not loaders or not runs:
        return {}, [("UpscaleModelLoader", w) for w in loaders], [], []
    got, left, missing, notes, cache = [], [], [], [], {} if cache is None else cache
    for w in loaders:
        name = w.get("model_name")
        p, why = locate(name, models_dir, resolve, find_file, unusable_exc)
        if not p:
            if isinstance(name, str) and name and (models_dir or resolve):
                missing.append((name, NODES[0], "model_name", FOLDERS, why))
            else:
                left.append((NODES[0], w))
            continue
        try:
            got.append((name, _read_cached(p, cache)))
        except (UserError, OSError) as exc:
            notes.append(f"not counted: {name} (UpscaleModelLoader): {str(exc).removeprefix(str(p) + ': ')}")
    return dict(got), left, missing, notes
