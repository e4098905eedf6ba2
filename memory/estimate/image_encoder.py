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


def clip_vision_h(dtype: str = "F16") -> dict:
    """The ViT-H/14 vision tower as ComfyUI's clip_vision_h.safetensors names it (transformers CLIPVisionModelWithProjection):
    {key: (dtype, shape)}, 632,076,800 parameters."""
    d = WIDTH
    t = {"vision_model.embeddings.patch_embedding.weight": (d, 3, PATCH, PATCH),
         "vision_model.embeddings.class_embedding": (d,),
         "vision_model.embeddings.position_embedding.weight": (CONTEXT_TOKENS, d),
         "vision_model.pre_layrnorm.weight": (d,), "vision_model.pre_layrnorm.bias": (d,),
         "vision_model.post_layernorm.weight": (d,), "vision_model.post_layernorm.bias": (d,),
         "visual_projection.weight": (PROJ, d)}
    for i in range(LAYERS):
        p = f"vision_model.encoder.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t[f"{p}self_attn.{n}.weight"], t[f"{p}self_attn.{n}.bias"] = (d, d), (d,)
        for n in ("layer_norm1", "layer_norm2"):
            t[f"{p}{n}.weight"], t[f"{p}{n}.bias"] = (d,), (d,)
        t[f"{p}mlp.fc1.weight"], t[f"{p}mlp.fc1.bias"] = (MLP, d), (MLP,)
        t[f"{p}mlp.fc2.weight"], t[f"{p}mlp.fc2.bias"] = (d, MLP), (d,)
    return {k: (dtype, s) for k, s in t.items()}


def is_clip_vision(table: dict) -> bool:
    """A CLIP vision tower: ComfyUI / transformers keys (vision_model.encoder.*) or Wan's (visual.transformer.*)."""
    return any(k.startswith(("vision_model.encoder.layers.", "visual.transformer.")) for k in table) and \
        not any("token_embedding" in k for k in table)
