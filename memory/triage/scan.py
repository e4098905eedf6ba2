"""The streaming scanner: a log of any size in, incidents (one failure each, with its lines, frames and
phase) and startup facts out, in bounded memory.

The log is streamed in 1 MiB chunks and never held whole. A few C-speed `bytes.find` passes per chunk
(parse.ANCHORS: "emory", "llocat", "Exception", ...) pick the lines worth decoding; every other line
costs nothing. What a failure needs from the lines around it (the model ComfyUI was loading, sampling
progress, a VAE decode, llama.cpp buffer sizes, vLLM's KV budget) is read back from the WINDOW bytes
before it, and the first HEAD bytes (startup: device, allocator, platform, flags) are read more widely.
Lines longer than LINE_CAP are cut into pieces; a long line is read in its \r-parts that hold an anchor, a long
part around its first error anchor, so memory stays bounded whatever the input (benchmarks/bench_triage.py
measures speed and heap). What the lines before a failure say is read back from the window by window.py.

An *incident* is one failure as the log shows it: ComfyUI prints the allocator message in its
`!!! Exception during processing !!!` line, again at the end of the traceback, then `Got an OOM`;
llama.cpp prints cudaMalloc, the buffer, then the kv-cache or compute failure, then Ollama wraps it.
Those lines are one incident. What each context line means (device, allocator, phase, buffer sizes)
is applied by facts.py.
"""
import bisect
import collections
import copy
import io

from . import facts as facts_mod
from . import parse as P
from . import lines as L
from . import paste
from . import window
from . import wrapped
from .chain_links import source_line as _source_line
from .text import attempt
from .window import WINDOW, line_starts as _line_starts  # noqa: F401

CHUNK = 1 << 20
LINE_CAP = 2 << 20          # a 1 MB line is looked at whole; longer ones in 2 MiB pieces
HEAD = 512 << 10            # the first 512 KiB (startup lines) are read with the wider HEAD_ANCHORS
# (rev8 D8) lines after a failure's own that may continue its message (a wrapped block), by kind; 2 for the rest
BLOCK_LINES = {"trtllm.executor": 8, "libplacebo.alloc": 8, "ds4.memory_guard": 4, "vllm.kv_max_len": 4}
GAP = 200                   # lines after the last OOM line that still belong to the same incident
MAX_EVENTS = 200            # kept in full; older ones are counted only
MAX_FRAMES = 80
MAX_EVENT_LINES = 200       # recognised lines kept per event
LONG_LINE = 20000
SOURCE_CAP = 240            # characters kept of a traceback's source line
LOOK, LOOK_BYTES = 8, 64 << 10   # lines (and at most bytes) a chunk's last scanned line can look ahead to: more(8)
SEEN = 64                   # recent line texts whose recognise() result is kept
_MISS = object()

_ATOMIC = frozenset((str, int, float, bool, type(None)))


def _event_copy(ev: dict) -> dict:
    """copy.deepcopy of a recognised event, a dict of plain values and dicts of them (its numbers), at a tenth of its cost
    (a log repeating one failure copies it on every line); anything else, or one dict under two keys, goes to deepcopy."""
    out, inner = {}, set()
    for k, v in ev.items():
        t = type(v)
        if t is dict and id(v) not in inner and all(type(x) in _ATOMIC for x in v.values()):
            inner.add(id(v))
            v = dict(v)
        elif t not in _ATOMIC:
            return copy.deepcopy(ev)
        out[k] = v
    return out


def _family(kind: str) -> str:
    # (vulkan./amdgpu. kinds are the Vulkan driver's and the kernel's lines under llama.cpp's ggml-vulkan)
    return "llm-server" if kind.startswith(("vllm",)) else "ggml" if kind.startswith(("ggml", "ollama", "vulkan.", "amdgpu.")) \
        else "torch"


def _reads_better(line: str, nxt: str, joined: str) -> bool:
    """A line and the next joined make an error message the line alone is not (or a more complete one), and the next
    line is not an error message of its own."""
    ev2, alone = P.recognise(joined), P.recognise(nxt)
    if not ev2 or alone and not alone.get("sentences"):     # ((none51) PyTorch's sentences alone continue a message)
        return False
    ev = P.recognise(line)
    if ev is None or (ev2.get("complete") and not ev.get("complete")):
        return True
    rank, rank2 = P.PRIORITY.get(ev["kind"], 0), P.PRIORITY.get(ev2["kind"], 0)
    return rank2 > rank or (rank2 == rank and len(ev2.get("numbers") or {}) > len(ev.get("numbers") or {}))


def _around_anchor(raw: bytes) -> bytes:
    """A huge line (a JSON dump, a progress bar without newlines): keep the part around its first error anchor (its
    first anchor when it has none), where a message and its numbers are."""
    for keys in (L.IDLE_ANCHORS, L.HEAD_ANCHORS):
        hits = [i for i in (raw.find(a) for a in keys) if i >= 0]
        if hits:
            break
    i = min(hits) if hits else 0
    return raw[max(0, i - 2000):max(0, i - 2000) + LONG_LINE]


def _segments(raw: bytes, keys) -> list:
    """The parts of a line to read: split on \r (tqdm redraws its bar on one line; a file with old-Mac line ends is one
    line). A long line keeps only the parts that hold one of `keys` (the anchors the scan looks for now), each long
    part cut around its anchor: a failure printed after 1 MB of bars, or 2 MiB into a line, is read (review16a F4)."""
    if len(raw) <= LONG_LINE:
        return [s for s in raw.split(b"\r") if s.strip()]
    if b"\r" not in raw:
        return [_around_anchor(raw)]
    parts = raw.replace(b"\r", b"\n")
    out = []
    for st in sorted(_line_starts(parts, keys)):
        e = parts.find(b"\n", st)
        seg = parts[st:e if e >= 0 else len(parts)]
        if len(seg) > LONG_LINE:
            seg = _around_anchor(seg)
        if seg.strip():
            out.append(seg)
    return out


def _look_back(buf: bytes, cut: int) -> int:
    """Where a chunk's scan stops: the start of the LOOK-th line before its last newline (cut), at most LOOK_BYTES back.
    The lines after it are scanned with the next chunk, and read from here only as the lines that follow (more(8)):
    a message wrapped over lines, or a block of numbers, whose first line ends a chunk is read whole (review16a F5)."""
    k = cut
    for _ in range(LOOK):
        j = buf.rfind(b"\n", max(0, cut - LOOK_BYTES), k)
        if j < 0:
            break
        k = j
    return k + 1


def _following(block: bytes, end: int, n: int = 5) -> list:
    out, pos = [], end
    for _ in range(n):
        if pos >= len(block) - 1:
            break
        nxt = block.find(b"\n", pos + 1)
        if nxt < 0:
            nxt = len(block)
        out.append(P.clean(block[pos + 1:min(nxt, pos + 1 + 4096)]))
        pos = nxt
    return out




# --- scanning -------------------------------------------------------------------------------------

class Incident:
    __slots__ = ("primary", "events", "first_line", "last_line", "frames", "load", "progress_done", "hints", "lines",
                 "recoverable_only", "successes_before", "node_type", "phase", "index", "has_exception_block", "inner", "ggml_phase", "texts",
                 "sources", "partial_load", "epoch", "after", "failed_before", "run")

    def __init__(self, ev, lineno, scan):
        self.primary = ev
        self.events = [ev]
        self.first_line = self.last_line = lineno
        self.frames = list(scan.pending_frames)
        self.sources = list(scan.pending_src)      # the source line printed under each frame, in order
        self.load = list(scan.loads)
        self.progress_done = scan.progress_done
        self.hints = []
        self.lines = [lineno]
        self.texts = [ev["text"]]
        self.recoverable_only = bool(ev.get("recoverable"))
        self.successes_before = scan.successes
        self.index = scan.n_incidents
        self.has_exception_block = False
        self.inner = []
        self.ggml_phase = scan.ggml_phase
        self.phase = scan.phase
        self.partial_load = scan.partial_load
        self.epoch = scan.epoch
        self.after = scan.incidents[-1].last_line if scan.incidents else 0     # the failure before this one ended there
        self.node_type = scan.node_type if scan.node_type_line_recent(lineno) else None
        self.failed_before = False                 # (review28) the run had failed before this incident opened (_place, _went_on)
        self.run = scan.runs                       # (rev65c) which ComfyUI prompt or process this failure is in


SPAN = 64 << 10     # while a failure is open, its anchor lines are looked up this many bytes at a time


class Scan:
    MAX_FRAMES = MAX_FRAMES

    def __init__(self):
        self.lineno = 0
        self.facts = facts_mod.new_facts()
        self.incidents = collections.deque(maxlen=MAX_EVENTS)
        self.n_incidents = 0
        self.cur = None
        self.open_ev = None          # an event still collecting follow-up lines (cudaMallocAsync block)
        self.open_left = 0
        self.pending_frames = collections.deque(maxlen=MAX_FRAMES)
        self.pending_src = collections.deque(maxlen=MAX_FRAMES)
        self.want_source = False         # a frame line was just read: its source line follows
        self.loads = collections.deque(maxlen=4)
        self.progress_done = False
        self.successes = 0
        self.runs = 0                # ComfyUI prompts ended ("Prompt executed", failed or not) and server starts seen
        self.ggml_phase = None
        self.run_failed = False
        self.ok_models = set()
        self.phase = None
        self.partial_load = False
        self.epoch = None
        self.consumed_until = 0
        self.pinned_at = None       # the line of a ggml pinned-memory warning just read
        self.node_type = None
        self.node_type_line = 0
        self.bytes_seen = 0
        self.tail = b""
        self._src = None
        self._frame_src = False          # (rev14 S1) the current line is a traceback frame's source line (code, no error)
        self._lineno = 0
        self.exception_pending = False   # an `!!! Exception` line waits for its error
        self._idle = False               # the current line was reached by the idle scan (see _block)
        self._read_to = 0                # absolute offset up to which the stream decoded every anchor line
        self._seen = {}                  # line text -> recognise() result, for the last SEEN distinct texts
        self._window_lines = {}          # needles -> the last failure window's lines holding them (window.window_lines)

    def _recognise(self, text):
        """P.recognise once per line text: the wrap joins below look at the next lines before the stream reaches
        them, and a log repeating one message repeats its text. Each caller gets its own copy (events are filled in)."""
        ev = self._seen.get(text, _MISS)
        if ev is _MISS:
            ev = P.recognise(text)
            if len(self._seen) >= SEEN:
                self._seen.clear()
            self._seen[text] = ev
        return _event_copy(ev) if ev else ev

    def node_type_line_recent(self, lineno):
        return self.node_type is not None and lineno - self.node_type_line <= GAP

    # -- input --
    def feed_stream(self, stream):
        carry = b""
        eof, first = False, True
        while not eof:
            parts, got, fresh = [carry] if carry else [], len(carry), 0
            while fresh < CHUNK:                   # pipes and sockets hand out short reads: gather a chunk
                data = stream.read(CHUNK - fresh)
                if not data:
                    eof = True
                    break
                if isinstance(data, str):
                    data = data.encode("utf-8", "replace")
                parts.append(data)
                got += len(data)
                fresh += len(data)
            buf = b"".join(parts)
            if not buf:
                break
            if eof and first:
                buf = paste.undo(buf, _reads_better)         # the whole input fits one chunk: a paste (quoted, fenced, wrapped?)
            first = False
            if eof:
                self._block(buf if buf.endswith(b"\n") else buf + b"\n", last=True)
                break
            cut = buf.rfind(b"\n")
            if cut < 0:
                if len(buf) >= LINE_CAP:           # one enormous line: look at it in pieces
                    self._block(buf, ends_line=False)
                    carry = b""
                else:
                    carry = buf
                continue
            if len(buf) - cut - 1 >= LINE_CAP:
                self._block(buf[:cut + 1])
                self._block(buf[cut + 1:], ends_line=False)
                carry = b""
                continue
            stop = _look_back(buf, cut)
            self._block(buf[:cut + 1], stop=stop)
            carry = buf[stop:]
        self._close()
        if self.n_incidents == 0:
            self._cut_trace()

    def _cut_trace(self):
        """(round 73) No failure line in the whole log, but its traceback ends, cut before its exception line, inside vLLM's
        memory profiling (P.profile_cut): that step is read as the failure, with nothing measured."""
        ev = P.profile_cut(list(self.pending_frames), list(self.pending_src))
        if ev is None:
            return
        ev["text"] = "traceback cut inside vLLM's memory profiling (" + ev["at"] + "), no exception line"
        ev["_line"] = self.lineno
        self._place(ev, self.lineno)
        self._close()

    def feed_text(self, text: str):
        self.feed_stream(io.BytesIO(text.encode("utf-8", "replace")))

    def _block(self, block: bytes, ends_line=True, last=False, stop=None):
        """Decode the lines worth reading. In the log's head: every anchor and startup line. After it, while
        a failure is open (up to GAP lines after its last error line): every anchor and startup line (a
        report printed after the error names the version, flags and device). Otherwise (idle):
        only the lines that may hold an error, a run's end or ComfyUI's exception banner; what the skipped
        lines say is read back from the window before a failure when one starts (_context). Only the lines that
        start before `stop` (a line start; default: all) are scanned; the rest are there to be looked ahead to."""
        stop = len(block) if stop is None else stop
        base = self.lineno
        pos_counted, line_at = 0, base
        head = self.bytes_seen < HEAD
        scan_keys = L.HEAD_ANCHORS if head else L.TAIL_ANCHORS if last else L.IDLE_ANCHORS
        starts = sorted(_line_starts(block, scan_keys, 0, stop))
        full, full_hi = [], 0          # open failure: anchor lines of block[..full_hi], looked up SPAN at a time
        last = -1
        while True:
            idle = not head and self.cur is None and self.open_ev is None
            k = bisect.bisect_right(starts, last)
            start = starts[k] if k < len(starts) else None
            if not idle and not head:
                j = bisect.bisect_right(full, last)
                cap = None
                while j >= len(full) and full_hi < stop:
                    lo = max(full_hi, block.find(b"\n", last) + 1 if last >= 0 else 0)
                    cap = min(stop, self._open_end(block, pos_counted, line_at)) if cap is None else cap
                    if lo >= cap:
                        break
                    nl = block.find(b"\n", lo + SPAN)
                    full_hi = min(cap, stop if nl < 0 else nl + 1)
                    keys = L.OPEN_ANCHORS_TRAINED if self.facts["training_log"] else L.OPEN_ANCHORS
                    full = sorted(_line_starts(block, keys, lo, full_hi))
                    j = bisect.bisect_right(full, last)
                if j < len(full) and (start is None or full[j] < start):
                    start = full[j]
            if start is None:
                break
            last = start
            end = block.find(b"\n", start)
            if end < 0:
                end = len(block)
            line_at += block.count(b"\n", pos_counted, start)
            pos_counted = start
            raw = block[start:end]
            self._src = (block, start)
            self._idle = idle
            if not idle:
                self._read_to = self.bytes_seen + end
            if self.cur is not None and self.open_ev is None and any(w in raw for w in L.RUN_WENT_ON):
                self._went_on(raw)
            if len(raw) < 160 and b"Prompt executed" in raw and b"emory" not in raw and b"OOM" not in raw:
                self._run_finished()          # the most frequent anchor line: no need to decode it
                continue
            self._frame_src = _source_line(block, start, self.tail, raw, self)
            segs = _segments(raw, L.HEAD_ANCHORS if head else scan_keys if idle else
                             L.OPEN_ANCHORS_TRAINED if self.facts["training_log"] else L.OPEN_ANCHORS)
            for i, seg in enumerate(segs):
                more = (lambda n=5, e=end: _following(block, e, n)) if i == len(segs) - 1 else (lambda n=5: [])
                self._line(line_at + 1, P.clean(seg), more)
        self.bytes_seen += stop
        self.tail = block[stop - WINDOW:stop] if stop >= WINDOW else (self.tail + block[:stop])[-WINDOW:]
        if ends_line:
            self.lineno = base + block.count(b"\n", 0, stop)

    def _open_end(self, block: bytes, pos: int, line_at: int) -> int:
        """Where in block the open failure ends: the start of the line GAP lines after its last error line (pos is the
        start of line line_at + 1). The open scan looks no further; past it the idle scan finds the line that closes
        the failure, so a log without any open anchor after a failure is not read with all of them to its end."""
        if self.cur is None or self.open_ev is not None:
            return len(block)
        i = pos
        for _ in range(self.cur.last_line + GAP - line_at):
            i = block.find(b"\n", i) + 1
            if i == 0:
                return len(block)
        return i

    # -- what the lines before this one say (window.py) --
    def _window_before(self, block: bytes, start: int) -> bytes:
        return window.before(self, block, start)

    def _run_finished(self):
        """ComfyUI printed "Prompt executed in": one run is over (successful unless it failed)."""
        self.facts["comfy"] = True                 # "Prompt executed in" is ComfyUI's (main.py)
        self.runs += 1                             # printed after every prompt, failed or not (main.py:243-251)
        if not self.run_failed:
            self.successes += 1
            window.models_that_ran(self)
        self.run_failed = False
        self._close()
        self.pending_frames.clear()
        self.pending_src.clear()
        self.loads.clear()
        self.progress_done = False
        self.phase = None
        self.partial_load = False
        self.epoch = None

    def _context(self):
        window.read_context(self)

    # -- one interesting line --
    def _line(self, lineno, text, more=lambda n=5: []):
        self._lineno = lineno
        if self.open_ev is not None:
            if attempt(P.add_async_fields, self.open_ev, text, miss=False):
                if self.open_ev.get("complete") and not self.open_ev.get("_await_limit"):
                    self._place(self.open_ev, self.open_ev["_line"])
                    self.open_ev = None
                return
            self.open_left -= 1
            if self.open_left <= 0 or not self._frame_src and self._recognise(text):
                self._place(self.open_ev, self.open_ev["_line"])
                self.open_ev = None
        if self.cur is not None and lineno - self.cur.last_line > GAP:
            self._close()
        facts_mod.apply(self, lineno, text)
        if "Total VRAM" in text and "total RAM" in text:
            self.runs += 1                         # ComfyUI started (anew): no failure before it is this process's
        if self.want_source:
            self.want_source = False
            self._source(more)
        if lineno <= self.consumed_until or self._frame_src:
            return
        if self.pinned_at is not None:
            quoted = lineno == self.pinned_at + 1 and text.lstrip().startswith("ggml_vulkan: vk::")
            self.pinned_at = None
            if quoted:
                return
        ev = self._recognise(text)
        ev, text = wrapped.join(self, lineno, text, ev, more)
        if ev is None:
            if "pinned memory" in text and P.RX.GGML_PINNED_WARN.search(text):
                self.pinned_at = lineno     # older ggml-vulkan printed the warning's e.what() on the next line (maybe the next chunk's)
            return
        ev["text"] = text.strip()[:400]
        ev["_line"] = lineno
        if ev["kind"] in P.BLOCK_KINDS:
            # TensorRT-LLM's table (component, total, free) follows after a blank line; vLLM's estimate may be wrapped;
            # SGLang names the tokens it tried to place on the next line
            for k, nxt in enumerate(more(BLOCK_LINES.get(ev["kind"], 2)), 1):
                if attempt(P.add_block_fields, ev, nxt, miss=False):
                    self.consumed_until = lineno + k
        if ev["kind"] == "torch.cuda_async" and not ev.get("complete"):
            # the numbers follow on the next lines: read them now
            following = more(8)
            for k, nxt in enumerate(following, 1):
                if attempt(P.add_async_fields, ev, nxt, miss=False):
                    self.consumed_until = lineno + k
                elif ev.get("complete") and not ev.get("_await_limit"):
                    break         # the block ended (its optional "PyTorch limit" line, value on the next line, is read too)
            if not ev.get("complete"):
                self.open_ev, self.open_left = ev, 8
                return
        self._place(ev, lineno)

    def _source(self, more):
        """The source line under a traceback frame (`clip = comfy.sd.load_clip(...)`, `vae.decode(z)`): what the
        code was doing when no node or function name says it."""
        block, start = self._src
        eol = block.find(b"\n", start)
        if eol < 0 or eol + 1 >= len(block):
            src = (more(1) or [""])[0].strip()[:SOURCE_CAP]      # the line is in the next chunk
        else:
            nxt = block.find(b"\n", eol + 1, eol + 1 + 4 * SOURCE_CAP)
            raw = block[eol + 1:nxt if nxt >= 0 else eol + 1 + 4 * SOURCE_CAP].strip()
            if not raw or raw.startswith((b"File ", b"Traceback")):
                return
            src = P.clean(raw[:4 * SOURCE_CAP]).strip()[:SOURCE_CAP]
        if not src or src.startswith(("File ", "Traceback")):
            return
        if self.cur is not None:
            if len(self.cur.sources) < MAX_FRAMES:
                self.cur.sources.append(src)
        else:
            self.pending_src.append(src)

    # -- grouping lines into incidents --
    def _place(self, ev, lineno):
        cur = self.cur
        if cur is not None and ev.get("sentences"):
            return  # (none51) PyTorch's sentences alone, inside an open failure: its message's rest or a quote of it, no new figure
        if cur is not None:
            prim = cur.primary
            same_numbers = ev["kind"] == prim["kind"] and ev.get("numbers") == prim.get("numbers")
            different_failure = (ev.get("complete") and P.PRIORITY.get(ev["kind"], 0) >= 9 and prim.get("complete")
                                 and P.PRIORITY.get(prim["kind"], 0) >= 9 and not same_numbers and not prim.get("recoverable"))
            # two programs writing into one log (interleaved): a failure from another runtime is its own event
            other_runtime = (_family(ev["kind"]) != _family(prim["kind"]) and P.PRIORITY.get(ev["kind"], 0) >= 6
                             and P.PRIORITY.get(prim["kind"], 0) >= 6)
            different_failure = different_failure or other_runtime
            # after the program said it moved its work to the CPU (nnU-Net's fallback), a host MemoryError is the CPU
            # run's own failure, not more of the GPU's (round 64)
            if self.facts["cpu_fallback"] and ev["kind"] == "python.memory_error" and prim["kind"].startswith("torch."):
                different_failure = True
            # a warning that its runtime retried and went on (ComfyUI's attention) is
            # its own event: a later failure opens its own, read with the lines before it, not with the warning's
            if cur.recoverable_only and prim.get("retried") and not ev.get("recoverable"):
                different_failure = True
            if different_failure:
                self._close()
                cur = None
        failed_before = self.run_failed
        if not ev.get("recoverable"):
            self.run_failed = True
        if cur is None:
            self._context()
            self.cur = Incident(ev, lineno, self)
            self.cur.failed_before = failed_before
            self.n_incidents += 1
            if self.exception_pending:
                self.cur.has_exception_block = True
                self.exception_pending = False
            return
        if len(cur.events) < MAX_EVENT_LINES:      # a log repeating one error forever stays bounded
            cur.events.append(ev)
        cur.last_line = lineno
        if len(cur.lines) < 50:
            cur.lines.append(lineno)
            cur.texts.append(ev["text"])
        if ev["kind"] == "ollama.runner" and ev.get("inner"):
            cur.inner.append(ev["inner"])
        if not ev.get("recoverable"):
            cur.recoverable_only = False
        if self.exception_pending:
            cur.has_exception_block = True
            self.exception_pending = False
        better = P.PRIORITY.get(ev["kind"], 0) > P.PRIORITY.get(cur.primary["kind"], 0)
        richer = ev["kind"] == cur.primary["kind"] and len(ev.get("numbers") or {}) > len(cur.primary.get("numbers") or {})
        if better or richer:
            cur.primary = ev

    def _went_on(self, raw: bytes):
        """(review28, fix34) The run went on (L.RUN_WENT_ON) while the open incident holds only warnings of a retry its runtime
        makes itself (L.RECOVERED_WARNINGS): the retry worked. The incident is kept and marked recovered, as a recoverable
        event (ComfyUI's tiled VAE retry) is: the report lists it, and it names the answer only where nothing failed."""
        cur = self.cur
        if all(ev["kind"] in L.RECOVERED_WARNINGS for ev in cur.events):
            cur.recoverable_only = True
            said = next(w for w in L.RUN_WENT_ON if w in raw).decode()
            cur.hints.append(("recovered", f"the run went on ('{said}')"))
            self.run_failed = cur.failed_before
            self._close()

    def _close(self):
        if self.open_ev is not None:
            ev, self.open_ev = self.open_ev, None
            self._place(ev, ev["_line"])
        if self.cur is not None:
            self.incidents.append(self.cur)
            self.cur = None

