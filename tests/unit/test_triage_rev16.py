"""rev16 B1 (session 47, fix19): in a log whose every line starts with a number and a space (a paste copied with line
numbers, vim's "%3d ", less -N's "%7d ", a logger writing the PID first), a numbered line holding " in name(" was read as
an IPython 7 frame line (chain_links._IPY_FRAME's loose form) and the OOM line below it as code under that frame, so the
OOM was never recognised. A numbered line is never the frame line, and a numbered line whose code is an exception line is
never code."""
from support.regex_time import assert_each_fast
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.chain_links import _EXC_HEAD, source_line

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of "
       "which 1.00 GiB is free.")
TB = ['Traceback (most recent call last):', '  File "/app/train.py", line 40, in <module>', '    for step in range(steps):',
      '  File "/app/train.py", line 44, in <module>', '    loss = model(x)', OOM]


def _read(text):
    r = engine.triage_text(text)
    return r["found"], r["found"] and r["events"][r["headline"]]["numbers"].get("requested")


def test_numbered_log_lines_hide_no_oom():
    for number in ("%3d ", "%7d ", "%d "):
        text = "\n".join(number % (i + 1) + line for i, line in enumerate(TB)) + "\n"
        assert _read(text) == (True, 2 << 30), text                             # was not found
        pid = "\n".join("12345 " + line for line in TB) + "\n"
        assert _read(pid) == (True, 2 << 30), pid                               # was not found
    assert _read("Error in forward(x) at step 3\n0 " + OOM + "\n") == (True, 2 << 30)      # was not found
    assert _read("Error at step 3\n0 " + OOM + "\n") == (True, 2 << 30)


def test_each_guard_alone():
    # a numbered line above is passed over, never taken for the frame line (its code holds " in name(")
    block = b"  3     for step in range(steps):\n  4     loss = model(x)\n"
    assert not source_line(block, block.index(b"  4"), b"", b"  4     loss = model(x)")
    # a numbered exception line is never code, even under a real IPython frame
    frame = b"File ~/x.py:5, in f()\n      4 y = 1\n"
    assert source_line(frame, len(frame), b"", b"      5 except torch.OutOfMemoryError:")
    for line in (b"      5 torch.OutOfMemoryError: CUDA out of memory.", b"0 OutOfMemoryError:", b"12 x.YError(Inner): m",
                 b"  7 ResourceWarning: unclosed", b"  7   RuntimeException: x"):
        assert not source_line(frame, len(frame), b"", line), line
    for line in (b"      5 except torch.OutOfMemoryError:", b"      5 raise OutOfMemoryError(msg)", b"      5 Error = 3",
                 b"      5 KeyError.x: int"):
        assert source_line(frame, len(frame), b"", line), line


def test_exception_head_reads_linear():
    n = 1 << 20
    assert_each_fast([(_EXC_HEAD.match, [b" " * n, b"a" * n, b"Error" * (n // 5), b"aError(" * (n // 7), b"a." * (n // 2),
                                         b"\t" * 64 + b"Error" * (n // 5)])])
    frame = b"File ~/x.py:5, in f()\n"
    assert_each_fast([(lambda line: source_line(frame, len(frame), b"", line),
                       [b"      5 " + b"Error" * (n // 5), b"1 " + b"a" * n, b"1 " + b"Error(" * (n // 6)])])
