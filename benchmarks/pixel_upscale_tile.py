"""The pixel upscale step's figures (ups63, issue 15): spandrel's real classes (ComfyUI 0.8.0's UpscaleModelLoader:
ModelLoader().load_from_state_dict, comfy_extras/nodes_upscale_model.py:36-39) built from state dicts of the common
architectures' key layouts, then the call ImageUpscaleWithModel makes on each tile (the descriptor's __call__:
pad, forward, clamp; nodes_upscale_model.py:86) traced on meta with gpu_garden's tracer (memory/trace) at tiles of
512, 256 and 128 pixels, fp32 as the node runs it. Recorded per configuration: spandrel's detected scale, the
module's dtype when the state dict is fp16 (load_state_dict copies into the fp32 parameters: the file's dtype is not
kept), module_size (ComfyUI's model_management.module_size: the state dict's bytes), the traced weights and activation
peak per tile, the activation bytes per input pixel of a tile, and ComfyUI's memory_required (comfyui_request) (estimate/pixel_upscale.TILE_BYTES_PER_PIXEL is read
from this file: tests/unit/test_estimate_ups63.py checks they agree).

  esrgan_4x_64nf_23nb        RRDBNet x4 (ESRGAN old keys): 4x-UltraSharp, NMKD Siax/Superscale, RealESRGAN_x4plus
  esrgan_4x_64nf_6nb         RRDBNet x4, 6 blocks (RealESRGAN_x4plus_anime_6B): the peak does not follow the blocks
  esrgan_2x_64nf_23nb        RRDBNet x2 with one upsampling conv (2x ESRGAN models)
  esrgan_2x_64nf_23nb_unshuffle  RealESRGAN_x2plus: pixel-unshuffled input (12 channels), two upsampling convs
  compact_4x_64nf_32nc       SRVGGNetCompact x4, 32 convs: realesr-general-x4v3
  compact_4x_64nf_16nc       SRVGGNetCompact x4, 16 convs: realesr-animevideov3
  compact_2x_64nf_16nc       SRVGGNetCompact x2

    COMFYUI_PYTHON=... $COMFYUI_PYTHON benchmarks/pixel_upscale_tile.py   (ComfyUI's Python: spandrel and torch)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from support.pack import load_pack  # noqa: E402

load_pack()

import torch  # noqa: E402
from spandrel import ModelLoader  # noqa: E402
from spandrel.architectures.Compact import Compact  # noqa: E402
from spandrel.architectures.ESRGAN import ESRGAN  # noqa: E402

from gpu_garden.memory.estimate import pixel_upscale  # noqa: E402
from gpu_garden.memory.trace import tracer  # noqa: E402
from results import save  # noqa: E402

TILES = (512, 256, 128)
CONFIGS = {
    "esrgan_4x_64nf_23nb": lambda: ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=23, scale=4),
    "esrgan_4x_64nf_6nb": lambda: ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=6, scale=4),
    "esrgan_2x_64nf_23nb": lambda: ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=23, scale=2),
    "esrgan_2x_64nf_23nb_unshuffle": lambda: ESRGAN(in_nc=12, out_nc=3, num_filters=64, num_blocks=23, scale=4,
                                                    shuffle_factor=2),
    "compact_4x_64nf_32nc": lambda: Compact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=32, upscale=4),
    "compact_4x_64nf_16nc": lambda: Compact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=16, upscale=4),
    "compact_2x_64nf_16nc": lambda: Compact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=16, upscale=2),
}


def measure(build) -> dict:
    with torch.device("meta"):
        shapes = {k: v.shape for k, v in build().state_dict().items()}
    sd = {k: torch.zeros(s, dtype=torch.float16) for k, s in shapes.items()}  # an fp16 file's state dict
    d = ModelLoader().load_from_state_dict(sd).eval()
    module_size = sum(t.nbytes for t in d.model.state_dict().values())  # model_management.module_size
    tiles = {}
    for t in TILES:
        r = tracer.trace(d.model, torch.empty(1, 3, t, t), call=d)
        tiles[str(t)] = {"activations_peak": r["activations_peak"], "weights": r["weights"], "at": r["at"]["module"],
                         "bytes_per_pixel": r["activations_peak"] / (t * t)}
    return {"architecture": d.architecture.id, "scale": d.scale, "tags": d.tags, "loaded_dtype": str(d.dtype),
            "module_size": module_size, "values": sum(int(v.numel()) for v in sd.values()), "tiles": tiles,
            "bytes_per_pixel": tiles["512"]["bytes_per_pixel"],
            "linear_in_tile_area": len({v["bytes_per_pixel"] for v in tiles.values()}) == 1}


def main() -> int:
    configs = {name: measure(build) for name, build in CONFIGS.items()}
    data = {"torch": torch.__version__, "spandrel": __import__("spandrel").__version__, "tiles": list(TILES),
            "configs": configs,
            # ComfyUI's memory_required (pixel_upscale.comfy_request): its tile term for one unit of scale, and an x4
            # ESRGAN on a 1024 x 1024 image
            "comfyui_request": {"per_scale": pixel_upscale.comfy_request(0, 1, (0, 0, 0)),
                                "esrgan_4x_1024": pixel_upscale.comfy_request(
                                    configs["esrgan_4x_64nf_23nb"]["module_size"], 4, (1024, 1024, 1))}}
    path = save("pixel_upscale_tile", "COMFYUI_PYTHON=... $COMFYUI_PYTHON benchmarks/pixel_upscale_tile.py", data)
    print(json.dumps(data, indent=1))
    print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
