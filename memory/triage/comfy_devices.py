"""(rev67d F1, F2) Which card ComfyUI's own figures are for, so comfy_numbers adds them only to a failure on that card.

ComfyUI's start-up line "Total VRAM N MB, total RAM M MB" and its error report's Devices section are the main device's
only (host ComfyUI 0.8.0 model_management.py get_total_memory(get_torch_device()); server.py:602 lists
get_torch_device() alone). A custom node that loads on another card (ComfyUI-MultiGPU: "CLIP/text encoder model load
device: cuda:1") or torch's message naming "GPU 1" is a failure elsewhere: no figure of cuda:0's is its card's.

facts "comfy_device": {"report": N (the first report's `- **Name:** cuda:N`), "load": {N: line} (every `load device:
cuda:N`), "main_at": {line: N} (the start-up `Device: cuda:N`, by line: a restart on another card is another session)}.
"""
import re

FACT = ("comfy_device", re.compile(r"^\s{0,8}- \*\*Name:\*\* (?:cuda|xpu):(\d{1,2})\b|\bload device: (?:cuda|xpu):(\d{1,2})\b"
                                   r"|\bDevice: (?:cuda|xpu):(\d{1,2})\b"))
FACT_WORDS = ("**Name:** ", "load device: ", "Device: ")


def handler(kept):
    """facts.py's handler; `kept`: facts._kept (the by-line store every fact kept by line uses)."""
    def read(s, f, m, text, lineno, window):
        d = f.setdefault("comfy_device", {"load": {}, "main_at": {}})
        if m.group(1) is not None:
            d.setdefault("report", int(m.group(1)))
        elif m.group(2) is not None:
            d["load"].setdefault(int(m.group(2)), lineno)
        else:
            kept(d["main_at"], s._lineno - 0.5 if window else lineno, int(m.group(3)))
    return read


def main_index(facts: dict, at: int, until, setting) -> int:
    """The card ComfyUI's figures are for: the report's cuda:N, else the start-up Device line's for the failure at line
    `at` (`setting`: engine.vllm_setting, the nearest before it), else 0 (--cuda-device renumbers the chosen card 0)."""
    d = facts.get("comfy_device") or {}
    if d.get("report") is not None:
        return d["report"]
    main = setting(d.get("main_at") or {}, at, until)
    return 0 if main is None else main


def elsewhere(facts: dict, device_index, main: int) -> bool:
    """The failure's card is not `main`: torch's message names another GPU, or (where it names none) the log loads a
    model on another card (fix67o, rev67j #1: a message naming the main card decides)."""
    loads = (facts.get("comfy_device") or {}).get("load") or {}
    return device_index != main if device_index is not None else any(n != main for n in loads)
