"""The total memory torch (and so vLLM's "total_gpu_memory") reports for a card, by its name: what `kv --gpu-name`
takes for --vram when none is given. A "24 GB" card is 24 GB of 10^9 bytes less the driver's reserve, about 23.6 GiB.
Each figure is the one the rows of benchmarks/data/llm_measured.json print for that card (vLLM logs, the
total_gpu_memory of its "can use total_gpu_memory (X GiB) x gpu_memory_utilization" line)."""
import re

# (pattern over the lower-cased name, GiB); the first match wins: variants before their base names. A GeForce card is
# found by its number alone ("4090", "RTX 4090 24GB", "NVIDIA GeForce RTX 4090")
VISIBLE_GIB = (
    (r"4090.*48 ?gb|48 ?gb.*4090", None),  # the modded 48 GB 4090s differ (one row: 47.50); not guessed
    (r"(?<!\d)4090(?!\d)", 23.55),          # also the 4090 D (five rows)
    (r"(?<!\d)3090(?!\d)", 23.56),
    (r"(?<!\d)5090(?!\d)(?!.*laptop)", 31.36),
    (r"(?<!\d)4080(?!\d)", 15.99),
    (r"h100.*nvl", 93.02),
    (r"h100", 79.19),
    (r"a100.*40|a100-sxm4-40gb", 39.39),
    (r"a100|a800", 79.25),
    (r"l40s?\b", 44.42),
    (r"\bl4\b", 22.03),
    (r"\bt4\b", 14.74),
    (r"rtx pro 6000", 94.97),
    # (fixX) consumer cards, each figure from a PyTorch OOM message ("total capacity of N GiB") in tests/unit/corpus/unseen
    # (the case file beside it). Logs of one card differ by driver and OS: a Windows (WDDM) log prints more (a 3070 Ti's
    # 8.00 against 7.66 on Ubuntu), so a log not from Windows is taken where one exists. Variants with no log (3060 8 GB,
    # 3080 12 GB, 3080 Ti, 4060 Ti 8 GB, 4070 SUPER, 5060 Ti 8 GB) stay None, before the base name they would match
    (r"3060 ?ti", 8.00),  # batch-533 pytorch_windows_rtx3060ti_8gb_openai_whisper_... (the only log: Windows)
    (r"3060.*8 ?gb", None),
    (r"(?<!\d)3060(?!\d)(?!.*laptop)", 11.75),  # batch-424 pytorch_rtx3060_12gb_pose_splatter_...; batch-22 spatrackerv2: 11.60
    (r"3070 ?ti", 7.66),  # batch-474 pytorch_rtx3070ti_8gb_moss_voicegenerator_... (Ubuntu); four Windows logs: 8.00
    (r"(?<!\d)3070(?!\d)(?!.*laptop)", 7.66),  # batch-474 pytorch_rtx3070_8gb_pointpillars_... (Ubuntu 20.04); 7.63, 7.79
    (r"3080.*12 ?gb|3080 ?ti", None),
    (r"(?<!\d)3080(?!\d)(?!.*laptop)", 9.64),  # batch-484 pytorch_rtx3080_resnet_study_... ; 9.62, 9.68 in two more
    (r"4060 ?ti.*16 ?gb|16 ?gb.*4060 ?ti", 15.60),  # batch-243 pytorch_hexcore_mixtral_8x7b_qlora_two_4060ti_16gb_...
    (r"4060 ?ti", None),
    (r"(?<!\d)4060(?!\d)(?!.*laptop)", 7.60),  # batch-474 pytorch_rtx4060_8gb_b01_nuna_lora_...
    (r"4070 ?ti ?super", 15.99),  # batch-16 forge_classic_nunchaku_qwen_no_offload_16gb (a Windows log; as the 4080's)
    (r"4070 ?ti", 11.58),  # batch-09 rlswarm_backward_4070ti_2gib; batch-37 framepack_4070ti_12gb_... (Windows): 11.99
    (r"4070 ?super", None),
    (r"(?<!\d)4070(?!\d)(?!.*laptop)", 11.99),  # batch-06 flux_dev_4070_12gb (the only 4070 log)
    (r"5060 ?ti.*8 ?gb|8 ?gb.*5060 ?ti", None),
    (r"5060 ?ti", 15.47),  # batch-433 vllm_podman_rtx5060ti_16gb_mistral7b_...; 15.49, 15.52 in batch-500
    (r"5070 ?ti", 15.47),  # batch-608 pytorch_accelerate_rtx3090_plus_rtx5070ti_...; 15.45 in batch-500
    (r"(?<!\d)5070(?!\d)(?!.*laptop)", 11.50),  # batch-82 pytorch_rtx5070_12gb_sft_...; 11.49 batch-322; Windows 11.94
    (r"7900 ?xtx", 23.98),  # batch-420 vllm_rocm_7900xtx_gemma4_31b_gptq_...; batch-14 comfyui_rocm7_sdpa_77gib_7900xtx
    (r"9070 ?xt\b", 15.92),  # batch-478, batch-496, batch-80 (three logs agree)
)


def visible_gib(gpu_name) -> float | None:
    """The card's total as torch reports it, None for a card not in the table."""
    name = str(gpu_name or "").lower()
    for pattern, gib in VISIBLE_GIB:
        if re.search(pattern, name):
            return gib
    return None


# Names that stand for cards of different totals: (pattern over the lower-cased name, what tells them apart, the
# candidates as --gpu-name takes them). visible_gib reads such a name as the first row it matches (an A100 as the 80 GB);
# `kv --gpu-name` without --vram asks which (ambiguous_card)
AMBIGUOUS = (
    (r"\ba100\b", r"40|80", ("A100 40GB", "A100 80GB")),
    (r"\bh100\b", r"nvl|80|94|sxm|pcie|hbm", ("H100 80GB", "H100 NVL")),
)


def ambiguous_card(gpu_name) -> tuple:
    """The candidates a card name may be, with their totals ((name, GiB), ...); () for a name that is one card."""
    name = str(gpu_name or "").lower()
    for pattern, apart, names in AMBIGUOUS:
        if re.search(pattern, name) and not re.search(apart, name):
            return tuple((n, visible_gib(n)) for n in names)
    return ()


# Devices whose GPU memory IS the host's (one LPDDR pool for the CPU and GPU): (name, pattern over the lower-cased name,
# lowest and highest total in GiB that torch (cudaMemGetInfo, and so vLLM's "Free memory on device (F/T GiB)") prints).
# NVML has no memory figure for them (nvmlDeviceGetMemoryInfo NotSupported), so no tool names another process's share.
# NVIDIA GB10 (DGX Spark and its OEM builds, 128 GB): 119.18-119.70 GiB in PyTorch's messages (sagecodes/ai-build-and-learn
# videogen notes 119.70; MiniMax-M3 vLLM runs 119.61; 119.63, 119.18) and 121.63 GiB on newer images (an ASUS GX10 under
# vLLM 0.20.1/NGC 26.05, unseen batch 50; vLLM 0.25.1 on a DGX Spark, sostrowsk/dgx-spark-local-llm)
UNIFIED = (("NVIDIA GB10", r"\bgb10\b|dgx spark", 119.0, 121.7),)


def unified_by_name(gpu_name) -> str | None:
    """The unified-memory device a GPU name is, or None."""
    name = str(gpu_name or "").lower()
    return next((dev for dev, pattern, _lo, _hi in UNIFIED if re.search(pattern, name)), None)


def unified_by_total(total_bytes) -> str | None:
    """The unified-memory device whose pool a total (bytes, as torch prints it) is, or None."""
    gib = (total_bytes or 0) / 2**30
    return next((dev for dev, _pattern, lo, hi in UNIFIED if lo <= gib <= hi), None)


# NVIDIA compute capability (major, minor) by the name nvidia-smi prints, for the rules that read it (Ollama's
# ml/device.go cudaFlashAttentionSupported): (pattern over the lower-cased name, (major, minor)); the first match
# wins: the Pascal Titans ("NVIDIA TITAN X (Pascal)", "NVIDIA TITAN Xp", 6.1) before GM200's "GeForce GTX TITAN X"
# (5.2), and that before GK110's "GeForce GTX TITAN" (and its Black and Z, 3.5). Minor None: a family whose cards
# differ in it (Kepler 3.0-3.7, Maxwell 5.0-5.2). NVIDIA's CUDA GPU table. Every card below 8.0 that vLLM's rules
# name (runtimes/vllm.pre_ampere) is a row here: Volta (7.0) and Turing (7.5) rows only by name; (fixT) and Ampere
# (8.0-8.7), which vLLM's Marlin FP8 rule reads (runtimes/vllm_loader.marlin_fp8_card: 7.5 to below 8.9). Ada, Hopper and
# Blackwell (8.9 and up) are no rows: a card the table lacks is taken for none of those rules' cards.
COMPUTE_CAPABILITY = (
    (r"xavier", (7, 2)),
    (r"jetson (nano|tx1)", (5, 3)),
    (r"titan x ?\(pascal\)|titan xp\b", (6, 1)),
    (r"titan x\b", (5, 2)),
    (r"gtx titan\b", (3, 5)),
    (r"\b(tesla )?v100s?\b|quadro gv100\b|\btitan v\b", (7, 0)),
    (r"\b(tesla )?t4\b|\btitan rtx\b|\bquadro rtx\b|\brtx ?20[678]0\b|\bgtx ?16\d0\b", (7, 5)),
    (r"\b(tesla )?k80\b", (3, 7)),
    (r"\b(tesla )?k\d0\b", (3, None)),
    (r"\b(tesla )?m10\b", (5, 0)),
    (r"\b(tesla )?m\d0\b", (5, 2)),
    (r"quadro k(620|1200|2200)\b", (5, 0)),
    (r"quadro k\d", (3, None)),
    (r"quadro m\d", (5, None)),
    (r"gtx ?750", (5, 0)),
    (r"gtx ?7[6-8]0", (3, None)),
    (r"gtx ?9[5-8]0", (5, 2)),
    (r"\b(tesla )?p100\b|quadro gp100", (6, 0)),
    (r"\b(tesla )?p(40|4|6)\b|quadro p\d{3,4}|gtx ?10[5-8]0", (6, 1)),
    # (fixT) Ampere: GA100 (A100 and its A100X converged card, the A800, A30); GA10x (A40, A10, A10G, A16, A2, the RTX
    # A-series workstation and laptop cards from the A500 to the A6000, GeForce RTX 3050-3090 and the laptop RTX 2050);
    # GA10B (Jetson Orin)
    (r"\ba(100|800)x?\b|\ba30\b", (8, 0)),
    (r"\ba(40|10g?|16|2)\b|\brtx ?a\d{3,4}\b|\brtx ?(30[5-9]0|2050)\b", (8, 6)),
    (r"\borin\b", (8, 7)),
)


def compute_capability(gpu_name) -> tuple | None:
    """The card's (major, minor) compute capability (minor None where its family varies), None for a card not in the
    table."""
    name = str(gpu_name or "").lower()
    return next((cc for pattern, cc in COMPUTE_CAPABILITY if re.search(pattern, name)), None)
