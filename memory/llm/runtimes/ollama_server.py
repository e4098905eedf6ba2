"""Ollama >= 0.30, which starts llama.cpp's llama-server (ollama.llama_server): the scheduler's VRAM guess that picks
the cards (predicted_vram), the llama.cpp build each release vendors, the automatic num_batch (generation_batch) and
the plan's figures as llama.cpp's (evaluate_llama_server). ollama.py keeps the releases before it."""
from ...units import GiB, MiB
from . import at_least

def predicted_vram(spec, roles, ctx: int, parallel: int = 1, proj=None) -> int:
    """Ollama >= 0.30's guess that picks the cards (llm/llama_server.go PredictServerVRAM, server/sched.go): the model
    file's size (os.Stat: every tensor, the vision ones of a one-file model too, as mmprojMemoryRequirement reads an
    inline projector from the model path) plus an f16 cache of 2 x block_count x HeadCountKVMin (the smallest entry,
    a 0 read as 1) x (embedding_length / HeadCountMax) x cells, cells = num_ctx clamped to the trained context
    (effectiveModelContext) x parallel. block_count is the GGUF's: the plan passes the spec through gguf_blocks."""
    heads_kv = min(spec.layer_kv_heads or (spec.n_kv_heads,)) or 1
    cells = (min(ctx, spec.max_ctx) if spec.max_ctx else ctx) * max(parallel, 1)
    file = roles["total"] + (proj["weights"] if proj else 0)
    return int(file + 2 * spec.n_layers * heads_kv * (spec.hidden // max(spec.n_heads, 1)) * cells * 2)


# The llama.cpp build each Ollama release vendors (its LLAMA_CPP_VERSION file, read at every tag from v0.30.0 to
# v0.32.15; a release between two rows has the earlier one's): llama-server's own gates (runtimes/llamacpp.py
# OUTPUTS_MAX...) follow the build, not Ollama's number. A release after the last read keeps the last build read.
LLAMA_CPP_BUILDS = (((0, 30, 0), (9452,)), ((0, 30, 1), (9479,)), ((0, 30, 4), (9493,)), ((0, 30, 5), (9509,)),
                    ((0, 30, 9), (9626,)), ((0, 30, 10), (9672,)), ((0, 30, 11), (9781,)), ((0, 31, 0), (9840,)),
                    ((0, 31, 2), (9888,)), ((0, 32, 2), (10069,)), ((0, 32, 3), (10091,)), ((0, 32, 6), (10242,)),
                    ((0, 32, 8), (10353,)), ((0, 32, 10), (10380,)), ((0, 32, 14), (10434,)), ((0, 32, 15), (10488,)))


def llama_cpp_build(version):
    """The llama.cpp build (a version tuple as llamacpp.py reads it) this Ollama release runs; None when unnamed."""
    if version is None:
        return None
    return next((b for start, b in reversed(LLAMA_CPP_BUILDS) if at_least(version, *start)), None)


# Ollama >= 0.30 passes num_batch to llama-server as -b and -ub; left unset (numBatchAuto) the scheduler picks it
# for a completion model (server/sched.go automaticGenerationBatch, read at v0.30.7 and 2026 main): 512 up to 4096
# tokens of effective context (num_ctx x parallel), 1024 up to 32768, 2048 above; a batch above 512 is lowered
# (2048 -> 1024 -> 512) while the predicted VRAM exceeds 80 % of the available memory (of the cards it placed on),
# exceeds its headroom share
# (60 % for 2048, 75 % for 1024), or leaves less than its surcharge (2 GiB, 768 MiB) under that 80 %; with flash
# attention disabled on CUDA 512, 256 above 4096 tokens on a card of 8 GiB or less (every GPU taken as CUDA here).
GEN_BATCH = ((32768, 2048, 60, 2048 * MiB), (4096, 1024, 75, 768 * MiB))


def generation_batch(ctx_total: int, predicted: int, available: int, flash_off=False, cuda=True, card=None) -> int:
    if flash_off and cuda:
        return 256 if ctx_total > 4096 and card and card <= 8 * GiB else 512
    tiers = [t for t in GEN_BATCH if ctx_total > t[0]]
    for _, batch, headroom, surcharge in tiers:
        if not predicted or not available:
            return batch
        threshold = available * 80 // 100
        if predicted <= threshold and predicted <= available * headroom // 100 and surcharge <= threshold - predicted:
            return batch
    return 512


def evaluate_llama_server(spec, ctx, parallel, kv, roles, vram, s, proj=None) -> dict:
    """Ollama >= 0.30: llama-server with -c num_ctx x OLLAMA_NUM_PARALLEL, -np, -b/-ub num_batch, --flash-attn auto,
    --mmproj on the GPU and no -ngl unless num_gpu is set (llm/llama_server.go), so its --fit places the layers:
    llama.cpp's figures (runtimes/llamacpp.py, the newest build) in the fields the Ollama plan reads. Over
    --num-gpus cards (--vram each) the scheduler keeps one card when predicted_vram is within 80 % of its free
    memory and the sched-spread switch is off (server/sched.go selectLlamaServerPlacement, bestSingleGPUFit: that
    card alone, --split-mode none); otherwise it hands llama-server every card, which splits the layers by free
    memory, each card judged by itself. num_gpu 0 (-ngl 0) keeps the model off the cards."""
    from . import llamacpp as LC
    gpus = s.get("gpus", 1)
    spread = gpus > 1 and s["ngl"] != 0 and bool(vram) and predicted_vram(spec, roles, ctx, parallel, proj) > vram * 80 // 100
    # LlamaServerFlashAttention (llm/llama_server.go): OLLAMA_FLASH_ATTENTION when set, else off on a card
    # FlashAttentionSupported refuses (flash_supported), else auto; the one decision for --flash-attn and the batch
    fa = True if s["flash"] else False if s.get("flash_off") or not s.get("flash_gpu", True) else None
    # the card's name picks llama.cpp's backend rules (its context: none on Vulkan or Metal; Metal's op offload)
    knobs = {"ngl": s["ngl"], "mmproj": bool(proj), "flash_attn": fa, "num_gpus": gpus if spread else None,
             "gpu_name": s.get("gpu_name")}
    build = llama_cpp_build(s["version"])
    batch = s.get("ubatch_asked") or generation_batch(  # -b/-ub num_batch: asked, else the scheduler's own
        ctx * parallel, predicted_vram(spec, roles, ctx, parallel, proj), (vram or 0) * (gpus if spread else 1),
        fa is False, True, vram)
    ls = dict(LC.settings(build, knobs, parallel), ubatch=batch, batch=batch)
    ev = LC.evaluate(spec, ctx * parallel, parallel, kv, roles, vram, ls, proj)
    return {"kv": ev["kv"], "overhead": ev["overhead"], "total": ev["total"], "gpu_weights": ev["gpu_weights"],
            "devices": ev["devices"], "llama_server_gpus": gpus if spread else 1,
            "fits": ev["fits"], "layers_placed": None, "budget": ev["budget"], "ngl": ev["ngl"], "gpu_kv": ev["gpu_kv"],
            "graph_partial": ev["overhead"]["compute_buffer"], "placement_need": ev["total"],
            "printed_weights_total": int(roles["blocks"] + roles["output"]), "required_full": ev["total"],
            "host_weights": ev["host_weights"]}
