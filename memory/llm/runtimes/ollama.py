"""Ollama: num_ctx per request x OLLAMA_NUM_PARALLEL cells, the vision projector it loads with the model,
and its scheduler's layer placement (llm/memory.go, EstimateGPULayers):

  a layer goes on the GPU while free > reserve + projector weights + projector graph
                                      + max(graph full, graph partial) + layers so far + this layer;
  the output layer last. reserve = the per-GPU minimum (457 MiB for CUDA) plus one layer (blk.0 and its share of
  the KV cache) held back as a buffer ("add one layer worth of memory as a buffer", gpuAllocations[i] +=
  MinimumMemory + layerSize, in every version since 0.2); graph full = the llama.cpp compute buffer; graph
  partial = graph full + the output tensor it then keeps on the GPU (Gemma and gpt-oss: GraphSize's own formulas).
  Its log's memory.weights.total is not one quantity across versions: through 0.6.0 the sum over blocks of the
  block plus its share of the KV cache (the output tensor is left out); 0.6.1-0.6.2 the blocks alone; from 0.6.3 the
  blocks plus the output tensor (printed_weights_total).
  projector (mmproj, F16): the vision tower's parameters x 2 bytes; its graph = heads x patches^2 x 4 bytes of
  fp32 attention scores for one image (gemma3's SigLIP: 16 x 4096^2 x 4 = 1 GiB).
  Ollama >= 0.12 measures instead (the runner allocates, then reports what fits): `ollama ps` is the truth there."""

import re

from ...units import MiB
from ..cache import GPTOSS_ARCHS, OLLAMA_RUNNER_FULL_SWA, kv_cache
from ..cards import compute_capability
from ..gguf import GGUF_ARCH, gguf_arch  # noqa: F401  (OL.gguf_arch / OL.GGUF_ARCH: their old home)
from ..mmproj import QWEN3VL_TOWERS, dots_tower, file_bytes, llama4_tower, qwen25vl_tower, qwen3vl_tower
from ..weights import layer_weights
from . import at_least, parse_version
from .llamacpp import METAL_GPU, compute_buffer
from .ollama_server import (GEN_BATCH, LLAMA_CPP_BUILDS, evaluate_llama_server, generation_batch,  # noqa: F401
                            llama_cpp_build, predicted_vram)
from .ollama_placement import (BACKWARD, multi_gpu_layers, output_fits, place_uneven, required_full,  # noqa: F401
                               uneven_sizes)
from .ollama_graph import (CHATGLM_GRAPH_ARCHS, GEMMA_GRAPH_ARCHS, GRAPH_SIZE_ARCHS, LLAMA_GRAPH_ARCHS, chatglm_graph,
                           gemma_graph, gptoss_graph, llama_graph)

RESERVE = 457 * MiB      # ml.DeviceInfo.MinimumMemory / gpu.MinimumMemory for CUDA and ROCm
# A Metal device's MinimumMemory by release, one row a range [first, next) (None: open): 512 MiB from
# discover/gpu_darwin.go GetGPUInfo (metalMinimumMemory, read at v0.12.3); v0.12.4-rc0 builds the GPU list from the
# runner's devices (discover/gpu.go devInfoToInfoList, read at v0.12.4-rc0 and v0.12.6), which sets 457 MiB for CUDA
# and ROCm alone, so a Metal GPU carries none (metalMinimumMemory is left unused); v0.12.7-rc0 moves it to
# ml/device.go DeviceInfo.MinimumMemory, 512 MiB for Metal, 457 for the rest. qwen2.5:7b on an M1 Pro at 0.12.6
# prints memory.required.full 4.7 GiB = weights 4.1 GiB + kv 224 MiB + graph 304 MiB + one layer, no reserve.
METAL_MINIMUM = ((None, parse_version("0.12.4-rc0"), 512 * MiB),
                 (parse_version("0.12.4-rc0"), parse_version("0.12.7-rc0"), 0),
                 (parse_version("0.12.7-rc0"), None, 512 * MiB))


def minimum_memory(version, metal: bool) -> int:
    """The scheduler's per-GPU MinimumMemory for this release and device (RESERVE off Metal; METAL_MINIMUM on it)."""
    if not metal:
        return RESERVE
    for first, nxt, size in METAL_MINIMUM:
        if (first is None or at_least(version, *first)) and (nxt is None or not at_least(version, *nxt)):
            return size
    return RESERVE


def reserve_line(version, metal: bool) -> tuple:
    """The reserve's overhead line, (its name, bytes), named by backend where it is computed: off Metal MinimumMemory
    sits where the CUDA (or ROCm) context is ("cuda_context", as every runtime's line); on Metal it is no CUDA context
    (ggml-metal holds none) but the scheduler's working-set reserve, "metal_reserve" (0 B in 0.12.4-0.12.6)."""
    return ("metal_reserve" if metal else "cuda_context"), minimum_memory(version, metal)


MEASURED = (0, 12)
# The buffer layer: blk.0 (with its cache share) in every release but 0.7.0, whose llm/memory.go took the largest of
# GroupLayers' groups instead ("add one layer (chosing the max layer) worth of memory as a buffer", ollama 0478d440f,
# first tagged v0.7.0-rc1; reverted by 3fe74fba4 "Use first layer as memory buffer in estimation", first tagged
# v0.7.1-rc0). The groups are blk.N, token_embd, output, output_norm and the vision tower's v.blk.N / v / mm.N, so a
# token table larger than a block (Gemma 3's F16 table in the QAT tags: 2.6 GiB against 0.2 GiB a block) is held back
# whole, plus layer 0's cache: gemma3:27b-it-qat at 4096 on 0.7.0 prints required.full 23.4 GiB (ollama#10823).
MAX_LAYER_BUFFER = (parse_version("0.7.0-rc1"), parse_version("0.7.1-rc0"))
# Ollama's own engine (ollamarunner) places a model from the memory its runner reports allocating (llm/server.go
# createLayout, "llm: New memory management" d5a0d8d90 in 0.11.5 behind OLLAMA_NEW_ESTIMATES, on by default from
# eb10390de, first tagged v0.11.11-rc0): each GPU's free memory less MinimumMemory, OLLAMA_GPU_OVERHEAD and the
# measured graph, the layers (weights + cache) packed from the last, the output layer with them or, when not all fit,
# left off first (assignLayers). No layer is held back as a buffer and there is one graph, not a partial one plus the
# output tensor. Only architectures the version runs on its own engine (fs/ggml OllamaEngineRequired) take it; the
# others keep the estimate (the llama runner, still with blk.0 as buffer in 0.13-0.29). Ollama 0.30 drives
# llama-server instead: not modelled here. First tag naming each architecture in OllamaEngineRequired, release
# candidates included (every v0.11-v0.29 tag of fs/ggml/ggml.go read; glm4moelite from v0.14.3-rc2, not 0.14.3):
_rc = parse_version  # the end: every v0.30.0-rc tag has llm/llama_server.go (NewLlamaServer; rc0, rc5 read; rev4 B4)
MEASURED_LAYOUT = ((0, 11, 11), _rc("0.30.0-rc0"))
OLLAMA_ENGINE_FROM = {"gemma3": _rc("0.11.0-rc0"), "gemma3n": _rc("0.11.0-rc0"), "mistral3": _rc("0.11.0-rc0"),
                      "llama4": _rc("0.11.0-rc0"), "mllama": _rc("0.11.0-rc0"), "qwen25vl": _rc("0.11.0-rc0"),
                      "gptoss": _rc("0.11.0-rc0"), "qwen3": _rc("0.12.0-rc0"), "qwen3moe": _rc("0.12.2-rc0"),
                      "qwen3vl": _rc("0.12.7-rc0"), "qwen3vlmoe": _rc("0.12.7-rc0"), "deepseek2": _rc("0.13.0-rc0"),
                      "olmo3": _rc("0.13.4-rc2"), "lfm2": _rc("0.14.3-rc3"), "glm4moelite": _rc("0.14.3-rc2"),
                      "qwen3next": _rc("0.15.5-rc2"), "qwen35": _rc("0.17.1-rc1"), "qwen35moe": _rc("0.17.1-rc1"),
                      "lfm2moe": _rc("0.17.1-rc0"), "gemma4": _rc("0.20.0-rc0")}
# llm/memory.go: 0.6.0 still adds each layer's KV share to memoryWeights (`memoryWeights += layerSize`, where
# layerSize = blk.Size() + kv / BlockCount()); 0.6.1 counts the blocks alone (`memoryWeights += blk.Size()`)
WEIGHTS_TOTAL_WITH_KV = (0, 6, 1)
# the printed total adds the output tensor from 0.6.3 ("total", memoryWeights+memoryLayerOutput in v0.6.3's
# llm/memory.go; v0.6.2 prints memoryWeights alone): mistral-small3.1:24b on 0.6.8 prints total 13.1 GiB =
# repeating 12.7 GiB + nonrepeating 360.0 MiB (ollama/ollama#10615)
WEIGHTS_TOTAL_WITH_OUTPUT = (0, 6, 3)
# Ollama prices a DeepSeek-V2/V3 (deepseek2) cache from the GGUF's head_count_kv x (key_length + value_length),
# fs/ggml GraphSize; its library blobs and its own converter (convert_deepseek2.go: head_count_kv =
# num_key_value_heads, key_length = qk_nope + qk_rope, value_length = v_head_dim) keep the per-head values, so the
# estimate is the full per-head cache, not MLA's latent: deepseek-r1:671b at num_ctx 2048 prints
# memory.required.kv 9.5 GiB = 61 x 2048 x 128 x (192 + 128) x 2 bytes (ollama/ollama#8667, 0.5.11)
OLLAMA_MLA_ESTIMATE = "full"
# GLM-4.7-Flash (glm4moelite) on Ollama's own engine caches the latent from 0.15.0: model/models/glm4moelite puts
# key = rope ++ normed kv_a latent (64 + 512 values, one head) and value = the latent (512) through
# nn.AttentionWithVMLA, and kvcache/causal.go allocates keys [576 x 1 x cells] and values [512 x 1 x cells] per layer
# (llama.cpp's 2025 "latent+v" layout); 0.14.3 still cached 20 heads of K 256 and V 256 (nn.Attention)
OLLAMA_LATENT_CACHE_FROM = {"glm4moelite": (0, 15, 0)}
# The scheduler's graph estimate (GGML.GraphSize) sizes the score matrix whether or not flash attention is on: 0.5's
# code calls GraphSize(numCtx, min(numCtx, numBatch)) (ollama/ollama#6279 diff), so the runner got --flash-attn while
# the placement was sized for the score matrix (ollama/ollama#5821, 0.2.8: graph.full 5.1 GiB at 80000 tokens with
# --flash-attn on the command line); 0.6-0.11.10 (llm/memory.go EstimateGPULayers) still pass none, and from 0.11.11
# (GraphSize(..., useFlashAttention); llm/server.go llamaServer.Load from 0.12.11) only the gptoss case reads it.
# Flash attention shrinks the graph only where Ollama measures its own engine's allocation (measured_layout), or where
# no version is named (llama.cpp's compute buffer, as before).
# The llama runner's layout from 0.12.11 to 0.29 (llm/server.go llamaServer.Load, read at v0.12.11 and v0.22.1;
# before, llm/memory.go EstimateGPULayers and its "offload" line with memory.required.full): every GPU's free memory
# less one blk.0 with its cache (the buffer), then in buildLayout less MinimumMemory (457 MiB on CUDA),
# OLLAMA_GPU_OVERHEAD and max(graph partial, graph full) on each GPU that takes layers; the layers (weights + cache, the
# output layer last, dropped first) packed from the end. None of the reserve, the buffer nor the projector (its
# weights are summed over LoraPath there, not the projector) is an allocation, and its log (ml/device.go
# BackendMemory.Log) prints "total memory" = every layer's weights (blocks + output_norm + output; the token table is
# "historically" left out) + every layer's cache + the graph of each GPU with layers, the full one when every layer is
# on a GPU, else the partial one: codestral:22b at 32768 prints 12.3 + 7.0 + 3.1 = 22.4 GiB, where the placement needs
# 457 MiB and a 351 MiB layer more (ollama-malgen rows). That line takes required.full's place in these logs.
LAYOUT_TOTAL = ((0, 12, 11), MEASURED_LAYOUT[1])


def layout_total_line(version, spec) -> bool:
    """True when this version's log prints the llama runner's "total memory" (LAYOUT_TOTAL) for this model."""
    return (version is not None and at_least(version, *LAYOUT_TOTAL[0]) and not at_least(version, *LAYOUT_TOTAL[1])
            and not measured_layout(version, spec))


# a num_ctx above the model's trained context (the GGUF's context_length) is lowered to it, with "requested context
# size too large for model" in the log, from 0.9.3 (llm/server.go NewLlamaServer, ollama#11175); before, run as asked
CTX_CLAMP = (0, 9, 3)


# SupportsFlashAttention returns false for gptoss through 0.11.4 ("flash attention enabled but not supported by
# model"), and a quantized cache without flash attention falls back to f16 ("quantized kv cache requested but flash
# attention disabled", ollama#11711 on 0.11.2): OLLAMA_KV_CACHE_TYPE changes nothing there
GPTOSS_FLASH = (0, 11, 5)
QWEN25VL_MAX_PIXELS = 28 * 28 * 1280


def estimated_graph(version, spec) -> bool:
    """True when the placement takes GraphSize's estimate: every model before 0.11.11, and from then a model on the
    llama runner (not measured_layout): ollama#12403, GLM-4.5-Air (glm4moe, llama runner) on 0.12 prints graph.full
    7.2 GiB = 96 / 8 heads x its 3.6 GiB cache / 6, the fallback below. With no version given (None) the graph is
    llama.cpp's compute buffer, as before round 6, while the placement keeps the estimate's buffer layer
    (measured_layout and llama_server need a named version): a mixture, said in the session-9 note."""
    return version is not None and not measured_layout(version, spec)


def fallback_graph(spec, kv_total: int, version) -> int | None:
    """Ollama's graph estimate for an architecture GraphSize does not name (None when it names it, or measured)."""
    # Mistral 3.1/3.2 describe their text model as "mistral"; their GGUF (with the Pixtral tower) is "mistral3"
    arch = "mistral3" if (spec.vision or {}).get("model_type") == "pixtral" else spec.arch
    if not estimated_graph(version, spec) or arch in GRAPH_SIZE_ARCHS:
        return None
    return int(max(spec.n_heads // max(spec.n_kv_heads, 1), 1) * kv_total / 6)


def printed_weights_total(version, roles, kv_total) -> int:
    """What Ollama's log prints as memory.weights.total for these weights and this KV cache:
    < 0.6.1: the blocks with their KV share (memoryWeights; the output tensor is only 'nonrepeating');
    0.6.1-0.6.2: the blocks alone (0.6.2 prints total == repeating, ollama/ollama#9791);
    from 0.6.3: blocks + output tensor (memoryWeights + memoryLayerOutput, llm/memory.go v0.6.3)."""
    if version is not None and tuple(version) < WEIGHTS_TOTAL_WITH_KV:
        return int(roles["blocks"] + kv_total)
    if version is not None and tuple(version) < WEIGHTS_TOTAL_WITH_OUTPUT:
        return int(roles["blocks"])
    return int(roles["blocks"] + roles["output"])


def runner_weights(roles, proj=None) -> int:
    """What Ollama's own engine logs as "model weights" over its devices (ml/device.go BackendMemory.Log: every GPU's
    weights plus the CPU's InputWeights), summed: every tensor it creates (ml/backend/ggml/ggml.go New, v0.20.7):
    token_embd on the CPU as input, the blocks, the output tensor -- token_embd a second time as output.weight when
    the file has none (a tied model) -- and the vision tensors (v.*, mm.*) of the same file on the output device."""
    return int(roles["embedding"] + roles["blocks"] + roles["output"] + (proj["weights"] if proj else 0))


# The estimate's mllama case (cross-attention layers at one image's vision tokens, cache.OLLAMA_MLLAMA_CROSS_CELLS)
# came with ollama/ollama 8c238e70a "mllama cross attention" (2024-10-31), first tagged v0.4.0-rc7; up to rc6 GraphSize
# priced every mllama layer as a self-attention layer of num_ctx cells: llama3.2-vision:11b at 2048 prints
# required.kv 320.0 MiB = 40 x 2048 x 4 KiB (0.4.0-rc6, ollama/ollama#7440)
MLLAMA_CROSS_FROM = parse_version("0.4.0-rc7")


def mllama_cross_estimate(version) -> bool:
    """True when the version's estimate prices mllama's cross-attention layers apart (0.4.0-rc7 on)."""
    return at_least(version, *MLLAMA_CROSS_FROM)


# From 0.13.4 Ollama hands the llama runner FlashAttentionAuto when OLLAMA_FLASH_ATTENTION is unset (ollama bd6c1d6b4
# "flash attn: add auto mode for llama engine", first tagged v0.13.4-rc0; llm/server.go: Enabled / Disabled only when
# the variable is set), and llama.cpp turns it on where the device runs it ("Flash Attention was auto, set to
# enabled"): the runner's own cache is then padded as with flash attention (90000 cells -> 90112 on an L40S at 0.13.5,
# ticketllm row). The estimate (GraphSize) and the cache type rule do not see it.
RUNNER_AUTO_FLASH = parse_version("0.13.4-rc0")


def settings(version, knobs) -> dict:
    return {"flash": bool(knobs.get("flash_attn")), "ubatch": int(knobs.get("ubatch") or 512), "ngl": knobs.get("ngl"), "version": version,
            "ubatch_asked": knobs.get("ubatch"), "flash_off": knobs.get("flash_attn") is False,
            "flash_auto": knobs.get("flash_attn") is None,
            "flash_gpu": flash_supported(version, knobs.get("gpu_name")),
            "swa_full": bool(knobs.get("swa_full")), "gpus": max(int(knobs.get("num_gpus") or 1), 1),
            "weights_format": knobs.get("weights_format"),
            "mllama_cross": mllama_cross_estimate(version),
            "metal": bool(METAL_GPU.search(str(knobs.get("gpu_name") or ""))), "gpu_name": knobs.get("gpu_name")}


def _mllama_projector(v, spec, d, n, ff, patch, image) -> dict:
    """Llama 3.2 Vision's tower as Ollama prices it. Graph: llm/memory.go projectorMemoryRequirements, case "mllama"
    (0.4 through 0.11), in fp32 for max_num_tiles tiles of image_size^2 pixels and (image/patch)^2 + 1 patches padded
    to 8: 2.79 GiB for the 11b (printed 2.8, ollama/ollama#9311). Weights: the tower's tensors in 16 bits
    (transformers MllamaVisionModel: num_hidden_layers + num_global_layers bias-free attention blocks with fc1/fc2
    biases, the gated tile position embedding of 9 aspect ratios x tiles x patches x hidden, the projection of
    vision_output_dim to the text hidden size)."""
    tiles, heads = int(v.get("max_num_tiles") or 4), int(v.get("attention_heads") or 16)
    patches = (image // patch) ** 2 + 1                        # + the class embedding
    padded = patches + (8 - patches % 8) % 8
    graph = 4 * (8 + image * image * 3 * tiles + d * patches * tiles + 9 * d * padded * tiles
                 + (padded * tiles) ** 2 * heads)
    layers = n + int(v.get("num_global_layers") or 0)
    per_layer = 4 * d * d + 2 * d * ff + ff + d + 4 * d
    out_dim = int(v.get("vision_output_dim") or d)
    params = (layers * per_layer + 9 * tiles * patches * d + patches * d + 3 * patch * patch * d + d
              + 2 * 9 * tiles * d + 4 * d + out_dim * spec.hidden + spec.hidden)
    return {"weights": int(params * 2), "graph": int(graph), "params": params, "linear": layers * (4 * d * d + 2 * d * ff)}


def projector(spec) -> dict | None:
    """{'weights', 'graph'} bytes of the vision projector, from the config's vision_config; None without one."""
    v = spec.vision
    if not v or not v.get("hidden_size") or not v.get("num_hidden_layers", v.get("depth")):
        return None
    d, n = int(v["hidden_size"]), int(v.get("num_hidden_layers", v.get("depth")))
    ff = int(v.get("intermediate_size") or 4 * d)
    heads = int(v.get("num_attention_heads") or v.get("num_heads") or 16)
    patch, image = int(v.get("patch_size") or 14), int(v.get("image_size") or 896)
    patches, gguf, generic = (image // patch) ** 2, None, False
    if v.get("model_type") == "pixtral":
        # Pixtral (Mistral 3.1/3.2): bias-free q k v o, a gated SiLU MLP (gate, up, down), 2D RoPE instead of a
        # position table (transformers PixtralVisionModel); Ollama's projector.weights is its v.* tensors, the
        # multi-modal projector (mm.*) being sized with the model: 24 x (4 x 1024^2 + 3 x 1024 x 4096) + the patch
        # convolution = 403.3 M values, 769.3 MiB in F16 (mistral-small3.1:24b, ollama/ollama#10615)
        params = n * (4 * d * d + 3 * d * ff + 2 * d) + 3 * patch * patch * d + d
        linear = n * (4 * d * d + 3 * d * ff)
    elif v.get("model_type") == "gemma4_vision":
        # Gemma 4's vision tower (transformers Gemma4VisionModel): bias-free q k v o of heads x head_dim, a gated MLP
        # (Gemma4VisionMLP: gate, up, down), four norms, the patch projection, a two-axis position table
        # (2 x position_embedding_size x hidden) and the embedder's projection into the decoder: 27 x 1152 / 4304 is
        # 0.575 B values (Gemma-4-31B); not checked against a printed figure
        inner = heads * int(v.get("head_dim") or d // heads)
        pos = 2 * int(v.get("position_embedding_size") or 10240) * d
        params = n * (4 * d * inner + 3 * d * ff + 4 * d) + 3 * patch * patch * d + pos + d * spec.hidden
        linear = n * (4 * d * inner + 3 * d * ff)
        gguf = file_bytes(params, n * 4 * d + pos, 3 * patch * patch * d)  # the norms and positions F32 (mmproj)
    elif v.get("model_type") == "llama4_vision_model":  # vLLM's mllama4.py tower and projector (mmproj.llama4_tower)
        params, linear = llama4_tower(v, spec.hidden, d, n, ff, patch)
    elif spec.arch == "dots_ocr":  # vLLM's dots_ocr.py DotsVisionTransformer (mmproj.dots_tower); no model_type given
        params, linear = dots_tower(v, n, ff, patch)
    elif v.get("model_type") == "qwen2_5_vl" or (not v.get("model_type") and spec.arch == "qwen2_5_vl"
                                                  and "fullatt_block_indexes" in v):
        # a config.json's Qwen2.5-VL tower (mmproj.qwen25vl_tower); Qwen's published config.json (transformers 4.41.2)
        # names no model_type in its vision_config: the decoder's arch and the tower's own window-attention field say
        # it. The built-in descriptions' trimmed vision_config (depth and widths) keeps the generic tower (docs/kv.md;
        # test_llm_bnb_lora's printed 6.794 GiB)
        params, linear = qwen25vl_tower(v, spec.hidden, d, n, ff, patch)
    elif v.get("model_type") in QWEN3VL_TOWERS:  # one description (mmproj.qwen3vl_tower); llama.cpp's file types below
        params, linear, f32, patch_w = qwen3vl_tower(v, spec.hidden, d, n, ff, patch)
        gguf = file_bytes(params, f32, patch_w)
    else:  # the generic ViT (mmproj.GENERIC_VIT_TOWERS; any other family is priced so and noted, mmproj.tower_note)
        per_layer, generic = 4 * d * d + 4 * d + 2 * d * ff + d + ff + 4 * d, True  # q k v o, fc1 fc2 (+bias), 2 norms
        params = n * per_layer + 3 * patch * patch * d + d + patches * d + d * spec.hidden
        linear = n * (4 * d * d + 2 * d * ff)  # the blocks' matmuls (what a runtime's 4-bit quantization can take)
    graph = heads * patches * patches * 4
    # With flash attention on, Ollama's own engine runs the vision attention as ggml_flash_attn_ext too (ml/backend/
    # ggml/ggml.go Tensor.ScaledDotProductAttention: flash_attn_ext whenever the backend's flashAttention is enabled,
    # for every caller of nn.Attention), so no heads x patches^2 score matrix is allocated. Pixtral's encoder calls
    # nn.Attention (model/models/mistral3/model_vision.go VisionSelfAttention.Forward, ollama 040a8e85); its largest
    # remaining step is the gated MLP (VisionMLP.Forward: Gate(x).SILU(Up(x)), then Down): the gate, up and product
    # rows of ff beside the residual and the normed input, 4 bytes each: 4 x patches x (3 ff + 2 d) (ggml-alloc's
    # reuse not modelled). The other towers' attention code is not read: they keep the score matrix.
    graph_flash = 4 * patches * (3 * ff + 2 * d) if v.get("model_type") == "pixtral" else None
    if v.get("model_type") == "mllama_vision_model":
        return _mllama_projector(v, spec, d, n, ff, patch, image)
    if spec.arch in ("qwen2_5_vl", "qwen25vl"):
        # GraphSize's vision case "qwen25vl" (fs/ggml/ggml.go, 0.7.0 on): in fp32, max_pixels (28 x 28 x 1280 unless
        # the GGUF says) x 3 channels twice, the patches, attention over max_pixels / 14^2 patches and the embedding
        px = QWEN25VL_MAX_PIXELS
        n_p = px // (patch * patch)
        graph = 4 * (2 * px * 3 + n_p * 3 * patch * patch + n_p * n_p * heads + d * n_p)
    return {"weights": int(params * 2), "graph": int(graph), "params": params, "linear": linear, "generic": generic,
            **({"graph_flash": int(graph_flash)} if graph_flash else {}), **({"gguf_bytes": gguf} if gguf else {})}


def llama_server(version) -> bool:
    """Ollama 0.30.0-rc0 on starts llama-server (MEASURED_LAYOUT's end); None: its own engine, as report.py says."""
    return version is not None and at_least(version, *MEASURED_LAYOUT[1])


def evaluate(spec, ctx, parallel, kv, roles, vram, s, proj=None) -> dict:
    if llama_server(s["version"]):
        return evaluate_llama_server(spec, ctx, parallel, kv, roles, vram, s, proj)
    if spec.arch in GPTOSS_ARCHS and s["version"] is not None and not at_least(s["version"], *GPTOSS_FLASH):
        kv, s = "f16", dict(s, flash=False)
    kvd = kv_cache(spec, ctx, parallel, kv, "ollama", swa_full=s["swa_full"], version=s["version"],
                   mla_cache=mla_cache(s["version"], spec), mllama_cross=s.get("mllama_cross", True))
    L = spec.n_layers
    out_w = roles["output"]
    ckpt = kvd["recurrent_state"] * recurrent_checkpoints(s["version"], spec)  # with the layers, as the cache
    kv_all = kvd["total"] + ckpt
    layer = (roles["blocks"] + kv_all) / L
    counted = s["flash"] and (s["version"] is None or measured_layout(s["version"], spec))
    if proj and counted and proj.get("graph_flash") and s["version"] is not None:
        proj = dict(proj, graph=proj["graph_flash"])  # its own engine's vision attention under flash (projector)
    graph_full = compute_buffer(spec, kvd["cells"], s["ubatch"], counted, graph="ollama-engine")
    graph_partial = graph_full + out_w
    if gguf_arch(spec) in LLAMA_GRAPH_ARCHS and not spec.n_experts and estimated_graph(s["version"], spec):
        graph_full, graph_partial = llama_graph(spec, kvd["cells"], s["ubatch"], s["version"])
    elif spec.arch in GEMMA_GRAPH_ARCHS and estimated_graph(s["version"], spec):
        # GraphSize is the estimate's (Ollama's own engine measures its allocation from 0.11.11, as for fallback_graph)
        graph_full, graph_partial = gemma_graph(spec, kvd["cells"], s["ubatch"])
    elif spec.arch in GPTOSS_ARCHS:
        graph_full, graph_partial = gptoss_graph(spec, kvd["cells"], kv, s["version"], s["flash"], parallel)
    elif gguf_arch(spec) in CHATGLM_GRAPH_ARCHS and estimated_graph(s["version"], spec):
        graph_full, graph_partial = chatglm_graph(spec, kvd["cells"], s["ubatch"])
    elif fallback_graph(spec, kvd["total"], s["version"]) is not None:
        graph_full = graph_partial = fallback_graph(spec, kvd["total"], s["version"])
    if s.get("metal") and estimated_graph(s["version"], spec):
        # llm/memory.go EstimateGPULayers (0.5.4; llm/server.go llamaServer.Load from 0.12.11): "on metal there's no
        # partial offload overhead", graphPartialOffload = graphFullOffload. (Metal's MinimumMemory: METAL_MINIMUM)
        graph_partial = graph_full
    zero = (proj["weights"] + proj["graph"]) if proj else 0
    reserve_name, reserve = reserve_line(s["version"], s.get("metal", False))
    sizes = uneven_sizes(spec, roles, kv_all, s.get("weights_format"), kvd)
    buf = buffer_layer(s["version"], sizes[0] if sizes else layer, max(sizes) if sizes else layer, roles,
                       kv_all / L)
    if measured_layout(s["version"], spec):  # no buffer layer, one graph (the runner's)
        buf, graph_partial = 0, graph_full
    over = {reserve_name: reserve, "layer_buffer": int(buf), "compute_buffer": graph_full}
    if not buf:  # Ollama's own engine holds no layer back (MEASURED_LAYOUT)
        del over["layer_buffer"]
    if proj:
        over["projector_weights"], over["projector_graph"] = proj["weights"], proj["graph"]
    if ckpt:
        over["state_checkpoints"] = int(ckpt)
    full_total = roles["blocks"] + kv_all + out_w + graph_full + zero + reserve + buf
    want = L + 1 if s["ngl"] is None else min(s["ngl"], L + 1)
    ngl, placed = want, None
    gpus = s.get("gpus", 1)
    # over several GPUs of `vram` free each (multi_gpu_layers): the others' room, without GPU 0's projector
    extra_room = (gpus - 1) * max(vram - (reserve + buf + max(graph_full, graph_partial)), 0) if vram else 0
    if vram:
        fixed = reserve + buf + zero + max(graph_full, graph_partial)
        placed = multi_gpu_layers(vram - fixed, vram - fixed + zero, layer, gpus, L)
        if placed == L and output_fits(vram - fixed, vram - fixed + zero, layer, gpus, L, out_w):
            placed = L + 1
        ngl = min(want, placed)
    on = min(ngl, L)
    if sizes:  # blocks of different sizes: walk them as Ollama does (the buffer is blk.0 but in 0.7.0)
        layer = sizes[0]
        full_total = roles["blocks"] + kv_all + out_w + graph_full + zero + reserve + buf
        fixed = reserve + buf + zero + max(graph_full, graph_partial)
        n, on_bytes, overflow = place_uneven(sizes, fixed, vram + extra_room if vram else vram, min(want, L), s["version"])
        if vram:
            placed = n + (1 if n == L and fixed + on_bytes + out_w < vram + extra_room else 0)
            ngl = min(want, placed)
        on = min(ngl, n)
    # the cache of the layers on the GPU: the placed blocks' (the last ones from 0.7, BACKWARD), evenly without sizes
    lw = layer_weights(spec, roles["blocks"], s.get("weights_format")) if sizes else None
    kv_layers = [x - w for x, w in zip(sizes, lw)] if sizes else None
    # the blocks' weights on the GPU: the last `on` blocks', each its own (the llama runner is llama.cpp's loader,
    # i_gpu_start = n_layer - n_gpu_layers; Ollama's own engine names them, 'GPULayers:1(23..23)'), not an even share:
    # qwen3.5:2b Q8_0 at num_gpu 1 prints ROCm0 weights of 53.1 MiB, a full-attention block (kv-accuracy round 65)
    gpu_blocks = (roles["blocks"] if on >= L else sum(lw[L - on:]) if on else 0) if sizes else roles["blocks"] * on / L
    backward = s["version"] is None or at_least(s["version"], *BACKWARD)
    gpu_kv = (kv_all if ngl > L else kv_all * on / L if not sizes
              else sum(kv_layers[L - on:] if backward else kv_layers[:on]) if on else 0)
    if ngl > L:
        total = full_total
    elif sizes:
        total = reserve + buf + zero + graph_partial + on_bytes
    else:
        total = reserve + buf + zero + graph_partial + on * layer
    out = {"kv": kvd, "overhead": over, "total": int(total), "gpu_weights": int(gpu_blocks + (out_w if ngl > L else 0)),
            "gpu_kv": int(gpu_kv),
            "fits": (placed >= want) if vram else None, "layers_placed": placed, "budget": int(vram) if vram else None, "ngl": ngl,
            "graph_partial": int(graph_partial),
            # what the verdict compares with the free memory: the scheduler sizes the graph as for a partial offload
            # (graph_partial = graph full + the output tensor), so its need for every layer exceeds `total` (what is
            # allocated once loaded, with the full graph) by the output tensor
            "placement_need": int(reserve + buf + zero + max(graph_full, graph_partial) + (on_bytes if sizes else on * layer)
                                  + (out_w if ngl > L else 0)),
            "printed_weights_total": (runner_weights(roles, proj) if measured_layout(s["version"], spec)
                                      else printed_weights_total(s["version"], roles, kvd["total"])),
            "required_full": (int(total + overflow + out_w) if sizes and ngl <= L and on and s.get("gpus", 1) == 1
                              else int(overflow + out_w) if sizes and ngl <= L and s.get("gpus", 1) == 1
                              else required_full(full_total, graph_full, graph_partial, on, ngl, L, placed, roles,
                                                 dict(kvd, total=kv_all), out_w, zero)
                              if s.get("gpus", 1) == 1 else int(roles["blocks"] + kv_all + out_w + zero
                                                                + s["gpus"] * (reserve + buf + graph_partial))),
            # the output layer off the GPU: its tensor (a tied model's is token_embd, already on the host) and what
            # loads with it (Gemma 4's per-layer table, gemma4_ple.place)
            "host_weights": int(roles["embedding"] + roles["blocks"] - gpu_blocks
                                + (0 if ngl > L else roles.get("per_layer", 0) if spec.tied else out_w))}
    if layout_total_line(s["version"], spec) and gpus == 1:
        # the log's "total memory" (LAYOUT_TOTAL), printed where required.full was: the weights and cache of every
        # layer wherever placed, one graph
        out["total_memory"] = int(roles["blocks"] + out_w + kv_all
                                  + (graph_full if ngl > L else graph_partial if on else 0))
    if not measured_layout(s["version"], spec) and not spec.mla:
        # the llama runner is llama.cpp: it allocates num_ctx x parallel cells at the cache type's block size (q8_0 34
        # bytes a 32), which its "llama_kv_cache: size = N MiB" line prints, where the estimate above prices a byte
        # (an MLA model's runner layout is llama.cpp's by build, not read here)
        runner_flash = s["flash"] or bool(s.get("flash_auto") and s.get("flash_gpu", True) and s["version"] is not None
                                          and at_least(s["version"], *RUNNER_AUTO_FLASH))
        run = kv_cache(spec, ctx * parallel, parallel, kv, "llama.cpp", ubatch=s["ubatch"],
                       swa_full=s["swa_full"] or spec.arch in OLLAMA_RUNNER_FULL_SWA, flash=runner_flash)
        out["kv_allocated"] = run["total"] - run["recurrent_state"]
    return out


def mla_cache(version, spec) -> str:
    """The MLA cache layout this version keeps (cache.MLA_CACHES): the latent and its copy as values where its own
    engine caches the latent (OLLAMA_LATENT_CACHE_FROM; no version: the newest), else the estimate's per-head K and V."""
    start = OLLAMA_LATENT_CACHE_FROM.get(gguf_arch(spec))
    return "latent+v" if start and (version is None or at_least(version, *start)) else OLLAMA_MLA_ESTIMATE


# Flash attention Ollama's own engine turns on by itself (OLLAMA_FLASH_ATTENTION unset): envconfig.FlashAttention(
# f.FlashAttention()), the architectures fs/ggml GGML.FlashAttention lists, on every GPU FlashAttentionSupported
# passes (CUDA with driver >= 7 except compute 7.2, ROCm, Metal, Vulkan, CPU; llm/server.go NewLlamaServer, v0.24.0).
# First release tag listing each (every v0.11-v0.24 tag of fs/ggml/ggml.go read; gemma4 is missing from 0.20.2-0.20.3)
OLLAMA_FLASH_FROM = {"gptoss": (0, 11, 8), "qwen3": (0, 12, 4), "qwen3moe": (0, 12, 4), "gemma3": (0, 12, 6),
                     "qwen3vl": (0, 12, 8), "qwen3vlmoe": (0, 12, 8), "mistral3": (0, 13, 2), "olmo3": (0, 13, 4),
                     "glm4moelite": (0, 14, 3), "lfm2": (0, 14, 3), "qwen3next": (0, 15, 5), "lfm2moe": (0, 17, 1),
                     "qwen35": (0, 17, 1), "qwen35moe": (0, 17, 1), "gemma4": (0, 20, 4)}


# CUDA cards FlashAttentionSupported refuses: ml/device.go cudaFlashAttentionSupported, by compute capability
# (cards.compute_capability): a major below the version's bound, or 7.2 (the Jetson Xavier boards; aa45f7ce2 "discover:
# Disable flash attention for Jetson Xavier (CC 7.2)", 2025-10-07, before any listed architecture). (first release,
# lowest major allowed); the last row a version reaches applies: 6 before 0.30 (this project's reading since review13b:
# Kepler / Maxwell refused), 7 from 9db4bdbad (v0.30.0, llama-server only: the Pascal cards, 6.x, lose it), 6 again
# from d4a8991fa "llama: enable FA on CUDA CC 6.x GPUs" (first tagged v0.31.2; ml/device.go read at every
# v0.30.0-v0.32.15 tag)
FLASH_CUDA_MIN_MAJOR = (((0, 0, 0), 6), ((0, 30, 0), 7), ((0, 31, 2), 6))


def flash_supported(version, gpu_name=None) -> bool:
    """False when this version's FlashAttentionSupported refuses the named card (FLASH_CUDA_MIN_MAJOR, by its compute
    capability); a card not named, or one cards.py has no compute capability for, is taken as one that supports it."""
    cc = compute_capability(gpu_name)
    if cc is None:
        return True
    bound = [major for since, major in FLASH_CUDA_MIN_MAJOR if at_least(version, *since)][-1]
    return cc[0] >= bound and cc != (7, 2)


def flash_shrinks_graph(spec, ctx, parallel, kv, roles, vram, s, proj, ev) -> bool:
    """True where OLLAMA_FLASH_ATTENTION=1 would make this run's compute buffer smaller: flash attention is off here
    (not set, not turned on by the version itself, or set off) on a card this version runs it on, and the same run with
    it on (the model's own refusal, GPTOSS_FLASH, applied by evaluate) has a smaller graph than ev's."""
    if s["flash"] or not s.get("flash_gpu", True):
        return False
    on = evaluate(spec, ctx, parallel, kv, roles, vram, dict(s, flash=True, flash_off=False), proj)
    return on["overhead"].get("compute_buffer", 0) < ev["overhead"].get("compute_buffer", 0)


def default_flash(version, spec, gpu_name=None) -> bool:
    """True when this version's own engine runs this architecture with flash attention unless told otherwise (on a
    card it supports flash attention on: a named Jetson Xavier or pre-Pascal card does not)."""
    start = OLLAMA_FLASH_FROM.get(gguf_arch(spec))
    if not flash_supported(version, gpu_name):
        return False
    return bool(start and measured_layout(version, spec) and at_least(version, *start))


# Ollama's own engine keeps checkpoints of each sequence's recurrent state (every DeltaNet layer's conv and delta
# state, f32) so a prompt sharing a prefix resumes mid-sequence; the runner's reserve pass allocates every slot's
# entries on the layer's device (reserveCheckpointConv / reserveCheckpointRecurrent: for slot in maxSequences, for each
# of checkpointCount entries). qwen3next's own cache keeps 32 a slot (model/models/qwen3next/checkpoints.go
# checkpointCountDefault, v0.15.5 to v0.17.1-rc0); from v0.17.1-rc1 qwen3next and qwen35(moe) share kvcache.Recurrent,
# DefaultCheckpointCount = 24 (read at v0.17.1-rc1, v0.20.0, v0.24.0; no setting changes it)
RECURRENT_CHECKPOINTS = ((_rc("0.17.1-rc1"), 24), (_rc("0.15.5-rc2"), 32))
RECURRENT_CHECKPOINT_ARCHS = ("qwen3next", "qwen35", "qwen35moe")


def recurrent_checkpoints(version, spec) -> int:
    """Copies of each slot's recurrent state this version's own engine holds besides the live one (0 elsewhere)."""
    if gguf_arch(spec) not in RECURRENT_CHECKPOINT_ARCHS or not measured_layout(version, spec):
        return 0
    return next((n for start, n in RECURRENT_CHECKPOINTS if at_least(version, *start)), 0)


def measured_layout(version, spec) -> bool:
    """True when this version places the model from its runner's measured allocation (MEASURED_LAYOUT)."""
    if version is None or not at_least(version, *MEASURED_LAYOUT[0]) or at_least(version, *MEASURED_LAYOUT[1]):
        return False
    start = OLLAMA_ENGINE_FROM.get(gguf_arch(spec))
    return start is not None and at_least(version, *start)


def buffer_layer(version, blk0: float, largest_block: float, roles, kv_share: float) -> float:
    """The layer Ollama's estimate holds back on every GPU as a buffer (MAX_LAYER_BUFFER): blk.0 with its cache
    share; in 0.7.0 the largest tensor group (a block, the token table or the output tensor) with layer 0's."""
    if version is None or not at_least(version, *MAX_LAYER_BUFFER[0]) or at_least(version, *MAX_LAYER_BUFFER[1]):
        return blk0
    return max(largest_block, roles["embedding"] + kv_share, roles["output"] + kv_share)


def autofit(version, ev) -> list:
    if at_least(version, *MEASURED):
        return [("ollama ps", "Ollama >= 0.12 measures the real allocation and places layers itself; check the split "
                 "with `ollama ps` (100% GPU) after a first load")]
    return []
