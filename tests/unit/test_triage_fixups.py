"""Triage fix-ups (review of rounds 17-18 and the guide changes): evidence that says what was seen, commands a user can
paste, the log's own slot and cache-dtype figures, written from the runtimes' own strings (hand-derived values in comments)."""
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
