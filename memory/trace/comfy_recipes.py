"""The per-family recipes `gpu-garden trace` builds ComfyUI's classes from (memory/trace/comfy_checkout.py runs them):
the conditioning one sampling step gets (FAMILIES), the text encoders of phase text (TEXT_ENCODERS), the unet_config
of a diffusion-model layout built from ComfyUI's class (CLASS_LAYOUTS) and the VAE class and config comfy/sd.py picks
(VAE_CLASS_LAYOUTS), and the model configs whose inputs FAMILIES describes. Data only: no torch, no comfy."""
from ..estimate.layouts import FAMILY_FILES


# family -> conditioning shapes, CFG default; its standard file and VAE (bundled layouts) from estimate/layouts.py
# FAMILY_FILES, the one table `estimate NAME` reads too
_CONDITIONING = {
    "sd1": {"context": (77, 768), "cfg": True},
    "sdxl": {"context": (77, 2048), "y": 2816, "cfg": True},
    "sd3": {"context": (154, 4096), "y": 2048, "cfg": True},
    "flux1": {"context": (256, 4096), "y": 768, "guidance": True, "cfg": False},
    "wan21": {"context": (512, 4096), "cfg": True, "video": True},
    "wan22": {"context": (512, 4096), "cfg": True, "video": True},
    # Qwen-Image: its context is Qwen2.5-VL 7B's last hidden states (3584 wide), the template sliced off
    # (comfy/text_encoders/qwen_image.py): "a photo of a garden" is 10 tokens, the empty negative prompt 5. The
    # model's extra_conds hands c_crossattn over as a CONDRegular, which concatenates only equal shapes, so with CFG
    # cond and uncond run as separate passes unless both prompts have the same token count ("cfg_separate").
    # Its VAE file (qwen_image_vae.safetensors) is the Wan 2.1 VAE's layout: see memory/estimate/layouts/README.md.
    "qwen-image": {"context": (10, 3584), "cfg": True, "cfg_separate": True},
    # Z-Image (Turbo): Qwen3-4B hidden states (2560 wide), "a photo of a garden" in its chat template is 13 tokens
    # (comfy/text_encoders/z_image.py, nothing sliced); the Turbo model runs at cfg 1. Its VAE is FLUX.1's ae.
    "z-image": {"context": (13, 2560), "cfg": False, "num_tokens": True},
    # HunyuanVideo (13B T2V): Llama 3 hidden states (4096 wide) + CLIP-L's pooled output (y 768), embedded guidance, cfg 1.
    # comfy/text_encoders/hunyuan_video.py: the Llama tokenizer pads nothing (min_length=1) and encode_token_weights
    # keeps only the user turn after the template (the prompt's tokens and its <|eot_id|>): "a photo of a garden" is
    # 5 Llama 3 BPE tokens + 1 = 6. Counted from the code and the template, not by running the tokenizer (the host's
    # llama_tokenizer returns wrong ids without its tokenizer.json). A single-prompt mask is all ones and is dropped.
    "hunyuan-video": {"context": (6, 4096), "y": 768, "guidance": True, "cfg": False, "video": True},
    # LTX-Video 2B (0.9): T5-XXL padded to 128 tokens (comfy/text_encoders/lt.py min_length=128) with its attention
    # mask (genmo.mochi_te: attention_mask=True, model_base.LTXV.extra_conds hands it on), frame_rate 25
    # (EmptyLTXVLatentVideo / LTXVConditioning default); cond and uncond have equal shapes, so they batch.
    "ltxv": {"context": (128, 4096), "cfg": True, "video": True, "mask": True, "frame_rate": 25},
    # LTX-2 (ltx58): the text connectors' output, video and audio halves concatenated (text_encoders/lt.py:105-107),
    # padded with registers to 1024 tokens (embeddings_connector.py:274-282), no mask; cond and uncond batch. The
    # sampler packs the video latent and the audio latent (nodes_lt_audio.py:158 [B, 8, A, 16]) into [B, 1, N]
    # (samplers.py:1008, utils.py:1182) and hands the shapes on as latent_shapes (model_base.py:1015-1017, unpacked
    # at l.202-203); frame_rate 25 (LTXVEmptyLatentAudio's default, l.116)
    "ltx-2": {"context": (1024, 7680), "cfg": True, "video": True, "frame_rate": 25, "audio": (8, 16)},
    # FLUX.2 dev: Mistral 3 hidden states of layers 10, 20, 30 stacked (3 x 5120 = 15360 wide); model_base.Flux2.extra_conds
    # left-pads the context to 512 tokens whatever the prompt's length. Guidance embedded, cfg 1.
    "flux2": {"context": (512, 15360), "guidance": True, "cfg": False},
    # HunyuanVideo 1.5 (720p t2v): Qwen2.5-VL 7B hidden states (3584 wide), sliced as Qwen-Image's (text_encoders/
    # hunyuan_image.py:65 hands qwen_image.py:61 template_end -1: from the second <|im_start|> + "user\n", the template's
    # "<|im_end|>\n<|im_start|>assistant\n" tail kept): "a photo of a garden" is 10 tokens, as Qwen-Image's; no quoted
    # text, so no byT5 tokens (txt_byt5 absent). model_base.py:1647 hands c_crossattn over as a CONDRegular: cond and
    # uncond as separate passes (cfg_separate). concat_cond (l.1607-1637) gives t2v a zero image and mask: img_in takes
    # 65 = 32 noise + 33 concatenated channels (c_concat). guidance 6.0 is passed (l.1652), unused: no guidance_in.
    "hunyuan-video-15": {"context": (10, 3584), "cfg": True, "cfg_separate": True, "video": True, "guidance": True,
                         "concat": 33},
}
# phase "text": the family's text encoders (bundled layouts, FAMILY_FILES) and ComfyUI's CLIPType for them
CLIP_TYPES = {"sd1": "STABLE_DIFFUSION", "sdxl": "STABLE_DIFFUSION", "sd3": "SD3", "flux1": "FLUX", "wan21": "WAN",
              "wan22": "WAN"}
# FAMILY_FILES by family id (its "hunyuan-video-1.5" entry is family hunyuan-video-15)
FILES = {v.get("family", k): v for k, v in FAMILY_FILES.items()}
FAMILIES = {f: dict(c, layout=FILES[f]["model"], vae=FILES[f]["vae"]) for f, c in _CONDITIONING.items()}
TEXT_ENCODERS = {f: (list(FAMILY_FILES[f]["te"]), t) for f, t in CLIP_TYPES.items()}
# Diffusion-model layouts built from ComfyUI's own class on the meta device (class_layout), where no real file header
# was at hand: the unet_config comfy/model_detection.py gives the standard file, and that file's name and dtype.
CLASS_LAYOUTS = {
    "qwen-image": {"file": "qwen_image_bf16.safetensors", "dtype": "BF16",
                   "unet_config": {"image_model": "qwen_image", "in_channels": 64, "num_layers": 60},
                   "source": "Comfy-Org/Qwen-Image_ComfyUI split_files/diffusion_models/qwen_image_bf16.safetensors"},
    "z-image": {"file": "z_image_turbo_bf16.safetensors", "dtype": "BF16",
                "unet_config": {"image_model": "lumina2", "patch_size": 2, "in_channels": 16, "dim": 3840,
                                "cap_feat_dim": 2560, "n_layers": 30, "qk_norm": True, "n_heads": 30, "n_kv_heads": 30,
                                "axes_dims": [32, 48, 48], "axes_lens": [1536, 512, 512], "rope_theta": 256.0,
                                "ffn_dim_multiplier": 8.0 / 3.0, "z_image_modulation": True, "time_scale": 1000.0,
                                "pad_tokens_multiple": 32},
                "source": "Comfy-Org/z_image_turbo split_files/diffusion_models/z_image_turbo_bf16.safetensors"},
    # keys as ComfyUI's class names them: HunyuanVideo.process_unet_state_dict renames some of the released file's keys
    # (txt_in.t_embedder.mlp.0 -> in_layer, _attn_qkv -> _attn.qkv, ...) on load; shapes and count are unchanged
    "hunyuan-video": {"file": "hunyuan_video_t2v_720p_bf16.safetensors", "dtype": "BF16",
                      "unet_config": {"image_model": "hunyuan_video", "in_channels": 16, "patch_size": [1, 2, 2],
                                      "out_channels": 16, "vec_in_dim": 768, "axes_dim": [16, 56, 56], "meanflow": False,
                                      "context_in_dim": 4096, "hidden_size": 3072, "mlp_ratio": 4.0, "num_heads": 24,
                                      "depth": 20, "depth_single_blocks": 40, "theta": 256, "qkv_bias": True,
                                      "byt5": False, "guidance_embed": True, "use_cond_type_embedding": False,
                                      "vision_in_dim": None, "meanflow_sum": False},
                      "source": "Comfy-Org/HunyuanVideo_repackaged split_files/diffusion_models/"
                                "hunyuan_video_t2v_720p_bf16.safetensors"},
    "ltxv": {"file": "ltx-video-2b-v0.9.safetensors", "dtype": "BF16",
             "unet_config": {"image_model": "ltxv", "num_layers": 28, "attention_head_dim": 64, "cross_attention_dim": 2048},
             "source": "Lightricks/LTX-Video ltx-video-2b-v0.9.safetensors (its transformer)"},
    "flux2": {"file": "flux2_dev_bf16.safetensors", "dtype": "BF16",
              "unet_config": {"image_model": "flux2", "axes_dim": [32, 32, 32, 32], "num_heads": 48, "mlp_ratio": 3.0,
                              "theta": 2000, "out_channels": 128, "global_modulation": True, "mlp_silu_act": True,
                              "qkv_bias": False, "ops_bias": False, "default_ref_method": "index",
                              "ref_index_scale": 10.0, "txt_ids_dims": [3], "patch_size": 1, "in_channels": 128,
                              "hidden_size": 6144, "context_in_dim": 15360, "vec_in_dim": None, "depth": 8,
                              "depth_single_blocks": 48, "guidance_embed": True, "yak_mlp": False, "txt_norm": False},
              "source": "Comfy-Org/flux2-dev split_files/diffusion_models/flux2_dev_bf16.safetensors"},
    # lay53: the unet_config model_detection gives keys and shapes the file is checked against (layouts/README.md)
    "chroma": {"file": "chroma-unlocked-v2.safetensors", "dtype": "BF16",
               "unet_config": {"image_model": "chroma", "axes_dim": [16, 56, 56], "num_heads": 24, "mlp_ratio": 4.0,
                               "theta": 10000, "out_channels": 64, "qkv_bias": True, "txt_ids_dims": [], "in_channels": 64,
                               "hidden_size": 3072, "context_in_dim": 4096, "patch_size": 2, "vec_in_dim": None, "depth": 19,
                               "depth_single_blocks": 38, "in_dim": 64, "out_dim": 3072, "hidden_dim": 5120, "n_layers": 5},
               "source": "lodestones/chroma-debug-development-only chroma-unlocked-v2.safetensors"},
    # model_detection's HiDream branch reads no shape: this config is every I1 file's (full, dev, fast)
    "hidream": {"file": "hidream_i1_full_fp16.safetensors", "dtype": "F16",
                "unet_config": {"image_model": "hidream", "attention_head_dim": 128, "axes_dims_rope": [64, 32, 32],
                                "caption_channels": [4096, 4096], "max_resolution": [128, 128], "in_channels": 16,
                                "llama_layers": list(range(32)) + [31] * 16, "num_attention_heads": 20,
                                "num_routed_experts": 4, "num_activated_experts": 2, "num_layers": 16,
                                "num_single_layers": 32, "out_channels": 16, "patch_size": 2, "text_emb_dim": 2048},
                "source": "Comfy-Org/HiDream-I1_ComfyUI split_files/diffusion_models/hidream_i1_full_fp16.safetensors"},
    # shapes from diffusers' HunyuanVideo15Transformer3DModel defaults (0687a40): 16 heads x 128, 54 double blocks, 65 in
    "hunyuan-video-1.5": {"family": "hunyuan-video-15", "file": "hunyuanvideo1.5_720p_t2v_fp16.safetensors", "dtype": "F16",
                          "unet_config": {"image_model": "hunyuan_video", "in_channels": 65, "patch_size": [1, 1, 1],
                                          "out_channels": 32, "vec_in_dim": None, "axes_dim": [16, 56, 56], "meanflow": False,
                                          "context_in_dim": 3584, "hidden_size": 2048, "mlp_ratio": 4.0, "num_heads": 16,
                                          "depth": 54, "depth_single_blocks": 0, "theta": 256, "qkv_bias": True,
                                          "byt5": True, "guidance_embed": False, "use_cond_type_embedding": True,
                                          "vision_in_dim": 1152, "meanflow_sum": True},
                          "source": "Comfy-Org/HunyuanVideo_1.5_repackaged split_files/diffusion_models/"
                                    "hunyuanvideo1.5_720p_t2v_fp16.safetensors"},
    # ltx58: LTX-2 (19B audio-video) as model_detection.py:306-313 reads it: "ltxav" for audio_adaln_single, 48 blocks,
    # attention_head_dim = attn2.to_k rows // 32 = 4096 // 32, cross_attention_dim its columns (4096); every other width
    # is LTXAVModel's default (av_model.py:327-347: audio 32 heads x 64, audio context 2048, caption 3840). The real
    # file's "config" metadata overrides these (l.311-312); no file or header was at hand, so none is merged here
    "ltx-2": {"family": "ltx-2", "file": "LTX-2 19B (built from ComfyUI 0.8.0's LTXAVModel, not a published file)",
              "dtype": "BF16",
              "unet_config": {"image_model": "ltxav", "num_layers": 48, "attention_head_dim": 128,
                              "cross_attention_dim": 4096},
              "source": "LTX-2 19B transformer as ComfyUI 0.8.0's classes build it (no published file checked)"},
}
# VAE layouts built from the class comfy/sd.py's VAE.__init__ picks for each file, with the config that branch gives
# (ComfyUI 0.8.0): (class path, keyword arguments). Keys as that class names them.
_HV15_VAE = {"block_out_channels": [128, 256, 512, 1024, 1024], "in_channels": 3, "out_channels": 3, "num_res_blocks": 2,
             "ffactor_spatial": 16, "ffactor_temporal": 4, "downsample_match_channel": True,
             "upsample_match_channel": True, "z_channels": 32}
# LTX-2's video VAE config as the checkpoint's metadata gives it to VideoVAE (see VAE_CLASS_LAYOUTS["ltx-2"])
LTX_2_VAE = {"_class_name": "CausalVideoAutoencoder", "dims": 3, "in_channels": 3, "out_channels": 3, "latent_channels": 128,
             "encoder_blocks": [["res_x", {"num_layers": 4}], ["compress_space_res", {"multiplier": 2}],
                                ["res_x", {"num_layers": 6}], ["compress_time_res", {"multiplier": 2}],
                                ["res_x", {"num_layers": 6}], ["compress_all_res", {"multiplier": 2}],
                                ["res_x", {"num_layers": 2}], ["compress_all_res", {"multiplier": 2}],
                                ["res_x", {"num_layers": 2}]],
             "decoder_blocks": [["res_x", {"num_layers": 5, "inject_noise": False}],
                                ["compress_all", {"residual": True, "multiplier": 2}],
                                ["res_x", {"num_layers": 5, "inject_noise": False}],
                                ["compress_all", {"residual": True, "multiplier": 2}],
                                ["res_x", {"num_layers": 5, "inject_noise": False}],
                                ["compress_all", {"residual": True, "multiplier": 2}],
                                ["res_x", {"num_layers": 5, "inject_noise": False}]],
             "scaling_factor": 1.0, "norm_layer": "pixel_norm", "patch_size": 4, "latent_log_var": "uniform",
             "use_quant_conv": False, "causal_decoder": False, "timestep_conditioning": False}
VAE_CLASS_LAYOUTS = {
    # sd.py: "decoder.conv_in.conv.weight" with 16 latent channels -> AutoencoderKL(conv3d, time_compress 4)
    "hunyuan-video": {"file": "hunyuan_video_vae_bf16.safetensors", "dtype": "BF16",
                      "class": "comfy.ldm.models.autoencoder.AutoencoderKL",
                      "kwargs": {"ddconfig": {"double_z": True, "z_channels": 16, "resolution": 256, "in_channels": 3,
                                              "out_ch": 3, "ch": 128, "ch_mult": [1, 2, 4, 4], "num_res_blocks": 2,
                                              "attn_resolutions": [], "dropout": 0.0, "conv3d": True,
                                              "time_compress": 4}, "embed_dim": 16},
                      "source": "Comfy-Org/HunyuanVideo_repackaged split_files/vae/hunyuan_video_vae_bf16.safetensors"},
    # sd.py: "decoder.up_blocks.0.res_blocks.0.conv1.conv.weight" with 512 channels -> VideoVAE version 0 (LTX-Video 0.9)
    "ltxv": {"file": "ltx-video-2b-v0.9.safetensors (vae.)", "dtype": "BF16",
             "class": "comfy.ldm.lightricks.vae.causal_video_autoencoder.VideoVAE", "kwargs": {"version": 0, "config": None},
             "source": "Lightricks/LTX-Video ltx-video-2b-v0.9.safetensors (its vae.* tensors)"},
    # ltx63: LTX-2's video VAE. sd.py:464-476 takes the same branch as LTX-Video's, but VideoVAE is built from the
    # checkpoint's "config" metadata ("vae"), not from the version its keys give. That config is LTX_2_VAE: VideoVAE's
    # version-2 blocks (the 0.9.5+ VAE: 1024-channel decoder top, 5 layers a block, residual depth-to-space upsampling;
    # encoder 4/6/6/2/2 layers up to 2048 channels) without timestep conditioning, as Lightricks/LTX-2's vae/config.json
    # gives it (decoder_layers_per_block 5,5,5,5, timestep_conditioning false, diffusers AutoencoderKLLTX2Video). Built on
    # meta, its 187 tensors are that model's 184 (diffusers' converter loads them strict from the original file) under
    # the converter's renames, plus the three statistics buffers the converter drops; docs/estimate-accuracy.md "Task ltx63"
    "ltx-2": {"file": "ltx-2-19b-dev.safetensors (vae.)", "dtype": "BF16",
              "class": "comfy.ldm.lightricks.vae.causal_video_autoencoder.VideoVAE",
              "kwargs": {"version": 2, "config": LTX_2_VAE},
              "source": "Lightricks/LTX-2 ltx-2-19b-dev.safetensors (its vae.* tensors; config as its vae/config.json)"},
    # sd.py: "decoder.conv_in.weight" with 32 latent channels and "bn.running_mean" -> AutoencoderKL with
    # batch_norm_latent (the 2x2 patch: 128 latent channels, 16x); the file's decoder.post_quant_conv / encoder.quant_conv
    # keys are renamed to post_quant_conv / quant_conv on load
    "flux2": {"file": "flux2-vae.safetensors", "dtype": "BF16", "class": "comfy.ldm.models.autoencoder.AutoencoderKL",
              "kwargs": {"ddconfig": {"double_z": True, "z_channels": 32, "resolution": 256, "in_channels": 3, "out_ch": 3,
                                      "ch": 128, "ch_mult": [1, 2, 4, 4], "num_res_blocks": 2, "attn_resolutions": [],
                                      "dropout": 0.0, "batch_norm_latent": True}, "embed_dim": 32},
              "source": "Comfy-Org/flux2-dev split_files/vae/flux2-vae.safetensors"},
    # sd.py: "decoder.conv_in.conv.weight" with 32 latent channels -> AutoencodingEngine of hunyuan_video.vae_refiner
    # (16x, 4 frames), the whole config written in that branch
    "hunyuan-video-1.5": {"file": "HunyuanVideo 1.5 VAE", "dtype": "BF16",
                          "class": "comfy.ldm.models.autoencoder.AutoencodingEngine",
                          "kwargs": {"regularizer_config": {"target": "comfy.ldm.models.autoencoder.EmptyRegularizer"},
                                     "encoder_config": {"target": "comfy.ldm.hunyuan_video.vae_refiner.Encoder",
                                                        "params": _HV15_VAE},
                                     "decoder_config": {"target": "comfy.ldm.hunyuan_video.vae_refiner.Decoder",
                                                        "params": _HV15_VAE}},
                          "source": "Comfy-Org/HunyuanVideo_1.5_repackaged split_files/vae (filename not looked up)"},
}

# ComfyUI model config classes (comfy/supported_models.py) whose inputs FAMILIES describes; subclasses that
# need extra conditioning (image-to-video, control, inpaint) are not listed and are refused. Their family ids
# come from the one table, estimate.families.CONFIG_FAMILY.
TRACEABLE_CONFIGS = ("SD15", "SDXL", "SSD1B", "Segmind_Vega", "KOALA_700M", "KOALA_1B", "SD3", "Flux", "FluxSchnell",
                     "WAN21_T2V", "WAN22_T2V")
# traced from a layout or checkpoint (build_case) but not yet by the node's exact mode (nodes/estimate_exact.py), whose
# recipe has no 5-D image latent, no separate cond/uncond passes, no num_tokens and no c_concat
FILE_ONLY_CONFIGS = ("QwenImage", "ZImage", "HunyuanVideo", "LTXV", "Flux2", "HunyuanVideo15", "LTXAV")
