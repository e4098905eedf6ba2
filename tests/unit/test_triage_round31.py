"""Triage round 31 (batch 41, then batches 58-59, after first sight). Lines written from the runtimes' own formats, not
copies of corpus cases: PyTorch's memory-fraction message ("N allowed") at the CAP_SHARE boundary, as it prints it rounded."""
import pytest

from support.triage_event import top


def _old_allowed(req, total, alloc, free, allowed, reserved):
    return (f"RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} already "
            f"allocated; {free} free; {allowed} allowed; {reserved} reserved in total by PyTorch)\n")


def _cap_named(text):
    _, _, ev = top(text)
    return any("per-process memory fraction" in e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("allowed, named", [
    ("17.74 GiB", True),     # 0.75 x 23.65 = 17.7375, printed 17.74: the fraction is CAP_SHARE itself
    ("17.76 GiB", False),    # 0.751: past CAP_SHARE and past the two-decimal rounding of both numbers
    ("18.92 GiB", False),    # 0.8
])
def test_the_cap_share_is_compared_as_printed(allowed, named):
    """review16a F3: a fraction of exactly 0.75 printed to two decimals reads over 0.75 x total; it is within the rounding.
    The free memory here leaves a quarter of the card beside the request, so the cap bound alone decides."""
    text = _old_allowed("20.00 MiB", "23.65 GiB", "17.60 GiB", "5.95 GiB", allowed, "17.72 GiB")
    assert _cap_named(text) is named
