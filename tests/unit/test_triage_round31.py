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


def _cut(req, total, free):
    """PyTorch's current message as users quote it: the first two sentences, the per-process tail dropped."""
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of "
            f"which {free} is free.\n")


def _cut_row(ev):
    return any("cut before what PyTorch holds" in e for c in ev["causes"] for e in c["evidence"])


def test_a_cut_message_alone_on_a_full_card_names_the_model_first():
    """A layer-sized request (64 MiB, 0.3 % of the card) with the card full: what was placed before it fills the card."""
    cause, conf, ev = top(_cut("64.00 MiB", "23.54 GiB", "18.44 MiB"))
    assert cause == "weights-exceed-vram" and _cut_row(ev), (cause, conf)
    assert ev["uncertain"] and ev["causes"][1]["id"] == "activations", ev["causes"]


@pytest.mark.parametrize("text", [
    _cut("720.00 MiB", "23.54 GiB", "18.44 MiB"),             # 3 % of the card: over LAYER_SHARE, a working tensor's size
    _cut("300.00 MiB", "23.54 GiB", "1.20 GiB"),              # 5 % free: not a full card (over SLIVER)
    'Traceback (most recent call last):\n  File "infer.py", line 40, in <module>\n    out = model(x)\n'
    + _cut("64.00 MiB", "23.54 GiB", "18.44 MiB"),            # a traceback: the frames decide
    "Epoch 1/10\n" + _cut("64.00 MiB", "23.54 GiB", "18.44 MiB"),   # a training run: the batch is the knob
])
def test_the_cut_message_row_keeps_to_its_bounds(text):
    _, _, ev = top(text)
    assert not _cut_row(ev), ev["causes"]


def test_the_message_with_its_tail_is_not_the_cut_row():
    """With what PyTorch holds printed, script_full reads the numbers; the cut row is for the message without them."""
    text = _cut("64.00 MiB", "23.54 GiB", "18.44 MiB").rstrip("\n") + (
        " Including non-PyTorch memory, this process has 23.02 GiB memory in use. Of the allocated memory 22.61 GiB is "
        "allocated by PyTorch, and 110.50 MiB is reserved by PyTorch but unallocated.\n")
    _, _, ev = top(text)
    assert not _cut_row(ev), ev["causes"]
