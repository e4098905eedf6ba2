"""The measured dataset of the footprint benchmark (bench_estimate.py): published measured peaks
(benchmarks/data/diffusion_measured.json), which rows were tuned on (MEASURED_FIT) or are not scored (NOT_SCORED), and
each row mapped to our inputs and scored as it was measured (_measured_components, measured())."""
import json
import math

from estimate_common import E, GiB, REPO, V, W, blob, families, tensor_bytes
from estimate_synth_layouts import _table_or_synth

MEASURED = REPO / "benchmarks" / "data" / "diffusion_measured.json"
PHASES = ("sample", "sample-offload", "pipeline", "weights")
# Measured rows tuned on (named after their first sight, before the refit): the diffusers KL decode
# (vae.DIFFUSERS_KL_DECODE) on two FLUX.1-dev pipeline rows, the streamed offload layer (weights.OFFLOAD_LAYERS)
# on the FLUX.1-dev and SDXL group-offload rows; after batch 3, diffusers' HunyuanVideo decoder (vae.DIFFUSERS_HV_DECODE) on
# one HunyuanVideo row. Every other measured row is HELD-OUT.
# measured batches 34 (quanto weights, onediff pipelines) and 35 (Wan VAE / Dynamic VRAM staged sizes, LightVAE, SGLang FLUX)
BATCH34_35 = (
    "aicstudy-quanto-flux1-dev-bf16-weights",
    "aicstudy-quanto-flux1-dev-fp16-weights",
    "aicstudy-quanto-flux1-dev-bf16-qfloat8-weights",
    "aicstudy-quanto-flux1-dev-fp16-qfloat8-weights",
    "aicstudy-quanto-flux1-dev-bf16-qfloat8-te-qfloat8-weights",
    "aicstudy-quanto-flux1-dev-bf16-qint4-weights",
    "aicstudy-quanto-flux1-dev-bf16-qint4-te-qint4-weights",
    "aicstudy-quanto-sd3-medium-bf16-weights",
    "aicstudy-quanto-sd3-medium-bf16-qfloat8-weights",
    "aicstudy-quanto-sd3-medium-fp16-qfloat8-weights",
    "aicstudy-quanto-sd3-medium-bf16-qfloat8-te-qfloat8-weights",
    "aicstudy-quanto-pixart-sigma-bf16-weights",
    "aicstudy-quanto-pixart-sigma-bf16-qfloat8-weights",
    "onediff-readme-flux1-dev-bf16-resident-1024-h20",
    "onediff-readme-sd35-large-bf16-resident-1024-h20",
    "onediff-readme-sd3-medium-fp16-resident-1024-rtx4090",
    "onediff-readme-sdxl-base-fp16-resident-1024-20steps-rtx4090",
    "onediff-readme-sd15-fp16-resident-512-20steps-rtx4090",
    "lightvae-readme-wan21-vae-bf16-decode-832x480x81-h100",
    "comfyui-15027-wan14b-fp16-staged-weights",
    "comfyui-15027-wan21-vae-bf16-staged-weights",
    "comfyui-12227-wan22-a14b-gguf-q8_0-weights",
    "comfyui-12227-wan21-vae-fp32-staged-weights",
    "comfyui-12506-wan21-t2v-14b-fp8-scaled-staged-weights",
    "comfyui-12506-wan21-vae-bf16-staged-weights",
    "fastvideo-1079-sglang-flux1-dev-bf16-dit-resident-te-offload-1280x720",
)
# measured batch 36 (LightX2V's H100 Wan 2.1 baselines and per-card bounds, onediff PixArt-alpha, ComfyUI #9220's
# Qwen-Image text encoder, diffusers PR #14304's Z-Image-Turbo offload record, InvokeAI PR #9414's fp8-storage DiT)
BATCH36 = (
    "lightx2v-zh-disagg-wan21-t2v-1.3b-bf16-baseline-h100-832x480x81",
    "lightx2v-zh-disagg-wan21-t2v-1.3b-umt5-encoder-card-h100-upper",
    "lightx2v-zh-disagg-wan21-t2v-1.3b-dit-card-h100-832x480x81-upper",
    "lightx2v-zh-disagg-wan21-t2v-14b-bf16-baseline-h100-832x480x81",
    "lightx2v-zh-disagg-wan21-t2v-14b-umt5-encoder-card-h100-upper",
    "lightx2v-zh-disagg-wan21-t2v-14b-dit-card-h100-832x480x81-upper",
    "lightx2v-zh-disagg-wan21-i2v-14b-480p-bf16-baseline-h100-832x480x81",
    "onediff-readme-pixart-alpha-fp16-resident-1024-20steps-rtx4090",
    "comfyui-9220-qwen-image-te-16bit-npu-weights",
    "diffusers-14304-zimage-turbo-qwen3-4b-encode-alone-bf16",
    "diffusers-14304-zimage-turbo-dit-sample-alone-bf16-1024-8steps",
    "diffusers-14304-zimage-turbo-bf16-te-offload-dit-vae-resident-1024-8steps",
    "invokeai-93ecda83-zimage-turbo-dit-fp8-storage-weights",
)
MEASURED_FIT = {"hf-blog-quant-flux1-dev-bf16-peak", "hf-blog-quant-flux1-dev-gguf-q8_0-peak",
                "diffusers-bench-flux1-dev-group-offload-leaf-1024", "diffusers-bench-sdxl-group-offload-leaf-1024",
                # after measured batch 3's first sight: diffusers' HunyuanVideo decoder (vae.DIFFUSERS_HV_DECODE)
                "hf-blog-videogen-hunyuanvideo-4bit-cpu-offload",
                # after measured batch 5's first sight: runner "wan" (Wan's reference DiT, phases.WAN_REFERENCE_DIT, from
                # the code, not fitted) was written for and mapped onto batch 4's DiffSynth-Studio Wan rows
                "diffsynth-wan21-14b-bf16-persistent-all", "diffsynth-wan21-14b-bf16-persistent-7b",
                "diffsynth-wan21-14b-bf16-persistent-0", "diffsynth-wan21-14b-fp8-persistent-all",
                "diffsynth-wan21-14b-fp8-persistent-0", "diffsynth-wan21-1.3b-bf16",
                # after measured batch 5's first sight: diffusers decodes the whole batch in one call, and its KL decoder's
                # allocated bytes per image (vae.DIFFUSERS_KL_DECODE) fitted on the slope of these four rows; the reserved
                # slack of one decode (vae.DIFFUSERS_KL_SLACK) keeps the two FLUX.1-dev FIT rows above where they were
                "diffusers-torchao-flux1-dev-bf16-bs1-peak", "diffusers-torchao-flux1-dev-bf16-bs4-peak",
                "diffusers-torchao-flux1-dev-bf16-bs8-peak", "diffusers-torchao-flux1-dev-bf16-bs16-peak",
                # after measured batch 5's first sight: a second diffusion model (Wan 2.2 A14B's other expert) stays on the
                # device when every model is resident (formula: w_dm_rest; no coefficient), written for these three rows
                "vllm-omni-5664-wan22-a14b-diffusers-bf16-1280x720x81", "vllm-omni-5664-wan22-a14b-vllm-omni-bf16-1280x720x81",
                "vllm-omni-5664-wan22-a14b-vllm-omni-fp8-1280x720x81",
                # after measured batch 6's first sight: the CUDA convolution workspace under diffusers' Wan decoder
                # (cuda_conv.applies: cuDNN's, whoever calls the conv; no coefficient) and the VAE's weights at its
                # run dtype (formula: weights.at_dtype_bytes), both written while reading this row's -40.3 % miss
                "diffusers-docs-wan21-14b-group-offload-832x480x81",
                # after measured batch 7's first sight: Mochi's joint block peaks in its SwiGLU MLP (phases.MOCHI_MLP_*,
                # read from the code and checked on a one-off meta trace of ComfyUI's GenmoMochi; no coefficient fitted
                # on these rows), written while reading these two rows' +18.9 % / +6.7 % (after the fp32 mapping fix)
                "diffusers-docs-mochi-bf16-model-offload-tiling-848x480x85",
                "diffusers-docs-mochi-fp32-autocast-model-offload-tiling-848x480x85",
                # after measured batch 7's first sight: the caching allocator's cached slack of the Wan VAEs' causal decode
                # (vae.WAN*_DECODE_CACHED, fitted on the tracer's allocator model of the FIT decodes, not on rows), in
                # peak_device only; written while reading this row's -28.0 %
                "ttm-6-wanvae-decode-1280x704x81-reserved",
                # bitsandbytes LLM.int8's int32 accumulators at the widest linear (phases.INT8_*, read from its code; the
                # 8-bit rows now say int8_matmul), written while reading this row's -17.5 %
                "hf-blog-videogen-hunyuanvideo-8bit-vae-tiling",
                # after measured batch 8's first sight: a sampler's reserved / device counter is read from the sample
                # phase, not from the estimate's overall peak (bench mapping, no estimate code), found reading this row's
                # +138.0 % (the overall peak was the decode the estimate adds for the family's usual VAE); -55.2 % after
                "diffsynth-devguide-qwen-image-dit-vram-limit-0-1024",
                # after measured batch 8's first sight: InvokeAI#9305's decode figures hold the VAE's weights (the table's
                # intercept is the VAE's 242 MiB: mapping_changes), found reading these rows' -15..-30 % misses; then the
                # one-frame Wan decode's CUDA convolution workspace (cuda_conv.ONE_FRAME, 2.5 copies) fitted on the four
                # allocated rows
                "invokeai-9305-qwen-image-vae-decode-512x512", "invokeai-9305-qwen-image-vae-decode-1024x1024",
                "invokeai-9305-qwen-image-vae-decode-1024x1024-reserved", "invokeai-9305-qwen-image-vae-decode-1088x1920",
                "invokeai-9305-qwen-image-vae-decode-2048x2048",
                # after measured batch 9's first sight: ComfyUI's LLM text encoders build no lm_head (weights.COMFY_TE_DROPPED,
                # read from comfy/text_encoders/llama.py; no coefficient), written while reading this row's +14.1 %
                "comfyui-log-11921-qwen-image-te-fp8-weights",
                # after measured batch 10's first sight: the one-frame Wan 2.1 convolution term applies on ROCm too, with
                # CUDA's copies (cuda_conv.ROCM_KINDS; no coefficient refitted), written while reading these rows' -21.1 %
                "comfyui-15221-qwen-image-vae-decode-1024-plain-rocm", "comfyui-15221-qwen-image-vae-decode-1024-tile512-rocm",
                "comfyui-15221-qwen-image-vae-decode-1024-tile256-rocm",
                # after measured batch 11's first sight: ComfyUI-GGUF dequantizes a GGUF text encoder's large token
                # embedding to fp16 on load (weights.GGUF_TE_EMBED_*, read from city96/ComfyUI-GGUF loader.py; no
                # coefficient), written while reading these two rows' -7.4 % / -12.2 %
                "orsoeric-zimage-te-qwen3-4b-gguf-q8_0-weights", "orsoeric-qwen-image-te-gguf-q8_0-mmproj-weights",
                # after measured batch 12's first sight: the Z-Image GGUF DiT rows mapped tensor by tensor as the log's 'gguf qtypes'
                # line counts them (zimage_blocks + the row field tensor_types; bench mapping, no estimate code), written for
                # these two rows' -10.4 % / -31.4 %
                "orsoeric-zimage-turbo-gguf-q8_0-weights", "orsoeric-zimage-turbo-gguf-q4_k_m-weights",
                # after measured batch 12's first sight: the notebook keeps the SDXL text encoders alive through a list
                # (mapping, no estimate code), found reading this row's -6.7 %
                "hf-blog-sdxl-opt-fp16-precomputed-embeds-bs4-1024",
                # after measured batch 12's first sight: --offload encoders (formula: the VAE decodes beside the diffusion model,
                # read from vLLM-Omni's offloader; no coefficient), written for these two rows' -16.4 % / -15.7 %
                "vllm-omni-7299-flux1-schnell-model-offload-1024-device", "vllm-omni-7299-flux1-schnell-model-offload-1024-reserved",
                # after measured batch 12's first sight: --vae-slicing (diffusers' enable_vae_slicing, one latent per decode
                # call; read from AutoencoderKL.decode, no coefficient), written for these two rows' +42.2 % / +33.3 %
                "hf-blog-sdxl-opt-fp16-vae-slicing-bs4-1024", "hf-blog-sdxl-opt-fp16-vae-slicing-sequential-bs4-1024",
                # after measured batch 12's first sight: --block-swap (one whole block in flight, read from
                # ComfyUI-WanVideoWrapper's block_swap/forward; no coefficient) and these rows mapped tensor by tensor
                # (wan14b_blocks, the wrapper's fp8 keep list), written for these rows' -33.3 / -56.9 / +3.8 / -4.8 %
                "wvw-1272-wan22-i2v-a14b-fp8-blockswap40-480x768x121", "wvw-1272-wan22-i2v-a14b-fp8-blockswap40-480x768x121-reserved",
                "ttm-6-wan-14b-bf16-blockswap-1280x704x81", "ttm-6-wan-14b-bf16-blockswap-1280x704x81-reserved",
                # after measured batch 13's first sight: vLLM-Omni's SD3 and Z-Image VAEs are held and decode in bf16 (built under
                # vLLM's default dtype, loaded by diffusers without a torch_dtype; mapping, no estimate code), written while
                # reading the SD3.5 Medium row's +45.5 %; the other three rows share the fact
                "vllm-omni-4052-sd3.5-medium-1024", "vllm-omni-4052-sd3.5-large-1024",
                "vllm-omni-recipe-zimage-turbo-bf16-1024", "vllm-omni-recipe-zimage-turbo-fp8-1024",
                # after measured batch 13's first sight: transformers' torchao / Quanto quantizers leave T5's wo linears (its
                # _keep_in_fp32_modules) unquantized, in bf16 here (te_keep_16bit; mapping, no estimate code), written while
                # reading the Quanto int4 loaded row's -25.6 %; the other rows quantize T5 the same way
                *(f"hf-blog-quant-flux1-dev-{q}-{s}" for q in ("torchao-int4wo", "torchao-int8wo", "torchao-fp8wo", "quanto-int4",
                                                               "quanto-int8") for s in ("peak", "loaded")),
                "hf-data-quant-flux1-dev-torchao-int8wo-model-offload-peak", "hf-data-quant-flux1-dev-torchao-fp8wo-model-offload-peak",
                "hf-data-quant-flux1-dev-quanto-int8-model-offload-peak",
                # after measured batch 13's first sight: InvokeAI#7674's decode figures are working memory, the reserved peak's rise
                # over the start (its 'Estimated' column is InvokeAI's working-memory estimate; its profiling helper subtracts the
                # starting reserved): compare working_reserved (mapping, no estimate code), written while reading these rows'
                # +61.0 / +54.4 / +79.0 %
                "invokeai-7674-sd1-vae-fp32-decode-512", "invokeai-7674-sdxl-vae-fp16-decode-1024", "invokeai-7674-sdxl-vae-fp32-decode-1024",
                # after measured batch 14's first sight: --offload sequential under runner diffusers keeps no reserved decode
                # slack (accelerate's cpu_offload hooks empty the CUDA cache at every weight move; read from accelerate's
                # set_module_tensor_to_device, no coefficient), written while reading the Z-Image sequential-offload row's
                # +177.7 %; that row is NOT_SCORED since round 13 (a polled sample below its own decode)
                # after measured batch 14's first sight: Wan 2.1 image-to-video as an input (the I2V DiT's own tensors,
                # the CLIP-H image encoder: image_encoder.py, formula._with_image_encoder; read from ComfyUI's and LightX2V's
                # code, no coefficient), these rows mapped to the I2V layout, written while reading their -10.8..-30.2 %
                *(f"lightx2v-bench-wan21-i2v-14b-{r}-bf16{s}-h200" for r in ("480p", "720p") for s in ("-fp32-sensitive", "")),
                "lightx2v-disagg-wan21-i2v-14b-480p-bf16-block-offload-4090", "lightx2v-disagg-wan21-i2v-14b-720p-bf16-block-offload-4090",
                # after round 4 (session s9, ediff5): --text-encoders stream, LightX2V's cpu_offload T5 keeping its token
                # embedding, final norm and one block buffer on the device (read from its t5/model.py, no coefficient);
                # the four LightX2V cpu_offload rows mapped to it, written while reading these two rows' -10.3 / -15.1 %
                "lightx2v-guide-wan21-t2v-14b-bf16-model-offload-832x480x81",
                "lightx2v-guide-wan21-t2v-14b-fp8-distill-model-offload-832x480x81",
                # after measured batch 15's first sight (session s9, ediff6): diffusers' HunyuanVideo VAE decodes in temporal
                # chunks always (use_framewise_decoding; 16 frames, 64 before diffusers#10295), spatial tiles only with
                # enable_tiling (vae.diffusers_hv_decode; DIFFUSERS_HV_DECODE re-expressed per chunk on its old FIT row);
                # written while reading the two diffusers#10295 rows' -88.3 / -83.7 %; the blog's HunyuanVideo rows
                # mapped to the 64-frame chunks of the code they ran (mapping_changes) are regression rows with them
                "diffusers-10295-hunyuanvideo-vae-decode-768x512-tile64f", "diffusers-10295-hunyuanvideo-vae-decode-768x512-tile16f",
                *(f"hf-blog-videogen-hunyuanvideo-{s}" for s in ("base", "vae-tiling", "cpu-offload", "8bit", "8bit-cpu-offload",
                                                                 "8bit-cpu-offload-vae-tiling", "4bit", "4bit-vae-tiling",
                                                                 "4bit-cpu-offload-vae-tiling")),
                # after measured batch 15's first sight (ediff6): diffusers 0.11.1's StableDiffusionPipeline keeps its safety
                # checker on the device and attends with the n x n scores whole (--attention math, no coefficient); written
                # while reading these rows' -27.6 / -34.9 %
                "diffusers-1934-sd15-fp16-resident-512-gtx1080", "diffusers-1934-sd15-fp16-resident-512-titan-rtx",
                # after measured batch 15's first sight (ediff6): the hybrid-inference page's percentages read as torch's reserved
                # peak (a fixed size on 8-24 GB cards, no CUDA context in their intercept; mapping_changes), written while
                # reading these rows' +10.7..+32.5 %
                *(f"diffusers-docs-hybrid-vae-decode-{s}-rtx4090" for s in ("sd1-512x512-untiled", "sd1-1024x1024-untiled",
                                                                             "sd1-1024x1024-tiled", "sdxl-1024x1024-untiled")),
                # batch 18, after first sight (ediff9): diffusers' KL tiling takes the runner's own tile size (policy tile,
                # vae.phase; InvokeAI's VAE benchmark sets tile_sample_min_size 512 on the SDXL VAE, whose config says 1024;
                # no coefficient), written while reading this row's +205.4 %
                "invokeai-vaebench-sdxl-vae-fp16-tiled-decode-2048",
                # batch 18, after first sight (ediff9): runner "wan" on Wan 2.2 modulates every token in fp32
                # (phases.WAN22_REFERENCE_MODULATION: e0, e and each block's modulation, read from Wan2.2's
                # wan/modules/model.py, no coefficient), written while reading these rows' -22.3 / -34.8 %
                "wan22-enhanced-ti2v-5b-fp32-sample-1280x704x161", "wan22-enhanced-ti2v-5b-fp32-sample-1280x704x361",
                # batch 18, after first sight (ediff9): FLUX.2's 128-channel KL latent decodes 16 px per latent pixel
                # (vae._scale; ComfyUI 0.8.0 comfy/sd.py 'bn.running_mean': upscale_ratio * 2, no coefficient), written
                # while reading this row's -72.6 % (the row itself is a commit message's rounded '~4.3GB')
                "invokeai-1904479a-flux2-vae-bf16-decode-1024-approx",
                # batch 21, after first sight (ediff11): SGLang's CI keeps the DiT on the device through the decode (its
                # load_peak_allocated_mb holds the DiT whole; a resident component is never moved off) and never the text
                # encoder (text_encoder_cpu_offload, FSDP2 CPU offload): mapping keep_on_device diffusion_model,
                # text_encoders cpu (mapping_changes), no coefficient; written while reading these rows' -4.6..-20.0 %
                "sglang-ci-h100-flux2-dev-bf16-1024-runtime-peak-allocated",
                "sglang-ci-h100-zimage-turbo-bf16-1024-runtime-peak-allocated",
                "sglang-ci-h100-flux1-dev-bf16-1024-runtime-peak-allocated",
                "sglang-ci-h100-qwen-image-bf16-1024-runtime-peak-allocated",
                # batch 23, after first sight (ediff13): SGLang PR #21248's Wan2.2-A14B H200 run read with every component
                # on the device (both experts, UMT5 in fp32, fp32 VAE decoding with its feature cache), the PR's 'no-offload
                # default'; the server_args.py defaults give 34.4 GiB against 95.4 (mapping_changes; mapping only, no estimate
                # code or coefficient), chosen while reading these rows' -63.9 / -67.0 %
                "sglang-21248-wan22-t2v-a14b-1280x720x81-1step-h200-allocated",
                "sglang-21248-wan22-t2v-a14b-1280x720x81-1step-h200-reserved",
                # batch 23, after first sight (ediff13): SGLang's LayerwiseOffloadManager holds the running streamed block and
                # the prefetched one (prefetch_size 1) beside the resident ones: offload_bytes two blocks short of every
                # streamed block (mapping_changes; mapping only, no coefficient), written while reading these rows' -20.3 / -12.2 %
                "sglang-31538-qwen-image-bf16-resident30-rtx5090", "sglang-31538-qwen-image-bf16-resident34-rtx5090",
                # batch 23, after first sight: the other three rows were read in the same round (ediff13) and left as they
                # were (no change found), so they are a regression set too, not held-out
                "sglang-16150-qwen-image-bf16-te-offload-1024-h100", "sglang-16150-qwen-image-bf16-layerwise-te-offload-1024-h100",
                "sglang-31538-qwen-image-bf16-layerwise-prefetch1-rtx5090",
                # batch 15, after first sight (ediff14): FastVideo's table ran diffusers 0.32.0 on torch 2.5.0 (its pins at the
                # table's commit), whose HunyuanVideo transformer passes a dense bool [B, N, N] attention mask that SDPA copies
                # to bf16 at each call (policy attention_mask dense, phases.dense_mask_bytes; read from the code, no
                # coefficient), written while reading the bf16 / NF4 rows' -19.1 / -24.8 %; the int8 row ran the same code.
                # Then the NF4 and int8 rows' llm_int8_skip_modules ['proj_out', 'norm_out'] mapped onto the Linears diffusers
                # 0.32.0 names so (hv13b_named_outs, keep_16bit; mapping only), written while reading the NF4 row's -19.4 %
                *(f"fastvideo-docs-fasthunyuan-{q}-model-offload-1280x720x45" for q in ("bf16", "int8", "nf4")),
                # batches 22, 24, 25 and 26, after first sight (ediff17): scored once (ledger) and never tuned on, they were in
                # view while round 17 read the rows over 25 % and changed the estimate, so from here they are a regression
                # set, not held-out: diffusion-fast's SD1.5 / SDXL / PixArt-alpha A100 CSVs (22), vLLM-Omni #1764's loaded
                # weights (24), SGLang #16704 / #17077's peak lines (25), LightX2V's Wan2.2 MoE guide on an H100 (26)
                *(f"diffusion-fast-{m}-{d}-{a}-{px}-a100" for m, px in (("sd15", 512), ("sdxl", 1024), ("pixart-alpha", 1024))
                  for d in ("fp32", "bf16") for a in ("math-attn", "sdpa")),
                "vllm-omni-1764-zimage-turbo-bf16-loaded-a100", "vllm-omni-1764-zimage-turbo-fp8-loaded-a100",
                "vllm-omni-1764-qwen-image-bf16-loaded-a100",
                "sglang-16704-wan21-t2v-1.3b-832x480x100-h200-offload-allocated",
                "sglang-17077-wan22-ti2v-5b-1280x704x121-b200-resident-allocated",
                "lightx2v-guide-wan22-t2v-a14b-bf16-1280x720x81-h100",
                "lightx2v-guide-wan22-t2v-a14b-bf16-model-offload-1280x720x81-h100",
                # batch 15, after first sight (eworst18): SkyReelsInfer's --parameters_level offloader moves groups of whole
                # blocks of just over 600 MiB, the running group and the prefetched next beside the non-block modules
                # (skyreelsinfer/offload.py; offload_bytes, mapping only, no coefficient), and --quant makes its Llama text
                # encoder fp8 too; written while reading this row's -49.0 %
                "skyreels-v1-readme-t2v-fp8-param-offload-960x544x97",
                # batch 28, after first sight (etune28): LightX2V's block offload and SGLang's layerwise offload stream the DiT's
                # blocks whole and keep two on the device beside its non-block modules (row policy blocks_in_flight 2,
                # streamed_offload_bytes; read from their offload code; mapping only, no coefficient), written while reading these
                # rows' -19.3 / -33.8 %
                "dbf-lx2v-repro-wan21-i2v-14b-480p-lightx2v-block-offload-bf16-4090",
                "dbf-lx2v-repro-wan21-i2v-14b-480p-sglang-layerwise-all-4090",
                # batch 30, after first sight (etune2930): diffusers' enable_sequential_cpu_offload keeps every model's
                # buffers on the device (accelerate cpu_offload with offload_buffers False; SD3.5's PatchEmbed pos_embed,
                # weights.SEQUENTIAL_RESIDENT_BUFFERS; read from diffusers' and accelerate's code, no coefficient), written
                # while reading these rows' -49.9 / -52.4 %
                "gperdrizet-u6-sd35-medium-fp16-sequential-offload-512-p100",
                "gperdrizet-u6-sd35-large-turbo-fp16-sequential-offload-512-gtx1070",
                # batches 29 and 30, after first sight: the other rows were in view in the same round (etune2930 read batch
                # 30's model-offload and weights-bound rows and looked at batch 29's decode) and left as they were, so they
                # are a regression set too, not held-out (the batch 23 precedent)
                "gperdrizet-u6-sd35-medium-fp16-model-offload-512-p100",
                "gperdrizet-u6-sd35-medium-fp16-pipe-to-cuda-oom-p100-weights-bound",
                *(f"vllm-omni-1854-sd35-medium-{a}-512-rtx5090-{c}" for a in ("bf16", "t5-fp8") for c in ("allocated", "reserved")),
                "vllm-omni-5131-sd35-medium-bf16-512-8steps-rtx5090", "vllm-omni-5131-sd35-medium-bf16-768-16steps-rtx5090",
                # batch 31, after first sight (etune31): diffusers keeps SD's safety checker on the device under both offloads
                # (_exclude_from_cpu_offload; weights.DIFFUSERS_EXCLUDED_FROM_OFFLOAD, read from diffusers' code, no
                # coefficient), the streamed VAE layer is in the decode dtype (mapping of accelerate's cast, no coefficient),
                # and the KL decode on Pascal (policy gpu_arch; vae.DIFFUSERS_KL_DECODE_ARCH fp16 / fp32, FITTED on this
                # batch's and batch 30's sequential rows); written while reading these rows' -66.2 .. +26.5 %. Every row
                # of the batch was read in the round, the two weights bounds too, so all 21 are a regression set
                *(f"gperdrizet-u6-{m}-fp16-{mode}-512-{card}" for card, models in (
                    ("p100", ("sd14", "sdxl-base", "sdxl-turbo", "pixart-alpha-xl2-512")),
                    ("gtx1070", ("sd14", "sdxl-base", "sdxl-turbo"))) for m in models
                  for mode in ("resident", "model-offload", "sequential-offload")
                  if not (card == "gtx1070" and mode == "resident" and m != "sd14")),
                "gperdrizet-u6-sdxl-base-fp16-pipe-to-cuda-oom-gtx1070-weights-bound",
                "gperdrizet-u6-sdxl-turbo-fp16-pipe-to-cuda-oom-gtx1070-weights-bound",
                # batch 33, after first sight (etune33): a working row is the rise over the VAE as the run loaded it (the
                # peak phase's weights, fp32 VAEs at 4 bytes; mapping, no coefficient), an fp32 KL convolution takes one
                # copy of its input as workspace (cuda_conv.FP32_COPIES, FITTED on the FLUX AE fp32 rows), and diffusers'
                # KL decoder in fp16 on newer GPUs allocates 1216 per pixel (vae.DIFFUSERS_KL_DECODE_DTYPE, FITTED on the
                # SDXL fp16 rows, batch 18's two with them), each checked on a meta trace of the decoder the rows ran;
                # written while reading these rows' +39.5 .. -19.6 %. Every row of the batch was read in the round, the bf16
                # FLUX AE rows too, so all 22 are a regression set; so are batch 18's InvokeAI decode rows and the two
                # wan22-enhanced working rows the mapping moved (-14.8 / -13.8 -> -21.2 / -19.5 %)
                *(f"invokeai-vaebench-flux-ae-{d}-decode-{px}" for d, sizes in (("bf16", (512, 768, 1536, 2048)),
                                                                                 ("fp32", (512, 768, 1024, 1536))) for px in sizes),
                *(f"invokeai-vaebench-sdxl-vae-{d}-decode-{px}" for d, sizes in (("fp16", (512, 768, 1024, 2048)),
                                                                                  ("fp32", (512, 768, 1024, 1536, 2048)))
                  for px in sizes),
                *(f"invokeai-vaebench-sdxl-vae-{d}-tiled-decode-{px}" for d, sizes in (("fp16", (1024, 1536)),
                                                                                        ("fp32", (1024, 1536, 2048)))
                  for px in sizes),
                "invokeai-vaebench-flux-ae-bf16-decode-1024", "invokeai-vaebench-flux-ae-fp32-decode-2048",
                "invokeai-vaebench-sdxl-vae-fp16-decode-1536",
                "wan22-enhanced-ti2v-5b-vae-fp32-decode-working-1280x704x161",
                "wan22-enhanced-ti2v-5b-vae-fp32-decode-working-1280x704x361",
                # batches 34 and 35, after first sight (etune35): a weights row holds the VAE in the dtype the run keeps it
                # in (weights_as_held: the estimate's VAE at its vae_dtype; mapping, no coefficient), written while reading
                # batch 35's fp32 staged WanVAE (-50 %); the Wan 2.1 decode (LightVAE README, -58.6 %) was checked on a
                # meta trace of the code the row ran and left unexplained. Every row of both batches was read in the round
                # (batch 34 only for what is general), so all 26 are a regression set
                *BATCH34_35,
                # batch 36, after first sight (etune36): two mappings, no coefficient. Z-Image-Turbo's offload record
                # (diffusers PR #14304) is the estimate's offload 'encoders' (the text encoder offloaded when the
                # transformer loads, the VAE beside it), not models 'resident' (which keeps the text encoder: +48.6 %);
                # ComfyUI #9220's Qwen-Image text encoder is the language model alone, as ComfyUI built it before #9412
                # (no vision tower: +9.6 %). The LightX2V rows were read against LightX2V's code at c3b0d634 and left:
                # the 14B T2V figures lie under the weights plus the live set of its own FFN. Every row of the batch was
                # read in the round, so all 13 are a regression set
                *BATCH36,
                # est51, held-out rows read against their sources (mapping only, no coefficient): the Quanto post's SD3
                # runs held CLIP-G in 16 bits whatever its 'Quantize TE 2' flag (its own table: TE 1+2 = TE 1 to the MB);
                # the Wan 2.1 README's 8.19 GB is an allocated peak (Wan2.1#161: the same flags reserved 10.64 GiB)
                *(f"hf-blog-quanto-sd3-medium-fp8-te{t}" for t in ("111", "110", "010", "011")),
                "wan21-readme-t2v-1.3b-offload-t5cpu-832x480x81",
                # batch 37, after first sight: the A14B decode row's family set to the VAE's (wan21) where the collector
                # had copied batch 18's 5B row (wan22); mapping only, read with its figure in view
                "wan22-enhanced-t2v-a14b-vae-fp32-decode-working-832x480x161"}
# Rows kept in the data and in the results file but scored in no median, worst or bound count: a reference that cannot
# be a peak of the run it names. Each with its reason (and a mapping_changes entry in the data file); never a FIT row.
NOT_SCORED = {
    # batch 19, after first sight (ediff10): cache-dit's '~1GiB' for diffusers' sequential offload is rounded to the whole
    # GiB (0.5-1.5 GiB: +-50 %, no point score at a 10 % goal), and no whole run that decodes 1024x1024 untiled stays
    # under 1.5 GiB: the FLUX AE's bf16 decode alone allocates 2.13 GiB beyond its weights (InvokeAI's VAE benchmark,
    # held-out row invokeai-vaebench-flux-ae-bf16-decode-1024, ours +0.6 %), and cache-dit's example CLI tiles only with
    # --vae-tiling (vipshop/cache-dit e58c948c src/cache_dit/_utils/utils.py l.1904-1908). The table measured a window
    # of the run (or a harness) the doc does not name.
    "cache-dit-offload-doc-flux1-dev-bf16-sequential-offload-1024-l20":
        "'~1GiB' (0.5-1.5 GiB) is below the run's own untiled 1024 FLUX AE decode (2.13 GiB allocated, InvokeAI's "
        "VAE benchmark): not a whole-run peak",
    # round 13 (ediff12), reading the FIT rows over 25 %: diffusers-recipes' 'Peak VRAM' is the largest NVML usedGpuMemory
    # its harness saw in a loop that sleeps 0.05 s (asomoza/diffusers-recipes 813e4f68 benchmark.py measure_memory_usage),
    # and under sequential offload the device memory falls back between layers; 1.86 GiB is below the run's own untiled
    # 1024 FLUX AE decode (ZImagePipeline: self.vae.decode, no tiling; 2.13 GiB allocated over the weights, InvokeAI's VAE
    # benchmark, held-out row invokeai-vaebench-flux-ae-bf16-decode-1024, ours +0.6 %). Was a FIT row (batch 14: the
    # sequential-offload slack was written while reading it); its first sight stays in the ledger.
    "diffusers-recipes-zimage-turbo-bf16-sequential-offload-1024":
        "an NVML poll every 0.05 s (benchmark.py), 1.86 GiB, below the run's own untiled 1024 FLUX AE decode (2.13 GiB "
        "allocated over the weights, InvokeAI's VAE benchmark): a sample that missed the decode, not the peak",
}
LEDGER = REPO / "benchmarks" / "results" / "estimate_first_sight.json"


def _measured_components(r):
    """The row's components as our inputs would give them: layouts (the T5/transformer requantized to the row's
    storage type, as the file the user would pass), or a published parameter count on the family's keys."""
    if r.get("components") or r.get("layout"):
        comps = []
        for name in r.get("components") or [r["layout"]]:
            comps += families.split_components(_table_or_synth(name), r["family"] if name == (r.get("components") or [r.get("layout")])[0] else name)
        if r.get("layout"):
            comps = [c for c in comps if c["role"] == "diffusion_model"]
    else:  # a published parameter count on the family's detection keys (bf16)
        keys = {"adaln_single.emb.timestep_embedder.linear_1.bias": (r["hidden"],),
                "transformer_blocks.0.attn2.to_k.weight": (r["hidden"], r["cross_attention_dim"])}
        n = r["params"] - r["hidden"] * (1 + r["cross_attention_dim"])
        if r.get("largest_layer"):  # the published count with the model's largest layer split out at its shape
            keys["blocks.0.ff.weight"] = tuple(r["largest_layer"])
            n -= r["largest_layer"][0] * r["largest_layer"][1]
        comps = families.split_components(blob("BF16", n, **keys), r["family"])
    if r.get("phase") in ("sample", "sample-offload"):
        comps = [c for c in comps if c["role"] == "diffusion_model"]
    out = []
    for c in comps:
        dt = r.get("dm_dtype") if c["role"] == "diffusion_model" else r.get("te_dtype") if c.get("kind") == "t5-xxl" else None
        if c["role"] == "text_encoder" and c.get("kind") in (r.get("te_quant") or {}):  # per encoder kind (batch 3 rows)
            dt = r["te_quant"][c["kind"]]
        if dt:
            # modules the quantizing library leaves in 16 bits (bitsandbytes replaces nn.Linear only: embeddings stay,
            # and transformers also skips the output head): keep_16bit for the diffusion model, te_keep_16bit for encoders
            keep = tuple(r.get("keep_16bit" if c["role"] == "diffusion_model" else "te_keep_16bit") or ())
            t = {k: (v if any(p in k for p in keep) else q) for (k, v), q in zip(c["table"].items(), W.requant(c["table"], dt).values())}
            if c["role"] == "diffusion_model" and r.get("tensor_types"):  # per-tensor storage types the file records
                t = {k: (next((ty for p, ty in r["tensor_types"] if p in k), d) if d != c["table"][k][0] else d, sh)
                     for k, (d, sh) in t.items()}
            c = dict(c, table=t, bytes=sum(tensor_bytes(d, s) for d, s in t.values()))
        if c["role"] == "text_encoder" and r.get("te_keeps_head"):  # the runner's text encoder builds its lm_head
            c = dict(c, resident=W.resident_bytes(c["table"]))      # (DiffSynth-Studio), where ComfyUI's has none
        fp32 = tuple(r.get("te_keep_fp32") or ()) if c.get("kind") == "t5-xxl" else ()
        if fp32:  # kept in fp32 by the runner's loader: 4 bytes each, whatever the cast policy says
            t = c["table"]
            rest = {k: v for k, v in t.items() if not any(p in k for p in fp32)}
            c = dict(c, resident=W.resident_bytes(rest) + sum(4 * math.prod(s) for k, (d, s) in t.items() if k not in rest))
        out.append(c)
    return out


def streamed_offload_bytes(comps, blocks_in_flight=None):
    """offload 'all' as bytes kept off the device. blocks_in_flight None: the whole diffusion model, one streamed layer
    in flight (1 << 50: every byte). N: a runner that streams the model's numbered blocks whole and keeps N block
    buffers on the device (the running block and the prefetched ones), its non-block modules resident: the numbered
    blocks' bytes less N of the largest (LightX2V's block offload: two cuda buffers, WanTransformerWeights
    offload_blocks_num 2; SGLang's LayerwiseOffloadManager: the running layer and prefetch_size 1 more). The estimate
    still adds its one streamed layer (weights.OFFLOAD_LAYERS) to the sample phase for any offloaded bytes."""
    if blocks_in_flight is None:
        return 1 << 50
    n = blocks_in_flight
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"blocks_in_flight must be a whole number of blocks, 1 or more, not {n!r}")
    dm = max((c for c in comps if c["role"] == "diffusion_model"), key=lambda c: c["bytes"])
    blocks = [W.resident_bytes(t) for t in W.numbered_blocks(dm["table"])]
    if not blocks or n > len(blocks):
        raise ValueError(f"blocks_in_flight {n}: the diffusion model has {len(blocks)} numbered blocks")
    return sum(blocks) - n * max(blocks)


def weights_as_held(e):
    """A weights row's figure: each component as the run holds it. The VAE is counted as the estimate holds it, in the
    dtype it runs in (e["_ctx"]["w"]["vae"]: ComfyUI moves the VAE to its vae_dtype, comfy/sd.py VAE.__init__
    first_stage_model.to(vae_dtype); diffusers and Wan's runner load it in the dtype they decode in), not at the
    file's bytes: a row whose policy says vae_dtype fp32 holds a 16-bit VAE file at 4 bytes a parameter. Except an
    upcast at decode time (diffusers' SDXL pipelines, V.UPCAST_WHY: vae.to(float32) inside the decode): after loading,
    before the run, that VAE is still as loaded."""
    ctx = e["_ctx"]
    comps = ctx["components"]
    vaes = [c for c in comps if c["role"] == "vae"]
    rest = sum(c["resident"] for c in comps if c["role"] != "vae")
    if not vaes or ctx["vae_dtype_why"] == V.UPCAST_WHY:
        return rest + sum(c["resident"] for c in vaes)
    return rest + ctx["w"]["vae"]


def measured():
    """(row, ours, ComfyUI's weights + memory_required or None, reference) for each published measured peak,
    compared as the row says (compare: torch_allocated, torch_reserved, nvidia_smi, weights; working_allocated and
    working_reserved for a peak measured as the rise over the loaded model, so without its weights)."""
    out = []
    for r in json.loads(MEASURED.read_text())["rows"]:
        comps = _measured_components(r)
        pol = {"_no_knobs": True}
        pol.update({k: v for k, v in (r.get("policy") or {}).items()
                    if (k != "offload" or v in E.OFFLOAD_MODES) and k != "blocks_in_flight"})
        if (r.get("policy") or {}).get("offload") == "all":  # the diffusion model streamed, the rest as the row says
            pol["offload_bytes"] = streamed_offload_bytes(comps, r["policy"].get("blocks_in_flight"))
        e = E.estimate(comps, r["width"], r["height"], r["frames"], r["batch"], cfg=r["cfg"], policy=pol)
        bd = e["breakdown"]["sample"] if "sample" in e["breakdown"] else None
        how = r.get("compare", "torch_allocated")
        resident = sum(c["resident"] for c in e["_ctx"]["components"])
        if how in ("working_allocated", "working_reserved"):
            # a rise over the loaded model: what was loaded is the weights as the run holds them (a VAE loaded in fp32
            # holds twice its 16-bit file: InvokeAI's VAE benchmark loads with torch_dtype float32, Wan's runner builds
            # its VAE in fp32), the peak phase's weights, not the file's bytes
            resident = e["breakdown"][e["peak_phase"]]["weights"]
        sampling = r.get("phase", "sample").startswith("sample")
        if sampling and how in ("torch_reserved", "nvidia_smi"):
            # a sampler's own counter: the sample phase, not the estimate's overall peak (which may be the decode of
            # the family's usual VAE that the estimate adds after it); reserved = + the allocator margin, device = + the
            # CUDA context (as peak_device: no ComfyUI reserve), and the cache the allocator keeps through sampling
            ours = bd["weights"] + bd["activations"] + bd["allocator_margin"] + bd.get("cached_slack", 0)
            if how == "nvidia_smi":
                ours += e["fixed"]["cuda_context"]
        elif how == "weights":
            ours = weights_as_held(e)
        elif how == "working_allocated":  # a peak counted from after the model loaded: peak_torch less the weights
            ours = e["peak_torch"] - resident
        elif how == "working_reserved":  # the same for max_memory_reserved: peak_device less the context and weights
            ours = e["peak_device"] - e["fixed"]["cuda_context"] - resident
        elif how == "torch_reserved":
            ours = e["peak_device"] - e["fixed"]["cuda_context"]
        elif how == "nvidia_smi":  # the process's device memory: CUDA context + reserved
            ours = e["peak_device"]
        elif r.get("phase", "sample").startswith("sample"):
            ours = bd["weights"] + bd["activations"]
        else:
            ours = e["peak_torch"]
        comfy = bd["weights"] + e["comfyui_memory_required"] if r.get("phase", "sample").startswith("sample") else None
        out.append((r, ours, comfy, r["measured_gib"] * GiB))
    return out
