"""Reading back the log just before a line: the scanner decodes few lines, so what a failure needs from
the lines it skipped (the model ComfyUI was loading, sampling progress, a VAE decode, llama.cpp buffer
sizes, vLLM's budget, startup facts, the traceback) is read here from the WINDOW bytes before it, and a
finished run's window names the models that ran fine."""
import re

from . import facts as facts_mod
from . import parse as P
from . import lines as L

WINDOW = 48 << 10           # bytes before a failure read for its context
REPLAY = 8 << 10            # skipped anchor lines read back before a failure the idle scan found
# a load named (the name read up to 182 bytes: what a 200-byte look at "Requested to load " holds)
_LOADED_RE = re.compile(rb"Requested to load (\w{1,182})")
# the same "loading model X" as Stable Diffusion WebUI Forge prints it (its memory manager, its loader)
# and a pack that builds its model its own way: nunchaku's "Initializing QuantizedFluxModel", and its "Disabling CPU offload"
# when the whole diffusion model goes to the card
# (newer nunchaku: "VRAM > 14GiB, disable CPU offload"), and any program's "Moving text encoder 2 to cuda" (SimpleTuner, kohya):
# the part named is being placed on the card
_ANY_LOAD_RE = re.compile(rb"(?:Requested to load|\[Memory Management\] Target:|To load target model|Loading Model:|\] Initializing) (\w+)"
                          rb"|\b([Dd]isabl)(?:e|ing) CPU offload\b"
                          rb"|\b(?:[Mm]oving|[Ss]ending|[Pp]utting|[Tt]ransferring) (?:the )?((?:[Tt]ext[ _]?[Ee]ncoder|T5|t5|CLIP|clip|VAE|vae|[Uu][Nn]et|"
                          rb"[Tt]ransformer|DiT|[Mm]odel|LLM)\w{0,20}(?: \d{1,2})?) to (?:cuda|CUDA|GPU|gpu|the GPU|device|xpu|mps)\b", re.M)
_FORGE_LOADS = (b"[Memory", b"To load", b"Loading Model")
# a word each _ANY_LOAD_RE match holds (none spans a line): only the lines holding one are searched, a window of failures
# without a load costs a few C passes where the pattern (no literal prefix) costs a try at every byte (~90 ns a byte)
_LOAD_WORDS = (b"Requested to load ", b"Management] Target: ", b"To load target model ", b"Loading Model: ", b"] Initializing ",
               b"CPU offload", b" to cuda", b" to CUDA", b" to GPU", b" to gpu", b" to the GPU", b" to device", b" to xpu", b" to mps")
_FRAME_RE = re.compile(rb'File "([^"\n]+)"(?:, ?line ?\d+)?, in (\S+)[^\n]*\n?([^\n]{0,240})')
# a training loop's epoch counter ("Epoch 4/10", "epoch: 2", "Epoch 3:"): the last one before the failure is the epoch it failed in
_EPOCH_RE = re.compile(rb"[Ee]poch[ :\[]{0,3}(\d{1,5})\b")
_STEPS_RE = re.compile(rb"[^|\n\r]{0,120}\|\s{0,4}(\d{1,10})/\d{1,10} \[")
_TRACE_STARTS = (b"Traceback (most recent call last)", b"!!! Exception during processing")


# How often each byte occurs in log text (percent; benchmarks/bench_triage.py's logs and the corpus), the commonest
# first; any other byte is taken as RARE. line_starts looks for all the needles with a few regex passes, each led by one
# byte: sre finds a literal first byte with a tight C loop (a pass costs about the same whatever the byte), then tries
# the rest of each word holding it (a trie) and a lookbehind for the part before it. Each pass costs a scan plus a try
# at every occurrence of its byte, so the bytes are chosen (greedy set cover) for few passes and rare bytes; the table
# decides speed only, never what is found.
BYTE_PERCENT = dict(zip(b' etora0isnlcpdmu1.h2:/,4g\xe2\n_3fy-=b58wv7k6B|xG9[]MEF;O()"TIPAR%CU<#N', (
    13.1, 6.6, 5.0, 4.0, 4.0, 3.8, 3.8, 3.8, 3.6, 3.5, 2.8, 2.1, 2.0, 2.0, 1.9, 1.8, 1.8, 1.8, 1.7, 1.7, 1.7, 1.6, 1.3,
    1.3, 1.1, 1.0, 1.0, 0.9, 0.9, 0.9, 0.9, 0.7, 0.7, 0.6, 0.6, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4,
    0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2)))
RARE = 0.1
PASS_COST, TRY_COST = 1.0, 0.5      # a pass over the block; the tries at its lead byte, per percent of bytes it is
_GROUPS = {}


def _trie(items) -> bytes:
    """One pattern for (rest, before) pairs: each rest as a trie, then a lookbehind for its whole word (before: the
    word, b"" when the word starts with its rest). A node with several branches is entered past a charset lookahead:
    one test rejects most tries where a branch each would cost one test each."""
    trie = {}
    for rest, word in items:
        node = trie
        for ch in rest:
            node = node.setdefault(ch, {})
        node.setdefault(None, set()).add(word)

    def rx(node):
        ends = node.get(None, ())
        if b"" in ends:
            return b""                     # a whole word ends here: the longer ones add no line
        alts = [b"(?<=" + re.escape(w) + b")" for w in sorted(ends)]
        kids = sorted(k for k in node if k is not None)
        alts += [re.escape(bytes([k])) + rx(node[k]) for k in kids]
        if len(alts) == 1:
            return alts[0]
        ahead = b"(?=[" + b"".join(re.escape(bytes([k])) for k in kids) + b"])" if not ends and len(kids) > 2 else b""
        return ahead + b"(?:" + b"|".join(alts) + b")"
    return rx(trie)


def _groups(needles) -> list:
    """The patterns that find the needles (cached per needles tuple: the scanner passes a few module-level tuples; the
    cache is emptied past 32 so a caller building tuples cannot grow it)."""
    needles = tuple(needles)
    got = _GROUPS.get(needles)
    if got is None:
        if len(_GROUPS) >= 32:
            _GROUPS.clear()
        left, got = set(needles), []
        while left:
            def cost(b):           # per word covered: the pass, and a try at each occurrence of the byte
                n = sum(1 for w in left if b in w)
                return (PASS_COST + TRY_COST * BYTE_PERCENT.get(b, RARE)) / n, b
            lead = min({b for w in left for b in w}, key=cost)
            words = {w for w in left if lead in w}
            left -= words
            got.append(re.compile(re.escape(bytes([lead])) + _trie([(w[w.index(lead) + 1:], w if w.index(lead) else b"")
                                                                    for w in words])))
        _GROUPS[needles] = got
    return got


def line_starts(block: bytes, needles, lo: int = 0, hi: int | None = None) -> set:
    """Offsets of the starts of the lines that contain any of `needles` in block[lo:hi] (non-empty words without
    newlines). `lo` and `hi` must be line boundaries (a lookbehind may read the byte before `lo`: a newline)."""
    hi = len(block) if hi is None else hi
    starts = set()
    find, rfind = block.find, block.rfind
    for rx in _groups(needles):
        m = rx.search(block, lo, hi)
        while m:
            i = m.start()
            starts.add(rfind(b"\n", 0, i) + 1)
            e = find(b"\n", i, hi)
            if e < 0:
                break
            m = rx.search(block, e + 1, hi)
    return starts


def loads_in(raw: bytes, starts=None):
    """_ANY_LOAD_RE.finditer(raw), line by line over the lines that hold one of _LOAD_WORDS (the same matches, in order;
    starts: those lines' starts, when known)."""
    for st in sorted(line_starts(raw, _LOAD_WORDS) if starts is None else starts):
        e = raw.find(b"\n", st)
        yield from _ANY_LOAD_RE.finditer(raw, st, e if e >= 0 else len(raw))


_DECOD = tuple("".join(c.upper() if m >> i & 1 else c for i, c in enumerate("decod")).encode() for m in range(32))   # any case
# what read_context looks for back through the window: the lines that hold one are found once (window_lines), the
# searches start at the first (a log failing on every line paid a full pass over the 48 KB window for each)
_MARKS = (b"Prompt executed", b"loaded partially", b"poch", b"%|")


def decode_after(raw: bytes, pos: int, starts=None, n=0):
    """L.DECODE_RE.search(raw, pos): each of its forms holds "decod" (any case) on the line it starts on, so the search
    starts at the line of the first one (none: no match) instead of trying the case-blind pattern at every byte.
    starts: the starts of the lines of raw[:n] holding one (pos a line start), when known."""
    if starts is not None:
        j = next((s for s in sorted(starts) if s >= pos), None)
        if j is not None:
            return L.DECODE_RE.search(raw, j)
        lo = max(pos, n)
        j = raw[lo:].lower().find(b"decod")
        j = j + lo if j >= 0 else -1
    else:
        j = raw.lower().find(b"decod", pos)
    return L.DECODE_RE.search(raw, max(pos, raw.rfind(b"\n", 0, j) + 1)) if j >= 0 else None


def window_lines(scan, raw: bytes, needles) -> set:
    """line_starts(raw, needles) for raw, the window before the line at scan._src (raw ends at its start). The lines this
    window shares with the window read before the last failure are the same bytes: their starts are taken from that read
    (kept with absolute offsets in scan._window_lines) and only the window's cut first line and the lines since are read,
    so a log failing on every line reads each line once, not WINDOW / (line length) times."""
    end = scan.bytes_seen + scan._src[1]
    base, first = end - len(raw), raw.find(b"\n") + 1
    got = scan._window_lines.get(needles)
    if first and got and got[0] <= base + first <= got[1] <= end:
        lo, hi, old = got
        starts = {s - base for s in old if s >= base + first} | line_starts(raw, needles, 0, first) \
            | line_starts(raw, needles, hi - base)
    else:
        starts = line_starts(raw, needles)
    if first and raw.endswith(b"\n"):
        scan._window_lines[needles] = (base + first, end, [s + base for s in starts if s >= first])
    return starts


def before(scan, block: bytes, start: int) -> bytes:
    """The WINDOW bytes before block[start], reaching back into the previous chunk."""
    if start >= WINDOW:
        return block[start - WINDOW:start]
    return scan.tail[len(scan.tail) - (WINDOW - start):] + block[:start] if scan.tail else block[:start]


def models_that_ran(scan):
    """A run ended without failing: the models it loaded ran fine (for the "ran fine before" leak clue). Its loads
    are those after the last run's end (read in the chunk itself when that end is there: no window copy a run)."""
    block, start = scan._src
    prev = block.rfind(b"Prompt executed", max(0, start - WINDOW), start)
    if prev < 0 and start < WINDOW and scan.tail:       # the run began in an earlier chunk
        block, start = before(scan, block, start), min(WINDOW, len(scan.tail) + start)
        prev = block.rfind(b"Prompt executed", max(0, start - WINDOW), start)
    pos = block.find(b"\n", prev) + 1 if prev >= 0 else max(0, start - WINDOW)
    for m in _LOADED_RE.finditer(block, pos, start):
        scan.ok_models.add(m.group(1).decode("ascii", "replace"))


def read_context(scan):
    """Read the log just before this line for what the anchor scan skips. Only this run's part counts."""
    raw = before(scan, *scan._src) if scan._src else b""
    marks = sorted(window_lines(scan, raw, _MARKS)) if raw else []
    cut = raw.rfind(b"Prompt executed", marks[0]) if marks else -1
    if cut >= 0:
        off = raw.find(b"\n", cut) + 1
        raw = raw[off:]
        marks = [m - off for m in marks if m >= off]
    mark0 = marks[0] if marks else len(raw)      # no line before it holds a mark
    if scan._idle:
        frames_before(scan, raw)
    if not raw:
        return
    scan.loads.clear()
    scan.phase = None
    scan.partial_load = False
    scan.epoch = None
    load_at = prev_at = -1
    for m in loads_in(raw, window_lines(scan, raw, _LOAD_WORDS)):         # every load of this run (for "ran fine before")
        if m.group(3):
            scan.loads.append(m.group(3).decode("ascii", "replace"))
            scan.facts["moved_to_device"] = True
        else:
            scan.loads.append(m.group(1).decode("ascii", "replace") if m.group(1) else "diffusion model (CPU offload disabled)")
        prev_at, load_at = load_at, m.start()
        if m.group(0).startswith(_FORGE_LOADS):
            scan.facts["forge"] = True
        if m.group(0).startswith((b"Requested to load",) + _FORGE_LOADS):
            scan.facts["ui_loader"] = True      # ComfyUI's or Forge's model loader ran: not a plain script
    last = scan.loads[-1] if scan.loads else None
    # ComfyUI (model_patcher.py) loaded this run's last model only in part: "loaded partially" after its "Requested to load"
    scan.partial_load = raw.rfind(b"loaded partially", mark0) > load_at >= 0
    # (window_lines reads raw as the bytes before the failing line: before the bar on that line is added below)
    n, decods = len(raw), window_lines(scan, raw, _DECOD)
    keys = L.WINDOW_KEYS_TRAINED if scan.facts["training_log"] else L.WINDOW_KEYS
    starts = window_lines(scan, raw, keys)
    # a progress bar on the failing line itself ("  0%|   | 0/4 [...]Error during model prediction: ...") counts too
    if scan._src:
        block, start = scan._src
        eol = block.find(b"\n", start)
        here = block[start:eol if eol >= 0 else len(block)][:4096]
        if b"%|" in here:
            raw = raw + b"\n" + here[:here.rfind(b"%|") + 2]
    at = raw.rfind(b"poch", mark0)
    m = _EPOCH_RE.match(raw, at - 1) if at > 0 else None
    scan.epoch = int(m.group(1)) if m else None
    prog_at = raw.rfind(b"%|", mark0)
    if last:
        scan.phase = ("load", last)
    # the last bar of this run counts completed steps ("| 20/50 [", tqdm's n/total): the loop ran, its inputs fit once
    steps = _STEPS_RE.match(raw, prog_at + 2) if prog_at > load_at else None
    scan.facts["steps_done"] = int(steps.group(1)) if steps and int(steps.group(1)) else None
    if prog_at > load_at:
        full_bar = raw.rfind(b"100%|", mark0)
        done = full_bar >= 0 and full_bar >= prog_at - 4
        scan.phase = ("done" if done else "progress", last)
        scan.progress_done = done
        # a bar labelled "Loading ..." (checkpoint shards, weights) is a load, not sampling
        label = raw[raw.rfind(b"\n", 0, prog_at) + 1:prog_at].split(b"\r")[-1]
        if done and (b"oading" in label or b"nitializ" in label):
            scan.phase = ("load", last) if last else None     # a finished load bar says nothing about sampling
            scan.progress_done = False
        elif not done and b"oading" in label:
            what = label.decode("utf-8", "replace").split(":")[0].strip()
            scan.phase = ("load", (what[8:] if what.lower().startswith("loading ") else what)[:60] or last)
    # (fix67b) the model being sampled loaded again mid-run (Dynamic VRAM re-stages it between steps): a bar of this run,
    # not finished, between its previous load and this one says sampling had started
    if last and len(scan.loads) > 1 and scan.loads[-2] == last and prev_at < prog_at < load_at and raw.rfind(b"100%|", mark0) < prog_at - 4:
        scan.phase = ("progress", last)
    if decode_after(raw, raw.rfind(b"\n", 0, max(load_at, prog_at, 0)) + 1, decods, n):
        scan.phase = ("decode", None)
    if len(raw) > n:
        starts |= line_starts(raw, keys, n + 1)       # the bar's line added above
    if scan._idle:
        # the idle scan skipped the anchor lines here: replay what they say (OS, runtime markers), from
        # where the stream last read and at most REPLAY bytes back, so a log with many failures reads each
        # byte once
        block, start = scan._src
        seen = max(scan._read_to - (scan.bytes_seen + start - len(raw)), len(raw) - REPLAY, 0)
        lo = 0 if seen <= 0 else raw.find(b"\n", min(seen, len(raw)) - 1) + 1
        if 0 < lo < len(raw) or seen <= 0:
            starts |= line_starts(raw, L.ANCHORS, lo)
    for st in sorted(starts):
        e = raw.find(b"\n", st)
        scan._wsrc = (raw, st)        # (fix67m) where the line is: vllm_short_q.before reads a command's earlier lines there
        facts_mod.apply(scan, 0, P.clean(raw[st:e if e >= 0 else len(raw)][:4096]), window=True)


def frames_before(scan, raw: bytes):
    """The idle scan skipped the traceback before this failure: its frames are those after the last
    traceback start in the window and on this line (what the stream would have collected)."""
    block, start = scan._src
    end = block.find(b"\n", start)
    text = raw + block[start:end if end >= 0 else len(block)]
    cut = max(text.rfind(k) for k in _TRACE_STARTS)
    scan.pending_frames.clear()
    scan.pending_src.clear()
    for m in _FRAME_RE.finditer(text, max(cut, 0)):
        path, func = m.group(1).decode("utf-8", "replace"), m.group(2).decode("utf-8", "replace")
        scan.pending_frames.append((path, func))
        src = P.clean(m.group(3)).strip()
        if src and not src.startswith(("File ", "Traceback")):
            scan.pending_src.append(src)
        p = path.replace("\\", "/")
        if "/comfy/" in p or "execution.py" in p or "ComfyUI" in p:
            scan.facts["comfy"] = True
