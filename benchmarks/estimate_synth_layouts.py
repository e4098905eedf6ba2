"""Synthetic components for the measured rows of models without a stored layout (bench_estimate.py): a published
parameter count on the family's detection keys (SYNTH), or a model built tensor by tensor (STRUCT)."""
import math

from estimate_common import table

# Synthetic components for models without a stored layout: a published parameter count on the family's detection
# keys, as tensors of one typical layer shape (so requantization, manual casts and streamed layers see layer-sized
# tensors). (dtype, parameters, layer shape, detection keys); the count's source is in the row that uses it.
SYNTH = {
    "synth:hunyuan-video-13B": ("BF16", 12_821_012_544, (12288, 3072), {
        "txt_in.individual_token_refiner.blocks.0.norm1.weight": (3072,), "img_in.proj.weight": (3072, 16, 1, 2, 2)}),
    "synth:llava-llama-3-8b-encoder": ("F16", 8_030_261_248 - 128256 * 4096, (14336, 4096), {  # LlamaModel: no lm_head
        "model.embed_tokens.weight": (128256, 4096), "model.layers.0.input_layernorm.weight": (4096,)}),
    # Stable Diffusion's safety checker (diffusers StableDiffusionSafetyChecker, in runwayml/stable-diffusion-v1-5):
    # CLIP ViT-L/14's vision tower (hidden 1024, 24 layers, mlp 4096, patch 14, 257 positions: 303,179,776) + its
    # visual_projection 1024 -> 768 and the 17 + 3 concept embeddings and weights: 303,981,588 parameters, counted from
    # those shapes; a clip-vision component (families._classify_whole) kept on the device like the encoders
    "synth:sd-safety-checker": ("F16", 303_981_588, (4096, 1024), {
        "vision_model.embeddings.class_embedding": (1024,), "vision_model.encoder.layers.0.mlp.fc1.weight": (4096, 1024),
        "concept_embeds": (17, 768), "special_care_embeds": (3, 768)}),  # its own keys (weights.DIFFUSERS_EXCLUDED_FROM_OFFLOAD)
    "synth:vae-hunyuan-video": ("F16", 246_481_315, (512, 512, 3, 3, 3), {"decoder.conv_in.conv.weight": (512, 16, 3, 3, 3)}),
    "synth:qwen-image-20B": ("BF16", 20_430_000_000, (12288, 3072), {"txt_norm.weight": (3584,), "img_in.weight": (3072, 64)}),
    "synth:qwen2.5-vl-7b": ("BF16", 8_292_166_656, (18944, 3584), {
        "model.embed_tokens.weight": (152064, 3584), "model.layers.0.input_layernorm.weight": (3584,),
        "visual.patch_embed.proj.weight": (1280, 3, 2, 14, 14), "lm_head.weight": (152064, 3584)}),  # untied head
    # the same model as ComfyUI built QwenImageTEModel_ before 4977f203 ('P2 of qwen edit model. (#9412)', 2025-08-18):
    # comfy/text_encoders/llama.py Qwen25_7BVLI held only the language model (self.model = Llama2_), no vision tower
    # (self.visual, 676,550,144 parameters, came with #9412). 7,070,619,136 parameters: ComfyUI 0.8.0's Llama2_ with
    # Qwen25_7BVLI_Config on the meta device (Qwen25_7BVLI.model), plus the file's untied lm_head (named: ComfyUI does
    # not build it, weights.py drops it)
    "synth:qwen2.5-vl-7b-lm-comfyui-pre-9412": ("BF16", 7_070_619_136 + 152064 * 3584, (18944, 3584), {
        "model.embed_tokens.weight": (152064, 3584), "model.layers.0.input_layernorm.weight": (3584,),
        "lm_head.weight": (152064, 3584)}),
    "synth:pixart-sigma-xl-2": ("F16", 611_000_000, (4608, 1152), {"t_block.1.weight": (6912, 1152),
                                                                   "x_embedder.proj.weight": (1152, 4, 2, 2)}),
    "synth:sd3-medium": ("F16", 2_028_000_000, (6144, 1536), {"joint_blocks.0.context_block.attn.qkv.weight": (4608, 1536),
                                                              "x_embedder.proj.weight": (1536, 16, 2, 2)}),
    # Wan2.1-T2V-14B: 14,288,491,584 parameters counted from Wan's WanModel (dim 5120, ffn 13824, 40 blocks, text 4096,
    # freq 256, in/out 16, patch 1x2x2); the same count gives our 1.3B layout's 1,418,996,800 exactly
    "synth:wan2.1-t2v-14B": ("BF16", 14_288_491_584, (13824, 5120), {
        "head.modulation": (1, 2, 5120), "blocks.0.ffn.0.weight": (13824, 5120), "patch_embedding.weight": (5120, 16, 1, 2, 2),
        "head.head.weight": (64, 5120)}),
    # FLUX.2-dev: 32,223,281,152 parameters, counted by instantiating ComfyUI 0.8.0's comfy.ldm.flux.model.Flux on the meta
    # device with the config its model_detection gives FLUX.2 (hidden 6144, 8 double + 48 single blocks, mlp 3.0, in 128,
    # context 15360, guidance embedding); the blocks carry their real counts so depth is detected
    "synth:flux2-dev-32B": ("BF16", 32_223_281_152, (18432, 6144), {
        "img_in.weight": (6144, 128), "txt_in.weight": (6144, 15360), "guidance_in.in_layer.weight": (6144, 256),
        "double_stream_modulation_img.lin.weight": (36864, 6144), "double_blocks.0.img_attn.norm.key_norm.scale": (128,),
        "double_blocks.0.img_mlp.0.weight": (36864, 6144),
        **{f"double_blocks.{i}.img_attn.norm.query_norm.scale": (128,) for i in range(8)},
        **{f"single_blocks.{i}.norm.query_norm.scale": (128,) for i in range(48)}}),
    # Mistral-Small-3.1-24B (Mistral3ForConditionalGeneration with its Pixtral vision tower and lm_head, FLUX.2's text
    # encoder): 24,011,361,280 parameters (keras-hub's mistral_small_3.1_24b preset metadata)
    "synth:mistral-small-3.1-24b": ("BF16", 24_011_361_280, (32768, 5120), {
        "language_model.model.embed_tokens.weight": (131072, 5120), "language_model.model.layers.0.input_layernorm.weight": (5120,),
        "language_model.lm_head.weight": (131072, 5120)}),  # its untied output head, named (inside the count before)
    # FLUX.2's VAE (32 latent channels): the FLUX.1 AE's block layout; its own count is not at hand, so the FLUX.1 AE's
    # 83,819,683 parameters (vae_flux_ae layout) are used: under 0.3 % of the DiT
    "synth:vae-flux2": ("BF16", 83_819_683, (512, 512, 3, 3), {"decoder.conv_in.weight": (512, 32, 3, 3)}),
    # Mochi 1 preview: 10,027,677,744 parameters, counted by instantiating ComfyUI 0.8.0's
    # comfy.ldm.genmo.joint_model.asymm_models_joint.AsymmDiTJoint on the meta device with the config its model_detection
    # gives Mochi (48 blocks, hidden 3072 / 1536, 24 heads, T5 features 4096); largest layer mlp_x.w1 16384 x 3072
    "synth:mochi-1-preview-10B": ("BF16", 10_027_677_744, (16384, 3072), {
        "t5_yproj.weight": (1536, 4096), **{f"blocks.{i}.attn.q_norm_x.weight": (128,) for i in range(48)}}),
    # Z-Image (Turbo) 6B: 6,154,908,736 parameters, counted by instantiating ComfyUI 0.8.0's comfy.ldm.lumina.model.NextDiT
    # on the meta device with the config its model_detection gives Z-Image (dim 3840, 30 layers, cap_feat_dim 2560, 30 heads,
    # ffn 8/3 -> 10240, z_image_modulation); largest layer the refiners' qkv 11520 x 3840, the blocks' w1 10240 x 3840
    "synth:z-image-6B": ("BF16", 6_154_908_736, (10240, 3840), {
        "cap_embedder.1.weight": (3840, 2560), "layers.0.feed_forward.w1.weight": (10240, 3840),
        **{f"layers.{i}.attention.q_norm.weight": (128,) for i in range(30)}}),
    # Stable Diffusion 3.5 Large: 8,146,280,768 parameters, counted from the MMDiT layout (depth 38, hidden 2432 = 38 x 64,
    # pos_embed 192 x 192, qk RMSNorm, no second x-attention); the same count gives our SD3.5 Medium layout's DiT
    # (depth 24, pos_embed 384 x 384, 13 dual-attention blocks) its 2,469,663,936 exactly; largest layer mlp.fc1 9728 x 2432
    # (the pos_embed table named at its shape, as the SAI checkpoint stores it: diffusers holds it as a buffer,
    # weights.SEQUENTIAL_RESIDENT_BUFFERS; inside the same count)
    "synth:sd3.5-large-8B": ("BF16", 8_146_280_768, (9728, 2432), {
        "x_embedder.proj.weight": (2432, 16, 2, 2), "pos_embed": (1, 192 * 192, 2432),
        **{f"joint_blocks.{i}.context_block.attn.qkv.weight": (7296, 2432) for i in range(38)}}),
    # Qwen3-4B as ComfyUI builds it for Z-Image (comfy.text_encoders.llama.Qwen3_4B on meta: 4,022,468,096 parameters,
    # tied embeddings, no lm_head; embed_tokens 151936 x 2560)
    "synth:qwen3-4b": ("BF16", 4_022_468_096, (9728, 2560), {
        "model.embed_tokens.weight": (151936, 2560), "model.layers.0.input_layernorm.weight": (2560,),
        "model.layers.0.self_attn.q_norm.weight": (128,)}),
}


def synth(name):
    dtype, params, layer, keys = SYNTH[name]
    t = {k: (dtype, tuple(s)) for k, s in keys.items()}
    n = params - sum(math.prod(s) for s in keys.values())
    per = math.prod(layer)
    for i in range(n // per):
        t[f"params.{i}.weight"] = (dtype, tuple(layer))
    if n % per:
        t["params.rest"] = (dtype, (n % per,))
    return t


def zimage_blocks():
    """Z-Image (Turbo) 6B tensor by tensor, as ComfyUI 0.8.0 builds comfy.ldm.lumina.model.NextDiT for it (meta device,
    the config comfy/model_detection.py gives Z-Image): 30 modulated layers, 2 noise-refiner (modulated) and 2
    context-refiner layers, embedders and final layer; 453 tensors, 6,154,908,736 parameters. Tensors under 4096
    elements (norms, biases, pad tokens) are F32 and the rest BF16, as a GGUF conversion stores them: the counts match
    ComfyUI-GGUF's 'gguf qtypes' line for these files (245 F32; 180 block matrices; 22 refiner + 6 embedder matrices)."""
    d, ffn, mod = 3840, 10240, 256
    t = {"x_pad_token": (1, d), "cap_pad_token": (1, d), "x_embedder.weight": (d, 64), "x_embedder.bias": (d,),
         "t_embedder.mlp.0.weight": (1024, 256), "t_embedder.mlp.0.bias": (1024,), "t_embedder.mlp.2.weight": (256, 1024),
         "t_embedder.mlp.2.bias": (256,), "cap_embedder.0.weight": (2560,), "cap_embedder.1.weight": (d, 2560),
         "cap_embedder.1.bias": (d,), "final_layer.linear.weight": (64, d), "final_layer.linear.bias": (64,),
         "final_layer.adaLN_modulation.1.weight": (d, mod), "final_layer.adaLN_modulation.1.bias": (d,)}
    blocks = [f"layers.{i}" for i in range(30)] + ["noise_refiner.0", "noise_refiner.1", "context_refiner.0", "context_refiner.1"]
    for b in blocks:
        t.update({f"{b}.attention.qkv.weight": (3 * d, d), f"{b}.attention.out.weight": (d, d), f"{b}.attention.q_norm.weight": (128,),
                  f"{b}.attention.k_norm.weight": (128,), f"{b}.feed_forward.w1.weight": (ffn, d), f"{b}.feed_forward.w2.weight": (d, ffn),
                  f"{b}.feed_forward.w3.weight": (ffn, d), **{f"{b}.{n}.weight": (d,) for n in ("attention_norm1", "ffn_norm1", "attention_norm2", "ffn_norm2")}})
        if not b.startswith("context_refiner"):
            t.update({f"{b}.adaLN_modulation.0.weight": (4 * d, mod), f"{b}.adaLN_modulation.0.bias": (4 * d,)})
    assert len(t) == 453 and sum(math.prod(x) for x in t.values()) == 6_154_908_736
    return {k: ("F32" if len(x) < 2 or math.prod(x) < 4096 else "BF16", x) for k, x in t.items()}


def wan14b_blocks(i2v=False):
    """Wan2.1-T2V-14B tensor by tensor, as Wan's WanModel builds it (dim 5120, ffn 13824, 40 blocks, text 4096, freq 256,
    in/out 16, patch 1x2x2, qk norm, cross-attention norm): 14,288,491,584 parameters, the SYNTH count. BF16; a row's
    keep_16bit names what the quantizing loader keeps in 16 bits. i2v: Wan2.1-I2V-14B, as ComfyUI 0.8.0's
    comfy/ldm/wan/model.py builds model_type 'i2v' (in_dim 36; img_emb = MLPProj(1280, 5120): LayerNorm, Linear,
    GELU, Linear, LayerNorm; WanI2VCrossAttention's k_img, v_img and RMSNorm norm_k_img in every block):
    16,394,878,784 parameters."""
    d, ffn = 5120, 13824
    t = {"patch_embedding.weight": (d, 36 if i2v else 16, 1, 2, 2), "patch_embedding.bias": (d,),
         "text_embedding.0.weight": (d, 4096), "text_embedding.0.bias": (d,), "text_embedding.2.weight": (d, d),
         "text_embedding.2.bias": (d,), "time_embedding.0.weight": (d, 256), "time_embedding.0.bias": (d,),
         "time_embedding.2.weight": (d, d), "time_embedding.2.bias": (d,), "time_projection.1.weight": (6 * d, d),
         "time_projection.1.bias": (6 * d,), "head.head.weight": (64, d), "head.head.bias": (64,), "head.modulation": (1, 2, d)}
    for i in range(40):
        b = f"blocks.{i}"
        for a in ("self_attn", "cross_attn"):
            t.update({f"{b}.{a}.{n}.{w}": ((d, d) if w == "weight" else (d,)) for n in "qkvo" for w in ("weight", "bias")})
            t.update({f"{b}.{a}.norm_q.weight": (d,), f"{b}.{a}.norm_k.weight": (d,)})
        t.update({f"{b}.norm3.weight": (d,), f"{b}.norm3.bias": (d,), f"{b}.ffn.0.weight": (ffn, d), f"{b}.ffn.0.bias": (ffn,),
                  f"{b}.ffn.2.weight": (d, ffn), f"{b}.ffn.2.bias": (d,), f"{b}.modulation": (1, 6, d)})
        if i2v:
            t.update({f"{b}.cross_attn.{n}.{w}": ((d, d) if w == "weight" else (d,)) for n in ("k_img", "v_img")
                      for w in ("weight", "bias")})
            t[f"{b}.cross_attn.norm_k_img.weight"] = (d,)
    if i2v:
        t.update({"img_emb.proj.0.weight": (1280,), "img_emb.proj.0.bias": (1280,), "img_emb.proj.1.weight": (1280, 1280),
                  "img_emb.proj.1.bias": (1280,), "img_emb.proj.3.weight": (d, 1280), "img_emb.proj.3.bias": (d,),
                  "img_emb.proj.4.weight": (d,), "img_emb.proj.4.bias": (d,)})
    assert sum(math.prod(x) for x in t.values()) == (16_394_878_784 if i2v else 14_288_491_584)
    return {k: ("BF16", x) for k, x in t.items()}


def hv13b_named_outs():
    """synth:hunyuan-video-13B (the published 12,821,012,544 parameters, the same blob) with the Linear layers that
    diffusers 0.32.0's HunyuanVideoTransformer3DModel names proj_out or norm_out split out at their shapes, so that a
    row's keep_16bit can name them (diffusers 0.32.0's _replace_with_bnb_linear skips a Linear named in
    modules_to_not_convert, proj_out, and one under a module named there, norm_out.linear by its path test
    'key + "." in current_key_name_str'): each of the 40 single blocks' proj_out (3072 + 12288 -> 3072), the output
    proj_out (3072 -> 1 x 2 x 2 x 16), norm_out.linear (AdaLayerNormContinuous, 3072 -> 6144) and the two token-refiner
    blocks' norm_out.linear (HunyuanVideoAdaNorm, 3072 -> 6144): 1,944,397,888 parameters."""
    dtype, params, layer, keys = SYNTH["synth:hunyuan-video-13B"]
    named = {f"single_transformer_blocks.{i}.proj_out.{w}": s for i in range(40)
             for w, s in (("weight", (3072, 15360)), ("bias", (3072,)))}
    named.update({"proj_out.weight": (64, 3072), "proj_out.bias": (64,), "norm_out.linear.weight": (6144, 3072),
                  "norm_out.linear.bias": (6144,)})
    named.update({f"context_embedder.token_refiner.refiner_blocks.{j}.norm_out.linear.{w}": s for j in range(2)
                  for w, s in (("weight", (6144, 3072)), ("bias", (6144,)))})
    assert sum(math.prod(x) for x in named.values()) == 1_944_397_888
    t = {k: (dtype, tuple(x)) for k, x in {**keys, **named}.items()}
    n = params - sum(math.prod(x) for x in {**keys, **named}.values())
    t.update({f"params.{i}.weight": (dtype, tuple(layer)) for i in range(n // math.prod(layer))})
    if n % math.prod(layer):
        t["params.rest"] = (dtype, (n % math.prod(layer),))
    return t


STRUCT = {"synth:z-image-6B-blocks": zimage_blocks, "synth:wan2.1-t2v-14B-blocks": wan14b_blocks,
          "synth:wan2.1-i2v-14B-blocks": lambda: wan14b_blocks(i2v=True),
          "synth:hunyuan-video-13B-named-outs": hv13b_named_outs}  # synthetic tables tensor by tensor (a row's tensor_types can name them)


def _table_or_synth(name):
    if name in STRUCT:
        return STRUCT[name]()
    return synth(name) if name.startswith("synth:") else table(name)
