"""Round 76 (batches 188, 190, 191, 192): XLA's TPU refusal of a device buffer with the chip full and a layer-sized request,
the message alone (predicates.tpu_full, rules_weights), and PyTorch/XLA's "RuntimeError: Bad StatusOr access" naming
PyTorch's run (env.TORCH_XLA_STATUS). Modelled on googlecolab/colabtools#5126 (a 7B fine-tune on a v2-8 runtime) and
pytorch/xla#8020 (a run at its first step); sizes and prose rewritten."""
from gpu_garden.memory.triage import engine as triage


def _line(prefix, req, free):
    return (f"{prefix}RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate {req}. That was not "
            f"possible. There are {free} free.; (0x0x0_HBM0)\n")


TORCH_XLA = "RuntimeError: Bad StatusOr access: "
JAX = "jaxlib.xla_extension.XlaRuntimeError: "


def _head(text):
    res = triage.triage_text(text)
    assert res["found"]
    return res, res["events"][res["headline"]]


def test_torch_xla_full_chip_layer_sized_request_reads_as_weights():
    res, ev = _head(_line(TORCH_XLA, "96.00M", "41.25M"))
    assert ev["kind"] == "xla.oom" and ev["device_kind"] == "tpu"
    assert res["cause"] == "weights-exceed-vram"
    assert ev["causes"][1]["id"] == "activations"       # the buffer row stays the runner-up


def test_jax_full_chip_layer_sized_request_reads_as_weights_too():
    res, ev = _head(_line(JAX, "144.00M", "102.50M"))
    assert res["cause"] == "weights-exceed-vram"
    assert ev["runtime"] == "jax"


def test_request_far_over_what_is_free_is_not_a_full_chip():
    # gigabytes asked with gigabytes free: one large buffer, not a chip filled before it
    res, _ = _head(_line(JAX, "9.40G", "6.12G"))
    assert res["cause"] != "weights-exceed-vram"


def test_more_than_a_sliver_free_is_not_a_full_chip():
    # 1.10G free is over 4 % of even a v2 core's 8 GiB
    res, _ = _head(_line(TORCH_XLA, "150.00M", "1.10G"))
    assert res["cause"] != "weights-exceed-vram"


def test_a_run_with_completed_steps_is_not_read_as_the_model():
    bar = "  0%|          | 1/300 [12:05<60:11:40, 722.40s/it]\n"
    res, _ = _head(bar + _line(TORCH_XLA, "96.00M", "41.25M"))
    assert res["cause"] != "weights-exceed-vram"


def test_bad_statusor_access_names_pytorch_xla():
    _, ev = _head(_line(TORCH_XLA, "2.00G", "1.50G"))
    assert ev["runtime"] == "pytorch"
    _, ev = _head(_line(JAX, "2.00G", "1.50G"))
    assert ev["runtime"] == "jax"
