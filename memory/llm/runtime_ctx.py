"""The context each runtime runs with when none is asked (DEFAULT_CTX, default_ctx), the context Ollama raises an
asked or default num_ctx to (OLLAMA_CTX_FLOOR) and the one it retries a failed automatic load at (OLLAMA_OOM_RETRY):
plan.py's context rules, by runtime version, and the context a request runs
at (request_ctx)."""
from dataclasses import replace

from ..units import GiB
from .ollama_ctx import OLLAMA_LOW_VRAM, OLLAMA_VRAM_TIERS, low_vram_text, tiers_text  # the VRAM tiers and threshold
from .cards import visible_gib
from .runtimes import at_least, llamacpp as LC, ollama as OL, parse_version

# The context each runtime runs with when none is asked, by runtime version: one row per (runtime, first version),
# the newest row a version reaches applies (no version: the newest release). Rules:
#   "model"  vLLM and SGLang derive the model's own from config.json (spec.vllm_max_len, spec.sglang_max_len: their
#            rope-scaling rules differ); a spec without the field falls back to max_ctx, then 8192
#   "train"  llama.cpp's common.h n_ctx 0, "the context the model was trained with" (n_ctx_train: spec.max_ctx);
#            read at b3579 (ggml-org/llama.cpp#9016: a single slot gets the model's 8192); older builds not read
#   4096     common.h n_ctx 4096 from ggml-org/llama.cpp#10136 (merged 2 November 2024; the first build carrying it
#            is not read: taken as b4020)
#   "fit"    --fit builds (FIT, December 2025): common.h n_ctx 0 again (n_ctx_train) with fit_params on, which lowers
#            an n_ctx the user did not set until the load fits the free memory, never below fit_params_min_ctx 4096
#            (Ollama's vendored common.h at llama.cpp ec98e2002); with --vram the plan takes the largest context kv
#            finds there, else the model's whole context
#   2048 / 4096   Ollama's OLLAMA_CONTEXT_LENGTH default (envconfig/config.go): 2048 until 0.6.7 raised it to 4096
#   "vram"   Ollama 0.15.5 and later (ollama/ollama 0334ffa, "tiered VRAM-based default context length"): default 0,
#            then server/routes.go Serve picks from the total VRAM of every GPU (TotalMemory - OLLAMA_GPU_OVERHEAD,
#            summed) by OLLAMA_VRAM_TIERS, logged as "vram-based default context"; the scheduler caps it at the
#            model's trained context (server/sched.go effectiveContext)
DEFAULT_CTX = (
    ("vllm", None, "model"),
    ("sglang", None, "model"),
    ("llama.cpp", None, "train"),
    ("llama.cpp", (4020,), 4096),
    ("llama.cpp", LC.FIT, "fit"),
    ("ollama", None, 2048),
    ("ollama", (0, 6, 7), 4096),
    ("ollama", (0, 15, 5), "vram"),
)
# Ollama 0.11.1-0.15.4 raised num_ctx to at least 8192 for some families (server/routes.go scheduleRunner): gpt-oss
# from 0.11.1, only when the total VRAM is 20 GiB or more from 0.11.4 (lowVRAMThreshold), Qwen3-VL from 0.12.7;
# 0.15.5 replaced it with the tiers. (GGUF architecture, from, until, floor, VRAM below which no floor (from 0.11.4))
OLLAMA_CTX_FLOOR = (("gptoss", (0, 11, 1), (0, 15, 5), 8192),
                    ("qwen3vl", (0, 12, 7), (0, 15, 5), 8192), ("qwen3vlmoe", (0, 12, 7), (0, 15, 5), 8192))


def _model_ctx(spec, runtime) -> int:
    field = {"vllm": "vllm_max_len", "sglang": "sglang_max_len"}.get(runtime)
    return (getattr(spec, field) if field else None) or spec.max_ctx or 8192


def default_ctx(spec, runtime: str, version=None, total_vram=None) -> tuple:
    """(the context the runtime picks when none is asked, its rule, a note or None). version: parse_version's (None:
    the newest); total_vram: Ollama's total over its GPUs in bytes (None: not known)."""
    rule = [r for rt, since, r in DEFAULT_CTX if rt == runtime and (since is None or at_least(version, *since))][-1]
    if rule in ("model", "train", "fit"):
        return _model_ctx(spec, runtime), rule, None
    if rule == "vram":
        if total_vram is None:
            low = min(OLLAMA_VRAM_TIERS)[1]
            return low, rule, (f"num_ctx: Ollama 0.15.5 and later pick the default from the GPUs' total memory "
                               f"({tiers_text()}); without --vram or a --gpu-name kv knows taken as {low}")
        ctx = next(c for floor, c in OLLAMA_VRAM_TIERS if total_vram >= floor)
        capped = min(ctx, spec.max_ctx) if spec.max_ctx else ctx
        return capped, rule, (f"num_ctx {capped}: Ollama's VRAM-based default for {total_vram / GiB:.1f} GiB in all "
                              f"({ctx}" + (f", capped at the model's trained {spec.max_ctx}" if capped < ctx else "")
                              + "; OLLAMA_CONTEXT_LENGTH or --ctx sets another)")
    ctx, note = ollama_ctx_floor(spec, rule, version, total_vram, asked=False) if runtime == "ollama" else (rule, None)
    return ctx, rule, note


def ollama_ctx_floor(spec, ctx: int, version=None, total_vram=None, asked: bool = True) -> tuple:
    """(num_ctx Ollama runs, a note or None) after OLLAMA_CTX_FLOOR: scheduleRunner applies max(NumCtx, floor) after
    the request's own options (modelOptions), so an asked num_ctx is raised as the default is."""
    what = "asked num_ctx" if asked else "default context"
    note = None
    arch = OL.gguf_arch(spec)
    for fam, since, until, floor in OLLAMA_CTX_FLOOR:
        if arch != fam or not at_least(version, *since) or at_least(version, *until) or ctx >= floor:
            continue
        if at_least(version, *OLLAMA_LOW_VRAM[0]) and total_vram is not None and total_vram < OLLAMA_LOW_VRAM[1]:
            note = f"num_ctx {ctx}: this Ollama keeps {fam} at its {what} under {low_vram_text()} of VRAM in all"
            continue
        ctx, note = floor, (f"num_ctx {floor}: this Ollama raises {fam}'s {what}"
                            + (f" ({ctx})" if asked else "") + f" to at least {floor} (server/routes.go "
                            "scheduleRunner, after the request's options): the figures' context")
    return ctx, note


# Ollama >= 0.30 (9db4bdbad): a llama-server load that fails out of memory with the automatic num_ctx (no num_ctx in
# the request or the Modelfile, no OLLAMA_CONTEXT_LENGTH: usesAutomaticNumCtx) is retried once at the next lower
# automatic tier of the effective context (num_ctx capped at the trained one): server/sched.go
# reduceAutoNumCtxForLoadOOM / nextLowerAutoNumCtx, read at v0.30.0, v0.30.7 and v0.32.15. (above, retried at)
OLLAMA_OOM_RETRY = ((32768, 32768), (4096, 4096))


def ollama_retry_ctx(effective: int) -> int | None:
    """The num_ctx Ollama >= 0.30 retries an automatic context at after a failed load (None: no lower tier)."""
    return next((to for above, to in OLLAMA_OOM_RETRY if effective > above), None)


def request_ctx(spec, runtime, ctx, vram, knobs) -> tuple:
    """The context a request runs at (plan.py): the asked one raised to Ollama's floor, else the runtime's default;
    (spec with the rule's note, ctx, the longest context the runtime starts with)."""
    model_max = spec.max_ctx or 131072
    if runtime == "vllm":  # the longest --max-model-len vLLM starts with (spec.vllm_max_len: rope scaling counted)
        model_max = spec.vllm_max_len or model_max
    version = parse_version(knobs.get("runtime_version"), runtime)
    total = card = None
    if runtime == "ollama":  # the tiers read every GPU's total: the card's when named, else --vram (its free)
        card = visible_gib(knobs.get("gpu_name")) if knobs.get("gpu_name") else None
        one = card * GiB if card else vram
        total = one * max(int(knobs.get("num_gpus") or 1), 1) if one else None
    if ctx is not None and runtime == "ollama" and 1 <= ctx <= 1 << 24:  # the floor raises an asked num_ctx too
        ctx, note = ollama_ctx_floor(spec, ctx, version, total)
        if note:
            spec = replace(spec, notes=list(spec.notes) + [note])
    if ctx is None:  # what the runtime uses by default (DEFAULT_CTX)
        ctx, rule, note = default_ctx(spec, runtime, version, total)
        if runtime == "llama.cpp" and LC.fork(knobs):  # ik_llama.cpp numbers its own builds: its n_ctx is not read
            ctx, rule, note = 4096, 4096, ("-c: ik_llama.cpp's own default is not read here; taken as 4096 (give "
                                           "--ctx)")
        if note and runtime == "ollama" and total is not None and not card and rule == "vram":
            note += "; the total taken from --vram, which for Ollama is the free memory: --gpu-name gives the card's"
        if note:
            spec = replace(spec, notes=list(spec.notes) + [note])
    return spec, ctx, model_max
