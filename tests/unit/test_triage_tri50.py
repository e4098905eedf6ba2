"""Triage tri50 (batch 656's oMLX miss, after first sight). Lines written by hand from oMLX's scheduler format strings
(_format_rejection_message, _preflight_safety_rejection), not copies of the corpus case: the prefill estimate's binding
ceilings (static, dynamic, metal_cap, joined by "/", effective) with the limit each advice prints, and the preflight
safety cap's line (current + KV + min-chunk transient over a fraction of the effective ceiling)."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.units import GiB, MiB


def _gib(x):
    return int(round(x * GiB))


def _conf(ev):
    return {c["id"]: c["confidence"] for c in ev["causes"]}


SAFETY = ("Error: Prefill context too large for available memory (preflight safety guard, kv_len=120000, min_chunk=64): "
          "predicted peak would require ~{peak} (current {cur} + KV {kv} + min-chunk transient 256.00 MB) but prefill safety "
          "cap is {cap}{tail}. Reduce context length, free system memory, or loosen memory_guard_tier (safe → balanced → aggressive).\n")


def test_the_safety_cap_is_an_oom_refusal_with_its_numbers_and_reads_the_contexts_cache():
    res, ev = last_event(SAFETY.format(peak="41.25 GB", cur="40.00 GB", kv="1.00 GB", cap="41.00 GB",
                                       tail=" (85% of effective ceiling 48.24 GB)"))
    assert (ev["kind"], ev.get("form"), ev["runtime"], ev["device_kind"]) == ("mlx.ceiling", "safety", "mlx", "metal"), ev
    assert ev["numbers"] == {"required": _gib(41.25), "allocated": _gib(40), "requested": _gib(1), "max_allowed": _gib(41),
                             "limit": _gib(48.24)}, ev["numbers"]
    conf = _conf(ev)
    # no smaller chunk helps: the prompt's cache leads; the guard's KV figure is the runner-up; not the chunk's activations
    assert res["cause"] == "kv-cache" and 0 < conf["other"] < conf["kv-cache"] and "activations" not in conf, conf


def test_the_safety_cap_without_its_ceiling_clause_gives_no_limit():
    _, ev = last_event(SAFETY.format(peak="9.50 GB", cur="8.00 GB", kv="900.00 MB", cap="9.00 GB", tail=""))
    assert ev.get("form") == "safety" and "limit" not in ev["numbers"], ev["numbers"]
    assert ev["numbers"]["requested"] == 900 * MiB, ev["numbers"]


def test_held_memory_alone_over_the_safety_cap_is_the_model_not_the_context():
    res, ev = last_event(SAFETY.format(peak="30.40 GB", cur="29.50 GB", kv="640.00 MB", cap="28.80 GB",
                                       tail=" (90% of effective ceiling 32.00 GB)"))
    assert res["cause"] == "weights-exceed-vram" and "kv-cache" not in _conf(ev), _conf(ev)


ESTIMATE = "Prefill would require ~70.00 GB peak (current 30.00 GB + KV+SDPA 40.00 GB) but {binding} ceiling is 50.00 GB. {advice}.\n"


@pytest.mark.parametrize("binding,advice,limit", [
    ("static", "Reduce context length or raise memory_guard_tier (safe → balanced → aggressive)", None),
    ("effective", "Reduce context length or raise memory_guard_tier (safe → balanced → aggressive)", None),
    ("metal_cap", "Raise kernel iogpu.wired_limit_mb in Terminal (currently caps Metal at 50.00 GB), or reduce context length", 50),
    ("static/metal_cap", "Raise kernel iogpu.wired_limit_mb in Terminal (currently caps Metal at 50.00 GB), or reduce context length", 50),
])
def test_every_binding_ceiling_of_the_prefill_estimate_is_recognised(binding, advice, limit):
    res, ev = last_event(ESTIMATE.format(binding=binding, advice=advice))
    assert ev["kind"] == "mlx.ceiling" and ev.get("form") == "preflight", ev["kind"]
    n = ev["numbers"]
    assert (n["required"], n["allocated"], n["requested"], n["max_allowed"]) == (_gib(70), _gib(30), _gib(40), _gib(50)), n
    assert n.get("limit") == (_gib(limit) if limit else None), n
    assert res["cause"] == "other", ev["causes"][:2]


def test_metal_caps_binding_names_the_wired_limit_in_the_evidence():
    _, ev = last_event(ESTIMATE.format(binding="metal_cap", advice="Raise kernel iogpu.wired_limit_mb in Terminal (currently "
                                                                   "caps Metal at 50.00 GB), or reduce context length"))
    assert "iogpu.wired_limit_mb" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


def test_a_dynamic_ceiling_under_the_static_cap_names_other_apps_as_the_runner_up():
    res, ev = last_event(ESTIMATE.format(binding="dynamic", advice="Close other apps to free RAM (static cap is 64.00 GB but "
                                         "only 20.00 GB is reclaimable right now), raise memory_guard_tier (safe → balanced → "
                                         "aggressive), or reduce context length"))
    n, conf = ev["numbers"], _conf(ev)
    assert (n["limit"], n["free"]) == (_gib(64), _gib(20)), n
    assert res["cause"] == "other" and 0 < conf["other-process"] < conf["other"], conf


def test_a_pinned_custom_ceiling_gets_no_other_apps_reading():
    _, ev = last_event(ESTIMATE.format(binding="dynamic", advice="Raise custom_ceiling_bytes in admin Memory settings "
                                       "(currently pinned at 60.00 GB), or reduce context length"))
    assert "other-process" not in _conf(ev) and "free" not in ev["numbers"], ev["numbers"]
    assert "custom_ceiling_bytes" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


# --- NVML's not-available process figure (WDDM under WSL2) --------------------------------------------------------------
# PyTorch's 2.1+ CUDA message as a Linux build prints it, with the processes NVML lists; 17179869184.00 GiB is format_size of
# NVML_VALUE_NOT_AVAILABLE (ULLONG_MAX), what NVML gives for a process's memory under WDDM. Numbers made up.
NA = "17179869184.00 GiB"
CUDA_MSG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of 15.60 GiB of "
            "which {free} is free. {procs}Of the allocated memory {alloc} is allocated by PyTorch, and 12.00 MiB is reserved "
            "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
FRAME = ('Traceback (most recent call last):\n'
         '  File "/opt/app/.venv/lib/python3.11/site-packages/diffusers/models/attention.py", line 210, in forward\n')


def _procs(fig):
    return f"Process 4242 has {fig} memory in use. Including non-PyTorch memory, this process has {fig} memory in use. "


def test_processes_listed_with_nvmls_not_available_figure_are_wsl_and_the_system_commit():
    res, ev = last_event(FRAME + CUDA_MSG.format(req="64.00 MiB", free="11.20 GiB", procs=_procs(NA), alloc="3.10 GiB"))
    ids = {c["id"] for c in ev["causes"]}
    assert res["cause"] == "host-ram" and "other-process" not in ids, ev["causes"][:2]
    assert "WSL" in ev["causes"][0]["evidence"][0] and ".wslconfig" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


def test_the_not_available_figure_is_no_memory_other_programs_hold():
    # a request the card cannot hold, PyTorch holding the rest: not the commit reading (free does not cover it), and the
    # not-available figure is no other program's memory
    res, ev = last_event(FRAME + CUDA_MSG.format(req="6.00 GiB", free="1.20 GiB", procs=_procs(NA), alloc="13.90 GiB"))
    assert "other-process" not in {c["id"] for c in ev["causes"]} and res["cause"] != "host-ram", ev["causes"][:2]


def test_a_real_process_figure_on_the_same_log_keeps_the_drivers_refusal():
    res, ev = last_event(FRAME + CUDA_MSG.format(req="64.00 MiB", free="11.20 GiB", procs=_procs("1.30 GiB"), alloc="3.10 GiB"))
    assert res["cause"] != "host-ram", ev["causes"][:2]


def test_the_safety_cap_gets_its_own_guide_and_the_estimate_keeps_its():
    _, ev = last_event(SAFETY.format(peak="41.25 GB", cur="40.00 GB", kv="1.00 GB", cap="41.00 GB", tail=""))
    assert ev["guide"]["id"] == "mlx-memory-guard-safety" and "smallest" in ev["guide"]["title"], ev["guide"]["id"]
    _, ev = last_event(ESTIMATE.format(binding="static", advice="Reduce context length"))
    assert ev["guide"]["id"] == "mlx-memory-guard", ev["guide"]["id"]
