"""rev2's review of triage round 101: the boundaries and alternatives test_triage_round101.py leaves untested (each test here
kills a deliberate error that passes the round's own tests). Sizes made up in PyTorch's layout; expected values by hand."""
from support.triage_event import read as _read

_GIB = 1024 ** 3
_MIB = 1024 ** 2
_HEAD = "CUDA out of memory. Tried to allocate {req}.\n"


def _cut(req, *others, me="9.00 GiB", dev="CUDA"):
    text = f"{dev} out of memory. Tried to allocate {req}.\n"
    text += "".join(f"Process {5150 + i} has {o} memory in use.\n" for i, o in enumerate(others))
    return text + (f"This process has {me} memory in use.\n" if me else "")


def test_listed_others_floor_is_one_and_a_half_gib():
    # 1.49 GiB under the floor, 1.51 GiB over it (kills a floor of 1 GiB, 2 GiB, 3 GiB, or 1.5e9 bytes)
    assert _read(_cut("150.00 MiB", "1.49 GiB"))[0] != "other-process"
    assert _read(_cut("150.00 MiB", "1.51 GiB"))[0] == "other-process"
    assert _read(_cut("150.00 MiB", "1.50 GiB"))[0] == "other-process"        # ">=": the floor itself reads


def test_listed_others_must_cover_the_request():
    # 4.25 GiB listed beside a 4.50 GiB request: freeing it would not have served the request
    assert _read(_cut("4.50 GiB", "4.25 GiB"))[0] != "other-process"
    assert _read(_cut("4.00 GiB", "4.25 GiB"))[0] == "other-process"


def test_listed_others_need_this_process_named_apart():
    # no "This process" sentence: the lone entry may be this process under its host pid (a container)
    cause, _, _, _, nums = _read(_cut("150.00 MiB", "6.00 GiB", me=None))
    assert cause != "other-process"
    assert nums.get("this_process") == 6 * _GIB and "other_processes" not in nums     # as _torch_new's split_listed


def test_listed_processes_summed():
    _, _, _, _, nums = _read(_cut("150.00 MiB", "2.00 GiB", "1.00 GiB"))
    assert nums["other_processes"] == 3 * _GIB and nums["this_process"] == 9 * _GIB


def test_several_small_listed_entries_are_contexts_not_another_program():
    # seven ~0.5 GiB entries: a distributed job's other ranks (or its own workers) holding a CUDA context each on this card
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
            + "".join(f"Process {2001 + i} has 530.00 MiB memory in use. " for i in range(7))
            + "This process has 23.10 GiB memory in use.\n")
    assert _read(text)[0] != "other-process"


def test_hip_message_reads_the_same():
    cause, kind, _, _, _ = _read(_cut("150.00 MiB", "4.25 GiB", dev="HIP"))
    assert (cause, kind) == ("other-process", "torch.hip")


def test_unicode_ellipsis_forms():
    assert _read("Tried to allocate 1.56 GiB \u2026 558.56 MiB free\n")[4] == {"requested": round(1.56 * _GIB),
                                                                              "free": round(558.56 * _MIB)}
    nums = _read("GPU 0 has a total capacity of 47.50 GiB of which 120.00 MiB is free \u2026 this process has 47.30 GiB "
                 "memory in use \u2026 Tried to allocate 256.00 MiB\n")[4]
    assert nums["requested"] == 256 * _MIB and nums["free"] == 120 * _MIB


def test_free_after_the_request_with_is_kept():
    nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB ... 400.00 MiB is free\n")[4]
    assert nums == {"requested": round(1.25 * _GIB), "free": 400 * _MIB}


def test_next_message_bounds_the_cut_readers():
    # a second message's request is not the cut capacity sentence's
    nums = _read("GPU 0 has a total capacity of 47.50 GiB of which 120.00 MiB is free ... this process has 47.30 GiB memory "
                 "in use ... torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.00 GiB ... Tried to allocate "
                 "256.00 MiB\n")[4]
    assert nums.get("requested") != 256 * _MIB


def test_bare_free_figure_only_right_after_the_request():
    # an ellipsis later on the line, not the request's, does not give the card's free figure (kills .match -> .search)
    nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB; loading the VAE ... 400.00 MiB free\n")[4]
    assert "free" not in nums


def test_request_after_a_kept_sentences_period_in_the_cut_capacity_form():
    # (rev2 B3) the capacity sentence cut by an ellipsis, then "this process has N memory in use." and the request's own
    # sentence after that period (no ellipsis before it): the request is still the message's
    text = ("GPU 0 has a total capacity of 47.50 GiB of which 120.00 MiB is free ... this process has 47.30 GiB memory in use."
            " Tried to allocate 256.00 MiB.\n")
    nums = _read(text)[4]
    assert nums["requested"] == 256 * _MIB and nums["free"] == 120 * _MIB and nums["total"] == int(47.5 * _GIB)
