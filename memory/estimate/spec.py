"""The facts the estimate rests on, one table each: per-family latent geometry and runtime habits, the VAE
decoders' geometry and ComfyUI's own decode heuristics and tile defaults, fixed runtime costs, card sizes.
Family ids are families.FAMILIES (the one list); this module only describes them."""
import math

from ..errors import UserError
from ..units import MiB


def checked_latent_shape(latent_shape) -> list:
    """A latent shape as ComfyUI holds it, [B, C, H, W] or [B, C, T, H, W], as whole numbers; every extent must be 1 or
    more (zero or negative latent frames, sides, channels or batch are no latent: UserError, not a figure)."""
    try:
        sh = [int(x) for x in latent_shape]
    except (TypeError, ValueError):
        raise UserError(f"a latent shape is [B, C, H, W] or [B, C, T, H, W] of whole numbers, not {latent_shape!r}") from None
    if len(sh) not in (4, 5) or any(x < 1 for x in sh):
        raise UserError(f"a latent shape is [B, C, H, W] or [B, C, T, H, W] with every extent 1 or more, not {sh}")
    return sh

CUDA_CONTEXT = 450 * MiB  # CUDA context + cuBLAS/cuDNN handles of a torch process (300-700 MiB by driver/GPU)
# the largest sizes ComfyUI's own nodes accept (nodes.py MAX_RESOLUTION for width, height and video length; EmptyLatentImage's
# batch_size max): beyond them no run exists to estimate, only an overflow of the arithmetic
MAX_RESOLUTION = 16384
MAX_BATCH = 4096
FRAGMENTATION = 0.05  # caching-allocator margin on activations
# the cards "smallest common card" picks from; 4 GB: the GTX 1650 and the RTX 3050 Laptop, where SD1.5 runs (without them
# a 2.57 GiB peak read "smallest common card: 6 GB" above "FITS in 4.00 GiB", ux50 B3)
CARD_SIZES_GB = (4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 80, 96, 141)
CARD_TIERS_GB = (8, 12, 16, 24, 32, 48, 80)  # the tiers a shared workflow is labelled with
# A "N GB" card's total as torch reports it (cudaMemGetInfo's total: what ComfyUI's get_total_memory and vLLM's
# total_gpu_memory read), the one source memory/llm/cards.py VISIBLE_GIB (kv --gpu-name reads it too). A size the
# table has a card of takes that card's measured total: the GeForce card where there is one (the datacenter T4 and L4
# run with ECC on, 14.74 and 22.03 GiB: not what a desktop "16 GB" / "24 GB" card holds), the lower of two (RTX 4090
# 23.55, RTX 3090 23.56; H100 79.19, A100 79.25). 48 GB: the L40S, the table's only measured 48 GB card (ECC on).
CARD_MEASURED = {16: "RTX 4080", 24: "RTX 4090", 32: "RTX 5090", 48: "L40S", 80: "H100", 96: "RTX PRO 6000"}
# Any other size (4, 6, 8, 10, 12, 20, 141 GB): N x 0.98 GiB, the lowest share of the measured GeForce totals
# (RTX 5090 31.36 / 32 = 0.980, RTX 4090 23.55 / 24 = 0.981). Until ux50 (B4) every card was N x 0.995 GiB ("a 24 GB
# card reports ~23.99 GiB", nvidia-smi's total, not torch's): estimate judged a 4090 on 23.88 GiB, kv on 23.55.
CARD_SHARE = 0.98


def card_bytes(gb) -> int:
    """The bytes a "gb GB" card reports to torch (CARD_MEASURED's card, else gb x CARD_SHARE GiB)."""
    from ..llm.cards import visible_gib  # light: a table
    gib = visible_gib(CARD_MEASURED[gb]) if gb in CARD_MEASURED else gb * CARD_SHARE
    return int(gib * 1024 * MiB)
FITS_BELOW = 0.90  # fits: peak <= 90 % of the budget; tight: <= 100 %
# ComfyUI 0.8.0 model_management.py:582 minimum_inference_memory() less extra_reserved_memory(): the least its loader keeps
# free for a computation (cfg_batch, vae_resident, fit/plan)
MIN_INFERENCE = int(0.8 * 1024 * MiB)


def comfy_reserve(platform: str = "linux", total_bytes=None, reserve_vram_gb=None) -> int:
    """ComfyUI 0.8.0 model_management.EXTRA_RESERVED_VRAM: 400 MiB; Windows 600 MiB plus 100 MiB on cards over
    15 GiB; --reserve-vram GB replaces it. Inside ComfyUI the node asks extra_reserved_memory() instead."""
    if reserve_vram_gb is not None:
        return int(reserve_vram_gb * 1024 * MiB)
    if platform == "windows":
        return 600 * MiB + (100 * MiB if total_bytes and total_bytes > 15 * 1024 * MiB else 0)
    return 400 * MiB


# VAE tiles, the one place: VAEDecodeTiled's node defaults (comfy_extras/nodes... nodes.py VAEDecodeTiled:
# tile_size 512 px, overlap 64, temporal_size 64 frames, temporal_overlap 8) and the fallback VAE.decode takes
# after an OOM (comfy/sd.py): images 64-latent tiles in three passes (64x64, 32x128, 128x32, overlap 16);
# video 256 px // spatial compression, every frame at once (tile_t 999), overlap (1, tile/4, tile/4).
TILE_NODE = {"tile": 512, "overlap": 64, "frames": 64, "frame_overlap": 8}
TILE_FALLBACK_IMAGE_LATENT = 64  # decode_tiled_: tile_x = tile_y = 64 latent px (passes 64x64, 32x128, 128x32)
TILE_FALLBACK_VIDEO_PX = 256
TILE_FALLBACK_ENCODE_IMAGE_PX = 512  # VAE.encode's retry, encode_tiled_: tile_x = tile_y = 512 px (and 1024x256, 256x1024)
TILE_FALLBACK_ENCODE_VIDEO_PX = 256  # encode_tiled_3d: 256 px tiles, every frame (tile_t 9999)

# latent geometry and runtime facts per family:
#   ch latent channels, s spatial and t temporal compression (t None: image model), p patch (spatial),
#   txt tokens the DiT attends to jointly (0: cross-attention only), ctx cross-attention context tokens,
#   cfg: whether ComfyUI's usual workflow batches cond+uncond (guidance-distilled models run at cfg 1),
#   cfg_separate: with CFG on, cond and uncond run as separate passes: the model's extra_conds hands the text
#   context over as a CONDRegular (comfy/conds.py: concatenated only when the shapes are equal) and its tokenizer pads
#   nothing (min_length 1), so a prompt and the usual negative differ in length. True: every runner (Qwen-Image:
#   QwenImage.extra_conds, Qwen2.5-VL; "a photo of a garden" 10 tokens, "" 5; diffusers' and vLLM-Omni's Qwen-Image
#   pipelines also run two transformer calls a step); "comfyui": ComfyUI only (ComfyUI 0.8.0 comfy/text_encoders:
#   Lumina 2's Gemma 2 and Z-Image's Qwen3 (Lumina2.extra_conds, whose num_tokens CONDConstant differs too), PixArt's
#   and Chroma's T5 (pixart_t5.py "no padding"), HunyuanImage 2.1's byT5 and Qwen2.5-VL; not FLUX.2: its Mistral 3
#   pads nothing, but model_base.Flux2.extra_conds left-pads the context to 512 tokens, so the two concatenate),
#   factor: ComfyUI v0.8.0 supported_models.py memory_usage_factor (callable on arch), vae: decoder kind,
#   te: the text encoders the usual workflow loads.
#   (Newer upstream retunes some: SD3 1.6 [1.2 in late 2025], Z-Image 2.8, Flux2 3.1*4*hidden/2604; inside
#   ComfyUI the node asks the live model's memory_required instead of this table.)
FAMILY = {
    "sd1": dict(ch=4, s=8, t=None, p=1, txt=0, ctx=77, cfg=True, factor=1.0, vae="kl", name="Stable Diffusion 1.x"),
    "sd2": dict(ch=4, s=8, t=None, p=1, txt=0, ctx=77, cfg=True, factor=1.0, vae="kl", name="Stable Diffusion 2.x"),
    "sdxl": dict(ch=4, s=8, t=None, p=1, txt=0, ctx=77, cfg=True, factor=lambda a: 0.8 if a.get("context_dim") != 1280 else 1.0,
                 vae="kl", name="Stable Diffusion XL"),
    "sd3": dict(ch=16, s=8, t=None, p=2, txt=154, ctx=0, cfg=True, factor=1.6, vae="kl", name="Stable Diffusion 3/3.5"),
    "flux1": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=False, factor=3.1, vae="kl", name="FLUX.1"),  # T5 min_length 256 (TE_TOKENS_FAMILY)
    "flux2": dict(ch=128, s=16, t=None, p=1, txt=512, ctx=0, cfg=False, factor=3.1 * 4 * 2.36, vae="kl",
                  name="FLUX.2"),
    "chroma": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, cfg_separate="comfyui", factor=3.2, vae="kl", name="Chroma"),
    "qwen-image": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, cfg_separate=True, factor=1.8, vae="wan21",
                       name="Qwen-Image"),
    "hidream": dict(ch=16, s=8, t=None, p=2, txt=384, ctx=0, cfg=True, factor=2.0, vae="kl", name="HiDream-I1"),
    "lumina2": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, cfg_separate="comfyui", factor=1.4, vae="kl",
                    name="Lumina Image 2.0"),
    "z-image": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=False, cfg_separate="comfyui", factor=2.0, vae="kl", name="Z-Image"),
    "wan21": dict(ch=16, s=8, t=4, p=2, txt=0, ctx=512, cfg=True, factor=lambda a: a.get("hidden", 2000) / 2222, vae="wan21",
                  name="Wan 2.1"),
    "wan22": dict(ch=48, s=16, t=4, p=2, txt=0, ctx=512, cfg=True, factor=lambda a: a.get("hidden", 2000) / 2222, vae="wan22",
                  name="Wan 2.2"),
    "hunyuan-video": dict(ch=16, s=8, t=4, p=2, txt=256, ctx=0, cfg=False, factor=1.8, vae="hunyuan-video", name="HunyuanVideo"),
    # HunyuanVideo 1.5 (ComfyUI 0.8.0; its own id: a 32-channel latent at 16x no 13B VAE decodes): ch 32 and s 16, t 4
    # (latent_formats.py:726 latent_channels 32; comfy_extras/nodes_hunyuan.py:75 EmptyHunyuanVideo15Latent
    # [B, 32, (length - 1) // 4 + 1, height // 16, width // 16]); p 1 (model_detection.py:143 patch_size = img_in's
    # kernel, [1, 1, 1] in the 720p t2v file); txt joint (ldm/hunyuan_video/model.py:416 cat((img, txt)); Qwen2.5-VL
    # 7B + byT5 per supported_models.py:1470-1473, template cropped, pads nothing: 256 is an allowance as for
    # hunyuan-image); cfg: no guidance_in in the file (model_detection.py:174 guidance_embed False), and c_crossattn a
    # CONDRegular (model_base.py:1647) of unpadded Qwen tokens; factor 4.0, marked "#TODO" in supported_models.py:1461
    "hunyuan-video-15": dict(ch=32, s=16, t=4, p=1, txt=256, ctx=0, cfg=True, cfg_separate="comfyui", factor=4.0,
                             vae="hunyuan-video-15", name="HunyuanVideo 1.5"),
    "hunyuan-image": dict(ch=64, s=32, t=None, p=1, txt=256, ctx=0, cfg=True, cfg_separate="comfyui", factor=8.7, vae="kl-64ch",
                          name="HunyuanImage 2.1"),
    "ltxv": dict(ch=128, s=32, t=8, p=1, txt=0, ctx=128, cfg=True, factor=lambda a: a.get("cross_attention_dim", 2048) / 2048 * 5.5,
                 vae="ltxv", name="LTX-Video"),
    # LTX-2 (19B audio-video; ComfyUI 0.8.0 supported_models.py:839 LTXAV, model_detection.py:308 "ltxav"): the video
    # latent is LTX-Video's (latent_formats.py:410 LTXAV(LTXV): 128 channels; nodes_lt.py:34 EmptyLTXVLatentVideo
    # [B, 128, (length - 1) // 8 + 1, height // 32, width // 32]), p 1 (model.py patchify_proj, one token a latent
    # pixel); beside it an audio latent (audio below: nodes_lt_audio.py:158 LTXVEmptyLatentAudio [B, 8, A, 16],
    # audio_vae.py:235-271 A = ceil(frames / fps x 16000 / 160 / 4), av_model.py:328 audio_in_channels 128 = 8 x 16).
    # txt 0, ctx 1024: the streams cross-attend to the text connectors' output (text_encoders/lt.py:96-109), which
    # pads Gemma 3 12B's unpadded tokens (lt.py:28 min_length 1) with learnable registers to max(1024, tokens)
    # (embeddings_connector.py:274-282), 3840 wide per stream (30 heads x 128); no attention mask is returned, so a
    # prompt and its negative are both [B, 1024, 7680] and their CONDRegular (model_base.py:986) concatenates: cond and
    # uncond batched (cfg True, no cfg_separate). factor 0.055 ("# TODO", supported_models.py:848) multiplies the area of
    # the PACKED latent (utils.py:1182 pack_latents: [B, 1, video + audio elements], channels included), not T x H x W.
    # vae "ltxv": LTX-2's own video VAE (layouts vae_ltx-2_video_vae) goes through the same sd.py branch, and its decode
    # holds what LTX-Video 0.9's holds at the peak, traced within 0.2 % at 768x512 (ltx63); only its weights differ
    "ltx-2": dict(ch=128, s=32, t=8, p=1, txt=0, ctx=1024, cfg=True, factor=0.055, vae="ltxv",
                  name="LTX-2", audio=dict(ch=8, bins=16, latents_per_second=16000 / 160 / 4, fps=25)),
    "mochi": dict(ch=12, s=8, t=6, p=2, txt=256, ctx=0, cfg=True, factor=2.0, vae="mochi", name="Mochi"),
    "cosmos": dict(ch=16, s=8, t=8, p=2, txt=0, ctx=512, cfg=True, factor=1.6, vae="cosmos", name="Cosmos"),
    "pixart": dict(ch=4, s=8, t=None, p=2, txt=0, ctx=300, cfg=True, cfg_separate="comfyui", factor=0.5, vae="kl", name="PixArt"),
    "auraflow": dict(ch=4, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=2.0, vae="kl", name="AuraFlow"),
    "hunyuan-dit": dict(ch=4, s=8, t=None, p=2, txt=0, ctx=333, cfg=True, factor=1.3, vae="kl", name="Hunyuan-DiT"),
    # Hunyuan3D 2.x (hunyuan3d.py): a 1-D latent, EmptyLatentHunyuan3Dv2's [B, 64, resolution] (nodes_hunyuan3d.py;
    # latent_formats.Hunyuan3Dv2 latent_channels 64), one token a latent position: held here as a width of `resolution`
    # and a height of 1 at s 1, p 1 (NATIVE_SIZE). txt: 2.0's double blocks attend jointly to the DINOv2 tokens
    # (1370: 37 x 37 patches of 518 px + the class token, comfy/image_encoders/dino2_*.json); cfg: Hunyuan3Dv2Conditioning
    # hands the negative as zeros of the same shape, batched with the positive; factor: supported_models.py:1213
    "hunyuan3d": dict(ch=64, s=1, t=None, p=1, txt=1370, ctx=0, cfg=True, factor=3.5, vae="hunyuan3d-shape",
                      name="Hunyuan3D 2.x", rank=3),  # rank: its LATENT tensor's, [B, 64, resolution]
    "unknown": dict(ch=16, s=8, t=None, p=2, txt=256, ctx=0, cfg=True, factor=2.0, vae="kl", name="unknown model"),
}
# The size a family is made for, (width, height, frames): ComfyUI 0.8.0's own default for the family (the width /
# height / length defaults of its latent or conditioning node), else the model's published default. `gpu-garden
# estimate FILE` without --width/--height estimates this (and says so). Source per entry:
NATIVE_SIZE = {
    "sd1": (512, 512, 1),             # nodes.py EmptyLatentImage 512x512
    "sd2": (768, 768, 1),             # stabilityai/stable-diffusion-2 model card: 768-v at 768x768 (the -base model: 512)
    "sdxl": (1024, 1024, 1),          # comfy_extras/nodes_clip_sdxl.py CLIPTextEncodeSDXL width/height 1024
    "sd3": (1024, 1024, 1),           # nodes_sd3.py EmptySD3LatentImage 1024x1024
    "flux1": (1024, 1024, 1),         # nodes_model_advanced.py ModelSamplingFlux width/height 1024
    "flux2": (1024, 1024, 1),         # nodes_flux.py EmptyFlux2LatentImage 1024x1024
    "chroma": (1024, 1024, 1),        # nodes_chroma_radiance.py EmptyChromaRadianceLatentImage 1024x1024
    "qwen-image": (1328, 1328, 1),    # QwenLM/Qwen-Image README aspect_ratios 1:1 (ComfyUI's only Qwen latent node,
                                      # EmptyQwenImageLayeredLatentImage 640x640, is Qwen-Image-Layered's)
    "hidream": (1024, 1024, 1),       # HiDream-ai/HiDream-I1 README: 1024x1024
    "lumina2": (1024, 1024, 1),       # Alpha-VLLM/Lumina-Image-2.0 model card: 1024x1024
    "z-image": (1024, 1024, 1),       # Tongyi-MAI/Z-Image-Turbo model card: 1024x1024
    "hunyuan-image": (2048, 2048, 1),  # nodes_hunyuan.py EmptyHunyuanImageLatent 2048x2048
    "pixart": (1024, 1024, 1),        # nodes_pixart.py CLIPTextEncodePixArtAlpha width/height 1024
    "auraflow": (1024, 1024, 1),      # fal/AuraFlow model card: 1024x1024
    "hunyuan-dit": (1024, 1024, 1),   # Tencent-Hunyuan/HunyuanDiT README: 1024x1024
    "wan21": (832, 480, 81),          # nodes_wan.py WanImageToVideo (and every Wan*ToVideo node) 832x480, length 81
    "wan22": (1280, 704, 49),         # nodes_wan.py Wan22ImageToVideoLatent 1280x704, length 49 (Wan 2.2 TI2V-5B)
    "hunyuan-video": (848, 480, 25),  # nodes_hunyuan.py EmptyHunyuanLatentVideo 848x480, length 25
    "hunyuan-video-15": (848, 480, 25),  # nodes_hunyuan.py:64 EmptyHunyuanVideo15Latent keeps l.46-48's 848x480, 25
    "ltxv": (768, 512, 97),           # nodes_lt.py EmptyLTXVLatentVideo 768x512, length 97
    "ltx-2": (768, 512, 97),          # nodes_lt.py:22-24 EmptyLTXVLatentVideo 768x512, 97; nodes_lt_audio.py:107,116 97 at 25 fps
    "mochi": (848, 480, 25),          # nodes_mochi.py EmptyMochiLatentVideo 848x480, length 25
    "cosmos": (1280, 704, 121),       # nodes_cosmos.py EmptyCosmosLatentVideo 1280x704, length 121
    "hunyuan3d": (3072, 1, 1),        # nodes_hunyuan3d.py EmptyLatentHunyuan3Dv2 resolution 3072 (spec.FAMILY: w x 1)
}
# Families whose file layout is fixed and whose defaults apply when only a family name is known (bench, node fallbacks).
DEFAULT_ARCH = {
    "hunyuan-video": {"hidden": 3072, "depth": 60, "heads": 24, "ffn": 12288, "block": "flux"},
    "hunyuan-video-15": {"hidden": 2048, "depth": 54, "heads": 16, "ffn": 8192, "block": "dual"},  # the 720p t2v layout:
    # 54 double blocks, no single block (hv17: "flux" sized FLUX.1's single block, which 1.5 does not have: +28.3 %)
    "mochi": {"hidden": 3072, "depth": 48, "heads": 24, "ffn": 8192, "block": "mmdit", "gated_mlp": True},
    # LTX-2 as LTXAVModel's defaults build it (av_model.py:327-347; the bundled layout ltx-2_ltx-2-19b_bf16)
    "ltx-2": {"hidden": 4096, "depth": 48, "heads": 32, "ffn": 16384, "block": "av", "cross_attention_dim": 4096,
              "audio_hidden": 2048, "audio_ffn": 8192, "audio_heads": 32},
    "hidream": {"hidden": 2560, "depth": 48, "heads": 20, "ffn": 6912, "block": "moe"},
}
# text tokens one prompt becomes per encoder in ComfyUI (its tokenizer's min_length, padding included;
# comfy/text_encoders/*.py); LLM encoders do not pad: a typical prompt with its template
# an image encoder counted with the text encoders: the tokens of one image, fixed by its size, not by --text-tokens (the
# DiT's context tokens): Hunyuan3D's DINOv2 at 518 px, 37 x 37 patches of 14 + the class token (hunyuan3d.py), one image
# per CLIPVisionEncode (the multi-view graphs encode each view apart)
IMAGE_ENCODER_TOKENS = {"dinov2-giant": 1370, "dinov2-large": 1370}
TE_TOKENS = {"clip-l": 77, "clip-g": 77, "clip-h": 77, "t5-xxl": 256, "umt5-xxl": 512, "t5": 256, "umt5": 512}
TE_TOKENS_FAMILY = {"sd3": {"t5-xxl": 77}, "flux1": {"t5-xxl": 256}, "chroma": {"t5-xxl": 256}, "mochi": {"t5-xxl": 256},
                    "ltxv": {"t5-xxl": 128}, "hidream": {"t5-xxl": 128, "llama": 128}, "cosmos": {"t5-xxl": 512},
                    "pixart": {"t5-xxl": 120}, "wan21": {"umt5-xxl": 512}, "wan22": {"umt5-xxl": 512},
                    "hunyuan-video": {"llama": 256}, "ltx-2": {"gemma": 128}}

# joint text tokens where a runner pads the prompt otherwise than ComfyUI (FAMILY txt): diffusers' FluxPipeline pads T5 to
# max_sequence_length=512 (padding="max_length"; huggingface/diffusers 58eb52c pipelines/flux/pipeline_flux.py l.221,
# l.236), while ComfyUI 0.8.0's FLUX T5XXLTokenizer pads to min_length=256 only (pad_to_max_length=False,
# comfy/text_encoders/flux.py l.15): a prompt under 256 tokens reaches the sampler as a [B, 256, 4096] context
RUNNER_TEXT_TOKENS = {"diffusers": {"flux1": 512}}

# VAE decoders: spatial (s) and temporal (t) compression, the dtypes ComfyUI's VAE class allows in order
# (VAE.working_dtypes; model_management.vae_dtype takes the first the GPU supports, else fp32), and ComfyUI's
# own per-sample decode heuristic VAE.memory_used_decode(shape, dtype) in bytes per dtype byte (comfy/sd.py):
# it divides the free memory by this to choose how many samples it decodes at once.
VAE = {
    "kl": dict(s=8, t=None, dtypes=("bf16", "fp32"), comfy=lambda sh: 2178 * sh[-2] * sh[-1] * 64),
    "wan21": dict(s=8, t=4, dtypes=("bf16", "fp16", "fp32"),
                  comfy=lambda sh: (2200 if sh[2] <= 4 else 7000) * sh[-2] * sh[-1] * 64),
    "wan22": dict(s=16, t=4, dtypes=("bf16", "fp16", "fp32"), comfy=lambda sh: 8000 * sh[-2] * sh[-1] * 256),
    "hunyuan-video": dict(s=8, t=4, dtypes=("bf16", "fp16", "fp32"),
                          comfy=lambda sh: 2800 * min(8, (sh[2] - 1) * 4 + 1) * sh[-2] * sh[-1] * 64),
    # HunyuanVideo 1.5's VAE: comfy/sd.py:486-502 (the vae_refiner branch: 32 channels, 16x, 4 frames; fp16 first)
    "hunyuan-video-15": dict(s=16, t=4, dtypes=("fp16", "bf16", "fp32"),
                             comfy=lambda sh: 3600 * 4 * sh[-2] * sh[-1] * 16 * 16),
    "ltxv": dict(s=32, t=8, dtypes=("bf16", "fp32"), comfy=lambda sh: 900 * sh[2] * sh[-2] * sh[-1] * 512),
    "mochi": dict(s=8, t=6, dtypes=("fp16", "fp32"), comfy=lambda sh: 1000 * sh[2] * sh[-2] * sh[-1] * 384),
    "cosmos": dict(s=8, t=8, dtypes=("bf16", "fp32"), comfy=lambda sh: 50 * sh[2] * sh[-2] * sh[-1] * 512),
    "video": dict(s=8, t=4, dtypes=("bf16", "fp32"), comfy=lambda sh: 2800 * sh[-3] * sh[-2] * sh[-1] * 64),
    # HunyuanImage 2.1's VAE (comfy/sd.py:380-391, decoder.conv_in with 64 input channels: families.vae_kind "kl-64ch"):
    # 32x, fp16 first, and its own memory_used_decode 700 x h x w x 32 x 32 per dtype byte (no AMD ratio: AMD_KL_RATIO)
    "kl-64ch": dict(s=32, t=None, dtypes=("fp16", "bf16", "fp32"), comfy=lambda sh: 700 * sh[-2] * sh[-1] * 32 * 32),
    # Hunyuan3D's ShapeVAE (comfy/sd.py:563-582: fp16 first; its decode is hunyuan3d.decode_bytes): the latent held as
    # [B, 64, 1, resolution] (FAMILY "hunyuan3d"), memory_used_decode 64 x resolution x (1 + 2 x 16) per sample
    "hunyuan3d-shape": dict(s=1, t=None, dtypes=("fp16", "bf16", "fp32"), comfy=lambda sh: 64 * 33 * sh[-2] * sh[-1]),
}
# comfy/sd.py:314-320: on AMD (model_management.is_amd(), torch.version.hip; the estimate's --device rocm) ComfyUI
# multiplies the default memory_used_decode / memory_used_encode by VAE_KL_MEM_RATIO 2.73; only the KL VAE keeps those
# defaults (FLUX.2's x 4 wraps them); every other VAE branch sets its own without the ratio
AMD_KL_RATIO = 2.73
VAE_FAMILY = {"wan21": "wan21", "wan22": "wan22", "hunyuan-video": "hunyuan-video", "hunyuan-video-15": "hunyuan-video-15",
              "ltxv": "ltxv", "ltx-2": "ltxv", "mochi": "mochi"}
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


def family(fam: str) -> dict:
    return FAMILY.get(fam, FAMILY["unknown"])


def latent_rounding_note(w: int, h: int, s: int) -> str | None:
    """What a size that is not a multiple of the latent's scale s becomes: EmptyLatentImage and the video latent nodes
    take width // s and height // s (estimate's assumption and trace's note: one wording); None for a multiple."""
    if not (w % s or h % s):
        return None
    return f"{w}x{h} is not a multiple of {s}: ComfyUI's latent node rounds it down to {w // s * s}x{h // s * s} " \
           f"(latent {w // s}x{h // s})"


def audio_tokens(fam: str, frames: int, fps=None) -> int:
    """Audio latents (= audio tokens: symmetric_patchifier.py:170 "b c t f -> b t (c f)") beside a video of `frames` at
    `fps` (LTXVEmptyLatentAudio's frame_rate; None: its default, the family's): audio_vae.py:235
    ceil(frames / fps x latents_per_second), in that order of float operations; 0 for a family without audio."""
    a = family(fam).get("audio")
    return math.ceil(frames / (fps or a["fps"]) * a["latents_per_second"]) if a and frames else 0


def vae_kind_for(kind, fam: str) -> str:
    """A file's VAE kind (families.vae_kind) or the family's usual one, as a VAE table key."""
    spec = family(fam)
    kind = kind or spec["vae"]
    if kind in VAE and kind != "kl":  # a VAE with its own ComfyUI branch (HunyuanImage 2.1's kl-64ch: sd.py:380-391)
        return kind
    if kind.startswith("kl") or kind == "vae":
        return "kl" if spec["t"] is None else spec["vae"]
    return kind if kind in VAE else "video"
