"""Undo what pasting did to a log before it is scanned: forum quotes, code fences and their indent, CRLF, a CI or
Docker timestamp column, and hard wrapping (a narrow terminal, an e-mail client, textwrap at 40-200 columns).

Only a paste is read this way: an input that fits in the scanner's first chunk (scan.CHUNK). A log file of
any size streams past untouched, so big logs cost nothing here. Every step is one pass over the lines.

Wrapped lines are joined where the line before is full (the next word would not have fitted, or it is cut at
exactly the width) and the next line does not start a log record of its own (a timestamp, a level, a
traceback frame). The lines a record was joined from stay as blank lines, so the lines after them keep their
numbers; the blanks go just before the next line that starts a record of its own (or a blank line, or the end), not
right after the joined one: what the scanner reads on the line after it (a frame's source line, the rest of an
exception, its "at" lines) stays next to it. Between the two, a line stands that many lines above its pasted place."""
import re

from .lines import ERROR_WORDS, facts
from .text import ANSI_BYTES_RE

_FENCE = re.compile(rb"^[ \t]*(?:```|~~~)[\w+.-]*[ \t]*$")
_QUOTE = re.compile(rb"^[ \t]{0,3}(?:>[ \t]?)+")
_BAR = re.compile(rb"^[ \t]{0,3}\|[ \t]?")
# a timestamp column a CI runner or `docker logs -t` puts before each line (RFC 3339 with T; the runtimes' own differ);
# STAMP (rev13 D2) is also chain_links' docker -t prefix
# (rev14 D3) its fraction at most 9 digits (docker prints 9, GitHub Actions 7): a longer one is no stamp (none is printed)
STAMP = rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d) "
_STAMP = re.compile(rb"^" + STAMP)
# the start of a record of its own: never the rest of the line before it
_RECORD = re.compile(
    rb"[ \t]|File \"|Traceback|During handling|The above exception|\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|\d\d-\d\d \d\d:|"
    rb"\[[\d:. -]+\]|\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|NOTICE)\b|[IWEF]\d{4} |time=|\(\w+ pid=\d|"
    rb"!!!|#\d+ |[\w.]*(?:Error|Exception|Warning)\b:|(?:llama|ggml|llm_load|load_tensors|print_info|clip|srv|slot)\w*:|"
    rb"\w+\.(?:py|cpp|cu|cc|c|h|hpp|go|rs):\d|-+>|\d+%\||"
    # the shell's notice that the OOM killer ended the job: a line of its own ("Killed", "bash: line 1: 4242 Killed ...",
    # "zsh: killed python3 ..."; a zh_CN shell's "已杀死", round 75), never the rest of the line the job printed last (tune141:
    # joined, it was no failure)
    rb"Killed[ \t]*$|(?:ba|z)?sh: (?:line \d+: +\d+ +)?[Kk]illed\b|" + "已杀死".encode() + rb"[ \t]*$|"
    # libstdc++'s verbose terminate handler starts a line of its own ("terminate called after throwing an instance of
    # 'std::bad_alloc'"): joined to a loader's last line it hid where the throw came (review28: llama.cpp's pre-GGUF loader
    # line with ggml-model-q4_1.bin, the longest line of a short paste, read as cut)
    rb"terminate called (?:after throwing|without an active)|" + b"|".join(re.escape(c.encode()) for c in "│¦❱"))
_BORDERS = tuple(c.encode() for c in "│|┃║")      # a box's right edge: the line is whole
# Python's frame line to its end: whole (textwrap breaks between words, so a part never ends in ", in name";
# a terminal's cut can, at the width, so only a shorter line counts)
_FRAME = re.compile(rb'[ \t]*File "[^"]+", line \d+, in [\w<>.]+[ \t]*$')
# a rule of dashes, equals or dots (TVM's and llama.cpp's separators, a progress row of dots): a line of its own after text
_RULE_CHARS = rb"[-=_*~#.]"
_RULE = re.compile(rb"[ \t]*" + _RULE_CHARS + rb"{4,}[ \t]*$")
# (rev18 S2) a line that is whole whatever its width: a rule of dashes or box-drawing characters (IPython >= 8.7's 75 dashes
# above its traceback, rich's) and a header ending "(most recent call last)" (IPython's "AttributeError" + blanks +
# "Traceback (most recent call last)", padded to the same 75 columns): read as a terminal's cut, they joined the cell's
# "Cell In[3], line 3" frame line onto themselves, and the "----> 3 except torch.cuda.OutOfMemoryError:" under it read as an OOM
# (rev20 D2) its rule is _RULE's characters (or box-drawing ones), so an "=" or "_" rule is not joined either
_WHOLE = re.compile(rb"[ \t]{0,64}(?:" + _RULE_CHARS + rb"|\xe2[\x94\x95][\x80-\xbf]){4,1024}[ \t]{0,64}$"
                    rb"|[^\n]{0,4096}\(most recent call last\)[ \t]{0,64}$")
MIN_W, MAX_W = 40, 200
_PASTED = re.compile(rb"(?m)^(?:[ \t]|>|\||```|~~~|\d{4}-\d\d-\d\dT)")
FULL_LINES = 2          # lines cut at the width before a text counts as wrapped
# PyTorch's caching-allocator message quoted a sentence a line (a README, a forum post): its head, then the lines that
# continue it; each sentence opens with PyTorch's own words, so the joined line is the message the runtime printed
_TORCH_HEAD = re.compile(rb"(?:CUDA|HIP|XPU) out of memory\. Tried to allocate [\d.]{1,24} ?[KMGTP]?i?B\.?[ \t]*$")
_TORCH_START = re.compile(rb"(?:CUDA|HIP|XPU) out of memory\. Tried to allocate ")
# (round 103) the message's first sentence ending a line, and a line opening with its second (paste._torch_sentences)
_TORCH_OOM_END = re.compile(rb"(?:CUDA|HIP|XPU) out of memory\.[ \t]*$")
_TORCH_REQ_OPEN = re.compile(rb"[ \t]{0,16}Tried to allocate [\d.]{1,24} ?[KMGTP]?i?B\.")
_TORCH_REQ_ONLY = re.compile(rb"Tried to allocate [\d.]{1,24} ?[KMGTP]?i?B\.[ \t]*$")
# (each may be indented under a "[rank5]: " prefix, or opened with the quoter's ellipsis: "... this process has 76.51 GiB memory
# in use.", "... 73.15 GiB is allocated by PyTorch ...", NVIDIA-NeMo/Automodel#1975 and #2673)
_TORCH_MORE = re.compile(rb"[ \t]{0,16}(?:(?:\.{2,3}|\xe2\x80\xa6) ?)?(?:(?:GPU|Device) \d{1,3} has a total capac|Including non-PyTorch memory|"
                         rb"[Tt]his process has |Process (?:\d{1,20} )?ha[sd] |Of the allocated memory |If reserved but unallocated |"
                         rb"[\d.]{1,24} ?[KMGT]?i?B is allocated by PyTorch|"
                         # (round 100) the slack's sentence in PyTorch's words, its "and ... is" retyped ("457.95 MiB reserved by
                         # PyTorch but unallocated.")
                         rb"[\d.]{1,24} ?[KMGT]?i?B (?:is )?reserved by PyTorch but unallocated)")
# (round 111) the capacity sentence elided by the quoter after the card's name ("GPU 0 ... 78.85 GiB memory in use."), and the
# allocated sentence broken inside itself: a line ending "Of the allocated memory N is", the next opening "allocated by PyTorch"
_TORCH_GPU_CUT = re.compile(rb"[ \t]{0,16}(?:GPU|Device) \d{1,3} (?:\.{2,3}|\xe2\x80\xa6) ")
_ALLOC_OPEN_END = re.compile(rb"Of the allocated memory [\d.]{1,24} ?[KMGT]?i?B is[ \t]*$")
_ALLOC_REST = re.compile(rb"[ \t]{0,16}allocated by PyTorch\b")
# (round 120) the message quoted from its second sentence, the head's "CUDA out of memory." left out: a line that is only "Tried to
# allocate 9.41 GiB" (a period or none), the next opening with the capacity sentence ("GPU 2 has a total capacity of ...")
_TORCH_REQ_BARE = re.compile(rb"[ \t]{0,16}Tried to allocate [\d.]{1,24} ?[KMGTP]?i?B\.?[ \t]*$")
_TORCH_CAP_OPEN = re.compile(rb"[ \t]{0,16}(?:GPU|Device) \d{1,3} has a total capac")
# (round 120) ggml's CUDA/HIP allocation failure quoted with its status on a line of its own (a README's code block): a line
# ending "allocating 120.28 MiB on device 0:", the next (indented or not) "cudaMalloc failed: out of memory", as ggml prints
# them on one line (ggml_backend_cuda_buffer_type_alloc_buffer); (rev11 S3) ggml-cann's "aclrtMalloc failed: <CANN's words>"
# the same (ggml_backend_cann_buffer_type_alloc_buffer). The two already on one line with the status's indent kept (a
# terminal's cut joined by _unwrap) are read as they are: error_patterns.GGML_MALLOC takes 1-17 spaces or tabs there
_GGML_ALLOC_END = re.compile(rb"allocating [\d.]{1,24} MiB on device \d{1,20}:[ \t]*$")
_GGML_STATUS_OPEN = re.compile(rb"[ \t]{0,16}(?:(?:cuda|hip)Malloc failed: out of memory|aclrtMalloc failed)")


def _torch_next(line: bytes, nxt: bytes) -> bool:
    """The next line goes on with PyTorch's message: one of its sentences (_TORCH_MORE, or the capacity sentence cut after
    the card's name), or the rest of the allocated sentence the line broke (round 111)."""
    return bool(_TORCH_MORE.match(nxt) or _TORCH_GPU_CUT.match(nxt) or _ALLOC_OPEN_END.search(line) and _ALLOC_REST.match(nxt))


def undo(buf: bytes, judge=None) -> bytes:
    """judge(line, next_line, joined) -> bool: whether joining a line cut at the width with the next reads better (scan's recognisers)."""
    if b"\x1b" in buf:
        buf = ANSI_BYTES_RE.sub(b"", buf)              # colour codes are not text: they would widen the lines they colour
    if b"\r\n" in buf:
        buf = buf.replace(b"\r\n", b"\n")
    lines = buf.split(b"\n")
    changed = False
    if _PASTED.search(buf):              # a quote, fence, bar, stamp or indented line somewhere: the per-line steps
        lines, changed = _unquote(lines), True
    if MIN_W <= max(map(len, lines)) and len(lines) > 1:       # (bytes: at least the characters)
        out = _unwrap(lines, judge)
        changed = changed or out is not lines
        lines = out
    if b"Tried to allocate" in buf and len(lines) > 1:
        out = _torch_sentences(lines)
        changed = changed or out is not lines
        lines = out
    if b"Malloc failed" in buf and len(lines) > 1:
        out = _ggml_status(lines)
        changed = changed or out is not lines
        lines = out
    return b"\n".join(lines) if changed else buf


def _unquote(lines: list) -> list:
    nonblank = [ln for ln in lines if ln.strip()]
    if not nonblank:
        return lines
    if any(_QUOTE.match(ln) for ln in nonblank):
        lines = [_QUOTE.sub(b"", ln, 1) if ln[:4].lstrip(b" \t")[:1] == b">" else ln for ln in lines]
    fence = [bool(_FENCE.match(ln)) for ln in lines]
    if any(fence):
        lines = [b"" if f else ln for ln, f in zip(lines, fence)]
    nonblank = [ln for ln in lines if ln.strip()]
    bars = sum(1 for ln in nonblank if _BAR.match(ln))
    if nonblank and bars >= 0.8 * len(nonblank) and sum(1 for ln in nonblank if ln.rstrip().endswith(b"|")) < bars / 2:
        lines = [_BAR.sub(b"", ln, 1) for ln in lines]      # an e-mail or mailing-list quote, not a table
    nonblank = [ln for ln in lines if ln.strip()]
    if nonblank and sum(1 for ln in nonblank if _STAMP.match(ln)) >= 0.8 * len(nonblank):
        lines = [_STAMP.sub(b"", ln, 1) for ln in lines]
    lines = _dedent(lines, fence)
    return lines


def _dedent(lines: list, fence: list) -> list:
    """Strip the indent every line of a fenced block (or of the whole text) shares: a Markdown code block, a quote."""
    out, n = list(lines), len(lines)
    bounds = [k for k, f in enumerate(fence) if f]
    spans = [(bounds[k] + 1, bounds[k + 1]) for k in range(0, len(bounds) - 1, 2)] + [(0, n)]
    for lo, hi in spans:
        body = [ln for ln in out[lo:hi] if ln.strip()]
        if not body:
            continue
        cut = min(len(ln) - len(ln.lstrip(b" \t")) for ln in body)
        if cut:
            out[lo:hi] = [ln[cut:] if ln.strip() else b"" for ln in out[lo:hi]]
    return out


def _table_row(lines: list, lens: list, k: int) -> bool:
    """An indented line as long as an indented neighbour: a row of an aligned table (a profiler's, a trainer's), whole."""
    if lines[k][:2].strip():          # (a terminal cut just before a blank leaves one at the start)
        return False
    return any(0 <= j < len(lines) and lens[j] == lens[k] and not lines[j][:2].strip() for j in (k - 1, k + 1))


def _same_prefix(line: bytes, nxt: bytes) -> bool:
    """Both lines open with the same tag (a relay's "SUBPROCESS:", "[rank0]:", docker compose's "name  | "), or repeat: two records."""
    if line.rstrip() == nxt.rstrip():
        return True
    c = 0
    for a, b in zip(line[:48], nxt[:48]):
        if a != b:
            break
        c += 1
    # (round 84) or the same folder of an absolute path (a read-out of files, one a line: "/sys/fs/cgroup/memory/memory.limit_in_bytes
    # = N" above "/sys/fs/cgroup/memory/memory.failcnt = N"): each line names its own file, none is the rest of the one before
    return c >= 4 and (any(d in line[:c] for d in (b":", b"|", b"]", b">")) or (line[:1] == b"/" and line[1:c].count(b"/") >= 2))


def _first_word(ln: bytes) -> int:
    sp = ln.find(b" ")
    return len(ln) if sp < 0 else sp


def _unwrap(lines: list, judge=None) -> list:
    n = len(lines)
    if n < 2:
        return lines
    lens = [len(ln) if ln.isascii() else len(ln.decode("utf-8", "replace")) for ln in lines]
    width = max(lens)
    if not MIN_W <= width <= MAX_W:
        return lines
    # line k is cut at the width when line k+1 is its rest: a terminal cuts at exactly the width, anywhere (mid-word,
    # before a blank); textwrap or a mail client at a word boundary, when the next word would not have fitted
    exact, loose = [False] * n, [False] * n
    for k in range(n - 1):
        nxt = lines[k + 1]
        if (lens[k] < width // 2 and _first_word(nxt) < width // 3) or not nxt.strip() or _RECORD.match(nxt.lstrip(b" \t")) or lines[k].endswith(_BORDERS) \
                or _same_prefix(lines[k], nxt) or (_RULE.match(nxt) and not _RULE.match(lines[k])) \
                or (_TORCH_HEAD.search(lines[k]) and nxt.lstrip(b" \t").startswith((b"GPU ", b"Device ", b"Process ", b"This process ")) and _TORCH_MORE.match(nxt)):
            # ((round 97) PyTorch's first sentence ending its line, "... Tried to allocate 490.00 MiB.", and the second opening
            # the next, "GPU 0 has a total capacity": a quote a sentence a line (or a cut there); _torch_sentences joins the
            # two with their blank, which a width cut's glue would drop)
            continue
        if lens[k] == width:
            exact[k] = not _table_row(lines, lens, k)
        elif nxt[:1] not in b" \t" and lens[k] + 1 + _first_word(nxt) > width and not _FRAME.match(lines[k]):
            loose[k] = True
    n_exact, n_loose = sum(exact), sum(loose)
    # textwrap drops the blank it breaks at: a full line that ends in one, or whose rest starts with a single one, is a
    # terminal's cut (an indented line of its own starts with two or more)
    blank_cut = any(exact[k] and (lines[k].endswith(b" ") or (lines[k + 1][:1] == b" " and lines[k + 1][1:2] not in b" \t"))
                    for k in range(n - 1))
    glue = [None] * n          # per cut line: what stands for the line break (b"" or b" "); None: not cut
    if (n_exact >= FULL_LINES and 4 * n_loose <= n_exact) or \
            (blank_cut and n_exact >= n_loose and n_exact + n_loose >= FULL_LINES):          # a terminal
        for k in range(n):
            if exact[k]:
                glue[k] = b""
    elif n_exact + n_loose >= FULL_LINES:                            # textwrap: words kept whole unless longer than the width
        for k in range(n):
            if loose[k] or (exact[k] and lines[k + 1][:1] not in b" \t"):
                glue[k] = b"" if exact[k] and _mid_word(lines[k], lines[k + 1], width) else b" "
    elif judge is not None:
        # too few cut lines to call the text wrapped: join only where that makes an error message the line alone is not,
        # where the break splits a word or a line the scanner reads (a frame's path, "to allocate", "in function X at"),
        # or where the line is the head of the message the next line reads as
        for k in range(n):
            if exact[k] or loose[k]:
                line, nxt = lines[k].decode("utf-8", "replace"), lines[k + 1].decode("utf-8", "replace")
                ok = []
                for g in ((b"", b" ") if exact[k] else (b" ",)):
                    joined = (lines[k].rstrip(b" ") + g + lines[k + 1].lstrip(b" ") if g else lines[k] + lines[k + 1]).decode("utf-8", "replace")
                    if _splits(line, nxt, joined) or judge(line, nxt, joined) or _head_of(line, nxt, joined):
                        ok.append((g, joined))
                if ok:      # a terminal's cut at a word boundary reads both ways: the joined line that names more
                    glue[k] = max(ok, key=lambda gj: _rank(gj[1]))[0] if len(ok) > 1 else ok[0][0]
    for k in range(n - 1):
        if glue[k] is not None and _WHOLE.match(lines[k]):
            glue[k] = None          # (rev18 S2) never joined; still counted above, as any whole line the width test takes
    if not any(g is not None for g in glue):
        return lines
    return _join(lines, glue)


def _join(lines: list, glue: list) -> list:
    """Each line k with glue[k] set joined with the next (glue b"": no blank; else the glue, after the line's trailing
    blanks); the lines joined stay as blanks before the next record of its own."""
    n = len(lines)
    out, k, owed = [], 0, 0
    while k < n:
        parts, j = [lines[k]], k
        while glue[j] is not None:          # parts joined once at the end: a long run stays linear
            if glue[j] != b"":
                parts[-1] = parts[-1].rstrip(b" ")
                parts.append(glue[j])
                parts.append(lines[j + 1].lstrip(b" "))     # as judged: a wrapped line's indent is not the text's
            else:
                parts.append(lines[j + 1])
            j += 1
        rec = b"".join(parts)
        if owed and (not rec.strip() or _RECORD.match(rec.lstrip(b" \t"))):
            out.extend([b""] * owed)        # the blanks owed by joins above, before a record of its own
            owed = 0
        out.append(rec)
        owed += j - k
        k = j + 1
    out.extend([b""] * owed)
    return out


def _torch_sentences(lines: list) -> list:
    """Join PyTorch's message quoted a sentence a line: a line that ends at "Tried to allocate N" (its figure, a period or
    none) and the lines after it that open with the message's next sentences ("GPU 0 has a total capacity", "this process
    has", "Of the allocated memory", ...), each joined after a period, as PyTorch prints them on one line."""
    glue = [None] * len(lines)
    given, lines = lines, list(lines)
    k = 0
    while k < len(lines) - 1:
        # (round 103) the head broken after its first sentence: "CUDA out of memory." ending a line, the next opening "Tried to
        # allocate N." (the capacity sentence with it or not): the two joined, then read as the head
        cont = bool(_TORCH_OOM_END.search(lines[k])) and bool(_TORCH_REQ_OPEN.match(lines[k + 1]))
        if cont:
            glue[k] = b" "
            lines[k + 1] = lines[k + 1].lstrip(b" \t")
            k += 1
            if k >= len(lines) - 1:
                break
        head = bool(_TORCH_HEAD.search(lines[k])) or cont and bool(_TORCH_REQ_ONLY.match(lines[k])) \
            or bool(_TORCH_REQ_BARE.match(lines[k])) and bool(_TORCH_CAP_OPEN.match(lines[k + 1]))     # (round 120)
        # (or the head already joined with its "GPU N has a total capacity" sentence by _unwrap, the rest still a line each)
        # ((round 101) or with the processes' sentence, the capacity one left out: "... Tried to allocate 288.00 MiB. Process
        # 7208 has 6.51 GiB memory in use.", the next line "This process has 7.92 GiB memory in use.")
        begun = not head and (b"has a total capac" in lines[k] or b" memory in use" in lines[k]) and (cont or bool(_TORCH_START.search(lines[k])))
        if not (head or begun):
            k += 1
            continue
        # ((round 101) or, the capacity sentence left out, with the processes' sentences: "Process 7208 has N memory in use.",
        # "This process has M memory in use.")
        if (begun or lines[k + 1].lstrip(b" \t").startswith((b"GPU ", b"Device ", b"Process ", b"This process "))) and _torch_next(lines[k], lines[k + 1]):
            j = k
            while j < len(lines) - 1 and _torch_next(lines[j], lines[j + 1]):
                glue[j] = b" " if lines[j].rstrip().endswith(b".") or _ALLOC_OPEN_END.search(lines[j]) else b". "
                lines[j + 1] = lines[j + 1].lstrip(b" \t")     # the indent under a rank prefix is not the message's
                j += 1
            k = j
        k += 1
    return _join(lines, glue) if any(g is not None for g in glue) else given


def _ggml_status(lines: list) -> list:
    """(round 120) Join ggml's allocation line ending at "on device N:" with the next line's "cudaMalloc failed: out of memory"
    (or CANN's "aclrtMalloc failed", rev11 S3)."""
    glue = [None] * len(lines)
    given, lines = lines, list(lines)
    for k in range(len(lines) - 1):
        if _GGML_ALLOC_END.search(lines[k]) and _GGML_STATUS_OPEN.match(lines[k + 1]):
            glue[k] = b" "
            lines[k] = lines[k].rstrip(b" \t")
            lines[k + 1] = lines[k + 1].lstrip(b" \t")
    return _join(lines, glue) if any(g is not None for g in glue) else given


def _splits(line: str, nxt: str, joined: str) -> bool:
    """The joined line holds an error word or a context line (lines.FACTS) that neither half holds: the break fell inside it."""
    if any(w in joined and w not in line and w not in nxt for w in ERROR_WORDS):
        return True
    got = {name for name, _ in facts(joined)}
    return bool(got) and not got <= {name for name, _ in facts(line)} | {name for name, _ in facts(nxt)}


def _head_of(line: str, nxt: str, joined: str) -> bool:
    """The line holds an error word but is no message by itself, and joined it reads as the message the next line reads
    as: its head ("The paging file is too small for this operation to" + "complete. (os error 1455)")."""
    from .parse import recognise
    if not any(w in line for w in ERROR_WORDS) or recognise(line):
        return False
    ev, ev2 = recognise(nxt), recognise(joined)
    return bool(ev and ev2) and ev2["kind"] == ev["kind"]


def _rank(text: str) -> int:
    from .parse import PRIORITY, recognise
    ev = recognise(text)
    return PRIORITY.get(ev["kind"], 0) if ev else -1


def _mid_word(line: bytes, nxt: bytes, width: int) -> bool:
    """textwrap breaks a word only when it is longer than the width: the two halves then make a word that long."""
    tail = len(line) - (line.rfind(b" ") + 1)
    return tail + _first_word(nxt) > width or (b" " not in nxt and len(nxt) == width)
