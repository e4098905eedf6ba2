"""Triage round 115 (batches 603-610): message forms written by hand from the runtimes' and tools' own wording, with the
expected values worked out by hand.

1. "Out of memory allocating N bytes" with a bare figure (no thousands separators, four digits or more) and no pool's
   "(allocated so far: ...)" is XLA's allocator status without its code (JAX), not CuPy's, which writes "{:,}".
2. The host's OOM killer naming its victim by llama.cpp's binary ("Killed process <pid> (llama-server)", earlyoom's
   'sending SIGTERM to process <pid> uid <uid> "llama-server"') names llama.cpp as the runtime.
3. The BFC allocator's warning ending at "requested by op" with no op's name after it is JAX's run (XLA names no op);
   with an op's name after it, TensorFlow's as before.
4. XLA's refusals as write-ups quote them: "RESOURCE_EXHAUSTED ... N bytes" (the middle elided), the stream executor's
   "Failed to allocate request for 42.19GiB" cut after its size, or quoted without its code with its bytes elided
   ("Failed to allocate request for 16.50GiB ... on device ordinal 0"); BFC's warning as "GPU_3_bfc ran out of memory
   trying to allocate 5.66 GiB" (no "Allocator (...)"); the remat warning with spaced sizes."""
import pytest

from support.regex_time import assert_each_fast
from support.triage_event import read, top
from gpu_garden.memory.triage import env
from gpu_garden.memory.triage.other_patterns import CUPY
from gpu_garden.memory.triage.runtime_markers import RUNTIME_MARKERS
from gpu_garden.memory.triage.xla_runtimes import BFC, XLA, XLA_REMAT, bfc, xla, xla_remat

GiB = 1 << 30
MiB = 1 << 20
KILL_MARKER = RUNTIME_MARKERS[-1]


# --- 1. a bare "Out of memory allocating N bytes" is XLA's, not CuPy's ------------------------------------------------
def test_bare_figure_without_pool_is_xla_status():
    cause, kind, runtime, device, nums = read("stage 3: fit kernel\nOut of memory allocating 52428800000 bytes\n")
    assert kind == "xla.oom" and runtime == "jax"
    assert nums["requested"] == 52428800000
    assert cause == "activations"


def test_cupy_pool_form_keeps_cupy():
    _, kind, runtime, _, nums = read(
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 2,147,483,648 bytes (allocated so far: 1,048,576 bytes).\n")
    assert kind == "cupy.oom" and runtime == "cupy"
    assert nums["requested"] == 2 * GiB and nums["allocated"] == MiB


def test_cupy_small_figure_without_separator_stays_cupy():
    # under 1,000 CuPy's "{:,}" writes no separator either: three digits read as before
    _, kind, runtime, _, nums = read("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes\n")
    assert kind == "cupy.oom" and runtime == "cupy" and nums["requested"] == 512


# --- 2. the OOM killer's victim named by llama.cpp's binary ----------------------------------------------------------
def test_kernel_kill_of_llama_server_names_llama_cpp():
    cause, kind, runtime, _, nums = read(
        "Out of memory: Killed process 4711 (llama-server) total-vm:90000000kB, anon-rss:8388608kB, file-rss:0kB\n")
    assert kind == "os.oom_killer" and cause == "host-ram"
    assert runtime == "llama.cpp"
    assert nums["this_process"] == 8388608 * 1024


def test_kernel_kill_of_python_keeps_pytorch():
    _, _, runtime, _, _ = read("Out of memory: Killed process 4711 (python3) anon-rss:8388608kB\n")
    assert runtime == "pytorch"


@pytest.mark.parametrize("line, hit", [
    ("Out of memory: Killed process 12 (llama-server) anon-rss:1kB", True),
    ("Out of memory: Kill process 12 (llama-cli) score 900 or sacrifice child", True),
    ('earlyoom: sending SIGTERM to process 12 uid 1000 "llama-server": badness 900, VmRSS 9000 MiB', True),
    ("Out of memory: Killed process 12 (ollama_llama_server) anon-rss:1kB", False),
    ("Out of memory: Killed process 12 (llama-server-wrapper) anon-rss:1kB", False),
    ("starting llama-server on port 8080", False),
])
def test_kill_marker_pattern(line, hit):
    import re
    assert KILL_MARKER[0] == "llama.cpp"
    assert bool(re.search(KILL_MARKER[2], line)) == hit


# --- 3. BFC's warning with no op's name ------------------------------------------------------------------------------
BFC_LINE = ("2026-01-02 10:00:00.000000: W external/tsl/tsl/framework/bfc_allocator.cc:497] Allocator (GPU_0_bfc) ran out "
            "of memory trying to allocate 20.00GiB (rounded to 21474836480)requested by op {op}\n")


def test_bfc_without_op_name_is_jax():
    _, kind, runtime, _, nums = read(BFC_LINE.format(op=""))
    assert kind == "xla.oom" and runtime == "jax" and nums["requested"] == 20 * GiB


def test_bfc_with_op_name_stays_tensorflow():
    _, _, runtime, _, _ = read(BFC_LINE.format(op="model/dense_3/MatMul"))
    assert runtime == "tensorflow"


@pytest.mark.parametrize("text, hit", [
    ("... (rounded to 1024)requested by op ", True),
    ("... (rounded to 1024) requested by op", True),
    ("... requested by op conv1/Conv2D", False),
    ("requested by operator", False),
])
def test_bfc_no_op_pattern(text, hit):
    assert bool(env.BFC_NO_OP.search(text)) == hit


# --- 4. XLA's refusals as quoted -------------------------------------------------------------------------------------
def test_status_with_middle_elided_reads_exact_bytes():
    cause, kind, runtime, device, nums = read("step 2 building the product\nRESOURCE_EXHAUSTED ... 40000000000 bytes\n")
    assert kind == "xla.oom" and runtime == "jax" and device == "cuda"
    assert nums["requested"] == 40000000000
    assert cause == "activations"


@pytest.mark.parametrize("line, req", [
    ("RESOURCE_EXHAUSTED: ... 123456789 bytes", 123456789),
    ("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED \u2026 98765 bytes", 98765),
    ("RESOURCE_EXHAUSTED: Failed to allocate request for 12.50GiB", int(12.5 * GiB)),
    ("Failed to allocate request for 3.00GiB ... on device ordinal 1", 3 * GiB),
    ("Failed to allocate request for 3.00GiB \u2026 on device ordinal 1  (batch_count: 7)", 3 * GiB),
    # the full form still read by its own alternative: the exact bytes in brackets
    ("RESOURCE_EXHAUSTED: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0", 33554432),
])
def test_xla_quoted_forms(line, req):
    ev = xla(line)
    assert ev and ev["kind"] == "xla.oom" and ev["runtime"] == "jax"
    assert ev["numbers"]["requested"] == req


@pytest.mark.parametrize("line", [
    "Failed to allocate request for 3.00GiB",                   # no code, no elision, no device: any program's words
    "RESOURCE_EXHAUSTED ... see the log above",                 # no bytes after the elision
    "Failed to allocate request for 3.00GiB on device ordinal 1",   # neither the code nor the bytes: not XLA's whole form
])
def test_xla_quoted_forms_controls(line):
    assert xla(line) is None


def test_cut_stream_executor_refusal_is_activations():
    cause, kind, runtime, _, nums = read("RESOURCE_EXHAUSTED: Failed to allocate request for 30.00GiB\n")
    assert kind == "xla.oom" and runtime == "jax" and nums["requested"] == 30 * GiB
    assert cause == "activations"


def test_bfc_named_without_allocator_word():
    ev = bfc("GPU_3_bfc ran out of memory trying to allocate 5.50 GiB")
    assert ev and ev["form"] == "bfc" and ev["device_kind"] == "cuda"
    assert ev["numbers"]["requested"] == int(5.5 * GiB)
    host = bfc("gpu_host_bfc ran out of memory trying to allocate 64.00MiB")
    assert host is None or host["device_kind"] == "cpu"


def test_bfc_name_form_and_remat_read_together():
    cause, kind, _, device, nums = read(
        "Can't reduce memory use below 10.00 GiB by rematerialization; only reduced to 20.00 GiB, down from 20.00 GiB originally\n"
        "GPU_1_bfc ran out of memory trying to allocate 4.00 GiB\n")
    assert cause == "activations" and kind == "xla.oom" and device == "cuda"
    assert nums["requested"] == 4 * GiB


@pytest.mark.parametrize("line, limit, required", [
    ("Can't reduce memory use below 14.00 GiB by rematerialization; only reduced to 22.50 GiB", 14 * GiB, int(22.5 * GiB)),
    ("Can't reduce memory use below 1.50GiB (1610612736 bytes) by rematerialization; only reduced to 2.00GiB (2147483648 bytes)",
     int(1.5 * GiB), 2 * GiB),
])
def test_remat_spaced_sizes(line, limit, required):
    ev = xla_remat(line)
    assert ev and ev["numbers"] == {"limit": limit, "required": required}


# --- linear time on 1 MB adversarial strings ---------------------------------------------------------------------------
def test_round115_patterns_linear():
    import re
    kill = re.compile(KILL_MARKER[2])
    n = 1 << 20
    assert_each_fast([
        (XLA.search, ["RESOURCE_EXHAUSTED " * (n // 19), "RESOURCE_EXHAUSTED ... " * (n // 23) + "1",
                      "Failed to allocate request for 1.0GiB ..." * (n // 40), "Failed to allocate request for " + "1" * n,
                      "RESOURCE_EXHAUSTED: ..." + " " * n + "1 bytes"]),
        (BFC.search, ["GPU_0_bfc ran " * (n // 14), "A" * n + "_1_bfc ran out of memory", "_1_bfc ran" * (n // 10)]),
        (XLA_REMAT.search, ["Can't reduce memory use below 1 GiB; " * (n // 37), "Can't reduce memory use below " + "1" * n]),
        (env.BFC_NO_OP.search, ["requested by op " * (n // 16), "requested by op" + " " * n + "x"]),
        (kill.search, ["Killed process 1 (llama-" * (n // 24), 'sending SIGTERM to process 1 uid 1 "llama-' * (n // 42)]),
        (CUPY.search, ["Out of memory allocating " + "1" * n, "Out of memory allocating 1 bytes (allocated so far: " * (n // 52)]),
    ])
