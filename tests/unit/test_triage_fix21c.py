"""Task fix21c (review21b findings on triage). Lines written from the runtimes' own messages, names and numbers made up,
expected values by hand."""
from support.triage_event import top

GIB = 1 << 30


def test_mtplx_required_is_the_printed_resident_figure_and_the_headroom_its_own_number():
    """review21b finding 6: "at least A resident plus H system headroom is required": required = A as printed (what a
    label declares), headroom = H; the evidence names both and their sum (before: required A + H)."""
    _, _, ev = top("RuntimeError: Qwen4-70B cannot load inside the available Metal memory budget; at least 83.3 GiB "
                   "resident plus 16 GiB system headroom is required\n")
    assert abs(ev["numbers"]["required"] - 83.3 * GIB) < 0.01 * GIB, ev["numbers"]
    assert ev["numbers"]["headroom"] == 16 * GIB, ev["numbers"]
    text = ev["causes"][0]["evidence"][0]
    assert "83.30 GiB resident plus 16.00 GiB headroom = 99.30 GiB" in text, text
    # without a headroom clause there is no headroom number
    _, _, ev = top("RuntimeError: Qwen4-70B cannot load inside the available Metal memory budget; at least 83.3 GiB "
                   "resident is required\n")
    assert "headroom" not in ev["numbers"], ev["numbers"]
