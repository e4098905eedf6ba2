"""The CLI's text to the terminal's width: prose lines (notes, assumptions, guides) wrap, table rows and commands the
user copies never do (a wrapped command is a broken command), nor does a figure leave its unit or a flag its value.
estimate's latent and peak lines, notes and assumptions, budget's notes, triage's Numbers line, evidence and guides,
kv's whole text (llm/report.py run_cli) and trace's prose rows (trace/tracer.py format_result) come here; --json never
does.
Width: the terminal's (shutil.get_terminal_size), 80 when stdout is not a terminal, never below 60."""
import re
import shutil
import sys
import textwrap

MIN_WIDTH, PIPE_WIDTH = 60, 80
# a table row: two cells apart by 2+ spaces after the indent ("  vae-decode           73%  ...", "phase (GiB)  weights")
_TABLE = re.compile(r"\S {2,}\S")
# a command line: a shell prompt, an environment assignment, a path to run, or a program the guides name first
_COMMAND = re.compile(r"^(\$ |[A-Z][A-Z0-9_]*=|\.{0,2}[\\/]|[A-Za-z]:\\|(sudo|python[0-9.]*|pip[0-9]*|uv|uvx|gpu-garden|"
                      r"vllm|ollama|llama-server|llama-cli|python_embeded|export|set|setx|\$env:|nvidia-smi|docker|git|"
                      r"conda|hf|huggingface-cli|comfy|cd|torchrun|accelerate|sglang|CUDA_VISIBLE_DEVICES)(\s|$))")
_BULLET = re.compile(r"^(\s*)([-*•] |\d+[.)] )")
# a figure and its unit ("22.45 GiB", "5 %") stay on one line: the space between them is held by a private-use character
# (not whitespace to textwrap) while the line wraps
_UNIT = re.compile(r"(?<=\d) (?=(?:[KMGTP]i?B|B|%|GB/s|tokens?)(?![\w]))")
# a flag and its value ("--gpu-memory-utilization 0.83", "-ngl 24", "--fit on"), kv's cache type and size ("KV cache
# q8_0", "KV 1.00 GiB"), "reserved ~ 24.10 GiB" and a `quoted command` are held the same way: a prose line that names
# a setting must not leave its value on the next line
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*) (?=[^\s(\-])|(?<=\bKV cache) (?=\w)|(?<=\bKV) (?=cache \w|\d)"
                   r"|(?<=~) (?=\d)|(?<=\w) (?=~ \d)")
_TICKS = re.compile(r"`[^`\n]+`")
_HOLD = "\ue000"


def _hold(line: str) -> str:
    line = _TICKS.sub(lambda m: m.group(0).replace(" ", _HOLD), line)
    return _FLAG.sub(lambda m: (m.group(1) or "") + _HOLD, _UNIT.sub(_HOLD, line))


def width() -> int:
    if not sys.stdout.isatty():
        return PIPE_WIDTH
    return max(MIN_WIDTH, shutil.get_terminal_size((PIPE_WIDTH, 24)).columns)


def keep(line: str) -> bool:
    """A line never wrapped: a table row or a command."""
    body = line.strip()
    return bool(_TABLE.search(body) or _COMMAND.match(body))


def _fill(line: str, cols: int, indent: int = 2) -> list[str]:
    """One prose line wrapped; its continuation lines hang under its text: past a bullet, else `indent` spaces past
    the line's own indent (a renderer's item: 2; a guide's paragraph: 0)."""
    m = _BULLET.match(line)
    lead = len(line) - len(line.lstrip())
    hang = " " * (len(m.group(0)) if m else lead + indent)
    lines = textwrap.wrap(_hold(line), cols, initial_indent="", subsequent_indent=hang, break_long_words=False,
                          break_on_hyphens=False, drop_whitespace=True)
    return [x.replace(_HOLD, " ") for x in lines] or [line]


def wrap(text: str, cols: int | None = None, indent: int = 2) -> str:
    """Wrap each prose line of a renderer's text over `cols` (default width()); fenced ``` blocks, table rows and
    commands stay whole. Lines are not joined: each is one item of the renderer's, its continuation lines `indent`
    past its own indent."""
    cols = cols or width()
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.lstrip().startswith("```") or len(line) <= cols or keep(line):
            out.append(line)
        else:
            out += _fill(line, cols, indent)
    return "\n".join(out)


def hang(head: str, text: str, cols: int | None = None) -> list:
    """A row whose value is prose (trace's "attention       12 calls, ..."): `head`, the label padded to the value's
    column, then `text` wrapped over `cols` (default width()) with its continuation lines under that column."""
    lines = textwrap.wrap(_hold(text), cols or width(), initial_indent=head, subsequent_indent=" " * len(head),
                          break_long_words=False, break_on_hyphens=False)
    return [x.replace(_HOLD, " ") for x in lines] or [head.rstrip()]


def wrap_lines(lines: list, cols: int | None = None, indent: int = 2) -> list:
    """wrap() for a renderer's list of prose lines (its notes, assumptions): the lines they become."""
    return wrap("\n".join(lines), cols, indent).split("\n") if lines else []


def reflow(markdown: str, cols: int | None = None) -> str:
    """A guide's markdown, hard-wrapped at ~110 columns at its source, re-flowed to `cols`: the lines of a paragraph are
    joined and wrapped; fenced blocks, list items, tables and commands stay as written (a list item wraps alone)."""
    cols = cols or width()
    out, para, fenced = [], [], False

    def flush():
        if para:
            line = " ".join([para[0].rstrip()] + [x.strip() for x in para[1:]])
            out.extend(_fill(line, cols, 0) if len(line) > cols else [line])
            para.clear()

    for line in markdown.split("\n"):
        s = line.strip()
        if s.startswith("```"):
            flush()
            fenced = not fenced
            out.append(line)
        elif fenced or not s or keep(line) or s.startswith(("|", "#", ">")):
            flush()
            out.append(line)
        elif _BULLET.match(line):  # a list item starts its own paragraph
            flush()
            para.append(line)
        else:
            para.append(line)
    flush()
    return "\n".join(out)
