"""Task tri70 (issue 14): single readings left open by tri67-tri69. Lines written from each runtime's own format, none taken
from a corpus file.

1. A HIP program's own check printing the bare error code. hip_runtime_api.h's hipError_t has hipErrorOutOfMemory = 2 (and its
   deprecated alias hipErrorMemoryAllocation = 2, as cudaErrorMemoryAllocation is 2 in CUDA's enum): a device allocation
   refused. Read as tri69 reads "CUDA error: 2": a call of the program's own (form runtime_call), no figure; here a HIP program
   (runtime "hip"), device rocm."""
import pytest

from gpu_garden.memory.triage import engine
from support.triage_event import read as _read, top as _top


@pytest.mark.parametrize("line", ["HIP error: 2", "HIP error 2", "  HIP error: 2  ", "[rank0]: HIP error: 2"])
def test_bare_hip_error_code_2_is_a_device_allocation_failure(line):
    # fails on the old reader: no event, found False
    _, kind, runtime, device, nums = _read(line + "\n")
    assert (kind, runtime, device, nums) == ("cuda.driver", "hip", "rocm", {})
    assert engine.triage_text(line + "\n")["events"][-1]["form"] == "runtime_call"


@pytest.mark.parametrize("line", ["HIP error: 1", "HIP error: 3", "HIP error: 98", "HIP error: 700", "HIP error: 20",
                                  "HIP error: 2 at kernel launch", "a HIP error: 2 was seen", "HIP error: 2x"])
def test_other_hip_codes_and_prose_are_not_read(line):
    # 1 hipErrorInvalidValue, 3 hipErrorNotInitialized, 98 hipErrorInvalidDeviceFunction, 700 and 20 not memory; a code with
    # words after it is another format
    assert not engine.triage_text(line + "\n")["found"], line


def test_the_bare_hip_code_after_a_programs_own_lines():
    # (four short lines of one width read as a hard-wrapped paste and are joined, for the CUDA form as well: the first line
    # here is a program's long banner)
    log = ("device 0: AMD Radeon RX 7900 XTX, 24560 MiB, compute units 96, wavefront 32\n"
           "allocating 25769803776 bytes for the grid\nHIP error: 2\nAborted (core dumped)\n")
    assert _read(log)[1:4] == ("cuda.driver", "hip", "rocm")


def test_pytorchs_hip_check_keeps_its_own_reading():
    # PyTorch's HIP check prints the code's string, not the number: still PyTorch's (its runtime), as before
    assert _read("RuntimeError: HIP error: out of memory\n")[2:4] == ("pytorch", "rocm")
    # and the CUDA form is tri69's, unchanged
    assert _read("CUDA error: 2\n")[1:4] == ("cuda.driver", "cuda", "cuda")



# 2. candle's DriverError(CUDA_ERROR_OUT_OF_MEMORY, ...): no row. cudarc's DriverError wraps the CUresult of whichever driver call
#    failed (a context, a module load, an allocation), so the line names no call, size or holder; the driver-level rows'
#    reading (other, other-process second) stands (docs/triage-accuracy.md, task tri70).

# 3. A launcher's own gate that makes vLLM's start-up check before vLLM starts. club-3090's scripts/preflight.sh
#    (preflight_compose_gpu_fit) reads nvidia-smi's total and free per card and refuses when free < gpu_memory_utilization x
#    total x 0.98 (its comment: the same check vLLM makes): "[preflight] ERROR: GPU N has F GiB free, but this config needs ~D GiB/card".
#    Both figures are printed "%.1f" in GiB (MiB / 1024). Nothing of the job is loaded yet: read as vLLM's own start-up check
#    is (other-process), with the gate's two figures.
GATE = "[preflight] ERROR: GPU {} has {} GiB free, but this config needs ~{} GiB/card\n"


def test_the_launchers_gate_is_vllms_start_up_check():
    # fails on the old reader: no event, found False
    cause, conf, ev = _top(GATE.format(0, "7.1", "19.5"))
    assert (cause, ev["kind"], ev["runtime"], ev["device_kind"]) == ("other-process", "vllm.startup_free", "vllm", "cuda")
    assert ev["numbers"] == {"free": round(7.1 * 2 ** 30), "requested": round(19.5 * 2 ** 30)}
    assert ev["form"] == "launcher"
    assert "launcher's gate" in ev["causes"][0]["evidence"][0] and "19.50 GiB per card" in ev["causes"][0]["evidence"][0]


def test_the_gate_forced_past_still_reads_the_gate():
    # --force: the gate warns and the launch goes on; the log's failure line is still the gate's refusal
    log = (GATE.format(1, "4.5", "21.2") + "[preflight]        (gpu_memory_utilization=0.90, 2 card(s) for TP). Something else "
           "is holding VRAM\n[preflight] WARN:  --force set \u2014 launching anyway; vLLM may still abort at the free-memory check.\n")
    cause, _, ev = _top(log)
    assert (cause, ev["kind"], ev["numbers"]["free"]) == ("other-process", "vllm.startup_free", round(4.5 * 2 ** 30))


@pytest.mark.parametrize("line", [
    "[preflight] ERROR: only 12 GB free at /models, need ~60 GB.",         # the same script's disk check: not the card
    "GPU 0 has 7.1 GiB free, but this config needs 21.7 GiB",              # no "~" and no per-card unit: not the gate's format
    "ERROR: GPU 0 has 7.1 GB free, but this config needs ~21.7 GB/card",   # another unit: not the gate's format
])
def test_other_lines_are_not_the_gate(line):
    res = engine.triage_text(line + "\n")
    assert not any(e["kind"] == "vllm.startup_free" for e in res["events"]), line


def test_vllms_own_check_keeps_its_evidence():
    # the row's evidence moved to server_predicates.startup_free_says: vLLM's full message still gives its figures
    cause, _, ev = _top("ValueError: Free memory on device cuda:0 (7.1/23.56 GiB) on startup is less than desired GPU memory "
                        "utilization (0.9, 21.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")
    assert cause == "other-process"
    assert ev["causes"][0]["evidence"][0] == ("only 7.10 GiB of 23.56 GiB free at startup; gpu_memory_utilization 0.9 asks "
                                              "for 21.20 GiB")
    cause, _, ev = _top("ValueError: Free memory ... less than desired\n")
    assert cause == "other-process" and ev["causes"][0]["evidence"][0].startswith("vLLM found less memory free at startup")
