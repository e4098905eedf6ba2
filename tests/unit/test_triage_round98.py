"""Triage round 98 (task tune98: batches 441 and 453-457 after first sight), written from PyTorch's own message formats:
- PyTorch <= 2.0's bracket quoted without the sentence before it, opening a line ("GPU 0; T total capacity; A already
  allocated; F free", with its "(" and "R reserved in total by PyTorch" or without): PyTorch's caching allocator, its
  figures read; without the reserved figure only where the card is nearly full (a mostly free card refused nothing).
- PyTorch's message giving its allocated and free figures and neither a reserved figure nor a process list (the <= 2.0
  bracket without "reserved in total", a 2.x quote cut after "is allocated by PyTorch"): the card less free less PyTorch's
  tensors at half the card or more reads other-process; under half it does not (trfix2, rev1 B2: from 0.8 of the card).
The sizes and the lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import error_patterns as RX

from support.triage_event import kinds as _kinds, read as _read, top as _top  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2
_KIB = 1024


def test_old_bracket_alone_opening_a_line_is_read():
    # 23.65 - 2.10 GiB (allocated) - 6.5 MiB (free) = 21.54 GiB, less the GiB of an eager <= 2.0 context: 20.54 >= 18.92 (0.8)
    cause, kind, runtime, dev, nums = _read("GPU 3; 23.65 GiB total capacity; 2.10 GiB already allocated; 6.50 MiB free\n")
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums == {"total": round(23.65 * _GIB), "allocated": round(2.1 * _GIB), "free": round(6.5 * _MIB)}
    assert cause == "other-process"


def test_old_bracket_alone_with_its_parenthesis_and_reserved_figure():
    _, kind, _, _, nums = _read("  (GPU 0; 7.79 GiB total capacity; 5.00 GiB already allocated; 100.00 MiB free; "
                                "6.00 GiB reserved in total by PyTorch)\n")
    assert kind == "torch.cuda"
    assert nums == {"total": round(7.79 * _GIB), "allocated": 5 * _GIB, "free": 100 * _MIB, "reserved": 6 * _GIB,
                    "reserved_unallocated": 1 * _GIB}


def test_old_bracket_alone_with_cached_figure():
    # <= 1.4: "cached" is the unused part of the cache, not its total
    _, _, _, _, nums = _read("GPU 0; 3.95 GiB total capacity; 2.50 GiB already allocated; 12.00 KiB free; 400.00 MiB cached\n")
    assert nums["reserved_unallocated"] == 400 * _MIB and nums["reserved"] == round(2.5 * _GIB) + 400 * _MIB
    assert nums["free"] == 12 * _KIB


def test_old_bracket_alone_on_a_mostly_free_card_is_not_the_message():
    # no reserved figure and 20 of 24 GiB free (over predicates.SLIVER of the card): a refusal is not what it reports
    assert "torch.cuda" not in _kinds("GPU 0; 24.00 GiB total capacity; 1.00 GiB already allocated; 20.00 GiB free\n")
    # mid-line after other words: not opening a quote of the bracket
    assert "torch.cuda" not in _kinds("status GPU 0; 24.00 GiB total capacity; 23.00 GiB already allocated; 1.00 MiB free\n")


def test_old_message_without_reserved_figure_most_of_the_card_outside_tensors():
    # 31.75 - 1.20 - 0.0078 = 30.54 GiB neither free nor tensors (read form "partial": no eager GiB taken off) >= 25.40 (0.8)
    cause, conf, ev = _top("RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB\n"
                           "(GPU 0; 31.75 GiB total capacity; 1.20 GiB already allocated; 8.00 MiB free)\n")
    assert ev["numbers"]["requested"] == 64 * _MIB and ev["numbers"]["allocated"] == round(1.2 * _GIB)
    assert cause == "other-process"
    assert conf["other-process"] > conf.get("activations", 0)
    # (rev1 T2) the rules saw the request (not only the numbers merged after them)
    assert "64.00 MiB requested with 8.00 MiB free of 31.75 GiB" in [e for c in ev["causes"] for e in c["evidence"]]


def test_old_message_without_reserved_figure_tensors_fill_the_card():
    # 11.75 - 9.80 - 0.0117 = 1.94 GiB < 9.40 (0.8 of the card): the tensors hold the card
    cause, conf, _ = _top("RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB\n"
                          "(GPU 0; 11.75 GiB total capacity; 9.80 GiB already allocated; 12.00 MiB free)\n")
    assert "other-process" not in conf


def test_new_message_cut_after_allocated_most_of_the_card_outside_tensors():
    # ROCm, 2.x wording, the quote cut after PyTorch's allocated figure: 191.98 - 30.00 - 0 = 161.98 GiB >= 153.58 (0.8)
    cause, kind, _, dev, nums = _read("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.\n"
                                      "GPU 0 has a total capacity of 191.98 GiB of which 0 bytes is free.\n"
                                      "Of the allocated memory 30.00 GiB is allocated by PyTorch, ...\n")
    assert (kind, dev) == ("torch.hip", "rocm")
    assert nums["allocated"] == 30 * _GIB and "reserved" not in nums
    assert cause == "other-process"


def test_new_message_with_its_reserved_figure_is_left_to_the_outside_rows():
    # the whole message: reserved 22.10 GiB, so the gap row (no reserved figure) does not read it; the card is this process's
    cause, conf, _ = _top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                          "23.65 GiB of which 1.02 GiB is free. Of the allocated memory 6.10 GiB is allocated by PyTorch, and "
                          "16.00 GiB is reserved by PyTorch but unallocated.\n")
    assert "other-process" not in conf


def test_round_98_patterns_stay_linear():
    mb = 1 << 20
    for text in ("GPU 0; " + "9" * mb, "GPU 0; 1.00 GiB total capacity; " * (mb // 32), " " * mb + "GPU 0;",
                 "(GPU 0; 1.00 GiB total capacity; 1.00 GiB already allocated; " + "1" * mb,
                 "GPU 0; 1.00 GiB total capacity; 1.00 GiB already allocated; 1.00 MiB free; " + "2.00 GiB " * (mb // 9),
                 "\t" * 16 + "(device 1; " + "0." * (mb // 2)):
        t = cpu_now()
        RX.TORCH_BRACKET_OPEN.search(text)
        assert cpu_now() - t < cpu_limit(1.0)
    t = cpu_now()
    _kinds("GPU 0; 1.00 GiB total capacity; " * (mb // 32) + "\n" + "GPU 0; 1.00 GiB total capacity; 9" * (mb // 34) + "\n")
    assert cpu_now() - t < cpu_limit(10.0)


def test_other_process_guide_reads_without_a_process_figure():
    """(tune98's note) the gap row names other-process with no process listed, so the guide's {{other_processes}} takes its
    fallback, "part of the card": the sentence must read "part of the card is used by other processes", not "part of the
    card of the card"."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 47.38 GiB total "
                             "capacity; 882.30 MiB already allocated; 13.88 MiB free)\n")
    assert res["cause"] == "other-process"
    text = repr(res)
    assert "part of the card is used by other processes" in text
    assert "of the card of the card" not in text
