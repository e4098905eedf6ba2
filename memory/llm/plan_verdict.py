"""The verdict `gpu-garden kv` gives once the figures are in (plan.py's last step): without --vram the sizes and the
command (_sizes_only); with it the largest context by cache type, the layers that context needs off the GPU, and the
flags of what fits (_search, fit_search.py's choice), or why nothing does."""
import math

from ..units import fmt_bytes
from . import fit_search as FS
from .cache import KV_BYTES, KV_LADDER, MIN_CTX
from .runtimes import llamacpp as LC, llamacpp_slots as LS, vllm as V, vllm_pipeline as VP
from .flags import (command, gpu_layers_words, lmo_flags, lora_flags, mtp_flags, offload_flags, quant_flags, runtime_flags,
                    ssm_flags)


def _sizes_only(out, spec, runtime, ctx, parallel, kv, weights_dtype, model_max, s, refused, rank, loras, knobs,
                notes) -> dict:
    """No --vram: sizes and the command, no verdict."""
    c_ctx = min(ctx, model_max) if refused else ctx  # the command vLLM starts, as with --vram (review16c R6)
    out["flags"] = (runtime_flags(runtime, c_ctx, parallel, kv, s, spec, asked_util=knobs.get("gpu_memory_utilization"),
                                  asked_ngl=knobs.get("ngl"))
                    + lora_flags(runtime, knobs, rank, loras)
                    + mtp_flags(knobs, runtime) + lmo_flags(runtime, knobs) + ssm_flags(runtime, knobs)
                    + offload_flags(runtime, knobs)
                    + quant_flags(runtime, weights_dtype))
    out["command"] = command(runtime, out["flags"])
    notes.append("no --vram given: sizes only, no verdict"
                 + (f"; the command keeps to the model's limit ({c_ctx:,})" if refused else ""))
    if refused:
        out["refused"] = refused
    return out


def _search(out, spec, runtime, ctx, parallel, kv, weights_dtype, roles, vram, model_max, s, ev, proj, refused, rank,
            loras, knobs, notes) -> dict:
    """With --vram: the verdict, the largest context by cache type and the flags of what fits (fit_search.py)."""
    cap = min(LS.ctx_cap(runtime, s, parallel, model_max), 1 << 24)  # llama.cpp's split slots: model_max x -np (aud66a F1)
    s_max = dict(s, util=min(V.MAX_UTIL, math.floor((1 - V.CUDA_CONTEXT / vram) * 100) / 100)) if runtime == "vllm" else s
    if runtime == "vllm" and knobs.get("gpu_memory_utilization"):
        s_max = s  # the user's share is a decision, not a starting point
    free_cap = V.free_cap(s, vram) if runtime == "vllm" else None
    if free_cap is not None and not knobs.get("gpu_memory_utilization") and (s_max["util"] > free_cap
                                                                             or V.free_refused(s_max, vram)):
        s_max = dict(s_max, util=free_cap)  # the most the free memory takes (not the user's share: kept, kv55)
    if runtime == "vllm" and not s.get("seqs_asked"):  # the flags keep max_num_seqs within a hybrid's Mamba blocks
        s_max = dict(s_max, seqs_to_blocks=True)
    choice = FS.choose(spec, runtime, min(ctx, model_max) if refused else ctx, parallel, kv, roles, vram, s, s_max, cap,
                     proj)
    _max_ctx_table(out, spec, runtime, parallel, roles, vram, s, s_max, cap, proj, choice)
    if runtime == "llama.cpp":
        # the largest context at the request's own settings (its -ub, -fa, cache type): what --fit lowers an unasked
        # -c to; the table above holds the suggested flags' (-ub 256, -fa on), which --fit never changes (its fit step
        # adjusts n_ctx, then the layers and the tensor split only)
        out["max_ctx_as_asked"] = FS.max_ctx(spec, runtime, parallel, kv, roles, vram, s, cap, proj)
    if ev.get("free_refused"):
        notes.append(f"vLLM refuses to start: --gpu-memory-utilization {s['util']:.2f} asks {fmt_bytes(s['util'] * vram)}, "
                     f"more than the {fmt_bytes(s['free'] - V.CUDA_CONTEXT)} its startup check finds free (--free-gib less "
                     f"its own CUDA context); " + (f"--gpu-memory-utilization {free_cap:.2f} or less, or " if free_cap else "")
                     + "free memory on the GPU")
    share = FS.share_that_holds(spec, runtime, ctx, parallel, kv, roles, vram, s, cap, proj, knobs, choice)
    share_note = FS.share_words(knobs, ctx, share[0]) if share else None
    if share_note:
        notes.append(share_note)
    if choice is None and runtime != "vllm" and s.get("ngl") is not None:  # the user's -ngl is kept (kv55)
        ladder = [kv] + [k for k in KV_LADDER[runtime] if KV_BYTES[k] < KV_BYTES[kv]]
        fewer = FS.most_layers(spec, runtime, ctx, parallel, ladder, roles, vram, s, proj)
        if fewer:
            name = "-ngl" if runtime == "llama.cpp" else "num_gpu"
            asked = (f"{name} {s['ngl']}" if s["ngl"] <= spec.n_layers else "every layer on the GPU"  # -ngl all
                     if s["ngl"] == LC.ALL_LAYERS else f"{name} {s['ngl']} (every layer on the GPU)")
            # both halves name their cache type: the user's count was tried at every type of the ladder (FS.choose),
            # the count that fits may need a narrower one (review: '-ngl 10 does not fit; -ngl 8 does (KV cache
            # q8_0)' read as if the count alone changed)
            tried = ", ".join(ladder[:-1]) + (" or " if len(ladder) > 1 else "") + ladder[-1]
            out["no_fit_reason"] = (f"{asked} does not fit {fmt_bytes(vram)} with the KV cache at {tried}; {name} "
                                    f"{fewer[2]['ngl']} with the KV cache at {fewer[1]} does "
                                    f"({gpu_layers_words(fewer[2]['ngl'], spec.n_layers, runtime, s.get('output_first'))}"
                                    f" on the GPU, the rest in RAM)")
            notes.append(out["no_fit_reason"])
            out.update(fits=False, max_ctx=0)
            return out
    if choice is None:
        if share:  # nothing fits at the user's share: the command at the share the note names, labelled (ux57's form)
            a_ctx, a_kv, a_s, a_ev = share[1]
            out["share_fix"] = {"flag": f"--gpu-memory-utilization {share[0]:.2f}", "util": share[0], "ctx": a_ctx,
                                "command": command(runtime, _flags(spec, runtime, a_ctx, parallel, a_kv, a_s, a_ev, vram,
                                                                   weights_dtype, rank, loras,
                                                                   dict(knobs, gpu_memory_utilization=share[0])))}
        return _no_fit(out, spec, runtime, weights_dtype, roles, vram, ev, free_cap, share_note, knobs, notes)
    return _chosen(out, spec, runtime, ctx, parallel, weights_dtype, roles, vram, cap, proj, choice, refused, rank,
                   loras, knobs, notes)


def _max_ctx_table(out, spec, runtime, parallel, roles, vram, s, s_max, cap, proj, choice) -> None:
    """The largest context at each cache type (max_ctx_by_kv_dtype) and the layers it needs off the GPU."""
    # the plan moves layers to the CPU (not the user's -ngl): the table assumes every layer on the GPU, and the same
    # search at the plan's own layer count follows it (aud66a F5, issue 15: a largest context that says what it assumes)
    ngl = choice[2].get("ngl") if choice is not None and runtime != "vllm" and s.get("ngl") is None else None
    partial = ngl is not None and ngl <= spec.n_layers
    if partial:
        out["max_ctx_plan_ngl"], out["max_ctx_at_plan_layers"] = ngl, {}
    for k in KV_LADDER[runtime]:  # all layers on the GPU when that holds any context, else the answer's layer count
        if spec.dsv4 and k != "fp8":  # DeepSeek-V4's cache is fp8 alone (deepseek_v4.check_kv)
            continue
        s_k = dict(choice[2] if choice is not None else s_max, ngl=s.get("ngl"))
        if runtime != "vllm" and KV_BYTES[k] < 2:
            s_k = dict(s_k, flash=True)
        if partial:
            out["max_ctx_at_plan_layers"][k] = FS.max_ctx(spec, runtime, parallel, k, roles, vram, dict(s_k, ngl=ngl),
                                                          cap, proj)
        best = FS.max_ctx(spec, runtime, parallel, k, roles, vram, s_k, cap, proj)
        layers = None
        if not best and choice is not None and runtime != "vllm" and choice[2].get("ngl") is not None:
            best = FS.max_ctx(spec, runtime, parallel, k, roles, vram, dict(s_k, ngl=choice[2]["ngl"]), cap, proj)
            layers = choice[2]["ngl"] if best else None
        out["max_ctx_by_kv_dtype"][k] = best
        out["max_ctx_layers"][k] = layers
        if runtime == "vllm" and s_k.get("util") != s.get("util"):  # the table's share, not the run's (rev3 D4)
            out["max_ctx_util"] = s_k["util"]


def _no_fit(out, spec, runtime, weights_dtype, roles, vram, ev, free_cap, share_note, knobs, notes) -> dict:
    """Nothing fits: the verdict and the reason why."""
    free = knobs.get("free_memory")
    out["fits"] = False
    out["max_ctx"] = 0
    pool, fit = ev.get("pool"), ev.get("pool_fit")
    if runtime == "vllm" and knobs.get("kv_cache_memory") and fit and pool > fit and not ev.get("free_refused"):
        # the user's pool is kept (kv55): the largest that fits is named, not put in a command
        out["no_fit_reason"] = (f"your --kv-cache-memory {fmt_bytes(pool)} does not fit beside what vLLM holds (the "
                                f"weights, its CUDA context, workspaces and graphs): the largest pool that does is "
                                f"{fmt_bytes(fit)} (--kv-cache-memory {fit})")
        notes.append(out["no_fit_reason"])
    elif runtime == "vllm" and ev.get("free_refused") and knobs.get("gpu_memory_utilization"):
        pass  # the user's share asks more than is free: _search's note says so and names the share that starts
    elif not share_note and free_cap is not None and roles["total"] < V.MAX_UTIL * vram:
        out["no_fit_reason"] = (f"the {fmt_bytes(free)} free at startup takes a share of at most {free_cap:.2f}: "
                                f"too little for the weights and a {MIN_CTX}-token cache; free memory on the GPU")
        notes.append(out["no_fit_reason"])
    elif not share_note:
        # one GPU's weights: under pipeline parallelism the stage holding the most where its weights alone pass the share
        # (the report's 'weights alone' verdict; not always the deciding stage, rev23 B1), else the deciding stage, whose
        # weights with its activations and workspaces leave no pool (rev25 S4); without it the tensor-parallel share
        stages = ev.get("stages") or ()
        at = VP.heaviest_stage(stages) if stages else None
        alone = not stages or ev.get("budget") is None or stages[at]["stage_weights"] > ev["budget"]
        at = at if alone else VP.deciding_stage(stages)
        gpu = stages[at]["stage_weights"] if stages else roles["total"]
        split = (knobs.get("tensor_parallel_size") or 1) > 1 or len(stages) > 1
        # all the weights as planned: a --weights-gib or a GGUF's own size, not out["weights_dtype"] (the model's dtype)
        out["no_fit_reason"] = FS.no_fit_reason(spec, runtime, gpu, vram,
                                                whole=FS.weights(spec, weights_dtype)[0] if split else None,
                                                where=(f" on the pipeline stage with the most: {VP.stage_words(at, stages)}"
                                                       if alone else f" on the deciding pipeline stage: "
                                                       f"{VP.stage_words(at, stages)}") if stages else "", alone=alone)
        notes.append(out["no_fit_reason"])
    # no KV pool at all (on any pipeline stage): a longer or auto context cannot help
    if runtime == "vllm" and min([st["pool"] for st in ev.get("stages") or ()] + [ev["pool"]]) <= 0:
        out["autofit"] = []
    return out


def _chosen(out, spec, runtime, ctx, parallel, weights_dtype, roles, vram, cap, proj, choice, refused, rank, loras,
            knobs, notes) -> dict:
    """The flags and figures of the choice that fits."""
    c_ctx, c_kv, c_s, c_ev = choice
    if c_ev.get("seqs_lowered"):  # --max-num-seqs down to the requests at once, never above the Mamba cache blocks
        c_s = dict(c_s, max_seqs=min(max(parallel, 1), c_ev["mamba_blocks"], c_ev.get("graph_seqs") or parallel),
                   seqs_blocks=c_ev["mamba_blocks"], seqs_graph=c_ev.get("graph_seqs"))
    if runtime != "vllm":
        out["host_weights"] = c_ev["host_weights"]
        out["gpu_layers_used"] = c_ev["ngl"] if c_ev["ngl"] <= spec.n_layers else None
        if c_ev["ngl"] <= spec.n_layers:
            # the user's own -ngl / num_gpu that fits, 0 too (rev66a R11): placed as asked, not all that fits (more may)
            out["ngl_as_asked"] = knobs.get("ngl") == c_ev["ngl"]
            if c_ev["ngl"] <= 0:  # asked for (-ngl 0 / num_gpu 0)
                notes.append(f"no layer on the GPU ({'-ngl' if runtime == 'llama.cpp' else 'num_gpu'} 0): every layer "
                             "runs from RAM on the CPU (much slower)")
            else:
                words = gpu_layers_words(c_ev['ngl'], spec.n_layers, runtime, c_s.get('output_first'))
                if out["ngl_as_asked"]:
                    notes.append(f"{words} on the GPU, as asked ({'-ngl' if runtime == 'llama.cpp' else 'num_gpu'} "
                                 f"{c_ev['ngl']}); the rest run from RAM on the CPU (much slower)")
                else:
                    notes.append(f"{'' if words.startswith('all ') else 'only '}{words} fit on the GPU; the rest run "
                                 "from RAM on the CPU (much slower)")
    out["fits"] = c_ctx >= ctx
    if runtime == "vllm" and out["fits"] and c_ev.get("concurrency") is not None and c_ev["concurrency"] < parallel:
        _parallel_short(out, spec, runtime, c_ctx, parallel, c_kv, roles, vram, c_s, proj, c_ev["concurrency"])
    out["max_ctx"] = FS.max_ctx(spec, runtime, parallel, c_kv, roles, vram, c_s, cap, proj)
    out["chosen"] = {"ctx": c_ctx, "kv_dtype": c_kv, "total": c_ev["total"], "kv_total": c_ev["kv"]["total"],
                     "overhead": c_ev["overhead"]}
    if c_ev.get("stages"):  # pipeline parallelism: the deciding stage's request, not rank 0's (rev23 S1)
        at = VP.deciding_stage(c_ev["stages"])
        out["chosen"].update(kv_total=c_ev["stages"][at]["kv_total"], pp_stage=at)
    if c_ev.get("gpu_kv") is not None:  # llama.cpp, Ollama: the cache of the layers on the GPU
        out["chosen"]["kv_gpu"] = c_ev["gpu_kv"]
    out["flags"] = _flags(spec, runtime, c_ctx, parallel, c_kv, c_s, c_ev, vram, weights_dtype, rank, loras, knobs)
    out["command"] = command(runtime, out["flags"])
    fix = out.get("parallel_fix")
    if fix:  # the command of the change the verdict names, beside the one as asked (ux57)
        fix["command"] = command(runtime, _flags(spec, runtime, c_ctx, parallel, fix["kv_dtype"], c_s, fix.pop("ev"),
                                                 vram, weights_dtype, rank, loras, knobs))
    if refused:
        out["refused"] = refused
    elif not out["fits"]:
        notes.append(f"{ctx} tokens does not fit; the flags give the largest context that does ({c_ctx})")
    return out


def _flags(spec, runtime, ctx, parallel, kv, s, ev, vram, weights_dtype, rank, loras, knobs) -> list:
    """The flags of one evaluated setting (ev), the runtime's and the request's own."""
    return (runtime_flags(runtime, ctx, parallel, kv, s, spec, util=V.util_for(ev, vram) if runtime == "vllm" else None,
                          ngl=ev.get("ngl"), asked_util=knobs.get("gpu_memory_utilization"), vram=vram,
                          asked_ngl=knobs.get("ngl"))
            + lora_flags(runtime, knobs, rank, loras)
            + mtp_flags(knobs, runtime) + lmo_flags(runtime, knobs) + ssm_flags(runtime, knobs)
            + offload_flags(runtime, knobs)
            + quant_flags(runtime, weights_dtype))


def _parallel_short(out, spec, runtime, ctx, parallel, kv, roles, vram, s, proj, held) -> None:
    """vLLM starts with one request's room but fewer than --parallel at once (ux50 S7): the verdict says how many it holds
    (parallel_held), and a narrower cache type that holds them all, where the same evaluation finds one (parallel_fix,
    with its own command from _chosen: the verdict names a change, the user gets the line that makes it)."""
    out["parallel_held"] = round(held, 2)
    for k in KV_LADDER[runtime]:
        if KV_BYTES[k] < KV_BYTES[kv]:
            e = FS.evaluate(spec, runtime, ctx, parallel, k, roles, vram, s, proj)
            if e["fits"] and (e.get("concurrency") or 0) >= parallel:
                out["parallel_fix"] = {"flag": f"--kv-cache-dtype {k}", "kv_dtype": k,
                                       "concurrency": round(e["concurrency"], 2), "ev": e}  # ev: _chosen's, popped
                return
