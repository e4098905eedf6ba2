"""The flight recorder's record model: one run = one dict (one compact JSON line in the store).

A run as the routes serve it (the issue's shape; extra keys are additions, never renames):

    {"prompt_id", "status", "started", "ended", "versions", "devices",
     "nodes": [{"id", "type", "duration_s", "peak": {DEVICE: bytes}, "free_before": {DEVICE: bytes},
                "free_after": {DEVICE: bytes}, "models_loaded": [name], "models_unloaded": [name],
                "t0_s", "display_id", "reserved_peak": {DEVICE: bytes}, "status"}],
     "duration_s", "args", "allocator", "dynamic_vram", "comfy_compiler", "model_files", "latent", "models",
     "cached", "graph", "error", "oom_report_id", "watchdog", "schema"}

What a record never holds: prompt texts, widget values other than model file names and the latent size,
images or file names of inputs. Plain data only; the ComfyUI side (nodes/recorder.py) fills it.
"""
SCHEMA = 1
MAX_NODES = 1000  # a run's node list is cut here (loops that expand to thousands of nodes)
MODEL_EXTS = (".safetensors", ".sft", ".ckpt", ".pt", ".pth", ".bin", ".gguf", ".onnx", ".pt2")
LATENT_KEYS = ("width", "height")


def basename(name: str) -> str:
    return str(name).replace("\\", "/").rsplit("/", 1)[-1]


def is_model_file(value) -> bool:
    return isinstance(value, str) and len(value) < 512 and value.lower().endswith(MODEL_EXTS)


def model_files(prompt: dict) -> list[str]:
    """Model file names the prompt's widgets name (ckpt_name, unet_name, clip_name1, vae_name, lora_name...),
    as ComfyUI lists them (relative to a models folder), sorted, once each."""
    seen = set()
    for node in (prompt or {}).values():
        for value in ((node or {}).get("inputs") or {}).values() if isinstance(node, dict) else ():
            if is_model_file(value):
                seen.add(value.replace("\\", "/"))
    return sorted(seen)


def latent_size(prompt: dict) -> dict | None:
    """The run's latent size as the user set it: the first node (by id) whose type names a latent and whose
    width and height are literal integers (EmptyLatentImage, EmptySD3LatentImage, EmptyHunyuanLatentVideo...)."""
    found = []
    for nid, node in (prompt or {}).items():
        if not isinstance(node, dict) or "latent" not in str(node.get("class_type", "")).lower():
            continue
        inputs = node.get("inputs") or {}
        if all(isinstance(inputs.get(k), int) and not isinstance(inputs.get(k), bool) for k in LATENT_KEYS):
            frames = inputs.get("length") if isinstance(inputs.get("length"), int) else 1
            batch = inputs.get("batch_size") if isinstance(inputs.get("batch_size"), int) else 1
            found.append((_id_key(nid), {"width": inputs["width"], "height": inputs["height"], "frames": frames,
                                         "batch": batch}))
    return min(found, key=lambda f: f[0])[1] if found else None


def _id_key(nid):
    s = str(nid)
    return (0, int(s), s) if s.isdigit() else (1, 0, s)


def graph(prompt: dict) -> dict:
    """node id -> class type for the whole prompt (what compare uses to find the same workflow)."""
    return {str(k): str(v.get("class_type")) for k, v in (prompt or {}).items() if isinstance(v, dict)}


def new_run(prompt_id: str, prompt: dict, started: float) -> dict:
    return {"schema": SCHEMA, "prompt_id": str(prompt_id), "status": "running", "started": started, "ended": None,
            "duration_s": None, "versions": {}, "devices": [], "nodes": [], "args": [], "allocator": {},
            "dynamic_vram": None, "comfy_compiler": None, "model_files": model_files(prompt), "latent": latent_size(prompt), "models": [],
            "cached": [], "graph": graph(prompt), "error": None, "oom_report_id": None, "watchdog": []}


def node_record(node_id, class_type, *, t0_s: float, duration_s: float, peak: dict, reserved_peak: dict | None = None,
                free_before: dict | None = None, free_after: dict | None = None, models_loaded=(), models_unloaded=(),
                display_id=None, status: str = "success") -> dict:
    return {"id": str(node_id), "type": class_type, "duration_s": round(float(duration_s), 6),
            "peak": {k: int(v) for k, v in (peak or {}).items() if v is not None},
            "free_before": {k: int(v) for k, v in (free_before or {}).items() if v is not None},
            "free_after": {k: int(v) for k, v in (free_after or {}).items() if v is not None},
            "models_loaded": list(models_loaded), "models_unloaded": list(models_unloaded),
            "t0_s": round(float(t0_s), 6), "display_id": str(display_id) if display_id is not None else str(node_id),
            "reserved_peak": {k: int(v) for k, v in (reserved_peak or {}).items() if v is not None},
            "status": status}


def status_from_messages(status_str: str | None, messages) -> tuple[str, dict | None]:
    """ComfyUI's history status -> ("success" | "error" | "interrupted", the failing node or None)."""
    for item in messages or ():
        try:
            event, data = item
        except (TypeError, ValueError):
            continue
        if event == "execution_interrupted":
            return "interrupted", {"node_id": str(data.get("node_id")), "type": data.get("node_type")}
        if event == "execution_error":
            return "error", {"node_id": str(data.get("node_id")), "type": data.get("node_type"),
                             "exception_type": data.get("exception_type")}
    return ("success" if status_str == "success" else (status_str or "error")), None


def cached_nodes(messages) -> list[str]:
    for item in messages or ():
        try:
            event, data = item
        except (TypeError, ValueError):
            continue
        if event == "execution_cached":
            return [str(n) for n in data.get("nodes") or []]
    return []


def finish_run(run: dict, ended: float, status: str, error: dict | None, cached=()) -> dict:
    run["ended"] = ended
    run["duration_s"] = round(max(0.0, ended - run["started"]), 6)
    run["status"] = status
    run["error"] = error
    run["cached"] = list(cached)
    if len(run["nodes"]) > MAX_NODES:
        run["nodes_truncated"] = len(run["nodes"]) - MAX_NODES
        run["nodes"] = run["nodes"][:MAX_NODES]
    return run


def run_peak(run: dict) -> dict:
    """The highest per-node peak on each device over the run."""
    out = {}
    for n in run.get("nodes") or ():
        for dev, v in (n.get("peak") or {}).items():
            if isinstance(v, (int, float)):
                out[dev] = max(out.get(dev, 0), int(v))
    return out
