"""Task tri60: MPS's "other allocations" read as this process's Metal memory, not another program's.

MPSAllocator.mm prints "other allocations" as current_allocated_size() - m_total_allocated_memory, the first being the
MTLDevice's currentAllocatedSize: torch.mps.driver_allocated_memory(), "total GPU memory allocated by Metal driver for the
process", which "includes cached allocations in MPSAllocator pools as well as allocations from MPS/MPSGraph frameworks"
(PyTorch's docs). The machine lines below are the even-half corpus cases' lines (the study's design half): a FireANTs
registration (LarschLab/ddharmap-FireANTs docs/docs/howto/gui-full-scale-findings.md), TabPFN from R (aml4td/website
R/forested_tab_pfn.R) and an embedding job quoted as its parenthesis only (ContextLab/mapper
notes/250k-embedding-generation-status.md); each thread's fix was a smaller input or batch."""
import pytest

from support.triage_event import top

FIREANTS = ("PYTORCH_ENABLE_MPS_FALLBACK=1\n"
            "MPS backend out of memory (MPS allocated: 5.77 GB, other allocations: 23.50 GB, max allowed: 30.19 GB). "
            "Tried to allocate 1.18 GB on private pool.\n")
TABPFN = ("Prediction failed: Error in py_call_impl(callable, call_args$unnamed, call_args$named) : RuntimeError:\n"
          "MPS backend out of memory (MPS allocated: 4.74 GiB, other allocations: 32.99 GiB, max allowed: 45.90 GiB). Tried to "
          "allocate 9.96 GiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory\n")
MAPPER = "MPS allocated: 23.43 GiB, other allocations: 102.81 GiB, max allowed: 132.19 GiB\n"


@pytest.mark.parametrize("text", [FIREANTS, TABPFN, MAPPER], ids=["fireants", "tabpfn", "mapper"])
def test_other_allocations_over_pytorchs_own_read_as_this_processs_working_memory(text):
    """Other allocations over PyTorch's figure (and 30 % of the limit or more): activations first, MPSGraph's caches grown
    across runs (leak) second; another program is not named, since no other application's memory is in the figure."""
    cause, conf, ev = top(text)
    assert cause == "activations", ev["causes"]
    assert list(conf)[:2] == ["activations", "leak"], ev["causes"]
    assert "other-process" not in conf, ev["causes"]
    said = " ".join(ev["causes"][0]["evidence"])
    assert "this process's Metal memory" in said and "another app" not in said, said


def test_other_allocations_under_pytorchs_own_are_not_read_by_the_row():
    """Other allocations under PyTorch's own figure (8.95 of 20.13 GiB beside 11.76 GiB allocated): the row does not fire,
    so no leak runner-up and no sentence about MPSGraph's memory."""
    cause, conf, ev = top("RuntimeError: MPS backend out of memory (MPS allocated: 11.76 GiB, other allocations: 8.95 GiB, "
                          "max allowed: 20.13 GiB). Tried to allocate 375.00 KiB on private pool.\n")
    assert "leak" not in conf, ev["causes"]
    assert not any("Metal memory outside" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_other_allocations_over_pytorchs_own_but_a_small_share_of_the_limit_are_not_read():
    """2.00 GiB of other allocations beside 1.00 GiB allocated under an 18.13 GiB limit (11 %, under the 30 % floor)."""
    _, conf, ev = top("RuntimeError: MPS backend out of memory (MPS allocated: 1.00 GiB, other allocations: 2.00 GiB, "
                      "max allowed: 18.13 GiB). Tried to allocate 16.00 GiB on private pool.\n")
    assert "leak" not in conf, ev["causes"]
