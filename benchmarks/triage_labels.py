"""Label audit of the unseen triage corpus (issue 14): what each cause id means in practice, docs/triage-causes.md.

Reads every case's `# expect: cause=` (tests/unit/corpus/unseen/batch-*/*.log) and the ledger's
first-sight misses (LEDGER.json). The FAMILIES table below is hand-made from the cases' `# note:` lines:
each family is one borderline question, its members the cases whose thread resolution puts them there.
The labels are NOT in the table: they are read from the case files, so the counts, majorities and
contradictions printed are the corpus's own. Changes nothing.

    python benchmarks/triage_labels.py            # families, contradictions, miss split
    python benchmarks/triage_labels.py --misses   # also list every first-sight miss by class
    python benchmarks/triage_labels.py --now
        # also scores the contested cases with the engine as it is NOW (a regression reading, not first sight)
"""
import collections
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UNSEEN = REPO / "tests" / "unit" / "corpus" / "unseen"

# (family id, question, proposed rule, [(case substring, why it is in the family / why it may be off)])
FAMILIES = [
    ("F1-version-fault", "a version/driver/pack regression makes an ordinary allocation larger (same workload ran on the "
     "previous version; fixed by rollback or update); not a leak, not pinned host memory",
     "other (the fix is the version, not the workload)", [
        ("b07/comfyui_async_5080_fixed_on_later_main", ""),
        ("b10/vllm_020_torch211_init_23gib", ""),
        ("b12/vllm_084_multimodal_regression_16gb", ""),
        ("b12/vllm_v1_higher_memory_8gb", ""),
        ("b14/ltx_desktop_110_update_4090", ""),
        ("b14/trtllm_qwen3_32b_fp8_tp2_upgrade_gpu0", ""),
        ("b15/vllm_0110_vs_085_flashinfer_sampler_tp", ""),
        ("b15/vllm_092_no_cache_blocks_h100_regression", ""),
        ("b17/ollama_0117_ctx_regression_gtx1650", ""),
        ("b17/mflux_macos153_m2_16gb", "OS update"),
        ("b18/comfyui_controlnet_model_options_commit_regression", ""),
        ("b19/comfyui_wan_i2v_update_regression_rollback_0359", ""),
        ("b20/aitoolkit_flux2_mistral_quantize_regression", ""),
        ("b20/ollama_0130_dual_gpu_mixtral_regression", ""),
        ("b20/trtllm_dsv3_w4fp8_rc2_regression", ""),
        ("b20/unsloth_gpt_oss_500k_notebook_182gib_regression", ""),
        ("b21/supir_commit_7596566", ""),
        ("b21/krita_flux_fp8_4060ti_16gb_fixed_by_comfy_cuda_upgrade", ""),
        ("b22/llamacpp_sycl_a770_b4069_half_context_regression", ""),
        ("b22/trtllm_0120_t5_xl_tp4", ""),
        ("b23/latentsync_wrapper_update", ""),
        ("b24/ollama_0132_rocm_7900xtx_mixtral", ""),
        ("b24/vllm_0130_h20_qwen25_72b", ""),
        ("b28/ollama_0112_four_gpu", ""),
        ("b28/vllm_rocm_startup_free_memory_check_cudagraph_profiling_regression", ""),
        ("b29/ttforge_llama31_8b_nightly", ""),
        ("b29/mlx_rag_create_vdb_mlx0010_outdated", ""),
        ("b31/wan2gp_4070_driver_591_44", ""),
        ("b32/unsloth_nightly_transformers_break", ""),
        ("b33/hot_step_cpp_v114_vae_tile_graph_regression", "a VAE-stage regression labelled other"),
        ("b35/animatediff_evolved_fizznodes", ""),
        ("b35/comfyui_flux2_dev_bf16_3090_after_v0220", ""),
        ("b37/a1111_oct2022_memory_regression", ""),
        ("b37/wanvideo_139_fp32_animate", ""),
        ("b41/comfyui_multigpu_controlnetloader_regression", ""),
        ("b41/comfyui_seedvr2_5090_cuda_error_fixed_by_nightly", ""),
        ("b41/comfyui_wanvideo_low_noise_sampler_update_merged_lora", ""),
        ("b42/comfyui_0367_wan22_fp8", ""),
        ("b44/ikllama_kimi_k2_tool_calls_patch_regression", ""),
        ("b26/comfyui_torch29_cudnn91002_conv3d_vae_decode_3x",
         "torch 2.9 regression (conv3d 3x) labelled by the stage, while the v1.1.4 VAE-tile regression (b33) is other"),
        ("b01/vllm_064_regression_graph_capture_t4",
         "0.6.4.post1 regression labelled by the stage, while the 0.8.4/0.9.2/0.11.0 regressions are other"),
        ("b31/forge_neo_hires_drct_upscaler_attention_oom",
         "resolution is 'fixed in the current version' (no workload change), labelled activations"),
        ("b12/instructlab_mps_train_epoch0",
         "resolution is a later release that reins in the loop's memory, labelled activations"),
        ("b43/vllm_025_second_instance_profiling_counts_first",
         "0.2.5 profiling change (worked on 0.2.4) labelled other-process; b28's ROCm profiler regression is other"),
    ]),
    ("F2-leak-regression", "a version fault whose mechanism is memory kept across runs/steps",
     "leak (mechanism wins over provenance for leaks)", [
        ("b19/forge_runpod_4090_oom_every_second_generation", ""),
        ("b19/seedvr2_v2523_mps_vae_leak", ""),
        ("b29/rapid_mlx_0129_hybrid_cache", ""),
        ("b26/comfyui_mmh3_sparse_attention_compiler_vram_leak", ""),
    ]),
    ("F3-pinned-regression", "a version/offload change whose pinned (page-locked) host buffers exhaust RAM or WSL's pin limit",
     "host-ram", [
        ("b07/comfyui_hostbuffer_regression_unload_all", ""),
        ("b19/comfyui_commit_0a2dd86_pinned", ""),
        ("b15/llamacpp_wsl_ggml_cuda_359_pinned", ""),
        ("b26/nunchaku_qwen_image_cpu_offload_pinned_ram_3080", ""),
        ("b44/comfyui_nunchaku_qwen_image_cpu_offload_pinned", ""),
    ]),
    ("F4-estimator", "the runtime's own memory estimate/fit under-counts, so it places more on the card than fits "
     "(Ollama layer planning, llama.cpp --fit, ComfyUI offload accounting); a real OOM follows",
     "no majority: proposed `other` when the thread's fix is to the estimator", [
        ("b43/ollama_deepseek2_coder_v2_lite_3070_estimate", "same defect as b38 deepseek-coder-v2 16B (activations)"),
        ("b38/ollama_deepseek_coder_v2_16b_8gb_twenty_layers",
         "same deepseek-v2 estimator defect as b43 (other); labelled by the under-counted part"),
        ("b26/comfyui_flux2_3090_dequant_offload_accounting", ""),
        ("b35/comfyui_pr11171_flux2_te_fp32_3060_dequant", ""),
        ("b20/ollama_command_r7b_fp16_16gb_estimate_under_graph", "estimator fault labelled activations"),
        ("b32/ollama_gemma2_3050_4gb_graph_estimate_failed", "estimator fault (fixed by an Ollama commit) labelled activations"),
        ("b44/llamacpp_fit_ignores_mmproj", "--fit defect labelled activations"),
        ("b20/ollama_rocm_2x_mi50_deepseek671b_gpu0_overcommit", "planner over-commit of GPU 0 labelled weights"),
        ("b42/ollama_057_deepseek_r1_671b_two_3090", "planner put more layers on card 0 than fit, labelled weights"),
        ("b10/ollama_rocm_unable_allocate_rocm0_7_8_of_8", "7.8 GiB planned on an 8.0 GiB card, labelled weights"),
    ]),
    ("F5-kernel-fallback", "no fused attention kernel for this card/dtype/build (pre-Ampere bf16, V100 without flash, "
     "broken xformers, ROCm math SDPA), so a full attention/working tensor is built",
     "activations", [
        ("b27/diffsynth_hunyuanvideo_24g_v100_naive_attention", ""),
        ("b36/cogvideox_5b_v100_bf16_56gib_attention_fp16_fix", ""),
        ("b20/stableavatar_v100_sdpa_62gib_no_flash", ""),
        ("b20/unsloth_studio_wan22_ti2v_rocm_sdpa_math", ""),
        ("b22/lavie_vsr_400gib_attention_broken_xformers", ""),
        ("b10/dotsocr_vllm_74gib_attention", ""),
        ("b18/comfyui_rocm_strix_wan22_sdpa_48gib", ""),
        ("b21/fooocus_k80_11gb_attention_split", ""),
        ("b37/a1111_directml_800x600_attention", ""),
        ("b20/ik_llamacpp_qwen35_mmproj_1mb_image", ""),
        ("b37/framepack_quadro_p4000_pre_ampere_bf16",
         "bf16 path on a card without bf16 labelled other; b36 CogVideoX V100 bf16->fp16 is activations"),
        ("b39/catvton_gtx1070_8gb_no_bf16",
         "no-bf16 fallback building an 18 GiB attention block labelled other (note cites FramePack, not CogVideoX)"),
        ("b26/comfyui_mmh3_w4a8_cu128_needs_cu130",
         "torch build without the format's kernels labelled other; the memory grows with video length"),
    ]),
    ("F6-fixed-pool", "a fixed-size internal pool/workspace overflows (ggml scratch/context pool, FlashInfer "
     "workspace, TensorRT workspace, graph metadata pool)",
     "other (the program sized its own pool)", [
        ("b32/koboldcpp_141_context_memory_pool", ""),
        ("b24/textgen_goliath_120b_gguf_ggml_new_object", ""),
        ("b33/whisper_cpp_m1_scratch_memory", ""),
        ("b38/ollama_qwen35_gguf_graph_max_nodes", ""),
        ("b28/sglang_benchmark_flashinfer_workspace", ""),
        ("b28/vllm_glm45_air_flashinfer_workspace", ""),
        ("b30/onnxruntime_trt_ep_workspace_too_small", ""),
        ("b22/llamacpp_python_server_n_batch_4096_context_pool",
         "ggml context pool overflow labelled activations (user fix: smaller n_batch)"),
        ("b24/llamacpp_zh_alpaca_7b_context_pool_batch_b8",
         "ggml context pool overflow labelled activations (user fix: -b 8)"),
    ]),
    ("F7-per-allocation-cap", "one buffer above the backend's single-allocation cap (Vulkan maxMemoryAllocationSize, "
     "Level Zero 4 GiB, Metal max buffer, MPS 'Invalid buffer size') while the device's total would hold it",
     "other (a platform limit; the fix is splitting or a flag, not a smaller job)", [
        ("b02/ipex_a770_four_gib_limit", ""),
        ("b02/xpu_lnl_range_factories_16gib", ""),
        ("b04/llamacpp_strix_halo_single_buffer_refused", ""),
        ("b06/ikllama_vulkan_arc140v_single_allocation", ""),
        ("b12/ipex_docker_a770_single_block_7gib", ""),
        ("b13/llamacpp_metal_buffer_maximum_33b", ""),
        ("b14/xpu_a770_zeros_8gib_then_4gib", ""),
        ("b15/llamacpp_vulkan_strix_halo_4gb_buffer_limit", ""),
        ("b15/llamacpp_vulkan_regression_buffer_limit_8gb", ""),
        ("b15/triton_xpu_a770_ci_4gib_free", ""),
        ("b16/comfyui_ipex_a770_4gb_block_8gib", ""),
        ("b25/axolotl_xpu_meteor_lake_7gib", ""),
        ("b29/sdcpp_vulkan_offload_to_cpu_sdxl_lora_single_buffer", ""),
        ("b31/krita_vision_tools_rx9070xt_vulkan_graph_buffer", ""),
        ("b34/llamacpp_sycl_b70_malloc_device_above_19gb", ""),
        ("b29/sdcpp_vulkan_firepro_w8100_sdxl_1024_vae_compute_buffer",
         "6.5 GiB VAE buffer refused at the driver's allocation limit, labelled vae-decode"),
        ("b28/mlx_llm_llama3_8b_17k_prompt_19gb_buffer_over_16gib_max",
         "19 GB buffer over Metal's 16 GiB per-buffer max on a 32 GB Mac, labelled activations"),
        ("b21/invokeai_mps_8gb_amd_mac_invalid_buffer_above_640",
         "MPS 'Invalid buffer size: 3.57 GB' on an 8 GB GPU, labelled activations"),
    ]),
    ("F8-budget-too-low", "an LLM server's memory share (gpu-memory-utilization, mem_fraction_static) is set too low "
     "for weights plus cache; the fix is raising it",
     "no rule written; proposed weights-exceed-vram only when the weights alone exceed the share", [
        ("b03/vllm_064_qwen25_05b_no_blocks", "0.5B model, utilization 0.03-0.4, fix raise to 0.5: labelled weights"),
        ("b42/vllm_gemma2_27b_two_l40_utilization_070", ""),
        ("b20/sglang_ascend_mem_fraction_default_not_applied", "default fraction 0.2 not applied, labelled weights"),
        ("b36/vllm_ascend_glm51_two_nodes_no_cache_blocks", "same message and fix (raise utilization), labelled kv-cache"),
        ("b40/qanything_vllm_7b_4090_utilization_fraction", "utilization fraction sized for 8 GB, labelled kv-cache"),
    ]),
    ("F9-mlx-resource-count", "MLX's Metal resource-count limit (499000 buffers) reached through lazily held buffers",
     "leak when the count grows across requests", [
        ("b29/rapid_mlx_0129_hybrid_cache_metal_handle_leak", ""),
        ("b34/rapid_mlx_0131_hybrid_decode_output_chain", ""),
        ("b28/omlx_glm53_flash_metal_resource_limit_499000",
         "buffer count driven up by un-materialised decode state (as rapid-mlx), labelled other, not leak"),
    ]),
    ("F10-vae-stage-fault", "an OOM at the VAE stage whose cause is a library/driver fault or cap, not the decode's size",
     "no majority: proposed `other` (cause over stage), as for text-encoder nodes (F12)", [
        ("b26/rocm_miopen_gfx1200_vae_decode_nonsense_oom", ""),
        ("b33/hot_step_cpp_v114_vae_tile_graph_regression", ""),
        ("b42/comfyui_aimdo_024_unaligned_buffer_ltx_audio_vae", ""),
        ("b26/comfyui_torch29_cudnn91002_conv3d_vae_decode_3x", "library regression at the VAE labelled vae-decode"),
        ("b29/sdcpp_vulkan_firepro_w8100_sdxl_1024_vae_compute_buffer", "driver cap at the VAE labelled vae-decode"),
    ]),
    ("F11-host-working-buffer", "system RAM refuses a working buffer (not KV, not weights) of a CPU-side step",
     "host-ram", [
        ("b42/comfyui_layerstyle_birefnetultra_4k", ""),
        ("b26/reactor_restore_face_361_frames", ""),
        ("b17/seedvr2_long_video_output_tensor_cpu", ""),
        ("b19/vhs_load_video_1080p", ""),
        ("b26/minimax_h3_director_six_segment", ""),
        ("b26/minimax_h3_motion_director_segment_merge", ""),
        ("b36/flag_deepergcn_ogbn_products", ""),
        ("b30/stt_change_detection_val_results", ""),
        ("b09/rtx_nodes_video_upscale_cpu_allocator", ""),
        ("b23/comfyroll_upscale_video_batch", ""),
        ("b05/llamacpp_cpu_ubatch_6500", "CPU-backend compute buffer in RAM labelled activations"),
        ("b34/executorch_xnnpack_android", "CPU working buffers (LMK kill) labelled activations"),
    ]),
    # consistent families (kept so that their members are not counted as 'outside every family')
    ("F12-te-node-not-size", "a text-encoder node is where a non-size fault surfaces (VBAR reservation, accounting, regression)",
     "other", [
        ("b14/aimdo_vbar_vgpu_grid_cliptextencode", ""),
        ("b15/comfyui_vbar_5060_laptop_cliptextencode", ""),
        ("b20/aitoolkit_flux2_mistral_quantize_regression", ""),
        ("b35/comfyui_pr11171_flux2_te_fp32_3060_dequant", ""),
    ]),
    ("F13-offload-code-places-weights", "an offload/placement path (not a regression) puts every block on the card",
     "weights-exceed-vram", [
        ("b26/hunyuanimage3_nf4_lowvram_budget_loader", ""),
        ("b39/hunyuanimage3_comfy_nf4_v2_blockswap_ignored", ""),
        ("b13/accelerate_bloom_8bit_max_memory_ignored", ""),
        ("b17/sglang_flux_dev_4090_layerwise_offload", ""),
        ("b27/soulx_flashtalk_8xa40_cpu_offload", ""),
        ("b26/wanvideo_i2v_3090_highvram_launcher_flag", ""),
    ]),
    ("F14-code-defect-working-tensor", "a code defect that was never a regression (missing no_grad, no chunking/tiling, "
     "unbounded batch planner) makes one working tensor too large; fixed by code",
     "activations", [
        ("b43/mlxstudio_1380", ""), ("b24/mlx_swift_qwen_vl_daemon", ""), ("b34/mlx_vlm_qwen2vl_large_image", ""),
        ("b29/mlx_audio_nemotron_asr_30min", ""), ("b20/onnxruntime_colgrep_bert", ""), ("b33/demucs_t4_one_hour", ""),
        ("b23/snapotter_realesrgan", ""), ("b23/ultralytics_autobatch_t4", ""), ("b39/hunyuanimage3_eager_moe", ""),
        ("b23/voicefilter_inference_5min_no_grad", ""), ("b36/stylegan2_decoder_from_latent_no_grad", ""),
        ("b27/livetalking_musetalk_4090_no_grad", ""), ("b36/image_captioning_validate_without_no_grad", ""),
        ("b20/ollama_mlx_vision_24mp_image", ""), ("b28/omlx_agent_long_prefill_sdpa", ""),
    ]),
    ("F15-absurd-size", "the requested size is nonsense (wrapped/overflowed arithmetic, wrong-arch build)", "other", [
        ("b09/comfyi2i_inpaint_segments_75tib", ""), ("b14/onnxruntime_t4_two_processes_absurd", ""),
        ("b20/mlx_conv_general_2pow31", ""), ("b27/trellis_windows_rasterizer", ""), ("b29/parakeet_mlx_tiny_last_chunk", ""),
        ("b33/instant_ngp_mesh_1024_cumemcreate_overflow", ""), ("b34/openvino_genai_prefix_caching_absurd", ""),
    ]),
    ("F16-across-runs", "later runs fail after earlier ones worked", "leak if memory is never released (bug); "
     "weights if models are kept resident by design; activations if one step is simply too big", [
        ("b17/pytorch_backward_after_epochs_1080ti", ""), ("b16/fooocus_api_runpod_80gb", ""),
        ("b23/auto1111sdk_t4_vram_not_released", ""), ("b02/wanvideo_setlora_vram_until_restart", ""),
        ("b31/comfyui_musetalk_node_holds_vram", ""), ("b33/bertvits2_pkg_failed_long_text", ""),
        ("b20/jax_gemma2b_tpu_second_run", ""), ("b17/seedvr2_batch_queue_vram_growth", ""),
    ]),
    ("F17-context-vs-kv", "an LLM server's context (max-model-len, num_ctx, default training context, slots) needs a KV "
     "cache larger than what is left after the weights; the KV buffer (or vLLM's KV pre-check) is what fails",
     "kv-cache, wherever the cache lives (GPU or host RAM)", [
        ("b01/bonito_vllm_maxlen_32768", ""), ("b01/llamafactory_vllm_maxlen_4096", ""), ("b01/vllm_v0_maxlen_29k", ""),
        ("b07/ollama_ci_runner_segfault_128k", ""), ("b10/llamafactory_vllm_qwen14b_lora", ""), ("b10/vllm027_colab", ""),
        ("b12/vllm_fp8_kv_max_len", ""), ("b12/vllm_v1_1m_context", ""), ("b14/vllm_gptfuzz", ""),
        ("b15/ollama_openwebui_10m_ctx", ""), ("b15/vllm_082_max_seq_len", ""), ("b16/llamacpp_metal_command_r", ""),
        ("b16/llamacpp_metal_phi35", ""), ("b17/llamacpp_deepseek_v2_default_ctx", ""), ("b17/vllm_027_api_server", ""),
        ("b17/vllm_deepseek_coder_v2_lite_l40", ""), ("b17/ollama_granite_2b_h100_parallel", ""),
        ("b20/vllm_kaito_mistral", ""), ("b22/vllm_club3090_long_vision", ""), ("b22/tabby_parallelism4", ""),
        ("b24/vllm_qwen15_7b_gptq", ""), ("b24/vllm_qwen15_7b_max_seq_len", ""), ("b24/ortgenai_phi3_128k", ""),
        ("b25/vllm_two_instances", ""), ("b29/llamacpp_rocm_rx9060xt", ""), ("b32/jan_081_default_context", ""),
        ("b32/jan_cortex_granite", ""), ("b38/vllm_club3090_long_text", ""), ("b42/ollama_0155_glm_ocr", ""),
    ]),
    ("F18-context-sized-compute-buffer", "a large context/batch makes llama.cpp's compute (graph) buffer, not the KV "
     "buffer, fail", "activations (label the buffer that failed)", [
        ("b29/llamacpp_rocm_llama31_70b_ngl0", ""), ("b38/ollama_060_gemma3_12b_api_context", ""),
        ("b05/llamacpp_pipeline_compute_150k", ""), ("b22/lmstudio_linux_compute_pp_buffers", ""),
    ]),
    ("F19-apu-carveout", "an APU's dedicated carve-out (512 MiB default) is too small for what is placed on it",
     "weights-exceed-vram (a carve-out that is wrongly reported or that fails when enlarged is other)", [
        ("b02/comfyui_hip_apu_512mb_bogus_free", ""), ("b02/comfyui_hip_apu_fluxsampler_512mb", ""),
        ("b02/rocm_apu_6800u_docker_old_form", ""), ("b12/comfyui_apu_512mb_flux_schnell", ""),
        ("b25/amdkfd_small_apu_512mib", ""),
    ]),
    ("F20-mps-other-allocations", "MPS's 'other allocations' hold most of the allowed memory, no in-process leak proven",
     "other-process", [
        ("b01/comfyui_mps_192gb_other_allocations", ""), ("b01/comfyui_mps_other_allocations_dominate", ""),
        ("b12/pytorch_mps_other_allocations_14gb", ""), ("b22/torchaudio_mps_8gb_mac", ""),
    ]),
    ("F21-refused-with-plenty-free", "a small request refused with plenty free and no larger cause shown", "other", [
        ("b05/comfyui_instantid_face_analysis", ""), ("b06/comfyui_hip_plenty_free", ""),
        ("b11/comfyui_checkpointloader_async_5gib", ""), ("b13/a1111_hires_4090_17gib", ""), ("b09/rocm714_comfyui", ""),
        ("b08/ollama_num_gpu_two_should_fit", ""), ("b24/llamafile_windows_cpu_alloc", ""),
    ]),

]


def cases():
    out = {}
    for p in sorted(UNSEEN.glob("batch-*/*.log")):
        head = {}
        for line in p.read_text(encoding="utf-8").splitlines():
            m = re.match(r"# (thread|note|expect|numbers):\s*(.*)", line)
            if not m:
                break
            head[m.group(1)] = m.group(2)
        exp = dict(kv.split("=", 1) for kv in head["expect"].split())
        out[f"b{p.parent.name[6:]}/{p.name}"] = exp["cause"]
    return out


def resolve(label, sub):
    hits = [k for k in label if k.startswith(sub) or (sub in k and k.split("/")[0] == sub.split("/")[0])]
    if len(hits) != 1:
        raise SystemExit(f"family member {sub!r} matches {hits}")
    return hits[0]


def main():
    label = cases()
    ledger = json.loads((UNSEEN / "LEDGER.json").read_text())
    misses = {f"b{b['batch'][6:]}/{m}" for b in ledger["batches"] for m in b["first_sight_misses"]}
    n_cases = sum(b["n"] for b in ledger["batches"])
    print(f"corpus: {len(label)} case files, ledger {n_cases} cases, first-sight misses {len(misses)}")
    print("labels:", dict(collections.Counter(label.values()).most_common()), "\n")
    noisy = {}      # case -> (family, 'minority' | 'majority' | 'no-majority')
    member_of = {}
    for fid, question, rule, members in FAMILIES:
        keys = [(resolve(label, s), why) for s, why in members]
        cnt = collections.Counter(label[k] for k, _ in keys)
        top, n_top = cnt.most_common(1)[0]
        strict = n_top * 2 > len(keys)
        by_batch = collections.defaultdict(list)
        for k, _ in keys:
            by_batch[label[k]].append(k.split("/")[0])
        print(f"== {fid} ({len(keys)} cases): {question}")
        print(f"   proposed rule: {rule}")
        print("   labels: " + "; ".join(f"{c} {n} ({' '.join(sorted(by_batch[c]))})" for c, n in cnt.most_common()))
        print(f"   majority: {top} {n_top}/{len(keys)}" + ("" if strict else "  (NO strict majority)"))
        for k, why in keys:
            member_of.setdefault(k, []).append(fid)
            if len(cnt) > 1:
                cls = "no-majority" if not strict else ("majority" if label[k] == top else "minority")
                # a case sits in its noisiest family: minority beats no-majority beats majority
                rank = {"minority": 0, "no-majority": 1, "majority": 2}
                if k not in noisy or rank[cls] < rank[noisy[k][1]]:
                    noisy[k] = (fid, cls)
            if len(cnt) > 1 and (not strict or label[k] != top):
                print(f"   CONTRADICTS {k}: label {label[k]}, majority {top}{'' if strict else ' (plurality)'}"
                      f"{' - ' + why if why else ''}{'  [first-sight miss]' if k in misses else ''}")
        print()
    incons = sorted(k for k, (_, c) in noisy.items() if c != "majority")
    print(f"cases contradicting their family's majority (or in a family with none): {len(incons)}"
          f" of {len(noisy)} cases in inconsistent families; {len(member_of)} cases in any family\n")
    cls = collections.Counter()
    rows = collections.defaultdict(list)
    for m in sorted(misses):
        if m in noisy:
            c = {"minority": "A noisy family, label against the majority",
                 "no-majority": "B noisy family without a majority",
                 "majority": "C noisy family, label = majority"}[noisy[m][1]]
        elif m in member_of:
            c = "D consistent family"
        else:
            c = "E outside every family"
        cls[c] += 1
        rows[c].append(f"{m} ({label[m]}; {','.join(member_of.get(m, []))})")
    print(f"first-sight misses ({len(misses)}) by label consistency:")
    for c in sorted(cls):
        print(f"   {c}: {cls[c]}")
    a = cls["A noisy family, label against the majority"] + cls["B noisy family without a majority"]
    print(f"   => misses whose label is itself contested (A+B): {a} of {len(misses)} ({100 * a / len(misses):.1f} %);"
          f" in an inconsistent family at all (A+B+C): {a + cls['C noisy family, label = majority']}")
    hit_a = sum(1 for k in incons if k not in misses)
    print(f"   contested cases read right at first sight anyway: {hit_a} of {len(incons)}")
    if "--no-save" not in sys.argv:
        sys.path.insert(0, str(REPO / "benchmarks"))
        from results import save
        save("triage_labels", "python benchmarks/triage_labels.py", {
            "cases": len(label), "families": len(FAMILIES), "family_cases": len(member_of),
            "inconsistent_family_cases": len(noisy), "contested_cases": len(incons),
            "first_sight_misses": len(misses), "misses_contested": a,
            "misses_in_inconsistent_families": a + cls["C noisy family, label = majority"],
            "misses_by_class": dict(sorted(cls.items()))})
    if "--now" in sys.argv:
        sys.path[:0] = [str(REPO / "tests")]
        import conftest  # noqa: F401  (puts the pack on the path as the tests do)
        from support import unseen_corpus as U
        tally = collections.Counter()
        for k in incons:
            fid = noisy[k][0]
            members = [resolve(label, s) for f, _, _, ms in FAMILIES if f == fid for s, _ in ms]
            alt = {label[m] for m in members} - {label[k]}
            got = U.score(UNSEEN / f"batch-{k.split('/')[0][1:]}" / k.split("/")[1]).get("got")
            how = "own label" if got == label[k] else ("another label of its family" if got in alt else "elsewhere")
            tally[how] += 1
            print(f"   now {k}: label {label[k]}, engine {got} ({how})")
        print(f"contested cases, engine now: {dict(tally)}")
    if "--misses" in sys.argv:
        for c in sorted(rows):
            print(f"\n{c}:")
            for r in rows[c]:
                print("   " + r)


if __name__ == "__main__":
    main()
