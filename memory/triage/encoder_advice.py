"""Which text-encoder advice fits the failing node and model (aud67b #7): the comfyui-text-encoder guide's flags.

kijai's ComfyUI-WanVideoWrapper loads its UMT5 with its own nodes, which neither --fp8_e4m3fn-text-enc nor Load CLIP's
`device` reaches: LoadWanVideoT5TextEncoder has `quantization` (disabled / fp8_e4m3fn) and `load_device`
(main_device / offload_device), WanVideoTextEncode `device` (gpu / cpu) and `force_offload` (the wrapper's
nodes.py INPUT_TYPES). SD1.x, SD2.x and SDXL encode with CLIP only (SD1.x CLIP-L, SD2.x OpenCLIP-H, SDXL CLIP-L and
CLIP-G), with no T5/UMT5 file to swap for an fp8 one."""

# (rev67d F5) the wrapper's UMT5 text-encoder nodes, exactly (kijai/ComfyUI-WanVideoWrapper NODE_CLASS_MAPPINGS:
# nodes_model_loading.py LoadWanVideoT5TextEncoder; nodes.py WanVideoTextEncode, WanVideoTextEncodeSingle (t5 input,
# force_offload, device), WanVideoTextEncodeCached (loads the T5 itself: quantization, device)). Not every WanVideo*
# node: LoadWanVideoClipTextEncoder loads CLIP vision (returns CLIP_VISION, no quantization widget), the sampler
# and decode nodes hold no text encoder.
WRAPPER_T5_NODES = ("LoadWanVideoT5TextEncoder", "WanVideoTextEncode", "WanVideoTextEncodeSingle", "WanVideoTextEncodeCached")
# the node types and ComfyUI's "Requested to load X" models whose encoders are CLIP only (host ComfyUI 0.8.0:
# comfy/sd1_clip.py:677 SD1ClipModel, comfy/text_encoders/sd2_clip.py:21 SD2ClipModel, comfy/sdxl_clip.py:41/70)
CLIP_ONLY_NODES = ("CLIPTextEncodeSDXL", "CLIPTextEncodeSDXLRefiner")
CLIP_ONLY_MODELS = ("SD1ClipModel", "SD2ClipModel", "SDXLClipModel", "SDXLRefinerClipModel")


def params(node, model) -> dict:
    """Flags for the guide's `<!-- if -->` parts: te_wrapper (a WanVideoWrapper T5 node), te_clip_only (SD1.x/SD2.x/SDXL: no
    T5); neither: ComfyUI's own loaders of a T5/UMT5 model (the guide's default text, also shown with no flags)."""
    node, model = node or "", model or ""
    wrapper = node in WRAPPER_T5_NODES
    clip_only = not wrapper and (node in CLIP_ONLY_NODES or model in CLIP_ONLY_MODELS)
    return {"te_wrapper": wrapper, "te_clip_only": clip_only}
