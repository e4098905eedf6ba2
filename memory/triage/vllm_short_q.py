r"""(fix67f, rev67a F2-F4) vLLM's short flag `-q X` (engine/arg_utils.py: add_argument("--quantization", "-q")): one reading
for both facts that take it ("vllm_wflags" and "vllm_batched").

`-q` is also pip's, git's and docker's "quiet", so a `-q X` is vLLM's only where a vLLM entry point (ENTRY: `vllm serve`,
`vllm bench throughput|latency`, `vllm run-batch`, a `benchmark_throughput.py`-style script, `vllm.entrypoints`, `-m
vllm`, `docker run` of a vllm image, an `LLM(` call) stands before it in the same command: each `&&`, `||`, `;`, `|` or
background `&` segment is judged on its own (`pip install -q vllm && vllm serve M -q fp8` sets fp8, `git clone -q
https://.../vllm.git` sets nothing), and a command spread over lines that end in a backslash (vllm-project/vllm#16128's
`vllm serve M \` then `-q fp8 \`; a `docker run ... \` whose image is on a later line) is read as the one line it is.
(fix68a, rev67g) So is one spread over Windows cmd's ` ^` or PowerShell's `` ` `` at the line's end (after a space, so
Python's `^^^^` markers and a Markdown fence are none), each command with one shell's mark throughout (CONTINUED)."""
import re

# the flag as both facts' patterns find it (fact_patterns.VLLM_WEIGHT_FLAGS, vllm_command.BATCHED_RE); its value is read here
SHORT = r"(?<!\S)-q[ =](?P<short>[\w-]{1,40})"
SHORT_RE = re.compile(SHORT)
GATE = (" -q ", " -q=")
# (fix67m, rev67g F1) the image is looked for at most IMAGE_AFTER characters on, in the same line of the command (fix67o,
# rev67i #2: 4000 again; the lazy match stops at the line's end or a separator, and a command's earlier lines leave only
# "docker run " and their last TAIL characters, _fold)
DOCKER_RUN = r"\b(?:docker|podman)[ \t]{1,4}(?:container[ \t]{1,4})?run\b"
DOCKER_RUN_RE = re.compile(DOCKER_RUN)
IMAGE_AFTER = 4000       # characters from `docker run` to its image looked through
# (fix67m, rev67g F2) vLLM's benchmarks and batch runner build the engine from its flags (vllm/benchmarks/throughput.py:
# run_vllm's LLM(**asdict(engine_args)), from AsyncEngineArgs/EngineArgs): -q is --quantization there too
ENTRY = re.compile(r"\bvllm[ \t]{1,4}(?:serve|run-batch|bench[ \t]{1,4}(?:throughput|latency))\b|\bvllm\.entrypoints\b|"
                   r"(?<!\S)-m[ \t]{1,4}vllm\b|\bLLM\(|\bbenchmark_(?:throughput|latency|prefix_caching|prioritization)\.py\b|"
                   + DOCKER_RUN + r"[^\n&|;]{0,%d}?\s(?:[\w.-]{1,60}/){0,3}[\w.-]{0,20}vllm[\w.-]{0,40}(?=:\w|@|\s|$)" % IMAGE_AFTER)
# (fix67m, rev67g F3) a docker run counts by its image's name (`vllm/vllm-openai:v0.13.0`, `rocm/vllm`), a token of its
# own, not a mounted path holding "vllm" (`-v /srv/vllm/cache:/root/.cache`); a lone & (background) ends a command too,
# not the & of &&, >&, &> or 2>&1
SEP = re.compile(r"&&|\|\||;|\||(?<![&>|])&(?![&>])")
CONTINUED = (b"\\", b"^", b"`")     # bash's, cmd's, PowerShell's line continuation (^ and ` after a space or tab)
BACK_LINES = 40          # lines of one command read back (each ends in a backslash), past the last one already read
BACK_CHARS = 8000
TAIL = 40                # what a command's earlier lines leave for the next: its last segment's last TAIL characters (after
MARK = "vllm serve"      # "docker run " when it has one), or this one where it has an entry point


def _fold(carry: str, line: str) -> str:
    """What a command's lines so far leave for its next line: MARK when the last segment (after the last separator) has a
    vLLM entry point, else that segment's last TAIL characters, after "docker run " when it has a `docker run` anywhere
    (whose image may come later, however far back the run is: fix67o, rev67i #2). Bounded, so a long command costs each
    line one reading."""
    joined = carry + " " + line if carry else line
    last = 0
    for last in (b.end() for b in SEP.finditer(joined)):
        pass
    seg = joined[last:]
    if ENTRY.search(seg):
        return MARK
    return ("docker run " if DOCKER_RUN_RE.search(seg) else "") + seg[-TAIL:]


def _prev_line(buf: bytes, lo: int, end: int) -> int:
    """Where the line ending just before buf[end] starts (not before lo)."""
    return buf.rfind(b"\n", lo, end - 1) + 1


def _continues(line: bytes, mark) -> bool:
    """The line goes on into the next: it ends in `\\`, or in ` ^` / `` ` `` after a space or tab, the same mark as the
    command's later lines (`mark`, None for the first read back)."""
    end = line[-1:]
    return end in CONTINUED and (end == b"\\" or line[-2:-1] in (b" ", b"\t")) and mark in (None, end)


def before(s, window=False) -> str:
    """What the lines before the scanned one that continue into it (each ends in a backslash) leave for it (_fold); ""
    when none does. (fix67m, rev67g F1) Read once per line for both facts, and a line already read is not read again:
    the walk back stops at the last line asked about and folds on from what that line was given (s._q_at). (F4) The
    scanner's block reaches back into the previous chunk (s.tail); a line read back from the window before a failure is
    read in that window (s._wsrc, set by window.read_context), so a command past the first block is read whole."""
    src = getattr(s, "_wsrc", None) if window else getattr(s, "_src", None)
    if not src:
        return ""
    buf, end = src
    key, base = (buf, 0) if window else (None, s.bytes_seen)
    if not window and end < BACK_CHARS and s.tail:
        pre = s.tail[len(s.tail) - min(len(s.tail), BACK_CHARS - end):]
        buf, base = pre + buf[:end], base - len(pre)
        end = len(buf)
    memo = getattr(s, "_q_at", None)
    if memo and memo[0] is key and memo[1] == base + end:
        return memo[2]
    lo, parts, carry = max(0, end - BACK_CHARS), [], ""
    at, mark = end, None
    for _ in range(BACK_LINES):
        if at <= lo:
            break
        start = _prev_line(buf, lo, at)
        if start == 0 and lo > 0:          # the line begins before what is read back: no command line
            break
        line = buf[start:at - 1].rstrip()
        if not _continues(line, mark):
            break
        mark = line[-1:]
        parts.append(line[:-1].decode("utf-8", "replace"))
        if memo and memo[0] is key and memo[1] == base + start:
            carry = memo[2]
            break
        at = start
    for part in reversed(parts):
        carry = _fold(carry, part)
    s._q_at = (key, base + end, carry)
    return carry


_last = (None, None)     # (text, carried) and quants' answer: one tuple, swapped whole (a second thread reads a pair that matches)


def quants(text, carried="") -> dict:
    """The `-q X` on `text` that are vLLM's --quantization: {where the `-q` starts in text: X in lower case}, those with a
    vLLM entry point before them in their own segment, `carried` (what the command's earlier lines leave, before())
    leading the line's first one. The last answer is kept: both facts ask about the same line."""
    global _last
    key, out = _last
    if key == (text, carried):
        return dict(out)
    joined = carried + " " + text if carried else text
    off = len(joined) - len(text)
    cuts = [0] + [b.end() for b in SEP.finditer(joined)] + [len(joined) + 1]
    out, k, entry = {}, -1, None
    for m in SHORT_RE.finditer(joined, off):       # each segment's entry point searched once (a long line stays linear)
        if cuts[k + 1] <= m.start():
            while cuts[k + 1] <= m.start():
                k += 1
            e = ENTRY.search(joined, cuts[k], cuts[k + 1] - 1)
            entry = e.end() if e else None
        if entry is not None and entry <= m.start() + 1:
            out[m.start() - off] = m.group("short").lower()
    _last = (text, carried), out
    return dict(out)
