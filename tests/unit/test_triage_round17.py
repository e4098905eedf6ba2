"""Triage round 17: the card's total and cudaMallocAsync's device limit kept apart, and its message broken after the device
keeping the device, written from the runtimes' own strings (each with a control that keeps its old reading)."""
import pytest

from support.cli_run import unwrap
from support.triage_event import last_event
from gpu_garden.memory.triage import engine, parse as P
from gpu_garden.memory.units import GiB, MiB

# c10/cuda/CUDAMallocAsyncAllocator.cpp prints its block one line a field; "Device limit" is what cudaMemGetInfo reported as the
# device total when the pool was set up (a number this allocator has printed wrong: 13.81 GiB on a 4 GB card)
BLOCK = ("Currently allocated     : 2.10 GiB\n"
         "Requested               : 400.00 MiB\n"
         "Device limit            : {limit}\n"
         "Free (according to CUDA): 90.00 MiB\n")
MSG = "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
# comfy/model_management.py prints the card it measured with torch.cuda.mem_get_info at start
START = "Total VRAM 3072 MB, total RAM 15934 MB\n"


def _numbers_line(text):
    # term.py wraps the line: read it whole
    return next(l for l in unwrap(engine.render_human(engine.triage_text(text))).splitlines() if l.startswith("Numbers: "))


# --- "total" is the card's capacity only: the device limit is not copied into it -----------------------------------------

def test_the_async_message_has_no_total_of_its_own():
    ev = P.recognise(MSG.strip())
    for line in BLOCK.format(limit="11.50 GiB").splitlines():
        P.add_async_fields(ev, line)
    assert ev["complete"] and ev["numbers"]["device_limit"] == round(11.5 * GiB) and "total" not in ev["numbers"], ev


def test_a_device_limit_past_the_start_up_card_is_not_shown_as_the_cards_total():
    line = _numbers_line(START + MSG + BLOCK.format(limit="11.50 GiB"))
    assert "total 3.00 GiB" in line and "device limit 11.50 GiB (larger than the card's 3.00 GiB)" in line, line
    assert "total 11.50 GiB" not in line, line
    res, ev = last_event(START + MSG + BLOCK.format(limit="11.50 GiB"))
    assert ev["numbers"]["total"] == 3072 * MiB and ev["numbers"]["device_limit"] == round(11.5 * GiB), ev["numbers"]


@pytest.mark.parametrize("head", ["", START])
def test_a_device_limit_that_is_the_card_is_shown_as_printed(head):
    # no start-up line, or one that matches (3.10 GiB on a 3072 MB card): nothing replaced, no total invented
    line = _numbers_line(head + MSG + BLOCK.format(limit="3.10 GiB"))
    assert "device limit 3.10 GiB" in line and "larger than" not in line and "total" not in line, line


def test_the_guide_total_is_the_card_the_case_chose():
    # the card's total in the guide: the start-up 3.00 GiB (the 11.50 GiB limit is not this card); with a limit that
    # matches, the limit itself (4.00 GiB on a 4096 MB card)
    _, ev = last_event(START + MSG + BLOCK.format(limit="11.50 GiB"))
    assert "11.5 GB" not in ev["guide"]["markdown"] and "11.50 GiB" not in ev["guide"]["markdown"]
    from gpu_garden.memory.triage import advice, case as case_mod, env as env_mod
    from gpu_garden.memory.triage.scan import Scan
    for text, want in ((START + MSG + BLOCK.format(limit="11.50 GiB"), "3.0"),
                       ("Total VRAM 4096 MB, total RAM 15934 MB\n" + MSG + BLOCK.format(limit="4.00 GiB"), "4.0"),
                       (MSG + BLOCK.format(limit="7.78 GiB"), "7.8")):
        scan = Scan()
        scan.feed_text(text)
        inc = scan.incidents[-1]
        env = env_mod.infer(scan, inc, None)
        x = case_mod.build(scan, inc, None, env)
        assert advice.params(inc, env, scan, None, x.total)["total_gib"] == want, text


# --- the message broken after its device keeps the device ------------------------------------------------------------------
# (Krita's ComfyUI plugin shows the error in a dialog that wraps it; so does a narrow terminal)

@pytest.mark.parametrize("first,index", [
    ("Allocation on device 1", 1),
    ("torch.OutOfMemoryError: Allocation on device 0", 0),
    ("!!! Exception during processing !!! Allocation on device 2", 2),
])
def test_the_broken_message_keeps_its_device(first, index):
    text = first + "\nwould exceed allowed memory. (out of memory)\n" + BLOCK.format(limit="7.78 GiB")
    res, ev = last_event(text)
    assert ev["kind"] == "torch.cuda_async" and ev.get("device_index") == index, ev
    assert ev["numbers"]["device_limit"] == round(7.78 * GiB) and ev["numbers"]["free"] == 90 * MiB, ev["numbers"]
    assert res["count"] == 1


def test_the_second_half_alone_has_no_device():
    res, ev = last_event("would exceed allowed memory. (out of memory)\n" + BLOCK.format(limit="7.78 GiB"))
    assert ev["kind"] == "torch.cuda_async" and ev.get("device_index") is None, ev


def test_a_device_line_without_the_rest_is_not_an_out_of_memory():
    assert not engine.triage_text("Allocation on device 0\nLoading model weights\n")["found"]
