"""The VAE phase as ComfyUI 0.8.0 runs it (comfy/sd.py VAE.decode / VAE.encode):

- dtype: model_management.vae_dtype takes the first of the VAE class's working dtypes the GPU supports
  (--fp16-vae / --bf16-vae / --fp32-vae override); the KL VAE allows only bf16 or fp32, so on a GPU without
  bf16 (Turing, Pascal) it runs in fp32;
- batch: it divides the free memory by its own per-sample heuristic (memory_used_decode) and decodes that
  many samples at once;
- fallback: when that OOMs it retries in tiles (images: 64-latent tiles in three passes; video: 256 px //
  the spatial compression, all frames at once); VAE.encode likewise (images: 512 px tiles in three passes; video:
  256 px, all frames: encode_fallback_size);
- VAE Decode (Tiled) uses the node's tile size (spec.TILE_NODE), clipped to the image.

Per-sample activation bytes are `vae_decode_bytes` / `vae_encode_bytes` (stable API). KL, Wan 2.1, Wan 2.2 and
HunyuanVideo decode coefficients and the KL encode are traced (bench_estimate.py FIT rows), HunyuanVideo 1.5's decode
(trace_hv15_decode.py), LTX-Video's decode and the Wan 2.1 encode on one-off traces (LTXV_DECODE, WAN_ENCODE_* below);
the other video VAEs (and the other encodes) use ComfyUI's own heuristic, labelled as such (vae_untraced.py).

`device` "cuda" adds the CUDA convolution workspace the tracer cannot see (cuda_conv.py, fitted on the GPU rows);
device None (the default) is the tracer-equivalent figure; "rocm", "mps", "cpu", ...: no workspace term."""
from . import cuda_conv, decode_room, hunyuan3d as H3D, spec, vae_untraced
from .phases import dtype_bytes, dtype_name
from ..units import fmt_bytes

KL_DECODE = 642  # elements per output pixel at the KL decoder's peak (traced 648 incl. the fp32 output), fit: sd1 512 decode
KL_ENCODE = 381  # elements per input pixel at the KL encoder's peak, fit: sd1 512 encode
WAN_DECODE = 4290  # elements per output pixel of one 4-frame chunk (causal caches), fit: wan21 832x480x33 decode
WAN_DECODE_ONE = 1631  # a one-latent-frame decode (an image: Qwen-Image's VAE), fit: wan21 1024x1024x1 decode
WAN22_DECODE = 4355  # Wan 2.2 VAE (48 ch, 16x), per output pixel, fit: wan22 1280x704x41 decode
WAN_FRAME = 3  # plus the decoded video kept on the device, per frame and pixel
# runner "diffusers" (policy runner): diffusers' AutoencoderKL decoder holds more than ComfyUI's at its peak, and its
# pipelines decode the whole batch in one call (FluxPipeline, StableDiffusionXLPipeline: vae.decode(latents)).
# DIFFUSERS_KL_DECODE: elements per output pixel of each image (what max_memory_allocated sees), fit: the slope over
# batch 1/4/8/16 of the diffusers-torchao FLUX.1-dev bf16 rows (1024x1024, max_memory_allocated) of
# benchmarks/data/diffusion_measured.json, least squares through the weights (a REGRESSION set since).
# DIFFUSERS_KL_SLACK: the caching allocator's slack of one such decode of one image (reserved, not allocated: it goes into the
# allocator margin, so peak_device has it and peak_torch does not), fit: the FLUX.1-dev bf16 and GGUF Q8_0 pipeline
# rows (max_memory_reserved at batch 1), as the single 2360 the two summed to before.
# Traced (round 16; tests/unit/data/diffusers_kl_decode_trace.json: diffusers 0.32.2 AutoencoderKL.decode, FLUX.1 and SDXL
# VAE configs, meta tensors, 512-2048 px, batch 1-16, bf16/fp16/fp32): the decoder allocates 768 elements per output pixel
# of each image, exactly 3 x 256 channels (up_blocks[3].resnets[0]: its input, norm1's output and the SiLU of it), the
# latent aside; the caching-allocator model reserves about 609 more per pixel of each image. Both are floors of a GPU run:
# no cuDNN workspace on meta. The fitted 975 sits between 768 and 768 + cuda_conv's KL workspace (1216, what batch-1
# decodes measure: InvokeAI's fp16 1536 px); the multi-image rows (diffusers-torchao bs4-16, the SDXL notebook's bs4)
# grow by about 950 per image, below 1216. The traced reserved (1377 per pixel) is far under the 2360 the reserved rows
# give (the blog's FLUX rows, the hybrid-decode docs rows): the tracer's allocator model has no workspace blocks. So
# neither traced figure replaced a fitted one (round 16 compared both with every row they reach).
DIFFUSERS_KL_DECODE = 975
# The same decoder on another GPU generation (policy gpu_arch; None: the generations DIFFUSERS_KL_DECODE was fitted on,
# Ampere and newer), one row per (generation, decode dtype): elements per output pixel of each image, replacing
# DIFFUSERS_KL_DECODE. cuDNN's algorithms and their workspaces depend on the GPU (cuda_conv.py's Limits): on Pascal
# (sm_60 / sm_61: no tensor cores, no TF32) an fp16 decode holds far more than on newer GPUs and an fp32 one about the
# trace's 768 (DIFFUSERS_KL_TRACED) and no more, where the A100 fp32 rows (diffusion-fast SD1.5 512 / SDXL 1024) hold
# about 1000: opposite directions in the two dtypes, so no dtype-only figure fits both. Fit: measured batch 30/31
# (gperdrizet-u6, Tesla P100 and GTX 1070, diffusers fp16 pipelines at 512 x 512, max_memory_allocated, REGRESSION rows):
# fp16 the mean over the four sequential-offload rows whose peak is the decode, one per model and VAE (SD1.4 1752.6,
# PixArt-alpha 1766.0, SD3.5 Medium 1767.0, SD3.5 Large Turbo 1767.6: measured less the decode phase's weights, less the
# fp32 output, per pixel and byte); fp32 SDXL base / SDXL-Turbo sequential (upcast VAE: 765.3 / 764.6; the GTX 1070
# twins agree to 1 MiB). Not measured: bf16 (Pascal has none), other sizes, Volta / Turing (the default applies).
DIFFUSERS_KL_DECODE_ARCH = {
    ("pascal", "fp16"): 1763,
    ("pascal", "fp32"): 765,
}
GPU_ARCHS = tuple(sorted({a for a, _ in DIFFUSERS_KL_DECODE_ARCH}))  # the policy's gpu_arch values (None: newer GPUs)
# The same decoder in fp16 on the newer GPUs (gpu_arch None), elements per output pixel of each image, replacing
# DIFFUSERS_KL_DECODE: InvokeAI's VAE benchmark (benchmarks/data/diffusion_measured.json batches 18 and 33, RTX 4090, the
# SDXL VAE decoded alone, working max_memory_allocated, 512-2048 px and 512 px tiles) reads 1216.4-1220 in fp16 at every
# size and 960.3-962 in fp32 (the fitted 975 holds that one within 1.8 %). Both are the meta trace with cuDNN's copies:
# 768 at the trace's peak (DIFFUSERS_KL_TRACED) + cuda_conv's 16-bit 1.75 copies of 256 channels = 1216; with the copies
# held while each convolution runs, the trace's live set at up_blocks.2.upsamplers.0.conv (704, its 256-channel input,
# output and the blocks' carry) + one copy in fp32 = 960, + two in fp16 = 1216. The bf16 figure stays the fitted one:
# its rows (diffusers-torchao, FLUX.1-dev, bs 1-16) grow by about 950 per image, and no bf16 decode of this decoder
# alone is measured. FIT: the 8 InvokeAI fp16 rows (REGRESSION since).
DIFFUSERS_KL_DECODE_DTYPE = {"fp16": 1216}
DIFFUSERS_KL_RESERVED = 2360  # reserved per output pixel of the first image (fitted; see DIFFUSERS_KL_SLACK)
DIFFUSERS_KL_SLACK = DIFFUSERS_KL_RESERVED - DIFFUSERS_KL_DECODE
DIFFUSERS_KL_TRACED = 3 * 256  # elements per output pixel of each image at the traced peak (a floor; see above)
# Each further image decoded in the same call adds to the slack what the trace adds: reserved beyond allocated grows by
# 608 elements per pixel of each image (batch 2, 4 and 16 against 1, FLUX.1 VAE 1024 px bf16, same file), less what the
# 5 % margin already adds for that image's DIFFUSERS_KL_DECODE and fp32 output (49). DIFFUSERS_KL_SLACK (fitted) stays the first image's.
DIFFUSERS_KL_SLACK_IMAGE = 559
# The Wan VAEs' causal decode (ComfyUI's port, diffusers' AutoencoderKLWan and Wan's own code run the same chunks):
# each latent frame's chunk frees and reallocates full-resolution temporaries of changing sizes, so PyTorch's caching
# allocator ends the decode holding far more than it allocated at the peak. Elements per output pixel of one chunk
# (x dtype bytes), beyond the 5 % margin every phase has, from the tracer's caching-allocator model
# (reserved_peak - allocated_peak) on the traced FIT decodes: wan21 832x480x33 (1753265152 bytes), wan21 1024x1024x1
# (one latent frame: 789375488), wan22 1280x704x41 (3628555776). Cached, not live: PyTorch releases cached blocks and
# retries before it reports an OOM, so this goes into peak_device (what nvidia-smi and max_memory_reserved show) and
# not into the peak the verdict uses (formula: breakdown "cached_slack").
WAN_DECODE_CACHED = 1975
WAN_DECODE_CACHED_ONE = 295
WAN22_DECODE_CACHED = 1790
# LTX-Video's VAE (ComfyUI 0.8.0 comfy.ldm.lightricks.vae.causal_video_autoencoder.VideoVAE), untiled, from one-off meta
# traces of its decode with gpu_garden's tracer (the tracer has no LTX family; layouts built from VideoVAE on meta, bf16):
# the activations are linear in the latent frames, (LTXV_DECODE x latent frames - LTXV_DECODE_0) elements per output
# pixel, fit: 768x512x97 and 768x512x161 of version 0 (3724545024 and 6152588288 bytes); checked on 768x512x25,
# 512x512x25, 1216x704x121, 1024x1024x9 (version 0) and on versions 1 and 2 (the 0.9.5+ decoders with 1024-channel
# blocks and timestep conditioning: the same activations within 0.2 %, their weights differ), all within 1 %.
# ComfyUI's own heuristic (900 x latent voxels x 512) is 21 % above the trace at 161 frames and 84 % above at 9.
# LTX-2's video VAE (ltx63: VideoVAE from the checkpoint's config metadata, the version-2 blocks without timestep
# conditioning; 2.44 GB of weights in BF16 against 0.84) holds the same: its traces at the fit and check sizes above are
# 0.1-0.7 % under these figures, 1.9 % at 1024x1024x9 (tests/unit/test_estimate_ltx63.py).
# LTXV_DECODE_CACHED: what the caching allocator holds beyond the 5 % margin, per output pixel and latent frame, from the
# tracer's allocator model (reserved_peak - allocated_peak) of the same FIT decodes (110.0 and 111.2); peak_device only.
# diffusers' AutoencoderKLLTXVideo is other code: runner "diffusers" uses the same figures (not traced there).
# The Wan 2.1 VAE's causal encode (ComfyUI 0.8.0 comfy/ldm/wan/vae.py WanVAE.encode: the first frame, then chunks of
# 4, each conv caching its last 2 input frames). Elements per input pixel at its peak: WAN_ENCODE_CHUNKS for 1, 2 and 3+
# chunks (the caches fill over the first two), fit: the tracer's 832x480 encodes of 1, 5 and 81 frames (activations
# 773077248, 2349267456, 2860448256 bytes in bf16); plus WAN_ENCODE_FRAME per pixel and frame, from the code: the input
# video (3 channels) and the encoder's output so far (2 x 16 channels at 1/64 of the pixels, one latent frame per 4
# frames: 0.125). Checked on 832x480 x2, x9, x33, 640x640x49, 1280x720 x33 and x81 traces: within 0.05 %.
# (ComfyUI's own memory_used_encode for this VAE, 6000 x pixels x dtype bytes past 4 frames, is 1.7 x the trace at 81.)
WAN_ENCODE_CHUNKS = (964.75, 2925.625, 3328.125)
WAN_ENCODE_FRAME = 3.125
# The other video VAEs' encodes in the same form (rev68d F1; ComfyUI's memory_used_encode sizes them by the pixel
# shape too, comfy/sd.py:517, :543): {kind: (elements per input pixel for 1, 2, 3+ chunks of 4 frames, per pixel and
# frame)}, fit on benchmarks/results/vae_encode_traces.json (a regression set now): wan22 1280x704 x1, x5, x9, x121
# (x13 and 832x480 x1, x81 within 0.05 %); hunyuan-video 1280x720 x1, x5, x17, x33 (x9, x13, 640x360 x1, x33 within
# 0.5 %); hunyuan-video-15 1280x720 x1, x5, x9, x33 (no check size); ltxv (all frames at once) 768x512 x1, x97, exact on
# x9, x17, 1216x704 x1, x121. A video VAE not traced (mochi, cosmos, "video") takes hunyuan-video's; an image VAE KL's.
ENCODE_FIT = {"wan21": (WAN_ENCODE_CHUNKS, WAN_ENCODE_FRAME), "wan22": ((443.97, 1383.02, 1550.9), 6.094),
              "hunyuan-video": ((639.67, 4021.39, 5553.84), 5.0),
              "hunyuan-video-15": ((630.04, 4199.97, 6194.78), 14.63), "ltxv": ((32.0,), 43.0)}
LTXV_DECODE = 386
LTXV_DECODE_0 = 281
LTXV_DECODE_CACHED = 110
# HunyuanVideo's VAE as ComfyUI 0.8.0 runs it (comfy/sd.py: AutoencoderKL with 3-D convolutions; its Decoder in
# comfy/ldm/modules/diffusionmodules/model.py splits the mid block's output into chunks of 2 latent frames and runs each
# through the up blocks with a 2-frame carry per causal conv, keeping every decoded chunk until the final concatenation).
# A full chunk with carries in and out peaks at the last upsample (the 10-frame concatenation of the carry and 8 upsampled
# frames, its padded copy, the upsampled frames) whatever the length, so per output pixel of one frame the activations are
# HV_DECODE + HV_FRAME x frames (the decoded frames kept, 3 channels, and the mid block's output held whole beside them),
# fit: the traced 848x480x25 and 1280x720x65 decodes (bench_estimate REGRESSION rows; 9235947008 and 21240725504 bytes
# in bf16); checked on one-off 848x480 traces of 17, 21, 65 frames (within 0.3 %). Under 5 latent frames no chunk has
# carries on both sides: HV_DECODE_SHORT, elements per pixel for 1-4 latent frames, read off one-off 848x480 traces of
# 1, 5, 9 and 13 frames. ComfyUI's own heuristic (2800 x min(8, frames) x latent pixels x 64) is about twice the trace.
HV_DECODE = 11234
HV_FRAME = 4.46
HV_DECODE_SHORT = (1357.5, 5852.7, 8104.5, 9567.8)
# HunyuanVideo 1.5's VAE (vae_refiner.Decoder: 2-latent-frame chunks with carries, as above; 32 ch, 16x) the same way:
# HV15_DECODE + HV15_FRAME x frames elements per output pixel, HV15_DECODE_SHORT under 5 latent frames, fit: the traced
# FIT rows of benchmarks/results/hv15_decode_trace.json (fix68g); its CHECK rows within 0.4 %. ComfyUI's own heuristic
# (comfy/sd.py:502, frame-independent) is 80-89 % above the trace past 4 latent frames: it only sizes ComfyUI's batch.
HV15_DECODE = 7537
HV15_FRAME = 3.85
HV15_DECODE_SHORT = (646.6, 2568.3, 5526.1, 5673.5)
# runner "diffusers", HunyuanVideo's VAE (AutoencoderKLHunyuanVideo, diffusers 0.32+ and main at 58eb52c0): decode never
# runs the whole video. use_framewise_decoding is True by default, whatever enable_tiling says, so _decode hands a latent
# longer than tile_sample_min_num_frames // 4 frames to _temporal_tiled_decode: chunks of that + 1 latent frames every
# tile_sample_stride_num_frames // 4, each decoded on its own (4 (L - 1) + 1 frames), every decoded chunk kept until they
# are blended and concatenated. enable_tiling adds spatial tiles inside each chunk (tiled_decode: 256 px every 192 px,
# every decoded tile kept until blended). Defaults 16 / 12 frames since diffusers#10295 (64 / 48 before it: no release
# had them). DIFFUSERS_HV_DECODE: elements per output pixel and frame of one chunk at its peak, fit: the same row as
# before, hf-blog-videogen-hunyuanvideo-4bit-cpu-offload (768x512x121, the decode is the peak, only the VAE resident),
# now read as 64-frame chunks (65 frames) with the first chunk's output held: (243 x 121 - 3 x 65) / 65.
DIFFUSERS_HV_DECODE = 449
DIFFUSERS_HV_TILE = {"tile": 256, "frames": 16}  # tile_sample_min_height/width, tile_sample_min_num_frames
DIFFUSERS_HV_STRIDE = 0.75  # tile_sample_stride_*: 192 of 256 px, 12 of 16 (48 of 64) frames
RUNNERS = ("comfyui", "diffusers", "wan")  # "wan": Wan's reference code; its VAE is the one ComfyUI ported


def retries_tiled(runner) -> bool:
    """ComfyUI's VAE.decode / VAE.encode pick their batch and retry tiled after an out-of-memory error; diffusers'
    pipelines and Wan's own runner (WanVAE.decode, one call per video) decode the whole batch at once, no retry."""
    return (runner or "comfyui") == "comfyui"


# Families whose diffusers pipelines upcast an fp16 VAE to fp32 before decoding: StableDiffusionXLPipeline (and its
# img2img/inpaint/ControlNet variants) call upcast_vae() when vae.dtype is fp16 and vae.config.force_upcast, which the
# SDXL base VAE's config sets. With SDPA the pipeline moves post_quant_conv, conv_in and the mid block back to fp16, but
# the decoder's up blocks, where its peak is, run in fp32. SD 1.x, SD3 and FLUX pipelines decode in the pipeline dtype.
DIFFUSERS_UPCAST = ("sdxl",)
# diffusers' AutoencoderKL tiling (enable_tiling; autoencoder_kl.py _decode / tiled_decode): only when the latent is larger
# than one tile; tiles of the VAE config's sample_size px (tile_latent_min_size = sample_size / 8) every 3/4 tile, each
# decoded for the whole batch in one decoder call, and every decoded tile kept until they are blended and concatenated.
# sample_size of each family's diffusers VAE config: SD 1.x 512; SDXL, SD3 and FLUX.1 1024.
DIFFUSERS_KL_TILE = {"sd1": 512, "sdxl": 1024, "sd3": 1024, "flux1": 1024}
DIFFUSERS_TILE_OVERLAP = 0.25


def choose_dtype(kind: str, vae_dtype: str = "auto", gpu_halves=("bf16", "fp16")) -> str:
    """The dtype ComfyUI runs this VAE in: vae_dtype "auto" follows model_management.vae_dtype (first working
    dtype the GPU supports, else fp32); "bf16"/"fp16"/"fp32" are --bf16-vae/--fp16-vae/--fp32-vae."""
    if vae_dtype and vae_dtype != "auto":
        if vae_dtype not in ("bf16", "fp16", "fp32"):
            raise ValueError(f"VAE dtype must be auto, bf16, fp16 or fp32, not {vae_dtype!r}")
        return vae_dtype
    for d in spec.VAE.get(kind, spec.VAE["video"])["dtypes"]:
        if d == "fp32" or d in gpu_halves:
            return d
    return "fp32"


UPCAST_WHY = "diffusers upcasts it"


def decode_dtype(kind: str, vae_dtype="auto", gpu_halves=("bf16", "fp16"), runner="comfyui", family=None,
                 vae_bytes=None) -> tuple:
    """(dtype, why) of the decode: vae_bytes (the VAE as loaded: 4 fp32, 2 a half), vae_dtype set, diffusers' SDXL
    upcast (DIFFUSERS_UPCAST) under runner "diffusers", else ComfyUI's choice (choose_dtype)."""
    if vae_bytes:
        return {4: "fp32", 2: "bf16"}.get(vae_bytes), "as loaded"
    if vae_dtype and vae_dtype != "auto":
        return choose_dtype(kind, vae_dtype, gpu_halves), "set"
    if runner == "diffusers" and family in DIFFUSERS_UPCAST:
        return "fp32", UPCAST_WHY
    return choose_dtype(kind, "auto", gpu_halves), "ComfyUI's VAE dtype"


def _scale(kind, latent_shape) -> int:
    """Output pixels per latent pixel. FLUX.2's VAE is the KL decoder with a batch-normed latent patchified 2x2: its
    32 channels become 128 at 1/16 of the image (ComfyUI 0.8.0 comfy/sd.py, 'bn.running_mean': upscale_ratio * 2,
    latent_channels * 4, memory_used_decode * 4), so a 128-channel KL latent decodes 16 px per latent pixel."""
    v = spec.VAE.get(kind, spec.VAE["video"])
    return v["s"] * 2 if kind == "kl" and len(latent_shape) == 4 and int(latent_shape[1]) == KL_PATCHIFIED_CHANNELS else v["s"]


KL_PATCHIFIED_CHANNELS = 4 * 32  # FLUX.2: 2 x 2 patches of its 32 latent channels


def _pixels(kind, latent_shape):
    v = spec.VAE.get(kind, spec.VAE["video"])
    sh = spec.checked_latent_shape(latent_shape)
    lat_t = sh[2] if len(sh) == 5 else 1
    frames = ((lat_t - 1) * v["t"] + 1) if v["t"] else 1
    s = _scale(kind, sh)
    return sh[-1] * s, sh[-2] * s, frames, lat_t


def vae_decode_bytes(kind: str, latent_shape, dtype="bf16", runner="comfyui", device=None, gpu_arch=None) -> int:
    """Activation bytes of decoding ONE sample of a latent shaped `latent_shape` ([B, C, H, W] or
    [B, C, T, H, W]; B is ignored) with the VAE kind ("kl", "wan21", "wan22", "hunyuan-video", "ltxv",
    "mochi", "cosmos"; spec.vae_kind_for maps a file's kind), untiled, in `dtype`. Weights not included.
    runner "diffusers": diffusers' KL and HunyuanVideo decoders (DIFFUSERS_KL_DECODE; HunyuanVideo's in its default
    temporal chunks, diffusers_hv_decode: it never decodes a longer video at once); other
    kinds as ComfyUI. device "cuda": plus conv_workspace_bytes (None: the tracer-equivalent figure). gpu_arch: the GPU
    generation where a runner figure differs by it (DIFFUSERS_KL_DECODE_ARCH; None: newer GPUs). Stable API."""
    return (_decode_acts(kind, latent_shape, dtype, runner, gpu_arch)
            + conv_workspace_bytes(kind, latent_shape, dtype, device, runner))


def allocator_slack_bytes(kind: str, latent_shape, dtype="bf16", runner="comfyui", images=1, gpu_arch=None) -> int:
    """Reserved-but-not-allocated bytes of one decode call of `images` images that a runner term knows of (diffusers' KL
    decoder: DIFFUSERS_KL_SLACK per pixel for the first image, DIFFUSERS_KL_SLACK_IMAGE for each further one); 0 otherwise.
    Where the decode's allocated figure is a per-dtype one (DIFFUSERS_KL_DECODE_DTYPE) the first image's reserved total
    stays DIFFUSERS_KL_RESERVED: what it allocates beyond DIFFUSERS_KL_DECODE comes out of the slack."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    if kind != "kl" or runner != "diffusers":
        return 0
    w, h, _, _ = _pixels(kind, latent_shape)
    first, name = DIFFUSERS_KL_SLACK, dtype_name(dtype)  # "float16", torch.float16: the table's "fp16"
    if gpu_arch is None and name in DIFFUSERS_KL_DECODE_DTYPE:
        first = max(0, DIFFUSERS_KL_RESERVED - DIFFUSERS_KL_DECODE_DTYPE[name])
    return int((first + DIFFUSERS_KL_SLACK_IMAGE * (max(1, int(images)) - 1)) * w * h * dtype_bytes(dtype))


def cached_slack_bytes(kind: str, latent_shape, dtype="bf16") -> int:
    """What PyTorch's caching allocator still holds (reserved, not allocated) at the end of one untiled Wan or LTX-Video
    decode of ONE sample beyond the 5 % margin (WAN_DECODE_CACHED*, LTXV_DECODE_CACHED); 0 for other kinds."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    if kind not in ("wan21", "wan22", "ltxv"):
        return 0
    w, h, _, lat_t = _pixels(kind, latent_shape)
    if kind == "ltxv":
        return int(LTXV_DECODE_CACHED * lat_t * w * h * dtype_bytes(dtype))
    per = WAN22_DECODE_CACHED if kind == "wan22" else WAN_DECODE_CACHED if lat_t > 1 else WAN_DECODE_CACHED_ONE
    return int(per * w * h * dtype_bytes(dtype))


def conv_workspace_bytes(kind: str, latent_shape, dtype="bf16", device="cuda", runner="comfyui") -> int:
    """The CUDA convolution workspace of decoding ONE sample (cuda_conv.py); 0 off CUDA or for unmeasured kinds."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    if kind in cuda_conv.RATIO:
        return cuda_conv.share_bytes(kind, _decode_acts(kind, latent_shape, dtype, runner), device, runner)
    w, h, _, lat_t = _pixels(kind, latent_shape)
    return cuda_conv.decode_bytes(kind, w, h, lat_t, dtype, device, runner)


def _decode_acts(kind, latent_shape, dtype, runner, gpu_arch=None):
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    b = dtype_bytes(dtype)
    w, h, frames, lat_t = _pixels(kind, latent_shape)
    hw = w * h
    if kind == "kl":
        name = dtype_name(dtype)  # the tables' names: "float16" and torch.float16 are "fp16"
        per = (DIFFUSERS_KL_DECODE_ARCH.get((gpu_arch, name), DIFFUSERS_KL_DECODE if gpu_arch else
                                            DIFFUSERS_KL_DECODE_DTYPE.get(name, DIFFUSERS_KL_DECODE))
               if runner == "diffusers" else KL_DECODE)
        return int(per * hw * b + 3 * hw * 4)
    if kind == "wan21":
        return int((WAN_DECODE if lat_t > 1 else WAN_DECODE_ONE) * hw * b + WAN_FRAME * frames * hw * b)
    if kind == "wan22":
        return int(WAN22_DECODE * hw * b + WAN_FRAME * frames * hw * b)
    if kind == "ltxv":
        return int(max(0, LTXV_DECODE * lat_t - LTXV_DECODE_0) * hw * b)
    if kind == "hunyuan-video" and runner == "diffusers":
        return diffusers_hv_decode(latent_shape, dtype)[0]
    if kind == "hunyuan-video":
        per = HV_DECODE_SHORT[lat_t - 1] if lat_t <= len(HV_DECODE_SHORT) else HV_DECODE + HV_FRAME * frames
        return int(per * hw * b)
    if kind == "hunyuan-video-15":
        per = HV15_DECODE_SHORT[lat_t - 1] if lat_t <= len(HV15_DECODE_SHORT) else HV15_DECODE + HV15_FRAME * frames
        return int(per * hw * b)
    if kind == H3D.VAE_KIND:  # Hunyuan3D's ShapeVAE: its volume decode at VAEDecodeHunyuan3D's defaults (traced)
        return H3D.decode_bytes(latent_shape, b)
    one = [1] + list(latent_shape)[1:]
    return int(spec.VAE[kind]["comfy"](one) * b)  # ComfyUI's own heuristic: not traced here


def vae_encode_bytes(kind: str, pixel_shape, dtype="bf16", device=None) -> int:
    """Activation bytes of encoding ONE image/video of `pixel_shape` ([B, H, W, C] as an IMAGE, or
    (width, height[, frames])) with the VAE kind, untiled. Weights not included. device "cuda": plus the CUDA
    convolution workspace (cuda_conv.encode_bytes, by mechanism: not measured). Stable API."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    if len(pixel_shape) == 4:
        frames, h, w = pixel_shape[0], pixel_shape[1], pixel_shape[2]
    else:
        w, h = pixel_shape[0], pixel_shape[1]
        frames = pixel_shape[2] if len(pixel_shape) > 2 else 1
    return _encode_acts(kind, int(w), int(h), int(frames), dtype) + \
        cuda_conv.encode_bytes(kind, int(w), int(h), int(frames), dtype, device)


def encode_fallback_size(kind: str, width: int, height: int, frames: int = 1) -> tuple:
    """(width, height, frames) of the largest tile of VAE.encode's retry after an OOM (comfy/sd.py 0.8.0):
    a video VAE (latent_dim 3) calls encode_tiled_3d with 256 px tiles over every frame (tile_t 9999); an image VAE
    encode_tiled_ with passes of 512x512, 1024x256 and 256x1024 px (spec.TILE_FALLBACK_ENCODE_*), each clipped."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    if spec.VAE.get(kind, spec.VAE["video"])["t"]:
        t = spec.TILE_FALLBACK_ENCODE_VIDEO_PX
        return min(width, t), min(height, t), frames
    t = spec.TILE_FALLBACK_ENCODE_IMAGE_PX
    tiles = [(min(width, a), min(height, b)) for a, b in ((t, t), (t * 2, t // 2), (t // 2, t * 2))]
    return max(tiles, key=lambda wh: wh[0] * wh[1]) + (frames,)


def vae_encode_fallback_bytes(kind: str, width: int, height: int, frames: int = 1, dtype="bf16", device=None) -> int:
    """Activation bytes of VAE.encode's tiled retry: one tile at a time (encode_fallback_size), the encoded tiles
    gathered on the intermediate device (the CPU), not on the GPU."""
    return vae_encode_bytes(kind, encode_fallback_size(kind, width, height, frames), dtype, device)


def _encode_acts(kind, w, h, frames, dtype):
    b = dtype_bytes(dtype)
    hw = w * h
    if kind not in ENCODE_FIT and not spec.VAE.get(kind, spec.VAE["video"])["t"]:
        return int(KL_ENCODE * hw * b + 3 * hw * 4)  # KL's; an image VAE not traced (kl-64ch) takes it too
    consts, frame = ENCODE_FIT.get(kind, ENCODE_FIT["hunyuan-video"])
    chunks = 1 + (max(1, frames) - 1) // 4  # WanVAE.encode: the first frame, then 4 at a time (the fits' form)
    return int((consts[min(chunks, len(consts)) - 1] + frame * frames) * hw * b)


def as_held(kind: str, latent_shape) -> list:
    """The latent as ComfyUI hands it to this VAE: an image latent [B, C, H, W] through a video VAE (Qwen-Image's, the
    Wan 2.1 VAE) is [B, C, 1, H, W], since the model's latent format has 3 latent dimensions and the sampler unsqueezes
    it (comfy/sample.py fix_empty_latent_channels); VAE.decode then reads shape[2] as latent frames (memory_used_decode)
    and retries in 3-D tiles (dims = ndim - 2)."""
    sh = spec.checked_latent_shape(latent_shape)
    v = spec.VAE.get(kind, spec.VAE["video"])
    return sh[:2] + [1] + sh[2:] if len(sh) == 4 and v["t"] else sh


def comfy_decode_heuristic(kind: str, latent_shape, dtype="bf16", device=None) -> int:
    """ComfyUI's VAE.memory_used_decode for one sample of this latent (what it divides free memory by); a KL VAE's
    times spec.AMD_KL_RATIO on ROCm (comfy/sd.py:314-320). Only ComfyUI's decisions use it, never our figures."""
    kind = kind if kind in spec.VAE else "video"
    one = [1] + as_held(kind, latent_shape)[1:]
    amd = spec.AMD_KL_RATIO if device == "rocm" and kind == "kl" else 1
    return int(spec.VAE[kind]["comfy"](one) * (_scale(kind, one) // spec.VAE[kind]["s"]) ** 2 * dtype_bytes(dtype) * amd)


def decode_batch(kind: str, latent_shape, dtype, free_bytes, device=None) -> int:
    """How many samples ComfyUI decodes at once: int(free / memory_used_decode), at least 1, at most B."""
    b = spec.checked_latent_shape(latent_shape)[0]
    if free_bytes is None:
        return b
    per = max(1, comfy_decode_heuristic(kind, latent_shape, dtype, device))
    return max(1, min(b, int(max(0, free_bytes) / per)))


def tile_latent_shape(kind: str, latent_shape, fallback: bool, tile=None) -> list:
    """The largest tile's latent shape (one sample). fallback: VAE.decode's retry after an OOM; otherwise
    VAE Decode (Tiled) with `tile` = {"tile": px, "frames": n} (spec.TILE_NODE by default), clipped."""
    v = spec.VAE.get(kind, spec.VAE["video"])
    sh = [1] + as_held(kind, latent_shape)[1:]
    h, w = sh[-2], sh[-1]
    t = dict(spec.TILE_NODE, **(tile or {}))
    if len(sh) == 4 or not v["t"]:
        tx = spec.TILE_FALLBACK_IMAGE_LATENT if fallback else t["tile"] // _scale(kind, sh)
        # three passes: tx x tx, tx/2 x 2tx, 2tx x tx/2 (in latent pixels), each clipped to the latent
        areas = [(min(a, h), min(c, w)) for a, c in ((tx, tx), (tx // 2, tx * 2), (tx * 2, tx // 2))]
        th, tw = max(areas, key=lambda hw: hw[0] * hw[1])
        return sh[:-2] + [th, tw]
    tx = (spec.TILE_FALLBACK_VIDEO_PX if fallback else t["tile"]) // v["s"]
    lat_t = sh[2] if fallback else min(sh[2], max(2, t["frames"] // v["t"]))
    return [1, sh[1], lat_t, min(h, tx), min(w, tx)]


def sliced_outputs_bytes(kind: str, latent_shape, dtype="bf16") -> int:
    """What diffusers' VAE slicing holds beside the last slice's decode: the B-1 decoded samples before it, in the
    VAE's dtype (AutoencoderKL.decode with use_slicing: [self._decode(z_slice).sample for z_slice in z.split(1)], then
    torch.cat). 3 channels x frames x pixels each."""
    kind = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    w, h, frames, _ = _pixels(kind, latent_shape)
    return int((int(latent_shape[0]) - 1) * 3 * frames * w * h * dtype_bytes(dtype))


def diffusers_kl_tiled(latent_shape, dtype, tile_px, runner="diffusers", device=None, gpu_arch=None):
    """diffusers' AutoencoderKL.tiled_decode of ONE sample (DIFFUSERS_KL_TILE): (bytes at its peak, tiles). The peak is
    the larger of a tile's decode plus the tiles decoded before it, and every tile plus the blended rows and the result
    (two images). None when the latent fits one tile (diffusers does not tile then)."""
    sh = [1] + spec.checked_latent_shape(latent_shape)[1:]
    h, w, t = sh[-2], sh[-1], tile_px // _scale("kl", sh)
    if h <= t and w <= t:
        return None
    step = int(t * (1 - DIFFUSERS_TILE_OVERLAP))
    b, s = dtype_bytes(dtype), _scale("kl", sh)
    peak, held, n = 0, 0, 0
    for i in range(0, h, step):
        for j in range(0, w, step):
            th, tw = min(t, h - i), min(t, w - j)
            peak = max(peak, vae_decode_bytes("kl", sh[:-2] + [th, tw], dtype, runner, device, gpu_arch) + held)
            held += 3 * th * s * tw * s * b
            n += 1
    return max(peak, held + 2 * 3 * h * s * w * s * b), n


def diffusers_hv_decode(latent_shape, dtype, tile=None, spatial=False):
    """diffusers' AutoencoderKLHunyuanVideo.decode of ONE sample (DIFFUSERS_HV_*): (bytes at its peak, chunks, tiles per
    chunk). tile {"tile": px, "frames": n} overrides DIFFUSERS_HV_TILE; spatial: enable_tiling (spatial tiles in each
    chunk). The peak is the largest of a chunk's (or tile's) decode with the chunks and tiles decoded before it, and
    every chunk plus the concatenated video."""
    t = dict(DIFFUSERS_HV_TILE, **(tile or {}))
    sh = [1] + spec.checked_latent_shape(latent_shape)[1:]
    lat_t, h, w = (sh[2] if len(sh) == 5 else 1), sh[-2], sh[-1]
    v, b = spec.VAE["hunyuan-video"], dtype_bytes(dtype)
    s, tt = v["s"], v["t"]
    tl, ts = t["frames"] // tt, int(t["frames"] * DIFFUSERS_HV_STRIDE) // tt
    chunks = [lat_t] if lat_t <= tl else [min(tl + 1, lat_t - i) for i in range(0, lat_t, max(1, ts))]
    px, step = t["tile"] // s, int(t["tile"] * DIFFUSERS_HV_STRIDE) // s
    # _decode (one chunk) compares the width with the stride (tile_latent_min_width = tile_sample_stride_width // 8)
    spatial = spatial and (h > px or w > (px if len(chunks) > 1 else step))
    tiles = [(min(px, h - i), min(px, w - j)) for i in range(0, h, step) for j in range(0, w, step)] if spatial else [(h, w)]
    peak, held = 0, 0
    for lt in chunks:
        f = (lt - 1) * tt + 1
        tiles_held = 0
        for th, tw in tiles:
            peak = max(peak, held + tiles_held + int(DIFFUSERS_HV_DECODE * th * s * tw * s * f * b))
            tiles_held += 3 * f * th * s * tw * s * b
        if spatial:  # the blended rows and their concatenation beside the tiles
            peak = max(peak, held + tiles_held + 2 * 3 * f * h * s * w * s * b)
        held += 3 * f * h * s * w * s * b
    frames = (lat_t - 1) * tt + 1
    return max(peak, held + 3 * frames * h * s * w * s * b), len(chunks), len(tiles)


def phase(kind: str, latent_shape, dtype="bf16", free_bytes=None, mode="auto", tile=None, runner="comfyui",
          device=None, slicing=False, tile_px=None, gpu_arch=None, vae_options=None) -> dict:
    """The decode as ComfyUI runs it. mode "auto": VAE Decode (batch chosen from free memory; the tiled
    fallback when that batch, by our per-sample figure with the margin, does not fit it: `tried` samples); "untiled"; "tiled": VAE Decode (Tiled) with `tile`.
    device "cuda": every figure includes the CUDA convolution workspace (cuda_conv.py), also given apart as
    conv_workspace (of the figure chosen); None: tracer-equivalent.
    runner "diffusers": the whole batch in one call (its pipelines), no tiled retry; allocator_slack: what its fitted
    decoder reserves beyond what it allocates (allocator_slack_bytes). slicing (diffusers' enable_vae_slicing; runner
    "diffusers" only): one sample per decode call, plus the samples decoded before it (sliced_outputs_bytes).
    tile_px (runner "diffusers", KL VAE, mode "tiled"): diffusers' enable_tiling with tiles of that size
    (diffusers_kl_tiled; `tile` {"tile": px} overrides it: a runner that sets tile_sample_min_size itself), for the
    whole batch per tile unless slicing; untiled when the latent fits one tile.
    runner "diffusers", HunyuanVideo's VAE: its frame chunks in every mode, spatial tiles with mode "tiled"
    (diffusers_hv_decode; `tile` {"tile", "frames"} overrides DIFFUSERS_HV_TILE).
    vae_options: VAEDecodeHunyuan3D's {num_chunks, octree_resolution} for the ShapeVAE (hunyuan3d.decode_phase: no
    tiled figures, tiled_bytes and fallback_bytes None).
    Returns {bytes, per_sample, batch, comfy_per_sample, tiled, tiled_bytes, fallback_bytes, conv_workspace,
    allocator_slack, cached_slack, how, dtype}. cached_slack: what the caching allocator holds beyond that (Wan
    decodes; reserved, not needed: peak_device only)."""
    node_shape = tile_latent_shape(kind, latent_shape, False, tile)
    fb_shape = tile_latent_shape(kind, latent_shape, True)
    per = vae_decode_bytes(kind, latent_shape, dtype, runner, device, gpu_arch)
    node_tile = vae_decode_bytes(kind, node_shape, dtype, runner, device, gpu_arch)
    fb_tile = vae_decode_bytes(kind, fb_shape, dtype, runner, device, gpu_arch)
    ws = {k: conv_workspace_bytes(kind, sh, dtype, device, runner) for k, sh in
          (("per", latent_shape), ("node", node_shape), ("fb", fb_shape))}
    whole = not retries_tiled(runner)
    if slicing and runner != "diffusers":
        raise ValueError("VAE slicing is diffusers' enable_vae_slicing (runner diffusers); ComfyUI picks its decode batch itself")
    n = 1 if slicing else int(latent_shape[0]) if whole else decode_batch(kind, latent_shape, dtype, free_bytes, device)
    if kind == H3D.VAE_KIND:  # VAEDecodeHunyuan3D: num_chunks query points at a time, no pixel tiles (hunyuan3d.py)
        return dict(H3D.decode_phase(latent_shape, dtype_bytes(dtype), n, vae_options), batch_of=int(latent_shape[0]),
                    dtype=dtype, comfy_per_sample=comfy_decode_heuristic(kind, latent_shape, dtype, device))
    out = {"per_sample": per, "batch": n, "batch_of": int(latent_shape[0]), "dtype": dtype,
           "comfy_per_sample": comfy_decode_heuristic(kind, latent_shape, dtype, device),
           "tiled_bytes": node_tile, "fallback_bytes": fb_tile, "tiled": False, "fallback": False,
           "allocator_slack": allocator_slack_bytes(kind, latent_shape, dtype, runner, n, gpu_arch),
           "cached_slack": cached_slack_bytes(kind, latent_shape, dtype)}
    dt, hv, note = None, None, ""
    vk = kind if kind in spec.VAE else spec.vae_kind_for(kind, "unknown")
    if whole and vk == "hunyuan-video":
        hv = diffusers_hv_decode(latent_shape, dtype, tile, spatial=mode == "tiled")
    elif mode == "tiled" and whole and tile_px and vk == "kl":
        # the caller's own tile size wins over the VAE config's, as for HunyuanVideo (InvokeAI's VAE benchmark sets
        # tile_sample_min_size 512 / tile_latent_min_size 64 on the SDXL VAE, whose config says 1024)
        tile_px = int((tile or {}).get("tile") or tile_px)
        dt = diffusers_kl_tiled(latent_shape, dtype, tile_px, runner, device, gpu_arch)
        if dt is None:  # diffusers tiles only a latent larger than one tile
            mode, note = "untiled", f"diffusers' VAE tiling does not tile at this size (tiles of {tile_px} px); "
    if hv is not None:
        t = dict(DIFFUSERS_HV_TILE, **(tile or {}))
        calls = 1 if slicing else int(latent_shape[0])
        out.update(bytes=calls * hv[0] + (sliced_outputs_bytes(kind, latent_shape, dtype) if slicing else 0),
                   tiled=mode == "tiled", batch=calls, per_sample=hv[0], conv_workspace=0,
                   tiled_bytes=diffusers_hv_decode(latent_shape, dtype, tile, spatial=True)[0],  # with enable_tiling
                   how=f"diffusers' HunyuanVideo VAE: {hv[1]} chunk(s) of up to {t['frames']} + 1 frames"
                   + (f", {hv[2]} tiles of {t['tile']} px each (enable_tiling)" if hv[2] > 1 else ", untiled in space")
                   + f", each decoded for {calls} sample(s) at once")
    elif dt is not None:
        calls = 1 if slicing else int(latent_shape[0])
        t = tile_px // _scale("kl", latent_shape)
        one_tile = list(latent_shape[:-2]) + [min(t, int(latent_shape[-2])), min(t, int(latent_shape[-1]))]
        out.update(bytes=calls * dt[0] + (sliced_outputs_bytes(kind, latent_shape, dtype) if slicing else 0), tiled=True,
                   batch=calls, tiled_bytes=dt[0], conv_workspace=0,
                   allocator_slack=allocator_slack_bytes("kl", one_tile, dtype, runner, calls, gpu_arch),
                   how=f"diffusers' VAE tiling: {dt[1]} tiles of {tile_px} px, each decoded for {calls} sample(s) at once"
                   + (", one sample per call (VAE slicing)" if slicing else ""))
    elif mode == "tiled":  # under diffusers: its own tiling is read for DIFFUSERS_KL_TILE's VAEs and HunyuanVideo's only
        out.update(bytes=node_tile, tiled=True, batch=1, conv_workspace=ws["node"], allocator_slack=0,
                   how="VAE Decode (Tiled)" + ("'s figure (diffusers' own tiling is figured only for the KL VAEs of "
                                               "SD 1.x, SDXL, SD3 and FLUX.1 and for HunyuanVideo's)" if whole else ""))
    elif slicing:
        held = sliced_outputs_bytes(kind, latent_shape, dtype)
        out.update(bytes=per + held, how=f"VAE slicing: the pipeline decodes its {latent_shape[0]} sample(s) one per call, "
                   f"holding the ones decoded before ({fmt_bytes(held)})", conv_workspace=ws["per"])
    elif whole:
        out.update(bytes=n * per, how=f"the pipeline decodes all {n} sample(s) in one call", conv_workspace=n * ws["per"])
    elif mode == "auto" and free_bytes is not None and n * per * (1 + decode_room.margin(vk, latent_shape, device)) \
            > free_bytes \
            and not vae_untraced.formula_only(kind):  # ComfyUI's formula alone does not say it runs out (fix68g)
        # the batch ComfyUI chose (its own per-sample figure) over the free memory it read, by ours with the room a decode
        # needs (Fit to Card's: decode_room.py, fix68g): it raises OOM on that batch and retries tiled (comfy/sd.py:789-810)
        out.update(bytes=fb_tile, tiled=True, fallback=True, batch=1, tried=n, conv_workspace=ws["fb"], allocator_slack=0,
                   how=f"VAE Decode runs out of memory on {'one sample' if n == 1 else f'{n} samples at once'} and "
                   "ComfyUI retries in tiles")
    else:
        out.update(bytes=n * per, how=f"VAE Decode, {n} of {latent_shape[0]} sample(s) at once", conv_workspace=n * ws["per"])
    formula = not out["tiled"] and not whole and vae_untraced.formula_only(kind)  # said so, retry not claimed (fix68g)
    out["how"] = note + out["how"] + (vae_untraced.NOTE if formula else "")
    out["cached_slack"] = 0 if out["tiled"] else out["batch"] * out["cached_slack"]
    # what the untiled decode needs free beyond its row's margin (decode_room: the measured room of a Wan decode on CUDA):
    # verdict.as_run adds it where it asks whether the untiled row fits the budget, as Fit to Card's plan does (fix68g)
    out["room_extra"] = 0 if out["tiled"] or whole else \
        int(out["batch"] * per * max(0.0, decode_room.margin(vk, latent_shape, device) - spec.FRAGMENTATION))
    if out["room_extra"]:
        out["how"] += (f"; untiled it needs {fmt_bytes(out['room_extra'])} more free than its row (the room this VAE's "
                       "decode was measured to need on CUDA, as Fit to Card sizes it)")
    if out["cached_slack"]:
        out["how"] += (f"; the caching allocator keeps about {fmt_bytes(out['cached_slack'])} more reserved (nvidia-smi and "
                       "max_memory_reserved show it; PyTorch frees it before an OOM)")
    if out["conv_workspace"]:
        out["how"] += (f"; includes {fmt_bytes(out['conv_workspace'])} of {cuda_conv.NAME} (measured on NVIDIA GPUs, "
                       "and for this VAE on an AMD one; not in a meta trace)" if device == "rocm" else
                       f"; includes {fmt_bytes(out['conv_workspace'])} of {cuda_conv.NAME} (cuDNN, measured on an NVIDIA GPU; "
                       "not in a meta trace)")
    return out
