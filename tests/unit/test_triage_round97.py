"""Triage round 97 (task tune97: batches 424-428, 430-433, 438-440 and 442-451 after first sight), written from the runtimes' own
message formats:
- The kernel's OOM-killer line quoted with its pid and name elided ("Killed process ... python ... anon-rss:NkB"): host-ram,
  the victim's anonymous resident memory read as this_process.
- PyTorch's message quoted from its second sentence ("GPU 0 has a total capacity of T of which F is free." opening a line, or
  right after torch.OutOfMemoryError): PyTorch's, the total and free read, its next sentences on the lines after joined; a line
  that opens with the capacity but gives no free figure and no exception type is not it.
- PyTorch's message quoted a sentence a line after a program's own words ("Generation failed: CUDA out of memory. Tried to
  allocate N." then "GPU 0 has a total capacity ..."): the sentences joined with their blank, not glued as a width cut.
- The <= 2.0 bracket cut inside it after the capacity ("(GPU 0; 7.80 GiB total capacity; 6.45"): total read; the free figure
  the message lost is not taken for the card's (no "the driver refused it" from a guess).
- The sentences a quote keeps after its ellipsis ("... 89.06 GiB is allocated by PyTorch", "… 4.95 GiB allocated in private
  pools (e.g., CUDA Graphs)"): read.
- ROCm's XLA stream executor ("failed to allocate 154.06GiB (N bytes) from device: HIP_ERROR_OutOfMemory",
  xla/stream_executor/rocm/rocm_driver.cc): device rocm.
- vLLM's "No available memory for the cache blocks" with its flags in the log ("--gpu-memory-utilization 0.84 --max-model-len
  16384"): the fraction and the context read.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers)

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_kernel_kill_line_with_elided_pid_and_name():
    cause, kind, runtime, dev, nums = _read("[ 8123.456789] Killed process ... python3 ... anon-rss:20971520kB\n")
    assert (cause, kind, runtime, dev) == ("host-ram", "os.oom_killer", "pytorch", "cpu")
    assert nums == {"this_process": 20971520 * 1024}


def test_kernel_kill_line_with_pid_without_its_prefix():
    _, kind, _, _, nums = _read("Killed process 4242 (python) total-vm:31457280kB, anon-rss:10485760kB, file-rss:0kB\n")
    assert kind == "os.oom_killer" and nums == {"this_process": 10 * _GIB}


def test_capacity_sentence_opening_a_quote_with_the_process_after_it():
    cause, kind, runtime, dev, nums = _read("GPU 1 has a total capacity of 79.19 GiB of which 312.00 MiB is free.\n"
                                            "Process 51234 has 74.10 GiB memory in use.\n")
    assert (cause, kind, runtime, dev) == ("other-process", "torch.cuda", "pytorch", "cuda")
    assert {k: nums[k] for k in ("total", "free")} == {"total": round(79.19 * _GIB), "free": 312 * _MIB}


def test_capacity_sentence_after_the_exception_type_wrapped():
    _, kind, runtime, _, nums = _read("torch.OutOfMemoryError: GPU 0 has a total capacity of 94.50 GiB\n"
                                      "of which 20.00 MiB is free.  Tried to allocate 64.00 MiB.\n")
    assert (kind, runtime) == ("torch.cuda", "pytorch")
    assert nums == {"total": round(94.5 * _GIB), "free": 20 * _MIB, "requested": 64 * _MIB}


def test_capacity_alone_in_prose_is_not_the_message():
    # (trfix, review: the comma kept the regex from matching, so the guard went untested) a sentence the regex matches, and the
    # mostly free card's (20 of 24 GiB free, over predicates.SLIVER of it)
    assert "torch.cuda" not in _kinds("GPU 0 has a total capacity of 24 GiB, enough for the 7B model in bf16\n")
    assert "torch.cuda" not in _kinds("GPU 0 has a total capacity of 24 GiB.\n")
    assert "torch.cuda" not in _kinds("GPU 0 has a total capacity of 24 GiB of which 20 GiB is free.\n")


def test_message_a_sentence_a_line_after_a_programs_words():
    cause, kind, _, _, nums = _read("[Eval] Scoring the held-out documents...\n"
                                    "Generation failed: CUDA out of memory. Tried to allocate 256.00 MiB.\n"
                                    "GPU 0 has a total capacity of 23.64 GiB of which 120.50 MiB is free.\n"
                                    "Process 4321 has 1.10 GiB memory in use.\n"
                                    "Process 8765 has 21.80 GiB memory in use.\n")
    assert kind == "torch.cuda"
    assert {k: nums[k] for k in ("requested", "total", "free")} == {
        "requested": 256 * _MIB, "total": round(23.64 * _GIB), "free": round(120.5 * _MIB)}
    assert nums["other_processes"] == round(1.1 * _GIB) + round(21.8 * _GIB)


def test_old_bracket_cut_inside_after_the_capacity():
    cause, kind, _, dev, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 96.00 MiB (GPU 0; 3.95 GiB total capacity; 2.81\n")
    assert (kind, dev) == ("torch.cuda", "cuda")
    assert nums == {"requested": 96 * _MIB, "total": round(3.95 * _GIB)}
    assert cause != "other"     # 3.95 GiB is the card, not what was free: no refusal read from it


def test_sentences_kept_after_the_ellipsis():
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of 47.40 GiB ... "
                             "45.10 GiB is allocated by PyTorch\n")
    assert {k: nums[k] for k in ("requested", "total", "allocated")} == {
        "requested": 500 * _MIB, "total": round(47.4 * _GIB), "allocated": round(45.1 * _GIB)}
    _, _, _, _, nums = _read("Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.90 GiB is free \u2026 "
                             "6.25 GiB allocated in private pools (e.g., CUDA Graphs).\n")
    assert nums["private_pools"] == round(6.25 * _GIB) and nums["free"] == round(1.9 * _GIB)


def test_rocm_stream_executor_names_the_device():
    text = ("2024-05-01 10:00:00.000001: E external/xla/xla/stream_executor/rocm/rocm_driver.cc:1268] failed to allocate "
            "40.00GiB (42949672960 bytes) from device: HIP_ERROR_OutOfMemory\n"
            "2024-05-01 10:00:00.000002: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2732] Execution of replica 0 "
            "failed: RESOURCE_EXHAUSTED: Failed to allocate request for 40.00GiB (42949672960B) on device ordinal 0\n")
    _, _, runtime, dev, _ = _read(text)
    assert (runtime, dev) == ("jax", "rocm")


def test_vllm_no_cache_blocks_reads_its_flags():
    text = ("vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.72 --max-model-len 32768\n"
            "Model loading took 14.2 GiB memory\n"
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n")
    _, kind, runtime, _, nums = _read(text)
    assert (kind, runtime) == ("vllm.no_kv_blocks", "vllm")
    # (fix67a) and "Model loading took 14.2 GiB" under numbers' weights
    assert nums == {"gpu_memory_utilization_ratio": 0.72, "max_model_len_tokens": 32768, "weights": round(14.2 * _GIB)}


def test_kernel_kill_line_with_zero_anon_rss_gives_no_process_figure():
    """(review B4) the kernel prints anon-rss:0kB for a victim whose anonymous memory is gone or was never there (shmem,
    file-backed): still the OOM killer, but 0 bytes is not what the process held, so no this_process figure is stated."""
    cause, kind, runtime, dev, nums = _read("[ 99.000001] Out of memory: Killed process 77 (python3) total-vm:524288kB, "
                                            "anon-rss:0kB, file-rss:0kB, shmem-rss:8388608kB\n")
    assert (cause, kind, dev) == ("host-ram", "os.oom_killer", "cpu")
    assert "this_process" not in nums
    _, _, _, _, nums = _read("Killed process ... python ... anon-rss:0kB\n")
    assert "this_process" not in nums
