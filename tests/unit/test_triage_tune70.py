"""Triage after batch 70 (first sight recorded: 1/6). Lines written from the runtimes' own message formats (jaxlib's
JaxRuntimeError, PyTorch's CUDA caching-allocator message), numbers made up or from the reports named at each test,
expected values by hand."""
GiB, MiB = 1 << 30, 1 << 20
from support.triage_event import top


def test_jax_out_of_memory_with_a_human_readable_size_is_jax_and_reads_the_request():
    """Newer jaxlib prints the refused size as tsl's HumanReadableNumBytes ("10.08GiB", as in el-oso/PureAdsorb.jl's bench
    notes), older ones in bytes: both are XLA's allocator under JAX, and the request is read."""
    cause, _, ev = top("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 10.08GiB.\n")
    assert ev["runtime"] == "jax" and ev["kind"] == "xla.oom", (ev["runtime"], ev["kind"])
    assert ev["numbers"]["requested"] == round(10.08 * GiB), ev["numbers"]
    assert cause == "activations", ev["causes"]
    _, _, ev = top("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 512.00MiB.\n")
    assert ev["numbers"]["requested"] == 512 * MiB, ev["numbers"]
    _, _, ev = top("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                   "4770354232 bytes.\n")
    assert ev["numbers"]["requested"] == 4770354232 and ev["runtime"] == "jax", ev
