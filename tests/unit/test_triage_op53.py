"""Task op53: PyTorch's message cut before the card's figures, listing two or more processes and none as "this process"
(predicates.listed_several_cut, rules_process.py). PyTorch names its own pid "this process", so at most one listed entry is
this one and the rest are other processes'. Sizes made up in PyTorch's layout; expected values by hand."""
from gpu_garden.memory.triage import engine
from support.triage_event import read as _read

_GIB = 1024 ** 3


def _listed(*sizes, req=None, me=None):
    text = f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}.\n" if req else ""
    text += " ".join(f"Process {947700 + i} has {s} memory in use." for i, s in enumerate(sizes)) + "\n"
    return text + (f"This process has {me} memory in use.\n" if me else "")


def test_two_entries_none_this_process_read_as_another_program():
    # 4.17 + 4.01 GiB, neither named this process: 4.01 GiB at least is another process's (fails without the row)
    cause, kind, _, _, nums = _read(_listed("4.17 GiB", "4.01 GiB"))
    assert (cause, kind) == ("other-process", "torch.cuda")
    assert abs(nums["other_processes"] - 8.18 * _GIB) < 0.01 * _GIB


def test_the_largest_entry_is_left_out():
    # 3.00 + 1.40 GiB: the largest may be this process, the other is under a desktop's 1.5 GiB
    # (fails where the floor is read on the largest entry or on the whole sum)
    assert _read(_listed("3.00 GiB", "1.40 GiB"))[0] != "other-process"
    assert _read(_listed("3.00 GiB", "1.50 GiB"))[0] == "other-process"        # the floor itself reads


def test_small_entries_are_contexts_not_a_program():
    # four entries of 0.80 GiB (a job's ranks' CUDA contexts): 2.40 GiB beside the largest, none past 1.5 GiB (rev2 B2)
    # (fails where the floor is read on the sum of the entries beside the largest)
    assert _read(_listed("0.80 GiB", "0.80 GiB", "0.80 GiB", "0.80 GiB"))[0] != "other-process"
    assert _read(_listed("9.00 GiB", "0.80 GiB", "1.60 GiB", req="150.00 MiB"))[0] == "other-process"


def test_the_others_must_cover_the_request():
    # 2.00 GiB beside the largest entry against a 2.50 GiB request: freeing it would not have served it
    assert _read(_listed("6.00 GiB", "2.00 GiB", req="2.50 GiB"))[0] != "other-process"
    assert _read(_listed("6.00 GiB", "2.00 GiB", req="1.50 GiB"))[0] == "other-process"
    assert _read(_listed("6.00 GiB", "2.00 GiB", req="2.00 GiB"))[0] == "other-process"      # ">=": covering it reads


def test_a_lone_entry_stays_this_process():
    # one entry and no "this process": it is this process under its host pid (rev2 B1); the new row must not read it
    cause, _, _, _, nums = _read(_listed("6.00 GiB", req="150.00 MiB"))
    assert cause != "other-process" and nums.get("this_process") == 6 * _GIB


def test_one_line_quote_read_as_well():
    # the request's sentence and the processes' on one line (torch_readers._torch_bare), the capacity sentence left out
    # (fails without the bare reader's second-largest figure)
    line = ("RuntimeError: CUDA out of memory. Tried to allocate 150.00 MiB. Process 7208 has 6.51 GiB memory in use. "
            "Process 7311 has 5.02 GiB memory in use.\n")
    assert _read(line)[0] == "other-process"


def test_a_quote_of_the_sentences_alone_reads_the_second_largest():
    # (rev54) the request's and processes' sentences alone on a line (torch_sentences): sorted 9.00, 1.60, 0.80 GiB, the
    # second largest 1.60 GiB is past the 1.5 GiB floor and 2.40 GiB beside the largest covers 150 MiB
    # (fails where torch_sentences takes the smallest entry, 0.80 GiB, for the second largest)
    line = ("Tried to allocate 150.00 MiB. Process 947700 has 9.00 GiB memory in use. Process 947701 has 0.80 GiB memory "
            "in use. Process 947702 has 1.60 GiB memory in use.\n")
    assert _read(line)[0] == "other-process"


def test_a_named_this_process_leaves_the_row_out():
    # (rev54) "this process" named: the op53 row's "names none as this process" must not be among the evidence
    # (fails without listed_several_cut's this_process guard: the row adds its evidence beside listed_others_cut's)
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 150.00 MiB.\nProcess 947700 has 4.17 GiB memory "
            "in use. Process 947701 has 4.01 GiB memory in use.\nIncluding non-PyTorch memory, this process has 3.00 GiB "
            "memory in use.\n")
    ev = engine.triage_text(text)["events"][-1]
    assert ev["causes"][0]["id"] == "other-process"
    assert not any("names none as this process" in e for e in ev["causes"][0]["evidence"]), ev["causes"][0]["evidence"]
