"""Triage round 110 (batches 568-577): two message forms read from the log's own words. (1) ggml's SYCL check naming the
function that threw without ggml's prefix ("in function alloc at .../ggml-sycl/ggml-sycl.cpp:N", a pool's method), above a
refusal in no runtime's own words: the SYCL backend (an Intel GPU) and llama.cpp's run. (2) XLA's GPU executable refusing a
program constant ("INTERNAL: Failed to allocate N bytes for new constant", raised by jaxlib as XlaRuntimeError): a device
refusal with its exact request, JAX's run. (3) TensorFlow 1.x's device creation ("Total memory: X", "Free memory: Y" on lines
of their own) gives the card's total and free to a BFC or op-level refusal too, as it did to the stream executor's. (4) Metal's
threadgroup-memory limit on a kernel ("Threadgroup memory size (N) exceeds the maximum threadgroup memory allowed (M)", wrapped
or not) read as other, with MLX's "[metal::Device] Unable to load kernel" naming MLX. Inputs are written by hand from the
message forms; expected values by hand."""

import pytest

from support.triage_event import read, top
from gpu_garden.memory.triage.fact_patterns import FACTS
from gpu_garden.memory.triage.kernel_limits import METAL_THREADGROUP, METAL_THREADGROUP_TAIL
from gpu_garden.memory.triage.xla_runtimes import XLA_CONSTANT, xla_constant
from support.regex_time import cpu_limit, cpu_now

MB = 1 << 20
SYCL_FN = dict(FACTS)["ggml_sycl_fn"]

# a SYCL pool that could not map physical memory, the check's lines as newer builds print them (short function name)
SYCL_POOL = """SYCL error: CHECK_TRY_ERROR(phys.emplace(dev, ctx, reserve_size)): Exception caught in this line of code.
  in function {fn} at /src/llama.cpp/ggml/src/ggml-sycl/ggml-sycl.cpp:1900
Failed to allocate physical memory.
  in function {fn} at /src/llama.cpp/ggml/src/ggml-sycl/ggml-sycl.cpp:1900
"""


@pytest.mark.parametrize("fn", ["alloc", "ggml_sycl_pool_vmm::alloc", "ggml_backend_sycl_buffer_type_alloc_buffer"])
def test_sycl_check_reads_backend_and_runtime(fn):
    cause, kind, runtime, device, numbers = read(SYCL_POOL.format(fn=fn))
    assert (runtime, device) == ("llama.cpp", "xpu")


@pytest.mark.parametrize("line, fn", [
    ("  in function alloc at /app/ggml/src/ggml-sycl/ggml-sycl.cpp:1861", "alloc"),
    ("in function ggml_sycl_pool_vmm::alloc at C:\\llama\\ggml\\src\\ggml-sycl\\ggml-sycl.cpp:12", "ggml_sycl_pool_vmm::alloc"),
    ("  in function ggml_backend_sycl_buffer_set_tensor at /x/ggml-sycl.cpp:432", "ggml_backend_sycl_buffer_set_tensor"),
])
def test_sycl_function_line(line, fn):
    m = SYCL_FN.search(line)
    assert m and m.group(1) == fn


@pytest.mark.parametrize("line", [
    "  in function alloc at /app/ggml/src/ggml-cuda/ggml-cuda.cu:90",     # another backend's file
    "  in function alloc",                                                 # no location
    "error in function alloc at /app/ggml-sycl.cpp:1",                     # not the check's own line
])
def test_sycl_function_line_controls(line):
    assert SYCL_FN.search(line) is None


@pytest.mark.parametrize("text, want", [
    ("jaxlib._jax.XlaRuntimeError: INTERNAL: Failed to allocate 268435456 bytes for new constant",
     (268435456, "jax")),
    ("E0101 00:00:00.000000 1 pjrt_stream_executor_client.cc:2900] Execution of replica 0 failed: INTERNAL: Failed to "
     "allocate 1048576 bytes for new constant", (1048576, "jax")),
    ("INTERNAL: Failed to allocate 4096 bytes for new constant", (4096, None)),
])
def test_xla_constant_event(text, want):
    ev = xla_constant(text)
    assert ev and (ev["numbers"]["requested"], ev["runtime"]) == want and ev["form"] == "xla_constant"


def test_xla_constant_log_reads_jax_and_the_request():
    cause, kind, runtime, device, numbers = read(
        "jaxlib._jax.XlaRuntimeError: INTERNAL: Failed to allocate 536870912 bytes for new constant\n")
    assert (kind, runtime, numbers.get("requested")) == ("cuda.driver", "jax", 536870912)


@pytest.mark.parametrize("line", [
    "INTERNAL: Failed to allocate bytes for new constant",
    "Failed to allocate 4096 bytes for new constant",                      # no status: not XLA's form
    "INTERNAL: Failed to allocate 4096 bytes for new buffer",
])
def test_xla_constant_controls(line):
    assert xla_constant(line) is None


# TensorFlow 1.x on one 4 GiB card: its device block, then the BFC allocator's refusal and the op's; by hand, 3.50 GiB total is
# 3758096384 bytes and 3.25 GiB free 3489660928
TF1_BFC = """I tensorflow/core/common_runtime/gpu/gpu_device.cc:885] Found device 0 with properties:
name: GeForce GTX 970
Total memory: 3.50GiB
Free memory: 3.25GiB
I tensorflow/core/common_runtime/gpu/gpu_device.cc:975] Creating TensorFlow device (/gpu:0) -> (device: 0, name: GeForce GTX 970)
W tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out of memory trying to allocate 1.50GiB.  See logs for memory state.
W tensorflow/core/framework/op_kernel.cc:993] Resource exhausted: OOM when allocating tensor with shape[20000,20000]
"""
# the same with a second card whose figures differ: the refusal names no card, so neither figure is given
TF1_TWO_CARDS = TF1_BFC.replace("I tensorflow/core/common_runtime/gpu/gpu_device.cc:975]", """I gpu_device.cc:885] Found device 1 with properties:
Total memory: 7.50GiB
Free memory: 7.25GiB
I tensorflow/core/common_runtime/gpu/gpu_device.cc:975]""")


def test_tf1_device_block_gives_total_and_free_to_a_bfc_refusal():
    numbers = read(TF1_BFC)[4]
    assert (numbers.get("total"), numbers.get("free")) == (3758096384, 3489660928)


def test_tf1_device_block_left_out_when_cards_differ():
    numbers = read(TF1_TWO_CARDS)[4]
    assert "total" not in numbers and "free" not in numbers


# MLX compiling an attention kernel whose threadgroup memory is over the GPU's 32 KiB; the message whole, or wrapped
METAL_TG = """RuntimeError: [metal::Device] Unable to load kernel steel_attention_float32_bq32_bk16_bd256
Threadgroup memory size (40960) exceeds the maximum threadgroup memory allowed (32768)
"""
METAL_TG_WRAPPED = """RuntimeError: [metal::Device] Unable to load kernel steel_attention_float32_bq32_bk16_bd256
Threadgroup memory size (40960) exceeds the maximum threadgroup
memory allowed (32768)
"""


@pytest.mark.parametrize("text", [METAL_TG, METAL_TG_WRAPPED])
def test_metal_threadgroup_limit_reads_other_mlx_metal(text):
    cause, kind, runtime, device, numbers = read(text)
    assert (cause, kind, runtime, device) == ("other", "metal.threadgroup", "mlx", "metal")
    assert numbers == {"requested": 40960, "max_allowed": 32768}


def test_metal_threadgroup_limit_row_says_why():
    cause, conf, ev = top(METAL_TG)
    assert cause == "other" and conf["other"] >= 0.7
    assert "40960 bytes of threadgroup (on-chip) memory and this GPU allows 32768" in ev["causes"][0]["evidence"][0]


def test_metal_threadgroup_limit_without_mlx_names_no_mlx():
    cause, kind, runtime, device, numbers = read(METAL_TG.split("\n", 1)[1])
    assert (cause, device) == ("other", "metal") and runtime != "mlx"


@pytest.mark.parametrize("line", [
    "Threadgroup memory size exceeds the maximum threadgroup memory allowed",
    "threadgroup memory size (1) exceeds the maximum",
    "Threadgroup memory size (40960) is within the maximum threadgroup memory allowed (32768)",
])
def test_metal_threadgroup_controls(line):
    assert METAL_THREADGROUP.search(line) is None


def _linear(rx, text):
    t = cpu_now()
    rx.search(text)
    assert cpu_now() - t < cpu_limit(1.0)


def test_new_patterns_are_linear_on_adversarial_lines():
    for text in ("in function " + "a::" * (MB // 3), "  in function " + "a" * MB + " at " + "x" * MB,
                 "in function a at " + "ggml-syc" * (MB // 8), "in function " + "a::b " * (MB // 5),
                 " " * MB + "in function a at b"):
        _linear(SYCL_FN, text)
    for text in ("INTERNAL: Failed to allocate " + "9" * MB, "INTERNAL: Failed to allocate " * (MB // 29),
                 "INTERNAL: Failed to allocate 1 bytes for new " * (MB // 44)):
        _linear(XLA_CONSTANT, text)
    for text in ("Threadgroup memory size (" + "9" * MB, "Threadgroup memory size (1) exceeds the maximum threadgroup" * (MB // 58),
                 "Threadgroup memory size (1) exceeds the maximum threadgroup memory allowed (" + "9" * MB):
        _linear(METAL_THREADGROUP, text)
    for text in (" " * MB + "memory allowed (1)", "memory allowed (" + "9" * MB):
        _linear(METAL_THREADGROUP_TAIL, text)
