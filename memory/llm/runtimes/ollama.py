"""Ollama: num_ctx per request x OLLAMA_NUM_PARALLEL cells, the vision projector it loads with the model,
and its scheduler's layer placement (llm/memory.go, EstimateGPULayers):

  a layer goes on the GPU while free > reserve + projector weights + projector graph
                                      + max(graph full, graph partial) + layers so far + this layer;
  the output layer last. reserve = the per-GPU minimum (457 MiB for CUDA) plus one layer (blk.0 and its share of
  the KV cache) held back as a buffer ("add one layer worth of memory as a buffer", gpuAllocations[i] +=
  MinimumMemory + layerSize, in every version since 0.2); graph full = the llama.cpp compute buffer; graph
  partial = graph full + the output tensor it then keeps on the GPU.
  Its log's memory.weights.total is not one quantity across versions: before 0.6 the sum over blocks of the block
  plus its share of the KV cache (the output tensor is left out); 0.6.x the blocks alone; later the blocks plus
  the output tensor (printed_weights_total).
  projector (mmproj, F16): the vision tower's parameters x 2 bytes; its graph = heads x patches^2 x 4 bytes of
  fp32 attention scores for one image (gemma3's SigLIP: 16 x 4096^2 x 4 = 1 GiB).
  Ollama >= 0.12 measures instead (the runner allocates, then reports what fits): `ollama ps` is the truth there."""
from ...units import MiB
from ..cache import kv_cache
from . import at_least
from .llamacpp import compute_buffer

RESERVE = 457 * MiB      # ml.DeviceInfo.MinimumMemory / gpu.MinimumMemory for CUDA and ROCm
MEASURED = (0, 12)
WEIGHTS_TOTAL_WITH_KV = (0, 6)   # llm/memory.go: memoryWeights += blk + kv/L before the per-layer KV of 0.6
WEIGHTS_TOTAL_WITH_OUTPUT = (0, 7)
# The scheduler's graph estimate (GGML.GraphSize) took no flash-attention argument before 0.6: 0.5's code calls
# GraphSize(numCtx, min(numCtx, numBatch)) (ollama/ollama#6279 diff), so the runner got --flash-attn while the
# placement was sized for the score matrix (ollama/ollama#5821, 0.2.8: graph.full 5.1 GiB at 80000 tokens with
# --flash-attn on the command line). The first version that passes it is not pinned; 0.6 is taken.
FLASH_IN_ESTIMATE = (0, 6)


def printed_weights_total(version, roles, kv_total) -> int:
    """What Ollama's log prints as memory.weights.total for these weights and this KV cache:
    < 0.6: the blocks with their KV share (memoryWeights; the output tensor is only 'nonrepeating');
    0.6.x: the blocks alone (0.6.2 prints total == repeating, ollama/ollama#9791; the boundary is inferred:
    the first later log we hold, 0.9, adds the output);
    newer: blocks + output tensor (memoryWeights + memoryLayerOutput)."""
    if version is not None and tuple(version) < WEIGHTS_TOTAL_WITH_KV:
        return int(roles["blocks"] + kv_total)
    if version is not None and tuple(version) < WEIGHTS_TOTAL_WITH_OUTPUT:
        return int(roles["blocks"])
    return int(roles["blocks"] + roles["output"])


def settings(version, knobs) -> dict:
    return {"flash": bool(knobs.get("flash_attn")), "ubatch": 512, "ngl": knobs.get("ngl"), "version": version,
            "swa_full": bool(knobs.get("swa_full"))}


def projector(spec) -> dict | None:
    """{'weights', 'graph'} bytes of the vision projector, from the config's vision_config; None without one."""
    v = spec.vision
    if not v or not v.get("hidden_size") or not v.get("num_hidden_layers", v.get("depth")):
        return None
    d, n = int(v["hidden_size"]), int(v.get("num_hidden_layers", v.get("depth")))
    ff = int(v.get("intermediate_size") or 4 * d)
    heads = int(v.get("num_attention_heads") or v.get("num_heads") or 16)
    patch, image = int(v.get("patch_size") or 14), int(v.get("image_size") or 896)
    patches = (image // patch) ** 2
    per_layer = 4 * d * d + 4 * d + 2 * d * ff + d + ff + 4 * d      # q k v o (+bias), fc1 fc2 (+bias), 2 norms
    params = n * per_layer + 3 * patch * patch * d + d + patches * d + d * spec.hidden
    return {"weights": int(params * 2), "graph": int(heads * patches * patches * 4), "params": params}


def evaluate(spec, ctx, parallel, kv, roles, vram, s, proj=None) -> dict:
    kvd = kv_cache(spec, ctx, parallel, kv, "ollama", swa_full=s["swa_full"], version=s["version"])
    L = spec.n_layers
    out_w = roles["output"]
    layer = (roles["blocks"] + kvd["total"]) / L
    counted = s["flash"] and (s["version"] is None or at_least(s["version"], *FLASH_IN_ESTIMATE))
    graph_full = compute_buffer(spec, kvd["cells"], s["ubatch"], counted)
    graph_partial = graph_full + out_w
    zero = (proj["weights"] + proj["graph"]) if proj else 0
    over = {"cuda_context": RESERVE, "layer_buffer": int(layer), "compute_buffer": graph_full}
    if proj:
        over["projector_weights"], over["projector_graph"] = proj["weights"], proj["graph"]
    full_total = roles["blocks"] + kvd["total"] + out_w + graph_full + zero + RESERVE + layer
    want = L + 1 if s["ngl"] is None else min(s["ngl"], L + 1)
    ngl, placed = want, None
    if vram:
        fixed = RESERVE + layer + zero + max(graph_full, graph_partial)
        placed = min(max(int((vram - fixed) // layer), 0) if vram > fixed else 0, L)
        if placed == L and fixed + L * layer + out_w < vram:
            placed = L + 1
        ngl = min(want, placed)
    on = min(ngl, L)
    if ngl > L:
        total = full_total
    else:
        total = RESERVE + layer + zero + graph_partial + on * layer
    return {"kv": kvd, "overhead": over, "total": int(total), "gpu_weights": int(roles["blocks"] * on / L + (out_w if ngl > L else 0)),
            "fits": (placed >= want) if vram else None, "layers_placed": placed, "budget": int(vram) if vram else None, "ngl": ngl,
            "graph_partial": int(graph_partial),
            # what the verdict compares with the free memory: the scheduler sizes the graph as for a partial offload
            # (graph_partial = graph full + the output tensor), so its need for every layer exceeds `total` (what is
            # allocated once loaded, with the full graph) by the output tensor
            "placement_need": int(RESERVE + layer + zero + max(graph_full, graph_partial) + on * layer
                                  + (out_w if ngl > L else 0)),
            "printed_weights_total": printed_weights_total(s["version"], roles, kvd["total"]),
            "host_weights": int(roles["embedding"] + roles["blocks"] * (L - on) / L + (0 if spec.tied or ngl > L else out_w))}


def autofit(version, ev) -> list:
    if at_least(version, *MEASURED):
        return [("ollama ps", "Ollama >= 0.12 measures the real allocation and places layers itself; check the split "
                 "with `ollama ps` (100% GPU) after a first load")]
    return []
