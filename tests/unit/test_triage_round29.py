"""Triage round 29 (batch 51, after first sight). Lines written from the runtimes' own formats, not copies of corpus
cases: PyTorch's caching-allocator message with its "N allowed;" field (CUDACachingAllocator.cpp prints it only under a
per-process memory fraction), in the 2.1+ and the <= 2.0 forms; vLLM's KV-length check wrapped before "maximum model length"."""
import pytest

from support.triage_event import last_event, top
from gpu_garden.memory.units import GiB, MiB


def _new(req, total, free, allowed, allocated, unalloc):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of "
            f"which {free} is free. Including non-PyTorch memory, this process has {allowed} memory in use. {allowed} allowed; "
            f"Of the allocated memory {allocated} is allocated by PyTorch, and {unalloc} is reserved by PyTorch but unallocated. "
            "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
            "avoid fragmentation.\n")


def _old(req, total, alloc, free, allowed, reserved):
    return (f"RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} already "
            f"allocated; {free} free; {allowed} allowed; {reserved} reserved in total by PyTorch)\n")


@pytest.mark.parametrize("text", [
    # half of an 80 GB card (a server's cuda_memory_fraction 0.5), its other half free
    _new("20.00 MiB", "79.15 GiB", "39.40 GiB", "39.58 GiB", "39.41 GiB", "150.00 MiB"),
    # 0.6 of a 24 GB card, 0.38 of it free
    _new("64.00 MiB", "23.65 GiB", "8.99 GiB", "14.19 GiB", "13.90 GiB", "280.00 MiB"),
    _old("2.00 MiB", "47.54 GiB", "23.68 GiB", "23.44 GiB", "23.77 GiB", "23.77 GiB"),
])
def test_a_memory_fraction_that_ran_out_on_a_card_with_room_is_the_cap(text):
    cause, conf, ev = top(text)
    assert cause == "other", conf
    assert "allowed" in ev["numbers"], ev["numbers"]
    assert any("per-process memory fraction" in e for c in ev["causes"] if c["id"] == "other" for e in c["evidence"]), ev["causes"]


@pytest.mark.parametrize("text", [
    # 0.9 of a full card: the cap only decided which request failed
    _new("64.00 MiB", "23.65 GiB", "2.30 GiB", "21.29 GiB", "21.00 GiB", "200.00 MiB"),
    # 0.7 of the card, but another program holds most of the rest: 0.15 of it free, under a quarter
    _new("64.00 MiB", "23.65 GiB", "3.55 GiB", "16.56 GiB", "16.30 GiB", "150.00 MiB"),
    # 0.8 of the card with a third of it free: a cap that withholds under a quarter of the card
    _new("3.50 GiB", "23.65 GiB", "7.60 GiB", "18.92 GiB", "15.40 GiB", "200.00 MiB"),
    # "allowed" equal to the card (a fraction of 1.0 printed by an older server): no cap at all
    _old("96.00 MiB", "11.00 GiB", "10.89 GiB", "0 bytes", "11.00 GiB", "10.94 GiB"),
    # the same with half the card free: whatever refused 20 MiB, it was not a cap as large as the card
    _old("20.00 MiB", "11.00 GiB", "4.90 GiB", "5.80 GiB", "11.00 GiB", "5.02 GiB"),
])
def test_a_cap_near_the_card_is_not_named_as_the_cause(text):
    _, _, ev = top(text)
    assert not any("per-process memory fraction" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


_KV_CHECK = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, "
             "which is larger than the available KV cache memory (2.25 GiB). Based on the available memory, the estimated")


@pytest.mark.parametrize("rest", ["maximum model length is 18432. Try increasing `gpu_memory_utilization` or decreasing "
                                  "`max_model_len` when initializing the engine.\n",
                                  "  maximum model length is 18432.\n"])
def test_vllm_kv_check_wrapped_before_maximum_keeps_its_estimate(rest):
    _, ev = last_event(_KV_CHECK + "\n" + rest)
    assert ev["kind"] == "vllm.kv_max_len", ev["kind"]
    assert ev["numbers"]["estimated_max_len_tokens"] == 18432, ev["numbers"]
    assert ev["numbers"]["kv_needed"] == 16 * GiB and ev["numbers"]["max_model_len_tokens"] == 131072, ev["numbers"]


def test_vllm_kv_check_whole_on_one_line_keeps_its_estimate():
    _, ev = last_event(_KV_CHECK + " maximum model length is 18432. Try increasing `gpu_memory_utilization`.\n")
    assert ev["numbers"]["estimated_max_len_tokens"] == 18432, ev["numbers"]


def test_a_refusal_with_the_card_free_names_host_memory_and_the_paging_file():
    """Host RAM that ran out (Windows: RAM plus the paging file) refuses device allocations with the card free."""
    res, ev = last_event("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
                         "7.99 GiB of which 3.90 GiB is free. Of the allocated memory 3.80 GiB is allocated by PyTorch, and 90.00 MiB "
                         "is reserved by PyTorch but unallocated.\n")
    # fix20a: the line shows no OS (no process listed is no evidence of Windows): the driver's refusal, as before session 20;
    # on a log that shows Windows it is the system commit (test_triage_tuneOP20.py)
    assert res["cause"] == "other" and ev["guide"]["id"] == "allocation-refused", (res["cause"], ev["guide"]["id"])
    assert "paging file" in ev["guide"]["markdown"] and "System memory" in ev["guide"]["markdown"], ev["guide"]["markdown"]
