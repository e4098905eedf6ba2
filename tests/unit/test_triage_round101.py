"""Triage round 101 (task tune101: batches 499-512 after first sight), written from vLLM's and PyTorch's message formats as quoters retype them (cut, reordered, a sentence a line):
- vLLM's cumem allocator's CUDA_CHECK line ("CUDA Error: <driver string> at <path>/csrc/cumem_allocator.cpp:<line>") names
  vLLM's own source: PyTorch's message after it is raised inside vLLM.
- PyTorch's request quoted with its free figure after the quoter's ellipsis, "is" dropped ("Tried to allocate N ... M free"),
  at a line's start or after "CUDA out of memory.".
- PyTorch's message quoted a sentence a line without its capacity sentence: the request, then "Process N has X memory in use."
  and "This process has M memory in use."; the listed process is another program, past 1.5 GiB and the request: other-process.
- "memory" and "in use" run together where a rejoined line break lost its space ("... GiB memoryin use.").
- PyTorch's capacity sentence cut by an ellipsis after its free figure, the sentences kept after it, the request among them.
The sizes and the lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import error_patterns as RX
from gpu_garden.memory.triage import paste as PASTE
from gpu_garden.memory.triage import torch_readers as TR

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_cumem_allocator_check_line_names_vllm_for_the_torch_message_after_it():
    text = ("CUDA Error: invalid argument at /opt/build/csrc/cumem_allocator.cpp:88\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 39.50 GiB "
            "of which 39.00 GiB is free. Process 4242 has 300.00 MiB memory in use. Of the allocated memory 8.00 MiB is "
            "allocated by PyTorch, and 12.00 MiB is reserved by PyTorch but unallocated.\n")
    cause, kind, runtime, dev, _ = _read(text)
    assert (kind, runtime, dev) == ("torch.cuda", "vllm", "cuda")
    assert cause == "other"
    # without the allocator's line the same message is PyTorch's
    assert _read(text.split("\n", 1)[1])[2] == "pytorch"


def test_request_then_bare_free_figure_after_ellipsis():
    _, kind, _, _, nums = _read("Tried to allocate 2.50 GiB ... 700.00 MiB free\n")
    assert kind == "torch.cuda"
    assert nums == {"requested": round(2.5 * _GIB), "free": 700 * _MIB}


def test_first_sentence_then_bare_free_figure_after_ellipsis():
    _, kind, _, _, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB ... 400.00 MiB free\n")
    assert kind == "torch.cuda"
    assert nums == {"requested": round(1.25 * _GIB), "free": 400 * _MIB}
    # "free" not right after the request's ellipsis is not the card's figure
    _, _, _, _, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB while 400.00 MiB free\n")
    assert "free" not in nums


def test_request_with_process_sentences_a_line_each_reads_other_process():
    text = ("CUDA out of memory. Tried to allocate 150.00 MiB.\n"
            "Process 5150 has 4.25 GiB memory in use.\n"
            "This process has 9.00 GiB memory in use.\n")
    cause, kind, _, _, nums = _read(text)
    assert kind == "torch.cuda"
    assert nums == {"requested": 150 * _MIB, "other_processes": round(4.25 * _GIB), "this_process": 9 * _GIB}
    assert cause == "other-process"


def test_request_with_process_sentences_short_lines_not_width_joined():
    # short lines: since review rev2 (T7) _unwrap leaves a PyTorch head and its process sentences to _torch_sentences, which
    # joins them with their blank
    cause, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 8.00 MiB.\nProcess 77 has 3.00 GiB memory in use.\n"
                                 "This process has 1.00 GiB memory in use.\n")
    assert nums == {"requested": 8 * _MIB, "other_processes": 3 * _GIB, "this_process": _GIB}
    assert cause == "other-process"


def test_small_listed_process_beside_this_one_is_not_other_process():
    # another process holding a desktop's share (under 1.5 GiB) covers nothing
    cause, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 150.00 MiB.\nProcess 5150 has 500.00 MiB memory in use.\n"
                                 "This process has 9.00 GiB memory in use.\n")
    assert nums["other_processes"] == 500 * _MIB
    assert cause != "other-process"


def test_memory_in_use_run_together_by_a_rejoined_break():
    assert RX.SELF.search("This process has 7.00 GiB memoryin use.").group(1) == "7.00 GiB"
    assert RX.PROC.search("Process 12 has 2.00 GiB memoryin use.").group(2) == "2.00 GiB"
    _, _, _, _, nums = _read("Tried to allocate 16.00 MiB. GPU 0 has a total capacity of 11.50 GiB of which 2.00 MiB is free. "
                             "This process has 11.40 GiB memoryin use.\n")
    assert nums["this_process"] == round(11.4 * _GIB)


def test_capacity_sentence_cut_at_free_with_request_after_ellipsis():
    _, kind, runtime, _, nums = _read("GPU 0 has a total capacity of 47.50 GiB of which 120.00 MiB is free ... this process has "
                                      "47.30 GiB memory in use ... Tried to allocate 256.00 MiB\n")
    assert (kind, runtime) == ("torch.cuda", "pytorch")
    assert nums == {"total": round(47.5 * _GIB), "free": 120 * _MIB, "this_process": round(47.3 * _GIB),
                    "requested": 256 * _MIB}


def test_own_pool_line_beside_a_message_without_request_or_pools_does_not_fail():
    # the own-pool row (other 1.6) needs the pools' figure read: a capacity sentence without request or pools beside the cumem
    # allocator's line raised KeyError('private_pools') before round 101
    text = ("CUDA Error: invalid argument at csrc/cumem_allocator.cpp:7\n"
            "GPU 0 has a total capacity of 2.00 GiB of which 1.00 MiB is free.\n")
    assert "torch.cuda" in _kinds(text)


def test_round_101_patterns_stay_linear():
    mb = 1 << 20
    cases = [
        (TR._FREE_AFTER_REQ.match, (". " + " " * mb, "... " + "9" * mb, "... 1.00 MiB " * (mb // 13))),
        (RX.TORCH_REQ_CUT.search, ("... " * (mb // 4), "...Tried to allocate " * (mb // 21), "... Tried to allocate " + "9" * mb)),
        (RX.TORCH_CAP_OPEN.search, ("GPU 0 has a total capacity of 1.00 GiB of which 1.00 MiB is free" + " " * mb,
                                    "GPU 0 has a total capacity of " * (mb // 30))),
        (RX.SELF.search, ("This process has 1.00 GiB memory" * (mb // 32), "Process has " + "9" * mb)),
        (RX.PROC.search, ("Process 1 has 1.00 GiB memory" + " " * mb + "x", "Process 1 has " * (mb // 14))),
        (PASTE._TORCH_MORE.match, (b"Process " + b"1" * mb, b"This process has " * (mb // 17))),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds("CUDA out of memory. Tried to allocate 1.00 MiB ... " * (mb // 52) + "\n"
           + "Process 1 has 1.00 GiB memory in use. " * (mb // 38) + "\n"
           + "GPU 0 has a total capacity of 2.00 GiB of which 1.00 MiB is free ... " * (mb // 70) + "\n"
           + "CUDA Error: x at cumem_allocator.cpp" * (mb // 36) + "\n")
    assert cpu_now() - t < cpu_limit(10.0)
