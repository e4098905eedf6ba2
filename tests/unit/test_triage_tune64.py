"""Rules from tuning on unseen batches 63 and 64 (regression sets since): each test is written from a case's log lines
(the runtime's own line, numbers as the case quotes them) and fails when its rule is broken."""
from gpu_garden.memory.triage import engine


def _top(text):
    r = engine.triage_text(text)
    return [c["id"] for c in r["events"][-1]["causes"]]


# batch-63 pytorch_swift_stepaudio2_dpo_a100_leftover_trainer: the message as quoted stops after the one process entry
LONE_PID = ("torch.OutOfMemoryError: Tried to allocate 836.00 MiB. GPU 2 has a total capacity of 79.11 GiB of which "
            "253.38 MiB is free. Process 3208526 has 78.31 GiB memory in use.\n")


def test_a_lone_pid_stays_this_process_cut_or_not():
    # review18a #3: the message cut after the entry says nothing of whose it is (the batch-63 case, whose log gives no other
    # evidence, is no longer read as other-process), and pid 1 or a message that goes on says nothing more
    assert _top(LONE_PID)[0] != "other-process"
    assert _top(LONE_PID.replace("Process 3208526", "Process 1"))[0] != "other-process"
    full = LONE_PID.rstrip("\n") + (" Of the allocated memory 77.10 GiB is allocated by PyTorch, and 612.00 MiB is reserved "
                                    "by PyTorch but unallocated.\n")
    assert _top(full)[0] != "other-process"


# batch-64 pytorch_dgx_spark_gb10_mjlab_warp_smoke_resident_vllm_engines: Warp's device line and its failed memory query,
# then PyTorch's bare CUDA error
WARP_QUERY = ('     "cuda:0"   : "NVIDIA GB10" (0 GiB, sm_121, mempool enabled)\n'
              "Warp CUDA error 2: out of memory (in function wp_cuda_device_get_memory_info, "
              "/builds/omniverse/warp/warp/native/warp.cu:2142)\n"
              "torch.AcceleratorError: CUDA error: out of memory\n")


def test_a_memory_query_failing_for_lack_of_memory_is_a_card_another_process_holds():
    causes = _top(WARP_QUERY)
    assert causes[0] == "other-process" and "host-ram" not in causes
    # without the query's failure the bare CUDA error stays the pinned-memory hint's
    assert _top(WARP_QUERY.split("\n", 2)[2])[0] != "other-process"


# batch-64 pytorch_rocm_gfx906_rag_embedder: the traceback's last frames (a model moved to the card) and the HIP message
ZERO_HELD = ('  File "/opt/rag/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 927, in _apply\n'
             "    param_applied = fn(param)\n"
             '  File "/opt/rag/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1326, in convert\n'
             "    return t.to(\n"
             "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of 15.98 GiB "
             "of which 630.00 MiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by "
             "PyTorch but unallocated.\n")


def test_pytorch_holding_nothing_on_a_card_in_use_is_another_programs_card():
    causes = _top(ZERO_HELD)
    assert causes[:2] == ["other-process", "weights-exceed-vram"]
    # PyTorch holding what is in use: the model being moved to the card leads
    own = ZERO_HELD.replace("0 bytes is allocated", "14.90 GiB is allocated").replace("0 bytes is reserved", "200.00 MiB is reserved")
    assert _top(own)[0] != "other-process"


# batch-63 llamacpp_vulkan_quadro_rtx5000_freebsd: the pinned warning with the driver's error, then the KV buffer refused
VK_PINNED = ("ggml_vulkan: Failed to allocate pinned memory (ErrorOutOfDeviceMemory)\n"
             "alloc_tensor_range: failed to allocate Vulkan0 buffer of size 998244352\n"
             "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n")


def test_a_pinned_buffer_refused_as_device_memory_before_a_device_buffer_fails_is_the_driver():
    assert _top(VK_PINNED)[:2] == ["other", "kv-cache"]
    # the host refusing the pinned buffer (out of HOST memory) says nothing of the driver: the KV cache leads
    assert _top(VK_PINNED.replace("ErrorOutOfDeviceMemory", "ErrorOutOfHostMemory"))[0] == "kv-cache"
    # without the warning the KV cache leads
    assert _top(VK_PINNED.split("\n", 1)[1])[0] == "kv-cache"


# batch-64 comfyui_aimdo_01_mempool_pluggable_allocator: PyTorch's message as the PR's "Before" block quotes it
POOLS = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.14 GiB. GPU 0 has a total capacity of 7.96 GiB of "
         "which 33.64 MiB is free. Of the allocated memory 6.71 GiB is allocated by PyTorch, with 1.33 GiB allocated in private "
         "pools (e.g., CUDA Graphs)\n")


def test_private_pools_are_a_runtimes_allocator_only_when_a_line_names_that_allocator():
    # PyTorch's line alone says "e.g., CUDA Graphs": nothing tells an allocator's pool from graphs' (review18a #1; the
    # batch-64 aimdo case, whose log is this one line, is no longer read as other)
    assert _top(POOLS)[0] != "other"
    # a line naming the runtime's own pool (vLLM's sleep-mode cumem allocator, batch-62 vllm_026_a10): that pool's memory
    own = "Enabling cumem allocator because sleep mode requires it.\n"
    assert _top(own + POOLS)[0] == "other"
    # CUDA graphs captured in this log (a server that went on to serve: the failure is not the capture's): their pools are
    # the graphs', not a runtime allocator's
    served = "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%\nPOST /v1/chat/completions HTTP/1.1 200 OK\n"
    assert "other" not in _top(own + served + POOLS)[:1]
    # pools smaller than the request could not have served it
    assert _top(own + POOLS.replace("1.33 GiB allocated in private", "40.00 MiB allocated in private"))[0] != "other"
