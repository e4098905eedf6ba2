"""rev16 B1 (session 47, fix19): in a log whose every line starts with a number and a space (a paste copied with line
numbers, vim's "%3d ", less -N's "%7d ", a logger writing the PID first), a numbered line holding " in name(" was read as
an IPython 7 frame line (chain_links._IPY_FRAME's loose form) and the OOM line below it as code under that frame, so the
OOM was never recognised. A numbered line is never the frame line, and a numbered line whose code is an exception line is
never code.
S1: a cell's top-level frame line under IPython 7.0-7.34 ("<ipython-input-3-628af068fea6> in <module>", no parentheses;
Colab's 7.34) and 8.0-8.4 ("Input In [3], in <module>") were no frame lines, so an "except torch.cuda.OutOfMemoryError:"
arrow line under them, then an old torch's AttributeError, was read as an OOM (rev15 D2's case).
S2: each numbered line was read back over up to 64 lines, so a log of numbered lines read 64 times over; the walk back now
stops at the last numbered line walked back from and takes its answer."""
import types

from support.regex_time import assert_each_fast
from gpu_garden.memory.triage import chain_links, engine
from gpu_garden.memory.triage.chain_links import _EXC_HEAD, _IPY_FRAME, source_line

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
                 b"  7 ResourceWarning: unclosed"):
        assert not source_line(frame, len(frame), b"", line), line
    for line in (b"      5 except torch.OutOfMemoryError:", b"      5 raise OutOfMemoryError(msg)", b"      5 Error = 3",
                 b"      5 KeyError.x: int", b"  7   RuntimeException: x"):      # (rev18 S1) indented: the frame's code
        assert source_line(frame, len(frame), b"", line), line


def test_exception_head_reads_linear():
    n = 1 << 20
    assert_each_fast([(_EXC_HEAD.match, [b" " * n, b"a" * n, b"Error" * (n // 5), b"aError(" * (n // 7), b"a." * (n // 2),
                                         b"\t" * 64 + b"Error" * (n // 5)])])
    frame = b"File ~/x.py:5, in f()\n"
    assert_each_fast([(lambda line: source_line(frame, len(frame), b"", line),
                       [b"      5 " + b"Error" * (n // 5), b"1 " + b"a" * n, b"1 " + b"Error(" * (n // 6)])])


RULE = "-" * 75 + "\n"
ATTR = "AttributeError: module 'torch.cuda' has no attribute 'OutOfMemoryError'\n"
CELL = "      1 try:\n      2     y = model(x)\n----> 3 except torch.cuda.OutOfMemoryError:\n      4     y = None\n\n"
CELL_FRAMES = ("<ipython-input-3-628af068fea6> in <module>",                                # IPython 7.0-7.34
               "\x1b[0;32m<ipython-input-3-628af068fea6>\x1b[0m in \x1b[0;36m<module>\x1b[0;34m\x1b[0m",
               "Input In [3], in <module>",                                                  # IPython 8.0-8.4
               "Input \x1b[0;32mIn [3]\x1b[0m, in \x1b[0;36m<cell line: 3>\x1b[0;34m()\x1b[0m")


def _cell(frame, exc):
    return RULE + exc.split(":")[0].ljust(42) + "Traceback (most recent call last)\n" + frame + "\n" + CELL + exc


def test_cell_frames_of_ipython_7_and_8_0():
    for frame in CELL_FRAMES:
        for t in (_cell(frame, ATTR), _cell(frame, ATTR).replace("\n", "\r\n")):
            assert not engine.triage_text(t)["found"], t                    # was found, cause other (torch.oom_type)
        assert _read(_cell(frame, OOM + "\n")) == (True, 2 << 30)
    for line in (b"<ipython-input-3-628af068fea6> in <module>", b"/p/x.py in <module>\r", b"Input In [3], in <module>",
                 b"Input In [12], in train(x)", b"Cell In [3]", b"Input In [3]"):
        assert _IPY_FRAME.match(line), line
    for line in (b"<module>", b"Input In 3, in f", b" in <module>", b"x in <module> y", b"Input In [3] x"):
        assert not _IPY_FRAME.match(line), line


def test_cell_frames_read_linear():
    n = 1 << 20
    assert_each_fast([(_IPY_FRAME.match, [b"a" + b" in <module>x" * (n // 13), b"a" + b" in <module" * (n // 11),
                                          b"Input In [" * (n // 10), b"a in " * (n // 5) + b"<module>",
                                          b"Input In [1], line " * (n // 19)])])


def test_numbered_log_reads_each_line_back_once(monkeypatch):
    reads, plain = [], chain_links._plain
    monkeypatch.setattr(chain_links, "_plain", lambda b: reads.append(1) or plain(b))
    for line in ("      4 y = torch.cuda.memory_allocated()  # CUDA out of memory\n", "1 memory\n",
                 "12345 " + "a in b " * 580 + "memory\n", "File ~/x.py:5, in f()\n" + "----> 5 except OutOfMemoryError:\n" * 99):
        text = line * ((1 << 20) // len(line))
        reads.clear()
        engine.triage_text(text)
        assert len(reads) <= 3 * text.count("\n"), line[:40]      # was up to 65 a line (64 read back)


def test_the_walk_back_keeps_its_bound_and_its_block():
    # (rev18 D2) the memo is the caller's object (the scanner passes its Scan), not a module global
    memo, line = types.SimpleNamespace(), b"      4 y = 1"
    block = b"File ~/x.py:5, in f()\n" + b"      4 y = 1\n" * 70
    starts = [i + 1 for i, c in enumerate(block[:-1]) if c == 10]
    assert [source_line(block, s, b"", line, memo) for s in starts] == [True] * 64 + [False] * 6
    assert [source_line(block, s, b"", line) for s in starts] == [True] * 64 + [False] * 6      # no memo: each line alone
    memo = types.SimpleNamespace()       # each line alone, no answer above it to take
    assert source_line(block, starts[63], b"", line, memo) and not source_line(block, starts[64], b"", line, memo)
    assert source_line(block, starts[10], b"", line, memo)
    other = bytes(bytearray(block.replace(b"File ~/x.py:5, in f()", b"INFO: no frame here  ")))   # another block, same length
    assert not source_line(other, starts[20], b"", line, memo)     # the last answer is another block's
    tail, rest = block[:starts[5]], block[starts[5]:]
    assert source_line(rest, 0, tail, line, memo) and source_line(rest, 14 * 20, tail, line, memo)
    assert not source_line(rest, 14 * 30, b"      4 y = 1\n" * 5, line, memo)      # another tail
