"""rev15 D2 and D1 (session 47, fix18), written by hand from IPython's own formatter (github:ipython/ipython at 7f0ee556:
IPython/core/tbtools.py 86-113 _format_traceback_lines, 172-218 _tokens_filename, 252-276; IPython/core/ultratb.py 713-716;
IPython/utils/PyColorize.py 155-165 make_arrow; IPython/core/compilerop.py 136 "Cell", "In[%s]") and review rev15.

D2: a notebook's traceback prints its frames "File ~/x.py:5, in f(x)" / "Cell In[3], line 2" and the lines under them
numbered, the running one with an arrow ("----> 5 except torch.OutOfMemoryError:", "      4     y = model(x)"); those lines
are code, never the failure's error line (an old torch's AttributeError or ImportError after them read as an OOM); the
exception line after them is still read, with the colour codes a notebook's saved output keeps or without them.
D1: docker compose's "name  | " prefix is compared between a frame line and the line under it: another service's line is
never the frame's source line."""
import re

from support.regex_time import assert_each_fast
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.chain_links import _IPY_FRAME, _IPY_NUMBERED, frame_source, source_line

RULE = "-" * 75 + "\n"
ATTR = "AttributeError: module 'torch' has no attribute 'OutOfMemoryError'\n"
IMPORT = "ImportError: cannot import name 'OutOfMemoryError' from 'torch.cuda' (/x/torch/cuda/__init__.py)\n"
OOM = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which "
       "1.00 GiB is free.\n")


def _nb(exc, frame, lines):
    """A notebook traceback (IPython >= 8, Context mode): the cell's frame, then `frame` with its numbered `lines`."""
    name = exc.split(":", 1)[0]
    return (RULE + name.ljust(42) + "Traceback (most recent call last)\n"
            "Cell In[3], line 2\n      1 x = torch.zeros(1, device='cuda')\n----> 2 train(x)\n\n"
            + frame + "\n" + lines + "\n" + exc)


EXCEPT = "      3 try:\n      4     y = model(x)\n----> 5 except torch.OutOfMemoryError:\n      6     y = None\n"
IMPORT_SRC = "      1 import torch\n----> 2 from torch.cuda import OutOfMemoryError\n"
RAISE = ("      3 if free < need:\n----> 4     raise torch.cuda.OutOfMemoryError(msg)\n"
         "      5 # except torch.OutOfMemoryError: the caller frees its cache\n")
FRAMES = ("File ~/work/train.py:5, in train(x)", "File /home/u/work/train.py:5, in train(x)", "Cell In[2], line 5, in train(x)",
          "Cell In [2], line 5, in train(x)", "/home/u/work/train.py in train(x)",
          "<ipython-input-2-628af068fea6> in <module>", "Input In [2], in <module>")     # (rev16 S1) IPython 7.x, 8.0-8.4


def _colour(text):
    """The same traceback as a notebook's saved output keeps it (IPython's Neutral theme's ANSI codes)."""
    out = []
    for line in text.splitlines():
        if m := re.match(r"(-{0,5}> ?| {0,6})(\d+)( .*)", line):
            out.append("\x1b[0;32m" + m[1] + m[2] + "\x1b[0m" + m[3].replace("except", "\x1b[38;5;28;01mexcept\x1b[39;00m")
                       .replace(".OutOfMemoryError", "\x1b[38;5;241m.\x1b[39mOutOfMemoryError"))
        elif line.startswith("File "):
            path, _, call = line[5:].partition(", in ")
            out.append("File \x1b[0;32m" + path + "\x1b[0m, in \x1b[0;36m" + call.split("(")[0] + "\x1b[0;34m("
                       + call.split("(", 1)[1] + "\x1b[0m")
        elif line.startswith("Cell "):
            out.append("Cell \x1b[0;32m" + line[5:] + "\x1b[0m")
        elif ": " in line and line.split(":")[0].isidentifier():
            name, _, msg = line.partition(": ")
            out.append("\x1b[0;31m" + name + "\x1b[0m: " + msg)
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _read(text):
    r = engine.triage_text(text)
    return r["found"], r["found"] and r["events"][r["headline"]]["numbers"].get("requested")


def test_notebook_oom_is_read_under_numbered_source_lines():
    for frame in FRAMES:
        for text in (_nb(OOM, frame, RAISE), _nb(OOM, frame, EXCEPT)):
            for t in (text, _colour(text), text.replace("\n", "\r\n")):
                assert _read(t) == (True, 2 << 30), t


def test_notebook_source_lines_naming_the_oom_type_are_no_oom():
    for frame in FRAMES:
        for text in (_nb(ATTR, frame, EXCEPT), _nb(IMPORT, frame, IMPORT_SRC)):
            for t in (text, _colour(text), text.replace("\n", "\r\n")):
                assert not engine.triage_text(t)["found"], t       # was found, cause other (torch.oom_type)


def test_numbered_lines_need_an_ipython_frame_above_them():
    block = b"File ~/x.py:5, in f()\n      4 y = 1\n----> 5 except torch.OutOfMemoryError:\n      6 pass\n"
    at = block.index(b"----> 5")
    assert source_line(block, at, b"", block[at:block.index(b"\n", at)])
    assert source_line(block[at:], 0, block[:at], b"----> 5 except torch.OutOfMemoryError:")      # across the block's start
    six = block.index(b"      6")
    assert source_line(block, six, b"", b"      6 except OutOfMemoryError:")
    other = b"INFO step 3\n      4 y = 1\n----> 5 except torch.OutOfMemoryError:\n"
    assert not source_line(other, other.index(b"----> 5"), b"", b"----> 5 except torch.OutOfMemoryError:")
    # the exception line after them, and a numbered line with an exception joined on after its code, are read
    assert not source_line(block, len(block), b"", b"OutOfMemoryError: CUDA out of memory.")
    assert not source_line(block, six, b"", b"      6 y = f() torch.OutOfMemoryError: CUDA out of memory.")
    for line in (b"File ~/x.py:5, in f()", b"File /a b/x.py:5", b"Cell In[3], line 5", b"Cell In[3], line 5, in f(a)",
                 b"<ipython-input-3-628af068fea6> in <module>()", b"/tmp/ipython-input-47.py in <cell line: 0>()"):
        assert _IPY_FRAME.match(line), line
    for line in (b"----> 5 x", b"--> 351 x", b">123456 x", b"1234567 x", b"      4 x", b"   (...)", b"   (...)     12 x",
                 "\u2500\u2500\u2500\u2500\u25b6 5 x".encode()):
        assert _IPY_NUMBERED.match(line), line
    for line in (b"File x.py", b"Cell 3, line 5", b"NameError: x"):
        assert not _IPY_FRAME.match(line), line


def test_notebook_reads_linear():
    n = 1 << 20
    assert_each_fast([(_IPY_FRAME.match, [b"File " + b"a:1" * (n // 3), b"File " + b":" * n, b"a in " * (n // 5),
                                          b"a" + b" in b" * (n // 5), b"Cell In[" * (n // 8)]),
                      (_IPY_NUMBERED.match, [b"-" * n, b" " * n, b"1" * n])])
    many = b"      4 x\n" * (n // 10) + b"----> 5 except OutOfMemoryError:"
    assert_each_fast([(lambda b: source_line(b, len(b) - 33, b"", b[-33:]), [many, b"\n" * n + many[-33:]])])
    log = ("File ~/x.py:5, in f()\n" + "----> 5 except torch.OutOfMemoryError:\n" * 200 + "\n") * (n // 8000) + ATTR
    assert_each_fast([(engine.triage_text, [log])], limit=10.0)


TORCH_OOM = "torch." + OOM


def test_another_compose_services_line_is_no_frame_source():
    frame = b'vllm-1    |   File "/app/x.py", line 3, in f'
    assert frame_source(frame, b"vllm-1    |     except torch.OutOfMemoryError:")            # its own service: source
    assert not frame_source(frame, b"worker-1  |     torch.OutOfMemoryError: CUDA out of memory.")  # another's (was True)
    stamp = b"2026-01-01T00:00:00.1Z "
    assert not frame_source(b"vllm-1  | " + stamp + frame[12:], b"worker-1  | " + stamp + b"    x = f()")
    assert frame_source(b"vllm-1  | " + stamp + frame[12:], b"vllm-1  | " + stamp + b"    x = f()")
    head = 'vllm-1    | Traceback (most recent call last):\nvllm-1    |   File "/app/x.py", line 3, in f\n'
    assert _read(head + "worker-1  |     " + TORCH_OOM) == (True, 2 << 30)                 # was not found
    assert not engine.triage_text(head + "vllm-1    |     except torch.OutOfMemoryError:\nvllm-1    | " + ATTR)["found"]
