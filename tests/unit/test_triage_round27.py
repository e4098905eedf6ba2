"""Triage round 27 (batches 49-50, after first sight). Lines written from the runtimes' own formats, not copies of
corpus cases: PyTorch's cudaMallocAsync report (CUDAMallocAsyncAllocator.cpp) quoted without its "(out of memory)" and
with its field lines joined; MPSAllocator.mm's message quoted without its last sentence; oMLX's prefill memory guard
("Prefill would require ~N peak (current A + KV+SDPA K) but ceiling is C", its scheduler and admin forms); nvidia-smi's
"Failed to initialize NVML: <reason>" beside a CUDA failure."""
import pytest

from support.triage_event import last_event, top
from gpu_garden.memory.units import GiB
from gpu_garden.memory.triage import engine


def _gib(x):
    return int(round(x * GiB))


@pytest.mark.parametrize("tail", [
    "\nCurrently allocated     : 21.40 GiB\nRequested               : 2.00 GiB\nDevice limit            : 23.99 GiB\n",
    "\nCurrently allocated: 21.40 GiB | Requested: 2.00 GiB | Device limit: 23.99 GiB\n",
])
def test_the_async_report_without_its_out_of_memory_words_keeps_its_numbers(tail):
    res, ev = last_event("torch.OutOfMemoryError: Allocation on device 1 would exceed allowed memory." + tail)
    assert ev["kind"] == "torch.cuda_async" and ev["device_index"] == 1, (ev["kind"], ev.get("device_index"))
    assert ev["numbers"] == {"allocated": _gib(21.40), "requested": _gib(2.00), "device_limit": _gib(23.99)}, ev["numbers"]


def test_a_sentence_that_only_says_would_exceed_allowed_memory_is_no_failure():
    assert not engine.triage_text("note: raising the batch would exceed allowed memory.\n")["found"]


def test_the_async_report_with_a_large_request_reads_the_tensor():
    cause, conf, _ = top("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory.\n"
                         "Currently allocated: 9.10 GiB | Requested: 6.00 GiB | Device limit: 11.99 GiB\n")
    assert cause == "activations", conf


MPS_CUT = "RuntimeError: MPS backend out of memory (MPS allocated: 3.10 GiB, other allocations: 14.20 GiB, max allowed: 18.13 GiB)\n"


def test_the_mps_message_without_its_request_is_recognised():
    res, ev = last_event(MPS_CUT)
    assert ev["kind"] == "torch.mps" and ev["device_kind"] == "mps"
    assert ev["numbers"] == {"allocated": _gib(3.10), "other_allocations": _gib(14.20), "max_allowed": _gib(18.13)}, ev["numbers"]
    # other allocations outweigh PyTorch's own: memory outside its allocator (the corpus's reading, R-family 4/4)
    assert res["cause"] == "other-process", ev["causes"][:2]
    assert not any("0 B requested" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_the_full_mps_message_still_gives_its_request():
    _, ev = last_event(MPS_CUT.rstrip("\n") + ". Tried to allocate 512.00 MiB on private pool. Use "
                       "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations\n")
    assert ev["numbers"]["requested"] == 512 * 2**20, ev["numbers"]


@pytest.mark.parametrize("but", ["but ceiling is 50.00 GB. Reduce context length or lower memory_guard_tier.",
                                 "but the prefill ceiling is 50.00 GB. Reduce context length or free memory.",
                                 "but limit is 50.00 GB. Reduce context length or increase --max-process-memory.",
                                 "but dynamic ceiling is 50.00 GB. Raise custom_ceiling_bytes (currently pinned at 60.00 GB)"])
def test_a_prefill_guard_refusing_on_its_own_estimate_is_not_a_shortage(but):
    line = f"Preflight rejected (120000 tokens, cached=0): Prefill would require ~70.00 GB peak (current 30.00 GB + KV+SDPA 40.00 GB) {but}\n"
    res, ev = last_event(line)
    assert ev["kind"] == "mlx.ceiling" and ev["form"] == "preflight" and ev["runtime"] == "mlx", ev["kind"]
    n = ev["numbers"]
    assert (n["required"], n["allocated"], n["requested"], n["max_allowed"]) == (_gib(70), _gib(30), _gib(40), _gib(50)), n
    assert n.get("limit") == (_gib(60) if "pinned" in but else None), n
    conf = {c["id"]: c["confidence"] for c in ev["causes"]}
    # the guard's estimate leads (nothing was allocated), the prompt's KV cache is the runner-up, and it is said uncertain
    assert res["cause"] == "other" and res["uncertain"] and 0.5 <= conf["other"] < 0.7, conf
    assert 0 < conf["kv-cache"] < conf["other"] and "activations" not in conf, conf


def test_a_prefill_the_ceiling_stopped_while_running_is_still_the_chunk():
    res, ev = last_event("Prefill force-stopped at 8192 tokens: memory 42.8GB exceeds ceiling 42.0GB\n")
    assert res["cause"] == "activations" and not res["uncertain"], ev["causes"]


@pytest.mark.parametrize("log", [
    "torch.OutOfMemoryError: Allocation on device \n\n$ nvidia-smi\nFailed to initialize NVML: Unknown Error\n",
    "Failed to initialize NVML: Unknown Error\ntorch.OutOfMemoryError: Allocation on device \n",
])
def test_nvml_failing_to_start_beside_a_gpu_failure_is_a_lost_device(log):
    res, ev = last_event(log)
    assert res["cause"] == "other" and not res["uncertain"], ev["causes"][:2]
    assert "restart the container" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


def test_a_driver_library_mismatch_says_reboot():
    res, ev = last_event("RuntimeError: CUDA error: out of memory\nFailed to initialize NVML: Driver/library version mismatch\n")
    assert res["cause"] == "other", ev["causes"][:2]
    assert "reboot" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


def test_without_the_nvml_line_the_bare_message_stays_uncertain():
    res, ev = last_event("torch.OutOfMemoryError: Allocation on device \n")
    assert res["cause"] != "other" and res["uncertain"], ev["causes"][:2]


def test_nvml_words_do_not_turn_a_host_ram_failure():
    res, ev = last_event("Failed to initialize NVML: Unknown Error\nRuntimeError: [enforce fail at alloc_cpu.cpp:114] data. "
                         "DefaultCPUAllocator: not enough memory: you tried to allocate 104857600 bytes.\n")
    assert res["cause"] == "host-ram", ev["causes"][:2]


def test_the_prefill_guard_gets_its_own_guide_and_the_ceiling_crossing_keeps_mlxs():
    _, ev = last_event("Prefill would require ~70.00 GB peak (current 30.00 GB + KV+SDPA 40.00 GB) but ceiling is 50.00 GB.\n")
    assert ev["guide"]["id"] == "mlx-memory-guard" and "estimate" in ev["guide"]["markdown"], ev["guide"]["id"]
    _, ev = last_event("Prefill force-stopped at 8192 tokens: memory 42.8GB exceeds ceiling 42.0GB\n")
    assert ev["guide"]["id"] != "mlx-memory-guard", ev["guide"]["id"]
