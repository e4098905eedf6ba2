"""trfix2 (session 39, review rev1 of triage round 98): PyTorch <= 2.0's whole message wrapped after "Tried to allocate X"
is one event whose rules see the request (B1); the gap row (other-process from the card less free less PyTorch's tensors
where the reserved figure was cut) fires from 0.8 of the card, not half (B2); and the smallest cases for the errors the
review found no test catching (T1). The expected values are worked out by hand in the comments."""
from support.triage_event import kinds as _kinds, last_event as _last, read as _read, top as _top

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_old_message_wrapped_after_the_request_is_one_event_with_its_request():
    # B1: the bracket line continues line 1's message (it is not its own headline): 15.78 total, 14.30 reserved, 1.20
    # allocated, so 13.10 GiB reserved but unallocated beside a 20 MiB request with 8 MiB free: fragmentation
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
            "(GPU 0; 15.78 GiB total capacity; 1.20 GiB already allocated; 8.00 MiB free; 14.30 GiB reserved in total by PyTorch)\n")
    res, ev = _last(text)
    assert res["cause"] == "fragmentation"
    assert ev["numbers"]["requested"] == 20 * _MIB
    assert any("the 20.00 MiB requested" in e for c in ev["causes"] for e in c["evidence"])
    assert ev["line"] == 1 and not ev["uncertain"]
