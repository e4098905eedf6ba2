"""From the numbers an OOM log states, the flags that fix it (for triage's kv-cache guide): see kv.py's
docstring for the keys `suggest_flags_from_log` accepts."""
import math

from ..errors import UserError
from ..units import fmt_bytes
from . import spec as llm_spec
from .flags import FA_VALUE, flag as _flag
from .runtimes import at_least, parse_version
from .util_from_log import reason, share_needed
from .cache import BLOCK, CTX_STEP, KV_BYTES, MIN_CTX, floor_ctx, kv_cache
from .runtimes.vllm import MAX_UTIL as VLLM_MAX_UTIL, default_util as vllm_default_util



def small_cache(kv_dtype) -> str | None:
    """(fix67a, aud67b #14) "8-bit" or "4-bit" for a KV cache type of one byte an element or less (vLLM's fp8, fp8_e4m3,
    fp8_e5m2, its int8 per-token-head caches; nvfp4 in recent versions), else None: an fp8 cache is no fix for them."""
    k = str(kv_dtype or "").lower()
    if "fp4" in k or k.startswith("int4"):
        return "4-bit"
    if k.startswith(("fp8", "int8")):
        return "8-bit"
    return None

def _floor_step(n, step=CTX_STEP) -> int:
    return max(int(n) // step * step, 0)


# names memory/oom_parse.py and triage.py use for the same numbers
_LOG_ALIASES = {"max_model_len_tokens": "max_model_len", "vllm_maxlen": "max_model_len",
                "estimated_max_len_tokens": "estimated_max_len", "kv_max_tokens": "kv_tokens",
                "vllm_kv_tokens": "kv_tokens", "vllm_kv_mem": "kv_available", "vllm_util": "gpu_memory_utilization",
                "gpu_memory_utilization_ratio": "gpu_memory_utilization", "ggml_n_ctx": "n_ctx",
                "ggml_device_free": "free", "requested": "alloc", "model_name": "model", "vllm_version": "runtime_version"}


def suggest_flags_from_log(numbers: dict, runtime: str) -> list:
    """What to change, given the numbers an OOM log states. See the module docstring for the keys."""
    n = {_LOG_ALIASES.get(k, k): v for k, v in (numbers or {}).items() if v is not None}
    rt = {"llamacpp": "llama.cpp", "llama_cpp": "llama.cpp", "ggml": "llama.cpp"}.get(str(runtime).lower(), str(runtime).lower())
    spec = None
    if n.get("model"):
        try:
            spec = llm_spec.load_builtin(str(n["model"]).split("/")[-1])
        except UserError:
            spec = None
    if rt == "vllm":
        return _suggest_vllm(n, spec)
    if rt in ("llama.cpp", "ollama"):
        return _suggest_ggml(n, spec, rt)
    return []


def _suggest_vllm(n, spec) -> list:
    out = []
    want = n.get("max_model_len")
    kv_dtype = str(n.get("kv_cache_dtype") or "auto").lower()
    est = n.get("estimated_max_len") or n.get("kv_tokens")
    if not est and n.get("kv_available") and n.get("kv_needed") and want:
        est = int(want * n["kv_available"] / n["kv_needed"])
    pool_form = "latent"
    if spec is not None and spec.dsv4:  # DeepSeek-V4: an fp8 cache only (check_kv), its pool's form by the build
        from . import deepseek_v4 as DSV4
        kv_dtype = "fp8"
        pool_form = DSV4.layout_kind(_log_version(n))
    if not est and spec is not None and n.get("kv_available"):
        per_tok = kv_cache(spec, BLOCK, 1, "fp8" if kv_dtype.startswith("fp8") else "f16", "vllm",
                           mla_cache=pool_form)["per_token"]
        est = int(n["kv_available"] // (per_tok * BLOCK)) * BLOCK
    if est and est > 0:
        src = "the log's estimated maximum" if n.get("estimated_max_len") else "the KV cache capacity in the log"
        v = _floor_step(est)
        if v >= MIN_CTX:
            out.append(_flag("flag", "--max-model-len", v, f"{src} ({int(est)}) rounded down to {CTX_STEP}"))
        if not small_cache(kv_dtype):      # (fix67a) an 8-bit or 4-bit cache gets no fp8 suggestion
            v8 = floor_ctx(est * 2)
            if want:
                v8 = min(v8, _floor_step(want) or want)
            out.append(_flag("flag", "--kv-cache-dtype", "fp8",
                             f"one byte per cache element doubles the room: about {v8} tokens"))
            out.append(_flag("flag", "--max-model-len", v8, "with --kv-cache-dtype fp8"))
    elif n.get("kv_available") is not None and n["kv_available"] <= 0:
        util, had = _vllm_share(n)
        need = share_needed(dict(n, gpu_memory_utilization=util))     # (fix66c) from the log's figures, as kv works it out
        value, why = reason(need, util, had) if need else (f"{min(VLLM_MAX_UTIL, util + 0.05):.2f}",
                                                          f"weights and activations took the whole share{had}: give vLLM more of the GPU")
        out.append(_flag("flag", "--gpu-memory-utilization", value, why) if value else
                   _flag("note", "--gpu-memory-utilization", "", why, text="no --gpu-memory-utilization"))
        out.append(_flag("flag", "--enforce-eager", "", "skip CUDA graphs", text="--enforce-eager"))
        out.append(_flag("flag", "--max-num-seqs", min(int(n.get("max_num_seqs") or 256), 64),
                         "a smaller profile batch lowers the activation peak"))
    if n.get("free") and n.get("total") and n.get("gpu_memory_utilization") and n["free"] < n["gpu_memory_utilization"] * n["total"]:
        share = _free_share(n)
        if share:
            out.insert(0, share)
    return out


def _log_version_text(n):
    """The vLLM build the log names, as printed (triage's runtime_version fact is {runtime: version}); None if none."""
    ver = n.get("runtime_version")
    return (ver.get("vllm") if isinstance(ver, dict) else ver) or None


def _log_version(n):
    """_log_version_text parsed; None when the log names no build."""
    ver = _log_version_text(n)
    return parse_version(ver, "vllm") if ver else None


def _vllm_share(n):
    """The share the failed run had, and how the advice knows it: the log's own figure, else vLLM's default for the
    build the log names (runtimes/vllm.py default_util, kv's one rule: 0.92 from 0.20.0, where vllm#38284 put the
    CUDA-graph estimate inside the share, 0.90 before); a log that names neither is read as kv reads no
    --runtime-version, the newest build, and the reason says that this is assumed."""
    if n.get("gpu_memory_utilization"):
        return n["gpu_memory_utilization"], ""
    ver = _log_version_text(n)
    if ver:
        u = vllm_default_util(_log_version(n))
        return u, f" (the log prints none: vLLM {ver}'s default {u:.2f})"
    u = vllm_default_util(None)
    return u, (f" (the log prints neither the share nor the build: assumed vLLM's default {u:.2f}, which builds from "
               "0.20.0 take; 0.90 before)")


def free_util(free, total):
    """--gpu-memory-utilization that vLLM's start-up check (requested = share x total <= free) passes with room for
    another process to grow: the free share less 0.02, floored to two digits and capped at MAX_UTIL; None when no
    share in (0, 1] is free. The one formula for the OOM-log advice and triage's guide (tests/unit/test_triage_util_advice
    pins it). kv's plan does not use it: it keeps the share and the CUDA graphs (~0.5 GiB, vllm_overheads.CUDA_GRAPHS) within the
    free memory (vllm.free_cap, card_room), so on a small card the 0.02 here (0.47 GiB of 23.5) may leave the graphs too
    little room and kv with the same --free-gib can refuse this share (review16c R12)."""
    u = round(math.floor((free / total - 0.02) * 100) / 100, 2)
    return min(u, VLLM_MAX_UTIL) if u > 0 else None


def _free_share(n):
    """The free share of the card as --gpu-memory-utilization, always in (0, 1]; or a note that no share helps.
    A free figure beside this process's own memory (PyTorch's message) is what vLLM left, not what was free at start:
    when vLLM holds more than its share, the weights outgrew it and no utilization helps; else nothing is said."""
    free, total, util = n["free"], n["total"], n["gpu_memory_utilization"]
    own = n.get("this_process") or n.get("allocated")
    if own:
        if own <= util * total:
            return None
        return _flag("note", "--gpu-memory-utilization", "", f"vLLM itself holds {fmt_bytes(own)} of {fmt_bytes(total)}, more than "
                     f"its {util:g} share: no utilization shrinks the weights; a smaller or quantized model, or "
                     "--tensor-parallel-size", text="no --gpu-memory-utilization")
    u = free_util(free, total)
    if u is None:
        return _flag("note", "--gpu-memory-utilization", "", f"only {fmt_bytes(free)} of {fmt_bytes(total)} is free at start: "
                     "no utilization leaves vLLM room; stop the other process", text="no --gpu-memory-utilization")
    return _flag("flag", "--gpu-memory-utilization", f"{u:.2f}",
                 f"only {fmt_bytes(free)} of {fmt_bytes(total)} is free at start; or stop the other process")


def _suggest_ggml(n, spec, rt) -> list:
    if rt == "ollama" and str(n.get("buffer", "")).lower().startswith("compute"):
        # (fix66c) the graph's compute buffer, not the cache: a smaller batch and flash attention (guide ollama-activations)
        return [_flag("param", "num_batch", 128, "the compute buffer scales with the batch (num_batch, default 512)",
                      text="PARAMETER num_batch 128"),
                _flag("env", "OLLAMA_FLASH_ATTENTION", 1, "attention's scratch no longer grows with context x batch")]
    out = []
    par = int(n.get("n_parallel") or n.get("num_parallel") or 1)
    ctx = n.get("n_ctx")  # llama.cpp's total cells (-c); Ollama's runner prints num_ctx x OLLAMA_NUM_PARALLEL
    if rt == "ollama":
        ctx = n.get("num_ctx") or (ctx // par if ctx else None)
    need = n.get("kv_buffer") or n.get("alloc")
    free = n.get("free")
    quantized = str(n.get("type_k") or "f16").lower() not in ("f16", "f32", "bf16")
    shrink = 1.0  # what the cache shrinks to from the changes below
    if rt == "ollama" and par > 1:
        out.append(_flag("env", "OLLAMA_NUM_PARALLEL", 1, f"{par} slots each hold num_ctx tokens of cache"))
        shrink /= par
    if not quantized:
        if rt == "ollama":
            out.append(_flag("env", "OLLAMA_FLASH_ATTENTION", 1, "needed for a quantized cache"))
            out.append(_flag("env", "OLLAMA_KV_CACHE_TYPE", "q8_0", "34 bytes per 32 elements: about half of f16"))
        else:
            b = n.get("build")  # llama.cpp's build number, when the caller read one ("build: N (hash)")
            if isinstance(b, int) and not isinstance(b, bool) and not at_least((b,), *FA_VALUE):
                out.append(_flag("flag", "-fa", "", f"flash attention (needed for a quantized V cache; build {b} takes a "
                                 "bare -fa)", text="-fa"))
            else:  # the same gate as the plan's command (flags.FA_VALUE): -fa on|off|auto from b6325
                out.append(_flag("flag", "-fa", "on", "flash attention (needed for a quantized V cache)"
                                 + ("" if isinstance(b, int) else "; a bare -fa before b6325")))
            out.append(_flag("flag", "-ctk", "q8_0", "K cache at 34 bytes per 32 elements"))
            out.append(_flag("flag", "-ctv", "q8_0", "V cache likewise"))
        shrink *= KV_BYTES["q8_0"] / KV_BYTES["f16"]
    if ctx:
        if need and free is not None:
            fit = free / (need * shrink)   # share of the context that the free memory holds after the changes
        else:
            fit = 1.0 if not quantized else 0.5  # no free figure: the cache change, else half the context
        new = _floor_step(ctx * min(fit * 0.95, 1.0)) if fit < 1 else ctx
        if MIN_CTX <= new < ctx:
            if rt == "ollama":
                out.append(_flag("env", "OLLAMA_CONTEXT_LENGTH", new, "smaller default context"))
                out.append(_flag("param", "num_ctx", new, "per model or request", text=f"PARAMETER num_ctx {new}"))
            else:
                out.append(_flag("flag", "-c", new, "smaller context"))
    if n.get("n_gpu_layers") and n.get("n_layers") and need and free is not None and free < need and not ctx:
        ngl = max(int(min(n["n_gpu_layers"], n["n_layers"]) * free / need * 0.95), 0)
        if rt == "ollama":
            out.append(_flag("param", "num_gpu", ngl, "fewer layers on the GPU", text=f"PARAMETER num_gpu {ngl}"))
        else:
            out.append(_flag("flag", "-ngl", ngl, "fewer layers on the GPU, the rest in RAM"))
    if rt == "llama.cpp" and str(n.get("buffer", "")).lower().startswith("compute"):
        out.append(_flag("flag", "-ub", 256, "the compute buffer scales with the micro-batch (-ub, default 512)"))
    return out
