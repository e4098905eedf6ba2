"""Triage round 11 (generalisation, split-half A = batches 01-15, B = 16-30): number-driven priors, each pinned by
messages in the runtimes' own formats (PyTorch's CUDACachingAllocator) and by near misses the change must leave alone."""
from gpu_garden.memory.triage import engine as triage

# PyTorch <= 2.0's caching-allocator message (c10/cuda/CUDACachingAllocator.cpp): free + reserved + what is outside
# PyTorch (the CUDA context, the display, other programs) = total
OLD = ("RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} already allocated; "
       "{free} free; {res} reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
       "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n")


def _causes(log):
    res = triage.triage_text(log)
    return res["cause"], {c["id"]: c["confidence"] for c in res["events"][-1]["causes"]}


def test_small_card_held_to_its_reach_places_weights():
    # 4 GiB card: 0.60 GiB outside PyTorch (its CUDA context), 3.30 GiB allocated: 93 % of what PyTorch could reach (the card
    # less estimate.spec.CUDA_CONTEXT), 82.5 % of the card; a 100 MiB (2.4 %, parameter-sized) request: a weight being placed
    cause, c = _causes(OLD.format(req="100.00 MiB", total="4.00 GiB", alloc="3.30 GiB", free="20.00 MiB", res="3.38 GiB"))
    assert cause == "weights-exceed-vram"
    assert c["weights-exceed-vram"] == round(1.6 / 3.85, 2)       # script_full 1.6 against the torch catch-all 1.5


def test_parameter_sized_request_up_to_five_percent():
    # 80 GiB card held, one 3.50 GiB request (4.4 %: a 33B model's embedding) still reads as a weight; 6 % does not
    cause, _ = _causes(OLD.format(req="3.50 GiB", total="79.35 GiB", alloc="77.10 GiB", free="1.20 GiB", res="77.60 GiB"))
    assert cause == "weights-exceed-vram"
    cause, _ = _causes(OLD.format(req="4.80 GiB", total="79.35 GiB", alloc="73.10 GiB", free="4.20 GiB", res="74.60 GiB"))
    assert cause == "activations"


def test_more_than_a_context_outside_is_not_reach():
    # 6 GiB card, 1.55 GiB outside PyTorch (more than any context: a program's share), 4.11 GiB allocated: PyTorch does
    # not hold the card; the workload leads
    cause, c = _causes(OLD.format(req="60.00 MiB", total="6.00 GiB", alloc="4.11 GiB", free="34.82 MiB", res="4.42 GiB"))
    assert cause == "activations" and "weights-exceed-vram" not in c


def test_training_or_traceback_keeps_the_workload():
    # the same numbers under a backward pass: the step's tensors
    log = ('Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss.backward()\n'
           '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 487, in backward\n'
           + OLD.format(req="100.00 MiB", total="4.00 GiB", alloc="3.30 GiB", free="20.00 MiB", res="3.38 GiB"))
    assert _causes(log)[0] == "activations"


# PyTorch >= 2.1's form without per-process lines (NVML unavailable: Windows, containers): the same fields, no eager context
NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of which "
       "{free} is free. Of the allocated memory {alloc} is allocated by PyTorch, and {ru} is reserved by PyTorch but "
       "unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
       "to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")


def test_old_message_counts_the_eager_context_as_its_own():
    # 4 GiB card, 2.50 GiB outside PyTorch: an eagerly loaded context (PyTorch <= 1.12) is 1 GiB of it, so 1.50 GiB is left
    # for other programs, under half the card: the workload (activations 1.5) leads alone
    cause, c = _causes(OLD.format(req="300.00 MiB", total="4.00 GiB", alloc="1.40 GiB", free="50.00 MiB", res="1.45 GiB"))
    assert cause == "activations" and "other-process" not in c
    # the same numbers in PyTorch >= 2.1's message (lazy context): half the card outside is another program (3.0)
    cause, c = _causes(NEW.format(req="300.00 MiB", total="4.00 GiB", alloc="1.40 GiB", free="50.00 MiB", ru="51.20 MiB"))
    assert cause == "other-process" and c["other-process"] == round(3.0 / 5.25, 2)


def test_old_message_moderate_outside_share():
    # 24 GiB card, 5.00 GiB outside: less the eager context's 2 GiB, 3.00 GiB is under 15 % of the card (3.6 GiB)
    cause, c = _causes(OLD.format(req="200.00 MiB", total="24.00 GiB", alloc="18.90 GiB", free="40.00 MiB", res="18.96 GiB"))
    assert cause == "activations" and "other-process" not in c
    cause, c = _causes(NEW.format(req="200.00 MiB", total="24.00 GiB", alloc="18.90 GiB", free="40.00 MiB", ru="61.44 MiB"))
    assert cause == "other-process" and c["other-process"] == round(1.6 / 3.85, 2)


def test_old_message_card_held_elsewhere_stays_another_program():
    # 24 GiB card with 12 GiB outside PyTorch: far more than any context
    cause, _ = _causes(OLD.format(req="1.00 GiB", total="24.00 GiB", alloc="10.50 GiB", free="300.00 MiB", res="11.70 GiB"))
    assert cause == "other-process"
    # 4 GiB card, 3.20 GiB outside: even less an eager context's extra GiB, 2.20 GiB (over half the card) is another program's
    cause, _ = _causes(OLD.format(req="300.00 MiB", total="4.00 GiB", alloc="0.70 GiB", free="50.00 MiB", res="0.75 GiB"))
    assert cause == "other-process"
