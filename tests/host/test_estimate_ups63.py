"""ups63 on a real --cpu ComfyUI 0.8.0: the pixel upscale step.

- ComfyUI's own UpscaleModelLoader (comfy_extras/nodes_upscale_model.py) loads an RRDBNet x4 .pth that torch.save wrote
  from spandrel's class (fp16 tensors, RealESRGAN_x4plus's "params_ema" wrapping): its scale, its dtype once loaded and
  module_size (what ImageUpscaleWithModel asks free_memory for) are what estimate/pixel_upscale.read_file reads from
  the file without loading it;
- POST /gpu_garden/estimate/workflow with a hires-fix graph (SD1.5 512 x 512 -> VAE Decode -> Upscale Image (using
  Model)) resolves the file through ComfyUI's upscale_models folder and answers with the pixel_upscale phase."""
import json

import pytest

from support.comfy_host import CHECKPOINT, host_unavailable_reason
from support.pack import host_json

pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]
NAME = "gg_RealESRGAN_x4plus.pth"
RRDB_FP32 = 66_791_948  # 16,697,987 values x 4 (hand count: tests/unit/test_estimate_ups63.py)

WRITE_AND_LOAD = """
import json, os, torch
from gpu_garden.memory.trace import comfy_checkout as cc
from gpu_garden.memory.estimate import pixel_upscale
cc.import_comfy(sys.argv[1])
import folder_paths
from comfy import model_management
from spandrel.architectures.ESRGAN import ESRGAN
from comfy_extras.nodes_upscale_model import UpscaleModelLoader
d = sys.argv[2]
os.makedirs(d, exist_ok=True)
m = ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=23, scale=4)
torch.save({"params_ema": {k: v.half() for k, v in m.state_dict().items()}}, os.path.join(d, sys.argv[3]))
folder_paths.add_model_folder_path("upscale_models", d)
out = UpscaleModelLoader.execute(sys.argv[3])
desc = out.result[0] if hasattr(out, "result") else out[0]
ours = pixel_upscale.read_file(os.path.join(d, sys.argv[3]))
print(json.dumps({"scale": desc.scale, "dtype": str(desc.dtype), "module_size": model_management.module_size(desc.model),
                  "ours": ours}))
"""


def test_comfyuis_loader_and_the_route_agree_with_the_header_read(comfy_host):
    d = comfy_host.base / "models" / "upscale_models"
    got = host_json(WRITE_AND_LOAD, str(d), NAME)
    assert got["scale"] == 4 and got["dtype"] == "torch.float32" and got["module_size"] == RRDB_FP32
    assert got["ours"]["weights"] == got["module_size"]
    assert got["ours"]["arch"] == {"arch": "ESRGAN", "scale": 4, "features": 64, "unshuffle": False}
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": CHECKPOINT}},
          "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
          "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["2", 0], "cfg": 7.0}},
          "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
          "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": NAME}},
          "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["4", 0]}},
          "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0]}}}
    out = comfy_host.post("/gpu_garden/estimate/workflow", {"workflow": json.loads(json.dumps(wf)), "vram_gb": 24})
    assert "pixel_upscale" in out["phases"]
    assert any(a.startswith(f"pixel upscale (ImageUpscaleWithModel): {NAME} (ESRGAN x4, 64 features") and
               "512x512 image (the decode of the graph's latent) to 2048x2048" in a for a in out["assumptions"])
    assert not any(NAME in a for a in out["assumptions"] if a.startswith("not counted"))
