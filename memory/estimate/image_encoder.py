"""Image-to-video conditioning that Wan 2.1's I2V models add to a text-to-video pipeline.

- The CLIP image encoder: open-clip ViT-H/14 (LAION), vision tower only. ComfyUI loads it as clip_vision_h.safetensors
  (CLIPVisionLoader -> CLIPVisionEncode, keys vision_model.*); Wan's own code and LightX2V build
  XLMRobertaCLIP.visual (keys visual.*) and load the checkpoint without its text tower (LightX2V: remove_key
  "textual"). Both are 632,076,800 parameters (open-clip's layout: width 1280, 32 layers, mlp 5120, patch 14 on 224 px,
  257 tokens, projection to 1024). It runs once on the start image, before sampling, so it is counted with the
  encoders (role text_encoder, kind clip-vision-h).
- The I2V DiT's own tensors (img_emb's MLP from 1280 to the model width, k_img / v_img / norm_k_img in every
  cross-attention, a 36-channel patch embedding: 16 noise + 4 mask + 16 start-image latent channels, ComfyUI's
  WanImageToVideo concat) are in its file: a file with img_emb is ComfyUI's model_type i2v (formula._with_image_encoder;
  Wan 2.2 I2V A14B has the 36 channels and no img_emb, and loads no image encoder).
- The VAE encode of the conditioning video (the start image padded to every frame) is a phase of its own
  (phase_peaks.peak_on vae_encode, vae.WAN_ENCODE_*), for any 36-channel layout.

Not counted: the 257 image tokens the cross-attention also attends to (a context 769 tokens long instead of 512: the
keys and values are a few MiB)."""
CONTEXT_TOKENS = 257  # 16 x 16 patches of 224 px + the class token
KIND = "clip-vision-h"
WIDTH, LAYERS, MLP, PATCH, PROJ = 1280, 32, 5120, 14, 1024


# ComfyUI 0.8.0's comfy/clip_vision_config_h.json, the keys comfy/clip_model.py builds CLIPVisionModelProjection from
CONFIG_H = {"hidden_size": WIDTH, "num_hidden_layers": LAYERS, "intermediate_size": MLP, "patch_size": PATCH, "image_size": 224,
            "projection_dim": PROJ, "num_channels": 3, "model_type": "clip_vision_model"}


def clip_vision_h(dtype: str = "F16") -> dict:
    """The ViT-H/14 vision tower as ComfyUI's clip_vision_h.safetensors names it (transformers CLIPVisionModelWithProjection):
    {key: (dtype, shape)}, 632,076,800 parameters."""
    return clip_vision(CONFIG_H, dtype)


def clip_vision(cfg: dict, dtype: str = "F16") -> dict:
    """{key: (dtype, shape)} of the CLIP / SigLIP vision tower comfy/clip_model.py builds from one of ComfyUI's
    clip_vision config JSONs (CLIPVisionEmbeddings, CLIPVision, CLIPVisionModelProjection: a SigLIP has no class
    embedding and no pre-norm, its patch embedding a bias; a projection only where the config has projection_dim)."""
    d, mlp, patch, ch = cfg["hidden_size"], cfg["intermediate_size"], cfg["patch_size"], cfg.get("num_channels", 3)
    siglip = cfg.get("model_type") == "siglip_vision_model"
    n = (cfg["image_size"] // patch) ** 2 + (0 if siglip else 1)
    t = {"vision_model.embeddings.patch_embedding.weight": (d, ch, patch, patch),
         "vision_model.embeddings.position_embedding.weight": (n, d),
         "vision_model.post_layernorm.weight": (d,), "vision_model.post_layernorm.bias": (d,)}
    if siglip:
        t["vision_model.embeddings.patch_embedding.bias"] = (d,)
    else:
        t["vision_model.embeddings.class_embedding"] = (d,)
        t["vision_model.pre_layrnorm.weight"], t["vision_model.pre_layrnorm.bias"] = (d,), (d,)
    if "projection_dim" in cfg:
        t["visual_projection.weight"] = (cfg["projection_dim"], d)
    for i in range(cfg["num_hidden_layers"]):
        p = f"vision_model.encoder.layers.{i}."
        for k in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t[f"{p}self_attn.{k}.weight"], t[f"{p}self_attn.{k}.bias"] = (d, d), (d,)
        for k in ("layer_norm1", "layer_norm2"):
            t[f"{p}{k}.weight"], t[f"{p}{k}.bias"] = (d,), (d,)
        t[f"{p}mlp.fc1.weight"], t[f"{p}mlp.fc1.bias"] = (mlp, d), (mlp,)
        t[f"{p}mlp.fc2.weight"], t[f"{p}mlp.fc2.bias"] = (d, mlp), (d,)
    return {k: (dtype, s) for k, s in t.items()}


def is_clip_vision(table: dict) -> bool:
    """A CLIP vision tower: ComfyUI / transformers keys (vision_model.encoder.*) or Wan's (visual.transformer.*)."""
    return any(k.startswith(("vision_model.encoder.layers.", "visual.transformer.")) for k in table) and \
        not any("token_embedding" in k for k in table)
