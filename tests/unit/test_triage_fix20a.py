"""Review 20's triage findings (task fix20a): each test failed before its fix. Logs written from the review's examples
(/tmp/rv20), in the runtimes' own formats; numbers made up, expected values by hand."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage.categories import frame_category

BARRIER_OOM = ("Traceback (most recent call last):\n"
               '  File "/work/proj/code/megatron/initialize.py", line 140, in _compile_dependencies\n'
               "    torch.distributed.barrier()\n"
               "RuntimeError: CUDA error: out of memory\n")


def test_a_torchtune_frame_reads_the_same_under_site_packages_and_dist_packages():
    """Only PyTorch's own frames ("/torch/") name no cause: torchtune (and torchvision, torchaudio, torchao) is a library
    read like any other, wherever pip put it (review 20: "site-packages/torch" also matched "site-packages/torchtune")."""
    for where in ("/home/user/.venv/lib/python3.11/site-packages", "/usr/local/lib/python3.10/dist-packages"):
        assert frame_category(f"{where}/torchtune/modules/attention_utils.py", "_sdpa_or_flex_attention") == "activations", where
        assert frame_category(f"{where}/torchvision/models/vision_transformer.py", "self_attention") == "activations", where
        assert frame_category(f"{where}/torch/nn/functional.py", "scaled_dot_product_attention") is None, where


# --- 2. a hardware fault does not override a shortage the message's own numbers show ---------------------------------------
TRAIN_OOM = ("Traceback (most recent call last):\n"
             '  File "/home/user/train.py", line 88, in <module>\n'
             "    loss = model(batch).loss\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of 79.15 GiB of "
             "which {free} is free. Including non-PyTorch memory, this process has 76.02 GiB memory in use. Of the allocated "
             "memory 74.10 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated.\n")
XID = "[ 1021.553210] NVRM: Xid (PCI:0000:3b:00): {code}, pid=1812, name=python, {what}\n"


def _fault_named(ev):
    return any("hardware fault" in e for c in ev["causes"] for e in c["evidence"])


def test_a_hardware_xid_beside_a_shown_shortage_keeps_the_shortage_first():
    """Xid 48 (a double-bit ECC error) beside PyTorch holding 74.1 of 79.15 GiB and an 8 GiB request over 3.12 GiB free: the
    message's own numbers show the shortage; the fault is named, below it."""
    oom = TRAIN_OOM.format(req="8.00 GiB", free="3.12 GiB")
    plain, _ = last_event(oom)
    res, ev = last_event(XID.format(code=48, what="An uncorrectable double bit error (DBE) has been detected on GPU.") + oom)
    assert res["cause"] == plain["cause"] == "activations", ev["causes"][:2]
    assert _fault_named(ev), ev["causes"]
    assert ev["causes"][0]["confidence"] >= 0.7, ev["causes"][:2]      # 0.78 without the Xid line


def test_a_hardware_xid_beside_free_memory_covering_the_request_is_the_card():
    oom = TRAIN_OOM.format(req="2.00 GiB", free="3.12 GiB")
    res, ev = last_event(XID.format(code=48, what="An uncorrectable double bit error (DBE) has been detected on GPU.") + oom)
    assert res["cause"] == "other" and "hardware fault" in ev["causes"][0]["evidence"][0], ev["causes"][:2]


@pytest.mark.parametrize("code, what, hardware", [
    (63, "Row Remapper: New row (0x0000000000a1f2c0) Marked for Remapping, reset gpu to activate.", False),
    (92, "High single-bit ECC error rate", False),
    (93, "Non-fatal violation of provisioned InfoROM wear limit.", False),
    (62, "Internal micro-controller halt", True),
    (154, "GPU recovery action changed from 0x0 (None) to 0x1 (Reset Required).", True),
    (64, "Row Remapper: Failed to remap row.", True),
])
def test_which_xid_codes_are_a_hardware_fault(code, what, hardware):
    """Beside a bare driver error (no numbers): only the codes of a failing card or memory read as a hardware fault."""
    res, ev = last_event(XID.format(code=code, what=what) + BARRIER_OOM)
    assert _fault_named(ev) == hardware, (code, ev["causes"][:2])
