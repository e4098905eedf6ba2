"""Task tri78 (issue 14): a card's total that nvidia-smi's GPU table printed, read as deviceQuery's is (round 111), and a
failure with no figure of its own on a card of at most 2 GiB read as the tiny-card row reads PyTorch's (weights).
Inputs written by hand in the tools' own formats; none taken from a corpus file.

nvidia-smi's GPU table prints each card's Memory-Usage column on the card's row as "<used>MiB / <total>MiB". Where every
card printed the same total, it is the card's (printed_card.printed_total). A runtime's CUDA check that prints only "out of
memory" (TVM's for MLC LLM) gives no request and no card figure; on a card of at most case.TINY_CARD the tiny-card reading
applies (printed_card.tiny_printed, rules_weights)."""
import pytest

from support.triage_event import read, top

GiB, MiB = 1 << 30, 1 << 20
TVM_OOM = ("Traceback (most recent call last):\n"
           '  File "/home/me/chat.py", line 4, in <module>\n'
           '    cm = ChatModule(model="Llama-2-7b-chat-hf-q4f16_1")\n'
           "tvm/src/runtime/cuda/cuda_device_api.cc:129: InternalError: Check failed: (e == cudaSuccess || "
           "e == cudaErrorCudartUnloading) is false: CUDA: out of memory\n")


def smi_table(*cards):
    """nvidia-smi's GPU table (driver 535's layout), one row pair a card: (name, used MiB, total MiB)."""
    rows = "".join(f"|   {i}  {name:<28}Off | 00000000:0{i + 1}:00.0 Off |                  N/A |\n"
                   f"| N/A   42C    P8              N/A / ERR! | {used:>8}MiB / {total:>5}MiB |      0%      Default |\n"
                   for i, (name, used, total) in enumerate(cards))
    return ("+---------------------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |\n"
            "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n" + rows)


DEVICE_QUERY = ("Device 0: \"NVIDIA GeForce MX150\"\n  CUDA Driver Version / Runtime Version          12.2 / 12.2\n"
                "  Total amount of global memory:                 2048 MBytes (2147352576 bytes)\n")


@pytest.mark.parametrize("text", [
    TVM_OOM + smi_table(("NVIDIA GeForce MX350", 9, 2048)),                          # the table after the error
    smi_table(("NVIDIA GeForce MX350", 9, 2048)) + TVM_OOM,                          # before it
    smi_table(("NVIDIA GeForce GT 1030", 5, 2001), ("NVIDIA GeForce GT 1030", 5, 2001)) + TVM_OOM,   # two cards alike
])
def test_figureless_failure_on_a_2_gib_card_in_smis_table_reads_weights(text):
    # fails on the old rules: the table's rows were not read (no memory word on them), and the failure read "other"
    # (an out-of-memory error without numbers)
    cause, conf, ev = top(text)
    assert cause == "weights-exceed-vram"
    assert "nvidia-smi" in " ".join(next(c for c in ev["causes"] if c["id"] == cause)["evidence"])
    assert ev["numbers"]["total"] in (2048 * MiB, 2001 * MiB)


def test_figureless_failure_beside_device_query_of_a_2_gib_card_reads_weights():
    # fails on the old rules: deviceQuery's total was reported (round 111) but no row read a figureless failure with it
    cause, _conf, ev = top(DEVICE_QUERY + TVM_OOM)
    assert (cause, ev["numbers"]["total"]) == ("weights-exceed-vram", 2147352576)


def test_smis_total_is_reported_for_a_larger_card_and_the_answer_stays():
    # the total is read (fails on the old rules: numbers were empty), but a 12 GiB card is no tiny card: the answer stays
    cause, kind, _runtime, device, numbers = read(TVM_OOM + smi_table(("NVIDIA TITAN Xp", 12064, 12188)))
    assert numbers == {"total": 12188 * MiB} and device == "cuda"
    assert cause == "other"


def test_cards_of_different_totals_give_no_total_and_no_tiny_reading():
    # control: a 2 GiB card beside a 24 GiB one does not say which card failed
    cause, _conf, ev = top(TVM_OOM + smi_table(("NVIDIA GeForce MX350", 9, 2048), ("NVIDIA GeForce RTX 4090", 3, 24564)))
    assert "total" not in ev["numbers"] and cause != "weights-exceed-vram"


def test_a_failure_with_its_own_figures_is_not_read_from_the_table():
    # control: PyTorch's message gives its own card and request; the table's total does not replace them
    torch_oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
                 "1.95 GiB of which 1.60 GiB is free. Including non-PyTorch memory, this process has 350.00 MiB memory in "
                 "use. Of the allocated memory 120.00 MiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but "
                 "unallocated.\n")
    _cause, _conf, ev = top(torch_oom + smi_table(("NVIDIA GeForce MX350", 9, 2048)))
    assert ev["numbers"]["total"] == int(1.95 * GiB) or abs(ev["numbers"]["total"] - 1.95 * GiB) < 0.01 * GiB
    assert not any("nvidia-smi" in e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("line", [
    "| N/A   42C    P8    N/A /  N/A |    2048MiB per card |",       # no "used / total" pair
    "memory: 9MiB / 2048MiB used",                                   # no table borders
])
def test_lines_outside_the_table_give_no_total(line):
    _cause, _conf, ev = top(TVM_OOM + line + "\n")
    assert "total" not in ev["numbers"]
