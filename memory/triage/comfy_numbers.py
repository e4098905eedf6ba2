"""(aud67b #8) The figures ComfyUI printed itself, added to a ComfyUI event's numbers where the message gave none:
the card's total from the error report's Devices section ("VRAM Total", bytes) or the start-up line ("Total VRAM N MB");
the report's "VRAM Free" as `free_current` (measured when the report was written, after the failure: never `free`,
the moment of failure); and for a failure in host RAM (host-ram first, or the pinned-buffer kind) the start-up
line's "total RAM" (`host_total`) and "Enabled pinned memory N" (`pinned_limit`, ComfyUI's cap on page-locked RAM).
Added after the ranking (engine._event_dict): the causes are decided without them.
(rev67d F1) Those card figures are the main device's: none for a failure on another card (comfy_devices), and never a
"free now" above the card's total. (F2) The start-up figures are the failing session's: by line, the last printed
before the failure (engine.vllm_setting), not the log's last (a restart on another card)."""
from . import comfy_devices

HOST_KINDS = ("comfy.pinned_host",)
# a crash, not a memory failure (native_abort.py): no card figures (tests/unit/test_triage_tri82.py)
NOT_MEMORY_KINDS = ("python.native_abort",)


def add(numbers: dict, facts: dict, runtime: str, device_kind: str, kind: str, top: str, at: int = 0, until=None,
        device_index=None) -> None:
    """Fill `numbers` in place (setdefault: a figure the message stated wins). `at`, `until`: the failure's line and the
    next failure's; `device_index`: the GPU the message named."""
    if runtime != "comfyui":
        return
    report = facts.get("comfy_report_vram") or {}
    if kind in NOT_MEMORY_KINDS:
        return
    from .engine import vllm_setting        # (lazy: engine imports this module) the by-line reading vLLM's settings use
    main = comfy_devices.main_index(facts, at, until, vllm_setting)
    vram, ram = vllm_setting(facts.get("comfy_startup_at") or {}, at, until) or (None, None)
    if device_kind in ("cuda", "rocm") and not comfy_devices.elsewhere(facts, device_index, main):
        total = report.get("total") or vram
        if total and "device_limit" not in numbers:     # cudaMallocAsync's limit is the card already (case.async_card)
            numbers.setdefault("total", total)
        if report.get("free") is not None and report["free"] <= (numbers.get("total") or report["free"]):
            numbers.setdefault("free_current", report["free"])
    if top == "host-ram" or kind in HOST_KINDS:
        if ram:
            numbers.setdefault("host_total", ram)
        if facts.get("comfy_pinned_max"):
            numbers.setdefault("pinned_limit", facts["comfy_pinned_max"])
