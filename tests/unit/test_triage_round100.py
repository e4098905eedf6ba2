"""Triage round 100 (task tune100: batches 483-498 after first sight), written from PyTorch's and vLLM's own message formats:
- PyTorch's 2.x message quoted from "Tried to allocate N" at a line's start, the rest elided by the quoter's ellipsis up to the
  sentences kept ("... F is free", "... this process has P memory in use", "... R is reserved by PyTorch but unallocated", on
  the same line or the next): a cut caching-allocator message, its figures read; without any kept figure, not read.
- PyTorch's first sentence with its request elided ("CUDA out of memory. ... GPU 0 has a total capacity of T") after the
  exception type: the capacity sentence's reading, as after the type alone.
- PyTorch's process list line cut after "memory" at the quote's end, or by the quoter's ellipsis right after its figure.
- PyTorch's slack sentence with the words around it retyped ("..., with R reserved by PyTorch but unallocated."), on its
  own line after the rest of the message quoted a sentence a line.
- vLLM's model runner's own refusal ("Failed to load model - not enough GPU memory.") names vLLM.
- ComfyUI's "Device: cuda:0 NAME" line is not a program's own settings line with bar-separated fields.
The sizes and the lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import error_patterns as RX
from gpu_garden.memory.triage import fact_patterns as FP
from gpu_garden.memory.triage import paste as PASTE
from gpu_garden.memory.triage import wrapped as WRAPPED
from gpu_garden.memory.triage import torch_readers as TR

from support.triage_event import kinds as _kinds, read as _read, top as _top  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_request_line_elided_to_its_free_figure_is_read():
    cause, kind, runtime, dev, nums = _read("Tried to allocate 96.00 MiB ... 12.50 MiB is free\n")
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums == {"requested": 96 * _MIB, "free": round(12.5 * _MIB)}


def test_request_line_with_its_device_elided_to_free_figure():
    _, kind, _, _, nums = _read("Tried to allocate 30.00 MiB. GPU 3 ... 21.25 MiB is free\n")
    assert kind == "torch.cuda"
    assert nums == {"requested": 30 * _MIB, "free": round(21.25 * _MIB)}


def test_request_line_elided_to_this_process():
    _, kind, _, _, nums = _read("Tried to allocate 2.25 GiB ... this process has 6.75 GiB memory in use\n")
    assert kind == "torch.cuda"
    assert nums == {"requested": round(2.25 * _GIB), "this_process": round(6.75 * _GIB)}


def test_request_line_elided_continues_on_the_next_line_with_the_slack():
    _, kind, _, _, nums = _read("Tried to allocate 24.00 MiB ... 10.00 MiB is free\n"
                                "... 300.00 MiB is reserved by PyTorch but unallocated\n")
    assert kind == "torch.cuda"
    assert nums == {"requested": 24 * _MIB, "free": 10 * _MIB, "reserved_unallocated": 300 * _MIB}


def test_request_line_elided_without_a_kept_figure_is_not_read():
    # the request alone after an ellipsis: nothing of the message's sentences kept, not read as PyTorch's message
    assert "torch.cuda" not in _kinds("Tried to allocate 24.00 MiB ... and then it stopped\n")
    # not mid-line after other words either
    assert "torch.cuda" not in _kinds("we Tried to allocate 24.00 MiB ... 10.00 MiB is free\n")


def test_first_sentence_with_request_elided_before_capacity():
    _, kind, _, _, nums = _read("torch.OutOfMemoryError: CUDA out of memory. ... GPU 0 has a total capacity of 22.00 GiB\n"
                                "of which 8.00 MiB is free. ... this process has 21.90 GiB memory in use.\n")
    assert kind == "torch.cuda"
    assert nums["total"] == 22 * _GIB and nums["free"] == 8 * _MIB
    assert nums["this_process"] == round(21.9 * _GIB)


def test_process_line_cut_after_memory_at_the_end():
    _, _, _, _, nums = _read("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.\n"
                             "GPU 2 has a total capacity of 39.00 GiB of which 7.50 GiB is free.\n"
                             "Process 4242 has 31.25 GiB memory\n")
    # one listed process in the message: this process (processes.split_listed)
    assert nums["this_process"] == round(31.25 * _GIB)


def test_process_line_cut_by_ellipsis_after_its_figure_reads_the_rest_as_others():
    # 11.00 GiB card, 40 MiB free, the one listed process 1.00 GiB: 11.00 - 0.04 - 1.00 = 9.96 GiB held by others
    cause, conf, ev = _top("Error: CUDA out of memory. Tried to allocate 16.00 MiB.\n"
                           "       GPU 0 has a total capacity of 11.00 GiB of which 40.00 MiB is free.\n"
                           "       Process 5150 has 1.00 GiB...\n")
    assert ev["numbers"]["this_process"] == 1 * _GIB
    assert cause == "other-process"


def test_slack_sentence_retyped_on_its_own_line():
    _, _, _, _, nums = _read("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB.\n"
                             "GPU 0 has a total capacity of 15.00 GiB of which 20.00 MiB is free.\n"
                             "Of the allocated memory 12.00 GiB is allocated by PyTorch, with\n"
                             "600.00 MiB reserved by PyTorch but unallocated.\n")
    assert nums["allocated"] == 12 * _GIB
    assert nums["reserved_unallocated"] == 600 * _MIB
    assert nums["reserved"] == 12 * _GIB + 600 * _MIB


def test_vllm_model_runner_refusal_names_vllm():
    _, _, runtime, _, _ = _read("ERROR [gpu_model_runner.py:4000] Failed to load model - not enough GPU memory.\n"
                                "(original error: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of "
                                "79.00 GiB of which 100.00 MiB is free. Including non-PyTorch memory, this process has 78.80 GiB "
                                "memory in use.)\n")
    assert runtime == "vllm"


def test_a_programs_bar_separated_device_line_is_not_comfyui():
    text = ("Device: cuda | Batch Size: 32 | Epochs: 10\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 MiB. GPU 0 has a total capacity of 14.56 GiB "
            "of which 100.00 MiB is free. Including non-PyTorch memory, this process has 14.40 GiB memory in use.\n")
    _, _, runtime, _, _ = _read(text)
    assert runtime == "pytorch"
    # ComfyUI's own line still is
    _, _, runtime, _, _ = _read("Device: cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync\n" + text.split("\n", 1)[1])
    assert runtime == "comfyui"


def _fact_rx(name):
    return next(rx for n, rx in FP.FACTS if n == name)


def test_round_100_patterns_stay_linear():
    mb = 1 << 20
    cases = [
        (TR._LEAD_CUT.match, ("Tried to allocate " + "9" * mb, "Tried to allocate 1.00 MiB" + " " * mb,
                              "Tried to allocate 1.00 MiB. GPU " + "1" * mb)),
        (TR._RU_CUT.search, ("... " + "1." * (mb // 2), "..." * (mb // 3), ", and 1.00 MiB " * (mb // 15))),
        (TR._RU_ANY.search, ("1.00 MiB " * (mb // 9), "9" * mb + " reserved by PyTorch")),
        (RX.PROC.search, ("Process 1 has " + "1.00 GiB " * (mb // 9), "Process " + "1" * mb, "Process 1 has 1.00 GiB memory" + " " * mb + "x")),
        (RX.TORCH_CAP_OPEN.search, ("torch.OutOfMemoryError: CUDA out of memory. " + " " * mb, "torch.OutOfMemoryError: " + "CUDA out of memory. ..." * (mb // 23))),
        (WRAPPED.WRAPPABLE.search, ("Tried to allocate 1" + "." * mb, "Tried to allocate " * (mb // 18))),
        (PASTE._TORCH_MORE.match, (b"1." * (mb // 2), b"1.00 MiB " + b" " * mb)),
        (_fact_rx("device").search, ("Device: cuda " + " \t" * (mb // 2) + "x", "Device: cuda:0 " + "|" * mb)),
        (_fact_rx("vllm_marker").search, ("Failed to load model - " * (mb // 23), "not enough GPU memory " * (mb // 22))),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds("Device: cuda" + " " * mb + "|\n" + "Tried to allocate 1.00 MiB ... " * (mb // 32) + "\n"
           + "Failed to load model - not enough GPU memory " * (mb // 45) + "\n")
    assert cpu_now() - t < cpu_limit(10.0)
