"""Triage round 30 (batches 52-57, after first sight). Lines written from the runtimes' own formats, not copies of corpus
cases: comfy-aimdo's file reader failing its copy out of the pinned staging buffer; vLLM's cumem allocator check and its
start-up free-memory check as users quote them (no line number; numbers elided); PyTorch's cudaMallocAsync message quoted
without its device number; ggml's pinned-memory warning when the log ends with it and nothing else failed."""
import pytest

from support.triage_event import last_event, top
from gpu_garden.memory.triage import engine
from gpu_garden.memory.units import GiB


@pytest.mark.parametrize("line", [
    "aimdo: src/hostbuf.c:301 hostbuf_read_file_slice: device copy failed result=2",
    "[aimdo] hostbuf_file_reader_read: device copy failed result=2",
])
def test_aimdo_staging_copy_failure_is_pinned_host_memory(line):
    text = "Total VRAM 12282 MB, total RAM 32607 MB\nRequested to load WAN21\n" + line + "\n"
    cause, conf, ev = top(text)
    assert ev["kind"] == "comfy.pinned_host" and cause == "host-ram", (ev["kind"], conf)


@pytest.mark.parametrize("result", ["700", "1", "20"])
def test_aimdo_staging_copy_fault_is_not_a_shortage(result):
    """review16a F9: only CUresult 2 (CUDA_ERROR_OUT_OF_MEMORY) is a shortage; 700 is an illegal address an earlier
    kernel left on the context, 1 an invalid value."""
    text = ("Total VRAM 12282 MB, total RAM 32607 MB\nRequested to load WAN21\n"
            f"aimdo: src/hostbuf.c:301 hostbuf_read_file_slice: device copy failed result={result}\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    res = engine.triage_text(text)
    assert not res["found"] or res["cause"] != "host-ram", res["cause"]


def test_aimdo_copy_words_elsewhere_are_no_failure():
    assert not engine.triage_text("rsync: device copy failed for /mnt/usb\nhostbuf_stats: copied 2 slices\n")["found"]


@pytest.mark.parametrize("line, form", [
    ("CUDA Error: out of memory at csrc/cumem_allocator.cpp", "oom"),
    ("CUDA Error: out of memory at /build/vllm/csrc/cumem_allocator.cpp:62", "oom"),
    ("CUDA Error: invalid argument at cumem_allocator.cpp", "fault"),
])
def test_vllm_cumem_check_without_its_line_number(line, form):
    _, ev = last_event("INFO 07-23 10:12:01 [gpu_worker.py:104] Sleep mode freed 61.20 GiB memory\n" + line + "\n")
    assert ev["kind"] == "vllm.cumem" and ev["form"] == form


def test_cumem_named_in_another_file_is_not_the_check():
    res = engine.triage_text("CUDA Error: out of memory at cumem_allocator.cpp.orig\n")
    assert not res["found"] or res["events"][-1]["kind"] != "vllm.cumem"


@pytest.mark.parametrize("line", [
    "ValueError: Free memory ... less than desired",
    "ValueError: Free memory \u2026 on startup is less than desired GPU memory utilization",
])
def test_vllm_startup_check_with_its_numbers_elided(line):
    text = "$ vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.95\n" + line + "\n"
    cause, conf, ev = top(text)
    assert ev["kind"] == "vllm.startup_free" and ev["numbers"] == {} and cause == "other-process", conf
    evidence = next(c["evidence"] for c in ev["causes"] if c["id"] == "other-process")
    assert any("less memory free at startup" in e for e in evidence), evidence


def test_vllm_startup_check_with_its_numbers_keeps_them():
    line = ("ValueError: Free memory on device cuda:0 (20.10/31.36 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 28.22 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")
    cause, _, ev = top(line + "\n")
    assert cause == "other-process" and ev["numbers"]["free"] == round(20.10 * GiB)
    evidence = next(c["evidence"] for c in ev["causes"] if c["id"] == "other-process")
    assert any("20.10 GiB of 31.36 GiB free" in e for e in evidence), evidence


def test_cuda_malloc_async_quoted_without_device_number():
    text = "Allocation on device would exceed allowed memory (out of memory)\nCurrently allocated: 30.50 GiB\n"
    _, ev = last_event(text)
    assert ev["kind"] == "torch.cuda_async" and ev["numbers"]["allocated"] == round(30.5 * GiB)


def _old_allowed(req, total, alloc, free, allowed, reserved):
    return (f"RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} already "
            f"allocated; {free} free; {allowed} allowed; {reserved} reserved in total by PyTorch)\n")


def test_a_named_memory_fraction_gets_the_fraction_in_its_guide_not_the_driver():
    """review16a F1: the row names the cap, and so must the guide (it said "install the stable driver" first)."""
    cause, _, ev = top(_old_allowed("4.00 MiB", "79.15 GiB", "39.20 GiB", "39.51 GiB", "39.58 GiB", "39.58 GiB"))
    md = ev["guide"]["markdown"]
    assert cause == "other" and ev["guide"]["id"] == "allocation-refused"
    assert "39.58 GiB allowed" in md and "set_per_process_memory_fraction" in md.split("**Check")[1].split("2.")[0]
    assert "nightly" not in md and "stable driver" not in md


def test_a_refusal_without_a_fraction_keeps_the_driver_checks():
    # a 5 MiB request refused with 20 GiB free on a 24 GB card and no "allowed": the driver or build (R17)
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 5.00 MiB. GPU 0 has a total capacity of 23.55 GiB "
            "of which 20.10 GiB is free. Including non-PyTorch memory, this process has 3.10 GiB memory in use. Of the "
            "allocated memory 2.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n")
    cause, _, ev = top(text)
    assert cause == "other" and ev["guide"]["id"] == "allocation-refused"
    md = ev["guide"]["markdown"]
    assert "stable driver" in md and "caps this process" not in md
    assert "refused the allocation.\n\n**Check, in this order:**" in md      # the paragraph and the list stay apart


def test_elided_vllm_startup_check_gets_no_utilisation_it_did_not_read():
    """review16a F10: with the numbers elided the guide names no --gpu-memory-utilization value (its default 0.80 is not
    the log's); with them, the value computed from free / total."""
    _, _, ev = top("ValueError: Free memory ... less than desired\n")
    md = ev["guide"]["markdown"]
    assert ev["guide"]["id"] == "vllm-other-process" and "--gpu-memory-utilization 0." not in md and "free / total" in md
    line = ("ValueError: Free memory on device cuda:0 (20.10/31.36 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 28.22 GiB).\n")
    md = top(line)[2]["guide"]["markdown"]
    assert "--gpu-memory-utilization 0.6" in md and "free / total" not in md


def _new_allowed(req, total, free, in_use, allocated, unalloc):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of "
            f"which {free} is free. Including non-PyTorch memory, this process has {in_use} memory in use. {in_use} allowed; "
            f"Of the allocated memory {allocated} is allocated by PyTorch, and {unalloc} is reserved by PyTorch but unallocated.\n")


def test_a_cap_whose_own_slack_would_serve_the_request_stays_fragmentation():
    """review16a F2: 0.6 of a 40 GB card; 3.5 GiB of the cache unallocated would have served a 1.5 GiB request under the
    cap: expandable segments, not the fraction, is the fix."""
    cause, conf, _ = top(_new_allowed("1.50 GiB", "39.39 GiB", "15.60 GiB", "23.63 GiB", "19.90 GiB", "3.50 GiB"))
    assert cause == "fragmentation", conf


def test_a_cap_with_little_slack_is_still_named():
    cause, conf, _ = top(_new_allowed("1.50 GiB", "39.39 GiB", "15.60 GiB", "23.63 GiB", "23.20 GiB", "150.00 MiB"))
    assert cause == "other", conf


D = "7" * 5000      # past Python's 4300-digit limit for int(): a count read with an unbounded \d+ raised ValueError


@pytest.mark.parametrize("text", [
    f"ValueError: To serve at least one request with the models's max seq len ({D}), (16.00 GiB KV cache is needed, which "
    "is larger than the available KV cache memory (9.48 GiB).",
    f"ValueError: The model's max seq len ({D}) is larger than the maximum number of tokens that can be stored in KV cache (100).",
    f"alloc_tensor_range: failed to allocate CUDA0 buffer of size {D}",
    f"ggml_vulkan: Device memory allocation of size {D} failed.",
    f"Total VRAM {D} MB, total RAM 64000 MB\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
    f"llama_context: n_ctx = {D}\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc "
    "failed: out of memory",
    f"RuntimeError: Could not allocate tensor with {D} bytes. There is not enough GPU video memory available!",
    f"[metal::malloc] Attempting to allocate {D} bytes which is greater than the maximum allowed buffer size of 100 bytes",
    f"ValueError: max_num_seqs ({D}) exceeds available Mamba cache blocks (3)",
    f"pytorch version: {D}.1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
])
def test_a_5000_digit_count_is_read_without_raising(text):
    """review16a F6: every count is read bounded (\\d{1,20}); the triage answers (or finds nothing) instead of raising."""
    engine.triage_text(text + "\n")
    engine.is_oom_error("RuntimeError", text)


def test_the_commit_charge_check_is_said_of_windows():
    """review16a F11: a device allocation takes commit charge on Windows (WDDM), not a host allocation of its size on Linux."""
    cause, _, ev = top(_old_allowed("4.00 MiB", "23.99 GiB", "1.20 GiB", "21.10 GiB", "23.99 GiB", "1.30 GiB").replace(
        " 23.99 GiB allowed;", ""))
    md = ev["guide"]["markdown"]
    assert ev["guide"]["id"] == "allocation-refused" and "On Windows a device allocation also needs commit charge" in md
    assert "A device allocation also needs host memory behind it" not in md


def _cap_named(text):
    _, _, ev = top(text)
    return any("per-process memory fraction" in e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("text, named", [
    # 0.5 of an 80 GB card, another process holding 0.28 of it, 0.22 free: under the quarter the cap must withhold
    (_new_allowed("20.00 MiB", "79.15 GiB", "17.41 GiB", "39.58 GiB", "39.30 GiB", "100.00 MiB"), False),
    # 0.5 of a 24 GB card, 0.27 free, but a 3 GiB request: free < request + a quarter of the card
    (_new_allowed("3.00 GiB", "23.65 GiB", "6.40 GiB", "11.83 GiB", "11.50 GiB", "100.00 MiB"), False),
    # 0.72 of a 24 GB card with 0.262 free: withheld a quarter and more, the request small
    (_new_allowed("20.00 MiB", "23.65 GiB", "6.20 GiB", "17.03 GiB", "16.80 GiB", "100.00 MiB"), True),
])
def test_the_fraction_cap_bounds(text, named):
    """review16a F8: the cap share (0.75), the quarter-card margin and the request in it are each pinned by a case."""
    assert _cap_named(text) is named


_VLLM_LEN = ("ValueError: To serve at least one request with the models's max seq len (65536), (8.00 GiB KV cache is needed, "
             "which is larger than the available KV cache memory (5.10 GiB). Based on the available memory, the estimated "
             "maximum model length is 40960. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
             "initializing the engine.")


@pytest.mark.parametrize("cut", ["estimated", "maximum", "model", "length", "is"])
def test_vllm_estimate_read_whatever_word_the_wrap_falls_after(cut):
    """review16a F7: the estimated maximum model length is read when the message is wrapped after any word of it."""
    at = _VLLM_LEN.index(" ", _VLLM_LEN.index(cut + " ", _VLLM_LEN.index("Based on")))
    text = "INFO 07-01 10:00:00 [gpu_worker.py:232] Memory profiling takes 4.80 seconds\n" + _VLLM_LEN[:at] + "\n" + \
        _VLLM_LEN[at + 1:] + "\n"
    _, ev = last_event(text)
    assert ev["kind"] == "vllm.kv_max_len" and ev["numbers"]["estimated_max_len_tokens"] == 40960, ev["numbers"]
