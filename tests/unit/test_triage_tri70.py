"""Task tri70 (issue 14): single readings left open by tri67-tri69. Lines written from each runtime's own format, none taken
from a corpus file.

1. A HIP program's own check printing the bare error code. hip_runtime_api.h's hipError_t has hipErrorOutOfMemory = 2 (and its
   deprecated alias hipErrorMemoryAllocation = 2, as cudaErrorMemoryAllocation is 2 in CUDA's enum): a device allocation
   refused. Read as tri69 reads "CUDA error: 2": a call of the program's own (form runtime_call), no figure; here a HIP program
   (runtime "hip"), device rocm."""
import pytest

from gpu_garden.memory.triage import engine
from support.triage_event import read as _read


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
