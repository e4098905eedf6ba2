"""Triage round 104 (task tune104: batches 536-542 after first sight), written from PyTorch's own message format:
- PyTorch's <= 2.0 message quoted from "Tried to allocate N" (its "CUDA out of memory." left off) with its bracket cut by the
  quoter right after the allocated figure ("(GPU 0; T total capacity; A already allocated", the line's end): the request, the
  capacity and the allocated figure are read; with the prefix kept the allocated figure is read too.
- A model's placement (a loading frame, `.cuda()` / `.to()` under nn.Module._apply) failing while PyTorch's own reserved
  memory is a small share of the card and more than half of the card is used outside PyTorch: another program holds the
  card (other-process), over the loading frame's weights-exceed-vram.
The sizes, paths and lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import error_patterns as RX
from gpu_garden.memory.triage import torch_readers as TR

from support.triage_event import kinds as _kinds, read as _read, top as _top  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def test_bracket_cut_after_allocated_without_prefix_is_read():
    cause, kind, runtime, dev, nums = _read("Tried to allocate 64.00 MiB (GPU 0; 11.91 GiB total capacity; 10.80 GiB already allocated\n")
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums["requested"] == 64 * _MIB
    assert nums["total"] == round(11.91 * _GIB)
    assert nums["allocated"] == round(10.8 * _GIB)
    assert "free" not in nums and "reserved" not in nums
    # the message alone, PyTorch holding nearly all of the card, a parameter-sized request: the model fills the card
    assert cause == "weights-exceed-vram"


def test_bracket_cut_after_allocated_with_prefix_reads_allocated():
    _, kind, _, _, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 23.70 GiB total capacity; "
                                "12.25 GiB already allocated \n")
    assert kind == "torch.cuda"
    assert (nums["requested"], nums["total"], nums["allocated"]) == (2 * _GIB, round(23.7 * _GIB), round(12.25 * _GIB))
    # cut inside the next figure: the allocated figure is not at the line's end, and only the capacity is taken as before
    _, _, _, _, nums = _read("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 23.70 GiB total capacity; "
                             "12.25 GiB already allocated; 1.3\n")
    assert "allocated" not in nums and nums["total"] == round(23.7 * _GIB)


def test_bracket_stopping_before_allocated_is_left_to_the_wrap_join():
    # no allocated figure on the line: not read alone, so the message broken over three lines is still joined whole
    assert TR._torch_no_prefix("Tried to allocate 512.00 MiB (GPU 0; 7.79 GiB total capacity; ") is None
    text = ("OutOfMemoryError: CUDA out of memory. \n"
            "Tried to allocate 512.00 MiB (GPU 0; 7.79 GiB total capacity; \n"
            "6.10 GiB already allocated; 80.00 MiB free; 6.90 GiB reserved in total by PyTorch)\n")
    _, kind, _, _, nums = _read(text)
    assert kind == "torch.cuda"
    assert nums["allocated"] == round(6.1 * _GIB) and nums["free"] == 80 * _MIB and nums["reserved"] == round(6.9 * _GIB)


_PLACE = """Traceback (most recent call last):
  File "/home/lab/fold/predict.py", line 41, in <module>
    net = net.eval().cuda()
  File "/opt/envs/fold/lib/python3.8/site-packages/torch/nn/modules/module.py", line 680, in cuda
    return self._apply(lambda t: t.cuda(device))
  File "/opt/envs/fold/lib/python3.8/site-packages/torch/nn/modules/module.py", line 570, in _apply
    module._apply(fn)
  File "/opt/envs/fold/lib/python3.8/site-packages/torch/nn/modules/module.py", line 593, in _apply
    param_applied = fn(param)
  File "/opt/envs/fold/lib/python3.8/site-packages/torch/nn/modules/module.py", line 680, in <lambda>
    return self._apply(lambda t: t.cuda(device))
RuntimeError: CUDA out of memory. Tried to allocate 40.00 MiB (GPU 0; 39.59 GiB total capacity; {alloc} already allocated; 2.00 MiB free; {res} reserved in total by PyTorch)
"""


def test_placement_on_a_card_held_outside_pytorch_reads_other_process():
    # 39.59 - 0.0020 free - 4.50 reserved: about 35.09 GiB outside PyTorch (34 GiB past the eager context), PyTorch 11 % of the card
    cause, conf, ev = _top(_PLACE.format(alloc="4.20 GiB", res="4.50 GiB"))
    assert cause == "other-process"
    assert conf["other-process"] > conf["weights-exceed-vram"]


def test_placement_filling_the_card_itself_stays_weights():
    # PyTorch itself holds 36.80 GiB reserved (93 % of the card): the model being placed fills it, nothing outside to speak of
    cause, _, _ = _top(_PLACE.format(alloc="36.50 GiB", res="36.80 GiB"))
    assert cause == "weights-exceed-vram"
    # PyTorch holding past a quarter of the card (12 of 39.59 GiB) with 27.6 GiB outside: not this row's reading, the frame leads
    cause, conf, _ = _top(_PLACE.format(alloc="11.70 GiB", res="12.00 GiB"))
    assert cause == "weights-exceed-vram"


def test_round_104_patterns_stay_linear():
    mb = 1 << 20
    head = "CUDA out of memory. Tried to allocate 1.00 MiB (GPU 0; 2.00 GiB total capacity; 1.00 GiB already allocated"
    cases = [
        (RX.TORCH_BARE.search, (head + " " * mb + "x", head + "; " * (mb // 2), "CUDA out of memory. " * (mb // 20),
                                "CUDA out of memory. Tried to allocate 1.00 MiB (GPU 0; 2.00 GiB total capacity; " + "9" * mb)),
        (TR._torch_no_prefix, ("Tried to allocate 1.00 MiB (GPU 0; 2.00 GiB total capacity; 1.00 GiB already allocated" + " " * mb,
                               "Tried to allocate " * (mb // 18) + "total capacity; ")),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds(("Tried to allocate 1.00 MiB (GPU 0; 2.00 GiB total capacity; 1.00 GiB already allocated\n") * (mb // 88))
    assert cpu_now() - t < cpu_limit(10.0)
