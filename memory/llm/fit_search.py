"""The search behind `gpu-garden kv`'s answer: one setting evaluated by its runtime, the largest context that fits
(a bisection on CTX_STEP), the first setting in order of least change that serves a context, and why nothing does.
Split from plan.py, which validates the request, sizes the weights and builds the answer from these."""
import math

from ..units import fmt_bytes
from .cache import CTX_STEP, KV_BYTES, KV_LADDER, MIN_CTX
from .runtimes import llamacpp as LC, ollama as OL, vllm as V
from .weights import weights


def evaluate(spec, runtime, ctx, parallel, kv, roles, vram, s, proj) -> dict:
    if runtime == "vllm":
        return V.evaluate(spec, ctx, kv, roles["total"], vram, s, roles=roles)
    if runtime == "llama.cpp":
        return LC.evaluate(spec, ctx, parallel, kv, roles, vram, s, proj)
    return OL.evaluate(spec, ctx, parallel, kv, roles, vram, s, proj)


def max_ctx(spec, runtime, parallel, kv, roles, vram, s, cap, proj) -> int:
    """Largest multiple of CTX_STEP (<= cap) that fits, 0 if not even MIN_CTX does."""
    def ok(c):
        return evaluate(spec, runtime, c, parallel, kv, roles, vram, s, proj)["fits"]
    if not ok(MIN_CTX):
        return 0
    lo, hi = MIN_CTX // CTX_STEP, max(cap // CTX_STEP, 1)
    if ok(hi * CTX_STEP):
        return hi * CTX_STEP
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid * CTX_STEP):
            lo = mid
        else:
            hi = mid
    return lo * CTX_STEP


def choose(spec, runtime, ctx, parallel, kv, roles, vram, s, s_max, cap, proj):
    """First setting, in order of least change, that serves ctx; else the same context with fewer GPU layers
    (llama.cpp, Ollama); else the largest context."""
    def ev(c, k, st):
        return evaluate(spec, runtime, c, parallel, k, roles, vram, st, proj)

    ladder = [kv] + [k for k in KV_LADDER[runtime] if KV_BYTES[k] < KV_BYTES[kv]]
    if runtime == "llama.cpp" and spec.mla and s.get("kv_v") and s.get("mla_cache") == "latent" and not s.get("ik"):
        ladder = [kv]  # the latent's V is a view of K: -ctk stays -ctv's (llamacpp_refusals.mla_mixed_types)
    tries = []
    if runtime == "vllm":  # the user's --max-num-seqs and --kv-cache-memory are kept: no try lowers them (kv55)
        for k in ladder:
            tries += [(k, s)] + ([] if s.get("seqs_asked") else [(k, dict(s, seqs_to_blocks=True))])
            tries += [(k, s_max), (k, dict(s_max, enforce_eager=True))]
    else:
        for k in ladder:
            base = dict(s, flash=s["flash"] or KV_BYTES[s.get("kv_v") or k] < 2)
            tries += [(k, base), (k, dict(base, flash=True))]
            if runtime == "llama.cpp":
                tries.append((k, dict(base, flash=True, ubatch=256)))
    for k, st in tries:
        e = ev(ctx, k, st)
        if e["fits"]:
            return ctx, k, st, e
    if runtime != "vllm" and s.get("ngl") is None:  # keep the context, move layers to the CPU (not the user's -ngl)
        best = most_layers(spec, runtime, ctx, parallel, ladder, roles, vram, s, proj)
        if best:
            return best
    k = ladder[-1]
    st = dict(s_max, flash=True) if runtime != "vllm" else dict(s_max, enforce_eager=False)
    best = max_ctx(spec, runtime, parallel, k, roles, vram, st, min(cap, ctx), proj)
    if best:
        return best, k, st, ev(best, k, st)
    return None


def most_layers(spec, runtime, ctx, parallel, ladder, roles, vram, s, proj):
    """llama.cpp, Ollama: ctx with layers moved to the CPU, at the cache type of the ladder that keeps most on the GPU
    (q4_0 only when asked); None if not even one layer fits."""
    best = None
    for k in [x for x in ladder if KV_BYTES[x] >= KV_BYTES["q8_0"]] or ladder[:1]:
        st = dict(s, flash=s["flash"] or KV_BYTES[k] < 2)
        for ngl in range(spec.n_layers, 0, -1):
            e = evaluate(spec, runtime, ctx, parallel, k, roles, vram, dict(st, ngl=ngl), proj)
            if e["fits"]:
                if best is None or e["ngl"] > best[3]["ngl"]:
                    best = (ctx, k, dict(st, ngl=ngl), e)
                break
    return best


def share_that_holds(spec, runtime, ctx, parallel, kv, roles, vram, s, cap, proj, knobs, choice) -> tuple | None:
    """When the user's --gpu-memory-utilization is what stops ctx (a larger share would hold it): (the least share
    that holds it, the choice at the largest share: ctx, cache type, settings, evaluation), else None."""
    asked = knobs.get("gpu_memory_utilization") if runtime == "vllm" else None
    if not asked or (choice is not None and choice[0] >= ctx):
        return None
    top = dict(s, util=min(V.MAX_UTIL, math.floor((1 - V.CUDA_CONTEXT / vram) * 100) / 100))
    if top["util"] <= asked:
        return None
    alt = choose(spec, runtime, ctx, parallel, kv, roles, vram, top, top, cap, proj)
    if alt is None or alt[0] < ctx:
        return None
    need = V.util_for(alt[3], vram)
    return (need, alt) if need else None


def share_words(knobs, ctx, need) -> str:
    """The note of share_that_holds: the user's share names what stops ctx, not the weights or a shorter context."""
    return (f"your --gpu-memory-utilization {knobs['gpu_memory_utilization']:.2f} is too small for {ctx} tokens; "
            f"--gpu-memory-utilization {need:.2f} holds them")


def no_fit_reason(spec, runtime, w_bytes, vram, whole=None, where="", alone=True) -> str:
    """w_bytes: one GPU's weights; whole: all the weights when tensor or pipeline parallelism splits them (the quantized
    sizes offered are then one GPU's, in the same proportion). A format is offered only where it is narrower than the
    weights as planned: their real size (a --weights-gib, a GGUF's table), not the model's own dtype (DeepSeek-V3 at
    TP 8 was offered fp8, its own format; Qwen3-8B given as 4.5 GiB was offered fp8 and a 4-bit size scaled from bf16).
    where: which GPU w_bytes is (a pipeline's largest stage); alone False: a pipeline stage whose weights pass the share
    only with its activations and workspaces beside them (rev25 S4)."""
    if runtime == "vllm":
        beside = "" if alone else " with the profile's activations and workspaces"
        return (f"weights{' alone' if alone else ''} ({fmt_bytes(w_bytes)}{where}){beside} leave no room for a "
                f"{MIN_CTX}-token cache in "
                f"{fmt_bytes(vram)}: " + (_quant_offers(spec, w_bytes, whole) or "use ")
                + "--tensor-parallel-size over more GPUs")
    return f"even one layer with a {MIN_CTX}-token cache does not fit {fmt_bytes(vram)}"


def _quant_offers(spec, w_bytes, whole) -> str:
    from ..errors import UserError
    now = whole or w_bytes
    try:
        awq, fp8 = weights(spec, "awq")[0], weights(spec, "fp8")[0]
    except UserError:  # a model the type rules cannot size at fp8
        awq, fp8 = weights(spec, "awq")[0], None
    share = w_bytes / whole if whole else 1.0
    offers = []
    if awq < 0.95 * now:
        offers.append(f"AWQ/GPTQ 4-bit ~{fmt_bytes(awq * share)}" + (" a GPU" if whole else ""))
    if fp8 is not None and fp8 < 0.95 * now:
        offers.append("fp8")
    return f"use a quantized checkpoint ({', '.join(offers)}) or " if offers else ""
