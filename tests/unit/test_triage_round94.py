"""Triage round 94 (task tune94: batches 390-403, 405 and 407 after first sight), written from the runtimes' own message formats:
- Kaldi's CUDA allocator refusing a region of its pool ("Failed to allocate a memory region of N bytes.  Possibly this is due to
  sharing the GPU. ...  Memory info: free:FM, used:UM, total:TM, ..."): a cudaMalloc of its own (cuda.driver, form kaldi_region),
  runtime kaldi, the request in bytes and free and total in MiB; free at least the request at that moment: another process took it.
- Marian's CUDA check ("Error: CUDA error 2 'out of memory' - <file>:<line>: cudaMalloc(&data_, size)"): its own cudaMalloc (form
  runtime_call), runtime marian; another wrapped call, form marian_check.
- Darknet's check ("CUDA Error: out of memory" ending its line, then "darknet: ./src/cuda.c:36: check_error: Assertion `0' failed."):
  a program's own CUDA call, the assertion line naming Darknet (runtime_markers).
- JavaCPP's physical-memory cap ("Physical memory usage is too high (N > Pointer.maxPhysicalBytes)", and the 1.4 form with
  formatBytes): host RAM, runtime java, the process's bytes read as used.
- Stable-Baselines3's replay-buffer warning ("... to store the complete replay buffer 14.10GB > 12.06GB"): host RAM, GB of 1e9.
- Host-memory killers: systemd's unit notice ("<unit>: A process of this unit has been killed by the OOM killer."), Celery's
  ("Worker exited prematurely: signal 9 (SIGKILL)"), Cloud Run's ("Container terminated on signal 9"), earlyoom's notice and
  kill line ("low memory! at or below SIGTERM limits", "sending SIGTERM to process N uid N "name": badness N, VmRSS N MiB").
- TensorFlow's "Graph execution error:" names the run TensorFlow's above PJRT's "RESOURCE_EXHAUSTED: Out of memory while trying
  to allocate" (a runtime marker).
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, last_event as _last, read as _read  # (cause, kind, runtime, device kind, numbers)

_MIB = 1024 ** 2
_KALDI = ("ERROR (nnet3-train[5.5]:AllocateNewRegion():cu-allocator.cc:519) Failed to allocate a memory region of {req} bytes.  "
          "Possibly this is due to sharing the GPU.  Try switching the GPUs to exclusive mode (nvidia-smi -c 3) and using the option "
          "--use-gpu=wait to scripts like steps/nnet3/chain/train.py.  Memory info: free:{free}M, used:{used}M, total:8000M, "
          "free/total:0.1\n")


def test_kaldi_region_refused_with_the_request_free_is_another_process():
    res, ev = _last(_KALDI.format(req=104857600, free=900, used=7100))
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == (
        "other-process", "cuda.driver", "kaldi", "cuda", "kaldi_region")
    assert ev["numbers"] == {"requested": 104857600, "free": 900 * _MIB, "total": 8000 * _MIB}


def test_kaldi_region_over_the_free_memory_is_not_read_as_another_process():
    res, ev = _last(_KALDI.format(req=104857600, free=20, used=7980))
    assert (ev["kind"], ev["runtime"]) == ("cuda.driver", "kaldi")
    assert res["cause"] != "other-process"


def test_kaldi_message_without_its_figures_reads_the_request():
    assert _read("Failed to allocate a memory region of 82837504 bytes.  Possibly this is due to sharing the GPU.\n")[1:] == (
        "cuda.driver", "kaldi", "cuda", {"requested": 82837504})


def test_marian_cuda_check_on_its_own_cudamalloc_is_the_programs_call():
    res, ev = _last("[2022-05-30 17:56:52] Error: CUDA error 2 'out of memory' - /opt/marian/src/tensors/gpu/device.cu:38: "
                    "cudaMalloc(&data_, size)\n")
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == (
        "activations", "cuda.driver", "marian", "cuda", "runtime_call")


def test_marian_cuda_check_on_another_call_is_not_the_programs_cudamalloc():
    res, ev = _last("Error: CUDA error 2 'out of memory' - /opt/marian/src/tensors/gpu/prod.cpp:120: cublasCreate(&handle)\n")
    assert (ev["runtime"], ev.get("form")) == ("marian", "marian_check")


def test_darknet_check_line_with_its_assertion_is_darknets_own_call():
    text = ("./darknet detector train data/obj.data cfg/yolo.cfg\nCUDA Error: out of memory\n"
            "darknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\nAborted (core dumped)\n")
    res, ev = _last(text)
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == (
        "activations", "cuda.driver", "darknet", "cuda", "runtime_call")


def test_cuda_error_words_inside_an_exception_are_not_darknets_check():
    assert "cuda.driver" not in _kinds("RuntimeError: CUDA Error: out of memory\n")


def test_javacpp_physical_cap_is_host_ram_in_both_forms():
    assert _read("Caused by: java.lang.OutOfMemoryError: Physical memory usage is too high (8589934592 > Pointer.maxPhysicalBytes)\n") == (
        "host-ram", "javacpp.physical", "java", "cpu", {"used": 8589934592})
    assert _read("java.lang.OutOfMemoryError: Physical memory usage is too high: physicalBytes (7G) > maxPhysicalBytes (7G)\n")[4] == {
        "used": 7 * 1024 ** 3}


def test_sb3_replay_buffer_warning_is_host_ram_in_decimal_gigabytes():
    assert _read("UserWarning: This system does not have apparently enough memory to store the complete replay buffer 28.22GB > "
                 "15.50GB\n") == ("host-ram", "sb3.replay_buffer", "pytorch", "cpu", {"required": 28220000000, "available": 15500000000})


def test_systemd_unit_notice_of_the_oom_killer_names_the_unit_runtime():
    res, ev = _last("ollama.service: A process of this unit has been killed by the OOM killer.\n")
    assert (res["cause"], ev["kind"], ev["runtime"]) == ("host-ram", "os.oom_killer", "ollama")
    assert _read("train.service: A process of this unit has been killed by the OOM killer.\n")[:4] == (
        "host-ram", "os.oom_killer", "pytorch", "cpu")


def test_celery_and_cloud_run_sigkill_lines_are_the_hosts_memory():
    for line in ("billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 12.\n",
                 "ERROR/MainProcess: Process 'ForkPoolWorker-3' pid:41 exited with 'signal 9 (SIGKILL)'\n",
                 "Container terminated on signal 9.\n"):
        assert _read(line)[:2] == ("host-ram", "os.oom_killer"), line


def test_earlyoom_notice_and_kill_line_read_the_victims_resident_memory():
    text = ("earlyoom: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%\n"
            'earlyoom: sending SIGTERM to process 4242 uid 1000 "python3": badness 900, VmRSS 20480 MiB\n')
    res, ev = _last(text)
    assert (res["cause"], ev["kind"], ev.get("form"), ev["numbers"]) == ("host-ram", "os.oom_killer", "earlyoom",
                                                                         {"this_process": 20480 * _MIB})
    assert _read("earlyoom: low memory! at or below SIGKILL limits: mem 5.00%, swap 5.00%\n")[:2] == ("host-ram", "os.oom_killer")


def test_earlyoom_words_in_prose_are_not_read():
    assert "os.oom_killer" not in _kinds("we set earlyoom so that memory stays above the SIGTERM limits we chose\n")


def test_tensorflow_graph_execution_error_names_tensorflow_over_pjrts_words():
    text = ("UnknownError: Graph execution error:\n\nDetected at node StatefulPartitionedCall defined at (most recent call last):\n"
            "Failed to determine best cudnn convolution algorithm for:\n"
            "Original error: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes. [tf-allocator-allocation-error='']\n")
    assert _read(text)[1:4] == ("xla.oom", "tensorflow", "cuda")


# (part B) PyTorch's caching-allocator message alone (no traceback), its tensors packing the card with almost no slack in its cache
_PACKED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.60 GiB. GPU 0 has a total capacity of 14.74 GiB of which "
           "50.00 MiB is free. Including non-PyTorch memory, this process has 14.69 GiB memory in use. Of the allocated memory {al} is "
           "allocated by PyTorch, and {ru} is reserved by PyTorch but unallocated.\n")


def test_one_line_message_with_the_card_packed_and_no_slack_is_the_weights():
    assert _read(_PACKED.format(al="14.40 GiB", ru="40.00 MiB"))[0] == "weights-exceed-vram"


def test_one_line_message_with_slack_in_the_cache_is_not_read_as_packed():
    assert _read(_PACKED.format(al="13.84 GiB", ru="600.00 MiB"))[0] != "weights-exceed-vram"


def test_packed_card_under_a_traceback_is_left_to_the_frames():
    text = ('Traceback (most recent call last):\n  File "/w/train.py", line 88, in <module>\n    loss = model(x).loss\n'
            + _PACKED.format(al="14.40 GiB", ru="40.00 MiB"))
    assert _read(text)[0] != "weights-exceed-vram"
