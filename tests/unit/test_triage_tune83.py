"""Triage after batches 83-84 (first sight recorded at e0f2ebe: 2/6 and 3/3). Lines written from the runtimes' own message
formats (VideoHelperSuite's load_video_nodes.py, SGLang's scheduler message, vLLM's cumem allocator and its wake_up frames),
numbers and wording of the prose made up, expected values by hand."""
from support.triage_event import top


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
