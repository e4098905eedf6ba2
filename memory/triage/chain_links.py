"""How a chained Python traceback is linked to the one before it, read back from the scanner's block (facts.apply calls
`chained_how` on each "Traceback (most recent call last)" line of an open failure; server_predicates.sglang_attn_init
reads the result from facts["trace_how"])."""
import re

from . import parse as P
from .paste import STAMP
from .text import ANSI_BYTES_RE


# (rev12 S1) set aside before a line: docker compose's "name  | ", docker logs -t's stamp (paste.STAMP, rev13 D2: Z or a
# +hh:mm offset), journald's "Mon DD HH:MM:SS host unit[pid]: "; (rev13 D3) a line a rank's logger tagged ("[... TPn] ...",
# TP0's too) is skipped: Python's own traceback lines carry no tag
_COMPOSE_TEXT = rb"([\w.-]{1,64}) {0,16}\| ?"           # docker compose's "service  | "; group 1 the service
_LINE_PREFIX = re.compile(rb"(?:" + _COMPOSE_TEXT + rb")|" + STAMP + rb"|[A-Z][a-z]{2} [ \d]\d [\d:]{8} \S{1,64} [\w.@-]{1,64}(?:\[\d{1,10}\])?: ")
_COMPOSE = re.compile(_COMPOSE_TEXT)     # (rev15 D1) _LINE_PREFIX's compose form alone, to compare the service names
_RANK_LOG = re.compile(rb"\[[^\]\n]{0,64}\bTP\d{1,3}\]")
# (rev13 S1) an exception line whose type says it is no OOM, whatever name it quotes: an old torch's "ImportError: cannot
# import name 'OutOfMemoryError' from 'torch.cuda'", "AttributeError: module 'torch.cuda' has no attribute 'OutOfMemoryError'"
_EXC_TYPE = re.compile(rb"[\w.]{1,128}(?=:)")
_NOT_OOM = {b"ImportError", b"ModuleNotFoundError", b"AttributeError"}
# (rev15 S1) an exception line joined onto a source line after some code ("    y = model(x) torch.OutOfMemoryError: CUDA ...",
# a paste's undo in an unprefixed log): not "except X: pass"
# the exception may end the line bare ("... MemoryError") or wrap another ("RayTaskError(OutOfMemoryError): ..."): a
# wrapped paste's undo joins both forms onto the source line (triage_pasted: batches 248 and 557 at wrap60/wrap80)
_JOINED_EXC = re.compile(rb"[^\s,(](?<!except)(?<!raise)(?<!import)[ \t]{1,64}[A-Za-z_][\w.]{0,127}(?:Error|Exception)"
                         rb"(?:\([\w.]{1,127}\))?(?::[ \t]|[ \t]{0,64}$)")
# (rev15 D2) IPython/Jupyter's frame lines (ipython 7f0ee556: IPython/core/tbtools.py 169-218 _tokens_filename, "File
# ~/x.py:5" or "Cell In[3], line 5" (core/compilerop.py 136, since 8.7.0; 8.5-8.6 printed "Cell In [3]"), ultratb.py
# 712-716 ", in f(a)" after it, none at a cell's top level (603); 7.34.0 ultratb.py 1018: "/p/x.py in f(a)"; IPython <= 6
# "<ipython-input-3-ab> in <module>()") and the lines it numbers under them (tbtools.py 87-113, 252-276: the running line "----> 5 code", its arrow
# utils/PyColorize.py 155-165 make_arrow(7 - digits): "-" * (pad - 2) + "> ", ">" at pad 1, none at 0, "─"/"▶" in the
# Unicode themes (356); the others "%7d code"; a gap "   (...)"), read with ANSI colour codes set aside (a notebook's output)
# (rev16 S1) and a cell's top-level frame under IPython 7.0-7.34 (ultratb.py at 7.34.0: 894-895 `elif func == '<module>':
# call = tpl_call % (func, '')`, 924 '%s %s' % (link, call): "<ipython-input-3-628af068fea6> in <module>", no parentheses
# since commit 2ee498900, tag 7.0.0; Colab's 7.34), and IPython 8.0-8.4's "Input In [3], in <module>" (ultratb.py at 8.4.0:
# 190 tpl_link "Input In [n]", 734 "%s, %s" % (link, call); 8.5.0 ultratb.py 191-193: "Cell In [n]")
# (rev18 D1) the loose forms are never Python's own frame line ('  File "x.py", line 40, in <module>') nor faulthandler's
# ('  File "x.py", line 90 in <module>', Python/traceback.c dump_frame: no comma before "in"), and the top-level one is
# only a file's or a cell's name and " in <module>" ("<ipython-input-3-628af068fea6>", "/p/x.py"): a log line ending
# " in <module>" ("INFO hook registered in <module>") is no frame line
_IPY_FRAME = re.compile(rb"[ \t]{0,16}(?:(?:File [^\n]{1,4096}?:\d{1,9}|(?:Input|Cell) In ?\[\d{0,9}\](?:, line \d{1,9})?)"
                        rb"(?:, in |[ \t\r]*$)|(?!File \")(?:[^\s][^\n]{0,4096}? in [^\s(][^\n(]{0,128}\(|"
                        rb"(?:<[\w.-]{1,128}>|[^\s\"]{0,4096}\.py) in <module>[ \t\r]*$))")
_IPY_NUMBERED = re.compile(rb"(?: {3}\(\.\.\.\))?(?:-{0,5}> ?|(?:\xe2\x94\x80){0,5}\xe2\x96\xb6 ?| {0,6})\d{1,9}(?: |[\r]?$)"
                           rb"| {3}\(\.\.\.\)[ \t\r]*$")
# (rev16 B1) a numbered line whose code is an exception line ("12345 torch.OutOfMemoryError: CUDA ...", a log whose lines a
# paste or a logger numbered) is never code: no Python statement starts with "XError: text"; (rev18 S1) only right after the
# number's one space: Python never indents its exception line, and an indented one under an IPython frame is the frame's
# code (a docstring's "Raises:" entry, a doctest's expected output, a dict key naming the class)
_EXC_HEAD = re.compile(rb"[A-Za-z_][\w.]{0,127}(?:Error|Exception|Warning)(?:\([\w.]{0,127}\))?:(?:[ \t]|[\r]?$)")
# (tri48, fix21's leftovers) two such lines that are code all the same, read once the walk back has reached their IPython
# frame: an annotated assignment to a name ending so ("OOMError: type[Exception] = torch.cuda.OutOfMemoryError": a type,
# dotted names, brackets, ", " and " | " only, then " = "; a bare "OOMError: type" stays an exception line, whose message
# may be one word), and a line inside a triple-quoted string (a docstring or markdown text at a cell's column 0: not
# indented, so rev18 S1 does not tell it): an odd count of '"""' or "'''" on the frame's numbered lines above it
# (_quotes). IPython 8 (stack_data, ultratb.get_records) counts its context in statements, so a string is mostly shown
# from its opening line; where a window cuts that line off (IPython 7 counts lines), its text is read as before
_ANNOTATED = re.compile(rb"[A-Za-z_][\w.]{0,127}(?:Error|Exception|Warning): (?:[\w.]|\[|\]|, | \| ){1,256} = ")
# (rev16 D1, tri48) IPython's Verbose mode (%xmode Verbose) prints the running frame's variables right under its arrow line
# (ultratb.py, 8.x: format_record's lvals, INDENT_SIZE = 8 blanks, then tpl_name_val "name = repr(value)" for each of
# stack_data's variables_in_executing_piece, joined by "\n" and the 8 blanks; _format_traceback_lines appends them after
# the is_current line; 7.x the same, a global's name as "global name"). A value's repr may run on over lines of its own (a
# tensor's rows "        [0.4, 0.5]])", a module's "  (fc): Linear(...)" and ")"), and so may the frame line's call, where
# Verbose shows the arguments' values ("Cell In[2], line 4, in step(batch=tensor([[0.1, 0.2],"): such a line opens with a
# blank or a closing bracket (_IPY_MORE) and is the frame's only under a variable line, or under a frame line whose call
# shows a value and is left open (_IPY_CALL, _opens: never a log line "Exception in callback f(" over indented lines)
_IPY_VAR = re.compile(rb" {8}(?:global )?[A-Za-z_]\w{0,127}(?:\.[A-Za-z_]\w{0,127}|\[[^\]\n]{0,128}\]){0,16} = ")
_IPY_MORE = re.compile(rb"[ \t)\]}]")
_IPY_CALL = re.compile(rb" in [^\s(]{1,128}\(\*{0,2}[A-Za-z_]\w{0,127}=")
IPY_BACK = 64     # lines read back from a numbered line to its frame at most (IPython prints 5 or so around the running line)
# (rev16 S2) the last numbered line source_line read back from: its block and tail (compared by identity: the scanner's
# bytes), its start in the block, how many lines above it its frame line is (0: none), and (tri48) its plain head, to
# step over it as the walk would, and the quotes' parity (_quotes) from its frame through it; (rev18 D2) kept on the
# caller's memo object (the Scan, as its _ipy_last) so it dies with the scan and no two scans share it; none without one
_NONE = (None, None, -1, 0, b"", 0)
# (tri48) the walk back's states: under numbered (or blank) lines; under a variable line (above it: another, a line its
# repr ran on to, or the arrow line IPython put them under); under lines a repr ran on to (above them: a variable line, or
# a frame line whose call is left open); _FRAME: at the frame line
_FREE, _VARS, _MORE, _FRAME = 0, 1, 2, 3
_LINKS = ((b"direct cause of the following exception:", "cause"), (b"another exception occurred:", "during"))


CLOSING = 8       # (rev13 S2) lines of the earlier traceback's closing exception block read back at most


def chained_how(scan):
    """(rev11 S1, rev12 B1/S1, rev13 S2) How the traceback whose line is being read is chained to the one before it, and
    whether that one closed on an OOM, read back through the 4 KiB before its line (Python prints the closing exception
    block, the separator, a traceback, with blank lines between): ("cause", _) after "The above exception was the direct cause
    of the following exception:", ("during", _) after "During handling of the above exception, another exception occurred:"
    among the last 3 lines read, else "" (a fresh traceback, or none read; the scanner's separator lines are no anchors, so
    they are read here). The closing block is every line above the separator (above the traceback's line where there is
    none) up to the earlier traceback's last indented frame line, at most CLOSING: an exception of several lines (c10's
    "CUDA error: out of memory" and its hints) closes on an OOM where any of its lines is an OOM line (_oom_line).
    (rev14 D1) Only a rank logger's "[... TPn]" lines are set aside there: another process's untagged line in that block
    (torchrun's "[rank1]: torch.OutOfMemoryError ...") counts as the closing OOM. Harmless for its one reader, sglang_attn_init
    (sglang only, whose ranks tag TPn); a new reader of facts["trace_how"] must set such lines aside first."""
    block, end = scan._src or (b"", 0)
    lo, back, own = max(0, end - 4096), [], b""
    while end > lo and len(back) < 3 + CLOSING:     # the lines last first, each with its prefix set aside
        cut = block.rfind(b"\n", lo, end)
        raw, end = block[cut + 1 if cut >= 0 else lo:end], max(cut, lo)
        raw = _set_aside(raw)[1]
        if own and raw.startswith(own):
            raw = raw[len(own):]    # (rev14 S2) the log's own prefix, learnt from its separator line below
        elif not own and len(back) < 3 and (i := _sep_at(raw)) > 0:
            own = raw[:i]           # (rev14 S2) kubectl's "[pod/NAME/CONTAINER] ": the text before the separator's words
        line = raw.strip()      # a line that is only a prefix is blank
        if not line or _RANK_LOG.match(line):
            continue
        if raw[:1] in (b" ", b"\t") or b'File "' in line or b"Traceback (most recent call last)" in line:
            break               # a frame's line (its source, "  File ..."; under a prefix not set aside, the frame's "File"
                                # or the traceback's head): the closing block begins below it
        back.append(line)
    how = next(((k, h) for k, line in enumerate(back[:3]) for sep, h in _LINKS if line.endswith(sep)), (-1, ""))
    return how[1], any(_oom_line(line) for line in back[how[0] + 1:how[0] + 1 + CLOSING])


def _set_aside(raw: bytes):
    """(rev15 F2) The prefixes _LINE_PREFIX sets aside before a line, two stacked at most (rev13 B1: compose -t's name, then
    docker's stamp; the end kept till matched), and the rest: chained_how's each line, frame_source's both lines."""
    found = []
    for _ in range(2):
        if not (m := _LINE_PREFIX.match(raw)):
            break
        found.append(m.group())
        raw = raw[m.end():]
    return found, raw


def _sep_at(raw):
    """Where a separator's words start on its line ("During handling of the above exception", "The above exception was
    the direct cause"), within its first 256 bytes; -1 on any other line."""
    for words in (b"During handling of the above exception", b"The above exception was the direct cause"):
        i = raw.find(words, 0, 256 + len(words))
        if i >= 0:
            return i
    return -1


def _oom_line(line):
    """(rev13 S1) An OOM line as triage's one recogniser (parse.recognise) reads it, but never an exception line of a type
    in _NOT_OOM (recognise takes any line naming OutOfMemoryError)."""
    m = _EXC_TYPE.match(line)
    if m and m.group().rsplit(b".", 1)[-1] in _NOT_OOM:
        return False
    return bool(P.recognise(line.decode("utf-8", "replace")))


def frame_source(prev: bytes, line: bytes) -> bool:
    """(rev14 S1) `line` is the source line Python printed under the frame line `prev` ('  File "x.py", line N, in f'):
    indented under the same prefix deeper than the frame (Python prints it 2 deeper; rev15 B1: `deep` counts the
    separator after the prefix too, so a line at the frame's own depth is the exception of a frame with no source line, a
    stripped logger's or a tab-indented block's, never code). That line is code ("except torch.OutOfMemoryError:",
    "from torch.cuda import OutOfMemoryError", "raise OutOfMemoryError(msg)"), never an error line, whatever it names; a
    frame without a source line (<string>, frozen modules) is followed by its exception at the traceback's own depth.
    (rev15 S1) Nor a line with an exception line joined on after its code (its 512-byte head). (rev15 D1) Nor a line of
    another docker compose service ("worker-1  | " under "vllm-1  | "): the names are compared where both lines carry one. Bounded: the prefixes _LINE_PREFIX sets aside (two stacked), then a 512-byte head of each line (8 KiB for the prefix's
    repeat)."""
    i = prev.find(b'File "', 0, 512)
    if i < 0:
        return False
    mine, theirs = _set_aside(prev)[0], _set_aside(line)[0]
    for m, n in zip(mine, theirs):      # the prefixes both lines carry, in order
        a, b = _COMPOSE.fullmatch(m), _COMPOSE.fullmatch(n)
        if a and b and a[1] != b[1]:
            return False        # (rev15 D1) another docker compose service's line is never this frame's source line
        prev, line = prev[len(m):], line[len(n):]
    i = prev.find(b'File "', 0, 512)
    q = prev.find(b'"', i + 6, i + 4200) if i >= 0 else -1
    if q < 0 or prev[q + 1:q + 3] != b", ":
        return False
    pre = prev[:i]
    base = pre.rstrip(b" \t")
    deep = len(pre) - len(base)       # the frame's indentation under its prefix
    if not deep or not line.startswith(base) or base and line.find(base, len(base), 8192) >= 0:
        return False            # (a line holding its prefix again is log lines a paste's undo joined: the exception's too)
    rest = line[len(base):len(base) + 512]
    body = rest.lstrip(b" \t")
    return bool(body.strip()) and len(rest) - len(body) > deep and not _JOINED_EXC.search(body)


def source_line(block: bytes, start: int, tail: bytes, line: bytes, memo=None) -> bool:
    """The scanner's line at `start` (`line`) is a traceback frame's source line: Python's (frame_source, on the line
    before it) or one IPython numbers under its frame (rev15 D2: "----> 5 except torch.OutOfMemoryError:" and the context
    lines around it, read back over numbered lines to an IPython frame line; an exception line after them is no such
    line). (rev16 B1) In a log whose every line is numbered (a paste with line numbers, a PID-first logger) a numbered
    line is never the frame line, and one whose code is an exception line (_EXC_HEAD) is never code (tri48: unless a
    triple-quoted string on the frame's lines above is open, or it is an annotated assignment, _ANNOTATED). (tri48) Under
    %xmode Verbose the running line's variables (_IPY_VAR, and the lines their values run on to) are the frame's too, and
    are read back over as _back says: a variable line naming an OOM is no error line either. Bounded: a numbered
    line's 4 KiB head, then IPY_BACK lines of 8 KiB at most, only for such a line; (rev16 S2) the walk back stops at the
    last numbered line walked back from in the same block and takes its answer (the frame line still IPY_BACK lines up at
    most), so each line is read back over once: a log of numbered lines reads in linear time, not 64 times over. The
    scanner calls it on its lines in order; another order only reads back more. (rev18 D2) That answer is kept on `memo`
    (its attribute _ipy_last; the scanner passes its Scan, one memo a scan); without one each line walks back alone.
    `line` must be the block's own line at `start` (block[start:eol], the scanner's raw): the memo stores the walk's
    answer for that line, and another line's answer there would be taken for the lines below it."""
    if frame_source(line_before(block, start, tail), line):
        return True
    head = _plain(line)
    m = _IPY_NUMBERED.match(head) or _IPY_VAR.match(head)
    if not m or not head[m.end():].strip():
        return False
    # (as under a Python frame: a line with an exception joined on after its code is read) (tri48) unless it is inside a
    # triple-quoted string; an annotated assignment is code
    exc = (_JOINED_EXC.search(head, m.end()) or _EXC_HEAD.match(head, m.end())) and not _ANNOTATED.match(head, m.end())
    if exc and m.re is _IPY_VAR:
        return False
    last = getattr(memo, "_ipy_last", _NONE)
    known = last[2] if last[0] is block and last[1] is tail and last[2] < start else -1
    buf, end = (block, start) if start else (tail, len(tail))
    found, state, quotes = 0, _back(_FREE, head), 0
    for k in range(1, IPY_BACK + 1):
        if end < 1 and buf is block and tail:
            buf, end = tail, len(tail)          # the block's first line: on into the previous block's end
        if end < 1:
            break
        cut = buf.rfind(b"\n", max(0, end - 8193), end - 1)
        if cut < 0 and end > 8193:
            break                               # a line past 8 KiB: no frame read
        if cut + 1 == known and buf is block:   # (rev16 S2) the last line read back from: its walk, k lines on
            ok = last[3] and k + last[3] <= IPY_BACK and _back(state, last[4]) is not None
            found = k + last[3] if ok else 0    # (tri48: where the walk would step over that line)
            quotes ^= last[5]
            break
        prev, end = _plain(buf[cut + 1:end - 1]), cut + 1
        state = _back(state, prev)
        if state is None or state == _FRAME:
            found = k if state == _FRAME else 0
            break
        if state == _FREE:
            quotes ^= _quotes(prev)             # (tri48) a numbered line's code (a blank line holds none)
    if memo is not None:
        memo._ipy_last = (block, tail, start, found, head, quotes ^ (_quotes(head) if m.re is _IPY_NUMBERED else 0))
    return found > 0 and (not exc or quotes != 0)


def _back(state, prev):
    """(tri48) One step of source_line's walk back: the walk's state above the plain line `prev`, read from below it in
    `state`; _FRAME at the IPython frame line it belongs to, None where the walk stops (no frame above the line it began
    from). (rev16 B1) A numbered line is never the frame line; (tri48) a Verbose variable line is never one either (its
    value may read "... in f(": the loose frame form), and sits under the arrow line or another variable line."""
    n = _IPY_NUMBERED.match(prev)
    if n:
        arrow = b">" in n.group() or b"\xe2\x96\xb6" in n.group()
        return _FREE if state == _FREE or state == _VARS and arrow else None
    if _IPY_VAR.match(prev):
        return _VARS
    if state != _VARS and _IPY_FRAME.match(prev):
        return _FRAME if state == _FREE or _IPY_CALL.search(prev) and _opens(prev) else None
    if not prev.strip():
        return _FREE if state == _FREE else None
    return _MORE if _IPY_MORE.match(prev) else None


def _quotes(line: bytes) -> int:
    """(tri48) Whether the line holds an odd count of '"""' (bit 0) and of "'''" (bit 1): a string left open or closed."""
    return line.count(b'"""') & 1 | (line.count(b"'''") & 1) << 1


def _opens(line: bytes) -> bool:
    """(tri48) The line leaves a bracket open (more opened than closed, in strings too): a Verbose frame line whose call's
    values run on below it."""
    return sum(line.count(c) for c in b"([{") > sum(line.count(c) for c in b")]}")


def _plain(line: bytes) -> bytes:
    """A line's 4 KiB head without ANSI colour codes."""
    head = line[:4096]
    return ANSI_BYTES_RE.sub(b"", head) if b"\x1b" in head else head


def line_before(block: bytes, start: int, tail: bytes) -> bytes:
    """(rev14 S1) The line before the one at `start` in the scanner's block (in `tail`, the previous block's end, at a block's
    first line); b"" past 8 KiB: each line is looked back at once, from the line after it."""
    if start == 0:
        block, start = tail, len(tail)
    if start < 1:
        return b""
    cut = block.rfind(b"\n", max(0, start - 8193), start - 1)
    return block[cut + 1:start - 1] if cut >= 0 or start <= 8193 else b""
