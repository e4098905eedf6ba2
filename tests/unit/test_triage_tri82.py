"""Task tri82 (issue 14): a ComfyUI server that died of a native abort ("Fatal Python error: Aborted") read as other.
Inputs written by hand in the runtimes' own words; none taken from a corpus file.

CPython's faulthandler prints "Fatal Python error: Aborted" for SIGABRT: native code called abort(). ComfyUI catches every
node's Python exception, PyTorch's OutOfMemoryError included (execution.py: "!!! Exception during processing !!!"), and goes
on, so a ComfyUI server that aborted was ended by native code below it (comfy-aimdo's Dynamic VRAM, a node's extension):
the label definition's runtime fault (other). An abort after an out-of-memory message, or after an earlier failure, is how
that failure ended and reads as that failure (native_abort.py)."""
import pytest

from support.triage_event import kinds, read, top

ABORT = "Fatal Python error: Aborted\n"
FAULT_TAIL = ("\nThread 0x00007f3a2b4c5740 (most recent call first):\n"
              '  File "/home/u/ComfyUI/comfy/ldm/lumina/model.py", line 612 in patchify_and_embed\n')
# ComfyUI's model management lines before the node ran (comfy/model_patcher.py, comfy/model_management.py)
COMFY_MM = ("Requested to load Lumina2\n0 models unloaded.\n"
            "loaded partially; 0.00 MB usable, 0.00 MB loaded, 4007.19 MB offloaded, 0.00 MB buffer reserved, lowvram patches: 0\n")
COMFY_START = ("Total VRAM 8188 MB, total RAM 32607 MB\npytorch version: 2.12.1+cu130\n"
               "Device: cuda:0 NVIDIA GeForce RTX 4060 Laptop GPU : cudaMallocAsync\ngot prompt\n")
AIMDO_COPY = "aimdo: src/hostbuf.c:283:ERROR:hostbuf_read_file_slice: device copy failed result=2 size=39321600\n"
TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB "
             "of which 1.20 GiB is free. Including non-PyTorch memory, this process has 22.34 GiB memory in use. Of the "
             "allocated memory 21.10 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize("text", [
    COMFY_MM + ABORT,                          # model management's lines, then the abort
    COMFY_START + COMFY_MM + ABORT + FAULT_TAIL,    # ComfyUI's start-up lines, and faulthandler's stack after the line
    COMFY_START + "Requested to load ZImage\n" + ABORT,
])
def test_comfyui_native_abort_reads_as_other(text):
    # fails on the old rules: the abort line was not recognised, so the triage found no failure at all
    cause, kind, _runtime, _device, numbers = read(text)
    assert (cause, kind, numbers) == ("other", "python.native_abort", {})
    _cause, _conf, ev = top(text)
    assert "native abort" in ev["causes"][0]["evidence"][0]      # the ComfyUI row's reading, not a generic row's


@pytest.mark.parametrize("text", [COMFY_START + AIMDO_COPY + ABORT, COMFY_MM + AIMDO_COPY + ABORT + FAULT_TAIL])
def test_aimdo_device_copy_then_abort_reads_as_other(text):
    # fails on the old rules: comfy-aimdo's device copy line was read as pinned host RAM (host-ram) whatever followed it
    cause, conf, ev = top(text)
    assert (cause, ev["kind"]) == ("other", "comfy.pinned_host")
    assert conf["other"] > conf.get("host-ram", 0)


def test_aimdo_device_copy_without_abort_stays_host_ram():
    # the same line with no abort after it (the Python reader raised): round 30's pinned-host reading is unchanged
    cause, _conf, ev = top(COMFY_START + AIMDO_COPY + "RuntimeError: hostbuf_file_reader_read failed\n")
    assert (cause, ev["kind"]) == ("host-ram", "comfy.pinned_host")


def test_an_abort_after_an_earlier_failure_does_not_head_the_answer():
    # a CUDA out-of-memory error, many lines of a run that went on, then the abort: the abort is how that failure ended the
    # process, so the answer stays the out-of-memory error's (fails on the first version of the reading: other, 0.89)
    filler = "".join(f"step {i} loss 0.{i % 10}\n" for i in range(200))
    text = COMFY_START + "!!! Exception during processing !!! " + TORCH_OOM.split("torch.", 1)[1] + filler + ABORT
    cause, _kind, _runtime, _device, _numbers = read(text)
    assert cause != "other"
    assert kinds(text)[-1] == "python.native_abort"


@pytest.mark.parametrize("text", [
    # a native out-of-memory before the abort: the abort is how it ended (C++'s bad_alloc, an XLA status)
    COMFY_MM + "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n" + ABORT,
    COMFY_START + TORCH_OOM + ABORT,
])
def test_an_abort_after_an_out_of_memory_message_reads_as_that_message(text):
    cause, _kind, _runtime, _device, _numbers = read(text)
    assert cause != "other"


def test_an_abort_outside_comfyui_is_not_read_by_the_comfyui_row():
    # a plain script's abort with nothing else: no ComfyUI line, so the ComfyUI row does not fire (the generic row answers)
    _cause, _conf, ev = top('  File "/app/train.py", line 44 in step\n' + ABORT + FAULT_TAIL)
    assert ev["kind"] == "python.native_abort"
    assert not any("native abort" in e for c in ev["causes"] for e in c["evidence"])
