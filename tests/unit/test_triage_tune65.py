"""Triage after batches 65-66 (first sight recorded). Lines written from PyTorch's MPS message format, not copies of
corpus cases: an "other allocations" figure that no machine holds is the allocator's count gone wrong (as in an
image-search service's MPS worker, MacPhobos/image-search-service MPS_MEMORY_FIX_ANALYSIS.md), not another app."""
import pytest

from support.triage_event import top


def _mps(allocated, other, allowed, req):
    return (f"RuntimeError: MPS backend out of memory (MPS allocated: {allocated}, other allocations: {other}, max allowed: "
            f"{allowed}). Tried to allocate {req} on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper "
            "limit for memory allocations (may cause system failure).\n")


def test_an_other_allocations_figure_many_times_the_limit_is_a_count_gone_wrong():
    """33554431.99 GiB of other allocations under an 18 GiB limit (an underflowed count): other, and the evidence says why."""
    cause, conf, ev = top(_mps("2.10 GiB", "33554431.99 GiB", "18.13 GiB", "12.00 MiB"))
    assert cause == "other", ev["causes"]
    assert any("a figure no machine holds" in e for e in ev["causes"][0]["evidence"]), ev["causes"][0]
    assert "other-process" not in [c["id"] for c in ev["causes"]], ev["causes"]      # the bogus figure is not memory held


@pytest.mark.parametrize("other, allowed", [("26.52 GB", "30.19 GB"), ("141.24 GiB", "182.78 GiB")])
def test_other_allocations_within_the_limit_still_read_as_memory_held_outside(other, allowed):
    """Real figures: other allocations at most the limit (this process's Metal memory beyond PyTorch's tensors, or growth across runs) stay other-process."""
    cause, _, ev = top(_mps("4.09 GB", other, allowed, "64.00 MiB"))
    assert cause == "other-process", ev["causes"]
