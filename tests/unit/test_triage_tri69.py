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


# 4. kv_sized's grain in ggml's quantized cache types. A row of 32 values is one block: 34 bytes in q8_0 (ggml_half d + 32 int8),
#    18 in q4_0 (ggml_half d + 16 bytes of nibbles), 64 in f16 (ggml-common.h's static_asserts). Sizes by hand: 28 layers x
#    32768 cells x (8 KV heads x 128 = 1024 values a row) x K,V.
MiB = 2 ** 20
Q8_KV = 28 * 32768 * (1024 // 32 * 34) * 2       # 1904 MiB = 28 x 68 MiB (14.875 x 128 MiB: not the f16 grain)
Q4_KV = 28 * 32768 * (1024 // 32 * 18) * 2       # 1008 MiB = 28 x 36 MiB


def test_hand_sizes():
    assert Q8_KV == 1904 * MiB == 28 * 68 * MiB and Q8_KV % (128 * MiB) != 0
    assert Q4_KV == 1008 * MiB == 28 * 36 * MiB and Q4_KV % (128 * MiB) != 0 and Q4_KV % (68 * MiB) != 0


@pytest.mark.parametrize("size,grain,kind", [(Q8_KV, 68, "q8_0"), (Q4_KV, 36, "q4_0")])
def test_a_refused_buffer_of_a_quantized_caches_shape_is_the_kv_cache(size, grain, kind):
    # fails on the old predicate: only the f16 grain (128 MiB) was read, so these stayed what the bare refusal reads
    from support.triage_event import top
    cause, _, ev = top(f"failed to allocate Vulkan0 buffer of size {size}\n")
    assert cause == "kv-cache", ev["causes"]
    assert any(f"multiple of {grain} MiB" in e and kind in e for e in ev["causes"][0]["evidence"]), ev["causes"]


def test_the_quantized_grain_keeps_tri64s_guards():
    from support.triage_event import top
    # a weights-sized sum (norm vectors of KiBs) is no multiple
    cause, conf, ev = top(f"failed to allocate CUDA0 buffer of size {Q8_KV + 28 * 4096 * 4}\n")
    assert cause != "kv-cache" and "kv-cache" not in conf, ev["causes"]
    # one grain alone is under the two-grain floor
    cause, conf, ev = top(f"failed to allocate CUDA0 buffer of size {68 * MiB}\n")
    assert cause != "kv-cache", ev["causes"]
    # a backend's pinned host buffer never holds the cache
    cause, _, ev = top(f"failed to allocate CUDA_Host buffer of size {Q8_KV}\n")
    assert cause == "host-ram", ev["causes"]
    # ggml_vulkan's own allocation line is not read by its size
    cause, _, ev = top(f"ggml_vulkan: Device memory allocation of size {Q8_KV} failed.\n"
                       "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert cause != "kv-cache", ev["causes"]


def test_the_f16_grain_still_reads_as_before():
    from support.triage_event import top
    cause, _, ev = top(f"failed to allocate CUDA0 buffer of size {36 * 16384 * 1024 * 2 * 2}\n")     # 2304 MiB, 18 x 128 MiB
    assert cause == "kv-cache" and any("multiple of 128 MiB, the shape" in e for e in ev["causes"][0]["evidence"])
