"""fix66g: review rev66c's findings on fix66d (triage readings, issue 14). The logs are written from each runtime's own
source and printed strings (the reviewer's repro logs: numbers kept, paths rewritten)."""
import time

from support.triage_event import top


def _evidence(ev, cause):
    return " ".join(e for c in ev["causes"] if c["id"] == cause for e in c["evidence"])


def _said(text):
    cause, conf, ev = top(text)
    return cause, conf, " ".join(e for c in ev["causes"] for e in c["evidence"])


# 1. vLLM's "should fit" (issue 14 class 7)
def _config(model, quant="fp8", dtype="torch.bfloat16", maxlen=32768, version="0.6.3.post1"):
    return (f"INFO 10-21 09:12:09 llm_engine.py:237] Initializing an LLM engine (v{version}) with config: model='{model}', "
            f"speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
            f"trust_remote_code=False, dtype={dtype}, max_seq_len={maxlen}, download_dir=None, load_format=LoadFormat.AUTO, "
            f"tensor_parallel_size=1, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization={quant}, "
            f"enforce_eager=False, kv_cache_dtype=auto, quantization_param_path=None, device_config=cuda\n")


def _oom(req, total, free, inuse, alloc, unalloc):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} "
            f"of which {free} is free. Including non-PyTorch memory, this process has {inuse} memory in use. Of the "
            f"allocated memory {alloc} is allocated by PyTorch, and {unalloc} is reserved by PyTorch but unallocated.\n")


# (a) vllm/model_executor/layers/quantization/fp8.py: Fp8LinearMethod.create_weights makes the weights in params_dtype when
# the checkpoint is not fp8-serialised (process_weights_after_loading converts them): Mixtral-8x7B (46.7 B) loads at 87 GiB
_MIXTRAL = "mistralai/Mixtral-8x7B-Instruct-v0.1"
_FP8_ONLINE = (
    f"$ vllm serve {_MIXTRAL} --quantization fp8 --max-model-len 32768\n"
    "INFO 10-21 09:12:01 api_server.py:528] vLLM API server version 0.6.3.post1\n" + _config(_MIXTRAL)
    + f"INFO 10-21 09:12:12 model_runner.py:1056] Starting to load model {_MIXTRAL}...\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/venv/lib/python3.11/site-packages/vllm/model_executor/layers/quantization/fp8.py", line 171, in create_weights\n'
    "    weight = ModelWeightParameter(data=torch.empty(\n"
    + _oom("270.00 MiB", "79.19 GiB", "155.06 MiB", "79.03 GiB", "78.61 GiB", "11.52 MiB"))


def test_fp8_in_flight_on_a_16bit_checkpoint_is_sized_at_its_16bit_load():
    cause, conf, said = _said(_FP8_ONLINE)
    assert "should fit" not in said, said          # was: "should fit: 43.7 GiB of weights ... a regression" (1 byte)
    assert cause != "other", conf
    assert "half precision" in _evidence(top(_FP8_ONLINE)[2], "weights-exceed-vram")
    # a checkpoint already in fp8 (its name says so) loads at 1 byte: no 16-bit load to size
    from gpu_garden.memory.triage import vllm_quant
    from gpu_garden.memory.llm import kv
    f = {"vllm_wflags": {"quant": "fp8"}}
    assert vllm_quant.precision(f, _MIXTRAL, kv.describe(model=_MIXTRAL)) == (None, "fp8")
    fp8_name = "neuralmagic/Mixtral-8x7B-Instruct-v0.1-FP8"
    assert vllm_quant.precision(f, fp8_name, kv.describe(model=fp8_name)) == ("fp8", "fp8")


# (b) an offline script's LLM(..., dtype=torch.float32): the weights at 4 bytes, not the half precision the plan sizes
_QWEN14 = "Qwen/Qwen2.5-14B-Instruct"
_OFFLINE = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/proj/run_eval.py", line 12, in <module>\n'
    f'    llm = LLM(model="{_QWEN14}", dtype={{dtype}}, max_model_len=4096)\n'
    '  File "/home/u/venv/lib/python3.11/site-packages/vllm/entrypoints/llm.py", line 177, in __init__\n'
    "    self.llm_engine = LLMEngine.from_engine_args(\n"
    '  File "/home/u/venv/lib/python3.11/site-packages/vllm/model_executor/model_loader/loader.py", line 403, in load_model\n'
    "    model = _initialize_model(vllm_config=vllm_config)\n"
    '  File "/home/u/venv/lib/python3.11/site-packages/vllm/model_executor/layers/linear.py", line 388, in create_weights\n'
    "    weight = Parameter(torch.empty(sum(output_partition_sizes),\n"
    + _oom("520.00 MiB", "47.53 GiB", "301.06 MiB", "47.22 GiB", "46.91 GiB", "13.52 MiB"))


def test_offline_llm_call_dtype_float32_blocks_the_half_precision_verdict():
    for dtype in ("torch.float32", '"float32"'):
        cause, conf, said = _said(_OFFLINE.format(dtype=dtype))
        assert "should fit" not in said, (dtype, said)     # was "should fit: 27.5 GiB of weights" (2 bytes)
        assert cause != "other", conf
    from gpu_garden.memory.triage.fact_patterns import FACTS
    fact = dict(FACTS)["vllm_dtype"]
    assert fact.search('llm = LLM(model="m", dtype="float32")').group(1) == "float32"
    assert fact.search("engine = AsyncLLM(model, dtype=torch.float32)") is None     # not the offline constructor


# (c) a --quantization from an earlier run does not stick to a later one (vLLM's engine config prints quantization=None)
_QWEN72 = "Qwen/Qwen2.5-72B-Instruct"
_V1 = "(EngineCore_DP0 pid={pid}) INFO 12-24 08:49:20 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with config: " \
      f"model='{_QWEN72}', tokenizer='{_QWEN72}', trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=32768, " \
      "load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1, quantization={quant}, enforce_eager=False, " \
      "kv_cache_dtype=auto, device_config=cuda\n"


def _run(quant, fails):
    flag = " --quantization fp8" if quant == "fp8" else ""
    p = "(EngineCore_DP0 pid=612000) "
    text = (f"$ vllm serve {_QWEN72}{flag} --max-model-len 32768\n"
            "(APIServer pid=611800) INFO 12-24 08:49:02 [api_server.py:1772] vLLM API server version 0.13.0\n"
            + _V1.format(pid=612000, quant=quant)
            + p + f"INFO 12-24 08:49:31 [gpu_model_runner.py:3459] Starting to load model {_QWEN72}...\n")
    if fails:
        return text + (p + "ERROR 12-24 09:20:35 [core.py:866] EngineCore failed to start.\n"
                       + p + "ERROR 12-24 09:20:35 [core.py:866] Traceback (most recent call last):\n"
                       + p + 'ERROR 12-24 09:20:35 [core.py:866]   File "/srv/venv/site-packages/vllm/model_executor/models/qwen2.py", '
                       "line 402, in load_weights\n"
                       + p + "ERROR 12-24 09:20:35 [core.py:866] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                       "464.00 MiB. GPU 0 has a total capacity of 139.72 GiB of which 300.69 MiB is free. Process 691170 has "
                       "139.41 GiB memory in use. Of the allocated memory 138.91 GiB is allocated by PyTorch, and 12.81 MiB "
                       "is reserved by PyTorch but unallocated.\n")
    return text + (p + "INFO 12-24 08:51:10 [gpu_model_runner.py:3549] Model loading took 71.21 GiB memory and 98.2 seconds\n"
                   "(APIServer pid=611800) INFO:     Application startup complete.\n^C\n")


def test_an_earlier_runs_quantization_does_not_size_a_later_run():
    for text in (_run("fp8", False) + _run("None", True),      # fp8 run, then a bf16 run that fails
                 _run("None", True) + _run("fp8", False)):     # a bf16 run fails, a later fp8 run loads
        cause, conf, said = _said(text)
        assert "should fit" not in said, said      # was "should fit: 70.0 GiB of weights" (the fp8 run's 1 byte)
        assert cause != "other", conf
    cause, conf, said = _said(_run("fp8", True))   # the fp8 run's own failure keeps fix66d's verdict
    assert "should fit" in said and cause == "other", conf


def test_a_later_runs_quantization_none_read_back_from_the_window_resets_the_flag():
    # past the log's head (512 KiB) the bf16 run's engine config is read back from the failure's window, not streamed: it
    # still counts for this failure (its quantization=None placed just before it)
    filler = "".join(f"INFO 12-24 08:5{i % 10}:00 [metrics.py:12] heartbeat ok\n" for i in range(30000))
    cause, conf, said = _said(_run("fp8", False) + filler + _run("None", True))
    assert "should fit" not in said, said
    assert cause != "other", conf


# (d) bitsandbytes: 8-bit when the name says 8bit/int8, 4-bit when it says 4bit, else no size
def test_bitsandbytes_is_sized_by_the_bits_the_name_says():
    name = "unsloth/Llama-3.3-70B-Instruct-bnb-8bit"
    text = (f"$ vllm serve {name} --quantization bitsandbytes --load-format bitsandbytes --max-model-len 8192\n"
            "INFO 01-10 10:00:01 api_server.py:528] vLLM API server version 0.6.6.post1\n"
            + _config(name, quant="bitsandbytes", maxlen=8192, version="0.6.6.post1")
            + f"INFO 01-10 10:00:12 model_runner.py:1094] Starting to load model {name}...\n"
            "INFO 01-10 10:00:13 loader.py:1078] Loading weights with BitsAndBytes quantization.  May take a while ...\n"
            "Traceback (most recent call last):\n"
            '  File "/srv/venv/lib/python3.12/site-packages/vllm/model_executor/model_loader/loader.py", line 1032, in _load_weights\n'
            "    model.load_weights(qweight_iterator)\n"
            + _oom("448.00 MiB", "79.22 GiB", "301.06 MiB", "78.91 GiB", "78.12 GiB", "291.55 MiB"))
    cause, conf, said = _said(text)
    assert "should fit" not in said, said          # was "should fit: 39.8 GiB of weights" (4-bit)
    assert cause != "other", conf
    from gpu_garden.memory.triage import vllm_quant
    f = {"vllm_wflags": {"quant": "bitsandbytes"}}
    assert vllm_quant.precision(f, "unsloth/Llama-3.3-70B-Instruct-bnb-8bit", None) == ("int8", "int8")
    assert vllm_quant.precision(f, "org/Llama-3.3-70B-Instruct-int8", None) == ("int8", "int8")
    assert vllm_quant.precision(f, "unsloth/Llama-3.3-70B-Instruct-bnb-4bit", None) == ("bnb-4bit", "bnb-4bit")
    assert vllm_quant.precision(f, "meta-llama/Llama-3.3-70B-Instruct", None)[1] is False
    # (the weights over the card even at the least bitsandbytes makes of them: 4-bit, test_triage_fix18c)
    assert vllm_quant.precision(f, "meta-llama/Llama-3.3-70B-Instruct", None, least=True)[1] == "bnb-4bit"


# 2. vllm_dtype is linear in the line: fix66d's lazy "with config: .{0,4000}?" took 82 s on 10 MB of "with config: "
def test_vllm_dtype_fact_is_linear_on_a_line_of_anchors():
    from gpu_garden.memory.triage.fact_patterns import FACTS
    fact = dict(FACTS)["vllm_dtype"]
    for line in ("with config: " * 80000, "LLM(" * 250000, "--dtype" * 150000, ("with config: " + "x" * 3990) * 250):
        t0 = time.perf_counter()
        assert fact.search(line) is None
        assert time.perf_counter() - t0 < 0.5, line[:20]       # (the old pattern: about 8 s on the first)


# 3. Windows sysmem fallback drops fragmentation's slack rows only when PyTorch's ALLOCATED memory passes the card: reserved
# is allocated plus the slack itself (6.91 GiB + 2.47 GiB on an 8 GiB card)
_WIN_SLACK = (
    "(venv) PS D:\\apps\\sd> python gen.py --width 1536 --height 1536\n"
    "Traceback (most recent call last):\n"
    '  File "D:\\apps\\sd\\venv\\lib\\site-packages\\diffusers\\models\\attention_processor.py", line 1204, in __call__\n'
    "    hidden_states = F.scaled_dot_product_attention(query, key, value)\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 180.00 MiB. GPU 0 has a total capacity of 8.00 GiB "
    "of which 0 bytes is free. Of the allocated memory {alloc} is allocated by PyTorch, and {slack} is reserved by "
    "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")


def test_reserved_alone_over_the_card_keeps_the_slack_reading():
    cause, conf, _ = top(_WIN_SLACK.format(alloc="6.91 GiB", slack="2.47 GiB"))
    assert cause == "fragmentation", conf              # was activations 29 % / weights-exceed-vram 28 %
    # allocated itself over the card (the driver spilled the weights): the slack rows stay out, as fix66d made them
    cause, conf, _ = top(_WIN_SLACK.format(alloc="9.10 GiB", slack="2.47 GiB"))
    assert cause != "fragmentation", conf


# 4. WanVideoWrapper's block swap: the move's source line `non_blocking=self.use_non_blocking` is printed whatever the
# setting (the node's default is False); only "Non-blocking memory transfer: True" says the moves pin host RAM
def test_block_swap_source_line_alone_is_not_non_blocking():
    from test_triage_fix66d import _SUMMARY, _wan
    _, conf, ev = top(_wan(""))
    assert "non-blocking" not in _evidence(ev, "host-ram"), conf   # was "block swap of 20 ... with non-blocking transfers"
    cause, conf, ev = top(_wan(_SUMMARY.format("True")))
    assert cause == "host-ram" and "pinned host transfers" in _evidence(ev, "host-ram"), conf


# 5. Apple MPS: "other allocations" are this process's Metal allocations outside PyTorch's allocator (MPSAllocator.mm:
# currentAllocatedSize + size > limit, both this process's), so closing other apps cannot lower them; and a request that
# alone cannot fit beside PyTorch's own (allocated + requested over the limit) is the request's size
def test_mps_request_that_alone_cannot_fit_is_not_held_outside():
    from test_triage_fix66d import _MPS_COMFY
    big = _MPS_COMFY.replace("9.57 GiB, other allocations: 17.35 GiB", "4.00 GiB, other allocations: 9.00 GiB").replace(
        "Tried to allocate 292.50 MiB", "Tried to allocate 24.00 GiB")
    cause, conf, ev = top(big)
    assert cause == "activations" and "other-process" not in conf, conf    # was other-process 44 % beside activations 46 %
    assert "When \"other allocations\"" not in ev["guide"]["markdown"]
    cause, conf, ev = top(_MPS_COMFY)                                        # fix66d's case keeps its reading
    assert cause == "other-process", conf


def test_mps_guide_does_not_send_the_user_to_close_other_apps_for_this_process_memory():
    from test_triage_fix66d import _MPS_COMFY
    md = top(_MPS_COMFY)[2]["guide"]["markdown"]
    para = md[md.index('When "other allocations"'):md.index("Fix 1")]
    assert "Restart the process" in para and "MPSGraph" in para
    assert "Close other" not in para and "share the same unified memory" not in para, para
    assert "what macOS needs" not in md          # the mechanism: this process's Metal allocations, not the system's


# 6. comfy-aimdo: a bare "VRAM grow failed" (comfy_aimdo/vram_buffer.py raises it after an out-of-memory too) is not "the
# driver refused": only aimdo's "(non OOM)" / "(error)" line says so. ModelMMAP: model-mmap.c fails only on a size <= 0
# (posix) and maps any non-empty file (win); model_mmap.py encodes the path UTF-8 for CreateFileA (non-ASCII paths fail)
def test_bare_vram_grow_failed_does_not_say_the_driver_refused():
    from test_triage_fix66d import _aimdo
    grow = ("VRAM grow failed: 4429185024 bytes", "RuntimeError: VRAM grow failed: 4429185024 bytes")
    cause, conf, ev = top(_aimdo(None, *grow))
    said = _evidence(ev, "other")
    assert "failed to map weights" in said and "the driver refused the mapping" not in said and "no aimdo line says" in said, said
    cause, conf, ev = top(_aimdo("aimdo: src/vrambuf.c:60:ERROR:VRAM Allocation failed (non OOM)", *grow))
    assert "the driver refused the mapping" in _evidence(ev, "other"), conf


def test_model_mmap_names_the_windows_non_ascii_path_not_a_truncated_file():
    from test_triage_fix66d import _aimdo
    path = "D:\\AI绘画\\ComfyUI\\models\\diffusion_models\\wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors"
    cause, conf, ev = top(_aimdo(None, "ModelMMAP allocation failed for " + path,
                                 "RuntimeError: ModelMMAP allocation failed for " + path, mod="model_mmap", line=50,
                                 func="__init__"))
    said = _evidence(ev, "other")
    assert cause == "other" and "non-ASCII" in said and "truncated" not in said, said
    md = ev["guide"]["markdown"]
    assert "CreateFileA" in md and "non-ASCII" in md and "truncated" not in md and "short" not in md


# 7. should_fit: a --quantization method kv has no size for gives no verdict (should_fit.py `if wdt is False`), rather
# than one at half precision: Qwen2.5-7B at 2 bytes would fit the 139.72 GiB card many times over
def test_a_quantization_kv_cannot_size_gives_no_should_fit():
    from test_triage_fix66d import _VLLM_FP8
    base = _VLLM_FP8.format(source="").replace("Qwen2.5-72B", "Qwen2.5-7B")
    cause, conf, said = _said(base)
    assert "should fit" in said, said            # the control: fp8, sized by kv
    cause, conf, said = _said(base.replace("quantization fp8", "quantization hqq").replace("quantization=fp8", "quantization=hqq"))
    assert "should fit" not in said, said
