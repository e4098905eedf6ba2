"""The fix a guide would give is already in the launch line (aud68c #10).

Why: ComfyUI printing "Set vram state to: LOW_VRAM" (or --lowvram among the log's arguments; the Stable Diffusion
WebUI's "Launching Web UI with arguments: --lowvram ...") has partial loading on already, so "add --lowvram" repeats
what failed; the guide skips it and goes to the next step. Under --directml, --novram is no further step: ComfyUI
keeps lowvram_available False for DirectML (comfy/model_management.py:103 in 0.8.0) and only --lowvram sets it True
(lines 394-396), so NO_VRAM is never applied (lines 408-410)."""


def params(f) -> dict:
    """lowvram_already: the log's process runs with --lowvram (or ComfyUI's LOW_VRAM / NO_VRAM state)."""
    on = "--lowvram" in (f.get("args") or ()) or f.get("vram_state") in ("LOW_VRAM", "NO_VRAM")
    return {"lowvram_already": True} if on else {}
