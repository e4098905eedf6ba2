"""The ComfyUI 0.8.0 nodes that make a latent or set its size, one row each, as `estimate --workflow` reads them
(workflow.py). Read from ComfyUI 0.8.0's nodes.py and comfy_extras/*.py (file:line of the class); the widgets are in
the order a UI-format workflow saves them (widgets_values), with the node's defaults. Every node with a LATENT output
was looked at: the ones left out pass a latent through at the size it came with (KSampler, LatentAdd, LatentBatch,
LatentConcat, RepeatLatentBatch, LTXVAddGuide, TrimVideoLatent, ...).

kind  size:   the widgets give the latent's width / height / length / batch
      resize: width / height from the widgets (0: from the input's aspect), length and batch from the latent it takes
      input:  the size comes from an input (`takes`), not a widget: the estimate says so and which size it used
      scale:  the input latent's width / height times a widget (LatentUpscaleBy, latent_scale.py), its length and batch
      other:  a latent the estimate does not size (audio): named in the assumptions, never the size
roles: a widget that gives a size under another name (SVD's video_frames is the latent's batch).
family: the family the node's latent implies (spec.FAMILY id), where only one family's model samples it; None where
several do (EmptyLatentImage, EmptySD3LatentImage, EmptyHunyuanLatentVideo: HunyuanVideo 1.0 and Wan 2.1) or where
no estimate family has its latent (Kandinsky 5, SVD, Stable Cascade, ...).
t: with family None, the temporal compression of a video node's length, which its source fixes whatever the family
(WanFirstLastFrameToVideo: the VAE's channels and scale, Wan 2.1's or 2.2's, but (L-1)//4+1 frames either way)."""
from typing import NamedTuple


class Node(NamedTuple):
    widgets: tuple          # ((name, default), ...) in UI order
    kind: str = "size"
    family: str | None = None
    src: str = ""           # ComfyUI 0.8.0 file:line of the class; the shape it makes
    takes: str = ""         # kind input / other: what the size comes from, or what the latent is
    roles: tuple = ()       # ((widget, size role), ...) beyond width / height / length / batch_size
    t: int | None = None    # family None: the temporal compression of its length ((L-1)//t+1), the same in every
                            # family that samples it (the node's source); a family's row takes spec.FAMILY's "t"
    height: int | None = None  # a 1-D latent's fixed height: its tokens are the width (Hunyuan3D, spec.FAMILY)


WHB = (("width", 512), ("height", 512), ("batch_size", 1))
VIDEO = lambda w, h, n: (("width", w), ("height", h), ("length", n), ("batch_size", 1))  # noqa: E731
WAN = VIDEO(832, 480, 81)

LATENT_NODES = {
    # images
    "EmptyLatentImage": Node(WHB, src="nodes.py:1181 [B, 4, H/8, W/8]"),
    "EmptySD3LatentImage": Node((("width", 1024), ("height", 1024), ("batch_size", 1)),
                                src="comfy_extras/nodes_sd3.py:39 [B, 16, H/8, W/8]"),
    "EmptyFlux2LatentImage": Node((("width", 1024), ("height", 1024), ("batch_size", 1)), family="flux2",
                                  src="comfy_extras/nodes_flux.py:36 [B, 128, H/16, W/16]"),
    "EmptyHunyuanImageLatent": Node((("width", 2048), ("height", 2048), ("batch_size", 1)), family="hunyuan-image",
                                    src="comfy_extras/nodes_hunyuan.py:354 [B, 64, H/32, W/32]"),
    "EmptyChromaRadianceLatentImage": Node((("width", 1024), ("height", 1024), ("batch_size", 1)),
                                           src="comfy_extras/nodes_chroma_radiance.py:11 [B, 3, H, W] (pixels)"),
    "EmptyQwenImageLayeredLatentImage": Node((("width", 640), ("height", 640), ("layers", 3), ("batch_size", 1)),
                                             family="qwen-image", takes="layers",
                                             src="comfy_extras/nodes_qwen.py:109 [B, 16, layers + 1, H/8, W/8]"),
    "StableCascade_EmptyLatentImage": Node((("width", 1024), ("height", 1024), ("compression", 42), ("batch_size", 1)),
                                           src="comfy_extras/nodes_stable_cascade.py:27 stage C [B, 16, H/c, W/c], "
                                               "stage B [B, 4, H/4, W/4]"),
    "StableZero123_Conditioning": Node((("width", 256), ("height", 256), ("batch_size", 1), ("elevation", 0.0),
                                        ("azimuth", 0.0)), src="comfy_extras/nodes_stable3d.py:25 [B, 4, H/8, W/8]"),
    "StableZero123_Conditioning_Batched": Node((("width", 256), ("height", 256), ("batch_size", 1), ("elevation", 0.0),
                                                ("azimuth", 0.0), ("elevation_batch_increment", 0.0),
                                                ("azimuth_batch_increment", 0.0)),
                                               src="comfy_extras/nodes_stable3d.py:63 [B, 4, H/8, W/8]"),
    "SV3D_Conditioning": Node((("width", 576), ("height", 576), ("video_frames", 21), ("elevation", 0.0)),
                              roles=(("video_frames", "batch"),), src="comfy_extras/nodes_stable3d.py:110 [frames, 4, H/8, W/8]"),
    "SVD_img2vid_Conditioning": Node((("width", 1024), ("height", 576), ("video_frames", 14), ("motion_bucket_id", 127),
                                      ("fps", 6), ("augmentation_level", 0.0)), roles=(("video_frames", "batch"),),
                                     src="comfy_extras/nodes_video_model.py:26 [frames, 4, H/8, W/8]"),
    # video
    "EmptyHunyuanLatentVideo": Node(VIDEO(848, 480, 25), t=4, src="comfy_extras/nodes_hunyuan.py:38 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "EmptyHunyuanVideo15Latent": Node(VIDEO(848, 480, 25), family="hunyuan-video-15",
                                      src="comfy_extras/nodes_hunyuan.py:64 (l.38's widgets) [B, 32, (L-1)/4+1, H/16, W/16]"),
    "HunyuanVideo15ImageToVideo": Node(VIDEO(848, 480, 33), family="hunyuan-video-15",
                                       src="comfy_extras/nodes_hunyuan.py:79 [B, 32, (L-1)/4+1, H/16, W/16]"),
    "HunyuanImageToVideo": Node(VIDEO(848, 480, 53) + (("guidance_type", "v1 (concat)"),), family="hunyuan-video",
                                src="comfy_extras/nodes_hunyuan.py:303 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "EmptyMochiLatentVideo": Node(VIDEO(848, 480, 25), family="mochi",
                                  src="comfy_extras/nodes_mochi.py:8 [B, 12, (L-1)/6+1, H/8, W/8]"),
    # LTX-Video's latent nodes make LTX-2's video latent too (latent_formats.py:410 LTXAV(LTXV)): two families, so none
    "EmptyLTXVLatentVideo": Node(VIDEO(768, 512, 97), t=8,
                                 src="comfy_extras/nodes_lt.py:15 [B, 128, (L-1)/8+1, H/32, W/32]"),
    "LTXVImgToVideo": Node(VIDEO(768, 512, 97) + (("strength", 1.0),), t=8,
                           src="comfy_extras/nodes_lt.py:39 [B, 128, (L-1)/8+1, H/32, W/32]"),
    "EmptyCosmosLatentVideo": Node(VIDEO(1280, 704, 121), family="cosmos",
                                   src="comfy_extras/nodes_cosmos.py:11 [B, 16, (L-1)/8+1, H/8, W/8]"),
    "CosmosImageToVideoLatent": Node(VIDEO(1280, 704, 121), family="cosmos",
                                     src="comfy_extras/nodes_cosmos.py:43 [1, 16, (L-1)/8+1, H/8, W/8] (batch after)"),
    "CosmosPredict2ImageToVideoLatent": Node(VIDEO(848, 480, 93), t=4,
                                             src="comfy_extras/nodes_cosmos.py:86 [1, 16, (L-1)/4+1, H/8, W/8] (Predict2)"),
    "Kandinsky5ImageToVideo": Node(VIDEO(768, 512, 121), t=4, src="comfy_extras/nodes_kandinsky5.py:11 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "Wan22ImageToVideoLatent": Node(VIDEO(1280, 704, 49), family="wan22",
                                    src="comfy_extras/nodes_wan.py:1247 [1, 48, (L-1)/4+1, H/16, W/16] (batch after)"),
    "WanImageToVideo": Node(WAN, family="wan21", src="comfy_extras/nodes_wan.py:15 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "WanFunControlToVideo": Node(WAN, family="wan21", src="comfy_extras/nodes_wan.py:63 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "Wan22FunControlToVideo": Node(WAN, t=4, src="comfy_extras/nodes_wan.py:116 [B, vae ch, (L-1)/4+1, H/s, W/s] (s from the VAE)"),
    "WanFirstLastFrameToVideo": Node(WAN, t=4, src="comfy_extras/nodes_wan.py:181 [B, vae ch, (L-1)/4+1, H/s, W/s] (s from the VAE)"),
    "WanFunInpaintToVideo": Node(WAN, t=4, src="comfy_extras/nodes_wan.py:253 (WanFirstLastFrameToVideo's latent)"),
    "WanVaceToVideo": Node(WAN + (("strength", 1.0),), family="wan21",
                           src="comfy_extras/nodes_wan.py:284 [B, 16, (L-1)/4+1 + ref, H/8, W/8]"),
    "WanCameraImageToVideo": Node(WAN, family="wan21", src="comfy_extras/nodes_wan.py:394 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "WanPhantomSubjectToVideo": Node(WAN, family="wan21", src="comfy_extras/nodes_wan.py:448 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "WanTrackToVideo": Node((("tracks", "[]"),) + WAN + (("temperature", 220.0), ("topk", 2)), family="wan21",
                            src="comfy_extras/nodes_wan.py:702 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "WanSoundImageToVideo": Node(VIDEO(832, 480, 77), family="wan21",
                                 src="comfy_extras/nodes_wan.py:946 [B, 16, (L-1)/4+1, H/8, W/8] (l.929)"),
    "WanHuMoImageToVideo": Node(VIDEO(832, 480, 97), family="wan21", src="comfy_extras/nodes_wan.py:1041 [B, 16, (L-1)/4+1, H/8, W/8]"),
    "WanAnimateToVideo": Node(VIDEO(832, 480, 77) + (("continue_motion_max_frames", 5), ("video_frame_offset", 0)),
                              family="wan21", src="comfy_extras/nodes_wan.py:1107 [B, 16, (L-1)/4+1 + ref, H/8, W/8]"),
    "WanMoveTrackToVideo": Node((("strength", 1.0),) + WAN, family="wan21",
                                src="comfy_extras/nodes_wanmove.py:460 [B, 16, (L-1)/4+1, H/8, W/8]"),
    # a latent resized to the widgets' width / height
    "LatentUpscale": Node((("upscale_method", "nearest-exact"), ("width", 512), ("height", 512), ("crop", "disabled")),
                          kind="resize", src="nodes.py:1264 to H/8, W/8"),
    "LatentCrop": Node((("width", 512), ("height", 512), ("x", 0), ("y", 0)), kind="resize", src="nodes.py:1444 to H/8, W/8"),
    "HunyuanVideo15LatentUpscaleWithModel": Node((("upscale_method", "bilinear"), ("width", 1280), ("height", 720),
                                                  ("crop", "disabled")), kind="resize", family="hunyuan-video-15",
                                                 src="comfy_extras/nodes_hunyuan.py:222 to H/16, W/16"),
    # the size comes from an input
    "VAEEncode": Node((), kind="input", takes="its input image", src="nodes.py:340"),
    "VAEEncodeTiled": Node((("tile_size", 512), ("overlap", 64), ("temporal_size", 64), ("temporal_overlap", 8)),
                           kind="input", takes="its input image", src="nodes.py:353"),
    "VAEEncodeForInpaint": Node((("grow_mask_by", 6),), kind="input", takes="its input image", src="nodes.py:371"),
    "InpaintModelConditioning": Node((("noise_mask", True),), kind="input", takes="its input image", src="nodes.py:411"),
    "InstructPixToPixConditioning": Node((), kind="input", takes="its input image", src="comfy_extras/nodes_ip2p.py:7"),
    "LoadLatent": Node((("latent", ""),), kind="input", takes="the saved latent file", src="nodes.py:514"),
    # fix66a (aud66a F3): its input latent's sides times scale_by, rounded in latent pixels (latent_scale.py)
    "LatentUpscaleBy": Node((("upscale_method", "nearest-exact"), ("scale_by", 1.5)), kind="scale",
                            takes="its input latent, times scale_by", src="nodes.py:1298 round(latent x scale_by)"),
    "LTXVLatentUpsampler": Node((), kind="input", takes="its input latent, twice its width and height",
                                src="comfy_extras/nodes_lt_upsampler.py:4"),
    "HunyuanVideo15SuperResolution": Node((("noise_augmentation", 0.7),), kind="input", takes="its input latent",
                                          family="hunyuan-video-15", src="comfy_extras/nodes_hunyuan.py:129"),
    "HunyuanRefinerLatent": Node((("noise_augmentation", 0.1),), kind="input", takes="its input latent",
                                 src="comfy_extras/nodes_hunyuan.py:378"),
    "WanSoundImageToVideoExtend": Node((("length", 77),), kind="input", takes="its input video latent",
                                       family="wan21", src="comfy_extras/nodes_wan.py:979"),
    "StableCascade_StageC_VAEEncode": Node((("compression", 42),), kind="input", takes="its input image",
                                           src="comfy_extras/nodes_stable_cascade.py:56"),
    "StableCascade_SuperResolutionControlnet": Node((), kind="input", takes="its input image",
                                                    src="comfy_extras/nodes_stable_cascade.py:117"),
    "SD_4XUpscale_Conditioning": Node((("scale_ratio", 4.0), ("noise_augmentation", 0.0)), kind="input",
                                      takes="its input image, times scale_ratio", src="comfy_extras/nodes_sdupscale.py:7"),
    # latents the estimate does not size
    "EmptyLatentAudio": Node((("seconds", 47.6), ("batch_size", 1)), kind="other", takes="an audio latent",
                             src="comfy_extras/nodes_audio.py:15 [B, 64, seconds x 44100 / 2048]"),
    "EmptyAceStepLatentAudio": Node((("seconds", 120.0), ("batch_size", 1)), kind="other", takes="an audio latent",
                                    src="comfy_extras/nodes_ace.py:32 [B, 8, 16, seconds x 44100 / 4096]"),
    # LTX-2's audio latent is counted beside its video latent (phases._with_audio): workflow._ltx2_audio reads this row's
    # frame_rate, not the size
    "LTXVEmptyLatentAudio": Node((("frames_number", 97), ("frame_rate", 25), ("batch_size", 1)), kind="other",
                                 takes="an audio latent", src="comfy_extras/nodes_lt_audio.py:97"),
    "VAEEncodeAudio": Node((), kind="other", takes="an audio latent", src="comfy_extras/nodes_audio.py:67"),
    "LTXVAudioVAEEncode": Node((), kind="other", takes="an audio latent", src="comfy_extras/nodes_lt_audio.py:34"),
    # h3d63: its resolution is the DiT's token count, held as a width of resolution and a height of 1 (spec.FAMILY)
    "EmptyLatentHunyuan3Dv2": Node((("resolution", 3072), ("batch_size", 1)), family="hunyuan3d", height=1,
                                   roles=(("resolution", "width"),), takes="a 3D shape latent",
                                   src="comfy_extras/nodes_hunyuan3d.py:15 [B, 64, resolution]"),
}

SIZE_ROLES = {"width": "width", "height": "height", "length": "length", "batch_size": "batch"}


def widget_names(node: str) -> list[str]:
    """The node's widget names in UI order (what a UI workflow's widgets_values lists)."""
    return [n for n, _ in LATENT_NODES[node].widgets]


def size_widgets(node: str) -> dict:
    """{widget name: size role (width, height, length, batch)} of the node's widgets that give a size."""
    row = LATENT_NODES[node]
    if row.kind not in ("size", "resize"):
        return {}
    names = widget_names(node)
    return {n: r for n, r in list(SIZE_ROLES.items()) + list(row.roles) if n in names}


def length_time_factors() -> dict:
    """Node -> the temporal compression t of its `length` widget (video frames -> (length - 1) // t + 1 latent
    frames): the row's t, else its family's (spec.FAMILY). The OOM report reads it (nodes/oom_report.py)."""
    from .spec import FAMILY

    return {n: r.t or FAMILY[r.family]["t"] for n, r in LATENT_NODES.items()
            if "length" in dict(r.widgets) and (r.t or r.family)}


def pixels_per_latent(node: str) -> int | None:
    """Image pixels per latent pixel along a side of the node's latent, read from the first shape in its row's src
    ("[B, 4, H/8, W/8]": 8, "[B, 3, H, W] (pixels)": 1); None where the row does not fix it (H/c, H/s)."""
    import re

    m = re.search(r"\[[^]]*\]", LATENT_NODES[node].src)
    s = re.search(r"H(?:/(\d+))?, W(?:/(\d+))?\]$", m.group()) if m else None
    return None if s is None or s.group(1) != s.group(2) else int(s.group(1) or 1)
