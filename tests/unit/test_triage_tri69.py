"""Task tri69 (issue 14): single readings left open by tri63, tri64 and the census. Lines written from each runtime's own format,
none taken from a corpus file.

1. ggml-vulkan's pinned-memory warning quoting ggml's own size check. ggml_backend_vk_host_buffer_type_alloc_buffer
   (ggml/src/ggml-vulkan/ggml-vulkan.cpp) catches the vk::SystemError of its pinned host buffer, logs
   GGML_LOG_WARN("ggml_vulkan: Failed to allocate pinned memory (%s)\\n", e.what()) and returns a CPU buffer. Where the buffer
   is over the device's max_buffer_size, the error is ggml_vk_create_buffer's own
   vk::OutOfDeviceMemoryError("Requested buffer size exceeds device buffer size limit"), whose what() appends
   ": ErrorOutOfDeviceMemory". A warning, no failure; the same message after "Device memory allocation of size N failed." is a
   device buffer refused and stays ggml.vulkan_limit."""
import pytest

from gpu_garden.memory.triage import engine
from support.triage_event import read as _read

PINNED = "ggml_vulkan: Failed to allocate pinned memory ({})\n"


@pytest.mark.parametrize("quote", [
    "Requested buffer size exceeds device buffer size limit: ErrorOutOfDeviceMemory",     # e.what() as vulkan-hpp builds it
    "Requested buffer size exceeds device buffer size limit",                             # a quote without the result's name
    "Requested buffer size exceeds device memory allocation limit: ErrorOutOfDeviceMemory",  # the check's pre-2024 wording
])
def test_pinned_warning_quoting_ggmls_own_limit_is_no_failure(quote):
    # fails on the old reader: the quote was read as ggml.vulkan_limit, a failure
    assert not engine.triage_text(PINNED.format(quote))["found"]


def test_the_warning_inside_a_runners_error_leaves_the_runners_failure():
    # Ollama's server quoting the runner's last error: the warning is cut, the server's own out-of-memory report is read, as
    # with the warning's vk:: quote
    line = ("Error: 500 Internal Server Error: llama-server reported out-of-memory during startup: "
            + PINNED.format("Requested buffer size exceeds device buffer size limit: ErrorOutOfDeviceMemory"))
    assert _read(line)[1] == _read(line.replace("Requested buffer size exceeds device buffer size limit",
                                                "vk::Device::allocateMemory"))[1] == "ollama.runner"


def test_the_limit_after_a_device_allocation_is_still_a_failure():
    # ggml_vk_create_buffer_device's catch: the device buffer was refused, over the per-buffer limit
    cause, kind, runtime, device, nums = _read("ggml_vulkan: Device memory allocation of size 4831838208 failed.\n"
                                               "ggml_vulkan: Requested buffer size exceeds device buffer size limit: "
                                               "ErrorOutOfDeviceMemory\n")
    assert (kind, runtime, device, nums) == ("ggml.vulkan_limit", "llama.cpp", "vulkan", {"requested": 4831838208})
    # and the message on a line of its own, with no pinned warning before it
    assert _read("ggml_vulkan: Requested buffer size exceeds device buffer size limit: ErrorOutOfDeviceMemory\n")[1] \
        == "ggml.vulkan_limit"


# 2. A CUDA program's own check printing the bare error code. cudaError_t 2 is cudaErrorMemoryAllocation (runtime API) and
#    CUresult 2 is CUDA_ERROR_OUT_OF_MEMORY (driver API): "unable to allocate enough memory". A raw CUDA program (runtime
#    "cuda"), a call of its own (form runtime_call, as cudaSafeCall's "out of memory"), no figure.

@pytest.mark.parametrize("line", ["CUDA error: 2", "CUDA error 2", "  CUDA error: 2  ", "[rank0]: CUDA error: 2"])
def test_bare_cuda_error_code_2_is_a_device_allocation_failure(line):
    # fails on the old reader: no event, found False
    _, kind, runtime, device, nums = _read(line + "\n")
    assert (kind, runtime, device, nums) == ("cuda.driver", "cuda", "cuda", {})
    assert engine.triage_text(line + "\n")["events"][-1]["form"] == "runtime_call"


@pytest.mark.parametrize("line", ["CUDA error: 1", "CUDA error: 3", "CUDA error: 20", "CUDA error: 700", "CUDA error: 209",
                                  "CUDA error: 2 at kernel launch", "we saw CUDA error: 2 yesterday"])
def test_other_codes_and_prose_are_not_read(line):
    # 1 invalid value, 3 initialization error, 20 and 209 and 700 not memory; a code with words after it is another format
    assert not engine.triage_text(line + "\n")["found"], line


def test_the_bare_code_after_a_programs_own_progress_lines():
    # an MPI rank's progress lines, the check's bare code, the launcher's exit: read from the code's line
    log = ("rank: 0, iteration 3\nrank: 0, allocated ptr: 0x7f0000000000 of size: 4294967296\nCUDA error: 2\n"
           "srun: error: node01: task 0: Exited with exit code 1\n")
    assert _read(log)[1:4] == ("cuda.driver", "cuda", "cuda")


def test_ggmls_code_form_with_its_words_keeps_its_own_reading():
    # "CUDA error 2 at F:L: out of memory" is ggml's CUDA_CHECK: still llama.cpp's, not the bare code's
    assert _read("CUDA error 2 at ggml-cuda.cu:8555: out of memory\n")[2] == "llama.cpp"
