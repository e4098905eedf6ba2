"""Should this load have fit? The LLM calculator (memory/llm, `gpu-garden kv`) asked about what the log itself shows.

Why: a model that fits with room to spare and fails at load, right after an update, is a fault of that version
(issue 14, class 7), not a card too small; the allocator's numbers cannot tell the two apart, the model's own size can.
So triage describes the model the log names (vLLM's engine config or "Starting to load model X...", `ollama run X`,
the GGUF's general.name, checked against the file type, parameters and size llama.cpp prints) and plans it with the
log's context, utilization, slots and card. Nothing is guessed: a model the calculator cannot describe, a card or
context the log does not give, a partial GPU offload, or a calculator that disagrees with the printed parameters or
size gives no verdict. The calculator is imported lazily, its work is bounded (one description, one plan: a few ms)
and any failure of it reads as no verdict: triage answers without it.

FIT_SHARE: the load counts as fitting with clear room when the calculator's need (weights + KV cache at the log's
context + the runtime's own terms) is at most 80 % of what the runtime may use (vLLM: utilization x card; llama.cpp
and Ollama: the free memory they saw, else the card). The calculator's measured errors against real runs
(docs/kv-accuracy.md, bench_llm on 2026-12-01): weights worst 7.55 % over 160 runs, Ollama's own total worst 7.8 % over 30;
20 % room is over twice the worst of either."""
import bisect
import re

from ..units import GiB, MiB
from . import vllm_quant

FIT_SHARE = 0.8
RUNTIMES = ("vllm", "llama.cpp", "ollama")
NAME = {"vllm": "vLLM", "llama.cpp": "llama.cpp", "ollama": "Ollama", "comfyui": "ComfyUI"}
# llama.cpp's file type as it prints it ("Q4_K - Medium") -> the GGUF type name the calculator sizes
FILE_TYPES = {"all F32": "F32", "F16": "F16", "BF16": "BF16", "Q8_0": "Q8_0", "Q6_K": "Q6_K", "Q5_K - Medium": "Q5_K_M",
              "Q5_K - Small": "Q5_K_S", "Q5_0": "Q5_0", "Q5_1": "Q5_1", "Q4_K - Medium": "Q4_K_M", "Q4_K - Small": "Q4_K_S",
              "Q4_0": "Q4_0", "Q4_1": "Q4_1", "IQ4_NL - 4.5 bpw": "IQ4_NL", "IQ4_XS - 4.25 bpw": "IQ4_XS",
              "Q3_K - Large": "Q3_K_L", "Q3_K - Medium": "Q3_K_M", "Q3_K - Small": "Q3_K_S", "Q2_K - Medium": "Q2_K",
              "MXFP4 MoE": "MXFP4"}
PARAMS_TOL, SIZE_TOL = 0.05, 0.10   # the printed parameters and file size against the description (else not this model)
# where a load or start-up fails: llama.cpp/Ollama allocate weights, cache and compute buffers while loading
LOAD_STAGES = ("model-load-failed", "device-alloc", "kv-cache-failed", "compute-failed", "after-model-buffers",
               "after-kv-buffers")
# vLLM kinds that are a setting's verdict, not a load: the context over the cache, free memory under the utilization
# vLLM's weight dtypes the plan sizes (2 bytes a parameter; none shown: the model's own, "auto")
HALF = (None, "auto", "bfloat16", "float16", "half", "bf16", "fp16")
NOT_LOAD = ("vllm.kv_max_len", "vllm.startup_free", "vllm.mamba_blocks")


def verdict(x):
    """The calculator's verdict for this failure's Case when the load should fit with clear room, else None;
    computed once per failure (kept on its event; advice.py reads it there)."""
    return _kept(x.ev, "_should_fit", lambda: _verdict(x))


def _at_load(x) -> bool:
    f, rt = x.f, x.env["runtime"]
    if x.training or x.kind in NOT_LOAD or (x.others or 0) >= 0.1 * (x.total or float("inf")):
        return False
    if rt == "vllm":      # (the Transformers backend's memory is not vLLM's own implementation, which kv describes)
        # the KV cache allocated or CUDA graphs being captured: the load is done and the cache took what the utilization
        # left; a failure now is the graphs' or the activations' share, not the load the calculator sizes
        past_load = f["vllm_kv_mem"] is not None or f["vllm_kv_tokens"] or f["graph_capture"]
        return (x.branch in ("torch", "async", "vllm.no_kv_blocks") and not f["vllm_serving"] and not f["vllm_transformers"]
                and not past_load)
    return x.branch == "ggml" and x.ggml_stage in LOAD_STAGES


def _card(x, rt):
    f = x.f
    if rt == "vllm":
        return x.total
    devs = f["ggml_devices"]
    if len(devs) > 1:          # several cards: the one that failed, as its error names it ("on device 1", "CUDA1 buffer"), else none
        m = next((m for m in map(_FAILED_ON.search, x.texts) if m), None)
        idx = m and (m.group(1) or m.group(2))
        return next((free for name, free in devs.items() if idx and name.rstrip("0123456789")
                     and name[len(name.rstrip("0123456789")):] == idx), None)
    gpus = f["ollama_gpus"]
    if gpus and len(gpus) > 1:  # Ollama over several GPUs: the failing one's own entry (CUDA<i>: the i-th), else none
        m = next((m for m in map(_FAILED_ON.search, x.texts) if m), None)
        idx = m and int(m.group(1) or m.group(2))
        return gpus[idx] if idx is not None and idx < len(gpus) else None
    return f["ggml_device_free"] or f["ollama_available"] or f["ollama_total"] or x.total


_FAILED_ON = re.compile(r"\bon device (\d{1,20})|allocate [A-Za-z]+?(\d{1,20}) buffer")


# the size of the allocation that failed, in any of the failure's lines (cudaMalloc's and ggml-alloc's)
_FAILED_SIZE = re.compile(r"allocating (\d+\.\d+) MiB on device|buffer of size (\d{1,20})")


def _model(f, rt):
    """The name to describe, or None: the log's model line for this runtime."""
    which, name = f["llm_model"] or (None, None)
    if rt == "vllm" and which in (1, 2, 3, 4, 7):
        return name
    if rt == "ollama" and which == 5:
        return name
    if rt in ("llama.cpp", "ollama") and which == 6:
        return "-".join(name.split())             # general.name "Qwen3 30B A3B" -> Qwen3-30B-A3B
    return None


def _once(f, key, work):
    """The calculator's answer (None: it refused) computed once per scan: a log of 200 failures of one load asks once,
    and an unknown name's refusal (which looks for close names) is not repeated."""
    return _kept(f.setdefault("_should_fit_memo", {}), key, work)


def _kept(memo, key, work):
    """work() computed once and kept in memo[key] (a scan's memo, or a failure's event); None when it raised."""
    if key not in memo:
        try:
            memo[key] = work()
        except Exception:      # an optional helper: triage answers without it
            memo[key] = None
    return memo[key]


def _facts(x):
    """The facts as this failure saw them: the model, GGUF and version lines last printed before it and after the
    failure before it (a model named after the failure is a later load; one before the previous failure, an earlier one)."""
    f, hist = x.f, x.f["fact_line"]
    if not hist:
        return f
    f = dict(f)
    for name, kept in hist.items():
        lines = [n for n, _ in kept]
        i = bisect.bisect_right(lines, x.line or 0) - 1
        value = kept[i][1] if i >= 0 and lines[i] > (x.after or 0) else None
        if name == "llm_model":
            f["llm_model"] = value
        elif name == "runtime_version":
            f["runtime_version"] = value or {}
        elif name == "vllm_wflags":       # (fix66g) this run's flags: the last before the failure, the previous failure's too
            f["vllm_wflags"] = kept[i][1] if i >= 0 else {}
        else:
            f["gguf_type"], f["gguf_params"], f["gguf_size"] = value or (None, None, None)
    return f


def _verdict(x):
    rt = x.env["runtime"]
    if rt not in RUNTIMES or not _at_load(x):
        return None
    f = _facts(x)
    name, card = _model(f, rt), _card(x, rt)
    if not name or not card:
        return None
    version = f["runtime_version"].get(rt)
    from ..llm import kv as llm            # lazy: triage loads no LLM code at import
    spec = _once(x.f, ("describe", name), lambda: llm.describe(model=name))
    if spec is None:
        return None
    if f["gguf_params"] and abs(spec.params - f["gguf_params"]) > PARAMS_TOL * f["gguf_params"]:
        return None
    knobs = {"runtime_version": shown_version(rt, version)} if version else {}
    ctx, parallel, wdt, shown = None, 1, None, None
    if rt == "vllm":
        if f["vllm_dtype"] not in HALF:
            return None                       # weights at 4 bytes (float32) or another dtype: the plan sizes 2
        load, wdt = vllm_quant.precision(f, name, spec)   # (fix66d, fix66g) --quantization's precision, at load and after
        if wdt is False:
            return None
        if load != wdt and ((r0 := _load_weights(x, spec, name, load)) is None or r0["weights"] > card):
            return None                       # quantised in flight after a 16-bit load that does not fit the card
        ctx = f["vllm_maxlen"]
        if f["vllm_util"]:
            knobs["gpu_memory_utilization"] = f["vllm_util"]
        kvd = f["vllm_kv_dtype"] if f["vllm_kv_dtype"] not in (None, "auto") else None
    else:
        from .advice import slots
        runner = f["ggml_args"].get("c") or f["ggml_n_ctx"]
        if not runner:
            return None                       # the context decides the cache: not guessed
        parallel = slots(f, runner) or 1
        ctx, shown = (runner // parallel if rt == "ollama" else runner), runner
        off = f["ggml_offloaded"]
        # all layers on the GPU, as the log shows (its "offloaded N/M layers" over -ngl 99, which asks, not tells); else a
        # split the user chose or the runtime made
        if not (off[0] >= off[1] if off else f["ggml_args"].get("ngl", 0) >= len(spec.layer_kinds) + 1):
            return None
        if f["gguf_type"]:
            wdt = FILE_TYPES.get(f["gguf_type"].strip())
            if not wdt:
                return None
        kvd = None
        if f["ggml_args"].get("ub"):
            knobs["ubatch"] = f["ggml_args"]["ub"]
        if rt == "llama.cpp" and f["ggml_args"].get("b"):  # -b caps -ub (kv's --batch; Ollama's num_batch is both)
            knobs["batch"] = f["ggml_args"]["b"]
        if f["ggml_fa"]:
            knobs["flash_attn"] = f["ggml_fa"]
    r = _once(x.f, ("plan", name, rt, ctx, parallel, kvd, wdt, card, tuple(sorted(knobs.items()))),
              lambda: llm.plan(spec, runtime=rt, ctx=ctx, parallel=parallel, kv_dtype=kvd, weights_dtype=wdt, vram=card, **knobs))
    if r is None:
        return None
    if f["gguf_size"] and abs(r["weights"] - f["gguf_size"]) > SIZE_TOL * f["gguf_size"]:
        return None
    need = r["weights"] + r["kv_total"] + r["overhead_total"]
    budget = r["budget"] or card
    if need > FIT_SHARE * budget:
        return None
    if rt != "vllm":         # what the log itself shows on the card: its device buffers and the request that failed
        from .servers import ggml_buf
        shown_need = sum(v for k, v in f["ggml_bufs"].items()
                         for kind, host in [ggml_buf(k.split(":", 1)[1])] if kind is not None and not host)
        failed = max([x.req or 0] + [float(m.group(1)) * MiB if m.group(1) else int(m.group(2))
                                     for t in x.texts for m in _FAILED_SIZE.finditer(t)])
        if shown_need + failed > FIT_SHARE * budget:
            return None
    return {"runtime": rt, "version": version, "model": spec.name, "weights": r["weights"], "kv": r["kv_total"],
            "ctx": shown or r["ctx"], "plan_ctx": r["ctx"], "parallel": parallel,
            "util": knobs.get("gpu_memory_utilization"), "need": need, "budget": budget, "card": card,
            "card_is_free": rt != "vllm" and card != x.total and (card in f["ggml_devices"].values() or card in (f["ollama_gpus"] or ()))}


def shown_version(rt, version):
    """The version as the runtime names it and `gpu-garden kv --runtime-version` takes it: llama.cpp's builds are b4069."""
    return ("b" if rt == "llama.cpp" else "") + version if version else None


def sentence(v) -> str:
    """The row's evidence: "should fit: N GiB of weights (+ K GiB KV at the log's context) on M GiB; ..."."""
    who = f"this version ({NAME[v['runtime']]} {shown_version(v['runtime'], v['version'])})" if v["version"] \
        else "the runtime version in use"
    return (f"should fit: {v['weights'] / GiB:.1f} GiB of weights (+ {v['kv'] / GiB:.1f} GiB KV at the log's context, "
            f"{v['ctx']} tokens) on {v['card'] / GiB:.1f} GiB ({v['model']}, by `gpu-garden kv`: {v['need'] / GiB:.1f} GiB "
            f"in all, under {FIT_SHARE:.0%} of the {v['budget'] / GiB:.1f} GiB it may use); a regression of {who} is likely")


def over_card(x):
    """The weights alone, by the calculator, outgrow the card: vLLM loading a model its command or config names, in
    the precision it loads them in (--quantization's method as kv sizes it, else the checkpoint name's format, else
    half precision), all on one card (no tensor or pipeline parallelism, no --cpu-offload-gb, no data parallelism with
    expert parallelism in the log), failing before any line shows the load done. {"model", "weights", "card",
    "precision"} or None; computed once per failure (kept on its event)."""
    return _kept(x.ev, "_over_card", lambda: _over_card(x))


def _over_card(x):
    if x.env["runtime"] != "vllm" or not _at_load(x) or not x.total or x.impossible:
        return None
    f = _facts(x)
    name = _model(f, "vllm")
    w = f["vllm_wflags"]
    if not name or f["vllm_dtype"] not in HALF or x.f["vllm_tp"] > 1:
        return None
    if w.get("offload") or (w.get("ep") and w.get("dp", 1) > 1):
        return None          # weights kept in RAM, or the experts split over the data-parallel ranks: not all on this card
    from ..llm import kv as llm            # lazy: triage loads no LLM code at import
    spec = _once(x.f, ("describe", name), lambda: llm.describe(model=name))
    if spec is None or 2 * spec.params < 0.9 * x.total:
        return None                           # (2 bytes a parameter: far under the card, no plan asked)
    wdt, kept = vllm_quant.precision(f, name, spec, least=True)   # the load's precision (fix66g: in flight, 16-bit)
    if kept is False:
        return None                           # a method kv has no size for
    r = _load_weights(x, spec, name, wdt)
    if r is None or r["weights"] <= x.total:
        return None
    precision = (f"as {wdt} (--quantization {w['quant']})" if wdt else
                 f"in half precision (--quantization {w['quant']} converts them after loading)" if kept else
                 f"as {spec.quant} (the checkpoint's name)" if spec.quant else "in half precision")
    return {"model": spec.name, "weights": r["weights"], "card": x.total, "precision": precision}


def _load_weights(x, spec, name, wdt):
    """kv's plan of the weights alone in precision wdt on this card (its "weights"), computed once per scan."""
    from ..llm import kv as llm
    return _once(x.f, ("weights", name, wdt), lambda: llm.plan(spec, runtime="vllm", ctx=256, vram=x.total, weights_dtype=wdt))
