"""Bad input never crashes triage, and the way a log arrives (chunks, CRLF, colour codes) never changes its diagnosis."""
import io
import itertools
import random

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from gpu_garden.memory.triage import engine as triage  # noqa: E402
from gpu_garden.memory.triage.engine import CAUSES  # noqa: E402

from test_triage_corpus import DEV, load  # noqa: E402
from support.regex_time import cpu_limit, cpu_now

LOGS = [load(p)[0] for p in DEV]
SAMPLE = "\n".join([
    "Device: cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync",
    "got prompt", "Requested to load AutoencoderKL",
    "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)",
    "Currently allocated     : 10.90 GiB", "Requested               : 1.00 GiB", "Device limit            : 12.00 GiB",
    "Free (according to CUDA): 0 bytes", "Got an OOM, unloading all loaded models.", ""])


def _ok(res):
    assert set(res) >= {"found", "cause", "events"}
    assert res["cause"] is None or res["cause"] in CAUSES
    for ev in res["events"]:
        assert ev["causes"] and all(c["id"] in CAUSES for c in ev["causes"])


class Trickle(io.RawIOBase):
    """A stream that hands out the data in the sizes it is told to (a pipe, a slow socket)."""
    def __init__(self, data: bytes, sizes):
        self.data, self.sizes, self.pos = data, list(sizes) or [1], 0

    def readable(self):
        return True

    def readinto(self, buf):
        if self.pos >= len(self.data):
            return 0
        k = min(self.sizes[self.pos % len(self.sizes)], len(buf))
        out = self.data[self.pos:self.pos + k]
        buf[:len(out)] = out
        self.pos += len(out)
        return len(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000))
def test_random_bytes_never_crash(data):
    _ok(triage.triage_stream(io.BytesIO(data)))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=3000))
def test_random_text_never_crash(text):
    _ok(triage.triage_text(text))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([
    "CUDA out of memory. Tried to allocate", "GPU 0 has a total capacity of", " 1.00 GiB", "\n", "\r", "\x1b[31m", "\x00",
    "Currently allocated     :", "Requested               :", "Device limit", "Allocation on device 0 would exceed allowed memory. (out of memory)",
    "Prompt executed in 1.0 seconds\n", "Requested to load SDXL\n", 'File "/x/comfy/sd.py", line 1, in decode\n', "é漢🙂",
    "failed to allocate buffer for kv cache", "max seq len (", ") is larger than", "llama runner process has terminated: ",
    "-1.5 GiB", "99999999999999999999 GiB", "Of the allocated memory", "is reserved by PyTorch but unallocated",
]), max_size=60))
def test_fragments_of_real_messages_never_crash(parts):
    _ok(triage.triage_text("".join(parts)))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(range(len(LOGS))), st.lists(st.integers(1, 700), min_size=1, max_size=8))
def test_chunking_does_not_change_the_diagnosis(i, sizes):
    data = LOGS[i].encode()
    whole = triage.triage_stream(io.BytesIO(data))
    trickled = triage.triage_stream(Trickle(data, sizes))      # raw reads: short reads reach the scanner
    assert (trickled["cause"], len(trickled["events"])) == (whole["cause"], len(whole["events"]))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(range(len(LOGS))), st.randoms(use_true_random=False))
def test_crlf_and_colour_do_not_change_the_diagnosis(i, rnd):
    text = LOGS[i]
    plain = triage.triage_text(text)
    lines = text.split("\n")
    noisy = "\r\n".join(("\x1b[1m\x1b[31m" + ln + "\x1b[0m") if rnd.random() < 0.5 else ln for ln in lines)
    got = triage.triage_text(noisy)
    assert got["cause"] == plain["cause"]
    assert [e["numbers"] for e in got["events"]] == [e["numbers"] for e in plain["events"]]


def test_empty_input():
    assert triage.triage_text("") == {**triage.triage_text(""), "found": False, "cause": None, "events": []}
    assert triage.triage_stream(io.BytesIO(b""))["found"] is False


def test_megabyte_line_and_a_longer_one_without_newline():
    one_mb = "x" * 1_000_000 + " " + SAMPLE.replace("\n", " | ")
    res = triage.triage_text(one_mb)
    _ok(res)
    assert res["found"]
    huge = ("y" * 3_000_000 + "CUDA error: out of memory").encode()       # no newline at all, beyond the line cap
    res = triage.triage_stream(io.BytesIO(huge))
    _ok(res)


# Ollama's "offload to" line (llm/memory.go) with numbers no Ollama prints: read as nothing, never a crash or a
# kv-cache answer. catches: sizes as [\d.]+ ("1.2.3 GiB" -> ValueError), unbounded layer counts (Python's 4300-digit
# int limit), no layers.model > 0 check, no kv <= full check.
def _offload(kv="18.0 GiB", full="22.5 GiB", model="41", offloaded="0"):
    return ('time=2024-09-02T10:11:12.345Z level=INFO source=memory.go:326 msg="offload to cuda" layers.requested=-1 '
            f'layers.model={model} layers.offload={offloaded} layers.split="" memory.available="[7.2 GiB]" '
            f'memory.required.full="{full}" memory.required.partial="0 B" memory.required.kv="{kv}"\n'
            "Error: llama runner process has terminated: error:failed to create context with model\n")


@pytest.mark.parametrize("line", [
    _offload(kv="4.5.6 GiB"), _offload(full="..  GiB"), _offload(full="9" * 400 + " GiB"),
    _offload(model="7" * 5000, offloaded="0"), _offload(model="0", offloaded="0"),
    _offload(kv="40.0 GiB", full="22.5 GiB"),
])
def test_bogus_ollama_estimates_are_read_as_nothing(line):
    res = triage.triage_text(line)
    _ok(res)
    assert res["found"] and res["cause"] != "kv-cache", res["events"][-1]["causes"]


def test_a_card_of_zero_bytes_does_not_crash_the_evidence():
    # PyTorch's < 2.1 message where the driver reported no capacity: no share of the card can be said
    # catches: a row's "{req_share:.0%}" formatted with no share (TypeError)
    res = triage.triage_text("RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 0 bytes total capacity; "
                             "9.10 GiB already allocated; 0 bytes free; 9.25 GiB reserved in total by PyTorch)\n")
    _ok(res)
    assert res["found"] and not any("%" in e for c in res["events"][-1]["causes"] for e in c["evidence"])


def test_binary_garbage_around_a_real_message():
    rnd = random.Random(7)
    junk = bytes(rnd.getrandbits(8) for _ in range(20000))
    res = triage.triage_stream(io.BytesIO(junk + b"\n" + SAMPLE.encode() + b"\n" + junk))
    assert res["found"] and res["cause"] == "vae-decode"
    assert res["events"][-1]["numbers"]["requested"] == 1 << 30


def test_interleaved_logs_find_both_failures():
    a = SAMPLE.splitlines()
    b = ["INFO 01-01 00:00:00 [engine.py:1] step", "ValueError: The model's max seq len (32768) is larger than the maximum "
         "number of tokens that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization`."] + ["INFO tick"] * 6
    mixed = [x for pair in itertools.zip_longest(a, b, fillvalue="INFO tick") for x in pair]
    res = triage.triage_text("\n".join(mixed))
    _ok(res)
    kinds = {c["id"] for ev in res["events"] for c in ev["causes"]}
    assert {"vae-decode", "kv-cache"} <= kinds


def test_an_error_repeated_forever_stays_one_bounded_event():
    res = triage.triage_text("RuntimeError: CUDA error: out of memory\n" * 20000)
    assert res["found"] and len(res["events"]) == 1 and len(res["events"][0]["lines"]) <= 50


# --- linear time on adversarial input (tests/unit/test_triage_fuzz.py, issue: quadratic patterns) ------------
# These are hang guards, not speed targets (benchmarks/bench_triage.py prints those): before the patterns were
# fixed a 60 KB blank run took 3 s to minutes in one search and a 160 KB message 35 s; here they must finish
# within a bound 100x above the linear time.

import re  # noqa: E402
import time  # noqa: E402

from gpu_garden.memory.triage import facts as facts_mod, lines as L, parse as P, scan as scan_mod, window as window_mod  # noqa: E402
from gpu_garden.memory.triage import categories as C, error_patterns as RX, other_runtimes as other_mod  # noqa: E402
from gpu_garden.memory.triage import host_readers as host_mod  # noqa: E402  (parse's host recognisers' patterns, fix8)

HANG_S = 1.0


def _patterns():
    out = {}
    for mod in (P, RX, L, scan_mod, facts_mod, window_mod, other_mod, host_mod):
        for name, v in vars(mod).items():
            if isinstance(v, re.Pattern):
                out[f"{mod.__name__.rsplit('.', 1)[-1]}.{name}"] = v
    out.update({f"ASYNC_FIELDS.{k}": v for k, v in RX.ASYNC_FIELDS.items()})
    out.update({f"FACTS.{k}": v for k, v in L.FACTS})
    out.update({f"SOURCE.{k}": v for k, v in C._SRC})      # traceback source lines (categories.source_category)
    return out


def _adversarial(n):
    ws = " " * n
    return {
        "blank run": "OutOfMemoryError" + ws + ":" + ws + "x",
        "anchor words apart": "Allocation" + ws + "emory" + ws + "llocation",
        "colon run": ":" + ws + "x",
        "tabs and newlines": "\t \n" * (n // 3),
        "digit run": "9" * n + " allowed;",
        "token run": "x" * n + " buffer size = x",
        "parentheses": "using device X (" + ") (" * (n // 3),
        "partial async": "Allocation on device " * (n // 21),
        "partial cuda": "CUDA out of memory. Tried to allocate " * (n // 38),
        "partial fields": "Currently allocated     : " * (n // 26),
        "escape run": "\x1b[" + "1;" * (n // 2),
    }


@pytest.mark.parametrize("name", sorted(_patterns()))
def test_every_pattern_is_linear_on_adversarial_input(name):
    rx = _patterns()[name]
    for kind, text in _adversarial(60_000).items():
        data = text.encode() if isinstance(rx.pattern, bytes) else text
        t = cpu_now()
        rx.search(data)
        assert cpu_now() - t < cpu_limit(HANG_S), (name, kind)


ANCHOR_PIECES = ["llocation", "emory", "Allocation on device", "OutOfMemoryError", ":", "Currently allocated", " : ",
                 "CUDA out of memory. Tried to allocate", "1.00 GiB", "PyTorch limit (set by user-supplied memory fraction)",
                 "!!! Exception during processing !!!", 'File "/x/comfy/sd.py", line 1, in decode', "buffer size =", "9999"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ANCHOR_PIECES), st.sampled_from([" ", "\n", "\t", "\r\n", " \t "]),
                          st.integers(0, 40_000)), min_size=1, max_size=8))
def test_adversarial_messages_end_quickly(parts):
    # long whitespace runs between anchor words, repeated partial matches: what a failing node may raise
    msg = "".join(piece + sep * k for piece, sep, k in parts)
    t = cpu_now()
    found = triage.is_oom_error("RuntimeError", msg)
    assert cpu_now() - t < cpu_limit(HANG_S)
    assert found is triage.is_oom_error("RuntimeError", msg)
    t = cpu_now()
    _ok(triage.triage_text(msg))
    assert cpu_now() - t < cpu_limit(4 * HANG_S)


def test_is_oom_error_reads_a_bounded_head_and_tail():
    real = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
    assert triage.is_oom_error("RuntimeError", "x " * 500_000 + "\n" + real)       # in the tail
    assert triage.is_oom_error("RuntimeError", real + "\n" + "x " * 500_000)       # in the head
    # in the middle of a huge message: not read (a message is its first and last 16 KB)
    assert not triage.is_oom_error("RuntimeError", "x " * 500_000 + "\n" + real + "\n" + "x " * 500_000)
    assert len(P.bounded("y" * 10_000_000)) <= 2 * P.HEAD_TAIL + 1
