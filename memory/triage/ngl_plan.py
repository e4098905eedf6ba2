"""-ngl for a llama.cpp load that did not fit, as `gpu-garden kv` plans it (issue 14, aud68c #1).

Why: a layer count from the weights alone ((free - 1.5 GiB) / a layer's weights) leaves the KV cache at the log's -c
and the compute buffer out; on a 24 GB card with Llama-3.3-70B Q3_K_M at -c 8192 it said 57 where kv plans 54 (q8_0
cache). So where the calculator can describe the model the log names (should_fit.py's checks: its name, the file type,
the printed parameters and file size) this asks kv's plan with the log's -c, build, -ub/-b/-fa and the device's free
memory at start, and takes its layer count and cache type; else None, and advice.py keeps its weights-only figure
(the guide says which). llama.cpp only: Ollama places layers itself (num_gpu)."""
from ..units import GiB
from .should_fit import FILE_TYPES, PARAMS_TOL, SIZE_TOL, _facts, _model, _once, shown_version


def plan(inc, f, env_runtime="llama.cpp"):
    """{"ngl", "kv_dtype", "ctx", "model", "wdt", "free", "command"} from kv's plan, or None (no verdict)."""
    # layers were on the GPU ("offloaded N/M layers", else the command's -ngl); one device (a split is the user's)
    if env_runtime != "llama.cpp" or not (f["ggml_offloaded"] or f["ggml_args"].get("ngl")) or len(f["ggml_devices"]) > 1:
        return None
    ctx = f["ggml_args"].get("c") or f["ggml_n_ctx"]
    free = f["ggml_device_free"]
    if not ctx or not free:
        return None
    x = type("X", (), {"f": f, "line": inc.primary.get("_line", inc.first_line), "after": inc.after})()
    g = _facts(x)
    name = _model(g, "llama.cpp")
    wdt = FILE_TYPES.get((g["gguf_type"] or "").strip())
    if not name or not wdt:
        return None
    from ..llm import kv as llm            # lazy: triage loads no LLM code at import
    spec = _once(f, ("describe", name), lambda: llm.describe(model=name))
    if spec is None or g["gguf_params"] and abs(spec.params - g["gguf_params"]) > PARAMS_TOL * g["gguf_params"]:
        return None
    version = shown_version("llama.cpp", g["runtime_version"].get("llama.cpp"))
    knobs = {"runtime_version": version} if version else {}
    for key, arg in (("ubatch", "ub"), ("batch", "b")):
        if f["ggml_args"].get(arg):
            knobs[key] = f["ggml_args"][arg]
    if f["ggml_fa"]:
        knobs["flash_attn"] = f["ggml_fa"]
    r = _once(f, ("ngl_plan", name, ctx, wdt, free, tuple(sorted(knobs.items()))),
              lambda: llm.plan(spec, runtime="llama.cpp", ctx=ctx, weights_dtype=wdt, vram=free, **knobs))
    if not r or not r["fits"] or r.get("gpu_layers_used") is None or (r.get("chosen") or {}).get("ctx") != ctx:
        return None
    if g["gguf_size"] and abs(r["weights"] - g["gguf_size"]) > SIZE_TOL * g["gguf_size"]:
        return None
    kvd = r["chosen"].get("kv_dtype") or "f16"
    cmd = " ".join(["gpu-garden kv --model", spec.name, "--weights-dtype", wdt, "--ctx", str(ctx), "--vram",
                    f"{free / GiB:.3f}", "--runtime llama.cpp"] + (["--runtime-version", version] if version else []))
    return {"ngl": r["gpu_layers_used"], "kv_dtype": kvd, "ctx": ctx, "model": spec.name, "wdt": wdt, "free": free,
            "command": cmd}
