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


# 2. (findings 1, 2) vLLM's "should fit" (issue 14 class 7), modelled on vllm-project/vllm#31273 (vLLM 0.13.0 serving
# Qwen2.5-72B-Instruct with --quantization fp8 on a 140 GB H20 fails at load; 0.12.0 loaded it): the numbers are the
# thread's, the paths rewritten
_P = "(EngineCore_DP0 pid=556790) "
_VLLM_FP8 = (
    "$ vllm serve Qwen/Qwen2.5-72B-Instruct --quantization fp8 --max-model-len 32768\n"
    "(APIServer pid=556512) INFO 12-24 08:49:02 [api_server.py:1772] vLLM API server version 0.13.0\n"
    + _P + "INFO 12-24 08:49:20 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with config: model='Qwen/Qwen2.5-72B-Instruct', "
    "tokenizer='Qwen/Qwen2.5-72B-Instruct', trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=32768, load_format=auto, "
    "tensor_parallel_size=1, pipeline_parallel_size=1, quantization=fp8, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda\n"
    + _P + "INFO 12-24 08:49:31 [gpu_model_runner.py:3459] Starting to load model Qwen/Qwen2.5-72B-Instruct...\n"
    + _P + "ERROR 12-24 08:50:35 [core.py:866] EngineCore failed to start.\n"
    + _P + "ERROR 12-24 08:50:35 [core.py:866] Traceback (most recent call last):\n"
    + _P + 'ERROR 12-24 08:50:35 [core.py:866]   File "/srv/venv/site-packages/vllm/model_executor/layers/quantization/fp8.py", '
    "line 402, in process_weights_after_loading\n"
    + _P + "ERROR 12-24 08:50:35 [core.py:866]     qweight, weight_scale = ops.scaled_fp8_quant(layer.weight, scale=None)\n"
    + _P + 'ERROR 12-24 08:50:35 [core.py:866]   File "/srv/venv/site-packages/vllm/_custom_ops.py", line 1580, in scaled_fp8_quant\n'
    "{source}"
    + _P + "ERROR 12-24 08:50:35 [core.py:866] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB. GPU 0 has a "
    "total capacity of 139.72 GiB of which 60.69 MiB is free. Process 691170 has 139.65 GiB memory in use. Of the allocated memory "
    "139.21 GiB is allocated by PyTorch, and 12.81 MiB is reserved by PyTorch but unallocated.\n")
_SOURCE = _P + "ERROR 12-24 08:50:35 [core.py:866]     output = torch.empty(shape, device=input.device, dtype=out_dtype)\n"


def test_vllm_dtype_is_the_engine_configs_not_a_traceback_source_line():
    from gpu_garden.memory.triage.fact_patterns import FACTS
    fact = dict(FACTS)["vllm_dtype"]
    assert fact.search(_SOURCE) is None
    config = _VLLM_FP8.splitlines()[2]
    assert (lambda m: m.group(1) or m.group(2))(fact.search(config)) == "bfloat16"
    assert fact.search("vllm serve m --dtype half").group(2) == "half"


def _should_fit(text):
    cause, conf, ev = top(text)
    return cause, conf, _evidence(ev, "other")


def test_vllm_fp8_load_reads_should_fit_at_the_quantized_size():
    # 72.7 B parameters at 1 byte (fp8) are about 68 GiB, + 10 GiB of KV at 32768 tokens (80 layers x 8 KV heads x 128 x
    # 2 x 2 bytes a token): far under 80 % of 0.9 x 139.72 GiB. At 2 bytes a parameter (135 GiB) it would not fit.
    for source in ("", _SOURCE):           # the source line under the frame no longer hides the engine config's dtype
        cause, conf, said = _should_fit(_VLLM_FP8.format(source=source))
        assert cause == "other", (source, conf)
        assert "should fit" in said and "regression" in said and "vLLM 0.13.0" in said, said
        weights = float(said.split("should fit: ")[1].split(" GiB")[0])
        assert 60 < weights < 80, said


# 3. (finding 6) Apple MPS, modelled on Comfy-Org/ComfyUI#7440 (MPS allocated 9.57 GiB, other allocations 17.35 GiB, max
# allowed 27.20 GiB, 292.50 MiB asked while sampling): other allocations outweigh PyTorch's own, memory this process holds
# outside PyTorch's allocator (issue 14; docs/triage-causes.md other-process). A sampler's attention frame under the
# message no longer turns it into activations; the MPS guide then says to restart the process and close other apps.
_MPS = ("MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to "
        "allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
        "allocations (may cause system failure).")
_MPS_COMFY = ("got prompt\n  0%|          | 0/20 [00:00<?, ?it/s]\n!!! Exception during processing !!! " + _MPS + "\n"
              "Traceback (most recent call last):\n"
              '  File "/Users/me/comfy/execution.py", line 327, in execute\n'
              "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
              '  File "/Users/me/comfy/comfy/samplers.py", line 1050, in sample\n'
              "    output = executor.execute(noise, latent_image, sampler, sigmas, denoise_mask, callback, disable_pbar, seed)\n"
              '  File "/Users/me/comfy/comfy/ldm/modules/attention.py", line 329, in attention_sub_quad\n'
              "    hidden_states = efficient_dot_product_attention(\n"
              "RuntimeError: " + _MPS + "\n\nPrompt executed in 48.91 seconds\n")


def test_mps_other_allocations_over_pytorchs_hold_with_a_traceback():
    cause, conf, ev = top(_MPS_COMFY)
    assert cause == "other-process", conf
    assert conf["other-process"] > conf.get("activations", 0), conf
    cause_bare, _, _ = top(_MPS + "\n")
    assert cause_bare == "other-process"          # the message alone read so before; the frame no longer flips it


def test_mps_guide_says_what_other_allocations_are_only_when_they_lead():
    _, _, ev = top(_MPS_COMFY)
    md = ev["guide"]["markdown"]
    assert ev["guide"]["id"] == "mps-memory"
    assert "Restart the process" in md and "outside PyTorch" in md      # (fix66g: not other apps, test_triage_fix66g)
    # PyTorch's own allocations the larger part (ComfyUI#8984's 15.72 GiB against 2.41 MiB): no such paragraph
    own = _MPS_COMFY.replace("9.57 GiB, other allocations: 17.35 GiB", "15.72 GiB, other allocations: 2.41 MiB")
    _, _, ev2 = top(own)
    assert "Restart the process" not in ev2["guide"]["markdown"]


# 4. (finding 9) a wrapper's block swap, from kijai/ComfyUI-WanVideoWrapper's own lines (wanvideo/modules/model.py:
# block_swap prints "Swapping N transformer blocks" and the "Initializing block swap" bar, later builds "Non-blocking memory
# transfer: <bool>"; forward moves each block back with block.to(self.main_device, non_blocking=self.use_non_blocking)). A
# bare "CUDA error: out of memory" there is page-locked host RAM (issue 14 class 6), with or without the summary line. The
# log is the auditor's Wan 2.1 1.3B run (30 blocks, 20 swapped, 81 frames at 832x480), paths rewritten.
def _wan(summary):
    return ("got prompt\nin_channels:  16\nModel type: t2v, num_heads: 12, num_layers: 30\nmodel_type FLOW\n"
            "Seq len: 32760\nSwapping 20 transformer blocks\n"
            "Initializing block swap: 100%|██████████| 30/30 [00:00<00:00, 545.15it/s]\n" + summary
            + "NUM_FRAMES: 21\nSampling 81 frames at 832x480 with 25 steps\n  0%|          | 0/25 [00:00<?, ?it/s]\n"
            "!!! Exception during processing !!! CUDA error: out of memory\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n\n"
            "Traceback (most recent call last):\n"
            '  File "D:\\comfy\\execution.py", line 327, in execute\n'
            "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
            '  File "D:\\comfy\\custom_nodes\\ComfyUI-WanVideoWrapper\\nodes.py", line 1402, in process\n'
            "    noise_pred_cond = model(\n"
            '  File "D:\\comfy\\custom_nodes\\ComfyUI-WanVideoWrapper\\wanvideo\\modules\\model.py", line 1104, in forward\n'
            "    block.to(self.main_device, non_blocking=self.use_non_blocking)\n"
            "RuntimeError: CUDA error: out of memory\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n")


_SUMMARY = ("Block swap memory summary:\nTransformer blocks on cpu: 1012.07MB\nTransformer blocks on cuda:0: 506.03MB\n"
            "Total memory used by transformer blocks: 1518.10MB\nNon-blocking memory transfer: {}\n")


def test_block_swap_with_non_blocking_moves_reads_pinned_host_ram():
    for summary in (_SUMMARY.format("True"),):      # (fix66g: the move's source line is printed whatever the setting)
        cause, conf, ev = top(_wan(summary))
        assert cause == "host-ram", (summary, conf)
        said = _evidence(ev, "host-ram")
        assert "pinned host transfers" in said, said
        assert ev["guide"]["id"] == "comfyui-pinned-memory"


def test_block_swap_printed_blocking_is_not_the_pinned_reading():
    _, conf, ev = top(_wan(_SUMMARY.format("False")))
    assert "pinned host transfers" not in _evidence(ev, "host-ram"), conf


# 5. (finding 11) Windows sysmem fallback, modelled on instantX-research/InstantID#72 (a GTX 1050 4 GB; the pipeline's
# .cuda() fails on 14.00 MiB with 6.97 GiB allocated by PyTorch and 184.73 MiB reserved but unallocated): PyTorch holds more
# than the card, the driver spilled into shared memory, and the slack rows of fragmentation no longer decide against it.
_SYSMEM = ("(venv) PS D:\\apps\\InstantID> python gradio_demo\\app.py\n"
           "Loading pipeline components...: 100%|██████████| 7/7 [00:03<00:00,  2.10it/s]\n"
           "Traceback (most recent call last):\n"
           '  File "D:\\apps\\InstantID\\gradio_demo\\app.py", line 95, in <module>\n    pipe.cuda()\n'
           '  File "D:\\apps\\InstantID\\venv\\lib\\site-packages\\diffusers\\pipelines\\pipeline_utils.py", line 418, in to\n'
           "    module.to(device, dtype)\n"
           '  File "D:\\apps\\InstantID\\venv\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1158, in convert\n'
           "    return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)\n"
           "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 14.00 MiB. GPU 0 has a total capacity of 4.00 GiB "
           "of which 0 bytes is free. Of the allocated memory {alloc} is allocated by PyTorch, and 184.73 MiB is reserved by "
           "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")


def test_sysmem_fallback_is_not_read_as_fragmentation():
    cause, conf, ev = top(_SYSMEM.format(alloc="6.97 GiB"))
    assert cause == "weights-exceed-vram", conf
    assert "sysmem fallback" in _evidence(ev, "weights-exceed-vram")
    assert conf.get("fragmentation", 0) < 0.25, conf          # was 42 %, beside weights' 43 % (the sliver row, 1.4, stays)
