"""Triage after batches 83-84 (first sight recorded at e0f2ebe: 2/6 and 3/3). Lines written from the runtimes' own message
formats (VideoHelperSuite's load_video_nodes.py, SGLang's scheduler message, vLLM's cumem allocator and its wake_up frames),
numbers and wording of the prose made up, expected values by hand.

Round 83 (task tune83: batches 239, 242-246, 266 and 267 on, after first sight; the tests below the round-83 line), written
from the runtimes' own message formats, each quoted cut where the corpus's write-ups cut it:
- Windows' message for ERROR_COMMITMENT_LIMIT (1455; FormatMessage: "The paging file is too small for this operation to
  complete."), as Python's OSError and Rust's std::io::Error carry it, cut after "too small" where the message starts (a
  line's start, after "OSError: ", after "] ", after Rust's 'message: "'): other_patterns.PAGING.
- MLX's Metal error ("[METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallback
  ErrorOutOfMemory)", mlx/backend/metal) cut before Metal's code: other_patterns.METAL.
- XLA's TPU compile-time refusal ("Ran out of memory in memory space hbm. Used <n>G of <n>G hbm.") cut after its memory
  space: xla_runtimes.XLA_TPU, without its figures.
- ggml's CPU backend ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size %zu", its one message)
  cut after "failed": servers.GGML_BUFFER_CUT.
- PyTorch's DataLoader line ("DataLoader worker (pid N) is killed by signal: Bus error.") quoted without its pid:
  native_runtimes.DATALOADER_SHM.
- the kernel's OOM-kill line (mm/oom_kill.c: "Killed process <pid> (<comm>) total-vm:<n>kB, anon-rss:<n>kB, ...") quoted
  with anon-rss and without total-vm: other_patterns.KILLED reads anon-rss, KiB, as the process's.
- vLLM's start-up check ("Free memory on device xpu:0 (18.00/28.00 GiB) on startup is less than desired GPU memory
  utilization (0.7, 19.60 GiB).", worker/*_worker.py) names torch's device: its type is the device kind (xpu, npu; cuda
  as before).
- TensorFlow's convolution kernels' "Failed to get convolution algorithm. This is probably because cuDNN failed to
  initialize, ..." names TensorFlow (runtime_markers); the stream executor's "could not create cudnn handle" alone does not.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""


from gpu_garden.memory.triage import engine as triage
from support.triage_event import last_event as _head  # (result, the headline event)
from support.triage_event import kinds as _kinds, read as _read, top
from support.regex_time import cpu_limit, cpu_now

GiB = 1024 ** 3


def test_vhs_load_video_memory_guard_is_host_ram():
    """VideoHelperSuite's Load Video sizes the frames it decodes against psutil's free system RAM (available + free swap) and
    raises its own RuntimeError when the video has more (Kosinkadink/ComfyUI-VideoHelperSuite#236), or refuses a Meta Batch
    larger than what fits: host RAM, on the CPU, ComfyUI's; the guide is the frame-count one."""
    for line, frames in (("Error occurred when executing VHS_LoadVideo: Memory limit hit after loading 812 frames. Stopping execution.\n", 812),
                         ("RuntimeError: Meta Batch set to 600 frames but only 415 can fit in memory\n", 600)):
        cause, conf, ev = top(line)
        assert cause == "host-ram", (line, ev["causes"])
        assert (ev["runtime"], ev["device_kind"]) == ("comfyui", "cpu"), (ev["runtime"], ev["device_kind"])
        assert ev["guide"]["id"] == "comfyui-vhs-frames", ev["guide"]["id"]
        assert f"{frames} frames" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]
    # the guard's words without its numbers are no failure of it
    cause, _, ev = top("Error occurred when executing VHS_LoadVideo: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert ev["guide"]["id"] != "comfyui-vhs-frames"


def test_sglang_pool_refusal_with_room_by_its_own_count_is_its_accounting():
    """SGLang's scheduler message prints the tokens it tried to place and the pool's free plus evictable slots ("Avaliable"
    in its early spelling, sgl-project/sglang#4602 with --page-size 64). A count that covers the request means the slots were
    there: the paged pool's accounting refused it (PR 4913 fixed the scheduler's page estimate), other, with the KV pool the
    runner-up and the accounting guide. Short of the request it stays the KV cache."""
    log = ("RuntimeError: Decode out of memory. Try to lower your batch size.\nTry to allocate 96 tokens.\n"
           "Avaliable tokens: 1536\nself.token_to_kv_pool_allocator.available_size()=1536\nself.tree_cache.evictable_size()=0\n")
    cause, conf, ev = top(log)
    assert cause == "other", ev["causes"]
    assert [c["id"] for c in ev["causes"][:2]] == ["other", "kv-cache"], ev["causes"]
    assert ev["numbers"] == {"requested_tokens": 96, "available_tokens": 1536}, ev["numbers"]
    assert ev["guide"]["id"] == "sglang-pool-accounting", ev["guide"]["id"]
    assert "1536" in ev["causes"][0]["evidence"][0]
    cause, _, ev = top(log.replace("1536", "64"))
    assert cause == "kv-cache" and ev["guide"]["id"] == "sglang-serving", (ev["causes"], ev["guide"]["id"])
    # the hybrid (SWA) pools print two counts: neither is this pool's, so nothing is read as room
    cause, _, ev = top("Prefill out of memory. Try to lower your batch size.\nTry to allocate 8192 tokens.\n"
                       "Available full tokens: 899840 (full_available_size=11776 + full_evictable_size_=888064)\n")
    assert cause == "kv-cache" and "available_tokens" not in ev["numbers"], (ev["causes"], ev["numbers"])


WAKE = ('  File "/opt/venv/lib/python3.11/site-packages/vllm/device_allocator/cumem.py", line 231, in wake_up\n'
        "    create_and_map(handle)\n"
        '  File "/opt/venv/lib/python3.11/site-packages/vllm/device_allocator/cumem.py", line 78, in create_and_map\n'
        "    python_create_and_map(*allocation_handle)\n"
        "RuntimeError: CUDA Error: {err} at /workspace/csrc/cumem_allocator.cpp:62\n")


def test_vllm_cumem_out_of_memory_in_wake_up_is_whoever_took_the_card_meanwhile():
    """vLLM's sleep() releases every cumem allocation and wake_up() maps each again at the same size (cumem.py): running out
    there means another user of the card took the memory while vLLM slept, in RL the colocated trainer (TideDra/lmm-r1#43:
    a lower vLLM memory share fixed it): other-process, with the sleep-wake guide. The same line with no wake_up frame, or
    a driver call refused in wake_up (not out of memory), keeps its reading."""
    cause, _, ev = top("(LLMRayActor pid=5120) " + WAKE.format(err="out of memory").replace("\n  File", "\n(LLMRayActor pid=5120)   File"))
    assert cause == "other-process", ev["causes"]
    assert ev["runtime"] == "vllm" and ev["guide"]["id"] == "vllm-sleep-wake", (ev["runtime"], ev["guide"]["id"])
    cause, _, ev = top(WAKE.format(err="out of memory"))
    assert cause == "other-process", ev["causes"]
    cause, _, ev = top("RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n")
    assert cause != "other-process", ev["causes"]
    cause, _, ev = top(WAKE.format(err="invalid argument"))
    assert cause == "other", ev["causes"]


# --- round 83 (task tune83) ------------------------------------------------------------------------------------------

def test_oserror_cut_after_too_small_is_the_commit_limit():
    assert _read("OSError: The paging file is too small\n") == ("host-ram", "os.paging_file", "pytorch", "cpu", {})


def test_winerror_and_rust_io_error_cut_after_too_small_are_the_commit_limit():
    for text in ("OSError: [WinError 1455] The paging file is too small\n",
                 'Error: Os { code: 1455, kind: Uncategorized, message: "The paging file is too small\n',
                 "  The paging file is too small\n"):
        assert _read(text)[:2] == ("host-ram", "os.paging_file"), text


def test_whole_paging_message_reads_as_before():
    text = "OSError: The paging file is too small for this operation to complete. (os error 1455)\n"
    assert _read(text) == ("host-ram", "os.paging_file", "pytorch", "cpu", {})


def test_paging_words_inside_a_sentence_are_prose():
    # lower case, or after a full stop inside a sentence: a note about the page file, not Windows' message
    for text in ("I raised it because the paging file is too small on this laptop\n",
                 "Windows was slow. The paging file is too small on this laptop, I think\n"):
        assert "os.paging_file" not in _kinds(text), text


def test_mlx_metal_error_cut_before_metal_s_code_is_mlx_s_metal_oom():
    for text in ("[METAL] Command buffer execution failed: Insufficient Memory\n",
                 "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
                 "execution failed: Insufficient Memory\n"):
        res, ev = _head(text)
        assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("metal.oom", "mlx", "metal"), text


def test_another_metal_command_buffer_error_is_not_out_of_memory():
    assert "metal.oom" not in _kinds("[METAL] Command buffer execution failed: Internal Error (0000000e:Internal Error)\n")


def test_xla_tpu_compile_refusal_cut_after_its_memory_space():
    text = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm\n"
    res, ev = _head(text)
    assert (res["cause"], ev["kind"], ev["form"], ev["runtime"], ev["device_kind"], ev["numbers"]) == \
        ("activations", "xla.oom", "compile", "jax", "tpu", {})


def test_xla_tpu_compile_refusal_with_its_figures_reads_them_as_before():
    text = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
            "memory space hbm. Used 20.00G of 16.00G hbm. Exceeded hbm capacity by 4.00G.\n")
    res, ev = _head(text)
    assert (ev["form"], ev["numbers"]) == ("compile", {"required": 20 * GiB, "total": 16 * GiB})


def test_xla_tpu_scratch_refusal_cut_after_its_memory_space_is_the_kernel_s():
    res, ev = _head("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem\n")
    assert (res["cause"], ev["kind"], ev["form"], ev["numbers"]) == ("other", "xla.oom", "scratch", {})


def test_ggml_cpu_backend_line_cut_after_failed_is_host_ram():
    for text in ("ggml_backend_cpu_buffer_type_alloc_buffer: failed\n",
                 "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer\n"):
        assert _read(text) == ("host-ram", "ggml.buffer", "llama.cpp", "cpu", {}), text


def test_ggml_cpu_backend_whole_line_reads_its_size_as_before():
    text = "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 4294967296\n"
    assert _read(text) == ("host-ram", "ggml.buffer", "llama.cpp", "cpu", {"requested": 4294967296})


def test_ggml_cpu_backend_name_with_more_words_after_failed_is_not_the_cut_line():
    assert "ggml.buffer" not in _kinds("ggml_backend_cpu_buffer_type_alloc_buffer: failed twice on the old build, see above\n")


def test_dataloader_bus_error_quoted_without_its_pid_is_shared_memory():
    for text in ("DataLoader worker killed by signal: Bus error\n",
                 "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's "
                 "workers are out of shared memory. Please try to raise your shared memory limit.\n"):
        assert _read(text) == ("host-ram", "os.shm", "pytorch", "cpu", {}), text


def test_kernel_kill_line_without_total_vm_reads_anon_rss():
    text = "dmesg: Out of memory: Killed process 4242 (python3) anon-rss:1048576kB\n"
    assert _read(text) == ("host-ram", "os.oom_killer", "pytorch", "cpu", {"this_process": GiB})


def test_kernel_kill_line_with_total_vm_reads_anon_rss_as_before():
    text = ("Out of memory: Killed process 4242 (python3) total-vm:4194304kB, anon-rss:2097152kB, file-rss:0kB, "
            "shmem-rss:0kB, UID:1000 pgtables:8192kB oom_score_adj:0\n")
    assert _read(text)[4] == {"this_process": 2 * GiB}


def test_tensorflow_conv_kernel_message_names_tensorflow():
    text = ("2026-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn handle: "
            "CUDNN_STATUS_ALLOC_FAILED\n"
            "tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is probably because "
            "cuDNN failed to initialize, so try looking to see if a warning log message was printed above.\n")
    res, ev = _head(text)
    assert (ev["runtime"], ev["device_kind"]) == ("tensorflow", "cuda")
    text = "could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED\nFailed to get convolution algorithm. This is probably because cuDNN failed to initialize\n"
    assert _head(text)[1]["runtime"] == "tensorflow"


def test_the_cudnn_handle_line_alone_names_no_tensorflow():
    # XLA's stream executor (JAX) prints the same words
    res, ev = _head("could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED\n")
    assert ev["runtime"] != "tensorflow"


def test_vllm_startup_check_on_xpu_names_the_xpu():
    text = ("ValueError: Free memory on device xpu:0 (18.00/28.00 GiB) on startup is less than desired GPU memory utilization "
            "(0.7, 19.60 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")
    res, ev = _head(text)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("vllm.startup_free", "vllm", "xpu")
    assert (ev["numbers"]["free"], ev["numbers"]["total"]) == (18 * GiB, 28 * GiB)


def test_vllm_startup_check_on_cuda_stays_cuda():
    text = ("ValueError: Free memory on device cuda:0 (2.00/24.00 GiB) on startup is less than desired GPU memory utilization "
            "(0.9, 21.60 GiB).\n")
    res, ev = _head(text)
    assert (ev["device_kind"], ev["numbers"]["free"], ev["numbers"]["total"]) == ("cuda", 2 * GiB, 24 * GiB)


def test_round_83_forms_stay_linear():
    for line in ("The paging file is too small" * 20000, ": " * 40000 + "The paging file is too", "[METAL] " * 20000,
                 "Ran out of memory in memory space " * 5000 + "hbm", "ggml_backend_cpu_buffer_type_alloc_buffer: " * 5000 + "failed x",
                 "DataLoader worker " * 10000 + "killed by signal: Bus", "Out of memory: Killed process 1 (" + "x" * 50000 + ") anon-rss:1kB",
                 "Failed to get convolution algorithm. " * 5000):
        t = cpu_now()
        triage.triage_text(line + "\n")
        assert cpu_now() - t < cpu_limit(5.0)
