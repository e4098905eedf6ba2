"""Guide parameters and flags from one failure's numbers: --reserve-vram, tile sizes, --max-model-len,
--gpu-memory-utilization, -ngl, -c (the guides' {{placeholders}}), and the LLM calculator's suggestions."""
import math
import re
from types import SimpleNamespace

from . import comfy_launch, fa_form, lowvram_already, ollama_compute, ollama_env_since, ollama_forced_layers, verdict_guides, vllm_capture_fix, vllm_command
from .case import snapshot_device
from .predicates import ggml_header_failed, torch29_conv3d
from .mps_other import held_outside_numbers
from .should_fit import NAME, shown_version
from ..units import GiB, MiB, fmt_bytes as _b

CTX_STEP = 256               # llama.cpp pads its cache to 256 cells (memory/llm/cache.py CTX_STEP); contexts are multiples
COMPUTE_GUESS = 1 * GiB      # llama.cpp sizes its compute buffers after the KV cache: where the log stops before them
KV_MARGIN = 512 * MiB        # left free beside weights, cache and compute buffers (driver, fragmentation)


def params(inc, env, scan, context, card=None) -> dict:
    """Numbers the guides fill in: --reserve-vram, --max-model-len, --gpu-memory-utilization, -ngl, -c.
    `card`: the card's capacity as the Case decided it (case.py: a message's total, or cudaMallocAsync's device limit
    unless that is not this card), else the message's total or ComfyUI's start-up "Total VRAM"."""
    n = inc.primary.get("numbers") or {}
    f = scan.facts
    p = {}
    p.update(comfy_launch.params(env, f, context))     # (fix66c) the install the log shows: portable, Desktop, manual
    p.update(vllm_command.params(f, card or n.get("total") or max(f["vllm_total_at"].values(), default=None)))
    lat = (context or {}).get("latent") or {}
    try:
        area = int(lat.get("width") or 0) * int(lat.get("height") or 0)
        frames = int(lat.get("frames") or 1)
    except (TypeError, ValueError):
        area, frames = 0, 1
    # big images and long clips (the panel passes latent frames: 21 for 81 video frames): smaller tiles from the start
    if area >= 1536 * 1536 or (frames > 1 and area >= 1280 * 704) or frames >= 16:
        p["tile_size"], p["overlap"] = 256, 32
        p["temporal_size"], p["temporal_overlap"] = 32, 8
    total = card or n.get("total") or f["total_vram"]
    if not total and context and context.get("snapshot"):
        try:
            total = context["snapshot"]["devices"][0]["total"]
        except (KeyError, IndexError, TypeError):
            pass
    req, free = n.get("requested"), n.get("free")
    others = n.get("other_processes")
    if others is None and n.get("this_process") is not None and total and free is not None:
        others = max(0, total - free - n["this_process"])
    if others is None and n.get("device_limit") and total and free is not None and n.get("allocated") is not None:
        others = max(0, total - free - n["allocated"])      # cudaMallocAsync: neither free nor PyTorch's
    dev = snapshot_device(context or {}, inc.primary)
    if dev and dev.get("other_processes"):
        others = max(others or 0, dev["other_processes"])
    if total:
        p["total_gib"] = f"{total / GiB:.1f}"
    if req:
        p["requested"] = _b(req)
    reserve = None
    if req is not None and free is not None:
        short = max(0, req - free)
        p["shortfall"] = _b(short)
        reserve = math.ceil((short / GiB + 0.6) * 10) / 10
    if others:
        reserve = max(reserve or 0, math.ceil((others / GiB + 0.5) * 10) / 10)
    if reserve is not None:
        if total:
            reserve = min(reserve, round(total / GiB / 2, 1))
        p["reserve_vram_gb"] = f"{max(reserve, 0.6):.1f}"
    if others:
        p["other_processes"] = _b(others)
    if n.get("reserved_unallocated") is not None:
        p["reserved_unallocated"] = _b(n["reserved_unallocated"])
    from ..llm.cache import floor_ctx  # lazy, as ..llm.kv below: triage loads no LLM code at import
    est = n.get("estimated_max_len_tokens")
    if not est and n.get("kv_needed") and n.get("kv_available", 0) > 0 and n.get("max_model_len_tokens"):
        est = int(n["max_model_len_tokens"] * n["kv_available"] / n["kv_needed"])
    if est:
        p["max_model_len"], p["mml_from_log"] = str(floor_ctx(est)), str(est)
    elif n.get("kv_max_tokens"):
        t = n["kv_max_tokens"]
        p["max_model_len"], p["mml_from_log"] = str(floor_ctx(t)), str(t)
    elif f["vllm_kv_tokens"]:
        p["max_model_len"] = str(min(8192, f["vllm_kv_tokens"] // 256 * 256))
    if n.get("mamba_blocks_count"):
        p["max_num_seqs"] = str(n["mamba_blocks_count"])
    if inc.primary["kind"] == "vllm.startup_free" and n.get("total"):
        from ..llm.advise import free_util  # lazy, as ..llm.cache above
        u = free_util(n["free"], n["total"])
        if u is not None:
            p["gpu_memory_utilization"] = f"{u:.2f}"
        else:                               # (0, 1] holds no share that is free: the other process must go
            p["util_no_room"] = True
    p.update(_llama_ctx(inc, f, n, total))
    p.update(_ollama_ctx(f))
    p.update(_vllm_fp8(p, n, f))
    p.update(vllm_capture_fix.params(inc, f, n))     # (fix67a) the graph-capture guide's drop and --max-num-seqs
    p.update(_conditions(inc, env, f, lat, area, frames, others))
    p.update(_should_fit(inc))
    p.update(ollama_forced_layers.params(f))     # (aud68c #6) num_gpu over Ollama's estimate
    p.update(verdict_guides.params(inc))     # (aud68c #5) the weights alone over the card: the guide's title says so
    p.update(_ngl(inc, f, env.get("runtime")))
    p.update(fa_form.params(f))     # (aud68c #2) -fa as the log's llama.cpp build takes it
    p.update(lowvram_already.params(f))     # (aud68c #10) --lowvram already in the launch line
    return p


def _ngl(inc, f, runtime) -> dict:
    """-ngl for the weights guide and the suggestions' list (one figure for both): kv's plan at the log's -c, cache and
    compute buffer where it can describe the model (ngl_plan.py, aud68c #1); else the weights alone in the free memory
    less 1.5 GiB (a layer: the larger of the model buffer and the failed request over the layers offloaded)."""
    from . import ngl_plan
    pl = ngl_plan.plan(inc, f, runtime)
    if pl:
        kv = pl["kv_dtype"]
        return {"ngl": str(pl["ngl"]), "ngl_plan": True, "ngl_model": pl["model"], "ngl_wdt": pl["wdt"],
                "ngl_free": _b(pl["free"]), "ngl_command": pl["command"], "ngl_kv": kv, "ngl_ctx": str(pl["ctx"]),
                "ngl_kv_flags": "" if kv == "f16" else f" -ctk {kv} -ctv {kv}"}
    off, dev_free = f["ggml_offloaded"], f["ggml_device_free"]
    req = next((e["numbers"]["requested"] for e in [inc.primary] + list(inc.events) if (e.get("numbers") or {}).get("requested")), None)
    model_bytes = sum(v for k2, v in f["ggml_bufs"].items() if k2.startswith("model:") and "CPU" not in k2 and "Host" not in k2)
    if not (off and dev_free and req):
        return {}
    layers = off[0]
    per = max(req, model_bytes) / max(layers, 1)
    fit = int((dev_free - 1.5 * GiB) / per) if per else layers
    return {"ngl": str(max(0, min(layers - 1, fit))), "ngl_weights_only": True}


def nice_ctx(tokens: int) -> int:
    """The largest power of two, or 1.5 x one, that is a multiple of CTX_STEP and at most `tokens` (0 if none)."""
    best, v = 0, CTX_STEP
    while v <= tokens:
        best = v
        if v * 3 // 2 <= tokens and v * 3 // 2 % CTX_STEP == 0:
            best = v * 3 // 2
        v *= 2
    return best


def _half(ctx: int) -> int:
    """Half a context, rounded down to CTX_STEP (a context under 512: its half)."""
    return ctx // 2 // CTX_STEP * CTX_STEP or ctx // 2


def _gpu(key: str) -> bool:
    return "CPU" not in key and "Host" not in key


def _llama_ctx(inc, f, n, total) -> dict:
    """llama.cpp's -c for the kv-cache guide, one number for the command and its text. With the cache's bytes per
    token (its printed KV buffer, or the failed request when that was the cache, over n_ctx) and the device's room
    (free at start, else the card, less the model's buffers, the compute buffers and KV_MARGIN), the largest nice
    context that fits (ctx_fit); else half of this log's n_ctx (ctx_half); else nothing (the guide says CTX)."""
    n_ctx = f["ggml_n_ctx"] or f["ggml_args"].get("c")
    if not n_ctx:
        return {}
    p = {"n_ctx": str(n_ctx)}
    par = slots(f, n_ctx)
    if par > 1:             # -c is shared by the slots: say what each gets, now and with the new -c
        p.update(slots=str(par), ctx_per_slot=str(f["ggml_ctx_per_seq"] or n_ctx // par))
    bufs = {k: v for k, v in f["ggml_bufs"].items() if _gpu(k)}
    devices = {k.split(":", 1)[1] for k in bufs}
    kv = sum(v for k, v in bufs.items() if k.startswith("kv:"))
    req = next((e["numbers"]["requested"] for e in inc.events if (e.get("numbers") or {}).get("requested")), None)
    if not kv and req and any("kv cache" in t.lower() for t in inc.texts):
        kv = req                                    # the allocation that failed was the whole cache
    room_of = f["ggml_device_free"] or total
    weights = sum(v for k, v in bufs.items() if k.startswith("model:"))
    compute = sum(v for k, v in bufs.items() if k.startswith("compute:"))
    fit = 0
    if kv and room_of and weights and len(devices) <= 1:
        per = kv / n_ctx
        room = room_of - weights - (compute or COMPUTE_GUESS) - KV_MARGIN
        fit = nice_ctx(int(room / per)) if room > 0 else 0
        if 0 < fit < n_ctx:
            if par > 1:
                p["ctx_each"] = str(fit // par)
            p.update(ctx=str(fit), ctx_fit=True, ctx_raw=str(int(room / per)), kv_per_token=_b(per), kv_bytes=_b(kv), weights=_b(weights),
                     room_of=_b(room_of), room=_b(room), compute=_b(compute or COMPUTE_GUESS),
                     room_is_free=bool(f["ggml_device_free"]), compute_guessed=not compute)
            return p
    if par > 1:
        p["ctx_each"] = str(_half(n_ctx) // par)
    p.update(ctx=str(_half(n_ctx)), ctx_half=True, no_room=bool(kv and room_of and weights and len(devices) <= 1 and not fit))
    if p["no_room"]:
        p["weights"] = _b(weights)
    return p


def slots(f, n_ctx=None) -> int:
    """The cache's parallel sequences: -np/--parallel on the command line (Ollama's runner passes --parallel), llama.cpp's
    n_seq_max, OLLAMA_NUM_PARALLEL, else the context over n_ctx_per_seq; 0 when the log does not say."""
    env_par = re.match(r"\d+", f["ollama_env"].get("NUM_PARALLEL") or "")     # "4]" closing the env map; 0: Ollama picks
    par = f["ggml_args"].get("parallel") or f["ggml_n_seq_max"] or (env_par and int(env_par.group())) or 0
    per = f["ggml_ctx_per_seq"]
    if not par and per and n_ctx and n_ctx % per == 0:
        par = n_ctx // per
    return int(par)


def _ollama_ctx(f) -> dict:
    """Ollama's runner gets num_ctx x OLLAMA_NUM_PARALLEL cells (0.5.x server/sched.go: opts.NumCtx = origNumCtx *
    numParallel, passed as --ctx-size; 0.11+ llm/server.go: KvSize = NumCtx * numParallel). With one slot the cache is
    num_ctx alone, so OLLAMA_CONTEXT_LENGTH = half the runner's cells halves the cache whatever the slot count was."""
    runner = f["ggml_args"].get("c") or f["ggml_n_ctx"]
    if not f["ollama"] or not runner:
        return {}
    p = {"ollama_runner_ctx": str(runner)}
    par = slots(f, runner)
    if par > 1 and runner % par == 0:
        num_ctx = runner // par
        p.update(ollama_parallel=str(par), ollama_num_ctx=str(num_ctx), ollama_slots=True,
                 ollama_ctx=str(_half(num_ctx)))
    else:
        p.update(ollama_ctx=str(_half(runner)), ollama_one_or_unknown=True)
    return p


def _vllm_fp8(p, n, f) -> dict:
    """--max-model-len with an fp8 cache: one byte an element instead of two holds twice the tokens, but never more
    than the model's maximum length (the same figures memory/llm/advise.py prints under the guide)."""
    from ..llm.advise import small_cache
    bits = small_cache(f["vllm_kv_dtype"])
    if bits:        # (fix67a) already 8-bit (or 4-bit): no fp8 command, no doubling
        return {"kv_fp8": True, "kv_cache_dtype": f["vllm_kv_dtype"], "kv_bits": bits}
    if "max_model_len" not in p or not p.get("mml_from_log"):
        return {}
    from ..llm.cache import floor_ctx
    est = int(p["mml_from_log"])
    want = n.get("max_model_len_tokens") or f["vllm_maxlen"]
    twice = floor_ctx(2 * est)
    out = {"max_model_len_fp8": str(twice), "fp8_twice": str(2 * est)}
    if want and twice > want // CTX_STEP * CTX_STEP:
        own = (f.get("vllm_own") or {}).get("max_model_len") == str(want)     # (fix67a) the run's own --max-model-len
        out.update(max_model_len_fp8=str(want // CTX_STEP * CTX_STEP or want), model_max_len=str(want), fp8_capped=True,
                   **({"maxlen_own": True} if own else {}))
    return out


def _conditions(inc, env, f, lat, area, frames, others) -> dict:
    """Flags the guides' conditional parts and `see` entries test (guides.py: <!-- if ... -->)."""
    c = {"torch29_conv3d": torch29_conv3d(SimpleNamespace(f=f, env=env)),
         "image": bool(area) and frames <= 1 and not lat.get("video_frames"),
         "windows": env.get("os") == "windows" and not env.get("os_tied"),     # (fix67f) a tied vote is no OS
         "os_tied": bool(env.get("os_tied")),
         "mtp_gpu_sampling": f["ggml_spec_mtp"] and not f["ggml_spec_cpu_sampling"],
         "gpu_fault": bool(f["gpu_fault"]),
         "mps_other_held": held_outside_numbers(inc.primary.get("numbers") or {}),     # (fix66d) the MPS guide's paragraph
         # (round 70) llama.cpp's pre-GGUF loader failed while reading the file's header (the rules' row of the same name)
         "ggml_header_failed": inc.primary["kind"] == "cpp.bad_alloc" and env.get("runtime") == "llama.cpp" and ggml_header_failed(
             SimpleNamespace(f=f, after=inc.after, line=inc.primary.get("_line", inc.first_line)))}
    named = any("empty_cache" in t for t in inc.texts + [s for s in inc.sources if s] + [fn for _, fn in inc.frames])
    c["empty_cache_relevant"] = named or bool(others)
    return c


def _should_fit(inc) -> dict:
    """The version-regression guide's numbers: should_fit.py's verdict, which the rule row computed for this failure."""
    v = inc.primary.get("_should_fit")
    if not v:
        return {}
    rt = v["runtime"]
    name, version = NAME[rt], shown_version(rt, v["version"])
    return {"should_fit": True, "sf_model": v["model"], "sf_weights": _b(v["weights"]), "sf_kv": _b(v["kv"]),
            "sf_ctx": str(v["ctx"]), "sf_card": _b(v["card"]), "sf_need": _b(v["need"]), "sf_budget": _b(v["budget"]),
            "sf_runtime": name, "sf_version": f"{name} {version}" if version else f"the {name} version in use",
            "sf_card_what": f"{_b(v['card'])} free when it started" if v["card_is_free"] else f"a {_b(v['card'])} card",
            "sf_vllm": rt == "vllm",
            "sf_command": " ".join(["gpu-garden kv --model", v["model"], "--runtime", rt, "--ctx", str(v["plan_ctx"])]
                                   + (["--parallel", str(v["parallel"])] if v["parallel"] > 1 else [])
                                   + (["--gpu-memory-utilization", str(v["util"])] if v["util"] else [])
                                   + (["--runtime-version", version] if version else []) + ["--vram", f"{v['card'] / GiB:.2f}"]), "sf_llamacpp": rt == "llama.cpp", "sf_ollama": rt == "ollama"}


def llm_suggestions(scan, inc, numbers, runtime, case=None) -> list:
    """Flags the LLM calculator derives from the numbers this log states (context, KV budget, failed buffer)."""
    f = scan.facts
    n = dict(numbers)
    for key, fact in (("kv_available", "vllm_kv_mem"), ("kv_tokens", "vllm_kv_tokens"), ("gpu_memory_utilization", "vllm_util"),
                      ("max_model_len", "vllm_maxlen"), ("n_ctx", "ggml_n_ctx"), ("free", "ggml_device_free"),
                      ("kv_cache_dtype", "vllm_kv_dtype")):
        if f.get(fact) is not None:
            n.setdefault(key, f[fact])
    if f.get("llm_model"):
        n.setdefault("log_model", f["llm_model"][-1])     # (fix66c) one request's cache in the share (llm/util_from_log.py)
    if runtime == "llama.cpp" and fa_form.build(f):
        n.setdefault("build", fa_form.build(f))     # (aud68c #2) llm/advise.py's -fa gate (flags.FA_VALUE)
    if f.get("ggml_offloaded"):
        n.setdefault("n_gpu_layers", f["ggml_offloaded"][0])
        n.setdefault("n_layers", f["ggml_offloaded"][1])
    if slots(f, n.get("n_ctx")) > 1:
        n.setdefault("n_parallel", slots(f, n.get("n_ctx")))
    kv = sum(v for k, v in f["ggml_bufs"].items() if k.startswith("kv:"))
    if kv:
        n.setdefault("kv_buffer", kv)
    if any(e["kind"] == "ggml.compute" for e in inc.events) or runtime == "ollama" and ollama_compute.failed_compute_buffer(case):
        n["buffer"] = "compute"
    try:
        from ..llm import kv as llm
        out = list(llm.suggest_flags_from_log(n, runtime) or [])[:6]
    except Exception:      # an optional helper: triage answers without it
        return []
    if runtime == "ollama":
        out = ollama_env_since.keep(out, f)     # (aud68c #3) no variable the log's Ollama does not read
    ngl = _ngl(inc, f, runtime) if runtime == "llama.cpp" else {}
    if ngl.get("ngl_plan") and not any(x.get("name") == "-ngl" for x in out):
        out.append({"kind": "flag", "name": "-ngl", "value": ngl["ngl"], "text": "", "reason": ""})
    for x in out:      # (aud68c #1) the guide's -ngl: kv's plan, else its weights-only figure, never a third
        if x.get("name") == "-ngl" and ngl.get("ngl"):
            x.update(value=ngl["ngl"], text=f"-ngl {ngl['ngl']}", reason=(
                f"kv's plan at -c {ngl['ngl_ctx']} with a {ngl['ngl_kv']} cache and the compute buffer"
                if ngl.get("ngl_plan") else "fewer layers on the GPU (weights only: leave room for the cache)") + ", the rest in RAM")
    return out

