"""Triage robustness and output fixes: PyTorch's "no limit" sentinel rendered as such, the Windows commit limit in the
llama.cpp host-RAM guide, and per-line parsing that stays cheap on logs made only of OOM lines."""
from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.triage.render import render_numbers

# cudaMallocAsync's block (CUDAMallocAsyncAllocator.cpp), numbers as in the ComfyUI reports quoting it; no memory fraction
# set: pytorch_memory_limits starts at UINT64_MAX, printed as 17179869184.00 GiB
ASYNC = ("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
         "Currently allocated     : 4.86 GiB\nRequested               : 10.12 GiB\n"
         "Device limit            : 24.00 GiB\nFree (according to CUDA): 0 bytes\n"
         "PyTorch limit (set by user-supplied memory fraction)\n                        : {limit}\n")


def test_unset_pytorch_limit_reads_no_limit():
    res = triage.triage_text(ASYNC.format(limit="17179869184.00 GiB"))
    assert res["events"][0]["numbers"]["limit"] == 1 << 64          # the parsed figure itself is kept in the JSON
    text = triage.render_human(res)
    assert "PyTorch limit: no limit" in text
    assert "17179869184" not in text


def test_set_pytorch_limit_keeps_its_size():
    # torch.cuda.set_per_process_memory_fraction(0.5) on a 24 GiB card: a real limit stays a size
    res = triage.triage_text(ASYNC.format(limit="12.00 GiB"))
    assert "PyTorch limit 12.00 GiB" in triage.render_human(res)
    # just under the sentinel: still a size
    assert render_numbers({"limit": (1 << 63) - (1 << 40)}) == "PyTorch limit 8589933568.00 GiB"


def test_demo_shows_no_limit():
    out = triage.demo_section()
    assert "PyTorch limit: no limit" in out and "17179869184" not in out


def test_ggml_context_pool_guide_names_the_windows_commit_limit():
    # audio.cpp#151 (https://github.com/0xShug0/audio.cpp/issues/151): a 4 GB context pool refused on Windows with RAM free
    res = triage.triage_text("load_backend: loaded CPU backend\n"
                             "D:/a/app/ggml/src/ggml.c:1685: GGML_ASSERT(ctx->mem_buffer != NULL) failed\n")
    g = res["events"][0]["guide"]
    assert (res["cause"], g["id"]) == ("host-ram", "llamacpp-host-ram")
    md = g["markdown"]
    assert "commit limit" in md and "page file" in md and "mem_buffer" in md
    assert any("Commit Limit" in c["text"] for c in g["commands"])


# --- each line parsed once ------------------------------------------------------------------------------------------

def _count_recognise(monkeypatch, text):
    from gpu_garden.memory.triage import parse as P
    calls, real = [], P.recognise
    monkeypatch.setattr(P, "recognise", lambda line: calls.append(line) or real(line))
    return triage.triage_text(text), len(calls)


def test_unfinished_messages_one_after_another_are_each_parsed_once(monkeypatch):
    # an unfinished PyTorch message is joined with the lines after it (a wrapped copy); a line that repeats it unfinished
    # starts a new message, so the join stops there and no line is parsed again inside the joins of the lines before it
    n = 300
    res, calls = _count_recognise(monkeypatch, "".join(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {20 + i}.00 MiB\n"
                                                       for i in range(n)))
    assert res["found"] and res["events"][-1]["kind"] == "torch.cuda"
    assert calls <= n + 1          # was 6 per line: its own and one in each join of the five lines before it


def test_a_repeated_line_is_parsed_once(monkeypatch):
    line = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of "
            "which 9.06 MiB is free. Of the allocated memory 22.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by "
            "PyTorch but unallocated.\n")
    res, calls = _count_recognise(monkeypatch, line * 500)
    assert res["events"][0]["numbers"]["requested"] == 20 * 2 ** 20 and res["count"] == 1
    assert calls <= 2


def test_a_wrapped_message_is_still_joined():
    # the same message cut by a narrow terminal: its numbers come from the next lines
    res = triage.triage_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of\n"
                             "23.65 GiB of which 9.06 MiB is free. Of the allocated memory 22.10 GiB is allocated by PyTorch, and\n"
                             "1.20 GiB is reserved by PyTorch but unallocated.\n")
    n = res["events"][0]["numbers"]
    assert (n["total"], n["reserved_unallocated"]) == (round(23.65 * 2 ** 30), round(1.2 * 2 ** 30))


# --- a training log: "epoch" or "train" on every line ---------------------------------------------------------------

def _training_log(after_oom: int) -> str:
    lines = [f"Epoch 3/40: training step {i}, train_loss=0.{i % 9973:04d}\n" for i in range(26000)]     # ~1.3 MB: past the first chunk (the head)
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
    return "".join(lines) + oom + "".join(lines[:after_oom])


def test_training_lines_are_not_reread_once_the_run_is_known_to_train(monkeypatch):
    from gpu_garden.memory.triage import facts
    window_lines, real = [], facts.apply
    monkeypatch.setattr(facts, "apply", lambda scan, n, text, window=False: (window and window_lines.append(text)) or real(scan, n, text, window))
    res = triage.triage_text(_training_log(10))
    assert res["found"] and res["events"][0]["platform"] and window_lines == []     # was every line of the 48 KB window


def test_an_open_failure_is_not_scanned_past_its_gap(monkeypatch):
    # after the failure, 20000 lines with no anchor word: the open scan (every startup and context word) stops GAP lines on
    from gpu_garden.memory.triage import lines as L, scan as S
    scanned, real = [], S._line_starts
    def spy(block, needles, lo=0, hi=None):
        if needles in (L.OPEN_ANCHORS, L.OPEN_ANCHORS_TRAINED):
            scanned.append((len(block) if hi is None else hi) - lo)
        return real(block, needles, lo, hi)
    monkeypatch.setattr(S, "_line_starts", spy)
    log = _training_log(20000)
    assert triage.triage_text(log)["found"]
    assert 0 < sum(scanned) < 80_000       # GAP lines of ~50 bytes and one SPAN at most; was the rest of the 1 MiB chunk
