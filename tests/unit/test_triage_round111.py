"""Triage round 111 (batches 578-587): five reader changes, each from a message form in the logs' own words. Inputs are
written by hand from the message forms (not copied from the case files); expected values are worked out by hand.

- a traceback source line that builds a model from a saved checkpoint ("Net.from_checkpoint(path, ...)", Lightning's
  "Net.load_from_checkpoint(path)") reads as weights being placed (categories._SRC);
- comfy-aimdo's own C logger line ("aimdo: <file>.c:N:LEVEL:...") names ComfyUI as the runtime, read before a failure too;
- PyTorch's message quoted with its capacity sentence elided after the card's name ("GPU 0 ... N memory in use. Of the
  allocated memory ...") gives its allocated and reserved-but-unallocated figures, a sentence (or a broken one) a line too;
- TensorFlow 0.x's BFC Stats block printed before its "Ran out of memory trying to allocate" warning is that failure's;
- the CUDA samples' deviceQuery line "Total amount of global memory: M MBytes (N bytes)" gives the card's total."""
import re

import pytest

from support.triage_event import last_event, read, top
from gpu_garden.memory.triage import paste
from gpu_garden.memory.triage.categories import source_category
from gpu_garden.memory.triage.fact_patterns import FACTS
from support.regex_time import cpu_limit, cpu_now

MB = 1 << 20
GiB = 1 << 30
MiB = 1 << 20
AIMDO_LOG = dict(FACTS)["aimdo_log"]
QUERY_TOTAL = dict(FACTS)["cuda_query_total"]


def _linear(rx, text):
    t = cpu_now()
    rx.search(text) if isinstance(rx, re.Pattern) else rx(text)
    assert cpu_now() - t < cpu_limit(1.0)


# --- 1. a model built from a checkpoint ------------------------------------------------------------------------------------

# a notebook cell building a model class from its checkpoint on the card; PyTorch's message says 15.02 of 15.70 GiB are
# PyTorch's and 320 MiB more were asked: without the source line it reads as one working tensor too many (activations)
CHECKPOINT_CELL = """---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
Cell In[3], line 2
      1 ckpt = "/data/ckpt/mynet"
----> 2 net = MyNet.{call}(ckpt, device="cuda")

File ~/src/mynet/model.py:210, in MyNet.{func}(path, device)
    208 cfg = Config.load(path)
--> 210 net = MyNet(cfg, device=device)

File ~/src/mynet/model.py:150, in MyNet.__init__(self, cfg, device)
--> 150     self.layers = nn.ModuleList([Block(cfg, i, device) for i in range(cfg.n_layers)])

OutOfMemoryError: CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of 15.70 GiB of which 210.44 MiB is free. Including non-PyTorch memory, this process has 15.48 GiB memory in use. Of the allocated memory 15.02 GiB is allocated by PyTorch, and 61.20 MiB is reserved by PyTorch but unallocated.
"""


@pytest.mark.parametrize("call", ["from_checkpoint", "load_from_checkpoint"])
def test_model_built_from_a_checkpoint_reads_as_weights(call):
    cause, conf, _ = top(CHECKPOINT_CELL.format(call=call, func=call))
    assert cause == "weights-exceed-vram"
    assert conf["weights-exceed-vram"] > conf.get("activations", 0)


@pytest.mark.parametrize("line, want", [
    ("model = Transformer.from_checkpoint(checkpoint_path, \"cuda\")", "weights-exceed-vram"),
    ("net = LitNet.load_from_checkpoint(ckpt_path, map_location='cuda:0')", "weights-exceed-vram"),
    ("m = from_checkpoint(path)", "weights-exceed-vram"),
    # controls: a keyword, a name that only ends in the words, no call
    ("out = run(cfg, resume_from_checkpoint=True)", None),
    ("state = restore_from_checkpoint(path)", None),
    ("# built with Net.from_checkpoint", None),
])
def test_source_line_from_checkpoint(line, want):
    assert source_category(line) == want


def test_from_checkpoint_row_is_linear_on_adversarial_lines():
    rx = re.compile(r"\b(?:load_)?from_checkpoint\(")
    for text in ("from_checkpoint" * (MB // 15), "load_" * (MB // 5), "load_from_checkpoint" * (MB // 20) + "x",
                 "(" + "a" * MB, "from_checkpoint (" * (MB // 17)):
        _linear(rx, text)
        _linear(source_category, text + "(")


# --- 2. comfy-aimdo's own log line ------------------------------------------------------------------------------------------

AIMDO_KILLED = """aimdo: src/control.c:120:INFO:comfy-aimdo inited for GPU: NVIDIA GeForce RTX 3060 (VRAM: 12288 MB)
Requested to load WAN21
loaded partially; 6100.00 MB usable, 5900.12 MB loaded, 2200.00 MB offloaded
Out of memory: Killed process 4242 (python3) total-vm:40000000kB, anon-rss:30000000kB, file-rss:0kB, shmem-rss:0kB
"""


def test_aimdo_line_names_comfyui_before_an_oom_kill():
    cause, kind, runtime, _, nums = read(AIMDO_KILLED)
    assert (cause, kind, runtime) == ("host-ram", "os.oom_killer", "comfyui")
    assert nums["this_process"] == 30000000 * 1024


def test_without_the_aimdo_line_the_same_kill_is_pytorch():
    # control: "Requested to load" alone is Forge's and Fooocus's word too, so it names no runtime
    assert read(AIMDO_KILLED.split("\n", 1)[1])[2] == "pytorch"


def test_aimdo_line_names_comfyui_before_a_torch_oom():
    text = ("[ERROR] aimdo: src/model-vbar.c:301:WARNING:VBAR grow deferred\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
    assert read(text)[2] == "comfyui"


@pytest.mark.parametrize("line, ok", [
    ("aimdo: control.c:254:INFO:comfy-aimdo integrated Linux GPU RAM headroom: 2048 MB", True),
    ("[ERROR] aimdo: /project/src/model-vbar.c:88:ERROR:", True),
    ("aimdo: D:\\a\\comfy-aimdo\\comfy-aimdo\\src\\plat.h:63:DEBUG:CUDA API FAILED : cuMemMap", True),
    # controls: no file and line, no level, a Python file
    ("aimdo: hello", False),
    ("aimdo: src/control.c:254: inited", False),
    ("aimdo: comfy_aimdo/host_buffer.py:40:INFO:read", False),
    ("pip install comfy-aimdo==0.4.13", False),
])
def test_aimdo_log_pattern(line, ok):
    assert bool(AIMDO_LOG.search(line)) is ok


def test_aimdo_log_pattern_is_linear_on_adversarial_lines():
    for text in ("aimdo: " * (MB // 7), "aimdo: " + "a" * MB, "aimdo: " + "a.c:" * (MB // 4), "aimdo: a.c:" + "9" * MB,
                 "aimdo: " + ("a" * 119 + ".c:1:") * (MB // 124), "aimdo: " + "/" * MB + ".c:1:INFO:"):
        _linear(AIMDO_LOG, text)


# --- 3. PyTorch's message with its capacity sentence elided -------------------------------------------------------------------

ELIDED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.{a}GPU 1 {dots} 45.25 GiB memory in use. "
          "Of the allocated memory 40.75 GiB is{b}allocated by PyTorch, and 12.25 GiB is reserved by PyTorch but unallocated.\n")


@pytest.mark.parametrize("a, b", [(" ", " "), ("\n", " "), ("\n", "\n")])
@pytest.mark.parametrize("dots", ["...", "\u2026"])
def test_elided_capacity_sentence_keeps_the_allocated_figures(a, b, dots):
    nums = read(ELIDED.format(a=a, b=b, dots=dots))[4]
    # by hand: 2.5 x 2^30, 40.75 x 2^30, 12.25 x 2^30
    assert nums["requested"] == 2684354560
    assert nums["allocated"] == 43754979328
    assert nums["reserved_unallocated"] == 13153337344


def test_sentence_joiner_rejoins_the_elided_quote():
    # (lines of these lengths, 72, 71 and 75 characters, are no text wrapped at a width: the sentence joiner alone joins them)
    text = ELIDED.format(a="\n", b="\n", dots="...").encode()
    assert paste.undo(text).split(b"\n")[0] == ELIDED.format(a=" ", b=" ", dots="...").encode().rstrip(b"\n")


def test_elided_quote_without_the_allocated_sentence_reads_only_the_request():
    nums = read("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.\nGPU 1 ... 45.25 GiB memory in use.\n")[4]
    assert nums["requested"] == 2684354560 and "allocated" not in nums


def test_a_line_after_the_head_that_is_not_the_message_is_not_joined():
    text = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.\nGPU 1 is the second card\n"
    assert paste.undo(text) == text


def test_joiner_patterns_are_linear_on_adversarial_lines():
    for text in (b"GPU 1 " + b"." * MB, b"Of the allocated memory " + b"9" * MB + b" is", b"Of the allocated memory 1 GiB is" * (MB // 32),
                 b" " * MB + b"allocated by PyTorch", b"GPU " * (MB // 4)):
        _linear(paste._TORCH_GPU_CUT.match, text)
        _linear(paste._ALLOC_OPEN_END, text)
        _linear(paste._ALLOC_REST.match, text)
        _linear(lambda t: paste.undo(b"CUDA out of memory. Tried to allocate 1.00 GiB.\n" + t + b"\n" + t), text)


# --- 4. TensorFlow 0.x's Stats block before its warning ---------------------------------------------------------------------

TF0_STATS = """I tensorflow/core/common_runtime/bfc_allocator.cc:689] Sum Total of in-use chunks: 2.78GiB
I tensorflow/core/common_runtime/bfc_allocator.cc:691] Stats: 
Limit:                  3000000000
InUse:                  2990000000
MaxInUse:               2995000000
NumAllocs:                   12345

W tensorflow/core/common_runtime/bfc_allocator.cc:270] ********************************************xxxxxxxxxxxxxx
W tensorflow/core/common_runtime/bfc_allocator.cc:271] Ran out of memory trying to allocate 64.00MiB.  See logs for memory state.
W tensorflow/core/framework/op_kernel.cc:909] Resource exhausted: OOM when allocating tensor with shape[64,256,32,32]
"""


def test_tf0_stats_before_the_warning_are_its_own():
    nums = read(TF0_STATS)[4]
    assert nums["requested"] == 64 * MiB
    assert nums["device_limit"] == 3000000000 and nums["allocated"] == 2990000000


def test_stats_after_an_earlier_failure_are_not_read_back_for_the_next():
    # control, on the facts themselves: a failure before the block owns it (the newer order, stats after each failure); the
    # next failure, with none after it, reads none. Alone before the log's first failure, the block is that failure's
    from gpu_garden.memory.triage.facts import bfc_stats_after
    stats = {8: ("device_limit", 3000000000), 9: ("allocated", 2990000000)}
    assert bfc_stats_after({"bfc_fail_lines": {5: True, 12: True}, "bfc_stats": stats}, 5) == {
        "device_limit": 3000000000, "allocated": 2990000000}
    assert bfc_stats_after({"bfc_fail_lines": {5: True, 12: True}, "bfc_stats": stats}, 12) == {}
    assert bfc_stats_after({"bfc_fail_lines": {12: True}, "bfc_stats": stats}, 12) == {
        "device_limit": 3000000000, "allocated": 2990000000}
    # two blocks before the first failure: the last one, nearest it
    two = {**stats, 10: ("device_limit", 3100000000), 11: ("allocated", 3050000000)}
    assert bfc_stats_after({"bfc_fail_lines": {12: True}, "bfc_stats": two}, 12) == {
        "device_limit": 3100000000, "allocated": 3050000000}


# --- 5. deviceQuery's total -------------------------------------------------------------------------------------------------

QUERY = """Device {dev}: "GeForce GTX 970"
  CUDA Driver Version / Runtime Version          8.0 / 8.0
  Total amount of global memory:                 {mb} MBytes ({b} bytes)
"""
CUT_OOM = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"


def test_device_query_total_is_the_cards():
    nums = read(QUERY.format(dev=0, mb=4096, b=4294508544) + CUT_OOM)[4]
    assert nums["total"] == 4294508544 and nums["requested"] == 20 * MiB


def test_device_query_two_cards_alike_and_unlike():
    same = QUERY.format(dev=0, mb=4096, b=4294508544) + QUERY.format(dev=1, mb=4096, b=4294508544)
    assert read(same + CUT_OOM)[4]["total"] == 4294508544
    unlike = QUERY.format(dev=0, mb=4096, b=4294508544) + QUERY.format(dev=1, mb=12288, b=12884705280)
    assert "total" not in read(unlike + CUT_OOM)[4]


def test_device_query_total_is_not_given_to_a_host_failure():
    text = QUERY.format(dev=0, mb=4096, b=4294508544) + "Out of memory: Killed process 99 (python) total-vm:9kB, anon-rss:8000kB\n"
    assert "total" not in read(text)[4]


def test_device_query_pattern_is_linear_on_adversarial_lines():
    for text in ("Total amount of global memory:" + " " * MB, "Total amount of global memory: 1 MBytes (" + "9" * MB,
                 "Total amount of global memory: " * (MB // 31), "Total amount of global memory: " + "9" * MB + " MBytes"):
        _linear(QUERY_TOTAL, text)
