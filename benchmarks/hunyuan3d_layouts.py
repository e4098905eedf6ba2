"""Build the bundled layouts of the Hunyuan3D 2.x checkpoints the real templates load (ImageOnlyCheckpointLoader) from
ComfyUI 0.8.0's own classes on the meta device: no downloaded header, no weights. Run with ComfyUI's interpreter:

    COMFYUI_DIR=/path/to/ComfyUI $COMFYUI_PYTHON benchmarks/hunyuan3d_layouts.py [--check]

One file holds three models, under the prefixes ComfyUI 0.8.0 reads them by (comfy/supported_models.py Hunyuan3Dv2):
- model.: the DiT (Hunyuan3Dv2.process_unet_state_dict_for_saving; model_detection.unet_prefix_from_state_dict's
  fallback "model."), built by the model config model_detection.model_config_from_unet_config gives the unet_config
  below (the one its "latent_in.weight" / "t_embedder.mlp.2.weight" branch derives from these keys, l.497-524);
- conditioner.main_image_encoder.model.: the DINOv2 image encoder (clip_vision_prefix; clip_vision.py
  load_clipvision_from_sd picks comfy/image_encoders/dino2_giant.json for encoder.layer.39, dino2_large.json for
  encoder.layer.23), built as comfy.image_encoders.dino2.Dinov2Model from that JSON;
- vae.: the ShapeVAE (vae_key_prefix; comfy/sd.py's branch for geo_decoder.cross_attn_decoder.ln_1.bias builds
  comfy.ldm.hunyuan3d.vae.ShapeVAE() at its defaults for 2.0 and 2.1 alike).
Every floating tensor F16 (the released files' names say fp16; v2.1's name says nothing: fp16 assumed, as the brief
and the 2.0 files). --check feeds each built layout back to ComfyUI's own detection (model_config_from_unet, the
DINOv2 JSON choice, the VAE branch) and prints what it picks. Writes memory/estimate/layouts/hunyuan3d_*.json.gz."""
import argparse
import gzip
import json
import math
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.pack import load_pack  # noqa: E402

load_pack()
OUT_DIR = REPO / "memory" / "estimate" / "layouts"
NOTE = "built from ComfyUI's classes, not a real header"

# layout name -> (the file the templates name, the unet_config model_detection derives from its keys, DINOv2 JSON,
# the config class detection must give, where the config's widths come from)
VARIANTS = {
    "hunyuan3d_hunyuan3d-dit-v2_fp16": (
        "hunyuan3d-dit-v2_fp16.safetensors (Comfy-Org/hunyuan3D_2.0_repackaged split_files)",
        {"image_model": "hunyuan3d2", "in_channels": 64, "context_in_dim": 1536, "hidden_size": 1024, "mlp_ratio": 4.0,
         "num_heads": 16, "depth": 16, "depth_single_blocks": 32, "qkv_bias": True, "guidance_embed": False},
        "dino2_giant.json", "Hunyuan3Dv2",
        "comfy/ldm/hunyuan3d/model.py Hunyuan3Dv2's defaults (16 double, 32 single blocks, 1024 wide, context 1536)"),
    "hunyuan3d_hunyuan3d-dit-v2-mini_fp16": (
        "Hunyuan3D 2.0 mini (supported_models.Hunyuan3Dv2mini, depth 8)",
        {"image_model": "hunyuan3d2", "in_channels": 64, "context_in_dim": 1536, "hidden_size": 1024, "mlp_ratio": 4.0,
         "num_heads": 16, "depth": 8, "depth_single_blocks": 16, "qkv_bias": True, "guidance_embed": False},
        "dino2_giant.json", "Hunyuan3Dv2mini",
        "supported_models.Hunyuan3Dv2mini's depth 8; 16 single blocks (half of 2.0's, as 2mini's config gives them: "
        "recalled, not looked up), the rest 2.0's"),
    "hunyuan3d_hunyuan_3d_v2.1": (
        "hunyuan_3d_v2.1.safetensors (Comfy-Org/hunyuan3D_2.1_repackaged)",
        {"image_model": "hunyuan3d2_1", "in_channels": 64, "context_dim": 1024, "hidden_size": 2048, "mlp_ratio": 4.0,
         "num_heads": 16, "depth": 21, "qkv_bias": False, "guidance_cond_proj_dim": None},
        "dino2_large.json", "Hunyuan3Dv2_1",
        "comfy/ldm/hunyuan3dv2_1/hunyuandit.py HunYuanDiTPlain's defaults (Hunyuan3D-2.1's config.yaml: 21 blocks, "
        "2048 wide, 6 MoE layers of 8 experts) with model_detection's context_dim 1024 and no guidance projection"),
}
PREFIX = {"diffusion_model": "model.", "image_encoder": "conditioner.main_image_encoder.model.", "vae": "vae."}


def build(comfyui_dir, name):
    import torch
    from gpu_garden.memory.trace.comfy_checkout import import_comfy
    import_comfy(comfyui_dir)
    from comfy import model_detection
    import comfy.ops
    from comfy.image_encoders.dino2 import Dinov2Model
    from comfy.ldm.hunyuan3d.vae import ShapeVAE
    file, unet_config, dino_json, want, widths = VARIANTS[name]
    mcfg = model_detection.model_config_from_unet_config(dict(unet_config))
    assert type(mcfg).__name__ == want, (name, type(mcfg).__name__)
    mcfg.set_inference_dtype(torch.float16, None)
    meta = torch.device("meta")
    with meta:
        dm = mcfg.get_model({}, "", device=meta).diffusion_model
        cfg = json.loads((Path(comfyui_dir) / "comfy" / "image_encoders" / dino_json).read_text())
        enc = Dinov2Model(cfg, torch.float16, meta, comfy.ops.manual_cast)
        vae = ShapeVAE()
    tensors, counts = {}, {}
    for part, m in (("diffusion_model", dm), ("image_encoder", enc), ("vae", vae)):
        sd = {k: v for k, v in m.state_dict().items() if v.dtype.is_floating_point}
        counts[part] = {"tensors": len(sd), "parameters": sum(math.prod(v.shape) for v in sd.values())}
        tensors.update({PREFIX[part] + k: {"dtype": "F16", "shape": list(v.shape)} for k, v in sd.items()})
    version = getattr(__import__("comfyui_version"), "__version__", None)
    return {"file": file, "source_note": f"{NOTE}: ComfyUI {version}'s {type(dm).__module__}.{type(dm).__name__} "
            f"(config {want}: {widths}; unet_config {unet_config}), comfy.image_encoders.dino2.Dinov2Model from "
            f"comfy/image_encoders/{dino_json} and comfy.ldm.hunyuan3d.vae.ShapeVAE() at its defaults, each on the meta "
            f"device, under the prefixes the checkpoint holds them by (model., {PREFIX['image_encoder']}, vae.); "
            "benchmarks/hunyuan3d_layouts.py", "dtype_note": "all F16 (assumed: the released files' names say fp16)",
            "__metadata__": {}, "family": "hunyuan3d", "comfy_model_config": want,
            # the estimate's roles: the DINOv2 runs once before sampling, with the encoders (as wf66's CLIP vision)
            "components": ["diffusion_model", "text_encoder", "vae"], "counts": counts,
            "parameters": sum(c["parameters"] for c in counts.values()),
            "total_bytes": 2 * sum(c["parameters"] for c in counts.values()), "comfyui_version": version,
            "tensors": tensors}


def check(comfyui_dir, lay):
    """What ComfyUI's own detection makes of the built layout: (config class, DINOv2 JSON, VAE branch taken)."""
    import comfy.clip_vision
    from comfy import model_detection
    from gpu_garden.memory.trace.comfy_checkout import meta_state_dict
    sd = meta_state_dict(lay["tensors"])
    prefix = model_detection.unet_prefix_from_state_dict(sd)
    mcfg = model_detection.model_config_from_unet(sd, prefix)
    sub = comfy.clip_vision.convert_to_transformers(dict(sd), mcfg.clip_vision_prefix)
    dino = "dino2_giant" if "encoder.layer.39.layer_scale2.lambda1" in sub else \
        "dino2_large" if "encoder.layer.23.layer_scale2.lambda1" in sub else None
    vae_sd = {k[len("vae."):]: v for k, v in sd.items() if k.startswith("vae.")}
    return {"prefix": prefix, "config": type(mcfg).__name__, "unet_config": mcfg.unet_config, "dinov2": dino,
            "shape_vae_branch": "geo_decoder.cross_attn_decoder.ln_1.bias" in vae_sd}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="feed each layout back to ComfyUI's detection")
    args = ap.parse_args(argv)
    comfyui_dir = os.environ.get("COMFYUI_DIR")
    if not comfyui_dir:
        sys.exit("set COMFYUI_DIR to a ComfyUI 0.8.0 checkout (and run with its Python)")
    for name in VARIANTS:
        lay = build(comfyui_dir, name)
        if args.check:
            got = check(comfyui_dir, lay)
            print(name, json.dumps(got, default=str))
            assert got["config"] == lay["comfy_model_config"] and got["shape_vae_branch"], got
        path = OUT_DIR / f"{name}.json.gz"
        with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as f:  # the same bytes at every run
            f.write(json.dumps(lay, separators=(",", ":")).encode())
        print(f"{path.relative_to(REPO)}: {len(lay['tensors'])} tensors, {lay['parameters']:,} parameters "
              f"({json.dumps(lay['counts'])})")


if __name__ == "__main__":
    main()
