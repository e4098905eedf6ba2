"""Triage round 112 (batches 588-594): three message forms written by hand from the runtimes' own wording, with the
expected values worked out by hand.

1. A CPU_ONLY Caffe build's host malloc check (syncedmem.hpp CaffeMallocHost: CHECK(*ptr) << "host allocation of size "
   << size << " failed"), through glog: system RAM refused, runtime caffe, device cpu, the size as the request.
2. ggml's CPU-backend buffer line followed by alloc_tensor_range naming a GPU backend's pinned host buffer ("CUDA_Host",
   "ROCm_Host") of the same size: the buffer is system RAM (host-ram), the device is that backend's, not "cpu".
3. /proc/<pid>/limits' "Max address space" row with a finite soft limit beside a host-side failure: host-ram over the
   cache's own reading, and the limit as a number."""
import pytest

from support.regex_time import assert_each_fast
from support.triage_event import read, top
from gpu_garden.memory.triage.fact_patterns import FACTS
from gpu_garden.memory.triage.other_patterns import CAFFE_HOST

MB = 1 << 20
AS_LIMIT = dict(FACTS)["as_limit"]

# --- 1. Caffe's CPU_ONLY host allocation check -----------------------------------------------------------------------
CAFFE_CPU = """I0301 10:00:01.000000  4242 net.cpp:283] Network initialization done.
F0301 10:00:02.123456  4242 syncedmem.hpp:33] Check failed: *ptr host allocation of size 1048576 failed
*** Check failure stack trace: ***
    @ 0x7f00000001 caffe::SyncedMemory::mutable_cpu_data()
    @ 0x7f00000002 caffe::Net<>::Forward()
Aborted
"""


def test_caffe_cpu_only_host_allocation_is_host_ram():
    cause, kind, runtime, device, numbers = read(CAFFE_CPU)
    assert (cause, kind, runtime, device) == ("host-ram", "os.enomem", "caffe", "cpu")
    assert numbers["requested"] == 1048576


@pytest.mark.parametrize("line, size", [
    ("F0101 00:00:00.000001 1 syncedmem.hpp:33] Check failed: *ptr host allocation of size 3 failed", "3"),
    ("syncedmem.hpp:31] Check failed: *ptr host allocation of size 123456789012 failed ", "123456789012"),
])
def test_caffe_host_pattern_reads_the_size(line, size):
    m = CAFFE_HOST.search(line)
    assert m and m.group(1) == size


@pytest.mark.parametrize("line", [
    "Check failed: *ptr host allocation of size failed",          # no size
    "host allocation of size 1024 failed",                        # not glog's check
    "syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",     # the CUDA form (its own reader)
])
def test_caffe_host_pattern_controls(line):
    assert CAFFE_HOST.search(line) is None


# --- 2. a GPU backend's pinned host buffer that fell back to the CPU backend -------------------------------------------
HOST_FALLBACK = """ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 68719476736
alloc_tensor_range: failed to allocate {name} buffer of size {size}
"""


@pytest.mark.parametrize("name, device", [("CUDA_Host", "cuda"), ("ROCm_Host", "rocm"), ("Vulkan_Host", "vulkan")])
def test_cpu_line_under_a_gpu_backend_host_buffer_takes_that_backend(name, device):
    cause, kind, runtime, dev, numbers = read(HOST_FALLBACK.format(name=name, size=68719476736))
    assert (cause, kind, runtime, dev) == ("host-ram", "ggml.buffer", "llama.cpp", device)
    assert numbers["requested"] == 64 << 30


@pytest.mark.parametrize("name, size", [("CPU", 68719476736), ("CUDA_Host", 1024)])
def test_cpu_line_alone_or_beside_another_size_stays_cpu(name, size):
    # the CPU backend's own buffer, or a pinned buffer of another size (not the one that fell back): the device stays cpu
    assert read(HOST_FALLBACK.format(name=name, size=size))[3] == "cpu"


# --- 3. the process's address-space limit ------------------------------------------------------------------------------
KV_CPU = """ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 134217728
alloc_tensor_range: failed to allocate CPU buffer of size 134217728
llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
"""
LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max address space         {soft}           {hard}           bytes
"""


@pytest.mark.parametrize("before", [True, False])
def test_address_space_cap_beside_a_host_buffer_is_host_ram_with_its_limit(before):
    limits = LIMITS.format(soft="4096000000", hard="unlimited")
    cause, scores, ev = top(limits + KV_CPU if before else KV_CPU + limits)
    assert cause == "host-ram" and scores["host-ram"] > scores.get("kv-cache", 0)
    assert ev["numbers"]["limit"] == 4096000000 and ev["numbers"]["requested"] == 134217728
    assert "address-space limit" in " ".join(next(c["evidence"] for c in ev["causes"] if c["id"] == "host-ram"))


def test_unlimited_address_space_adds_nothing():
    cause, scores, ev = top(KV_CPU + LIMITS.format(soft="unlimited", hard="unlimited"))
    assert "limit" not in ev["numbers"]
    assert not any("address-space limit" in " ".join(c["evidence"]) for c in ev["causes"])


@pytest.mark.parametrize("line, soft", [
    ("Max address space         8192000000           8192000000           bytes", "8192000000"),
    ("Max address space\t1000\tunlimited\tbytes", "1000"),
])
def test_address_space_pattern(line, soft):
    m = AS_LIMIT.search(line)
    assert m and m.group(1) == soft


@pytest.mark.parametrize("line", ["Max address space         unlimited            unlimited            bytes",
                                  "Max resident set          8192000000           8192000000           bytes",
                                  "Max address space 100 100 KiB"])
def test_address_space_pattern_controls(line):
    assert AS_LIMIT.search(line) is None


def test_new_patterns_are_linear_on_adversarial_lines():
    assert_each_fast([
        (CAFFE_HOST.search, ["] Check failed: *ptr host allocation of size " + "9" * MB,
                             "] Check failed: *ptr host allocation of size " * (MB // 45), "]" * MB,
                             "] Check failed: *ptr host allocation of size 1 " + "failed" * (MB // 6)]),
        (AS_LIMIT.search, ["Max address space " + " " * MB, "Max address space " + "9" * MB,
                           "Max address space 1 " + "\t" * MB + "x", "Max address space 1 2 " + " " * MB,
                           "Max address space " * (MB // 18), "Max address space 1 " + "1 " * (MB // 2)]),
    ])
