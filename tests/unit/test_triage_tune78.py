"""Round 78 (batches 207-211): PyTorch's out-of-memory message quoted with ellipses for what was cut ("torch.OutOfMemoryError:
... Tried to allocate N ... M is free", error_patterns.TORCH_TYPE_REQ / TORCH_CUT_FREE). Modelled on the optimisation log
committed to nomanoma121/My-FreeToken (logs/optimization-log.md: an MoE server's dense weights on a 12 GB card); sizes and
wording around the message rewritten."""

from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.units import parse_size
from support.regex_time import cpu_limit, cpu_now


def _head(text):
    res = triage.triage_text(text)
    assert res["found"]
    return res, res["events"][res["headline"]]


def test_ellipsis_for_the_cut_message_keeps_request_and_free():
    res, ev = _head("server start failed:\ntorch.OutOfMemoryError: ... Tried to allocate 1.25 GiB ... 96.50 MiB is free\n")
    assert ev["kind"] == "torch.cuda" and ev["runtime"] == "pytorch"
    assert ev["numbers"] == {"requested": parse_size("1.25 GiB"), "free": parse_size("96.50 MiB")}


def test_unicode_ellipsis_reads_the_same():
    _, ev = _head("torch.OutOfMemoryError: \u2026 Tried to allocate 512.00 MiB \u2026 40.12 MiB is free")
    assert ev["numbers"] == {"requested": parse_size("512.00 MiB"), "free": parse_size("40.12 MiB")}


def test_request_after_the_type_with_only_of_which_free_kept():
    # the card's total cut out of the middle, "of which M is free" left: the free figure is still PyTorch's own
    _, ev = _head("torch.OutOfMemoryError: Tried to allocate 2.00 GiB. GPU 0 ... of which 310.44 MiB is free")
    assert ev["numbers"]["requested"] == parse_size("2.00 GiB")
    assert ev["numbers"]["free"] == parse_size("310.44 MiB")


def test_free_figure_needs_the_elision_or_of_which():
    # a bare "M is free" after a full stop is not PyTorch's wording; nor is a figure before the request
    _, ev = _head("torch.OutOfMemoryError: Tried to allocate 800.00 MiB. 182.88 MiB is free")
    assert ev["numbers"] == {"requested": parse_size("800.00 MiB")}
    _, ev = _head("torch.OutOfMemoryError: ... 64.00 MiB is free ... Tried to allocate 800.00 MiB")
    assert "free" not in ev["numbers"]


def test_elided_line_stays_linear():
    line = "torch.OutOfMemoryError: ... Tried to allocate 8.00 MiB " + "... 1.0" * 40000 + "\n"
    t = cpu_now()
    triage.triage_text(line)
    assert cpu_now() - t < cpu_limit(5.0)
