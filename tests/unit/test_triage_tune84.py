"""Triage round 84 (task tune84: batches 292, 293 and 295 after first sight), written from the runtimes' own message
formats:
- ggml's context pool line ("%s: not enough space in the context's memory pool (needed %zu, available %zu)", ggml.c
  ggml_new_object; ggml_new_tensor_impl's in 2023) quoted without its function's name, where a line starts, with both
  numbers: servers._ggml_ctx_pool's form "bare", read as the program's own sizing (other), its numbers exact.
- CANN's graph engine refusing an Ascend NPU allocation ("Call rtMalloc fail, purpose:%s, type = %u, size:%zu, device_id:%u",
  under "EL0004: Failed to allocate memory."): native_runtimes.CANN_RTMALLOC, the request read, the device an NPU; under
  PyTorch (torch_npu runs its operators through CANN) read as PyTorch's message cut after its request (activations).
- a paste whose lines are a read-out of files under one folder ("/sys/fs/cgroup/memory/memory.limit_in_bytes = N" above
  "/sys/fs/cgroup/memory/memory.failcnt = N"): each line names its own file, so none is joined to the line before as a
  wrapped rest (paste._same_prefix); DeepSpeed's launcher line above them ("... exits with return code = -9") stays whole.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

import textwrap

from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.triage import paste
from support.triage_event import last_event as _head  # (result, the headline event)


def _read(text):
    res, ev = _head(text)
    return res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"], ev.get("form")


def _kinds(text):
    return [e["kind"] for e in triage.triage_text(text)["events"]]


def test_ggml_context_pool_line_without_its_function_is_the_pool_with_its_numbers():
    text = "not enough space in the context's memory pool (needed 1048944, available 1048576)\nGGML_ASSERT(obj_new)\n"
    assert _read(text) == ("other", "ggml.ctx_pool", "llama.cpp", "cpu", {"requested": 1048944, "available": 1048576}, "bare")


def test_ggml_context_pool_line_with_its_function_reads_as_before():
    text = "ggml_new_object: not enough space in the context's memory pool (needed 1048944, available 1048576)\n"
    assert _read(text)[:2] == ("other", "ggml.ctx_pool") and _read(text)[5] == "object"
    text = "ggml_new_tensor_impl: not enough space in the context's memory pool (needed 35007776, available 12582912)\n"
    assert _read(text)[0] == "activations" and _read(text)[5] == "tensor_impl"


def test_ggml_context_pool_words_inside_a_sentence_are_prose():
    text = "The old build said there was not enough space in the context's memory pool (needed 1048944, available 1048576)\n"
    assert "ggml.ctx_pool" not in _kinds(text)


def test_launcher_kill_above_a_cgroup_read_out_is_host_ram():
    text = ("[launch.py:319:sigkill_handler] Killing subprocess 4242 ... exits with return code = -9\n"
            "/sys/fs/cgroup/memory/memory.limit_in_bytes      = 68719476736\n"
            "/sys/fs/cgroup/memory/memory.max_usage_in_bytes  = 68719480832\n"
            "/sys/fs/cgroup/memory/memory.failcnt             = 7\n"
            "/sys/fs/cgroup/memory/memory.oom_control         = oom_kill 2\n")
    assert _read(text)[:4] == ("host-ram", "os.oom_killer", "pytorch", "cpu")


def test_lines_under_one_folder_are_not_joined_as_wrapped():
    lines = [b"a program printed its last line here = -9",
             b"/sys/fs/cgroup/memory/memory.limit_in_bytes      = 68719476736",
             b"/sys/fs/cgroup/memory/memory.max_usage_in_bytes  = 68719480832",
             b"/sys/fs/cgroup/memory/memory.failcnt             = 7",
             b"/sys/fs/cgroup/memory/memory.oom_control         = oom_kill 2"]
    assert paste.undo(b"\n".join(lines) + b"\n").split(b"\n")[:5] == lines


def test_textwrap_wrapped_prose_is_still_joined():
    # a path cut by textwrap: its rest does not open with the folder of the line before, so it is joined as before
    words = ("the loader could not read /models/checkpoints/large/model-00001-of-00004.safetensors because the file "
             "was still being copied from the network share when the job started on this node")
    wrapped = textwrap.fill(words, 48).encode() + b"\n"
    assert paste.undo(wrapped).split(b"\n")[0] == words.encode()


CANN = ("RuntimeError: The Inner error as above.\n"
        "EL0004: Failed to allocate memory.\n"
        "        Possible Cause: Available memory is insufficient.\n"
        "        TraceBack (most recent call last):\n"
        "        rtMalloc execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:50]\n"
        "        Call rtMalloc fail, purpose: feature map, type = 2, size:2147483648, device_id:1[FUNC:Alloc][FILE:device_allocator.cc][LINE:70]\n")


def test_cann_rtmalloc_refusal_is_the_npu_s_request():
    res, ev = _head(CANN)
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"]) == \
        ("activations", "npu.cann_malloc", "pytorch", "npu", {"requested": 2147483648})


def test_cann_rtmalloc_line_without_its_size_is_not_read():
    assert "npu.cann_malloc" not in _kinds("Call rtMalloc fail, purpose: feature map, type = 2\n")
