"""vLLM's profile run: the activation peak it measures before sizing the KV pool (the larger of one forward of
max_num_batched_tokens, the sampler warm-up on max_num_seqs rows with a fused-MoE workspace still held, and the vision
tower on copies of its largest dummy item). Split from vllm.py, which keeps the reservation arithmetic and re-exports the
names its callers use; the coefficients are fitted on vLLM's printed peaks (cited with each)."""
from . import at_least

# V1's sampler warm-up on max_num_seqs rows of fp32 logits. How many copies it keeps depends on the top-k/top-p
# implementation, which the log names: "Falling back to the PyTorch-native implementation of top-p & top-k
# sampling" sorts the whole logits tensor (sorted values, int64 indices, probabilities, cumulative sums, masks);
# "Using FlashInfer for top-p & top-k sampling" samples from the probabilities without a sort (vllm#11394).
# Native is what a plain install runs (no FlashInfer, or a FlashInfer the version cannot use, or the sampler off
# by default: vllm#29415) and what 0.11's llm-d H100 runs print: 9.6-9.7 copies (a fitted figure); FlashInfer:
# 3 copies (dennislee22/vLLM-benchmarking, 0.10.1.1 with flashinfer-python, whose log prints "Using FlashInfer").
SAMPLER_COPIES_NATIVE = 9.7
SAMPLER_COPIES_FLASHINFER = 3
# From 0.16 the non-FlashInfer path masks top-k/top-p with Triton kernels instead of sorting the logits
# (vllm-project/vllm#33538, merged February 2026 between 0.15.1 and 0.17.1; PyTorch stays only for small batches,
# and the profile's dummy batch is max_num_seqs rows). The PR's own table: 384 MB against PyTorch's 1.25 GB for 256 x
# 131072 fp32 logits, ~2.9 copies against ~9.3: the sampler warm-up then holds about what FlashInfer's does
# (akiyax/kvcache-lab, vLLM 0.26.0 with VLLM_USE_FLASHINFER_SAMPLER=0: 1.04 GiB of peak activation including the
# CUDA-graph estimate for Qwen2.5-7B at 256 sequences, where 9.7 copies alone would be 1.41 GiB).
# The 2.9 of that table is the masking kernel alone: the warm-up's peak, with the logits and the softmax and noise
# tensors random sampling adds, is 3.7-4.1 copies in every dense single-GPU 0.19.0 run of llm-d-planner's H100
# sweep at 1024 sequences (Llama-3.1-8B 3.86, Qwen2.5-7B / Qwen3-8B 3.81, Gemma 2 3.71-3.75, gpt-oss-20b 3.74,
# Phi-4 3.97, Mistral-Small-3.1 4.06: "torch peak memory increase" / (1024 x vocab x 4 bytes)); akiyax/kvcache-lab's
# 0.26.0 Qwen2.5-7B at 256 sequences (1.04 GiB with a 0.48 GiB graph estimate) gives 3.9. A fitted figure.
SAMPLER_COPIES_TRITON = 3.85
# A fused-MoE model's expert kernels take their scratch from vLLM's persistent WorkspaceManager (v1/worker/
# workspace.py: buffers grow to the largest request and stay), so the profile's MoE workspace is still held while the
# sampler warms up: TritonExperts.workspace_shapes, M = max_num_batched_tokens rows x top-k experts, workspace1
# max(intermediate, hidden) and workspace2 max(2 x intermediate, hidden) values, 16-bit. 0.19.0's peaks on an H100:
# Qwen3-30B-A3B 2.68 GiB = the sampler's 2.23 + 0.5; DeepSeek-V2-Lite 1.93 = 1.50 + 0.45 (llm-d-planner). MXFP4
# experts run other kernels (gpt-oss-20b's 2.87 GiB is the sampler alone). First seen in 0.19.
MOE_WORKSPACE_HELD = (0, 19)
# FORWARD_IN_WORKSPACE: the same buffers are the profile forward's MoE intermediates. TritonExperts.apply (fused_moe.py
# at 0.20.2) writes the gate/up output (M, top-k, 2I) into workspace2, the activation (M x top-k, I) into workspace13
# and the down output (M, top-k, hidden) into workspace2 again, and the modular kernel reuses workspace13 for the summed
# output (modular_kernel._allocate_buffers: "Reuse workspace13 for the output"), so the forward holds the workspace's
# top-k x (max(I, hidden) + max(2I, hidden)) values a token, not top-k x (3I + hidden): more where I < hidden / 3 (a
# tensor-parallel rank's share of the experts, fine-grained experts). The layer's 5 hidden-size tensors (input,
# residual, quantized input, router output, the reduced output) stay on top. Qwen3-235B-A22B-FP8 at TP 4 (0.20.0,
# batch 117, Triton experts): the printed pools at 8192 / 32768 / 65536 batched tokens grow by 155-169 KB a batched
# token, the workspace alone by 131 KB. A floor under the old term, not a replacement: where the old term is larger
# the experts may not be Triton's (NVFP4, FlashInfer TRTLLM: the backend is vLLM's pick, no input here) and
# Nemotron-3-Nano's NVFP4 starts print peaks above even the old term. Gated with MOE_WORKSPACE_HELD, as that term.
# V1 before its sampler was profiled (vllm#13507: "V1 model runner does not consider (or run) sampler during the initial
# memory profiling"; fixed by vllm#13594 after 0.7.3, so from 0.8): profile_run ran the forward, then compute_logits, in
# the model dtype, with the forward's hidden states still held. Its first form took the logits of every one of the
# max_num_tokens rows ("logits = self.model.compute_logits(hidden_states, None); logits = logits[:self.max_num_tokens]"
# next to the per-call dummy_kv_caches of the January 2025 runner); the next one first picks each dummy request's last
# row (hidden_states[logit_indices]: max_num_seqs rows). The release that moved to the last rows is not read: taken as
# 0.7.2 (vllm#12569's January build, between 0.7.0 and 0.7.1, prints the first form's pool).
V1_SAMPLER_PROFILED = (0, 8)
V1_LOGITS_LAST_ROWS = (0, 7, 2)
TRITON_SAMPLER = (0, 16)
# V0's profile step samples the dummy batch with top-k/top-p (sorted logits, probabilities, log-probabilities):
# its printed peaks are 9.8-10.3 fp32 copies of max_num_seqs x vocab (vllm#13882 0.7.3, the T4 and GGUF 0.8.2
# rows, vllm#10511 0.6.5). A fitted figure, like SAMPLER_COPIES_NATIVE.
SAMPLER_COPIES_V0 = 9.9
# forward: per token, the MLP's gate/up output (2 x intermediate) and its activation (1 x intermediate) live
# together with the residual stream and the hidden state (2 x hidden), in 16 bits; x 1.08 for the allocator's
# rounding and the attention buffers (slope of vllm#10517's two Llama-3.1-8B peaks: 2.07 GiB at 20000 tokens,
# 2.99 GiB at 29000: 110 KB per token, where (3 x 14336 + 2 x 4096) x 2 = 102 KB). A fitted figure.
FORWARD_FACTOR = 1.08
# vision encoder: vLLM's profile run also runs the vision tower on a dummy image of the largest size the
# processor accepts, in V1 as many copies as its budget holds (PROFILE_ITEMS); the runs fitted here encode one ("Encoder
# cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum feature
# size"); its peak is the encoder's activations on every patch, ~16 copies of the
# tower's hidden state in 16 bits per patch (a fitted figure: Qwen2.5-VL-7B's printed 2.71 GiB on a T4, vLLM 0.9.2
# V0, and Qwen2.5-VL-3B's 2.4 GiB of non-KV memory on an RTX 4090 D, 0.9.2 V1; johnson7788/RLDecisionAgent).
# Qwen2-VL / Qwen2.5-VL take images up to 12845056 pixels (max_pixels) in 14-pixel patches: 65536 patches.
ENCODER_BYTES_PER_HIDDEN = 32
QWEN_VL_MAX_PIXELS = 12845056
QWEN_VL_MAX_FRAMES = 16       # qwen2_vl.py _MAX_FRAMES_PER_VIDEO: the dummy video's frame cap
# Llama 4's dummy image is max_patches tiles tall and one wide (vLLM 0.20.2 mllama4.py:576-584
# get_image_size_with_most_features, "h:w = 16:1"); the processor cuts it into a 16 x 1 grid of image_size tiles and
# adds a global thumbnail tile when there is more than one (611-638: patches_per_image = 1 + r_h x r_w), and the tower
# runs every tile at once, each (image_size / patch)^2 patches and a class token (507-546). 16 when the config's
# preprocessor_config gives no max_patches: Scout's and Maverick's processor metadata, and a processor file that
# names none (NVIDIA aiconfigurator's Llama 4 tests; transformers' Llama4ImageProcessor itself not read).
LLAMA4_MAX_TILES = 16
# PROFILE_ITEMS: V1's profile does not encode one item but N copies of it in ONE batch (vLLM 0.20.2
# gpu_model_runner.py:5815-5838: one dummy item, _get_mm_dummy_batch 5221-5248 repeats it N times, one
# embed_multimodal call). N = encoder_budget.py:142-178 _get_max_items: max(1, min(budget // T, max_num_seqs x
# max(1, max_model_len // T))), T the item's prompt tokens, budget = max(max_num_batched_tokens, T) (encoder_budget.py
# 188, encoder_cache_manager.py:309-314, config/scheduler.py:235-236), with --limit-mm-per-prompt's cap (MM_LIMIT below).
# Logs in the data agree from 0.10.1.1 ("profiled with 31 image items", Gemma 3 at 8192) to 0.23 builds (Qwen3.6 at
# 65536: 4 items, as kv says since kv64 gave the Qwen3.6 built-ins their processor's 16,384-token image, on top of the
# tower's per-rank split, ENCODER_TP; docs/kv-accuracy.md). Not counted: the N outputs
# vLLM holds in encoder_cache through the forward (N x T x hidden, 16-bit: 88 MB for Gemma 3 27B at 8192), tried on
# the design rows and not kept. The 32 B above was fitted on 1-item runs (T = budget); Gemma 3's 32-image batch
# (4.50 GiB at 32 B) over-reserves (0.19.0 rows: +1.14% -> -2.19% KV tokens), the Qwen3.6 65536-token rows gain.
# PIXTRAL_MERGE: a Pixtral item's T is its [IMG] embeddings alone, (side / (patch x merge))^2 for the dummy's side^2
# image (vLLM main 6097afb9b, 2026-04-20: encoder_budget.py:15-41 sums get_num_embeds(); pixtral.py:262-268 marks
# [IMG_BREAK] / [IMG_END] as no embedding; the side is max_image_size, pixtral.py:147-151, or image_size on the HF path,
# mistral3.py:198-201). merge: spatial_merge_size, 1 unless params.json names one (VisionEncoderArgs, pixtral.py:611)
# and on the HF path getattr(hf_config, "spatial_merge_size", 1) (pixtral.py:1111-1114): Mistral3Config's 2, Llava's
# (Pixtral-12B) 1, spec.py's "_merge". Before vllm#16076 (2025-04-07, first in 0.8.4) T was (ncols + 1) x nrows.
PIXTRAL_EMBEDS_ONLY = (0, 8, 4)
# MM_LIMIT: vLLM's --limit-mm-per-prompt (config/multimodal.py:259-273 at 6097afb9b: a modality not given is 999). It
# caps the items a prompt holds, max(1, min(limit, max_model_len // T)) (encoder_budget.py:157-162); a modality at 0 is
# no tower modality, so neither profiled (72-77) nor, with all of its tower's at 0, built (interfaces.py:249-288,
# _mark_tower_model: image and video for Qwen-VL and Gemma 4's vision tower, image alone for the others; audio alone).
MM_LIMIT_DEFAULT = 999
MM_MODALITIES = ("image", "video", "audio")
# MM_DUMMY: a modality's value may also be {"count": N, option: value} (vllm#25631, merged 2025-10-03; at
# 0.23.1rc1.dev531+ga65f93fb2 config/multimodal.py:17-45: image width/height, video num_frames/width/height, audio length,
# each > 0, no other key: extra="forbid"). The options shrink the dummy item the profile encodes: _get_dummy_images
# takes min(the model's side, the option) for each side (multimodal/processing/dummy_inputs.py:115-143), and the
# model's processor then resizes that image as any other. Under the Qwen-VL rule (Qwen2-VL to Qwen 3.5+ and dots.ocr:
# qwen2_vl.py:965-1016 get_image_size_with_most_features factors the processor's largest token count into unit x
# (w, h) with w / h <= 200, unit = patch x merge; transformers 5.25.0 image_processing_qwen2_vl.py:63-89 smart_resize)
# the item's T stays the processor's largest (get_mm_max_tokens_per_item, qwen2_vl.py:871-878, reads no option), so N
# does not change; the patches of each copy do. Other towers keep their largest item: Gemma 3 and LLaVA resize to their
# fixed side and Gemma 4 pads to max_soft_tokens x k^2 patches whatever the dummy's size; Pixtral, Llama 4 and the
# video options were not sized.
MM_OPTIONS = {"image": ("width", "height"), "video": ("num_frames", "width", "height"), "audio": ("length",)}
QWEN_VL_MIN_PIXELS = 56 * 56  # Qwen2VLImageProcessor's size.shortest_edge where the processor file names none
# ENCODER_TP: under tensor parallelism vLLM's default --mm-encoder-tp-mode "weights" (config/multimodal.py:145; "data"
# only where asked and the class supports it, model.py:630-640; no model defaults to it at 01d4d1ad3 or a65f93fb2)
# splits the tower's parallel layers over the ranks. Read for Qwen3_VisionTransformer (qwen3_vl.py, which
# qwen3_5.py builds for Qwen 3.5+: the same code at 4b7f5ea1a, 01d4d1ad3 and a65f93fb2), per patch in 16-bit values, d
# the tower's width, t the ranks, at the largest moment of a block: held all along, the bf16 pixel values (in_channels x
# temporal x patch^2; context.py _postprocess_output casts them to the model dtype), pos_embeds (d) and the rotary
# cos / sin (head_dim / 4 each of two axes, both: head_dim); in the attention at its RowParallel proj
# (Qwen2_5_VisionAttention, qwen2_5_vl.py), the block's input held by the loop, norm1's output and the proj output
# (3d) next to the split qkv (3d / t), qk_reshaped's contiguous copy (2d / t), qk_rotated (2d / t) and the flash
# output (d / t), and from t = 2 the all-reduce's out-of-place copy (d, parallel_state.py:502-529 "always ...
# out-of-place"); the MLP (Qwen3_VisionMLP, not gated) at most 3d + 2 x intermediate / t, or at fc2 3d +
# intermediate / t + d + the all-reduce's d. Layer norms, the patch embed, the residual stream and the merger's input
# are not split. The fitted 32 B stays the 1-GPU figure; a rank's term is 32 B x peak(t) / peak(1): Qwen3.6-27B's tower
# (d 1152, 16 heads, intermediate 4304, 16-pixel patches) 15,432 values a patch at t = 1, 11,976 at 2, 9,672 at 4.
ENCODER_TP_TOWERS = ("qwen3_vl", "qwen3_5", "qwen3_5_moe", "qwen3_5_vision")
# DEEPSTACK: Qwen3_VisionTransformer.forward (qwen3_vl.py from vllm#24727, the same at a65f93fb2) runs a deepstack
# merger after each block named in deepstack_visual_indexes and keeps its output, patches / merge^2 tokens of
# out_hidden_size (out_hidden_size / merge^2 values a patch), in deepstack_feature_lists until the final torch.cat: the
# blocks after the last index run with all of them held, on every rank whole (the mergers' fc2 is RowParallel, its
# output all-reduced). Qwen3-VL-8B (3 levels, out 4096): 3,072 values a patch beside ENCODER_TP's 15,432; 30B-A3B
# (out 2048) 1,536; Qwen 3.5+ has none (deepstack_visual_indexes []). The fitted 32 B stays the figure of a tower
# without them (peak(1) of the plain tower); the final cat, (1 + levels) x out_hidden_size / merge^2 twice beside d, is
# below the blocks' peak. The tower's output held in encoder_cache through the profile forward is not counted (as
# PROFILE_ITEMS says).
# ENCODER_TP_DATA: --mm-encoder-tp-mode data (vllm#23190 of 2025-08-20, the per-class switch vllm#23733 of 2025-08-27;
# config/multimodal.py:145 at a65f93fb2, "weights" the default) for a class
# that sets supports_encoder_tp_data (qwen3_vl.py, so Qwen 3.5+; else vLLM falls back to "weights", model.py:630-640):
# the tower is built unsplit on every rank (use_data_parallel: tp_size 1) and run_dp_sharded_mrope_vision_model
# (models/vision.py at a65f93fb2) gives each rank whole items, largest first to the least-loaded rank
# (get_load_balance_assignment): of N equal copies the first rank runs ceil(N / t), through the whole tower.
MM_ENCODER_TP_MODES = ("weights", "data")


# No term for a gated-DeltaNet layer's chunked-prefill temporaries (fla chunk_gated_delta_rule_fwd: the chunk states
# h, v_new, w, u, o and the fp32 A, ~90 KiB a token for 48 value heads of 128): the profile run builds no attention
# metadata, so the layer's core returns at once ("# V1 profile run" in qwen3_next / qwen_gdn_linear_attn _forward) and
# the pool is sized without them (vllm-project/vllm#54775, open). PR #55149 would have reserved them from the pool
# (gdn/chunk_workspace.py: S - 1 + ceil((T - S + 1) / 64) chunks at worst); its thread is closed, not merged. At serving
# they reuse the freed profile peak, which activation()'s forward term already exceeds for the Qwen 3.5+ models: 131 KiB
# a token against 90 for Qwen3.6-27B, 76 against 60 for Qwen3.6-35B-A3B (32 value heads).


# vLLM's own CUTLASS NVFP4 experts (--moe-backend cutlass: "Using 'VLLM_CUTLASS' NvFp4 MoE backend"; without the flag
# oracle/nvfp4.py tries FlashInfer's backends first, not read: the Triton term stays) hold more a token than that.
# CutlassExpertsFp4 (fused_moe/cutlass_moe.py at vLLM 4b7f5ea1a, 0.19.2rc1.dev8): workspace_shapes() asks workspace1 (M x topk,
# max(2N, K)) and workspace2 (M x topk, N) of the act dtype; run_cutlass_moe_fp4 then keeps the input shuffled into
# expert order (shuffle_rows(a, a_map): M x topk x K), its fp4 copy with block scales (scaled_fp4_experts_quant: K/2 +
# K/16 bytes a row), the intermediate's fp4 copy (N/2 + N/16), un-shuffles the down output into a new M x topk x K
# tensor (shuffle_rows(c3, c_map)) and multiplies it by the router weights (another M x topk x K) before the sum (M x K)
# into the output (M x K). K = hidden, N = moe_intermediate, 16-bit: topk x (3K + max(2N, K) + N) + 2K values and
# topk x 9 (K + N) / 16 bytes a token, next to the layer's 5 hidden-size tensors the Triton term counts. Gemma-4-26B-A4B
# (topk 8, K 2816, N 704): 246,752 B a token against the Triton term's 107,008 (batch 97, after first sight).
CUTLASS_FP4 = "cutlass"

# the names vLLM's --moe-backend accepts (vllm/config/kernel.py MoEBackend at 1CatAI/1Cat-vLLM ae13773a; arg_utils
# lower-cases them and turns "-" into "_" before the check); kv sizes only "cutlass" on NVFP4 weights differently
MOE_BACKENDS = ("auto", "triton", "deep_gemm", "deep_gemm_mega_moe", "cutlass", "flashinfer_trtllm", "flashinfer_cutlass",
                "flashinfer_cutedsl", "flashinfer_b12x", "marlin", "humming", "triton_unfused", "aiter", "emulation")


def moe_backend_name(value) -> str:
    """--moe-backend as vLLM reads it (lower case, "-" as "_"); a name vLLM does not accept is a UserError."""
    name = str(value or "auto").lower().replace("-", "_")
    if name not in MOE_BACKENDS:
        from ...errors import UserError
        raise UserError(f"--moe-backend {value!r} is not one of vLLM's: {', '.join(MOE_BACKENDS)}")
    return name


def cutlass_fp4(spec, weights_format, moe_backend) -> bool:
    """Whether the profile forward is sized as CutlassExpertsFp4: a MoE model, NVFP4 weights under any name vLLM's
    --quantization gives them (flags.VLLM_QUANTIZATION: modelopt_fp4 is nvfp4) and --moe-backend cutlass."""
    from ..flags import VLLM_QUANTIZATION
    fmt = str(weights_format or "").lower()
    return bool(spec.n_experts) and moe_backend == CUTLASS_FP4 and VLLM_QUANTIZATION.get(fmt, fmt) == "nvfp4"


def cutlass_fp4_per_token(spec) -> int:
    """Bytes a token of the profile forward through vLLM's CutlassExpertsFp4 (CUTLASS_FP4): per expert copy the
    shuffled input, the down output un-shuffled and weighted (3K), workspace1 and workspace2, then 2K (the CUTLASS sum
    and output) + 5K (the Triton term's hidden-size tensors) = 7K, in 16 bits, and the fp4 copies with their scales."""
    k, n, topk = spec.hidden, spec.moe_intermediate, spec.n_experts_per_tok
    return (topk * (3 * k + max(2 * n, k) + n) + 7 * k) * 2 + topk * 9 * (k + n) // 16


def moe_workspace(spec, max_batched: int) -> int:
    """Bytes of the fused-MoE scratch TritonExperts asks of the workspace manager for one profile batch."""
    i, d = spec.moe_intermediate, spec.hidden
    return max_batched * spec.n_experts_per_tok * (max(i, d) + max(2 * i, d)) * 2


def activation(spec, max_batched: int, max_seqs: int, version=(0, 6), v1: bool | None = None,
               sampler: str = "native", first_stage: bool = True, last_stage: bool = True,
               max_model_len: int | None = None, weights_format=None, moe_backend=None, aux_hidden: int = 0,
               mm_limits: dict | None = None, mm_dummy: dict | None = None, tp: int = 1,
               tp_mode: str = "weights") -> int:
    """Profile run peak: the larger of one forward of max_num_batched_tokens and the sampler on max_num_seqs
    rows (the forward's intermediates are freed before the sampler runs, in both engines), and, for a vision-
    language model, the vision tower's run on its largest item's copies (encoder_peak; one under V0). Calibrated on vLLM's
    own "PyTorch activation peak memory" lines (Llama-3.1-8B: 2.07 GiB at 20000 tokens and 2.99 at 29000,
    vllm-project/vllm#10517; V0 sampler peaks of vllm#13882, vllm#10511 and the 0.8.2 T4/GGUF rows; V1 from 0.11:
    Llama-3.1-8B 4.76, Qwen3-32B 5.64, Qwen3-0.6B 5.56 GiB at 1024 sequences, llm-d/llm-d-benchmark
    config_explorer/empirical-vllm-memory-results.md). v1: the engine (default: V1 from 0.8); sampler: the
    top-k/top-p implementation the log names ("native" sorts the logits, "flashinfer" does not). With pipeline
    parallelism only the last stage samples and only the first runs a vision tower. max_model_len: V1 profiles
    the modality whose one item has the most tokens, which for Qwen2-VL at a long context is a video
    (encoder_peak). aux_hidden: values a token of the target's tapped hidden states an EAGLE-3 / DFlash drafter
    reads, held beside the forward's last layers (vllm_drafter.AUX_METHODS), 16-bit. mm_limits: --limit-mm-per-prompt
    (mm_limits(), MM_LIMIT); mm_dummy: its dummy-item options (mm_dummy(), MM_DUMMY); tp: the tensor-parallel ranks
    (the tower's split, ENCODER_TP); tp_mode: --mm-encoder-tp-mode (ENCODER_TP_DATA)."""
    d = spec.hidden
    if v1 is None:
        from .vllm import V1
        v1 = at_least(version, *V1)
    held = (bool(spec.n_experts) and v1 and at_least(version, *MOE_WORKSPACE_HELD)
            and str(weights_format or "").lower() != "mxfp4")
    if spec.n_experts:  # fused MoE keeps top_k copies of the gate/up (2N), act (N) and down outputs per token
        per_token = (spec.n_experts_per_tok * (3 * spec.moe_intermediate + d) + 5 * d) * 2
        if cutlass_fp4(spec, weights_format, moe_backend):
            per_token = cutlass_fp4_per_token(spec)
        elif held:  # at least the workspace's two buffers and the layer's hidden-size tensors (FORWARD_IN_WORKSPACE)
            per_token = max(per_token, moe_workspace(spec, 1) + 5 * d * 2)
    else:
        per_token = (3 * spec.intermediate + 2 * d) * 2 * FORWARD_FACTOR
    forward = max_batched * (per_token + aux_hidden * 2)
    sampler_name = sampler
    if sampler == "flashinfer":
        copies = SAMPLER_COPIES_FLASHINFER
    elif v1 and at_least(version, *TRITON_SAMPLER):
        copies = SAMPLER_COPIES_TRITON
    else:
        copies = SAMPLER_COPIES_NATIVE if v1 else SAMPLER_COPIES_V0
    sampler = max_seqs * spec.vocab * 4 * copies if last_stage else 0
    if v1 and version is not None and not at_least(version, *V1_SAMPLER_PROFILED) and sampler_name != "flashinfer":
        # no sampler in the profile: the logits in the model dtype, next to the forward's hidden states
        rows = max_seqs if at_least(version, *V1_LOGITS_LAST_ROWS) else max_batched
        sampler = (rows * spec.vocab + max_batched * d) * 2 if last_stage else 0
    if sampler and held:
        sampler += moe_workspace(spec, max_batched)  # held from the forward (MOE_WORKSPACE_HELD)
    enc = (encoder_peak(spec, max_model_len if v1 else None, max_batched if v1 else None, max_seqs, mm_limits, version,
                        mm_dummy, tp, tp_mode) if first_stage else 0)
    return int(max(forward, sampler, enc))


def qwen_vl_video_grid_t(max_model_len: int, images: int = 1) -> int:
    """Temporal patches of the dummy video V1 profiles Qwen2-VL / Qwen2.5-VL with: the engine encodes one item of
    the modality whose largest item has the most tokens (gpu_model_runner.profile_run: "the model is profiled with
    a single non-text modality with the max possible input tokens"); the video's frames at the largest image size
    are as many as fit max_model_len minus one largest image's tokens (16384), at most _MAX_FRAMES_PER_VIDEO = 16,
    two frames to a temporal patch (qwen2_vl.py get_num_frames_with_most_features / _get_max_video_frames). At
    128000 tokens that is 12 frames, 6 temporal patches: six images' worth of patches through the tower. images: the
    largest images taken off first (0 when --limit-mm-per-prompt sets image to 0: no image is profiled beside it)."""
    tokens = QWEN_VL_MAX_PIXELS // (14 * 14 * 4)        # one frame pair (or image) at the largest size
    frames = 0
    while frames < QWEN_VL_MAX_FRAMES and -(-(frames + 1) // 2) * tokens <= max_model_len - images * tokens:
        frames += 1
    return max(-(-frames // 2), 1)


def mm_entries(value) -> dict:
    """vLLM's --limit-mm-per-prompt as {modality: {"count": N, option: value}}: JSON as 0.10+ takes it ('{"image": 2,
    "video": 0}', a modality's value a count or {"count": N, "width": W, ...}: MM_DUMMY; arg_utils parses the option
    with json.loads) or the key=value list earlier releases took ('image=2,video=0', removed by vllm#20969). A modality
    not given is MM_LIMIT_DEFAULT; a dict without "count" counts MM_LIMIT_DEFAULT (BaseDummyOptions.count)."""
    from ...errors import UserError
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            import json
            try:
                value = json.loads(text)
            except ValueError as e:
                raise UserError(f"--limit-mm-per-prompt {value!r} is not JSON: {e}") from None
        else:
            try:
                value = {k.strip(): int(n) for k, n in (p.split("=") for p in text.split(",") if p.strip())}
            except ValueError:
                raise UserError(f"--limit-mm-per-prompt {value!r}: give JSON ('{{\"image\": 2}}') or "
                                "image=N,video=M") from None
    if not isinstance(value, dict):
        raise UserError(f"--limit-mm-per-prompt {value!r}: give JSON ('{{\"image\": 2}}') or image=N,video=M")
    out = {}
    for k, n in value.items():
        options = {}
        if isinstance(n, dict):
            extra = sorted(set(n) - {"count", *MM_OPTIONS.get(k, ())})
            if k in MM_MODALITIES and extra:
                raise UserError(f"--limit-mm-per-prompt {k}: vLLM takes count and {', '.join(MM_OPTIONS[k])} for "
                                f"{k}, not {', '.join(extra)}")
            options = {o: n[o] for o in MM_OPTIONS.get(k, ()) if n.get(o) is not None}
            n = n.get("count", MM_LIMIT_DEFAULT)
        if k not in MM_MODALITIES or isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UserError(f"--limit-mm-per-prompt {k}={n!r}: kv reads a count of 0 or more for "
                            f"{', '.join(MM_MODALITIES)}")
        for o, x in options.items():
            if isinstance(x, bool) or not isinstance(x, int) or x <= 0:
                raise UserError(f"--limit-mm-per-prompt {k}.{o}={x!r}: vLLM takes a whole number above 0")
        out[k] = {"count": n, **options}
    return out


def mm_limits(value) -> dict:
    """--limit-mm-per-prompt's counts, {modality: count} (mm_entries)."""
    return {k: e["count"] for k, e in mm_entries(value).items()}


def mm_dummy(value) -> dict:
    """--limit-mm-per-prompt's dummy-item options, {modality: {option: value}} for the modalities that give one
    (MM_DUMMY)."""
    return {k: {o: x for o, x in e.items() if o != "count"} for k, e in mm_entries(value).items() if len(e) > 1}


def mm_limit_json(value) -> dict:
    """--limit-mm-per-prompt as vLLM 0.10+ takes it back: a modality's count, or its dict where it gives options."""
    return {k: e if len(e) > 1 else e["count"] for k, e in mm_entries(value).items()}


def qwen_vl_smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple:
    """(height, width) the Qwen2-VL image processor resizes an image to (transformers 5.25.0
    image_processing_qwen2_vl.py:63-89 smart_resize): each side rounded to a multiple of factor, then scaled down into
    max_pixels or up into min_pixels keeping the aspect ratio; past 200:1 the processor refuses the image."""
    import math
    from ...errors import UserError
    if max(height, width) / min(height, width) > 200:
        raise UserError(f"--limit-mm-per-prompt: a {width} x {height} dummy image is past the Qwen-VL processor's "
                        "200:1 aspect ratio, which it refuses")
    h, w = round(height / factor) * factor, round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h, w = max(factor, math.floor(height / beta / factor) * factor), max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h, w = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return h, w


def qwen_vl_dummy_patches(v: dict, width: int | None = None, height: int | None = None) -> int:
    """Patches of vLLM's dummy image under the Qwen-VL rule with --limit-mm-per-prompt's image width / height (MM_DUMMY):
    the largest image (max_pixels // unit^2 merged tokens factored as h x w, the squarest pair within 200:1), each side
    cut to the option, then resized by the processor (qwen_vl_smart_resize between its min and max pixels)."""
    from math import isqrt
    patch, merge = int(v.get("patch_size") or 14), int(v.get("spatial_merge_size") or 2)
    unit = patch * merge
    max_pixels = int(v.get("_max_pixels") or QWEN_VL_MAX_PIXELS)
    min_pixels = int(v.get("_min_pixels") or QWEN_VL_MIN_PIXELS)
    hf, wf = 1, max_pixels // (unit * unit)
    for n in range(max_pixels // (unit * unit), 0, -1):
        hf = next(d for d in range(isqrt(n), 0, -1) if n % d == 0)
        wf = n // hf
        if wf / hf <= 200:
            break
    h, w = qwen_vl_smart_resize(min(unit * hf, height or unit * hf), min(unit * wf, width or unit * wf), unit,
                                min_pixels, max_pixels)
    return (h // patch) * (w // patch)


def takes_video(v: dict, arch=None) -> bool:
    """Whether vLLM's class marks this vision tower for video as well as images (_mark_tower_model at 6097afb9b:
    qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_5 and gemma4_mm {"image", "video"}; dots_ocr, gemma3_mm, llava, mistral3,
    pixtral and mllama4 "image")."""
    kind = str(v.get("model_type") or "")
    if kind.startswith(("qwen", "gemma4")):
        return True
    return not kind and not v.get("image_size") and arch != "dots_ocr"  # Qwen2-VL / Qwen2.5-VL's config names none


def vision_off(v: dict, arch, limits: dict) -> bool:
    """The tower is not built: every modality vLLM marks it with is at 0 (MM_LIMIT)."""
    off = limits.get("image", MM_LIMIT_DEFAULT) == 0
    return off and (not takes_video(v, arch) or limits.get("video", MM_LIMIT_DEFAULT) == 0)


def encoder_peak(spec, max_model_len: int | None = None, max_batched: int | None = None, max_seqs: int | None = None,
                 limits: dict | None = None, version=None, dummy: dict | None = None, tp: int = 1,
                 tp_mode: str = "weights") -> int:
    """Bytes of the vision tower's profile run on its largest item: one image (Llama 4: all its tiles), or for Qwen2-VL
    under V1 (max_model_len given) the largest video when that has more patches (0 for a text model). With max_batched
    (V1) the run encodes profile_items copies of that item in one batch (PROFILE_ITEMS); without it, one. limits:
    --limit-mm-per-prompt (mm_limits): a modality at 0 is not profiled, the per-prompt item count is capped. dummy: its
    per-modality options (mm_dummy): an image width / height shrinks each copy under the Qwen-VL rule (MM_DUMMY). tp: the
    tensor-parallel ranks, one rank's share of a split tower (ENCODER_TP); tp_mode: --mm-encoder-tp-mode, "data" a rank's
    whole copies through the whole tower (ENCODER_TP_DATA)."""
    v = spec.vision or {}
    d = int(v.get("hidden_size") or 0)
    limits = limits or {}
    if not d or vision_off(v, spec.arch, limits):
        return 0
    video_limit = limits.get("video", MM_LIMIT_DEFAULT)
    image_limit = limits.get("image", MM_LIMIT_DEFAULT)
    patch = int(v.get("patch_size") or 14)
    # Qwen-VL's dummy image: the processor's size.longest_edge pixels (qwen2_vl.py get_image_size_with_most_features,
    # max_pixels // (patch x merge)^2 merged tokens), the config's preprocessor_config where kv has it (vLLM 0.20.2)
    pixels = int(v.get("_max_pixels") or QWEN_VL_MAX_PIXELS)
    patches = (int(v["image_size"]) // patch) ** 2 if v.get("image_size") else pixels // (patch * patch)
    if v.get("model_type") == "llama4_vision_model" and v.get("image_size"):  # tiles (LLAMA4_MAX_TILES)
        tiles = int(v.get("_max_tiles") or LLAMA4_MAX_TILES)
        patches = (tiles + 1 if tiles > 1 else 1) * (patches + 1)
    if v.get("default_output_length"):  # Gemma 4: an image is at most this many soft tokens, each pooling k x k patches
        patches = int(v["default_output_length"]) * int(v.get("pooling_kernel_size") or 1) ** 2
    video = (not v.get("image_size") and max_model_len and not str(v.get("model_type") or "").startswith("qwen3")
             and spec.arch != "dots_ocr" and video_limit)
    if video:
        # Qwen2-VL / Qwen2.5-VL's dummy video (qwen2_vl.py); Qwen 3.5+ (vision model_type qwen3_5*) taken at one image:
        # its two vLLM 0.24/0.27 logs leave 1.8 and 2.3 GiB for the whole profile peak, far below a video's. dots.ocr
        # takes images only (vLLM 0.20.2 dots_ocr.py:138-139 get_supported_mm_limits {"image": None}; its dummy builder,
        # 100-124, makes images at Qwen2-VL's largest size)
        # the frames' room less one image's tokens where an image is profiled too (image at 0: none)
        patches *= qwen_vl_video_grid_t(max_model_len, images=1 if image_limit else 0)
    items = 1
    if max_batched and max_seqs:
        tokens = item_tokens(v, patches, spec.arch, version)
        # the profiled modality's limit: the video's where kv sizes it, or where kv's image stands in for the video
        # vLLM profiles instead (Qwen 3.5+, Gemma 4 with image at 0)
        limit = video_limit if video or not image_limit else image_limit
        items = profile_items(tokens, max_batched, max_seqs, max_model_len, limit)
    shrink = (dummy or {}).get("image") or {}
    if (shrink.get("width") or shrink.get("height")) and not video and image_limit and not v.get("image_size") \
            and not v.get("default_output_length"):  # the Qwen-VL rule's image, each copy cut (MM_DUMMY); T as above
        patches = qwen_vl_dummy_patches(v, shrink.get("width"), shrink.get("height"))
    data = tp > 1 and tp_mode == "data" and str(v.get("model_type") or "") in ENCODER_TP_TOWERS
    if data:  # each rank runs whole copies through the whole tower (ENCODER_TP_DATA)
        items = -(-items // tp)
    return int(items * patches * d * ENCODER_BYTES_PER_HIDDEN * encoder_tp_share(v, tp, "data" if data else "weights"))


def deepstack_values(v: dict) -> int:
    """16-bit values a patch of the deepstack features Qwen3-VL's tower holds through its last blocks (DEEPSTACK)."""
    levels = len(v.get("deepstack_visual_indexes") or ())
    merge = int(v.get("spatial_merge_size") or 2)
    return levels * int(v.get("out_hidden_size") or 0) // (merge * merge)


def encoder_tp_values(v: dict, tp: int = 1, deepstack: bool = True) -> int:
    """16-bit values a patch at the peak of one rank's Qwen3_VisionTransformer under --mm-encoder-tp-mode weights
    (ENCODER_TP): what the whole forward holds, plus the larger of the attention at its proj and the MLP; with the
    deepstack features held from their blocks on (DEEPSTACK) unless deepstack is False."""
    d, inter = int(v["hidden_size"]), int(v.get("intermediate_size") or 0)
    head = d // int(v.get("num_heads") or 16)
    pixels = int(v.get("in_channels") or 3) * int(v.get("temporal_patch_size") or 2) * int(v.get("patch_size") or 14) ** 2
    reduce = d if tp > 1 else 0  # the all-reduce's out-of-place output beside the RowParallel matmul's
    attn = 3 * d + reduce + 8 * d // tp
    mlp = max(3 * d + 2 * inter // tp, 3 * d + inter // tp + d + reduce)
    return pixels + d + head + max(attn, mlp) + (deepstack_values(v) if deepstack else 0)


def encoder_tp_share(v: dict, tp: int = 1, mode: str = "weights") -> float:
    """A rank's encoder term over the fitted 1-GPU one: peak(tp) / peak(1) of the plain tower for the towers read
    (ENCODER_TP), the deepstack features counted (DEEPSTACK: above 1 even at one GPU); under --mm-encoder-tp-mode data
    the whole tower's peak (ENCODER_TP_DATA). 1 for the others (kept whole: Gemma 4 is transformers' tower, unsplit;
    the rest were not read)."""
    if str(v.get("model_type") or "") not in ENCODER_TP_TOWERS:
        return 1.0
    ranks = 1 if mode == "data" else max(tp, 1)
    return encoder_tp_values(v, ranks) / encoder_tp_values(v, 1, deepstack=False)


def mm_encoder_tp_mode(value) -> str:
    """--mm-encoder-tp-mode as vLLM takes it, "weights" when not given (ENCODER_TP_DATA); another value a UserError."""
    mode = str(value or "weights").lower()
    if mode not in MM_ENCODER_TP_MODES:
        from ...errors import UserError
        raise UserError(f"--mm-encoder-tp-mode {value!r}: vLLM takes {' or '.join(MM_ENCODER_TP_MODES)}")
    return mode


def item_tokens(v: dict, patches: int, arch=None, version=None) -> int:
    """Prompt tokens one profile item fills (what vLLM divides its encoder budget by), from the tower's patches: Qwen-VL
    and dots.ocr merge merge x merge patches a token, Gemma 3 pools 4 x 4 (64 x 64 patches to 256 tokens), Pixtral
    merges spatial_merge_size^2 (2 x 2 in Mistral 3, none in Pixtral-12B: PIXTRAL_MERGE; before 0.8.4 with a break
    token a row), Llama 4 shuffles a tile's 576 patches into 144 tokens (its class tokens dropped), CLIP
    (LLaVA) keeps each patch. 0 where kv keeps one item: Gemma 4 profiles a video (its logs: "profiled with 3 video
    items" at 8192 batched tokens); with video at 0 vLLM profiles budget // default_output_length images (gemma4_mm.py
    get_mm_max_tokens_per_item at 0.23.1rc1.dev531+ga65f93fb2), but its tower took them one at a time until vllm#43169
    (2026-05-21: the per-image loop of _process_image_input at 0.19.2rc1.dev8+g4b7f5ea1a), and after it in chunks that
    the free memory sizes (_encoder_chunk), so one item stays (kv63)."""
    kind = str(v.get("model_type") or "")
    if v.get("default_output_length"):
        return 0
    if kind == "llama4_vision_model":
        tile = (int(v["image_size"]) // int(v.get("patch_size") or 14)) ** 2
        return patches // (tile + 1) * (tile // 4)
    if kind == "siglip_vision_model" and str(arch or "").startswith("gemma3"):
        return patches // 16
    if kind == "pixtral":
        from math import isqrt
        tokens = patches // int(v.get("_merge") or 1) ** 2
        old = version is not None and not at_least(version, *PIXTRAL_EMBEDS_ONLY)
        return tokens + isqrt(tokens) if old else tokens  # an [IMG_BREAK] / [IMG_END] a row counted before 0.8.4
    if v.get("image_size"):
        return patches
    merge = int(v.get("spatial_merge_size") or 2)
    return patches // (merge * merge)


def profile_items(tokens: int, max_batched: int, max_seqs: int, max_model_len=None,
                  limit: int = MM_LIMIT_DEFAULT) -> int:
    """How many copies of its largest item vLLM's profile run encodes (PROFILE_ITEMS): the encoder budget (at least one
    item) over the item's tokens, capped by what the decoder could hold (max_num_seqs prompts of max(1, min(limit,
    max_model_len // tokens)) items each, limit the modality's --limit-mm-per-prompt); 1 where the item's tokens are
    unknown."""
    if not tokens:
        return 1
    budget = max(max_batched, tokens)
    per_prompt = max(1, min(limit, max_model_len // tokens)) if max_model_len else 1
    return max(1, min(budget // tokens, max_seqs * per_prompt))
