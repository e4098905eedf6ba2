"""window.models_that_ran: the models a finished run loaded, read after the last run's end (in the chunk when that end
is there, else across the tail of the chunk before). It must name exactly what a look at every "Requested to load "
in the WINDOW bytes before the run's end finds (the reference below, the scanner's earlier loop)."""
import random
import re
import types

from gpu_garden.memory.triage import window as W

_REF_RE = re.compile(rb"Requested to load (\w+)")


def _reference(tail: bytes, block: bytes, start: int) -> set:
    if start < W.WINDOW and tail:
        block, start = tail[len(tail) - (W.WINDOW - start):] + block[:start], min(W.WINDOW, len(tail) + start)
    lo = max(0, start - W.WINDOW)
    prev = block.rfind(b"Prompt executed", lo, start)
    pos = block.find(b"\n", prev) + 1 if prev >= 0 else lo
    out = set()
    while True:
        i = block.find(b"Requested to load ", pos, start)
        if i < 0:
            return out
        m = _REF_RE.match(block, i, min(start, i + 200))
        if m:
            out.add(m.group(1).decode("ascii", "replace"))
        pos = i + 18


def _got(tail, block, start):
    scan = types.SimpleNamespace(_src=(block, start), tail=tail, ok_models=set())
    W.models_that_ran(scan)
    return scan.ok_models


def _lines(rng, n):
    pick = [b"got prompt\n", b"Requested to load SDXL\n", b"Requested to load AutoencoderKL\n", b"Requested to load \n",
            b"Requested to load " + b"W" * 300 + b"\n", b"Prompt executed in 1.2 seconds\n", b"x" * 3000 + b"\n",
            b"Requested to load Flux%d\n" % rng.randrange(99)]
    return b"".join(rng.choice(pick) for _ in range(n))


def test_the_loads_since_the_last_run_end_as_every_look_finds_them():
    rng = random.Random(5)
    for case in range(300):
        tail = _lines(rng, rng.randrange(0, 40))[-W.WINDOW:]
        block = _lines(rng, rng.randrange(1, 60))
        ends = [m.start() for m in re.finditer(rb"\n", block)] + [len(block)]
        start = rng.choice(ends)                     # any line boundary of the block (the run's end line starts there)
        start = block.rfind(b"\n", 0, start) + 1 if start else 0
        assert _got(tail, block, start) == _reference(tail, block, start), case


def test_a_long_name_is_cut_as_before_and_a_run_over_a_chunk_edge_is_read():
    long = b"Requested to load " + b"A" * 400 + b"\n"
    assert _got(b"", long + b"Prompt executed in 1 s\n", len(long)) == {"A" * 182}
    tail = b"Prompt executed in 1 s\nRequested to load SDXL\n"
    assert _got(tail, b"Requested to load VAE\nPrompt executed\n", 22) == {"SDXL", "VAE"}
    far = b"Prompt executed\n" + b"y" * W.WINDOW + b"\nRequested to load Near\n"
    assert _got(b"", far + b"Prompt executed\n", len(far)) == {"Near"}
