"""tri48: rev16 D1, IPython's Verbose mode (%xmode Verbose). IPython prints the running frame's variables under its arrow
line, 8 blanks in, "name = repr(value)" each (ultratb.py, format_record's lvals; a global as "global name" under 7.x), a
value's repr may run on over lines of its own (a tensor's rows, a module's layers and its closing bracket at column 0),
and so may the frame line's call, where Verbose shows the arguments' values. Those lines stopped chain_links.source_line's
walk back from a numbered line to its frame, so a code line under them naming OutOfMemoryError read as the error.
fix21's leftovers: a cell's triple-quoted string or an annotated assignment naming the OOM at column 0 (below)."""
import re
import types

from support.regex_time import assert_each_fast
from gpu_garden.memory.triage import chain_links, engine
from gpu_garden.memory.triage.chain_links import source_line

RULE = "-" * 75 + "\n"
SHAPE = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x6)\n"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of "
       "which 1.00 GiB is free.\n")
X = "tensor([[0.1000, 0.2000, 0.3000],\n        [0.4000, 0.5000, 0.6000]], device='cuda:0')"
NET = "Net(\n  (fc): Linear(in_features=3, out_features=5, bias=True)\n)"
# the running line's variables, then the context lines below it; the one after them names the OOM class (code)
BODY = ("      2 def step(batch):\n      3     try:\n----> 4         return model(batch)\n"
        "        {g}model = " + NET + "\n        batch = " + X + "\n"
        "      5     except torch.cuda.OutOfMemoryError:\n      6         return None\n")


def ip8(exc=SHAPE, call="step(batch=" + X + ")", glob=""):
    """IPython >= 8.5's Verbose cell: the top-level frame (no call), then step's frame with its arguments' values."""
    return (RULE + exc.split(":")[0].ljust(42) + "Traceback (most recent call last)\n"
            "Cell In[3], line 2\n      1 x = torch.randn(4, 3, device='cuda')\n----> 2 y = step(x)\n"
            "        x = " + X + "\n        step = <function step at 0x7f3a2b4c5740>\n\n"
            "Cell In[2], line 4, in " + call + "\n" + BODY.format(g=glob) + "\n" + exc)


def ip7(exc=SHAPE):
    """IPython 7's: the cell's and function's names, "global name" for a global."""
    return (RULE + exc.split(":")[0].ljust(42) + "Traceback (most recent call last)\n"
            "<ipython-input-3-628af068fea6> in <module>\n      1 x = torch.randn(4, 3, device='cuda')\n----> 2 y = step(x)\n"
            "        global y = undefined\n        global step = <function step at 0x7f3a2b4c5740>\n"
            "        global x = " + X + "\n\n"
            "<ipython-input-2-0b1c2d3e4f5a> in step(batch=" + X + ")\n" + BODY.format(g="global ") + "\n" + exc)


def colour(t):
    """IPython's colours as a notebook's saved output keeps them (a variable's "= " in valEm, the next one's indent too)."""
    t = re.sub(r"^(----> |      )(\d+)", lambda m: "\x1b[0;32m" + m.group(1) + m.group(2) + "\x1b[0m", t, flags=re.M)
    return re.sub(r"^( {8})(global )?([\w.]+) = ", lambda m: m.group(1) + "\x1b[0m" + (m.group(2) or "") + "\x1b[0;36m"
                  + m.group(3) + "\x1b[0m \x1b[1;36m= \x1b[0m", t, flags=re.M).replace("Cell In[2]", "\x1b[0;32mCell In[2]\x1b[0m")


def _forms(t):
    return (t, colour(t), t.replace("\n", "\r\n"), "Epoch 1: loss 0.52\n" * 3 + t)


def _read(text):
    r = engine.triage_text(text)
    return r["found"], r["found"] and r["events"][r["headline"]]["numbers"].get("requested")


def test_code_under_a_verbose_frames_variables_is_code():
    for t in (ip8(), ip8(call="step(batch=tensor([[...]]))"), ip8(glob="global "), ip7()):
        for text in _forms(t):
            assert not engine.triage_text(text)["found"], text        # was found: "except torch.cuda.OutOfMemoryError:"


def test_a_variable_whose_value_names_the_oom_is_the_frames():
    err = "OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB')"
    t = (RULE + "AttributeError".ljust(42) + "Traceback (most recent call last)\nCell In[4], line 3\n"
         "      1 err = errors[-1]\n      2 print(type(err))\n----> 3 report(err, size=x.sizes)\n"
         "        err = " + err + "\n        x = " + X + "\n\n"
         "AttributeError: 'Tensor' object has no attribute 'sizes'\n")
    for text in _forms(t):
        assert not engine.triage_text(text)["found"], text            # was found, with 2 GiB


def test_the_cells_real_oom_still_reads():
    for t in (ip8(OOM), ip8(OOM, call="step(batch=tensor([[...]]))"), ip7(OOM)):
        for text in _forms(t):
            assert _read(text) == (True, 2 << 30), text


def test_which_lines_are_the_frames():
    block = ip8().encode()
    starts = [0] + [i + 1 for i, c in enumerate(block[:-1]) if c == 10]
    lines = [block[s:block.index(b"\n", s)] for s in starts]
    got = [source_line(block, s, b"", ln) for s, ln in zip(starts, lines)]
    want = [bool(re.match(rb" {6}\d|----> | {8}\w", ln)) for ln in lines]       # numbered lines and variable lines
    assert got == want
    memo = types.SimpleNamespace()
    assert [source_line(block, s, b"", ln, memo) for s, ln in zip(starts, lines)] == want      # and with the scan's memo


def test_lines_a_verbose_frame_never_holds_keep_a_log_line_read():
    # the walk steps over a variable line only up to the arrow line, and over a repr's lines only up to a variable line or
    # a frame line whose call shows a value and is left open
    pid = "12345 WARNING CUDA out of memory. Tried to allocate 2.00 GiB; retrying with batch 8\n"
    for text in ("Error in forward(x) at step 3\n        lr = 0.001\n" + pid,
                 "File ~/x.py:5, in f()\n        lr = 0.001\n" + pid,
                 "File ~/x.py:5, in f()\n      4 y = 1\n        lr = 0.001\n" + pid,
                 "Exception in callback step(\n    batch\n" + pid,
                 "File ~/x.py:5, in f(a=1)\n    batch\n" + pid,
                 "File ~/x.py:5, in f()\n----> 5 y = 1\n    batch\n" + pid,
                 "File ~/x.py:5, in f(a=[\n        lr = 0.001\n" + pid,                 # no variable right under a frame
                 "File ~/x.py:5, in f()\n----> 5 y = 1\n\n        lr = 0.001\n" + pid,    # nor a blank line above one
                 "File ~/x.py:5, in f(a=[\n\n    batch\n" + pid):
        assert _read(text) == (True, 2 << 30), text
        assert _read(text.replace("\n", "\r\n")) == (True, 2 << 30), text


def test_a_verbose_log_reads_each_line_back_once(monkeypatch):
    reads, plain = [], chain_links._plain
    monkeypatch.setattr(chain_links, "_plain", lambda b: reads.append(1) or plain(b))
    for line in ("File ~/x.py:5, in f()\n----> 5 y = step(x)  # OutOfMemoryError\n" + ("        x = " + X + "\n") * 30,
                 "        e = OutOfMemoryError('CUDA out of memory')\n" + "        [0.4000, 0.5000]\n" * 3,
                 "----> 5 y = step(x)  # OutOfMemoryError\n        e = OutOfMemoryError('CUDA out of memory')\n",
                 "File ~/x.py:5, in f(a=[\n" + "        e = OutOfMemoryError('x')\n" * 40):
        text = line * ((1 << 20) // len(line))
        reads.clear()
        engine.triage_text(text)
        assert len(reads) <= 3 * text.count("\n"), line[:40]


def test_verbose_patterns_read_linear():
    n = 1 << 20
    assert_each_fast([(chain_links._IPY_VAR.match, [b" " * n, b" " * 8 + b"a" * n, b" " * 8 + b"a." * (n // 2),
                                                    b" " * 8 + b"a[" * (n // 2), b" " * 8 + b"a[]" * (n // 3) + b" =",
                                                    b" " * 8 + b"global " * (n // 7)]),
                      (chain_links._IPY_CALL.search, [b" in " * (n // 4), b" in a(" * (n // 6), b" in " + b"a" * n,
                                                      b" in a(*" * (n // 7), b" in a(b" * (n // 7) + b"=" * 3]),
                      (chain_links._opens, [b"(" * n, b"([{)]}" * (n // 6)])])


# fix21's leftovers (rev18 S1 read an indented exception line under an IPython frame as code; two column-0 forms were still
# read as the error): a cell's triple-quoted string holding an OOM message (a docstring or markdown text pasted in a
# cell), and an annotated assignment to a name ending in Error
DOC = ('      1 """\n      2 torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total '
       'capacity of 79.10 GiB\n      3 means the batch does not fit: halve it.\n      4 """\n      5 x = torch.randn(4, 3)\n'
       '----> 6 y = model(x)\n')
MD = ("      1 NOTES = '''\n      2 If you see torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB, halve "
      "the batch.\n      3 '''\n      4 x = torch.randn(4, 3)\n      5 \n----> 6 y = model(x)\n")
ANN = "      4 OOMError: type[Exception] | None = torch.cuda.OutOfMemoryError\n      5 x = torch.randn(4, 3)\n----> 6 y = model(x)\n"


def cell(body, exc=SHAPE, frame="Cell In[3], line 6"):
    return RULE + exc.split(":")[0].ljust(42) + "Traceback (most recent call last)\n" + frame + "\n" + body + "\n" + exc


def pygments(t):
    """A notebook's saved output: IPython 8 colours the code (a string token from its quotes on), and the numbers."""
    t = re.sub(r'^(      \d) ("""|NOTES = \'\'\')', lambda m: m.group(1) + " \x1b[38;5;124m" + m.group(2), t, flags=re.M)
    return re.sub(r"^(----> |      )(\d+)", lambda m: "\x1b[0;32m" + m.group(1) + m.group(2) + "\x1b[0m", t, flags=re.M)


def test_a_cells_string_or_annotation_naming_the_oom_is_code():
    for body in (DOC, MD, ANN):
        for frame in ("Cell In[3], line 6", "<ipython-input-3-628af068fea6> in <module>"):
            t = cell(body, frame=frame)
            for text in (t, pygments(t), t.replace("\n", "\r\n"), "Epoch 1: loss 0.52\n" * 3 + t):
                assert not engine.triage_text(text)["found"], text      # was found (the strings' with 2 GiB)
        assert _read(cell(body, OOM)) == (True, 2 << 30)                # the cell's real OOM below them


def test_which_numbered_exception_lines_are_code():
    block = ('Cell In[3], line 9\n      1 """\n      2 torch.OutOfMemoryError: CUDA out of memory.\n'
             '      3 RuntimeError: CUDA error: out of memory\n      4 """\n      5 NOTES = \'\'\'\n'
             '      6 OutOfMemoryError: see above\n      7 \'\'\' + """x"""\n      8 OOMError: type[Exception] = OutOfMemoryError\n'
             '----> 9 y = model(x)\n     10 RuntimeError: no string open here\n     11 OutOfMemoryError: type\n').encode()
    starts = [0] + [i + 1 for i, c in enumerate(block[:-1]) if c == 10]
    lines = [block[s:block.index(b"\n", s)] for s in starts]
    want = [False] + [True] * 9 + [False, False]        # the frame line; 1-9 code; 10 and a bare annotation (11) read
    assert [source_line(block, s, b"", ln) for s, ln in zip(starts, lines)] == want
    memo = types.SimpleNamespace()
    assert [source_line(block, s, b"", ln, memo) for s, ln in zip(starts, lines)] == want
    assert not source_line(block[block.index(b"      2"):], 0, b"", lines[2])       # no frame above: an error line


def test_numbered_exception_lines_outside_a_string_stay_error_lines():
    pid = "12345 torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    for text in ("File ~/x.py:5, in f()\n      4 x = '''a'''\n" + pid,
                 "File ~/x.py:5, in f()\n      4 x = \"\"\"\n      5 \"\"\"\n" + pid,
                 "File ~/x.py:5, in f()\n      4 ValueError: x = 1 is wrong\n" + pid,
                 "12345 INFO prompt: \"\"\"\n" + pid):
        assert _read(text) == (True, 2 << 30), text


def test_annotation_and_quotes_read_linear():
    n = 1 << 20
    assert_each_fast([(chain_links._ANNOTATED.match, [b"aError: " + b"a" * n, b"aError: " + b"[" * n, b"aError: " + b" | a" * (n // 4),
                                                      b"aError: " + b", a" * (n // 3), b"Error" * (n // 5) + b": a ="]),
                      (chain_links._quotes, [b'"' * n, b"'" * n])])
