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


# PyTorch's message quoted a sentence a line (the shape of sagecodes/ai-build-and-learn's videogen notes; figures made up
# unless said)
SPLIT = ("CUDA out of memory. Tried to allocate 20.00 MiB.\n"
         "GPU 0 has a total capacity of 23.55 GiB of which 12.75 MiB is free.\n"
         "Including non-PyTorch memory, this process has 9.21 GiB memory in use.\n")


def test_pytorchs_message_a_sentence_a_line_is_read_whole():
    """Its sentences each open with PyTorch's own words ("GPU 0 has a total capacity", "Including non-PyTorch memory"):
    joined, they are the one line PyTorch printed, with the card's total, free and this process's figures."""
    cause, _, ev = top(SPLIT)
    n = ev["numbers"]
    assert (n.get("total"), n.get("free"), n.get("this_process")) == (round(23.55 * GiB), round(12.75 * MiB), round(9.21 * GiB)), n
    assert cause == "other-process", ev["causes"]      # 14.3 GiB of the card held outside this process
    # the head without its period (a quote that drops it), and a figure line that is not PyTorch's stays apart
    _, _, ev = top("HIP out of memory. Tried to allocate 39.41 GiB\nGPU 0 has a total capacity of 31.98 GiB\n")
    assert ev["numbers"].get("total") == round(31.98 * GiB), ev["numbers"]
    _, _, ev = top("CUDA out of memory. Tried to allocate 20.00 MiB.\nGPU 0 temperature is 80 C\n")
    assert "total" not in ev["numbers"], ev["numbers"]


def test_allowed_figure_at_the_end_of_a_cut_quote_is_read():
    """A quote that stops right after "N allowed" (no ";" and nothing after it) still gives the per-process cap."""
    _, _, ev = top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of "
                   "23.55 GiB of which 527.23 MiB is free. this process has 20.10 GiB memory in use. 21.20 GiB allowed\n")
    assert ev["numbers"].get("allowed") == round(21.20 * GiB), ev["numbers"]


def _spark(this_process, others_line=""):
    # GB10's pool as PyTorch printed it in sagecodes/ai-build-and-learn's videogen notes (119.70 GiB, 527.23 MiB free)
    return ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 119.70 GiB "
            f"of which 527.23 MiB is free. {others_line}Including non-PyTorch memory, this process has {this_process} memory in "
            "use. 107.73 GiB allowed\n")


def test_unified_pool_held_outside_the_process_is_host_memory():
    """On a GB10 (DGX Spark) the GPU allocates from the host's RAM: 66 GiB of the pool outside this process, no other
    process named, is the host's own memory (a from_pretrained() copy before .to("cuda"), page cache); another program is
    the runner-up."""
    cause, conf, ev = top(_spark("52.68 GiB"))
    assert cause == "host-ram", ev["causes"]
    assert "other-process" in conf, conf
    assert any("unified pool" in e and "GB10" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_unified_pool_rule_keeps_to_its_device_and_its_evidence():
    # another process named on the Spark: that program (the other-process reading), not host memory
    cause, _, ev = top(_spark("52.68 GiB", "Process 4242 has 60.00 GiB memory in use. "))
    assert cause == "other-process", ev["causes"]
    # this process holds nearly all of the pool: nothing outside it to blame
    cause, _, ev = top(_spark("118.90 GiB"))
    assert cause != "host-ram", ev["causes"]
    # a discrete 80 GB card with the same share outside this process: another program
    cause, _, ev = top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity "
                       "of 79.25 GiB of which 300.00 MiB is free. Including non-PyTorch memory, this process has 35.00 GiB "
                       "memory in use.\n")
    assert cause == "other-process", ev["causes"]


METAL_BARE = "Metal command buffer failed: Insufficient Memory (kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"


def test_a_bare_metal_command_buffer_failure_stays_metal_unless_pytorch_is_named():
    """A Metal command buffer refused memory (the line MetalSim's post-mortem quotes, a Warp fork): nothing names PyTorch, so
    the device is Metal, not PyTorch's MPS, though the runtime is only the last-resort guess; PyTorch's own frame or its
    MPS wording makes it MPS."""
    _, _, ev = top(METAL_BARE)
    assert ev["device_kind"] == "metal", ev["device_kind"]
    _, _, ev = top('Traceback (most recent call last):\n  File "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", '
                   'line 1751, in _call_impl\n    return forward_call(*args, **kwargs)\n' + METAL_BARE)
    assert ev["device_kind"] == "mps", ev["device_kind"]
    _, _, ev = top("Error: command buffer exited with error status. The Metal Performance Shaders operations encoded on it may "
                   "not have completed. Error: (null) Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n")
    assert ev["device_kind"] == "mps", ev["device_kind"]
