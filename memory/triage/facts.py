"""What each recognised context line tells the scanner: one handler per fact pattern of parse.FACTS.

The handlers fill `scan.facts` (startup facts: device, allocator, platform votes, vLLM and llama.cpp
numbers) and the scanner's running state (models loaded in this run, sampling progress, the failing
node, traceback frames). `new_facts()` is the empty record. The rules table (rules.py) reads the result.
"""
import collections
import re

from . import aimdo_abort, bfc_backpedal, block_swap, comfy_devices, extra_facts, parse as P, smi_procs, wrapper_runs
from . import lines as L
from ..units import MiB, num, parse_size
from .text import attempt
from .comfy_launch import seen as seen_install
from .vllm_command import seen as seen_batched
from .vllm_short_q import before as q_before, quants as short_quants
from . import vllm_run as VRUN
from . import vllm_args_list, vllm_launch
from .chain_links import chained_how as _chained_how
from .facts_ollama import _ollama_env, _ollama_evict, _ollama_full, _ollama_marker
from .facts_tf import _tf_device_mem, bfc_stats_after  # noqa: F401  (bfc_stats_after: read as facts.bfc_stats_after)
from .runtime_around import runtime_around

# facts that belong to the line stream itself; the window read back before a failure must not replay them
# facts about the load in hand kept with their lines (fact_line: name -> [(line, value)]): should_fit.py reads, for
# each failure, the last value before it and after the failure before it; a model named after a failure is the next load
PLACED = ("llm_model", "gguf_meta", "runtime_version", "vllm_wflags")   # (fix66g) vllm_wflags: a run's --quantization
PLACED_KEPT = 256         # values kept of each, with their lines (older failures read none)
STREAM_ONLY = {"prompt_done", "exception_block", "frame", "frame_ipy", "frame_ipy7", "frame_rich", "source_arrow", "requested_load", "progress", "progress_done", "decode_phase"}
_GGML_FLAG = {"--ubatch-size": "ub", "--ctx-size": "c", "--batch-size": "b", "--n-gpu-layers": "ngl", "--parallel": "parallel", "-np": "parallel"}
_FA = {"on": "on", "1": "on", "true": "on", "enabled": "on", "off": "off", "0": "off", "false": "off", "disabled": "off",
       "auto": "auto"}
_GGML_ARGS_RE = dict(L.FACTS)["ggml_args"]


def new_facts() -> dict:
    return {"os_votes": collections.Counter(), "args": set(), "device": None, "allocator": None, "torch_version": None,
            "total_vram": None, "vram_state": None, "rocm": False, "vllm_rocm_on": False, "cuda_device": False, "dynamic_vram": False, "compiler": None, "vllm": False, "ggml": False, "ollama": False,
            "vllm_kv_mem": None, "vllm_kv_tokens": None, "vllm_model_mem": None, "vllm_util": None, "vllm_maxlen": None, "vllm_util_at": {}, "vllm_total_at": {}, "vllm_maxlen_at": {}, "vllm_kv_dtype": None, "vllm_dtype": None, "vllm_tp": 1, "vllm_wflags": {}, "vllm_own": {},
            "ggml_n_ctx": None, "ggml_n_seq_max": None, "ggml_ctx_per_seq": None, "ggml_offloaded": None, "ggml_device_free": None, "ggml_devices": {}, "ggml_fa": None, "ggml_bufs": collections.OrderedDict(),
            "ollama_env": {}, "comfy": False, "ggml_args": {}, "ggml_spec_mtp": False, "ggml_spec_cpu_sampling": False, "graph_capture": False, "own_pool": False, "pinned_host": None, "block_swap": {},
            "ollama_available": None, "ollama_gpus": None, "ollama_required": None, "ollama_kv": None, "ollama_layers": None, "ollama_requested": None, "ggml_cuda_fn": None, "ggml_sycl_fn": None, "mem_query_oom": {}, "stage_said": {}, "trt_kv_sizing": {}, "vk_pinned_device": False, "ggml_vk_names": False, "ollama_evict": [], "ollama_slog_common": frozenset(), "ggml_load_start": {}, "ggml_header": {},
            "vllm_serving": False, "vllm_worker_rpc": False, "training_log": None, "forge": False, "comfy_node": False, "runtime_marker": None, "load_failed": None,
            "sdcpp_part": None, "ggml_pool_req": None, "tf_device_mem": {}, "tf_mem_lines": {}, "bfc_stats": {}, "bfc_fail_lines": {}, "conv3d_workaround": False, "tf_own": False, "jax_own": False, "monai_gpu_free": {}, "trt_tactic_skip": {}, "fsdp_clone": {}, "cpu_fallback": False, "yolox_occupy": False, "mlx_prompt_cache": None, "nvml_init": None, "gpu_fault": None,
            "runtime_version": {}, "llm_model": None, "gguf_type": None, "gguf_params": None, "gguf_size": None, "ollama_total": None,
            "vllm_transformers": False, "fact_line": {}, "nunchaku_gpus": {}, "mmgp_pin": {}, "runtime_named": None, "ggml_sycl_line": None,
            "cudarc": False, "rknpu_no_iommu": False, "bg_worker_exception": False, "comfy_mm": False, "pinned_src": None, "aimdo_file_read": None, "vllm_layer_at": {},
            "cuda_query_total": {}, "smi_apps": {}, "ggml_fattn": {}, "igpu_named": False}


def apply(scan, lineno, text, window=False):
    """Apply every fact the line states. `window`: the line is read back from before a failure."""
    for name, m in L.facts(text):
        if window and name in STREAM_ONLY:
            if name in WINDOW_SIDE:
                attempt(WINDOW_SIDE[name], scan.facts, m)
            continue
        attempt(HANDLERS[name], scan, scan.facts, m, text, lineno, window)   # a figure that is no number: no fact
        if name in PLACED and (not window or name == "vllm_wflags"):
            f = scan.facts          # (fix66g) a run's flags read back from the window: placed just before the failure
            hist = f["fact_line"].setdefault(name, collections.deque(maxlen=PLACED_KEPT))
            at = getattr(scan, "_lineno", 1) - 1 if window else lineno
            if not hist or at >= hist[-1][0]:
                hist.append((at, f["llm_model"] if name == "llm_model" else dict(f[name])
                             if name in ("runtime_version", "vllm_wflags") else (f["gguf_type"], f["gguf_params"], f["gguf_size"])))
    if window:
        return
    if "Traceback (most recent call last)" in text and scan.cur is None:
        scan.pending_frames.clear()
        scan.pending_src.clear()
    elif "Traceback (most recent call last)" in text:
        # (rev8 D9, rev10 S1) a chained traceback in an open failure: where it begins in the failure's frames (by incident), (rev11
        # S1, rev12 B1) its link to the one before and whether that one closed on an OOM line; (rev12 S1) the first MAX_FRAMES
        tf, th = (scan.facts.setdefault(k, {}).setdefault(scan.cur.index, []) for k in ("trace_from", "trace_how"))
        if len(tf) < scan.MAX_FRAMES:
            tf.append(len(scan.cur.frames))
            th.append(_chained_how(scan))
    if "retrying without pipeline parallelism" in text and scan.cur is not None:
        scan.cur.hints.append(("recovered", "llama.cpp retried without pipeline parallelism"))


LINE_KEPT = 16     # a fact kept by line (stage_said, trt_kv_sizing, trt_tactic_skip, fsdp_clone, ggml_header, ggml_load_start): the last this many; a failure reads those since the one before


# where a line stands in a Rust error chain as anyhow prints it: "Error: <top context>", then a blank line, "Caused by:" and
# the causes, one a line, numbered "    0: ..." when there are two or more (unnumbered when one)
_CHAIN_ENTRY = re.compile(r"\s{0,16}(\d{1,3}): ")


def chain_place(text):
    """"top" for anyhow's "Error: ..." line, the cause's number for a numbered "Caused by:" entry, else None."""
    t = text.lstrip()
    if t.startswith("Error: "):
        return "top"
    m = _CHAIN_ENTRY.match(text)
    return int(m.group(1)) if m else None


def _kept(d, lineno, value, keep=LINE_KEPT):
    d[lineno] = value
    while len(d) > keep:
        del d[next(iter(d))]


SMI_ROWS_KEPT = 256     # (rev8 S1, related) compute-apps headers and rows kept: a table of more than LINE_KEPT rows keeps its header


def _smi_apps(s, d, lineno, m, window):
    """(rev6 S2) nvidia-smi's compute-apps header, and a row only on the line right after the header or a kept row (the
    table processes.smi_apps_after reads): a polled "--query-gpu=index,name,memory.used --format=csv,noheader" line
    ("0, NVIDIA A100, 40000 MiB") elsewhere is no row of it and no longer pushes the header out of the last LINE_KEPT.
    (rev6 S1) The rows are read here, from the lines right after the header in the scanner's block (scan._src), not through
    a " MiB" anchor that made every such line of the head and of an open incident a scanned line; a table cut at a chunk's
    end keeps the rows before the cut."""
    if not m.group("head"):
        return
    _kept(d, lineno, "head", SMI_ROWS_KEPT)
    block, start = s._src if s._src and not window else (b"", 0)
    pos = block.find(b"\n", start) if block else -1     # the header line's end
    for k in range(1, SMI_ROWS_KEPT):
        if pos < 0:
            break
        end = block.find(b"\n", pos + 1)
        row = m.re.search(P.clean(block[pos + 1:min(end if end >= 0 else len(block), pos + 4097)]))
        if not row or not row.group("pid") or not smi_process_row(row.group("pid"), row.group("name")):
            break
        _kept(d, lineno + k, int(row.group("mib")) * MiB, SMI_ROWS_KEPT)
        pos = end


# (rev8 S1) the header's columns are pid, process_name, used_gpu_memory: a row of that shape has a process id (no process
# is 0) and a process's path or executable where nvidia-smi's --query-gpu=index,name,memory.used (noheader) has the GPU's
# index and product name ("0, NVIDIA A100-SXM4-40GB, 40000 MiB"), which ends the table it follows
SMI_PRODUCT = re.compile(r"(?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b")   # matched at the field's start


def smi_process_row(pid: str, name: str) -> bool:
    return int(pid) > 0 and not SMI_PRODUCT.match(name.lstrip())


def _comfy_frame(f, m):
    p = m.group(1).replace("\\", "/")
    if "/comfy/" in p or "execution.py" in p or "ComfyUI" in p:
        f["comfy"] = True


# what a stream-only line read back from a window still says about the log (idempotent)
WINDOW_SIDE = {"frame": _comfy_frame, "frame_ipy": _comfy_frame, "frame_rich": _comfy_frame, "exception_block": lambda f, m: f.__setitem__("comfy", True)}


# --- ComfyUI -------------------------------------------------------------------------------------

def _device(s, f, m, text, lineno, window):
    f["device"] = m.group(2).strip()
    f["comfy"] = True
    if m.group(3):
        f["allocator"] = "cudaMallocAsync" if m.group(3) == "cudaMallocAsync" else "native"
    if m.group(1) == "mps":
        f["os_votes"]["darwin"] += 5


def _total_vram(s, f, m, text, lineno, window):
    f["total_vram"] = int(m.group(1)) * MiB
    f["total_ram"] = int(m.group(2)) * MiB       # (aud67b #8) the same line's host RAM: comfy_numbers.py
    _kept(f.setdefault("comfy_startup_at", {}), s._lineno - 0.5 if window else lineno, (f["total_vram"], f["total_ram"]))  # rev67d F2
    f["comfy"] = True


def _nunchaku_gpu(s, f, m, text, lineno, window):
    f["nunchaku_gpus"][int(m.group(1))] = round(float(m.group(2)) * MiB)      # the card's total_memory, by device id


def _mmgp_pin(s, f, m, text, lineno, window):
    if m.group(1):      # pinning planned past what is reservable: the need and what is left, in MiB
        f["mmgp_pin"].update(required=round(float(m.group(1)) * MiB), available=round(float(m.group(2)) * MiB))
    else:               # pinning a block threw: what this model had pinned by then
        f["mmgp_pin"]["limit"] = round(float(m.group(3)) * MiB)


def _torch_version(s, f, m, text, lineno, window):
    f["torch_version"] = m.group(1)
    if "rocm" in m.group(1):
        f["rocm"] = True


def _requested_load(s, f, m, text, lineno, window):
    s.loads.append(m.group(1))
    s.progress_done = False
    s.phase = ("load", m.group(1))
    f["comfy"] = True
    if s.cur is not None:
        s.cur.hints.append(("late_load", m.group(1)))


def _node_type(s, f, m, text, lineno, window):
    s.node_type = m.group(1) or m.group(2) or m.group(3) or m.group(4) or m.group(5)
    # ComfyUI's words for a failing node (env.guess_runtime), kept apart from "comfy"; a bare CamelCase line ("...Loader",
    # "DataLoader") is any program's word, named ComfyUI's only beside ComfyUI's own lines (those name the runtime themselves)
    if not m.group(4):
        f["comfy_node"] = True
    s.node_type_line = s._lineno if window else lineno
    if s.cur is not None:
        s.cur.node_type = s.node_type


def _exception_block(s, f, m, text, lineno, window):
    f["comfy"] = True
    if s.cur is not None and s.cur.has_exception_block:
        s._close()
    s.pending_frames.clear()
    s.pending_src.clear()
    s.exception_pending = True


def _args(s, f, m, text, lineno, window):
    f["args"].add(m.group(1).split("=")[0].split(" ")[0] if m.group(1).startswith("--reserve") else m.group(1))


def _frame(s, f, m, text, lineno, window):
    fr = (m.group(1), m.group(2))
    s.want_source = True              # Python prints the frame's source line next (read by the scanner)
    if s.cur is not None:
        if len(s.cur.frames) < s.MAX_FRAMES:
            s.cur.frames.append(fr)
    else:
        s.pending_frames.append(fr)
    _comfy_frame(f, m)


def _frame_only(s, f, m, text, lineno, window):
    """Notebook and rich frames: their source line is the one marked with an arrow (_source_arrow)."""
    _frame(s, f, m, text, lineno, window)
    s.want_source = False


def _source_arrow(s, f, m, text, lineno, window):
    """The source line a notebook or rich traceback marks (`--> 968 ...`, `❱ 130 │ ...`)."""
    src = m.group(1).rstrip(" │¦|")
    if s.cur is not None:
        if len(s.cur.sources) < s.MAX_FRAMES:
            s.cur.sources.append(src)
    else:
        s.pending_src.append(src)


def _progress_done(s, f, m, text, lineno, window):
    s.progress_done = True
    s.phase = ("done", s.phase[1] if s.phase else None)


def _progress(s, f, m, text, lineno, window):
    if not s.phase or s.phase[0] == "load":
        s.phase = ("progress", s.phase[1] if s.phase else None)


def _decode_phase(s, f, m, text, lineno, window):
    s.phase = ("decode", None)


def _set(key, value):
    def handler(s, f, m, text, lineno, window):
        f[key] = value
    return handler


def _vote(os_name):
    def handler(s, f, m, text, lineno, window):
        f["os_votes"][os_name] += 1
    return handler


# --- vLLM ----------------------------------------------------------------------------------------

def _vllm_util(s, f, m, text, lineno, window):
    f["vllm_util"] = num(m.group(1) or m.group(2) or m.group(3))   # a figure that is no number: SizeError, attempt's miss
    # (rev8 B1) by line too, so a failure reads its own run's (engine.vllm_setting); a line read back from the window before
    # a failure (line 0) is kept just before that failure's line, the last read back the nearest
    _kept(f["vllm_util_at"], s._lineno - 0.5 if window else lineno, f["vllm_util"])


def _vllm_total(s, f, m, text, lineno, window):
    """(fixB B1) the card's total vLLM sized its share of, kept by line as the share is (engine.vllm_setting)."""
    _kept(f["vllm_total_at"], s._lineno - 0.5 if window else lineno, P.size(m.group(1) + " GiB"))


def _vllm_maxlen(s, f, m, text, lineno, window):
    f["vllm_maxlen"] = int(m.group(1) or m.group(2) or m.group(3))
    _kept(f["vllm_maxlen_at"], s._lineno - 0.5 if window else lineno, f["vllm_maxlen"])


# --- llama.cpp / Ollama --------------------------------------------------------------------------

def _ggml_buf(prefix):
    def handler(s, f, m, text, lineno, window):
        if prefix == "model" and ("KV" in text or "compute" in text or "output" in text):
            return
        f["ggml_bufs"][f"{prefix}:{m.group(1)}"] = P.size(m.group(2) + " MiB")
        s.ggml_phase = prefix
    return handler


def _ggml_args(s, f, m, text, lineno, window):
    for flag, val in _GGML_ARGS_RE.findall(text):
        f["ggml_args"][_GGML_FLAG.get(flag, flag.lstrip("-"))] = int(val)


def _vllm_wflags(f, text, carried=""):
    """vLLM's flags that change what one card holds of the weights (lines.VLLM_WEIGHT_FLAGS), every one on the line:
    quant (the method's name, lower case; the engine config's quantization=None says none), offload (GiB), dp, ep.
    `carried`: the command's earlier lines (vllm_short_q.before), for a `-q X`."""
    w, short = f["vllm_wflags"], None
    for m in L.VLLM_WEIGHT_FLAGS.finditer(text):
        q = m.group(1)
        if m.group("short"):        # (fix67f) -q X: vllm_short_q's reading (a vLLM entry point before it in its command)
            short = short_quants(text, carried) if short is None else short
            q = short.get(m.start("short") - 3)
        if q and q.lower() == "none":
            w.pop("quant", None)          # (fix66g) this run's engine config: no method (an earlier run's does not stick)
        elif q:
            w["quant"] = q.lower()
        elif m.group(2):
            w["offload"] = max(w.get("offload", 0.0), num(m.group(2)))
        elif m.group(3):
            w["dp"] = max(w.get("dp", 1), int(m.group(3)))
        elif m.group(4):
            w["ep"] = True


def _compiler_stats(s, f, m, *_):
    """The Comfy Compiler ran (so Dynamic VRAM is on): the most graph breaks and rogue allocations any run reported."""
    breaks, rogues = int(m.group(1)), int(m.group(2) or 0)
    old = f["compiler"] or (0, 0)
    f.update(comfy=True, dynamic_vram=True, compiler=(max(old[0], breaks), max(old[1], rogues)))


def _runtime_marker(s, f, m, text, lineno, window):
    """The first runtime the log names (a later line naming another is most often a path or an import)."""
    if f["runtime_marker"] is None:
        f["runtime_marker"] = L.RUNTIME_MARKERS[m.lastindex - 1][0]


_VERSION_OF = ("vllm", "vllm", "ollama", "ollama", "llama.cpp", "comfyui")   # runtime_version's groups, in order
_PARAM_UNIT = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def _runtime_version(s, f, m, text, lineno, window):
    f["runtime_version"][_VERSION_OF[m.lastindex - 1]] = m.group(m.lastindex)
    if m.lastindex == 3 and not window:     # (rev14 B1) Ollama's server start ("Listening on ... (version X)"), by line
        _kept(f.setdefault("ollama_restart", {}), lineno, "listening")


def _llm_model(s, f, m, *_):
    """The model the runtime loads (the last one named: a server loading another model names it again)."""
    f["llm_model"] = (m.lastindex, m.group(m.lastindex).strip().strip("\"'"))


def _device_free(f, name, mib):
    """ggml's device list: the last one named, and each by name (a split over several cards)."""
    f["ggml_device_free"] = f["ggml_devices"][name] = int(mib) * MiB


def _gguf_meta(s, f, m, *_):
    if m.group(1):
        f["gguf_type"] = m.group(1).strip()
    elif m.group(2):
        f["gguf_params"] = num(m.group(2)) * _PARAM_UNIT[m.group(3)]
    else:
        f["gguf_size"] = P.size(m.group(4))


HANDLERS = {
    "device": _device,
    "total_vram": _total_vram,
    "nunchaku_gpu": _nunchaku_gpu,
    "mmgp_pin": _mmgp_pin,
    "vram_state": lambda s, f, m, *_: f.update(vram_state=m.group(1), comfy=True),
    "torch_version": _torch_version,
    "platform": lambda s, f, m, *_: f["os_votes"].update({m.group(1).lower(): 10}),
    "requested_load": _requested_load,
    "dynamic_vram": _set("dynamic_vram", True),
    "conv3d_workaround": _set("conv3d_workaround", True),
    "tf_own": _set("tf_own", True), "jax_own": _set("jax_own", True),
    "monai_gpu_free": lambda s, f, m, text, lineno, *_: _kept(f["monai_gpu_free"], lineno, int(m.group(1)) * MiB),   # (rev6 B7) by line
    # (review28) the lines of TensorRT's tactic-skip warnings (_kept: the last LINE_KEPT): a skip speaks only for the failure beside it
    "trt_tactic_skip": lambda s, f, m, text, lineno, *_: _kept(f["trt_tactic_skip"], lineno, True),
    # (round 105) the lines of FSDP's clone warnings (_kept): a warning speaks only for the error it carries
    "fsdp_clone": lambda s, f, m, text, lineno, *_: _kept(f["fsdp_clone"], lineno, True),
    "cpu_fallback": _set("cpu_fallback", True),
    "yolox_occupy": _set("yolox_occupy", True),
    # (the last statistics before the failure: the cache as it stood then)
    "mlx_prompt_cache": lambda s, f, m, *_: f.update(mlx_prompt_cache=round(float(m.group(2)) * 1e9)),
    "nvml_init": lambda s, f, m, *_: f.update(nvml_init=m.group(1).strip()),
    "gpu_fault": lambda s, f, m, *_: f.update(gpu_fault=f["gpu_fault"] or m.group(1)),
    "comfy_report_vram": lambda s, f, m, *_: f.setdefault("comfy_report_vram", {}).setdefault(m.group(1).lower(), int(m.group(2))),
    "comfy_pinned_max": lambda s, f, m, *_: f.update(comfy_pinned_max=round(float(m.group(1)) * MiB)),
    "comfy_interrupted": aimdo_abort.handler(_kept), "comfy_prompt": aimdo_abort.handler(_kept),  # (rev67d F4) by line
    "compiler_stats": _compiler_stats,
    "prompt_done": lambda s, *_: s._run_finished(),
    "exception_block": _exception_block,
    "comfy_report": _set("comfy", True),
    "node_type": _node_type,
    "args": _args,
    "frame": _frame,
    "frame_ipy": _frame_only,
    "frame_ipy7": _frame_only,
    "frame_rich": _frame_only,
    "source_arrow": _source_arrow,
    "progress_done": _progress_done,
    "progress": _progress,
    "decode_phase": _decode_phase,
    "vllm_kv_mem": VRUN.gib("vllm_kv_mem"),       # (fix67g) these by line too: the run that failed (vllm_run.py)
    "vllm_kv_tokens": VRUN.kv_tokens,
    "vllm_model_mem": VRUN.gib("vllm_model_mem"),
    "vllm_kv_mem_v0": VRUN.gib("vllm_kv_mem"),
    "vllm_util": _vllm_util,
    "vllm_total": _vllm_total,
    "vllm_maxlen": _vllm_maxlen,
    # (tensor x pipeline parallel: the larger one the log names, a floor of the cards the weights split over)
    "vllm_wflags": lambda s, f, m, text, lineno, window: _vllm_wflags(f, text, q_before(s, window) if "-q" in text else ""),
    "vllm_tp": lambda s, f, m, *_: f.__setitem__("vllm_tp", max(f["vllm_tp"], int(m.group(1) or m.group(2)))),
    "vllm_kv_dtype": VRUN.kv_dtype,
    "vllm_dtype": lambda s, f, m, *_: f.__setitem__("vllm_dtype", (m.group(1) or m.group(2)).lower()),
    "vllm_marker": _set("vllm", True),
    "vllm_serving": _set("vllm_serving", True),
    "vllm_worker_rpc": _set("vllm_worker_rpc", True),
    "training_log": lambda s, f, m, *_: f["training_log"] or f.__setitem__("training_log", m.group(0).strip()[:60]),
    # (fix67a) vLLM's own hint in its message: the graph-capture guide says what the variable does (vllm_capture_fix.py)
    "graph_capture": lambda s, f, m, *_: f.update(graph_capture=True, **({"vllm_cg_hint": True} if "ESTIMATE" in m.group() else {})),
    "own_pool": _set("own_pool", True),
    "aimdo_log": _set("comfy", True),       # (round 111) comfy-aimdo's own log line: ComfyUI's run
    # (round 111) deviceQuery's (tri78: or nvidia-smi's table's, in MiB) total of each card, by line (engine: where every card printed the same)
    "cuda_query_total": lambda s, f, m, text, lineno, *_: f["cuda_query_total"].__setitem__(lineno, int(m.group(1) or 0) or int(m.group(2)) * MiB),
    # (round 114) nvidia-smi's compute-apps CSV by line: "head" for its header, else the process's memory (processes.smi_apps_after)
    "smi_apps": lambda s, f, m, text, lineno, window: _smi_apps(s, f["smi_apps"], lineno, m, window),
    "smi_procs": smi_procs.read_table,     # (tri79) nvidia-smi's process table: each row's card, type and memory, by the header's line
    "pinned_host": lambda s, f, m, *_: f.__setitem__("pinned_host", m.group(0)),
    "block_swap": block_swap.read,
    "ggml_model_buf": _ggml_buf("model"),
    "ggml_kv_buf": _ggml_buf("kv"),
    "ggml_compute_buf": _ggml_buf("compute"),
    "ggml_n_ctx": lambda s, f, m, *_: f.__setitem__("ggml_n_ctx", int(m.group(1))),
    "ggml_args": _ggml_args,
    "ggml_spec_mtp": _set("ggml_spec_mtp", True),
    "ggml_spec_cpu_sampling": _set("ggml_spec_cpu_sampling", True),
    "ggml_slots": lambda s, f, m, *_: f.__setitem__(*(("ggml_n_seq_max", int(m.group(1))) if m.group(1) else ("ggml_ctx_per_seq", int(m.group(2))))),
    "ggml_offloaded": lambda s, f, m, *_: f.__setitem__("ggml_offloaded", (int(m.group(1)), int(m.group(2)))),
    "ggml_fa": lambda s, f, m, *_: f.__setitem__("ggml_fa", _FA.get((m.group(1) or m.group(2) or "on").lower(), None)),
    "ggml_device_free": lambda s, f, m, *_: _device_free(f, m.group(1), m.group(3)),
    "ggml_list_free": lambda s, f, m, *_: _device_free(f, m.group(1), m.group(4)),
    "ollama_full": _ollama_full,
    "ollama_layers": lambda s, f, m, *_: f.__setitem__("ollama_layers", (int(m.group(2)), int(m.group(1)))),
    "ollama_requested": lambda s, f, m, *_: f.__setitem__("ollama_requested", int(m.group(1))),
    "ollama_kv": lambda s, f, m, *_: f.__setitem__("ollama_kv", P.size(m.group(1))),
    "vllm_layer_at": lambda s, f, m, text, lineno, *_: _kept(f["vllm_layer_at"], lineno, m.group(1)),     # (round 106)
    "runtime_marker": _runtime_marker,
    "runtime_version": _runtime_version,
    "llm_model": _llm_model,
    "gguf_meta": _gguf_meta,
    "ollama_total": lambda s, f, m, *_: f.__setitem__("ollama_total", P.size(m.group(1))),
    # (round 121) Ollama's discovery record, by line: True where the device it lists is the CPU (its id or its library)
    "ollama_compute": lambda s, f, m, text, lineno, window: f.update(ollama=True) or _kept(
        f.setdefault("ollama_compute", {}), s._lineno - 0.5 if window else lineno, "cpu" in (m.group(1), m.group(2))),
    "vllm_transformers": _set("vllm_transformers", True),
    "load_failed": lambda s, f, m, text, *_: f.__setitem__("load_failed", text.strip()[:160]),
    "ggml_marker": _set("ggml", True),
    "ggml_cuda_fn": lambda s, f, m, text, lineno, window: f.update(ggml=True, ggml_cuda_fn=m.group(1)) or window or _kept(
        f.setdefault("ggml_cuda_fn_at", {}), lineno, m.group(1)),     # (rev14 B1) and by line
    "ggml_fattn": lambda s, f, m, text, lineno, *_: _kept(f["ggml_fattn"], lineno, True),     # (round 114) by line
    # (and its line: the set_tensor row reads it only beside the failure it belongs to, round 66)
    "ggml_sycl_fn": lambda s, f, m, text, lineno, window: f.update(ggml=True, ggml_sycl_fn=m.group(1), ggml_sycl_line=lineno),
    "runtime_named": lambda s, f, m, *_: f["runtime_named"] or f.update(runtime_named=L.NAMED_RUNTIMES[m.lastindex - 1][0]),
    "mem_query_oom": lambda s, f, m, text, lineno, *_: f["mem_query_oom"].__setitem__(lineno, m.group(1) or m.group(2)),
    "cudarc": lambda s, f, m, *_: f.update(cudarc=True),
    "stage_said": lambda s, f, m, text, lineno, *_: _kept(f["stage_said"], lineno, (m.lastgroup, chain_place(text))),
    "trt_kv_sizing": lambda s, f, m, text, lineno, *_: _kept(f["trt_kv_sizing"], lineno,
                                                             {"total": P.size(m.group(1) + " GiB"), "free": P.size(m.group(2) + " GiB")}
                                                             if num(m.group(2)) >= 0 else {"total": P.size(m.group(1) + " GiB"), "short": True}),
    "vk_pinned_device": _set("vk_pinned_device", True), "ggml_vk_names": _set("ggml_vk_names", True),
    "rknpu_no_iommu": _set("rknpu_no_iommu", True), "bg_worker_exception": _set("bg_worker_exception", True), "comfy_mm": _set("comfy_mm", True),     # (round 74, tri76, tri82)
    "pinned_src": lambda s, f, m, text, *_: f.__setitem__("pinned_src", text.strip()[:120]),     # (round 74)
    "aimdo_file_read": lambda s, f, m, *_: f.__setitem__("aimdo_file_read", m.group(0)),     # (tri66)
    "ollama_evict": _ollama_evict,
    # (round 70) llama.cpp's pre-GGUF loader: line -> "open" | "read" for its file-open line and its header lines (_kept: the last LINE_KEPT)
    "ggml_header": lambda s, f, m, text, lineno, *_: _kept(f["ggml_header"], lineno, "open" if m.group(1) else "read"),
    # (rev15 B2) "runner" where Ollama started a runner with no model (--port but no --model: GPU discovery's bootstrap)
    "ggml_load_start": lambda s, f, m, text, lineno, *_: _kept(f["ggml_load_start"], lineno, "runner" if m.group().endswith(
        "runner") and "--model" not in text and "--port" in text else True),
    "sdcpp_compute": lambda s, f, m, *_: f.update(ggml=True, sdcpp_part=m.group(1).lower()),
    "tf_device_mem": lambda s, f, m, text, lineno, *_: _tf_device_mem(f, lineno, ("total" if m.group(1) == "Total" else "free",
                                                                                     parse_size(m.group(2)))),
    "tf_found_device": lambda s, f, m, text, lineno, *_: _tf_device_mem(f, lineno, ("device", int(m.group(1)))),
    "bfc_stats": lambda s, f, m, text, lineno, *_: f["bfc_stats"].__setitem__(
        lineno, ("device_limit" if m.group(1) == "Limit" else "allocated", int(m.group(2)))),
    "bfc_fail": lambda s, f, m, text, lineno, *_: f["bfc_fail_lines"].__setitem__(lineno, True),
    "ggml_pool_fail": lambda s, f, m, *_: f.update(ggml=True, ggml_pool_req=round(num(m.group(1)) * MiB)),
    "ollama_marker": _ollama_marker,
    "ollama_env": _ollama_env,
    "rocm": _set("rocm", True),
    "vllm_rocm_on": _set("vllm_rocm_on", True), "cuda_device": _set("cuda_device", True),     # (fixT) env.infer weighs the two
    "windows": _vote("windows"),
    "darwin": _vote("darwin"),
    "linux": _vote("linux"),
    "wsl": _vote("wsl"),
    "runtime_around": runtime_around,     # (rt66)
    "comfy_install": lambda s, f, m, *_: seen_install(f, m),     # (fix66c) comfy_launch.INSTALL_SIGNS
    "vllm_batched": lambda s, f, m, text, lineno, window: seen_batched(f, m, text, q_before(s, window) if "-q" in text else ""),     # (fix66c) vllm_command
    "vllm_own": VRUN.own,     # (fix67a) vllm_own_flags; (fix67g) by line: each a run's start
    "vllm_launch": vllm_launch.read,     # (fix68a) a `python x.py` launch: a run's start too
    "vllm_args_list": vllm_args_list.read,     # (fix68a) -q X in an args list
    "vllm_serve_end": vllm_launch.ended,     # (fix68h) a foreground server's end
    "vllm_run_start": vllm_launch.start,     # (fix68a) a run's start in the window: the slot's earlier values go
    "dataloader_worker": lambda s, f, m, *_: f.__setitem__("dataloader_worker", True),     # (review rev66a #4)
    "wrapper_run": wrapper_runs.read,     # (fix67b) by line
    **{fact[0]: read for fact, _, read in extra_facts.ROWS},     # (aud68c #4, #8)
    "bfc_after_error": bfc_backpedal.read,     # (fix67h) by line
    "bfc_went_on": bfc_backpedal.read_went_on,     # (fix67o) by line
    "comfy_device": comfy_devices.handler(_kept),     # (rev67d F1)
    "igpu_named": lambda s, f, m, *_: f.__setitem__("igpu_named", True),     # (rev8 S2) Unsloth Studio's guard reads other
    "as_limit": lambda s, f, m, *_: f.__setitem__("as_limit", int(m.group(1))),     # (round 112) RLIMIT_AS's soft limit, bytes
    # (round 118) the chip's HBM; (rev9 D3) by line (_kept; one read back from the window, just before that failure)
    "tpu_hbm_limit": lambda s, f, m, text, lineno, window: _kept(f.setdefault("tpu_hbm_limit", {}),
                                                                 s._lineno - 0.5 if window else lineno, P.size(m.group(1) + " GiB")),
    # (round 118) a batch size that ran; (rev9 S1) by line (_kept; one read back from the window, just before that failure),
    # so a failure reads only those before it (predicates.batch_ran_before)
    "batch_ran": lambda s, f, m, text, lineno, window: _kept(f.setdefault("batch_ran", {}), s._lineno - 0.5 if window else lineno,
                                                             int(m.group(1))),
    # (tri65) a training step's allocated memory, by line; the stream's lines only (a window line has no line of its own)
    # (tri68) Kaldi's allocator report: what its regions hold and the card's used and total, by line (read back from the window too)
    "kaldi_held": lambda s, f, m, text, lineno, window: _kept(f.setdefault("kaldi_held", {}), s._lineno - 0.5 if window else lineno,
                                                              {"held": int(m.group(1)), "used": int(m.group(2)) * MiB, "total": int(m.group(3)) * MiB}),
    "step_mem": lambda s, f, m, text, lineno, window: window or _kept(f.setdefault("step_mem", {}), lineno, P.size(m.group(1) + " " + m.group(2)), 64),
}
