"""Ollama's layer placement (llm/memory.go EstimateGPULayers, 0.3-0.11): whole layers over one or several GPUs of equal
free memory, the output layer's room, the log's memory.required.full, and blocks of different sizes walked forward or
backward. Split from ollama.py (its 600-line guard); ollama.py re-exports these names."""
from ..spec import SHARED
from ..weights import layer_weights
from . import at_least
from .llamacpp import layer_kv_bytes


# Placement over several GPUs (llm/memory.go EstimateGPULayers, 0.3-0.11): every GPU with room for the reserve, a layer
# as buffer, the larger graph and two layers joins ("gpusWithSpace"), GPU 0 also holding the projector; the layers go
# round-robin (`gpusWithSpace[i%j]`), a GPU that cannot take the next one leaves the list, so on GPUs of equal free
# memory each takes as many layers as its own room holds and the total is their sum ("layers.split=31,31" for
# gemma3:27b-fp16 over two 5090s, ollama#11162); the output layer needs the room left once every layer is placed.
# Blocks of different sizes are walked against the GPUs' summed room (an approximation of the per-GPU walk).
def multi_gpu_layers(room0: float, room_other: float, layer: float, gpus: int, L: int) -> int:
    """Layers Ollama places on `gpus` GPUs of equal free memory: GPU 0's room (after its reserve, buffer layer,
    graph and projector) and each other GPU's (the same without the projector), whole layers each."""
    per = lambda room: max(int(room // layer), 0) if room > 0 else 0  # noqa: E731
    return min(per(room0) + (gpus - 1) * per(room_other), L)


def output_fits(room0: float, room_other: float, layer: float, gpus: int, L: int, out_w: float) -> bool:
    """Once every layer is placed (round-robin: GPU k holds the layers i with i % gpus == k), the output layer
    goes on a GPU whose room left exceeds it."""
    counts = [L // gpus + (1 if k < L % gpus else 0) for k in range(gpus)]
    left = [room0 - counts[0] * layer] + [room_other - c * layer for c in counts[1:]]
    return max(left) > out_w


# Over several GPUs (llm/memory.go EstimateGPULayers, 0.5-0.11): every GPU with room is charged the minimum reserve and
# a layer as buffer, every GPU that gets layers a graph - the partial one ("multigpu should always use the partial
# graph size") - and memory.required.full adds the layers and the output wherever they go (a GPU or the overflow):
# the weights, the cache and the projector once, reserve + buffer + partial graph once a GPU. qwen3:32b q6_K at
# num_ctx 32768 over three 3090s: 25.1 + 8.0 + 3 x (0.45 + 0.50 + 10.67) = 67.3 GiB as printed (ollama#10740).
def required_full(full_total, graph_full, graph_partial, on, ngl, L, placed, roles, kvd, out_w, zero) -> int:
    """The log's memory.required.full (llm/memory.go: memoryRequiredTotal = the GPU's allocation + overflow): every
    layer on the GPU, the full graph; a partial offload keeps its placed layers with the partial graph and adds the
    layers (with their cache) and the output left off the GPU, so it exceeds the all-on-GPU figure by the output
    tensor; with no layer placed (no GPU room) nothing is allocated on the GPU: the weights and the cache alone."""
    if ngl > L:
        return int(full_total)
    if placed == 0 or on == 0:
        return int(roles["blocks"] + kvd["total"] + out_w)
    return int(full_total - graph_full + graph_partial)


# Blocks of different sizes (DeepSeek's dense first blocks before its MoE ones): llm/memory.go holds blk.0 (with its
# cache) back as the buffer and walks the blocks forward through 0.6.x (`for i := range BlockCount`), backward from
# 0.7 (`for i := BlockCount - 1; i >= 0; i--`), placing each while `free > used + layerSize`; a block that does not fit
# ends the walk on one GPU. The overflow before 0.7 is the last block's size once for every block left off
# (`overflow += layerSize` after the loop, layerSize being the last block's); from 0.7 each block's own. deepseek-
# r1:671b on 6.9 GiB (0.5.11): the three dense blocks go on the GPU (required.partial 3.4 GiB) and 58 + the rest
# are priced at blk.60's size (ollama/ollama#8667).
BACKWARD = (0, 7)


def uneven_sizes(spec, roles, kv_total, fmt=None, kvd=None) -> list | None:
    """Each block's bytes with its share of the cache, or None when the blocks are alike. A model with KV-shared
    layers (Gemma 4 E2B / E4B): each layer its own cache (the runner allocates the donors' alone, kvDonorMap; a
    full layer's is larger than a sliding one's), the rest of kv_total (none but checkpoints) evenly."""
    p = spec.layer_params
    if not p or len(p) != spec.n_layers or max(p) <= 1.01 * min(p):
        return None
    own = [0.0] * len(p)
    if kvd and SHARED in spec.layer_kinds:
        own = layer_kv_bytes(spec, kvd)
    rest = (kv_total - sum(own)) / len(p)
    return [w + o + rest for w, o in zip(layer_weights(spec, roles["blocks"], fmt), own)]


def place_uneven(sizes, fixed, vram, want, version) -> tuple:
    """(blocks placed, their bytes, overflow bytes of the blocks left off) as llm/memory.go walks them."""
    backward = version is None or at_least(version, *BACKWARD)
    order = list(reversed(range(len(sizes)))) if backward else list(range(len(sizes)))
    placed, used = 0, 0.0
    for i in order:
        if placed >= want or (vram is not None and not vram > fixed + used + sizes[i]):
            break
        used += sizes[i]
        placed += 1
    left = order[placed:]
    overflow = sum(sizes[i] for i in left) if backward else len(left) * sizes[-1]
    return placed, used, overflow
