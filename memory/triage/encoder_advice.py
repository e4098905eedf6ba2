"""Which text-encoder advice fits the failing node and model (aud67b #7): the comfyui-text-encoder guide's flags.

kijai's ComfyUI-WanVideoWrapper loads its UMT5 with its own nodes, which neither --fp8_e4m3fn-text-enc nor Load CLIP's
`device` reaches: LoadWanVideoT5TextEncoder has `quantization` (disabled / fp8_e4m3fn) and `load_device`
(main_device / offload_device), WanVideoTextEncode `device` (gpu / cpu) and `force_offload` (the wrapper's
nodes.py INPUT_TYPES). SDXL's encoders are CLIP-L and CLIP-G, with no T5/UMT5 file to swap for an fp8 one."""

WRAPPER_PREFIXES = ("WanVideo", "LoadWanVideo")
# the node types and ComfyUI's "Requested to load X" models (comfy/sdxl_clip.py) whose encoders are CLIP-L and CLIP-G only
CLIP_ONLY_NODES = ("CLIPTextEncodeSDXL", "CLIPTextEncodeSDXLRefiner")
CLIP_ONLY_MODELS = ("SDXLClipModel", "SDXLRefinerClipModel")


def params(node, model) -> dict:
    """Flags for the guide's `<!-- if -->` parts: te_wrapper (a WanVideoWrapper node), te_clip_only (SDXL/SD1.5: no
    T5); neither: ComfyUI's own loaders of a T5/UMT5 model (the guide's default text, also shown with no flags)."""
    node, model = node or "", model or ""
    wrapper = node.startswith(WRAPPER_PREFIXES)
    clip_only = not wrapper and (node in CLIP_ONLY_NODES or model in CLIP_ONLY_MODELS)
    return {"te_wrapper": wrapper, "te_clip_only": clip_only}
