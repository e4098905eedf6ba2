"""NVIDIA's Windows sysmem fallback: PyTorch reports more allocated (or reserved) than the card's total capacity.

The messages are PyTorch's own formats (c10/cuda/CUDACachingAllocator.cpp: the >= 2.1 "GPU 0 has a total capacity of"
form and the older "(GPU 0; N total capacity; ...)" form) with numbers of our own, not copies of corpus cases. The
confidences are worked out by hand from the row weights in memory/triage/rules.py, over the fired points plus the 0.75 of
"not determined" (rank.NOT_DETERMINED):
  activations 1.5   a small request with nothing free, the bare message (no traceback)
  weights     1.45  sysmem_fallback: PyTorch holds more than 1.02x the card and the request is <= 5 % of it
  fragmentation 1.4 the sliver row: reserved-but-unallocated >= the request (old form only, here)
"""
import pytest

from gpu_garden.memory.triage import engine, predicates, rules as R
from gpu_garden.memory.triage.rules_runner_up import SAYS

NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 120.00 MiB. GPU 0 has a total capacity of 11.99 GiB of "
       "which 0 bytes is free. Of the allocated memory 19.40 GiB is allocated by PyTorch, and 61.25 MiB is reserved by PyTorch "
       "but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
       "to avoid fragmentation.  See documentation for Memory Management  "
       "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")
OLD = ("RuntimeError: CUDA out of memory. Tried to allocate 90.00 MiB (GPU 0; 8.00 GiB total capacity; 14.20 GiB already "
       "allocated; 0 bytes free; 14.31 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
       "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n")


def causes(text, ctx=None):
    res = engine.triage_text(text, ctx)
    ev = res["events"][-1]
    return res, ev, [(c["id"], c["confidence"]) for c in ev["causes"]]


def sysmem_said(ev) -> bool:
    return any("sysmem fallback" in e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("ctx", [None, {"platform": "windows"}])
def test_more_allocated_than_the_card_names_the_weights_beside_the_batch(ctx):
    res, ev, got = causes(NEW, ctx)
    # with "not determined" 0.75: 1.5 / 3.7 = 0.405, 1.45 / 3.7 = 0.392
    assert got == [("activations", 0.41), ("weights-exceed-vram", 0.39)], got
    assert res["uncertain"] and [a["guide"]["id"] for a in res["alternatives"]] == ["pytorch-activations", "pytorch-weights"]
    w = next(c for c in ev["causes"] if c["id"] == "weights-exceed-vram")
    assert "19.40 GiB allocated on a 11.99 GiB card" in w["evidence"][0], w["evidence"]
    faq = [f for f in ev["guide"]["faqs"] if f["id"] == "faq-sysmem-fallback"]
    assert faq and all(s in faq[0]["markdown"] for s in ("Sysmem Fallback Policy", "Prefer No Sysmem Fallback", "--lowvram",
                                                         "--reserve-vram", "quantized")), ev["guide"]["faqs"]


def test_the_old_message_form_reads_the_same():
    res, ev, got = causes(OLD)
    # 1.5, 1.45, 1.4 of 4.35 + 0.75 points: 0.294, 0.284, 0.275
    assert got == [("activations", 0.29), ("weights-exceed-vram", 0.28), ("fragmentation", 0.27)], got
    assert "14.20 GiB allocated on a 8.00 GiB card" in ev["causes"][1]["evidence"][0]


@pytest.mark.parametrize("text, ctx", [
    (NEW, {"platform": "linux"}),                                        # no fallback on Linux
    (NEW, {"backend": "rocm"}),                                          # nor on ROCm
    (NEW.replace("19.40 GiB is allocated", "11.60 GiB is allocated"), None),   # within the card
    (NEW.replace("19.40 GiB is allocated", "12.10 GiB is allocated"), None),   # 1.009x the card: rounding, not a spill
    (NEW.replace("120.00 MiB", "3.00 GiB"), None),                       # a request of a quarter of the card
    (OLD.replace("0 bytes free", "17179869183.96 GiB free"), None),      # an impossible free value
])
def test_no_sysmem_reading_without_the_spill(text, ctx):
    _, ev, got = causes(text, ctx)
    assert not sysmem_said(ev), got
    assert not any(f["id"] == "faq-sysmem-fallback" for f in (ev["guide"] or {}).get("faqs", []))


def test_a_linux_log_of_the_same_message_is_the_batch_alone():
    _, ev, got = causes(NEW, {"platform": "linux"})
    # 1.5 / (1.5 + 0.45 + 0.75): the batch alone; the weights only as rules_runner_up's likeliest other reading (alt1)
    assert got == [("activations", 0.56), ("weights-exceed-vram", 0.17)], got
    assert not sysmem_said(ev) and all(e.startswith(SAYS) for e in ev["causes"][1]["evidence"])


def test_deliberate_errors_break_the_sysmem_tests(monkeypatch):
    monkeypatch.setattr(predicates, "OVER_CARD", 2.0)        # 19.40 / 11.99 = 1.62: the row stops firing
    with pytest.raises(AssertionError):
        test_more_allocated_than_the_card_names_the_weights_beside_the_batch(None)
    monkeypatch.undo()
    row = next(i for i, r in enumerate(R.RULES) if r.when is predicates.sysmem_fallback)
    for weight in (1.6, 1.0):                                  # over activations (top-1 flips), or a different share
        rules = list(R.RULES)
        rules[row] = rules[row]._replace(weight=weight)
        monkeypatch.setattr(R, "RULES", rules)
        with pytest.raises(AssertionError):
            test_more_allocated_than_the_card_names_the_weights_beside_the_batch(None)
    monkeypatch.undo()
    monkeypatch.setattr(predicates, "OVER_CARD", 0.9)        # within the card would read as a spill
    with pytest.raises(AssertionError):
        test_no_sysmem_reading_without_the_spill(NEW.replace("19.40 GiB is allocated", "11.60 GiB is allocated"), None)


# allocated within the rounding band of the card (16.10 of 15.99 GiB: 1.007x) and reserved past it (16.10 GiB + 300 MiB =
# 16.39 GiB: 1.025x), under the 512 MiB request (no sliver row): the spill row reads the reserved figure; the script row
# ("the model fills the card") must not add the same weights a second time. activations 1.5, weights 1.45 alone:
# 1.5 / 3.7 = 0.41, 1.45 / 3.7 = 0.39
SPILLED_RESERVE = NEW.replace("11.99 GiB", "15.99 GiB").replace("19.40 GiB is allocated", "16.10 GiB is allocated") \
    .replace("61.25 MiB is reserved", "300.00 MiB is reserved").replace("120.00 MiB", "512.00 MiB")


def test_reserved_past_the_card_is_the_spill_alone():
    # catches: script_full firing beside sysmem_fallback (weights 1.6 + 1.45 = 3.05: 0.58, over activations 0.28)
    _, ev, got = causes(SPILLED_RESERVE)
    assert got == [("activations", 0.41), ("weights-exceed-vram", 0.39)], got
    w = next(c for c in ev["causes"] if c["id"] == "weights-exceed-vram")
    assert len(w["evidence"]) == 1 and "16.39 GiB reserved on a 15.99 GiB card" in w["evidence"][0], w["evidence"]
