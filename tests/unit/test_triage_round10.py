"""Triage round 10 (batches 29-30 tuned on): rows read from the runtimes' own sources, each pinned by the machine
lines of a public thread and by a near miss the row must leave alone."""
from gpu_garden.memory.triage import engine as triage


def _causes(log):
    res = triage.triage_text(log)
    return res["cause"], {c["id"]: c for c in res["events"][-1]["causes"]}


MPS = ("RuntimeError: MPS backend out of memory (MPS allocated: {a}, other allocations: {o}, max allowed: {cap}). Tried to "
       "allocate {req} on {pool} pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
       "allocations (may cause system failure).\n")


def test_mps_with_nothing_allocated_is_no_metal_device():
    # sktime/pytorch-forecasting#1596 (macos-latest CI runner) and pytorch/pytorch#111449 (macOS x86 runner, 0-byte request):
    # MPSAllocator.h fails a request past the high watermark or when Metal returns no heap; with 0 bytes held the
    # watermark cannot be it. other 6.0 against the MPS catch-all activations 1.5
    for a, cap, req, pool in (("0 bytes", "7.93 GB", "256 bytes", "shared"), ("0 bytes", "1.70 GB", "0 bytes", "private")):
        cause, c = _causes(MPS.format(a=a, o="0 bytes", cap=cap, req=req, pool=pool))
        assert cause == "other", (cap, req)
        assert c["other"]["confidence"] == round(6.0 / 7.5, 2)
        assert any("no heap" in e for e in c["other"]["evidence"])


def test_mps_near_misses_stay_shortages():
    # something held (a byte of other allocations) or a request of half the limit: the watermark can refuse it
    assert _causes(MPS.format(a="0 bytes", o="5.10 GB", cap="7.93 GB", req="256 bytes", pool="shared"))[0] != "other"
    assert _causes(MPS.format(a="0 bytes", o="0 bytes", cap="7.93 GB", req="4.00 GB", pool="private"))[0] == "activations"
