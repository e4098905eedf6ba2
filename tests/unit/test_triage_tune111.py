"""Triage after batch 111 (round 60). PyTorch <= 2.0's caching-allocator message as a paste may give it, with the space after
one of the bracket's semicolons lost (salesforce/ALBEF#6's form: "already allocated;F free"). Sizes and card made up;
expected values by hand."""
from support.triage_event import top

MIB = 1 << 20
GIB = 1 << 30

NO_SPACE = ("RuntimeError: CUDA out of memory. Tried to allocate 250.00 MiB (GPU 3; 31.75 GiB total capacity; 28.40 GiB already "
            "allocated;97.06 MiB free; 30.12 GiB reserved in total by PyTorch).\n")


def test_torch_old_message_with_a_semicolon_without_its_space_reads_every_figure():
    """A semicolon inside the bracket without the space after it: the total, allocated, free and reserved figures are
    still read (not only the request), with the card's index."""
    _, _, ev = top(NO_SPACE)
    assert (ev["runtime"], ev["device_kind"], ev["kind"], ev["form"]) == ("pytorch", "cuda", "torch.cuda", "<=2.0"), ev
    n = ev["numbers"]
    assert (n["requested"], n["total"], n["allocated"], n["reserved"]) == (250 * MIB, round(31.75 * GIB), round(28.40 * GIB),
                                                                            round(30.12 * GIB)), n
    assert abs(n["free"] - 97.06 * MIB) < 1, n
    assert ev["device_index"] == 3, ev


def test_every_semicolon_of_the_bracket_may_lose_its_space():
    """Each separator (after the total, the allocated, the free and the allowed figure) takes ";" as well as "; "."""
    _, _, ev = top("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0;7.79 GiB total capacity;6.90 GiB already allocated;"
                   "4.56 MiB free;1.50 GiB allowed;7.01 GiB reserved in total by PyTorch)\n")
    n = ev["numbers"]
    assert (n["total"], n["allocated"], n["allowed"], n["reserved"]) == (round(7.79 * GIB), round(6.90 * GIB), round(1.50 * GIB),
                                                                         round(7.01 * GIB)), n
