"""rev2 B4 (session 40's review of round 101): the bare reader takes "Process N has X memory in use" only as the sentences
PyTorch writes right after the request's, not a figure a note mentions further on the line. Sizes made up in PyTorch's
layout; expected values by hand."""
from support.regex_time import assert_each_fast
from support.triage_event import read as _read

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_a_process_figure_further_on_in_a_note_is_not_read():
    # the review's input: before the fix other-process 0.40 from the note's nvidia-smi figure
    cause, _, _, _, nums = _read("I got CUDA out of memory. Tried to allocate 150.00 MiB. Then nvidia-smi said Process 5150 "
                                 "has 4.25 GiB memory in use. This process has 9.00 GiB memory in use too.\n")
    assert nums == {"requested": 150 * _MIB}
    assert cause != "other-process"


def test_the_sentences_right_after_the_request_are_read_on_one_line():
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 150.00 MiB. Process 5150 has 4.25 GiB memory in use. "
                             "This process has 9.00 GiB memory in use.\n")
    assert nums == {"requested": 150 * _MIB, "other_processes": round(4.25 * _GIB), "this_process": 9 * _GIB}


def test_after_the_quoters_ellipsis_and_2x_including_clause():
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 20.00 MiB ... Including non-PyTorch memory, this process "
                             "has 7.50 GiB memory in use.\n")
    assert nums == {"requested": 20 * _MIB, "this_process": round(7.5 * _GIB)}


def test_a_process_sentence_after_another_sentence_ends_the_run():
    # the listed entry is read; the note's own sentence stops the run, so its "this process" (9.00 GiB) is not: the lone
    # entry is then this process's own (rev2 B1, a container's host pid)
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 150.00 MiB. Process 5150 has 4.25 GiB memory in use. "
                             "Odd, since this process has 9.00 GiB memory in use.\n")
    assert nums == {"requested": 150 * _MIB, "this_process": round(4.25 * _GIB)}


def test_linear_on_long_runs():
    from gpu_garden.memory.triage import torch_readers as TR
    mb = 1 << 20
    assert_each_fast([(TR._process_sentences, [". " * (mb // 2), "Process 1 has 1.00 GiB memory in use. " * (mb // 38),
                                              "Process 1 has " * (mb // 14), ". ..." * (mb // 5), "This process " * (mb // 13)])])


# rev3 B4 (session 41's review): a quoter's separators between the request and the process sentences are not words;
# before the fix each row below read activations with the request alone
_H = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
_T = (" Process 4242 has 21.50 GiB memory in use. Including non-PyTorch memory, this process has 1.20 GiB memory in "
      "use.\n")
_BOTH = {"requested": 20 * _MIB, "other_processes": round(21.5 * _GIB), "this_process": round(1.2 * _GIB)}


def test_separators_a_quoter_puts_between_the_sentences():
    for sep in [".", ". [...]", ". (...)", ";", ",", " |", " <br>", "\\n", ". \u2026", ". ... of which 3.69 MiB is free."]:
        cause, _, _, _, nums = _read(_H + sep + _T)
        assert (cause, nums) == ("other-process", _BOTH), sep
    # a bullet list of processes: both listed entries, no "this process" sentence
    _, _, _, _, nums = _read(_H + ". - Process 11 has 1.00 GiB memory in use. - Process 22 has 2.00 GiB memory in use.\n")
    assert nums == {"requested": 20 * _MIB, "other_processes": 3 * _GIB}


def test_the_separator_run_is_bounded():
    # 12 separator characters are read (11 dashes and _T's blank), 13 are not (a run that long is a drawing or a rule,
    # not a quoter's cut)
    assert _read(_H + "-" * 11 + _T)[4] == _BOTH
    assert _read(_H + "-" * 12 + _T)[4] == {"requested": 20 * _MIB}


def test_the_run_starts_after_the_free_figure_and_the_first_this_process_is_kept():
    cause, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 1.56 GiB ... 558.56 MiB free. Process 7208 has 5.00 "
                                 "GiB memory in use. This process has 6.00 GiB memory in use. This process has 7.00 GiB "
                                 "memory in use.\n")
    assert nums == {"requested": round(1.56 * _GIB), "free": round(558.56 * _MIB), "other_processes": 5 * _GIB,
                    "this_process": 6 * _GIB}
    assert cause == "other-process"


def test_the_run_continues_past_this_process_to_a_listed_one():
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 150.00 MiB. This process has 9.00 GiB memory in use. "
                             "Process 5150 has 4.25 GiB memory in use.\n")
    assert nums == {"requested": 150 * _MIB, "other_processes": round(4.25 * _GIB), "this_process": 9 * _GIB}
