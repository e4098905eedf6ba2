"""Task tri73 (issue 14): the tiny-card weights row stands aside where PyTorch's own free figure says the card was not full.
Inputs written by hand in PyTorch's two message forms, the expected values worked out by hand; none taken from a corpus file.

PyTorch's caching allocator raises only after returning every idle cached block to the driver and retrying, and its "free"
figure is the driver's (c10/cuda/CUDACachingAllocator.cpp, the OOM branch). Free past a parameter's share of the card
(predicates.PARAM_SHARE, 5 %) with a request larger still: what was placed left more room than any one weight needs, and
the one request that failed was bigger than all of it, a working buffer (card_room.room_left). On a card of 2 GiB or less
the weights row ("the weights cannot fit", from the card's size alone) no longer answers there."""
import types

import pytest

from support.triage_event import top

MiB = 1 << 20
GiB = 1 << 30
OLD = ("RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; 2.00 GiB total capacity; {alloc} already "
       "allocated; {free} free; {res} reserved in total by PyTorch)\n")
NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 1.95 GiB "
       "of which {free} is free. Including non-PyTorch memory, this process has 1.10 GiB memory in use. Of the allocated "
       "memory 900.00 MiB is allocated by PyTorch, and 40.00 MiB is reserved by PyTorch but unallocated.\n")
# (tri74) PyTorch holds 900 MiB of 1.95 GiB (45 %), under card_room.HELD_SHARE: tri74's test file covers the held figure


@pytest.mark.parametrize("text", [
    # a training step's 512 MiB buffer, 380 MiB free of 2 GiB (18.6 %), 900 MiB held (44 %, over round 113's tenth), the
    # request a quarter of the card (under the activations' 50 % row): only the new reading takes the weights row out
    OLD.format(req="512.00 MiB", alloc="900.00 MiB", free="380.00 MiB", res="920.00 MiB"),
    # round 113's former control: 1.00 GiB free and a 1.40 GiB request on the same card
    OLD.format(req="1.40 GiB", alloc="300.00 MiB", free="1.00 GiB", res="310.00 MiB"),
    # PyTorch 2.x's form: 300 MiB free of 1.95 GiB (15 %) beside a 512 MiB request
    NEW.format(free="300.00 MiB"),
])
def test_room_left_on_a_tiny_card_is_not_the_weights(text):
    # fails on the old rules: the tiny-card row (6.0) read weights-exceed-vram on each
    cause, conf, ev = top(text)
    assert cause == "activations", conf
    assert conf.get("weights-exceed-vram", 0) < conf["activations"]
    assert not any("the weights cannot fit" in e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("text", [
    # 90 MiB free is under a parameter's share (102.4 MiB of 2 GiB): the card is full, the tiny row keeps it
    OLD.format(req="512.00 MiB", alloc="900.00 MiB", free="90.00 MiB", res="920.00 MiB"),
    NEW.format(free="80.00 MiB"),
    # a small request on a full tiny card (round 113's first control)
    OLD.format(req="20.00 MiB", alloc="1.50 GiB", free="10.00 MiB", res="1.60 GiB"),
])
def test_a_full_tiny_card_stays_the_weights(text):
    assert top(text)[0] == "weights-exceed-vram"


def test_room_left_reads_only_what_the_message_says():
    from gpu_garden.memory.triage.card_room import room_left

    def case(req, total, **n):
        return types.SimpleNamespace(req=req, total=total, n=dict(n, requested=req, total=total))
    # (tri74) each with PyTorch holding 918 MiB (45 % of the card, under card_room.HELD_SHARE)
    held = {"allocated": 918 * MiB}
    assert room_left(case(600 * MiB, 2 * GiB, free=424 * MiB, **held))
    assert not room_left(case(600 * MiB, 2 * GiB, free=100 * MiB, **held))      # under 5 % of the card (102.4 MiB)
    assert not room_left(case(300 * MiB, 2 * GiB, free=424 * MiB, **held))      # the request fits in what is free
    assert not room_left(case(600 * MiB, 2 * GiB, reserved=1 * GiB, **held))    # no free figure said: none worked out
    assert not room_left(case(600 * MiB, 0, free=424 * MiB, **held))            # no card total
