"""vLLM's pipeline parallelism (--pipeline-parallel-size): the layers per stage as get_pp_indices splits them, one
stage's model, and every stage evaluated alone (vllm.evaluate) with the smallest stage's blocks kept by all. Split from
vllm.py, whose evaluate hands a plan with more than one stage here."""
from ..cache import BLOCK, kv_cache, vllm_layout, vllm_pool, vllm_stage_tensors, with_draft_layers
from ..weights import layer_weights
from . import at_least
from .vllm import evaluate, mamba_check
from .vllm_mla import mla_layout


def pp_partition(n_layers: int, pp: int, partition=None) -> list:
    """Layers per pipeline stage, as vLLM's get_pp_indices splits them: n // pp each, the remainder one layer at a
    time to the stages before the last (VLLM_PP_LAYER_PARTITION, the `pp_layer_partition` knob, overrides)."""
    if partition:
        from ...errors import UserError
        try:
            parts = [int(x) for x in (partition.replace("/", ",").split(",") if isinstance(partition, str)
                                      else partition)]
        except (TypeError, ValueError):
            parts = []
        if len(parts) != pp or sum(parts) != n_layers or min(parts) < 1:
            raise UserError(f"--pp-layer-partition needs {pp} positive layer counts summing to {n_layers}, got {partition!r}")
        return parts
    parts = [n_layers // pp] * pp
    for i in range(2, n_layers % pp + 2):
        parts[-i] += 1
    return parts


def stage_spec(spec, start: int, end: int):
    """The model as one pipeline stage holding layers [start, end) sees it."""
    import dataclasses
    return dataclasses.replace(spec, layer_kinds=list(spec.layer_kinds[start:end]),
                               layer_kv_elems=spec.layer_kv_elems[start:end] if spec.layer_kv_elems else None,
                               notes=list(spec.notes))


def deciding_stage(stages) -> int:
    """The stage whose GPU decides whether the plan fits: every stage has the same share, so the one left the least KV
    pool (its weights, activations and the last stage's sampler together), or with a fixed pool (--kv-cache-memory) the
    largest total; of equals the first (rank 0, whose figures the table prints). Not always the one with the most
    weights (rev23 B1: gemma-3-1b at 14,12 leaves stage 1 the least pool, the sampler's, with 0.10 GiB less weights)."""
    return min(range(len(stages)), key=lambda i: (stages[i]["pool"], -stages[i]["total"]))


def heaviest_stage(stages) -> int:
    """The stage holding the most weights (of equals the first): the one a 'weights alone' verdict is about."""
    return max(range(len(stages)), key=lambda i: (stages[i]["stage_weights"], -i))


def stage_words(i: int, stages) -> str:
    """'stage 1 of 2, 44 layers + the head': which GPU of the pipeline, and what it holds."""
    held = " + the embedding" if i == 0 else " + the head" if i == len(stages) - 1 else ""
    return f"stage {i} of {len(stages)}, {stages[i]['stage_layers']} layers{held}"


# vLLM 0.12 (PR #29431, --max-model-len auto) checked one request against every worker's memory with the whole
# model's KV bytes per token, which refused pipeline-parallel servers each of whose stages held the request
# (vllm#32105, vllm#34076 on 0.15.2); PR #33698 (February 2026, 0.16) checks each stage's own layers again
PP_WHOLE_MODEL_CHECK = ((0, 12), (0, 16))


def evaluate_pp(spec, ctx, kv, roles, vram, s) -> dict:
    """Pipeline parallelism: every stage profiled alone on its own GPU (its layers, the embedding on the first, the
    head and the sampler on the last), every stage keeping the smallest stage's number of blocks (V1's
    get_kv_cache_configs). The figures returned are stage 0's, as rank 0 prints them (weights, available KV memory);
    the tokens and the concurrency are the smallest stage's, as the engine prints them."""
    parts = pp_partition(spec.n_layers, s["pp"], s.get("pp_partition"))
    # what the roles leave out (a vision tower, padding) goes with stage 0; a tied head is not in one GPU's total,
    # but the last stage loads its own copy (vLLM builds embed_tokens there when the embeddings are tied); every
    # stage builds its own rotary tables (plan's roles["rope"]: buffers of each process's attention layers)
    rope = roles.get("rope", 0)
    extra = max(roles["total"] - rope - roles["blocks"] - roles["embedding"] - (0 if spec.tied else roles["output"]), 0)
    # a stage builds only its own layers (models/utils.py make_layers: PPMissingLayer outside [start_layer, end_layer)),
    # each at its own size (weights.layer_weights: a MoE model's dense first blocks are a fraction of its expert
    # blocks, so the last stages of GLM-5.1 or DeepSeek-V3 hold more than their share of layers says; round 83)
    # ROCm's FP8 row padding (vllm_rocm_fp8.layer_padding, inside roles["blocks"]) is placed by its own layers
    pads = roles.get("rocm_fp8_pad") if isinstance(roles.get("rocm_fp8_pad"), list) else [0] * spec.n_layers
    lw = layer_weights(spec, roles["blocks"] - sum(pads))
    stages, start = [], 0
    for i, n in enumerate(parts):
        w = int(sum(lw[start:start + n])) + sum(pads[start:start + n]) + rope + (roles["embedding"] + extra if i == 0 else 0) + (
            roles["output"] if i == len(parts) - 1 else 0)
        e = evaluate(stage_spec(spec, start, start + n), ctx, kv, w, vram, dict(s, pp=1, stage=(i, len(parts))))
        e.update(stage_layers=n, stage_weights=w)
        stages.append(e)
        start += n
    out = dict(stages[0], stages=[dict({k: e.get(k) for k in ("stage_layers", "stage_weights", "pool", "pool_tokens", "total")},
                                       kv_total=e["kv"]["total"]) for e in stages])
    out["total"] = max(e["total"] for e in stages)
    if not vram:
        return out
    pool_args = stages[0]["kv"]["pool_args"]
    whole = with_draft_layers(spec, pool_args["draft_layers"], pool_args["spec_tokens"])
    lay = vllm_layout(whole, kv, pool_args["mla_cache"], pool_args["gdn_block"]) if s["v1"] and pool_args["hybrid"] else None
    if lay:  # the hybrid manager's groups are the whole model's (a drafter's layers on the last stage)
        ends = [sum(parts[:i + 1]) for i in range(len(parts))]
        ends[-1] = len(whole.layer_kinds)
        for i, e in enumerate(stages):
            g = vllm_pool(spec, e["pool"], kv, ctx, tensors=vllm_stage_tensors(whole, lay, ends[i] - parts[i], ends[i]),
                          **pool_args)
            e.update(pool_tokens=g["tokens"], concurrency=g["concurrency"], blocks=g["blocks"])
            if spec.linear_state:
                e["starts"] = g["concurrency"] >= 1
        out["stages"] = [dict(o, pool_tokens=e["pool_tokens"]) for o, e in zip(out["stages"], stages)]
    tokens = min(e["pool_tokens"] for e in stages)
    out["gpu_blocks"] = tokens // BLOCK  # the engine's num_gpu_blocks (V0 prints it before its per-stage split)
    if not s["v1"]:
        # V0 runs a virtual engine per stage, each scheduler with num_gpu_blocks // pp of the blocks (core/scheduler.py);
        # raise_if_cache_size_invalid checks max_model_len against block_size x (num_gpu_blocks // pp) and prints that
        tokens = BLOCK * (tokens // BLOCK // s["pp"])
    v = s["version"]
    mamba_ok = True
    if lay and spec.linear_state:  # the Mamba-block check (evaluate) on the engine's blocks: the smallest stage's
        out.pop("mamba_blocks", None)
        out.pop("seqs_lowered", None)
        mamba_ok = mamba_check(out, min(e["blocks"] for e in stages), s)
    if s["v1"] and at_least(v, *PP_WHOLE_MODEL_CHECK[0]) and not at_least(v, *PP_WHOLE_MODEL_CHECK[1]):
        whole = kv_cache(spec, ctx, 1, kv, "vllm", max_batched=s["max_batched"], mla_cache=mla_layout(spec, s))["total"]
        starts = all(e["pool"] >= whole for e in stages)
    elif s["v1"]:
        starts = all(e["starts"] for e in stages) and tokens >= ctx
    else:
        starts = tokens >= ctx
    # what the start refusal names (vllm_refusal.py): each worker's own check, or from 0.12 to 0.15 the whole model's
    ends = [sum(parts[:i + 1]) for i in range(len(parts))]
    out["stage_checks"] = [{"pool": e["pool"], "pool_tokens": e["pool_tokens"], "own_tokens": None if lay else e["pool_tokens"],
                            "starts": e["starts"], "need": e.get("kv_request_bytes") or e.get("kv_check_bytes") or e["kv"]["total"],
                            "start": end - n, "end": end} for e, n, end in zip(stages, parts, ends)]
    util_needed = max(e["util_needed"] for e in stages)
    if s["v1"] and at_least(v, *PP_WHOLE_MODEL_CHECK[0]) and not at_least(v, *PP_WHOLE_MODEL_CHECK[1]):
        out["whole_check_bytes"] = whole
        # the share each stage needs holds the whole model's request, not its own (evaluate's util_needed: inside +
        # the stage's check): the flags' --gpu-memory-utilization, else 0.94 where 0.95 was searched (rev23 B6)
        util_needed = max(e["util_needed"] + max(whole - e["kv_check_bytes"], 0) / vram for e in stages)
    starts = bool(starts and tokens > 0 and mamba_ok and not out.get("free_refused"))
    out.update(pool_tokens=tokens, concurrency=min(e["concurrency"] for e in stages), starts=starts,
               fits=starts and all(e["total"] <= vram for e in stages), util_needed=util_needed)
    return out
