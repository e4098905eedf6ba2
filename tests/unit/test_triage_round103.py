"""Triage round 103 (task tune103: batches 533-535 after first sight), written from PyTorch's own message format:
- PyTorch's capacity sentence cut by the quoter's ellipsis after a comma ("GPU 0 has a total capacity of T, ... this process
  has N memory in use."): the capacity and the sentences kept after the ellipsis are read, as the cut without the comma is.
- PyTorch's message quoted with its first sentence alone on a line ("CUDA out of memory.") and the request opening the next
  ("Tried to allocate N. GPU 0 has a total capacity of T."), the process sentences a line each after it: joined as one message.
The sizes and the lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import error_patterns as RX
from gpu_garden.memory.triage import paste as PASTE

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_capacity_cut_by_ellipsis_after_a_comma_reads_total_and_this_process():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 640.00 MiB.\n"
            "GPU 0 has a total capacity of 15.75 GiB, ... this process has 14.50 GiB memory in use.\n")
    _, kind, runtime, dev, nums = _read(text)
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums["requested"] == 640 * _MIB
    assert nums["total"] == round(15.75 * _GIB)
    assert nums["this_process"] == round(14.5 * _GIB)


def test_capacity_cut_by_ellipsis_on_one_line_with_comma():
    _, kind, _, _, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
                                "39.38 GiB, ... this process has 38.00 GiB memory in use.\n")
    assert kind == "torch.cuda"
    assert (nums["total"], nums["this_process"]) == (round(39.38 * _GIB), 38 * _GIB)
    # a comma with no ellipsis after it is not the cut form: the capacity is not read from it
    _, _, _, _, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
                             "39.38 GiB, and more text\n")
    assert "total" not in nums


def test_first_sentence_alone_on_its_line_then_request_and_process_lines():
    text = ("torch.OutOfMemoryError: CUDA out of memory.\n"
            "Tried to allocate 96.00 MiB. GPU 0 has a total capacity of 3.80 GiB.\n"
            "Process 4321 has 40.00 MiB memory in use.\n"
            "Including non-PyTorch memory, this process has 3.50 GiB memory in use.\n")
    _, kind, runtime, dev, nums = _read(text)
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums["requested"] == 96 * _MIB
    assert nums["total"] == round(3.8 * _GIB)
    assert nums["this_process"] == round(3.5 * _GIB)
    assert nums["other_processes"] == 40 * _MIB


def test_first_sentence_alone_then_request_alone_then_capacity():
    text = ("CUDA out of memory.\n"
            "Tried to allocate 96.00 MiB.\n"
            "GPU 0 has a total capacity of 3.80 GiB of which 20.00 MiB is free.\n"
            "Including non-PyTorch memory, this process has 3.70 GiB memory in use.\n")
    _, kind, _, _, nums = _read(text)
    assert kind == "torch.cuda"
    assert (nums["requested"], nums["total"], nums["free"]) == (96 * _MIB, round(3.8 * _GIB), 20 * _MIB)
    assert nums["this_process"] == round(3.7 * _GIB)


def test_first_sentence_alone_is_not_joined_to_unrelated_next_line():
    lines = [b"CUDA out of memory.", b"Tried again with batch 4."]
    assert PASTE._torch_sentences(list(lines)) == lines
    lines = [b"CUDA out of memory. Retrying", b"Tried to allocate 1.00 MiB."]
    assert PASTE._torch_sentences(list(lines)) == lines


def test_round_103_patterns_stay_linear():
    mb = 1 << 20
    cases = [
        (RX.TORCH_NEW.search, ("CUDA out of memory. Tried to allocate 1.00 MiB. GPU 0 has a total capacity of 1.00 GiB," + " " * mb,
                               "CUDA out of memory. Tried to allocate 1.00 MiB. GPU 0 has a total capacity of 1.00 GiB" + ", " * mb,
                               "GPU 0 has a total capacity of 1.00 GiB, " * (mb // 40))),
        (PASTE._TORCH_OOM_END.search, (b"CUDA out of memory." + b" " * mb + b"x", b"CUDA out of memory. " * (mb // 20))),
        (PASTE._TORCH_REQ_OPEN.match, (b" " * mb, b"Tried to allocate " + b"9" * mb, b"Tried to allocate 1.0" + b"." * mb)),
        (PASTE._TORCH_REQ_ONLY.match, (b"Tried to allocate 1.00 MiB." + b" " * mb + b"x", b"Tried to allocate " + b"9" * mb)),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds(("CUDA out of memory.\nTried to allocate 1.00 MiB.\n" * (mb // 48))
           + "GPU 0 has a total capacity of 2.00 GiB, ... " * (mb // 44) + "\n")
    assert cpu_now() - t < cpu_limit(10.0)
