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
_LOAD_RE = re.compile(rb"Requested to load (\w+)")
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
_FRAME_RE = re.compile(rb'File "([^"\n]+)", line \d+, in (\S+)[^\n]*\n?([^\n]{0,240})')
# a training loop's epoch counter ("Epoch 4/10", "epoch: 2", "Epoch 3:"): the last one before the failure is the epoch it failed in
_EPOCH_RE = re.compile(rb"[Ee]poch[ :\[]{0,3}(\d{1,5})\b")
_TRACE_STARTS = (b"Traceback (most recent call last)", b"!!! Exception during processing")


# Pieces the anchor words share, rarely in an ordinary log line. line_starts looks for all the words holding a piece
# with one regex pass (the piece as a literal prefix, then the rest of each word, a lookbehind for the part before it),
# where one bytes.find pass a word cost the scanner most of its time (a pass costs the same whatever the word). A word is
# grouped under the first piece it holds; a word that holds none is looked for alone, so the table only decides speed,
# never what is found. Derived by a greedy set cover over lines.py's anchor tuples, each pass weighed by how often its
# piece occurs in benchmarks/bench_triage.py's logs and the corpus.
COVERS = (
    b'uff', b'enough ', b'ail', b'mem', b'FAIL', b'eed', b'process', b'rror 1', b'OUT', b' le', b'loc',
    b' bytes of NDArra', b'ENOUGH_WORKSPACE', b'valid cuDNN', b'8007000E', b' large for syste', b' not possible. T',
    b'Resource limit (', b'paging file', b'Got an OOM', b'!!! Exception', b'MemoryError', b'OutOf', b'Prompt executed',
    b' 137', b'ill', b'exitcode: -9', b'SIGKILL', b'ces', b'MEM', b'lloc', b'GPU RAM', b'NDArray', b'Virtual Address',
    b'with status 5', b'Resource limit', b'exceeds device', b'_STATUS_', b'OUT_OF_', b'cuDNN', b'ASSERT',
    b'max seq len', b'OOM', b'Exception', b'Traceback', b'File "', b'emory', b'llm', b'aptur', b'lock', b'ode',
    b'llama', b'pp:', b'ele', b'Error ', b'gra', b'size', b'tal', b'evice', b'requ', b'Platform:', b'pooled_storage',
    b'PAGEABLE', b'mlc_chat', b'OLLAMA_', b' -ub ', b'pytorch version', b'mxnet', b'Set vram state', b'max_seq_len',
    b'TensorRT-LLM', b'[METAL]', b'mflux', b'sglang', b'n_ctx', b'offloaded', b'MiB free', b'rocm', b'Windows',
    b'ROCm', b'mlx', b' --', b' prompt throughp', b'_memory_utilizat', b'dynamic VRAM', b'KV cache', b'step#:',
    b'poch ', b'train', b'end', b'len', b'ler', b'rror ', b'sion', b'RAM', b'Add', b' stat', b'oade', b'tion', b'for',
    b'Darwin', b'kv_size', b'release mmap', b'macOS', b'emory.required.f', b'sha256-', b'WSL', b'andable_segments',
    b'ollama', b'back', b'led', b'sta', b'ersion', b'seq', b'apturing', b'able', b'File /', b'File ~', b'\xe2\x9d\xb1',
    b'.py in ', b'oom-kill', b'--> ', b'\xe2\x94\x82 ',)
_GROUPS = {}


def _groups(needles) -> list:
    """One compiled pattern per cover piece that some of the needles hold (cached per needles tuple: the scanner
    passes a few module-level tuples; the cache is emptied past 32 so a caller building tuples cannot grow it)."""
    needles = tuple(needles)
    got = _GROUPS.get(needles)
    if got is None:
        if len(_GROUPS) >= 32:
            _GROUPS.clear()
        left, got = set(needles), []
        holds = [(piece, {w for w in left if piece in w}) for piece in COVERS]
        while left:      # greedy: the piece that most words left hold (an earlier piece on a tie), else a word alone
            piece, words = max(holds, key=lambda h: len(h[1] & left), default=(None, set()))
            words = words & left
            if len(words) < 2:
                piece = min(left, key=len)
                words = {w for w in left if piece in w}
            left -= words
            alts = []
            for w in sorted(words, key=lambda w: (-len(w), w)):
                k = w.find(piece)
                alts.append(re.escape(w[k + len(piece):]) + (b"(?<=" + re.escape(w) + b")" if k else b""))
            got.append(re.compile(re.escape(piece) + (b"(?:" + b"|".join(alts) + b")" if len(alts) > 1 else alts[0])))
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


def before(scan, block: bytes, start: int) -> bytes:
    """The WINDOW bytes before block[start], reaching back into the previous chunk."""
    if start >= WINDOW:
        return block[start - WINDOW:start]
    return scan.tail[len(scan.tail) - (WINDOW - start):] + block[:start] if scan.tail else block[:start]


def models_that_ran(scan):
    """A run ended without failing: the models it loaded ran fine (for the "ran fine before" leak clue)."""
    block, start = scan._src
    if start < WINDOW and scan.tail:       # the run began in an earlier chunk
        block, start = before(scan, block, start), min(WINDOW, len(scan.tail) + start)
    lo = max(0, start - WINDOW)
    prev = block.rfind(b"Prompt executed", lo, start)
    pos = block.find(b"\n", prev) + 1 if prev >= 0 else lo
    while True:
        i = block.find(b"Requested to load ", pos, start)
        if i < 0:
            break
        m = _LOAD_RE.match(block, i, min(start, i + 200))
        if m:
            scan.ok_models.add(m.group(1).decode("ascii", "replace"))
        pos = i + 18


def read_context(scan):
    """Read the log just before this line for what the anchor scan skips. Only this run's part counts."""
    raw = before(scan, *scan._src) if scan._src else b""
    cut = raw.rfind(b"Prompt executed")
    if cut >= 0:
        raw = raw[raw.find(b"\n", cut) + 1:]
    if scan._idle:
        frames_before(scan, raw)
    if not raw:
        return
    scan.loads.clear()
    scan.phase = None
    scan.partial_load = False
    scan.epoch = None
    load_at = -1
    for m in _ANY_LOAD_RE.finditer(raw):         # every load of this run (for "ran fine before")
        if m.group(3):
            scan.loads.append(m.group(3).decode("ascii", "replace"))
            scan.facts["moved_to_device"] = True
        else:
            scan.loads.append(m.group(1).decode("ascii", "replace") if m.group(1) else "diffusion model (CPU offload disabled)")
        load_at = m.start()
        if m.group(0).startswith(_FORGE_LOADS):
            scan.facts["forge"] = True
    last = scan.loads[-1] if scan.loads else None
    # ComfyUI (model_patcher.py) loaded this run's last model only in part: "loaded partially" after its "Requested to load"
    scan.partial_load = raw.rfind(b"loaded partially") > load_at >= 0
    # a progress bar on the failing line itself ("  0%|   | 0/4 [...]Error during model prediction: ...") counts too
    if scan._src:
        block, start = scan._src
        eol = block.find(b"\n", start)
        here = block[start:eol if eol >= 0 else len(block)][:4096]
        if b"%|" in here:
            raw = raw + b"\n" + here[:here.rfind(b"%|") + 2]
    at = raw.rfind(b"poch")
    m = _EPOCH_RE.match(raw, at - 1) if at > 0 else None
    scan.epoch = int(m.group(1)) if m else None
    prog_at = raw.rfind(b"%|")
    if last:
        scan.phase = ("load", last)
    if prog_at > load_at:
        full_bar = raw.rfind(b"100%|")
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
    if L.DECODE_RE.search(raw, raw.rfind(b"\n", 0, max(load_at, prog_at, 0)) + 1):
        scan.phase = ("decode", None)
    starts = line_starts(raw, L.WINDOW_KEYS_TRAINED if scan.facts["training_log"] else L.WINDOW_KEYS)
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
