"""Guide parameters and flags from one failure's numbers: --reserve-vram, tile sizes, --max-model-len,
--gpu-memory-utilization, -ngl, -c (the guides' {{placeholders}}), and the LLM calculator's suggestions."""
import math

from .case import snapshot_device
from ..units import GiB, fmt_bytes as _b


def params(inc, env, scan, context, card=None) -> dict:
    """Numbers the guides fill in: --reserve-vram, --max-model-len, --gpu-memory-utilization, -ngl, -c.
    `card`: the card's capacity as the Case decided it (case.py: a message's total, or cudaMallocAsync's device limit
    unless that is not this card), else the message's total or ComfyUI's start-up "Total VRAM"."""
    n = inc.primary.get("numbers") or {}
    f = scan.facts
    p = {}
    if env.get("os") == "windows":
        p["launch"] = r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"
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
    est = n.get("estimated_max_len_tokens")
    if not est and n.get("kv_needed") and n.get("kv_available", 0) > 0 and n.get("max_model_len_tokens"):
        est = int(n["max_model_len_tokens"] * n["kv_available"] / n["kv_needed"])
    if est:
        p["max_model_len"] = str(est // 256 * 256 if est >= 512 else est)
    elif n.get("kv_max_tokens"):
        t = n["kv_max_tokens"]
        p["max_model_len"] = str(t // 256 * 256 if t >= 512 else t)
    elif f["vllm_kv_tokens"]:
        p["max_model_len"] = str(min(8192, f["vllm_kv_tokens"] // 256 * 256))
    if n.get("mamba_blocks_count"):
        p["max_num_seqs"] = str(n["mamba_blocks_count"])
    if inc.primary["kind"] == "vllm.startup_free" and n.get("total"):
        p["gpu_memory_utilization"] = f"{max(0.05, math.floor((n['free'] / n['total'] - 0.02) * 100) / 100):.2f}"
    if f["ggml_n_ctx"]:
        p["n_ctx"] = str(f["ggml_n_ctx"])
        p["n_ctx_half"] = str(max(2048, f["ggml_n_ctx"] // 2 // 256 * 256))
    off, dev_free = f["ggml_offloaded"], f["ggml_device_free"]
    model_bytes = sum(v for k2, v in f["ggml_bufs"].items() if k2.startswith("model:") and "CPU" not in k2 and "Host" not in k2)
    if off and dev_free and req:
        layers = off[0]
        per = max(req, model_bytes) / max(layers, 1)
        fit = int((dev_free - 1.5 * GiB) / per) if per else layers
        p["ngl"] = str(max(0, min(layers - 1, fit)))
    return p



def llm_suggestions(scan, inc, numbers, runtime) -> list:
    """Flags the LLM calculator derives from the numbers this log states (context, KV budget, failed buffer)."""
    f = scan.facts
    n = dict(numbers)
    for key, fact in (("kv_available", "vllm_kv_mem"), ("kv_tokens", "vllm_kv_tokens"), ("gpu_memory_utilization", "vllm_util"),
                      ("max_model_len", "vllm_maxlen"), ("n_ctx", "ggml_n_ctx"), ("free", "ggml_device_free")):
        if f.get(fact) is not None:
            n.setdefault(key, f[fact])
    if f.get("ggml_offloaded"):
        n.setdefault("n_gpu_layers", f["ggml_offloaded"][0])
        n.setdefault("n_layers", f["ggml_offloaded"][1])
    kv = sum(v for k, v in f["ggml_bufs"].items() if k.startswith("kv:"))
    if kv:
        n.setdefault("kv_buffer", kv)
    if any(e["kind"] == "ggml.compute" for e in inc.events):
        n["buffer"] = "compute"
    try:
        from ..llm import kv as llm
        return list(llm.suggest_flags_from_log(n, runtime) or [])[:6]
    except Exception:      # an optional helper: triage answers without it
        return []

