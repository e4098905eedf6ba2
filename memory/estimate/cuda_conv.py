"""The CUDA convolution workspace of a VAE decode / encode: memory cuDNN takes on an NVIDIA GPU that the meta
tracer cannot see (memory/trace runs ComfyUI's real code on meta tensors, where no convolution algorithm runs).

Measured (benchmarks/results/gpu_trace_vs_cuda.json, H200, torch 2.11 + cuDNN 9.19, bf16 VAE, warm forward,
torch.cuda.max_memory_allocated): every VAE decode peaked above its exact trace by an amount that grows with the
output pixels, while every sampling forward stayed close to it (that file's sample_worst_pct). cuDNN's
convolution workspace (and the layout copies its NHWC kernels make of an NCHW bf16 tensor) is allocated through
PyTorch's caching allocator, so
it shows in max_memory_allocated; it is largest at the largest full-resolution convolution. The term is that
input's size times a number of copies fitted per VAE kind:

- KL (SD1/SDXL/SD3/FLUX VAE): the Upsample conv into the last level sees 256 channels at full resolution;
  1.75 copies (fit: sd1 512x512 +904 B/px, sdxl 1024x1024 +891 B/px; flux1 1024 is the same decoder and the
  same measurement);
- Wan 2.1 (and Qwen-Image's VAE, the same decoder): the upsample2d conv into full resolution sees 192 channels
  per frame, 4 frames per causal chunk; 1.0 copy (fit: wan21 832x480x17 +1560 B per output pixel of a chunk).
  A one-frame decode (an image: Qwen-Image's VAE) is measured apart: 2.5 copies of one frame's input (ONE_FRAME;
  fit: InvokeAI#9305's Qwen-Image VAE decodes, fp16 on an RTX 4090, 512x512 to 2048x2048, each 2.50-2.56 copies
  above the trace; benchmarks/data/diffusion_measured.json, REGRESSION rows). The single frame goes through the
  causal 3D convolutions padded to three frames, and cuDNN picks other algorithms for it than for a 4-frame chunk;
  the 1.0 copy extrapolated from the chunk was 13 % under those decodes.

These three GPU rows of the first run are the term's FIT set (a regression set: their first sight is recorded in
benchmarks/results/estimate_first_sight.json). The encode term applies the KL copies to the KL encoder's
largest full-resolution conv input (128 channels): by mechanism, not measured. diffusers' Wan decoder (AutoencoderKLWan, the same causal 4-frame chunks through
cuDNN) gets the Wan 2.1 term; diffusers' KL decoder does not, its fitted figure already holds it. Wan 2.2, HunyuanVideo
and LTX-Video were measured on the second GPU run (below). Other VAE kinds and the other encodes get no term: the
figures that are ComfyUI's own heuristic (every video encode, Mochi's and Cosmos's decodes) already carry whatever
ComfyUI's authors saw on their GPUs.

Second GPU run (2026-12-04, the same H200, driver and versions; first sight in estimate_first_sight.json, entry "gpu
run 2 2026-12-04", before these terms):
- Wan 2.2: the decode's extra over the trace is again constant per output pixel of a 4-frame chunk, 133.4 elements
  at 832x480x33 and 134.2 at 1280x704x121. Its decoder unpatchifies its last level (patch 2), so the term is not
  copies of one conv input of known width: DECODE_CHANNELS holds the fitted 133 elements per output pixel and frame
  (one "copy"). Fit: wan22 832x480x33; 1280x704x121 is held out (after: within 1 %).
- HunyuanVideo and LTX-Video: their decoders run the whole video through 3D convolutions, and the extra is not
  constant per voxel (HunyuanVideo 152 B at 848x480x61, 72 B at 1280x720x129) but a steady share of the decode's own
  activations (0.402 and 0.394): RATIO, a share of the traced activations. Fit: hunyuan-video 848x480x61 (1280x720x129
  held out) and ltxv 768x512x97 (its only row, a regression row with nothing held out).
- FLUX.2's VAE decodes as a KL decoder with 32 latent channels (the KL term, 0.0 % off) and Qwen-Image's one-frame
  decode sits 4.6 % under our figure (ONE_FRAME, fitted on an RTX 4090 in fp16): neither was changed.

Device: CUDA for every measured kind. ROCm only for the kinds measured there (ROCM_KINDS): AMD runs MIOpen, or,
where ComfyUI turns it off (torch.backends.cudnn.enabled = False on RDNA3 and newer), PyTorch's own convolution,
and neither is cuDNN. Measured (Comfy-Org/ComfyUI#15221, RX 9060 XT, bf16, the Qwen-Image VAE at 1024x1024 untiled
and in 512 and 256 tiles, max_memory_allocated less the VAE; benchmarks/data/diffusion_measured.json batch 10):
each decode sits 2.27 one-frame copies above the trace, where CUDA's fitted ONE_FRAME is 2.5, and its untiled
figure is within 2.2 % of InvokeAI#9305's RTX 4090 one at the same size. So the Wan 2.1 term applies on ROCm with
CUDA's copies (not refitted: those three rows are a regression set since). The KL decoder on ROCm is not measured:
0 there, as on MPS, XPU and CPU, which have neither. PyTorch tries cuDNN's engine configurations in heuristic order and takes the
first whose workspace it can allocate (pytorch/pytorch#49207), so on a full card it falls back to leaner ones:
the term is what an unconstrained card takes, i.e. the safe side for sizing.

fp32 (FP32_COPIES): measured apart for the KL decoder, one copy where a 16-bit decode takes 1.75. InvokeAI's VAE benchmark
(benchmarks/data/diffusion_measured.json batch 33, RTX 4090, the FLUX AE decoded alone in bf16 and in fp32, 512-2048 px,
working max_memory_allocated) reads 1088.5-1092 elements per output pixel in bf16 and 896.4-898 in fp32, the same at
every size. A meta trace of that decoder (InvokeAI's Black Forest Labs AutoEncoder, F.silu: the live set at its
full-resolution convolutions) with k copies of each convolution's input added while it runs peaks at
up.0.block.0.conv1 (256 channels in): 640.5 + 1.75 x 256 = 1088.5 and 640.5 + 1.0 x 256 = 896.5; the same model on
diffusers' SDXL decoder gives 960.1 at one copy against the fp32 SDXL rows' 960.3-962 (there at
up_blocks.2.upsamplers.0.conv). With TF32 (on by default for cuDNN convolutions) an fp32 convolution takes one copy of
its input and no more. ComfyUI's KL decoder peaks at the same convolution (its trace 648 + 256 = 904 at fp32), so the
term applies there with FP32_COPIES. Not measured in fp32: Wan 2.1 (taken as its 16-bit copies), the encodes (the
decode's copies, by mechanism).

Limits: one GPU per dtype measured (H200 cuDNN 9.19 bf16; RTX 4090 bf16 / fp32, its versions not stated). The workspace depends on the GPU
generation, dtype and cuDNN version (pytorch/pytorch#13412, #22741); cuDNN 9.10-9.15 with torch 2.9-2.10 made VAE
convolutions take about 3x (Comfy-Org/ComfyUI#10373, #10827; ComfyUI's NVIDIA_MEMORY_CONV_BUG_WORKAROUND), a window
the measured device is outside of."""
from .phases import dtype_bytes

DEVICES = ("cuda",)  # devices the term applies to for every measured kind
ROCM_KINDS = ("wan21",)  # kinds measured on ROCm too (Comfy-Org/ComfyUI#15221; see above), with CUDA's copies
COPIES = {"kl": 1.75, "wan21": 1.0, "wan22": 1.0}  # fitted copies of the largest full-resolution conv input (see above)
DECODE_CHANNELS = {"kl": 256, "wan21": 192, "wan22": 133}  # that input's channels at full resolution, per frame (wan22: fitted)
RATIO = {"hunyuan-video": 0.40, "ltxv": 0.33}  # a share of the decode's own activations, fitted (see above)
ENCODE_CHANNELS = {"kl": 128}  # traced encodes only
CHUNK_FRAMES = {"wan21": 4, "wan22": 4}  # frames per causal chunk (a one-frame latent: 1)
ONE_FRAME = {"wan21": 2.5}  # copies for a one-latent-frame decode, where measured apart (see above)
FP32_COPIES = {"kl": 1.0}  # copies in an fp32 convolution, where measured apart (see above; fit: batch 33's FLUX AE fp32 rows)
NAME = "CUDA convolution workspace"


# decoders whose runner figure was fitted on GPU peaks that already hold the workspace (vae.DIFFUSERS_KL_DECODE and
# DIFFUSERS_KL_SLACK come from diffusers-torchao's max_memory_allocated rows; vae.DIFFUSERS_HV_DECODE from one
# measured diffusers HunyuanVideo run): no second term there
FITTED_WITH_WORKSPACE = {"diffusers": ("kl", "hunyuan-video")}


def applies(kind: str, device="cuda", runner="comfyui") -> bool:
    """cuDNN takes the workspace whatever Python code calls the convolution (ComfyUI, Wan's runner, diffusers'
    AutoencoderKLWan, which decodes the same causal 4-frame chunks): on CUDA, for every measured kind, on ROCm for
    ROCM_KINDS, except a runner figure fitted with it inside."""
    on = (device or "") in DEVICES or (device == "rocm" and kind in ROCM_KINDS)
    return on and (kind in COPIES or kind in RATIO) and kind not in FITTED_WITH_WORKSPACE.get(runner or "comfyui", ())


def _frames(kind, many: bool) -> int:
    return CHUNK_FRAMES.get(kind, 1) if many else 1


def decode_bytes(kind: str, width: int, height: int, lat_t: int = 1, dtype="bf16", device="cuda",
                 runner="comfyui") -> int:
    """Workspace bytes of decoding one sample whose output is width x height pixels (lat_t latent frames); 0 for a
    RATIO kind, whose term is share_bytes of its activations."""
    if not applies(kind, device, runner) or kind not in COPIES:
        return 0
    copies = COPIES[kind] if lat_t > 1 else ONE_FRAME.get(kind, COPIES[kind])
    if dtype_bytes(dtype) == 4:  # fp32, however named ("fp32", "float32", torch.float32: the fit node passes str(dtype))
        copies = FP32_COPIES.get(kind, copies)
    elems = copies * DECODE_CHANNELS[kind] * _frames(kind, lat_t > 1)
    return int(elems * width * height * dtype_bytes(dtype))


def encode_bytes(kind: str, width: int, height: int, frames: int = 1, dtype="bf16", device="cuda") -> int:
    """Workspace bytes of encoding one image/video of width x height pixels (unmeasured: by mechanism)."""
    if not applies(kind, device) or kind not in ENCODE_CHANNELS:
        return 0
    elems = (FP32_COPIES.get(kind, COPIES[kind]) if dtype_bytes(dtype) == 4 else COPIES[kind]) * ENCODE_CHANNELS[kind]
    return int(elems * width * height * dtype_bytes(dtype))


def share_bytes(kind: str, activations: int, device="cuda", runner="comfyui") -> int:
    """Workspace bytes of a RATIO kind's decode: its share of the decode's own (traced) activation bytes."""
    if not applies(kind, device, runner) or kind not in RATIO:
        return 0
    return int(RATIO[kind] * activations)
