"""Triage fix-ups (review of rounds 17-18 and the guide changes): evidence that says what was seen, commands a user can
paste, the log's own slot and cache-dtype figures, written from the runtimes' own strings (hand-derived values in comments)."""
from support.cli_run import unwrap
from support.triage_event import last_event, top
from gpu_garden.memory.triage import engine

# PyTorch's caching-allocator message (c10/cuda/CUDACachingAllocator.cpp) under a script's forward pass: no backward or
# optimizer frame; 6.75 GiB reserved but unallocated against a 512 MiB request (13.5x)
TB = ('Traceback (most recent call last):\n'
      '  File "/home/u/proj/{script}", line 41, in <module>\n'
      '    loss = model(batch).loss\n'
      '  File "/home/u/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553, in _wrapped_call_impl\n'
      '    return self._call_impl(*args, **kwargs)\n'
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which '
      '301.06 MiB is free. Including non-PyTorch memory, this process has 23.33 GiB memory in use. Of the allocated memory 16.12 GiB '
      'is allocated by PyTorch, and 6.75 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try '
      'setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n')


def _training_evidence(text):
    _, ev = last_event(text)
    return [e for c in ev["causes"] for e in c.get("evidence", []) if "training run" in e]


def test_a_training_script_name_is_evidence_as_itself_not_as_a_backward_frame():
    # only the script's name (train.py) shows training: the evidence names it, and claims no backward/optimizer frame
    ev = _training_evidence(TB.format(script="train.py"))
    assert ev and "training script train.py on the stack" in ev[0], ev
    assert not any("backward" in e or "optimizer" in e for e in ev), ev


def test_a_backward_frame_is_named_as_the_frame():
    text = TB.format(script="run.py").replace(
        '  File "/home/u/venv/lib/python3.11/site-packages/torch/nn/modules/module.py"',
        '  File "/home/u/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 289, in backward\n'
        '    _engine_run_backward(\n'
        '  File "/home/u/venv/lib/python3.11/site-packages/torch/nn/modules/module.py"')
    ev = _training_evidence(text)
    assert ev and "backward() on the stack" in ev[0], ev


def test_without_a_training_sign_there_is_no_training_evidence():
    cause, conf, _ = top(TB.format(script="run.py"))
    assert not _training_evidence(TB.format(script="run.py")) and cause == "fragmentation", (cause, conf)


# vLLM 0.x (vllm/worker/worker.py raise_if_cache_size_invalid): the f16 cache holds 43328 tokens; the model wants 56000
VLLM_MAXLEN = ("ValueError: The model's max seq len (56000) is larger than the maximum number of tokens that can be stored in KV "
               "cache (43328). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n")


def _log_cmds(text):
    _, ev = last_event(text)
    return [c["text"] for c in ev["guide"]["commands"] if c["label"].startswith("From this log's numbers")]


def test_each_command_from_the_log_numbers_gives_a_flag_one_value():
    # f16: 43328 -> 43264 (256 steps); fp8: 2 x 43328 = 86656, past the model's 56000 -> 55808. Two commands, never
    # "--max-model-len 43264 ... --max-model-len 55808" in one
    cmds = _log_cmds(VLLM_MAXLEN)
    assert cmds == ["--max-model-len 43264", "--kv-cache-dtype fp8 --max-model-len 55808"], cmds
    assert all(c.count("--max-model-len") == 1 for c in cmds)


# vLLM V1 prints its engine config at start (config/vllm.py VllmConfig.__str__: "... kv_cache_dtype=fp8, device_config=cuda, ...");
# then, with that fp8 cache, 221000 tokens need 10.12 GiB against 5.59 GiB (vllm#25350's numbers; v1/core/kv_cache_utils.py)
VLLM_CONFIG = ("INFO 09-22 10:11:12 [core.py:76] Initializing a V1 LLM engine (v0.10.2) with config: model='Qwen/Qwen3-8B', "
               "dtype=torch.bfloat16, max_seq_len=221000, quantization=None, enforce_eager=False, kv_cache_dtype={dtype}, "
               "device_config=cuda, seed=0, served_model_name=Qwen/Qwen3-8B\n")
VLLM_FIT = ("ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is needed, "
            "which is larger than the available KV cache memory (5.59 GiB). Based on the available memory, the estimated maximum "
            "model length is 122080. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n")


def test_a_cache_already_fp8_is_not_told_fp8_doubles_the_room():
    _, ev = last_event(VLLM_CONFIG.format(dtype="fp8") + VLLM_FIT)
    g = ev["guide"]
    cmds = [c["text"] for c in g["commands"]]
    # 122080 -> 121856 (256 steps): the shorter context stays; no --kv-cache-dtype fp8 anywhere, no "twice"
    assert any("--max-model-len 121856" in c for c in cmds), cmds
    # (fix67g, rev67b F3) the log's own fp8 cache (its engine config line) is carried, once: no other cache type suggested
    assert all(c.count("--kv-cache-dtype") == 1 and "--kv-cache-dtype fp8 " in c for c in cmds if "vllm serve" in c), cmds
    assert "twice" not in g["markdown"] and "already 8-bit" in g["markdown"], g["markdown"]     # (fix67a) "8-bit", not "fp8 ... the smallest"
    assert not any("fp8" in s["text"] for s in ev.get("suggestions", [])), ev.get("suggestions")


def test_an_auto_cache_keeps_the_fp8_command():
    # the same log with kv_cache_dtype=auto: fp8 2 x 122080 = 244160, past the model's 221000 -> 220928
    cmds = [c["text"] for c in last_event(VLLM_CONFIG.format(dtype="auto") + VLLM_FIT)[1]["guide"]["commands"]]
    assert any("--kv-cache-dtype fp8 --max-model-len 220928" in c for c in cmds), cmds


# llama.cpp's llama_context lines (src/llama-context.cpp) for llama-server -np 20 -c 655360, then the cache allocation failing
# (ggml-cuda.cu, llama-kv-cache.cpp); no model buffers or free memory printed, so the guide halves -c
LLAMA_SLOTS = """llama_context: n_seq_max     = 20
llama_context: n_ctx         = 655360
llama_context: n_ctx_per_seq = 32768
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51200.00 MiB on device 0: cudaMalloc failed: out of memory
llama_kv_cache_unified: failed to allocate buffer for kv cache
"""


def test_llama_cpp_slots_are_read_and_the_guide_says_what_each_request_gets():
    _, ev = last_event(LLAMA_SLOTS)
    md = ev["guide"]["markdown"]
    # half of 655360 = 327680 shared by 20 slots: 16384 each; one slot keeps a request's 32768
    assert "-c 327680" in md and "20 parallel sequences" in md and "each request 16384 tokens" in md, md
    assert "-np 1 -c 32768" in md, md


def test_slots_from_the_context_per_sequence_alone():
    # no n_seq_max line: 655360 / n_ctx_per_seq 32768 = 20 slots
    _, ev = last_event(LLAMA_SLOTS.replace("llama_context: n_seq_max     = 20\n", ""))
    assert "-np 1 -c 32768" in ev["guide"]["markdown"]


def test_one_slot_says_nothing_of_slots():
    _, ev = last_event(LLAMA_SLOTS.replace("= 20\n", "= 1\n").replace("n_ctx_per_seq = 32768", "n_ctx_per_seq = 655360"))
    assert "-np 1 -c" not in ev["guide"]["markdown"] and "parallel sequences (" not in ev["guide"]["markdown"]


# Ollama's runner command line (llm/server.go) passes --parallel: the runner's 8192 cells are 4 slots of 2048
OLLAMA_RUNNER = ('time=2025-02-08T10:12:01.512Z level=INFO source=server.go:376 msg="starting llama server" cmd="/usr/bin/ollama '
                 'runner --model /m/blobs/sha256-0a1b --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --threads 8 --parallel 4 --port 40111"\n'
                 "llama_new_context_with_model: n_ctx      = 8192\n"
                 "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 0: cudaMalloc failed: out of memory\n"
                 "llama_kv_cache_init: failed to allocate buffer for kv cache\n")


def test_ollama_runner_parallel_is_the_slot_count():
    _, ev = last_event(OLLAMA_RUNNER)
    assert "num_ctx 2048 x 4 parallel" in ev["guide"]["markdown"], ev["guide"]["markdown"]


# llama.cpp's compute buffers failing after the cache (src/llama-context.cpp, ggml-alloc.c) with a 16384-token context
LLAMA_COMPUTE = """llama_context: n_ctx         = 16384
ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4294967296
llama_init_from_model: failed to initialize the context: failed to allocate compute buffers
"""
# the weights not fitting (ggml-backend.cpp / llama-model-loader.cpp): no offload count, no free memory printed
LLAMA_WEIGHTS = """ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9341.00 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 9794748416
llama_model_load: error loading model: unable to allocate CUDA0 buffer
"""


def test_llama_cpp_activations_guide_keeps_the_logs_context():
    _, ev = last_event(LLAMA_COMPUTE)
    g = ev["guide"]
    assert g["id"] == "llamacpp-activations", g["id"]
    cmd = next(c["text"] for c in g["commands"] if c["text"].startswith("llama-server"))
    assert "-c 16384 " in cmd and "-c 8192" not in cmd, cmd


def test_llama_cpp_weights_guide_says_when_ngl_is_a_placeholder():
    _, ev = last_event(LLAMA_WEIGHTS)
    g = ev["guide"]
    assert g["id"] == "llamacpp-weights", g["id"]
    cmd = next(c["text"] for c in g["commands"] if c["text"].startswith("llama-server"))
    # no layer count or free memory in the log: no number made up (was -ngl 20 -c 8192)
    assert "-ngl N -c CTX" in cmd and "-ngl 20" not in cmd, cmd
    assert "`-ngl N`: this log does not print enough" in g["markdown"], g["markdown"]


# PyTorch's MPS message (aten/src/ATen/mps/MPSAllocator.mm): 17.50 GB of an 18.13 GB limit held, 0.5 GB other, 64 MB asked
MPS = ("RuntimeError: MPS backend out of memory (MPS allocated: 17.50 GB, other allocations: 512.00 MB, max allowed: 18.13 GB). "
       "Tried to allocate 64.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
       "allocations (may cause system failure).\n")


def test_the_mps_rows_say_the_held_figure_once():
    _, ev = last_event(MPS)
    w = next(c for c in ev["causes"] if c["id"] == "weights-exceed-vram")
    # 17.50 GB held of 18.13 GB: both rows fire (>= 0.9 of the limit, 64 MB < 0.1 of it); the figure appears in one line
    held = [e for e in w["evidence"] if "17.50 GiB" in e]
    assert len(held) == 1 and any("PyTorch's own" in e for e in w["evidence"]), w["evidence"]


def test_the_cause_line_says_what_the_percentage_is():
    # weights 3.5 against activations 1.2: 3.5 / (4.7 + 0.75) = 0.64, under 0.7, and 0.22 is a third of it (under
    # rank.PAIR_RATIO): the first is only the likelier, each with its percentage
    out = engine.render_human(engine.triage_text(MPS))
    assert unwrap(out).splitlines()[0].startswith("Cause: uncertain: weights-exceed-vram? (activations also possible) - 64% and 22% "
                                          "confidence"), out


def test_fp8_length_for_a_short_log_is_not_rounded_to_zero():
    # vLLM estimated a maximum of 100 tokens: an fp8 cache holds twice that, 200 (under two 256-token steps it is kept
    # as it is, never rounded down to 0); the 16-bit figure stays the log's 100
    from gpu_garden.memory.triage import advice
    out = advice._vllm_fp8({"max_model_len": "100", "mml_from_log": "100"}, {}, {"vllm_kv_dtype": None, "vllm_maxlen": None})
    assert out["max_model_len_fp8"] == "200"
