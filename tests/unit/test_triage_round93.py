"""Triage round 93 (task tune93: batches 375, 376, 378, 379, 380, 382, 383, 384, 385, 387 and 389 after first sight), written from
the runtimes' own message formats:
- Theano's CUDA backend refusing a device buffer ("Error allocating N bytes of device memory (out of memory). Driver report F bytes
  free and T bytes total", its device_malloc; "(CNMEM_STATUS_OUT_OF_MEMORY)." with its CNMeM pool): a cudaMalloc of the program's
  own data (cuda.driver, form runtime_call), the three figures in exact bytes, runtime theano, also when raised as MemoryError.
- Render's instance event over its plan's memory ("Ran out of memory (used over 512MB) while running your code"): the platform's
  host-RAM limit killed the service (os.oom_killer, host-ram, cpu), the plan's size read as the limit.
- TensorFlow's rendezvous refusing a copy's output tensor ("SameWorkerRecvDone unable to allocate output tensor. Key: <src>;<inc>;
  <dst>;..."): TensorFlow's op-level refusal (xla.oom, form recv), the device the key's destination; raised in a process pool's
  worker (a ProcessPoolExecutor's or multiprocessing Pool's frame), the pool's other workers hold the card (other-process).
- Windows' commit-limit message in a localized system (German, Spanish, Brazilian Portuguese, French, Italian, Chinese), and Rust's
  "(os error 1455)" after a localized message: the commit limit, read as the English message is (os.paging_file, host-ram).
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, last_event as _last, read as _read  # (cause, kind, runtime, device kind, numbers)

_TF_KEY = "/job:localhost/replica:0/task:0/device:{src}:0;0123456789abcdef;/job:localhost/replica:0/task:0/device:{dst}:0;edge_7_x;0:0"
_RECV = "SameWorkerRecvDone unable to allocate output tensor. Key: " + _TF_KEY + "\n"
_POOL = ('Traceback (most recent call last):\n'
         '  File "/usr/lib/python3.10/concurrent/futures/process.py", line 246, in _process_worker\n'
         '    r = call_item.fn(*call_item.args, **call_item.kwargs)\n'
         '  File "/home/u/run.py", line 40, in job\n'
         '    model.predict(x)\n')


def test_theano_device_malloc_is_the_programs_own_buffer_with_its_figures():
    text = ("Error allocating 1073741824 bytes of device memory (out of memory). Driver report 536870912 bytes free and 4294967296 "
            "bytes total \n")
    res, ev = _last(text)
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == (
        "activations", "cuda.driver", "theano", "cuda", "runtime_call")
    assert ev["numbers"] == {"requested": 1073741824, "free": 536870912, "total": 4294967296}


def test_theano_cnmem_refusal_raised_as_memoryerror_is_the_device_not_host_ram():
    assert _read("MemoryError: Error allocating 1258291200 bytes of device memory (CNMEM_STATUS_OUT_OF_MEMORY).\n")[1:] == (
        "cuda.driver", "theano", "cuda", {"requested": 1258291200})


def test_theano_device_malloc_with_another_error_is_not_read():
    assert "cuda.driver" not in _kinds("Error allocating 422125568 bytes of device memory (an illegal memory access was "
                                       "encountered). Driver report 0 bytes free and 0 bytes total\n")


def test_render_ran_out_of_memory_is_the_plans_host_ram_limit():
    assert _read("Ran out of memory (used over 512MB) while running your code\n") == (
        "host-ram", "os.oom_killer", "pytorch", "cpu", {"limit": 536870912})


def test_render_event_cut_after_its_figure_reads_the_same():
    res, ev = _last("Instance failed: abc12 - Ran out of memory (used over 2GB)\n")
    assert (res["cause"], ev["kind"], ev.get("form"), ev["numbers"]) == ("host-ram", "os.oom_killer", "platform_limit",
                                                                        {"limit": 2147483648})


def test_render_words_in_prose_are_not_read():
    assert "os.oom_killer" not in _kinds("the free tier ran out of memory (used over 512MB) while running my code, so we moved\n")


def test_tensorflow_rendezvous_refusal_is_its_op_level_oom_on_the_keys_destination():
    res, ev = _last("tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:\n\n"
                    + _RECV.format(src="CPU", dst="GPU"))
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev.get("form")) == (
        "activations", "xla.oom", "tensorflow", "cuda", "recv")
    assert _read(_RECV.format(src="GPU", dst="CPU"))[3] == "cpu"


def test_tensorflow_refusal_in_a_process_pools_worker_is_the_other_workers():
    assert _read(_POOL + _RECV.format(src="CPU", dst="GPU"))[:3] == ("other-process", "xla.oom", "tensorflow")
    pool = _POOL.replace("concurrent/futures/process.py", "multiprocessing/pool.py").replace("_process_worker", "worker")
    text = (pool + "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,512,512,3] "
            "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n")
    assert _read(text)[0] == "other-process"


def test_pytorch_oom_in_a_process_pools_worker_is_not_read_as_the_other_workers():
    text = (_POOL + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB "
            "of which 1.00 GiB is free. Including non-PyTorch memory, this process has 22.60 GiB memory in use. Of the allocated "
            "memory 20.00 GiB is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated.\n")
    assert _read(text)[0] != "other-process"


def test_localized_windows_commit_limit_messages_are_the_commit_limit():
    for line in ("O arquivo de paginação é muito pequeno para que esta operação seja concluída\n",
                 "ImportError: DLL load failed while importing _C: Die Auslagerungsdatei ist zu klein, um diesen Vorgang durchzuführen.\n",
                 "OSError: El archivo de paginación es demasiado pequeño para completar la operación.\n",
                 "OSError: [WinError 1455] 页面文件太小，无法完成操作。\n"):
        assert _read(line)[:2] == ("host-ram", "os.paging_file"), line


def test_rust_os_error_1455_after_a_localized_message_is_read():
    assert _read("OSError: Le fichier de pagination est insuffisant... (os error 1455)\n")[:4] == (
        "host-ram", "os.paging_file", "pytorch", "cpu")


def test_localized_commit_limit_words_inside_a_sentence_are_not_read():
    assert "os.paging_file" not in _kinds("we think that el archivo de paginación es demasiado pequeño here\n")
