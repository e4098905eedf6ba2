"""The streaming scan at its edges (review16a F4, F5): a message whose first line ends a 1 MiB chunk, and a failure late
on a long line; the fact gate's cache (F12); the recogniser prefilter (same answers as trying every recogniser). Logs are
generated here (MB sized, not committed). The messages are the runtimes' own formats (PyTorch's OOM from
c10/cuda/CUDACachingAllocator.cpp wrapped after "of which"; vLLM's KV check from vllm/v1/core/kv_cache_utils.py wrapped
before "maximum model length"), numbers as in review16a's repro logs (/work/tools/s16/review16a/repro_*.sh); the
filler is made up."""
import random
import re
from pathlib import Path

import pytest

from support.window_check import check_window_lines
from gpu_garden.memory.triage import engine, parse as P, prefilter, scan

TORCH = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which",
         "1.02 GiB is free. Of the allocated memory 20.12 GiB is allocated by PyTorch, and 1.98 GiB is reserved by PyTorch but unallocated.")
TORCH_NUMBERS = {"requested": 2 * 2**30, "total": int(23.65 * 2**30), "free": int(1.02 * 2**30), "allocated": int(20.12 * 2**30),
                 "reserved_unallocated": int(1.98 * 2**30)}
VLLM = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is "
        "larger than the available KV cache memory (9.48 GiB). Based on the available memory, the estimated",
        "maximum model length is 77504. Try increasing `gpu_memory_utilization`.")
FILL = "filler line of a log\n"            # 21 bytes


def _wrapped_at(first: str, second: str, back: int) -> tuple:
    """A log whose `first` line's newline is `back` bytes before the end of the first chunk, `second` right after it.
    Returns the text and the line number of `first`."""
    at = scan.CHUNK - back                # the offset just past first's newline
    n = (at - len(first) - 1) // len(FILL) - 1
    pad = at - len(first) - 1 - n * len(FILL) - 1
    text = FILL * n + "p" * pad + "\n" + first + "\n" + second + "\n" + FILL * 30
    assert text.index(first) + len(first) + 1 == at
    return text, n + 2


# first's newline: the chunk's last byte; the second-last line; the 9th line from the end (8 whole lines after it: the
# last a chunk looks ahead from when its last 8 lines ride over); further back; a control 1 KB before
BACKS = [0, 1, len(TORCH[1]) + 1 + 7 * len(FILL), len(TORCH[1]) + 1 + 8 * len(FILL), 1000]


@pytest.mark.parametrize("back", BACKS)
def test_pytorch_message_wrapped_at_a_chunk_edge_keeps_its_numbers(back):
    text, line = _wrapped_at(*TORCH, back)
    r = engine.triage_text(text)
    ev = r["events"][-1]
    assert r["count"] == 1 and ev["line"] == line
    got = ev["numbers"]
    for k, v in TORCH_NUMBERS.items():
        assert abs(got.get(k, 0) - v) < 2**20, (back, k, got)


@pytest.mark.parametrize("back", [0, len(VLLM[1]) + 1 + 7 * len(FILL), 1000])
def test_vllm_estimate_wrapped_at_a_chunk_edge_is_read(back):
    text, line = _wrapped_at(*VLLM, back)
    ev = engine.triage_text(text)["events"][-1]
    assert ev["line"] == line
    assert ev["numbers"].get("estimated_max_len_tokens") == 77504 and ev["numbers"]["max_model_len_tokens"] == 131072


def test_line_numbers_stay_exact_across_chunks():
    # lines carried over to the next chunk are counted once: the failure after 3 MB of short lines is on its own line
    n = 3 * scan.CHUNK // len(FILL) + 7
    r = engine.triage_text(FILL * n + TORCH[0] + " " + TORCH[1] + "\n" + FILL * 5)
    assert r["events"][-1]["line"] == n + 1 and r["lines"] == n + 6


def test_a_chunk_scan_stops_eight_lines_back_at_most_64_kib():
    buf = b"".join(b"line %d\n" % i for i in range(100)) + b"partial"
    cut = buf.rfind(b"\n")
    stop = scan._look_back(buf, cut)
    assert buf[stop:cut + 1] == b"".join(b"line %d\n" % i for i in range(92, 100))
    long = (b"x" * 30000 + b"\n") * 10
    stop = scan._look_back(long, len(long) - 1)
    assert len(long) - stop == 2 * 30001          # two lines fit in 64 KiB, a third does not
    assert scan._look_back(b"one line only\n", 13) == 14


def test_a_line_near_a_chunk_edge_is_scanned_once():
    # a whole OOM line among the last 8 lines of a chunk: read with the next chunk only, not also with this one
    oom = TORCH[0] + " " + TORCH[1]
    for back in (len(oom) + 1, len(oom) + 1 + 3 * len(FILL)):
        n = (scan.CHUNK - back) // len(FILL)
        pad = scan.CHUNK - back - n * len(FILL) - 1
        text = FILL * n + "p" * pad + "\n" + oom + "\n" + FILL * 20
        ev = engine.triage_text(text)["events"][-1]
        assert ev["lines"] == [n + 2] and ev["line"] == n + 2, (back, ev["lines"])


def test_windows_read_across_chunk_edges_are_what_a_fresh_read_finds(monkeypatch):
    """Failures on every other line around the chunk edges: the window reuse (kept by absolute offset) must see the
    lines carried over to the next chunk at their own offsets."""
    import io
    rng = random.Random(5)
    oom = (TORCH[0] + " " + TORCH[1] + "\n").replace("2.00 GiB", "{}.00 MiB")
    keys = ["Requested to load M{}\n", "Epoch {}/40 train\n", "VAE decode {}\n", "llama_kv_cache: CUDA0 KV buffer size = {}.00 MiB\n"]
    dense = lambda: "".join((oom if rng.random() < 0.5 else rng.choice(keys)).format(rng.randrange(99)) for _ in range(120))
    edge = scan.CHUNK - 12000
    data = (FILL * (edge // len(FILL)) + dense() + FILL * (scan.CHUNK // len(FILL)) + dense()).encode()
    calls = check_window_lines(monkeypatch)
    assert engine.triage_stream(io.BytesIO(data))["count"] > 50
    assert len(calls) > 100 and all(calls)


# --- F4: a failure late on a long line ----------------------------------------------------------------------------
OOM = TORCH[0] + " " + TORCH[1]
BAR = "Epoch 3:  45%|####5     | 450/1000 [01:02<01:16,  7.2it/s, loss=0.412, train_loss=0.40]\r"
PAST_HEAD = FILL * 30000                  # 630 KB: the line is read by the idle scan, not the head's


def _long_logs():
    return {
        # tqdm training bars redrawn with \r in a file (1.3 MB, one line), the OOM printed on the bar's line
        "bars joined by CR": "Epoch 3: start\n" + BAR * 15000 + OOM + "\n",
        "bars joined by CR, past the head": PAST_HEAD + "Epoch 3: start\n" + BAR * 15000 + OOM + "\n",
        # the same with a memory figure on each bar (an error anchor, "llocat", 1.3 MB before the failure)
        "bars with an allocation figure": "Epoch 3: start\n" + BAR.replace("train_loss", "mem_allocated") * 15000 + OOM + "\n",
        # a file saved with old-Mac line ends: one 'line' of 100 KB whose first part is a startup fact
        "CR-only line ends": "\r".join(["Total VRAM 24564 MB, total RAM 64228 MB"] + ["got prompt"] * 10000 + [OOM]) + "\r",
        # a JSON dump of 2.2 MiB on one line with the OOM appended past 2 MiB
        "OOM past 2 MiB of a line": "ok\n" + '{"k": "' + "a" * (2 * 1048576 + 100) + '"} ' + OOM + "\n",
        # a 50 KB line with a startup anchor first: the part read is around the error, not the first anchor
        "error anchor after a startup one": "Total VRAM 24564 MB " + "z" * 30000 + " " + OOM + " " + "z" * 20000 + "\n",
    }


@pytest.mark.parametrize("name", list(_long_logs()))
def test_a_failure_late_on_a_long_line_is_found(name):
    r = engine.triage_text(_long_logs()[name])
    assert r["found"] and r["count"] == 1, name
    got = r["events"][-1]["numbers"]
    for k, v in TORCH_NUMBERS.items():
        assert abs(got.get(k, 0) - v) < 2**20, (name, k, got)


def test_long_lines_keep_their_anchor_parts_only():
    # a long line's CR-parts without an anchor are dropped; one longer than LONG_LINE is cut around its error anchor
    tail = (OOM + " " + "z" * 30000).encode()
    parts = scan._segments(b"noise\r" * 5000 + b"Got an OOM, unloading all loaded models.\r" + b"y" * 30000 + tail,
                           scan.L.IDLE_ANCHORS)
    assert parts[0] == b"Got an OOM, unloading all loaded models." and len(parts) == 2
    # 2000 bytes before its first error anchor ("OutOf", 6 bytes into the message), LONG_LINE in all
    assert parts[1] == b"y" * 1994 + tail[:scan.LONG_LINE - 1994]
    short = b"a\rb\r\r c"
    assert scan._segments(short, scan.L.IDLE_ANCHORS) == [b"a", b"b", b" c"]    # a short line: every part, as before


def test_a_line_repeating_one_fact_key_is_gated_once():
    """lines.gated caches the facts of the set of keys a line holds: a line repeating one key 200 times (a 4000-char
    run of one message) is one key, not a 200-long tuple rebuilt on every such line (review16a F12)."""
    from gpu_garden.memory.triage import lines as L
    line = "Device: cuda:0 " * 200
    want = frozenset(i for i, (_, keys, _) in enumerate(L._FACTS_GATED) if any(k in line for k in keys))
    assert want and L.gated(line) == want
    L._UNION.clear()
    L.gated(line)
    L.gated("Device: cuda:1 " * 300)
    assert len(L._UNION) == 1


# --- the recogniser prefilter: same answers, fewer tries ---------------------------------------------------------
def _every_recogniser(line):
    """recognise() without the prefilter: every recogniser in order (the reference)."""
    if not any(k in line for k in P.ERROR_KEYS) or not any(w in line for w in P.RECOGNISE_WORDS):
        return None
    if "pinned memory" in line and P.RX.GGML_PINNED_WARN.search(line):
        line = P.RX.GGML_PINNED_CUT.sub(" ", line)
        if not line.strip():
            return None
    for rec in P.RECOGNISERS:
        ev = rec(line)
        if ev:
            return ev
    return None


def _corpus_lines():
    lines = set()
    for p in sorted((Path(__file__).parent / "corpus").rglob("*.log")):
        for ln in p.read_text(encoding="utf-8", errors="replace").splitlines():
            if any(k in ln for k in P.ERROR_KEYS):
                lines.add(P.clean(ln.encode()))
    return sorted(lines)


def test_the_prefilter_gives_every_corpus_line_the_same_event():
    lines = _corpus_lines()
    rng = random.Random(17)
    # and cut copies: a message quoted from its middle, or cut short, meets the recognisers a whole one does not
    cuts = [ln[i:j] for ln in rng.sample(lines, min(3000, len(lines))) for i, j in [sorted(rng.sample(range(len(ln) + 1), 2))]
            if len(ln) > 2]
    diff = [ln for ln in lines + cuts if P.recognise(ln) != _every_recogniser(ln)]
    assert len(lines) > 1500 and not diff, diff[:3]


def test_needs_reads_the_literals_every_match_holds():
    assert prefilter.needs(re.compile(r"CUDA out of memory\. Tried")) == ("CUDA out of memory. Tried",)
    assert prefilter.needs(re.compile(r"(?:foo|barbaz) \d+ (?:lost|gone)")) == ("lost", "gone")    # the longest shortest word
    assert prefilter.needs(re.compile(r"(?:foo|barbaz) \d+")) == ("foo", "barbaz")
    assert prefilter.needs(re.compile(r"x?(?:ab)+\s+cde")) == ("cde",)         # the longest run a match must hold
    assert prefilter.needs(re.compile(r"(?:abc)?\d")) is None                  # an optional run is not needed
    assert prefilter.needs(re.compile(r"(?i)out of memory")) is None            # case-blind: no literal
    assert prefilter.needs(re.compile(r"(?:out of memory|\w+)")) is None         # a branch without a literal
    assert prefilter.needs(re.compile(r"(?:out of memory|\w+ failed)")) == ("out of memory", " failed")
    assert prefilter.needs(re.compile(r"a[bc]d|efg")) == ("a", "efg")


def test_the_prefilter_skips_recognisers_a_line_cannot_match():
    line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
    tried = P._candidates(line)
    assert P._torch_bare in tried and P._generic in tried and P._killed not in tried and P._vllm_cumem not in tried
    assert len(tried) < len(P.RECOGNISERS) / 2


def test_the_prefilter_passes_older_pytorchs_capacty_spelling():
    # CI at 7b4d6d01: a cut of a corpus line (PyTorch 1.x/2.0 printed "total capacty") quoted from its second sentence was
    # read by _torch_capacity_open (its pattern takes both spellings) but its gate named only "capacity", so the
    # prefilter never offered it the line
    line = " GPU 0 has a total capacty of 8.00 GiB of which 1.63 GiB is free. Of the allocated memory 3.93 GiB is allocated by PyTorch"
    ev = P.recognise(line)
    assert ev == _every_recogniser(line) and ev["numbers"]["total"] == 8 << 30 and ev["cap_open"]
