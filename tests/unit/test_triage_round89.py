"""Triage round 89 (task tune89: batches 324, 325, 326, 328, 329 and 330 after first sight; test_triage_tune89.py is an older
task's name), written from the runtimes' own message formats:
- Apache Arrow's memory pool refusing host memory (arrow/memory_pool.cc's "malloc of size N failed", "realloc of size N
  failed"), as pyarrow raises it ("pyarrow.lib.ArrowMemoryError: ...", a MemoryError) and as Arrow's C++ status prints it
  ("Out of memory: ..."): system RAM (host-ram), the device the host's CPU, its size the request.
- PyTorch's shared-memory allocator on Windows ("Couldn't open shared file mapping: <torch_...>, error code: <1455>", and
  MapViewOfFile's "Couldn't map view of shared file <...>, error code: <1455>"): 1455 is ERROR_COMMITMENT_LIMIT, the paging
  file's refusal (host-ram); another error code is not read.
- NVIDIA Triton Inference Server's Python backend failing to grow its shared-memory pool ("Failed to increase the shared
  memory pool size for key '<region>' to N bytes", older builds without the key): /dev/shm, host RAM; the runtime
  triton-server (its own message; its region and stub names a marker), the device cpu, N the limit it met.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers); every event's kind


def test_pyarrow_realloc_failure_is_host_ram_with_its_request():
    text = "pyarrow.lib.ArrowMemoryError: realloc of size 1073741824 failed\n"
    assert _read(text) == ("host-ram", "python.memory_error", "pytorch", "cpu", {"requested": 1073741824})


def test_pyarrow_malloc_failure_reads_the_same():
    text = ("  File \"pyarrow/error.pxi\", line 92, in pyarrow.lib.check_status\n"
            "pyarrow.lib.ArrowMemoryError: malloc of size 268435520 failed\n")
    assert _read(text)[:4] == ("host-ram", "python.memory_error", "pytorch", "cpu")
    assert _read(text)[4] == {"requested": 268435520}


def test_arrow_cpp_status_out_of_memory_reads_the_same():
    text = "Error: Out of memory: realloc of size 4294967296 failed\n"
    assert _read(text)[:2] == ("host-ram", "python.memory_error")
    assert _read(text)[4] == {"requested": 4294967296}


def test_alloc_of_size_in_other_words_is_not_arrows():
    assert "python.memory_error" not in _kinds("debug: realloc of size 4096 failed once, retried\n")


def test_windows_shared_file_mapping_at_the_commit_limit_is_the_paging_file():
    text = ("  File \"C:\\Python312\\Lib\\site-packages\\torch\\storage.py\", line 413, in _new_shared\n"
            "    return cls._new_using_filename_cpu(size)\n"
            "RuntimeError: Couldn't open shared file mapping: <torch_5120_2718281828_31>, error code: <1455>\n")
    assert _read(text)[:4] == ("host-ram", "os.paging_file", "pytorch", "cpu")


def test_windows_map_view_of_shared_file_at_the_commit_limit_reads_the_same():
    text = "RuntimeError: Couldn't map view of shared file <torch_7400_1414213562_7>, error code: <1455>\n"
    assert _read(text)[:2] == ("host-ram", "os.paging_file")


def test_windows_shared_file_mapping_with_another_code_is_not_the_paging_file():
    assert "os.paging_file" not in _kinds("RuntimeError: Couldn't open shared file mapping: <torch_1_2_3>, error code: <5>\n")


def test_triton_python_backend_shm_pool_is_host_ram_at_its_limit():
    text = ("tritonclient.utils.InferenceServerException: [400] in ensemble 'pipeline', Failed to process the request(s) for model "
            "instance 'preprocess_0', message: Failed to increase the shared memory pool size for key "
            "'triton_python_backend_shm_region_3' to 134217728 bytes. If you are running Triton inside docker, use '--shm-size' "
            "flag to control the shared memory region size. Error: No space left on device\n")
    assert _read(text) == ("host-ram", "tritonserver.shm_pool", "triton-server", "cpu", {"limit": 134217728})


def test_triton_python_backend_shm_pool_without_its_key_reads_the_same():
    text = "E0310 09:00:00.000000 1 python_be.cc:1000] Failed to increase the shared memory pool size to 67108864 bytes.\n"
    assert _read(text)[:4] == ("host-ram", "tritonserver.shm_pool", "triton-server", "cpu")
    assert _read(text)[4] == {"limit": 67108864}


def test_triton_python_backend_names_name_the_server_above_a_torch_oom():
    text = ("I0310 09:00:00.000000 1 stub_launcher.cc:385] Starting Python backend stub:  exec /opt/tritonserver/backends/python/"
            "triton_python_backend_stub /models/embedder/1/model.py triton_python_backend_shm_region_2 1048576 1048576 1 "
            "/opt/tritonserver/backends/python 336 embedder_0\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of "
            "which 1.12 GiB is free. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 312.00 MiB is reserved by "
            "PyTorch but unallocated.\n")
    assert _read(text)[2] == "triton-server"


def test_openai_triton_compiler_is_not_the_server():
    text = ("  File \"/usr/lib/python3/site-packages/triton/runtime/jit.py\", line 345, in run\n"
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 81920, Hardware limit: 65536. "
            "Reducing block sizes or `num_stages` may help.\n")
    assert _read(text)[2] == "pytorch"
