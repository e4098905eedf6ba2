"""Plain-data pieces of an OOM report: where the failing node sits in the user's workflow, the run's
latent size, the model family, the numbers for the panel's bar and the safe node swaps (the stored
history and size bounds: oom_store.py). No ComfyUI imports, so tests/unit can drive every function."""

from ..memory.estimate.families import family_for_config  # the one config-class -> family table
from ..memory.estimate.latent_nodes import length_time_factors  # the one table of ComfyUI's latent nodes
from ..memory.estimate.spec import TILE_NODE  # VAE Decode (Tiled) defaults, one place

def _spatial_factors() -> dict:
    """(latent rank, channels) -> the VAE's spatial downscale, from the estimate's family table (one source):
    48 ch: Wan 2.2 TI2V (16x), 128 ch: FLUX.2 (4-d, 16x) or LTX-Video (5-d, 32x), 64 ch: HunyuanImage (32x).
    A rank and channel count two families read differently is left out (8x then); a family whose latent has another
    rank (Hunyuan3D's [B, 64, resolution], spec's rank 3) is keyed by it, never read as an image latent."""
    from ..memory.estimate.spec import FAMILY

    seen: dict = {}
    for f in FAMILY.values():
        if f.get("ch") and f.get("s"):
            seen.setdefault((f.get("rank") or (5 if f.get("t") else 4), f["ch"]), set()).add(f["s"])
    return {k: v.pop() for k, v in seen.items() if len(v) == 1}


SPATIAL_FACTOR = _spatial_factors()


def _temporal_factors() -> dict:
    """Latent channels of a 5-d latent -> the VAE's temporal compression, where every video family with that
    channel count agrees (48: Wan 2.2, 128: LTX-Video, 12: Mochi; 16 is Wan 2.1/HunyuanVideo at 4 but Cosmos at 8)."""
    from ..memory.estimate.spec import FAMILY

    seen: dict = {}
    for f in FAMILY.values():
        if f.get("ch") and f.get("t"):
            seen.setdefault(f["ch"], set()).add(f["t"])
    return {ch: v.pop() for ch, v in seen.items() if len(v) == 1}


TEMPORAL_FACTOR = _temporal_factors()
# ComfyUI 0.8.0's video-latent nodes whose `length` input is in video frames -> the temporal compression that turns
# it into latent frames ((length - 1) // t + 1): one table, memory/estimate/latent_nodes.py.
LENGTH_NODE_TIME = length_time_factors()


def _time_factor(family: str | None) -> int | None:
    from ..memory.estimate.spec import FAMILY

    return (FAMILY.get(family) or {}).get("t") if family else None

# Node swaps that keep every link and change only how the work is split: from -> (to, widget values).
SAFE_SWAPS = {
    "VAEDecode": ("VAEDecodeTiled", {"tile_size": TILE_NODE["tile"], "overlap": TILE_NODE["overlap"],
                                     "temporal_size": TILE_NODE["frames"], "temporal_overlap": TILE_NODE["frame_overlap"]}),
    "VAEEncode": ("VAEEncodeTiled", {"tile_size": TILE_NODE["tile"], "overlap": TILE_NODE["overlap"],
                                     "temporal_size": TILE_NODE["frames"], "temporal_overlap": TILE_NODE["frame_overlap"]}),
}
SWAP_CAUSES = {"vae-decode"}


def family_of(config_class_name: str | None) -> str | None:
    if not config_class_name:
        return None
    return family_for_config(config_class_name) or config_class_name.lower()


def _workflow_nodes(workflow: dict, graph_id: str | None) -> list:
    if graph_id is None:
        return workflow.get("nodes") or []
    for sg in ((workflow.get("definitions") or {}).get("subgraphs") or []):
        if str(sg.get("id")) == graph_id:
            return sg.get("nodes") or []
    return []


def node_info(exec_id: str, class_type: str | None, extra_pnginfo: dict | None, display_name: str | None = None) -> dict:
    """The failing node as the user sees it. exec_id "12:5" is node 5 inside the subgraph instance 12;
    `path` lists each level's id, type and title, outermost first."""
    parts = [p for p in str(exec_id).split(":") if p]
    workflow = (extra_pnginfo or {}).get("workflow") if isinstance(extra_pnginfo, dict) else None
    path, graph_id = [], None
    for part in parts:
        found = None
        if isinstance(workflow, dict):
            for n in _workflow_nodes(workflow, graph_id):
                if isinstance(n, dict) and str(n.get("id")) == part:
                    found = n
                    break
        entry = {"id": part, "type": found.get("type") if found else None,
                 "title": (found.get("title") or None) if found else None}
        path.append(entry)
        graph_id = str(found.get("type")) if found else None  # a subgraph instance's type is its definition id
    info = {"id": str(exec_id), "type": class_type, "title": path[-1]["title"] if path else None, "path": path}
    if not info["title"]:
        info["title"] = display_name or class_type
    return info


def latent_from_samples(shape, family: str | None = None) -> dict | None:
    """A LATENT's samples shape ([B, C, H, W] or [B, C, T, H, W]) -> batch, pixel size and frames. `frames` is
    always latent frames (what triage reads); `video_frames` the frames they decode to, where the temporal
    compression is known (from the channel count, else the running model's `family`), else None."""
    shape = [int(x) for x in (shape or [])]
    if len(shape) not in (4, 5):
        return None
    b, c = shape[0], shape[1]
    frames = shape[2] if len(shape) == 5 else 1
    h, w = shape[-2], shape[-1]
    f = SPATIAL_FACTOR.get((len(shape), c), 8)
    t = (TEMPORAL_FACTOR.get(c) or _time_factor(family)) if len(shape) == 5 else None
    video = ((frames - 1) * t + 1) if t else (1 if len(shape) == 4 else None)
    return {"width": w * f, "height": h * f, "frames": frames, "video_frames": video, "batch": b,
            "latent_shape": shape, "source": "latent tensor"}


LATENT_SIZE_KEYS = ("width", "height")


def latent_from_prompt(prompt: dict, node_id: str, family: str | None = None) -> dict | None:
    """Walk the failing node's inputs upstream (breadth first) to the first node with literal
    width/height inputs (EmptyLatentImage and its kin): the run's latent size as the user set it. A video
    node's `length` is video frames: `frames` is the latent frames it makes (the node's family, else the
    running model's `family`; None when neither is known), `video_frames` the length itself."""
    seen, queue = set(), [str(node_id)]
    while queue:
        nid = queue.pop(0)
        if nid in seen or nid not in prompt:
            continue
        seen.add(nid)
        node = prompt[nid]
        inputs = node.get("inputs") or {}
        if nid != str(node_id) and all(isinstance(inputs.get(k), int) for k in LATENT_SIZE_KEYS):
            length = inputs.get("length") if isinstance(inputs.get("length"), int) and inputs["length"] > 0 else None
            t = (LENGTH_NODE_TIME.get(node.get("class_type")) or _time_factor(family)) if length else None
            frames = 1 if length is None else ((length - 1) // t + 1) if t else None
            batch = inputs.get("batch_size") if isinstance(inputs.get("batch_size"), int) else 1
            return {"width": inputs["width"], "height": inputs["height"], "frames": frames,
                    "video_frames": length or 1, "batch": batch, "source": f"{node.get('class_type')} #{nid}"}
        for v in inputs.values():
            if isinstance(v, list) and len(v) == 2 and isinstance(v[0], (str, int)):
                queue.append(str(v[0]))
    return None


def _first(d: dict, *keys):
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v)
    return None


def bar_numbers(event_numbers: dict | None, device: dict | None, device_kind: str | None) -> dict:
    """requested / free / reserved-unallocated / total for the panel's bar. The log's numbers win (they
    are the moment of failure); the probe fills gaps only for the same kind of device, never mixing a
    CUDA message with host RAM."""
    n = event_numbers or {}
    out = {
        "requested": _first(n, "requested", "tried_to_allocate", "request"),
        "free": _first(n, "free", "free_cuda", "available"),
        "reserved_unallocated": _first(n, "reserved_unallocated", "reserved_but_unallocated"),
        "total": _first(n, "total", "total_capacity", "device_limit", "max_allowed", "limit"),
        "allocated": _first(n, "allocated", "allocated_by_pytorch", "currently_allocated", "mps_allocated"),
        "source": {},
    }
    for k in ("requested", "free", "reserved_unallocated", "total", "allocated"):
        if out[k] is not None:
            out["source"][k] = "log"
    same_kind = bool(device and device_kind) and (device.get("backend") == device_kind or (
        device_kind in ("cuda", "rocm") and device.get("backend") in ("cuda", "rocm")))
    if same_kind:
        for k, dk in (("free", "free"), ("total", "total"), ("reserved_unallocated", "reserved_unallocated"),
                      ("allocated", "torch_allocated")):
            if out[k] is None and isinstance(device.get(dk), (int, float)):
                out[k] = int(device[dk])
                out["source"][k] = "probe"
    return out


def matching_device(snapshot: dict | None, device_kind: str | None, device_index) -> dict | None:
    """The probe's entry for the device the error names (kind and, where the message gives it, index)."""
    devices = [d for d in (snapshot or {}).get("devices") or [] if isinstance(d, dict)]
    kinds = {"cuda", "rocm"} if device_kind in ("cuda", "rocm") else {device_kind}
    same = [d for d in devices if d.get("backend") in kinds]
    if device_index is not None:
        same = [d for d in same if d.get("index") == device_index] or same
    return same[0] if same else None


def swap_actions(node: dict, cause: str | None, guide: dict | None) -> list[dict]:
    """A one-click node swap, offered only for the failing node's own type: the guide's swap_node action
    when it names that type, else the built-in safe mapping when the diagnosis points at it."""
    ntype = node.get("type")
    for a in (guide or {}).get("actions") or []:
        if isinstance(a, dict) and a.get("kind") == "swap_node" and a.get("from") == ntype and a.get("to"):
            return [{**a, "node_id": node.get("id"), "widgets": dict(a.get("widgets") or {})}]
    if ntype not in SAFE_SWAPS or cause not in SWAP_CAUSES:
        return []
    to, widgets = SAFE_SWAPS[ntype]
    return [{"kind": "swap_node", "node_id": node.get("id"), "from": ntype, "to": to, "widgets": dict(widgets)}]
