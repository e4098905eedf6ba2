r"""(fix67f, rev67a F2-F4) vLLM's short flag `-q X` (engine/arg_utils.py: add_argument("--quantization", "-q")): one reading
for both facts that take it ("vllm_wflags" and "vllm_batched").

`-q` is also pip's, git's and docker's "quiet", so a `-q X` is vLLM's only where a vLLM entry point (ENTRY: `vllm serve`,
`vllm.entrypoints`, `-m vllm`, `docker run` of a vllm image, an `LLM(` call) stands before it in the same command: each
`&&`, `||`, `;` or `|` segment is judged on its own (`pip install -q vllm && vllm serve M -q fp8` sets fp8, `git clone -q
https://.../vllm.git` sets nothing), and a command spread over lines that end in a backslash (vllm-project/vllm#16128's
`vllm serve M \` then `-q fp8 \`; a `docker run ... \` whose image is on a later line) is read as the one line it is."""
import re

# the flag as both facts' patterns find it (fact_patterns.VLLM_WEIGHT_FLAGS, vllm_command.BATCHED_RE); its value is read here
SHORT = r"(?<!\S)-q[ =](?P<short>[\w-]{1,40})"
SHORT_RE = re.compile(SHORT)
GATE = (" -q ", " -q=")
ENTRY = re.compile(r"\bvllm[ \t]{1,4}serve\b|\bvllm\.entrypoints\b|(?<!\S)-m[ \t]{1,4}vllm\b|\bLLM\(|"
                   r"\b(?:docker|podman)[ \t]{1,4}(?:container[ \t]{1,4})?run\b[^\n]{0,4000}?[\s/]vllm[\w.-]{0,40}[/:\s]")
SEP = re.compile(r"&&|\|\||;|\|")
BACK_LINES = 40          # lines of one command read back (each ends in a backslash)
BACK_CHARS = 8000


def before(s, window=False) -> str:
    """The lines before the scanned one that continue into it (each ends in a backslash), oldest first, joined by spaces;
    "" for a line read back from the window before a failure (no place in the scanner's block to look from)."""
    src = None if window else getattr(s, "_src", None)
    if not src:
        return ""
    block, end = src
    lo, parts = max(0, end - BACK_CHARS), []
    for _ in range(BACK_LINES):
        if end <= lo:
            break
        start = block.rfind(b"\n", lo, end - 1) + 1
        line = block[start:end - 1].rstrip()
        if not line.endswith(b"\\") or start == 0 and lo > 0:
            break
        parts.append(line[:-1].decode("utf-8", "replace"))
        end = start
    return " ".join(reversed(parts))


def quants(text, carried="") -> dict:
    """The `-q X` on `text` that are vLLM's --quantization: {where the `-q` starts in text: X in lower case}, those with a
    vLLM entry point before them in their own segment, `carried` (the command's earlier lines, before()) leading the
    line's first one."""
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
    return out
