"""Triage round 32 (batches 60-62, after first sight). Lines written from the runtimes' own formats, not copies of corpus
cases: PyTorch's current message with NVML's per-process figures (a container reports this process under its host pid), and
the same message cut after "of which N is free" under a vLLM server that had not loaded its weights."""
import pytest

from support.triage_event import top


def _procs(req, total, free, *procs):
    """PyTorch's message as it prints it with NVML's process list and the quote cut after it."""
    tail = "".join(f" Process {pid} has {held} memory in use." for pid, held in procs)
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of "
            f"which {free} is free.{tail}\n")


def _others_named(ev):
    return any(e.startswith("other processes hold") and "shortfall" in e for c in ev["causes"] for e in c["evidence"])


def test_a_working_set_held_beside_this_process_on_a_large_card_is_another_process():
    """139.81 GiB card, this process (its host pid) 131.40 GiB, 18 MiB free: 8.39 GiB (6 % of the card) is held by other
    programs. Under a tenth of the card but twice what a desktop holds: another program's working set."""
    cause, conf, ev = top(_procs("20.00 MiB", "139.81 GiB", "18.00 MiB", (2211, "131.40 GiB")))
    assert cause == "other-process" and _others_named(ev), (cause, conf)


@pytest.mark.parametrize("text", [
    _procs("20.00 MiB", "139.81 GiB", "18.00 MiB", (2211, "136.78 GiB")),     # 3.01 GiB outside: under DESKTOP
    _procs("20.00 MiB", "23.64 GiB", "20.00 MiB", (1, "21.30 GiB")),          # 2.32 GiB of 23.64: under a tenth of a small card
    _procs("20.00 GiB", "139.81 GiB", "100.00 MiB", (2211, "131.40 GiB")),    # 8.3 GiB outside, 19.9 GiB short: freeing it would not do
])
def test_the_others_row_keeps_to_a_desktop_and_the_shortfall(text):
    _, _, ev = top(text)
    assert not _others_named(ev), ev["causes"]


VLLM = ("$ vllm serve org/big-moe --tensor-parallel-size 8 --gpu-memory-utilization 0.92 --max-model-len 32768\n"
        "(EngineCore_DP0 pid=4410) INFO Starting to load model org/big-moe...\n")


def _cut(req, total, free):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 3 has a total capacity of {total} of "
            f"which {free} is free.\n")


def _loading_named(ev):
    return any(e.startswith("vLLM: the card is full") for c in ev["causes"] for e in c["evidence"])


def test_vllm_cut_message_before_the_weights_loaded_names_the_weights():
    """A 512 MiB request (0.3 % of a 178.35 GiB card) with 96 MiB free, and no line that the weights loaded: vLLM's start
    order puts the weights first, so what fills the card is the model."""
    cause, conf, ev = top(VLLM + _cut("512.00 MiB", "178.35 GiB", "96.00 MiB"))
    assert cause == "weights-exceed-vram" and _loading_named(ev), (cause, conf)
    assert ev["uncertain"] and ev["causes"][1]["id"] == "activations", ev["causes"]


@pytest.mark.parametrize("text", [
    VLLM + "Model loading took 150.12 GiB memory and 412.8 seconds\n" + _cut("512.00 MiB", "178.35 GiB", "96.00 MiB"),
    VLLM + "Available KV cache memory: 8.61 GiB\n" + _cut("512.00 MiB", "178.35 GiB", "96.00 MiB"),
    VLLM + _cut("5.00 GiB", "178.35 GiB", "96.00 MiB"),          # 2.8 % of the card: over LAYER_SHARE, a working tensor's size
    VLLM + _cut("3.00 GiB", "178.35 GiB", "10.00 GiB"),          # 5.6 % free (a 1.7 % request): not a full card
    _cut("512.00 MiB", "178.35 GiB", "96.00 MiB"),               # no vLLM line: a plain script, cut_full's row
])
def test_the_vllm_cut_row_keeps_to_its_bounds(text):
    _, _, ev = top(text)
    assert not _loading_named(ev), ev["causes"]


SLEEP = ("INFO Enabling cumem allocator because sleep mode requires it.\n"
         "INFO Model loading took 15.02 GiB memory and 41.3 seconds\n")
KV = "INFO Available KV cache memory: 9.40 GiB\n"
CUMEM_OOM = "CUDA Error: out of memory at /app/csrc/cumem_allocator.cpp:161\n"
TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has a total capacity of 44.42 GiB "
             "of which 612.00 MiB is free. Process 7 has 43.81 GiB memory in use.\n")


def _budget_named(ev):
    return any("sleep-mode (cumem) allocator ran out after vLLM sized the KV cache" in e
               for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("text", [SLEEP + KV + CUMEM_OOM + TORCH_OOM, SLEEP + KV + CUMEM_OOM])
def test_sleep_mode_allocator_out_after_the_kv_cache_was_sized_is_the_budget(text):
    """vllm#40256: with the cumem allocator the profile over-counts PyTorch's memory and hands the KV cache more than the
    card holds; the allocator's own line comes alone, or before PyTorch's message for the same request."""
    cause, conf, ev = top(text)
    assert cause == "other" and _budget_named(ev), (cause, conf)


@pytest.mark.parametrize("text", [
    SLEEP + CUMEM_OOM + TORCH_OOM,                                       # no KV cache sized yet: loading, or a wake-up
    SLEEP + KV + TORCH_OOM,                                              # no line of the allocator's own
    SLEEP + KV + "CUDA Error: invalid argument at /app/csrc/cumem_allocator.cpp:119\n",   # a driver call failing: its own row
])
def test_the_sleep_mode_budget_row_needs_the_allocator_out_of_memory_after_the_kv_sizing(text):
    _, _, ev = top(text)
    assert not _budget_named(ev), ev["causes"]
