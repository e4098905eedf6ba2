"""Triage's rule rows for *vae-decode* and *text-encoder*: the pipeline stage a node, a traceback, the log's phase or
stable-diffusion.cpp's last sized graph names (rows, not code: the row format is in rules.py's docstring). rules.py puts
them at their place among the cause sections."""
from ..units import GiB
from .predicates import host, sdcpp_part, torch29_conv3d
from .rule_row import Rule
from .te_load import weights_evidence

R = Rule
STAGES = [
    # --- vae-decode ------------------------------------------------------------------------------------
    R("vae-decode", 4.0, lambda x: x.node_cause == "vae-decode", "failing node: {node}", hint=True),
    R("vae-decode", 3.0, lambda x: x.frame_cause == "vae-decode" and x.frame_loading,
      "traceback: loading weights ({where}) for the {part}", hint=True),
    R("vae-decode", 3.0, lambda x: x.frame_cause == "vae-decode" and not x.frame_loading, "traceback: {where}", hint=True),
    R("vae-decode", 3.0, lambda x: x.src_cause == "vae-decode" and not host(x), "traceback source line: {src_line}", hint=True),
    # one large request in a VAE the traceback names: that decode's own tensor (tiling is the fix), whatever the cache holds
    R("vae-decode", 1.5, lambda x: (x.frame_cause == "vae-decode" or x.src_cause == "vae-decode") and x.total and x.req >= 0.1 * x.total,
      "one request of {req:b} ({req_share:.0%} of the card) inside the VAE: the decode's own tensor at this resolution", hint=True),
    R("vae-decode", 2.0, lambda x: x.entry_cause == "vae-decode", "node entry point: {entry}", hint=True),
    R("vae-decode", 3.6, lambda x: x.tiled_text, "ComfyUI: {tiled_text}", hint=True),
    R("vae-decode", 2.6, lambda x: x.log_phase == "decode", "the log shows a VAE decode running when it failed", hint=True),
    # stable-diffusion.cpp sizes each part's graph just before running it and names the part: the VAE's is the last one
    R("vae-decode", 3.0, lambda x: sdcpp_part(x) == "vae-decode",
      lambda x: f"stable-diffusion.cpp sized the {x.f['sdcpp_part']} graph's compute buffer last: the VAE at this resolution "
                "(--vae-tiling bounds it)"),
    # a per-buffer limit (Vulkan's maxMemoryAllocationSize, Metal's max buffer) refused the VAE's compute buffer: one buffer
    # the image's size sets, which --vae-tiling cuts into tiles; the limit only says where it stopped (PR 291 of sd.cpp)
    R("vae-decode", 4.0, lambda x: x.kind in ("ggml.vulkan_limit", "ggml.metal_max") and sdcpp_part(x) == "vae-decode",
      "the VAE's one compute buffer is larger than a single buffer may be on this device: its size is the image's, and "
      "--vae-tiling decodes in tiles that fit"),
    R("vae-decode", 2.2, lambda x: x.loading_cause == "vae-decode", "ComfyUI was loading {model} (a {part_loading}) when it failed", hint=True),
    # no node and no traceback says otherwise: the phase is the clue that decides
    R("vae-decode", 1.6, lambda x: x.log_phase == "sampled", "sampling had finished (100%) before the error: decode phase", hint=True),

    # a known regression of the versions the log shows: PyTorch 2.9 stopped using cuDNN 9.10+ for conv3d and its fallback takes
    # about 3x the memory, so video VAEs' decodes (3D convolutions) blow past the card (ComfyUI PR 10373, widened in 10398:
    # ComfyUI turns cuDNN off for conv3d there and logs "working around nvidia conv3d memory bug")
    R("vae-decode", 1.0, lambda x: x.scored.get("vae-decode") and torch29_conv3d(x),
      lambda x: f"PyTorch {x.f['torch_version']} on an NVIDIA GPU: its conv3d without cuDNN takes about 3x the memory in a video "
                "VAE's decode (a regression of PyTorch 2.9 with cuDNN 9.10+); a current ComfyUI works around it, else PyTorch 2.8"),

    # --- text-encoder ----------------------------------------------------------------------------------
    R("text-encoder", 4.0, lambda x: x.node_cause == "text-encoder", "failing node: {node}", hint=True),
    R("text-encoder", 3.0, lambda x: x.frame_cause == "text-encoder" and x.frame_loading,
      "traceback: loading weights ({where}) for the {part}", hint=True),
    R("text-encoder", 3.0, lambda x: x.frame_cause == "text-encoder" and not x.frame_loading, "traceback: {where}", hint=True),
    R("text-encoder", 3.0, lambda x: x.src_cause == "text-encoder" and not host(x), "traceback source line: {src_line}", hint=True),
    R("text-encoder", 2.0, lambda x: x.entry_cause == "text-encoder", "node entry point: {entry}", hint=True),
    # (fix67b) a weight-loading frame, a partial load or a weight-placing source line on a text encoder's load (te_load.py):
    # the weights rows stand aside there, and the same evidence adds here
    R("text-encoder", 2.0, lambda x: weights_evidence(x) and not host(x),
      lambda x: "the weights being placed are the text encoder's ("
                + ("a loading frame" if x.frame_loading else "ComfyUI's partial load" if x.partial_load else f"source line: {x.src_line}")
                + ")", hint=True),
    R("text-encoder", 2.2, lambda x: x.loading_cause == "text-encoder", "ComfyUI was loading {model} (a {part_loading}) when it failed", hint=True),
    R("text-encoder", 3.0, lambda x: sdcpp_part(x) == "text-encoder",
      lambda x: f"stable-diffusion.cpp sized the {x.f['sdcpp_part']} graph's compute buffer last: the text encoder "
                "(--clip-on-cpu keeps it in RAM)"),
    R("text-encoder", 1.2, lambda x: (x.te_resident or 0) >= GiB,
      "text encoder still in VRAM during the failure: {te_names} ({te_resident:b})", hint=True),
]
