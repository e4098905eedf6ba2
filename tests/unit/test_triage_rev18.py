"""rev18 (session 47, fix21), review of fix19's chain_links.source_line.
S1: a numbered line under an IPython frame whose code opened with an exception line after any indentation was never code
(_EXC_HEAD allowed leading blanks), so a docstring's "Raises:" entry, a doctest's expected output or a dict key naming an
OOM class, shown as context around the running line, was read as the OOM itself. Python never indents its exception line:
only the line right after the number's one space is one."""
import re

from support.regex_time import assert_each_fast
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.chain_links import _EXC_HEAD, source_line

RULE = "-" * 75 + "\n"
SHAPE = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x6)\n"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of "
       "which 1.00 GiB is free.")
DOC = ('      1 def step(batch):\n      2     """One training step.\n      3     Raises:\n'
       '      4         torch.cuda.OutOfMemoryError: if the batch does not fit.\n      5     """\n----> 6     return model(batch)\n')
DOCTEST = ('      1 def step(batch):\n      2     """\n      3     >>> step(big)\n      4     Traceback (most recent call last):\n'
           '      5     RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n      6     """\n----> 7     return model(batch)\n')
DICT = ('      1 HINTS = {\n      2     torch.cuda.OutOfMemoryError: "halve the batch",\n      3     ValueError: "check the shapes",\n'
        '      4 }\n      5 def step(batch):\n----> 6     return model(batch)\n')


def ip8(ctx, exc=SHAPE):
    return (RULE + "RuntimeError                              Traceback (most recent call last)\n"
            "Cell In[3], line 2\n      1 x = torch.randn(4, 3)\n----> 2 y = step(x)\n\n"
            "Cell In[2], line 6, in step(batch)\n" + ctx + "\n" + exc)


def ip7(ctx, exc=SHAPE):
    return (RULE + "RuntimeError                              Traceback (most recent call last)\n"
            "<ipython-input-3-628af068fea6> in <module>\n      1 x = torch.randn(4, 3)\n----> 2 y = step(x)\n\n"
            "<ipython-input-2-0b1c2d3e4f5a> in step(batch)\n" + ctx + "\n" + exc)


def colour(t):
    """IPython's colours as a notebook's saved output keeps them."""
    t = re.sub(r"^(----> |      )(\d+)", lambda m: "\x1b[0;32m" + m.group(1) + m.group(2) + "\x1b[0m", t, flags=re.M)
    return t.replace("Cell In[2]", "\x1b[0;32mCell In[2]\x1b[0m").replace(
        "torch.cuda.OutOfMemoryError", "torch\x1b[38;5;241m.\x1b[39mcuda\x1b[38;5;241m.\x1b[39mOutOfMemoryError")


def _read(text):
    r = engine.triage_text(text)
    return r["found"], r["found"] and r["events"][r["headline"]]["numbers"].get("requested")


def test_indented_exception_lines_under_an_ipython_frame_are_code():
    for ctx in (DOC, DOCTEST, DICT):
        for text in (ip8(ctx), ip7(ctx), colour(ip8(ctx)), colour(ip7(ctx)), ip8(ctx).replace("\n", "\r\n")):
            assert not engine.triage_text(text)["found"], text      # was found (the doctest's with 2 GiB)
        assert _read(ip8(ctx, OOM + "\n")) == (True, 2 << 30)       # the cell's real OOM below them
    frame = b"File ~/x.py:5, in f()\n      4 y = 1\n"
    for line in (b"      4         torch.cuda.OutOfMemoryError: if the batch does not fit.",
                 b"      5     RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
                 b'      2     torch.cuda.OutOfMemoryError: "halve the batch",', b"  7   RuntimeException: x",
                 b"      4 \tValueError: x"):
        assert source_line(frame, len(frame), b"", line), line      # was no source line
    for line in (b"      5 torch.OutOfMemoryError: CUDA out of memory.", b"0 OutOfMemoryError:", b"12 x.YError(Inner): m"):
        assert not source_line(frame, len(frame), b"", line), line


def test_numbered_exception_lines_stay_error_lines():
    tb = ['Traceback (most recent call last):', '  File "/app/train.py", line 40, in <module>', '    for step in range(steps):',
          '  File "/app/train.py", line 44, in <module>', '    loss = model(x)', OOM]
    for number in ("%3d ", "%7d ", "%d "):
        assert _read("\n".join(number % (i + 1) + line for i, line in enumerate(tb)) + "\n") == (True, 2 << 30), number
    assert _read("\n".join("12345 " + line for line in tb) + "\n") == (True, 2 << 30)
    assert _read("Error in forward(x) at step 3\n0 " + OOM + "\n") == (True, 2 << 30)


def test_exception_head_reads_linear():
    n = 1 << 20
    assert_each_fast([(_EXC_HEAD.match, [b" " * n, b"a" * n, b"Error" * (n // 5), b"aError(" * (n // 7), b"a." * (n // 2),
                                         b"\t" * n + b"Error:"])])


# S2: IPython >= 8.7 prints a 75-dash rule and a header padded to 75 columns above a cell's traceback; paste.undo read the
# two as a terminal's cut at that width and joined the rule, the header and the cell's "Cell In[3], line 3" frame into one
# line, so the frame started no line and an old torch's AttributeError under "----> 3 except torch.cuda.OutOfMemoryError:"
# read as an OOM (rev15 D2's case, pasted whole)
ATTR = "AttributeError: module 'torch.cuda' has no attribute 'OutOfMemoryError'\n"
CELL = "      1 try:\n      2     y = model(x)\n----> 3 except torch.cuda.OutOfMemoryError:\n      4     y = None\n\n"


def _ipy87(exc, frame="Cell In[3], line 3", cell=CELL, ansi=False):
    name = exc.split(":")[0]
    if not ansi:
        return RULE + name.ljust(42) + "Traceback (most recent call last)\n" + frame + "\n" + cell + exc
    colour = "\x1b[0;31m" + RULE[:-1] + "\x1b[0m\n\x1b[0;31m" + name + "\x1b[0m" + " " * (42 - len(name))
    cell = cell.replace("----> ", "\x1b[0;32m----> ").replace(" except", "\x1b[0m except").replace(" y = model", "\x1b[0m y = model")
    return (colour + "Traceback (most recent call last)\n" + frame.replace("In[3]", "\x1b[0;32mIn[3]\x1b[0m") + "\n" + cell
            + "\x1b[0;31m" + name + "\x1b[0m" + exc[len(name):])


def test_ipython_8_7_cell_pasted_whole_reads_its_own_error():
    for frame in ("Cell In[3], line 3", "Cell In[3], line 3, in <module>", "Input In [3], in <module>"):
        for ansi in (False, True):
            t = _ipy87(ATTR, frame, ansi=ansi)
            for text in (t, t.replace("\n", "\r\n"), "Epoch 1: loss 0.52\n" * 3 + t):
                assert not engine.triage_text(text)["found"], text      # was found, torch.oom_type
            oom = _ipy87(OOM + "\n", frame, "      1 x = 1\n----> 2 y = model(x)\n\n", ansi)
            assert _read(oom) == (True, 2 << 30), oom
            assert _read(oom.replace("\n", "\r\n")) == (True, 2 << 30), oom


def test_rule_and_header_lines_are_whole():
    from gpu_garden.memory.triage import paste
    for rule in (RULE, "=" * 75 + "\n", "_" * 75 + "\n"):     # (rev20 D2) "=" and "_" rules were still joined to the header
        text = (rule + "AttributeError".ljust(42) + "Traceback (most recent call last)\nCell In[3], line 3\n" + CELL + ATTR).encode()
        assert paste.undo(text).split(b"\n")[:3] == text.split(b"\n")[:3], rule      # was one line
    ruled = ("─" * 75 + "\n" + "x" * 75 + "\nthe rest of it\n").encode()
    assert paste.undo(ruled).split(b"\n")[0] == "─".encode() * 75
    n = 1 << 20
    assert_each_fast([(paste._WHOLE.match, [b"-" * n, b" " * n + b"-", b"-" * n + b"x", b"=" * n + b"x", b"\xe2\x94" * (n // 2),
                                            b"x" * n + b"(most recent call last)", b"(most recent call last" * (n // 22)])])


# D1: fix19's loose " in <module>" frame form matched Python's own frame line, faulthandler's and any log line ending so;
# in a log whose lines a PID-first logger numbers, the walk back from its OOM line reached such a line over numbered lines
# alone and read the OOM as code under an IPython frame
OOMW = "12345 WARNING CUDA out of memory. Tried to allocate 2.00 GiB; retrying with batch 8\n"
FAULT = ("Fatal Python error: Aborted\n\nCurrent thread 0x00007f3a2b4c5740 (most recent call first):\n"
         '  File "/app/train.py", line 44 in step\n  File "/app/train.py", line 90 in <module>\n')


def test_python_frames_and_log_lines_are_no_ipython_frames():
    from gpu_garden.memory.triage.chain_links import _IPY_FRAME
    for line in (b'  File "/app/train.py", line 40, in <module>', b'  File "/app/train.py", line 40 in <module>',
                 b'File "<string>", line 1, in <module>', b"INFO hook registered in <module>",
                 b"2026-01-01 12:00:00 DEBUG hook registered in <module>", b"12345 WARNING: deprecated call in <module>",
                 b'  File "/home/u/in f(x).py", line 3, in g'):
        assert not _IPY_FRAME.match(line), line                     # was a frame line (but the last)
    for line in (b"<ipython-input-3-628af068fea6> in <module>", b"/p/x.py in <module>\r", b"~/x.py in <module>",
                 b"Input In [3], in <module>", b"Cell In[3], line 3", b"<ipython-input-2-0b1c2d3e4f5a> in step(batch)",
                 b"File ~/x.py:5, in f()", b"/p/x.py in f(a)"):
        assert _IPY_FRAME.match(line), line


def test_mixed_log_keeps_its_oom_warning():
    logs = ["12345 INFO step 10\n" + FAULT + "12345 INFO restarting\n" + OOMW,
            "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n12345 INFO worker restarting\n" + OOMW,
            "12345 INFO step 10\nTraceback (most recent call last):\n  File \"/app/train.py\", line 40, in <module>\n"
            "ValueError: bad batch\n12345 INFO hook registered in <module>\n12345 INFO step 11\n" + FAULT
            + "12345 INFO restarting\n12345 INFO loaded in <module>\n" + OOMW]
    for text in logs:
        assert _read(text) == (True, 2 << 30), text                 # was not found
        assert _read(text.replace("\n", "\r\n")) == (True, 2 << 30), text


def test_cell_frames_read_linear():
    from gpu_garden.memory.triage.chain_links import _IPY_FRAME
    n = 1 << 20
    assert_each_fast([(_IPY_FRAME.match, [b"a" * n + b" in <module>", b"a" * n + b".py in <module>x", b"<" * n, b"/" * n + b".p",
                                          b"a.py" * (n // 4) + b" in <module", b"File " * (n // 5), b"  " + b"x in " * (n // 5)])])


# D2: the walk back's memo of the last numbered line read back from was a module global (chain_links._last), shared by
# every scan and thread and keeping the last block alive after triage; it is now the scan's own (Scan._ipy_last)
def test_two_scans_interleaved_read_as_each_alone():
    from gpu_garden.memory.triage import chain_links
    from gpu_garden.memory.triage.scan import Scan
    assert not hasattr(chain_links, "_last")
    logs = [b"File ~/x.py:5, in f()\n" + b"      4 y = 1\n" * 70 + b"INFO plain\n" + b"      4 y = 1\n" * 3,
            b"Cell In[3], line 3\n" + b"      1 x = 1\n" * 30 + b"\n" + b"      2 y = 2\n" * 40,
            b"12345 INFO step\n" * 20 + b"File ~/x.py:5, in f()\n" + b"----> 5 except OutOfMemoryError:\n" * 80]
    for a, b in ((logs[0], logs[1]), (logs[1], logs[2]), (logs[2], logs[0]), (logs[0], logs[0])):
        alone = []
        for block in (a, b):
            memo = Scan()
            starts = [0] + [i + 1 for i, c in enumerate(block[:-1]) if c == 10]
            alone.append([chain_links.source_line(block, s, b"", block[s:block.index(b"\n", s)], memo) for s in starts])
            assert alone[-1] == [chain_links.source_line(block, s, b"", block[s:block.index(b"\n", s)]) for s in starts]
        memos, got = (Scan(), Scan()), ([], [])
        lines = [[(s, blk[s:blk.index(b"\n", s)]) for s in [0] + [i + 1 for i, c in enumerate(blk[:-1]) if c == 10]]
                 for blk in (a, b)]
        for k in range(max(map(len, lines))):
            for j, blk in enumerate((a, b)):
                if k < len(lines[j]):
                    got[j].append(chain_links.source_line(blk, lines[j][k][0], b"", lines[j][k][1], memos[j]))
        assert list(got) == alone
        assert all(m._ipy_last[0] is blk for m, blk in zip(memos, (a, b)))      # each scan's memo its own block's


def test_two_streamed_scans_in_lock_step_read_as_each_alone():
    import io
    import threading
    from gpu_garden.memory.triage import engine
    texts = [("File ~/x.py:5, in f()\n" + "----> 5 except OutOfMemoryError:\n" * 99) * 450 + "\n0 " + OOM + "\n",
             ("12345 INFO step 10\n" * 3000 + FAULT) * 20 + "12345 INFO restarting\n" + OOMW]
    alone = [engine.triage_text(t) for t in texts]
    assert [r["found"] for r in alone] == [True, True]
    cond, turn, done, got = threading.Condition(), [0], [False, False], [None, None]

    class Stream:           # each read waits for its turn: the two scans' blocks alternate
        def __init__(self, j, text):
            self.j, self.buf = j, io.BytesIO(text.encode())

        def read(self, n):
            with cond:
                cond.wait_for(lambda: turn[0] == self.j or done[1 - self.j], timeout=30)
                data = self.buf.read(min(n, 1 << 16))
                done[self.j] = not data
                turn[0] = 1 - self.j
                cond.notify_all()
                return data

    def run(j):
        got[j] = engine.triage_stream(Stream(j, texts[j]))
    threads = [threading.Thread(target=run, args=(j,)) for j in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert got == alone
