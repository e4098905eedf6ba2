"""The Comfy Compiler (ComfyUI 2026, PR 15861: comfy-aimdo's memory compiler with CUDA graphs on top). Its failure,
comfy_aimdo/malloc_graph.py's "aimdo memory compile error", is an allocation pattern the compiler cannot plan, not a
lack of memory, and has its own guide; its per-run summary ("Comfy model compiler graph breaks: N, rogues: M") is read as
a fact. Logs are modelled on named public threads (numbers as reported, paths and prose rewritten)."""
from gpu_garden.memory.triage import facts, parse
from gpu_garden.memory.triage.lines import facts as line_facts
from support.triage_event import last_event as _ev

# Comfy-Org/ComfyUI#16342 (MiniMax H3 on one RTX 5090, ComfyUI 0.35.2, comfy-aimdo 0.5.3; --disable-comfy-compiler runs it)
START = ('  File "C:/ComfyUI/comfy/model_prefetch.py", line 171, in malloc_graph_begin\n'
         "    graph = comfy_aimdo.malloc_graph.record(\n"
         '  File "C:/ComfyUI/python_embeded/Lib/site-packages/comfy_aimdo/malloc_graph.py", line 96, in record\n'
         '    raise RuntimeError("aimdo memory compile error: could not start recording")\n'
         "RuntimeError: aimdo memory compile error: could not start recording\n")
# LynnReal-AI/LynnReal-Omni#5 (fused DiT blocks allocating inside the recorded forward; fixed in the node pack)
ROGUES = ("[INFO] Model WAN21 prepared for dynamic VRAM loading. 13627MB Staged. 0 patches attached.\n"
          "[INFO] Comfy model compiler graph breaks: 0, rogues: 12\n"
          "[ERROR] !!! Exception during processing !!! aimdo memory compile error\n"
          "Traceback (most recent call last):\n"
          '  File "C:/Comfy/python_embeded/Lib/site-packages/comfy_aimdo/malloc_graph.py", line 16, in _call\n'
          '    raise RuntimeError("aimdo memory compile error")\n'
          "RuntimeError: aimdo memory compile error\n\n"
          "[INFO] Prompt executed in 6.41 seconds\n")
# Comfy-Org/ComfyUI#16144 (a 24 GB RTX 4090, a sparse-attention node allocating outside the compiler's pause: 156 and 199
# graph breaks, then an OOM of 1.36 GiB with 2.82 GiB free; 12 and 9 breaks once the allocation moved)
FLOOD = ("Comfy model compiler graph breaks: 156\n"
         "Prompt executed in 412.80 seconds\n"
         "got prompt\n"
         "Comfy model compiler graph breaks: 199\n"
         "!!! Exception during processing !!! Allocation on device\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.36 GiB. GPU 0 has a total capacity of 23.99 GiB "
         "of which 2.82 GiB is free. Of the allocated memory 19.10 GiB is allocated by PyTorch, and 1.05 GiB is reserved by "
         "PyTorch but unallocated.\n"
         "Got an OOM, unloading all loaded models.\n")
# the same OOM after a healthy run (ComfyUI#16180's regression tests report 0-3 breaks on ComfyUI's own models)
CALM = FLOOD.replace("graph breaks: 156", "graph breaks: 3").replace("graph breaks: 199", "graph breaks: 2")


def test_compile_error_is_the_compiler_not_dynamic_vram_mapping():
    ev = parse.recognise("RuntimeError: aimdo memory compile error")
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("comfy.compiler", "comfyui", "cuda")
    # the OOM panel captures it (the capture's check), with and without the start detail
    assert parse.is_oom_error("RuntimeError", "aimdo memory compile error: could not start recording")
    # the Dynamic VRAM messages keep their own kind
    assert parse.recognise("RuntimeError: VRAM Allocation failed (non OOM)")["kind"] == "comfy.dynamic_vram"


def test_could_not_start_recording_names_the_start_and_the_flag():
    res, ev = _ev(START)
    assert res["cause"] == "other" and ev["kind"] == "comfy.compiler" and ev["runtime"] == "comfyui"
    top = ev["causes"][0]
    assert top["confidence"] >= 0.9
    assert "could not start recording" in top["evidence"][0] and "--disable-comfy-compiler" in top["evidence"][0]
    assert ev["guide"]["id"] == "comfyui-compiler"
    assert "--disable-comfy-compiler" in ev["guide"]["markdown"]


def test_rogue_count_from_the_summary_line_is_in_the_evidence():
    res, ev = _ev(ROGUES)
    assert res["cause"] == "other" and ev["guide"]["id"] == "comfyui-compiler"
    assert "0 graph breaks and 12 rogue allocations" in ev["causes"][0]["evidence"][0]


def test_summary_line_both_forms_and_the_largest_run_kept():
    found = dict(line_facts("[INFO] Comfy model compiler graph breaks: 21"))
    assert found["compiler_stats"].group(1) == "21" and found["compiler_stats"].group(2) is None
    f = facts.new_facts()
    for line in ("Comfy model compiler graph breaks: 156", "Comfy model compiler graph breaks: 9, rogues: 4"):
        name, m = next((n, m) for n, m in line_facts(line) if n == "compiler_stats")
        facts.HANDLERS[name](None, f, m)
    assert f["compiler"] == (156, 4) and f["dynamic_vram"] and f["comfy"]


def test_oom_after_a_graph_break_flood_points_at_the_compiler():
    res, ev = _ev(FLOOD)
    assert res["cause"] == "other"
    rows = [r for c in ev["causes"] if c["id"] == "other" for r in c["evidence"]]
    assert any("199 graph breaks" in r for r in rows)
    assert ev["guide"]["id"] == "comfyui-compiler"


def test_a_healthy_compiler_summary_changes_nothing():
    calm, ev = _ev(CALM)
    assert not any("graph breaks" in r for c in ev["causes"] for r in c["evidence"])
    assert ev["guide"]["id"] != "comfyui-compiler"
