"""How bench_llm scores one measured row (score()): the plan kv makes from the row's input, each runtime's printed
figures against it, and the predicates that decide which comparison a row gets (its readings, its notes)."""
from dataclasses import replace
import re
from pathlib import Path

from llm_common import DRAFTERS, GiB, K, LC, MiB, OL, REPO, UserError, at_least, parse_version

# half a unit of the last digit each runtime prints
HALF = {"vllm": {"GiB": 0.005}, "llama.cpp": {"MiB": 0.005}, "ollama": {"MiB": 0.05, "GiB": 0.05},
        "sglang": {"GiB": 0.005}}
# llama.cpp's memory breakdown ("self N (model M + context C + compute X)") prints whole MiB by integer division,
# truncating: common_memory_breakdown_print (earlier llama_memory_breakdown_print) std::to_string(mb.context / MiB)
BREAKDOWN_CONTEXT = re.compile(r"\+ context (\d+) \+ compute")
# a kv_mib the notes give as the sum of several devices' breakdown 'context' columns, each truncated on its own
CONTEXT_COLUMNS = re.compile(r"kv_mib = the \w+ 'context' columns \((\d+(?: \+ \d+)+)\)")
# the breakdown's context column quoted as "self" memory (a host row "10054 = 5406 model + 4146 self + 501 compute",
# or a table of that column, "1074 MiB of KV self-memory"): whole MiB too, where the figure quoted is the row's kv_mib
BREAKDOWN_SELF = re.compile(r"(\d+) MiB of KV self-memory|(\d+) self \+ \d+ compute")
# a llama.cpp row whose weights_mib the notes give as a sum of model buffers (device + host), not the file's size
BUFFER_SUM = re.compile(r"weights_mib (?:= |is (?:their|the) sum)|weights_mib: .*MiB on .*\+")


# llama.cpp's fit step lowering a context the user did not give (its "context size reduced from N to M" line)
FIT_CTX_REDUCED = re.compile(r"context size reduced from (\d+) to (\d+)")
# an Ollama row quoting its llama runner's own allocation line (llama.cpp's llama_kv_cache print), not memory.required.kv
OLLAMA_RUNNER_KV = re.compile(r"llama_kv_cache(?:_unified)?: size = ")
# the same runner line as a collector quotes it: "runner: ... KV 11264.00 MiB (90112 cells, ...)" or "KV buffer size =
# 11264.00 MiB", the row's kv_mib being that figure (the runner's n_ctx, padded by llama.cpp, not the estimate's num_ctx);
# the line may be quoted as printed ("runner lines: ... 'Metal KV buffer size = 1728.00 MiB' (32768 cells, ...)")
OLLAMA_RUNNER_KV_QUOTED = re.compile(r"runner(?: lines)?: .*?KV (?:buffer (?:size = )?)?(\d+(?:\.\d+)?) MiB'? \(\d+ cells")


def rel_err(got, printed, zero_tol=1.0) -> float:
    """got / printed - 1; a printed 0 (llama.cpp's 'CUDA0 model buffer size = 0.00 MiB' with -ngl 0: only the compute
    buffer on the GPU) is exact when got is under zero_tol (in the unit of both: 1 for MiB, 1 / 1024 for GiB), else a
    100 % miss (no ratio to a zero exists). (rev8 D6) every ratio of the scorer goes through it."""
    if printed:
        return got / printed - 1
    return 0.0 if got < zero_tol else 1.0


def quotes_runner_kv(row) -> bool:
    notes = row.get("notes", ())
    if any(OLLAMA_RUNNER_KV.search(n) for n in notes):
        return True
    printed = row["measured"].get("kv_mib")
    return printed is not None and any(float(c) == printed for n in notes for c in OLLAMA_RUNNER_KV_QUOTED.findall(n))


# a llama.cpp KV figure that holds the recurrent state too: the memory breakdown's context column (quoted), a "self"
# memory figure; a "KV buffer size" line does not (llama_memory_recurrent prints its own "RS buffer size")
KV_WITH_STATE = re.compile(r"KV self size|self-memory")  # llama_kv_cache_init's line, a breakdown's self column


def breakdown_columns(row) -> int:
    """How many truncated memory-breakdown 'context' columns the row's llama.cpp kv_mib is: 1 for a quoted column, N
    for the sum of N devices' columns, 0 for a figure of another print."""
    printed = row["measured"].get("kv_mib")
    notes = row.get("notes", ())
    if any(int(c) == printed for n in notes for c in BREAKDOWN_CONTEXT.findall(n)):
        return 1
    if any(int(m.group(1) or m.group(2)) == printed for n in notes for m in BREAKDOWN_SELF.finditer(n)):
        return 1
    sums = [[int(c) for c in m.split(" + ")] for n in notes for m in CONTEXT_COLUMNS.findall(n)]
    return next((len(cs) for cs in sums if sum(cs) == printed), 0)


def kv_holds_state(row) -> bool:
    """Does the row's llama.cpp kv_mib include a hybrid model's recurrent state (Qwen 3.5+, Qwen3-Next, Mamba)?"""
    return bool(breakdown_columns(row)) or any(KV_WITH_STATE.search(n) for n in row.get("notes", ()))


def ollama_llama_server(row) -> bool:
    """An Ollama row of a release that starts llama.cpp's llama-server (0.30 on, runtimes/ollama.py llama_server): its
    runner lines are llama.cpp's, so a quoted "KV buffer size" is llama_kv_cache's (the attention layers' cells) and a
    hybrid model's recurrent state is its own "RS buffer size" line (llama_memory_recurrent, max(1, -np) sequences).
    Ollama's own 'kv cache' summary (ml/device.go BackendMemory.Log) is no longer called there (read at v0.32.14)."""
    ov = parse_version(row["version"], "ollama") if row["runtime"] == "ollama" and row.get("version") else None
    return ov is not None and OL.llama_server(ov) and not ollama_mlx(row)


# Ollama's MLX engine (x/mlxrunner: an -mlx or nvfp4 library tag on a Mac) runs no llama-server (rev4 B5)
OLLAMA_MLX = re.compile(r"\bMLX\b|[-:]mlx\b|nvfp4", re.I)


def ollama_mlx(row) -> bool:
    """An Ollama row its MLX engine ran: its gpu field, inferred lines or model tag say MLX (or name an nvfp4 tag)."""
    text = " ".join([str(row.get("gpu") or ""), str((row.get("input") or {}).get("model") or ""),
                     *(str(v) for v in (row.get("inferred") or {}).values())])
    return bool(OLLAMA_MLX.search(text))


def buffer_sum(row) -> bool:
    return "weights_mib" in row["measured"] and any(BUFFER_SUM.search(n) for n in row.get("notes", ()))


# an Ollama row whose KV figure sums the parts of its device.go 'kv cache' line, one a device, the CPU's among them
# ("'kv cache' ROCm0 34.8 MiB and CPU 494.9 MiB"): each part is printed by format.HumanBytes2 ("%.1f MiB" / "%.1f
# GiB", ollama/ollama format/bytes.go), rounded on its own, so their sum is within N half-units of the true total
OLLAMA_KV_PARTS = re.compile(r"'kv cache' ((?:device=)?\w+ [\d.]+ [MG]iB(?:(?: and | \+ )(?:device=)?\w+ [\d.]+ [MG]iB)+)")


def kv_parts(row, key, unit) -> int:
    """How many rounded figures an Ollama row's KV figure (key, in unit) sums: its 'kv cache' line's parts where their
    sum is the figure, else 1."""
    if row["runtime"] != "ollama":
        return 1
    for note in row.get("notes", ()):
        for m in OLLAMA_KV_PARTS.finditer(note):
            parts = re.findall(r"([\d.]+) ([MG]iB)", m.group(1))
            if all(u == unit for _, u in parts) and abs(sum(float(x) for x, _ in parts) - row["measured"][key]) < 1e-6:
                return len(parts)
    return 1


def kv_exact(row, key, pred, unit) -> bool:
    """The printed KV figure within its print's precision: half a unit of the last digit (N half-units for the sum of
    an Ollama 'kv cache' line's N parts, kv_parts), or, for llama.cpp's memory breakdown context column the row quotes,
    [C, C + 1) MiB (a true 397.5 MiB prints 397); for the sum of N devices' columns, each truncated, [S, S + N)."""
    printed = row["measured"][key]
    cols = breakdown_columns(row) if row["runtime"] == "llama.cpp" and unit == "MiB" and key == "kv_mib" else 0
    if cols:
        return printed - 1e-9 <= pred < printed + cols
    return abs(pred - printed) <= HALF[row["runtime"]][unit] * kv_parts(row, key, unit) + 1e-9


# a llama.cpp row whose vram_gib is the free memory llama.cpp itself read (its fit step, its device line): read with the
# runtime's own context in place (ggml-cuda.cu ggml_backend_cuda_device_get_memory: ggml_cuda_set_device, then
# cudaMemGetInfo), so the CUDA context kv counts on a card (runtimes/llamacpp.py CUDA_CONTEXT) is already out of it.
# That source is CUDA's (and HIP's, ggml-cuda built for ROCm): Metal's free figure is recommendedMaxWorkingSetSize less
# what Metal has allocated, Vulkan's the heap budget; neither holds a CUDA context, so their rows are not marked and keep
# vram as read. The 384 MiB is the plan's constant (CUDA_CONTEXT), not a figure measured on the row's card.
# Ollama from 0.30 starts llama-server, and a row whose vram_gib is that llama-server's own reading (its fit step's "vs.
# N MiB of free device memory") is the same figure; kv's --vram for Ollama is the free memory read before it starts
# (nvidia-smi's, Ollama's "free"), against which the plan charges llama-server's context.
# Such a row says so in its own field, "vram_reading": "llamacpp_free".

# an Ollama row whose vram_gib is the scheduler's 'gpu memory' line (server/sched.go, from 0.12.11: available = free -
# OLLAMA_GPU_OVERHEAD - MinimumMemory, 457 MiB on CUDA/ROCm), not the free memory the plan's --vram means: the plan
# takes the minimum off the free memory itself (runtimes/ollama.py RESERVE): its free memory is available + RESERVE.
# Before 0.12.11 the offload line's memory.available is the free memory as read; from 0.30 llama-server places the model
# Such a row says so in its own field, "vram_reading": "ollama_available" (the reading its notes describe).
GPU_MEMORY_LINE = ((0, 12, 11), (0, 30))
VRAM_READINGS = ("ollama_available", "llamacpp_free")


# a pipeline-parallel start refusal prints the memory its check was given: vLLM 0.12-0.16 (vllm_pipeline.PP_WHOLE_MODEL_CHECK)
# checked min(available_memory) over the workers against the whole model (v1/core/kv_cache_utils.get_kv_cache_configs);
# later builds check each worker's own memory against its own layers, and the refusal prints the first failing worker's.
# A nightly named by its date (parse_version None) keeps the check up to PR #33698 (February 2026): vllm#32105's January one
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
          "december")
PP_WHOLE_MODEL_CHECK_ENDS = (2026, 2)


def pp_min_check(version) -> bool:
    """(trfix2, rev1 B4) Whether a PP refusal of this vLLM version prints the smallest stage's memory."""
    from gpu_garden.memory.llm.runtimes.vllm_pipeline import PP_WHOLE_MODEL_CHECK as W
    v = parse_version(version, "vllm")
    if v is not None:
        return at_least(v, *W[0]) and not at_least(v, *W[1])
    m = re.search(r"\b(" + "|".join(MONTHS) + r") (\d{4})\b", str(version or "").lower())
    return bool(m) and (int(m.group(2)), MONTHS.index(m.group(1)) + 1) < PP_WHOLE_MODEL_CHECK_ENDS


def vram_reading(row):
    """The row's "vram_reading" field (None when absent), checked against the runtime and version it can come from."""
    reading = row.get("vram_reading")
    if reading is None:
        return None
    if reading not in VRAM_READINGS:
        raise ValueError(f"{row['id']}: vram_reading {reading!r} is none of {', '.join(VRAM_READINGS)}")
    v = parse_version(row["version"], "ollama") if row["runtime"] == "ollama" and row.get("version") else None
    if reading == "llamacpp_free":  # llama.cpp's own reading: a llama.cpp row, or Ollama's llama-server (0.30 on)
        if row["runtime"] != "llama.cpp" and (v is None or not at_least(v, *GPU_MEMORY_LINE[1])):
            raise ValueError(f"{row['id']}: vram_reading {reading!r} needs a llama.cpp row or an Ollama row of 0.30 or "
                             f"later (llama-server), not {row['runtime']} {row.get('version')}")
        return reading
    if v is None or not at_least(v, *GPU_MEMORY_LINE[0]) or at_least(v, *GPU_MEMORY_LINE[1]):
        raise ValueError(f"{row['id']}: vram_reading {reading!r} needs an Ollama row of 0.12.11-0.29 (its 'gpu memory' "
                         f"line), not {row['runtime']} {row.get('version')}")
    return reading


def free_reading(row) -> bool:
    return vram_reading(row) == "llamacpp_free"


def available_reading(row) -> bool:
    return vram_reading(row) == "ollama_available"


def total_line(row, spec) -> bool:
    """An Ollama row on one GPU whose log's "total memory" line is the llama runner's (runtimes/ollama.py LAYOUT_TOTAL:
    0.12.11-0.29, a model its own engine does not run): weights + cache + graph, the reserve and buffer left out."""
    return (row.get("version") is not None and (row["input"].get("num_gpus") or 1) == 1
            and OL.layout_total_line(parse_version(row["version"], "ollama"), spec))


def _plan(row):
    i = dict(row["input"])
    spec = K.describe(model=i.pop("model"))
    vram = row["vram_gib"] * GiB if row.get("vram_gib") else None
    if vram and free_reading(row):  # the card that leaves this much free once kv's context is on it
        vram += LC.CUDA_CONTEXT
    if vram and available_reading(row):  # the free memory whose 'gpu memory' line printed this much available
        vram += OL.RESERVE
    kv = i.pop("kv_dtype", None) or i.pop("kv_dtype_k", None)
    knobs = {k: v for k, v in i.items() if k not in ("ctx", "parallel", "weights_dtype")}
    knobs["runtime_version"] = row.get("version")
    sc = knobs.get("speculative_config")
    if isinstance(sc, dict) and isinstance(sc.get("model"), str) and not Path(sc["model"]).is_absolute():
        # a drafter's config.json stored with the data (benchmarks/data/drafters/<repo-name>/): the repo's path
        stored = REPO / sc["model"]
        if not stored.exists() and sc["model"].count("/") == 1:
            # a row that names the drafter by its Hub repo id (owner/name), as the run printed it: the folder of that
            # name under benchmarks/data/drafters/ when one is stored, else the repo id as given (kv reads the
            # published drafters of its table by repo id: runtimes/vllm_drafter.PUBLISHED)
            stored = DRAFTERS / sc["model"].split("/")[1]
            stored = stored if stored.exists() else sc["model"]
        knobs["speculative_config"] = dict(sc, model=str(stored))
    if row["runtime"] in ("sglang", "llama.cpp", "ollama") and "gpu_name" not in knobs and row.get("gpu"):
        # rows were collected without --gpu-name; their "gpu" names the card (SGLang's AWQ MoE path; llama.cpp's Metal:
        # no op offload, a mapped file span: runtimes/llamacpp.py; Ollama's Metal: no partial-offload graph,
        # runtimes/ollama.py)
        knobs["gpu_name"] = row["gpu"]
    res = K.plan(spec, runtime=row["runtime"], ctx=i["ctx"], parallel=i.get("parallel", 1), kv_dtype=kv,
                 weights_dtype=i.get("weights_dtype"), vram=vram, **knobs)
    return spec, res


def _at_printed_layers(row, res):
    """The plan at the layer count the runtime printed ("offloaded N/M layers"), for a row whose runtime lowered it
    itself (llama.cpp's --fit, Ollama's llama-server; no -ngl in the input) where the plan as requested puts every layer
    on the GPU: its model buffer on the GPU is then compared like for like (-ngl N); the verdict is scored apart."""
    m, i = row["measured"], row["input"]
    n, of = m.get("layers_on_gpu"), m.get("layers_model")
    # every layer on the GPU: the placed buffer is the full one but for the bytes the runtimes' float sums round off
    # (llama.cpp's int(blocks x on / L) + output: 2016206358 against 2016206359 for the 131k Vulkan row of batch 46)
    all_on = abs((res.get("gpu_weights") or 0) - (res.get("weights_gpu_full") or 0)) < 64
    if n is None or of is None or n >= of or "ngl" in i or not all_on:
        return res
    return _plan(dict(row, input=dict(i, ngl=n)))[1]


def _capacity(res):
    """vLLM KV memory (bytes) after everything inside the --gpu-memory-utilization share."""
    if "kv_capacity_bytes" in res:
        return res["kv_capacity_bytes"]
    inside = {k: v for k, v in res["overhead"].items() if k != "cuda_context"}  # the model before the fix
    return res["budget"] - res["weights"] - sum(inside.values())


def fit_lowered_ctx(row) -> bool:
    """A llama.cpp row run without -c whose fit step lowered the model's context, the row's ctx ("context size reduced
    from N to M" in its notes, N the input's ctx): its buffers are those of M cells, which kv picks itself when the
    context is not given (plan.py _llamacpp_fit_ctx); its "fit" verdict stays the one at N."""
    ctx = row["input"].get("ctx")
    return row["runtime"] == "llama.cpp" and any(int(m.group(1)) == ctx for n in row.get("notes", ())
                                                 for m in FIT_CTX_REDUCED.finditer(n))


def score(row) -> dict:
    m, rt = row["measured"], row["runtime"]
    out = {"id": row["id"], "runtime": rt, "url": row["url"]}
    try:
        spec, res = _plan(row)
        # the cache as allocated: at the context the fit step chose, -c not given (the verdict stays at the row's ctx)
        res_kv = _plan(dict(row, input=dict(row["input"], ctx=None)))[1] if fit_lowered_ctx(row) else res
    except (UserError, TypeError, KeyError) as exc:
        # repo-relative: a drafter's stored path would otherwise put this checkout's folder into the results
        out["error"] = f"{type(exc).__name__}: {exc}".replace(f"{REPO}/", "")
        return out
    # an Unsloth Dynamic name without the file: the weights are a range (memory/llm/unsloth.py), not scored; the
    # rows carry no file size among their inputs, so they score the KV cache (and a verdict both ends agree on)
    rng = res.get("weights_range")
    if ("weights_gib" in m or "weights_mib" in m) and not rng:
        # vLLM "model weights take" = the whole checkpoint; Ollama memory.weights.total as that version's log
        # defines it (plan's ollama_weights_total: blocks + KV before 0.6, blocks + output tensor from 0.6);
        # llama.cpp "model size" / its model buffers = every tensor of the file
        # (Ollama >= 0.30 prints no memory.weights.total: its figures are llama-server's, as llama.cpp's below)
        w = res.get("ollama_weights_total", res["weights"]) if rt == "ollama" and not ollama_llama_server(row) \
            else res["weights"]
        # Ollama's llama runner (before 0.30, a model its own engine does not run: measured_layout false) is
        # llama.cpp's loader too, and its log prints the same model buffers (CPU_Mapped + Metal_Mapped / CUDA0)
        ov = parse_version(row["version"], "ollama") if rt == "ollama" and row.get("version") is not None else None
        server = rt == "llama.cpp" or (ov is not None and (OL.llama_server(ov) or not OL.measured_layout(ov, spec)))
        if server and buffer_sum(row) and "gpu_weights" in res and "host_weights" in res:
            # the device and host model buffers, not the file (llama.cpp's, or Ollama >= 0.30's llama-server's): a tied
            # token table is loaded twice, token_embd on the host for the input lookup and a TENSOR_DUPLICATED copy as
            # the output in the output layer's buffer type (llama-model.cpp create_tensor: a new tensor unless that
            # buffer type's context already holds it), which the plan places on the device; on the CPU alone that
            # copy goes to CPU_REPACK where the output's type has a repack layout there (the Android row of batch 50:
            # CPU 266 MiB + CPU_REPACK 1252 MiB for Llama 3.2 1B Q8_0), so the sum is again file + token table
            w = res["gpu_weights"] + res["host_weights"]
        printed = m["weights_gib"] if "weights_gib" in m else m["weights_mib"] / 1024
        out["weights_gib"] = (round(w / GiB, 3), round(printed, 4))
        out["weights_err"] = rel_err(w / GiB, printed, zero_tol=1 / 1024)
    if "weights_gpu_mib" in m and "host_weights" in res and not rng:  # llama.cpp's CUDA model buffer with -ngl layers on the GPU
        # the model buffers on the GPU as the plan places them: a tied output (the token table) is loaded a second
        # time there when the output layer is offloaded, so the file size less the host part would miss it
        placed = _at_printed_layers(row, res)
        g = placed.get("gpu_weights", placed["weights"] - placed["host_weights"]) / MiB
        out["weights_gpu_mib"] = (round(g, 2), m["weights_gpu_mib"])
        out["weights_err"] = rel_err(g, m["weights_gpu_mib"], zero_tol=1.0)
    # KV buffer as printed
    for key, unit in (("kv_mib", "MiB"), ("kv_gib", "GiB"), ("kv_mib_device", "MiB")):
        # a device's buffer needs the layers the runtime put there; a row without them is not scored on it
        if key in m and (key != "kv_mib_device" or "layers_on_device" in m):
            if res_kv is not res:
                out["ctx_fit"] = res_kv["ctx"]  # the context kv's fit step chose (the log's "reduced ... to M")
            pred = res_kv["kv_total"]
            if (rt == "llama.cpp" or ollama_llama_server(row)) and key == "kv_mib" and not kv_holds_state(row):
                pred -= res_kv["kv_detail"].get("recurrent_state", 0)  # the KV buffer line alone
                # a DSA model's indexer cache prints its own size and KV buffer lines after the main (MLA) cache's,
                # which a "KV buffer size" figure is; the memory breakdown's context column holds both
                pred -= res_kv["kv_detail"].get("indexer", 0)
            if rt == "llama.cpp" and key == "kv_mib" and "layers_model" in m and m.get("layers_on_gpu") == m["layers_model"]:
                # (rev7 B5) a row quoting the "KV buffer size" line of a GPU holding every layer (batch 100's rows,
                # #258: 1166.65 / 1166.62) reads the plan's own figure of that line, kv_buffer: the cache plus the CUDA
                # buffer's padded rows of a quantized cache (ik_llama.cpp's 2-D K / MLA latent; runtimes/llamacpp.py
                # kv_buffer_pad). Rows quoting "KV self size" (ik#370's two GPUs) or a CPU buffer (ik#344) have no pad
                pred += res_kv.get("kv_buffer", res_kv["kv_total"]) - res_kv["kv_total"]
            if (rt == "ollama" and key == "kv_mib" and "ollama_kv_allocated" in res
                    and quotes_runner_kv(row)):
                # the runner's allocation at the cache type's block size (its MiB line; the estimate's "kv cache"
                # line, kv_gib, keeps the estimate)
                pred = res["ollama_kv_allocated"]
            elif rt == "ollama" and key != "kv_mib_device":
                # Ollama's recurrent cache allocates its state checkpoints itself: its "kv cache" line holds them
                pred += res["overhead"].get("state_checkpoints", 0)
            if key == "kv_mib_device" and res_kv.get("devices") and "device" in m:
                # llama.cpp's own placement over the GPUs (--tensor-split): the device's layers and their cache
                dev = res_kv["devices"][m["device"]]
                out["device_layers"] = (dev["layers"], m["layers_on_device"])
                out["device_layers_exact"] = dev["layers"] == m["layers_on_device"]
                pred = dev["kv"]
            elif key == "kv_mib_device":
                # a device's KV buffer: its layers' cache plus the CUDA buffer's row padding of a quantized cache
                per = res_kv.get("kv_per_layer", {})
                pred = per.get("device_buffer") or per.get("full") or res_kv["kv_total"] / spec.n_layers
                pred *= m["layers_on_device"]
            pred /= (MiB if unit == "MiB" else GiB)
            exact = kv_exact(row, key, pred, unit)
            if "kv" in out:  # a row printing the total and one device's share: both must agree
                out["kv_device"] = (round(pred, 3), m[key], unit)
                out["kv_exact"] = out["kv_exact"] and exact
                continue
            out["kv"] = (round(pred, 3), m[key], unit)
            out["kv_exact"] = exact
            out["kv_err"] = rel_err(pred, m[key], zero_tol=1.0 if unit == "MiB" else 1 / 1024)
    if rt == "llama.cpp" and "compute_mib" in m and not res.get("devices"):
        # one GPU's "compute buffer size" line (a layer split prints one per device); not yet a fitted term: the figure
        # shows how far the plan's reserve is from what the build printed. Like the model buffer, at the layer count
        # the runtime printed where it placed the layers itself (_at_printed_layers): the reserve is of that placement
        c = _at_printed_layers(row, res)["overhead"].get("compute_buffer", 0) / MiB
        out["compute_mib"] = (round(c, 1), m["compute_mib"])
        # (rev9 D8) a printed 0 is shown, not scored: rel_err's zero branch is never reached here nor at kv_tokens
        # (fix9 D6's message said these two sites "no longer raise"; they never could). No row prints a 0 compute
        # buffer
        if m["compute_mib"]:
            out["compute_err"] = rel_err(c, m["compute_mib"], zero_tol=1.0)
    if "output_mib" in m or "output_gib" in m:  # the output tensor alone (Ollama memory.weights.nonrepeating)
        o = res["weights_by_role"]["output"] / MiB if "weights_by_role" in res else None
        if o is not None:
            printed = m["output_mib"] if "output_mib" in m else m["output_gib"] * 1024
            out["output_mib"] = (round(o, 1), printed)
            out["output_err"] = rel_err(o, printed, zero_tol=1.0)
    if "projector_weights_mib" in m and res.get("projector"):
        pw = res["projector"]["weights"] / MiB
        out["projector_mib"] = (round(pw, 1), m["projector_weights_mib"])
        out["projector_err"] = rel_err(pw, m["projector_weights_mib"], zero_tol=1.0)
        if "projector_graph_gib" in m:  # llama.cpp prints the projector's weights, not a graph of its own
            out["projector_graph_gib"] = (round(res["projector"]["graph"] / GiB, 2), m["projector_graph_gib"])
    printed_full = m.get("required_full_gib")
    if printed_full is None and rt == "ollama" and "total_memory_gib" in m and total_line(row, spec):
        printed_full = m["total_memory_gib"]  # the llama runner's "total memory" line, required.full's successor
    if printed_full is not None and rt == "ollama":
        # the figure of the line the log prints: 'total memory' (0.12.11-0.29, one GPU) or memory.required.full
        full = res["ollama_total_memory"] if total_line(row, spec) else res.get("ollama_required_full", res["total"])
        out["required_full_gib"] = (round(full / GiB, 2), printed_full)
        # one GPU whose free memory is known: Ollama's own placement is reproducible; over several GPUs the per-GPU
        # terms (reserve, layer buffer, partial graph) do not depend on the placement
        if row.get("vram_gib") or (row["input"].get("num_gpus") or 1) > 1:
            out["required_full_err"] = rel_err(full / GiB, printed_full, zero_tol=1 / 1024)
    if rt == "vllm":
        kvd = res["kv_dtype"]  # the cache type the row asked for (--kv-cache-dtype fp8 halves the bytes per token)
        lay = res["kv_detail"].get("layout", "latent")  # the version's MLA cache layout (runtimes/vllm_mla.py mla_layout)
        hyb = res["kv_detail"].get("hybrid_groups", True)  # the hybrid manager's layer groups (vLLM >= 0.10)
        spec = K.vllm_per_rank(spec, row["input"].get("tensor_parallel_size") or 1)  # one GPU's pool and heads
        if res["kv_detail"].get("mamba_cache_all"):  # prefix caching's "all" mode (runtimes/vllm_hybrid.py)
            spec = replace(spec, mamba_cache_all=True)
        # pipeline parallelism: rank 0 prints its own available memory, the engine the smallest stage's tokens, so
        # the printed memory does not give the printed tokens by block arithmetic; kv's tokens are its stages' minimum
        pp = (row["input"].get("pipeline_parallel_size") or 1) > 1
        if "kv_available_gib" in m and not pp:  # tokens from the printed available memory: block arithmetic alone
            # the hybrid manager's pool arithmetic also needs the request (cache.vllm_pool: ctx, batch, state pages)
            pool = dict(res["kv_detail"].get("pool_args") or {}, ctx=row["input"]["ctx"])
            pool.pop("mla_cache", None), pool.pop("hybrid", None)
            toks = K.vllm_kv_tokens(spec, max(m["kv_available_gib"], 0) * GiB, kvd, lay, hyb, **pool)
            # vLLM prints the available memory rounded to 0.01 GiB: the tokens agree within that rounding
            lo = K.vllm_kv_tokens(spec, max(m["kv_available_gib"] - 0.005, 0) * GiB, kvd, lay, hyb, **pool)
            hi = K.vllm_kv_tokens(spec, max(m["kv_available_gib"] + 0.005, 0) * GiB, kvd, lay, hyb, **pool)
            # a refusal prints no token count but vLLM's own "estimated maximum model length" from the same memory
            printed = m["kv_tokens"] if "kv_tokens" in m else m.get("estimated_max_len")
            if "kv_tokens" in row.get("inferred", {}):  # tokens derived from the memory line: nothing to check
                printed = None
            if "kv_tokens" not in m and printed is not None:
                # a refusal's estimate under the hybrid manager is not the pool's tokens: vLLM's binary search over the
                # layers' own max_memory_usage_bytes (vllm_max_len.vllm_estimated_max_len; batches 88-89, after first sight)
                est = [K.vllm_estimated_max_len(spec, max(a, 0) * GiB, kvd, mla_cache=lay, hybrid=hyb, **pool)
                       for a in (m["kv_available_gib"] + d for d in (0, -0.005, 0.005))]
                if est[0] is not None:
                    toks, lo, hi = est
            if printed is not None:
                out["tokens_from_printed"] = (toks, printed)
                out["tokens_from_printed_exact"] = lo <= printed <= hi
        if row.get("vram_gib"):
            cap = _capacity(res)
            if pp and res.get("pp_stages") and "estimated_max_len" in m and pp_min_check(row.get("version")):
                # a start refusal of the versions whose check took min(available_memory) over the workers (pp_min_check):
                # the smallest stage's memory, not rank 0's (kv-accuracy round 83)
                cap = min(st["pool"] for st in res["pp_stages"])
            toks = res["kv_capacity_tokens"]  # the plan's own count (pipeline parallelism: the smallest stage's)
            if "kv_available_gib" in m:  # a run that failed before profiling prints none of these
                out["kv_available_gib"] = (round(cap / GiB, 3), m["kv_available_gib"])
                out["kv_available_err_gib"] = cap / GiB - m["kv_available_gib"]
            if "kv_tokens" in m:
                out["kv_tokens"] = (toks, m["kv_tokens"])
                # (rev9 D8) a printed 0 tokens is a failed start (negative available memory: vllm-13882-qwen25-7b-4060,
                # vllm-llmd-llama33-70b-fp8-h100), scored by "fits": not counted as an exact token figure as well
                if m["kv_tokens"]:
                    out["kv_tokens_err"] = rel_err(toks, m["kv_tokens"], zero_tol=1)
            if "concurrency" in m:
                conc = res.get("concurrency", toks / row["input"]["ctx"])
                out["concurrency"] = (round(conc, 2), m["concurrency"])
            if "started" in m:  # a log cut before the outcome records none: no verdict to compare
                out["fits"] = (bool(res["fits_as_requested"]), m["started"])
    elif rt == "sglang":
        if "kv_k_gib" in m and "kv_tokens" in m:  # "K size: X GB" for the printed #tokens: the pool's bytes per token
            k = res["kv_per_token"] / 2 * m["kv_tokens"] / GiB
            out["kv"] = (round(k, 3), m["kv_k_gib"], "GiB")
            out["kv_exact"] = abs(k - m["kv_k_gib"]) <= HALF[rt]["GiB"] + 1e-9
            out["kv_err"] = rel_err(k, m["kv_k_gib"], zero_tol=1 / 1024)
        if row.get("vram_gib") and "kv_tokens" in m:  # max_total_num_tokens from the card
            toks = res["sglang_max_total_tokens"]
            out["sglang_tokens"] = (toks, m["kv_tokens"])
            out["sglang_tokens_err"] = rel_err(toks, m["kv_tokens"], zero_tol=1)
        if row.get("vram_gib") and "started" in m:
            out["fits"] = (bool(res["fits_as_requested"]), m["started"])
    elif row.get("vram_gib") and rt == "llama.cpp" and (user_partial_ngl(row, spec) or fit_aborted_on_ngl(row)):
        # llama.cpp does not fit around a user's -ngl ("n_gpu_layers already set by user to N, abort"): the run at
        # that -ngl started or not (its outcome), and "fit" says whether every layer would go to the GPU (a partial
        # -ngl only: at every layer the row's "fit" is the aborted fit step's margin verdict, not a placement)
        if "started" in m and not tensor_override(row):
            out["fits"] = (bool(res["fits_as_requested"]), m["started"])
        if "fit" in m and user_partial_ngl(row, spec):
            whole = _plan(dict(row, input=dict(row["input"], ngl="all")))[1]
            if not (rng and whole["fits_as_requested"] is None):
                out["fits_whole"] = (bool(whole["fits_as_requested"]), m["fit"])
                out["fits_whole_agree"] = out["fits_whole"][0] == out["fits_whole"][1]
    elif row.get("vram_gib") and "fit" in m:
        out["fits"] = (bool(res["fits_as_requested"]), m["fit"])
    if "fits" in out and rng and res["fits_as_requested"] is None:  # "depends on the file": no verdict to compare
        out["fits_depends"] = out.pop("fits")[1]
    if "fits" in out:
        out["fits_agree"] = out["fits"][0] == out["fits"][1]
    return out


# a llama.cpp run placed with a tensor override the input cannot express (-ot / --override-tensor, --n-cpu-moe)
TENSOR_OVERRIDE = re.compile(r"(?<![\w-])(?:-ot|--override-tensor|--n-cpu-moe|-ncmoe|--cpu-moe|-cmoe)(?![\w-])")


def user_partial_ngl(row, spec) -> bool:
    """A llama.cpp row whose input sets -ngl to fewer layers than the model's (repeating + output): the user's
    placement, which llama.cpp keeps (its fitter aborts on a user-set n_gpu_layers)."""
    n = row["input"].get("ngl")
    return isinstance(n, int) and not isinstance(n, bool) and 0 <= n < spec.n_layers + 1


# llama.cpp's fit step refusing to touch a user's -ngl (common_fit_params: "failed to fit params to free device memory:
# n_gpu_layers already set by user to N, abort", thrown before it places a layer); common_init_result ignores the fit
# status and loads the model with the user's parameters, so the run's outcome is "started" (round 50: ggml-org's
# common/fit.cpp and common/common.cpp as the anyei/llamacpp-v100 fork carries them)
FIT_ABORT_NGL = re.compile(r"n_gpu_layers already set by user to -?\d+, abort")


def fit_aborted_on_ngl(row) -> bool:
    """A llama.cpp row with -ngl in its input whose notes quote the fit step's abort on it: the projection it printed
    against its free-memory margin is a log line, not the outcome (every layer went where -ngl put them)."""
    return (row.get("runtime") == "llama.cpp" and row["input"].get("ngl") is not None
            and any(FIT_ABORT_NGL.search(n) for n in row.get("notes", ())))


# an input with n_cpu_moe expresses --n-cpu-moe / --cpu-moe itself (kv's option): only -ot is then left unexpressed;
# one with override_tensor expresses -ot (kv's option, the routed experts of the blocks its pattern names): only
# --n-cpu-moe / --cpu-moe are then left unexpressed
OVERRIDE_TENSOR = re.compile(r"(?<![\w-])(?:-ot|--override-tensor)(?![\w-])")
CPU_MOE = re.compile(r"(?<![\w-])(?:--n-cpu-moe|-ncmoe|--cpu-moe|-cmoe)(?![\w-])")


def tensor_override(row) -> bool:
    i = row.get("input", {})
    pattern = (CPU_MOE if i.get("override_tensor") else OVERRIDE_TENSOR if i.get("n_cpu_moe") is not None
               else TENSOR_OVERRIDE)
    return any(pattern.search(t) for t in [*row.get("notes", ()), *map(str, row.get("inferred", {}).values())])
