"""fix66d: audit aud66b's triage READING findings (issue 14), each checked against the runtime's own source.

1. (finding 7) comfy-aimdo's lines, as its source (Comfy-Org/comfy-aimdo: src/vrambuf.c, comfy_aimdo/vram_buffer.py,
   model_vbar.py, model_mmap.py, src-posix/model-mmap.c) prints them: "VRAM Allocation failed (OOM)" after eviction is a
   real shortage (the stage decides), "(non OOM)" the driver's refusal; "VBAR OOM" the VBAR's own range overrun;
   "ModelMMAP allocation failed for FILE" the model file's mapping, not pinned RAM. The logs are written from those
   strings (the auditor's src8_* logs: numbers kept, paths rewritten)."""
from support.triage_event import top

# a ComfyUI run with Dynamic VRAM: the model staged, sampling started, then aimdo's line and the Python raise
_HEAD = ("got prompt\nModel WAN21 prepared for dynamic VRAM loading. 13621MB Staged. 0 patches attached.\n"
         "  0%|          | 0/20 [00:00<?, ?it/s]\n")
_TRACE = ("Traceback (most recent call last):\n"
          '  File "/srv/comfy/execution.py", line 510, in execute\n'
          "    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj, input_data_all)\n"
          '  File "/srv/comfy/env/lib/python3.12/site-packages/comfy_aimdo/{mod}.py", line {line}, in {func}\n'
          "    raise {raised}\n{exc}\n")


def _aimdo(aimdo_line, message, exc, mod="vram_buffer", line=49, func="get", raised="RuntimeError(...)"):
    return (_HEAD + (aimdo_line + "\n" if aimdo_line else "") + "!!! Exception during processing !!! " + message + "\n"
            + _TRACE.format(mod=mod, line=line, func=func, raised=raised, exc=exc))


def _evidence(ev, cause):
    return " ".join(e for c in ev["causes"] if c["id"] == cause for e in c["evidence"])


# 1. (finding 7) src/vrambuf.c: "(OOM)" at INFO after vbars_free: the card is full with the evictable weights gone
def test_aimdo_oom_after_eviction_is_a_shortage_read_by_stage():
    text = _aimdo("aimdo: src/vrambuf.c:90:INFO:VRAM Allocation failed (OOM)", "VRAM grow failed: 4429185024 bytes",
                  "RuntimeError: VRAM grow failed: 4429185024 bytes")
    cause, conf, ev = top(text)
    assert cause == "activations", conf          # sampling had started: the phase clue at its full weight
    assert "failed to map weights" not in _evidence(ev, "other")
    assert ev["guide"]["id"] != "comfyui-dynamic-vram"
    assert ev["numbers"]["requested"] == 4429185024


def test_aimdo_non_oom_stays_the_drivers_refusal():
    text = _aimdo("aimdo: src/vrambuf.c:60:ERROR:VRAM Allocation failed (non OOM)", "VRAM grow failed: 4429185024 bytes",
                  "RuntimeError: VRAM grow failed: 4429185024 bytes")
    cause, conf, ev = top(text)
    assert cause == "other", conf
    assert "failed to map weights" in _evidence(ev, "other")
    assert ev["guide"]["id"] == "comfyui-dynamic-vram"


# comfy_aimdo/model_vbar.py ModelVBAR.alloc: offset + size past max_size raises MemoryError("VBAR OOM")
def test_vbar_oom_is_the_vbars_own_range_not_the_card():
    text = _aimdo(None, "VBAR OOM", "MemoryError: VBAR OOM", mod="model_vbar", line=78, func="alloc",
                  raised='MemoryError("VBAR OOM")')
    cause, conf, ev = top(text)
    assert cause == "other", conf
    said = _evidence(ev, "other")
    assert "VBAR OOM" in said and "reserved" in said and "failed to map weights" not in said
    assert ev["guide"]["id"] == "comfyui-aimdo-vbar-size"


# comfy_aimdo/model_mmap.py: model_mmap_allocate returned NULL (open, fstat, size or mmap of the file failed)
def test_model_mmap_failure_is_the_model_file_not_pinned_ram():
    path = "/srv/comfy/models/diffusion_models/wan2.2_t2v_14B_fp8.safetensors"
    text = _aimdo(None, "ModelMMAP allocation failed for " + path, "RuntimeError: ModelMMAP allocation failed for " + path,
                  mod="model_mmap", line=50, func="__init__")
    cause, conf, ev = top(text)
    assert cause == "other", conf                # was host-ram: read with the pinned host buffer's lines
    assert "host-ram" not in conf
    said = _evidence(ev, "other")
    assert "model file" in said and "wan2.2_t2v_14B_fp8.safetensors" in said
    assert ev["guide"]["id"] == "comfyui-aimdo-model-file"
